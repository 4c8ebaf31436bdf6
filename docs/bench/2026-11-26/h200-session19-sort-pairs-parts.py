"""Which dispatch of a 16M sort pass runs slower in a batch's first run than in its re-runs:
each alone, time_vk plain (one run a batch) against replayed, alternated."""
import sys
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
out = Array.empty((n,), dtypes.uint32); vals = Array.empty((n,), dtypes.uint32); vals2 = Array.empty((n,), dtypes.uint32)
for pairs in (False, True):
    plan = S._plan(n, pairs, "sort")
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": plan.items}, plan.workgroup)
    down = rt.kernel(S.SHADER, {"DOWNSWEEP": 1, "ITEMS": plan.items, **({"PAIRS": 1} if pairs else {})}, plan.workgroup)
    hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    for iota in ((False, True) if pairs else (False,)):
        mode = 2 | S.WRITE_KEYS | ((S.WRITE_VALUES | (S.IOTA if iota else 0)) if pairs else 0)
        words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, vals2.offset, vals.offset, hist.offset, mode, 8, n]
        up([x.buffer] * 4 + [hist.buffer], words, grid)
        offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
        fns = {"up": lambda: up([x.buffer] * 4 + [hist.buffer], words, grid),
               "scan": lambda: cumsum(hist, exclusive=True),
               "down": lambda: down([x.buffer, out.buffer, vals2.buffer, vals.buffer, offs.buffer], w2, grid)}
        for rnd in range(2):
            print("pairs" if pairs else "keys", "iota" if iota else "", plan, rnd,
                  "; ".join(f"{k} plain {time_vk(f) * 1e3:.1f} replay {time_vk(f, replay=True) * 1e3:.1f}" for k, f in fns.items()), flush=True)
