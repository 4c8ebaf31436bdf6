"""Arrays from host data and constants: asarray, zeros, ones, full, empty, arange."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes, runtime
from ..array import Array, _normalize_shape
from ..runtime.memory import POISON
from .launch import grid_groups

_WG = 256


def _fill(buffer, offset: int, n: int, glsl_type: str, a_bits: int, b_bits: int = 0, arange=False):
    rt = runtime.get()
    defines = {"T": glsl_type}
    if arange:
        defines["ARANGE"] = 1
    k = rt.kernel("primitives/fill.comp", defines, _WG)
    k([buffer], (n, offset, a_bits, b_bits), (grid_groups(n, _WG),))


def poison(buffer) -> None:
    """Fill a fresh buffer with all-ones words, so that elements a kernel forgets to write show."""
    runtime.get().stream.fill(buffer, POISON)


def _bits(value, dtype: np.dtype) -> int:
    return int(np.asarray(value, dtypes.STORAGE[dtype]).reshape(()).view(np.uint32))


def _checked_cast(host: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Cast host data to `dtype`, refusing integers that would wrap."""
    if host.dtype.kind in "iu" and dtype.kind in "iu" and host.size:
        info = np.iinfo(dtype)
        lo, hi = host.min(), host.max()
        if lo < info.min or hi > info.max:
            raise OverflowError(f"values in [{lo}, {hi}] do not fit in {dtype}")
    with np.errstate(over="ignore"):  # float64 -> float32 overflow gives inf, as intended
        return host.astype(dtypes.STORAGE.get(dtype, dtype), copy=False)


def asarray(obj, dtype=None) -> Array:
    """A GPU array from an array-like (numpy's asarray); float64 -> float32, int64 -> int32 unless
    `dtype` says otherwise."""
    if isinstance(obj, Array):
        return obj if dtype is None or dtypes.check(dtype, held=True) == obj.dtype else obj.astype(dtype)
    host = np.asarray(obj)
    target = dtypes.check(dtype, held=True) if dtype is not None else dtypes.from_host(host.dtype)
    data = _checked_cast(host, target)
    out = Array.empty(host.shape, target)
    if out.size:
        flat = np.ascontiguousarray(data).reshape(-1)
        if target == dtypes.float16 and flat.size % 2:
            flat = np.append(flat, np.float16(0))  # whole words
        words = flat.view(np.uint32)
        runtime.get().stream.upload(out.buffer, words)
    return out


array = asarray


def empty(shape, dtype=dtypes.float32) -> Array:
    return Array.empty(shape, dtype)


def full(shape, fill_value, dtype=None) -> Array:
    dtype = dtypes.check(dtype) if dtype is not None else dtypes.from_host(np.asarray(fill_value).dtype)
    value = _checked_cast(np.asarray(fill_value), dtype) if dtype.kind in "iu" else fill_value
    out = Array.empty(shape, dtype)
    if out.size:
        _fill(out.buffer, out.offset, out.size, "uint", _bits(value, dtype))
    return out


def zeros(shape, dtype=dtypes.float32) -> Array:
    return full(shape, 0, dtype)


def ones(shape, dtype=dtypes.float32) -> Array:
    return full(shape, 1, dtype)


def _like(a, dtype, name: str) -> tuple:
    """(shape, dtype) of a vk.Array or a host array-like (numpy's dtype narrowed as asarray does)."""
    if isinstance(a, Array):
        shape, own = a.shape, a.dtype
    else:
        try:
            host = np.asarray(a)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name}: expected a vk.Array or an array-like, got {type(a).__name__} ({e})") from None
        if host.dtype == object:
            raise TypeError(f"{name}: expected a vk.Array or a numeric array-like, got "
                            f"{type(a).__name__} of dtype object")
        shape, own = host.shape, dtypes.from_host(host.dtype)
    return shape, own if dtype is None else dtype


def zeros_like(a, dtype=None) -> Array:
    return zeros(*_like(a, dtype, "zeros_like"))


def ones_like(a, dtype=None) -> Array:
    return ones(*_like(a, dtype, "ones_like"))


def full_like(a, fill_value, dtype=None) -> Array:
    shape, dtype = _like(a, dtype, "full_like")
    return full(shape, fill_value, dtype)


def empty_like(a, dtype=None) -> Array:
    return empty(*_like(a, dtype, "empty_like"))


def arange(start, stop=None, step=1, dtype=None) -> Array:
    """numpy.arange: values start + i*step computed on the device in the result dtype."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    dtype = dtypes.check(dtype) if dtype is not None else dtypes.from_host(np.result_type(start, stop, step))
    if dtype == dtypes.bool_:
        raise TypeError("arange: bool dtype is not supported")
    if dtype.kind in "iu" and n:
        _checked_cast(np.array([start, start + (n - 1) * step]), dtype)
    out = Array.empty((n,), dtype)
    if n:
        glsl = dtypes.GLSL[dtype]
        _fill(out.buffer, out.offset, n, glsl, _bits(start, dtype), _bits(step, dtype), arange=True)
    return out
