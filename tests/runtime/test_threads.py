"""Threads: each records, submits and reads back its own arrays (elementwise, reductions, scans,
matmul, take, conv2d); results must be right and nothing may deadlock (the runtime's lock covers
recording, submits and the pool; waits release the GIL)."""
import threading

import numpy as np

import vkbackend as vk


def _conv2d_ref(x, w):
    """Cross-correlation, stride 1, padding 1, in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2], x.shape[3]
    out = np.zeros((x.shape[0], w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j].astype(np.float64))
    return out


def _worker(seed: int, iterations: int, errors: list):
    rng = np.random.default_rng(seed)
    try:
        for i in range(iterations):
            n = int(rng.integers(1, 3000))
            x = rng.standard_normal(n).astype(np.float32)
            a = vk.asarray(x)
            y = (a * 2.0 + 1.0).numpy()
            np.testing.assert_array_equal(y, x * np.float32(2.0) + np.float32(1.0))
            np.testing.assert_allclose(float(vk.sum(a).numpy()), x.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
            assert float(vk.max(a).numpy()) == x.max()
            np.testing.assert_allclose(vk.cumsum(a).numpy(), np.cumsum(x.astype(np.float64)), rtol=1e-4, atol=1e-3)
            m = rng.standard_normal((17, 9)).astype(np.float32)
            np.testing.assert_allclose((vk.asarray(m) @ vk.asarray(m.T)).numpy(), m.astype(np.float64) @ m.T,
                                       rtol=1e-4, atol=1e-4)
            idx = rng.integers(-n, n, int(rng.integers(1, 500))).astype(np.int32)
            np.testing.assert_array_equal(vk.take(a, vk.asarray(idx)).numpy(), np.take(x, idx))
            img = rng.standard_normal((1, 3, 9, 11)).astype(np.float32)
            w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
            np.testing.assert_allclose(vk.conv2d(vk.asarray(img), vk.asarray(w), padding=1).numpy(),
                                       _conv2d_ref(img, w), rtol=1e-4, atol=1e-4)
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(f"thread {seed}, iteration {i}: {type(e).__name__}: {e}")


def test_threads_get_right_results(rng):
    for round_ in range(3):
        errors: list = []
        threads = [threading.Thread(target=_worker, args=(int(rng.integers(2**31)), 15, errors))
                   for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not any(t.is_alive() for t in threads), "a thread did not finish: deadlock?"
        assert not errors, errors[:3]


COLD = """
import sys, threading
sys.path[:0] = {paths!r}
from test_threads import _worker
errors = []
threads = [threading.Thread(target=_worker, args=(s, 3, errors)) for s in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("ERRORS", errors)
"""


def test_first_use_from_threads_does_not_hang():
    """Four threads whose first vkbackend call opens the runtime together, in fresh processes (kp's
    pybind11 numpy statics once deadlocked there)."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(__file__)
    code = COLD.format(paths=[here, os.path.dirname(os.path.dirname(here))])
    for _ in range(3):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "ERRORS []" in res.stdout, res.stdout[-2000:]
