"""Reductions against numpy: every op, dtype, layout (rows, tiles, split across workgroups), boundary
sizes, NaN and empty cases, bad input, and one submit for a chain of reductions."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array
from vkbackend.primitives import reduce as R

EPS = float(np.finfo(np.float32).eps)
FLOAT_OPS = ("sum", "prod", "mean", "var", "std")
ALL_OPS = ("sum", "prod", "max", "min", "argmax", "argmin", "mean", "var", "std", "all", "any")


def _n_reduced(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(shape[a] for a in axes)


def expected(name, x, axis=None, keepdims=False, **kw):
    """numpy's result in vkbackend's 32-bit dtype, and the tolerance per element."""
    f = getattr(np, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if name in ("sum", "prod") and x.dtype.kind != "f":
            narrow = np.uint32 if x.dtype == np.uint32 else np.int32
            wide = np.uint64 if x.dtype == np.uint32 else np.int64
            return f(x.astype(wide), axis=axis, keepdims=keepdims).astype(narrow), 0.0  # wraps mod 2**32
        if name not in FLOAT_OPS:
            ref = f(x, axis=axis, keepdims=keepdims)
            return (ref.astype(np.int32) if name.startswith("arg") else ref), 0.0
        x64 = x.astype(np.float64)
        ref = f(x64, axis=axis, keepdims=keepdims, **kw)
        n = _n_reduced(x.shape, axis)
        grow = 2 * math.log2(n + 2) * EPS  # rounding error grows with log n
        if name in ("sum", "mean"):
            tol = grow * np.sum(np.abs(x64), axis=axis, keepdims=keepdims) / (n if name == "mean" and n else 1)
        elif name == "prod":  # every one of the n - 1 products rounds, whatever the order;
            # a partial product in float32's denormal range rounds to a multiple of 2**-149
            tol = np.maximum((4 * math.sqrt(n) * EPS + grow) * np.abs(ref), 2 * n * 2.0 ** -149)
        elif name in ("var", "std"):
            # float32 data: the deviations from the mean carry errors of the data's magnitude, so
            # a spread far below the values (std 0.0024 of values near 1.1) is only known to
            # about eps * max|x|, not to eps relative to itself
            scale = np.max(np.abs(x64), axis=axis, keepdims=keepdims, initial=0.0)
            spread = np.sqrt(np.abs(ref)) if name == "var" else 1.0
            tol = 8 * grow * (np.abs(ref) + scale * spread)
        else:
            tol = 8 * grow * (np.abs(ref) + 1e-6)
        return ref.astype(np.float32), tol


def assert_matches(got, ref, tol):
    got = np.asarray(got)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, ref)
        return
    both_nan = np.isnan(got) & np.isnan(ref)
    same_inf = np.isinf(ref) & (got == ref)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    # Vulkan lets a device flush float32 denormals to zero (NVIDIA does): a result below the
    # smallest normal may come back as a signed zero.
    flushed = (got == 0) & (np.abs(ref) < np.finfo(np.float32).tiny)
    bad = ~((err <= tol) | same_inf | both_nan | flushed)
    assert not bad.any(), f"{bad.sum()} elements off: got {got[bad][:5]}, want {ref[bad][:5]}"


def check(name, x, axis=None, keepdims=False, on=None, **kw):
    ref, tol = expected(name, x, axis, keepdims, **kw)
    got = getattr(vk, name)(vk.asarray(x) if on is None else on, axis=axis, keepdims=keepdims, **kw)
    assert_matches(got.numpy(), ref, tol)


# ---- 1-D sizes at every boundary: subgroup, workgroup, vec4 unroll, split ----------------------
def _sizes(sg):
    wg, per_iter, split = R.WG, R.WG * 4 * R.UNROLL, 2 * R.WG * R.SPLIT_ITEMS
    return [0, 1, 2, 3, 5, sg - 1, sg, sg + 1, wg - 1, wg, wg + 1, 4 * wg + 1, per_iter - 1, per_iter,
            per_iter + 1, split - 1, split, split + 1, 300_007]


def test_1d_sizes_exact(rng, sg):
    """Integer-valued floats and ints: sums are exact, so a lost or doubled element shows."""
    for n in _sizes(sg):
        xf = rng.integers(-8, 9, n).astype(np.float32)
        xi = rng.integers(-1000, 1000, n, dtype=np.int32)
        for name in ("sum", "mean", "any") + (("max", "argmin") if n else ()):
            check(name, xf)
        for name in ("sum", "all") + (("argmax",) if n else ()):
            check(name, xi)


@pytest.mark.parametrize("n", [7, 1000, 65_537, 300_007])
def test_1d_random_floats_every_op(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    for name in ALL_OPS:
        if name == "prod":
            check(name, (1 + 0.01 * x).astype(np.float32))
        else:
            check(name, x)
    check("var", x, ddof=1)
    check("std", x, ddof=2.5)


def test_var_is_stable_with_a_large_mean(rng):
    x = (1000 + rng.standard_normal(200_003)).astype(np.float32)
    got = vk.var(x).numpy()
    want = x.astype(np.float64).var()
    assert abs(got - want) < 1e-3 * want  # float32 E[x^2] - mean^2: ulp(1e6) = 0.06 alone is 6% of var
    y = x[:199_995].reshape(3, 13_333, 5)  # non-adjacent axes: the two-pass path
    np.testing.assert_allclose(vk.std(y, axis=(0, 2)).numpy(), y.astype(np.float64).std(axis=(0, 2)), rtol=1e-3)


def test_views_at_every_alignment(rng):
    """Offsets 1..3 words: the vec4 path peels a scalar head."""
    x = rng.integers(-8, 9, 20_011).astype(np.float32)
    a = vk.asarray(x)
    for k in (1, 2, 3, 4):
        check("sum", x[k:], on=a[k:])
        check("argmax", x[k:], on=a[k:])
    m = rng.integers(-8, 9, (5, 4099)).astype(np.float32)  # rows start at every alignment
    b = vk.asarray(m)
    for k in range(4):
        check("sum", m[k], on=b[k])
        check("max", m[k:], axis=1, on=b[k:])


# ---- N-d: every axis, tuples of axes, keepdims ---------------------------------------------------
ND_CASES = [
    ((7,), [0, -1]),
    ((5, 33), [0, 1, None]),
    ((3, 4, 17), [0, 1, 2, (0, 1), (1, 2), (0, 2), None]),
    ((2, 3, 5, 7), [0, 3, -2, (0, 2), (1, 3), (0, 1, 3), (-1, -3, -4)]),
]


@pytest.mark.parametrize("shape,axes", ND_CASES, ids=[str(s) for s, _ in ND_CASES])
def test_nd_every_axis(rng, shape, axes):
    x = rng.standard_normal(shape).astype(np.float32)
    for axis in axes:
        for name in ALL_OPS:
            if name.startswith("arg") and isinstance(axis, tuple):
                continue
            check(name, x, axis)
        check("sum", x, axis, keepdims=True)
        check("var", x, axis, keepdims=True, ddof=1)
        if not isinstance(axis, tuple):
            check("argmin", x, axis, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_every_dtype(rng, dtype):
    x = random_array(rng, (6, 1031), dtype)  # rows of 1031: the vec4 path; columns: the tiled one
    for axis in (None, 0, 1):
        for name in ALL_OPS:
            check(name, (1 + 0.001 * x).astype(x.dtype) if name == "prod" and dtype == np.float32 else x, axis)
    assert vk.sum(x).dtype == (np.float32 if dtype == np.float32 else
                               np.uint32 if dtype == np.uint32 else np.int32)
    assert vk.max(x).dtype == dtype and vk.argmax(x).dtype == np.int32 and vk.all(x).dtype == np.bool_


def test_int_sums_wrap_modulo_2_32(rng):
    x = np.full(1001, 2**30, np.int32)
    assert vk.sum(x).item() == 2**30  # 1001 * 2**30 modulo 2**32
    check("sum", x)
    check("prod", rng.integers(1, 50, 300, dtype=np.int32))


def test_dtype_argument(rng):
    x = rng.integers(-100, 100, (4, 300), dtype=np.int32)
    got = vk.sum(x, axis=1, dtype=np.float32).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x.sum(1).astype(np.float32))
    assert vk.sum(x > 0, dtype=np.uint32).item() == (x > 0).sum()
    assert vk.mean(x, dtype=np.float32).dtype == np.float32


# ---- layouts: long inner axes, small rows, splits across workgroups -------------------------------
LAYOUTS = [((40_000, 3), 0), ((3, 20_000, 5), 1), ((20_000, 5), 1), ((300, 1_000), 1), ((2, 100_003), 1),
           ((1_000, 300), 0), ((9, 4, 999), (0, 2))]


@pytest.mark.parametrize("shape,axis", LAYOUTS, ids=[f"{s}-{a}" for s, a in LAYOUTS])
def test_layouts(rng, shape, axis):
    x = rng.integers(-8, 9, shape).astype(np.float32)
    for name in ("sum", "max", "argmax", "var", "all"):
        if name != "argmax" or not isinstance(axis, tuple):
            check(name, x, axis)


def test_many_splits_and_tiles_reuse_counters(rng, monkeypatch):
    """More split workgroups than lavapipe gets by default; twice, as counters must be back at 0."""
    monkeypatch.setattr(R, "SOFTWARE_GROUPS", 64)
    monkeypatch.setattr(R, "SPLIT_ITEMS", 2)
    for shape, axis in (((3, 50_001), 1), ((20_000, 40), 0), ((4_001,), 0)):
        x = rng.integers(-1000, 1000, shape, dtype=np.int32)
        for _ in range(2):
            check("sum", x, axis)
            check("argmin", x, axis)
        xf = rng.standard_normal(shape).astype(np.float32)
        check("var", xf, axis)
        xf[..., ::997] = np.nan
        check("max", xf, axis)


@pytest.mark.parametrize("wg,unroll", [(64, 1), (128, 2)])
def test_tunables(rng, monkeypatch, wg, unroll):
    monkeypatch.setattr(R, "WG", wg)
    monkeypatch.setattr(R, "UNROLL", unroll)
    x = rng.standard_normal((3, 7_777)).astype(np.float32)
    for axis in (None, 0, 1):
        for name in ("sum", "argmax", "std"):
            check(name, x, axis)


# ---- NaN, ties, infinities -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [5, 300, 40_003])
def test_nan_propagates_and_argmax_finds_the_first(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    for pos in sorted({0, n // 3, n - 1}):
        y = x.copy()
        y[pos] = np.nan
        y[n - 1 - (n - 1 - pos) // 2] = np.nan  # a second, later NaN (or the same one)
        for name in ("max", "min", "argmax", "argmin", "sum", "mean", "var", "all", "any"):
            check(name, y)
        check("var", y.reshape(1, -1), axis=0)  # var of one nan is nan
    m = x[: n - n % 5].reshape(-1, 5).copy()
    m[::2, 1] = np.nan
    for axis in (0, 1):
        for name in ("max", "min", "argmax", "argmin"):
            check(name, m, axis)
    assert np.isnan(vk.max(np.full(n, np.nan, np.float32)).item())
    assert vk.argmin(np.full(n, np.nan, np.float32)).item() == 0


def test_ties_pick_the_first_occurrence(rng):
    for shape, axis in (((50_001,), None), ((17, 3_001), 1), ((3_001, 17), 0)):
        x = rng.integers(0, 3, shape, dtype=np.int32)
        check("argmax", x, axis)
        check("argmin", x, axis)
        check("argmax", x.astype(np.float32), axis)
    x = np.full(10_000, -np.inf, np.float32)
    x[[7000, 9000]] = [1, 1]
    check("argmax", x)
    check("argmax", np.full(10_000, -np.inf, np.float32))
    check("max", np.array([np.inf, -np.inf, 0], np.float32))


# ---- empty reductions and 0-d ----------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis", [((0,), None), ((3, 0), 1), ((0, 3), 1), ((0, 3), 0), ((2, 0, 4), (0, 1)),
                                        ((0, 3), None), ((2, 3), ())])
def test_empty(shape, axis):
    x = np.zeros(shape, np.float32)
    for name in ALL_OPS:
        if name.startswith("arg") and isinstance(axis, tuple):
            continue
        if _n_reduced(shape, axis) == 0 and name in ("max", "min", "argmax", "argmin"):
            with no_gpu_work(), pytest.raises(ValueError, match="zero-size"):
                getattr(vk, name)(x, axis=axis)
            continue
        check(name, x, axis)


def test_zero_d_and_unit_axes(rng):
    for name in ALL_OPS:
        check(name, np.array(2.5, np.float32))
    x = rng.standard_normal((1, 5, 1)).astype(np.float32)
    for axis in (0, 2, (0, 2), 1):
        for name in ("sum", "argmax", "var", "mean"):
            if not (name == "argmax" and isinstance(axis, tuple)):
                check(name, x, axis, keepdims=True)


# ---- bad input: raise before any GPU work ------------------------------------------------------------
@pytest.mark.parametrize("call,exc,match", [
    (lambda a: vk.sum(a, axis=2), np.exceptions.AxisError, "out of bounds"),
    (lambda a: vk.max(a, axis=-3), np.exceptions.AxisError, "out of bounds"),
    (lambda a: vk.mean(a, axis=(0, -2)), ValueError, "duplicate"),
    (lambda a: vk.sum(a, axis=1.0), TypeError, "axis"),
    (lambda a: vk.sum(a, axis=True), TypeError, "axis"),
    (lambda a: vk.argmax(a, axis=(0,)), TypeError, "integer"),
    (lambda a: vk.sum(a, dtype=np.float16), TypeError, "float16"),
    (lambda a: vk.sum(a, dtype=np.bool_), TypeError, "bool"),
    (lambda a: vk.mean(a, dtype=np.int32), TypeError, "float32"),
    (lambda a: vk.var(a, ddof="1"), TypeError, "ddof"),
    (lambda a: vk.max(a[:0]), ValueError, "zero-size"),
    (lambda a: vk.argmin(a[:0], axis=0), ValueError, "zero-size"),
    (lambda a: vk.sum("abc"), TypeError, "expected"),
    (lambda a: vk.sum(np.zeros(3, np.complex64)), TypeError, "dtype"),
    (lambda a: vk.any(object()), TypeError, "expected"),
])
def test_bad_input_raises_before_gpu_work(rng, call, exc, match):
    a = vk.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    host = np.zeros((3, 4), np.float32)
    for operand in (a, host):
        with no_gpu_work(), pytest.raises(exc, match=match):
            call(operand)


# ---- laziness and properties --------------------------------------------------------------------------
def test_chain_of_reductions_is_one_submit(rng, whole_submits):
    x = rng.standard_normal((64, 300)).astype(np.float32)
    a = vk.asarray(x)
    vk.synchronize()
    before = vk.stats()
    r = vk.sum(vk.max(a, axis=1) - vk.mean(a, axis=1)) + vk.std(vk.var(a, axis=0)) + vk.argmax(a[3])
    got = r.numpy()
    after = vk.stats()
    assert after["submits"] - before["submits"] == 1
    assert after["dispatches"] - before["dispatches"] >= 5
    x64 = x.astype(np.float64)
    want = (x64.max(1) - x64.mean(1)).sum() + x64.var(0).std() + x[3].argmax()
    np.testing.assert_allclose(got, want, rtol=1e-4)


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(0, 9), min_size=1, max_size=4), data=st.data())
def test_property_sum_equals_numpy(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(-1000, 1000, shape, dtype=np.int32)
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    axis = data.draw(st.sampled_from([None, tuple(axes)] + ([axes[0]] if axes else [])))
    keepdims = data.draw(st.booleans())
    check("sum", x, axis, keepdims)
    check("mean", x.astype(np.float32), axis, keepdims)
