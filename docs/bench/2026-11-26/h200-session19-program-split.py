"""Where a program's step goes on the H200: host recording, GPU chain time, read-back; and
elementwise fusion at every size against the default threshold, alternated in one process."""
import sys, time, json
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks import programs as P
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime import fusion
xp = P._VK()
stream = runtime.get().stream

def setup(name):
    if name == "logreg":
        X, y = P._logreg_data(); Xd, yd = xp.asarray(X), xp.asarray(y)
        st = [xp.asarray(np.zeros((100, 1), np.float32))]
        def rec():
            st[0], loss = P._logreg_step(xp, Xd, yd, st[0]); return loss
        return rec
    if name == "mlp":
        x, y, w1, w2 = P._mlp_data(); xd, yd = xp.asarray(x), xp.asarray(y)
        st = [xp.asarray(w1), xp.asarray(w2)]
        def rec():
            st[0], st[1], loss = P._mlp_step(xp, xd, yd, st[0], st[1]); return loss
        return rec
    arrays = [xp.asarray(np.linspace(-1, 1, n, dtype=np.float32)) for n in P._sizes()]
    i = [0]
    def rec():
        i[0] = (i[0] + 1) % len(arrays); return P._many_sizes_step(xp, arrays[i[0]])
    return rec

def steady(rec, seconds=0.4):
    n, t0 = 0, time.perf_counter()
    while True:
        float(rec().numpy()); n += 1
        if time.perf_counter() - t0 > seconds and n > 20: break
    return (time.perf_counter() - t0) / n * 1e6

def record_only(rec, k=40):
    vk.synchronize(); saved = stream.eager; stream.eager = False
    try:
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(k): out = rec()
            with stream.lock: stream.emit_chain()
            best = min(best, (time.perf_counter() - t0) / k)
            float(out.numpy())
    finally:
        stream.eager = saved
    return best * 1e6

def split_read(rec, reps=200):
    """time of recording one step, then of its read."""
    tr, tw = [], []
    for _ in range(reps):
        t0 = time.perf_counter(); out = rec(); t1 = time.perf_counter(); float(out.numpy()); t2 = time.perf_counter()
        tr.append(t1 - t0); tw.append(t2 - t1)
    return float(np.median(tr)) * 1e6, float(np.median(tw)) * 1e6

def main():
  res = {}
  for name in ("logreg", "mlp", "many"):
      rec = setup(name)
      for _ in range(3): steady(rec, 0.3)
      rows = {}
      for rnd in range(3):
          for mode in ("default", "fuse_all"):
              fusion.MIN_ELEMENTS = 1 if mode == "fuse_all" else 1 << 20
              steady(rec, 0.1)
              rows.setdefault(mode, []).append(steady(rec))
              rows.setdefault(mode + "_record", []).append(record_only(rec))
              r, w = split_read(rec)
              rows.setdefault(mode + "_split_rec", []).append(r); rows.setdefault(mode + "_split_read", []).append(w)
      fusion.MIN_ELEMENTS = 1 << 20
      rows["gpu_chain_ms"] = time_vk(rec, replay=True)
      fusion.MIN_ELEMENTS = 1
      rows["gpu_chain_fused_ms"] = time_vk(rec, replay=True, fuse=True)
      fusion.MIN_ELEMENTS = 1 << 20
      s0 = vk.stats()["dispatches"]; rec(); vk.synchronize(); rows["dispatches"] = vk.stats()["dispatches"] - s0
      res[name] = rows
      print(name, json.dumps({k: ([round(x, 1) for x in v] if isinstance(v, list) else round(v, 4)) for k, v in rows.items()}), flush=True)

if __name__ == "__main__":
  main()
