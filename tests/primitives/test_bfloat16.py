"""bfloat16 (ml_dtypes.bfloat16, vk.bfloat16): held as 16-bit words, computed in float32 and
rounded to nearest even, as ml_dtypes' numpy loops compute it. References: ml_dtypes' own results,
bit for bit where its float32 step is correctly rounded (casts, the arithmetic, sqrt, rounding,
comparisons), within one bfloat16 ulp for the transcendentals; float64 for the reductions, scans
and products (which accumulate in float32 here, where ml_dtypes' sum rounds to bfloat16 at every
add). Every bit pattern for the casts; fresh random data over bfloat16's range with its specials,
sizes around subgroup and workgroup boundaries, views at odd offsets; outputs poisoned (conftest).

Where ml_dtypes has no rule or breaks the array API's, vkbackend follows the standard and torch/JAX
(tested below): a Python scalar is weak (bfloat16 + 1.0 is bfloat16; ml_dtypes gives float32),
bfloat16 with float16 is float32 and with int16/int32 promotes as float16 would (ml_dtypes
raises), and bfloat16 @ bfloat16 is bfloat16 (ml_dtypes' numpy gives float32)."""
import dataclasses

import ml_dtypes
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import flushes_subnormals, no_gpu_work
from tests.ops.test_conv import ref_conv
from tests.primitives.test_float16_compute import check_assignments, same, within_ulp
from vkbackend import runtime

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
BF16 = np.dtype(ml_dtypes.bfloat16)
SIZES = [1, 7, 8, 31, 33, 255, 257, 4097]
EXACT1 = ["negative", "absolute", "positive", "sqrt", "square", "reciprocal", "floor", "ceil", "trunc", "rint",
          "isnan", "isinf", "isfinite", "signbit"]
ULP1 = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
        "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"]
EXACT2 = ["add", "subtract", "multiply", "divide", "copysign", "fmod", "less", "less_equal", "equal",
          "not_equal", "greater", "logical_and"]
ULP2 = ["power", "arctan2", "hypot", "logaddexp"]


def bf16(rng, n, low=-30, high=30):
    """bfloat16 values over many magnitudes (no subnormals: a device may flush float32's, and
    bfloat16's are float32's), with the specials."""
    x = (rng.standard_normal(n) * np.exp2(rng.uniform(low, high, n))).astype(BF16)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 3.3895e38, -1.0, 1.0], BF16)
    x[: min(n, specials.size)] = specials[: min(n, specials.size)]
    return x


def ftz(want):
    """`want` as a device that flushes float32 subnormals (NVIDIA's) computes it: bfloat16's
    subnormals are float32's, so there a subnormal result is a zero of its sign."""
    want = np.asarray(want)
    if want.dtype != BF16 or not flushes_subnormals():
        return want
    w32 = want.astype(np.float32)
    flushed = (np.abs(w32) < np.finfo(np.float32).tiny) & (w32 != 0)
    return np.where(flushed, np.copysign(np.float32(0), w32), w32).astype(BF16)


def finite(x, bound):
    """x's NaNs as 0, everything clipped to [-bound, bound] (np.nan_to_num and np.clip do not
    take bfloat16 as a float: through float64)."""
    return np.clip(np.nan_to_num(x.astype(np.float64), posinf=bound, neginf=-bound), -bound, bound).astype(BF16)


def test_every_bit_pattern_round_trips_and_casts():
    """All 65536 patterns: held and read back as they are (NaN payloads too), cast to float32
    exactly (the high half of a float) and back; float16 to bfloat16 and back through float32,
    as ml_dtypes casts them."""
    bits = np.arange(65536, dtype=np.uint16)
    x = bits.view(BF16)
    a = vk.asarray(x)
    np.testing.assert_array_equal(a.numpy().view(np.uint16), bits)
    f = a.astype(vk.float32)
    np.testing.assert_array_equal(f.numpy().view(np.uint32), bits.astype(np.uint32) << 16)
    same(f.astype(BF16), x.astype(np.float32).astype(BF16))  # NaNs quiet, the rest unchanged
    np.testing.assert_array_equal(a.astype(BF16).numpy().view(np.uint16), bits)  # a copy: bits kept
    np.testing.assert_array_equal(a[1:].numpy().view(np.uint16), bits[1:])  # a view at an odd offset
    h = bits.view(np.float16)
    same(vk.asarray(h).astype(BF16), h.astype(BF16))
    same(a.astype(vk.float16), x.astype(np.float16))


def test_float32_to_bfloat16_rounds_to_nearest_even(rng):
    """Random float32 bit patterns (every class: subnormals, NaNs with payloads, infinities) and
    the ties: nearest even, overflow to inf, NaN to the quiet NaN of its sign (ml_dtypes')."""
    u = rng.integers(0, 2**32, 100_003, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 2**16, 2000, dtype=np.uint32) << 16) | 0x8000
    edge = np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF, 0x00008000, 0x00018000, 0x7F800001,
                     0xFFC00001, 0x7FFFFFFF, 0x80000000, 0x3F808000, 0x3F818000], np.uint32)
    x = np.concatenate([u, ties, edge]).view(np.float32)
    same(vk.asarray(x).astype(BF16), x.astype(BF16))
    same(vk.asarray(x[1:]).astype(BF16), x[1:].astype(BF16))
    for d in (np.int32, np.uint32, np.int8, np.int64, np.float64):
        v = (rng.standard_normal(999) * 1e4).astype(d)
        same(vk.asarray(v, dtype=d).astype(BF16), v.astype(BF16))
    b = bf16(rng, 999, -5, 20)
    for d in (np.int32, np.uint8, np.int64, np.bool_):  # in range (out of it, C leaves it undefined)
        src = np.where(np.isfinite(b), b, BF16.type(0))
        if d is not np.bool_:
            src = np.clip(src.astype(np.float64), 0 if d is np.uint8 else -99, 99).astype(BF16)
        np.testing.assert_array_equal(vk.asarray(src).astype(d).numpy(), src.astype(d))


@pytest.mark.parametrize("n", SIZES)
def test_unary(rng, n):
    x = bf16(rng, n + 1)
    a = vk.asarray(x)[1:]  # a view at an odd offset: half the word
    for name in EXACT1:
        same(getattr(vk, name)(a), ftz(getattr(np, name)(x[1:])))
    for name in ULP1:
        within_ulp(getattr(vk, name)(a), ftz(getattr(np, name)(x[1:])))
    # sign(-0) is +0 as numpy's float16 and float32 give it (ml_dtypes: -0; the standard: 0)
    same(vk.sign(a) + 0.0, np.sign(x[1:]) + BF16.type(0))
    whole = vk.asarray(x)  # aligned: for n + 1 a multiple of 4, four halves a load and store
    for name in ("negative", "sqrt", "isnan", "floor"):
        same(getattr(vk, name)(whole), getattr(np, name)(x))
    within_ulp(vk.exp(whole), ftz(np.exp(x)))
    same(-a, -x[1:])
    same(abs(a), np.abs(x[1:]))


@pytest.mark.parametrize("n", SIZES)
def test_binary(rng, n):
    x, y = bf16(rng, n), bf16(rng, n)[::-1].copy()
    a, b = vk.asarray(x), vk.asarray(y)
    for name in EXACT2:
        same(getattr(vk, name)(a, b), ftz(getattr(np, name)(x, y)))
    for name in ULP2:
        within_ulp(getattr(vk, name)(a, b), ftz(getattr(np, name)(x, y)))
    # maximum, minimum: ml_dtypes gives x2 on a tie of +0 and -0 (the standard leaves it open)
    for name in ("maximum", "minimum"):
        got, want = getattr(vk, name)(a, b).numpy(), getattr(np, name)(x, y)
        zero = (x == 0) & (y == 0)
        same(got[~zero], want[~zero])
        assert (got[zero] == 0).all()
    # nextafter: the next bfloat16 (x2 on a tie), as ml_dtypes
    same(vk.nextafter(a, b), np.nextafter(x, y))
    zeros = np.array([0.0, 0.0, -0.0, 1.0], BF16)
    same(vk.nextafter(vk.asarray(zeros), vk.asarray(zeros[::-1].copy())), np.nextafter(zeros, zeros[::-1]))
    finite = np.isfinite(x) & np.isfinite(y) & (y != 0)
    same(vk.floor_divide(a, b).numpy()[finite], ftz(np.floor_divide(x, y)[finite]))
    same(vk.remainder(a, b).numpy()[finite], ftz(np.remainder(x, y)[finite]))
    same(a + b, ftz(x + y))
    same(a * b, ftz(x * y))
    same(a / b, ftz(x / y))
    same(a < b, x < y)
    same(vk.where(a > b, a, b), np.where(x > y, x, y))
    lo, hi = BF16.type(-1), BF16.type(2)
    same(vk.clip(a, lo, hi), np.clip(x, lo, hi).astype(BF16))  # numpy: float32 of bfloat16 scalars


def test_promotion_and_broadcasting(rng):
    x = bf16(rng, 15).reshape(3, 5)
    a = vk.asarray(x)
    col = bf16(rng, 3).reshape(3, 1)
    same(a + vk.asarray(col), x + col)
    # Python scalars are weak (the array API; torch and JAX): rounded to bfloat16 first
    same(a * 0.1, x * BF16.type(0.1))
    same(2.5 - a, BF16.type(2.5) - x)
    same(a ** 2, x ** BF16.type(2))
    i8 = rng.integers(-100, 100, (3, 5)).astype(np.int8)
    same(a + vk.asarray(i8, dtype=vk.int8), x + i8)
    bools = rng.random((3, 5)) < 0.5
    same(a * vk.asarray(bools), x * bools)
    f32 = rng.standard_normal((3, 5)).astype(np.float32)
    same((a + vk.asarray(f32)).numpy(), x + f32)
    h = rng.standard_normal((3, 5)).astype(np.float16)
    got = a + vk.asarray(h)  # ml_dtypes has no rule: float32, as torch and JAX
    same(got.numpy(), x.astype(np.float32) + h.astype(np.float32))
    i32 = rng.integers(-1000, 1000, (3, 5)).astype(np.int32)
    got = a * vk.asarray(i32)  # as float16 with int32: float64, float32 here
    same(got.numpy(), x.astype(np.float32) * i32.astype(np.float32))
    assert vk.result_type(vk.bfloat16, vk.float16) == np.float32
    assert vk.result_type(vk.bfloat16, 1.0) == BF16
    assert vk.isdtype(vk.bfloat16, "real floating") and not vk.isdtype(vk.bfloat16, "integral")
    assert vk.finfo(vk.bfloat16).eps == 2.0 ** -7 and vk.finfo(vk.bfloat16).bits == 16


@pytest.mark.parametrize("n", [1, 33, 257, 4097])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(rng, n, axis):
    """Summed in float32 and rounded once: within half a bfloat16 ulp of the float64 result plus
    the float32 sum's error (ml_dtypes' own sum rounds at every add, far coarser)."""
    x = finite(bf16(rng, 3 * n, -10, 6), 100).reshape(3, n)
    a = vk.asarray(x)
    total = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    for name in ("sum", "mean", "var", "std", "prod"):
        got = getattr(vk, name)(a, axis=axis)
        assert got.dtype == BF16 == getattr(np, name)(x, axis=axis).dtype
        want = getattr(np, name)(x.astype(np.float64), axis=axis)
        g = got.numpy().astype(np.float64)
        fin = np.isfinite(want) & (np.abs(want) < 3e38)
        if name == "prod":  # a float32 product may underflow (or be flushed) below float32's tiny
            bound = 2 ** -8 * np.abs(want) * 1.01 + 2 * float(np.finfo(np.float32).tiny)
        else:
            spread = total / (x.size if axis is None else x.shape[axis]) if name != "sum" else total
            bound = 2 ** -8 * np.abs(want) * 1.01 + 1e-6 * (spread ** 2 if name == "var" else spread)
        assert (np.abs(g - want)[fin] <= np.broadcast_to(bound, want.shape)[fin]).all(), name
    for name in ("max", "min", "argmax", "argmin", "any", "all"):
        got = getattr(vk, name)(a, axis=axis).numpy()
        want = getattr(np, name)(x, axis=axis)
        np.testing.assert_array_equal(got.astype(np.float64), np.asarray(want).astype(np.float64))
    assert vk.sum(a, dtype=vk.float32).dtype == np.float32
    norm = vk.linalg.vector_norm(a)
    assert norm.dtype == BF16
    ref = np.sqrt(np.sum(x.astype(np.float64) ** 2))
    assert abs(float(norm.numpy()) - ref) <= 2 ** -8 * ref * 1.01


def test_scans_sort_unique_search(rng):
    x = bf16(rng, 3 * 300).reshape(3, 300)
    a = vk.asarray(x)
    small = finite(x, 50)
    got = vk.cumsum(vk.asarray(small), axis=1)
    assert got.dtype == BF16
    want = np.cumsum(small.astype(np.float64), axis=1)
    bound = 2 ** -8 * np.abs(want) + 2e-7 * np.cumsum(np.abs(small.astype(np.float64)), axis=1)
    assert (np.abs(got.numpy().astype(np.float64) - want) <= bound).all()
    # numpy's sort of ml_dtypes' bfloat16 does not put NaN last: the reference sorts float32 copies
    x32 = x.astype(np.float32)
    same(vk.sort(a), np.sort(x32, kind="stable").astype(BF16))
    same(vk.sort(a, axis=0), np.sort(x32, axis=0, kind="stable").astype(BF16))
    np.testing.assert_array_equal(vk.argsort(a, axis=1).numpy(), np.argsort(x32, axis=1, kind="stable"))
    r = np.round(small.astype(np.float32)).astype(BF16) + BF16.type(0)
    values, counts = vk.unique_counts(vk.asarray(r))
    want_values, want_counts = np.unique(r.astype(np.float32), return_counts=True)
    same(values, want_values.astype(BF16))
    np.testing.assert_array_equal(counts.numpy(), want_counts)
    s = np.sort(small[0])
    q = bf16(rng, 50, -3, 6)
    np.testing.assert_array_equal(vk.searchsorted(vk.asarray(s), vk.asarray(q)).numpy(),
                                  np.searchsorted(s.astype(np.float32), q.astype(np.float32)))


def test_moves_and_assignment(rng):
    """Transposes, joins, gathers, masks and assignment move the 16-bit words as they are;
    values assigned are cast to bfloat16 as numpy casts them."""
    x = bf16(rng, 5 * 7).reshape(5, 7)
    a = vk.asarray(x)
    same(a.T, x.T.copy())
    same(vk.concat([a, a[:2]], axis=0), np.concatenate([x, x[:2]]))
    same(vk.take(a, vk.asarray(np.array([4, 0, 3], np.int32)), axis=1), x[:, [4, 0, 3]])
    same(a[1:4, ::2], x[1:4, ::2])
    mask = rng.random((5, 7)) < 0.5
    same(a[vk.asarray(mask)], x[mask])
    same(vk.flip(a, axis=1), x[:, ::-1].copy())
    same(vk.reshape(a, (7, 5)), x.reshape(7, 5))
    x32 = rng.standard_normal(7).astype(np.float32)
    check_assignments(x, [(slice(1, 3), 0.1), (np.array([0, 2]), 1.5), ((2, 3), 7), (4, x32), (mask, 3.0)])
    h, y = vk.asarray(x), x.copy()
    h += 1
    y += BF16.type(1)
    same(h, y)
    same(vk.full((3, 4), 1.7, dtype=vk.bfloat16), np.full((3, 4), 1.7, BF16))
    same(vk.linspace(0, 1, 9, dtype=vk.bfloat16), np.linspace(0, 1, 9).astype(np.float32).astype(BF16))
    same(vk.zeros(5, dtype=vk.bfloat16), np.zeros(5, BF16))


@pytest.mark.parametrize("via_float32", [False, True])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (33, 70, 65), (64, 128, 31), (7, 300, 9)])
def test_matmul(rng, monkeypatch, m, k, n, via_float32):
    """bfloat16 @ bfloat16: float32 products and sums, rounded once to bfloat16 (torch's and
    JAX's result type); every element the float64 product's float32 value rounded, within the
    float32 sum's error. Read as bfloat16 words, or (large products) cast to float32 first."""
    from vkbackend.primitives import tuning
    monkeypatch.setattr(tuning, "BF16_VIA_FLOAT32_WORK", 1 if via_float32 else 2 ** 62)
    x, y = finite(bf16(rng, m * k, -3, 3), 8).reshape(m, k), finite(bf16(rng, k * n, -3, 3), 8).reshape(k, n)
    x[0, 0] = y[0, 0] = BF16.type(0.5)
    got = vk.asarray(x) @ vk.asarray(y)
    assert got.dtype == BF16 and got.shape == (m, n)
    want = x.astype(np.float64) @ y.astype(np.float64)
    err = np.abs(got.numpy().astype(np.float64) - want)
    scale = np.abs(x.astype(np.float64)) @ np.abs(y.astype(np.float64))
    assert (err <= 2 ** -8 * np.abs(want) + 1e-6 * scale).all()
    c = vk.zeros((n, m), dtype=vk.float32)  # float32 C: the float32 sums themselves
    vk.gemm(vk.asarray(y.T.copy()), vk.asarray(x.T.copy()), c=c)
    assert np.allclose(c.numpy(), want.T, rtol=1e-5, atol=1e-5 * scale.T.max())
    tb = vk.gemm(vk.asarray(x), vk.asarray(y.T.copy()), trans_b=True)
    same(tb, got.numpy())
    assert vk.tensordot(vk.asarray(x), vk.asarray(y), axes=1).dtype == BF16


def test_layer_norm(rng):
    """Converted to float32, normalized, rounded once to bfloat16 (torch's half layer norm)."""
    x = finite(bf16(rng, 4 * 96, -2, 2), 10).reshape(4, 96)
    w, b = finite(bf16(rng, 96, -1, 1), 2), finite(bf16(rng, 96, -1, 1), 2)
    got = vk.layer_norm(vk.asarray(x), (96,), vk.asarray(w), vk.asarray(b))
    assert got.dtype == BF16
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5) * w.astype(np.float64) + b.astype(np.float64)
    assert np.allclose(got.numpy().astype(np.float64), ref, rtol=2 ** -7, atol=1e-3)


def test_convolution(rng):
    """On float32's kernels, operands widened exactly, each result rounded once to bfloat16: the
    forward pass and the three gradients within a bfloat16 rounding of float64's."""
    x = finite(bf16(rng, 2 * 5 * 9 * 9, -2, 2), 4).reshape(2, 5, 9, 9)
    w = finite(bf16(rng, 7 * 5 * 3 * 3, -2, 2), 4).reshape(7, 5, 3, 3)
    b = finite(bf16(rng, 7, -2, 2), 4)
    y = vk.conv2d(vk.asarray(x), vk.asarray(w), vk.asarray(b), stride=2, padding=1)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    want = ref_conv(x64, w64, 2, 1) + b.astype(np.float64)[None, :, None, None]
    scale = ref_conv(np.abs(x64), np.abs(w64), 2, 1) + np.abs(b.astype(np.float64))[None, :, None, None]
    assert y.dtype == BF16 and y.shape == want.shape
    assert (np.abs(y.numpy().astype(np.float64) - want) <= 2 ** -8 * np.abs(want) + 1e-5 * scale).all()
    g = finite(bf16(rng, want.size, -2, 2), 4).reshape(want.shape)
    dx, dw, db = vk.conv_vjp(vk.asarray(x), vk.asarray(w), vk.asarray(g), stride=2, padding=1, bias_grad=True)
    assert dx.dtype == dw.dtype == db.dtype == BF16
    g64 = g.astype(np.float64)
    want_db = g64.sum(axis=(0, 2, 3))
    assert np.allclose(db.numpy().astype(np.float64), want_db, rtol=2 ** -7, atol=1e-4 * np.abs(g64).sum())
    # dx and dw: float32's gradients of the same (exactly widened) operands, rounded once
    x32, w32, g32 = (vk.asarray(v.astype(np.float32)) for v in (x, w, g))
    dx32, dw32 = vk.conv_vjp(x32, w32, g32, stride=2, padding=1)
    for got, ref in ((dx, dx32), (dw, dw32)):
        want = ref.numpy().astype(BF16).astype(np.float64)
        assert (np.abs(got.numpy().astype(np.float64) - want) <= 2 ** -7 * np.abs(want) + 1e-6).all()


def test_without_16bit_storage_it_is_refused_by_name(monkeypatch):
    """As float16: held on any device, computed on only with 16-bit storage (named when absent)."""
    h = vk.asarray(np.ones(4, BF16))
    vk.synchronize()
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(
        rt.device, features=rt.device.features - {"storageBuffer16BitAccess"}))
    with no_gpu_work():
        for call in (lambda: h + 1, lambda: vk.exp(h), lambda: vk.sum(h), lambda: vk.cumsum(h),
                     lambda: vk.sort(h), lambda: vk.take(h, [0]), lambda: h.__setitem__(0, 1.0)):
            with pytest.raises(TypeError, match="bfloat16.*storageBuffer16BitAccess"):
                call()
    same(h.astype(vk.float32).numpy(), np.ones(4, np.float32))  # casts need no 16-bit storage
    same(vk.concat([h, h]), np.ones(8, BF16))  # nor joins (bit patterns, one half per word)
