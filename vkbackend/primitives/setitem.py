"""a[key] = value and the in-place operators (a += b, ...): writes into a's own buffer, so every
view of it sees them.

Basic keys (integers, slices of any step, Ellipsis, None) select a strided view of a's buffer,
as getitem.py selects it; the value is written there by one strided copy
(primitives/copy.comp: a broadcast array value walks with zero strides and is converted to a's
dtype on the way; a scalar is a one-element array, or a plain fill where the view is contiguous).
A value that shares a's buffer is copied first (a[1:] = a[:-1] reads what it overwrites).
Advanced keys: a boolean mask first (then only ':' / '...') with a value that broadcasts to a's
trailing dims (a where() over a, copied back); one integer array with only ':' / '...' around it
(put_along_axis: duplicates, the last wins). Values with one element per True of a mask, and
other mixes of integer arrays, raise IndexError.

In-place operators compute the out-of-place result and copy it into a's buffer (one extra copy;
the elementwise kernels write only fresh arrays). As numpy, the result must keep a's shape and
cast to a's dtype under 'same_kind' (int32 += float32 raises TypeError): both checked before any
GPU work.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..array import Array
from .creation import _bits, _fill, asarray
from .elementwise import astype, where
from .getitem import _basic_view, _expand_ellipsis, _key_kind
from .layout import launch_copy, plan_copy
from .operands import HOST_DATA, collapsed, contiguous_strides
from .scatter import put_along_axis

_SCALARS = (numbers.Number, np.generic)


def _value_operand(value, dtype: np.dtype, name: str):
    """A checked value for an assignment into `dtype`: a numpy 0-d array of dtype (a scalar, cast
    as numpy's assignment casts it: OverflowError for an int that does not fit), a vk.Array, or a
    host array cast to dtype (numpy's unsafe cast of arrays)."""
    if isinstance(value, Array):
        dtypes.computable(value.dtype, name)
        return value
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        raise TypeError(f"{name}: cannot assign a complex value to an array of {dtype}")
    if isinstance(value, (*_SCALARS, str, bytes)):
        host = np.empty((), dtypes.STORAGE[dtype] if dtype != dtypes.bool_ else np.bool_)
        try:
            host[()] = value  # a string is parsed as numpy parses it ('1.5' is 1.5)
        except ValueError as e:  # numpy's type: could not convert string to float: 'abc'
            raise ValueError(f"{name}: {e}") from None
        return host
    if isinstance(value, HOST_DATA):
        host = np.asarray(value)
        if host.dtype.kind not in "biufUS":
            raise TypeError(f"{name}: cannot assign values of dtype {host.dtype}: expected bool, integer or float")
        if host.dtype.kind in "US":  # parsed as numpy's assignment parses strings (ValueError for junk)
            try:
                return host.astype(np.bool_ if dtype == dtypes.bool_ else dtypes.STORAGE[dtype])
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        with np.errstate(invalid="ignore", over="ignore"):
            return host.astype(np.bool_ if dtype == dtypes.bool_ else dtypes.STORAGE[dtype])
    raise TypeError(f"{name}: the value must be a vk.Array, an array-like or a number, got {type(value).__name__}")


def _broadcast_walk(vshape: tuple, shape: tuple, name: str) -> list:
    """Strides of a C-contiguous value of vshape read over `shape` (numpy's assignment rule: the
    value broadcasts to the target; extra leading axes of length 1 are allowed)."""
    vshape = tuple(vshape)
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    pad = len(shape) - len(vshape)
    if pad < 0 or any(v != t and v != 1 for v, t in zip(vshape, shape[pad:])):
        raise ValueError(f"{name}: could not broadcast a value of shape {vshape} into the selection "
                         f"of shape {tuple(shape)}")
    own = contiguous_strides(vshape)
    return [0] * pad + [0 if v == 1 else st for v, st in zip(vshape, own)]


def setitem(a: Array, key, value) -> None:
    """a[key] = value (see the module's docstring), recorded into a's buffer."""
    name = "setitem"
    if a.dtype == dtypes.float16:
        raise TypeError(f"{name}: assigning into float16 arrays is not supported ({dtypes.HALF_USES}); "
                        "assign into a float32 array and cast with .astype(np.float16)")
    dtypes.computable(a.dtype, name)
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_key_kind(k) for k in key]
    if "mask" in kinds:
        return _set_masked(a, key, kinds, value, name)
    if "index" in kinds:
        return _set_indexed(a, key, kinds, value, name)
    key, kinds = _expand_ellipsis(key, kinds, a.ndim, name)
    view = _basic_view(a, key, kinds, name)
    shape = tuple(view.shape)
    val = _value_operand(value, a.dtype, name)
    src_strides = _broadcast_walk(val.shape, shape, name)
    if not math.prod(shape):
        return None
    if isinstance(val, np.ndarray) and val.ndim == 0:
        cshape, (cdst,) = collapsed(shape, [view.strides])
        if len(cshape) == 1 and cdst == [1]:  # contiguous: a plain fill of a's words
            _fill(a.buffer, view.offset, math.prod(shape), "uint", _bits(val, a.dtype))
            return None
    src_dtype = val.dtype if isinstance(val, Array) else a.dtype
    # copy.comp converts as GLSL does (T_DST(src)); into bool that is x != 0 instead (uint(0.5) is 0)
    convert = a.dtype == dtypes.bool_ and src_dtype != dtypes.bool_
    src_off = val.offset if isinstance(val, Array) and not convert else 0
    plan = plan_copy(shape, view.offset, view.strides, src_off, src_strides, a.dtype,
                     a.dtype if convert else src_dtype, name)
    if isinstance(val, Array):
        if convert:
            val = astype(val, a.dtype)
        elif val._storage is a._storage:
            val = val.copy()  # it overlaps what is written: read it from a copy (at offset 0)
            plan = plan_copy(shape, view.offset, view.strides, 0, src_strides, a.dtype, src_dtype, name)
    else:
        val = asarray(val, a.dtype)
    launch_copy(plan, a.buffer, val.buffer)
    return None


def _trailing_full(key, kinds, start: int) -> bool:
    """Whether key[start:] is only ':' and '...'."""
    return all(kd == "ellipsis" or (kd == "slice" and k == slice(None))
               for k, kd in zip(key[start:], kinds[start:]))


def _set_masked(a: Array, key, kinds, value, name: str) -> None:
    if kinds[0] != "mask" or not _trailing_full(key, kinds, 1):
        raise IndexError(f"{name}: a boolean mask must be the first index, followed only by ':' or '...'")
    mask = key[0]
    mshape = tuple(mask.shape) if isinstance(mask, Array) else np.shape(mask)
    if mshape != a.shape[:len(mshape)]:
        raise IndexError(f"{name}: a boolean mask of shape {mshape} does not match the leading dims of "
                         f"an array of shape {a.shape}")
    rest = a.shape[len(mshape):]
    val = _value_operand(value, a.dtype, name)
    vshape = tuple(val.shape)
    while vshape and vshape[0] == 1 and len(vshape) > len(rest):
        vshape = vshape[1:]
    if len(vshape) > len(rest):
        raise IndexError(f"{name}: a value of shape {tuple(val.shape)} for a boolean mask: only values that "
                         f"broadcast to the trailing dims {rest} are supported (one value per True element "
                         "is not); use vk.where(mask, values, a)")
    _broadcast_walk(vshape, rest, name)
    if not a.size:
        return None
    m = mask if isinstance(mask, Array) else asarray(np.asarray(mask))
    m = m.reshape(mshape + (1,) * len(rest))
    if isinstance(val, Array):
        v = val.reshape(vshape) if val.dtype == a.dtype else astype(val.reshape(vshape), a.dtype)
    else:
        v = val.reshape(()) if val.ndim == 0 else asarray(val.reshape(vshape), a.dtype)
        if isinstance(v, np.ndarray):
            v = v[()]  # a numpy scalar of a's dtype: where keeps a's dtype
    _write_back(a, where(m, v, a), name)
    return None


def _set_indexed(a: Array, key, kinds, value, name: str) -> None:
    """One integer array, everything else ':' or '...': put_along_axis on the flattened index."""
    if kinds.count("index") != 1 or any(kd not in ("index", "slice", "ellipsis") for kd in kinds):
        raise IndexError(f"{name}: an integer array index can only be combined with ':' and '...'")
    pos = kinds.index("index")
    if not (_trailing_full(key[:pos], kinds[:pos], 0) and _trailing_full(key, kinds, pos + 1)):
        raise IndexError(f"{name}: an integer array index can only be combined with ':' and '...'")
    key, kinds = _expand_ellipsis(key, kinds, a.ndim, name)
    axis = kinds.index("index")
    idx = key[axis]
    ishape = tuple(idx.shape) if isinstance(idx, Array) else np.shape(idx)
    k = math.prod(ishape)
    target = a.shape[:axis] + ishape + a.shape[axis + 1:]
    if not isinstance(idx, Array):
        host = np.asarray(idx)
        n = a.shape[axis]
        if host.size and (host.min() < -n or host.max() >= n):
            bad = host.min() if host.min() < -n else host.max()
            raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with size {n}")
    val = _value_operand(value, a.dtype, name)
    _broadcast_walk(val.shape, target, name)
    flat_idx = idx.reshape(-1) if isinstance(idx, Array) else np.asarray(idx).reshape(-1)
    flat_idx = flat_idx.reshape((1,) * axis + (k,) + (1,) * (a.ndim - axis - 1))
    flat_target = a.shape[:axis] + (k,) + a.shape[axis + 1:]
    if isinstance(val, np.ndarray) and val.ndim == 0:
        values = val[()]
    else:
        from .manipulation import broadcast_to
        v = val if isinstance(val, Array) else asarray(val, a.dtype)
        values = broadcast_to(v, target).reshape(flat_target)
    put_along_axis(a, flat_idx, values, axis)
    return None


def _write_back(a: Array, result: Array, name: str) -> None:
    """Copy `result` (a's shape, a fresh array) into a's own elements."""
    if not a.size:
        return None
    strides = contiguous_strides(a.shape)
    plan = plan_copy(a.shape, a.offset, strides, result.offset, strides, a.dtype, result.dtype, name)
    launch_copy(plan, a.buffer, result.buffer)
    return None


# -- in-place operators ----------------------------------------------------------------------

def inplace(a: Array, op: str, fn, other, symbol: str):
    """a <op>= other: vkbackend's `op` (the function fn) out of place, then its result copied
    into a's buffer. Returns a (Python binds the name to it again)."""
    name = f"{symbol}="
    if not isinstance(other, (Array,) + HOST_DATA):
        raise TypeError(f"{name}: unsupported operand type {type(other).__name__}")
    if a.dtype == dtypes.float16:
        dtypes.computable(a.dtype, name)
    oshape = tuple(other.shape) if isinstance(other, Array) else np.shape(other)
    if op == "matmul":  # a @ b keeps a's shape where b is square (n x n) and adds no batch dims
        ok = a.ndim >= 1 and len(oshape) >= 2 and oshape[-2:] == (a.shape[-1],) * 2
        if ok and len(oshape) > 2:
            try:
                ok = a.ndim >= 2 and np.broadcast_shapes(a.shape[:-2], oshape[:-2]) == a.shape[:-2]
            except ValueError:
                ok = False
        if not ok:
            raise ValueError(f"{name}: a {a.shape} @ {oshape} result would not keep the shape {a.shape} of the "
                             "left operand")
    else:
        try:
            shape = np.broadcast_shapes(a.shape, oshape)
        except ValueError:
            shape = None
        if shape != a.shape:
            raise ValueError(f"{name}: an operand of shape {oshape} does not broadcast to the shape {a.shape} "
                             "of the array updated in place")
    expected = _result_dtype(a, other, op, name)
    if expected is not None and not np.can_cast(expected, a.dtype, "same_kind"):
        raise TypeError(f"{name}: the result dtype {expected} of {op} cannot be cast to {a.dtype} in place "
                        "(numpy's 'same_kind' rule)")
    result = fn(a, other)
    if result.shape != a.shape or not np.can_cast(result.dtype, a.dtype, "same_kind"):
        raise TypeError(f"{name}: {op} gave {result.dtype} {result.shape}, which cannot be written into "
                        f"{a.dtype} {a.shape} in place")
    _write_back(a, result if result.dtype == a.dtype else astype(result, a.dtype), name)
    return a


def _result_dtype(a: Array, other, op: str, name: str):
    """The dtype `op` gives, where it is the promoted one (None where the op has its own rule)."""
    from ..array_api import result_type
    if op in ("divide", "true_divide"):
        return dtypes.float32
    if op in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        return None
    if isinstance(other, (np.ndarray, list, tuple)):
        other = np.asarray(other)
        other = np.dtype(dtypes.from_host(other.dtype))
    elif isinstance(other, Array):
        other = other.dtype
    return result_type(a, other)
