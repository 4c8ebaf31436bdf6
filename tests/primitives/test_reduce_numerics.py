"""The accuracy of mean, var and std against numpy in float64: integers near the ends of int32 and
uint32 (numpy computes their var in float64), float32 data far from zero (a large offset), and
the mean of the largest array lavapipe holds. var and std must be numpy's float64 result rounded
to float32, within an ulp; float32 data within a few float32 roundings relative."""
import numpy as np
import pytest

import vkbackend as vk


def ulps_off(got, want64):
    """|got - want| in ulps of float32(want), want in float64."""
    want32 = np.asarray(want64).astype(np.float32)
    ulp = np.spacing(np.abs(want32)).astype(np.float64)
    return np.abs(np.asarray(got, np.float64) - np.asarray(want64)) / ulp


def within_ulp(got, want64, ulps=1.0):
    """got (float32) is float32(want64) or a neighbour: at most `ulps` ulps from the exact value."""
    off = ulps_off(got, want64)
    assert got.dtype == np.float32 and (off <= ulps).all(), f"{off.max():.2f} ulps off"


def integers(rng, dtype, spread, shape, both_ends=False):
    """Integers of `dtype` within `spread` of the top of its range (both_ends: of the top and the
    bottom of int32's, at random), or over the whole range (spread "wide")."""
    info = np.iinfo(dtype)
    if spread == "wide":
        return rng.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True).astype(dtype)
    top = int(info.max) - 5
    x = rng.integers(top - spread, top, shape, dtype=np.int64, endpoint=True)
    if both_ends:
        x = np.where(rng.random(shape) < 0.5, x, -x)
    return x.astype(dtype)


# ---- integers: numpy's var is float64, ours float32 computed exactly enough to round to it -----
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("spread", [1, 10, 100_000, "wide"])
def test_integer_var_and_std_are_numpys_rounded(rng, dtype, spread):
    """A million integers near 2**31 (or 2**32), spread over 2 to 10**5 values or the whole range:
    float32 Welford states were ~10 ulps off (their deviations rounded to the 64 apart floats near
    1e9), worse for spreads of a few values."""
    n = 1_000_003
    x = integers(rng, dtype, spread, n)
    x64 = x.astype(np.float64)
    for ddof in (0, 1):
        within_ulp(vk.var(x, ddof=ddof).numpy(), x64.var(ddof=ddof))
        within_ulp(vk.std(x, ddof=ddof).numpy(), x64.std(ddof=ddof))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_var_along_every_layout(rng, dtype):
    """Rows (one output per workgroup), columns (the tree layout), non-adjacent axes (a transpose
    first), a split across workgroups (a few long rows), and both ends of int32 at once."""
    x = integers(rng, dtype, 1000, (40, 3, 5_001))
    x64 = x.astype(np.float64)
    for axis in (2, 0, (0, 2), None, (1, 2)):
        within_ulp(vk.var(x, axis=axis).numpy(), x64.var(axis=axis))
    if dtype == np.int32:
        y = integers(rng, dtype, 1000, (3, 20_000), both_ends=True)
        within_ulp(vk.var(y, axis=1).numpy(), y.astype(np.float64).var(axis=1))
        within_ulp(vk.std(y.T, axis=0).numpy(), y.astype(np.float64).std(axis=1))


def test_bool_var(rng):
    x = rng.random((7, 3001)) < 0.3
    within_ulp(vk.var(x, axis=1).numpy(), x.astype(np.float64).var(axis=1))


# ---- float32 data far from zero ------------------------------------------------------------------
def rel_err(got, want64):
    return np.abs(np.asarray(got, np.float64) - want64) / np.abs(want64)


@pytest.mark.parametrize("offset", [1e4, -3e5])
def test_float_var_with_a_large_offset(rng, offset):
    """offset + N(0, 1) in float32, a million values: one-pass float32 Welford states were ~1e-5
    off (relative); two passes with double-float sums are at float32 rounding level."""
    n = 1 << 20
    x = (offset + rng.standard_normal(n)).astype(np.float32)
    x64 = x.astype(np.float64)
    for ddof in (0, 1):
        assert rel_err(vk.var(x, ddof=ddof).numpy(), x64.var(ddof=ddof)) <= 1e-6
        assert rel_err(vk.std(x, ddof=ddof).numpy(), x64.std(ddof=ddof)) <= 1e-6
    m = x[: 1000 * 1000].reshape(1000, 1000)
    m64 = m.astype(np.float64)
    for axis in (0, 1):
        assert (rel_err(vk.var(m, axis=axis).numpy(), m64.var(axis=axis)) <= 1e-6).all()
    c = x[: 50 * 41 * 500].reshape(50, 41, 500)
    assert (rel_err(vk.std(c, axis=(0, 2)).numpy(), c.astype(np.float64).std(axis=(0, 2))) <= 1e-6).all()


def test_var_special_values(rng):
    """Constant data: exactly +0.0; NaN or inf anywhere: NaN (as numpy: inf - inf); squares past
    float32: inf, where numpy's float64 variance only rounds to inf; ddof past n: inf or NaN
    (numpy's x / 0); nothing: NaN."""
    const = np.full(10_001, 7.25, np.float32)
    got = vk.var(const).numpy()
    assert got == 0 and not np.signbit(got)
    assert vk.var(np.full(5, 1_000_000_007, np.int32), ddof=1).numpy() == 0
    x = rng.standard_normal(5_000).astype(np.float32)
    for special in (np.nan, np.inf, -np.inf):
        y = x.copy()
        y[1234] = special
        assert np.isnan(vk.var(y).numpy()) and np.isnan(vk.std(y).numpy())
    big = np.array([3e38, -3e38, 1e38], np.float32)
    with np.errstate(over="ignore"):
        want = np.float32(big.astype(np.float64).var())
    assert vk.var(big).numpy() == want == np.inf
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(RuntimeWarning, match="Degrees"):
        assert vk.var(x[:3], ddof=3).numpy() == x[:3].astype(np.float64).var(ddof=3) == np.inf
        assert np.isnan(vk.var(const[:2], ddof=2).numpy())
        assert np.isnan(vk.var(x[:0]).numpy())


# ---- the mean: a tree of float32 sums -------------------------------------------------------------
def test_mean_of_the_largest_array(rng):
    """2**25 values near 1 (lavapipe's largest buffer): a running float32 sum would stop growing at
    2**24 (a mean of 0.5) and lose ~1e-4 long before; the reduction tree (per invocation,
    workgroup, split) stays within a few float32 roundings. float32 var also within 1e-6."""
    n = 1 << 25
    x = (1 + 0.01 * rng.standard_normal(n)).astype(np.float32)
    a = vk.asarray(x)
    x64 = x.astype(np.float64)
    within_ulp(vk.mean(a).numpy(), x64.mean(), ulps=2)
    within_ulp(vk.sum(a).numpy(), x64.sum(), ulps=2)
    assert rel_err(vk.var(a).numpy(), x64.var()) <= 1e-6
