# Probe of the fifteenth session as run on the H200 (from the repository root: V=... python3 docs/bench/2026-11-25/h200-session15-probe-hgemm.py SIZES ROUNDS).
# Its CLAMP define (clamped addresses and a select in place of branches) was tried and dropped.
# hgemm sweep: coopmat tile configs x swizzle group x extra defines, alternating in one process
import os, sys, time
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import matmul_half as mh, recipes
from benchmarks.common import time_vk
sizes = [int(s) for s in sys.argv[1].split(",")]; rounds = int(sys.argv[2]); which = sys.argv[3] if len(sys.argv) > 3 else "all"
C = mh.CoopConfig
V = [(C(128, 128, 32, 2, 4), 0, {}), (C(128, 128, 32, 2, 4), 8, {}), (C(128, 128, 32, 2, 2), 8, {}),
     (C(128, 256, 16, 2, 4), 8, {}), (C(256, 128, 16, 4, 2), 8, {}), (C(128, 128, 16, 2, 2), 8, {}),
     (C(128, 128, 32, 4, 2), 8, {}), (C(128, 128, 16, 2, 4), 8, {}), (C(64, 128, 32, 1, 2), 8, {}),
     (C(128, 64, 32, 2, 1), 8, {}), (C(128, 128, 32, 2, 4), 4, {}), (C(128, 128, 32, 2, 4), 16, {})]
if os.environ.get("V"):
    V = eval(os.environ["V"])
if which != "all":
    V = [V[int(i)] for i in which.split(",")]
try:
    import torch
except Exception:
    torch = None
mh._coop_configs = lambda dev, ta, tb: list(mh.COOP_CONFIGS)
rng = np.random.default_rng(0)
for n in sizes:
    a = rng.standard_normal((n, n)).astype(np.float16); b = rng.standard_normal((n, n)).astype(np.float16)
    va, vb = vk.asarray(a), vk.asarray(b)
    vc = vk.zeros((n, n), np.float32)
    rows = np.r_[0:3, n - 2:n]
    ref = a[rows].astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a[rows]).astype(np.float64) @ np.abs(b).astype(np.float64)
    f = lambda: mh.product(va, vb, (n, n), c=vc, m=n, n=n, k=n, lda=n, ldb=n)
    if torch is not None:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        for _ in range(3): ta @ tb
        torch.cuda.synchronize()
        reps = max(5, int(50 * (4096 / n) ** 3)); e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record()
        for _ in range(reps): ta @ tb
        e1.record(); torch.cuda.synchronize()
        tms = e0.elapsed_time(e1) / reps
        print(f"n={n} torch fp16 {tms:.4f} ms {2*n**3/tms/1e9:.1f} TFLOP/s", flush=True)
    res = {}
    for r in range(rounds):
        for cfg, group, ex in V:
            key = f"{cfg.bm}x{cfg.bn}x{cfg.bk}/{cfg.sg_m}x{cfg.sg_n} g{group} {ex}"
            mh.COOP_CONFIGS = (cfg,); mh.EXTRA_DEFINES.clear(); mh.EXTRA_DEFINES.update(ex)
            os.environ["VKBACKEND_MATMUL_GROUP"] = str(group)
            recipes.clear()
            try:
                f(); got = vc.numpy()[rows].astype(np.float64)
                err = float(np.max(np.abs(got - ref) / scale))
                ms = time_vk(f, repeats=max(3, min(200, int(60 * (4096 / n) ** 3))), warmup=2)
                res.setdefault(key, []).append(ms)
                print(f"n={n} r{r} {key:40s} {ms:8.4f} ms {2*n**3/ms/1e9:6.1f} TFLOP/s err {err:.1e}", flush=True)
            except Exception as e:
                print(f"n={n} r{r} {key} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
    print(f"n={n} best per variant:")
    for k, v in sorted(res.items(), key=lambda kv: min(kv[1])):
        print(f"  {k:40s} {min(v):8.4f} ms {2*n**3/min(v)/1e9:6.1f} TFLOP/s")
