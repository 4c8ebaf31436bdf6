"""(1) the tile probe's S1 with padded shared memory: does the workgroup's shared size cap residency?
(2) the DOWNSWEEP with digits packed in registers (PACKDIG) against the kept version."""
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
xi = vk.asarray(np.arange(n, dtype=np.uint32)); out = Array.empty((n,), dtypes.uint32)
for pad_kb in (0, 4, 8, 12, 16, 20, 24, 28, 32, 36):
    defs = {"ITEMS": 8, "S": 1, **({"PAD": pad_kb * 256} if pad_kb else {})}
    k = rt.kernel("primitives/tile_probe.comp", defs, 256)
    t = time_vk(lambda: k([xi.buffer, out.buffer], [n, 2048, 4], (2048,)), replay=True)
    print("tile S1 pad", pad_kb, "KiB (+8 KiB tile +9 KiB)", round(t * 1e3, 1), "us", flush=True)
x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
h = x.numpy(); kk = h.view(np.uint32); key = np.where(kk >> 31, ~kk, kk | 0x80000000) & 255
want = h[np.argsort(key, kind="stable")]
for pairs, wg in ((False, 256), (False, 128), (True, 512), (True, 256)):
    S.TUNING = dataclasses.replace(S.TUNING, workgroup=wg, pairs_workgroup=wg)
    plan = S._plan(n, pairs, "sort")
    grid = S._grid(plan.blocks)
    up = rt.kernel(S.SHADER, {"UPSWEEP": 1, "ITEMS": plan.items}, plan.workgroup)
    vals = Array.empty((n,), dtypes.uint32); hist = Array.empty((S.RADIX * plan.blocks,), dtypes.uint32)
    mode = 2 | S.WRITE_KEYS | ((S.WRITE_VALUES | S.IOTA) if pairs else 0)
    words = [n, plan.blocks, plan.tiles_per_block, x.offset, out.offset, 0, vals.offset, hist.offset, mode, 0, n]
    up([x.buffer] * 4 + [hist.buffer], words, grid)
    offs = cumsum(hist, exclusive=True); w2 = list(words); w2[7] = offs.offset
    for variant in ("", "PACKDIG"):
        defs = {"DOWNSWEEP": 1, "ITEMS": plan.items, **({"PAIRS": 1} if pairs else {}), **({variant: 1} if variant else {})}
        down = rt.kernel("primitives/radix_sort_probe.comp", defs, plan.workgroup)
        t = time_vk(lambda: down([x.buffer, out.buffer, x.buffer, vals.buffer, offs.buffer], w2, grid), replay=True)
        down([x.buffer, out.buffer, x.buffer, vals.buffer, offs.buffer], w2, grid)
        ok = np.array_equal(out.numpy().view(np.float32), want)
        print("pairs" if pairs else "keys", plan, variant or "kept", round(t * 1e3, 1), "us", "correct" if ok else "WRONG", flush=True)
