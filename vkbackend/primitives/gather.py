"""Gather/scatter: transposes and strided copies, concatenation, take / take_along_axis /
put_along_axis / scatter_add, boolean-mask compaction (a[mask], nonzero) and fancy getitem.

Shaders: primitives/copy.comp (strided copy between two views), transpose.comp (tiled last-two-axes
transpose), gather_scatter.comp (indexed copies along one axis), compact.comp (stream compaction).

Every op validates its input and raises before recording GPU work, and records without submitting,
with one exception: a device-resident boolean mask (`a[mask]`, compress_mask, nonzero,
flatnonzero) gives a result whose shape depends on the data, so the selected count is read back
(one synchronize, as numpy/torch/cupy do). Host masks and host indices need no sync.

Index arrays from the host (numpy, lists) are range-checked on the host: IndexError as numpy.
Index arrays on the device (int32/uint32 vk.Arrays) cannot be checked without a sync: negative
indices count from the end, and what is still out of range is clamped by gathers and dropped by
scatters. No index ever makes a kernel access memory outside its buffers.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from .creation import asarray, zeros
from .elementwise import (broadcast_strides as _broadcast_strides, collapse_dims as _collapse, from_half_bits,
                          half_bits)
from .launch import budget_chunks, collective_cost, grid_groups

__all__ = ["transpose", "moveaxis", "swapaxes", "strided_copy", "concatenate", "stack", "take",
           "take_along_axis", "put_along_axis", "scatter_add", "compress_mask", "nonzero",
           "flatnonzero"]

_WG = 256
_MAX_PUSH_WORDS = 32       # 128 bytes: what every Vulkan device guarantees
_TILE = 32                 # transpose.comp's tile edge
_MIN_TILED_EDGE = 8        # below this a 32x32 tile is mostly idle: the strided copy wins
_COMPACT_ITEMS = 8         # elements per invocation and pass in compact.comp
_AxisError = np.exceptions.AxisError


# -- small helpers ---------------------------------------------------------------------------

def _contiguous_strides(shape) -> list:
    strides, acc = [], 1
    for extent in reversed(shape):
        strides.append(acc)
        acc *= extent
    return strides[::-1]


def _array(x, name: str, what: str = "a") -> Array:
    """A vk.Array from an Array or host array-like; TypeError naming the argument otherwise."""
    if isinstance(x, Array):
        dtypes.computable(x.dtype, name)
        return x
    if isinstance(x, (np.ndarray, list, tuple, numbers.Number, np.generic)):
        return asarray(x)
    raise TypeError(f"{name}: `{what}` must be a vk.Array or an array-like, got {type(x).__name__}")


def _check_array(x, name: str, what: str = "a") -> Array:
    """Like _array, but refuses host data (used where converting would record an upload before
    the rest of the input is validated); callers convert host data after validating."""
    if isinstance(x, Array):
        dtypes.computable(x.dtype, name)
        return x
    raise TypeError(f"{name}: `{what}` must be a vk.Array, got {type(x).__name__}")


def _axis(axis, ndim: int, name: str) -> int:
    """A normalized axis; numpy's AxisError (a ValueError and an IndexError) when out of range."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise _AxisError(axis, ndim, name)
    return axis % ndim


def _axes(axes, ndim: int, name: str, what: str) -> list:
    """A sequence (or one int) of distinct normalized axes."""
    if isinstance(axes, (numbers.Integral, np.integer)):
        axes = [axes]
    out = [_axis(a, ndim, name) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in `{what}` {tuple(axes)}")
    return out


def _glsl_type(dtype) -> str:
    return dtypes.GLSL[np.dtype(dtype)]


@dataclass
class _Plan:
    """A validated dispatch, planned before any output is allocated (allocation may record a
    poison fill, and nothing may be recorded for an input that is then refused)."""
    shader: str
    defines: dict
    words: list
    groups: int
    workgroup: int = _WG

    def launch(self, buffers) -> None:
        runtime.get().kernel(self.shader, self.defines, self.workgroup)(buffers, self.words, (self.groups,))


def _checked_words(words: list, name: str, rank: int) -> list:
    """Shapes and strides travel as push constants; refuse (before any GPU work) the rare view
    whose dims do not merge down to what fits."""
    if len(words) > _MAX_PUSH_WORDS:
        raise ValueError(f"{name}: {rank} dimensions that cannot be merged do not fit the kernel's "
                         f"{_MAX_PUSH_WORDS}-word push constants; copy to a simpler layout first")
    return words


def _collapsed(shape, stride_lists) -> tuple:
    """_collapse, but always at least one dim (a 1-element iteration has rank 1, strides 0)."""
    cshape, cstrides = _collapse(tuple(shape), [list(s) for s in stride_lists])
    if not cshape:
        return [1], [[0] for _ in stride_lists]
    return cshape, cstrides


# -- strided copy ----------------------------------------------------------------------------

def _plan_copy(shape, dst_off: int, dst_strides, src_off: int, src_strides, dst_dtype, src_dtype,
               name: str) -> tuple:
    """Plan dst_view = src_view (with a dtype conversion when they differ). Returns (plan, vec4):
    with vec4 the kernel takes both buffers twice (scalar and uvec4 bindings)."""
    n = math.prod(shape)
    cshape, (sd, ss) = _collapsed(shape, [dst_strides, src_strides])
    same = np.dtype(dst_dtype) == np.dtype(src_dtype)
    t_dst, t_src = ("uint", "uint") if same else (_glsl_type(dst_dtype), _glsl_type(src_dtype))
    defines = {"T_DST": t_dst, "T_SRC": t_src}
    words = [n, dst_off, src_off]
    vec4 = False
    if len(cshape) == 1 and sd == [1] and ss == [1]:
        vec4 = same and dst_off % 4 == 0 and src_off % 4 == 0 and n >= 4
        if vec4:
            defines["VEC4"] = 1
        items = -(-n // 4) if vec4 else n
    else:
        defines["RANK"] = len(cshape)
        words += cshape + sd + ss
        items = n
    plan = _Plan("primitives/copy.comp", defines, _checked_words(words, name, len(cshape)),
                 grid_groups(items, _WG))
    return plan, vec4


def _launch_copy(plan_vec4: tuple, dst_buffer, src_buffer) -> None:
    plan, vec4 = plan_vec4
    buffers = [dst_buffer, src_buffer] + ([dst_buffer, src_buffer] if vec4 else [])
    plan.launch(buffers)


def _view_bounds(shape, strides, offset: int) -> tuple:
    """The lowest and highest element a strided view touches."""
    lo = hi = offset
    for extent, stride in zip(shape, strides):
        span = (extent - 1) * stride
        lo, hi = lo + min(0, span), hi + max(0, span)
    return lo, hi


def _strided_copy(a: Array, shape, strides, offset: int, name: str) -> Array:
    plan = _plan_copy(shape, 0, _contiguous_strides(shape), offset, strides, a.dtype, a.dtype, name)
    out = Array.empty(shape, a.dtype)
    if out.size:
        _launch_copy(plan, out.buffer, a.buffer)
    return out


def strided_copy(a: Array, shape, strides, offset: int | None = None) -> Array:
    """A new C-contiguous array holding the strided view (shape, element strides, element offset
    into a.buffer; offset None = a.offset) of a's buffer. Strides may be 0 (broadcast) or negative.

    The view must stay inside a's own elements, buffer indices [a.offset, a.offset + a.size):
    ValueError otherwise, before any GPU work (a pooled buffer may hold slack or other data past
    them). Internal callers that view a's storage beyond its elements use _strided_copy."""
    name = "strided_copy"
    a = _check_array(a, name)
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
        lo, hi = (b - a.offset for b in _view_bounds(shape, strides, offset))
        if lo < 0 or hi >= a.size:
            raise ValueError(f"{name}: the view (shape {shape}, strides {strides}, offset {offset}) "
                             f"reaches elements {lo} to {hi} of `a` (largest index {hi}, smallest {lo}), "
                             f"outside its {a.size} elements: every index must lie in [0, {a.size})"
                             f" (element i of `a` is at buffer offset a.offset + i = {a.offset} + i)")
    return _strided_copy(a, shape, strides, offset, name)


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


def _plan_tiled_transpose(batch: int, rows: int, cols: int, in_off: int) -> _Plan:
    tiles_r, tiles_c = -(-rows // _TILE), -(-cols // _TILE)
    # One workgroup per tile up to the grid cap; the kernel loops over the rest. A tile costs its
    # trip and two loops of _TILE / (_WG / _TILE) rows (each 1 more on its way out).
    per_tile = 1 + 2 * (_TILE * _TILE // _WG + 1)
    groups = grid_groups(batch * tiles_r * tiles_c, 1, per_trip=per_tile)
    return _Plan("primitives/transpose.comp", {}, [batch, rows, cols, in_off, 0, tiles_r, tiles_c], groups)


def _permute(a: Array, perm: list, name: str) -> Array:
    """a transposed by a normalized permutation: a view when no element moves, the tiled kernel
    for (batched) last-two-axes swaps, the strided copy otherwise."""
    out_shape = tuple(a.shape[p] for p in perm)
    merged, mperm = _merge_permutation(a.shape, perm)
    if mperm == sorted(mperm):
        return a.reshape(out_shape)  # only unit axes move: same memory order, a view as numpy's
    if not a.size:
        return Array.empty(out_shape, a.dtype)
    k = len(mperm) - 2
    if mperm == list(range(k)) + [k + 1, k] and min(merged[k], merged[k + 1]) >= _MIN_TILED_EDGE:
        plan = _plan_tiled_transpose(math.prod(merged[:k]), merged[k], merged[k + 1], a.offset)
        out = Array.empty(out_shape, a.dtype)
        plan.launch([out.buffer, a.buffer])
        return out
    src_strides = _contiguous_strides(a.shape)
    return _strided_copy(a, out_shape, [src_strides[p] for p in perm], a.offset, name)


def transpose(a, axes=None) -> Array:
    """numpy.transpose: axes reversed by default, else the permutation `axes`. A view where no
    element moves (numpy's is always a view; here other permutations are copies)."""
    name = "transpose"
    a = _check_array(a, name)
    if axes is None:
        perm = list(range(a.ndim))[::-1]
    else:
        perm = _axes(axes, a.ndim, name, "axes") if a.ndim else list(axes)
        if len(perm) != a.ndim:
            raise ValueError(f"{name}: axes {tuple(axes)} don't match an array of {a.ndim} dimensions")
    return _permute(a, perm, name)


def moveaxis(a, source, destination) -> Array:
    """numpy.moveaxis: the axes `source` moved to `destination`, the others in their order."""
    name = "moveaxis"
    a = _check_array(a, name)
    src = _axes(source, a.ndim, name, "source")
    dst = _axes(destination, a.ndim, name, "destination")
    if len(src) != len(dst):
        raise ValueError(f"{name}: `source` and `destination` must have the same number of elements")
    perm = [ax for ax in range(a.ndim) if ax not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _permute(a, perm, name)


def swapaxes(a, axis1, axis2) -> Array:
    """numpy.swapaxes."""
    name = "swapaxes"
    a = _check_array(a, name)
    i, j = _axis(axis1, a.ndim, name), _axis(axis2, a.ndim, name)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return _permute(a, perm, name)


# -- concatenate / stack ---------------------------------------------------------------------

def _operands(arrays, name: str) -> list:
    if isinstance(arrays, (Array, np.ndarray)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: expected a sequence of arrays, got {type(arrays).__name__}")
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{name}: need at least one array to {name}")
    for k, x in enumerate(arrays):
        if not isinstance(x, (Array, np.ndarray, list, tuple, numbers.Number, np.generic)):
            raise TypeError(f"{name}: array {k} is a {type(x).__name__}, expected a vk.Array or array-like")
    return arrays


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, Array) else np.shape(x)


def _host_dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, Array) else dtypes.from_host(np.asarray(x).dtype)


def _result_dtype(arrays, name: str) -> np.dtype:
    return dtypes.narrow(np.result_type(*[_host_dtype(x) for x in arrays]), name)


def _concat_shapes(shapes, axis, name: str) -> tuple:
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError(f"{name}: zero-dimensional arrays cannot be concatenated")
    for k, s in enumerate(shapes):
        if len(s) != ndim:
            raise ValueError(f"{name}: all the input arrays must have the same number of dimensions; "
                             f"array 0 has {ndim} and array {k} has {len(s)}")
    axis = _axis(axis, ndim, name)
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
    narrowed to the supported dtypes. One strided copy per input into its slab of the output."""
    name = "concatenate"
    arrays = _operands(arrays, name)
    dtype = _result_dtype(arrays, name)
    shapes = [_shape_of(x) for x in arrays]
    if axis is None:
        shapes, axis = [(math.prod(s),) for s in shapes], 0
    out_shape, axis = _concat_shapes(shapes, axis, name)
    out_strides = _contiguous_strides(out_shape)
    plans, start = [], 0
    for s, x in zip(shapes, arrays):
        src_off = x.offset if isinstance(x, Array) else 0  # host data lands at offset 0
        if math.prod(s):
            plans.append(_plan_copy(s, start * out_strides[axis], out_strides, src_off,
                                    _contiguous_strides(s), dtype, _host_dtype(x), name))
        else:
            plans.append(None)
        start += s[axis]
    out = Array.empty(out_shape, dtype)
    for plan, x in zip(plans, arrays):
        if plan is not None:
            _launch_copy(plan, out.buffer, _array(x, name, "arrays").buffer)
    return out


def stack(arrays, axis=0) -> Array:
    """numpy.stack: the arrays (all of one shape) joined along a new axis."""
    name = "stack"
    arrays = _operands(arrays, name)
    shapes = {tuple(_shape_of(x)) for x in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{name}: all input arrays must have the same shape, got {sorted(shapes)}")
    shape = shapes.pop()
    axis = _axis(axis, len(shape) + 1, name)
    _result_dtype(arrays, name)  # refuse an unsupported promotion before any upload
    expanded = [_array(x, name, "arrays") for x in arrays]
    expanded = [x.reshape(shape[:axis] + (1,) + shape[axis:]) for x in expanded]
    return concatenate(expanded, axis)


# -- index operands --------------------------------------------------------------------------

_MODES = ("raise", "wrap", "clip")


@dataclass
class _Index:
    """An index operand, validated. Host indices are normalized to [0, axis_len) on the host and
    uploaded later (`host`); device ones are used as they are (`array`)."""
    shape: tuple
    host: np.ndarray | None = None
    array: Array | None = None

    @property
    def signed(self) -> bool:
        return self.array is None or self.array.dtype != dtypes.uint32

    @property
    def offset(self) -> int:
        return 0 if self.array is None else self.array.offset

    def device(self) -> Array:
        """The indices on the device (uploads host indices: call after all validation)."""
        if self.array is None:
            self.array = asarray(self.host, dtypes.int32)
        return self.array


def _host_indices(indices, name: str, what: str) -> np.ndarray:
    host = np.asarray(indices)
    if host.dtype.kind == "f" and host.size == 0:
        host = host.astype(np.int64)  # [] is an empty index list, as numpy reads it
    if host.dtype.kind not in "iu":
        raise TypeError(f"{name}: `{what}` must be integers, got dtype {host.dtype}")
    return host


def _index(indices, axis_len: int, name: str, what: str = "indices", axis: int = 0,
           mode: str = "raise") -> _Index:
    """Validate an index operand for an axis of length axis_len (before any GPU work)."""
    if isinstance(indices, Array):
        if indices.dtype not in (dtypes.int32, dtypes.uint32):
            raise TypeError(f"{name}: `{what}` must be int32 or uint32, got {indices.dtype}")
        idx = _Index(indices.shape, array=indices)
    elif isinstance(indices, (np.ndarray, list, tuple, numbers.Integral, np.integer)) \
            and not isinstance(indices, (bool, np.bool_)):
        host = _host_indices(indices, name, what)
        idx = _Index(host.shape, host=_normalize_host(host, axis_len, name, axis, mode))
    else:
        raise TypeError(f"{name}: `{what}` must be an integer vk.Array, numpy array or list, "
                        f"got {type(indices).__name__}")
    if axis_len == 0 and math.prod(idx.shape):
        raise IndexError(f"{name}: cannot do a non-empty take from an empty axis ({axis})")
    return idx


def _normalize_host(host: np.ndarray, n: int, name: str, axis: int, mode: str) -> np.ndarray:
    """Host indices in [0, n) per numpy's mode; IndexError for mode='raise' out of range."""
    if host.size == 0 or n == 0:
        return host.astype(np.int32)
    if mode == "wrap":
        return np.mod(host, n).astype(np.int32)
    if mode == "clip":
        return np.clip(host, 0, n - 1).astype(np.int32)
    lo, hi = int(host.min()), int(host.max())  # exact for any integer dtype, uint64 included
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with size {n}")
    h = host.astype(np.int64)
    return np.where(h < 0, h + n, h).astype(np.int32)


# -- the indexed kernel (gather_scatter.comp) ------------------------------------------------

@dataclass
class _Walk:
    """How one operand walks the iteration space: element offset and per-dim strides."""
    offset: int
    strides: list


def _plan_indexed(op: str, shape, direct: _Walk, index: _Walk, base: _Walk, axis_len: int,
                  word2: int, idx: _Index, name: str, defines=None, ordered=None,
                  per_trip: int = 1) -> _Plan:
    """Plan a gather_scatter.comp dispatch over `shape` (see the shader for the operands).
    ordered: (axis dim in shape, off_W, I axis stride, D axis stride) for OP_SCATTER_ADD_ORDERED;
    a marker operand keeps that dim from merging so the kernel can read its coordinate.
    per_trip: counted loop iterations of one element, its grid-stride trip included."""
    lists = [direct.strides, index.strides, base.strides]
    if ordered is not None:
        lists.append([int(d == ordered[0]) for d in range(len(shape))])
    cshape, cstrides = _collapsed(shape, lists)
    extra = []
    if ordered is not None:
        marker = cstrides.pop()
        extra = list(ordered[1:]) + [marker.index(1) if 1 in marker else -1]
    rank = len(cshape)
    words = [math.prod(shape), axis_len, word2, direct.offset, index.offset, base.offset]
    words += cshape + [s for st in cstrides for s in st] + extra
    defs = {f"OP_{op}": 1, "RANK": rank, **(defines or {})}
    if idx.signed:
        defs["IDX_SIGNED"] = 1
    return _Plan("primitives/gather_scatter.comp", defs, _checked_words(words, name, rank),
                 grid_groups(math.prod(shape), _WG, per_trip=per_trip))


def _mode_define(mode: str, idx: _Index) -> dict:
    # Host indices arrive normalized; only device ones need the shader to apply the mode.
    if idx.host is not None or mode == "raise":
        return {}
    return {f"MODE_{mode.upper()}": 1}


def _gather(src: Array, src_offset: int, out_shape, base_strides, idx: _Index, idx_strides,
            axis_len: int, axis_stride: int, name: str, mode: str = "raise") -> Array:
    """out[c] = src[src_offset + sum(c * base_strides) + index(c) * axis_stride] over out_shape."""
    out_shape = tuple(out_shape)
    n = math.prod(out_shape)
    plan = None
    if n:
        plan = _plan_indexed("GATHER", out_shape, _Walk(0, _contiguous_strides(out_shape)),
                             _Walk(idx.offset, idx_strides), _Walk(src_offset, base_strides),
                             axis_len, axis_stride, idx, name, _mode_define(mode, idx))
    out = Array.empty(out_shape, src.dtype)
    if plan is not None:
        plan.launch([out.buffer, idx.device().buffer, src.buffer, out.buffer])
    return out


# -- take / take_along_axis ------------------------------------------------------------------

def take(a, indices, axis=None, mode="raise") -> Array:
    """numpy.take: elements of `a` (flattened when axis is None) at `indices` along `axis`.
    mode 'raise' (host indices checked; device ones: see the module doc), 'wrap' or 'clip'."""
    name = "take"
    a = _check_array(a, name)
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES}, got {mode!r}")
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = _axis(axis, a.ndim, name)
    n = a.shape[axis]
    idx = _index(indices, n, name, axis=axis, mode=mode)
    outer, inner = a.shape[:axis], a.shape[axis + 1:]
    out_shape = outer + idx.shape + inner
    a_strides = _contiguous_strides(a.shape)
    k = len(idx.shape)
    base = a_strides[:axis] + [0] * k + a_strides[axis + 1:]
    idx_strides = [0] * len(outer) + _contiguous_strides(idx.shape) + [0] * len(inner)
    return _gather(a, a.offset, out_shape, base, idx, idx_strides, n, a_strides[axis], name, mode)


def _along_axis_shape(arr_shape, idx_shape, axis: int, name: str) -> tuple:
    """The iteration shape of take/put_along_axis: indices broadcast against arr off the axis."""
    if len(idx_shape) != len(arr_shape):
        raise ValueError(f"{name}: `indices` and `arr` must have the same number of dimensions, "
                         f"got {len(idx_shape)} and {len(arr_shape)}")
    stripped = list(arr_shape)
    stripped[axis] = 1
    try:
        shape = list(np.broadcast_shapes(tuple(stripped), tuple(idx_shape)))
    except ValueError:
        raise ValueError(f"{name}: `indices` of shape {tuple(idx_shape)} does not broadcast against "
                         f"`arr` of shape {tuple(arr_shape)} off axis {axis}") from None
    shape[axis] = idx_shape[axis]
    return tuple(shape)


def _along_axis_walks(arr: Array, idx: _Index, shape, axis: int) -> tuple:
    """(arr's walk without the axis, the indices' walk) over the iteration shape."""
    return (_Walk(arr.offset, _zero_at(_broadcast_strides(arr.shape, shape), axis)),
            _Walk(idx.offset, _broadcast_strides(idx.shape, shape)))


def _along_axis_args(arr, indices, axis, name: str) -> tuple:
    arr = _check_array(arr, name, "arr")
    if axis is None:
        idx_ndim = np.ndim(indices) if not isinstance(indices, Array) else indices.ndim
        if idx_ndim != 1:
            raise ValueError(f"{name}: when axis=None, `indices` must have a single dimension")
        arr, axis = arr.reshape(-1), 0
    else:
        axis = _axis(axis, arr.ndim, name)
    idx = _index(indices, arr.shape[axis], name, axis=axis)
    shape = _along_axis_shape(arr.shape, idx.shape, axis, name)
    return arr, axis, idx, shape


def take_along_axis(arr, indices, axis=-1) -> Array:
    """numpy.take_along_axis: out[..., j, ...] = arr[..., indices[..., j, ...], ...]."""
    name = "take_along_axis"
    arr, axis, idx, shape = _along_axis_args(arr, indices, axis, name)
    base, index = _along_axis_walks(arr, idx, shape, axis)
    axis_stride = _contiguous_strides(arr.shape)[axis]
    return _gather(arr, base.offset, shape, base.strides, idx, index.strides, arr.shape[axis],
                   axis_stride, name)


# -- values operands (scatters) --------------------------------------------------------------

@dataclass
class _Values:
    """A validated values operand for a scatter into a `dtype` array: a device array (converted
    to dtype on use) or host data (uploaded on use, after all validation)."""
    shape: tuple
    dtype: np.dtype
    host: np.ndarray | None = None
    array: Array | None = None

    @property
    def offset(self) -> int:
        # Uploads and converted copies are fresh arrays, at offset 0.
        return self.array.offset if self.array is not None and self.array.dtype == self.dtype else 0

    def device(self) -> Array:
        if self.array is None:
            self.array = asarray(self.host, self.dtype)
        elif self.array.dtype != self.dtype:
            self.array = self.array.astype(self.dtype)
        return self.array


def _castable(src: np.dtype, dst: np.dtype, host: np.ndarray | None) -> bool:
    """numpy's 'same_kind' rule, with Python scalars weak (NEP 50): an int scalar fits any integer
    dtype that holds its value."""
    if host is not None and host.ndim == 0 and src.kind in "iu" and dst.kind in "iu":
        info = np.iinfo(dst)
        return info.min <= int(host) <= info.max
    return np.can_cast(src, dst, "same_kind")


def _values(values, dtype: np.dtype, name: str, same_kind: bool = False) -> _Values:
    """Validate scatter values. numpy's assignment casts unsafely (put_along_axis); scatter_add
    asks for same_kind (np.add.at's rule; torch even wants equal dtypes)."""
    if isinstance(values, Array):
        if same_kind and not _castable(values.dtype, dtype, None):
            raise TypeError(f"{name}: `values` of dtype {values.dtype} cannot be added into {dtype}")
        return _Values(values.shape, dtype, array=values)
    if not isinstance(values, (np.ndarray, list, tuple, numbers.Number, np.generic)):
        raise TypeError(f"{name}: `values` must be a vk.Array, an array-like or a number, "
                        f"got {type(values).__name__}")
    host = np.asarray(values)
    if host.dtype.kind not in "biuf":
        raise TypeError(f"{name}: `values` of dtype {host.dtype}: expected bool, integer or float")
    if same_kind and not _castable(host.dtype, dtype, host):
        raise TypeError(f"{name}: `values` of dtype {host.dtype} cannot be added into {dtype}")
    return _Values(host.shape, dtype, host=host.astype(bool if dtype == dtypes.bool_ else dtype))


def _values_walk(vals: _Values, shape, name: str) -> _Walk:
    """Values broadcast to the iteration shape (numpy's assignment rule)."""
    try:
        ok = tuple(np.broadcast_shapes(vals.shape, tuple(shape))) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name}: could not broadcast `values` from shape {vals.shape} into "
                         f"shape {tuple(shape)}")
    return _Walk(vals.offset, _broadcast_strides(vals.shape, shape))


# -- put_along_axis / scatter_add --------------------------------------------------------------

def put_along_axis(arr, indices, values, axis, *, unique_indices: bool = False) -> None:
    """numpy.put_along_axis: arr[..., indices[..., j, ...], ...] = values[..., j, ...], in place
    (the writes are recorded into arr's buffer). `values` broadcasts to the indices' shape and
    is cast to arr's dtype, as numpy's assignment does.

    Duplicate indices are deterministic: the last write in C order of the iteration wins (what
    numpy does in practice): a claim pass (atomicMax of the iteration number over an arr-sized
    temporary) before the write pass. unique_indices=True promises no duplicates and skips it.
    Device indices out of range are dropped."""
    name = "put_along_axis"
    arr, axis, idx, shape = _along_axis_args(arr, indices, axis, name)
    vals = _values(values, arr.dtype, name)
    direct = _values_walk(vals, shape, name)
    if not math.prod(shape):
        return None
    base, index = _along_axis_walks(arr, idx, shape, axis)
    axis_stride = _contiguous_strides(arr.shape)[axis]
    plan_args = (shape, direct, index, base, arr.shape[axis], axis_stride, idx, name)
    scatter = _plan_indexed("SCATTER", *plan_args, defines=None if unique_indices else {"LAST_WINS": 1})
    claim = None if unique_indices else _plan_indexed("CLAIM", *plan_args)
    buffers = [vals.device().buffer, idx.device().buffer, arr.buffer]
    if claim is None:
        scatter.launch(buffers + [arr.buffer])
        return None
    winners = zeros(arr.size, dtypes.uint32)
    claim.launch(buffers + [winners.buffer])
    scatter.launch(buffers + [winners.buffer])
    return None


def _scatter_add_values(values, a: Array, idx_shape, name: str) -> tuple:
    """(values, their walk over the indices' shape): numpy-broadcastable to it, or torch's rule
    (same ndim, at least as large in every dim: the leading block is used)."""
    vals = _values(values, a.dtype, name, same_kind=True)
    try:
        return vals, _values_walk(vals, idx_shape, name)
    except ValueError:
        if len(vals.shape) == len(idx_shape) and all(v >= i for v, i in zip(vals.shape, idx_shape)):
            return vals, _Walk(vals.offset, _contiguous_strides(vals.shape))
        raise ValueError(f"{name}: `values` of shape {vals.shape} neither broadcasts to the indices' "
                         f"shape {tuple(idx_shape)} nor covers it") from None


def scatter_add(a, indices, values, axis=0, *, deterministic: bool = False) -> Array:
    """A new array: a with values added at indices along axis (torch.Tensor.scatter_add):
    out[..., indices[..., j, ...], ...] += values[..., j, ...] over the indices' shape, which may
    be smaller than a's off the axis (and than values'). Duplicates accumulate (np.add.at).

    int32/uint32 use atomicAdd (exact in any order). float32 uses a compare-and-swap loop on the
    bits (float atomics need VK_EXT_shader_atomic_float), so the rounding depends on the order;
    deterministic=True instead lets each output element sum its contributions in index order
    (bit-identical to np.add.at, run after run) at O(axis length x indices along the axis) work
    per fiber: for moderate sizes. Device indices out of range are dropped."""
    name = "scatter_add"
    a = _check_array(a, name)
    if a.dtype == dtypes.bool_:
        raise TypeError(f"{name}: bool arrays cannot be added to; cast with .astype() first")
    if a.ndim == 0:
        raise ValueError(f"{name}: `a` must have at least one dimension")
    axis = _axis(axis, a.ndim, name)
    idx = _index(indices, a.shape[axis], name, axis=axis)
    if len(idx.shape) != a.ndim:
        raise ValueError(f"{name}: `indices` must have as many dimensions as `a` ({a.ndim}), got {len(idx.shape)}")
    for d, (i, e) in enumerate(zip(idx.shape, a.shape)):
        if d != axis and i > e:
            raise ValueError(f"{name}: `indices` is larger than `a` along dimension {d} ({i} > {e})")
    vals, direct = _scatter_add_values(values, a, idx.shape, name)
    if a.dtype == dtypes.float32 and deterministic:
        return _scatter_add_ordered(a, idx, vals, direct, axis, name)
    return _scatter_add_atomic(a, idx, vals, direct, axis, name)


def _zero_at(strides, axis: int) -> list:
    """Strides with the indexed axis taken out (the kernel adds index * axis stride itself)."""
    return [0 if d == axis else s for d, s in enumerate(strides)]


def _plan_full_copy(a: Array, name: str) -> tuple:
    return _plan_copy(a.shape, 0, _contiguous_strides(a.shape), a.offset, _contiguous_strides(a.shape),
                      a.dtype, a.dtype, name)


def _scatter_add_atomic(a: Array, idx: _Index, vals: _Values, direct: _Walk, axis: int, name: str) -> Array:
    shape = idx.shape
    strides = _contiguous_strides(a.shape)
    base = _Walk(0, _zero_at(strides, axis))
    t = _glsl_type(a.dtype)
    defines = {"T": t, **({"T_IS_FLOAT": 1} if t == "float" else {})}
    add = None
    if math.prod(shape):
        add = _plan_indexed("SCATTER_ADD", shape, direct, _Walk(idx.offset, _contiguous_strides(shape)),
                            base, a.shape[axis], strides[axis], idx, name, defines,
                            per_trip=_cas_trip() if t == "float" else 1)
    copy = _plan_full_copy(a, name) if a.size else None
    out = Array.empty(a.shape, a.dtype)
    if copy is not None:
        _launch_copy(copy, out.buffer, a.buffer)
    if add is not None:
        add.launch([vals.device().buffer, idx.device().buffer, out.buffer, out.buffer])
    return out


def _cas_trip() -> int:
    """Counted iterations of one float scatter-add, an estimate: its grid-stride trip and the
    compare-and-swap loop, which retries while other lanes of its subgroup (run one after another
    on lavapipe) win the same word, and once more on its way out. Contention from other
    workgroups adds retries no plan can bound."""
    return 2 + max(1, runtime.get().device.max_subgroup_size)


def _ordered_pieces(plan: _Plan, m: int, i_stride: int, d_stride: int) -> list:
    """The ordered scatter-add's plan cut along the contributions (word 2, m of them): each piece
    takes the next run of them, from the offsets of D and I moved on, so that one destination's
    loop over them fits the loop budget (each contribution counts once per grid-stride trip, each
    trip 2 more: itself and the loop's exit). Pieces after the first add onto the output."""
    items = plan.words[0]
    trips = -(-items // (plan.groups * _WG))
    pieces = budget_chunks(m, per_trip=trips, reserve=2 * trips)
    step = -(-m // pieces)
    out = []
    for j0 in range(0, m, step):
        words = list(plan.words)
        words[2] = min(step, m - j0)
        words[3] += j0 * d_stride
        words[4] += j0 * i_stride
        if j0:
            words[5] = 0  # the base is the output (offset 0) from the second piece on
        out.append(dataclasses.replace(plan, words=words))
    return out


def _scatter_add_ordered(a: Array, idx: _Index, vals: _Values, direct: _Walk, axis: int, name: str) -> Array:
    """Each destination element gathers its contributions in index order (no atomics, no sort).
    Where the indices cover all of a off the axis, one pass reads a and writes the output;
    otherwise the output starts as a copy of a and the covered block is updated in place. Where
    the loop budget cannot hold all the contributions of an element, several passes take them
    in turn, each adding onto the output: the same sums in the same order."""
    shape = list(idx.shape)
    shape[axis] = a.shape[axis]
    covers = tuple(shape) == a.shape
    idx_strides = _contiguous_strides(idx.shape)
    pieces = []
    if math.prod(shape) and idx.shape[axis]:
        plan = _plan_indexed(
            "SCATTER_ADD_ORDERED", shape, _Walk(direct.offset, _zero_at(direct.strides, axis)),
            _Walk(idx.offset, _zero_at(idx_strides, axis)),
            _Walk(a.offset if covers else 0, _contiguous_strides(a.shape)), a.shape[axis],
            idx.shape[axis], idx, name, {"T": "float"},
            ordered=(axis, 0, idx_strides[axis], direct.strides[axis]), per_trip=3)
        pieces = _ordered_pieces(plan, idx.shape[axis], idx_strides[axis], direct.strides[axis])
    copy = None if (covers and pieces) or not a.size else _plan_full_copy(a, name)
    out = Array.empty(a.shape, a.dtype)
    if copy is not None:
        _launch_copy(copy, out.buffer, a.buffer)
    for k, plan in enumerate(pieces):
        src = a if covers and k == 0 else out
        plan.launch([vals.device().buffer, idx.device().buffer, src.buffer, out.buffer])
    return out


# -- boolean-mask compaction (compact.comp) --------------------------------------------------

_COMPACT = "primitives/compact.comp"


def _compact_defines(mask: Array, pass_: str) -> dict:
    defines = {f"PASS_{pass_}": 1, "ITEMS": _COMPACT_ITEMS}
    if mask.dtype == dtypes.float32:
        defines["MASK_FLOAT"] = 1  # float masks compare as floats: -0.0 is not selected
    return defines


def _scan_ranges(tiles: int) -> list:
    """[first, last) tiles of each PASS_SCAN dispatch: one workgroup walks WG_SIZE tiles a trip, a
    workgroup scan each, so the loop budget may take several dispatches."""
    trips = -(-tiles // _WG)
    step = -(-trips // budget_chunks(trips, per_trip=1 + collective_cost(_WG))) * _WG
    return [(first, min(first + step, tiles)) for first in range(0, tiles, step)]


def _count_selected(mask: Array) -> tuple:
    """Record the count and scan passes over a non-empty mask: (counts, tiles), where counts
    holds each tile's first output slot and, last, the total."""
    n = mask.size
    tiles = -(-n // (_WG * _COMPACT_ITEMS))
    words = [n, tiles, mask.offset, 0, 0, 0]
    count = _Plan(_COMPACT, _compact_defines(mask, "COUNT"), words,
                  grid_groups(tiles, 1, per_trip=1 + collective_cost(_WG)))
    scans = [_Plan(_COMPACT, _compact_defines(mask, "SCAN"), [n, tiles, mask.offset, first, last, 0], 1)
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
        return 1 + _COMPACT_ITEMS * collective_cost(_WG)
    subgroups = -(-_WG // max(1, dev.min_subgroup_size))
    per = -(-_COMPACT_ITEMS * subgroups // _WG)
    return 1 + 2 * (per + 1) + collective_cost(_WG)


def _selected_total(counts: Array) -> int:
    """How many elements are selected. THE ONE HOST SYNC of this module: a result whose shape
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
    plan = _Plan(_COMPACT, defines, _checked_words(words, "nonzero", mask.ndim),
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
    (or rows) in C order, shape (count,) + a.shape[mask.ndim:].

    A device mask runs a ballot/workgroup-scan compaction in three passes (count per tile, scan
    of the tile counts, scatter) and reads the count back: one host sync. A host mask needs no
    sync (its indices are found on the host and gathered)."""
    name = "compress_mask"
    half = isinstance(a, Array) and a.dtype == dtypes.float16
    if not half:
        a = _check_array(a, name)
    m = _mask_operand(mask, name)
    mshape = tuple(m.shape)
    if not mshape:
        raise IndexError(f"{name}: 0-d boolean masks are not supported")
    if len(mshape) > a.ndim:
        raise IndexError(f"{name}: too many indices: a mask of {len(mshape)} dimensions for an "
                         f"array of {a.ndim}")
    for d, (e, me) in enumerate(zip(a.shape, mshape)):
        if e != me:
            raise IndexError(f"{name}: boolean index did not match indexed array along axis {d}; "
                             f"size of axis is {e} but size of corresponding boolean axis is {me}")
    if half:  # the kernels move 32-bit words: select the halves' bit patterns, one per word
        return from_half_bits(compress_mask(half_bits(a), m))
    inner = a.shape[len(mshape):]
    rows = a.reshape((math.prod(mshape),) + inner)
    if isinstance(m, np.ndarray):
        return take(rows, np.flatnonzero(m), axis=0)
    if not inner:
        return _compact(m.reshape(-1), "VALUES", a.dtype, values=a)
    return take(rows, _compact(m.reshape(-1), "INDEX", dtypes.int32), axis=0)


def _host_or_device(a, name: str):
    if isinstance(a, Array):
        return a
    if isinstance(a, (np.ndarray, list, tuple, numbers.Number, np.generic)):
        host = np.asarray(a)
        dtypes.from_host(host.dtype)  # TypeError for what no vk.Array could hold
        return host
    raise TypeError(f"{name}: expected a vk.Array or an array-like, got {type(a).__name__}")


def _words(a: Array) -> Array:
    """a as the compaction reads it, one element per 32-bit word: float16 (two per word) is
    compared as a float32 copy (exact; -0.0 stays unselected, NaN selected)."""
    return a.astype(dtypes.float32) if a.dtype == dtypes.float16 else a


def flatnonzero(a) -> Array:
    """numpy.flatnonzero, as int32. A device array costs one host sync (the count)."""
    a = _host_or_device(a, "flatnonzero")
    if isinstance(a, np.ndarray):
        return asarray(np.flatnonzero(a).astype(np.int32))
    return _compact(_words(a).reshape(-1), "INDEX", dtypes.int32)


def nonzero(a) -> tuple:
    """numpy.nonzero: one int32 array of coordinates per dimension. A device array costs one host
    sync (the count); the coordinates are written by the compaction directly."""
    name = "nonzero"
    a = _host_or_device(a, name)
    if a.ndim == 0:
        raise ValueError(f"{name}: calling nonzero on 0d arrays is not allowed; use atleast_1d")
    if isinstance(a, np.ndarray):
        return tuple(asarray(c.astype(np.int32)) for c in np.nonzero(a))
    if a.ndim + 6 > _MAX_PUSH_WORDS:
        raise ValueError(f"{name}: at most {_MAX_PUSH_WORDS - 6} dimensions, got {a.ndim}")
    coords = _compact(_words(a), "COORDS", dtypes.int32, planes=a.ndim)
    return tuple(coords[d] for d in range(a.ndim))  # row d: the coordinates along dim d


# -- getitem ---------------------------------------------------------------------------------

def _key_kind(k) -> str:
    """'none', 'ellipsis', 'int', 'slice', 'mask' (bool array) or 'index' (integer array)."""
    if k is None:
        return "none"
    if k is Ellipsis:
        return "ellipsis"
    if isinstance(k, (bool, np.bool_)):
        raise IndexError("getitem: boolean scalar indices are not supported")
    if isinstance(k, (numbers.Integral, np.integer)):
        return "int"
    if isinstance(k, slice):
        return "slice"
    if isinstance(k, Array):
        if k.dtype == dtypes.bool_:
            return "mask"
        if k.dtype in (dtypes.int32, dtypes.uint32):
            return "index"
        raise IndexError(f"getitem: arrays used as indices must be of integer or boolean type, got {k.dtype}")
    if isinstance(k, (np.ndarray, list, tuple)):
        host = np.asarray(k)
        if host.dtype == np.bool_:
            return "mask"
        if host.dtype.kind in "iu" or host.size == 0:
            return "index"
        raise IndexError(f"getitem: arrays used as indices must be of integer or boolean type, got {host.dtype}")
    raise IndexError(f"getitem: only integers, slices (`:`), ellipsis (`...`), None and integer or "
                     f"boolean arrays are valid indices, got {type(k).__name__}")


def _expand_ellipsis(key: tuple, kinds: list, ndim: int, name: str) -> tuple:
    if kinds.count("ellipsis") > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    consumed = sum(k in ("int", "slice", "index") for k in kinds)
    if consumed > ndim:
        raise IndexError(f"{name}: too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    fill = ndim - consumed
    if "ellipsis" in kinds:
        e = kinds.index("ellipsis")
        key = key[:e] + (slice(None),) * fill + key[e + 1:]
        kinds = kinds[:e] + ["slice"] * fill + kinds[e + 1:]
    else:
        key, kinds = key + (slice(None),) * fill, kinds + ["slice"] * fill
    return key, kinds


@dataclass
class _BasicView:
    """The strided view that the basic part of a key (ints, slices, None) selects; an integer
    array's dim is kept whole and noted."""
    shape: list
    strides: list
    offset: int
    index_at: int = -1          # position of the index array's dims in `shape`
    index_dim: int = -1         # the dim of `a` it indexes
    advanced: tuple = ()        # key positions of the advanced indices (ints and the array)


def _basic_view(a: Array, key: tuple, kinds: list, name: str) -> _BasicView:
    strides = _contiguous_strides(a.shape)
    view = _BasicView([], [], a.offset)
    d, advanced = 0, []
    for pos, (k, kind) in enumerate(zip(key, kinds)):
        if kind == "none":
            view.shape.append(1)
            view.strides.append(0)
            continue
        n = a.shape[d]
        if kind == "int":
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"{name}: index {i} is out of bounds for axis {d} with size {n}")
            view.offset += (i % n) * strides[d]
            advanced.append(pos)
        elif kind == "slice":
            start, stop, step = k.indices(n)
            view.shape.append(len(range(start, stop, step)))
            view.strides.append(step * strides[d])
            view.offset += start * strides[d] if view.shape[-1] else 0
        else:  # the index array: its dims go here (or first: see getitem)
            view.index_at, view.index_dim = len(view.shape), d
            advanced.append(pos)
        d += 1
    view.advanced = tuple(advanced)
    return view


def _as_view(a: Array, shape, strides, offset: int):
    """A view sharing a's storage when the strided view is C-contiguous, else None."""
    cshape, (cstrides,) = _collapse(tuple(shape), [list(strides)])
    if not cshape or cstrides == [1]:
        return Array(a._storage, tuple(shape), a.dtype, offset)
    return None


def getitem(a, key):
    """a[key] with numpy's semantics for what Array.__getitem__ leaves out: stepped and negative
    slices, Ellipsis, None, slices before other indices, one integer index array on any axis
    (numpy/list: range-checked; int32/uint32 vk.Array: see the module doc), and a boolean mask
    on the leading dims (followed only by `:` / `...`; see compress_mask: one host sync for a
    device mask). Results are views where the selection is contiguous, copies otherwise
    (numpy's basic indexing always gives views)."""
    name = "getitem"
    if not isinstance(a, Array):
        _check_array(a, name)  # TypeError naming what a is
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_key_kind(k) for k in key]
    if "mask" not in kinds:
        dtypes.computable(a.dtype, name)
    else:  # compress_mask takes float16
        rest_ok = all(kd == "ellipsis" or (kd == "slice" and k == slice(None))
                      for k, kd in zip(key[1:], kinds[1:]))
        if kinds[0] != "mask" or not rest_ok:
            raise IndexError(f"{name}: a boolean mask must be the first index, followed only by ':' or '...'")
        return compress_mask(a, key[0])
    if kinds.count("index") > 1:
        raise IndexError(f"{name}: at most one integer array index is supported")
    key, kinds = _expand_ellipsis(key, kinds, a.ndim, name)
    view = _basic_view(a, key, kinds, name)
    if view.index_at < 0:
        if not math.prod(view.shape):
            return Array.empty(tuple(view.shape), a.dtype)
        shared = _as_view(a, view.shape, view.strides, view.offset)
        if shared is not None:
            return shared
        return _strided_copy(a, tuple(view.shape), view.strides, view.offset, name)
    return _getitem_indexed(a, key[kinds.index("index")], view, name)


def _getitem_indexed(a: Array, index_key, view: _BasicView, name: str) -> Array:
    """The basic view gathered along one dim by an integer array. The array's dims replace that
    dim; numpy puts them first instead when the advanced indices (ints count) are not adjacent."""
    n, axis_stride = a.shape[view.index_dim], _contiguous_strides(a.shape)[view.index_dim]
    idx = _index(index_key, n, name, axis=view.index_dim)
    at = view.index_at
    if view.advanced != tuple(range(view.advanced[0], view.advanced[0] + len(view.advanced))):
        at = 0
    k = len(idx.shape)
    shape = view.shape[:at] + list(idx.shape) + view.shape[at:]
    base = view.strides[:at] + [0] * k + view.strides[at:]
    idx_strides = [0] * at + _contiguous_strides(idx.shape) + [0] * (len(view.shape) - at)
    return _gather(a, view.offset, shape, base, idx, idx_strides, n, axis_stride, name)
