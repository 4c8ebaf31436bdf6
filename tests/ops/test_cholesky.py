"""vk.linalg.cholesky (ops/cholesky.py) against numpy.linalg.cholesky in float64."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

EPS = float(np.finfo(np.float32).eps)


def spd(rng, shape):
    """A A^T + n I: symmetric positive definite, condition number below a few tens."""
    n = shape[-1]
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def _sizes(sg):
    return sorted({1, 2, 3, 5, sg - 1, sg, sg + 1, 2 * sg + 3})


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_cholesky(rng, sg, batch):
    for n in _sizes(sg):
        a = spd(rng, batch + (n, n))
        a64 = a.astype(np.float64)
        want = np.linalg.cholesky(a64)
        tol = 8 * n * EPS * np.sqrt(np.abs(a64).max())
        got = vk.linalg.cholesky(vk.asarray(a))
        assert got.shape == a.shape and got.dtype == vk.float32
        L = got.numpy()
        np.testing.assert_allclose(L, want, rtol=0, atol=tol)
        assert np.all(np.triu(L, 1) == 0)  # written zeros, not poison (VKBACKEND_POISON)
        np.testing.assert_allclose(L @ np.swapaxes(L, -1, -2), a64, rtol=0, atol=8 * n * EPS * np.abs(a64).max())
        U = vk.linalg.cholesky(vk.asarray(a), upper=True).numpy()
        np.testing.assert_allclose(U, np.swapaxes(want, -1, -2), rtol=0, atol=tol)
        assert np.all(np.tril(U, -1) == 0)


def test_cholesky_reads_the_lower_triangle(rng):
    a = spd(rng, (2, 6, 6))
    junk = a + np.triu(rng.standard_normal(a.shape).astype(np.float32) * 100, 1)  # upper triangle ignored
    np.testing.assert_array_equal(vk.linalg.cholesky(vk.asarray(junk)).numpy(),
                                  vk.linalg.cholesky(vk.asarray(a)).numpy())
    x = vk.asarray(junk)
    vk.linalg.cholesky(x)
    np.testing.assert_array_equal(x.numpy(), junk)  # input untouched


def test_cholesky_not_positive_definite(rng):
    """numpy raises LinAlgError; here the whole factor of that matrix is NaN, the others are right."""
    n = 7
    a = spd(rng, (4, n, n))
    a[1, 3, 3] = -a[1, 3, 3]                          # a negative pivot partway
    a[2] = np.diag(np.r_[np.ones(n - 1), -1.0])         # the last pivot negative
    a[3, 4, 2] = np.nan                                 # NaN in the lower triangle
    got = vk.linalg.cholesky(vk.asarray(a)).numpy()
    for b in (1, 2, 3):
        assert np.isnan(got[b]).all()
    for b in (1, 2):  # the reference agrees that these are not positive definite
        with pytest.raises(np.linalg.LinAlgError):
            np.linalg.cholesky(a[b].astype(np.float64))
    np.testing.assert_allclose(got[0], np.linalg.cholesky(a[0].astype(np.float64)), atol=8 * n * EPS * 10)
    assert np.isnan(vk.linalg.cholesky(vk.asarray(np.zeros((3, 3), np.float32)), upper=True).numpy()).all()


def test_cholesky_empty():
    assert vk.linalg.cholesky(vk.zeros((2, 0, 0))).shape == (2, 0, 0)
    assert vk.linalg.cholesky(vk.zeros((0, 3, 3))).shape == (0, 3, 3)


def test_cholesky_bad_inputs():
    rect, v, i, sq = vk.ones((3, 4)), vk.ones(3), vk.ones((3, 3), dtype=vk.int32), vk.ones((3, 3))
    with no_gpu_work():
        with pytest.raises(np.linalg.LinAlgError, match="square"):
            vk.linalg.cholesky(rect)
        with pytest.raises(np.linalg.LinAlgError, match="dimension"):
            vk.linalg.cholesky(v)
        with pytest.raises(TypeError, match="int32"):
            vk.linalg.cholesky(i)
        with pytest.raises(TypeError, match="upper"):
            vk.linalg.cholesky(sq, upper=1)


def test_cholesky_float64(rng, sg):
    """float64 in and out at float64's accuracy (a float32 factor would be 1e8 times off), the
    upper form, and NaN for a matrix that is not positive definite."""
    eps64 = float(np.finfo(np.float64).eps)
    for n in _sizes(sg):
        a = rng.standard_normal((3, n, n))
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        a[1] *= 1e-200  # far below float32's range
        want = np.linalg.cholesky(a)
        got = vk.linalg.cholesky(vk.asarray(a, dtype=vk.float64))
        assert got.dtype == vk.float64
        L = got.numpy()
        for b in range(3):
            np.testing.assert_allclose(L[b], want[b], rtol=0, atol=8 * n * eps64 * np.sqrt(np.abs(a[b]).max()))
        assert np.all(np.triu(L, 1) == 0)
        U = vk.linalg.cholesky(vk.asarray(a, dtype=vk.float64), upper=True).numpy()
        np.testing.assert_array_equal(U, np.swapaxes(L, -1, -2))
    a = np.eye(4)
    a[2, 2] = -1.0
    assert np.isnan(vk.linalg.cholesky(vk.asarray(a, dtype=vk.float64)).numpy()).all()


def test_cholesky_replays_its_recipe(rng):
    """A repeated cholesky of one signature replays its recorded dispatches on fresh data and work
    matrices (primitives/recipes.py); upper= plans anew."""
    from vkbackend.primitives import recipes
    for i, upper in enumerate((False, False, True, True)):
        before = recipes.stats()["captures"]
        g = rng.standard_normal((3, 30, 30))
        a = (g @ np.swapaxes(g, -1, -2) + 30 * np.eye(30)).astype(np.float32)
        got = vk.linalg.cholesky(vk.asarray(a), upper=upper).numpy()
        planned = recipes.stats()["captures"] - before  # with the work matrix's copy the first time
        assert planned >= 1 if i in (0, 2) else planned == 0
        want = np.linalg.cholesky(a.astype(np.float64))
        np.testing.assert_allclose(got, np.swapaxes(want, -1, -2) if upper else want, atol=2e-5 * 30)
