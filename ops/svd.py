"""vk.linalg.svd, svdvals, pinv, matrix_rank and matrix_norm's ord 2, -2 and 'nuc': singular values
by one-sided (Hestenes) Jacobi on the GPU (ops/jacobi.py, shaders/ops/jacobi.comp), float32 or
float64 (computed in it), batched over leading dimensions, recorded without a host sync.

    U, S, Vh = vk.linalg.svd(x)                      # x (..., m, n) = U diag(S) Vh, S descending
    U, S, Vh = vk.linalg.svd(x, full_matrices=False)
    S = vk.linalg.svdvals(x)

The columns of the taller orientation (x, or its transpose where m < n) are rotated in pairs until
they are orthogonal (A V = W); S are their norms, sorted descending with the matching columns of
V. U comes from the Householder QR (ops/qr.py) of W's sorted columns, each column's sign set by
R's diagonal: for orthogonal columns that is W's column over its norm, orthonormal to rounding
even where a singular value is 0 or tiny, and the complete mode gives full_matrices' extra
columns. Each matrix is scaled by a power of two near its largest |element| first (exact), so
that the squared column norms neither overflow nor underflow.

A matrix holding NaN or inf gets NaN throughout its results (numpy raises LinAlgError). float64
runs more Jacobi sweeps (jacobi.SWEEPS64_MORE). Every check comes before any GPU work.
"""
from __future__ import annotations

import math
import numbers
from collections import namedtuple

import numpy as np

from vkbackend import dtypes
from vkbackend.array import Array
from vkbackend.primitives import norms
from vkbackend.primitives.construct import eye
from vkbackend.primitives.creation import asarray, ones, zeros
from vkbackend.primitives.diagonal import _diagonal
from vkbackend.primitives.elementwise import (absolute, ceil, divide, exp2, greater, isfinite, less,
                                             log2, logical_not, maximum, minimum, multiply, where)
from vkbackend.primitives.indexing import take_along_axis
from vkbackend.primitives.manipulation import broadcast_to, concat, matrix_transpose
from vkbackend.primitives.matmul import matmul
from vkbackend.primitives.recipes import recipe
from vkbackend.primitives.reduce import max as _max, sum as _sum
from vkbackend.primitives.sort import argsort, sort

from . import jacobi
from .qr import _check_matrix, _real, qr

__all__ = ["svd", "svdvals", "pinv", "matrix_rank", "matrix_norm", "SVDResult"]

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
SVDResult.__doc__ = "svd's result: U (..., m, k or m), S (..., k) descending, Vh (..., k or n, n)."



def _tall(a: Array, vecs: bool):
    """(the taller orientation of a, fresh and scaled; the scale (B..., 1); True where a is
    transposed; non-finite mask (B...,)), after the loop budget's check."""
    *batch, m, n = a.shape
    batch = tuple(batch)
    M, N = max(m, n), min(m, n)
    jacobi.check_svd(math.prod(batch), M, N, vecs)  # LoopBudgetError before any GPU work
    t = matrix_transpose(a) if m < n else a
    mag = _max(absolute(t), axis=(-2, -1), keepdims=True)
    bad = logical_not(isfinite(mag)).reshape(batch)
    # 2^ceil(log2 max|a|), clamped to the dtype's normal exponents: the scaled matrix has max |a| <= 2
    info = np.finfo(a.dtype)
    scale = where(greater(mag, 0), exp2(minimum(maximum(ceil(log2(mag)), float(info.minexp)), float(info.maxexp - 1))), 1.0)
    return divide(t, scale), scale.reshape(batch + (1,)), m < n, bad


def _nan_where(bad: Array, x: Array) -> Array:
    return where(bad.reshape(bad.shape + (1,) * (x.ndim - bad.ndim)), float("nan"), x)


def svdvals(x, /) -> Array:
    """The singular values (..., min(m, n)), descending, of the float32 or float64 matrices x
    (..., m, n)."""
    a = _check_matrix(x, "svdvals", float64=True)
    dt = _real(a)
    *batch, m, n = a.shape
    batch = tuple(batch)
    if math.prod(batch) == 0 or min(m, n) == 0:
        return Array.empty(batch + (min(m, n),), dt)
    return _svdvals_recorded(asarray(a, dt))


@recipe()
def _svdvals_recorded(a: Array) -> Array:
    """svdvals' dispatches on a checked array (the Jacobi sweeps, the norms, the sort): replayed
    for a repeated signature (primitives/recipes.py)."""
    t, scale, _, bad = _tall(a, False)
    w, _ = jacobi.svd_jacobi(t, False)
    s = norms.vector_norm(w, axis=-2)
    return _nan_where(bad, multiply(sort(s, axis=-1, descending=True), scale))


def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """The array API's (and numpy's) svd for float32 or float64 x (..., m, n): SVDResult(U, S, Vh) with
    x = U diag(S) Vh, S (..., k) descending, k = min(m, n); U (..., m, m) and Vh (..., n, n) with
    full_matrices, else (..., m, k) and (..., k, n)."""
    name = "svd"
    if not isinstance(full_matrices, bool):
        raise TypeError(f"{name}: full_matrices must be a bool, got {full_matrices!r}")
    a = _check_matrix(x, name, float64=True)
    dt = _real(a)
    *batch, m, n = a.shape
    batch = tuple(batch)
    K = min(m, n)
    if math.prod(batch) == 0 or K == 0:
        eye_u = broadcast_to(eye(m, dtype=dt), batch + (m, m)).copy()
        eye_v = broadcast_to(eye(n, dtype=dt), batch + (n, n)).copy()
        if full_matrices:
            return SVDResult(eye_u, Array.empty(batch + (K,), dt), eye_v)
        return SVDResult(Array.empty(batch + (m, K), dt), Array.empty(batch + (K,), dt),
                         Array.empty(batch + (K, n), dt))
    mode = "complete" if full_matrices else "reduced"
    _qr_check(max(m, n), K, mode, dt)
    return SVDResult(*_svd_recorded(asarray(a, dt), mode))


@recipe()
def _svd_recorded(a: Array, mode: str) -> tuple:
    """svd's dispatches on a checked array: (U, S, V^T), replayed for a repeated signature
    (primitives/recipes.py; where it fills, as the complete basis's signs do, it runs plainly)."""
    *batch, m, n = a.shape
    batch, K, dt = tuple(batch), min(m, n), a.dtype
    t, scale, flipped, bad = _tall(a, True)
    w, v = jacobi.svd_jacobi(t, True)
    s = norms.vector_norm(w, axis=-2)
    order = argsort(s, axis=-1, descending=True)
    s = take_along_axis(s, order, axis=-1)
    cols = order.reshape(batch + (1, K))
    q, r = qr(take_along_axis(w, cols, axis=-1), mode=mode)
    sign = where(less(_diagonal(r, 0), 0), -1.0, 1.0)
    if q.shape[-1] > K:  # the completed basis: its columns as they are
        sign = concat([sign, ones(batch + (q.shape[-1] - K,), dt)], axis=-1)
    u = multiply(q, sign.reshape(batch + (1, q.shape[-1])))
    v = take_along_axis(v, cols, axis=-1)
    s = multiply(s, scale)
    if flipped:  # x^T = u s v^T, so x = v s u^T
        u, v = v, u
    return _nan_where(bad, u), _nan_where(bad, s), _nan_where(bad, matrix_transpose(v))


def _qr_check(M: int, K: int, mode: str, dt) -> None:
    """qr's own loop-budget check for the QR of U (dtype dt), before any GPU work."""
    from .qr import _check_budget, _plan, _tune_from_env
    _tune_from_env()
    panels = _plan(M, K, dt)[0]
    _check_budget("svd", M, [pl.width for pl in panels], M * M if mode == "complete" else M * K, dt=dt)


def _rtol(rtol, name: str, batch: tuple, m: int, n: int, dt=dtypes.float32):
    """rtol checked: a float, or an array (vk or host, not yet uploaded) of a shape broadcasting to
    x's batch shape; the standard's default max(m, n) * eps of x's dtype `dt`."""
    if rtol is None:
        return max(m, n) * float(np.finfo(dt).eps)
    if isinstance(rtol, (bool, np.bool_)):
        raise TypeError(f"{name}: rtol must be a real number or an array, got {rtol!r}")
    if isinstance(rtol, (numbers.Real, np.floating, np.integer)):
        return float(rtol)
    r = rtol if isinstance(rtol, Array) else np.asarray(rtol)
    if r.dtype.kind not in "fiu":
        raise TypeError(f"{name}: rtol has dtype {r.dtype}; expected a real number or a real array")
    try:
        shape = np.broadcast_shapes(tuple(r.shape), batch)
    except ValueError:
        shape = None
    if shape != batch:
        raise ValueError(f"{name}: rtol of shape {tuple(r.shape)} does not broadcast to the batch shape "
                         f"{batch} of x (..., m, n)")
    return r


def _cutoff(s: Array, rtol, batch: tuple) -> Array:
    """rtol * the largest singular value, (batch..., 1)."""
    if not isinstance(rtol, float):
        rtol = broadcast_to(asarray(rtol, s.dtype), batch).reshape(batch + (1,))
    return multiply(s[..., :1], rtol)


def matrix_rank(x, /, *, rtol=None) -> Array:
    """The array API's matrix_rank: the number of singular values of each matrix x (..., m, n)
    greater than rtol * the largest (rtol default max(m, n) * eps of x's dtype, float32 or
    float64); int32 (...,)."""
    name = "matrix_rank"
    a = _check_matrix(x, name, float64=True)
    *batch, m, n = a.shape
    batch = tuple(batch)
    tol = _rtol(rtol, name, batch, m, n, _real(a))
    if math.prod(batch) == 0 or min(m, n) == 0:
        return zeros(batch, dtypes.int32)
    s = svdvals(a)
    return _sum(greater(s, _cutoff(s, tol, batch)), axis=-1, dtype=dtypes.int32)


def pinv(x, /, *, rtol=None) -> Array:
    """The array API's pinv: the Moore-Penrose pseudo-inverse (..., n, m) of x (..., m, n), from
    its SVD with the singular values up to rtol * the largest taken as 0 (rtol default
    max(m, n) * eps of x's dtype, float32 or float64)."""
    name = "pinv"
    a = _check_matrix(x, name, float64=True)
    *batch, m, n = a.shape
    batch = tuple(batch)
    dt = _real(a)
    tol = _rtol(rtol, name, batch, m, n, dt)
    if math.prod(batch) == 0 or min(m, n) == 0:
        return zeros(batch + (n, m), dt)
    u, s, vh = svd(a, full_matrices=False)
    keep = greater(s, _cutoff(s, tol, batch))
    inv_s = where(keep, divide(1.0, where(keep, s, 1.0)), 0.0)
    k = s.shape[-1]
    return matmul(multiply(matrix_transpose(vh), inv_s.reshape(batch + (1, k))), matrix_transpose(u))


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> Array:
    """numpy.linalg.matrix_norm (primitives/norms.py), with ord 2, -2 and 'nuc' from svdvals."""
    return norms.matrix_norm(x, keepdims=keepdims, ord=ord, singular_values=svdvals)
