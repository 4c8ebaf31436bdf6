# ran with the knock-out shader copied into shaders/primitives/radix_sort_probe.comp
"""Knock-outs of the DOWNSWEEP on 16M float32 (timings only: results wrong by design)."""
import sys, dataclasses
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend import runtime, dtypes
from vkbackend.primitives import sort as S
from vkbackend.primitives.scan import cumsum
from vkbackend.array import Array
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
rt = runtime.get()
for wg, items in [(256, 8), (256, 16), (128, 8), (512, 8)]:
    S.TUNING = dataclasses.replace(S.TUNING, workgroup=wg, items=items)
    plan = S._plan(n, False, "sort")
    wg, items = plan.workgroup, plan.items
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": items}, wg)
    out = Array.empty((n,), dtypes.uint32); hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    mode = 2 | S.WRITE_KEYS
    words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, 0, 0, hist.offset, mode, 0, n]
    up([x.buffer] * 4 + [hist.buffer], words, grid)
    offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
    for ko in ["", "K_PART", "K_NOMATCH", "K_ATOMIC", "K_NOCOUNT", "K_NOSCAN", "K_NOSCATTER", "K_NOMATCH,K_NOCOUNT",
               "K_NOMATCH,K_NOCOUNT,K_NOSCAN", "K_NOMATCH,K_NOCOUNT,K_NOSCAN,K_NOSCATTER"]:
        defs = {"DOWNSWEEP": 1, "ITEMS": items, **{k: 1 for k in ko.split(",") if k}}
        try:
            down = rt.kernel("primitives/radix_sort_probe.comp"  # = h200-session19-sort-knockouts.comp, copied into shaders/, defs, wg)
            t = time_vk(lambda: down([x.buffer, out.buffer, x.buffer, x.buffer, offs.buffer], w2, grid), replay=True)
            if ko in ("", "K_PART", "K_ATOMIC"):  # one pass by the low digit: check against numpy's stable argsort
                down([x.buffer, out.buffer, x.buffer, x.buffer, offs.buffer], w2, grid)
                got = out.numpy().view(np.float32)
                h = x.numpy(); k = h.view(np.uint32); key = np.where(k >> 31, ~k, k | 0x80000000) & 255
                ok = np.array_equal(got, h[np.argsort(key, kind="stable")])
                print("   correct:", ok, flush=True)
            print(wg, items, ko or "base", round(t * 1e3, 1), "us", flush=True)
        except Exception as e:
            print(wg, items, ko, "ERR", str(e)[:200], flush=True)
