"""compress_mask (a[mask]) / nonzero / flatnonzero against numpy, and their one host sync."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
TILE = 256 * 8  # compact.comp: workgroup size x ITEMS


@pytest.mark.parametrize("dtype", DTYPES)
def test_compress_mask_dtypes(rng, dtype):
    x = random_array(rng, (5, 7, 3), dtype)
    m = rng.random(x.shape) < 0.4
    check(vk.compress_mask(vk.asarray(x), vk.asarray(m)), x[m])


def test_compress_mask_sizes_and_densities(rng, sg):
    sizes = sorted({1, sg - 1, sg, sg + 1, 255, 256, 257, TILE - 1, TILE, TILE + 1, 3 * TILE + 5, 150_001})
    for n in sizes:
        x = random_array(rng, (n,), np.float32)
        for p in (0.0, 0.03, 0.5, 1.0):
            m = rng.random(n) < p
            check(vk.compress_mask(vk.asarray(x), vk.asarray(m)), x[m])


def test_compress_mask_leading_dims_and_host_masks(rng):
    x = random_array(rng, (6, 5, 4), np.int32)
    a = vk.asarray(x)
    for m in [rng.random(6) < 0.5, rng.random((6, 5)) < 0.5, np.zeros(6, bool), np.ones((6, 5), bool)]:
        check(vk.compress_mask(a, vk.asarray(m)), x[m])
        check(vk.compress_mask(a, m), x[m])
    check(vk.compress_mask(vk.asarray(np.zeros((0, 3), np.float32)), vk.asarray(np.zeros(0, bool))),
          np.zeros((0, 3), np.float32))


def test_device_mask_is_one_sync_host_mask_none(rng, whole_submits):
    x = random_array(rng, (1000,), np.float32)
    m = x > 0
    a, dm = vk.asarray(x), vk.asarray(m)
    vk.synchronize()
    s0 = vk.stats()["submits"]
    r = vk.compress_mask(a * 2, dm)          # recorded work before it runs in the same submit
    assert vk.stats()["submits"] == s0 + 1
    r2 = vk.compress_mask(a, m)
    assert vk.stats()["submits"] == s0 + 1   # host mask: no sync
    check(r, x[m] * 2)
    check(r2, x[m])


def test_nonzero_and_flatnonzero(rng, sg):
    for shape in [(1,), (sg + 1,), (TILE + 3,), (7, 9), (4, 5, 6), (2, 3, 4, 5)]:
        x = random_array(rng, shape, np.int32) * (rng.random(shape) < 0.3)
        a = vk.asarray(x)
        got = vk.nonzero(a)
        want = np.nonzero(x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w.astype(np.int32))
        check(vk.flatnonzero(a), np.flatnonzero(x).astype(np.int32))
    f = np.array([0.0, -0.0, np.nan, 1.0, -2.0, 0.0], np.float32)   # -0.0 is zero, NaN is not
    check(vk.flatnonzero(vk.asarray(f)), np.flatnonzero(f).astype(np.int32))
    b = rng.random((3, 4)) < 0.5
    for g, w in zip(vk.nonzero(vk.asarray(b)), np.nonzero(b)):
        check(g, w.astype(np.int32))
    for g, w in zip(vk.nonzero(b), np.nonzero(b)):   # host input: no sync
        check(g, w.astype(np.int32))
    for g in vk.nonzero(vk.asarray(np.zeros((3, 0), np.float32))):
        check(g, np.zeros(0, np.int32))
    check(vk.flatnonzero(vk.zeros((4, 4))), np.zeros(0, np.int32))


def test_compress_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (4, 5), np.float32))
    im = vk.asarray(np.ones((4, 5), np.int32))
    z = vk.asarray(np.float32(1))
    with no_gpu_work():
        with pytest.raises(TypeError, match="must be bool"):
            vk.compress_mask(a, im)
        with pytest.raises(TypeError, match="must be bool"):
            vk.compress_mask(a, np.ones(4, np.int32))
        with pytest.raises(IndexError, match="size of axis is 5 but size of corresponding boolean axis is 4"):
            vk.compress_mask(a, np.ones((4, 4), bool))
        with pytest.raises(IndexError, match="too many indices"):
            vk.compress_mask(a, np.ones((4, 5, 1), bool))
        with pytest.raises(TypeError, match="mask"):
            vk.compress_mask(a, "x")
        with pytest.raises(ValueError, match="0d"):
            vk.nonzero(z)
        with pytest.raises(TypeError):
            vk.flatnonzero(np.array(["a"]))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16])
def test_zero_d_masks(rng, dtype):
    """a[True] is a with a new leading axis of 1, a[False] the same of 0 (numpy, the standard)."""
    x = random_array(rng, (3, 4), np.float32).astype(dtype)
    for key in (True, False):
        for mask in (np.bool_(key), vk.asarray(np.bool_(key))):
            check(vk.compress_mask(vk.asarray(x), mask), x[np.bool_(key)])
        check(vk.asarray(x)[vk.asarray(np.bool_(key))], x[np.bool_(key)])
    check(vk.asarray(np.float32(2.5))[vk.asarray(np.bool_(True))], np.float32(2.5)[np.bool_(True)])  # 0-d a


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_count_nonzero(rng, sg, dtype):
    for shape in [(), (sg * 4 + 1,), (3, sg - 1), (2, 3, 4), (0, 5)]:
        x = random_array(rng, shape, dtype)
        if dtype != np.bool_ and x.size:
            x.reshape(-1)[::3] = 0
        if dtype == np.float32 and x.size > 2:
            x.reshape(-1)[1], x.reshape(-1)[2] = np.nan, -0.0  # NaN counts, -0.0 does not
        axes = [None] + list(range(x.ndim)) + ([(0, -1)] if x.ndim > 1 else [])
        for axis in axes:
            for keepdims in (False, True):
                got = vk.count_nonzero(vk.asarray(x), axis=axis, keepdims=keepdims)
                want = np.count_nonzero(x, axis=axis, keepdims=keepdims)
                check(got, np.asarray(want, np.int32))


def test_count_nonzero_bad_inputs():
    x = vk.ones((2, 3))
    with no_gpu_work():
        with pytest.raises(np.exceptions.AxisError):
            vk.count_nonzero(x, axis=2)
        with pytest.raises(TypeError, match="keepdims"):
            vk.count_nonzero(x, keepdims=None)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.count_nonzero([1, 0])

