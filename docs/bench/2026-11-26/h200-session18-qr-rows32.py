"""qr_update_rows.comp at 32-wide blocks (CPT=2), which forms QR's Q, on the H200: QR reduced at
2000 and 4096 with the row-chunked kernel limited to 16-wide blocks (as before) and up to 32,
alternated in one process (ms per call, time_vk), and one 32-wide block on 4096 x 2048 both ways.
Run with the kernel's 32-wide variant (CPT=2, qr._ROWS_NB_MAX) that this result had dropped:
slower (a V load for every two multiply-adds)."""
import sys
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import qr as qrmod
from benchmarks.common import time_vk

rng = np.random.default_rng(0)
M = 4096
h = vk.asarray(rng.standard_normal((M, M)).astype(np.float32) * 0.01)
T = vk.asarray(rng.standard_normal((32 * 32,)).astype(np.float32) * 0.01)
for rnd in range(2):
    for widest in (16, 32):
        qrmod._ROWS_NB_MAX[4] = widest
        ms = time_vk(lambda: qrmod._apply_block(h, 0, M, 0, 4096, 32, 32, T, 0, 0, h, M - 2048, M, 0, 2048, False, 1),
                     repeats=50, warmup=3, replay=True)
        print(f"block 32 on 4096 x 2048, rows kernel up to {widest}: {ms * 1e3:8.1f} us", flush=True)
for n in (2000, 4096):
    a_np = rng.standard_normal((n, n)).astype(np.float32)
    a = vk.asarray(a_np)
    for rnd in range(2):
        for widest in (16, 32):
            qrmod._ROWS_NB_MAX[4] = widest
            q, r = vk.linalg.qr(a)
            qq, rr = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
            err = max(np.abs(qq.T @ qq - np.eye(n)).max(), np.abs(qq @ rr - a_np).max() / np.abs(a_np).max())
            ms = time_vk(lambda: vk.linalg.qr(a), repeats=3, warmup=2)
            print(f"n={n} reduced rows kernel up to {widest}: {ms:8.3f} ms err {err:.1e}", flush=True)
