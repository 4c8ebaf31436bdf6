"""The array API's manipulation functions (2024.12) on the layout primitives: squeeze, expand_dims,
reshape (views); flip, roll, broadcast_to, broadcast_arrays, tile, repeat (strided copies);
permute_dims, matrix_transpose, unstack (transposes); concat; tril, triu and diff (a mask or a
difference on the elementwise primitives).

A copy here is one strided copy (primitives/copy.comp) of a view of the input's buffer per block
of the output: flips walk with negative strides, broadcasts, tiles and integer repeats with zero
strides, roll copies one block per combination of the two segments of its rolled axes. What
moves no element is a view, as numpy's (squeeze, expand_dims, reshape; flip of axes of length
1). Functions that only move elements take every dtype an array holds, moved as bit patterns:
the halves one per word (half_bits), the 8/16/64-bit dtypes in their own width (moves.py).
Everything is checked, and every copy planned, before any GPU work.
"""
from __future__ import annotations

import itertools
import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..array import Array
from ..array_api import result_type
from .axes import normalize_axis
from .creation import arange, asarray, zeros
from .elementwise import (from_half_bits, greater_equal, half_bits, less_equal, moved_as_bits, not_equal,
                          subtract, where)
from .indexing import take
from .layout import _concat_shapes, _sequence, concatenate, launch_copy, plan_copy, transpose
from .moves import from_pairs, pairs
from .operands import MAX_PUSH_WORDS, collapsed, contiguous_strides, held_dtype, integer, normalize_axes, operand

__all__ = ["squeeze", "expand_dims", "reshape", "flip", "roll", "broadcast_to", "broadcast_arrays",
           "tile", "repeat", "permute_dims", "matrix_transpose", "unstack", "concat", "tril", "triu",
           "diff"]

_MAX_RANK = (MAX_PUSH_WORDS - 3) // 3   # dims copy.comp's push constants hold (after merging)
_ROLL_AXES_PER_PASS = 3                 # 2**3 blocks a pass; more rolled axes take more passes


# -- arguments -------------------------------------------------------------------------------

def _integers(value, name: str, what: str) -> tuple:
    """An int or a sequence of ints as a tuple."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return (operator.index(value),)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name}: `{what}` must be an integer or a tuple of integers, got {value!r}")
    return tuple(integer(v, name, what) for v in value)


def _shape(value, name: str) -> tuple:
    shape = _integers(value, name, "shape")
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: negative dimensions are not allowed: {shape}")
    return shape


# -- strided copies of blocks ----------------------------------------------------------------

@dataclass
class _Block:
    """One strided copy: the output's view (element offset, strides) <- x's view (offset from
    x's first element, strides), both of `shape`."""
    shape: tuple
    dst: int
    dst_strides: list
    src: int
    src_strides: list


def _assemble(x: Array, out_shape: tuple, blocks: list, name: str) -> Array:
    """A new array of out_shape made of strided copies of x's views, planned before any GPU work
    (a view whose dims do not merge into copy.comp's push constants raises ValueError here)."""
    half = dtypes.is_half(x.dtype)
    word = dtypes.uint32 if half else x.dtype
    base = 0 if half else x.offset   # a half moves through half_bits(x), a fresh array
    plans = [plan_copy(b.shape, b.dst, b.dst_strides, base + b.src, b.src_strides, word, word, name)
             for b in blocks if math.prod(b.shape)]
    src = half_bits(x) if half and plans else x
    out = Array.empty(out_shape, word)
    for plan in plans:
        launch_copy(plan, out.buffer, src.buffer)
    return from_half_bits(out, x.dtype) if half else out


def _view_copy(x: Array, shape: tuple, strides, src: int, name: str) -> Array:
    """A new C-contiguous array holding x's view (shape, strides, offset from x's first element)."""
    return _assemble(x, shape, [_Block(shape, 0, contiguous_strides(shape), src, list(strides))], name)


def _fits(shape, *stride_lists) -> bool:
    cshape, _ = collapsed(shape, stride_lists)
    return len(cshape) <= _MAX_RANK


# -- views -----------------------------------------------------------------------------------

def squeeze(x, /, axis=None) -> Array:
    """The axes `axis` (an int or a tuple; None: every axis of length 1, as numpy) removed: a
    view. ValueError for an axis whose length is not 1."""
    name = "squeeze"
    x = operand(x, name, "x", half=True, wide=True)
    if axis is None:
        axes = [d for d, n in enumerate(x.shape) if n == 1]
    else:
        axes = normalize_axes(axis, x.ndim, name, "axis")
    for d in axes:
        if x.shape[d] != 1:
            raise ValueError(f"{name}: cannot squeeze axis {d} of length {x.shape[d]} (shape {x.shape}): "
                             "only axes of length 1 can be removed")
    return x.reshape(tuple(n for d, n in enumerate(x.shape) if d not in axes))


def expand_dims(x, /, axis=0) -> Array:
    """A view with axes of length 1 inserted at `axis` (an int in [-N-1, N], or a tuple as numpy
    takes: positions in the result). Out of range: numpy's AxisError, an IndexError."""
    name = "expand_dims"
    x = operand(x, name, "x", half=True, wide=True)
    axes = _integers(axis, name, "axis")
    out_ndim = x.ndim + len(axes)
    new = normalize_axes(axes, out_ndim, name, "axis")
    rest = iter(x.shape)
    return x.reshape(tuple(1 if d in new else next(rest) for d in range(out_ndim)))


def reshape(x, /, shape, *, copy=None) -> Array:
    """x with a new shape (one dimension may be -1). A view (arrays are C-contiguous, so one is
    always possible); copy=True returns a copy instead."""
    name = "reshape"
    x = operand(x, name, "x", half=True, wide=True)
    if copy not in (None, True, False):
        raise TypeError(f"{name}: copy must be None, True or False, got {copy!r}")
    out = x.reshape(_integers(shape, name, "shape"))
    return out.copy() if copy else out


# -- flips, rolls, broadcasts, tiles, repeats ------------------------------------------------

def flip(x, /, *, axis=None) -> Array:
    """x reversed along `axis` (an int, a tuple, or None: every axis): one strided copy walking x
    backwards; a view where nothing moves (every flipped axis of length <= 1)."""
    name = "flip"
    x = operand(x, name, "x", half=True, wide=True)
    axes = range(x.ndim) if axis is None else normalize_axes(axis, x.ndim, name, "axis")
    strides = contiguous_strides(x.shape)
    start = 0
    for d in axes:
        if x.shape[d] > 1:
            start += (x.shape[d] - 1) * strides[d]
            strides[d] = -strides[d]
    if start == 0 or not x.size:
        return x.reshape(x.shape)
    return _view_copy(x, x.shape, strides, start, name)


def roll(x, /, shift, *, axis=None) -> Array:
    """x with its elements shifted by `shift` along `axis` (None: along the flattened array, then
    reshaped). shift and axis are ints or tuples, paired as numpy broadcasts them (an int shift
    applies to each axis; repeated axes add up). Each rolled axis splits the output in two
    segments, so the copy is one dispatch per block of segments (2**k for k rolled axes)."""
    name = "roll"
    x = operand(x, name, "x", half=True, wide=True)
    shifts = _integers(shift, name, "shift")
    if axis is None:
        return _roll(x.reshape(-1), {0: sum(shifts)}, name).reshape(x.shape)
    axes = _integers(axis, name, "axis")
    if len(shifts) != len(axes):
        if len(shifts) == 1:
            shifts *= len(axes)
        elif len(axes) == 1:
            axes *= len(shifts)
        else:
            raise ValueError(f"{name}: `shift` ({len(shifts)} values) and `axis` ({len(axes)} values) "
                             "must have the same length, or one of them a single value")
    per_axis = {}
    for s, a in zip(shifts, axes):
        d = normalize_axis(a, x.ndim, name)
        per_axis[d] = per_axis.get(d, 0) + s
    return _roll(x, per_axis, name)


def _roll(x: Array, per_axis: dict, name: str) -> Array:
    moving = {d: s % x.shape[d] for d, s in per_axis.items() if x.shape[d] and s % x.shape[d]}
    if len(moving) > _ROLL_AXES_PER_PASS:  # a few passes of 2**3 blocks, not 2**k blocks
        first = dict(list(moving.items())[:_ROLL_AXES_PER_PASS])
        rest = dict(list(moving.items())[_ROLL_AXES_PER_PASS:])
        return _roll(_roll(x, first, name), rest, name)
    strides = contiguous_strides(x.shape)
    segments = []  # per axis: (output start, input start, length)
    for d, n in enumerate(x.shape):
        s = moving.get(d, 0)
        segments.append([(s, 0, n - s), (0, n - s, s)] if s else [(0, 0, n)])
    blocks = []
    for combo in itertools.product(*segments):
        blocks.append(_Block(tuple(seg[2] for seg in combo), sum(seg[0] * st for seg, st in zip(combo, strides)),
                             strides, sum(seg[1] * st for seg, st in zip(combo, strides)), strides))
    return _assemble(x, x.shape, blocks, name)


def broadcast_to(x, /, shape) -> Array:
    """x broadcast to `shape` (numpy's rules): one strided copy with zero strides along the
    broadcast axes; a view where no element repeats. ValueError where x does not broadcast."""
    name = "broadcast_to"
    x = operand(x, name, "x", half=True, wide=True)
    shape = _shape(shape, name)
    pad = len(shape) - x.ndim
    if pad < 0 or any(n != t and n != 1 for n, t in zip(x.shape, shape[pad:])):
        raise ValueError(f"{name}: cannot broadcast an array of shape {x.shape} to shape {shape}")
    if not math.prod(shape):
        return Array.empty(shape, x.dtype)
    if math.prod(shape) == x.size:
        return x.reshape(shape)  # only axes of length 1 added: no element repeats
    own = contiguous_strides(x.shape)
    strides = [0] * pad + [0 if n == 1 else st for n, st in zip(x.shape, own)]
    return _view_copy(x, shape, strides, 0, name)


def broadcast_arrays(*arrays) -> list:
    """The arrays broadcast against one another (numpy's rules), each as broadcast_to gives it."""
    name = "broadcast_arrays"
    held = [operand(a, name, f"arrays[{k}]", host="keep", half=True, wide=True) for k, a in enumerate(arrays)]
    shapes = [tuple(a.shape) for a in held]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{name}: shapes {' '.join(map(str, shapes))} do not broadcast") from None
    return [broadcast_to(a if isinstance(a, Array) else asarray(a), shape) for a in held]


def tile(x, reps, /) -> Array:
    """numpy.tile / the standard's tile(x, repetitions): x repeated reps[i] times along axis i,
    reps and x's shape padded with leading ones to the same length. One strided copy: the
    output is x's view of shape (r0, s0, r1, s1, ...) with zero strides along the r's."""
    name = "tile"
    x = operand(x, name, "x", half=True, wide=True)
    reps = _integers(reps, name, "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"{name}: repetitions must be non-negative, got {reps}")
    nd = max(x.ndim, len(reps))
    shape = (1,) * (nd - x.ndim) + x.shape
    reps = (1,) * (nd - len(reps)) + reps
    return _tile(x.reshape(shape), reps, name)


def _tile(x: Array, reps: tuple, name: str) -> Array:
    out_shape = tuple(s * r for s, r in zip(x.shape, reps))
    if not math.prod(out_shape):
        return Array.empty(out_shape, x.dtype)
    inner = [v for s, r in zip(x.shape, reps) for v in (r, s)]
    own = contiguous_strides(x.shape)
    src = [v for st in own for v in (0, st)]
    dst = contiguous_strides(inner)
    if not _fits(inner, dst, src):  # too many dims that do not merge: the trailing half first
        half = len(reps) // 2
        first = _tile(x, (1,) * half + reps[half:], name)
        return _tile(first, reps[:half] + (1,) * (len(reps) - half), name)
    return _view_copy(x, tuple(inner), src, 0, name).reshape(out_shape)


def repeat(x, repeats, /, *, axis=None) -> Array:
    """Each element of x repeated along `axis` (None: of the flattened x). repeats: an int (one
    strided copy, zero stride along the repeat), or an integer array of length 1 or x.shape[axis]
    (a gather of host-computed indices; a vk.Array of repeats is read back first, one sync: the
    output's shape depends on its values)."""
    name = "repeat"
    x = operand(x, name, "x", half=True, wide=True)
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis(axis, x.ndim, name)
    n = x.shape[axis]
    counts = _repeat_counts(repeats, n, name)
    if isinstance(counts, int):
        out_shape = x.shape[:axis] + (n * counts,) + x.shape[axis + 1:]
        if not math.prod(out_shape):
            return Array.empty(out_shape, x.dtype)
        own = contiguous_strides(x.shape)
        inner = x.shape[:axis + 1] + (counts,) + x.shape[axis + 1:]
        src = own[:axis + 1] + [0] + own[axis + 1:]
        return _view_copy(x, inner, src, 0, name).reshape(out_shape)
    index = np.repeat(np.arange(n), counts)
    return moved_as_bits(x, lambda u: take(u, index, axis=axis))


def _repeat_counts(repeats, n: int, name: str):
    """An int, or a length-n numpy array of counts; all non-negative."""
    if isinstance(repeats, (bool, np.bool_)):
        raise TypeError(f"{name}: `repeats` must be an integer or an integer array, got {repeats!r}")
    if isinstance(repeats, (numbers.Integral, np.integer)):
        counts = operator.index(repeats)
    else:
        if isinstance(repeats, Array):
            if repeats.dtype.kind not in "iu":
                raise TypeError(f"{name}: an array of repeats must have an integer dtype, got {repeats.dtype}")
            if repeats.ndim > 1:
                raise ValueError(f"{name}: an array of repeats must be 1-D, got shape {repeats.shape}")
            host = repeats.numpy()  # the output's shape depends on the values: one sync
        elif isinstance(repeats, (np.ndarray, list, tuple)):
            host = np.asarray(repeats)
            if host.dtype.kind not in "iu" and host.size:
                raise TypeError(f"{name}: `repeats` must be integers, got dtype {host.dtype}")
        else:
            raise TypeError(f"{name}: `repeats` must be an integer or an integer array, "
                            f"got {type(repeats).__name__}")
        if host.ndim > 1 or host.size not in (1, n):
            raise ValueError(f"{name}: `repeats` of shape {host.shape} does not broadcast to the "
                             f"axis length ({n},)")
        counts = int(host.reshape(-1)[0]) if host.size == 1 and host.ndim <= 1 else host.astype(np.int64)
    if np.any(np.asarray(counts) < 0):
        raise ValueError(f"{name}: repeats must be non-negative")
    return counts


# -- transposes and joins --------------------------------------------------------------------

def _permuted(x: Array, perm: list) -> Array:
    return moved_as_bits(x, lambda u: transpose(u, perm))


def permute_dims(x, /, axes) -> Array:
    """The standard's name of transpose with a permutation (a view where no element moves)."""
    name = "permute_dims"
    x = operand(x, name, "x", half=True, wide=True)
    perm = normalize_axes(axes, x.ndim, name, "axes")
    if len(perm) != x.ndim:
        raise ValueError(f"{name}: axes {tuple(_integers(axes, name, 'axes'))} don't match an array "
                         f"of {x.ndim} dimensions")
    return _permuted(x, perm)


def matrix_transpose(x, /) -> Array:
    """x with its last two axes swapped (a stack of matrices transposed); Array.mT."""
    name = "matrix_transpose"
    x = operand(x, name, "x", half=True, wide=True)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected an array of at least 2 dimensions, got shape {x.shape}")
    return _permuted(x, list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def unstack(x, /, *, axis=0) -> tuple:
    """The slices of x along `axis`, a tuple: views of x for axis 0, else views of one
    transposed copy."""
    name = "unstack"
    x = operand(x, name, "x", half=True, wide=True)
    axis = normalize_axis(axis, x.ndim, name)
    if axis:
        x = _permuted(x, [axis] + [d for d in range(x.ndim) if d != axis])
    return tuple(x[i] for i in range(x.shape[0]))


def concat(arrays, /, *, axis=0) -> Array:
    """The standard's name of concatenate (axis=None flattens first). Arrays of one half dtype
    (float16 or bfloat16) join as bit patterns, one half per word (any device); other dtypes, and
    the halves with them, promote as numpy's (concatenate)."""
    name = "concat"
    arrays = _sequence(arrays, name)
    held = {a.dtype if isinstance(a, Array) else None for a in arrays}
    (half,) = held if len(held) == 1 else (None,)
    if not dtypes.is_half(half):
        return concatenate(arrays, axis)
    shapes = [(a.size,) if axis is None else a.shape for a in arrays]
    _concat_shapes(shapes, 0 if axis is None else axis, name)
    return from_half_bits(concatenate([half_bits(a) for a in arrays], axis), half)


# -- tril, triu, diff ------------------------------------------------------------------------

def _triangle(name: str, x, k, lower: bool) -> Array:
    x = operand(x, name, "x", half=True, wide=True)
    k = integer(k, name, "k")
    if x.ndim < 2:
        raise ValueError(f"{name}: expected an array of at least 2 dimensions (..., M, N), got shape {x.shape}")
    m, n = x.shape[-2:]
    if not x.size:
        return Array.empty(x.shape, x.dtype)
    keep_all = k >= n - 1 if lower else k <= 1 - m
    keep_none = k <= -m if lower else k >= n
    if keep_all:  # the 8/16/64-bit dtypes by a bit copy
        wide = dtypes.is_wide(x.dtype)
        return _view_copy(x, x.shape, contiguous_strides(x.shape), 0, name) if wide else x.copy()
    if keep_none:
        return moved_as_bits(x, lambda u: zeros(u.shape, u.dtype))
    # Element (i, j) is kept where j <= i + k (tril) or j >= i + k (triu); |k| < m + n here.
    rows = arange(k, m + k, dtype=dtypes.int32).reshape(m, 1)
    cols = arange(n, dtype=dtypes.int32).reshape(1, n)
    keep = less_equal(cols, rows) if lower else greater_equal(cols, rows)
    if x.dtype.itemsize == 8:  # selected as pairs of words: bits kept, no 64-bit arithmetic
        return from_pairs(where(keep.reshape(m, n, 1), pairs(x), np.uint32(0)), x.dtype)
    return moved_as_bits(x, lambda u: where(keep, u, u.dtype.type(0)))


def tril(x, /, *, k=0) -> Array:
    """The lower triangle of each matrix in x (..., M, N): elements above diagonal k zeroed."""
    return _triangle("tril", x, k, True)


def triu(x, /, *, k=0) -> Array:
    """The upper triangle of each matrix in x (..., M, N): elements below diagonal k zeroed."""
    return _triangle("triu", x, k, False)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None) -> Array:
    """The n-th forward difference along `axis`: out[i] = x[i+1] - x[i] applied n times (bool:
    x[i+1] != x[i], as numpy), after joining prepend and append (arrays, or scalars taken as
    one slice) to x along the axis. n=0 returns x."""
    name = "diff"
    x = operand(x, name, "x", half="words", wide=True)
    if x.ndim == 0:
        raise ValueError(f"{name}: expected an array of at least 1 dimension, got a 0-d array")
    axis = normalize_axis(axis, x.ndim, name)
    n = integer(n, name, "n")
    if n < 0:
        raise ValueError(f"{name}: the order n must be non-negative, got {n}")
    if n == 0:
        return x
    slab = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    parts = []  # (shape, Array or host data, dtype for host data)
    for what, extra in (("prepend", prepend), ("x", x), ("append", append)):
        if extra is None:
            continue
        if what != "x":
            extra = operand(extra, name, what, host="keep", half="words", wide=True)
        if not extra.shape:  # a scalar: one slice of it (numpy broadcasts it so)
            weak = prepend if what == "prepend" else append
            dt = result_type(x, weak if isinstance(weak, (bool, int, float)) else extra.dtype)
            parts.append((slab, extra, dt))
        else:
            parts.append((tuple(extra.shape), extra, None))
    joined = x
    if len(parts) > 1:
        _concat_shapes([shape for shape, _, _ in parts], axis, name)
        held = [held_dtype(a) if dt is None else dt for _, a, dt in parts]
        dtypes.promoted(held, name)
        joined = concatenate([broadcast_to(asarray(a, dt), shape) if dt is not None else a
                              for shape, a, dt in parts], axis)
    op = not_equal if joined.dtype == dtypes.bool_ else subtract
    for _ in range(n):
        if not joined.shape[axis]:
            break
        hi = joined[(slice(None),) * axis + (slice(1, None),)]
        lo = joined[(slice(None),) * axis + (slice(None, -1),)]
        joined = op(hi, lo)
    return joined

