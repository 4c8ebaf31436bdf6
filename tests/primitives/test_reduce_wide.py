"""Reductions and scans of the WIDE dtypes (int8, uint8, int16, uint16, int64, uint64, float64)
against numpy, with exact references where numpy's own result is not one: integer sums and
products wrapped in the result dtype, float64 sums against math.fsum (at least as accurate as
numpy's pairwise sum), var/std against exact rationals (integers) or long doubles (float64).
Fresh random data, sizes around subgroup and workgroup boundaries, every axis with keepdims, NaN,
empty arrays, dtype=, and 64-bit values through the shared-memory fallback where a device lacks
subgroup arithmetic on them (shaderSubgroupExtendedTypes). Fresh buffers are poisoned (conftest),
so an element a kernel forgets to write shows up."""
import dataclasses
import importlib
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work
from vkbackend import runtime

WIDE = [np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64, np.float64]
INTS = [d for d in WIDE if np.dtype(d).kind in "iu"]
SIZES = [1, 7, 8, 31, 33, 255, 257, 4097, 100_003]
OPS = ["sum", "prod", "max", "min", "argmax", "argmin", "mean", "var", "std", "any", "all"]
SCANS = {"cumsum": np.add.accumulate, "cumprod": np.multiply.accumulate,
         "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}
EPS32, EPS64 = float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps)


def data(rng, shape, dtype, op=""):
    """Integers over their whole range (sums of 64-bit ones wrap); float64 over many magnitudes,
    near 1 for products (finite), with ties for max/min."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if op in ("prod", "cumprod"):
        return np.exp(rng.uniform(-0.7, 0.7, shape))  # products stay finite
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))
    if op in ("max", "min", "argmax", "argmin", "cummax", "cummin") and x.size > 4:
        x.flat[rng.integers(0, x.size, 3)] = x.flat[0]  # ties: the first occurrence wins
    return x


def result_dtype(op, dtype, want=None):
    """The array API's result dtypes (int32 the default integer), numpy's where it is silent."""
    d = np.dtype(dtype)
    if want is not None:
        return np.dtype(want)
    if op in ("sum", "prod", "cumsum", "cumprod") and d.kind in "biu" and d.itemsize < 8:
        return np.dtype(np.uint32 if d.kind == "u" else np.int32)
    if op in ("mean", "var", "std"):
        return np.dtype(np.float64 if d.itemsize == 8 else np.float32)
    if op in ("argmax", "argmin"):
        return np.dtype(np.int32)
    if op in ("any", "all"):
        return np.dtype(np.bool_)
    return d


def _along(f, x, axis, keepdims):
    """f(1-D array) -> Python number, over `axis` (None: all of x), keeping dims as numpy does."""
    if axis is None:
        r = np.array(f(x.reshape(-1)), dtype=object)
        return r.reshape((1,) * x.ndim) if keepdims else r
    axes = axis if isinstance(axis, tuple) else (axis,)
    axes = tuple(a % x.ndim for a in axes)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + list(axes)).reshape([x.shape[a] for a in kept] + [-1])
    flat = moved.reshape(-1, moved.shape[-1])
    r = np.empty(flat.shape[0], dtype=object)
    for i, row in enumerate(flat):
        r[i] = f(row)
    r = r.reshape([x.shape[a] for a in kept])
    return np.expand_dims(r, axes) if keepdims else r


def _exact_var(row, ddof):
    """var of the exact values, correctly rounded: in integers (floats scaled by a power of two)."""
    n = len(row)
    if n - ddof <= 0 or (row.dtype.kind == "f" and not np.isfinite(row).all()):
        return math.nan
    if row.dtype.kind in "iu":
        vals, scale = [int(v) for v in row], 1
    else:
        ratios = [float(v).as_integer_ratio() for v in row]
        scale = max(d for _, d in ratios)  # a power of two
        vals = [p * (scale // d) for p, d in ratios]
    s1, s2 = sum(vals), sum(v * v for v in vals)
    return float(Fraction(n * s2 - s1 * s1, n * (n - ddof) * scale * scale))


def check_reduction(op, x, got, axis=None, keepdims=False, dtype=None, ddof=0):
    """got (a vk.Array) against the reference for op(x) with numpy's axis and keepdims."""
    want_dtype = result_dtype(op, x.dtype, dtype)
    assert isinstance(got, vk.Array)
    assert got.dtype == want_dtype, (op, x.dtype, got.dtype, want_dtype)
    g = got.numpy()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_shape = np.sum(np.zeros(x.shape, np.int8), axis=axis, keepdims=keepdims).shape
        assert g.shape == ref_shape, (g.shape, ref_shape)
        if op in ("sum", "prod") and want_dtype.kind in "iu":
            wide = x.astype(np.uint64 if want_dtype.kind == "u" else np.int64)  # wraps mod 2**64
            want = getattr(np, op)(wide, axis=axis, keepdims=keepdims).astype(want_dtype)
            np.testing.assert_array_equal(g, want)
        elif op in ("max", "min", "any", "all"):
            np.testing.assert_array_equal(g, getattr(np, op)(x, axis=axis, keepdims=keepdims))
        elif op in ("argmax", "argmin"):
            want = getattr(np, op)(x, axis=axis, keepdims=keepdims)
            np.testing.assert_array_equal(g, want.astype(np.int32))
        elif op == "sum" or (op == "mean" and want_dtype == np.float64):
            # float64: at most numpy's pairwise error (and an ulp or two) off the exact result
            exact = _along(lambda r: math.fsum(r.astype(np.float64)) / (len(r) if op == "mean" else 1)
                           if len(r) else (math.nan if op == "mean" else 0.0), x, axis, keepdims)
            exact = exact.astype(np.float64)
            pairwise = getattr(np, op)(x.astype(want_dtype), axis=axis, keepdims=keepdims).astype(np.float64)
            assert_close(g, exact, np.abs(pairwise - exact) + 2 * np.spacing(np.abs(exact)))
        elif op == "prod":
            want = np.prod(x.astype(np.longdouble), axis=axis, keepdims=keepdims)
            n = max(x.size // max(g.size, 1), 1)
            np.testing.assert_allclose(g, want.astype(np.float64), rtol=4 * math.sqrt(n) * EPS64)
        elif op == "mean":  # float32 sums of 8/16-bit integers, rounding past 2**24
            n = x.size // max(g.size, 1)
            exact = _along(lambda r: math.fsum(r.astype(np.float64)) / len(r) if len(r) else math.nan,
                           x, axis, keepdims).astype(np.float64)
            mag = _along(lambda r: math.fsum(np.abs(r.astype(np.float64))) / len(r) if len(r) else 0.0,
                         x, axis, keepdims).astype(np.float64)
            assert_close(g, exact, 2 * math.log2(n + 2) * EPS32 * mag + EPS32 * np.abs(exact))
        else:  # var, std
            n = x.size // max(g.size, 1)
            exact = _along(lambda r: _exact_var(r, ddof), x, axis, keepdims).astype(np.float64)
            if op == "std":
                exact = np.sqrt(exact)
            eps = EPS64 if want_dtype == np.float64 else EPS32
            assert_close(g, exact, 8 * eps * np.abs(exact) + 1e-300)


def assert_close(got, want, tol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    with np.errstate(invalid="ignore"):
        ok = both_nan | (got == want) | (np.abs(got - want) <= tol)
    assert ok.all(), f"{(~ok).sum()} elements off: got {got[~ok][:4]}, want {want[~ok][:4]}"


def reduce(op, a, **kw):
    return getattr(vk, op)(a, **kw)


# ---- reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_flat_sizes(rng, dtype, op):
    """Over all of x, at sizes around the subgroup and workgroup sizes and split across
    workgroups (100k), from an offset that leaves the vector loads unaligned."""
    for n in SIZES:
        x = data(rng, n + 3, dtype, op)
        a = vk.asarray(x, dtype=dtype)[3:]  # a view: element offset 3
        check_reduction(op, x[3:], reduce(op, a))


AXES = [((257, 33), None), ((257, 33), 0), ((33, 257), 1), ((4097, 3), -1), ((3, 4097), 0),
        ((7, 31, 8), (0, 2)), ((5, 8, 33), (1, 2)), ((2, 1, 3), 1)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_axes(rng, dtype, op, keepdims):
    for shape, axis in AXES:
        if op.startswith("arg") and isinstance(axis, tuple):
            continue  # numpy's argmax takes one axis
        x = data(rng, shape, dtype, op)
        check_reduction(op, x, reduce(op, vk.asarray(x, dtype=dtype), axis=axis, keepdims=keepdims),
                        axis, keepdims)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_64bit_sums_wrap(rng, dtype):
    """int64 / uint64 sums and products past their range wrap modulo 2**64, as numpy's."""
    info = np.iinfo(dtype)
    x = np.full(1000, info.max - 3, dtype) ^ rng.integers(0, 255, 1000, dtype=dtype)
    for n in (2, 33, 1000):
        for op in ("sum", "prod"):
            got = reduce(op, vk.asarray(x[:n], dtype=dtype))
            with np.errstate(all="ignore"):
                want = getattr(np, op)(x[:n])
            assert got.dtype == dtype and got.numpy() == want, (op, n, got.numpy(), want)
    assert int(vk.sum(vk.asarray(x, dtype=dtype)).numpy()) != int(np.sum(x.astype(object)))  # it did wrap


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_sums_in_32_bits(rng, dtype):
    """8/16-bit sums accumulate in int32/uint32 (no wrap in the element type); products and
    dtype= in the element type wrap as numpy's."""
    x = np.full(100_003, np.iinfo(dtype).max, dtype)  # 16-bit: past 2**31, wrapping in 32 bits
    a = vk.asarray(x, dtype=dtype)
    got = vk.sum(a)
    assert got.dtype == result_dtype("sum", dtype)
    assert got.numpy() == np.sum(x.astype(np.int64)).astype(got.dtype)
    assert vk.sum(a, dtype=dtype).numpy() == np.sum(x, dtype=dtype)  # numpy wraps in dtype too
    y = data(rng, 257, dtype)
    for op in ("sum", "prod"):
        got = reduce(op, vk.asarray(y, dtype=dtype), dtype=dtype)
        with np.errstate(all="ignore"):
            assert got.dtype == dtype and got.numpy() == getattr(np, op)(y, dtype=dtype)


def test_float64_sum_is_accurate(rng):
    """Ill-conditioned float64 sums (huge cancellations): within numpy's pairwise error of the
    exact sum, at most an ulp further, split across workgroups or not, along rows and columns."""
    for n in (257, 4097, 100_003, 1_000_003):
        big = rng.standard_normal(n) * 1e12
        x = np.concatenate([big, -big, rng.standard_normal(n)])
        rng.shuffle(x)
        check_reduction("sum", x, vk.sum(vk.asarray(x, dtype=np.float64)))
        check_reduction("mean", x, vk.mean(vk.asarray(x, dtype=np.float64)))
    x = rng.standard_normal((3001, 7)) * np.exp(rng.uniform(-30, 30, (3001, 7)))
    for axis in (0, 1):
        check_reduction("sum", x, vk.sum(vk.asarray(x, dtype=np.float64), axis=axis), axis)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.int16])
def test_var_std_exact(rng, dtype):
    """var/std against the exact value, data far from zero (a large offset, integers near the top
    of their range), with ddof."""
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    for n in (2, 33, 4097, 30_001):
        if info is None:
            sets = [1e9 + rng.standard_normal(n), 1e15 + rng.integers(0, 3, n)]
        else:  # near the top; and (64-bit) a spread far below the double mean's spacing
            sets = [np.array(info.max, dtype) - rng.integers(0, 1000, n, dtype=dtype)]
            if info.bits == 64:
                sets.append(np.array(2**62 + 1000, dtype) - rng.integers(0, 3, n, dtype=dtype))
        for x in sets:
            a = vk.asarray(x, dtype=dtype)
            for ddof in (0, 1):
                for op in ("var", "std"):
                    check_reduction(op, x, reduce(op, a, ddof=ddof), ddof=ddof)


@pytest.fixture
def inexact_builtins(monkeypatch):
    """reduce.comp built with VK_TEST_INEXACT_BUILTINS: its double division and sqrt 2**-30 off
    (Vulkan promises them no more than single precision's accuracy, and some devices use that)."""
    module = importlib.import_module("vkbackend.primitives.reduce")
    defines = module._defines
    monkeypatch.setattr(module, "_defines", lambda *a: {**defines(*a), "VK_TEST_INEXACT_BUILTINS": 1})


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64])
def test_mean_var_std_with_inexact_division(rng, inexact_builtins, dtype):
    """mean, var and std as exact as ever with a far-off device division and sqrt: 64-bit data
    whose double mean (spacing 1024) is hundreds off, far more than the spread, so that var's
    correction cancels about 2**18-fold (a single correction of the quotient is not enough)."""
    for n in (33, 4097, 30_001):
        if dtype == np.float64:
            x = 1e15 + rng.integers(0, 3, n) + rng.standard_normal(n) / 8
        else:
            x = np.array(2**62 + 600, dtype) - rng.integers(0, 3, n, dtype=dtype)
        a = vk.asarray(x, dtype=dtype)
        check_reduction("mean", x, vk.mean(a))
        for ddof in (0, 1):
            for op in ("var", "std"):
                check_reduction(op, x, reduce(op, a, ddof=ddof), ddof=ddof)


def test_float64_nan_and_inf(rng):
    """NaN propagates through every float64 reduction as in numpy: max/min return it, argmax/argmin
    the first one, sums and var NaN; an infinity sums to itself, +inf and -inf to NaN."""
    for n in (7, 257, 100_003):
        x = rng.standard_normal(n)
        for where in ([0], [n - 1], [n // 2, n // 3]):
            y = x.copy()
            y[where] = np.nan
            a = vk.asarray(y, dtype=np.float64)
            for op in OPS:
                check_reduction(op, y, reduce(op, a))
        y = x.copy()
        y[n // 2] = np.inf
        a = vk.asarray(y, dtype=np.float64)
        assert vk.sum(a).numpy() == np.inf and vk.mean(a).numpy() == np.inf
        assert np.isnan(vk.var(a).numpy())
        y[0] = -np.inf
        assert np.isnan(vk.sum(vk.asarray(y, dtype=np.float64)).numpy())
    x = rng.standard_normal((33, 257))
    x[rng.random(x.shape) < 0.01] = np.nan
    for axis in (0, 1):
        for op in ("max", "min", "argmax", "argmin", "sum", "mean"):
            check_reduction(op, x, reduce(op, vk.asarray(x, dtype=np.float64), axis=axis), axis)


@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_empty(dtype):
    """Empty reductions: the identities (sum 0, prod 1, all True, any False), NaN for mean and var,
    ValueError for max/min/argmax/argmin (no identity), before any GPU work."""
    a = vk.asarray(np.zeros((0, 3), dtype), dtype=dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for op in ("sum", "prod", "mean", "var", "std", "any", "all"):
            for axis in (None, 0):
                got = reduce(op, a, axis=axis)
                want = getattr(np, op)(np.zeros((0, 3), dtype), axis=axis)
                assert got.dtype == result_dtype(op, dtype) and got.shape == np.shape(want)
                np.testing.assert_array_equal(got.numpy(), np.asarray(want).astype(got.dtype))
    for op in ("max", "min", "argmax", "argmin"):
        with no_gpu_work(), pytest.raises(ValueError, match="zero-size"):
            reduce(op, a, axis=0)
    got = vk.sum(a, axis=1)  # three outputs, nothing reduced into them
    assert got.shape == (0,)


def test_dtype_argument(rng):
    """dtype= is honoured: each element converted, then combined in that dtype (numpy's)."""
    x32 = rng.integers(-2**31, 2**31 - 1, 100_003, dtype=np.int32)
    got = vk.sum(vk.asarray(x32), dtype=np.int64)
    assert got.dtype == np.int64 and int(got.numpy()) == int(np.sum(x32, dtype=np.int64))
    u32 = rng.integers(0, 2**32 - 1, 4097, dtype=np.uint32)
    got = vk.sum(vk.asarray(u32), dtype=np.uint64)
    assert got.dtype == np.uint64 and int(got.numpy()) == int(np.sum(u32, dtype=np.uint64))
    f32 = (rng.standard_normal(100_003) * 1e4).astype(np.float32)
    check_reduction("sum", f32, vk.sum(vk.asarray(f32), dtype=np.float64), dtype=np.float64)
    check_reduction("mean", f32, vk.mean(vk.asarray(f32), dtype=np.float64), dtype=np.float64)
    check_reduction("var", f32, vk.var(vk.asarray(f32), dtype=np.float64), dtype=np.float64)
    i16 = data(rng, (33, 257), np.int16)
    for op in ("mean", "var", "std"):
        check_reduction(op, i16, reduce(op, vk.asarray(i16, dtype=np.int16), axis=1, dtype=np.float64),
                        axis=1, dtype=np.float64)
    got = vk.prod(vk.asarray(i16[0, :5], dtype=np.int16), dtype=np.int64)
    assert got.dtype == np.int64 and got.numpy() == np.prod(i16[0, :5], dtype=np.int64)
    f64 = rng.standard_normal(4097) * 100
    got = vk.sum(vk.asarray(f64, dtype=np.float64), dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), np.sum(f64.astype(np.float32), dtype=np.float64),
                               atol=4 * math.log2(4097) * EPS32 * np.abs(f64).sum())
    got = vk.mean(vk.asarray(f64, dtype=np.float64), dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), f64.mean(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_count_nonzero(rng, dtype):
    x = data(rng, (33, 257), dtype) * rng.integers(0, 2, (33, 257)).astype(dtype)
    a = vk.asarray(x, dtype=dtype)
    for axis in (None, 0, 1):
        got = vk.count_nonzero(a, axis=axis)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got.numpy(), np.count_nonzero(x, axis=axis))


@pytest.mark.parametrize("call,exc,match", [
    (lambda a: vk.sum(a, dtype=np.float16), TypeError, "float16"),
    (lambda a: vk.sum(a, dtype=np.bool_), TypeError, "bool"),
    (lambda a: vk.mean(a, dtype=np.int64), TypeError, "float64"),
    (lambda a: vk.var(a, dtype=np.uint8), TypeError, "float64"),
    (lambda a: vk.cumsum(a, dtype=np.float16), TypeError, "float16"),
    (lambda a: vk.max(a[:0]), ValueError, "zero-size"),
])
@pytest.mark.parametrize("dtype", [np.int8, np.uint64, np.float64], ids=lambda d: np.dtype(d).name)
def test_bad_input_raises_before_gpu_work(dtype, call, exc, match):
    a = vk.asarray(np.ones(6, dtype), dtype=dtype)
    vk.synchronize()
    with no_gpu_work(), pytest.raises(exc, match=match):
        call(a)


# ---- scans ------------------------------------------------------------------------------------
def scan_reference(op, x, axis, exclusive, reverse, out_dtype):
    """The scan in out_dtype: integers in 64 bits, wrapped (2**32 divides 2**64); floats in long
    double (cumsum, cumprod) or exactly (cummax, cummin)."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    if out_dtype.kind in "iu":
        wide = x.astype(np.uint64 if out_dtype.kind == "u" else np.int64)
    else:
        wide = x.astype(np.longdouble if op in ("cumsum", "cumprod") else out_dtype)
    if reverse:
        wide = np.flip(wide, axis)
    with np.errstate(all="ignore"):
        r = SCANS[op](wide, axis=axis)
        if exclusive:
            if op in ("cumsum", "cumprod"):
                ident = 0 if op == "cumsum" else 1
            elif out_dtype.kind == "f":
                ident = -np.inf if op == "cummax" else np.inf
            else:
                ident = np.iinfo(out_dtype).min if op == "cummax" else np.iinfo(out_dtype).max
            r = np.moveaxis(r, axis, 0)
            first = np.full((1,) + r.shape[1:], ident, r.dtype)
            r = np.moveaxis(np.concatenate([first, r[:-1]]), 0, axis)
        if reverse:
            r = np.flip(r, axis)
        return r.astype(out_dtype) if out_dtype.kind in "iub" or op in ("cummax", "cummin") else r


def check_scan(op, x, got, axis=None, exclusive=False, reverse=False, dtype=None):
    out_dtype = result_dtype(op, x.dtype, dtype)
    assert got.dtype == out_dtype, (op, x.dtype, got.dtype)
    g = got.numpy()
    want = scan_reference(op, x, axis, exclusive, reverse, out_dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    if out_dtype.kind != "f" or op in ("cummax", "cummin"):
        np.testing.assert_array_equal(g, want)
        return
    n = max(x.size if axis is None else x.shape[axis], 1)
    if op == "cumsum":
        scale = np.abs(scan_reference(op, np.abs(x.astype(np.float64)), axis, exclusive, reverse, out_dtype))
        bound = 4 * math.log2(n + 1) * EPS64 * scale.astype(np.float64) + 1e-300
    else:
        bound = 16 * math.sqrt(n) * EPS64 * np.abs(want).astype(np.float64) + 1e-300
    err = np.abs(g.astype(np.longdouble) - want).astype(np.float64)
    assert not np.isnan(g).any(), "NaN in the output (an unwritten, poisoned element?)"
    assert (err <= bound).all(), f"error {err.max()} > bound {bound[np.argmax(err - bound)]}"


@pytest.mark.parametrize("op", list(SCANS))
@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_scan_flat_sizes(rng, dtype, op):
    """1-D scans at the boundary sizes: one tile, many tiles (the chained scan), short rows."""
    for n in SIZES:
        x = data(rng, n + 1, dtype, op)
        a = vk.asarray(x, dtype=dtype)[1:]  # unaligned for the vector loads
        check_scan(op, x[1:], getattr(vk, op)(a))


@pytest.mark.parametrize("op", list(SCANS))
@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_scan_axes_and_flags(rng, dtype, op):
    """Rows (the last axis), columns (scan_strided), flattened; exclusive, reverse; both
    algorithms of the row scan."""
    for shape, axis in [((3, 4097), -1), ((4097, 3), 0), ((33, 257), 1), ((257, 33), 0),
                        ((2, 40, 7), 1), ((31, 8), None)]:
        x = data(rng, shape, dtype, op)
        a = vk.asarray(x, dtype=dtype)
        for exclusive, reverse in [(False, False), (True, False), (False, True), (True, True)]:
            check_scan(op, x, getattr(vk, op)(a, axis=axis, exclusive=exclusive, reverse=reverse),
                       axis, exclusive, reverse)
    x = data(rng, 20_001, dtype, op)
    check_scan(op, x, getattr(vk, op)(vk.asarray(x, dtype=dtype), algorithm="reduce_then_scan"))


def test_scan_wrap_nan_and_dtype(rng):
    """int64 cumsum wraps; float64 cummax/cummin propagate NaN; dtype= converts each element first
    (8-bit sums wrap in their dtype as numpy's); cumulative_sum of int16 is int32."""
    x = np.full(5000, 2**62, np.int64) + rng.integers(0, 1000, 5000)
    check_scan("cumsum", x, vk.cumsum(vk.asarray(x, dtype=np.int64)))
    y = rng.standard_normal(10_000)
    y[[17, 6000]] = np.nan
    for op in ("cummax", "cummin"):
        check_scan(op, y, getattr(vk, op)(vk.asarray(y, dtype=np.float64)))
    i8 = data(rng, 4097, np.int8)
    got = vk.cumsum(vk.asarray(i8, dtype=np.int8), dtype=np.int8)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got.numpy(), np.cumsum(i8, dtype=np.int8))
    got = vk.cumprod(vk.asarray(i8, dtype=np.int8), dtype=np.uint16)
    np.testing.assert_array_equal(got.numpy(), np.cumprod(i8, dtype=np.uint16))
    i32 = rng.integers(-2**31, 2**31 - 1, 100_003, dtype=np.int32)
    check_scan("cumsum", i32, vk.cumsum(vk.asarray(i32), dtype=np.int64), dtype=np.int64)
    f32 = rng.standard_normal(100_003).astype(np.float32)
    check_scan("cumsum", f32, vk.cumsum(vk.asarray(f32), dtype=np.float64), dtype=np.float64)
    i16 = data(rng, (5, 33), np.int16)
    got = vk.cumulative_sum(vk.asarray(i16, dtype=np.int16), axis=1, include_initial=True)
    assert got.dtype == np.int32
    want = np.concatenate([np.zeros((5, 1), np.int64), np.cumsum(i16, axis=1, dtype=np.int64)], axis=1)
    np.testing.assert_array_equal(got.numpy(), want)
    f64 = np.array([-0.0, -0.0, 1.0])
    got = vk.cumsum(vk.asarray(f64, dtype=np.float64)).numpy()
    assert np.signbit(got[:2]).all() and got[2] == 1.0  # numpy keeps a leading -0.0
    assert np.signbit(vk.cumsum(vk.asarray(f64, dtype=np.float64), exclusive=True).numpy()[0])


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float64], ids=lambda d: np.dtype(d).name)
def test_scan_fallback_reduces_predecessors(rng, monkeypatch, dtype):
    """The chained scan's decoupled fallback (every look-back reduces its predecessors from the
    input) and the blocked layout: 64-bit tile states of four words, 8-bit inputs."""
    from vkbackend.primitives import scan
    for tuning in (dataclasses.replace(scan.TUNING, force_fallback=True),
                   dataclasses.replace(scan.TUNING, layout="blocked", subgroup_lookback=False)):
        monkeypatch.setattr(scan, "TUNING", tuning)
        for op in ("cumsum", "cummax"):
            x = data(rng, 20_001, dtype, op)
            check_scan(op, x, getattr(vk, op)(vk.asarray(x, dtype=dtype)))
            check_scan(op, x, getattr(vk, op)(vk.asarray(x, dtype=dtype), exclusive=True), None, True)


@pytest.mark.parametrize("dtype", WIDE, ids=lambda d: np.dtype(d).name)
def test_scan_empty(dtype):
    for op in SCANS:
        got = getattr(vk, op)(vk.asarray(np.zeros((0, 4), dtype), dtype=dtype), axis=0)
        assert got.shape == (0, 4) and got.dtype == result_dtype(op, dtype)


# ---- 64-bit values without subgroup arithmetic on them ----------------------------------------
@pytest.fixture
def no_extended_types(monkeypatch):
    """The device as one without shaderSubgroupExtendedTypes: 64-bit integers (and float64's
    uint64 keys) reduce and scan through lib/workgroup.glsl's shared-memory fallback, beside the
    32-bit types' subgroup arithmetic; the look-back walks with one invocation."""
    rt = runtime.get()
    features = rt.device.features - {"shaderSubgroupExtendedTypes"}
    monkeypatch.setattr(rt, "device", dataclasses.replace(rt.device, features=features))
    yield
    from vkbackend.primitives import recipes
    recipes.clear()


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64], ids=lambda d: np.dtype(d).name)
def test_64bit_without_extended_subgroup_types(rng, no_extended_types, dtype):
    for n in (33, 4097, 100_003):
        for op in ("sum", "max", "argmin", "var"):
            x = data(rng, n, dtype, op)
            check_reduction(op, x, reduce(op, vk.asarray(x, dtype=dtype)))
        for op in ("cumsum", "cummax"):
            x = data(rng, n, dtype, op)
            check_scan(op, x, getattr(vk, op)(vk.asarray(x, dtype=dtype)))
            check_scan(op, x, getattr(vk, op)(vk.asarray(x, dtype=dtype), exclusive=True, reverse=True),
                       None, True, True)
    x = data(rng, (257, 33), dtype, "max")
    for axis in (0, 1):
        check_reduction("max", x, vk.max(vk.asarray(x, dtype=dtype), axis=axis), axis)


def test_result_dtypes():
    """The dtype table (no GPU work needed beyond the results)."""
    for dtype in WIDE:
        a = vk.asarray(np.ones(3, dtype), dtype=dtype)
        for op in OPS:
            assert reduce(op, a).dtype == result_dtype(op, dtype), (op, dtype)
        for op in SCANS:
            assert getattr(vk, op)(a).dtype == result_dtype(op, dtype), (op, dtype)
