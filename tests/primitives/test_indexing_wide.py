"""Indexing on the WIDE dtypes (int8/16/64, uint8/16/64, float64) against numpy, bit for bit:
a[key] (basic, integer arrays, masks), take, take_along_axis, compress_mask, and the writes
a[key] = v, put and put_along_axis (getitem.py, indexing.py, compaction.py, setitem.py,
scatter.py). Random bit patterns with edge values (float64 NaN payloads, -0.0; integers past
2**32 and 2**63), on views at odd element offsets; sizes around subgroup and workgroup sizes."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work
from tests.primitives.test_manipulation_wide import OFFSETS, WIDE, check, device, pair, sample


# -- reads -------------------------------------------------------------------------------------

@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_basic_getitem(rng, dtype, offset):
    x, a = pair(rng, (6, 9, 17), dtype, offset)
    keys = [(slice(None, None, -1),), (slice(1, None, 2), 3), (Ellipsis, slice(None, None, 3)),
            (None, 2, Ellipsis, slice(-2, None)), (slice(4, 1, -1), slice(None), 0), (1, slice(2, 7)),
            (5, 8), (slice(2, 2),), (Ellipsis, 16)]
    for key in keys:
        check(a[key], x[key])
    check(a[2:][::2, 1:], x[2:][::2, 1:])  # a view of a view
    assert a[1:3]._storage is a._storage  # contiguous selections stay views


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_integer_array_getitem(rng, dtype, offset):
    x, a = pair(rng, (6, 9, 17), dtype, offset)
    i = rng.integers(-6, 6, (4, 3))
    j = rng.integers(0, 9, (3,))
    keys = [(i,), (slice(None), j), (Ellipsis, [0, -1, 16, 3]), (i, j), (i, slice(1, 5), j % 17),
            (1, j, slice(None, None, -2)), (None, i, 2)]
    for key in keys:
        check(a[key], x[key])
    ii = vk.asarray(i.astype(np.int32))
    check(a[ii], x[i])
    check(a[:, vk.asarray(j.astype(np.uint32)), 5], x[:, j, 5])
    check(a[ii, vk.asarray(j.astype(np.int32))], x[i, j])


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_masks(rng, dtype, offset):
    for shape in [(1,), (7,), (33,), (257,), (4, 9), (3, 5, 7)]:
        x, a = pair(rng, shape, dtype, offset)
        m = rng.random(shape) < 0.5
        check(a[vk.asarray(m)], x[m])
        check(a[m], x[m])
        check(vk.compress_mask(a, vk.asarray(m)), x[m])
        lead = m.reshape(m.shape[0], -1)[:, 0]
        check(a[vk.asarray(lead)], x[lead])
        check(a[lead, ...], x[lead, ...])
    check(vk.compress_mask(a, np.bool_(True)), x[True])
    check(vk.compress_mask(a, vk.asarray(np.bool_(True))), x[True])
    check(vk.compress_mask(a, vk.asarray(np.bool_(False))), x[False])


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_take_and_take_along_axis(rng, dtype, offset):
    for shape in [(9,), (65,), (5, 17), (3, 4, 33)]:
        x, a = pair(rng, shape, dtype, offset)
        for axis in [None] + list(range(x.ndim)):
            n = x.size if axis is None else x.shape[axis]
            idx = rng.integers(-n, n, (2, 5))
            check(vk.take(a, idx, axis=axis), np.take(x, idx, axis=axis))
            check(vk.take(a, vk.asarray(idx.astype(np.int32)), axis=axis), np.take(x, idx, axis=axis))
            check(vk.take(a, idx * 3, axis=axis, mode="wrap"), np.take(x, idx * 3, axis=axis, mode="wrap"))
            check(vk.take(a, vk.asarray((idx * 3).astype(np.int32)), axis=axis, mode="clip"),
                  np.take(x, idx * 3, axis=axis, mode="clip"))
        axis = x.ndim - 1
        idx = rng.integers(0, x.shape[axis], x.shape[:-1] + (7,))
        check(vk.take_along_axis(a, idx, axis=axis), np.take_along_axis(x, idx, axis=axis))
        idx = rng.integers(0, x.shape[0], (3,) + (1,) * (x.ndim - 1))
        check(vk.take_along_axis(a, vk.asarray(idx.astype(np.int32)), axis=0), np.take_along_axis(x, idx, axis=0))


# -- writes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_setitem_basic(rng, dtype, offset):
    x, a = pair(rng, (6, 9, 17), dtype, offset)
    v = sample(rng, (9, 17), dtype)
    writes = [((slice(None, None, 2),), v),                 # a row broadcast over every other plane
              ((1, slice(2, 5)), v[:3]),                     # contiguous
              ((Ellipsis, slice(None, None, -3)), v[0, :6]), # stepped backwards
              ((2, 3), v[5, 5]),                             # a scalar, contiguous: a fill
              ((slice(3, 5), slice(None), 4), v[1, 1]),      # a scalar into a strided view
              ((4,), v[1:2, :1]),                            # broadcast from (1, 1)
              ((0, slice(None), slice(1, None)), v[:, :-1])]
    for key, value in writes:
        x[key] = value
        a[key] = value  # numpy values of a's dtype
        check(a, x)
    dv = device(rng, v, 1)
    x[5, ::-1] = v
    a[5, ::-1] = dv  # a device value at an odd offset
    check(a, x)
    x[1:] = x[:-1].copy()
    a[1:] = a[:-1]  # overlaps what it writes
    check(a, x)


@pytest.mark.parametrize("dtype", WIDE)
def test_setitem_converts_values_as_numpy(rng, dtype):
    """Values of another dtype are converted as numpy's assignment converts them (in range, so
    that the conversion is defined): int32 and bool arrays, host floats, and WIDE values into
    32-bit arrays."""
    x, a = pair(rng, (5, 7), dtype, 1)
    small = rng.integers(0, 100, (7,))
    x[1] = small.astype(np.int32)
    a[1] = vk.asarray(small.astype(np.int32))
    check(a, x)
    flags = rng.random((7,)) < 0.5
    x[2] = flags
    a[2] = vk.asarray(flags)
    check(a, x)
    x[3, 1:4] = [1.0, 2.0, 3.0]
    a[3, 1:4] = [1.0, 2.0, 3.0]
    check(a, x)
    if np.dtype(dtype).kind == "f":  # in int32's range, so that the conversion below is defined
        x[4] = rng.standard_normal(7) * 1000
        a[4] = vk.asarray(x[4], dtype)
    y, b = pair(rng, (7,), np.int32, 0)
    y[:] = x[4]
    b[:] = a[4]  # WIDE into int32: numpy's conversion (integers wrap)
    check(b, y)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_setitem_indexed_and_masked(rng, dtype, offset):
    x, a = pair(rng, (6, 9, 17), dtype, offset)
    i = rng.integers(-6, 6, (4, 3))  # duplicates: the last wins, as numpy
    j = rng.integers(0, 9, (3,))
    v = sample(rng, (4, 3, 17), dtype)
    x[i, j] = v
    a[i, j] = v
    check(a, x)
    x[:, j, 3] = v[0, :, 0]
    a[:, vk.asarray(j.astype(np.int32)), 3] = device(rng, v[0, :, 0], 3)
    check(a, x)
    m = rng.random((6, 9)) < 0.5
    x[m] = v[0, 0, 0]
    a[vk.asarray(m)] = v[0, 0, 0]  # a scalar
    check(a, x)
    x[m] = v[1, 1]
    a[m] = device(rng, v[1, 1], 1)  # a row for each selected (6, 9) position
    check(a, x)
    m = rng.random((6, 9, 17)) < 0.3
    x[m] = v[2, 2, 2]
    a[vk.asarray(m)] = v[2, 2, 2]
    check(a, x)


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_put_and_put_along_axis(rng, dtype, offset):
    for n in (9, 65, 257):
        x, a = pair(rng, (n,), dtype, offset)
        ind = rng.integers(-n, n, 2 * n // 3)  # duplicates: the last wins
        v = sample(rng, (ind.size,), dtype)
        np.put(x, ind, v)
        vk.put(a, ind, v)
        check(a, x)
        np.put(x, ind[:5], v[:2])  # v repeated over the indices
        vk.put(a, vk.asarray(ind[:5].astype(np.int32)), device(rng, v[:2], 1))
        check(a, x)
    x, a = pair(rng, (4, 5, 33), dtype, offset)
    for axis in (0, 2):
        idx = rng.integers(0, x.shape[axis], x.shape[:axis] + (3,) + x.shape[axis + 1:])
        v = sample(rng, idx.shape, dtype)
        np.put_along_axis(x, idx, v, axis=axis)
        vk.put_along_axis(a, idx, v, axis=axis)
        check(a, x)
        np.put_along_axis(x, idx, v[:1], axis=axis)  # values broadcast
        vk.put_along_axis(a, vk.asarray(idx.astype(np.int32)), device(rng, v[:1], 3), axis=axis)
        check(a, x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float64])
def test_bad_writes_are_refused_before_any_gpu_work(rng, dtype):
    x, a = pair(rng, (4, 5), dtype, 1)
    with no_gpu_work():
        with pytest.raises(ValueError, match="broadcast"):
            a[1:3] = np.zeros((3, 5), dtype)
        with pytest.raises(IndexError):
            a[[0, 4]] = 1
        with pytest.raises(IndexError):
            vk.put(a, [20], 1)
        with pytest.raises(ValueError, match="broadcast"):
            vk.put_along_axis(a, np.zeros((4, 2), np.int32), np.zeros((3, 2), dtype), axis=1)


def test_arrays_past_the_bind_range_are_refused_before_any_gpu_work():
    """Arrays past maxStorageBufferRange are worked on in windows of 32-bit words (windows.py):
    the moves of the other dtypes refuse them, naming the limit, before any GPU work."""
    words = 16 * (vk.device().max_storage_buffer_range // 64 + 64)  # past the range; shapes below divide it
    storage = vk.asarray(np.zeros(words, np.uint32))._storage
    assert storage.buffer.big
    f64 = vk.Array(storage, (words // 2,), np.dtype(np.float64))
    i8 = vk.Array(storage, (4 * words,), np.dtype(np.int8))
    small = vk.asarray(np.arange(4, dtype=np.float64), np.float64)
    many = np.zeros(words // 2, np.int32)  # indices of a float64 result past the range
    with no_gpu_work():
        for run in [lambda: vk.take(f64, [0, 1]), lambda: f64[::2], lambda: f64.reshape(2, -1).T,
                    lambda: vk.take(small, many),
                    lambda: i8.reshape(-1, 64).T, lambda: i8.__setitem__(slice(None, None, 3), 1),
                    lambda: vk.put(i8, [0, 5], 1), lambda: f64.__setitem__(slice(None), 1.0)]:
            with pytest.raises(ValueError, match="maxStorageBufferRange"):
                run()
