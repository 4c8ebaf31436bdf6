# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-small.py ...).
# reduce-sum and cumsum at small sizes: per-op GPU time by batch size and by the reduce grid
import sys, time
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import reduce as R, recipes
from benchmarks.common import time_vk
for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
    x = vk.ones((n,), np.float32)
    row = []
    for g in (264, 528, 1024, 2112):
        R.GROUPS = g; recipes.clear()
        ms = min(time_vk(lambda: vk.sum(x), repeats=200) for _ in range(3))
        row.append(f"G{g} {ms*1e3:7.1f}us {4*n/ms/1e6:6.0f}GB/s")
    R.GROUPS = 1024; recipes.clear()
    ms20 = min(time_vk(lambda: vk.sum(x), repeats=20) for _ in range(3))
    msc = min(time_vk(lambda: vk.cumsum(x), repeats=100) for _ in range(3))
    msc20 = min(time_vk(lambda: vk.cumsum(x), repeats=20) for _ in range(3))
    print(f"n={n:>9}: sum " + " | ".join(row) + f" | G1024 x20 {ms20*1e3:.1f}us ; cumsum x100 {msc*1e3:.1f}us {8*n/msc/1e6:.0f}GB/s x20 {msc20*1e3:.1f}us", flush=True)
