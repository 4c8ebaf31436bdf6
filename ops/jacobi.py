"""The Jacobi drivers of eigh (ops/eigen.py) and svd (ops/svd.py): rounds of parallel rotations
on the GPU (shaders/ops/jacobi.comp), recorded without a host sync.

Two-sided (symmetric eigenproblem): A := J^T A J, V := V J, one dispatch per round.
One-sided (Hestenes, singular values): the columns of A (m x n, m >= n) made orthogonal, two
dispatches per round (the pairs' dot products, then the rotations applied to A and V).
A round rotates the N/2 disjoint pairs of the round-robin schedule (N = n rounded up to even) in
every matrix of the batch at once; N - 1 rounds make a sweep that meets every pair once. There
is no convergence test (that would read the off-diagonal back to the host): a fixed number of
sweeps, measured in float32 against float64 numpy on random, clustered-spectrum and
ill-conditioned matrices (.prof-style measurement quoted at SWEEPS). Jacobi converges
quadratically once the off-diagonal is small, so a few sweeps more than the random case's cover
the others.
"""
from __future__ import annotations

import math

from vkbackend import dtypes, runtime
from vkbackend.array import Array
from vkbackend.primitives import launch
from vkbackend.primitives.construct import eye
from vkbackend.primitives.manipulation import broadcast_to
from vkbackend.primitives.launch import LoopBudgetError, collective_cost, workgroup_size

from . import grid


def sweeps(n: int, dt=dtypes.float32) -> int:
    """Sweeps for order n: SWEEPS for n <= 16, one more per doubling beyond; SWEEPS64_MORE more in
    float64."""
    more = SWEEPS64_MORE if dt == dtypes.float64 else 0
    return SWEEPS + more + max(0, (max(n, 1) - 1).bit_length() - 4)


# Measured on lavapipe (float32 against float64 numpy; off = the Frobenius norm of what is left off
# the diagonal): random symmetric matrices reach the rounding floor in 8 sweeps at n = 64 (6 at
# n = 16); three clusters of eigenvalues 1e-4 apart in 10 at n = 64, 1e-6 apart (about 8 ulps) in
# 12 (off 1.5e-7 of |A| ~ 8), exactly repeated ones (equal to the last bits after rounding to
# float32) reach 2.5e-5 in 12 and 3.4e-6 in 16 (the floor there is rounding noise inside each
# cluster). 10 + 1 per doubling past 16: 12 at n = 64, 14 at n = 256.
SWEEPS = 10
# float64 (lavapipe, eigh against numpy, max of eigenvalue error, residual |x V - V diag(w)| and
# V's orthogonality in n eps |A|): random matrices and clusters 1e-10 or 1e-14 apart are at the
# rounding floor (1-3) with 4 sweeps more than float32's at n <= 64; exactly repeated eigenvalues
# (split only by rounding) converge linearly, about 2x a sweep: at n = 16 1.7 after 12 more,
# n = 32 1.8 after 20 more, n = 64 4.6 after 20 more (22 after 16).
SWEEPS64_MORE = 20


def _types(dt, pairs: bool = False) -> dict:
    """jacobi.comp's defines for matrices of dtype dt (grid.real_defines); `pairs`: the SVD_PAIRS
    kernel, whose workgroup sums then take doubles."""
    d = grid.real_defines(dt)
    if d and pairs:
        d["WG_T64"] = "double"
        if runtime.get().device.has("arithmetic"):
            d["SG_T64"] = 1
    return d


def _order(n: int) -> int:
    return n + (n & 1)


def check_eigh(B: int, n: int) -> None:
    """LoopBudgetError before any GPU work (the largest launch)."""
    grid.check(B * n * n, workgroup_size())


def eigh_jacobi(x: Array, vecs: bool):
    """(A after the sweeps (B..., n, n): the eigenvalues on its diagonal, unsorted; V (B..., n, n)
    with the eigenvectors in its columns, or None) of the symmetric matrices whose lower triangles
    x (float32 or float64, contiguous) holds."""
    *batch, n, _ = x.shape
    B, nsq, dt = math.prod(batch), n * n, x.dtype
    defs = {"VECS": 1, **_types(dt)} if vecs else _types(dt)
    init = grid.kernel("jacobi.comp", {"EIGH_INIT": 1, **defs})
    rnd = grid.kernel("jacobi.comp", {"EIGH_ROUND": 1, **defs})
    half = B * nsq
    a = Array.empty((2 * half,), dt)       # the two ping-pong halves
    v = Array.empty((2 * half,), dt) if vecs else a
    cur = 0
    grid.over_items(init, [a.buffer, v.buffer, x.buffer], [x.offset, a.offset, 0, v.offset, n, 0, 0, half], half)
    N = _order(n)
    for _ in range(sweeps(n, dt) if n > 1 else 0):
        for r in range(N - 1):
            src, dst = cur * half, (1 - cur) * half
            grid.over_items(rnd, [a.buffer, v.buffer],
                            [a.offset + src, a.offset + dst, v.offset + src, v.offset + dst, n, N, r, half], half)
            cur = 1 - cur
    shape = tuple(batch) + (n, n)
    out_a = Array(a._storage, shape, dt, a.offset + cur * half)
    out_v = Array(v._storage, shape, dt, v.offset + cur * half) if vecs else None
    return out_a, out_v


def _pairs_wg(m: int) -> int:
    """The SVD_PAIRS workgroup: launch's 1-D size, larger where the row loop (m / wg trips) and the
    three reductions would not fit the loop budget; LoopBudgetError where none fits."""
    budget = launch.loop_budget()
    wg = workgroup_size()
    if budget is None:
        return wg
    dev = runtime.get().device
    while wg <= dev.max_workgroup_invocations:
        if -(-m // wg) + 1 + 3 * collective_cost(wg) <= budget:
            return wg
        wg *= 2
    raise LoopBudgetError(f"svd: sums over {m} rows do not fit the device's loop budget of {budget} "
                          f"iterations per invocation with any workgroup size up to {dev.max_workgroup_invocations}")


def check_svd(B: int, m: int, n: int, vecs: bool) -> None:
    """LoopBudgetError before any GPU work."""
    _pairs_wg(m)
    grid.check(B * (m + (n if vecs else 0)) * (_order(n) // 2), workgroup_size())


def svd_jacobi(a: Array, vecs: bool):
    """(a, V): the columns of a (B..., m, n), m >= n, a fresh contiguous float32 or float64 array,
    rotated in place to be orthogonal (their norms are the singular values, unsorted); V (B..., n, n)
    with (a before) V = (a after), or None."""
    *batch, m, n = a.shape
    B, dt = math.prod(batch), a.dtype
    v = None
    if vecs:
        v = broadcast_to(eye(n, dtype=dt), tuple(batch) + (n, n)).copy()
    N = _order(n)
    H = N // 2
    cs = Array.empty((max(1, B * 2 * H),), dt)
    wg = _pairs_wg(m)
    pairs = runtime.get().kernel("ops/jacobi.comp", {"SVD_PAIRS": 1, **_types(dt, pairs=True)}, wg)
    apply = grid.kernel("jacobi.comp", {"SVD_APPLY": 1, **({"VECS": 1} if vecs else {}), **_types(dt)})
    vb = v if vecs else a
    rows = m + (n if vecs else 0)
    zmax = runtime.get().device.max_workgroup_count[2]
    for _ in range(sweeps(n, dt) if n > 1 else 0):
        for r in range(N - 1):
            for b0 in range(0, B, zmax):
                push = [a.offset + b0 * m * n, m * n, 0, cs.offset + b0 * 2 * H, 2 * H, m, n, N, r, 0]
                pairs([a.buffer, vb.buffer, cs.buffer], push, (H, 1, min(zmax, B - b0)))
            grid.over_items(apply, [a.buffer, vb.buffer, cs.buffer],
                            [a.offset, m * n, vb.offset, cs.offset, 2 * H, m, n, N, r, B * rows * H], B * rows * H)
    return a, v
