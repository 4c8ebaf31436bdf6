"""Boolean-mask compaction: compress_mask (a[mask]), nonzero and flatnonzero, on
shaders/primitives/compact.comp (count per tile, scan of the tile counts, scatter).

A device mask gives a result whose shape depends on the data, so the selected count is read back:
one synchronize, as numpy/torch/cupy do (the one host sync of these primitives). A host mask needs
none: its indices are found on the host and gathered.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from .creation import asarray
from .elementwise import moved_as_bits, not_equal
from .indexing import take
from .launch import budget_chunks, collective_cost, grid_groups
from .moves import per_word
from .operands import MAX_PUSH_WORDS, WG, Plan, checked_words, normalize_axes, operand
from .reduce import sum as _sum

__all__ = ["compress_mask", "nonzero", "flatnonzero", "count_nonzero"]

_COMPACT = "primitives/compact.comp"
_COMPACT_ITEMS = 8         # elements per invocation and pass in compact.comp


def _compact_defines(mask: Array, pass_: str) -> dict:
    defines = {f"PASS_{pass_}": 1, "ITEMS": _COMPACT_ITEMS}
    if mask.dtype == dtypes.float32:
        defines["MASK_FLOAT"] = 1  # float masks compare as floats: -0.0 is not selected
    return defines


def _scan_ranges(tiles: int) -> list:
    """[first, last) tiles of each PASS_SCAN dispatch: one workgroup walks WG_SIZE tiles a trip, a
    workgroup scan each, so the loop budget may take several dispatches."""
    trips = -(-tiles // WG)
    step = -(-trips // budget_chunks(trips, per_trip=1 + collective_cost(WG))) * WG
    return [(first, min(first + step, tiles)) for first in range(0, tiles, step)]


def _count_selected(mask: Array) -> tuple:
    """Record the count and scan passes over a non-empty mask: (counts, tiles), where counts
    holds each tile's first output slot and, last, the total."""
    n = mask.size
    tiles = -(-n // (WG * _COMPACT_ITEMS))
    words = [n, tiles, mask.offset, 0, 0, 0]
    count = Plan(_COMPACT, _compact_defines(mask, "COUNT"), words,
                 grid_groups(tiles, 1, per_trip=1 + collective_cost(WG)))
    scans = [Plan(_COMPACT, _compact_defines(mask, "SCAN"), [n, tiles, mask.offset, first, last, 0], 1)
             for first, last in _scan_ranges(tiles)]
    counts = Array.empty((tiles + 1,), dtypes.uint32)
    for plan in [count] + scans:
        plan.launch([mask.buffer, counts.buffer, mask.buffer, counts.buffer])
    return counts, tiles


def _scatter_trip() -> int:
    """Counted iterations of one tile of PASS_SCATTER: its trip, and with ballot the two loops over
    this invocation's run of the ITEMS x subgroups counts and one workgroup scan; without, a
    workgroup scan per pass."""
    dev = runtime.get().device
    if not dev.has("ballot"):
        return 1 + _COMPACT_ITEMS * collective_cost(WG)
    subgroups = -(-WG // max(1, dev.min_subgroup_size))
    per = -(-_COMPACT_ITEMS * subgroups // WG)
    return 1 + 2 * (per + 1) + collective_cost(WG)


def _selected_total(counts: Array) -> int:
    """How many elements are selected. THE ONE HOST SYNC of these primitives: a result whose shape
    depends on the data (a[mask], nonzero) needs its size on the host, as in numpy/torch/cupy."""
    return int(counts.numpy()[-1])


def _scatter_selected(mask: Array, counts: Array, tiles: int, total: int, out: Array, what: str,
                      values: Array | None = None) -> None:
    """Record the scatter pass: what = 'VALUES' (values[e]), 'INDEX' (e) or 'COORDS' (np.nonzero's
    coordinates of e in mask.shape, one row of `total` per dim)."""
    defines = {**_compact_defines(mask, "SCATTER"), f"OUT_{what}": 1}
    words = [mask.size, tiles, mask.offset, values.offset if values is not None else 0, out.offset, total]
    if what == "COORDS":
        defines["RANK"] = mask.ndim
        words += list(mask.shape)
    plan = Plan(_COMPACT, defines, checked_words(words, "nonzero", mask.ndim),
                grid_groups(tiles, 1, per_trip=_scatter_trip()))
    plan.launch([mask.buffer, counts.buffer, (values if values is not None else mask).buffer, out.buffer])


def _compact(mask: Array, what: str, dtype, inner_shape=(), values: Array | None = None,
             planes: int = 0) -> Array:
    """The selected elements of a device mask, compacted: shape (total,) + inner_shape, or
    (planes, total) for the coordinates of nonzero."""
    def shape(total):
        return ((planes, total) if planes else (total,)) + tuple(inner_shape)
    if not mask.size:
        return Array.empty(shape(0), dtype)
    counts, tiles = _count_selected(mask)
    total = _selected_total(counts)
    out = Array.empty(shape(total), dtype)
    if total:
        _scatter_selected(mask, counts, tiles, total, out, what, values)
    return out


def _mask_operand(mask, name: str):
    """A boolean mask: a bool vk.Array or a host bool array (no device work for host masks)."""
    if isinstance(mask, Array):
        if mask.dtype != dtypes.bool_:
            raise TypeError(f"{name}: the mask must be bool, got {mask.dtype} (integer arrays are "
                            "indices: use vk.take)")
        return mask
    if isinstance(mask, (np.ndarray, list, tuple, np.bool_)):
        host = np.asarray(mask)
        if host.dtype != np.bool_:
            raise TypeError(f"{name}: the mask must be bool, got {host.dtype}")
        return host
    raise TypeError(f"{name}: the mask must be a bool vk.Array or numpy array, got {type(mask).__name__}")


def compress_mask(a, mask) -> Array:
    """a[mask] for a boolean mask of a's shape or of its leading dims: the selected elements
    (or rows) in C order, shape (count,) + a.shape[mask.ndim:]; a 0-d mask selects all of `a`
    (True, shape (1,) + a.shape) or nothing (False).

    A device mask runs a ballot/workgroup-scan compaction in three passes (count per tile, scan
    of the tile counts, scatter) and reads the count back: one host sync. A host mask needs no
    sync (its indices are found on the host and gathered)."""
    name = "compress_mask"
    a = operand(a, name, half=True, wide=True)
    m = _mask_operand(mask, name)
    mshape = tuple(m.shape)
    if not mshape:  # numpy's and the standard's a[True] (shape (1,) + a.shape) and a[False] ((0,) + ...)
        keep = bool(m) if isinstance(m, np.ndarray) else bool(m.item())  # a device mask: one sync
        return a.reshape((1,) + a.shape).copy() if keep else Array.empty((0,) + a.shape, a.dtype)
    if len(mshape) > a.ndim:
        raise IndexError(f"{name}: too many indices: a mask of {len(mshape)} dimensions for an "
                         f"array of {a.ndim}")
    for d, (e, me) in enumerate(zip(a.shape, mshape)):
        if e != me:
            raise IndexError(f"{name}: boolean index did not match indexed array along axis {d}; "
                             f"size of axis is {e} but size of corresponding boolean axis is {me}")
    if dtypes.is_half(a.dtype):  # the kernels move 32-bit words: select the halves' bit patterns
        return moved_as_bits(a, lambda u: compress_mask(u, m))
    inner = a.shape[len(mshape):]
    rows = a.reshape((math.prod(mshape),) + inner)
    if isinstance(m, np.ndarray):
        return take(rows, np.flatnonzero(m), axis=0)
    if not inner and per_word(a.dtype):  # the compaction moves 32-bit words; others are gathered
        return _compact(m.reshape(-1), "VALUES", a.dtype, values=a)
    return take(rows, _compact(m.reshape(-1), "INDEX", dtypes.int32), axis=0, check_indices=False)  # in range


def _words(a: Array) -> Array:
    """a as the compaction reads it, one element per 32-bit word: a half (two per word) is
    compared as a float32 copy (exact; -0.0 stays unselected, NaN selected), the other widths as
    their truth (a bool word each)."""
    if dtypes.is_half(a.dtype):
        return a.astype(dtypes.float32)
    return not_equal(a, 0) if dtypes.is_wide(a.dtype) else a


def flatnonzero(a) -> Array:
    """numpy.flatnonzero, as int32. A device array costs one host sync (the count)."""
    a = operand(a, "flatnonzero", host="keep", half=True, wide=True)
    if isinstance(a, np.ndarray):
        return asarray(np.flatnonzero(a).astype(np.int32))
    return _compact(_words(a).reshape(-1), "INDEX", dtypes.int32)


def nonzero(a) -> tuple:
    """numpy.nonzero: one int32 array of coordinates per dimension. A device array costs one host
    sync (the count); the coordinates are written by the compaction directly."""
    name = "nonzero"
    a = operand(a, name, host="keep", half=True, wide=True)
    if a.ndim == 0:
        raise ValueError(f"{name}: calling nonzero on 0d arrays is not allowed; use atleast_1d")
    if isinstance(a, np.ndarray):
        return tuple(asarray(c.astype(np.int32)) for c in np.nonzero(a))
    if a.ndim + 6 > MAX_PUSH_WORDS:
        raise ValueError(f"{name}: at most {MAX_PUSH_WORDS - 6} dimensions, got {a.ndim}")
    coords = _compact(_words(a), "COORDS", dtypes.int32, planes=a.ndim)
    return tuple(coords[d] for d in range(a.ndim))  # row d: the coordinates along dim d


def count_nonzero(x, /, *, axis=None, keepdims=False) -> Array:
    """The standard's count_nonzero: the elements of x that are not zero (NaN counts, -0.0 does
    not) over `axis` (None: all; an int or a tuple of ints), as int32, the default integer dtype
    (numpy's np.count_nonzero(x) returns a Python int; here a 0-d array, no sync)."""
    name = "count_nonzero"
    x = operand(x, name, "x", half="words", wide=True)
    if axis is not None:
        normalize_axes(axis, x.ndim, name, "axis")  # refused before the comparison is recorded
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"{name}: keepdims must be a bool, got {keepdims!r}")
    mask = x if x.dtype == dtypes.bool_ else not_equal(x, 0)
    return _sum(mask, axis=axis, keepdims=keepdims, dtype=dtypes.int32)
