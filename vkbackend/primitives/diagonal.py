"""vk.linalg.diagonal and vk.linalg.trace: the standard's (and numpy.linalg's) forms, over the
last two axes of a stack of matrices (numpy's top-level diagonal/trace take the first two).

The diagonal is one strided copy (layout.strided_copy: stride N + 1 along each matrix); the
trace is its sum.
"""
from __future__ import annotations

from .. import dtypes
from ..array import Array
from .layout import strided_copy
from .operands import contiguous_strides, integer, operand
from .reduce import sum as _sum

__all__: list = []  # vk.linalg's (vkbackend/linalg.py), not the namespace's


def _diagonal(x: Array, offset: int) -> Array:
    m, n = x.shape[-2:]
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    start = offset if offset >= 0 else -offset * n
    batch = x.shape[:-2]
    strides = [s * m * n for s in contiguous_strides(batch)] + [n + 1]
    if length == 0:  # nothing to read: no view to place
        return Array.empty(batch + (0,), x.dtype)
    return strided_copy(x, batch + (length,), strides, x.offset + start)


def _matrices(x, name: str, wide: bool = False) -> Array:
    """wide: the op only moves elements, so it takes the 8/16/64-bit dtypes too."""
    x = operand(x, name, "x", wide=wide)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a stack of matrices (at least 2 dimensions), got shape {x.shape}")
    return x


def diagonal(x, /, *, offset=0) -> Array:
    """The diagonals of the matrices in x (..., M, N): shape (..., L); offset > 0 above the main
    diagonal, < 0 below (L is 0 when it lies outside the matrix)."""
    x = _matrices(x, "diagonal", wide=True)
    return _diagonal(x, integer(offset, "diagonal", "offset"))


def trace(x, /, *, offset=0, dtype=None) -> Array:
    """The sums of the diagonals of the matrices in x (..., M, N): shape (...). dtype as vk.sum's
    (None: x's dtype, the default integer for narrower ones and bool; integer sums wrap)."""
    name = "trace"
    x = _matrices(x, name, wide=True)
    offset = integer(offset, name, "offset")
    if dtype is not None and dtypes.check(dtype, held=True) == dtypes.bool_:  # as vk.sum, before the copy
        raise TypeError(f"{name}: dtype bool is not supported; expected float32, int32 or uint32")
    return _sum(_diagonal(x, offset), axis=-1, dtype=dtype)
