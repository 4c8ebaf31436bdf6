import sys, time, json
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks import programs as P
xp = P._Torch(); torch = xp.torch
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
for name in ("logreg", "mlp", "many"):
    rec = setup(name)
    for _ in range(200): float(rec().item())
    ts = []
    for _ in range(3):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.4: float(rec().item()); n += 1
        ts.append((time.perf_counter() - t0) / n * 1e6)
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(40): out = rec()
    trec = (time.perf_counter() - t0) / 40 * 1e6; torch.cuda.synchronize()
    tr, tw = [], []
    for _ in range(200):
        t0 = time.perf_counter(); out = rec(); t1 = time.perf_counter(); float(out.item()); t2 = time.perf_counter()
        tr.append(t1 - t0); tw.append(t2 - t1)
    g = torch.cuda.CUDAGraph()
    print(name, json.dumps({"steady": [round(t, 1) for t in ts], "record": round(trec, 1), "split_rec": round(float(np.median(tr)) * 1e6, 1), "split_read": round(float(np.median(tw)) * 1e6, 1)}), flush=True)
