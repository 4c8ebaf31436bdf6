import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime.memory import size_class


def test_size_classes():
    prev = 0
    for words in list(range(1, 3000)) + [10**5, 123457, 2**20 + 1, 3 * 2**24 + 5]:
        c = size_class(words)
        assert c >= words and c >= prev
        assert words <= 1024 or c <= words * 1.25
        prev = c


def test_pool_does_not_grow_over_10000_ops(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    a = vk.asarray(x)
    acc = vk.zeros(1000)
    for _ in range(50):  # warm up: every size class in use is created
        acc = acc + a
    created = vk.stats()["buffers_created"]
    for _ in range(10_000):
        acc = acc + a
    assert vk.stats()["buffers_created"] == created
    ref = np.zeros(1000, np.float32)
    for _ in range(10_050):  # the same float32 additions, in the same order: bit-exact
        ref = ref + x
    np.testing.assert_array_equal(acc.numpy(), ref)


@pytest.mark.parametrize("n", [777, 20_000])  # in the command buffer; through staging (> 64 KiB)
def test_staging_not_reused_before_its_copy_ran(rng, n):
    # a's staging memory must not be handed to c while the copy into a is still recorded.
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = vk.asarray(x)
    b = a + 1
    del a
    c = vk.asarray(y)
    np.testing.assert_allclose(b.numpy(), x + 1, rtol=1e-6)
    np.testing.assert_array_equal(c.numpy(), y)


def test_views_keep_buffer_alive(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    row = vk.asarray(x)[2]
    for _ in range(3):
        vk.asarray(rng.standard_normal((4, 5)).astype(np.float32))  # would reuse a freed buffer
    np.testing.assert_array_equal(row.numpy(), x[2])


def test_too_large_array_is_refused():
    limit = runtime.get().device.max_buffer_size
    import pytest
    with pytest.raises(MemoryError, match="maxBufferSize"):
        vk.empty((limit // 4 + 1024,))


def test_pool_keeps_at_most_its_limit(monkeypatch, rng):
    pool = runtime.get().pool
    monkeypatch.setattr(pool, "limit", 1 << 20)
    arrays = [vk.asarray(rng.standard_normal(1 << 16).astype(np.float32)) for _ in range(40)]  # 10 MiB
    in_use = vk.memory_stats()["in_use"]
    assert in_use >= 40 * (1 << 18)
    del arrays
    vk.synchronize()  # their uploads done, the buffers can be freed
    st = vk.memory_stats()
    assert st["cached"] <= (1 << 20) and st["in_use"] <= in_use - 40 * (1 << 18)
    assert vk.stats()["buffers_freed"] > 0


def test_memory_error_then_recovery(monkeypatch, rng):
    """Past VKBACKEND_MEMORY_LIMIT (here patched on the live pool): cached buffers are trimmed and
    the allocation retried; when arrays alone fill it, MemoryError names the request, before any
    GPU work, and everything computed before stays readable and the library keeps working."""
    pool = runtime.get().pool
    x = rng.standard_normal(1000).astype(np.float32)
    kept = vk.asarray(x) * 2.0
    kept_host = kept.numpy()
    monkeypatch.setattr(pool, "capacity", pool.in_use + pool.cached + (8 << 20))
    big = [vk.zeros(1 << 20) for _ in range(2)]  # 8 MiB: fits (trimming the cache if need be)
    before = vk.stats()["dispatches"]
    with pytest.raises(MemoryError, match=r"allocating 4194304 bytes.*in use by arrays"):
        vk.zeros(1 << 20)
    assert vk.stats()["dispatches"] == before
    del big
    again = vk.zeros(1 << 20) + 1.0  # room again once the arrays are gone
    assert float(again.sum().numpy()) == 1 << 20
    np.testing.assert_array_equal(kept.numpy(), kept_host)
    np.testing.assert_array_equal((kept + 1.0).numpy(), x * np.float32(2.0) + np.float32(1.0))


def test_pool_limit_setting():
    from vkbackend.config import parse_bytes
    assert parse_bytes("1048576", "X") == 1 << 20
    assert parse_bytes("512M", "X") == 512 << 20
    assert parse_bytes("2GiB", "X") == 2 << 30
    assert parse_bytes("1.5k", "X") == 1536
    for bad in ("", "lots", "-5M", "1Q"):
        with pytest.raises(ValueError, match="X="):
            parse_bytes(bad, "X")


@pytest.mark.parametrize("n", [1, 31, 64, 65, 1025, 4096])
def test_mapped_and_staged_buffers_round_trip(rng, n):
    # Size classes up to MAPPED_WORDS are mapped (read and written in place), larger ones staged.
    from vkbackend.runtime.memory import MAPPED_WORDS
    x = rng.standard_normal(n).astype(np.float32)
    a = vk.asarray(x)
    assert a.buffer.mapped == (size_class(n) <= MAPPED_WORDS)
    b = a * 3.0 - 1.0
    assert b.buffer.mapped == a.buffer.mapped
    np.testing.assert_array_equal(b.numpy(), x * np.float32(3) - np.float32(1))
    np.testing.assert_array_equal(a.numpy(), x)


@pytest.mark.parametrize("n", [60, 3000, 17_000])  # mapped; staged, in the command buffer; staging
def test_upload_does_not_overwrite_a_buffer_a_recorded_op_reads(rng, n):
    # Each a_i is released right after an op that reads it is recorded, and its buffer is reused
    # by the next upload: that upload must land only after the op has run.
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(40)]
    outs = []
    created = vk.stats()["buffers_created"]
    for x in xs:
        a = vk.asarray(x)
        outs.append(a * 2.0)
        del a
    if n * 4 <= 65536:  # in the command buffer: released buffers serve the next upload at once
        assert vk.stats()["buffers_created"] - created <= 42
    for x, o in zip(xs, outs):
        np.testing.assert_array_equal(o.numpy(), x * np.float32(2))


def test_mapped_result_of_a_flushed_chunk_reads_back(rng, whole_submits):
    # A result written in an earlier (flushed, not waited-for) submit and read with nothing new
    # recorded: the flushed submit itself must end with the barrier to host reads.
    from vkbackend.runtime.stream import FLUSH_AFTER
    x = rng.standard_normal(64).astype(np.float32)
    first = vk.asarray(x) + 1.0
    keep = vk.asarray(x)
    for _ in range(FLUSH_AFTER + 5):
        keep = keep * 1.0
    assert vk.stats()["flushes"] >= 1
    vk.synchronize()
    np.testing.assert_array_equal(first.numpy(), x + np.float32(1))
    np.testing.assert_array_equal(keep.numpy(), x)


def test_a_size_class_never_makes_a_bindable_array_big():
    """An array a shader could bind whole gets a buffer it can bind whole, even where its size
    class would round up past maxStorageBufferRange (the pool keeps its class at the range)."""
    from vkbackend.runtime.memory import Pool, size_class
    rt = runtime.get()
    bind = 4096 * 4 + 64  # a class boundary (4096 words) plus a little: 4112 words round up to 4608
    pool = Pool(rt.device.manager, 1 << 20, 1 << 20, bind_bytes=bind)
    words = bind // 4 - 3
    assert size_class(words) * 4 > bind
    buf = pool.acquire(words)
    assert not buf.big and words <= buf.words <= bind // 4
    past = pool.acquire(bind // 4 + 1)
    assert past.big
    pool.release(buf)
    pool.release(past)
    pool.trim(0)
