"""vk.linalg.eigh and eigvalsh (ops/eigen.py, Jacobi) against numpy.linalg in float64: eigenvalues,
the residual x V - V diag(w), V's orthogonality, on random, clustered and ill-conditioned spectra."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

EPS = float(np.finfo(np.float32).eps)


def sym_lower(a):
    """The symmetric matrix numpy's eigh sees in a (its lower triangle), float64."""
    a = np.tril(np.asarray(a, np.float64))
    return a + np.swapaxes(np.tril(a, -1), -1, -2)


def with_spectrum(rng, batch, w):
    """Q diag(w) Q^T for random orthogonal Q, float32 (w: (..., n))."""
    n = w.shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return (q @ (w[..., :, None] * np.swapaxes(q, -1, -2))).astype(np.float32)


def check_eigh(x, w, v):
    a = sym_lower(x)
    n = a.shape[-1]
    want = np.linalg.eigvalsh(a)
    scale = max(np.abs(want).max(), 1e-30)
    assert w.shape == a.shape[:-1] and w.dtype == vk.float32
    w = w.numpy()
    assert np.all(np.isfinite(w))                            # no poison left (VKBACKEND_POISON)
    assert np.all(np.diff(w, axis=-1) >= 0)                  # ascending
    np.testing.assert_allclose(w, want, rtol=0, atol=4 * n * EPS * scale)
    if v is None:
        return
    assert v.shape == a.shape and v.dtype == vk.float32
    v = v.numpy().astype(np.float64)
    resid = a @ v - v * w[..., None, :]
    # The vectors are products of ~10 sweeps of float32 rotations: about an ulp of orthogonality
    # each. Measured at n = 24 with clustered and repeated eigenvalues (test_eigh_clustered_and_
    # repeated's matrices, 1200 draws, lavapipe): max |resid| / (n eps scale) 11.8, above 4 in 2.7 %
    # of the draws (more sweeps do not lower it). A wrong vector is off by O(scale).
    assert np.abs(resid).max() <= 16 * n * EPS * scale
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape),
                               rtol=0, atol=4 * n * EPS)


def _sizes(sg):
    return sorted({1, 2, 3, 4, 5, sg - 1, sg, sg + 1, 2 * sg + 3})


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_eigh_random(rng, sg, batch):
    for n in _sizes(sg):
        x = rng.standard_normal(batch + (n, n)).astype(np.float32)  # not symmetric: the lower triangle counts
        r = vk.linalg.eigh(vk.asarray(x))
        assert r[0] is r.eigenvalues and r[1] is r.eigenvectors
        check_eigh(x, r.eigenvalues, r.eigenvectors)
        check_eigh(x, vk.linalg.eigvalsh(vk.asarray(x)), None)


def test_eigh_spd_and_larger(rng):
    for n in (32, 64):
        a = rng.standard_normal((2, n, n))
        x = (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)
        check_eigh(x, *vk.linalg.eigh(vk.asarray(x)))


@pytest.mark.parametrize("n", [7, 24])
def test_eigh_clustered_and_repeated(rng, n):
    """Three clusters of eigenvalues, 1e-6 apart within each (a few ulps), and exactly repeated ones."""
    centers = rng.standard_normal((3, 3))
    w = np.repeat(centers, -(-n // 3), axis=1)[:, :n]
    w[0] += 1e-6 * rng.standard_normal(n)
    w[2] = np.r_[np.full(n - 2, 2.0), -1.0, 0.0]            # a multiple eigenvalue and a zero
    x = with_spectrum(rng, (3,), w)
    check_eigh(x, *vk.linalg.eigh(vk.asarray(x)))
    x = np.broadcast_to(np.eye(n, dtype=np.float32) * 3, (2, n, n)).copy()   # already diagonal
    w, v = vk.linalg.eigh(vk.asarray(x))
    np.testing.assert_array_equal(w.numpy(), np.full((2, n), 3.0, np.float32))
    np.testing.assert_array_equal(v.numpy(), x / 3)


def test_eigh_ill_conditioned(rng):
    """Eigenvalues from 1 down to 1e-6 of either sign: absolute accuracy of order eps |A| for all."""
    n = 20
    w = np.logspace(0, -6, n) * rng.choice([-1.0, 1.0], (2, n))
    x = with_spectrum(rng, (2,), w)
    check_eigh(x, *vk.linalg.eigh(vk.asarray(x)))


def test_eigh_nonfinite(rng):
    x = rng.standard_normal((3, 4, 4)).astype(np.float32)
    x[1, 2, 1] = np.nan
    x[2, 3, 0] = np.inf
    x[0, 0, 3] = np.nan                                       # upper triangle: not read
    w, v = vk.linalg.eigh(vk.asarray(x))
    w, v = w.numpy(), v.numpy()
    assert np.isnan(w[1:]).all() and np.isnan(v[1:]).all()
    np.testing.assert_allclose(w[0], np.linalg.eigvalsh(sym_lower(x[0])), atol=16 * EPS * 4)
    assert np.isnan(vk.linalg.eigvalsh(vk.asarray(x)).numpy()[1:]).all()


def test_eigh_empty():
    w, v = vk.linalg.eigh(vk.zeros((2, 0, 0)))
    assert w.shape == (2, 0) and v.shape == (2, 0, 0)
    assert vk.linalg.eigvalsh(vk.zeros((0, 3, 3))).shape == (0, 3)


def test_eigh_bad_inputs():
    rect, v, i = vk.ones((3, 4)), vk.ones(3), vk.ones((3, 3), dtype=vk.int32)
    with no_gpu_work():
        for f in (vk.linalg.eigh, vk.linalg.eigvalsh):
            with pytest.raises(np.linalg.LinAlgError, match="square"):
                f(rect)
            with pytest.raises(np.linalg.LinAlgError, match="dimension"):
                f(v)
            with pytest.raises(TypeError, match="int32"):
                f(i)


EPS64 = float(np.finfo(np.float64).eps)


def check_eigh64(x, w, v):
    n = x.shape[-1]
    a = sym_lower(x)
    want = np.linalg.eigvalsh(a)
    scale = max(np.abs(want).max(), 1e-300)
    assert w.dtype == vk.float64 and w.shape == a.shape[:-1]
    w = w.numpy()
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose(w, want, rtol=0, atol=4 * n * EPS64 * scale)
    assert v.dtype == vk.float64
    v = v.numpy()
    assert np.abs(a @ v - v * w[..., None, :]).max() <= 8 * n * EPS64 * scale
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape), rtol=0, atol=4 * n * EPS64)


def test_eigh_float64(rng, sg):
    """float64 in and out at float64's accuracy: random, clustered 1e-14 apart (a few ulps), exactly
    repeated (split only by rounding), graded from 1 to 1e-12 and scaled past float32's range."""
    for n in sorted({1, 2, 5, sg + 1, 24}):
        x = rng.standard_normal((2, n, n))
        check_eigh64(x, *vk.linalg.eigh(vk.asarray(x, dtype=vk.float64)))
        w = vk.linalg.eigvalsh(vk.asarray(x * 1e200, dtype=vk.float64))
        np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(sym_lower(x * 1e200)), rtol=0,
                                   atol=4 * n * EPS64 * 1e200 * np.abs(np.linalg.eigvalsh(sym_lower(x))).max())
    n = 24
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    centers = np.repeat(rng.standard_normal(3), n // 3)
    for w in (centers + 1e-14 * rng.standard_normal(n), centers, np.logspace(0, -12, n) * rng.choice([-1.0, 1.0], n)):
        x = (q * w) @ q.T
        check_eigh64(x, *vk.linalg.eigh(vk.asarray(x, dtype=vk.float64)))


def test_eigh_replays_its_recipe(rng):
    """A repeated eigh / eigvalsh of one signature replays its recorded dispatches (the Jacobi
    rounds, the sort) on fresh data (primitives/recipes.py)."""
    from vkbackend.primitives import recipes
    for i in range(3):
        before = recipes.stats()["captures"]
        g = rng.standard_normal((2, 24, 24))
        a = (g + np.swapaxes(g, -1, -2)).astype(np.float32)
        w, v = vk.linalg.eigh(vk.asarray(a))
        wv = vk.linalg.eigvalsh(vk.asarray(a)).numpy()
        assert recipes.stats()["captures"] - before == (2 if i == 0 else 0)
        want = np.linalg.eigvalsh(a.astype(np.float64))
        scale = np.abs(want).max()
        np.testing.assert_allclose(w.numpy(), want, atol=1e-5 * 24 * scale)
        np.testing.assert_allclose(wv, want, atol=1e-5 * 24 * scale)
        v = v.numpy().astype(np.float64)
        np.testing.assert_allclose(a @ v, v * w.numpy()[..., None, :], atol=1e-4 * 24 * scale)
