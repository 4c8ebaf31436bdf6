"""vk.Array's operators and the methods that compute (x + y, x[k], x[k] = v, x @ y, x.T, x.sum(),
np.add(x, y), ...), attached to the class here: array.py, which every operation imports, imports
none of them. vkbackend/__init__.py imports this module, so every vk.Array has them."""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from . import interop
from .array import Array
from .array_api import namespace_version
from .primitives import elementwise, reduce
from .primitives.creation import check_device
from .primitives.getitem import getitem
from .primitives.layout import transpose
from .primitives.manipulation import matrix_transpose
from .primitives.matmul import matmul
from .primitives.setitem import inplace, setitem

# What the binary operators take as the other operand; anything else gets NotImplemented.
_OPERANDS = (Array, numbers.Number, np.ndarray, np.generic, list, tuple)
_COMMON = frozenset((Array, float, int))  # checked by type first: isinstance on an ABC is slow


def _method(name: str, fn):
    fn.__name__, fn.__qualname__ = name, f"Array.{name}"
    return fn


def __getitem__(self, key):
    """Integers and unit-step slices on leading axes are views (handled here, the hot path);
    masks, integer arrays, stepped slices and the rest go to primitives/getitem.py."""
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


def __setitem__(self, key, value) -> None:
    """self[key] = value, written into this array's buffer (its views see it): basic keys
    (ints, slices, Ellipsis, None) with broadcast values, a leading boolean mask with values
    for its trailing dims, integer arrays (see vkbackend/primitives/setitem.py)."""
    setitem(self, key, value)


def astype(self, dtype) -> Array:
    return elementwise.astype(self, dtype)


def copy(self) -> Array:
    return elementwise.astype(self, self.dtype)


def to_device(self, device, /, *, stream=None) -> Array:
    """The array on `device`: itself, since vk.device() is the one device arrays live on
    (np.asarray(x) or x.numpy() bring it to the host)."""
    if stream is not None:
        raise ValueError(f"to_device: stream must be None (work is ordered on one queue), got {stream!r}")
    check_device(device, "to_device")
    return self


def __array_namespace__(self, /, *, api_version=None):
    """The namespace of this array's functions: vkbackend (the 2024.12 standard)."""
    import vkbackend
    namespace_version(api_version)
    return vkbackend


# numpy functions and ufuncs run on the device or raise TypeError (vkbackend/interop.py)
def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    return interop.array_ufunc(ufunc, method, *inputs, **kwargs)


def __array_function__(self, func, types, args, kwargs):
    return interop.array_function(func, types, args, kwargs)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of a host copy (vk.Array exports only to the host; see interop.py)."""
    return interop.dlpack(self, stream, max_version, dl_device, copy)


def __dlpack_device__(self) -> tuple:
    return interop.dlpack_device(self)


def __matmul__(self, other):
    return matmul(self, other)


def __rmatmul__(self, other):
    return matmul(other, self)


def __neg__(self):
    return elementwise.negative(self)


def __abs__(self):
    return elementwise.absolute(self)


def __invert__(self):
    return elementwise.bitwise_invert(self)


def _binary(dunder: str, fn, reflected: bool = False):
    takes_none = fn in (elementwise.equal, elementwise.not_equal)  # numpy: elementwise, nothing equals None

    def method(self, other):
        if type(other) not in _COMMON and not isinstance(other, _OPERANDS) and not (takes_none and other is None):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    return _method(dunder, method)


def _inplace(dunder: str, op: str, fn, symbol: str):
    def method(self, other):
        return inplace(self, op, fn, other, symbol)
    method.__doc__ = f"self {symbol}= other, written into this array's buffer (its views see it)."
    return _method(dunder, method)


# operator -> the elementwise function; those with a reflected form (other op self) get __r*__ too
_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
           "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
           "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
           "rshift": "bitwise_right_shift"}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                "ge": "greater_equal"}
_INPLACE = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}


def _install() -> None:
    for f in (__getitem__, __setitem__, astype, copy, to_device, __array_namespace__, __array_ufunc__,
              __array_function__, __dlpack__, __dlpack_device__, __matmul__, __rmatmul__, __neg__,
              __abs__, __invert__):
        setattr(Array, f.__name__, _method(f.__name__, f))
    for op, name in _BINARY.items():
        fn = getattr(elementwise, name)
        setattr(Array, f"__{op}__", _binary(f"__{op}__", fn))
        setattr(Array, f"__r{op}__", _binary(f"__r{op}__", fn, reflected=True))
    for op, name in _COMPARISONS.items():
        setattr(Array, f"__{op}__", _binary(f"__{op}__", getattr(elementwise, name)))
    for op, symbol in _INPLACE.items():
        name = _BINARY.get(op, op)
        fn = matmul if op == "matmul" else getattr(elementwise, name)
        setattr(Array, f"__i{op}__", _inplace(f"__i{op}__", name, fn, symbol))
    # numpy.ndarray's reductions as methods: x.sum(axis=1) is vk.sum(x, axis=1)
    for name in ("sum", "prod", "mean", "max", "min", "argmax", "argmin", "var", "std", "all", "any"):
        setattr(Array, name, getattr(reduce, name))
    Array.T = property(transpose, doc="The axes reversed (vk.permute_dims): a matrix transposed.")
    Array.mT = property(matrix_transpose, doc="The stack of matrices transposed: the last two axes "
                        "swapped (vk.matrix_transpose).")


_install()
