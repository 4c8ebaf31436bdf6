"""a[key] for what Array.__getitem__ leaves out (it keeps ints and unit-step slices on leading
axes, the hot path): stepped and negative slices, Ellipsis, None, integer index arrays on any
axes (one, or several that broadcast together), a boolean mask on the leading dims. Results are
views where the selection is contiguous, copies otherwise (numpy's basic indexing always gives
views).

Several integer arrays are gathered as one over the dims they index: each array's element
offsets in `a` (its indices normalized and range-checked on their own axis, then times that
axis's stride) are summed over the arrays' broadcast shape, and one gather with axis stride 1
reads them. setitem.py scatters over the same selection (advanced_selection).
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import dtypes
from ..array import Array
from .compaction import compress_mask
from .creation import arange, check_fits
from .elementwise import add, greater_equal, less, logical_and, where
from .indexing import Index, Walk, gather, index_operand
from .layout import copy_view
from .operands import collapse_dims, contiguous_strides, operand

_INT32_MAX = 2**31 - 1


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
    """(key, kinds) with the ':'s an Ellipsis stands for written out before it, and ':'s for the
    trailing dims. The Ellipsis stays (_basic_view skips it): numpy places integer arrays on its
    two sides apart, even where it stands for no dims."""
    if kinds.count("ellipsis") > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    consumed = sum(k in ("int", "slice", "index") for k in kinds)
    if consumed > ndim:
        raise IndexError(f"{name}: too many indices for array: array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    fill = ndim - consumed
    if "ellipsis" in kinds:
        e = kinds.index("ellipsis")
        key = key[:e] + (slice(None),) * fill + key[e:]
        kinds = kinds[:e] + ["slice"] * fill + kinds[e:]
    else:
        key, kinds = key + (slice(None),) * fill, kinds + ["slice"] * fill
    return key, kinds


@dataclass
class _BasicView:
    """The strided view that the basic part of a key (ints, slices, None) selects; the dims the
    integer arrays index are left out and noted."""
    shape: list
    strides: list
    offset: int
    index_at: int = -1          # position in `shape` of the first index array (where their dims go)
    index_dims: tuple = ()      # the dims of `a` the index arrays index, in key order
    advanced: tuple = ()        # key positions of the advanced indices (ints and the arrays)

    @property
    def placed_at(self) -> int:
        """Where the index arrays' broadcast dims go: in place of the advanced indices (ints
        count) when these are adjacent in the key, else first (numpy's rule)."""
        first = self.advanced[0]
        return self.index_at if self.advanced == tuple(range(first, first + len(self.advanced))) else 0


def _basic_view(a: Array, key: tuple, kinds: list, name: str) -> _BasicView:
    strides = contiguous_strides(a.shape)
    view = _BasicView([], [], a.offset)
    d, advanced, dims = 0, [], []
    for pos, (k, kind) in enumerate(zip(key, kinds)):
        if kind == "ellipsis":  # expanded (_expand_ellipsis)
            continue
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
        else:  # an index array: the arrays' dims go at the first one (or first: placed_at)
            if not dims:
                view.index_at = len(view.shape)
            dims.append(d)
            advanced.append(pos)
        d += 1
    view.advanced, view.index_dims = tuple(advanced), tuple(dims)
    return view


def _as_view(a: Array, shape, strides, offset: int):
    """A view sharing a's storage when the strided view is C-contiguous, else None."""
    cshape, (cstrides,) = collapse_dims(tuple(shape), [list(strides)])
    if not cshape or cstrides == [1]:
        return Array(a._storage, tuple(shape), a.dtype, offset)
    return None


def getitem(a, key, *, check_indices=None):
    """a[key] with numpy's semantics for what Array.__getitem__ leaves out: stepped and negative
    slices, Ellipsis, None, slices before other indices, integer index arrays on any axes (one,
    or several that broadcast together, with ints, slices, None and '...' between; numpy/list:
    range-checked; int32/uint32 vk.Array: out of range clamped, or the checked mode of
    index_check.py: check_indices, None = VKBACKEND_CHECK_INDICES), and a boolean mask on the
    leading dims (followed only by `:` / `...`; see compress_mask: one host sync for a device
    mask)."""
    name = "getitem"
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_key_kind(k) for k in key] if isinstance(a, Array) else []
    # compress_mask moves float16 on any device; the gathers and copies as 16-bit words
    a = operand(a, name, half=True if "mask" in kinds else "words", wide=True)
    if "mask" in kinds:
        if "index" in kinds:
            raise IndexError(f"{name}: a boolean mask together with integer array indices is not supported; "
                             "supported: integer arrays (with ints, slices, None, '...'), or one boolean "
                             "mask first followed only by ':' or '...' (convert the mask with nonzero())")
        rest_ok = all(kd == "ellipsis" or (kd == "slice" and k == slice(None))
                      for k, kd in zip(key[1:], kinds[1:]))
        if kinds[0] != "mask" or not rest_ok:
            raise IndexError(f"{name}: a boolean mask must be the first index, followed only by ':' or '...'")
        return compress_mask(a, key[0])
    key, kinds = _expand_ellipsis(key, kinds, a.ndim, name)
    if "index" not in kinds:
        view = _basic_view(a, key, kinds, name)
        if not math.prod(view.shape):
            return Array.empty(tuple(view.shape), a.dtype)
        shared = _as_view(a, view.shape, view.strides, view.offset)
        if shared is not None:
            return shared
        return copy_view(a, tuple(view.shape), view.strides, view.offset, name)
    sel = advanced_selection(a, key, kinds, name, check_indices)
    return gather(a, sel.base.offset, sel.shape, sel.base.strides, sel.index(), sel.index_strides, sel.axis_stride)


@dataclass
class Selection:
    """What an integer-array key selects, checked: element c of `shape` is a[base(c) + index(c)
    * axis_stride], the index operand (index()) walked with index_strides."""
    shape: tuple
    base: Walk
    index_strides: list
    axis_stride: int
    index: Callable[[], Index]  # records the work that merges several arrays (after every check)


def advanced_selection(a: Array, key: tuple, kinds: list, name: str, check_indices,
                       scatter: bool = False) -> Selection:
    """The selection of a key with integer arrays (Ellipsis expanded; no mask): the basic view
    with the arrays' broadcast dims placed as numpy places them. One array indexes its own axis;
    several are merged (_merged_index). scatter: out-of-range device indices are to be dropped
    rather than clamped (setitem). Raises before any GPU work (index() records it)."""
    view = _basic_view(a, key, kinds, name)
    keys = [k for k, kd in zip(key, kinds) if kd == "index"]
    strides = contiguous_strides(a.shape)
    if len(keys) == 1:
        d = view.index_dims[0]
        idx = index_operand(keys[0], a.shape[d], name, axis=d, check_indices=check_indices)
        ishape, axis_stride, index = tuple(idx.shape), strides[d], lambda: idx
    else:
        ishape = _broadcast_index_shapes(keys, name)
        work = math.prod(view.shape) * math.prod(ishape) > 0
        index = _merged_index(a, keys, view.index_dims, ishape, work, name, check_indices, scatter)
        axis_stride = 1
    at, k = view.placed_at, len(ishape)
    shape = tuple(view.shape[:at]) + ishape + tuple(view.shape[at:])
    base = Walk(view.offset, view.strides[:at] + [0] * k + view.strides[at:])
    index_strides = [0] * at + contiguous_strides(ishape) + [0] * (len(view.shape) - at)
    return Selection(shape, base, index_strides, axis_stride, index)


def _index_shape(k) -> tuple:
    return tuple(k.shape) if isinstance(k, Array) else np.shape(k)


def _broadcast_index_shapes(keys, name: str) -> tuple:
    shapes = [_index_shape(k) for k in keys]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:  # numpy's type and words
        raise IndexError(f"{name}: shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(s) for s in shapes)}") from None


def _merged_index(a: Array, keys, dims, shape: tuple, work: bool, name: str, check_indices,
                  scatter: bool) -> Callable[[], Index]:
    """Several index arrays (for dims `dims` of `a`), checked, and what makes them one index of
    `shape` (their broadcast shape) into the merged dims with axis stride 1: the sum of each
    array's element offsets index * stride(dim). Host arrays are checked and summed on the host;
    a device array's offsets are a gather of its indices from arange(0, n * stride, stride) by
    the indexed kernel, which normalizes them as for one array (negatives from the end, out of
    range clamped, or reported in the checked mode); scatter: an index out of range makes the
    offset past the end instead, so that the scatter drops it. Nothing is checked when `shape` is
    empty (numpy checks nothing then); nothing is recorded when the selection is empty (work)."""
    strides = contiguous_strides(a.shape)
    span = 1 + sum((a.shape[d] - 1) * strides[d] for d in dims)  # the merged dims' extent
    if not (math.prod(shape) and work):
        if math.prod(shape):
            for k, d in zip(keys, dims):
                index_operand(k, a.shape[d], name, axis=d, check_indices=check_indices)
        return lambda: Index(shape, span, 0, name, host=np.zeros(shape, np.int32))  # read by nothing
    if span > _INT32_MAX:
        raise ValueError(f"{name}: several index arrays into dims {tuple(dims)} of an array of shape {a.shape}: "
                         f"their merged offsets (up to {span - 1}) do not fit int32; index one dim at a time")
    ops = [index_operand(k, a.shape[d], name, axis=d, check_indices=check_indices) for k, d in zip(keys, dims)]
    check_fits(math.prod(shape), name, f"the {math.prod(shape)} merged indices (shape {shape}) as int32")
    host = [op.host.astype(np.int64) * strides[op.axis] for op in ops if op.host is not None]
    host_sum = sum(host[1:], host[0]) if host else None
    device = [op for op in ops if op.array is not None]
    if not device:
        flat = np.ascontiguousarray(np.broadcast_to(host_sum, shape), np.int32)
        return lambda: Index(shape, span, 0, name, host=flat)

    def merge() -> Index:
        flat, valid = None, None
        for op in device:
            part = _device_offsets(op, strides[op.axis])
            flat = part if flat is None else add(flat, part)
            if scatter:
                ok = _in_range(op.array, op.axis_len)
                valid = ok if valid is None else logical_and(valid, ok)
        if host_sum is not None:
            flat = add(flat, host_sum.astype(np.int32))
        if scatter:  # past the end: the scatter drops it
            flat = where(valid, flat, span)
        return Index(shape, span, 0, name, array=flat)
    return merge


def _device_offsets(op: Index, stride: int) -> Array:
    """A device index array's element offsets along its dim, index * stride: gathered from a
    table of the offsets by the indexed kernel, which normalizes the index as for one array."""
    table = arange(0, op.axis_len * stride, stride, dtype=dtypes.int32)
    ishape = tuple(op.shape)
    return gather(table, table.offset, ishape, [0] * len(ishape), op, contiguous_strides(ishape), 1)


def _in_range(raw: Array, n: int) -> Array:
    """Where device indices are valid for an axis of n (negatives from the end)."""
    return less(raw, n) if raw.dtype == dtypes.uint32 else logical_and(greater_equal(raw, -n), less(raw, n))
