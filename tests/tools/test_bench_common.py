"""tools/benchmarks/common.py: the timing statistic and the poisoned checks (no GPU timing here)."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from benchmarks import common  # noqa: E402

import vkbackend as vk  # noqa: E402
from vkbackend import runtime  # noqa: E402


def test_settled_best_waits_for_the_ramp_and_reports_the_second_fastest(monkeypatch):
    monkeypatch.setattr(common, "SETTLE_SECONDS", 0.0)
    times = iter([9.0, 7.0, 5.0, 3.0, 3.1, 2.0, 3.05, 3.2, 3.3, 3.4] + [100.0] * 100)
    seen = []

    def batch():
        seen.append(next(times))
        return seen[-1]
    # improving (by > 1 %) through 2.0, then three batches that do not: stop, second fastest 3.0
    assert common._settled_best(batch) == 3.0
    assert seen == [9.0, 7.0, 5.0, 3.0, 3.1, 2.0, 3.05, 3.2, 3.3]


def test_settled_best_gives_up_after_max_seconds(monkeypatch):
    monkeypatch.setattr(common, "SETTLE_SECONDS", 0.0)
    monkeypatch.setattr(common, "MAX_SECONDS", 0.05)
    t = [10.0]

    def batch():  # forever improving
        t[0] *= 0.9
        return t[0]
    assert common._settled_best(batch) > 0


def test_poisoned_fills_fresh_buffers_and_restores_the_flag():
    rt = runtime.get()
    before = rt.poison
    with common.poisoned():
        assert rt.poison
        a = vk.empty((5,), np.uint32)
        assert (a.numpy() == 0xFFFFFFFF).all()
    assert rt.poison == before


def test_time_vk_replay_times_a_stateless_batch_and_leaves_the_stream_usable(monkeypatch, rng):
    monkeypatch.setattr(common, "SETTLE_SECONDS", 0.0)
    monkeypatch.setattr(common, "MAX_SECONDS", 0.2)
    x = vk.asarray(rng.standard_normal(1000).astype(np.float32))
    ms = common.time_vk(lambda: x * 2.0, repeats=3, replay=True)
    assert 0 < ms < 1e3
    np.testing.assert_array_equal((x + 1.0).numpy(), x.numpy() + np.float32(1.0))
