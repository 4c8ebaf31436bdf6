# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-dgemm_edge.py ...).
# float64 4096^2: EDGE=0 (whole tiles) against EDGE=1, alternating in one process
import sys
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import matmul as mm, recipes
from benchmarks.common import time_vk
n = 4096
rng = np.random.default_rng(0)
a, b = (vk.asarray(rng.standard_normal((n, n)), dtype=vk.float64) for _ in range(2))
orig = mm._whole
res = {}
for r in range(3):
    for name, f in (("EDGE=0", orig), ("EDGE=1", lambda *a: False)):
        mm._whole = f; recipes.clear()
        res.setdefault(name, []).append(time_vk(lambda: a @ b, repeats=10))
mm._whole = orig
print("dgemm 4096:", {k: f"{min(v):.3f} ms" for k, v in res.items()})
