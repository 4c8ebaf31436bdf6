"""float32 layer norm on the H200: the forward's largest workgroup (PREFERRED_WG_FWD 512 / 256 /
128, each invocation holding more vectors as it shrinks) and the backward's vectors per invocation
(VECS_PER_THREAD_BWD 4 / 8), alternated in one process; ms per call (time_vk, replayed batches)."""
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
    x, dy = (vk.asarray(rng.standard_normal((rows, d), dtype=np.float32)) for _ in range(2))
    w, b = (vk.asarray(rng.standard_normal(d, dtype=np.float32)) for _ in range(2))
    for rnd in range(2):
        for pref in (512, 256, 128):
            L.PREFERRED_WG_FWD = pref
            recipes.clear()
            f = time_vk(lambda: vk.layer_norm(x, d, w, b, 1e-5), repeats=20, replay=True)
            pf = L.plan(d, True, False)
            key = f"{rows}x{d} fwd pref{pref}"
            out.setdefault(key, []).append(round(f, 4))
            print(rnd, key, f"{f:.4f} ms ({pf.wg}x{pf.n}) {8 * rows * d / f / 1e6:.0f} GB/s", flush=True)
        L.PREFERRED_WG_FWD = 512
        for vt in (4, 8):
            L.VECS_PER_THREAD_BWD = vt
            recipes.clear()
            g = time_vk(lambda: vk.layer_norm_vjp(x, w, b, dy, d, 1e-5), repeats=20, replay=True)
            pb = L.plan(d, True, True)
            key = f"{rows}x{d} bwd vecs{vt}"
            out.setdefault(key, []).append(round(g, 4))
            print(rnd, key, f"{g:.4f} ms ({pb.wg}x{pb.n}) {12 * rows * d / g / 1e6:.0f} GB/s", flush=True)
        L.VECS_PER_THREAD_BWD = 4
print(json.dumps(out))
