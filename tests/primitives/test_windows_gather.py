"""Gathers, transposes and strided copies of arrays larger than one shader may bind (past
maxStorageBufferRange: 128 MiB on lavapipe, 4 GiB on NVIDIA), in boxes of the output that each
big buffer sees through one window (primitives/windows.py; indexing.gather_in_windows and
layout._tiled_in_windows).

The data is arange(n) just past one window, so an element's value is its position: the
references follow from the indices and the layout alone, by numpy views of the host arange,
checked in full where the result is small enough for the host and at random positions, both ends
and every window seam otherwise."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend.primitives import windows

from tests.conftest import no_gpu_work

FULL = 1 << 26  # results up to this many elements are compared whole


@pytest.fixture(scope="module")
def n():
    """Elements just past one window (33.8M on lavapipe): room for matrices and stacks of them
    just past it too (_dims)."""
    return windows.chunk_words() + 2**18 + 1


def _dims(lead=()) -> tuple:
    """A shape with the leading dims `lead` and two more, its size just past the bind range (by
    at most 2**18 elements)."""
    w = vk.device().max_storage_buffer_range // 4
    k = int(np.prod(lead))
    rows = int(np.sqrt(w // k)) + 1
    return tuple(lead) + (rows, w // (k * rows) + 1)


@pytest.fixture(scope="module")
def host(n):
    return np.arange(n, dtype=np.int32)


@pytest.fixture(scope="module")
def big(host):
    x = vk.asarray(host)
    assert x.buffer.big
    return x


@pytest.fixture
def rng():
    return np.random.default_rng()


def _seams(n: int) -> np.ndarray:
    """Positions on both sides of every window and piece boundary of [0, n), and the ends."""
    cuts = [windows.chunk_words() * k for k in range(1, n // windows.chunk_words() + 1)]
    cuts += [first for first, _ in windows.pieces(0, n - 1)]
    near = [np.arange(c - 2, c + 2) for c in cuts] + [np.arange(3), np.arange(n - 3, n)]
    s = np.concatenate(near)
    return np.unique(s[(s >= 0) & (s < n)])


def _check(got: vk.Array, want: np.ndarray, rng, sample: bool = False) -> None:
    """got equals the host view `want`: whole when small (unless `sample`), else at random
    positions, the seams of the flat result and its ends."""
    assert got.shape == want.shape and got.dtype == vk.int32
    g = got.numpy()
    if want.size <= FULL and not sample:
        np.testing.assert_array_equal(g, want)
        return
    pos = np.unique(np.concatenate([_seams(want.size), rng.integers(0, want.size, 20000)]))
    at = np.unravel_index(pos, want.shape)
    np.testing.assert_array_equal(g[at], want[at])


def _norm(idx, size):
    idx = np.asarray(idx, np.int64)
    return np.where(idx < 0, idx + size, idx)


# -- gathers ---------------------------------------------------------------------------------

def test_take_from_a_big_source(big, host, n, rng):
    """Indices at both ends, on both sides of every seam, negative ones and random ones: from
    the host (int64), and on the device as int32 and uint32."""
    seams = _seams(n)
    idx = np.concatenate([seams, seams - n, rng.integers(-n, n, 3000)])
    rng.shuffle(idx)
    want = host[_norm(idx, n)]
    np.testing.assert_array_equal(vk.take(big, idx).numpy(), want)
    np.testing.assert_array_equal(vk.take(big, vk.asarray(idx.astype(np.int32))).numpy(), want)
    np.testing.assert_array_equal(big[vk.asarray(idx.astype(np.int32))].numpy(), want)
    pos = _norm(idx, n).astype(np.uint32)
    np.testing.assert_array_equal(vk.take(big, vk.asarray(pos)).numpy(), want)
    two_d = vk.take(big, idx[:3000].reshape(60, 50))  # the index shape carries over
    np.testing.assert_array_equal(two_d.numpy(), want[:3000].reshape(60, 50))


def test_device_indices_out_of_range_on_a_big_source(big, n, rng):
    """Device indices past the axis: wrapped, clipped, or clamped (the default), as for small
    arrays; the checked mode reports the first at the next sync."""
    raw = np.concatenate([rng.integers(n, 2**31 - 1, 20), -rng.integers(n + 1, 2**31, 20), [n, -n - 1]])
    dev = vk.asarray(raw.astype(np.int32))
    np.testing.assert_array_equal(vk.take(big, dev, mode="wrap").numpy(), np.mod(raw, n))
    np.testing.assert_array_equal(vk.take(big, dev, mode="clip").numpy(), np.clip(raw, 0, n - 1))
    np.testing.assert_array_equal(vk.take(big, dev, check_indices=False).numpy(),
                                  np.where(raw < 0, 0, n - 1))
    r = vk.take(big, dev, check_indices=True)
    with pytest.raises(IndexError, match=f"index {raw[0]} is out of bounds for axis 0 with size {n}"):
        r.numpy()


def test_rows_and_columns_of_a_big_matrix(big, host, n, rng):
    """x[rows], x[:, cols], x[rows, cols] and take_along_axis on a 2-D view of the big array:
    rows anywhere (a masked gather per part of the source), columns (boxes of rows)."""
    cols = 1000
    rows = n // cols
    x, h = big[: rows * cols].reshape((rows, cols)), host[: rows * cols].reshape(rows, cols)
    r = np.concatenate([[0, rows - 1, -1, -rows, rows // 2 - 1, rows // 2, rows // 2 + 1],
                        rng.integers(-rows, rows, 30)])
    c = rng.integers(-cols, cols, r.size)
    np.testing.assert_array_equal(x[r].numpy(), h[r])
    np.testing.assert_array_equal(x[vk.asarray(r.astype(np.int32))].numpy(), h[r])
    np.testing.assert_array_equal(x[r, c].numpy(), h[r, c])
    np.testing.assert_array_equal(x[vk.asarray(r.astype(np.int32)), vk.asarray(c.astype(np.int32))].numpy(),
                                  h[r, c])
    np.testing.assert_array_equal(vk.take(x, c[:5], axis=1).numpy(), h[:, c[:5]])
    along = rng.integers(-cols, cols, (rows, 2))
    np.testing.assert_array_equal(vk.take_along_axis(x, vk.asarray(along.astype(np.int32)), axis=1).numpy(),
                                  np.take_along_axis(h, _norm(along, cols), axis=1))
    np.testing.assert_array_equal(x[-3:, [0, -1]].numpy(), h[-3:, [0, -1]])


def test_big_result_from_a_small_source(n, rng):
    """Indices and result past the bind range, the source small: boxes of the result."""
    small = rng.integers(-2**31, 2**31, 997, dtype=np.int64).astype(np.int32)
    src = vk.asarray(small)
    idx = (np.arange(n, dtype=np.int32) + np.int32(rng.integers(1994))) % 1994 - 997  # negative ones too
    dev = vk.asarray(idx)
    assert dev.buffer.big
    want = small[np.where(idx < 0, idx + 997, idx)]
    _check(vk.take(src, dev), want, rng)
    _check(vk.take(src, idx), want, rng)  # host indices, uploaded big


def test_big_indices_into_a_big_source(big, host, n, rng):
    """Source, indices and result all past the bind range: the reversed array, and a view at an
    odd offset gathered by shuffled blocks of 4096 (its values: positions, plus 3)."""
    rev = vk.asarray(host[::-1].copy())
    _check(vk.take(big, rev), host[::-1], rng)
    blocks = (n - 3) // 4096
    idx = (rng.permutation(blocks).astype(np.int32)[:, None] * 4096 + np.arange(4096, dtype=np.int32)).ravel()
    _check(vk.take(big[3:], vk.asarray(idx)), idx + 3, rng)


def test_gathers_from_views_at_odd_offsets(big, host, n, rng):
    for start in (1, 3, 5, windows.align_words() + 1):
        v, h = big[start:], host[start:]
        idx = np.concatenate([_seams(v.size), rng.integers(-v.size, v.size, 500)])
        np.testing.assert_array_equal(vk.take(v, idx).numpy(), h[_norm(idx, v.size)])
    small = big[n - 1000: n - 10]  # a small view held in a big buffer: one window
    np.testing.assert_array_equal(vk.take(small, [0, -1, 5]).numpy(), host[n - 1000: n - 10][[0, -1, 5]])


# -- transposes and strided copies -----------------------------------------------------------

@pytest.mark.parametrize("lead,start", [((), 0), ((), 5), ((2,), 3)])
def test_2d_transposes(big, host, lead, start, rng):
    """The tiled kernel in boxes that both sides see through one window; views at odd offsets;
    a flat (2r, c) array, so that the matrix is not square."""
    dims = _dims(lead)
    rows, cols = int(np.prod(dims[:-1])), dims[-1]
    x = big[start: start + rows * cols].reshape((rows, cols))
    h = host[start: start + rows * cols].reshape(rows, cols)
    assert windows.is_big(x.size * 4)
    _check(x.T, h.T, rng)
    if start == 0:
        _check(vk.swapaxes(x, 0, 1), h.T, rng, sample=True)  # the same path under other names
        _check(vk.matrix_transpose(x), h.T, rng, sample=True)
        _check(vk.permute_dims(x, (1, 0)), h.T, rng, sample=True)


def test_narrow_transposes(big, host, n, rng):
    """An edge below the tiled kernel's: the strided copy in boxes."""
    m = (n - 1) // 3
    _check(big[: 3 * m].reshape((m, 3)).T, host[: 3 * m].reshape(m, 3).T, rng)
    _check(big[1: 1 + 3 * m].reshape((3, m)).T, host[1: 1 + 3 * m].reshape(3, m).T, rng)


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 0, 2), (1, 2, 0), (2, 0, 1)])
def test_3d_transposes(big, host, perm, rng):
    shape = _dims((37,))
    size = int(np.prod(shape))
    x, h = big[1: 1 + size].reshape(shape), host[1: 1 + size].reshape(shape)
    _check(vk.permute_dims(x, perm), h.transpose(perm), rng)


def test_copies_of_strided_views(big, host, rng):
    """Stepped, reversed and inner-axis slices of the big array (getitem's copies) and
    strided_copy."""
    _check(big[::-1], host[::-1], rng)
    _check(big[3::2], host[3::2], rng)
    _check(big[-2::-3], host[-2::-3], rng)
    _check(big[7::windows.chunk_words() // 3], host[7::windows.chunk_words() // 3], rng)
    cols = 4096
    rows = host.size // cols
    x, h = big[: rows * cols].reshape((rows, cols)), host[: rows * cols].reshape(rows, cols)
    _check(x[:, 1::3], h[:, 1::3], rng)
    _check(x[::-1, 5:-7], h[::-1, 5:-7], rng)
    _check(vk.strided_copy(big, (rows, 2), (cols, cols - 1), 0), np.lib.stride_tricks.as_strided(
        host, (rows, 2), (4 * cols, 4 * (cols - 1))), rng)


# -- what is left, and the planning ----------------------------------------------------------

def test_what_does_not_work_in_windows_is_refused(big, host, n):
    dev = vk.asarray(np.zeros(n, np.int32))
    assert dev.buffer.big
    small = vk.asarray(np.arange(10, dtype=np.int32))
    six = big[: 64 * (n // 64)].reshape((2, 2, 2, 2, 2, 2, n // 64))
    with no_gpu_work():
        with pytest.raises(ValueError, match="checked mode .* larger than maxStorageBufferRange"):
            vk.take(small, dev, check_indices=True)
        with pytest.raises(ValueError, match="push constants"):  # 7 dims that do not merge
            vk.transpose(six)


@pytest.mark.parametrize("shape,strides,limits", [
    ([6000, 6000], [[6000, 1], [1, 6000]], [2**25, 2**25]),
    ([37, 901, 1009], [[909109, 1009, 1], [1, 37 * 1009, 37]], [2**20, 2**21]),
    ([3, 2**24], [[2**24, 1], [1, 3]], [2**22, 2**22]),
    ([5, 7, 11, 13], [[1001, 143, 13, 1], [-1, 5, -35, 385]], [100, 300])])
def test_boxes_fit_their_windows_and_tile_the_space(shape, strides, limits):
    """box_shape: every operand's span of a box within its limit; boxes: the boxes cover the
    space exactly once (pure planning, no device work)."""
    reaches = [windows.Reach(s, lim) for s, lim in zip(strides, limits)]
    ext = windows.box_shape(shape, reaches)
    for r in reaches:
        assert r.span(ext) <= r.limit
    cover = np.zeros(shape, np.int8) if np.prod(shape) <= 2**20 else None
    total = 0
    for corner, box in windows.boxes(shape, ext, "test"):
        assert all(0 < b <= e for b, e in zip(box, ext))
        total += int(np.prod(box))
        if cover is not None:
            cover[tuple(slice(c, c + b) for c, b in zip(corner, box))] += 1
    assert total == np.prod(shape)
    if cover is not None:
        assert (cover == 1).all()


def test_too_many_boxes_are_refused():
    with pytest.raises(ValueError, match="dispatches in windows"):
        windows.boxes([windows.MAX_BOXES + 1, 5], [1, 5], "test")


def test_pieces_partition_a_range():
    w = windows.chunk_words()
    for lo, hi in [(0, w - 1), (0, w), (17, 3 * w + 5), (5, 5)]:
        parts = windows.pieces(lo, hi)
        assert parts[0][0] == lo and sum(c for _, c in parts) == hi - lo + 1
        assert all(c <= w for _, c in parts) and len(parts) == -(-(hi - lo + 1) // w)
        assert all(a + c == b for (a, c), (b, _) in zip(parts, parts[1:]))
