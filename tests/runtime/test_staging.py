"""The staging area (runtime/staging.py): device buffers keep no host copy; uploads and downloads
larger than the area go through it in pieces, in order with the work around them."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime import stream as stream_mod
from vkbackend.runtime._kpmod import kp
from vkbackend.runtime.staging import StagingArea


@pytest.fixture
def small_area(monkeypatch):
    """A staging area of 4096 words (16 KiB), smaller than the transfers below."""
    rt = runtime.get()
    vk.synchronize()
    area = StagingArea(rt.device.manager, 4096 * 4)
    monkeypatch.setattr(rt.stream, "_area", area)
    return area


def test_device_buffers_keep_no_host_copy():
    big = vk.zeros(100_000)
    small = vk.zeros(3)
    assert big.buffer.tensor.tensor_type() == kp.TensorTypes.storage
    assert small.buffer.mapped and small.buffer.tensor.tensor_type() == kp.TensorTypes.host


@pytest.mark.parametrize("n", [stream_mod.UPDATE_BYTES // 4 + 1, 4096 * 7 + 5, 100_003])
def test_transfers_larger_than_the_area_go_in_pieces(rng, small_area, n):
    x = rng.standard_normal(n).astype(np.float32)
    a = vk.asarray(x)
    vk.synchronize()
    s0 = vk.stats()["submits"]
    got = a.numpy()
    pieces = -(-n // 4096)
    np.testing.assert_array_equal(got, x)
    assert vk.stats()["submits"] - s0 == pieces  # one submit + wait per piece of the download
    assert small_area.words == 4096


def test_pieces_keep_order_with_the_work_between(rng, small_area):
    """Uploads, ops on them and reads of views at odd offsets, all through a 16 KiB area."""
    xs = [rng.standard_normal(n).astype(np.float32) for n in (20_000, 9_999, 33_333)]
    arrays = [vk.asarray(x) for x in xs]
    acc = vk.zeros(9_999)
    for a in arrays:
        acc = acc + a[:9_999] * 2.0
        a += 1.0  # written after the read above was recorded
    want = sum(x[:9_999].astype(np.float64) * 2 for x in xs)
    np.testing.assert_allclose(acc.numpy(), want, rtol=1e-6, atol=1e-6)
    for a, x in zip(arrays, xs):
        np.testing.assert_array_equal(a[3:].numpy(), x[3:] + np.float32(1))
    assert small_area.stats["restarts"] >= 10


def test_float16_reads_at_odd_offsets(rng, small_area):
    x = rng.standard_normal(20_001).astype(np.float16)
    a = vk.asarray(x)
    for lo, hi in [(0, 20_001), (1, 20_000), (8191, 8194), (3, 4)]:
        np.testing.assert_array_equal(a[lo:hi].numpy(), x[lo:hi])


def test_the_area_grows_to_its_limit_and_no_further(rng, monkeypatch):
    rt = runtime.get()
    vk.synchronize()
    area = StagingArea(rt.device.manager, 1 << 22)  # 4 MiB: starts at 1 MiB
    monkeypatch.setattr(rt.stream, "_area", area)
    x = rng.standard_normal(300_000).astype(np.float32)  # 1.2 MB: grows to 2 MiB
    np.testing.assert_array_equal(vk.asarray(x).numpy(), x)
    assert area.words == 1 << 19
    y = rng.standard_normal(3_000_000).astype(np.float32)  # 12 MB: the limit, 3 pieces
    np.testing.assert_array_equal(vk.asarray(y).numpy(), y)
    assert area.words == 1 << 20
    assert vk.memory_stats()["staging"] == 4 << 20
