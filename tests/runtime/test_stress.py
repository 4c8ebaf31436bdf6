"""The runtime under a long mixed program (issue 14's stress test): thousands of operations over a
few recurring signatures, so that nearly all are replayed recipes recorded in one native call
(kp.Steps), with reductions, scans and products of several dispatches among them, a read-back
every few steps (submit with the host barrier, then wait), eager submits forced after every
operation in half the steps, against numpy float64 references on fresh data; afterwards the
memory in use is back where it started."""
import gc

import numpy as np

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import recipes

SIZES = (1, 63, 64, 65, 1000, 4097)  # mapped (<= 64 words) and staged read-backs, odd tails


def _step(xp, a, b, m):
    """One step's results from a, b (n,) and m (8, n): an elementwise chain, a reduction, a scan,
    a max, products (deep ones, K = n, and a transposed one, K = 8)."""
    t = xp.exp(-a * 0.5) + b * b
    return [t, xp.sum(t), xp.cumsum(a), xp.max(b), xp.matmul(m, a), xp.matmul(xp.transpose(m), xp.matmul(m, b))]


def _tolerance(want, n):
    return 1e-5 * (1 + n) * np.maximum(1.0, np.abs(want))


def test_thousands_of_mixed_ops_with_read_backs(rng, monkeypatch):
    stream = runtime.get().stream
    data = {n: (rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal((8, n)) / np.sqrt(n))
            for n in SIZES}
    for n in SIZES:  # what the runtime keeps for good (reduce's tile counters) made first
        _step(vk, *(vk.asarray(x.astype(np.float32)) for x in data[n]))[1].numpy()
    vk.synchronize()
    gc.collect()
    start = vk.memory_stats()["in_use"]
    hits0 = recipes.stats()["hits"]
    dev = {n: tuple(vk.asarray(x.astype(np.float32)) for x in xs) for n, xs in data.items()}
    acc, acc_ref = vk.zeros(8), np.zeros(8)  # carried across every step: order over all submits
    ops = 0
    for step in range(300):
        n = SIZES[step % len(SIZES)]
        monkeypatch.setattr(stream, "eager_seconds", 0.0 if step % 2 else 1e-4)
        a, b, m = dev[n]
        got = _step(vk, a, b, m)
        acc = acc * 0.5 + got[4]
        ops += 12
        ref_a, ref_b, ref_m = (x.astype(np.float32).astype(np.float64) for x in data[n])
        acc_ref = acc_ref * 0.5 + ref_m @ ref_a
        if step % 3 == 0:
            want = _step(np, ref_a, ref_b, ref_m)
            pick = (step // 3) % len(got)
            out, w = got[pick].numpy(), want[pick]
            assert out.shape == np.shape(w), (step, pick)
            assert (np.abs(out - w) <= _tolerance(w, n)).all(), (step, pick, n, np.max(np.abs(out - w)))
    np.testing.assert_allclose(acc.numpy(), acc_ref, rtol=1e-4, atol=1e-4)
    assert recipes.stats()["hits"] - hits0 > ops // 2  # replayed, not planned again
    del got, acc, a, b, m, dev
    vk.synchronize()
    gc.collect()
    assert vk.memory_stats()["in_use"] == start
