# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-scansweep.py ...).
# cumsum tunables at 1M / 4M / 16M (us per call, best of 3 batches of 100), alternating variants in one process
import sys, dataclasses
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import scan as S, recipes
from benchmarks.common import time_vk
base = S.TUNING
V = {"default": {}, "lookback2": dict(lookback=2), "lookback4": dict(lookback=4), "counter": dict(static_tiles=False),
     "wg512": dict(workgroup=512), "wg1024": dict(workgroup=1024), "items8": dict(items=8), "wg128": dict(workgroup=128),
     "wg512_i8": dict(workgroup=512, items=8), "wg1024_i8": dict(workgroup=1024, items=8), "items32": dict(items=32),
     "spin16": dict(spin=16), "spin256": dict(spin=256)}
res = {}
for n in (1 << 20, 1 << 22, 1 << 24):
    x = vk.ones((n,), np.float32)
    want = np.arange(1, n + 1, dtype=np.float64)
    for r in range(2):
        for name, kw in V.items():
            S.TUNING = dataclasses.replace(base, **kw); recipes.clear()
            try:
                got = vk.cumsum(x).numpy()
                ok = np.array_equal(got[: 1 << 24], want.astype(np.float32)[: 1 << 24])
                ms = min(time_vk(lambda: vk.cumsum(x), repeats=100) for _ in range(3))
                res.setdefault((n, name), []).append(ms)
                if not ok: print("WRONG", n, name)
            except Exception as e:
                print(n, name, "failed", type(e).__name__, str(e)[:150])
    print(f"n={n}: " + "  ".join(f"{name} {min(res[(n, name)]) * 1e3:.1f}" for name in V if (n, name) in res), flush=True)
S.TUNING = base
