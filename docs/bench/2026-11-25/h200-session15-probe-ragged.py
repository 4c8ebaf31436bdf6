# Probe of the fifteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session15-probe-ragged.py).
# M-ragged float16 products: split (whole rows on the whole-only tile, then the rest) against one ragged dispatch
import sys
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import matmul_half as mh, recipes
from benchmarks.common import time_vk
orig = mh._whole_rows
rng = np.random.default_rng(0)
for (m, k, n) in [(4000, 4096, 4096), (8000, 4096, 4096), (2200, 2048, 2304), (4096, 4096, 4096)]:
    a = rng.standard_normal((m, k)).astype(np.float16); b = rng.standard_normal((k, n)).astype(np.float16)
    va, vb = vk.asarray(a), vk.asarray(b)
    res = {}
    for r in range(3):
        for name, fn in (("split", orig), ("one", lambda *x: 0)):
            mh._whole_rows = fn; recipes.clear()
            ms = time_vk(lambda: va @ vb, repeats=20, warmup=2)
            res.setdefault(name, []).append(ms)
    print(f"{m}x{k}x{n}: " + "  ".join(f"{nm} {min(v):.4f} ms {2*m*n*k/min(v)/1e9:.1f} TFLOP/s" for nm, v in res.items()), flush=True)
