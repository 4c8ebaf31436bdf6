"""16-bit packed ranking counters: DOWNSWEEP per configuration, and whole sorts, 16M float32."""
import sys, dataclasses
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend import runtime, dtypes
from vkbackend.array import Array
from vkbackend.primitives import sort as S
from vkbackend.primitives.scan import cumsum
n = 1 << 24
rt = runtime.get()
x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
out = Array.empty((n,), dtypes.uint32); vals = Array.empty((n,), dtypes.uint32)
base = S.TUNING
for pairs, wg, items in ((False, 256, 8), (False, 128, 8), (False, 256, 4), (False, 512, 4), (True, 512, 4), (True, 256, 4),
                         (True, 256, 8), (True, 128, 8), (True, 512, 2)):
    S.TUNING = dataclasses.replace(base, workgroup=wg, items=items, pairs_workgroup=wg, pairs_items=items)
    plan = S._plan(n, pairs, "sort")
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": plan.items}, plan.workgroup)
    hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    mode = 2 | S.WRITE_KEYS | ((S.WRITE_VALUES | S.IOTA) if pairs else 0)
    words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, 0, vals.offset, hist.offset, mode, 0, n]
    up([x.buffer] * 4 + [hist.buffer], words, grid)
    offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
    down = rt.kernel(S.SHADER, {"DOWNSWEEP": 1, "ITEMS": plan.items, **({"PAIRS": 1} if pairs else {})}, plan.workgroup)
    t = time_vk(lambda: down([x.buffer, out.buffer, x.buffer, vals.buffer, offs.buffer], w2, grid), replay=True)
    full = time_vk((lambda: vk.argsort(x)) if pairs else (lambda: vk.sort(x)), replay=True)
    print("pairs" if pairs else "keys", plan, "down", round(t * 1e3, 1), "us;", "argsort" if pairs else "sort", round(full, 4), "ms", flush=True)
S.TUNING = base
for m in (1 << 20, 1 << 22):
    y = vk.asarray(np.random.default_rng(1).standard_normal(m).astype(np.float32))
    print(m, "sort", round(time_vk(lambda: vk.sort(y), replay=True), 4), "argsort", round(time_vk(lambda: vk.argsort(y), replay=True), 4), flush=True)
