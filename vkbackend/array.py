"""vk.Array: a C-contiguous array in a pooled device buffer, computed lazily."""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from . import dtypes, runtime
from .runtime.memory import POISON


class Storage:
    """Owns one pooled buffer; views share it, and it goes back to the pool with the last one."""
    __slots__ = ("buffer", "_rt")

    def __init__(self, words: int):
        rt = runtime.get()
        self.buffer = rt.pool.acquire(words)
        self._rt = rt  # set only once there is a buffer to give back
        if rt.stream.capture is not None:  # an op being planned (primitives/recipes.py)
            rt.stream.capture.allocated(self)
        if self._rt.poison:
            rt.stream.fill(self.buffer, POISON)

    def __del__(self):
        rt = getattr(self, "_rt", None)
        if rt is not None:
            if runtime.is_open():
                rt.release(self.buffer)
            elif runtime.forked():  # a parent's buffer: destroying it in the child could hang
                runtime.leak(self.buffer)


def _normalize_shape(shape) -> tuple:
    if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
        return shape  # the common case, from our own code
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError as e:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from e
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


class Array:
    __array_priority__ = 100  # numpy defers to our operators in mixed expressions

    def __init__(self, storage: Storage, shape: tuple, dtype: np.dtype, offset: int = 0):
        self._storage = storage
        self.shape = shape
        self.dtype = dtype
        self.offset = offset  # in elements from the start of the buffer (words; halves for float16)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def empty(cls, shape, dtype) -> "Array":
        shape = _normalize_shape(shape)
        dtype = dtypes.check(dtype, held=True)
        return cls(Storage(dtypes.words(math.prod(shape), dtype)), shape, dtype)

    # -- properties -------------------------------------------------------------------------
    @property
    def buffer(self):
        return self._storage.buffer

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"vk.Array({np.array2string(self.numpy(), separator=', ')}, dtype={self.dtype})"

    # -- host transfer ----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """Run what is recorded and copy this array back: exactly one submit."""
        rt = runtime.get()
        rt.stream.synchronize(downloads=[self.buffer] if self.size else [])
        if not self.size:
            return np.empty(self.shape, self.dtype)
        if self.dtype == dtypes.float16:
            halves = self.buffer.staging().view(np.float16)
            return halves[self.offset:self.offset + self.size].reshape(self.shape).copy()
        words = self.buffer.staging()[self.offset:self.offset + self.size]
        host = words.view(dtypes.STORAGE[self.dtype]).reshape(self.shape)
        return host.astype(bool) if self.dtype == dtypes.bool_ else host.copy()

    def __array__(self, dtype=None, copy=None):
        """numpy 2's protocol: always a host copy, so copy=False (no copy allowed) raises."""
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested: a vk.Array "
                             "lives in device memory. Use np.asarray(x) (a host copy) or x.numpy()")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    # numpy functions and ufuncs run on the device or raise TypeError (vkbackend/interop.py)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import interop
        return interop.array_ufunc(ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import interop
        return interop.array_function(func, types, args, kwargs)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of a host copy (vk.Array exports only to the host; see interop.py)."""
        from . import interop
        return interop.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        from . import interop
        return interop.dlpack_device(self)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        if self.size != 1:
            raise ValueError(f"item() needs an array of size 1, got shape {self.shape}")
        return self.numpy().reshape(()).item()

    def __float__(self):
        if self.ndim:  # numpy 2 refuses any array but a 0-d one, size 1 included
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars: float() of an "
                            f"array of shape {self.shape} (index it or use .item())")
        return float(self.item())

    def __int__(self):
        if self.ndim:
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars: int() of an "
                            f"array of shape {self.shape} (index it or use .item())")
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of an array with more than one element is ambiguous")
        return bool(self.item())

    # -- views ------------------------------------------------------------------------------
    def reshape(self, *shape) -> "Array":
        """A view with a new shape (one dimension may be -1), like numpy's."""
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        shape = tuple(operator.index(s) for s in shape)
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension (-1)")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        shape = _normalize_shape(shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {shape}")
        return Array(self._storage, shape, self.dtype, self.offset)

    def ravel(self) -> "Array":
        return self.reshape(-1)

    flatten = ravel

    def __getitem__(self, key):
        """Integers and unit-step slices on leading axes are views (handled here, the hot path);
        masks, integer arrays, stepped slices and the rest go to primitives/getitem.py."""
        from .primitives.getitem import getitem
        original = key
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > self.ndim:
            return getitem(self, original)
        view = self
        for pos, k in enumerate(key):
            n = view.shape[0]
            inner = math.prod(view.shape[1:])
            if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_)):
                i = operator.index(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {pos} with size {n}")
                view = Array(view._storage, view.shape[1:], view.dtype, view.offset + (i % n) * inner)
            elif isinstance(k, slice):
                start, stop, step = k.indices(n)
                if step != 1 or pos != len(key) - 1:
                    return getitem(self, original)
                count = max(0, stop - start)
                view = Array(view._storage, (count,) + view.shape[1:], view.dtype, view.offset + start * inner)
            else:
                return getitem(self, original)
        return view

    def astype(self, dtype) -> "Array":
        from .primitives import elementwise
        return elementwise.astype(self, dtype)

    def copy(self) -> "Array":
        return self.astype(self.dtype)

    # -- operators --------------------------------------------------------------------------
    def _binary(name, reflected=False):
        fn = []  # the elementwise function, looked up on first use (primitives import this module)

        def method(self, other):
            if other is None and name in ("equal", "not_equal"):
                pass  # numpy: elementwise, nothing equals None
            elif not isinstance(other, (Array, numbers.Number, np.ndarray, np.generic, list, tuple)):
                return NotImplemented
            if not fn:
                from .primitives import elementwise
                fn.append(getattr(elementwise, name))
            return fn[0](other, self) if reflected else fn[0](self, other)
        method.__name__ = f"__{'r' if reflected else ''}{name}__"
        return method

    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", True)
    __truediv__ = _binary("divide")
    __rtruediv__ = _binary("divide", True)
    __eq__ = _binary("equal")
    __ne__ = _binary("not_equal")
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    del _binary
    __hash__ = None

    def __matmul__(self, other):
        from .primitives import matmul as _mm
        return _mm.matmul(self, other)

    def __rmatmul__(self, other):
        from .primitives import matmul as _mm
        return _mm.matmul(other, self)

    @property
    def T(self) -> "Array":
        from .primitives.layout import transpose
        return transpose(self)

    def _reduction(name):
        def method(self, *args, **kwargs):
            from .primitives import reduce
            return getattr(reduce, name)(self, *args, **kwargs)
        method.__name__ = name
        method.__doc__ = f"numpy.ndarray.{name}: see vk.{name}."
        return method

    sum, prod, mean = _reduction("sum"), _reduction("prod"), _reduction("mean")
    max, min, argmax, argmin = _reduction("max"), _reduction("min"), _reduction("argmax"), _reduction("argmin")
    var, std, all, any = _reduction("var"), _reduction("std"), _reduction("all"), _reduction("any")
    del _reduction

    def __neg__(self):
        from .primitives import elementwise
        return elementwise.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        from .primitives import elementwise
        return elementwise.absolute(self)

    # -- the array API standard (vkbackend/array_api.py) ------------------------------------
    def __array_namespace__(self, /, *, api_version=None):
        """The namespace of this array's functions: vkbackend (the 2024.12 standard)."""
        import vkbackend
        from .array_api import namespace_version
        namespace_version(api_version)
        return vkbackend

    @property
    def device(self):
        """The device the array lives on: vk.device()."""
        return runtime.get().device

    def to_device(self, device, /, *, stream=None) -> "Array":
        """The array on `device`: itself, since vk.device() is the one device arrays live on
        (np.asarray(x) or x.numpy() bring it to the host)."""
        from .primitives.creation import check_device
        if stream is not None:
            raise ValueError(f"to_device: stream must be None (work is ordered on one queue), got {stream!r}")
        check_device(device, "to_device")
        return self

    @property
    def mT(self) -> "Array":
        """The stack of matrices transposed: the last two axes swapped (vk.matrix_transpose)."""
        from .primitives.manipulation import matrix_transpose
        return matrix_transpose(self)

    def __index__(self) -> int:
        """A 0-d integer array as a Python int (slice bounds, range(), operator.index)."""
        if self.ndim or self.dtype not in (dtypes.int32, dtypes.uint32):
            raise TypeError(f"only 0-d integer arrays can be used as an index, got a {self.dtype} array "
                            f"of shape {self.shape}")
        return int(self.item())

    def __setitem__(self, key, value) -> None:
        """self[key] = value, written into this array's buffer (its views see it): basic keys
        (ints, slices, Ellipsis, None) with broadcast values, a leading boolean mask with values
        for its trailing dims, one integer array (see vkbackend/primitives/setitem.py)."""
        from .primitives.setitem import setitem
        setitem(self, key, value)

    def _inplace(op, symbol):
        def method(self, other):
            from .primitives.setitem import inplace
            return inplace(self, op, other, symbol)
        method.__name__ = f"__i{op}__"
        method.__doc__ = f"self {symbol}= other, written into this array's buffer (its views see it)."
        return method

    __iadd__ = _inplace("add", "+")
    __isub__ = _inplace("subtract", "-")
    __imul__ = _inplace("multiply", "*")
    __itruediv__ = _inplace("divide", "/")
    __ifloordiv__ = _inplace("floor_divide", "//")
    __imod__ = _inplace("remainder", "%")
    __ipow__ = _inplace("pow", "**")
    __imatmul__ = _inplace("matmul", "@")
    __iand__ = _inplace("bitwise_and", "&")
    __ior__ = _inplace("bitwise_or", "|")
    __ixor__ = _inplace("bitwise_xor", "^")
    __ilshift__ = _inplace("bitwise_left_shift", "<<")
    __irshift__ = _inplace("bitwise_right_shift", ">>")
    del _inplace

    # The standard's other operators, on vkbackend's functions of those names (looked up at each
    # call: primitives/elementwise.py defines them); NotImplemented where there is none.
    def _operator(name, reflected=False):
        def method(self, other):
            if not isinstance(other, (Array, numbers.Number, np.ndarray, np.generic, list, tuple)):
                return NotImplemented
            import vkbackend
            fn = getattr(vkbackend, name, None)
            if fn is None:
                return NotImplemented
            return fn(other, self) if reflected else fn(self, other)
        method.__name__ = name
        return method

    __and__, __rand__ = _operator("bitwise_and"), _operator("bitwise_and", True)
    __or__, __ror__ = _operator("bitwise_or"), _operator("bitwise_or", True)
    __xor__, __rxor__ = _operator("bitwise_xor"), _operator("bitwise_xor", True)
    __lshift__, __rlshift__ = _operator("bitwise_left_shift"), _operator("bitwise_left_shift", True)
    __rshift__, __rrshift__ = _operator("bitwise_right_shift"), _operator("bitwise_right_shift", True)
    __pow__, __rpow__ = _operator("pow"), _operator("pow", True)
    __mod__, __rmod__ = _operator("remainder"), _operator("remainder", True)
    __floordiv__, __rfloordiv__ = _operator("floor_divide"), _operator("floor_divide", True)
    del _operator

    def __invert__(self):
        import vkbackend
        fn = getattr(vkbackend, "bitwise_invert", None)
        if fn is None:
            raise TypeError(f"bad operand type for unary ~: vk.Array of {self.dtype}")
        return fn(self)
