"""argsort 16M: why time_vk's plain batches read 2.14 ms and replayed ones 1.47."""
import sys, time
import numpy as np
sys.path[:0] = ["tools"]
import vkbackend as vk
from vkbackend import runtime
stream = runtime.get().stream
n = 1 << 24
x = vk.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
a = vk.asarray(np.random.default_rng(1).standard_normal((4096, 4096)).astype(np.float32))
def warm():
    for _ in range(10): a @ a
    vk.synchronize()
for name, fn in (("argsort", lambda: vk.argsort(x)), ("sort", lambda: vk.sort(x))):
    fn(); vk.synchronize()
    stream.eager = False
    for label in ("cold", "warm"):
        if label == "warm": warm()
        ts = []
        for _ in range(6):
            t0 = time.perf_counter(); r = fn(); vk.synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
        print(name, label, "one call + sync ms", [round(t, 3) for t in ts], flush=True)
    for k in (1, 4, 10):
        warm()
        outs = [fn() for _ in range(k)]
        took = stream.replay(4)
        print(name, f"batch of {k}: 4 submits ms", [round(t * 1e3 / k, 3) for t in took], flush=True)
        del outs
    stream.eager = True
    # each pass's dispatches alone: record one call, count
    s0 = vk.stats()["dispatches"]; fn(); vk.synchronize(); print(name, "dispatches", vk.stats()["dispatches"] - s0, flush=True)
