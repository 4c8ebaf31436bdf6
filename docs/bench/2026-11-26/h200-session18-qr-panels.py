"""QR's panel plan on the H200 at n = 2000 and 4096: the default (register panels, 8 wide where
16 do not fit the registers), streaming 16-wide panels where 16 do not fit (nb_min=16), and 32-wide
streaming ones (nb_min=32, stream_nb=32); alternated in one process, ms per call (time_vk)."""
import sys
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import qr as qrmod
from benchmarks.common import time_vk

CONFIGS = {"default": {}, "nb_min16": dict(nb_min=16), "nb_min32 stream32": dict(nb_min=32, nb_max=32, stream_nb=32),
           "nb_max32": dict(nb_max=32)}
base = dict(qrmod.TUNE)
for n in (2000, 4096):
    a_np = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    a = vk.asarray(a_np)
    for rnd in range(2):
        for name, cfg in CONFIGS.items():
            qrmod.TUNE.clear(); qrmod.TUNE.update(base); qrmod.TUNE.update(cfg)
            panels, _ = qrmod._plan(n, n)
            q, r = vk.linalg.qr(a)
            qq, rr = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
            err = max(np.abs(qq.T @ qq - np.eye(n)).max(), np.abs(qq @ rr - a_np).max() / np.abs(a_np).max())
            for mode in ("reduced", "r"):
                ms = time_vk(lambda: vk.linalg.qr(a, mode), repeats=3, warmup=2)
                print(f"n={n} {mode:8s} {name:18s} {ms:8.3f} ms  panels {len(panels)} widths "
                      f"{sorted(set(p.width for p in panels))} streaming {sum(1 for p in panels if not p.rpt)} err {err:.1e}",
                      flush=True)
