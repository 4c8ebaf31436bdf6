"""Operands, axes and planned dispatches shared by the layout, indexing, compaction and getitem
primitives (layout.py, indexing.py, scatter.py, compaction.py, getitem.py).

Everything here checks before any GPU work: a plan is made and every argument checked before an
output is allocated (allocation may record a poison fill, and nothing may be recorded for an
input that is then refused).
"""
from __future__ import annotations

import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from .axes import normalize_axis
from .creation import asarray
from .elementwise import collapse_dims

WG = 256
MAX_PUSH_WORDS = 32       # 128 bytes: what every Vulkan device guarantees
HOST_DATA = (np.ndarray, list, tuple, numbers.Number, np.generic)


def operand(x, name: str, what: str = "a", *, host: str = "refuse", half: bool = False):
    """`x` as an operand of `name`: a vk.Array of a dtype ops compute in (float16 too where
    `half`: the op moves its bit patterns), else TypeError naming `what`. Host data (numpy arrays,
    lists, numbers) is, per `host`:
      'refuse'  TypeError (the op takes device arrays, as a method of vk.Array would)
      'upload'  uploaded (asarray); call it only once the rest of the input is checked
      'keep'    returned as a numpy array, its dtype one a vk.Array can hold (ops that answer host
                data on the host)."""
    if isinstance(x, Array):
        if not (half and x.dtype == dtypes.float16):
            dtypes.computable(x.dtype, name)
        return x
    if host != "refuse" and isinstance(x, HOST_DATA):
        if host == "upload":
            return asarray(x)
        data = np.asarray(x)
        dtypes.from_host(data.dtype)  # TypeError for what no vk.Array could hold
        return data
    expected = "a vk.Array" if host == "refuse" else "a vk.Array or an array-like"
    raise TypeError(f"{name}: `{what}` must be {expected}, got {type(x).__name__}")


def integer(value, name: str, what: str) -> int:
    """An integer argument (anything with __index__ but a bool), TypeError naming it otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: `{what}` must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: `{what}` must be an integer, got {value!r}") from None


def flag(value, name: str, what: str) -> bool:
    """A True/False argument (a Python or numpy bool), TypeError naming it otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: {what} must be True or False, got {value!r}")
    return bool(value)


def normalize_axes(value, ndim: int, name: str, what: str) -> list:
    """A sequence (or one int) of distinct axes, normalized (numpy's AxisError when out of range)."""
    if isinstance(value, (numbers.Integral, np.integer)):
        value = [value]
    out = [normalize_axis(a, ndim, name) for a in value]
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in `{what}` {tuple(value)}")
    return out


def contiguous_strides(shape) -> list:
    """C-order element strides of `shape`."""
    strides, acc = [], 1
    for extent in reversed(shape):
        strides.append(acc)
        acc *= extent
    return strides[::-1]


def collapsed(shape, stride_lists) -> tuple:
    """elementwise.collapse_dims, but always at least one dim (one element: rank 1, strides 0)."""
    cshape, cstrides = collapse_dims(tuple(shape), [list(s) for s in stride_lists])
    if not cshape:
        return [1], [[0] for _ in stride_lists]
    return cshape, cstrides


def checked_words(words: list, name: str, rank: int) -> list:
    """Shapes and strides travel as push constants; refuse (before any GPU work) the rare view
    whose dims do not merge down to what fits."""
    if len(words) > MAX_PUSH_WORDS:
        raise ValueError(f"{name}: {rank} dimensions that cannot be merged do not fit the kernel's "
                         f"{MAX_PUSH_WORDS}-word push constants; copy to a simpler layout first")
    return words


@dataclass
class Plan:
    """A checked dispatch: shader, defines, push words and workgroups, launched later."""
    shader: str
    defines: dict
    words: list
    groups: int
    workgroup: int = WG

    def launch(self, buffers) -> None:
        runtime.get().kernel(self.shader, self.defines, self.workgroup)(buffers, self.words, (self.groups,))
