"""vk.linalg.vector_norm and vk.linalg.matrix_norm (the standard's and numpy.linalg's), in
float32 (float64 for float64 input), from reductions and elementwise ops. float16 and bfloat16 input
(where the device computes on it) is normed in float32 and the result rounded once to its dtype, numpy's
result dtype (numpy's float16 norm of [300, 400] overflows to inf; this one is 500).

An empty vector's inf-norm is 0, its -inf-norm has no value (ValueError), as numpy's.
vector_norm for ord p > 0 other than 1 and inf scales by the largest |x| first, m * (sum (|x| /
m)**p)**(1/p), so that |x|**p neither overflows nor underflows in float32 (numpy's float32 norm of
[3e20, 4e20] is inf; this one is 5e20). Infinities give inf and NaN gives NaN, as numpy.

matrix_norm has 'fro', 1, -1, inf and -inf here; 2, -2 and 'nuc' are functions of the singular
values, which vk.linalg.matrix_norm (ops/svd.py) passes in as `singular_values` (svdvals: the
primitives cannot import ops). Without it they raise NotImplementedError, before any GPU work.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..array import Array
from .creation import zeros
from .elementwise import absolute, astype, divide, isinf, multiply, not_equal, power, sqrt, square, where
from .operands import normalize_axes, operand
from .reduce import max as _max, min as _min, sum as _sum

__all__: list = []  # vk.linalg's (vkbackend/linalg.py), not the namespace's


def _float(x: Array) -> Array:
    """float32 and float64 as they are; integers, bool and the halves as float32."""
    return x if x.dtype in (dtypes.float32, dtypes.float64) else astype(x, dtypes.float32)


def _input(x, name: str) -> Array:
    """x as an operand: the 32-bit dtypes, float64 and the halves (the integers narrower or wider
    than 32 bits are refused, as float32 does not hold all of int64)."""
    if isinstance(x, Array) and x.dtype == dtypes.float64:
        return operand(x, name, "x", wide=True)
    return operand(x, name, "x", half="words")


def _result(out: Array, x: Array) -> Array:
    """The norm `out` (float32 for half input) in the dtype numpy gives for x's."""
    return astype(out, x.dtype) if dtypes.is_half(x.dtype) else out


def _order(ord, name: str) -> float:
    if isinstance(ord, (bool, np.bool_)) or not isinstance(ord, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name}: ord must be a real number (or inf, -inf), got {ord!r}")
    ord = float(ord)
    if math.isnan(ord):
        raise ValueError(f"{name}: ord must not be NaN")
    return ord


def _pnorm(a: Array, axes: tuple, p: float, n: int) -> Array:
    """(sum |x|**p)**(1/p) over axes (kept), |x| = a; scaled for p > 0 (module docstring)."""
    if p < 0 or n == 0:  # nothing to scale: zeros make sum inf, the result 0 (numpy alike)
        s = _sum(square(a) if p == 2 else power(a, p), axis=axes, keepdims=True)
        return sqrt(s) if p == 2 else power(s, 1.0 / p)
    m = _max(a, axis=axes, keepdims=True)
    scale = where(not_equal(m, 0), m, 1.0)  # an all-zero vector: 0 / 1
    r = divide(a, scale)
    s = _sum(square(r) if p == 2 else power(r, p), axis=axes, keepdims=True)
    out = multiply(sqrt(s) if p == 2 else power(s, 1.0 / p), m)
    return where(isinf(m), m, out)  # inf / inf would be NaN


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> Array:
    """numpy.linalg.vector_norm in float32 (float64 input: float64): axis None (all), an int or a
    tuple of ints; ord a real number, inf or -inf (0 counts the nonzero elements). Integer input is
    converted to float32."""
    name = "vector_norm"
    x = _input(x, name)
    p = _order(ord, name)
    axes = tuple(range(x.ndim)) if axis is None else tuple(normalize_axes(axis, x.ndim, name, "axis"))
    n = math.prod(x.shape[d] for d in axes)
    if n == 0 and p == -math.inf:
        raise ValueError(f"{name}: ord={ord} of an empty vector (axes {axes} of shape {x.shape}) has no value")
    a = absolute(_float(x))
    if n == 0 and p == math.inf:  # numpy: the largest of none is 0 (norms are >= 0)
        out = zeros(tuple(1 if d in axes else s for d, s in enumerate(x.shape)), a.dtype)
    elif p == math.inf:
        out = _max(a, axis=axes, keepdims=True)
    elif p == -math.inf:
        out = _min(a, axis=axes, keepdims=True)
    elif p == 0:
        out = _sum(not_equal(a, 0), axis=axes, keepdims=True, dtype=a.dtype)
    elif p == 1:
        out = _sum(a, axis=axes, keepdims=True)
    else:
        out = _pnorm(a, axes, p, n)
    if not keepdims:
        out = out.reshape(tuple(s for d, s in enumerate(x.shape) if d not in axes))
    return _result(out, x)


_NO_SVD = (2, -2, "nuc")


def matrix_norm(x, /, *, keepdims=False, ord="fro", singular_values=None) -> Array:
    """numpy.linalg.matrix_norm of the matrices in x (..., M, N) in float32 (float64 input:
    float64): ord 'fro', 1 / -1
    (largest / smallest column sum of |x|), inf / -inf (row sums); 2 / -2 (largest / smallest
    singular value) and 'nuc' (their sum) from singular_values(x) (..., min(M, N)), descending,
    NotImplementedError without it."""
    name = "matrix_norm"
    x = _input(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: expected a stack of matrices (at least 2 dimensions), got shape {x.shape}")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise ValueError(f"{name}: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    elif isinstance(ord, (bool, np.bool_)) or not isinstance(ord, numbers.Real) or ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError(f"{name}: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")
    m, n = x.shape[-2:]
    if ord in _NO_SVD:
        if singular_values is None:
            raise NotImplementedError(f"{name}: ord={ord!r} is a function of the singular values: "
                                      "vk.linalg.matrix_norm computes it")
        if min(m, n) == 0:  # numpy: the largest or smallest of no singular values has no value
            if ord != "nuc":
                raise ValueError(f"{name}: ord={ord!r} of matrices of shape {(m, n)} has no value")
            out = zeros(x.shape[:-2] + (1, 1), _float(x).dtype)
        else:
            s = singular_values(_float(x))
            k = s.shape[-1]
            out = _sum(s, axis=-1, keepdims=True) if ord == "nuc" else s[..., :1] if ord == 2 else s[..., k - 1:]
            out = out.reshape(x.shape[:-2] + (1, 1))
        return _result(out if keepdims else out.reshape(x.shape[:-2]), x)
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)
    across, along = (-2, -1) if ord in (1, -1) else (-1, -2)  # column sums for 1, row sums for inf
    if x.shape[along] == 0:  # numpy: the largest of no sums is 0, the smallest has no value
        if ord < 0:
            raise ValueError(f"{name}: ord={ord!r} of matrices of shape {(m, n)} has no value")
        out = zeros(x.shape[:-2] + (1, 1), _float(x).dtype)
    else:
        sums = _sum(absolute(_float(x)), axis=across, keepdims=True)
        out = (_max if ord > 0 else _min)(sums, axis=along, keepdims=True)
    return _result(out if keepdims else out.reshape(x.shape[:-2]), x)
