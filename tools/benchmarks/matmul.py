"""matmul: square n x n @ n x n, vkbackend against torch: float32 (TF32 off), float16 and bfloat16
(float32 accumulation on both sides; vkbackend's kernel in the "config" metric: for the halves
matmul_half.path, cooperative matrices or not).

Tuning on the GPU: VKBACKEND_MATMUL_CONFIG="BMxBNxBK/TMxTN[/WXxWY]" forces one tile shape
(vkbackend/primitives/matmul.py); VKBACKEND_MATMUL_SWEEP="cfg1;cfg2;..." adds one case per config
at VKBACKEND_MATMUL_SWEEP_N (default 4096), each checked against a float64 reference on a few rows
(metric max_rel_err) and timed. Failing configs report an "error" metric instead of aborting.
Stand-alone: python tools/benchmarks/matmul.py [--quick] prints a table (no torch).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":  # stand-alone: make `benchmarks` and `vkbackend` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2])]

from benchmarks.common import poisoned, time_torch, time_vk, tflops  # noqa: E402

NAME = "matmul"
_REPEATS = {1024: 100, 2048: 40, 4096: 15, 8192: 5}


def cases(quick: bool) -> list[dict]:
    sizes = [1024, 4096] if quick else [1024, 2048, 4096, 8192]
    out = [{"name": f"sgemm_{n}", "n": n, "dtype": "float32"} for n in sizes]
    out += [{"name": f"hgemm_{n}", "n": n, "dtype": "float16"} for n in sizes if n >= 2048]
    out += [{"name": f"bgemm_{n}", "n": n, "dtype": "bfloat16"} for n in sizes if 2048 <= n <= 4096]
    out += [{"name": f"dgemm_{n}", "n": n, "dtype": "float64"} for n in sizes if 2048 <= n <= 4096]
    from vkbackend import config  # the registry checks the variables (ValueError naming them)
    n = config.get("VKBACKEND_MATMUL_SWEEP_N") or 4096
    for cfg in config.get("VKBACKEND_MATMUL_SWEEP"):
        out.append({"name": f"sgemm_{n}_cfg_{cfg.replace('/', '_')}", "n": n, "dtype": "float32", "config": cfg})
    return out


def _inputs(n: int, dtype: str = "float32"):
    import ml_dtypes  # noqa: F401  (np.dtype("bfloat16"))
    import numpy as np
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
    b = rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
    return a, b


def run_vk(case: dict) -> dict:
    import numpy as np

    import vkbackend as vk
    n = case["n"]
    saved = os.environ.get("VKBACKEND_MATMUL_CONFIG")
    if "config" in case:
        os.environ["VKBACKEND_MATMUL_CONFIG"] = case["config"]
    try:
        a, b = _inputs(n, case["dtype"])
        va, vb = vk.asarray(a, dtype=a.dtype), vk.asarray(b, dtype=b.dtype)
        from vkbackend.primitives import matmul as mm, matmul_half
        dev = vk.device()
        config = (matmul_half.path(half=np.dtype(case["dtype"])) if case["dtype"] in ("float16", "bfloat16")
                  else str(mm.F64_CONFIG)
                  if case["dtype"] == "float64" else str(mm.choose_config(dev, n, n)))
        # correctness on a few rows (cheap on the host even at 8192)
        rows = np.r_[0:4, n // 2: n // 2 + 2, n - 3:n]
        with poisoned():
            got = (va @ vb).numpy()[rows].astype(np.float64)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want = a64[rows] @ b64
        scale = np.abs(a64[rows]) @ np.abs(b64)
        rel = float(np.max(np.abs(got - want) / scale))
        ms = time_vk(lambda: va @ vb, repeats=_REPEATS.get(n, 10), warmup=2)
    except Exception as e:  # a config that does not compile or fit: report it, keep benchmarking
        if "config" not in case:
            raise
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    finally:
        if "config" in case:
            if saved is None:
                os.environ.pop("VKBACKEND_MATMUL_CONFIG", None)
            else:
                os.environ["VKBACKEND_MATMUL_CONFIG"] = saved
    return {"ms": ms, "tflops": tflops(2.0 * n ** 3, ms), "max_rel_err": rel, "config": config}


def run_torch(case: dict) -> dict | None:
    if "config" in case:
        return None
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    n = case["n"]
    g = torch.Generator(device="cuda").manual_seed(n)
    dt = getattr(torch, case["dtype"])
    a = torch.randn((n, n), device="cuda", dtype=torch.float32, generator=g).to(dt)
    b = torch.randn((n, n), device="cuda", dtype=torch.float32, generator=g).to(dt)
    ms = time_torch(lambda: a @ b, repeats=_REPEATS.get(n, 10), warmup=3)
    return {"ms": ms, "tflops": tflops(2.0 * n ** 3, ms)}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(f"{'case':40s} {'ms':>10s} {'TFLOP/s':>8s} {'rel err':>9s}  config")
    for c in cases(quick):
        r = run_vk(c)
        if "error" in r:
            print(f"{c['name']:40s} {r['error']}")
            continue
        print(f"{c['name']:40s} {r['ms']:10.3f} {r['tflops']:8.2f} {r.get('max_rel_err', float('nan')):9.2e}  "
              f"{r.get('config', '')}{r.get('error', '')}")
