"""One tile array for keys then values (MATCH pairs): the pairs DOWNSWEEP by tile, and argsort
whole (timed as the bench times it, and replayed)."""
import sys, dataclasses, subprocess
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
out = Array.empty((n,), dtypes.uint32); vals = Array.empty((n,), dtypes.uint32); vals2 = vk.asarray(np.arange(n, dtype=np.uint32))
base = S.TUNING
for wg, items in ((256, 8), (256, 4), (512, 4), (128, 8), (512, 8), (256, 16)):
    S.TUNING = dataclasses.replace(base, pairs_workgroup=wg, pairs_items=items)
    plan = S._plan(n, True, "sort")
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": plan.items}, plan.workgroup)
    hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, vals2.offset, vals.offset, hist.offset, 2 | S.WRITE_KEYS | S.WRITE_VALUES, 8, n]
    up([x.buffer] * 4 + [hist.buffer], words, grid)
    offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
    down = rt.kernel(S.SHADER, {"DOWNSWEEP": 1, "ITEMS": plan.items, "PAIRS": 1}, plan.workgroup)
    t = time_vk(lambda: down([x.buffer, out.buffer, vals2.buffer, vals.buffer, offs.buffer], w2, grid), replay=True)
    a = time_vk(lambda: vk.argsort(x)); b = time_vk(lambda: vk.argsort(x), replay=True)
    open("/tmp/k.spv", "wb").write(down.spirv)
    r = subprocess.run(["/tmp/pipestats", "/tmp/k.spv", "5", "44", *map(str, down.spec)], capture_output=True, text=True)
    st = (r.stdout + r.stderr).strip().replace("Local Memory Size=68719476736 ", "").replace("[CS] subgroup 32: ", "")
    print(plan, "down", round(t * 1e3, 1), "us; argsort plain", round(a, 4), "replay", round(b, 4), "|", st, flush=True)
S.TUNING = base
print("sort 16M plain", round(time_vk(lambda: vk.sort(x)), 4), flush=True)
for m in (1 << 20,):
    y = vk.asarray(np.random.default_rng(1).standard_normal(m).astype(np.float32))
    for wg, items in ((256, 8), (256, 4)):
        S.TUNING = dataclasses.replace(base, pairs_workgroup=wg, pairs_items=items)
        print(m, wg, items, "argsort plain", round(time_vk(lambda: vk.argsort(y)), 4), flush=True)
