"""The standard's conj, real and imag, on vkbackend's real-valued dtypes (the 2024.12 standard
extends them to real input; vkbackend has no complex dtype): conj(x) and real(x) are copies of
x, imag(x) is zeros, all of x's dtype (numpy's np.conj/np.real/np.imag of real arrays alike)."""
from __future__ import annotations

from ..array import Array
from .creation import zeros
from .operands import operand

__all__ = ["conj", "real", "imag"]


def conj(x, /) -> Array:
    """The complex conjugate of a real array: a copy of x."""
    return operand(x, "conj", "x", wide=True).copy()


def real(x, /) -> Array:
    """The real part of a real array: a copy of x."""
    return operand(x, "real", "x", wide=True).copy()


def imag(x, /) -> Array:
    """The imaginary part of a real array: zeros of x's shape and dtype."""
    x = operand(x, "imag", "x", wide=True)
    return zeros(x.shape, x.dtype)
