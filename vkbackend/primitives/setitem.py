"""a[key] = value and the in-place operators (a += b, ...): writes into a's own buffer, so every
view of it sees them.

Basic keys (integers, slices of any step, Ellipsis, None) select a strided view of a's buffer,
as getitem.py selects it; the value is written there by one strided copy
(primitives/copy.comp: a broadcast array value walks with zero strides and is converted to a's
dtype on the way; a scalar is a one-element array, or a plain fill where the view is contiguous).
A value that shares a's buffer is copied first (a[1:] = a[:-1] reads what it overwrites).
Advanced keys: a boolean mask first (then only ':' / '...') with a value that broadcasts to a's
trailing dims (a where() over a, copied back); integer arrays, one or several that broadcast
together, with ints, slices, None and '...' around them (a scatter over the selection getitem
gathers: duplicates, the last wins). Values with one element per True of a mask, and masks mixed
with integer arrays, raise IndexError.

The 8/16/64-bit dtypes are written as bits in their own width (moves.py), values of another
dtype converted by astype first (numpy's conversion); a mask picks 64-bit elements as pairs of
words.

Destinations and values larger than a shader may bind (past maxStorageBufferRange) are written
in windows (windows.py): views by the indexed kernel's strided scatter (scatter.py,
plan_in_windows), plain fills chunk by chunk, masks by where() and a windowed copy back (a mask
or value that broadcasts is expanded to a's shape first), integer arrays as put_along_axis.

In-place operators compute the out-of-place result and copy it into a's buffer (one extra copy;
the elementwise kernels write only fresh arrays). As numpy, the result must keep a's shape and
cast to a's dtype under 'same_kind' (int32 += float32 raises TypeError): both checked before any
GPU work.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from . import windows
from .creation import _bits, _fill, asarray
from .elementwise import astype, broadcast_strides, copy_into, where
from .getitem import _basic_view, _expand_ellipsis, _key_kind, advanced_selection
from .indexing import Walk
from .launch import grid_groups
from .layout import copy_view, launch_copy, plan_copy
from .moves import check_windowed, from_pairs, nbytes, pairs, per_word
from .operands import HOST_DATA, WG, collapsed, contiguous_strides
from .scatter import _assign, _Values, launch_in_windows, plan_in_windows

_SCALARS = (numbers.Number, np.generic)


def _value_operand(value, dtype: np.dtype, name: str):
    """A checked value for an assignment into `dtype`: a numpy 0-d array of dtype (a scalar, cast
    as numpy's assignment casts it: OverflowError for an int that does not fit), a vk.Array, or a
    host array cast to dtype (numpy's unsafe cast of arrays)."""
    if isinstance(value, Array):
        if not (dtypes.is_wide(value.dtype) or dtypes.is_half(value.dtype)):  # a half: cast by astype
            dtypes.computable(value.dtype, name)
        return value
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        raise TypeError(f"{name}: cannot assign a complex value to an array of {dtype}")
    if isinstance(value, (*_SCALARS, str, bytes)):
        host = np.empty((), dtypes.storage(dtype) if dtype != dtypes.bool_ else np.bool_)
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
                return host.astype(np.bool_ if dtype == dtypes.bool_ else dtypes.storage(dtype))
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        with np.errstate(invalid="ignore", over="ignore"):
            return host.astype(np.bool_ if dtype == dtypes.bool_ else dtypes.storage(dtype))
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
    if dtypes.is_half(a.dtype):  # moved as 16-bit words (moves.py) where the device has them
        dtypes.half_words(name, a.dtype)
    elif not dtypes.is_wide(a.dtype):  # the 8/16/64-bit dtypes move as bits (moves.py)
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
    if a.buffer.big or windows.is_big(nbytes(val.size, a.dtype)) or (isinstance(val, Array) and val.buffer.big):
        return _set_view_in_windows(a, view, shape, val, src_strides, name)
    if isinstance(val, np.ndarray) and val.ndim == 0 and (per_word(a.dtype) or a.dtype.itemsize == 8):
        cshape, (cdst,) = collapsed(shape, [view.strides])
        if len(cshape) == 1 and cdst == [1]:  # contiguous: a plain fill of a's words (or pairs)
            bits = _bits(val, a.dtype)
            if per_word(a.dtype):
                _fill(a.buffer, view.offset, math.prod(shape), "uint", bits)
            else:
                _fill(a.buffer, view.offset, math.prod(shape), "uvec2", bits & 0xFFFFFFFF, bits >> 32)
            return None
    src_dtype = val.dtype if isinstance(val, Array) else a.dtype
    # copy.comp converts as GLSL does (T_DST(src)); into bool that is x != 0 instead (uint(0.5) is 0);
    # it converts only between 32-bit dtypes: astype converts the others (numpy's conversion)
    convert = ((a.dtype == dtypes.bool_ and src_dtype != dtypes.bool_) or
               (src_dtype != a.dtype and not (per_word(a.dtype) and per_word(src_dtype))))
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


def _set_view_in_windows(a: Array, view, shape: tuple, val, src_strides, name: str) -> None:
    """The basic assignment where a or the value lies in a buffer larger than a shader may bind:
    a contiguous view filled chunk by chunk with a scalar, any other by the strided scatter in
    windows (the value converted to a's dtype, or copied where it shares a's buffer, first).
    Planned, and refused with ValueError, before any GPU work."""
    check_windowed(a.dtype, name)
    n = math.prod(shape)
    cshape, (cdst,) = collapsed(shape, [view.strides])
    if isinstance(val, np.ndarray) and val.ndim == 0 and len(cshape) == 1 and cdst == [1]:
        _fill_in_windows(a.buffer, view.offset, n, _bits(val, a.dtype))
        return None
    fresh = not isinstance(val, Array) or val.dtype != a.dtype or val._storage is a._storage
    d_off = 0 if fresh else val.offset
    d_big = windows.is_big(4 * val.size) if fresh else val.buffer.big
    passes, _ = plan_in_windows("SCATTER", shape, Walk(d_off, src_strides), Walk(0, [0] * len(shape)),
                                Walk(view.offset, list(view.strides)), 0, None, d_big, a.buffer.big, name)
    if not isinstance(val, Array):
        val = asarray(val, a.dtype)
    elif val.dtype != a.dtype:
        val = astype(val, a.dtype)  # into bool: x != 0, as numpy
    elif val._storage is a._storage:
        val = val.copy()  # it may overlap what is written: read it from a copy
    launch_in_windows(passes, None, val, a, None)
    return None


def _fill_in_windows(buffer, offset: int, n: int, word: int) -> None:
    """words [offset, offset + n) of a buffer = word, one window of it per dispatch."""
    step = windows.chunk_words()
    kernel = runtime.get().kernel("primitives/fill.comp", {"T": "uint"}, WG)
    for start in range(0, n, step):
        count = min(step, n - start)
        win, at = windows.bind(buffer, offset + start, count)
        kernel([buffer], (count, at, word, 0), (grid_groups(count, WG),), windows=[win])


def _trailing_full(key, kinds, start: int) -> bool:
    """Whether key[start:] is only ':' and '...'."""
    return all(kd == "ellipsis" or (kd == "slice" and k == slice(None))
               for k, kd in zip(key[start:], kinds[start:]))


def _set_masked(a: Array, key, kinds, value, name: str) -> None:
    if "index" in kinds:
        raise IndexError(f"{name}: a boolean mask together with integer array indices is not supported; "
                         "supported: integer arrays (with ints, slices, None, '...'), or one boolean mask "
                         "first followed only by ':' or '...' (convert the mask with nonzero())")
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
    big = a.buffer.big or windows.is_big(nbytes(a.size, a.dtype))
    if big:
        check_windowed(a.dtype, name)
    m = mask if isinstance(mask, Array) else asarray(np.asarray(mask))
    m = m.reshape(mshape + (1,) * len(rest))
    if isinstance(val, Array):
        v = val.reshape(vshape) if val.dtype == a.dtype else astype(val.reshape(vshape), a.dtype)
    else:
        v = val.reshape(()) if val.ndim == 0 else asarray(val.reshape(vshape), a.dtype)
        if isinstance(v, np.ndarray):
            v = v[()]  # a numpy scalar of a's dtype: where keeps a's dtype
    if big:  # where() in windows takes operands of a's size or one element: expand the others
        m, v = (_expanded(x, a.shape, name) for x in (m, v))
    if a.dtype.itemsize == 8:  # picked as pairs of words: bits kept, no 64-bit arithmetic
        v = v if isinstance(v, Array) else asarray(np.asarray(v, a.dtype), a.dtype)
        _write_back(a, from_pairs(where(m.reshape(m.shape + (1,)), pairs(v), pairs(a)), a.dtype), name)
        return None
    _write_back(a, where(m, v, a), name)
    return None


def _expanded(x, shape: tuple, name: str):
    """x (a vk.Array, or a scalar kept as it is) broadcast to `shape` by a copy, unless it has one
    element or already that many."""
    if not isinstance(x, Array) or x.size in (1, math.prod(shape)):
        return x
    return copy_view(x, shape, broadcast_strides(x.shape, shape), x.offset, name)


def _set_indexed(a: Array, key, kinds, value, name: str) -> None:
    """Integer arrays (one, or several that broadcast together; ints, slices, None and '...'
    around them): the value scattered over what getitem gathers (advanced_selection).
    Duplicates: the last in C order of the selection wins; device indices out of range are
    dropped (checked mode: VKBACKEND_CHECK_INDICES), as put_along_axis does."""
    key, kinds = _expand_ellipsis(key, kinds, a.ndim, name)
    sel = advanced_selection(a, key, kinds, name, None, scatter=True)
    val = _value_operand(value, a.dtype, name)
    vstrides = _broadcast_walk(val.shape, sel.shape, name)
    if not math.prod(sel.shape):
        return None
    if isinstance(val, Array):
        if val._storage is a._storage:
            val = val.copy()  # it may overlap what is written: read it from a copy
        vals = _Values(tuple(val.shape), a.dtype, array=val)
    else:
        vals = _Values(val.shape, a.dtype, host=val)
    # The claim pass indexes its a-sized words from the base offset: walk stepped-back slices
    # forwards (values too), so that no position precedes it (each element is still reached
    # from the same index coordinates, so the same duplicate wins).
    base_off, base_st, voff, vst = sel.base.offset, list(sel.base.strides), vals.offset, list(vstrides)
    for d, (n, st) in enumerate(zip(sel.shape, base_st)):
        if st < 0:
            base_off, base_st[d] = base_off + (n - 1) * st, -st
            voff, vst[d] = voff + (n - 1) * vst[d], -vst[d]
    idx = sel.index()
    _assign(a, sel.shape, vals, Walk(voff, vst), Walk(idx.offset, sel.index_strides), Walk(base_off, base_st),
            sel.axis_stride, idx, unique_indices=False)
    return None


def _write_back(a: Array, result: Array, name: str) -> None:
    """Copy `result` (a's shape, a fresh array) into a's own elements."""
    if not a.size:
        return None
    if a.buffer.big or result.buffer.big:
        check_windowed(a.dtype, name)
        copy_into(result, a)
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
    if dtypes.is_half(a.dtype):
        dtypes.half_words(name, a.dtype)
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
