"""The WIDE dtypes (int8/16/64, uint8/16/64, float64) through creation, transfers, astype and the
elementwise functions, against numpy: integers exactly (wrapping as numpy's do), float64 bit for
bit where IEEE rounding makes the result unique."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work
from tests.primitives.test_elementwise_api import assert_same, standard_floor_divide

WIDE = [np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64, np.float64]
INTS = [d for d in WIDE if np.dtype(d).kind in "iu"]
ALL = WIDE + [np.bool_, np.int32, np.uint32, np.float32, np.float16]
SIZES = [1, 3, 8, 33, 257, 4099]
F64_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.5, -2.5, 5e-324, -5e-324,
                         2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
                         2.0 ** 53 + 1, 0.1, 1e300, 1e-300], np.float64)


def wide_sample(rng, n, dtype, small=False):
    """Random values of dtype over its whole range (small=True: |x| < 40) with edge cases mixed in."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
        if small:
            return (rng.standard_normal(n) * 10).astype(dtype)
        specials = F64_SPECIALS.astype(dtype) if dtype.itemsize >= 4 else np.array([0, -0.0, np.inf, np.nan], dtype)
    else:
        info = np.iinfo(dtype)
        full = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        near = rng.integers(-40 if info.min else 0, 40, n).astype(dtype)
        if small:
            return near
        x = np.where(rng.random(n) < 0.5, full, near)
        specials = np.array([0, 1, 2, info.max, info.min, info.max - 1] + ([-1, -2] if info.min else []), dtype)
    k = min(n, specials.size)
    x[rng.choice(n, k, replace=False)] = specials[rng.permutation(specials.size)[:k]]
    return x


def bits(x):
    x = np.ascontiguousarray(x)
    return x.view(np.uint8) if x.dtype != np.bool_ else x


@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("n", SIZES)
def test_round_trip_and_views_at_odd_offsets(rng, dtype, n):
    x = wide_sample(rng, n, dtype)
    a = vk.asarray(x, dtype=dtype)
    assert a.dtype == np.dtype(dtype) and a.shape == x.shape
    np.testing.assert_array_equal(bits(a.numpy()), bits(x))
    for start in (1, 2, 3, 5):  # views starting inside a 32-bit word
        if start < n:
            np.testing.assert_array_equal(bits(a[start:].numpy()), bits(x[start:]))
            with np.errstate(all="ignore"):
                assert_same((a[start:] * 1).numpy(), x[start:] * 1)


@pytest.mark.parametrize("dtype", WIDE)
def test_creation(rng, dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)
    for shape in [(), (5,), (3, 7), (2, 3, 5)]:
        for value in (0, 1, info.max, info.min):
            got = vk.full(shape, value, dtype=dtype)
            assert_same(got.numpy(), np.full(shape, value, dtype=dtype), f"full {value}")
        assert_same(vk.zeros(shape, dtype=dtype).numpy(), np.zeros(shape, dtype))
        assert_same(vk.ones(shape, dtype=dtype).numpy(), np.ones(shape, dtype))
    assert_same(vk.arange(3, 90, 7, dtype=dtype).numpy(), np.arange(3, 90, 7, dtype=dtype))
    if np.dtype(dtype).itemsize == 8:
        big = 2 ** 40 if dtype != np.float64 else 0.1
        assert_same(vk.arange(big, big + 50 * 3, 3, dtype=dtype).numpy(), np.arange(big, big + 50 * 3, 3, dtype=dtype))
    with pytest.raises(OverflowError):
        vk.full((3,), 1000, dtype=np.int8)


@pytest.mark.parametrize("src", ALL)
def test_astype_between_every_pair(rng, src):
    """Values every dtype holds (0..100, with fractions for float sources: truncated); negative
    ones into the signed and float dtypes (numpy leaves negative float -> unsigned undefined)."""
    src = np.dtype(src)
    base = rng.integers(0, 101, 1001)
    x = (base + (rng.integers(0, 4, 1001) * 0.25 if src.kind == "f" else 0)).astype(src)
    a = vk.asarray(x, dtype=src)
    neg = (-x.astype(np.float64)).astype(src) if src.kind in "if" else None
    for dst in map(np.dtype, ALL):
        assert_same(a.astype(dst).numpy(), x.astype(dst), f"{src} -> {dst}")
        if neg is not None and dst.kind in "if":
            assert_same(vk.asarray(neg, dtype=src).astype(dst).numpy(), neg.astype(dst), f"-{src} -> {dst}")


INT_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "floor_divide",
              "remainder", "fmod", "left_shift", "right_shift", "power"]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("n", [1, 33, 4099])
def test_integer_binary_ops_wrap_as_numpy(rng, dtype, n):
    x, y = wide_sample(rng, n, dtype), wide_sample(rng, n, dtype)
    a = vk.asarray(x, dtype=dtype)
    for name in INT_BINARY:
        yy = y
        if name == "power":
            yy = (np.abs(y.astype(np.int64) % 40)).astype(dtype)
        if name in ("left_shift", "right_shift"):
            yy = (np.abs(y.astype(np.int64) % (8 * np.dtype(dtype).itemsize + 4))).astype(dtype)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x, yy)
        got = getattr(vk, name)(a, vk.asarray(yy, dtype=dtype)).numpy()
        assert_same(got, want, f"{name}({np.dtype(dtype)})")


@pytest.mark.parametrize("dtype", INTS)
def test_integer_unary_ops_and_scalars(rng, dtype):
    x = wide_sample(rng, 4099, dtype)
    a = vk.asarray(x, dtype=dtype)
    for name in ["negative", "absolute", "invert", "sign", "square", "positive", "logical_not"]:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x)
        assert_same(getattr(vk, name)(a).numpy(), want, name)
    info = np.iinfo(dtype)
    for s in (0, 1, 7, info.max, info.min):  # Python ints in range: the array's dtype (NEP 50)
        with np.errstate(all="ignore"):
            assert_same((a + s).numpy(), x + s, f"+ {s}")
            assert_same((a * s).numpy(), x * s, f"* {s}")
            assert_same((a < s).numpy(), x < s, f"< {s}")
    with no_gpu_work(), pytest.raises(OverflowError):
        a + (info.max + 1)


@pytest.mark.parametrize("n", [1, 33, 4099])
def test_float64_arithmetic_is_ieee(rng, n):
    x, y = wide_sample(rng, n, np.float64), wide_sample(rng, n, np.float64)
    a, b = vk.asarray(x, dtype=np.float64), vk.asarray(y, dtype=np.float64)
    for name in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "less", "greater_equal",
                 "copysign", "nextafter", "floor_divide", "remainder", "fmod"]:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x, y)
            if name == "floor_divide":  # the standard's values where one operand is infinite
                want = standard_floor_divide(want, x, y)
        assert_same(getattr(vk, name)(a, b).numpy(), want, name)
    for name in ["negative", "absolute", "sqrt", "floor", "ceil", "trunc", "rint", "sign", "square", "isnan",
                 "isinf", "isfinite", "signbit", "reciprocal"]:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x)
        assert_same(getattr(vk, name)(a).numpy(), want, name)
    for s in (0.1, -3.0, 1e300, float("inf")):  # 64-bit scalars, exactly
        with np.errstate(all="ignore"):
            assert_same((a + s).numpy(), x + s, f"+ {s}")
            assert_same((s / a).numpy(), s / x, f"{s} /")


@pytest.mark.parametrize("n", [1, 4099])
def test_float64_transcendentals_within_an_ulp_of_numpy(rng, n):
    """shaders/lib/math64.glsl through the elementwise kernel (tests/shaders/test_math64.py holds
    the library to 0.75 ulp of the exact value); numpy's own error can reach ~1 ulp."""
    x = wide_sample(rng, n, np.float64)
    pos = np.abs(x)
    unit = np.clip(x, -1, 1)
    a, p, u = (vk.asarray(v, dtype=np.float64) for v in (x, pos, unit))
    for name, arr, host in [("exp", a, x), ("expm1", a, x), ("log", p, pos), ("log1p", p, pos), ("sin", a, x),
                            ("cos", a, x), ("tan", a, x), ("arcsin", u, unit), ("arctan", a, x), ("tanh", a, x),
                            ("arcsinh", a, x), ("sinh", a, x)]:
        got = getattr(vk, name)(arr).numpy()
        with np.errstate(all="ignore"):
            want = getattr(np, name)(host)
        assert got.dtype == np.float64
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        ulp = np.abs(got - want) / np.spacing(np.abs(want).clip(np.finfo(np.float64).tiny))
        bad = ~same & ~(ulp <= 2)
        assert not bad.any(), (name, host[bad][:3], got[bad][:3], want[bad][:3])


def test_promotion_follows_numpy(rng):
    """Mixed dtypes promote as numpy's (and the standard's) table; Python scalars are weak."""
    cases = [(np.int8, np.uint8), (np.int8, np.int64), (np.uint16, np.int32), (np.uint32, np.int32),
             (np.float64, np.float32), (np.int64, np.float32), (np.uint8, np.float32), (np.int16, np.bool_),
             (np.uint64, np.uint8), (np.float64, np.int8)]
    for da, db in cases:
        x, y = wide_sample(rng, 100, da, small=True), wide_sample(rng, 100, db, small=True)
        a, b = vk.asarray(x, dtype=da), vk.asarray(y, dtype=db)
        for name in ["add", "multiply", "maximum", "less", "floor_divide", "remainder"]:
            with np.errstate(all="ignore"):  # (lavapipe once compared sign-extended int8/32 wrongly)
                want = getattr(np, name)(x, y)
            got = getattr(vk, name)(a, b).numpy()
            assert_same(got, want, f"{name}({np.dtype(da)}, {np.dtype(db)})")
    x = wide_sample(rng, 50, np.uint8, small=True)
    with pytest.raises(OverflowError):
        vk.asarray(x, dtype=np.uint8) + (-1)  # NEP 50: -1 does not fit a uint8


@pytest.mark.parametrize("dtype", WIDE)
def test_broadcasting_where_and_clip(rng, dtype):
    x = wide_sample(rng, 3 * 5 * 7, dtype, small=True).reshape(3, 5, 7)
    y = wide_sample(rng, 7, dtype, small=True)
    z = wide_sample(rng, 5 * 1, dtype, small=True).reshape(5, 1)
    a, b, c = (vk.asarray(v, dtype=dtype) for v in (x, y, z))
    with np.errstate(all="ignore"):
        assert_same((a - b).numpy(), x - y)
        assert_same(vk.where(a > b, b, c).numpy(), np.where(x > y, y, z))
        assert_same(vk.clip(a, c, 30).numpy(), np.clip(x, z, np.asarray(30, dtype)))


def test_ops_without_wide_dtypes_refuse_them_before_gpu_work():
    a = vk.asarray(np.eye(3), dtype=np.int64)
    with no_gpu_work(), pytest.raises(TypeError, match="int64"):
        vk.conv1d(a.reshape((1, 3, 3)), a[:1].reshape((1, 3, 1)))  # the convolutions: float dtypes only
