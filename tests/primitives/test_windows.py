"""Arrays larger than one shader may bind (past maxStorageBufferRange: 128 MiB on lavapipe), worked
on in windows of their buffer (primitives/windows.py): elementwise operations, astype and
reductions against numpy; everything else refused with a clear error."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import windows

from tests.conftest import no_gpu_work


@pytest.fixture(scope="module")
def big_n():
    """Elements just past one window of float32 (two chunks, the second short and unaligned):
    33.5M on lavapipe, 1.07G (4.3 GB) on a GPU with a 4 GiB bind range."""
    return windows.chunk_words() + 1001


@pytest.fixture(scope="module")
def big(big_n):
    x = np.random.default_rng(11).standard_normal(big_n).astype(np.float32)
    a = vk.asarray(x)
    assert a.buffer.big and windows.is_big(a.size * 4)
    return x, a


def test_elementwise_in_windows(big):
    x, a = big
    got = (a * 2.0 + 1.0).numpy()
    np.testing.assert_array_equal(got, x * np.float32(2) + np.float32(1))
    v = a[3:]  # a view at an odd offset: windows start before it, aligned
    np.testing.assert_array_equal(vk.maximum(v, a[:-3]).numpy(), np.maximum(x[3:], x[:-3]))
    np.testing.assert_array_equal((v > 0.5).numpy(), x[3:] > 0.5)
    got = vk.exp(a[:-7] * a[7:8]).numpy()  # a one-element operand from the big buffer
    want = np.exp((x[:-7].astype(np.float64) * x[7]))
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_astype_in_windows(big_n):
    i = np.arange(big_n, dtype=np.int32) - big_n // 2
    a = vk.asarray(i)
    np.testing.assert_array_equal(a.astype(vk.float32).numpy(), i.astype(np.float32))
    np.testing.assert_array_equal(a.copy()[1:5].numpy(), i[1:5])
    assert int(a.sum()) == int(np.int32(i.astype(np.int64).sum() % 2**32))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "all", "any"])
def test_whole_reductions_in_windows(big, name):
    x, a = big
    got = getattr(vk, name)(a if name not in ("all", "any") else a > -4.0)
    ref_in = x.astype(np.float64) if name not in ("all", "any") else x > -4.0
    want = getattr(np, name)(ref_in)
    if name in ("sum", "mean"):
        tol = 2 * x.size * np.finfo(np.float32).eps * np.abs(x.astype(np.float64)).sum() / (x.size if name == "mean" else 1)
        assert abs(float(got) - want) <= tol
    else:
        assert got.numpy() == want


def test_axis_reductions_in_windows(big):
    x, a = big
    rows = x.size // 6 * 6
    y, b = x[:rows].reshape(-1, 6), a[:rows].reshape((-1, 6))
    np.testing.assert_allclose(b.sum(axis=1).numpy(), y.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(b.max(axis=1).numpy(), y.max(axis=1))
    want = y.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(b.sum(axis=0).numpy(), want, atol=4 * rows * np.finfo(np.float32).eps * 6)
    np.testing.assert_allclose(b.mean(axis=0).numpy(), want / (rows // 6), atol=1e-5)


def test_what_does_not_work_in_windows_is_refused(big):
    x, a = big
    rows = a[: a.size // 6 * 6].reshape((-1, 6))
    six = vk.ones(6)
    with no_gpu_work():
        with pytest.raises(ValueError, match="broadcasting"):
            rows + six
        with pytest.raises(ValueError, match="argmax"):
            vk.argmax(a)
        with pytest.raises(ValueError, match="var"):
            vk.var(a)
    with pytest.raises(ValueError, match="maxStorageBufferRange"):
        vk.sort(a)
    assert float(a[5:6].numpy()[0]) == x[5]  # still readable after the refusals


@pytest.mark.parametrize("name", ["cumsum", "cummax", "cumprod"])
def test_scans_in_windows(big, name):
    """Flat inclusive scans past the bind range: each window's chunk scanned, the previous
    chunks' result combined in (cumprod of values near 1, so that it stays finite)."""
    x, a = big
    if name == "cumprod":
        x = (1 + x / 4096).astype(np.float32)
        a = vk.asarray(x)
    got = getattr(vk, name)(a).numpy()
    if name == "cummax":
        np.testing.assert_array_equal(got, np.maximum.accumulate(x))
        return
    x64 = x.astype(np.float64)
    want = np.cumsum(x64) if name == "cumsum" else np.cumprod(x64)
    scale = np.cumsum(np.abs(x64)) if name == "cumsum" else np.abs(want)
    err = np.abs(got - want)
    assert (err <= 4 * x.size * np.finfo(np.float32).eps * scale + 1e-30).all()
    # across the chunk seam each step adds (multiplies by) the next element: the carry was combined
    cut = windows.piece_words()
    seam = got[cut - 3: cut + 3].astype(np.float64)
    nxt = x64[cut - 2: cut + 3]
    if name == "cumsum":
        np.testing.assert_allclose(np.diff(seam), nxt, atol=8 * np.finfo(np.float32).eps * np.abs(seam).max())
    else:
        np.testing.assert_allclose(seam[1:] / seam[:-1], nxt, rtol=8 * np.finfo(np.float32).eps)


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
