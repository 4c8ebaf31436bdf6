"""float16 arithmetic: the elementwise functions and operators, reductions, scans, sort and unique
on float16 arrays, computed in float32 and rounded to float16 (numpy's float16 loops do the same).
References: numpy's own float16 results, bit for bit where numpy's float32 step is correctly
rounded (the arithmetic, sqrt, rounding, comparisons), within one float16 ulp for the
transcendentals (numpy's float32 functions and ours may differ by a float32 ulp before the
rounding); float64 sums for the reductions and scans (which accumulate in float32 here, not in
float16 as some of numpy's loops do). Fresh random data over float16's range with its specials,
sizes around subgroup and workgroup boundaries, views at odd offsets; outputs poisoned (conftest)."""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work
from vkbackend import runtime

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SIZES = [1, 7, 8, 31, 33, 255, 257, 4097]
EXACT1 = ["negative", "absolute", "positive", "sqrt", "square", "reciprocal", "floor", "ceil", "trunc", "rint",
          "isnan", "isinf", "isfinite", "signbit", "sign"]
ULP1 = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
        "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh"]
EXACT2 = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "copysign", "nextafter", "fmod",
          "less", "less_equal", "equal", "not_equal", "greater", "logical_and"]
ULP2 = ["power", "arctan2", "hypot", "logaddexp"]


def halves(rng, n):
    """float16 values over many magnitudes (subnormals to near the largest), with the specials."""
    x = (rng.standard_normal(n) * np.exp2(rng.uniform(-20, 15, n))).astype(np.float16)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 65504, -6e-8, 1.0], np.float16)
    x[: min(n, specials.size)] = specials[: min(n, specials.size)]
    return x


def same(got, want):
    """Bit for bit (NaNs as NaNs); float16 or bfloat16 (or any other dtype)."""
    got = got.numpy() if isinstance(got, vk.Array) else got
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype in (np.float16, vk.bfloat16):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        bits = np.flatnonzero(got[~nan].view(np.uint16) != want[~nan].view(np.uint16))
        assert bits.size == 0, f"{bits.size} differ: {got[~nan][bits[:4]]} vs {want[~nan][bits[:4]]}"
    else:
        np.testing.assert_array_equal(got, want)


def within_ulp(got, want):
    """Within one ulp (float16's or bfloat16's) of numpy's; the same NaNs and infinities."""
    got = got.numpy()
    assert got.dtype == want.dtype and want.dtype in (np.float16, vk.bfloat16) and got.shape == want.shape
    special = ~np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    inf = special & ~np.isnan(want)
    np.testing.assert_array_equal(got[inf].astype(np.float32), want[inf].astype(np.float32))
    g, w = got[~special].astype(np.float64), want[~special].astype(np.float64)
    ulp = np.spacing(np.abs(want[~special])).astype(np.float64)
    assert (np.abs(g - w) <= ulp).all(), np.max(np.abs(g - w) / ulp)


def check_assignments(x, steps):
    """a[key] = value on a device copy of x against numpy's, for each (key, value) of steps (a
    bool key and array values uploaded)."""
    for key, value in steps:
        h, y = vk.asarray(x), x.copy()
        h[vk.asarray(key) if isinstance(key, np.ndarray) and key.dtype == bool else key] = (
            vk.asarray(value) if isinstance(value, np.ndarray) else value)
        y[key] = value
        same(h, y)


@pytest.mark.parametrize("n", SIZES)
def test_unary(rng, n):
    x = halves(rng, n + 1)
    a = vk.asarray(x)[1:]  # a view at an odd offset: half the word
    for name in EXACT1:
        same(getattr(vk, name)(a), getattr(np, name)(x[1:]))
    for name in ULP1:
        within_ulp(getattr(vk, name)(a), getattr(np, name)(x[1:]))
    whole = vk.asarray(x)  # aligned: for n + 1 a multiple of 4, four halves a load and store
    for name in ("negative", "sqrt", "isnan", "floor"):
        same(getattr(vk, name)(whole), getattr(np, name)(x))
    within_ulp(vk.exp(whole), np.exp(x))
    same(-a, -x[1:])
    same(abs(a), np.abs(x[1:]))
    same(vk.round(a, decimals=0), np.round(x[1:]))


@pytest.mark.parametrize("n", SIZES)
def test_binary(rng, n):
    x, y = halves(rng, n), halves(rng, n)[::-1].copy()
    a, b = vk.asarray(x), vk.asarray(y)
    for name in EXACT2:
        want = getattr(np, name)(x, y)
        if name == "nextafter":  # x2 on a tie (the standard; numpy 2.5), where numpy 2.4 gives x1
            want = np.where(x == y, y, want)
        same(getattr(vk, name)(a, b), want)
    for name in ULP2:
        within_ulp(getattr(vk, name)(a, b), getattr(np, name)(x, y))
    finite = np.isfinite(x) & np.isfinite(y) & (y != 0)  # numpy's inf // y is NaN, the standard's inf
    same(vk.floor_divide(a, b).numpy()[finite], np.floor_divide(x, y)[finite])
    same(vk.remainder(a, b).numpy()[finite], np.remainder(x, y)[finite])
    same(a + b, x + y)
    same(a * b, x * y)
    same(a / b, x / y)
    same(a < b, x < y)
    same(vk.where(a > b, a, b), np.where(x > y, x, y))
    same(vk.clip(a, np.float16(-1), np.float16(2)), np.clip(x, np.float16(-1), np.float16(2)))


def test_signed_zeros_on_a_tie():
    """float16 maximum and minimum keep x1 where x1 == x2, +0 and -0 in both orders (numpy's
    float16 loops, 2.4 and 2.5); nextafter gives x2 (the standard's special cases: nextafter(+0,
    -0) is -0; numpy 2.5, where 2.4's float16 loop kept x1). The reference is those rules,
    numpy's result elsewhere."""
    x = np.array([0.0, -0.0, 0.0, -0.0, 1.0, np.nan], np.float16)
    y = np.array([-0.0, 0.0, 0.0, -0.0, np.nan, 1.0], np.float16)
    for name in ("maximum", "minimum", "nextafter"):
        tie = y if name == "nextafter" else x
        same(getattr(vk, name)(vk.asarray(x), vk.asarray(y)), np.where(x == y, tie, getattr(np, name)(x, y)))


def test_broadcasting_and_promotion(rng):
    """numpy's NEP 50 rules: a Python float is taken as float16 (rounded first); float16 with
    int8/uint8/bool stays float16, with int16 or float32 gives float32; int32 gives float64,
    which is float32 here as for every 32-bit operand."""
    x = halves(rng, 15).reshape(3, 5)
    a = vk.asarray(x)
    col = halves(rng, 3).reshape(3, 1)
    same(a + vk.asarray(col), x + col)
    same(a * 0.1, x * 0.1)   # 0.1 rounded to float16, then the product in float32, rounded
    same(2.5 - a, 2.5 - x)
    same(a ** 2, x ** 2)
    i8 = rng.integers(-100, 100, (3, 5)).astype(np.int8)
    same(a + vk.asarray(i8, dtype=vk.int8), x + i8)
    bools = rng.random((3, 5)) < 0.5
    same(a * vk.asarray(bools), x * bools)
    f32 = rng.standard_normal((3, 5)).astype(np.float32)
    assert (a + vk.asarray(f32)).dtype == np.float32
    same((a + vk.asarray(f32)).numpy(), x + f32)
    i16 = rng.integers(-100, 100, (3, 5)).astype(np.int16)
    same((a + vk.asarray(i16, dtype=vk.int16)).numpy(), x + i16)
    assert (a + vk.asarray(np.ones((3, 5), np.int32))).dtype == np.float32


@pytest.mark.parametrize("n", [1, 33, 257, 4097])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(rng, n, axis):
    """In float32, rounded once: within half a float16 ulp of the float64 result, plus the float32
    sum's error (prod may overflow float16: inf where numpy's float64 product passes 65520)."""
    x = np.clip(np.nan_to_num(halves(rng, 3 * n)), -100, 100).astype(np.float16).reshape(3, n)
    a = vk.asarray(x)
    total = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    for name in ("sum", "mean", "var", "std", "prod"):
        got = getattr(vk, name)(a, axis=axis)
        assert got.dtype == np.float16 == getattr(np, name)(x, axis=axis).dtype
        want = getattr(np, name)(x.astype(np.float64), axis=axis)
        g = got.numpy().astype(np.float64)
        if name == "prod":
            # float16 overflows at 65520 (halfway past 65504): beyond it inf, up to it 65504 (either
            # within the float32 product's rounding of the threshold)
            over = np.abs(want) > 65520 * (1 + 2 ** -20)
            edge = (np.abs(want) > 65504) & ~over
            assert np.isinf(g[over]).all()
            assert (np.isinf(g[edge]) | (np.abs(g[edge]) == 65504)).all()
            g, want = g[~over & ~edge], want[~over & ~edge]
            bound = 2 ** -10 * np.abs(want) + 6e-8
        else:
            spread = total / (x.size if axis is None else x.shape[axis]) if name != "sum" else total
            bound = 2 ** -11 * np.abs(want) * 1.01 + 6e-8 + 1e-6 * (spread ** 2 if name == "var" else spread)
        assert (np.abs(g - want) <= bound).all(), (name, np.max(np.abs(g - want) / bound))
    for name in ("max", "min", "argmax", "argmin", "any", "all"):
        got = getattr(vk, name)(a, axis=axis).numpy()
        want = getattr(np, name)(x, axis=axis)
        np.testing.assert_array_equal(got, want.astype(got.dtype))
        assert (got.dtype == want.dtype) or name.startswith("arg")  # indices are int32
    assert vk.sum(a, dtype=vk.float32).dtype == np.float32


def test_scans_sort_unique(rng):
    x = halves(rng, 3 * 300).reshape(3, 300)
    a = vk.asarray(x)
    finite = np.clip(np.where(np.isfinite(x), x, np.float16(0.5)), -50, 50).astype(np.float16)
    f = vk.asarray(finite)
    got = vk.cumsum(f, axis=1)
    assert got.dtype == np.float16
    want = np.cumsum(finite.astype(np.float64), axis=1)
    bound = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64) + 2e-7 * np.cumsum(np.abs(finite), axis=1)
    assert (np.abs(got.numpy() - want) <= bound).all()
    assert vk.cumsum(f, axis=1, dtype=vk.float32).dtype == np.float32
    # cummax orders -0.0 below +0.0 (scan.py), where numpy's float16 keeps the running value on a
    # tie: values as numpy's, and a zero maximum is -0.0 where every zero before it is
    got, want = vk.cummax(a, axis=0).numpy(), np.maximum.accumulate(x, axis=0)
    same(np.where(got == 0, np.float16(0), got), np.where(want == 0, np.float16(0), want))
    rows, cols = np.nonzero(got == 0)
    np.testing.assert_array_equal(np.signbit(got[rows, cols]),
                                  [np.signbit(x[:r + 1, c][x[:r + 1, c] == 0]).all() for r, c in zip(rows, cols)])
    same(vk.sort(a), np.sort(x, kind="stable"))  # -0.0 and 0.0 equal: kept in order
    same(vk.sort(a, axis=0), np.sort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(vk.argsort(a, axis=1).numpy(), np.argsort(x, axis=1, kind="stable"))
    r = (np.round(finite) + np.float16(0)).astype(np.float16)  # no -0.0: which zero numpy keeps is its sort's
    values, counts = vk.unique_counts(vk.asarray(r))
    want_values, want_counts = np.unique(r, return_counts=True)
    same(values, want_values)
    np.testing.assert_array_equal(counts.numpy(), want_counts)


def test_assignment_and_in_place_operators(rng):
    """a[key] = value into float16 (moved as 16-bit words; values cast to float16 as numpy's
    assignment casts them) and the in-place operators (computed, rounded, written back)."""
    x = halves(rng, 5 * 7).reshape(5, 7)
    x32 = rng.standard_normal(7).astype(np.float32)
    mask = rng.random((5, 7)) < 0.5
    steps = [(slice(1, 3), 0.1), (np.array([0, 2]), 1.5), ((slice(None), slice(None, None, 2)), -2.25),
             ((2, 3), 7), (1, x[3].copy()), (4, x32), (mask, 3.0)]
    check_assignments(x, steps)
    h, y = vk.asarray(x), x.copy()
    h += 1
    y += np.float16(1)
    h *= vk.asarray(x32)
    y *= x32
    same(h, y)
    f = vk.zeros((2, 7))
    f[0] = vk.asarray(x[0])  # float16 values into float32: exact
    same(f.numpy()[0], x[0].astype(np.float32))


def test_without_16bit_storage_it_is_refused_by_name(monkeypatch):
    """float16 arithmetic reads and writes the halves as uint16_t: a device without 16-bit storage
    holds float16 but refuses to compute on it, naming the feature, before any GPU work."""
    h = vk.asarray(np.ones(4, np.float16))
    vk.synchronize()
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(
        rt.device, features=rt.device.features - {"storageBuffer16BitAccess"}))
    with no_gpu_work():
        for call in (lambda: h + 1, lambda: vk.exp(h), lambda: -h, lambda: vk.sum(h), lambda: vk.cumsum(h),
                     lambda: vk.sort(h), lambda: h < h, lambda: vk.take(h, [0]), lambda: h[::2],
                     lambda: h.__setitem__(0, 1.0), lambda: h.__iadd__(1), lambda: vk.concatenate([h, h])):
            with pytest.raises(TypeError, match="storageBuffer16BitAccess"):
                call()
