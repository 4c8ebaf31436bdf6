"""argsort / sort 16M and 1M: time_vk with and without replay, by pairs tuning, alternated."""
import sys, dataclasses, time
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend.primitives import sort as S
base = S.TUNING
for n in (1 << 24, 1 << 20):
    x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    for rnd in range(2):
        for wg, items in ((256, 4), (512, 4), (512, 2), (256, 8), (128, 8)):
            S.TUNING = dataclasses.replace(base, pairs_workgroup=wg, pairs_items=items)
            a = time_vk(lambda: vk.argsort(x))
            b = time_vk(lambda: vk.argsort(x), replay=True)
            t0 = time.perf_counter(); [vk.argsort(x) for _ in range(20)]; rec = (time.perf_counter() - t0) / 20; vk.synchronize()
            print(n, "argsort", wg, items, "plain", round(a, 4), "replay", round(b, 4), "record ms", round(rec * 1e3, 3), flush=True)
        S.TUNING = base
        for wg, items in ((256, 8), (128, 8), (256, 4)):
            S.TUNING = dataclasses.replace(base, workgroup=wg, items=items)
            print(n, "sort", wg, items, "plain", round(time_vk(lambda: vk.sort(x)), 4), "replay", round(time_vk(lambda: vk.sort(x), replay=True), 4), flush=True)
        S.TUNING = base
