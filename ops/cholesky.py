"""vk.linalg.cholesky: the Cholesky factor of symmetric positive-definite matrices, on the GPU.

    L = vk.linalg.cholesky(x)              # x = L L^T, L lower triangular, (..., n, n)
    U = vk.linalg.cholesky(x, upper=True)  # x = U^T U, U = L^T

The outer-product (right-looking) form, shaders/ops/cholesky.comp: for each pivot j one dispatch
updates the trailing lower triangle of every matrix of the batch, W[i][k] -= W[i][j] W[k][j] /
W[j][j]; a last one writes L[i][k] = W[i][k] / sqrt(W[k][k]). n + 1 dispatches (and a copy),
each over the whole batch, recorded without a host sync. Only the lower triangle of x is read, as
numpy's (LAPACK's UPLO='L').

Not positive definite (a pivot <= 0 or NaN): numpy raises LinAlgError, which would need a host
sync; here every element of that matrix's factor is NaN (the other matrices of the batch are
unaffected). float32 or float64 (computed in it: lib/math64.glsl's correctly rounded division and
sqrt); every check comes before any GPU work.
"""
from __future__ import annotations

import math

from vkbackend.array import Array
from vkbackend.primitives.creation import asarray
from vkbackend.primitives.launch import workgroup_size
from vkbackend.primitives.recipes import recipe

from . import grid
from .linsolve import _square
from .qr import _real

__all__ = ["cholesky"]


def cholesky(x, /, *, upper: bool = False) -> Array:
    """The array API's (and numpy's) cholesky for float32 or float64 x (..., n, n): lower L with
    x = L L^T, or upper=True U = L^T. NaN throughout a matrix that is not positive definite (module
    docstring)."""
    name = "cholesky"
    if not isinstance(upper, bool):
        raise TypeError(f"{name}: upper must be a bool, got {upper!r}")
    a = _square(x, name)
    dt = _real(a)
    *batch, n, _ = a.shape
    batch = tuple(batch)
    B = math.prod(batch)
    if B == 0 or n == 0:
        return Array.empty(batch + (n, n), dt)
    grid.check(B * n * n, workgroup_size())  # the finish's launch: LoopBudgetError before any GPU work
    w = asarray(a, dt)                       # the work matrix, overwritten: never x itself
    if w is a:
        w = w.copy()
    return _cholesky_recorded(w, upper)


@recipe()
def _cholesky_recorded(w: Array, upper: bool) -> Array:
    """cholesky's dispatches over the work matrix w (overwritten): a pivot each, then the finish;
    replayed for a repeated signature (primitives/recipes.py)."""
    *batch, n, _ = w.shape
    batch, B = tuple(batch), math.prod(batch)
    types = grid.real_defines(w.dtype)
    step = grid.kernel("cholesky.comp", {"STEP": 1, **types})
    finish = grid.kernel("cholesky.comp", {"FINISH": 1, **({"UPPER": 1} if upper else {}), **types})
    out = Array.empty(batch + (n, n), w.dtype)
    for j in range(n - 1):
        t = n - 1 - j
        grid.over_items(step, [w.buffer, out.buffer], [w.offset, n, j, B * t * t, out.offset], B * t * t)
    grid.over_items(finish, [w.buffer, out.buffer], [w.offset, n, 0, B * n * n, out.offset], B * n * n)
    return out
