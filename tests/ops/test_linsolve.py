"""vk.linalg.det, slogdet, solve, inv and matrix_power (ops/linsolve.py, through QR) against
numpy.linalg in float64."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

EPS = float(np.finfo(np.float32).eps)


def well_conditioned(rng, shape):
    """Random matrices with condition number below ~10: Q (I + noise/4) with Q orthogonal."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    noise = rng.standard_normal(shape) / (4 * np.sqrt(n))
    return (q @ (np.eye(n) + noise)).astype(np.float32)


def _sizes(sg):
    return [1, 2, 3, sg - 1, sg, sg + 1, 2 * sg + 3]


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_det_slogdet(rng, sg, batch):
    for n in _sizes(sg):
        a = well_conditioned(rng, batch + (n, n)) * rng.choice([0.5, 2.0])
        a64 = a.astype(np.float64)
        got = vk.linalg.det(vk.asarray(a))
        assert got.shape == batch and got.dtype == vk.float32
        want = np.linalg.det(a64)
        np.testing.assert_allclose(got.numpy(), want, rtol=8 * n * EPS * 10, atol=0)
        s = vk.linalg.slogdet(vk.asarray(a))
        ws, wl = np.linalg.slogdet(a64)
        np.testing.assert_array_equal(s.sign.numpy(), ws)
        np.testing.assert_allclose(s.logabsdet.numpy(), wl, rtol=0, atol=8 * n * EPS * 10)
        assert s[0] is s.sign and s[1] is s.logabsdet


def test_det_random_signs(rng):
    """Plain random matrices (both signs of det, reflector counts of every parity)."""
    a = rng.standard_normal((64, 5, 5)).astype(np.float32)
    a64 = a.astype(np.float64)
    got = vk.linalg.det(vk.asarray(a)).numpy()
    want = np.linalg.det(a64)
    cond = np.linalg.cond(a64)
    np.testing.assert_array_less(np.abs(got - want), 50 * EPS * cond * np.abs(want))
    sign = vk.linalg.slogdet(vk.asarray(a)).sign.numpy()
    np.testing.assert_array_equal(sign, np.sign(want))


def test_det_special():
    z = vk.linalg.det(vk.zeros((2, 0, 0)))
    np.testing.assert_array_equal(z.numpy(), np.ones(2, np.float32))  # numpy: det of 0x0 is 1
    assert vk.linalg.det(vk.zeros((0, 3, 3))).shape == (0,)
    sing = np.array([[1, 2], [2, 4]], np.float32)  # exactly singular: R has an exact zero here
    s = vk.linalg.slogdet(vk.asarray(np.array([[0, 0], [0, 1]], np.float32)))
    assert s.sign.numpy() == 0 and s.logabsdet.numpy() == -np.inf
    assert abs(vk.linalg.det(vk.asarray(sing)).numpy()) <= 8 * EPS * 5
    e = np.diag(np.array([2.0, -3.0, 0.5], np.float32))  # diagonal: det exact
    assert vk.linalg.det(vk.asarray(e)).numpy() == np.float32(-3.0)


def backward_error(a, x, b):
    a, x, b = (np.asarray(v, np.float64) for v in (a, x, b))
    r = a @ x - b
    return np.linalg.norm(r) / (np.linalg.norm(a) * np.linalg.norm(x) + np.linalg.norm(b))


@pytest.mark.parametrize("batch", [(), (3,)])
def test_solve(rng, sg, batch):
    for n in _sizes(sg):
        for k in (1, 3, sg + 1):
            a = well_conditioned(rng, batch + (n, n))
            b = rng.standard_normal(batch + (n, k)).astype(np.float32)
            x = vk.linalg.solve(vk.asarray(a), vk.asarray(b))
            assert x.shape == batch + (n, k) and x.dtype == vk.float32
            want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
            np.testing.assert_allclose(x.numpy(), want, rtol=0, atol=40 * n * EPS * np.abs(want).max())
            assert backward_error(a, x.numpy(), b) <= 8 * n * EPS


def test_solve_ill_conditioned_backward_stable(rng):
    """QR is backward stable: the residual stays at rounding level even where x is not accurate."""
    n = 12
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (u @ np.diag(np.logspace(0, -5, n)) @ v.T).astype(np.float32)
    b = rng.standard_normal((n, 2)).astype(np.float32)
    x = vk.linalg.solve(vk.asarray(a), vk.asarray(b)).numpy()
    assert backward_error(a, x, b) <= 8 * n * EPS


def test_solve_vector_and_broadcast(rng):
    a = well_conditioned(rng, (2, 1, 4, 4))
    b = rng.standard_normal((3, 4, 2)).astype(np.float32)
    got = vk.linalg.solve(vk.asarray(a), vk.asarray(b))
    want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(got.numpy(), want, atol=200 * EPS * np.abs(want).max())
    v = rng.standard_normal(4).astype(np.float32)  # x2 1-D: one vector for every matrix
    got = vk.linalg.solve(vk.asarray(a), v)
    want = np.linalg.solve(a.astype(np.float64), v.astype(np.float64))
    assert got.shape == want.shape == (2, 1, 4)
    np.testing.assert_allclose(got.numpy(), want, atol=200 * EPS * np.abs(want).max())
    assert vk.linalg.solve(vk.zeros((2, 0, 0)), vk.zeros((2, 0, 3))).shape == (2, 0, 3)


def test_inv_and_matrix_power(rng, sg):
    for n in (1, 4, sg + 1):
        a = well_conditioned(rng, (2, n, n))
        a64 = a.astype(np.float64)
        got = vk.linalg.inv(vk.asarray(a)).numpy()
        want = np.linalg.inv(a64)
        np.testing.assert_allclose(got, want, atol=40 * n * EPS * np.abs(want).max())
        for p in (0, 1, 2, 3, 6, -1, -3):
            got = vk.linalg.matrix_power(vk.asarray(a), p)
            want = np.linalg.matrix_power(a64, p)
            assert got.shape == a.shape and got.dtype == vk.float32
            np.testing.assert_allclose(got.numpy(), want, atol=60 * (abs(p) + 1) * n * EPS * np.abs(want).max())
    x = vk.asarray(well_conditioned(rng, (3, 3)))
    assert vk.linalg.matrix_power(x, 1) is not x  # a new array


def test_linsolve_bad_inputs():
    sq, rect, i, v = vk.ones((3, 3)), vk.ones((3, 4)), vk.ones((3, 3), dtype=vk.int32), vk.ones(3)
    b42, a233, b431 = vk.ones((4, 2)), vk.ones((2, 3, 3)), vk.ones((4, 3, 1))
    with no_gpu_work():
        for f in (vk.linalg.det, vk.linalg.slogdet, vk.linalg.inv):
            with pytest.raises(np.linalg.LinAlgError, match="square"):
                f(rect)
            with pytest.raises(TypeError, match="int32"):
                f(i)
            with pytest.raises(np.linalg.LinAlgError, match="dimension"):
                f(v)
        with pytest.raises(ValueError, match="does not match"):
            vk.linalg.solve(sq, b42)
        with pytest.raises(ValueError, match="broadcast"):
            vk.linalg.solve(a233, b431)
        with pytest.raises(np.linalg.LinAlgError, match="0-dimensional"):
            vk.linalg.solve(sq, 1.0)
        with pytest.raises(TypeError, match="integer"):
            vk.linalg.matrix_power(sq, 1.5)
        with pytest.raises(TypeError, match="integer"):
            vk.linalg.matrix_power(sq, True)
        with pytest.raises(np.linalg.LinAlgError, match="square"):
            vk.linalg.matrix_power(rect, 2)


EPS64 = float(np.finfo(np.float64).eps)


def test_float64_computed_in_float64(rng, sg):
    """det, slogdet, solve, inv and matrix_power of float64 matrices return float64 at float64's
    accuracy (float32 arithmetic anywhere misses these bounds by about 1e8), over a batch and the
    subgroup's sizes; the matrices are scaled far outside float32's range."""
    f64 = lambda x: vk.asarray(x, dtype=vk.float64)  # noqa: E731
    for n in (1, sg - 1, sg + 1, 40):
        scale = 10.0 ** rng.integers(-60, 60)
        a = well_conditioned(rng, (2, n, n)).astype(np.float64) + rng.standard_normal((2, n, n)) * 1e-9
        b = rng.standard_normal((2, n, 3))
        tol = 200 * n * EPS64
        d = vk.linalg.det(f64(a * scale))
        assert d.dtype == vk.float64
        want = np.linalg.det(a) * scale ** n if abs(np.log10(scale)) * n < 300 else None
        if want is not None:
            np.testing.assert_allclose(d.numpy(), want, rtol=tol)
        s = vk.linalg.slogdet(f64(a * scale))
        ws, wl = np.linalg.slogdet(a)
        assert s.sign.dtype == s.logabsdet.dtype == vk.float64
        np.testing.assert_array_equal(s.sign.numpy(), ws)
        np.testing.assert_allclose(s.logabsdet.numpy(), wl + n * np.log(scale), rtol=0,
                                   atol=tol * (1 + abs(n * np.log(scale))))
        x = vk.linalg.solve(f64(a * scale), f64(b))
        assert x.dtype == vk.float64
        np.testing.assert_allclose(x.numpy() * scale, np.linalg.solve(a, b), atol=tol * 10)
        x = vk.linalg.solve(f64(a), b[0, :, 0].astype(np.float32))  # float32 b: computed in float64
        assert x.dtype == vk.float64
        np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b[0, :, 0].astype(np.float32)), atol=tol * 10)
        inv = np.linalg.inv(a)
        got = vk.linalg.inv(f64(a))
        assert got.dtype == vk.float64
        np.testing.assert_allclose(got.numpy(), inv, atol=tol * 10 * np.abs(inv).max())
        for p in (2, -3):
            got = vk.linalg.matrix_power(f64(a), p)
            want = np.linalg.matrix_power(a, p)
            assert got.dtype == vk.float64
            np.testing.assert_allclose(got.numpy(), want, atol=tol * 30 * np.abs(want).max())


def test_solve_and_inv_replay_their_recipe(rng):
    """A repeated solve / inv of one signature replays its recorded dispatches (QR, Q^T b, the
    back substitution) on fresh data and buffers (primitives/recipes.py)."""
    from vkbackend.primitives import recipes
    for i in range(3):
        before = recipes.stats()["captures"]
        a = (rng.standard_normal((2, 40, 40)) + 8 * np.eye(40)).astype(np.float32)
        b = rng.standard_normal((2, 40, 3)).astype(np.float32)
        x = vk.linalg.solve(vk.asarray(a), vk.asarray(b)).numpy()
        ai = vk.linalg.inv(vk.asarray(a)).numpy()
        assert recipes.stats()["captures"] - before == (2 if i == 0 else 0)  # solve's and inv's once
        a64 = a.astype(np.float64)
        np.testing.assert_allclose(x, np.linalg.solve(a64, b.astype(np.float64)), atol=2e-5)
        np.testing.assert_allclose(ai, np.linalg.inv(a64), atol=2e-5)
