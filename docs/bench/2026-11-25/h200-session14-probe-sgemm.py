# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-sgemm.py ...).
# Its FRAG_DB define is matmul.comp's PREFETCH now; the first sweeps ran the V list, then V2 (v2:...), V3, V4.
# sgemm tile/variant sweep: configs x extra kernel defines, rounds alternating in one process
import os, sys, time, json
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import matmul as mm, recipes
from benchmarks.common import time_vk
n = int(sys.argv[1]); REP = int(os.environ.get("REP", "0")); rounds = int(sys.argv[2]); which = sys.argv[3] if len(sys.argv) > 3 else "all"
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32); b = rng.standard_normal((n, n), dtype=np.float32)
va, vb = vk.asarray(a), vk.asarray(b)
rows = np.r_[0:3, n - 2:n]
MODE = os.environ.get("MODE", "nn")
f = {"nn": lambda: va @ vb, "tn": lambda: va.T @ vb, "nt": lambda: va @ vb.T}[MODE]
a = a.T.copy() if MODE == "tn" else a
b = b.T.copy() if MODE == "nt" else b
ref = a[rows].astype(np.float64) @ b.astype(np.float64); scale = np.abs(a[rows]).astype(np.float64) @ np.abs(b).astype(np.float64)
V = [("128x128x8/8x8", {}), ("128x128x8/8x8", {"EDGE": 0}), ("128x128x8/8x8", {"FRAG_DB": 1}),
     ("128x128x8/8x8", {"EDGE": 0, "FRAG_DB": 1}), ("128x128x16/8x8", {}), ("128x128x16/8x8", {"EDGE": 0}),
     ("128x128x8/8x8/4", {"EDGE": 0}), ("128x128x8/8x8/16", {"EDGE": 0}), ("128x128x4/8x8", {"EDGE": 0}),
     ("128x128x8/8x8/4x8", {"EDGE": 0, "group": 0}), ("128x128x8/8x8", {"EDGE": 0, "group": 16}),
     ("128x64x8/8x4", {"EDGE": 0}), ("64x128x8/4x8", {"EDGE": 0}), ("128x64x16/8x4", {"EDGE": 0}),
     ("256x128x8/16x8", {"EDGE": 0}), ("128x256x8/8x16", {"EDGE": 0}), ("128x128x8/16x8/4", {"EDGE": 0}),
     ("128x128x8/8x16/8x2", {"EDGE": 0}), ("128x128x16/16x8/4", {"EDGE": 0}), ("64x64x8/4x4", {"EDGE": 0})]
V2 = [("128x128x8/8x16/8x2", {"EDGE": 0}), ("128x128x8/8x16/8x2", {"EDGE": 0, "FRAG_DB": 1}), ("128x128x8/8x16/8x2", {}),
      ("128x128x8/8x16/8x4", {"EDGE": 0}), ("128x128x8/8x16/4x8", {"EDGE": 0}), ("128x128x8/8x16/2x8", {"EDGE": 0}),
      ("128x128x16/8x16/8x2", {"EDGE": 0}), ("128x128x16/8x16/8x4", {"EDGE": 0}), ("128x128x8/16x8/4", {"EDGE": 0, "FRAG_DB": 1}),
      ("128x128x8/16x8/4x4", {"EDGE": 0}), ("128x128x8/16x8/8x4", {"EDGE": 0}), ("128x128x16/16x8/4x4", {"EDGE": 0}),
      ("64x256x8/8x16/8x4", {"EDGE": 0}), ("256x64x8/16x8/4x4", {"EDGE": 0}), 
      ("128x128x8/8x8", {}), ("256x128x8/16x16/8x2", {"EDGE": 0})]
V3 = [("128x128x8/16x8/4", {"EDGE": 0, "FRAG_DB": 1}), ("128x128x8/16x8/4x4", {"EDGE": 0}), ("128x128x8/16x8/4x4", {"EDGE": 0, "FRAG_DB": 1}),
      ("128x128x8/8x16/8x2", {"EDGE": 0}), ("128x128x8/8x16/4x8", {"EDGE": 0}), ("128x128x8/16x8/4", {"FRAG_DB": 1}), ("128x128x8/8x8", {}),
      ("128x64x16/8x4", {}), ("64x64x8/4x4", {}), ("64x64x8/8x4/4x8", {"EDGE": 0}), ("64x64x8/8x4/4x8", {"EDGE": 0, "FRAG_DB": 1}),
      ("128x64x8/8x8/4x4", {"EDGE": 0}), ("64x128x8/8x8/4x4", {"EDGE": 0}), ("128x64x8/16x4/4x8", {"EDGE": 0, "FRAG_DB": 1}),
      ("64x64x8/8x8/4x2", {"EDGE": 0}), ("64x64x8/8x8/4x2", {"EDGE": 0, "FRAG_DB": 1})]
V4 = [("wide", {}), ("128x128x8/16x8/4x4", {}), ("256x128x8/16x8/4x4+prefetch", {}), ("128x256x8/16x8/4x4+prefetch", {}),
      ("128x128x12/16x8/4x4+prefetch", {}), ("128x128x16/16x8/4x4+prefetch", {}), ("128x128x8/16x8/4x4+prefetch", {"group": 4}),
      ("128x128x8/16x8/4x4+prefetch", {"group": 16}), ("128x128x8/16x8/4x4+prefetch", {"group": 0}), ("256x128x8/16x8/8x2+prefetch", {})]
if which.startswith("v4"):
    V = V4; which = which[3:] or "all"
if which.startswith("v3"):
    V = V3; which = which[3:] or "all"
if which.startswith("v2"):
    V = V2; which = which[3:] or "all"
if which != "all":
    V = [V[int(i)] for i in which.split(",")]
orig = mm._defines
extra = {}
def patched(*args, **kw):
    d = orig(*args, **kw); d.update(extra); return d
mm._defines = patched
res = {}
for r in range(rounds):
    for i, (cfg, ex) in enumerate(V):
        key = f"{cfg} {ex}"
        extra = {k: v for k, v in ex.items() if k != "group"}
        os.environ["VKBACKEND_MATMUL_CONFIG"] = cfg
        if "group" in ex: os.environ["VKBACKEND_MATMUL_GROUP"] = str(ex["group"])
        else: os.environ.pop("VKBACKEND_MATMUL_GROUP", None)
        recipes.clear()
        try:
            got = f().numpy()[rows].astype(np.float64)
            err = float(np.max(np.abs(got - ref) / scale))
            ms = time_vk(f, repeats=REP or max(3, min(200, int(60 * (4096 / n) ** 3))), warmup=2)
            res.setdefault(key, []).append(ms)
            print(f"r{r} {key:45s} {ms:8.3f} ms {2*n**3/ms/1e9:6.1f} TFLOP/s err {err:.1e}", flush=True)
        except Exception as e:
            print(f"r{r} {key} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
print("best per variant:")
for k, v in sorted(res.items(), key=lambda kv: min(kv[1])):
    print(f"  {k:45s} {min(v):8.3f} ms {2*n**3/min(v)/1e9:6.1f} TFLOP/s")
