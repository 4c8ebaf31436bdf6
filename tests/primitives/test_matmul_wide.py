"""matmul, tensordot, vecdot, outer, cross, trace and the norms in the WIDE dtypes (int8, uint8,
int16, uint16, int64, uint64, float64) against numpy: integers exactly (products and sums wrap
modulo 2**bits; the reference accumulates in uint64, which wraps modulo 2**64, a multiple of every
width), float64 within k * eps of a long-double reference. Fresh random data over each integer
type's whole range, shapes around 4/8/16/32 and broadcast batches, K == 0, the summed path in
small chunks; outputs are poisoned (conftest)."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from tests.conftest import no_gpu_work
from vkbackend.primitives import matmul as mm

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64]
WIDE = INTS + [np.float64]
EPS64 = float(np.finfo(np.float64).eps)
SHAPES = [((7,), (7,)), ((5,), (5, 3)), ((4, 6), (6,)), ((1, 1), (1, 1)), ((4, 8), (8, 16)),
          ((15, 17), (17, 33)), ((33, 31), (31, 9)), ((2, 1, 5, 7), (3, 7, 4)), ((6,), (2, 6, 3)),
          ((4, 0), (0, 3)), ((0, 5), (5, 3))]


def data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, shape))).astype(dtype)


def ref_int(op, a, b, dtype):
    """op on uint64 copies (wrapping modulo 2**64), cast to dtype (modulo 2**bits)."""
    with np.errstate(over="ignore"):
        return op(a.astype(np.uint64), b.astype(np.uint64)).astype(dtype)


def check(got, a, b, op, dtype):
    """got (a vk.Array) == op(a, b) in dtype: exactly for integers, float64 within the bound."""
    out = got.numpy()
    assert got.dtype == dtype and out.dtype == dtype, (got.dtype, out.dtype, dtype)
    if np.dtype(dtype).kind in "iu":
        want = ref_int(op, a, b, dtype)
        assert out.shape == want.shape
        np.testing.assert_array_equal(out, want)
        return
    la, lb = a.astype(np.longdouble), b.astype(np.longdouble)
    want = op(la, lb)
    bound = 2 * max(1, a.shape[-1] if a.ndim else 1) * EPS64 * op(np.abs(la), np.abs(lb)) + 1e-300
    assert out.shape == want.shape
    assert (np.abs(out - want) <= bound).all(), np.max(np.abs(out - want) / bound)


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("shapes", SHAPES)
def test_matmul(rng, dtype, shapes):
    a, b = data(rng, shapes[0], dtype), data(rng, shapes[1], dtype)
    check(vk.asarray(a, dtype=dtype) @ vk.asarray(b, dtype=dtype), a, b, np.matmul, dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float64])
@pytest.mark.parametrize("chunk", [1, 7, 40])
def test_matmul_in_chunks(rng, monkeypatch, dtype, chunk):
    """Row blocks and K slices of the summed path, the slices added (float64's on a device too
    small for its tile)."""
    monkeypatch.setattr(mm, "INT_CHUNK", chunk)
    monkeypatch.setattr(mm, "f64_config", lambda dev: None)
    a, b = data(rng, (2, 1, 9, 13), dtype), data(rng, (3, 13, 6), dtype)
    check(vk.matmul(vk.asarray(a, dtype=dtype), vk.asarray(b, dtype=dtype)), a, b, np.matmul, dtype)


F64_SHAPES = [((63, 8), (8, 65)), ((64, 7), (7, 64)), ((65, 9), (9, 129)), ((1, 333), (333, 1)),
              ((130, 17), (17, 3)), ((2, 1, 65, 9), (3, 9, 70)), ((4, 4), (4, 4))]


@pytest.mark.parametrize("shapes", F64_SHAPES)
def test_float64_on_the_tiled_kernel(rng, shapes):
    """float64 @ float64 on matmul.comp's F64 tile (64 x 64, K steps of 8): sizes around the tile
    and its K step, unaligned leading dimensions (scalar loads), broadcast batches; within 2 k eps
    of a long-double reference, and one dispatch (the summed path would take several), or for a
    deep product with few tiles split-K's: its slices' products and their float64 sum."""
    a, b = data(rng, shapes[0], np.float64), data(rng, shapes[1], np.float64)
    A, B = vk.asarray(a, dtype=vk.float64), vk.asarray(b, dtype=vk.float64)
    vk.synchronize()
    d0 = vk.stats()["dispatches"]
    got = A @ B
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    split = a.ndim == b.ndim == 2 and mm._split_k(runtime.get().device, mm.F64_CONFIG, m, n, k) > 1
    assert split == (shapes == ((1, 333), (333, 1)))
    assert 1 < vk.stats()["dispatches"] - d0 <= 3 if split else vk.stats()["dispatches"] - d0 == 1
    check(got, a, b, np.matmul, np.float64)


def test_float64_products_outside_float32s_range(rng):
    """Operands near 1e150 and 1e-150: float32 anywhere in the kernel gives inf or 0."""
    a = rng.standard_normal((37, 41)) * 1e150
    b = rng.standard_normal((41, 29)) * 1e-150
    check(vk.asarray(a, dtype=vk.float64) @ vk.asarray(b, dtype=vk.float64), a, b, np.matmul, np.float64)


def test_float64_k_past_the_loop_budget(rng):
    """K = 600000: 75000 K steps, past lavapipe's loop budget of 65535. One tile and a deep K:
    split-K's slices (each within the budget) and their float64 sum, on every device."""
    a, b = data(rng, (1, 600_000), np.float64), data(rng, (600_000, 1), np.float64)
    A, B = vk.asarray(a, dtype=vk.float64), vk.asarray(b, dtype=vk.float64)
    vk.synchronize()
    d0 = vk.stats()["dispatches"]
    got = A @ B
    assert vk.stats()["dispatches"] - d0 > 1
    assert mm._split_k(runtime.get().device, mm.F64_CONFIG, 1, 1, 600_000) > 1
    check(got, a, b, np.matmul, np.float64)


@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (0.5, -2.0), (0.1, 0.0), (1 / 3, 0.7)])
def test_gemm_float64(rng, trans_a, trans_b, alpha, beta):
    """gemm in float64, transposed in place, batched with a broadcast operand: alpha and beta that
    float32 holds exactly go to the kernel, others (0.1, 1/3, 0.7) scale its product in float64;
    c updated in place (beta != 0), within 2 k eps of a long-double reference."""
    a, b = data(rng, (2, 37, 21), np.float64), data(rng, (21, 45), np.float64)
    A = np.swapaxes(a, -1, -2).copy() if trans_a else a
    B = b.T.copy() if trans_b else b
    c0 = data(rng, (2, 37, 45), np.float64)
    c = vk.asarray(c0, dtype=vk.float64) if beta else None
    got = vk.gemm(vk.asarray(A, dtype=vk.float64), vk.asarray(B, dtype=vk.float64), trans_a=trans_a,
                  trans_b=trans_b, alpha=alpha, beta=beta, c=c)
    assert got.dtype == np.float64 and (c is None or got is c)
    la, lb, lc = a.astype(np.longdouble), b.astype(np.longdouble), c0.astype(np.longdouble)
    want = alpha * (la @ lb) + (beta * lc if beta else 0)
    bound = 2 * 21 * EPS64 * (abs(alpha) * (np.abs(la) @ np.abs(lb)) + abs(beta) * np.abs(lc)) + 1e-300
    assert (np.abs(got.numpy() - want) <= bound).all(), np.max(np.abs(got.numpy() - want) / bound)


def test_gemm_float64_refusals_before_gpu_work():
    """c of another dtype than the float64 product, and integer operands: TypeError naming them."""
    f = vk.ones((3, 3), dtype=vk.float64)
    c32 = vk.zeros((3, 3))
    i = vk.ones((3, 3), dtype=vk.int64)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(TypeError, match="c has dtype float32: expected float64"):
            vk.gemm(f, f, beta=1.0, c=c32)
        with pytest.raises(TypeError, match="int64 operands"):
            vk.gemm(i, i)


@pytest.mark.parametrize("x1, x2", [(np.int32, np.uint32), (np.int8, np.uint8), (np.int8, np.int16),
                                    (np.uint16, np.int32), (np.int64, np.float32), (np.float64, np.float32),
                                    (np.float64, np.int8), (np.uint64, np.uint8), (np.int64, np.int32)])
def test_matmul_promotes_as_numpy(rng, x1, x2):
    """numpy's result dtype, the wide operand's included (int32 @ uint32: int64; a float with a
    64-bit integer: float64); the operands converted to it first."""
    want_dtype = np.result_type(x1, x2)
    a, b = data(rng, (5, 6), x1), data(rng, (6, 3), x2)
    got = vk.asarray(a, dtype=x1) @ vk.asarray(b, dtype=x2)
    check(got, a.astype(want_dtype), b.astype(want_dtype), np.matmul, want_dtype)


@pytest.mark.parametrize("dtype", WIDE)
def test_tensordot_vecdot_outer_cross(rng, dtype):
    a, b = data(rng, (3, 4, 5), dtype), data(rng, (4, 5, 6), dtype)
    va, vb = vk.asarray(a, dtype=dtype), vk.asarray(b, dtype=dtype)
    check(vk.tensordot(va, vb, axes=2), a, b, lambda x, y: np.tensordot(x, y, axes=2), dtype)
    check(vk.linalg.tensordot(va, vb, axes=([1], [0])), a, b, lambda x, y: np.tensordot(x, y, axes=([1], [0])),
          dtype)
    x, y = data(rng, (2, 1, 33), dtype), data(rng, (3, 33), dtype)
    check(vk.vecdot(vk.asarray(x, dtype=dtype), vk.asarray(y, dtype=dtype)), x, y,
          lambda p, q: (p * q).sum(axis=-1), dtype)
    u, w = data(rng, 9, dtype), data(rng, 4, dtype)
    check(vk.linalg.outer(vk.asarray(u, dtype=dtype), vk.asarray(w, dtype=dtype)), u, w, np.multiply.outer, dtype)
    c, d = data(rng, (5, 3), dtype), data(rng, (5, 3), dtype)
    got = vk.linalg.cross(vk.asarray(c, dtype=dtype), vk.asarray(d, dtype=dtype))
    assert got.dtype == dtype
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got.numpy(), ref_int(np.cross, c, d, dtype))
    else:
        want = np.cross(c.astype(np.longdouble), d.astype(np.longdouble))
        lc, ld = np.abs(c).astype(np.longdouble), np.abs(d).astype(np.longdouble)
        terms = lc[:, [1, 2, 0]] * ld[:, [2, 0, 1]] + lc[:, [2, 0, 1]] * ld[:, [1, 2, 0]]
        assert (np.abs(got.numpy() - want) <= 2 * EPS64 * terms + 1e-300).all()


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("offset", [0, 1, -2])
def test_trace(rng, dtype, offset):
    """numpy's (and the standard's) result dtype: the integers narrower than the default int
    summed as it (int32 here, uint32 for the unsigned), the 64-bit ones and float64 kept."""
    x = data(rng, (2, 5, 6), dtype)
    got = vk.linalg.trace(vk.asarray(x, dtype=dtype), offset=offset)
    want_dtype = vk.sum(vk.asarray(x[..., 0, 0], dtype=dtype)).dtype  # trace sums as vk.sum does
    assert got.dtype == want_dtype
    diag = np.diagonal(x, offset=offset, axis1=-2, axis2=-1)
    if np.dtype(dtype).kind in "iu":
        with np.errstate(over="ignore"):
            want = diag.astype(np.uint64).sum(axis=-1).astype(want_dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    else:
        want = diag.astype(np.longdouble).sum(axis=-1)
        bound = 2 * diag.shape[-1] * EPS64 * np.abs(diag).astype(np.longdouble).sum(axis=-1)
        assert (np.abs(got.numpy() - want) <= bound).all()
    f = data(rng, (4, 4), np.float32)
    got = vk.linalg.trace(vk.asarray(f), dtype=vk.float64)  # float32 summed in float64, as numpy
    assert got.dtype == np.float64
    assert abs(got.numpy() - np.trace(f.astype(np.longdouble))) <= 8 * EPS64 * np.abs(f).sum()


@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3, -1.5])
def test_vector_norm_float64(rng, ord):
    x = data(rng, (3, 37), np.float64)
    got = vk.linalg.vector_norm(vk.asarray(x, dtype=vk.float64), axis=-1, ord=ord)
    assert got.dtype == np.float64
    want = np.linalg.vector_norm(x.astype(np.longdouble), axis=-1, ord=ord)
    np.testing.assert_allclose(got.numpy(), want.astype(np.float64), rtol=64 * EPS64)
    big = np.array([3e200, 4e200])  # |x|**2 overflows float64: scaled first
    np.testing.assert_allclose(vk.linalg.vector_norm(vk.asarray(big, dtype=vk.float64)).numpy(), 5e200,
                               rtol=4 * EPS64)


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm_float64(rng, ord):
    x = data(rng, (2, 6, 5), np.float64)
    got = vk.linalg.matrix_norm(vk.asarray(x, dtype=vk.float64), ord=ord, keepdims=True)
    assert got.dtype == np.float64
    want = np.linalg.matrix_norm(x.astype(np.longdouble), ord=ord, keepdims=True)
    np.testing.assert_allclose(got.numpy(), want.astype(np.float64), rtol=64 * EPS64)


def test_wide_refusals_before_gpu_work():
    """The float ops refuse the wide integers (TypeError naming them), which float32 cannot hold."""
    f = vk.ones((3, 3), dtype=vk.float64)
    i = vk.ones(4, dtype=vk.int64)
    b = vk.ones((3, 3), dtype=vk.bool)
    g = vk.ones((4, 3), dtype=vk.float64)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(TypeError, match="int64"):
            vk.layer_norm(i, 4)
        with pytest.raises(TypeError, match="int64"):
            vk.conv1d(i.reshape((1, 1, 4)), i[:1].reshape((1, 1, 1)))
        with pytest.raises(TypeError, match="int64"):
            vk.linalg.vector_norm(i)
        with pytest.raises(TypeError, match="bool"):
            b @ b
        with pytest.raises(ValueError, match="not aligned"):
            f @ g
