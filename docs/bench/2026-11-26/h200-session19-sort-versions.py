import sys, dataclasses
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend.primitives import sort as S
base = S.TUNING
for n in (1 << 16, 1 << 20, 1 << 22, 1 << 24):
    x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    for rnd in range(2):
        for wg, items in ((256, 16), (256, 8), (128, 8), (512, 8)):
            S.TUNING = dataclasses.replace(base, workgroup=wg, items=items)
            print(n, wg, items, "sort", round(time_vk(lambda: vk.sort(x), replay=True), 4),
                  "argsort", round(time_vk(lambda: vk.argsort(x), replay=True), 4), flush=True)
