"""QR factorization (mode 'reduced': Q and R), vkbackend against torch.linalg.qr on CUDA (cuSOLVER)
and numpy on the host CPU (reported as numpy_ms in the torch column).

Cases: square n = 512, 1000, 2000, 4096 and a batch of 256 matrices of 64 x 64; plus 'r'-only cases
(the factorization alone: geqrf) at 2000; float64 at 1000, 2000 and the batch (torch: dgeqrf). Metrics: ms, gflops = LAPACK's flop count of geqrf
(2MN^2 - 2N^3/3) plus orgqr forming the M x N Q (4MNK - 2(M+N)K^2 + 4K^3/3, K = N), i.e. 8/3 n^3
for a square reduced QR (4/3 n^3 for mode 'r'); dispatches and submits per call; max_err: the
larger of ||Q^T Q - I||_max and ||A - QR||_max / ||A||_max on the host.

Tuning on the GPU: VKBACKEND_QR_SWEEP="key=val,key=val;key=val;..." adds one n=2000 case (size:
VKBACKEND_QR_SWEEP_N) per setting of ops/qr.py's TUNE (tuples with '/': "panel_wgs=512/256");
without --quick the default sweep is "nb_max=16;nb_max=8;target_groups=264;unroll_k=0" (panel
width, update strip width, the panel's unrolled column loop). Stand-alone:
python tools/benchmarks/qr.py [--quick] (no torch).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # stand-alone: make `benchmarks` and `vkbackend` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2])]

from benchmarks.common import poisoned, time_torch, time_vk  # noqa: E402

NAME = "qr"
# Each call records ~3 dispatches per panel: keep repeats * dispatches under the stream's flush
# threshold (4096), so the timing is the device's alone.
_REPEATS = {512: 20, 1000: 20, 2000: 10, 4096: 3}


def cases(quick: bool) -> list[dict]:
    sizes = [1000, 2000] if quick else [512, 1000, 2000, 4096]
    out = [{"name": f"qr_{n}", "batch": 1, "n": n, "mode": "reduced"} for n in sizes]
    out.append({"name": "qr_r_2000", "batch": 1, "n": 2000, "mode": "r"})
    out.append({"name": "qr_batched_256x64x64", "batch": 256, "n": 64, "mode": "reduced"})
    out += [{"name": f"qr_f64_{n}", "batch": 1, "n": n, "mode": "reduced", "dtype": "float64"}
            for n in (1000, 2000)]
    out.append({"name": "qr_f64_batched_256x64x64", "batch": 256, "n": 64, "mode": "reduced", "dtype": "float64"})
    from vkbackend import config  # the registry checks the variables (ValueError naming them)
    default_sweep = () if quick else ("nb_max=16", "nb_max=8", "target_groups=264", "unroll_k=0")
    sweep = config.get("VKBACKEND_QR_SWEEP") or default_sweep
    n = config.get("VKBACKEND_QR_SWEEP_N") or 2000
    for s in sweep:
        tune = dict(kv.split("=", 1) for kv in s.split(","))
        out.append({"name": f"qr_{n}_" + "_".join(f"{k}{v}" for k, v in tune.items()),
                    "batch": 1, "n": n, "mode": "reduced", "tune": tune})
    return out


def flops(m: int, n: int, mode: str) -> float:
    k = min(m, n)
    geqrf = 2.0 * m * n * n - 2.0 * n ** 3 / 3 if m >= n else 2.0 * n * m * m - 2.0 * m ** 3 / 3
    if mode == "r":
        return geqrf
    orgqr = 4.0 * m * k * k - 2.0 * (m + k) * k * k + 4.0 * k ** 3 / 3
    return geqrf + orgqr


def _input(case: dict):
    import numpy as np
    rng = np.random.default_rng(case["n"] + case["batch"])
    shape = (case["n"], case["n"]) if case["batch"] == 1 else (case["batch"], case["n"], case["n"])
    return rng.standard_normal(shape).astype(case.get("dtype", "float32"))


def run_vk(case: dict) -> dict:
    import numpy as np

    import vkbackend as vk
    from vkbackend.ops import qr as qrmod
    saved = dict(qrmod.TUNE)
    try:
        for k, v in case.get("tune", {}).items():
            old = qrmod.TUNE[k]
            qrmod.TUNE[k] = tuple(int(x) for x in v.split("/")) if isinstance(old, tuple) else int(v)
        a = _input(case)
        va = vk.asarray(a, dtype=a.dtype)
        mode = case["mode"]
        n, b = case["n"], case["batch"]
        # correctness, on the host
        with poisoned():
            res = vk.linalg.qr(va, mode)
            vk.synchronize()
        if mode == "r":
            r = res.numpy()
            ref = np.linalg.qr(a.astype(np.float64), "r")
            err = float(np.max(np.abs(np.abs(np.diagonal(r, 0, -2, -1)) - np.abs(np.diagonal(ref, 0, -2, -1))))
                        / np.abs(ref).max())
        else:
            q, r = res.Q.numpy(), res.R.numpy()
            q64 = q.astype(np.float64)
            eye = np.eye(q.shape[-1])
            orth = np.abs(np.swapaxes(q64, -1, -2) @ q64 - eye).max()
            rec = np.abs(q64 @ r - a).max() / np.abs(a).max()
            err = float(max(orth, rec))
        del res
        vk.synchronize()
        s0 = vk.stats()
        vk.linalg.qr(va, mode)
        s1 = vk.stats()
        vk.synchronize()
        s2 = vk.stats()
        dispatches = s1["dispatches"] - s0["dispatches"]
        reps = _REPEATS.get(n, 10)
        reps = max(1, min(reps, 3500 // max(1, dispatches)))
        # warmup 4: buffers come back from the pool in a rotation of period 3, and each new
        # (kernel, buffers) pairing creates a pipeline (~1.4 ms on NVIDIA)
        ms = time_vk(lambda: vk.linalg.qr(va, mode), repeats=reps, warmup=4)
        t0 = time.perf_counter()  # host time to record one call, pipelines cached
        vk.linalg.qr(va, mode)
        record_ms = (time.perf_counter() - t0) * 1e3
        vk.synchronize()
    except Exception as e:
        if "tune" not in case:
            raise
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    finally:
        qrmod.TUNE.clear()
        qrmod.TUNE.update(saved)
    return {"ms": ms, "gflops": b * flops(n, n, mode) / (ms * 1e-3) / 1e9, "dispatches": dispatches,
            "submits": s2["submits"] - s0["submits"], "record_ms": record_ms, "max_err": err}


def run_torch(case: dict) -> dict | None:
    if "tune" in case:
        return None
    import numpy as np
    import torch
    a = _input(case)
    n, b, mode = case["n"], case["batch"], case["mode"]
    ta = torch.from_numpy(a).cuda()
    ms = time_torch(lambda: torch.linalg.qr(ta, mode=mode), repeats=_REPEATS.get(n, 10), warmup=3)
    # numpy (LAPACK on the host CPU, float32), best of a few calls
    reps = 1 if n >= 4096 else 3
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        np.linalg.qr(a, mode)
        best = min(best, time.perf_counter() - t0)
    return {"ms": ms, "gflops": b * flops(n, n, mode) / (ms * 1e-3) / 1e9, "numpy_ms": best * 1e3,
            "numpy_threads": os.cpu_count()}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(f"{'case':36s} {'ms':>9s} {'GFLOP/s':>9s} {'disp':>5s} {'rec ms':>7s} {'max err':>9s}")
    for c in cases(quick):
        r = run_vk(c)
        if "error" in r:
            print(f"{c['name']:36s} {r['error']}")
            continue
        print(f"{c['name']:36s} {r['ms']:9.3f} {r['gflops']:9.1f} {r['dispatches']:5d} "
              f"{r['record_ms']:7.2f} {r['max_err']:9.2e}")
