"""Axis arguments, checked as numpy checks them (shared by the primitives)."""
from __future__ import annotations

import operator

import numpy as np


def normalize_axis(axis, ndim: int, name: str, expected: str = "an integer") -> int:
    """`axis` as an index in [0, ndim): TypeError for non-integers (bools included), numpy's
    AxisError (a ValueError) when out of range."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{name}: axis must be {expected}, got {axis!r}")
    try:
        i = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be {expected}, got {axis!r}") from None
    if not -ndim <= i < ndim:
        raise np.exceptions.AxisError(i, ndim, msg_prefix=name)
    return i % ndim
