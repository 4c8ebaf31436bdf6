"""take / take_along_axis / getitem (fancy and stepped indexing) against numpy."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend.primitives.getitem import getitem
from tests.conftest import check_array as check, no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def dev_idx(x, dtype=np.int32):
    return vk.asarray(np.asarray(x, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_every_axis_and_dtype(rng, dtype):
    for shape in [(17,), (5, 9), (3, 4, 6), (2, 3, 4, 5)]:
        x = random_array(rng, shape, dtype)
        a = vk.asarray(x)
        for axis in list(range(len(shape))) + [-1, None]:
            n = x.size if axis is None else shape[axis]
            idx = rng.integers(-n, n, (2, 3))
            check(vk.take(a, idx, axis=axis), np.take(x, idx, axis=axis))


def test_take_index_kinds(rng):
    x = random_array(rng, (6, 7), np.float32)
    a = vk.asarray(x)
    check(vk.take(a, 3, axis=1), np.take(x, 3, axis=1))             # scalar: the axis goes away
    check(vk.take(a, -1), np.take(x, -1))
    check(vk.take(a, [], axis=0), np.take(x, np.array([], int), axis=0))
    check(vk.take(a, np.array([[0], [5]], np.uint64), axis=0), np.take(x, [[0], [5]], axis=0))
    idx = rng.integers(-7, 7, 11)
    check(vk.take(a, dev_idx(idx), axis=1), np.take(x, idx, axis=1))        # device int32, negatives
    idx = rng.integers(0, 6, (2, 2))
    check(vk.take(a, dev_idx(idx, np.uint32), axis=0), np.take(x, idx, axis=0))
    big = np.array([-20, -8, -7, 0, 6, 7, 15])
    for mode in ("wrap", "clip"):
        check(vk.take(a, big, axis=1, mode=mode), np.take(x, big, axis=1, mode=mode))
        check(vk.take(a, dev_idx(big), axis=1, mode=mode), np.take(x, big, axis=1, mode=mode))
        check(vk.take(a, dev_idx(big[big >= 0], np.uint32), axis=1, mode=mode),
              np.take(x, big[big >= 0], axis=1, mode=mode))


def test_take_device_indices_out_of_range_are_clamped(rng):
    x = random_array(rng, (10,), np.int32)
    idx = np.array([-11, -10, 9, 10, 2**31 - 1, -2**31], np.int32)
    want = x[np.clip(np.where(idx < 0, idx + 10, idx), 0, 9)]
    check(vk.take(vk.asarray(x), dev_idx(idx)), want)
    check(vk.take(vk.asarray(x), dev_idx([3, 10, 2**32 - 1], np.uint32)), x[[3, 9, 9]])


def test_take_sizes_near_workgroup(rng, sg):
    for n in sorted({0, 1, sg - 1, sg, sg + 1, 255, 256, 257}):
        x = random_array(rng, (max(n, 1),), np.float32)
        idx = rng.integers(0, max(n, 1), n)
        check(vk.take(vk.asarray(x), idx), x[idx])


def test_take_large(rng):
    x = random_array(rng, (300_000,), np.float32)
    idx = rng.integers(-x.size, x.size, 200_000).astype(np.int32)
    check(vk.take(vk.asarray(x), dev_idx(idx)), np.take(x, idx))


def test_take_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    empty = vk.asarray(np.zeros((3, 0), np.float32))
    fidx = vk.asarray(np.zeros(2, np.float32))
    with no_gpu_work():
        with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
            vk.take(a, [0, 4], axis=1)
        with pytest.raises(IndexError, match="-13 is out of bounds"):
            vk.take(a, [-13])
        with pytest.raises(IndexError, match="non-empty take from an empty axis"):
            vk.take(empty, [0], axis=1)
        with pytest.raises(TypeError, match="integers"):
            vk.take(a, [0.5])
        with pytest.raises(TypeError, match="integers"):
            vk.take(a, [True, False])
        with pytest.raises(TypeError, match="int32 or uint32"):
            vk.take(a, fidx)
        with pytest.raises(ValueError, match="mode"):
            vk.take(a, [0], mode="fill")
        with pytest.raises(np.exceptions.AxisError):
            vk.take(a, [0], axis=2)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.take(np.zeros(3), [0])
        with pytest.raises(TypeError, match="indices"):
            vk.take(a, "0")


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_axis(rng, dtype):
    for shape in [(20,), (6, 9), (3, 5, 7), (2, 3, 4, 5)]:
        x = random_array(rng, shape, dtype)
        a = vk.asarray(x)
        for axis in range(len(shape)):
            ishape = list(shape)
            ishape[axis] = 4
            idx = rng.integers(-shape[axis], shape[axis], ishape)
            check(vk.take_along_axis(a, idx, axis), np.take_along_axis(x, idx, axis))
            check(vk.take_along_axis(a, dev_idx(idx), axis - len(shape)), np.take_along_axis(x, idx, axis))


def test_take_along_axis_broadcast_argsort_and_none(rng):
    x = random_array(rng, (5, 8, 6), np.float32)
    a = vk.asarray(x)
    idx = rng.integers(0, 8, (1, 3, 6))  # broadcasts along dim 0
    check(vk.take_along_axis(a, idx, 1), np.take_along_axis(x, idx, 1))
    idx = rng.integers(0, 6, (5, 1, 2))
    check(vk.take_along_axis(a, idx, 2), np.take_along_axis(x, idx, 2))
    order = np.argsort(x, axis=1)
    check(vk.take_along_axis(a, order, 1), np.sort(x, axis=1))
    flat = rng.integers(0, x.size, 13)
    check(vk.take_along_axis(a, flat, None), np.take_along_axis(x, flat, None))


def test_take_along_axis_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (4, 5), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="same number of dimensions"):
            vk.take_along_axis(a, np.zeros(3, int), 1)
        with pytest.raises(IndexError, match="does not broadcast"):  # numpy's type
            vk.take_along_axis(a, np.zeros((3, 2), int), 1)
        with pytest.raises(IndexError, match="integer array, got dtype float32"):
            vk.take_along_axis(a, np.zeros((4, 2), np.float32), 1)
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 5"):
            vk.take_along_axis(a, np.full((4, 2), 5), 1)
        with pytest.raises(ValueError, match="single dimension"):
            vk.take_along_axis(a, np.zeros((4, 2), int), None)
        with pytest.raises(np.exceptions.AxisError):
            vk.take_along_axis(a, np.zeros((4, 2), int), -3)


# -- getitem ---------------------------------------------------------------------------------

def test_getitem_stepped_slices_ellipsis_none(rng):
    x = random_array(rng, (7, 8, 9), np.float32)
    a = vk.asarray(x)
    keys = [np.s_[::2], np.s_[::-1], np.s_[5:1:-2, :, ::3], np.s_[..., 3], np.s_[None, 2, ..., ::-4],
            np.s_[:, 1], np.s_[-1, :, None, 2:8:5], np.s_[:, :, :], np.s_[3:3], np.s_[..., None],
            np.s_[1:, -2], np.s_[2, 3, 4]]
    for key in keys:
        check(getitem(a, key), x[key])


def test_getitem_contiguous_results_are_views(rng):
    x = random_array(rng, (4, 5, 6), np.int32)
    a = vk.asarray(x)
    vk.synchronize()
    d0 = vk.stats()["dispatches"]
    for key in [np.s_[None], np.s_[2, ...], np.s_[1:3, None], np.s_[:, :, :], np.s_[3, 2]]:
        v = getitem(a, key)
        assert v._storage is a._storage and v.shape == x[key].shape
    assert vk.stats()["dispatches"] == d0
    check(getitem(a, np.s_[3, 2]), x[3, 2])


def test_getitem_integer_arrays(rng):
    x = random_array(rng, (6, 7, 8), np.float32)
    a = vk.asarray(x)
    i2 = rng.integers(-7, 7, (2, 3))
    i0 = rng.integers(-6, 6, (2, 3))
    keys = [(i0,), (slice(None), i2), (Ellipsis, [0, -1]), (slice(1, None, 2), i2, 3),
            (2, i2), (i0, 3), (2, slice(None), [1, 5]), (slice(None, None, -1), None, i2),
            ([[1], [2]], slice(2, 5))]
    for key in keys:
        check(getitem(a, key), x[key])
    check(getitem(a, (slice(None), dev_idx(i2))), x[:, i2])


def test_getitem_bool_mask(rng):
    x = random_array(rng, (6, 5), np.int32)
    a = vk.asarray(x)
    m = x > 0
    check(getitem(a, vk.asarray(m)), x[m])
    check(getitem(a, m[:, 0]), x[m[:, 0]])
    check(getitem(a, (vk.asarray(m[:, 0]), Ellipsis)), x[m[:, 0], ...])
    check(getitem(a, list(m[:, 1])), x[list(m[:, 1])])


def test_getitem_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    m = vk.asarray(np.ones((3, 4), bool))
    with no_gpu_work():
        with pytest.raises(IndexError, match="too many indices"):
            getitem(a, (0, 0, 0))
        with pytest.raises(IndexError, match="single ellipsis"):
            getitem(a, (Ellipsis, Ellipsis))
        with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0"):
            getitem(a, (3, slice(None)))
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
            getitem(a, (slice(None), [0, 4]))
        with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be broadcast"):
            getitem(a, ([0, 1], [1, 2, 3]))
        with pytest.raises(IndexError, match="mask together with integer array"):
            getitem(a, (np.ones(3, bool), [1, 2]))
        with pytest.raises(IndexError, match="integer or boolean"):
            getitem(a, [0.5])
        with pytest.raises(IndexError, match="boolean scalar"):
            getitem(a, True)
        with pytest.raises(IndexError, match="valid indices"):
            getitem(a, "x")
        with pytest.raises(IndexError, match="first index"):
            getitem(a, (slice(None), m))
        with pytest.raises(IndexError, match="did not match"):
            getitem(a, np.ones(4, bool))


# -- getitem: several integer arrays -----------------------------------------------------------

def index_shapes(rng, count, max_ndim=3):
    """`count` shapes that broadcast together (dims of 1 and missing leading dims)."""
    full = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(0, max_ndim + 1))))
    shapes = []
    for _ in range(count):
        s = [1 if rng.random() < 0.3 else n for n in full]
        shapes.append(tuple(s[int(rng.integers(0, len(s) + 1)):] if rng.random() < 0.3 else s))
    return shapes


def advanced_key(rng, shape, count):
    """A random key for `shape` with `count` integer arrays (random indices in [-n, n), shapes
    that broadcast together) on random dims, and on the other dims ints, slices of any step and
    ':', None anywhere, at most one Ellipsis (in place of zero or more ':')."""
    dims = set(rng.choice(len(shape), count, replace=False).tolist())
    shapes = index_shapes(rng, count)
    key = []
    for d, n in enumerate(shape):
        r = rng.random()
        if d in dims:
            key.append(rng.integers(-n, n, shapes.pop()))
        elif r < 0.3:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.6:
            step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
            key.append(slice(int(rng.integers(-n - 1, n + 1)), None, step))
        else:
            key.append(slice(None))
    if rng.random() < 0.5:  # an Ellipsis for a run of ':' (maybe empty)
        start = int(rng.integers(0, len(key) + 1))
        stop = start
        while stop < len(key) and _whole(key[stop]) and rng.random() < 0.7:
            stop += 1
        key[start:stop] = [Ellipsis]
    for _ in range(int(rng.integers(0, 3))):
        key.insert(int(rng.integers(0, len(key) + 1)), None)
    while key and _whole(key[-1]) and rng.random() < 0.5:
        key.pop()  # the rest of the dims whole
    return tuple(key)


def _whole(k) -> bool:
    return isinstance(k, slice) and k == slice(None)


def on_device(rng, key):
    """The key with its index arrays as device int32 (or uint32 where none is negative) arrays,
    some left on the host."""
    out = []
    for k in key:
        if isinstance(k, np.ndarray) and rng.random() < 0.7:
            k = dev_idx(k, np.uint32 if k.min(initial=0) >= 0 and rng.random() < 0.5 else np.int32)
        out.append(k)
    return tuple(out)


@pytest.mark.parametrize("count", [2, 3])
def test_getitem_several_integer_arrays_random_keys(rng, count):
    for shape in [(5, 6, 7), (3, 4, 5, 6), (9, 17)]:
        if count > len(shape):
            continue
        x = random_array(rng, shape, np.float32)
        a = vk.asarray(x)
        for _ in range(15):
            key = advanced_key(rng, shape, count)
            want = x[key]
            check(getitem(a, key), want)
            check(a[on_device(rng, key)], want)


def test_getitem_several_integer_arrays_placement(rng):
    """numpy's rule: adjacent advanced indices (ints count) keep their place, others go first."""
    x = random_array(rng, (4, 5, 6, 7), np.int32)
    a = vk.asarray(x)
    i, j, k = rng.integers(-4, 4, (2, 1)), rng.integers(-5, 5, (3,)), rng.integers(-6, 6, (2, 3))
    keys = [(i, j), (slice(None), j, k), (i, j, k), (i, slice(None), k), (i, 2, k), (1, j, k),
            (slice(None), j, None, k), (slice(None), j, ..., k), (i, ..., k, slice(1, None, 2)),
            (Ellipsis, j[:, None, None], k % 6), (None, i, j, ..., None), (slice(None, None, -1), -1, k, 3),
            (i, j, k, rng.integers(-7, 7, (1, 3))), (i, j, Ellipsis, 0), (0, j, 1, k)]
    for key in keys:
        want = x[key]
        check(getitem(a, key), want)
        check(a[on_device(rng, key)], want)
    x2 = random_array(rng, (3, 8), np.float32)  # an Ellipsis that stands for no dims still parts them
    for key in [(None, [0, -1, 2], ..., [7, 0, -8]), (None, [0, -1, 2], [7, 0, -8], ...)]:
        check(vk.asarray(x2)[key], x2[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_several_integer_arrays_of_views(rng, dtype):
    x = random_array(rng, (6, 7, 9), dtype)
    a = vk.asarray(x)
    i, j = rng.integers(-4, 4, (5, 1)), rng.integers(-6, 6, (3,))
    views = [(a[1:5], x[1:5]), (a[2], x[2]), (vk.permute_dims(a, (2, 0, 1)), x.transpose(2, 0, 1)),
             (getitem(a, np.s_[::-1, 1:, ::2]), x[::-1, 1:, ::2]), (a.T, x.T)]
    for v, xv in views:
        for key in [(i, j), (i, slice(None), j % 4), (slice(None), i % 3, j % 4), (i, -1, j % 3)]:
            key = key[:v.ndim]
            want = xv[key]
            check(v[key], want)
            check(v[on_device(rng, key)], want)


def test_getitem_several_integer_arrays_sizes(rng, sg):
    x = random_array(rng, (300, 7), np.float32)
    a = vk.asarray(x)
    for m in sorted({1, sg - 1, sg, sg + 1, 255, 256, 257, 1000}):
        i, j = rng.integers(-300, 300, m), rng.integers(-7, 7, m)
        check(a[i, j], x[i, j])
        check(a[dev_idx(i), dev_idx(j)], x[i, j])
        check(a[dev_idx(i)[:, None], j[:3]], x[i[:, None], j[:3]])


def test_getitem_several_integer_arrays_empty(rng):
    x = random_array(rng, (4, 5, 3), np.float32)
    a = vk.asarray(x)
    e = np.zeros(0, np.int64)
    for key in [([], []), (e, slice(None), e), (np.zeros((0, 1), int), [1, 2]), (e, [[0], [1]], 0),
                ([1, 2], slice(3, 3), [0, 1]), ([9], e)]:  # numpy checks no index when none is taken
        check(getitem(a, key), x[key])
    empty = random_array(rng, (3, 0, 2), np.float32)
    check(vk.asarray(empty)[[0, -1], :, [1, 0]], empty[[0, -1], :, [1, 0]])
    check(a[dev_idx(e), dev_idx([[1], [2]])], x[e, [[1], [2]]])
    with no_gpu_work():
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
            getitem(vk.asarray(empty), ([5, 0], slice(None), [1, 0]))  # numpy checks these


def test_getitem_several_integer_arrays_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4, 5), np.float32))
    d = dev_idx([0, 1])
    m = vk.asarray(np.ones(3, bool))
    with no_gpu_work():
        for key, axis, n, bad in [(([0, 3], [0, 1]), 0, 3, 3), (([0, 1], [-5, 1]), 1, 4, -5),
                                  ((d, slice(None), [4, 5]), 2, 5, 5), ((0, [[1]], [[-6]]), 2, 5, -6)]:
            with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis {axis} with size {n}"):
                getitem(a, key)
        with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
            a[d, [0, 1, 2]]
        with pytest.raises(IndexError, match="too many indices"):
            a[[0], [0], [0], [0]]
        with pytest.raises(IndexError, match="mask together with integer array"):
            a[m, d]
        with pytest.raises(IndexError, match=r"out of bounds for axis 2 with size 5"):
            a[d, 1, 5]
        with pytest.raises(MemoryError, match="merged indices"):  # 2**40 of them: before any host loop
            a[np.zeros((2**20, 1), np.int32), np.zeros((1, 2**20), np.int32)]


def test_getitem_several_device_arrays_clamp_out_of_range(rng):
    """Out-of-range device indices are clamped on their own axis (after negatives count from the
    end), as for one array; the checked mode reports them (test_checked_indices.py)."""
    x = random_array(rng, (6, 4, 5), np.float32)
    a = vk.asarray(x)
    i = np.array([-7, -6, 5, 6, 2**31 - 1, -2**31, 0])
    j = np.array([[9], [-9]])

    def clamp(v, n):
        return np.clip(np.where(v < 0, v + n, v), 0, n - 1)
    check(a[dev_idx(i), :, dev_idx(j)], x[clamp(i, 6), :, clamp(j, 5)])
    check(a[dev_idx(i), 1, [2, 3, 4, 0, 1, 2, 3]], x[clamp(i, 6), 1, [2, 3, 4, 0, 1, 2, 3]])
    u = np.array([0, 3, 4, 2**32 - 1], np.uint32)
    check(a[1, dev_idx(u, np.uint32), dev_idx(u, np.uint32)], x[1, np.minimum(u, 3), np.minimum(u, 4)])
