"""float16 / bfloat16 layer norm (HALF_IO) on the H200: the workgroup float32's plan gives, divided
by HALF_WG_DIV (1, 2, 4), alternated in one process; ms per call (time_vk, replayed batches: the fastest), GB/s of x/y (dy/dx)."""
import sys, json
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import layernorm as L
from vkbackend.primitives import recipes
from benchmarks.common import time_vk

rng = np.random.default_rng(0)
out = {}
for rows, d in ((4096, 4096), (16384, 1024), (8192, 8192), (1024, 16384)):
    for dt in ("float16", "bfloat16"):
        x, dy = (vk.asarray(rng.standard_normal((rows, d), dtype=np.float32).astype(vk.bfloat16 if dt == "bfloat16" else dt))
                 for _ in range(2))
        w, b = (vk.asarray(rng.standard_normal(d, dtype=np.float32).astype(x.dtype)) for _ in range(2))
        for rnd in range(2):
            for div in (1, 2, 4):
                L.HALF_WG_DIV = div
                recipes.clear()
                f = time_vk(lambda: vk.layer_norm(x, d, w, b, 1e-5), repeats=20, replay=True)
                g = time_vk(lambda: vk.layer_norm_vjp(x, w, b, dy, d, 1e-5), repeats=20, replay=True)
                pf, pb = (L.plan(d, True, bw, half=True) for bw in (False, True))
                key = f"{rows}x{d} {dt} div{div}"
                out.setdefault(key, []).append((round(f, 4), round(g, 4)))
                print(rnd, key, f"fwd {f:.4f} ms ({pf.wg}x{pf.n}) {4 * rows * d / f / 1e6:.0f} GB/s  "
                      f"bwd {g:.4f} ms ({pb.wg}x{pb.n}) {6 * rows * d / g / 1e6:.0f} GB/s", flush=True)
print(json.dumps(out))
