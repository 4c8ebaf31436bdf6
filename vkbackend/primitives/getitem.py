"""a[key] for what Array.__getitem__ leaves out (it keeps ints and unit-step slices on leading
axes, the hot path): stepped and negative slices, Ellipsis, None, one integer index array on any
axis, a boolean mask on the leading dims. Results are views where the selection is contiguous,
copies otherwise (numpy's basic indexing always gives views).
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..array import Array
from .compaction import compress_mask
from .elementwise import collapse_dims
from .indexing import gather, index_operand
from .layout import copy_view
from .operands import contiguous_strides, operand


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
    strides = contiguous_strides(a.shape)
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
    cshape, (cstrides,) = collapse_dims(tuple(shape), [list(strides)])
    if not cshape or cstrides == [1]:
        return Array(a._storage, tuple(shape), a.dtype, offset)
    return None


def getitem(a, key, *, check_indices=None):
    """a[key] with numpy's semantics for what Array.__getitem__ leaves out: stepped and negative
    slices, Ellipsis, None, slices before other indices, one integer index array on any axis
    (numpy/list: range-checked; int32/uint32 vk.Array: out of range clamped, or the checked mode
    of index_check.py: check_indices, None = VKBACKEND_CHECK_INDICES), and a boolean mask on the
    leading dims (followed only by `:` / `...`; see compress_mask: one host sync for a device
    mask)."""
    name = "getitem"
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_key_kind(k) for k in key] if isinstance(a, Array) else []
    a = operand(a, name, half="mask" in kinds)  # compress_mask takes float16
    if "mask" in kinds:
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
        return copy_view(a, tuple(view.shape), view.strides, view.offset, name)
    return _getitem_indexed(a, key[kinds.index("index")], view, name, check_indices)


def _getitem_indexed(a: Array, index_key, view: _BasicView, name: str, check_indices) -> Array:
    """The basic view gathered along one dim by an integer array. The array's dims replace that
    dim; numpy puts them first instead when the advanced indices (ints count) are not adjacent."""
    n, axis_stride = a.shape[view.index_dim], contiguous_strides(a.shape)[view.index_dim]
    idx = index_operand(index_key, n, name, axis=view.index_dim, check_indices=check_indices)
    at = view.index_at
    if view.advanced != tuple(range(view.advanced[0], view.advanced[0] + len(view.advanced))):
        at = 0
    k = len(idx.shape)
    shape = view.shape[:at] + list(idx.shape) + view.shape[at:]
    base = view.strides[:at] + [0] * k + view.strides[at:]
    idx_strides = [0] * at + contiguous_strides(idx.shape) + [0] * (len(view.shape) - at)
    return gather(a, view.offset, shape, base, idx, idx_strides, axis_stride)
