from pathlib import Path

import kp
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import compiler, runtime, stream

SPIN = str(Path(__file__).parent.parent / "shaders" / "spin.comp")


def test_many_ops_one_submit(rng):
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
    assert after["dispatches"] - before["dispatches"] >= 200
    ref = x.astype(np.float64)
    for i in range(100):
        ref = ref * 0.5 + x
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_numpy_on_lazy_result_is_one_submit(rng):
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


def test_long_graphs_flush_in_chunks(monkeypatch, rng):
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


def _spin_setup(repeats=1):
    """A sequence that spins until the host sets flag[0] (recorded `repeats` times: lavapipe cuts
    each loop off after 65535 iterations, a few ms)."""
    mgr = runtime.get().device.manager
    flag = mgr.tensor_t(np.zeros(64, np.uint32), kp.TensorTypes.host)
    algo = mgr.algorithm([flag], compiler.compile_shader(SPIN), (1, 1, 1),
                         np.zeros(0, np.uint32), np.zeros(0, np.uint32))
    seq = mgr.sequence()
    for _ in range(repeats):
        seq.record(kp.OpAlgoDispatch(algo))
        seq.record(kp.OpGlobalBarrier())
    return flag, seq


def test_patched_kp_many_evals_on_one_sequence():
    flag, seq = _spin_setup()
    for i in range(500):  # one fence, reset each time
        flag.data()[:2] = [1, 0]
        seq.eval()
        assert flag.data()[1] == 7


def test_patched_kp_eval_after_timeout():
    flag, seq = _spin_setup(repeats=500)
    flag.data()[:2] = [0, 0]
    seq.eval_async()
    seq.eval_await(2_000_000)  # 2 ms: the shader spins until the flag is set
    assert seq.is_running(), "a timed-out wait must leave the sequence running"
    flag.data()[0] = 1
    seq.eval_await()
    assert not seq.is_running() and flag.data()[1] == 7
    flag.data()[:2] = [1, 0]
    seq.eval()  # the same sequence and fence work again
    assert flag.data()[1] == 7


def test_eval_async_does_not_block():
    flag, seq = _spin_setup(repeats=500)
    flag.data()[:2] = [0, 0]
    seq.eval_async()  # returns although the shader cannot finish yet
    assert seq.is_running()
    flag.data()[0] = 1
    seq.eval_await()
    assert flag.data()[1] == 7


def test_pipeline_cache_hits_and_eviction(monkeypatch, rng):
    pc = runtime.get().pipelines
    x = rng.standard_normal(64).astype(np.float32)
    a = vk.asarray(x)
    (a + 1).numpy()
    h0 = pc.stats["hits"]
    for _ in range(10):
        (a + 1).numpy()
    assert pc.stats["hits"] - h0 >= 10
    monkeypatch.setattr(pc, "capacity", 2)
    e0 = pc.stats["evictions"]
    r = vk.sqrt(vk.abs(a)) + vk.exp(a) * 2
    np.testing.assert_allclose(r.numpy(), np.sqrt(np.abs(x)) + np.exp(x) * 2, rtol=1e-5)
    assert pc.stats["evictions"] > e0 and len(pc) <= 2
