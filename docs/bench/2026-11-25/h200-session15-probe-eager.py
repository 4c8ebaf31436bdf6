# Probe of the fifteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session15-probe-eager.py 100,50,25,10,0,1000000 7 0.25).
# In-process A/B of the stream's eager-submit delay (VKBACKEND_EAGER_US) on the programs, slices alternating
import sys, time, statistics
import numpy as np
sys.path.insert(0, "tools")
from benchmarks import programs as P
from vkbackend import runtime
xp = P._VK()
stream = runtime.get().stream
X, y = P._logreg_data(); Xd, yd = xp.asarray(X), xp.asarray(y)
x, yy, w1, w2 = P._mlp_data(); xd, yyd = xp.asarray(x), xp.asarray(yy)
arrays = [xp.asarray(np.linspace(-1, 1, n, dtype=np.float32)) for n in P._sizes()]
state = {"logreg": xp.asarray(np.zeros((100, 1), np.float32)), "mlp": (xp.asarray(w1), xp.asarray(w2)), "many": 0}
def step_logreg(w):
    w, loss = P._logreg_step(xp, Xd, yd, w); return w, xp.read(loss)
def step_mlp(ws):
    a, b, loss = P._mlp_step(xp, xd, yyd, *ws); return (a, b), xp.read(loss)
def step_many(i):
    return (i + 1) % len(arrays), xp.read(P._many_sizes_step(xp, arrays[i]))
steps = {"logreg": step_logreg, "mlp": step_mlp, "many": step_many}
settings = [float(s) * 1e-6 for s in sys.argv[1].split(",")]
rounds = int(sys.argv[2]); slice_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
for name, f in steps.items():   # warm: every size, every pipeline
    for _ in range(450 if name == "many" else 50):
        state[name], _ = f(state[name])
res = {}
for r in range(rounds):
    for name, f in steps.items():
        for es in settings:
            stream.eager_seconds = es
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < slice_s:
                state[name], _ = f(state[name]); n += 1
            res.setdefault((name, es), []).append((time.perf_counter() - t0) / n * 1e3)
for (name, es), v in sorted(res.items()):
    print(f"{name:7s} eager {es*1e6:6.0f} us: median {statistics.median(v):.4f} ms  min {min(v):.4f}  rounds {' '.join(f'{x:.4f}' for x in v)}")
