import sys
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend import runtime, dtypes
from vkbackend.array import Array
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
x = vk.asarray(np.arange(n, dtype=np.uint32))
out = Array.empty((n,), dtypes.uint32)
rt = runtime.get()
print("copy", round(time_vk(lambda: x.copy(), replay=True) * 1e3, 1), "us", flush=True)
for wg, items, blocks in [(256, 8, 2048), (256, 16, 2048), (256, 8, 8192), (256, 4, 2048), (256, 8, 512)]:
    tile = wg * items
    tiles = -(-n // tile); per = -(-tiles // blocks); b = -(-tiles // per)
    for st in (0, 1, 2, 3):
        for fixed in ((0, 1) if st == 1 else (0,)):
            defs = {"ITEMS": items, "S": st, **({"FIXED": 1} if fixed else {})}
            k = rt.kernel("primitives/tile_probe.comp", defs, wg)
            t = time_vk(lambda: k([x.buffer, out.buffer], [n, b, per], (b,)), replay=True)
            print(wg, items, b, per, "S", st, "fixed" if fixed else "", round(t * 1e3, 1), "us", flush=True)
