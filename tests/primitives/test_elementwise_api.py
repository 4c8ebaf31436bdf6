"""The elementwise namespace against numpy (issue 18): names, result dtypes (numpy's loop, float64
narrowed to float32), broadcasting, Python scalars, the NaN / -0.0 / division-by-zero rules, and
the errors, on fresh random data with specials at sizes around subgroup and workgroup edges.
Exact functions must match numpy bit for bit (NaN payloads aside); transcendentals within 1 ulp
of float64 (tests/primitives/test_elementwise_accuracy.py measures them over the float range)."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import flush_subnormals, flushes_subnormals, no_gpu_work
from tests.primitives.test_elementwise_accuracy import ulp_errors

SIZES = [1, 7, 255, 257, 4099]
I32 = np.iinfo(np.int32)
FLOAT_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
                           1e-45, -1e-45, 1e-40, 3.4028235e38, -3.4028235e38, 8388609.0, 2.0 ** 24],
                          np.float32)


def sample(rng, n, dtype):
    """Random values of dtype with its edge cases mixed in (at random places)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if dtype.kind == "f":
        x = np.concatenate([rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n),
                            rng.integers(-20, 20, n) * 0.5])[rng.permutation(2 * n)[:n]].astype(dtype)
        specials = FLOAT_SPECIALS
    else:
        info = np.iinfo(dtype)
        x = np.where(rng.random(n) < 0.5, rng.integers(info.min, info.max, n, endpoint=True),
                     rng.integers(-40 if info.min else 0, 40, n)).astype(dtype)
        specials = np.array([0, 1, info.max, info.min, info.max - 1, 2, 3] + ([-1, -2, -3] if info.min else []), dtype)
    k = min(n, specials.size)
    x[rng.choice(n, k, replace=False)] = specials[rng.permutation(specials.size)[:k]]
    return flush_subnormals(x)  # a device that flushes reads them as zeros: numpy gets the same


def assert_same(got, want, name=""):
    """Same dtype, shape and values: floats bit for bit (any NaN matches any NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (name, got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype.kind == "f":
        bits = np.dtype(f"u{want.dtype.itemsize}")
        ok = (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
        if flushes_subnormals():  # subnormal results come out as zeros there
            ok |= (got == 0) & (np.abs(want) < np.finfo(want.dtype).tiny)
    else:
        ok = got == want
    bad = np.flatnonzero(~ok.reshape(-1))
    first = bad[0] if bad.size else 0
    assert bad.size == 0, f"{name}: {bad.size} differ, first at {first}: {got.reshape(-1)[first]!r} vs {want.reshape(-1)[first]!r}"


def numpy_result(name, *xs):
    """numpy's result, float64 narrowed to float32 (as vkbackend's results are); floor_divide's
    with the array API standard's values where it specifies them and numpy differs."""
    with np.errstate(all="ignore"):
        r = getattr(np, name)(*xs)
        if name == "floor_divide":
            r = standard_floor_divide(r, *xs)
    r = np.asarray(r)
    with np.errstate(over="ignore"):
        return r.astype(np.float32) if r.dtype == np.float64 else r


def standard_floor_divide(r, x, y):
    """numpy's floor_divide result r with one operand infinite and the other finite (or 0) set to
    floor(x / y), an infinity or a signed zero, as the array API standard (2024.12) specifies: numpy
    gives NaN (inf // 2) or -1 (-1 // inf) there. The rest is numpy's."""
    x, y, r = np.asarray(x), np.asarray(y), np.asarray(r)
    if r.dtype.kind != "f":
        return r
    one_inf = (np.isinf(x) != np.isinf(y)) & ~np.isnan(x) & ~np.isnan(y)
    return np.where(one_inf, np.floor(np.true_divide(x, y, dtype=np.float64)), r).astype(r.dtype)


EXACT_UNARY = ["floor", "ceil", "trunc", "rint", "sign", "square", "positive", "reciprocal", "signbit",
               "isnan", "isinf", "isfinite", "invert", "logical_not"]
TRANSCENDENTAL_UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos",
                        "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                        "arccosh", "arctanh"]
EXACT_BINARY = ["remainder", "fmod", "floor_divide", "copysign", "nextafter", "bitwise_and",
                "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and", "logical_or",
                "logical_xor", "power", "divide"]
TRANSCENDENTAL_BINARY = ["arctan2", "hypot", "logaddexp"]
DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def _numpy_refuses(name, *xs):
    try:
        with np.errstate(all="ignore"):
            r = np.asarray(getattr(np, name)(*xs))
    except TypeError:
        return "TypeError"
    if r.dtype not in (np.float32, np.float64, np.bool_, np.float16) and r.dtype.kind not in "iu":
        return f"numpy result {r.dtype}"
    return None


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_unary_match_numpy(rng, n, dtype):
    x = sample(rng, n, dtype)
    a = vk.asarray(x)
    for name in EXACT_UNARY:
        if _numpy_refuses(name, x):
            with no_gpu_work(), pytest.raises(TypeError, match=name):
                getattr(vk, name)(a)
            continue
        want = numpy_result(name, x)
        if want.dtype.kind == "f" and dtype != np.float32:
            # a float result of ints or bools (rint; numpy: float64, float16): from float32(x) here
            want = numpy_result(name, x.astype(np.float32))
        got = getattr(vk, name)(a).numpy()
        assert_same(got, want, f"{name}({np.dtype(dtype)})")


@pytest.mark.parametrize("n", [1, 257, 4099])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_transcendental_unary_dtypes_and_specials(rng, n, dtype):
    x = sample(rng, n, dtype)
    a = vk.asarray(x)
    x32 = x.astype(np.float32)
    for name in TRANSCENDENTAL_UNARY:
        got = getattr(vk, name)(a).numpy()
        assert got.dtype == np.float32 and got.shape == x.shape, name
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(x32.astype(np.float64))
        err = ulp_errors(got, ref)
        assert err.max() <= 1.0, (name, x32[np.argmax(err)], got[np.argmax(err)], ref[np.argmax(err)])
        # zeros keep their sign where numpy's does (sin(-0.0) = -0.0, cos(-0.0) = 1, ...)
        zero = ref == 0
        assert_same(np.signbit(got[zero]), np.signbit(numpy_result(name, x32)[zero]), name)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("da,db", [(np.float32, np.float32), (np.int32, np.int32), (np.uint32, np.uint32),
                                   (np.bool_, np.bool_), (np.int32, np.float32), (np.uint32, np.bool_),
                                   (np.int32, np.uint32)])
def test_exact_binary_match_numpy(rng, n, da, db):
    x, y = sample(rng, n, da), sample(rng, n, db)
    a, b = vk.asarray(x), vk.asarray(y)
    for name in EXACT_BINARY:
        yy = y
        if name == "power" and np.dtype(db).kind in "iu":
            yy = np.where(y.astype(np.int64) < 0, 3, y % 40).astype(db)  # numpy raises on negative powers
            b = vk.asarray(yy)
        else:
            b = vk.asarray(y)
        refused = _numpy_refuses(name, x, yy)
        if refused:
            with no_gpu_work(), pytest.raises(TypeError):
                getattr(vk, name)(a, b)
            continue
        got = getattr(vk, name)(a, b).numpy()
        want = numpy_result(name, x, yy)
        if want.dtype == np.float16:
            want = want.astype(np.float32)
        if want.dtype == np.float32 and (np.dtype(da).kind != "f" or np.dtype(db).kind != "f"):
            # int operands of a float result: computed from their float32 values
            want = numpy_result(name, x.astype(np.float32), yy.astype(np.float32))
        if name == "power" and want.dtype == np.float32:
            with np.errstate(all="ignore"):
                ref = np.power(x.astype(np.float32).astype(np.float64), yy.astype(np.float32).astype(np.float64))
            assert got.dtype == np.float32
            assert ulp_errors(got, ref).max() <= 1.0
            continue
        assert_same(got, want, f"{name}({np.dtype(da)}, {np.dtype(db)})")


@pytest.mark.parametrize("n", [1, 255, 4099])
def test_transcendental_binary_specials(rng, n):
    x, y = sample(rng, n, np.float32), sample(rng, n, np.float32)
    s1, s2 = np.meshgrid(flush_subnormals(FLOAT_SPECIALS), flush_subnormals(FLOAT_SPECIALS))
    x, y = np.concatenate([x, s1.ravel()]), np.concatenate([y, s2.ravel()])
    for name in TRANSCENDENTAL_BINARY:
        got = getattr(vk, name)(vk.asarray(x), vk.asarray(y)).numpy()
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(x.astype(np.float64), y.astype(np.float64))
            scale = np.maximum(np.abs(ref), np.log1p(np.exp(-np.abs(x.astype(np.float64) - y)))) if name == "logaddexp" else None
        err = ulp_errors(got, ref, scale)
        assert err.max() <= 1.0, (name, x[np.argmax(err)], y[np.argmax(err)], got[np.argmax(err)])
        zero = ref == 0  # arctan2's signed zeros and pi's
        assert_same(np.signbit(got[zero]), np.signbit(numpy_result(name, x, y)[zero]), name)


def test_division_rules_match_numpy():
    """Signs of remainders and quotients, division by zero (ints: 0), INT_MIN // -1, infinities
    (floor_divide's as the array API standard specifies: numpy_result)."""
    i = np.array([7, -7, 7, -7, 5, 0, I32.min, I32.min, I32.min, 3], np.int32)
    j = np.array([2, 2, -2, -2, 0, 0, -1, 1, 0, -1], np.int32)
    for name in ["remainder", "fmod", "floor_divide"]:
        assert_same(getattr(vk, name)(vk.asarray(i), vk.asarray(j)).numpy(), numpy_result(name, i, j), name)
    f = np.array([-1.0, 1.0, -0.0, 5.0, 0.0, np.inf, -7.5, 7.5, 1e30, 3.0], np.float32)
    g = np.array([np.inf, -np.inf, 3.0, 0.0, -0.0, 2.0, 2.0, -2.0, 1e-30, np.nan], np.float32)
    for name in ["remainder", "fmod", "floor_divide", "divide"]:
        assert_same(getattr(vk, name)(vk.asarray(f), vk.asarray(g)).numpy(), numpy_result(name, f, g), name)
    assert_same((vk.reciprocal(vk.asarray(np.array([0, 1, -1, 2, -5], np.int32)))).numpy(),
                numpy_result("reciprocal", np.array([0, 1, -1, 2, -5], np.int32)))


# The array API standard's special cases of floor_divide for floating-point operands, as its text
# lists them (2024.12, elementwise_functions.floor_divide, "Special cases"): each row is the
# operands' classes and the specified result. The standard prefers floor(x1 / x2) where an operand
# is infinite (its notes let libraries return NaN or -1.0 as Python does; vkbackend does not).
_POS = [1.1754944e-38, 0.5, 1.0, 7.5, 3.0e9, 3.4028235e38]  # finite > 0, normal (no flushing)
_NEG = [-v for v in _POS]
_NAN, _INF = float("nan"), float("inf")
_ANY = [_NAN, _INF, -_INF, 0.0, -0.0] + _POS + _NEG
FLOOR_DIVIDE_SPECIAL_CASES = [
    ([_NAN], _ANY, _NAN),                     # either is NaN: NaN
    (_ANY, [_NAN], _NAN),
    ([_INF, -_INF], [_INF, -_INF], _NAN),     # both infinite: NaN
    ([0.0, -0.0], [0.0, -0.0], _NAN),         # both zero: NaN
    ([0.0], _POS + [_INF], 0.0),              # +0, x2 > 0: +0
    ([-0.0], _POS + [_INF], -0.0),            # -0, x2 > 0: -0
    ([0.0], _NEG + [-_INF], -0.0),            # +0, x2 < 0: -0
    ([-0.0], _NEG + [-_INF], 0.0),            # -0, x2 < 0: +0
    (_POS + [_INF], [0.0], _INF),             # x1 > 0, +0: +inf
    (_POS + [_INF], [-0.0], -_INF),           # x1 > 0, -0: -inf
    (_NEG + [-_INF], [0.0], -_INF),           # x1 < 0, +0: -inf
    (_NEG + [-_INF], [-0.0], _INF),           # x1 < 0, -0: +inf
    ([_INF], _POS, _INF),                     # +inf, positive finite: +inf
    ([_INF], _NEG, -_INF),                    # +inf, negative finite: -inf
    ([-_INF], _POS, -_INF),                   # -inf, positive finite: -inf
    ([-_INF], _NEG, _INF),                    # -inf, negative finite: +inf
    (_POS, [_INF], 0.0),                      # positive finite, +inf: +0
    (_POS, [-_INF], -0.0),                    # positive finite, -inf: -0
    (_NEG, [_INF], -0.0),                     # negative finite, +inf: -0
    (_NEG, [-_INF], 0.0),                     # negative finite, -inf: +0
]


def _special_table():
    """The table's cases as operand and result arrays (float32)."""
    rows = [(a, b, r) for xs, ys, r in FLOOR_DIVIDE_SPECIAL_CASES for a in xs for b in ys]
    return tuple(np.array(c, np.float32) for c in zip(*rows))


@pytest.mark.parametrize("n", SIZES)
def test_floor_divide_follows_the_standard(rng, n):
    """floor_divide, // and //= on the standard's special cases (mixed at random places into random
    finite operands) give its values; the finite cases give numpy's float32 result, which is the
    float64 floor of the exact quotient where float32 holds it, with the standard's signs."""
    sx, sy, sr = _special_table()
    k = min(n, sx.size)
    pick = rng.permutation(sx.size)[:k]  # every case once at n >= the table's size
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)).astype(np.float32)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)).astype(np.float32)
    at = rng.choice(n, k, replace=False)
    x[at], y[at] = sx[pick], sy[pick]
    special = np.zeros(n, bool)
    special[at] = True
    a, b = vk.asarray(x), vk.asarray(y)
    inplace = vk.asarray(x)
    inplace //= b
    for form, got in [("floor_divide", vk.floor_divide(a, b)), ("//", a // b), ("//=", inplace)]:
        got = got.numpy()
        assert got.dtype == np.float32 and got.shape == (n,), form
        assert_same(got[at], sr[pick], f"{form}: the standard's special cases")
        fin = ~special
        with np.errstate(all="ignore"):
            assert_same(got[fin], np.floor_divide(x[fin], y[fin]), f"{form}: finite, numpy's float32")
            q64 = np.floor_divide(x[fin].astype(np.float64), y[fin].astype(np.float64))
        small = np.abs(q64) < 2.0 ** 22  # float32's fmod and snapped quotient are exact there
        assert_same(got[fin][small], q64[small].astype(np.float32), f"{form}: finite, float64 floor")
        # nonzero finite operands: the result's sign is the product of theirs (the standard)
        assert_same(np.signbit(got[fin]), np.signbit(x[fin]) != np.signbit(y[fin]), f"{form}: signs")
    # a Python float operand on either side (the scalar kernel variant, __rfloordiv__)
    for s in (_INF, -_INF, 2.5, -0.0):
        assert_same((a // s).numpy(), numpy_result("floor_divide", x, np.float32(s)), f"x // {s}")
        assert_same((s // a).numpy(), numpy_result("floor_divide", np.float32(s), x), f"{s} // x")


def test_shifts_past_the_width_and_bool_bits(rng):
    x = sample(rng, 300, np.int32)
    s = rng.integers(-40, 40, 300).astype(np.int32)
    for name in ["left_shift", "right_shift"]:
        assert_same(getattr(vk, name)(vk.asarray(x), vk.asarray(s)).numpy(), numpy_result(name, x, s), name)
        assert_same(getattr(vk, name)(vk.asarray(x), 33).numpy(), numpy_result(name, x, 33), name)
    u = sample(rng, 300, np.uint32)
    su = rng.integers(0, 40, 300).astype(np.uint32)
    for name in ["left_shift", "right_shift"]:
        assert_same(getattr(vk, name)(vk.asarray(u), vk.asarray(su)).numpy(), numpy_result(name, u, su), name)
    b = rng.random(50) < 0.5
    assert_same(vk.invert(vk.asarray(b)).numpy(), ~b)
    assert_same(vk.bitwise_xor(vk.asarray(b), True).numpy(), b ^ True)
    vb, vf = vk.asarray(b), vk.asarray(np.ones(3, np.float32))
    assert_same(vk.left_shift(vb, vb).numpy(), np.left_shift(b, b))  # numpy shifts bools as int8
    with no_gpu_work(), pytest.raises(TypeError, match="invert"):
        vk.invert(vf)


def test_logical_ops_take_truth_of_any_dtype(rng):
    f = flush_subnormals(np.array([0.0, -0.0, np.nan, 0.5, -2.0, np.inf, 0.0, 1e-45], np.float32))
    i = np.array([0, 0, 1, 0, -5, 0, 3, 0], np.int32)
    u = np.array([0, 7, 0, 0, 1, 2**32 - 1, 0, 1], np.uint32)
    for x, y in [(f, i), (i, u), (u, f), (f, f), (i, True), (0.5, i)]:
        for name in ["logical_and", "logical_or", "logical_xor"]:
            got = getattr(vk, name)(vk.asarray(x) if isinstance(x, np.ndarray) else x,
                                    vk.asarray(y) if isinstance(y, np.ndarray) else y)
            assert_same(got.numpy(), getattr(np, name)(x, y), name)
    for x in (f, i, u):
        assert_same(vk.logical_not(vk.asarray(x)).numpy(), np.logical_not(x))


def test_power_of_integers():
    x = np.array([2, -3, 0, 1, -1, 7, 46341, -2], np.int32)
    y = np.array([10, 3, 0, 100, 31, 11, 2, 31], np.int32)
    assert_same(vk.power(vk.asarray(x), vk.asarray(y)).numpy(), np.power(x, y))
    assert_same(vk.pow(vk.asarray(x), 2).numpy(), np.power(x, 2))
    # numpy raises on negative integer powers; an array's give 1 / x**|n| truncated here
    got = vk.power(vk.asarray(x), vk.asarray(np.full(8, -3, np.int32))).numpy()
    assert_same(got, np.array([0, 0, 0, 1, -1, 0, 0, 0], np.int32))
    vx = vk.asarray(x)
    with no_gpu_work(), pytest.raises(ValueError, match="negative integer powers"):
        vk.power(vx, -2)
    f = x.astype(np.float32)
    with np.errstate(divide="ignore"):
        ref = np.power(f.astype(np.float64), -2)
    assert ulp_errors(vk.power(vk.asarray(f), -2).numpy(), ref).max() <= 0.5


@pytest.mark.parametrize("n", SIZES)
def test_clip_matches_numpy(rng, n):
    x = sample(rng, n, np.float32)
    lo, hi = sample(rng, n, np.float32), sample(rng, n, np.float32)
    a = vk.asarray(x)
    assert_same(vk.clip(a, vk.asarray(lo), vk.asarray(hi)).numpy(), np.clip(x, lo, hi))
    assert_same(vk.clip(a, -1.0, 2).numpy(), np.clip(x, -1.0, 2))
    assert_same(vk.clip(a, None, 0.5).numpy(), np.clip(x, None, 0.5))
    assert_same(vk.clip(a, min=np.float32(3)).numpy(), np.clip(x, min=np.float32(3)))
    assert_same(vk.clip(a, 2.0, 1.0).numpy(), np.clip(x, 2.0, 1.0))  # min > max: max
    i, ihi = sample(rng, n, np.int32), sample(rng, n, np.int32)
    assert_same(vk.clip(vk.asarray(i), -5, vk.asarray(ihi)).numpy(), np.clip(i, -5, ihi))
    assert_same(vk.clip(vk.asarray(i), vk.asarray(ihi), np.int32(7)).numpy(), np.clip(i, ihi, np.int32(7)))
    assert_same(vk.clip(vk.asarray(i), 0.5, 3).numpy(), np.clip(i, 0.5, 3).astype(np.float32))
    with no_gpu_work(), pytest.raises(TypeError, match="both"):
        vk.clip(a, 0.0, None, a_min=1.0)
    assert_same(vk.clip(a, a_min=-0.5, a_max=0.5).numpy(), np.clip(x, -0.5, 0.5))  # numpy's names
    assert_same(np.asarray(np.clip(a, -0.5, 0.5)), np.clip(x, -0.5, 0.5))  # through __array_function__


def test_broadcasting_and_scalars(rng):
    x = sample(rng, 12, np.float32).reshape(3, 4)
    y = sample(rng, 4, np.float32)
    i = sample(rng, 12, np.int32).reshape(3, 1, 4)
    for name in ["arctan2", "copysign", "remainder", "floor_divide", "hypot", "nextafter"]:
        got = getattr(vk, name)(vk.asarray(x), vk.asarray(y)).numpy()
        want = numpy_result(name, x, y)
        if name in ("arctan2", "hypot"):
            with np.errstate(all="ignore"):
                assert ulp_errors(got, getattr(np, name)(x.astype(np.float64), y)).max() <= 1.0, name
        else:
            assert_same(got, want, name)
    assert_same(vk.remainder(vk.asarray(i), vk.asarray(np.array([[3], [-4]], np.int32))).numpy(),
                np.remainder(i, np.array([[3], [-4]], np.int32)))
    assert_same(vk.floor_divide(17, vk.asarray(i)).numpy(), numpy_result("floor_divide", 17, i))
    assert_same(vk.bitwise_and(vk.asarray(i), 0xff).numpy(), np.bitwise_and(i, 0xff))
    assert_same(vk.copysign(2.5, vk.asarray(x)).numpy(), np.copysign(np.float32(2.5), x))
    assert vk.remainder(vk.asarray(i), 2.5).dtype == np.float32  # numpy: float64
    assert vk.floor(vk.asarray(i)).dtype == np.int32 and vk.rint(vk.asarray(i)).dtype == np.float32


def test_round_half_even_and_decimals(rng):
    x = np.concatenate([np.arange(-10, 10) * np.float32(0.5), sample(rng, 300, np.float32)]).astype(np.float32)
    for d in (0, 1, 2, -1, -2):
        with np.errstate(over="ignore"):
            want = np.round(x, d)
        assert_same(vk.round(vk.asarray(x), d).numpy(), want, f"round(x, {d})")
    # (numpy's results past int32's range are its float64 -> int32 casts: left out)
    i = np.concatenate([np.arange(-300, 300, 5), np.clip(sample(rng, 300, np.int32), -2 * 10**9, 2 * 10**9)]).astype(np.int32)
    for d in (0, 2, -1, -2, -9, -10):
        assert_same(vk.round(vk.asarray(i), d).numpy(), np.round(i, d), f"round(int, {d})")
    assert vk.around is vk.round


def test_array_api_names_are_the_numpy_functions():
    for alias, name in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("atan2", "arctan2"),
                        ("asinh", "arcsinh"), ("acosh", "arccosh"), ("atanh", "arctanh"), ("pow", "power"),
                        ("bitwise_invert", "invert"), ("bitwise_not", "invert"), ("mod", "remainder"),
                        ("bitwise_left_shift", "left_shift"), ("bitwise_right_shift", "right_shift")]:
        assert getattr(vk, alias) is getattr(vk, name), alias


def test_refusals_before_gpu_work():
    h = vk.asarray(np.ones(4, np.float16))
    f, i, u = vk.asarray(np.ones(4, np.float32)), vk.asarray(np.ones(4, np.int32)), vk.asarray(np.ones(4, np.uint32))
    b = vk.asarray(np.ones(4, bool))
    f3 = vk.asarray(np.ones(3, np.float32))
    with no_gpu_work():
        # float16 computes (test_float16_compute.py) where numpy's float16 loops do, not bitwise
        for fn, args in [(vk.invert, (h,)), (vk.bitwise_and, (h, h)), (vk.left_shift, (i, h))]:
            with pytest.raises(TypeError, match="float16"):
                fn(*args)
        with pytest.raises(TypeError, match="sign"):    # numpy has no bool sign
            vk.sign(b)
        with pytest.raises(TypeError, match="bitwise_and"):
            vk.bitwise_and(f, f)
        with pytest.raises(ValueError, match="broadcast"):
            vk.hypot(f, f3)
        with pytest.raises(OverflowError, match="out of bounds"):
            vk.remainder(u, -1)


def test_absolute_of_unsigned_is_exact(rng):
    """GLSL has no abs(uint): the H200 ran it through float (2114344915 -> 2114344960)."""
    x = rng.integers(2**24, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    assert_same(vk.abs(vk.asarray(x)).numpy(), np.abs(x))
    assert_same(abs(vk.asarray(x)).numpy(), np.abs(x))


def test_maximum_minimum_zero_ties_give_the_second_operand():
    """numpy's loops return the second operand on ties; the H200's min/max chose the sign themselves."""
    z = np.zeros(300, np.float32)
    for a, b in ((z, -z), (-z, z)):
        for name in ("maximum", "minimum"):
            assert_same(getattr(vk, name)(vk.asarray(a), vk.asarray(b)).numpy(), getattr(np, name)(a, b), name)
    # clip is maximum then minimum, so a zero tie gives the bound, as numpy's clip with array
    # bounds does (with scalar bounds numpy keeps x: its two paths differ)
    lo, hi = np.zeros(300, np.float32), np.ones(300, np.float32)
    assert_same(vk.clip(vk.asarray(-z), vk.asarray(lo), vk.asarray(hi)).numpy(), np.clip(-z, lo, hi))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_comparisons_with_python_ints_past_the_range_are_exact(rng, dtype):
    """numpy 2 compares an integer array with any Python int exactly (NEP 50), in both orders."""
    x = sample(rng, 257, dtype)
    for c in (2**40, -2**40, 2**32, -1, 2**31):
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
            assert_same(getattr(vk, name)(vk.asarray(x), c).numpy(), getattr(np, name)(x, c), f"{name} {c}")
            assert_same(getattr(vk, name)(c, vk.asarray(x)).numpy(), getattr(np, name)(c, x), f"{c} {name}")


def test_bool_arrays_with_python_ints_compute_in_int32():
    b = np.array([True, False, True])
    for got, want in ((vk.asarray(b) + 2, b + 2), (3 - vk.asarray(b), 3 - b), (vk.asarray(b) * -4, b * -4)):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got.numpy(), want.astype(np.int32))
    assert_same((vk.asarray(b) == 1).numpy(), b == 1)
