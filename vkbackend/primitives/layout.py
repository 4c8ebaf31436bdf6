"""Moving elements without indices: strided copies, transposes (transpose, moveaxis, swapaxes,
Array.T), concatenate and stack.

Shaders: primitives/copy.comp (a strided view copied into another, with a dtype conversion where
they differ) and transpose.comp (tiled last-two-axes transpose). Elements of every dtype but
the halves move as their bits in their own width (moves.py), so these take the 8/16/64-bit dtypes
too, exactly; the transposes take the halves as their bit patterns, one half per word
(elementwise.half_bits). Every op checks its input and raises before recording GPU work, and records without
submitting.

Arrays past maxStorageBufferRange (windows.py) are transposed and copied in boxes of the output
that each big buffer sees through one window: transpose.comp's WINDOWED variant for last-two-axes
swaps, gather_scatter.comp's strided copy (indexing.gather_in_windows) for other views.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..array import Array
from .axes import normalize_axis
from . import windows
from .creation import asarray
from .indexing import gather_in_windows
from .launch import grid_groups
from .moves import check_windowed, move_defines, move_type, nbytes, per_word
from .operands import (HOST_DATA, WG, Plan, checked_words, collapsed, contiguous_strides, held_dtype, normalize_axes,
                       operand)

__all__ = ["transpose", "moveaxis", "swapaxes", "strided_copy", "concatenate", "stack"]

_TILE = 32                 # transpose.comp's tile edge
_MIN_TILED_EDGE = 8        # below this a 32x32 tile is mostly idle: the strided copy wins


# -- strided copy ----------------------------------------------------------------------------

def plan_copy(shape, dst_off: int, dst_strides, src_off: int, src_strides, dst_dtype, src_dtype,
              name: str) -> tuple:
    """Plan dst_view = src_view (with a dtype conversion when they differ: 32-bit dtypes and bool
    only; the others are converted by astype first). Offsets and strides in elements. Returns
    (plan, vec4): with vec4 the kernel takes both buffers twice (scalar and uvec4 bindings)."""
    n = math.prod(shape)
    cshape, (sd, ss) = collapsed(shape, [dst_strides, src_strides])
    dst_dtype, src_dtype = np.dtype(dst_dtype), np.dtype(src_dtype)
    same = dst_dtype == src_dtype
    contiguous = len(cshape) == 1 and sd == [1] and ss == [1]
    defines = {"T_DST": "uint", "T_SRC": "uint"}
    if same and not per_word(dst_dtype):
        size = dst_dtype.itemsize
        if contiguous and (dst_off * size) % 4 == 0 and (src_off * size) % 4 == 0 and (n * size) % 4 == 0:
            # whole words at both ends: copied as words (16 bytes at a time where aligned)
            return plan_copy((n * size // 4,), dst_off * size // 4, [1], src_off * size // 4, [1],
                             dtypes.uint32, dtypes.uint32, name)
        t = move_type(dst_dtype)
        defines = {**move_defines(dst_dtype, "T_DST"), "T_SRC": t}
    elif not same:
        defines = {"T_DST": dtypes.GLSL[dst_dtype], "T_SRC": dtypes.GLSL[src_dtype]}
    words = [n, dst_off, src_off]
    vec4 = False
    if contiguous:
        vec4 = same and per_word(dst_dtype) and dst_off % 4 == 0 and src_off % 4 == 0 and n >= 4
        if vec4:
            defines["VEC4"] = 1
        items = -(-n // 4) if vec4 else n
    else:
        defines["RANK"] = len(cshape)
        words += cshape + sd + ss
        items = n
    plan = Plan("primitives/copy.comp", defines, checked_words(words, name, len(cshape)), grid_groups(items, WG))
    return plan, vec4


def plan_full_copy(a: Array, name: str) -> tuple:
    """plan_copy of all of `a` into a fresh array of its shape."""
    strides = contiguous_strides(a.shape)
    return plan_copy(a.shape, 0, strides, a.offset, strides, a.dtype, a.dtype, name)


def launch_copy(plan_vec4: tuple, dst_buffer, src_buffer) -> None:
    plan, vec4 = plan_vec4
    buffers = [dst_buffer, src_buffer] + ([dst_buffer, src_buffer] if vec4 else [])
    plan.launch(buffers)


def copy_view(a: Array, shape, strides, offset: int, name: str) -> Array:
    """strided_copy unchecked: for internal callers whose view of a's buffer is right by
    construction (it may reach beyond a's own elements, as getitem's views of a parent do)."""
    if math.prod(shape) and (a.buffer.big or windows.is_big(4 * dtypes.words(math.prod(shape), a.dtype))):
        return gather_in_windows(a, offset, tuple(shape), list(strides), None, [0] * len(shape), 0, name)
    plan = plan_copy(shape, 0, contiguous_strides(shape), offset, strides, a.dtype, a.dtype, name)
    out = Array.empty(shape, a.dtype)
    if out.size:
        launch_copy(plan, out.buffer, a.buffer)
    return out


def strided_copy(a: Array, shape, strides, offset: int | None = None) -> Array:
    """A new C-contiguous array holding the strided view (shape, element strides, element offset
    into a.buffer; offset None = a.offset) of a's buffer. Strides may be 0 (broadcast) or negative.

    The view must stay inside a's own elements, buffer indices [a.offset, a.offset + a.size):
    ValueError otherwise, before any GPU work (a pooled buffer may hold slack or other data past
    them)."""
    name = "strided_copy"
    a = operand(a, name, wide=True)
    try:
        shape = tuple(operator.index(s) for s in shape)
        strides = tuple(operator.index(s) for s in strides)
        offset = a.offset if offset is None else operator.index(offset)
    except TypeError:
        raise TypeError(f"{name}: shape, strides and offset must be integers") from None
    if len(strides) != len(shape):
        raise ValueError(f"{name}: {len(strides)} strides for a shape of {len(shape)} dimensions")
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: negative dimension in shape {shape}")
    if math.prod(shape):
        lo, hi = (b - a.offset for b in windows.bounds(shape, strides, offset))
        if lo < 0 or hi >= a.size:
            raise ValueError(f"{name}: the view (shape {shape}, strides {strides}, offset {offset}) "
                             f"reaches elements {lo} to {hi} of `a` (largest index {hi}, smallest {lo}), "
                             f"outside its {a.size} elements: every index must lie in [0, {a.size})"
                             f" (element i of `a` is at buffer offset a.offset + i = {a.offset} + i)")
    return copy_view(a, shape, strides, offset, name)


# -- transpose -------------------------------------------------------------------------------

def _merge_permutation(shape, perm) -> tuple:
    """Drop unit axes and merge input axes that stay neighbours in the output, leaving a
    permutation of few large axes. Returns (merged input shape, merged permutation)."""
    kept = [ax for ax in range(len(shape)) if shape[ax] != 1]
    rank = {ax: i for i, ax in enumerate(kept)}
    groups = []  # runs of consecutive kept input axes, in output order
    for ax in perm:
        if shape[ax] == 1:
            continue
        if groups and rank[groups[-1][-1]] + 1 == rank[ax]:
            groups[-1].append(ax)
        else:
            groups.append([ax])
    by_input = sorted(range(len(groups)), key=lambda g: groups[g][0])
    merged_shape = [math.prod(shape[x] for x in groups[g]) for g in by_input]
    position = {g: i for i, g in enumerate(by_input)}
    return merged_shape, [position[g] for g in range(len(groups))]


def _plan_tiled_transpose(batch: int, rows: int, cols: int, in_off: int, out_off: int = 0,
                          pitches: tuple | None = None, dtype=dtypes.uint32) -> Plan:
    """pitches: (in_pitch, out_pitch, plane) of a box of a larger transpose (WINDOWED). dtype:
    the elements', moved as bits (a 32-bit word, or moves.py's type held in the tile as one
    word or, 64-bit, two)."""
    tiles_r, tiles_c = -(-rows // _TILE), -(-cols // _TILE)
    # One workgroup per tile up to the grid cap; the kernel loops over the rest. A tile costs its
    # trip and two loops of _TILE / (WG / _TILE) rows (each 1 more on its way out).
    per_tile = 1 + 2 * (_TILE * _TILE // WG + 1)
    groups = grid_groups(batch * tiles_r * tiles_c, 1, per_trip=per_tile)
    words = [batch, rows, cols, in_off, out_off, tiles_r, tiles_c]
    if pitches is None:
        defines = move_defines(dtype, "T_MOVE")
        if defines:
            defines["T_TILE"] = "uvec2" if dtype.itemsize == 8 else "uint"
        return Plan("primitives/transpose.comp", defines, words, groups)
    return Plan("primitives/transpose.comp", {"WINDOWED": 1}, words + list(pitches), groups)


def _tiled_in_windows(a: Array, batch: int, rows: int, cols: int, out_shape) -> Array:
    """The tiled transpose of `a` (batch, rows, cols) past the bind range: in boxes of
    (batches, rows, cols) that both sides see through one window each (tile-aligned cuts)."""
    plane = rows * cols
    src, dst = [plane, cols, 1], [plane, 1, rows]
    limit = windows.chunk_words()
    big_out = windows.is_big(4 * a.size)
    reaches = [windows.Reach(src, limit if a.buffer.big else None), windows.Reach(dst, limit if big_out else None)]
    ext = windows.box_shape([batch, rows, cols], reaches, align=[1, _TILE, _TILE])
    plans = []
    for (b, r, c), (eb, er, ec) in windows.boxes([batch, rows, cols], ext, "transpose"):
        sides = []
        for big, strides, first in ((big_out, dst, b * plane + c * rows + r),
                                    (a.buffer.big, src, a.offset + b * plane + r * cols + c)):
            win = None
            if big:
                lo, hi = windows.bounds((eb, er, ec), strides, first)
                win, _ = windows.window(lo, hi - lo + 1)
                first -= win[0]
            sides.append((first, win))
        (out_off, out_win), (in_off, in_win) = sides
        plans.append((_plan_tiled_transpose(eb, er, ec, in_off, out_off, (cols, rows, plane)), [out_win, in_win]))
    out = Array.empty(out_shape, a.dtype)
    for plan, wins in plans:
        windows.launch(plan, [out.buffer, a.buffer], wins)
    return out


def _permute(a: Array, perm: list, name: str) -> Array:
    """a transposed by a normalized permutation: a view when no element moves, the tiled kernel
    for (batched) last-two-axes swaps, the strided copy otherwise."""
    out_shape = tuple(a.shape[p] for p in perm)
    merged, mperm = _merge_permutation(a.shape, perm)
    if mperm == sorted(mperm):
        return a.reshape(out_shape)  # only unit axes move: same memory order, a view as numpy's
    if not a.size:
        return Array.empty(out_shape, a.dtype)
    if dtypes.is_half(a.dtype):  # held on any device: moved as bit patterns, one half per word
        from .elementwise import moved_as_bits
        return moved_as_bits(a, lambda u: _permute(u, perm, name))
    k = len(mperm) - 2
    if mperm == list(range(k)) + [k + 1, k] and min(merged[k], merged[k + 1]) >= _MIN_TILED_EDGE:
        if a.buffer.big or windows.is_big(nbytes(a.size, a.dtype)):
            check_windowed(a.dtype, name)
            return _tiled_in_windows(a, math.prod(merged[:k]), merged[k], merged[k + 1], out_shape)
        plan = _plan_tiled_transpose(math.prod(merged[:k]), merged[k], merged[k + 1], a.offset, dtype=a.dtype)
        out = Array.empty(out_shape, a.dtype)
        plan.launch([out.buffer, a.buffer])
        return out
    src_strides = contiguous_strides(a.shape)
    return copy_view(a, out_shape, [src_strides[p] for p in perm], a.offset, name)


def transpose(a, axes=None) -> Array:
    """numpy.transpose: axes reversed by default, else the permutation `axes`. A view where no
    element moves (numpy's is always a view; here other permutations are copies)."""
    name = "transpose"
    a = operand(a, name, half=True, wide=True)
    if axes is None:
        perm = list(range(a.ndim))[::-1]
    else:
        perm = normalize_axes(axes, a.ndim, name, "axes") if a.ndim else list(axes)
        if len(perm) != a.ndim:
            raise ValueError(f"{name}: axes {tuple(axes)} don't match an array of {a.ndim} dimensions")
    return _permute(a, perm, name)


def moveaxis(a, source, destination) -> Array:
    """numpy.moveaxis: the axes `source` moved to `destination`, the others in their order."""
    name = "moveaxis"
    a = operand(a, name, half=True, wide=True)
    src = normalize_axes(source, a.ndim, name, "source")
    dst = normalize_axes(destination, a.ndim, name, "destination")
    if len(src) != len(dst):
        raise ValueError(f"{name}: `source` and `destination` must have the same number of elements")
    perm = [ax for ax in range(a.ndim) if ax not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _permute(a, perm, name)


def swapaxes(a, axis1, axis2) -> Array:
    """numpy.swapaxes."""
    name = "swapaxes"
    a = operand(a, name, half=True, wide=True)
    i, j = normalize_axis(axis1, a.ndim, name), normalize_axis(axis2, a.ndim, name)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return _permute(a, perm, name)


# -- concatenate / stack ---------------------------------------------------------------------

def _sequence(arrays, name: str) -> list:
    """The arrays to join: a non-empty sequence of vk.Arrays and array-likes."""
    if isinstance(arrays, (Array, np.ndarray)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: expected a sequence of arrays, got {type(arrays).__name__}")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{name}: need at least one array to {name}")
    for k, x in enumerate(arrays):
        if not isinstance(x, (Array,) + HOST_DATA):
            raise TypeError(f"{name}: array {k} is a {type(x).__name__}, expected a vk.Array or array-like")
    return arrays


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, Array) else np.shape(x)


def _result_dtype(arrays, name: str) -> np.dtype:
    """numpy's promotion as the elementwise functions narrow it (int32 with uint32: int64; with an
    8/16/64-bit operand numpy's result)."""
    held = [held_dtype(x) for x in arrays]
    d = dtypes.promoted(held, name)
    return dtypes.half_words(name, d) if dtypes.is_half(d) else d  # a half: 16-bit words (moves.py)


def _concat_shapes(shapes, axis, name: str) -> tuple:
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError(f"{name}: zero-dimensional arrays cannot be concatenated")
    for k, s in enumerate(shapes):
        if len(s) != ndim:
            raise ValueError(f"{name}: all the input arrays must have the same number of dimensions; "
                             f"array 0 has {ndim} and array {k} has {len(s)}")
    axis = normalize_axis(axis, ndim, name)
    for k, s in enumerate(shapes):
        for d in range(ndim):
            if d != axis and s[d] != shapes[0][d]:
                raise ValueError(f"{name}: all the input array dimensions except for the concatenation "
                                 f"axis must match exactly; along dimension {d} array 0 has size "
                                 f"{shapes[0][d]} and array {k} has size {s[d]}")
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    return tuple(out_shape), axis


def concatenate(arrays, axis=0) -> Array:
    """numpy.concatenate (axis=None flattens first); the result dtype follows numpy's promotion,
    narrowed to the supported dtypes. One strided copy per input into its slab of the output,
    converting 32-bit dtypes on the way. Where the result or an input is 8/16/64-bit, the inputs
    of another dtype than the result are converted by astype first (numpy's conversion) and every
    input is moved as bits."""
    name = "concatenate"
    arrays = _sequence(arrays, name)
    dtype = _result_dtype(arrays, name)
    shapes = [_shape_of(x) for x in arrays]
    if axis is None:
        shapes, axis = [(math.prod(s),) for s in shapes], 0
    out_shape, axis = _concat_shapes(shapes, axis, name)
    out_strides = contiguous_strides(out_shape)
    # 8/16/64-bit dtypes are not converted by the copy: such inputs arrive in the result's dtype
    convert = not per_word(dtype) or not all(per_word(held_dtype(x)) for x in arrays)
    plans, start = [], 0
    for s, x in zip(shapes, arrays):
        src = held_dtype(x)
        moved = isinstance(x, Array) and (not convert or src == dtype)
        src_off = x.offset if moved else 0  # host data and converted copies land at offset 0
        if math.prod(s):
            plans.append(plan_copy(s, start * out_strides[axis], out_strides, src_off,
                                   contiguous_strides(s), dtype, dtype if convert else src, name))
        else:
            plans.append(None)
        start += s[axis]
    if convert:  # every input checked (the plans) before any upload or conversion
        for x in arrays:
            operand(x, name, "arrays", host="keep", half=True, wide=True)
    out = Array.empty(out_shape, dtype)
    for plan, x in zip(plans, arrays):
        if plan is None:
            continue
        if convert and not isinstance(x, Array):
            x = asarray(x, dtype)
        elif convert and x.dtype != dtype:
            x = x.astype(dtype)
        launch_copy(plan, out.buffer, operand(x, name, "arrays", host="upload", half=True, wide=True).buffer)
    return out


def stack(arrays, axis=0) -> Array:
    """numpy.stack: the arrays (all of one shape) joined along a new axis."""
    name = "stack"
    arrays = _sequence(arrays, name)
    shapes = {tuple(_shape_of(x)) for x in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{name}: all input arrays must have the same shape, got {sorted(shapes)}")
    shape = shapes.pop()
    axis = normalize_axis(axis, len(shape) + 1, name)
    _result_dtype(arrays, name)  # refuse an unsupported promotion before any upload
    checked = [operand(x, name, "arrays", host="keep", half=True, wide=True) for x in arrays]  # every one, then uploads
    expanded = [x if isinstance(x, Array) else asarray(x) for x in checked]
    expanded = [x.reshape(shape[:axis] + (1,) + shape[axis:]) for x in expanded]
    return concatenate(expanded, axis)
