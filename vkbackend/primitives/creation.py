"""Arrays from host data and constants: asarray, zeros, ones, full, empty, arange.

Signatures are the array API standard's (2024.12), with `dtype` also accepted by position as
numpy does: `device` is None or the one device arrays live on (vk.device(), an array's .device).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes, runtime
from ..array import Array, Storage
from ..runtime.memory import POISON, WORD, size_class
from .launch import WG, grid_groups


def _fill(buffer, offset: int, n: int, glsl_type: str, a_bits: int, b_bits: int = 0, arange=False):
    rt = runtime.get()
    defines = {"T": glsl_type}
    if arange:
        defines["ARANGE"] = 1
    if glsl_type == "uvec2":
        defines["PAIR"] = 1
    k = rt.kernel("primitives/fill.comp", defines, WG)
    k([buffer], (n, offset, a_bits, b_bits), (grid_groups(n, WG),))


def poison(buffer) -> None:
    """Fill a fresh buffer with all-ones words, so that elements a kernel forgets to write show."""
    runtime.get().stream.fill(buffer, POISON)


def _bits(value, dtype: np.dtype) -> int:
    """The value's bits in `dtype` (8 to 64 of them; bool: a 32-bit word)."""
    host = np.asarray(value, dtypes.storage(dtype)).reshape(())
    return int(host.view(np.dtype(f"u{host.itemsize}")))


def fill_elements(out: "Array", bits: int) -> None:
    """Record out[...] = the element whose bits (in out's dtype) are `bits`: a word pattern for
    8/16-bit elements (a fresh array's buffer from word 0), a pair of words for 64-bit ones."""
    size = out.dtype.itemsize if out.dtype != dtypes.bool_ else 4
    if size == 8:
        _fill(out.buffer, out.offset, out.size, "uvec2", bits & 0xFFFFFFFF, bits >> 32)
    elif size == 4:
        _fill(out.buffer, out.offset, out.size, "uint", bits)
    else:
        assert out.offset == 0, "a packed fill covers whole words"
        pattern = bits * (0x01010101 if size == 1 else 0x00010001)
        _fill(out.buffer, 0, dtypes.words(out.size, out.dtype), "uint", pattern)


def _checked_cast(host: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Cast host data to `dtype`, refusing integers that would wrap."""
    if host.dtype.kind in "iu" and dtype.kind in "iu" and host.size:
        info = np.iinfo(dtype)
        lo, hi = host.min(), host.max()
        if lo < info.min or hi > info.max:
            raise OverflowError(f"values in [{lo}, {hi}] do not fit in {dtype}")
    with np.errstate(over="ignore"):  # float64 -> float32 overflow gives inf, as intended
        return host.astype(dtypes.STORAGE.get(dtype, dtype), copy=False)


def check_device(device, name: str) -> None:
    """The standard's device= argument: None or the open device (vk.device(), an array's .device);
    ValueError for anything else, before any GPU work."""
    if device is None:
        return
    from ..runtime.devices import Device
    if isinstance(device, Device) and device == runtime.get().device:
        return
    what = f"device {device.name!r}" if isinstance(device, Device) else repr(device)
    raise ValueError(f"{name}: device must be None or vk.device() (the Vulkan device arrays live on), got {what}")


def check_fits(words: int, name: str, what: str) -> None:
    """MemoryError (numpy's, for what cannot be allocated) before any host loop or GPU work when
    `words` 32-bit words are more than one buffer of this device holds (maxBufferSize, as the
    pool rounds sizes), than its local memory or than VKBACKEND_MEMORY_LIMIT; `what` names the
    size and its cause."""
    rt = runtime.get()
    need = size_class(words) * WORD
    limits = [(rt.pool.max_bytes, "the largest buffer (this device's maxBufferSize, at most 2**32 - 1 words)")]
    if rt.device.device_local_bytes:
        limits.append((rt.device.device_local_bytes, "this device's local memory"))
    if rt.pool.capacity is not None:
        limits.append((rt.pool.capacity, "VKBACKEND_MEMORY_LIMIT"))
    for limit, which in limits:
        if need > limit:
            raise MemoryError(f"{name}: {what} needs {words * WORD} bytes, more than {which} ({limit} bytes)")


def asarray_or_none(obj, dtype) -> Array | None:
    """asarray(obj, dtype) with None kept: an op's optional operand or result (a bias, a gradient
    not asked for) uploaded, converted or rounded to `dtype` (the array itself where it has it)."""
    return None if obj is None else asarray(obj, dtype)


def asarray(obj, /, dtype=None, *, device=None, copy=None) -> Array:
    """A GPU array from an array-like (numpy's asarray); float64 -> float32, int64 -> int32 unless
    `dtype` says otherwise. copy: True always copies; False never does, so host data (whose
    upload is a copy) and a dtype conversion raise ValueError; None copies only when needed."""
    check_device(device, "asarray")
    if copy not in (None, True, False):
        raise TypeError(f"asarray: copy must be None, True or False, got {copy!r}")
    if isinstance(obj, Array):
        if dtype is None or dtypes.check(dtype, held=True) == obj.dtype:
            return obj.copy() if copy else obj
        if copy is False:
            raise ValueError(f"asarray: copy=False, but converting {obj.dtype} to {np.dtype(dtype)} needs a copy")
        return obj.astype(dtype)
    if copy is False:
        raise ValueError("asarray: copy=False cannot be honoured for host data: moving it to the device is a copy")
    host = np.asarray(obj)
    target = dtypes.check(dtype, held=True) if dtype is not None else dtypes.from_host(host.dtype)
    data = _checked_cast(host, target)
    out = Array(Storage(dtypes.words(host.size, target), upload=True), host.shape, target)
    if out.size:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if raw.size % 4:  # packed dtypes: whole words
            raw = np.concatenate([raw, np.zeros(4 - raw.size % 4, np.uint8)])
        runtime.get().stream.upload(out.buffer, raw.view(np.uint32))
    return out


array = asarray


def empty(shape, dtype=None, *, device=None) -> Array:
    check_device(device, "empty")
    return Array.empty(shape, dtypes.float32 if dtype is None else dtype)


def _fill_word(fill_value, dtype: np.dtype, name: str) -> int:
    """The bits of a scalar fill value in `dtype`, converted as numpy converts it (a str
    that is no number: ValueError) or refused (complex into a real dtype: TypeError) before the
    output is allocated."""
    host = np.asarray(fill_value)
    if host.ndim:
        raise ValueError(f"{name}: fill_value must be a scalar, got an array of shape {host.shape}")
    if host.dtype.kind == "c" and dtype != dtypes.bool_:  # numpy warns and drops the imaginary part
        raise TypeError(f"{name}: a complex fill_value ({fill_value!r}) does not convert to {dtype}")
    if dtype == dtypes.bool_:
        return _bits(bool(host), dtype)  # a bool word holds 0 or 1, as numpy's bool(2) is True
    try:
        return _bits(_checked_cast(host, dtype) if dtype.kind in "iu" else fill_value, dtype)
    except ValueError as e:  # numpy's: could not convert string to float: 'abc'
        raise ValueError(f"{name}: {e}") from None


def full(shape, fill_value, dtype=None, *, device=None) -> Array:
    check_device(device, "full")
    dtype = dtypes.check(dtype, held=True) if dtype is not None else dtypes.from_host(np.asarray(fill_value).dtype)
    bits = _fill_word(fill_value, dtype, "full")  # float16: numpy's rounding, a word of two halves
    out = Array.empty(shape, dtype)
    if out.size:
        fill_elements(out, bits)
    return out


def zeros(shape, dtype=None, *, device=None) -> Array:
    return full(shape, 0, dtypes.float32 if dtype is None else dtype, device=device)


def ones(shape, dtype=None, *, device=None) -> Array:
    return full(shape, 1, dtypes.float32 if dtype is None else dtype, device=device)


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


def zeros_like(a, /, dtype=None, *, device=None) -> Array:
    return zeros(*_like(a, dtype, "zeros_like"), device=device)


def ones_like(a, /, dtype=None, *, device=None) -> Array:
    return ones(*_like(a, dtype, "ones_like"), device=device)


def full_like(a, /, fill_value, dtype=None, *, device=None) -> Array:
    shape, dtype = _like(a, dtype, "full_like")
    return full(shape, fill_value, dtype, device=device)


def empty_like(a, /, dtype=None, *, device=None) -> Array:
    return empty(*_like(a, dtype, "empty_like"), device=device)


def arange(start, /, stop=None, step=1, dtype=None, *, device=None) -> Array:
    """numpy.arange: values start + i*step computed on the device in the result dtype."""
    check_device(device, "arange")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")  # numpy's type (division by zero)
    length = (stop - start) / step
    if not math.isfinite(length):  # numpy: ValueError (maximum allowed size exceeded / NaN)
        raise ValueError(f"arange: the length (stop - start) / step = {length} is not a finite size "
                         f"(start={start!r}, stop={stop!r}, step={step!r})")
    n = max(0, math.ceil(length))
    dtype = dtypes.check(dtype, held=True) if dtype is not None else dtypes.from_host(np.result_type(start, stop, step))
    if dtype == dtypes.bool_:
        raise TypeError("arange: bool dtype is not supported")
    if dtype.kind in "iu" and n:
        _checked_cast(np.array([start, start + (n - 1) * step]), dtype)
    if dtypes.is_wide(dtype):  # start + i * step in dtype, from the indices i
        from .elementwise import add, astype, multiply
        if n >= 2 ** 31:
            raise ValueError(f"arange: {n} elements of {dtype}: at most 2**31 - 1 are supported")
        i = astype(arange(n, dtype=dtypes.int32), dtype)
        return add(multiply(i, np.asarray(step, dtype)[()]), np.asarray(start, dtype)[()])
    if dtypes.is_half(dtype):  # numpy's: start + i * (x[1] - x[0]) in float32 from the first two halves
        from .elementwise import add, astype, multiply
        first = np.array([start, start + step]).astype(dtype).astype(np.float32)
        i = astype(arange(n, dtype=dtypes.int32), dtypes.float32)
        return astype(add(multiply(i, first[1] - first[0]), first[0]), dtype)
    out = Array.empty((n,), dtype)
    if n:
        glsl = dtypes.GLSL[dtype]
        _fill(out.buffer, out.offset, n, glsl, _bits(start, dtype), _bits(step, dtype), arange=True)
    return out
