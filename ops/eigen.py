"""vk.linalg.eigh and eigvalsh: eigenvalues (ascending, as numpy) and eigenvectors of symmetric
matrices, float32 or float64, on the GPU by cyclic Jacobi with the parallel round-robin ordering
(ops/jacobi.py, shaders/ops/jacobi.comp), then a sort (primitives/sort.py) and the matching
permutation of the eigenvectors' columns. Recorded without a host sync.

    w, V = vk.linalg.eigh(x)     # x (..., n, n): w (..., n), V (..., n, n), x V = V diag(w)
    w = vk.linalg.eigvalsh(x)

Only the lower triangle of x is read (numpy's UPLO='L'; the array API assumes x symmetric).
Jacobi computes small eigenvalues to high relative accuracy and eigenvectors orthogonal to
rounding. Its cost: sweeps(n) (10 to 14 for n up to 256) of n - 1 rounds, each one dispatch over
the batch reading and writing A and V once: O(n^3) memory traffic per sweep; suited to the small
and medium matrices of the array API, and to large batches of them.

A matrix whose lower triangle holds NaN or inf gets NaN eigenvalues and eigenvectors (numpy may
raise LinAlgError). float32 or float64 (computed in it, with more sweeps: jacobi.SWEEPS64_MORE);
every check comes before any GPU work.
"""
from __future__ import annotations

import math
from collections import namedtuple

from vkbackend.array import Array
from vkbackend.primitives.creation import asarray
from vkbackend.primitives.diagonal import _diagonal
from vkbackend.primitives.elementwise import isfinite, logical_not, where
from vkbackend.primitives.indexing import take_along_axis
from vkbackend.primitives.manipulation import tril
from vkbackend.primitives.recipes import recipe
from vkbackend.primitives.reduce import any as _any
from vkbackend.primitives.sort import argsort, sort

from . import jacobi
from .linsolve import _square
from .qr import _real

__all__ = ["eigh", "eigvalsh", "EighResult"]

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EighResult.__doc__ = "eigh's result: eigenvalues (..., n) ascending, eigenvectors (..., n, n) in columns."


def _nonfinite(a: Array) -> Array:
    """(...,) True where the lower triangle of a matrix holds NaN or inf."""
    return _any(logical_not(isfinite(tril(a))), axis=(-2, -1))


def _solve(x, name: str, vecs: bool):
    a = _square(x, name)
    dt = _real(a)
    *batch, n, _ = a.shape
    batch = tuple(batch)
    if math.prod(batch) == 0 or n == 0:
        return Array.empty(batch + (n,), dt), Array.empty(batch + (n, n), dt)
    jacobi.check_eigh(math.prod(batch), n)  # LoopBudgetError before any GPU work
    out = _eigh_recorded(asarray(a, dt), vecs)
    return out if vecs else (out, None)


@recipe()
def _eigh_recorded(a: Array, vecs: bool):
    """eigh's dispatches on a checked array (its Jacobi rounds, the sort): replayed for a repeated
    signature (primitives/recipes.py). (w, v), or w alone without vecs."""
    *batch, n, _ = a.shape
    batch = tuple(batch)
    d, v = jacobi.eigh_jacobi(a, vecs)
    w = _diagonal(d, 0)
    bad = _nonfinite(a)
    if not vecs:
        return where(bad.reshape(batch + (1,)), float("nan"), sort(w, axis=-1))
    order = argsort(w, axis=-1)
    w = take_along_axis(w, order, axis=-1)
    v = take_along_axis(v, order.reshape(batch + (1, n)), axis=-1)
    return (where(bad.reshape(batch + (1,)), float("nan"), w),
            where(bad.reshape(batch + (1, 1)), float("nan"), v))


def eigh(x, /) -> EighResult:
    """The array API's (and numpy's) eigh for float32 or float64 x (..., n, n), symmetric (its lower
    triangle read): EighResult(eigenvalues (..., n) ascending, eigenvectors (..., n, n), column j for
    eigenvalue j)."""
    return EighResult(*_solve(x, "eigh", True))


def eigvalsh(x, /) -> Array:
    """The eigenvalues (..., n), ascending, of the symmetric float32 or float64 matrices x (..., n, n)."""
    return _solve(x, "eigvalsh", False)[0]
