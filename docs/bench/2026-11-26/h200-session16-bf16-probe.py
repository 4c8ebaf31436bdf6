"""bfloat16 GEMM alternatives alternated in one process on the H200: HALF_IN=3 as is, with EDGE=0
on whole tiles, and the float32 route (cast both, sgemm, cast back)."""
import sys, json
sys.path[:0] = ["tools"]
import numpy as np, ml_dtypes
import vkbackend as vk
from vkbackend.primitives import matmul as mm
from benchmarks.common import time_vk
B = ml_dtypes.bfloat16
orig = mm._defines
def edge0(cfg, ta, tb, av, bv, cv, hb, br, half_in=0, f64=False, whole=False):
    d = orig(cfg, ta, tb, av, bv, cv, hb, br, half_in, f64, whole)
    if whole and half_in and not f64:
        d["EDGE"] = 0
    return d
out = {}
for n in (2048, 4096):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32).astype(B); b = rng.standard_normal((n, n), dtype=np.float32).astype(B)
    A, Bv = vk.asarray(a), vk.asarray(b)
    ref = (a[:4].astype(np.float64) @ b.astype(np.float64))
    def via32():
        return (A.astype(vk.float32) @ Bv.astype(vk.float32)).astype(B)
    variants = {"half_in3": lambda: A @ Bv, "via_f32": via32}
    for rnd in range(3):
        for name in ("half_in3", "edge0", "via_f32"):
            mm._defines = edge0 if name == "edge0" else orig
            f = variants.get(name, variants["half_in3"])
            got = f().numpy()[:4].astype(np.float64)
            err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
            ms = time_vk(f, repeats=10 if n == 4096 else 30)
            out.setdefault(f"{n} {name}", []).append(round(ms, 4))
            print(n, name, rnd, round(ms, 4), f"{2*n**3/ms/1e9:.1f} TFLOP/s", f"err {err:.2e}", flush=True)
mm._defines = orig
print(json.dumps(out))
