"""numpy's protocols and DLPack for vk.Array.

numpy calls on vk arrays (np.add(x, y), np.sum(x), np.maximum.reduce(x), ...) run on the device
through vkbackend's function of the same name, looked up at each call (so every function the
package has is reachable), or raise TypeError naming what has no device implementation: nothing is
silently computed on a host copy. np.asarray(x) / x.numpy() are the explicit host copies.

DLPack: a vk.Array lives in a Vulkan buffer that kp cannot hand out (no device pointer, and no
consumer imports kDLVulkan memory), so it exports as host memory, a copy made at export:
`__dlpack_device__()` reports (kDLCPU, 0), the device of every capsule it gives, and
np.from_dlpack(x) / torch.from_dlpack(x) return host copies; copy=False raises BufferError since
a copy is needed. vk.from_dlpack imports host (and, through the exporter's own cross-device copy,
other devices') data by uploading it, with asarray's dtype rules. bfloat16 travels as kDLBfloat
(torch's and JAX's bfloat16), which numpy's DLPack cannot carry: its capsules are numpy's of the
16-bit words with the DLTensor's type code changed (_retag).
"""
from __future__ import annotations

import ctypes
import functools
import inspect
import numbers
import operator

import numpy as np

from . import dtypes
from .array import Array

KDL_CPU = 1  # DLDeviceType kDLCPU
KDL_UINT, KDL_BFLOAT = 1, 4  # DLDataTypeCode
# Host memory numpy's from_dlpack imports directly: kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged.
_HOST_DEVICES = (1, 3, 11, 13)

# ufunc.reduce / ufunc.accumulate -> vkbackend's reduction / scan of that operation.
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax", "minimum": "cummin"}
# vkbackend names that are no numpy function, whatever numpy may add.
_NOT_NUMPY = frozenset({"device", "synchronize", "stats", "memory_stats", "from_dlpack"})
# ufunc keywords accepted at numpy's default value only.
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                   "subok": True, "signature": None}


def _host_copy_hint(what: str) -> str:
    return (f"{what} has no vkbackend implementation for vk.Array arguments; np.asarray(x) makes "
            "the host copy to run it on the host")


def _vk_function(name: str, module: str = "numpy"):
    """vkbackend's public function `name` (numpy.linalg's names in vk.linalg), or None."""
    import vkbackend
    namespace = {"numpy": vkbackend, "numpy.linalg": vkbackend.linalg}.get(module)
    if namespace is None or name.startswith("_") or name in _NOT_NUMPY:
        return None
    # numpy's own signature first where vkbackend's function of that name is the array API's
    # (vk.reshape takes no order=, vk.result_type narrows to the device's dtypes)
    fn = _ADAPTERS.get(name) if module == "numpy" else None
    if fn is None:
        fn = getattr(namespace, name, None)
    if fn is None or isinstance(fn, type) or inspect.ismodule(fn) or not callable(fn):
        return None
    return fn


def _upload(x):
    """numpy and list operands of a ufunc go to the device (scalars stay scalars). Not
    operands.operand: nothing is judged here; the vk function checks what it is given."""
    if isinstance(x, (np.ndarray, list, tuple)):
        from .primitives.creation import asarray
        return asarray(x)
    return x


# -- __array_ufunc__ ---------------------------------------------------------------------------

def array_ufunc(ufunc, method: str, *inputs, **kwargs):
    name = ufunc.__name__
    what = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
    if kwargs.get("out") is not None:
        raise TypeError(f"{what}: out= is not supported with vk.Array operands (results are new "
                        "device arrays; assign the result instead)")
    kwargs.pop("out", None)
    if method == "__call__":
        fn = _vk_function(name)
        if fn is None:
            raise TypeError(_host_copy_hint(what))
        for key, value in kwargs.items():
            if key not in _UFUNC_DEFAULTS or not _is_default(value, _UFUNC_DEFAULTS[key]):
                raise TypeError(f"{what}: {key}={_brief(value)} is not supported with vk.Array operands")
        return fn(*[_upload(x) for x in inputs])
    if method == "reduce":
        return _reduce(name, what, inputs, kwargs)
    if method == "accumulate":
        return _accumulate(name, what, inputs, kwargs)
    raise TypeError(_host_copy_hint(what))


def _reduce(name: str, what: str, inputs, kwargs):
    target = _REDUCE.get(name)
    if target is None:
        raise TypeError(_host_copy_hint(what))
    fn = _vk_function(target)
    call = {"axis": kwargs.pop("axis", 0), "keepdims": kwargs.pop("keepdims", False)}  # numpy's defaults
    dtype = kwargs.pop("dtype", None)
    if dtype is not None:
        if "dtype" not in _signature(fn).parameters:
            raise TypeError(f"{what}: dtype= is not supported (vk.{target} takes none)")
        call["dtype"] = dtype
    for key, value in kwargs.items():  # initial, where
        if not (key == "where" and value is True):
            raise TypeError(f"{what}: {key}={_brief(value)} is not supported with vk.Array operands")
    (x,) = inputs
    return fn(_upload(x), **call)


def _accumulate(name: str, what: str, inputs, kwargs):
    target = _ACCUMULATE.get(name)
    if target is None:
        raise TypeError(_host_copy_hint(what))
    fn = _vk_function(target)
    (x,) = inputs
    x = _upload(x)
    axis = kwargs.pop("axis", 0)
    if axis is None:  # numpy: allowed on 1-d input only
        if x.ndim != 1:
            raise ValueError(f"{what}: accumulate does not allow multiple axes (axis=None on {x.ndim}-d input)")
        axis = 0
    call = {"axis": operator.index(axis)}
    dtype = kwargs.pop("dtype", None)
    if dtype is not None:
        if "dtype" not in _signature(fn).parameters:
            raise TypeError(f"{what}: dtype= is not supported (vk.{target} takes none)")
        call["dtype"] = dtype
    if kwargs:
        raise TypeError(f"{what}: {', '.join(sorted(kwargs))} not supported with vk.Array operands")
    return fn(x, **call)


# -- __array_function__ ------------------------------------------------------------------------

def _brief(value) -> str:
    """A value for an error message: arrays by type, shape and dtype, not their contents."""
    if isinstance(value, (Array, np.ndarray)):
        return f"<{type(value).__name__} of shape {value.shape}, {value.dtype}>"
    return repr(value)


def _is_default(value, default) -> bool:
    if value is default:
        return True
    simple = (str, bool, int, float, type(None))
    return isinstance(value, simple) and isinstance(default, simple) and type(value) is type(default) \
        and value == default


def array_function(func, types, args, kwargs):
    if not all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented  # another library's array is involved: let it answer
    what = f"{func.__module__}.{func.__name__}"
    fn = _vk_function(func.__name__, func.__module__)
    if fn is None:
        raise TypeError(_host_copy_hint(what))
    pos, kw = _translate(func, fn, args, kwargs, what)
    return fn(*pos, **kw)


@functools.lru_cache(maxsize=512)
def _signature(f) -> inspect.Signature:
    return inspect.signature(f)


def _translate(func, fn, args, kwargs, what: str):
    """numpy's call (args, kwargs) as arguments of vkbackend's `fn`: numpy's parameters by name
    (the first, the array, by position: np.empty_like calls it `prototype`), those `fn` lacks
    dropped at numpy's default value and refused otherwise."""
    try:
        np_sig, vk_sig = _signature(func), _signature(fn)
    except (TypeError, ValueError):
        return args, kwargs  # no signature to read: fn's own checks decide
    bound = np_sig.bind(*args, **kwargs)  # numpy's own TypeError for a call numpy would refuse
    vk_params = list(vk_sig.parameters.values())
    pos, kw = [], {}
    for i, p in enumerate(np_sig.parameters.values()):
        if p.name not in bound.arguments:
            continue
        value = bound.arguments[p.name]
        if p.kind is p.VAR_POSITIONAL:
            pos.extend(value)
            continue
        target = vk_sig.parameters.get(p.name)
        if target is None and i == 0 and vk_params and vk_params[0].kind is not p.VAR_POSITIONAL:
            target = vk_params[0]
        if target is None:
            if _is_default(value, p.default):
                continue
            raise TypeError(f"{what}: vkbackend's {fn.__name__} does not take {p.name}={_brief(value)}")
        if target.kind is target.POSITIONAL_ONLY or target is vk_params[0]:
            pos.append(value)
        else:
            kw[target.name] = value
    try:
        vk_sig.bind(*pos, **kw)
    except TypeError as e:
        raise TypeError(f"{what}: vkbackend's {fn.__name__} does not take these arguments ({e})") from None
    return pos, kw


# numpy functions vkbackend has as Array methods or metadata only (no data moves).
def _reshape(a, /, shape, order="C", *, copy=None):
    if order != "C":
        raise TypeError(f"numpy.reshape: order={order!r} is not supported (vk arrays are C-contiguous)")
    out = a.reshape(shape)  # always a view
    return out.copy() if copy else out


def _ravel(a, order="C"):
    return _reshape(a, -1, order)


def _copy(a, order="K", subok=False):
    return a.copy()


def _shape(a):
    return a.shape


def _ndim(a):
    return a.ndim


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _result_type(*arrays_and_dtypes):
    return np.result_type(*[x.dtype if isinstance(x, Array) else x for x in arrays_and_dtypes])


_ADAPTERS = {"reshape": _reshape, "ravel": _ravel, "copy": _copy, "shape": _shape, "ndim": _ndim,
             "size": _size, "result_type": _result_type}


# -- DLPack ------------------------------------------------------------------------------------

def dlpack(a: Array, stream=None, max_version=None, dl_device=None, copy=None):
    """The capsule of a host copy of `a` (see the module's docstring)."""
    if stream is not None:
        raise ValueError(f"vk.Array.__dlpack__: stream must be None for a host (kDLCPU) export, got {stream!r}")
    if dl_device is not None and tuple(int(v) for v in dl_device) != (KDL_CPU, 0):
        raise BufferError(f"vk.Array.__dlpack__: cannot export to DLPack device {tuple(dl_device)}: "
                          f"a vk.Array exports only as a host copy, dl_device=({KDL_CPU}, 0)")
    if copy is False:
        raise BufferError("vk.Array.__dlpack__: copy=False cannot be honoured: the data lives in "
                          "device memory and leaves it only as a host copy (copy=None or True)")
    host = a.numpy()  # a fresh array: the capsule owns it
    bf16 = a.dtype == dtypes.bfloat16
    if bf16:
        host = host.view(np.uint16)
    capsule = host.__dlpack__(max_version=max_version) if max_version is not None else host.__dlpack__()
    if bf16:
        _retag(capsule, KDL_UINT, KDL_BFLOAT)
    return capsule


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _retag(capsule, code: int, to: int) -> bool:
    """Change an unconsumed capsule's 16-bit element type from DLDataTypeCode `code` to `to`
    (same bits and lanes); whether it had that type. The DLTensor sits at the start of a
    DLManagedTensor ("dltensor") and after 32 bytes (version, manager_ctx, deleter, flags) of a
    DLManagedTensorVersioned ("dltensor_versioned"); its DLDataType {code, bits, lanes} after
    data, device and ndim, at byte 20."""
    name = _capsule_name(capsule)
    if name not in (b"dltensor", b"dltensor_versioned"):
        return False
    base = _capsule_pointer(capsule, name) + (32 if name == b"dltensor_versioned" else 0)
    dtype = (ctypes.c_uint8 * 4).from_address(base + 20)  # code, bits, lanes (uint16)
    if (dtype[0], dtype[1], dtype[2], dtype[3]) != (code, 16, 1, 0):
        return False
    dtype[0] = to
    return True


class _BfloatAsWords:
    """An exporter seen through DLPack as numpy can import it: a kDLBfloat capsule retagged as
    16-bit unsigned words (`was_bfloat16` says whether it was one)."""

    def __init__(self, x):
        self._x = x
        self.was_bfloat16 = False

    def __dlpack_device__(self):
        device = getattr(self._x, "__dlpack_device__", None)
        return (KDL_CPU, 0) if device is None else device()

    def __dlpack__(self, **kwargs):
        capsule = self._x.__dlpack__(**kwargs)
        self.was_bfloat16 = _retag(capsule, KDL_BFLOAT, KDL_UINT)
        return capsule


def dlpack_device(a: Array) -> tuple:
    return (KDL_CPU, 0)


def from_dlpack(x, /, *, device=None, copy=None):
    """The array API's from_dlpack: a vk.Array with x's data (asarray's dtype rules: float64 ->
    float32, int64 -> int32 range-checked). Importing to the device always copies, so copy=False
    raises BufferError, except for a vk.Array (returned as it is). device: None or vk.device();
    "cpu" or (1, 0) gives a numpy array instead (host memory, as the standard asks to offer)."""
    import vkbackend
    if device is not None and (device == "cpu" or _is_cpu_tuple(device)):
        return np.from_dlpack(x, device="cpu", copy=copy)
    if device is not None and device is not vkbackend.device():
        raise ValueError(f"vk.from_dlpack: device must be None, vk.device(), 'cpu' or (1, 0), got {device!r}")
    if isinstance(x, Array):
        return x.copy() if copy else x
    if copy is False:
        raise BufferError("vk.from_dlpack: copy=False cannot be honoured: moving data to the Vulkan "
                          "device is a copy")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"vk.from_dlpack: expected an object with __dlpack__, got {type(x).__name__}")
    where = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (KDL_CPU, 0)
    words = _BfloatAsWords(x)
    if int(where[0]) in _HOST_DEVICES:
        host = np.from_dlpack(words)
    else:  # on another device: ask the exporter for a host copy (the standard's cross-device export)
        host = np.from_dlpack(words, device="cpu")
    if words.was_bfloat16:
        host = host.view(dtypes.bfloat16)
    from .primitives.creation import asarray
    return asarray(host)


def _is_cpu_tuple(device) -> bool:
    return isinstance(device, tuple) and len(device) == 2 and all(isinstance(v, numbers.Integral) for v in device) \
        and tuple(int(v) for v in device) == (KDL_CPU, 0)
