"""One block reflector application (ops/qr.py _apply_block, qr_update.comp) on the H200: m rows x
ncols columns, block widths 8/16/32, qr_update.comp against qr_update_rows.comp's row chunks, device time per dispatch (replayed
batches). Timings only (random V and T)."""
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
if "--split" in sys.argv:  # the first version: qr_update.comp's rows split (SPLIT, since removed)
    CONFIGS = [("fused", dict(split_rows=0)), ("split512/1056", dict(split_rows=512, split_groups=1056)),
               ("split256/4224", dict(split_rows=256, split_groups=4224))]
else:  # qr_update_rows.comp against qr_update.comp
    CONFIGS = [("fused", dict(rows_min=0))] + [
        (f"rows {g}/{r}", dict(rows_min=1, rows_groups=g, rows_chunk=r))
        for g, r in ([(528, 256), (1056, 128), (264, 512)] if "--ru" in sys.argv else
                     [(1056, 256), (528, 256), (2112, 128), (1056, 512), (4224, 64)])]
cases = [(4096, 4088, 8), (4096, 2048, 8), (2048, 2048, 8), (4096, 2048, 16), (4096, 2048, 32), (1024, 1024, 8)]
if "--ru" in sys.argv:  # after RU (4 rows a step): one round, fewer cases
    cases = [(4096, 4088, 8), (2048, 2048, 8), (1024, 1024, 8), (4096, 2048, 16)]
for rnd in range(1 if "--ru" in sys.argv else 2):
    for m, ncols, nb in cases:
        for label, cfg in CONFIGS:
            qrmod.TUNE.update(cfg)
            fn = lambda: qrmod._apply_block(h, 0, M, 0, m, nb, nb, T, 0, 0, h, M - ncols, M, 0, ncols, True, 1)
            ms = time_vk(fn, repeats=50, warmup=3, replay=True)
            gbs = 12 * m * ncols / (ms * 1e-3) / 1e9
            print(f"m={m:5d} ncols={ncols:5d} nb={nb:2d} {label:14s} {ms * 1e3:8.1f} us  {gbs:7.0f} GB/s (12 B per element of C)",
                  flush=True)
