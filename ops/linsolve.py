"""det, slogdet, solve, inv and matrix_power (vk.linalg) through the QR factorization (ops/qr.py).

    vk.linalg.det(a), vk.linalg.slogdet(a)   # (..., n, n) -> (...)
    vk.linalg.solve(a, b)                    # a x = b: b (..., n, k), or (n,) a vector
    vk.linalg.inv(a)                         # solve(a, I)
    vk.linalg.matrix_power(a, n)             # repeated squaring (n < 0: of inv(a))

A = Q R with Q = H_1 ... H_K orthogonal (Householder reflectors) and R upper triangular, so
  det A = det Q * prod diag R, det Q = (-1)^(reflectors with tau != 0) (each one a reflection,
  det -1; tau = 0 is the identity): no pivoting, no growth, in the input's dtype throughout;
  A x = b  <=>  R x = Q^T b, solved by back substitution.
Back substitution is a loop over the n rows, each a few dispatches over the whole batch and all
right-hand sides (row i of x, then every row's remainder updated): 4n dispatches, recorded into
one submit. That suits the small and medium systems of the array API (n up to a few hundred);
large n wants a blocked triangular solve, which vkbackend does not have.

Singular matrices are not detected (that would need a host sync): det is 0 (or tiny), slogdet's
sign 0 and logabsdet -inf where a diagonal element of R is exactly 0, solve and inv give inf or
NaN there (numpy raises LinAlgError). float32 or float64, as qr (solve: float64 if either operand
is); every check (shapes, dtypes, n) comes before any GPU work.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from vkbackend import dtypes
from vkbackend.array import Array
from vkbackend.primitives.construct import eye
from vkbackend.primitives.creation import asarray, ones, zeros
from vkbackend.primitives.diagonal import _diagonal
from vkbackend.primitives.elementwise import (absolute, divide, log, multiply, not_equal, remainder,
                                             sign, subtract)
from vkbackend.primitives.layout import transpose
from vkbackend.primitives.manipulation import broadcast_to
from vkbackend.primitives.operands import integer
from vkbackend.primitives.matmul import matmul
from vkbackend.primitives.recipes import recipe
from vkbackend.primitives.reduce import prod, sum as _sum

from .qr import _check_float, _check_matrix, _common, _real, qr  # qr's checks: float32/64, >= 2-D

__all__ = ["det", "slogdet", "solve", "inv", "matrix_power", "SlogdetResult"]

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SlogdetResult.__doc__ = "slogdet's result: sign (-1, 0 or 1) and log|det|, each of shape (...)."


def _square(x, name: str):
    x = _check_matrix(x, name, float64=True)
    if x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError(f"{name}: the last two dimensions must be square, got shape {tuple(x.shape)}")
    return x


def _factor_signs(a: Array):
    """(diag R (..., n), det Q (..., ) as +-1.0) of a's QR."""
    h, tau = qr(a, mode="raw")  # h: R in its upper triangle (transposed: the diagonal is the same)
    flips = _sum(not_equal(tau, 0), axis=-1, dtype=dtypes.int32)
    det_q = subtract(1.0, multiply(remainder(flips, 2).astype(a.dtype), 2.0))
    return _diagonal(h, 0), det_q


def _empty_batch(a) -> Array | None:
    """det's answer where there is nothing to factor: 1 for 0x0 matrices, else an empty result."""
    batch, dt = tuple(a.shape[:-2]), _real(a)
    if a.shape[-1] == 0:
        return ones(batch, dt)
    return Array.empty(batch, dt) if 0 in batch else None


def det(x, /) -> Array:
    """The determinants of the square matrices in x (..., n, n), float32 or float64: det Q * prod
    diag R."""
    a = _square(x, "det")
    empty = _empty_batch(a)
    if empty is not None:
        return empty
    d, det_q = _factor_signs(asarray(a, _real(a)))
    return multiply(prod(d, axis=-1), det_q)


def slogdet(x, /) -> SlogdetResult:
    """(sign, log|det|) of the square matrices in x (..., n, n), float32 or float64; sign 0 and logabsdet
    -inf for a matrix whose R has a zero on its diagonal."""
    a = _square(x, "slogdet")
    empty = _empty_batch(a)
    if empty is not None:
        return SlogdetResult(empty, zeros(empty.shape, empty.dtype))
    d, det_q = _factor_signs(asarray(a, _real(a)))
    signs = multiply(prod(sign(d), axis=-1), det_q)
    return SlogdetResult(signs, _sum(log(absolute(d)), axis=-1))


def _back_substitute(r: Array, y: Array) -> Array:
    """x with r x = y, r (B..., n, n) upper triangular, y (B..., n, k): row by row from the last
    (module docstring). Rows lead during the loop, so that row i of each is a view."""
    *batch, n, k = y.shape
    nb = len(batch)
    lead = [nb] + list(range(nb))                                   # (B..., n, k) -> (n, B..., k)
    yt = transpose(y, lead + [nb + 1])
    cols = transpose(r, [nb + 1, nb] + list(range(nb))).reshape((n, n) + tuple(batch) + (1,))  # [i][j] = r[j, i]
    diag = transpose(_diagonal(r, 0), [nb] + list(range(nb))).reshape((n,) + tuple(batch) + (1,))
    xt = Array.empty((n,) + tuple(batch) + (k,), y.dtype)
    for i in range(n - 1, -1, -1):
        xi = divide(yt[i], diag[i])
        xt[i] = xi
        if i:  # every row's remainder; rows >= i are done, their values no longer read
            yt = subtract(yt, multiply(cols[i], xi))
    return transpose(xt, list(range(1, nb + 1)) + [0, nb + 1])


def solve(x1, x2, /) -> Array:
    """x with x1 x = x2 for the square matrices x1 (..., n, n): x2 (..., n, k), or (n,) one vector
    for every matrix (the standard's and numpy 2's rule); batch dimensions broadcast."""
    name = "solve"
    a = _square(x1, name)
    b = _check_float(x2, name, "x2", float64=True)
    if b.ndim == 0:
        raise np.linalg.LinAlgError(f"{name}: x2 is 0-dimensional; expected (..., n, k) or (n,)")
    vector = b.ndim == 1
    if vector:
        b = b.reshape((-1, 1))
    n, k = a.shape[-1], b.shape[-1]
    if b.shape[-2] != n:
        raise ValueError(f"{name}: x2 of shape {tuple(x2.shape)} does not match the {n}x{n} matrices "
                         f"of x1 (shape {tuple(a.shape)})")
    try:
        batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise ValueError(f"{name}: batch dimensions of x1 {tuple(a.shape)} and x2 {tuple(x2.shape)} "
                         "do not broadcast") from None
    dt = _common(a, b)
    a, b = asarray(a, dt), asarray(b, dt)
    if tuple(a.shape[:-2]) != batch:
        a = broadcast_to(a, batch + (n, n))
    if tuple(b.shape[:-2]) != batch:
        b = broadcast_to(b, batch + (n, k))
    if n == 0 or k == 0 or 0 in batch:
        out = Array.empty(batch + (n, k), dt)
    else:
        out = _solve_recorded(a, b)
    return out.reshape(batch + (n,)) if vector else out


@recipe()
def _solve_recorded(a: Array, b: Array) -> Array:
    """solve's dispatches on checked, broadcast operands of one dtype (4n + QR's of them: replayed
    for a repeated signature, primitives/recipes.py)."""
    q, r = qr(a)
    nb = a.ndim - 2
    return _back_substitute(r, matmul(transpose(q, list(range(nb)) + [nb + 1, nb]), b))  # Q^T b


def inv(x, /) -> Array:
    """The inverses of the square matrices in x (..., n, n): solve(x, I)."""
    a = _square(x, "inv")
    n = a.shape[-1]
    return solve(a, broadcast_to(eye(n, dtype=_real(a)), tuple(a.shape)))


def matrix_power(x, n, /) -> Array:
    """x (..., m, m) to the integer power n: the identity for n = 0, repeated squaring (vk.matmul,
    in x's dtype) for n > 0, and of inv(x) for n < 0."""
    name = "matrix_power"
    n = integer(n, name, "n")
    a = _square(x, name)
    m = a.shape[-1]
    if n == 0:
        return broadcast_to(eye(m, dtype=_real(a)), tuple(a.shape))
    base = inv(a) if n < 0 else asarray(a, _real(a))
    given = base
    n = abs(n)
    result = None
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return result.copy() if result is given else result  # a new array, never x itself
