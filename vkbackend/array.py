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

    def __init__(self, words: int, upload: bool = False):
        """upload=True: the host writes all of it at once (Stream.upload), so it is not poisoned."""
        rt = runtime.get()
        self.buffer = rt.pool.acquire(words)
        self._rt = rt  # set only once there is a buffer to give back
        stream = rt.stream
        if stream.capture is not None:  # an op being planned (primitives/recipes.py)
            stream.capture.allocated(self)
        if rt.poison and not upload:
            stream.fill(self.buffer, POISON)

    def __del__(self):
        rt = getattr(self, "_rt", None)
        if rt is not None:
            if runtime.is_open():
                rt.pool.release(self.buffer)
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
        self.offset = offset  # in elements from the start of the buffer

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
        """Run what is recorded and copy this array back: one wait (a submit and wait per piece
        of the staging area past its size, VKBACKEND_STAGING_LIMIT)."""
        stream = runtime.get().stream
        if not self.size:
            stream.synchronize()
            return np.empty(self.shape, self.dtype)
        d = self.dtype
        if d.itemsize != 4 and d != dtypes.bool_:  # packed: the words that hold the elements
            start, end = self.offset * d.itemsize, (self.offset + self.size) * d.itemsize
            words = stream.read(self.buffer, start // 4, (end + 3) // 4 - start // 4)
            return words.view(np.uint8)[start % 4:start % 4 + end - start].view(d).reshape(self.shape)
        host = stream.read(self.buffer, self.offset, self.size).view(dtypes.STORAGE[self.dtype]).reshape(self.shape)
        return host.astype(bool) if self.dtype == dtypes.bool_ else host

    def __array__(self, dtype=None, copy=None):
        """numpy 2's protocol: always a host copy, so copy=False (no copy allowed) raises."""
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested: a vk.Array "
                             "lives in device memory. Use np.asarray(x) (a host copy) or x.numpy()")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

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

    def __complex__(self):
        """complex(x) of a 0-d array (the standard's conversion; vkbackend has no complex dtype)."""
        if self.ndim:
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars: complex() of an "
                            f"array of shape {self.shape} (index it or use .item())")
        return complex(self.item())

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

    # -- operators and methods that compute: attached by vkbackend/array_methods.py ---------
    # (x + y, x[k], x.T, x.sum(), ...; this module imports no operation)
    __hash__ = None  # the == operator is elementwise

    def __pos__(self):
        return self

    @property
    def device(self):
        """The device the array lives on: vk.device()."""
        return runtime.get().device

    def __index__(self) -> int:
        """A 0-d integer array as a Python int (slice bounds, range(), operator.index)."""
        if self.ndim or self.dtype.kind not in "iu":
            raise TypeError(f"only 0-d integer arrays can be used as an index, got a {self.dtype} array "
                            f"of shape {self.shape}")
        return int(self.item())
