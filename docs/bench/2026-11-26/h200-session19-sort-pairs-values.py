"""The pairs DOWNSWEEP: divisions by row_len behind ternaries (ROW_DIGIT, COLUMN) as they are,
as explicit branches (V_IF), and compiled out (V_NOROWS); time and the driver's statistics."""
import sys, subprocess
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
h = x.numpy(); kk = h.view(np.uint32); key = np.where(kk >> 31, ~kk, kk | 0x80000000)
for pairs in (True, False):
    plan = S._plan(n, pairs, "sort")
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": plan.items}, plan.workgroup)
    hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    mode = 2 | S.WRITE_KEYS | (S.WRITE_VALUES if pairs else 0)
    words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, vals2.offset, vals.offset, hist.offset, mode, 8, n]
    up([x.buffer] * 4 + [hist.buffer], words, grid)
    offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
    order = np.argsort((key >> 8) & 255, kind="stable")
    for v in (("", "K_VCOAL", "K_VNONE") if pairs else ("",)):
        defs = {"DOWNSWEEP": 1, "ITEMS": plan.items, **({"PAIRS": 1} if pairs else {}), **({v: 1} if v else {})}
        down = rt.kernel("primitives/radix_sort_probe.comp", defs, plan.workgroup)
        f = lambda: down([x.buffer, out.buffer, vals2.buffer, vals.buffer, offs.buffer], w2, grid)
        t = time_vk(f, replay=True)
        f()
        ok = np.array_equal(out.numpy().view(np.float32), h[order]) and (not pairs or np.array_equal(vals.numpy(), order.astype(np.uint32)))
        open("/tmp/k.spv", "wb").write(down.spirv)
        r = subprocess.run(["/tmp/pipestats", "/tmp/k.spv", "5", "44", *map(str, down.spec)], capture_output=True, text=True)
        st = (r.stdout + r.stderr).strip().replace("Local Memory Size=68719476736 ", "")
        print("pairs" if pairs else "keys", plan.workgroup, plan.items, v or "as is", round(t * 1e3, 1), "us", "correct" if ok else "WRONG", st, flush=True)
