"""QR's Q from the panels' T blocks (q_nb=0) against rebuilt 32-wide ones (q_nb=32) on small and
batched matrices on the H200, alternated in one process (ms per call, time_vk)."""
import sys
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import qr as qrmod
from benchmarks.common import time_vk

for shape, dt in [((256, 64, 64), np.float32), ((256, 64, 64), np.float64), ((64, 128, 128), np.float32),
                  ((512, 512), np.float32), ((1000, 1000), np.float32)]:
    a = vk.asarray(np.random.default_rng(0).standard_normal(shape).astype(dt), dtype=dt)
    for rnd in range(3):
        for q_nb in (0, 32):
            qrmod.TUNE["q_nb"] = q_nb
            ms = time_vk(lambda: vk.linalg.qr(a), repeats=20, warmup=3)
            print(f"{str(shape):16s} {np.dtype(dt).name:8s} q_nb={q_nb:2d} {ms:8.4f} ms", flush=True)
