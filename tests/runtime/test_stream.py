from pathlib import Path

import numpy as np

import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime import compiler, stream
from vkbackend.runtime._kpmod import kp

BUSY = str(Path(__file__).parent.parent / "shaders" / "busy.comp")


def test_many_ops_one_submit(rng, whole_submits):
    """With eager submits off (as the kernel benchmarks run) a graph is one submit."""
    x = rng.standard_normal(300).astype(np.float32)
    vk.synchronize()
    before = vk.stats()
    a = vk.asarray(x)
    r = a
    for i in range(100):
        r = r * 0.5 + a
    got = r.numpy()
    after = vk.stats()
    assert after["submits"] - before["submits"] == 1
    # operations recorded: dispatches, a fused chain counting each of its operations
    ops = {k: after[k] - before[k] for k in ("dispatches", "fused_ops", "fused_dispatches")}
    assert ops["dispatches"] + ops["fused_ops"] - ops["fused_dispatches"] >= 200
    ref = x.astype(np.float64)
    for i in range(100):
        ref = ref * 0.5 + x
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_eager_submits_while_the_gpu_idles(rng, monkeypatch):
    """With the GPU idle (and no wait between submits asked), what is recorded is submitted when
    the next operation comes (no wait); results are those of one submit, staging uploads (>
    UPDATE_BYTES) included, whose buffers come back to the pool while earlier chunks run."""
    monkeypatch.setattr(runtime.get().stream, "eager_seconds", 0.0)
    vk.synchronize()
    s0 = vk.stats()
    n = stream.UPDATE_BYTES // 4 + 3
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(6)]
    r = vk.zeros(n)
    for x in xs:
        r = r * 0.5 + vk.asarray(x)  # each upload's buffer is released two operations later
    got = r.numpy()
    s1 = vk.stats()
    assert s1["eager_submits"] - s0["eager_submits"] >= 1
    ops = sum(s1[k] - s0[k] for k in ("dispatches", "uploads", "fills"))
    assert s1["submits"] - s0["submits"] <= ops + 1  # at most one per operation, and the sync's
    ref = np.zeros(n)
    for x in xs:
        ref = ref * 0.5 + x
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_numpy_on_lazy_result_is_one_submit(rng, whole_submits):
    a = vk.asarray(rng.standard_normal(10).astype(np.float32))
    vk.synchronize()
    s0 = vk.stats()["submits"]
    b = vk.exp(a)
    b.numpy()
    assert vk.stats()["submits"] == s0 + 1


def test_synchronize_with_nothing_recorded_does_not_submit():
    vk.synchronize()
    s0 = vk.stats()["submits"]
    vk.synchronize()
    assert vk.stats()["submits"] == s0


def test_long_graphs_flush_in_chunks(monkeypatch, rng, whole_submits):
    monkeypatch.setattr(stream, "FLUSH_AFTER", 16)
    x = rng.standard_normal(50).astype(np.float32)
    vk.synchronize()
    s0 = vk.stats()
    a = vk.asarray(x)
    r = vk.zeros(50)
    for _ in range(100):
        r = r + a
    got = r.numpy()
    s1 = vk.stats()
    assert s1["flushes"] - s0["flushes"] >= 5
    np.testing.assert_allclose(got, x * 100, rtol=1e-5)


def test_replay_runs_the_recorded_chunk_again_then_finishes_it():
    """Stream.replay (benchmarks of stateless work): the recorded dispatches run `times` times,
    one submit each, and the chunk is then finished as by a sync."""
    rt = runtime.get()
    counter = vk.zeros((1,), np.uint32)
    vk.synchronize()
    s0 = vk.stats()["submits"]
    rt.kernel(BUSY, {}, 1)([counter.buffer], [3], (1,))
    took = rt.stream.replay(3)
    assert len(took) == 3 and all(t > 0 for t in took)
    assert vk.stats()["submits"] == s0 + 1  # the last one is the stream's own submit
    assert counter.numpy()[0] == 9
    assert rt.stream.replay(3) == []  # nothing recorded since


def _busy_sequence(dispatches: int, iterations: int):
    """A kp sequence of `dispatches` single-invocation loops of `iterations` atomic adds each,
    then a read-back of the counter."""
    mgr = runtime.get().device.manager
    counter = mgr.tensor_t(np.zeros(64, np.uint32))
    algo = mgr.algorithm([counter], compiler.compile_shader(BUSY), (1, 1, 1),
                         np.zeros(0, np.uint32), np.zeros(1, np.uint32))
    seq = mgr.sequence()
    seq.record(kp.OpTensorSyncDevice([counter]))
    for _ in range(dispatches):
        seq.record(kp.OpGlobalBarrier())
        seq.record(kp.OpAlgoDispatch(algo, np.array([iterations], np.uint32)))
    seq.record(kp.OpGlobalBarrier())
    seq.record(kp.OpTensorSyncLocal([counter]))
    return counter, seq


def test_patched_kp_many_evals_on_one_sequence():
    counter, seq = _busy_sequence(1, 1)
    for i in range(500):  # one fence, reset before each submit
        seq.eval()
        assert counter.data()[0] == i + 1  # the read-back value is uploaded again next time


def test_patched_kp_eval_async_then_timeout_then_wait():
    dispatches, iterations = 20, 60_000  # ~10-1000 ms of serial atomics, whatever the device
    counter, seq = _busy_sequence(dispatches, iterations)
    seq.eval_async()  # returns while the device works
    seq.eval_await(1_000)  # 1 us: times out
    assert seq.is_running(), "a timed-out wait must leave the sequence running"
    seq.eval_await()
    assert not seq.is_running()
    assert counter.data()[0] == dispatches * iterations
    seq.eval()  # the same sequence and fence work again (starting from the value read back)
    assert counter.data()[0] == 2 * dispatches * iterations


def test_one_pipeline_per_variant_whatever_the_buffers(rng):
    """New arrays (new buffers, other sizes) reuse the variant's pipeline: none is made after the
    first pass, and each result is still right (each dispatch binds its own buffers)."""
    sizes = [int(n) for n in rng.integers(1, 5000, 40)] * 2
    xs = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    made = None
    for i, x in enumerate(xs):
        if i == len(xs) // 2:
            made = vk.stats()["pipelines_created"]
        a = vk.asarray(x)
        got = ((a * 2.0 + 1.0) * (a * 2.0 + 1.0)).sum()
        np.testing.assert_allclose(float(got.numpy()), float(((x * 2.0 + 1.0) ** 2).astype(np.float64).sum()),
                                   rtol=1e-4)
    assert vk.stats()["pipelines_created"] == made


def test_dispatches_recorded_together_keep_their_own_buffers(rng):
    """Many dispatches of one pipeline in one submit, each over other buffers: a descriptor set is
    not reused while a recorded dispatch still needs it."""
    xs = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 300, 200)]
    outs = [vk.asarray(x) * 3.0 for x in xs]  # one submit for all 400 dispatches
    for x, o in zip(xs, outs):
        np.testing.assert_array_equal(o.numpy(), x * np.float32(3.0))


def test_a_kernel_asks_the_pipeline_cache_once_per_layout(rng):
    pc = runtime.get().pipelines
    x = rng.standard_normal(64).astype(np.float32)
    a = vk.asarray(x)
    (a + 1).numpy()
    before = dict(pc.stats)
    for _ in range(10):
        np.testing.assert_allclose((vk.asarray(x) + 1).numpy(), x + 1, rtol=1e-6)
    assert pc.stats == before  # the kernel holds its pipeline


def test_eager_submits_follow_the_environment():
    """VKBACKEND_EAGER_US: off turns eager submits off, a number sets the recording time (us)."""
    import os
    import subprocess
    import sys
    code = "from vkbackend import runtime; s = runtime.get().stream; print(s.eager, s.eager_seconds)"
    for value, want in (("off", ["False", str(stream.EAGER_SECONDS)]), ("250", ["True", "0.00025"])):
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, VKBACKEND_EAGER_US=value),
                             capture_output=True, text=True, check=True, timeout=120).stdout.split()
        assert out == want, (value, out)


def test_a_chunk_starts_with_a_barrier_only_after_an_unbarriered_dispatch(rng, whole_submits, monkeypatch):
    """A global barrier's second scope is every later command in submission order, later submits
    included: a chunk whose predecessor ended with one records no barrier ahead of its first
    operation; after a dispatch recorded with barrier=False it does (and results stay right)."""
    st = runtime.get().stream
    first = []  # per chunk: what was recorded first

    class Spy:
        def __init__(self, seq):
            self.seq, self.fresh = seq, True

        def __getattr__(self, name):
            attr = getattr(self.seq, name)
            if name.startswith("record"):
                def record(*args, **kwargs):
                    if self.fresh:
                        first.append("barrier" if name == "record" and args[0] is st._barrier else name)
                        self.fresh = False
                    return attr(*args, **kwargs)
                return record
            if name == "clear":
                self.fresh = True
            return attr

    vk.synchronize()
    monkeypatch.setattr(st, "_seqs", [Spy(s) for s in st._seqs])
    x = rng.standard_normal(1000).astype(np.float32)
    a = vk.asarray(x)
    vk.synchronize()
    first.clear()
    b = a * 2.0
    st.flush()  # the chunk ended with b's barrier
    c = b + 1.0
    np.testing.assert_allclose(c.numpy(), x * 2 + 1, rtol=1e-6)
    assert len(first) == 2 and "barrier" not in first  # (fills first where tests poison new buffers)
    first.clear()
    st._ordered = False  # as after a dispatch recorded with barrier=False (QR's look-ahead panel)
    d = c - 3.0
    np.testing.assert_allclose(d.numpy(), x * 2 - 2, rtol=1e-6, atol=1e-6)
    assert first == ["barrier"]
