"""Arrays larger than one shader may bind (past maxStorageBufferRange: 128 MiB on lavapipe, 4 GiB on
NVIDIA), worked on in windows of their buffer (primitives/windows.py): elementwise operations,
astype, reductions and flat scans against numpy; everything else refused with a clear error.

The data is a random block of a prime length, repeated: its float64 references (sums, prefix
sums, running maxima) follow from the block's, and results are checked at random positions, the
chunk seams and the tail, so that the GPU's 4.3 GB cases cost seconds of numpy, not minutes."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend.primitives import windows

from tests.conftest import no_gpu_work

BLOCK = 1_000_003
EPS = np.finfo(np.float32).eps


@pytest.fixture(scope="module")
def big_n():
    """Elements just past one window of float32 (two chunks, the second short and unaligned):
    33.5M on lavapipe, 1.07G (4.3 GB) on a GPU with a 4 GiB bind range."""
    return windows.chunk_words() + 1001


@pytest.fixture(scope="module")
def block():
    return np.random.default_rng(11).standard_normal(BLOCK).astype(np.float32)


@pytest.fixture(scope="module")
def big(big_n, block):
    x = np.resize(block, big_n)
    a = vk.asarray(x)
    assert a.buffer.big and windows.is_big(a.size * 4)
    return x, a


@pytest.fixture(scope="module")
def where(big_n):
    """Positions to check: random ones, both sides of each chunk and scan-piece seam, the ends."""
    seams = [windows.chunk_words(), windows.piece_words()]
    near = np.concatenate([np.arange(s - 3, s + 3) for s in seams] + [np.arange(4), np.arange(big_n - 4, big_n)])
    rand = np.random.default_rng(12).integers(0, big_n, 4000)
    return np.unique(np.concatenate([near, rand]))


def _prefix(block, n_idx, fn=np.cumsum):
    """fn's running result over the repeated block at positions n_idx (float64), from the block's."""
    whole = fn(block.astype(np.float64))
    q, r = np.divmod(n_idx, BLOCK)
    if fn is np.cumsum:
        return q * whole[-1] + whole[r]
    return np.where(q > 0, whole[-1], whole[r])  # running maximum: the block's once it is all seen


def _total(block, n):
    q, r = divmod(n, BLOCK)
    b = block.astype(np.float64)
    return q * b.sum() + b[:r].sum(), q * np.abs(b).sum() + np.abs(b[:r]).sum()


def test_elementwise_in_windows(big, where):
    x, a = big
    got = (a * 2.0 + 1.0).numpy()
    np.testing.assert_array_equal(got[where], x[where] * np.float32(2) + np.float32(1))
    v = a[3:]  # a view at an odd offset: windows start before it, aligned
    w = where[where < x.size - 3]
    np.testing.assert_array_equal(vk.maximum(v, a[:-3]).numpy()[w], np.maximum(x[3:][w], x[:-3][w]))
    np.testing.assert_array_equal((v > 0.5).numpy()[w], x[3:][w] > 0.5)
    got = vk.exp(a[:-7] * a[7:8]).numpy()  # a one-element operand from the big buffer
    w = where[where < x.size - 7]
    np.testing.assert_allclose(got[w], np.exp(x[w].astype(np.float64) * x[7]), rtol=2e-6)


def test_astype_in_windows(big_n, where):
    i = np.arange(big_n, dtype=np.int32) - big_n // 2
    a = vk.asarray(i)
    np.testing.assert_array_equal(a.astype(vk.float32).numpy()[where], i[where].astype(np.float32))
    np.testing.assert_array_equal(a.copy()[1:5].numpy(), i[1:5])
    assert int(a.sum()) == int(np.int64(i.astype(np.int64).sum()).astype(np.int32))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "all", "any"])
def test_whole_reductions_in_windows(big, block, name):
    x, a = big
    if name in ("all", "any"):
        assert getattr(vk, name)(a > -4.0).numpy() == getattr(np, name)(block > -4.0)
        assert getattr(vk, name)(a > 4.5).numpy() == getattr(np, name)(block > 4.5)
        return
    if name in ("max", "min"):
        assert getattr(vk, name)(a).numpy() == getattr(np, name)(block)
        return
    want, mag = _total(block, x.size)
    got = float(getattr(vk, name)(a))
    scale = x.size if name == "mean" else 1
    assert abs(got - want / scale) <= 2 * x.size * EPS * mag / scale


def test_axis_reductions_in_windows(big):
    x, a = big
    rows = x.size // 6 * 6
    y, b = x[:rows].reshape(-1, 6), a[:rows].reshape((-1, 6))
    picks = np.random.default_rng(13).integers(0, rows // 6, 2000)
    np.testing.assert_allclose(b.sum(axis=1).numpy()[picks], y[picks].astype(np.float64).sum(axis=1),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(b.max(axis=1).numpy()[picks], y[picks].max(axis=1))
    want = np.add.reduce(y, axis=0, dtype=np.float64)
    bound = 4 * rows * EPS * np.add.reduce(np.abs(y), axis=0, dtype=np.float64) / 6
    assert (np.abs(b.sum(axis=0).numpy() - want) <= bound).all()
    assert (np.abs(b.mean(axis=0).numpy() - want / (rows // 6)) <= bound / (rows // 6) + 1e-7).all()


@pytest.mark.parametrize("name", ["cumsum", "cummax", "cumprod"])
def test_scans_in_windows(big, block, where, name):
    """Flat inclusive scans past the bind range: each piece scanned, the previous pieces' result
    combined in (cumprod of values near 1, so that it stays finite)."""
    x, a = big
    if name == "cummax":
        np.testing.assert_array_equal(vk.cummax(a).numpy()[where], _prefix(block, where, np.maximum.accumulate))
        return
    if name == "cumsum":
        got = vk.cumsum(a).numpy()
        err = np.abs(got[where] - _prefix(block, where))
        assert (err <= 4 * x.size * EPS * _prefix(np.abs(block), where) + 1e-30).all()
        xs = x
    else:
        xs = (1 + x / 4096).astype(np.float32)
        got = vk.cumprod(vk.asarray(xs)).numpy()
        logs = np.log(np.resize((1 + block / 4096).astype(np.float32), BLOCK).astype(np.float64))
        want = np.exp(_prefix(logs, where))
        assert (np.abs(got[where] / want - 1) <= 4 * x.size * EPS).all()
    # across the piece seam each step adds (multiplies by) the next element: the carry was combined
    cut = windows.piece_words()
    seam = got[cut - 3: cut + 3].astype(np.float64)
    nxt = xs[cut - 2: cut + 3].astype(np.float64)
    if name == "cumsum":
        np.testing.assert_allclose(np.diff(seam), nxt, atol=8 * EPS * np.abs(seam).max())
    else:
        np.testing.assert_allclose(seam[1:] / seam[:-1], nxt, rtol=8 * EPS)


def test_what_does_not_work_in_windows_is_refused(big):
    x, a = big
    rows = a[: a.size // 6 * 6].reshape((-1, 6))
    six = vk.ones(6)
    with no_gpu_work():
        with pytest.raises(ValueError, match="broadcasting"):
            rows + six
        with pytest.raises(ValueError, match="argmax and argmin work in windows only over all"):
            vk.argmax(rows, axis=0)
        with pytest.raises(ValueError, match="var"):
            vk.var(a)
    with pytest.raises(ValueError, match="maxStorageBufferRange"):
        vk.sort(a)
    assert float(a[5:6].numpy()[0]) == x[5]  # still readable after the refusals


def test_scans_in_windows_refuse_what_they_cannot(big):
    x, a = big
    rows = a[: a.size // 2 * 2].reshape((-1, 2))
    with no_gpu_work():
        for bad in (lambda: vk.cumsum(rows, axis=0), lambda: vk.cumsum(a, exclusive=True),
                    lambda: vk.cumsum(a, reverse=True)):
            with pytest.raises(ValueError, match="windows only flattened or 1-D"):
                bad()


@pytest.mark.parametrize("range_bytes", [2**27, 2**32 - 1, 3 * 2**28, 2**31 + 12345])
def test_scan_pieces_fit_the_bind_range_after_rounding(range_bytes):
    """A piece's own buffer is rounded up to a size class and bound whole: the class must fit
    (NVIDIA's 2**32 - 1 bytes would round a window-sized piece up to 4 GiB)."""
    from vkbackend.runtime.memory import size_class
    words = windows.piece_words(range_bytes)
    assert size_class(words) * 4 <= range_bytes
    assert words % windows.align_words() == 0 and words > range_bytes // 4 * 3 // 4


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_flat_argmax_argmin_in_windows(big_n, block, name):
    """The first occurrence over all chunks: the block repeats, so the extreme recurs in every
    period; planting a larger (smaller) value, or a NaN, in the second chunk moves it there."""
    x = np.resize(block, big_n)
    fn = getattr(np, name)
    a = vk.asarray(x)
    assert int(getattr(vk, name)(a)) == fn(x[:BLOCK])
    at = windows.chunk_words() + 5
    x[at] = 100.0 if name == "argmax" else -100.0
    x[at + 7] = x[at]  # a tie after it: the first wins
    assert int(getattr(vk, name)(vk.asarray(x))) == at
    x[big_n - 2] = np.nan  # NaN first: numpy returns the first NaN
    assert int(getattr(vk, name)(vk.asarray(x), keepdims=True).numpy().ravel()[0]) == big_n - 2
