"""Scatters and assignments into arrays larger than one shader may bind (past
maxStorageBufferRange: 128 MiB on lavapipe, 4 GiB on NVIDIA), and from values or indices that
large: masked dispatches per window of the destination (scatter.plan_in_windows), fills and
copies in windows (setitem.py).

Each test writes into a fresh random array just past one window and does the same to a numpy
copy: the whole array is compared, so that an element written in the wrong window, or twice, or
an untouched one changed, shows. Indices sit at both ends, on both sides of every window and
piece seam, and at random; duplicates carry different values (the last in C order wins)."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend.primitives import windows

from tests.conftest import no_gpu_work
from tests.primitives.test_windows_gather import _seams


@pytest.fixture(scope="module")
def n():
    """Elements just past one window (33.8M on lavapipe)."""
    return windows.chunk_words() + 2**18 + 1


@pytest.fixture
def rng():
    return np.random.default_rng()


@pytest.fixture
def pair(n, rng):
    """(device array, host copy) of fresh random int32 data, the device one big."""
    h = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    x = vk.asarray(h)
    assert x.buffer.big
    return x, h


def _indices(n: int, rng, extra: int = 2000) -> np.ndarray:
    """Seams (also counted from the end), random positions and duplicates of some, shuffled."""
    s = _seams(n)
    idx = np.concatenate([s, s - n, rng.integers(-n, n, extra)])
    idx = np.concatenate([idx, rng.choice(idx, 200)])
    rng.shuffle(idx)
    return idx


def _same(x: vk.Array, h: np.ndarray) -> None:
    np.testing.assert_array_equal(x.numpy(), h)


def _values(rng, shape, dtype=np.int32):
    return rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(dtype)


# -- integer arrays --------------------------------------------------------------------------

def test_integer_array_assignment(pair, n, rng):
    """Host (int64) and device (int32, uint32) indices, array and scalar values, duplicates."""
    x, h = pair
    idx = _indices(n, rng)
    v = _values(rng, idx.size)
    x[idx] = v
    h[idx] = v
    dev = _indices(n, rng)
    v2 = _values(rng, dev.size)
    x[vk.asarray(dev.astype(np.int32))] = vk.asarray(v2)
    h[dev] = v2
    pos = rng.integers(0, n, 300).astype(np.uint32)
    x[vk.asarray(pos)] = -7
    h[pos] = -7
    x[[n - 1, 0, -2]] = np.int64(5)  # a scalar of another dtype, cast
    h[[n - 1, 0, -2]] = 5
    _same(x, h)


def test_put(pair, n, rng):
    """put: duplicates, values repeated to cover the indices, wrap and clip of indices past the
    array, and device indices past it dropped."""
    x, h = pair
    idx = _indices(n, rng, 500)
    v = _values(rng, 7)
    vk.put(x, idx, v)
    np.put(h, idx, v)
    once = np.unique(_indices(n, rng, 500) % n)
    rng.shuffle(once)
    v1 = _values(rng, once.size)
    vk.put(x, once, v1, unique_indices=True)  # no claim pass
    h[once] = v1
    far = np.array([n, n + 5, -n - 3, 3 * n + 1, windows.chunk_words() + 2 * n])
    vk.put(x, far, [1, 2, 3, 4, 5], mode="wrap")
    np.put(h, far, [1, 2, 3, 4, 5], mode="wrap")
    vk.put(x, far, [6, 7, 8, 9, 10], mode="clip")
    np.put(h, far, [6, 7, 8, 9, 10], mode="clip")
    bad = vk.asarray(np.array([n, -n - 1, 2**31 - 1, 4], np.int32))
    vk.put(x, bad, vk.asarray(np.array([1, 2, 3, 4], np.int32)), check_indices=False)
    h[4] = 4
    checked = vk.asarray(np.array([n + 2, 3, n - 1], np.int32))
    vk.put(x, checked, vk.asarray(np.array([8, 9, 10], np.int32)), check_indices=True)
    with pytest.raises(IndexError, match=f"index {n + 2} is out of bounds"):
        x.numpy()  # the checked mode reports at the next sync; the valid ones are written
    h[[3, n - 1]] = [9, 10]
    _same(x, h)
    with pytest.raises(IndexError, match="out of bounds"), no_gpu_work():
        vk.put(x, [0, n], [1, 2])


def test_rows_and_columns_of_a_big_matrix(pair, n, rng):
    """x[rows] = v, x[:, cols] = v, x[rows, cols] = v and put_along_axis on a 2-D view: rows and
    columns anywhere, duplicate rows (the last wins), values broadcast along the rows."""
    x, h = pair
    cols = 1000
    rows = n // cols
    m, hm = x[: rows * cols].reshape((rows, cols)), h[: rows * cols].reshape(rows, cols)
    half = windows.chunk_words() // cols
    r = np.concatenate([[0, rows - 1, -1, half - 1, half, half + 1, half], rng.integers(-rows, rows, 20)])
    v = _values(rng, (r.size, cols))
    m[r] = v
    hm[r] = v
    row = _values(rng, cols)
    m[vk.asarray(r[:5].astype(np.int32))] = vk.asarray(row)
    hm[r[:5]] = row
    c = np.concatenate([[0, cols - 1, -1, 3, 3], rng.integers(-cols, cols, 5)])
    vc = _values(rng, (rows, c.size))
    m[:, c] = vc
    hm[:, c] = vc
    rr, cc = rng.integers(-rows, rows, 500), rng.integers(-cols, cols, 500)
    vv = _values(rng, 500)
    m[rr, cc] = vv
    hm[rr, cc] = vv
    m[vk.asarray(rr.astype(np.int32)), 7] = 123
    hm[rr, 7] = 123
    vv = _values(rng, 500)
    m[vk.asarray(rr.astype(np.int32)), vk.asarray(cc.astype(np.int32))] = vk.asarray(vv)  # merged offsets
    hm[rr, cc] = vv
    along = rng.integers(-cols, cols, (rows, 1))
    va = _values(rng, (rows, 1))
    vk.put_along_axis(m, vk.asarray(along.astype(np.int32)), vk.asarray(va), axis=1)
    np.put_along_axis(hm, np.where(along < 0, along + cols, along), va, axis=1)
    _same(x, h)


def test_big_indices_and_values(pair, n, rng):
    """Indices and values past the bind range too, with duplicates all over (the last wins in C
    order across the dispatches' boxes); a small destination from big indices."""
    x, h = pair
    idx = rng.integers(-n, n, n).astype(np.int32)
    v = _values(rng, n)
    di, dv = vk.asarray(idx), vk.asarray(v)
    assert di.buffer.big and dv.buffer.big
    x[di] = dv
    h[idx] = v
    _same(x, h)
    small_h = _values(rng, 1009)
    small = vk.asarray(small_h)
    wrapped = (idx % 1009).astype(np.int32)
    small[vk.asarray(wrapped)] = dv
    small_h[wrapped] = v
    _same(small, small_h)


# -- slices ----------------------------------------------------------------------------------

def test_slice_assignment(pair, n, rng):
    """Scalars into contiguous slices across a seam (fills) and into stepped ones; arrays into
    stepped and reversed slices, a broadcast row into columns, a big value into the reversed array,
    and a value that overlaps the destination."""
    x, h = pair
    w = windows.chunk_words()
    x[w - 1000: w + 1000] = -1
    h[w - 1000: w + 1000] = -1
    x[3::w // 3] = 77
    h[3::w // 3] = 77
    x[-5:] = 9.0
    h[-5:] = 9
    k = len(range(n - 1, -1, -7))
    v = _values(rng, k)
    x[::-7] = v
    h[::-7] = v
    x[w - 3: w + 4] = vk.asarray(np.arange(7, dtype=np.float32) + 0.5)  # converted (truncated)
    h[w - 3: w + 4] = np.arange(7) + 0.5
    cols = 4096
    rows = n // cols
    m, hm = x[: rows * cols].reshape((rows, cols)), h[: rows * cols].reshape(rows, cols)
    row = _values(rng, (1, 2048))
    m[:, 1::2] = row
    hm[:, 1::2] = row
    _same(x, h)
    big_v = _values(rng, n)
    x[::-1] = vk.asarray(big_v)
    h[::-1] = big_v
    _same(x, h)
    x[1:] = x[:-1]  # reads what it overwrites: from a copy
    h[1:] = h[:-1].copy()
    _same(x, h)


def test_small_views_of_a_big_buffer(pair, n, rng):
    """A small view held in a big buffer, written through one window at an odd offset."""
    x, h = pair
    tail, ht = x[n - 1000:], h[n - 1000:]
    tail[[0, -1, 5, 5]] = [1, 2, 3, 4]
    ht[[0, -1, 5, 5]] = [1, 2, 3, 4]
    tail[10:20] = vk.asarray(np.arange(10, dtype=np.int32))
    ht[10:20] = np.arange(10)
    _same(x, h)


# -- masks, scatter_add, in place ------------------------------------------------------------

def test_mask_assignment(pair, n, rng):
    """A mask of a's shape with a scalar, and one of leading dims with a row broadcast."""
    x, h = pair
    mask = rng.random(n) < 0.01
    mask[[0, n - 1, windows.chunk_words()]] = True
    x[mask] = 31
    h[mask] = 31
    x[vk.asarray(~mask)] = vk.asarray(np.array([-4], np.int32))
    h[~mask] = -4
    cols = 1000
    rows = n // cols
    m, hm = x[: rows * cols].reshape((rows, cols)), h[: rows * cols].reshape(rows, cols)
    rmask = rng.random(rows) < 0.3
    row = _values(rng, cols)
    m[rmask] = row
    hm[rmask] = row
    _same(x, h)


def test_scatter_add_and_in_place(pair, n, rng):
    """scatter_add into a big int32 array (exact, duplicates accumulate) and a float32 one, and an
    in-place operator; deterministic=True is refused before any GPU work."""
    x, h = pair
    idx = _indices(n, rng)
    v = rng.integers(-1000, 1000, idx.size).astype(np.int32)
    got = vk.scatter_add(x, idx, v)
    want = h.copy()
    np.add.at(want, np.where(idx < 0, idx + n, idx), v)
    _same(got, want)
    del got
    x += 3
    h += 3
    _same(x, h)
    f = vk.asarray(h[:n].astype(np.float32) * np.float32(1e-6))
    fv = rng.standard_normal(idx.size).astype(np.float32)
    with no_gpu_work(), pytest.raises(ValueError, match="deterministic=True .* maxStorageBufferRange"):
        vk.scatter_add(f, idx, fv, deterministic=True)
    gotf = vk.scatter_add(f, idx, fv).numpy()
    wantf = (h.astype(np.float32) * np.float32(1e-6)).astype(np.float64)
    np.add.at(wantf, np.where(idx < 0, idx + n, idx), fv.astype(np.float64))
    np.testing.assert_allclose(gotf, wantf, rtol=1e-5, atol=1e-4)


def test_what_does_not_work_in_windows_is_refused(pair, n):
    x, h = pair
    dev = vk.asarray(np.zeros(n, np.int32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="checked mode .* larger than maxStorageBufferRange"):
            vk.put(x, dev, 1, check_indices=True)
    _same(x, h)
