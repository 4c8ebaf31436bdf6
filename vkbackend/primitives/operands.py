"""Operands, axes and planned dispatches shared by the primitives and ops: `operand` is the one
way an op takes "a vk.Array or host data" (checked, then uploaded with `asarray` once every other
argument is checked too); the layout, indexing, compaction and getitem primitives (layout.py,
indexing.py, scatter.py, compaction.py, getitem.py) share the rest.

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
from .launch import WG  # noqa: F401  (re-exported: the planned dispatches' workgroup size)

MAX_PUSH_WORDS = 32       # 128 bytes: what every Vulkan device guarantees
HOST_DATA = (np.ndarray, list, tuple, numbers.Number, np.generic)


def operand(x, name: str, what: str = "a", *, host: str = "refuse", half: bool | str = False,
            wide: bool = False):
    """`x` as an operand of `name`: a vk.Array of a dtype ops compute in (the halves too where
    `half`: True, the op moves its bit patterns or casts it, on any device; "words", it reads or
    writes the halves as 16-bit words, where the device can (dtypes.half_words); the WIDE dtypes
    too where `wide`), else TypeError naming `what`. Host data
    (numpy arrays, lists, numbers) is, per `host`:
      'refuse'  TypeError (the op takes device arrays, as a method of vk.Array would)
      'upload'  uploaded (asarray); call it only once the rest of the input is checked
      'keep'    returned as a numpy array, checked by the same dtype rule (its upload: asarray once
                every argument is checked; held_dtype gives the dtype it will have)."""
    if isinstance(x, Array):
        _check(x.dtype, name, half, wide)
        return x
    if host != "refuse" and isinstance(x, HOST_DATA):
        data = np.asarray(x)
        try:
            held = dtypes.from_host(data.dtype)
        except TypeError as e:  # complex, object, str: no vk.Array holds them
            raise TypeError(f"{name}: `{what}`: {e}") from None
        _check(held, name, half, False)
        return asarray(data) if host == "upload" else data
    expected = "a vk.Array" if host == "refuse" else "a vk.Array or an array-like"
    raise TypeError(f"{name}: `{what}` must be {expected}, got {type(x).__name__}")


def _check(d: np.dtype, name: str, half: bool | str, wide: bool) -> None:
    """operand's dtype rule (see there)."""
    if half and dtypes.is_half(d):
        if half == "words":
            dtypes.half_words(name, d)
    elif not (wide and dtypes.is_wide(d)):
        dtypes.computable(d, name)


def held_dtype(x) -> np.dtype:
    """The dtype `x` has on the device: a vk.Array's, or the one host data's upload will have."""
    return x.dtype if isinstance(x, Array) else dtypes.from_host(np.asarray(x).dtype)


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


def collapse_dims(out_shape: tuple, strides: list) -> tuple:
    """Drop unit axes and merge neighbours that every operand walks contiguously: (shape, one
    stride list per operand)."""
    dims = [(e, [s[d] for s in strides]) for d, e in enumerate(out_shape) if e != 1]
    merged = []
    for extent, st in dims:
        if merged:
            pe, ps = merged[-1]
            if all(p == s * extent for p, s in zip(ps, st)):
                merged[-1] = (pe * extent, st)
                continue
        merged.append((extent, st))
    shape = [e for e, _ in merged]
    per_operand = [[st[k] for _, st in merged] for k in range(len(strides))]
    return shape, per_operand


def collapsed(shape, stride_lists) -> tuple:
    """collapse_dims, but always at least one dim (one element: rank 1, strides 0)."""
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
