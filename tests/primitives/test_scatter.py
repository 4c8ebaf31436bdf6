"""put_along_axis / scatter_add against numpy (np.put_along_axis, np.add.at)."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def check(got, want, exact=True):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if exact:
        np.testing.assert_array_equal(got.numpy(), want)
    else:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


def dev_idx(x, dtype=np.int32):
    return vk.asarray(np.asarray(x, dtype))


# -- put_along_axis --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_put_along_axis_every_axis_with_duplicates(rng, dtype):
    # numpy's duplicates resolve to the last write in C order; so do ours (claim pass).
    for shape in [(30,), (6, 9), (3, 5, 7), (2, 3, 4, 5)]:
        for axis in range(len(shape)):
            x = random_array(rng, shape, dtype)
            ishape = list(shape)
            ishape[axis] = 6
            idx = rng.integers(-shape[axis], shape[axis], ishape)
            vals = random_array(rng, ishape, dtype)
            a = vk.asarray(x)
            assert vk.put_along_axis(a, idx, vals, axis) is None
            np.put_along_axis(x, idx, vals, axis)
            check(a, x)


def test_put_along_axis_broadcast_cast_views_and_device_indices(rng):
    x = random_array(rng, (5, 8), np.int32)
    a = vk.asarray(x)
    idx = rng.integers(0, 8, (5, 3))
    vk.put_along_axis(a, idx, 7, 1)                                  # scalar values
    np.put_along_axis(x, idx, 7, 1)
    vk.put_along_axis(a, idx[:1], np.array([[1.9, -2.5, 3.0]]), 1)   # indices broadcast, floats cast
    np.put_along_axis(x, idx[:1], np.array([[1.9, -2.5, 3.0]]), 1)
    vk.put_along_axis(a, dev_idx(idx), vk.asarray(np.arange(15, dtype=np.float32).reshape(5, 3)), -1)
    np.put_along_axis(x, idx, np.arange(15, dtype=np.float32).reshape(5, 3), -1)
    check(a, x)
    # axis=None writes into the flattened array; a row view writes into its parent's storage
    flat = rng.integers(0, 40, 9)
    vk.put_along_axis(a, flat, -3, None)
    np.put_along_axis(x, flat, -3, None)
    row = a[2]
    vk.put_along_axis(row, [0, 7], [100, 200], 0)
    x[2, [0, 7]] = [100, 200]
    check(a, x)


def test_put_along_axis_unique_and_out_of_range_device_indices(rng):
    x = random_array(rng, (40,), np.float32)
    a = vk.asarray(x)
    perm = rng.permutation(40)[:25]
    vals = random_array(rng, (25,), np.float32)
    vk.put_along_axis(a, perm, vals, 0, unique_indices=True)
    x[perm] = vals
    check(a, x)
    vk.put_along_axis(a, dev_idx([3, 40, -41, -1, 2**31 - 1]), [1.0, 2.0, 3.0, 4.0, 5.0], 0)
    x[3], x[-1] = 1.0, 4.0                                            # the out-of-range writes are dropped
    check(a, x)


def test_put_along_axis_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (4, 5), np.float32))
    with no_gpu_work():
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
            vk.put_along_axis(a, np.full((4, 2), 5), 0.0, 1)
        with pytest.raises(ValueError, match="could not broadcast"):
            vk.put_along_axis(a, np.zeros((4, 2), int), np.zeros((4, 3)), 1)
        with pytest.raises(ValueError, match="same number of dimensions"):
            vk.put_along_axis(a, np.zeros(2, int), 1.0, 1)
        with pytest.raises(TypeError, match="values"):
            vk.put_along_axis(a, np.zeros((4, 2), int), "x", 1)
        with pytest.raises(TypeError, match="values"):
            vk.put_along_axis(a, np.zeros((4, 2), int), np.array(["a"]), 1)
        with pytest.raises(TypeError, match="arr"):
            vk.put_along_axis(np.zeros((4, 5)), np.zeros((4, 2), int), 1.0, 1)


# -- scatter_add -----------------------------------------------------------------------------

def ref_scatter_add(x, idx, vals, axis):
    """torch.scatter_add on numpy: out[.., idx[c], ..] += vals[c] over idx's shape, via np.add.at."""
    out = x.copy()
    coords = list(np.indices(idx.shape))
    coords[axis] = np.where(idx < 0, idx + x.shape[axis], idx)
    vals = np.broadcast_to(vals, idx.shape) if np.ndim(vals) < idx.ndim or np.shape(vals) == idx.shape \
        else vals[tuple(slice(0, s) for s in idx.shape)]
    np.add.at(out, tuple(coords), vals)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_scatter_add_1d_duplicates(rng, dtype, sg):
    for n, m in [(1, 1), (5, 0), (sg + 1, 3 * sg), (100, 1000), (257, 255)]:
        x = random_array(rng, (n,), dtype)
        idx = rng.integers(-n, n, m)
        vals = random_array(rng, (m,), dtype)
        want = ref_scatter_add(x, idx, vals, 0)
        check(vk.scatter_add(vk.asarray(x), idx, vals), want, exact=dtype != np.float32)
        check(vk.scatter_add(vk.asarray(x), dev_idx(idx), vk.asarray(vals), deterministic=True), want)


@pytest.mark.parametrize("deterministic", [False, True])
def test_scatter_add_every_axis_torch_shapes(rng, deterministic):
    for shape in [(6, 9), (3, 5, 7), (2, 3, 4, 5)]:
        for axis in range(len(shape)):
            x = random_array(rng, shape, np.float32)
            # indices no larger than x off the axis (smaller on the first other axis), any length on it
            ishape = [max(1, s - (d == (axis + 1) % len(shape))) for d, s in enumerate(shape)]
            ishape[axis] = 2 * shape[axis]
            idx = rng.integers(-shape[axis], shape[axis], ishape)
            vals = random_array(rng, [s + 1 for s in ishape], np.float32)  # torch: src may be larger
            got = vk.scatter_add(vk.asarray(x), idx, vk.asarray(vals), axis, deterministic=deterministic)
            check(got, ref_scatter_add(x, idx, vals, axis), exact=deterministic)


def test_scatter_add_broadcast_values_and_int_dtypes(rng):
    x = random_array(rng, (4, 6), np.int32)
    idx = rng.integers(0, 6, (4, 10))
    check(vk.scatter_add(vk.asarray(x), idx, 1, axis=1), ref_scatter_add(x, idx, 1, 1))
    row = random_array(rng, (10,), np.int32)
    check(vk.scatter_add(vk.asarray(x), idx, vk.asarray(row), axis=1), ref_scatter_add(x, idx, row, 1))
    u = random_array(rng, (4, 6), np.uint32)
    check(vk.scatter_add(vk.asarray(u), idx, 3, axis=1), ref_scatter_add(u, idx, np.uint32(3), 1))
    f = random_array(rng, (4, 6), np.float32)
    check(vk.scatter_add(vk.asarray(f), idx, vk.asarray(row), axis=1, deterministic=True),
          ref_scatter_add(f, idx, row.astype(np.float32), 1))


def test_scatter_add_device_indices_out_of_range_are_dropped(rng):
    x = random_array(rng, (8,), np.float32)
    idx = np.array([1, 8, -9, -1, 2**31 - 1, 1], np.int32)
    vals = np.arange(1, 7, dtype=np.float32)
    want = x.copy()
    want[1] += 1 + 6
    want[7] += 4
    for det in (False, True):
        check(vk.scatter_add(vk.asarray(x), dev_idx(idx), vals, deterministic=det), want, exact=False)


def test_scatter_add_large_contended(rng):
    # 200k float contributions into 64 bins: the compare-and-swap loop under heavy contention.
    x = np.zeros(64, np.float32)
    idx = rng.integers(0, 64, 200_000)
    vals = rng.random(200_000).astype(np.float32)
    want = np.zeros(64, np.float64)
    np.add.at(want, idx, vals)
    got = vk.scatter_add(vk.asarray(x), dev_idx(idx), vk.asarray(vals)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    ints = rng.integers(-100, 100, 200_000).astype(np.int32)
    wi = np.zeros(64, np.int32)
    np.add.at(wi, idx, ints)
    check(vk.scatter_add(vk.zeros(64, np.int32), dev_idx(idx), vk.asarray(ints)), wi)


def test_scatter_add_bad_inputs(rng):
    f = vk.asarray(random_array(rng, (4, 5), np.float32))
    i = vk.asarray(random_array(rng, (4, 5), np.int32))
    b = vk.asarray(random_array(rng, (4, 5), np.bool_))
    idx = np.zeros((4, 2), int)
    f2 = vk.asarray(np.zeros((4, 2), np.float32))
    with no_gpu_work():
        with pytest.raises(TypeError, match="bool"):
            vk.scatter_add(b, idx, 1, 1)
        with pytest.raises(TypeError, match="cannot be added"):
            vk.scatter_add(i, idx, 1.5, 1)
        with pytest.raises(TypeError, match="cannot be added"):
            vk.scatter_add(i, idx, f2, 1)
        with pytest.raises(ValueError, match="as many dimensions"):
            vk.scatter_add(f, np.zeros(2, int), 1.0, 1)
        with pytest.raises(ValueError, match="larger than `a` along dimension 0"):
            vk.scatter_add(f, np.zeros((5, 2), int), 1.0, 1)
        with pytest.raises(ValueError, match="neither broadcasts"):
            vk.scatter_add(f, idx, np.zeros((3, 2), np.float32), 1)
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
            vk.scatter_add(f, np.full((4, 2), -6), 1.0, 1)
        with pytest.raises(np.exceptions.AxisError):
            vk.scatter_add(f, idx, 1.0, 2)
        with pytest.raises(ValueError, match="at least one dimension"):
            vk.scatter_add(f.reshape(20)[0], [0], 1.0)



@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.int8, np.uint16])
def test_scatter_add_wide_and_narrow_dtypes(rng, dtype, sg):
    """64-bit dtypes take the ordered path (each element sums in index order: bit for bit
    np.add.at, float64 included); 8/16-bit integers add as 32-bit ones and wrap when stored.
    Indices covering a's block or only part of it, negative ones, sums that wrap."""
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    big = 1e300 if np.dtype(dtype).kind == "f" else info.max // 3
    for shape, ishape, axis in [((sg + 1,), (3 * sg + 5,), 0), ((5, 6, 3), (4, 9, 2), 1), ((7, 4), (9, 4), 0)]:
        a = (rng.uniform(-1, 1, shape) * big).astype(dtype) if info.min < 0 else rng.integers(0, big, shape).astype(dtype)
        v = (rng.uniform(-1, 1, ishape) * big).astype(dtype) if info.min < 0 else rng.integers(0, big, ishape).astype(dtype)
        idx = rng.integers(-shape[axis], shape[axis], ishape).astype(np.int32)
        got = vk.scatter_add(vk.asarray(a, dtype=dtype), vk.asarray(idx), vk.asarray(v, dtype=dtype), axis)
        want = a.copy()
        with np.errstate(over="ignore"):
            for i in np.ndindex(*ishape):
                at = list(i)
                at[axis] = idx[i]
                want[tuple(at)] += v[i]
        check(got, want)
        assert got.dtype == dtype


# -- put -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_put_modes_duplicates_and_repeated_values(rng, dtype, sg):
    for shape in [(sg + 1,), (3, 7), (2, 3, 4)]:
        n = int(np.prod(shape))
        for mode in ("raise", "wrap", "clip"):
            m = int(rng.integers(1, 3 * n))
            lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
            ind = rng.integers(lo, hi, m)                 # duplicates likely: the last one wins
            for v in (random_array(rng, (m,), dtype), random_array(rng, (int(rng.integers(1, 5)),), dtype),
                      random_array(rng, (), dtype)):
                x = random_array(rng, shape, dtype)
                a = vk.asarray(x)
                assert vk.put(a, ind, v, mode=mode) is None
                np.put(x, ind, v, mode=mode)
                check(a, x)
                x = random_array(rng, shape, dtype)      # device indices and values
                a = vk.asarray(x)
                vk.put(a, dev_idx(ind), vk.asarray(v), mode=mode)
                np.put(x, ind, v, mode=mode)
                check(a, x)


def test_put_casts_views_and_uint_indices(rng):
    x = random_array(rng, (6, 5), np.int32)
    a = vk.asarray(x)
    vk.put(a[2:4], [0, 9, -1], [1.7, -2.2, 3.9])     # a view writes into its parent; floats cast
    np.put(x[2:4], [0, 9, -1], [1.7, -2.2, 3.9])
    ind = rng.integers(0, 30, (2, 4))
    vk.put(a, dev_idx(ind, np.uint32), vk.asarray(np.arange(8, dtype=np.float32)), unique_indices=False)
    np.put(x, ind, np.arange(8, dtype=np.float32))
    vk.put(a, [], [5])                                # nothing to put
    vk.put(a, [1, 2], [])                             # numpy: an empty `v` puts nothing
    check(a, x)


def test_put_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    empty = vk.asarray(np.zeros((0,), np.float32))
    with no_gpu_work():
        with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
            vk.put(a, [0, 12], 1.0)
        with pytest.raises(IndexError, match="empty array"):
            vk.put(empty, [0], 1.0)
        with pytest.raises(ValueError, match="mode"):
            vk.put(a, [0], 1.0, mode="fill")
        with pytest.raises(TypeError, match="integers"):
            vk.put(a, [0.5], 1.0)
        with pytest.raises(TypeError, match="values"):
            vk.put(a, [0], "x")
        with pytest.raises(TypeError, match="vk.Array"):
            vk.put(np.zeros(3), [0], 1.0)


@pytest.mark.parametrize("deterministic", [True, False])
def test_heavy_duplication_loses_no_contribution(rng, deterministic):
    """issue 15: the deterministic scatter_add once came back short by a contribution (1674 for
    1675). Integer-valued contributions make every sum exact, so one lost shows."""
    for _ in range(25):
        n, m, cols = int(rng.integers(1, 3000)), int(rng.integers(1, 50)), int(rng.integers(1, 5))
        idx = rng.integers(0, m, n).astype(np.int32)
        vals = rng.integers(-3, 4, (n, cols)).astype(np.float32)
        a = rng.integers(-10, 10, (m, cols)).astype(np.float32)
        want = a.copy()
        np.add.at(want, idx, vals)
        got = vk.scatter_add(vk.asarray(a), vk.asarray(np.repeat(idx[:, None], cols, 1)), vk.asarray(vals),
                             axis=0, deterministic=deterministic).numpy()
        np.testing.assert_array_equal(got, want)
