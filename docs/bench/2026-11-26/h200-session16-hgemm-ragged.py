"""float16 GEMM whole but for N (or M and N), K whole: the whole block on the whole-only tile and
the strips after (new) against the M-only split (before), alternated in one process (H200)."""
import sys, json
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.primitives import matmul_half as mh, recipes
from benchmarks.common import time_vk
new = mh._whole_block
def m_only(dev, m, n, k, batch, ta, tb, av, bv):
    rows, cols = new(dev, m, n, k, batch, ta, tb, av, bv)
    return (rows, cols) if cols == n else (0, 0)
out = {}
for (m, k, n) in [(4096, 4096, 4000), (8192, 4096, 4000), (2200, 2048, 2216), (4000, 4096, 4000), (4096, 4096, 4096)]:
    rng = np.random.default_rng(m + n)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(np.float16)
    A, B = vk.asarray(a), vk.asarray(b)
    rows = np.r_[0:3, m - 3:m]
    want = a[rows].astype(np.float64) @ b.astype(np.float64)
    for rnd in range(3):
        for name, fn in (("m_only", m_only), ("block", new)):
            mh._whole_block = fn
            recipes.clear()
            got = (A @ B).numpy()[rows].astype(np.float64)
            err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
            ms = time_vk(lambda: A @ B, repeats=10)
            key = f"{m}x{k}x{n} {name}"
            out.setdefault(key, []).append(round(ms, 4))
            print(key, rnd, round(ms, 4), f"{2 * m * n * k / ms / 1e9:.1f} TFLOP/s err {err:.1e}", flush=True)
mh._whole_block = new
print(json.dumps(out))
