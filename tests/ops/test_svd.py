"""vk.linalg.svd, svdvals, pinv, matrix_rank and matrix_norm's ord 2, -2, 'nuc' (ops/svd.py,
one-sided Jacobi) against numpy.linalg in float64."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

EPS = float(np.finfo(np.float32).eps)


def check_svd(x, full):
    a = x.astype(np.float64)
    m, n = a.shape[-2:]
    k = min(m, n)
    U, S, Vh = vk.linalg.svd(vk.asarray(x), full_matrices=full)
    want = np.linalg.svd(a, compute_uv=False)
    smax = max(want.max(), 1e-30)
    tol = 4 * max(m, n) * EPS
    assert U.shape == a.shape[:-2] + ((m, m) if full else (m, k))
    assert Vh.shape == a.shape[:-2] + ((n, n) if full else (k, n))
    assert S.shape == a.shape[:-2] + (k,) and S.dtype == vk.float32
    U, S, Vh = (t.numpy().astype(np.float64) for t in (U, S, Vh))
    assert np.isfinite(U).all() and np.isfinite(S).all() and np.isfinite(Vh).all()  # no poison
    assert np.all(np.diff(S, axis=-1) <= 0)
    np.testing.assert_allclose(S, want, rtol=0, atol=tol * smax)
    rec = (U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=0, atol=tol * smax)
    for q in (np.swapaxes(U, -1, -2) @ U, Vh @ np.swapaxes(Vh, -1, -2)):
        np.testing.assert_allclose(q, np.broadcast_to(np.eye(q.shape[-1]), q.shape), rtol=0, atol=tol)
    sv = vk.linalg.svdvals(vk.asarray(x))
    assert sv.shape == S.shape
    np.testing.assert_allclose(sv.numpy(), want, rtol=0, atol=tol * smax)


def _shapes(sg):
    sq = [(n, n) for n in sorted({1, 2, 3, 5, sg - 1, sg + 1})]
    return sq + [(1, 4), (4, 1), (7, 3), (3, 7), (sg + 3, 5), (5, 2 * sg + 1)]


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_svd_random(rng, sg, batch):
    for m, n in _shapes(sg):
        x = rng.standard_normal(batch + (m, n)).astype(np.float32) * rng.choice([1e-3, 1.0, 1e3])
        for full in (True, False):
            check_svd(x, full)


def test_svd_larger(rng):
    check_svd(rng.standard_normal((2, 64, 40)).astype(np.float32), False)
    check_svd(rng.standard_normal((33, 33)).astype(np.float32), True)


def low_rank(rng, batch, m, n, r):
    """U diag(s) V^T with r singular values in [1, 10] and the rest exactly 0 (before rounding)."""
    u, _ = np.linalg.qr(rng.standard_normal(batch + (m, m)))
    v, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    s = np.zeros(batch + (min(m, n),))
    s[..., :r] = rng.uniform(1, 10, batch + (r,))
    return ((u[..., :, :min(m, n)] * s[..., None, :]) @ np.swapaxes(v[..., :, :min(m, n)], -1, -2)).astype(np.float32)


def test_svd_rank_deficient_and_extreme(rng):
    for m, n, r in ((6, 6, 3), (9, 5, 2), (4, 8, 1), (5, 5, 0)):
        check_svd(low_rank(rng, (2,), m, n, r), True)
    check_svd(np.zeros((2, 3, 4), np.float32), True)               # U and V still orthogonal
    check_svd(rng.standard_normal((4, 3)).astype(np.float32) * 1e30, False)   # squares overflow float32
    check_svd(rng.standard_normal((3, 4)).astype(np.float32) * 1e-30, False)  # and underflow


def test_svd_nonfinite(rng):
    x = rng.standard_normal((3, 4, 3)).astype(np.float32)
    x[1, 2, 1], x[2, 0, 0] = np.nan, -np.inf
    U, S, Vh = vk.linalg.svd(vk.asarray(x))
    for t in (U, S, Vh):
        t = t.numpy()
        assert np.isnan(t[1:]).all() and np.isfinite(t[0]).all()
    assert np.isnan(vk.linalg.svdvals(vk.asarray(x)).numpy()[1:]).all()


def test_matrix_rank(rng):
    x = np.stack([low_rank(rng, (), 7, 5, r) for r in range(6)])
    got = vk.linalg.matrix_rank(vk.asarray(x))
    assert got.dtype == vk.int32 and got.shape == (6,)
    np.testing.assert_array_equal(got.numpy(), np.linalg.matrix_rank(x.astype(np.float64), rtol=7 * EPS))
    np.testing.assert_array_equal(got.numpy(), np.arange(6))
    # rtol: a float, or an array over the batch; singular values 1, 1e-2 and 1e-4
    d = np.diag(np.array([1.0, 1e-2, 1e-4], np.float32))
    xs = np.stack([d, d])
    np.testing.assert_array_equal(vk.linalg.matrix_rank(vk.asarray(xs), rtol=1e-3).numpy(), [2, 2])
    np.testing.assert_array_equal(vk.linalg.matrix_rank(vk.asarray(xs), rtol=vk.asarray(np.array([1e-1, 1e-5], np.float32))).numpy(), [1, 3])
    assert vk.linalg.matrix_rank(vk.zeros((2, 0, 3))).numpy().tolist() == [0, 0]


def test_pinv(rng):
    for m, n, r in ((5, 5, 5), (7, 4, 4), (4, 7, 4), (8, 6, 3), (3, 3, 0)):
        x = low_rank(rng, (2,), m, n, r)
        a = x.astype(np.float64)
        got = vk.linalg.pinv(vk.asarray(x))
        assert got.shape == (2, n, m) and got.dtype == vk.float32
        p = got.numpy().astype(np.float64)
        want = np.linalg.pinv(a, rtol=max(m, n) * EPS)
        np.testing.assert_allclose(p, want, rtol=0, atol=100 * max(m, n) * EPS * max(np.abs(want).max(), 1))
        np.testing.assert_allclose(a @ p @ a, a, rtol=0, atol=100 * max(m, n) * EPS * np.abs(a).max())
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(vk.linalg.pinv(vk.asarray(x), rtol=0.99).numpy(),
                               np.linalg.pinv(x.astype(np.float64), rtol=0.99), atol=1e-5)
    assert vk.linalg.pinv(vk.zeros((2, 0, 3))).shape == (2, 3, 0)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norm_singular_values(rng, ord):
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    want = np.linalg.matrix_norm(x.astype(np.float64), ord=ord)
    got = vk.linalg.matrix_norm(vk.asarray(x), ord=ord)
    assert got.shape == (3,)
    np.testing.assert_allclose(got.numpy(), want, rtol=40 * EPS)
    kd = vk.linalg.matrix_norm(vk.asarray(x), ord=ord, keepdims=True)
    assert kd.shape == (3, 1, 1)
    np.testing.assert_allclose(kd.numpy()[:, 0, 0], want, rtol=40 * EPS)
    xi = rng.integers(-5, 5, (4, 3)).astype(np.int32)                      # integers: as float32
    # (may be singular: the smallest singular value, ord -2, is then 0 to float32's rounding of the largest)
    np.testing.assert_allclose(vk.linalg.matrix_norm(vk.asarray(xi), ord=ord).numpy(),
                               np.linalg.matrix_norm(xi.astype(np.float64), ord=ord), rtol=40 * EPS,
                               atol=40 * EPS * np.linalg.norm(xi.astype(np.float64), 2))
    if ord == "nuc":
        assert vk.linalg.matrix_norm(vk.zeros((0, 3)), ord=ord).numpy() == 0
    else:
        with pytest.raises(ValueError, match="no value"):
            vk.linalg.matrix_norm(vk.zeros((0, 3)), ord=ord)


def test_svd_bad_inputs():
    v, i, sq = vk.ones(3), vk.ones((3, 3), dtype=vk.int32), vk.ones((2, 3, 3))
    with no_gpu_work():
        for f in (vk.linalg.svd, vk.linalg.svdvals, vk.linalg.pinv, vk.linalg.matrix_rank):
            with pytest.raises(np.linalg.LinAlgError, match="dimension"):
                f(v)
            with pytest.raises(TypeError, match="int32"):
                f(i)
        with pytest.raises(TypeError, match="full_matrices"):
            vk.linalg.svd(sq, full_matrices=None)
        with pytest.raises(ValueError, match="rtol"):
            vk.linalg.pinv(sq, rtol=np.ones(3, np.float32))
        with pytest.raises(TypeError, match="rtol"):
            vk.linalg.matrix_rank(sq, rtol=True)
        with pytest.raises(ValueError, match="ord"):
            vk.linalg.matrix_norm(sq, ord=3)


EPS64 = float(np.finfo(np.float64).eps)


def test_svdvals_float64(rng, sg):
    """float64 in, float64 out, at float64's accuracy: random (scaled far past float32's range),
    low-rank, repeated and graded singular values."""
    cases = [rng.standard_normal((2, m, n)) * scale for (m, n), scale in
             zip(_shapes(sg), [1.0, 1e-200, 1e200, 1.0, 1e-3, 1e3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])]
    u, _ = np.linalg.qr(rng.standard_normal((24, 24)))
    for s in (np.repeat([1.0, 2.0, 3.0], 8), np.logspace(0, -14, 24)):
        cases.append((u * s) @ u.T)
    cases.append(low_rank(rng, (2,), 9, 6, 3).astype(np.float64) * (1 + rng.standard_normal((2, 9, 6)) * 1e-3))
    for x in cases:
        got = vk.linalg.svdvals(vk.asarray(x, dtype=vk.float64))
        want = np.linalg.svd(x, compute_uv=False)
        assert got.dtype == vk.float64 and got.shape == want.shape
        got = got.numpy()
        assert np.all(np.diff(got, axis=-1) <= 0)
        np.testing.assert_allclose(got, want, rtol=0, atol=4 * max(x.shape[-2:]) * EPS64 * want.max())


def test_matrix_rank_and_norm_float64(rng):
    x = np.stack([low_rank(rng, (), 7, 5, r).astype(np.float64) for r in range(6)])
    x += np.where(x != 0, 1e-9, 0) * rng.standard_normal(x.shape)   # the float32 rounding's noise gone: a
    got = vk.linalg.matrix_rank(vk.asarray(x, dtype=vk.float64))      # float32 eps cut-off would miss it
    np.testing.assert_array_equal(got.numpy(), np.linalg.matrix_rank(x, rtol=7 * EPS64))
    d = np.diag([1.0, 1e-10, 1e-20])  # rank 2 at float64's default rtol, 1 at float32's
    assert int(vk.linalg.matrix_rank(vk.asarray(d, dtype=vk.float64)).numpy()) == 2
    y = rng.standard_normal((3, 5, 4))
    for ord in (2, -2, "nuc"):
        got = vk.linalg.matrix_norm(vk.asarray(y, dtype=vk.float64), ord=ord)
        assert got.dtype == vk.float64
        # (the smallest singular value, ord -2, to float64's rounding of the largest)
        np.testing.assert_allclose(got.numpy(), np.linalg.matrix_norm(y, ord=ord), rtol=40 * EPS64,
                                   atol=40 * EPS64 * np.linalg.matrix_norm(y, ord=2).max())


@pytest.mark.parametrize("shape", [(9, 6), (6, 9), (2, 17, 17)])
def test_svd_and_pinv_float64(rng, shape):
    """svd (both full_matrices) and pinv of float64 matrices at float64's accuracy, computed in it
    (U through the float64 QR); scaled far outside float32's range."""
    m, n = shape[-2:]
    k = min(m, n)
    a = rng.standard_normal(shape) * 10.0 ** rng.integers(-200, 200)
    tol = 200 * max(m, n) * EPS64
    norm = np.abs(np.linalg.svd(a, compute_uv=False)).max()
    for full in (True, False):
        U, S, Vh = vk.linalg.svd(vk.asarray(a, dtype=vk.float64), full_matrices=full)
        assert U.dtype == S.dtype == Vh.dtype == vk.float64
        U, S, Vh = U.numpy(), S.numpy(), Vh.numpy()
        assert U.shape[-1] == (m if full else k) and Vh.shape[-2] == (n if full else k)
        np.testing.assert_allclose(S, np.linalg.svd(a, compute_uv=False), rtol=0, atol=tol * norm)
        rebuilt = (U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :]
        assert np.abs(rebuilt - a).max() <= tol * norm
        for q in (U, np.swapaxes(Vh, -1, -2)):
            assert np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(q.shape[-1])).max() <= tol
    p = vk.linalg.pinv(vk.asarray(a, dtype=vk.float64))
    assert p.dtype == vk.float64
    want = np.linalg.pinv(a)
    np.testing.assert_allclose(p.numpy(), want, rtol=0, atol=tol * 100 * np.abs(want).max())


def test_svd_replays_its_recipe(rng):
    """A repeated svd / svdvals of one signature replays its recorded dispatches (the Jacobi
    sweeps, the sort, U's QR) on fresh data (primitives/recipes.py); full_matrices plans anew."""
    from vkbackend.primitives import recipes
    for i, full in enumerate((False, False, True, True)):
        before = recipes.stats()["captures"]
        a = rng.standard_normal((2, 40, 30)).astype(np.float32)
        u, s, vh = (x.numpy().astype(np.float64) for x in vk.linalg.svd(vk.asarray(a), full_matrices=full))
        sv = vk.linalg.svdvals(vk.asarray(a)).numpy()
        planned = recipes.stats()["captures"] - before
        assert planned == (2 if i == 0 else 1 if i == 2 else 0)  # svd's (per full_matrices), svdvals' once
        want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        np.testing.assert_allclose(s, want, atol=1e-5 * 40 * want.max())
        np.testing.assert_allclose(sv, want, atol=1e-5 * 40 * want.max())
        np.testing.assert_allclose((u[..., :30] * s[..., None, :]) @ vh[..., :30, :], a, atol=1e-5 * 40 * want.max())
        eye = np.broadcast_to(np.eye(u.shape[-1]), (2,) + (u.shape[-1],) * 2)
        np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye, atol=1e-5 * 40)
