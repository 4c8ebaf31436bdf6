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


def test_small_arrays_are_pieces_of_few_slabs(rng):
    """A thousand live small arrays take a handful of allocations (slabs growing 4, 8, 16 ...
    pieces), and every piece keeps its own data: each array computed from its own input,
    neighbours in a slab unclobbered (the suite's poisoning fills whole pieces too)."""
    from vkbackend.runtime.memory import SUBALLOC_BYTES
    n = 100  # a 128-word class: 512 bytes a piece
    before = vk.stats()
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(1000)]
    arrays = [vk.asarray(x) for x in xs]
    outs = [a * 2.0 + float(i) for i, a in enumerate(arrays)]
    after = vk.stats()
    slabs = {id(a.buffer.slab) for a in arrays + outs}
    assert None not in {a.buffer.slab for a in arrays} and len(slabs) <= 12
    assert after["pieces_carved"] - before["pieces_carved"] <= 2000
    assert after["buffers_created"] - before["buffers_created"] <= 14
    for i, (x, a, o) in enumerate(zip(xs, arrays, outs)):
        np.testing.assert_array_equal(a.numpy(), x)
        np.testing.assert_array_equal(o.numpy(), x * np.float32(2) + np.float32(i))
    assert vk.asarray(np.zeros(SUBALLOC_BYTES // 4 + 1, np.float32)).buffer.slab is None


def test_pieces_bind_fill_and_copy_only_their_range(rng):
    """Adjacent pieces of one slab: the poisoning fill, an upload (in the command buffer), a
    kernel's writes and a read through the staging area of one leave the other as it was."""
    n = 3000  # a 3072-word class (12 KiB) ...
    m = 17_000  # ... and a 17408-word one (68 KiB: past SUBALLOC_BYTES, a whole buffer)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    a = vk.asarray(x)
    b = vk.empty((n,), vk.float32)
    if b.buffer.slab is not a.buffer.slab:  # a's piece was the slab's last: take the next pair
        a, b = vk.asarray(x), vk.empty((n,), vk.float32)
    assert a.buffer.slab is b.buffer.slab and a.buffer.tensor.offset != b.buffer.tensor.offset
    b[...] = vk.asarray(y)
    c = b * 3.0
    np.testing.assert_array_equal(a.numpy(), x)
    np.testing.assert_array_equal(c.numpy(), y * np.float32(3))
    big = vk.asarray(rng.standard_normal(m).astype(np.float32))
    assert big.buffer.slab is None
    np.testing.assert_array_equal((big[:n] + a).numpy(), big.numpy()[:n] + x)


def test_trim_frees_slabs_whose_pieces_are_all_free(rng):
    pool = runtime.get().pool
    vk.synchronize()
    pool.trim(0)
    held = pool.held
    kept = vk.asarray(rng.standard_normal(500).astype(np.float32))
    kept_host = kept.numpy()
    arrays = [vk.asarray(np.full(500, i, np.float32)) for i in range(300)]
    grown = pool.held
    assert grown > held
    del arrays
    vk.synchronize()
    pool.trim(0)
    # every slab but the one holding `kept` went back
    assert pool.held - held <= kept.buffer.slab.pieces * kept.buffer.words * 4
    assert vk.memory_stats()["cached"] == pool.held - pool.in_use
    np.testing.assert_array_equal(kept.numpy(), kept_host)
    np.testing.assert_array_equal((kept + 1.0).numpy(), kept_host + np.float32(1))


def test_a_slice_outside_its_tensor_is_refused():
    from vkbackend.runtime._kpmod import kp
    t = runtime.get().pool._mgr.tensor_t(np.zeros(256, np.uint32), kp.TensorTypes.storage)
    with pytest.raises(ValueError, match="expected a non-empty range inside it"):
        t.slice(200, 64)
    with pytest.raises(ValueError, match="expected a non-empty range inside it"):
        t.slice(0, 0)
    s = t.slice(64, 128).slice(64, 64)  # a slice of a slice addresses the first tensor
    assert s.offset == 128 * 4 and s.size() == 64


def test_memory_stats_by_heap():
    """Each heap's size and kind; where the driver reports budgets (VK_EXT_memory_budget), a
    256 MiB array shows in the device-local heaps' usage."""
    stats = vk.memory_stats()
    heaps = stats["heaps"]
    assert heaps and all(h["size"] > 0 for h in heaps)
    assert sum(h["size"] for h in heaps if h["device_local"]) == stats["device_local"] > 0
    if "VK_EXT_memory_budget" not in vk.device().extensions:
        assert all(h["budget"] is None and h["usage"] is None for h in heaps)
        return

    def used():
        return sum(h["usage"] for h in vk.memory_stats()["heaps"] if h["device_local"])
    vk.synchronize()
    runtime.get().pool.trim(0)
    before = used()
    a = vk.zeros(1 << 26)
    vk.synchronize()
    assert used() - before >= 0.9 * (1 << 28)
    assert all(h["budget"] > 0 for h in vk.memory_stats()["heaps"])
    del a


def test_a_slab_that_does_not_fit_shrinks_to_one_piece(monkeypatch):
    """Near VKBACKEND_MEMORY_LIMIT a small array still gets its piece (a slab of one) where a
    whole slab would not fit, and MemoryError names the piece's bytes once even that does not."""
    pool = runtime.get().pool
    vk.synchronize()
    pool.trim(0)
    piece = size_class(5000) * 4  # 20 KiB: a new slab would hold 4 of them
    assert piece == 20480 and not any(s.carved > s.free for s in pool._slabs.get(piece // 4, []))
    monkeypatch.setattr(pool, "capacity", pool.held + 2 * piece)
    a = vk.full((5000,), 1.0)
    b = vk.full((5000,), 2.0)  # the second slab of one piece: the last room there is
    assert a.buffer.slab.pieces == b.buffer.slab.pieces == 1
    with pytest.raises(MemoryError, match=f"allocating {piece} bytes"):
        vk.empty((5000,))
    np.testing.assert_array_equal(a.numpy(), np.ones(5000, np.float32))
    np.testing.assert_array_equal(b.numpy(), np.full(5000, 2, np.float32))


def test_suballocation_can_be_turned_off(monkeypatch):
    """VKBACKEND_SUBALLOC_LIMIT=0 (read when the runtime opens; here a pool made with it): every
    buffer an allocation of its own (tests/test_config.py checks the setting's parsing)."""
    from vkbackend import config
    from vkbackend.runtime.memory import Pool
    rt = runtime.get()
    pool = Pool(rt.device.manager, 1 << 24, 1 << 24, suballoc_bytes=0)
    bufs = [pool.acquire(100) for _ in range(3)]
    assert all(b.slab is None for b in bufs) and pool.stats["buffers_created"] == 3
    on = Pool(rt.device.manager, 1 << 24, 1 << 24)
    pieces = [on.acquire(100) for _ in range(3)]
    assert all(b.slab is pieces[0].slab is not None for b in pieces) and on.stats["buffers_created"] == 1
    for p, bs in ((pool, bufs), (on, pieces)):
        for b in bs:
            p.release(b)
        p.trim(0)
        assert p.held == 0
    monkeypatch.setenv("VKBACKEND_SUBALLOC_LIMIT", "16K")
    assert config.get("VKBACKEND_SUBALLOC_LIMIT") == 16384
