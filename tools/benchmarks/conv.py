"""2-D convolution, float32 and float16 (and float64 on two shapes): forward, backward-input and
backward-weight against cuDNN (TF32 off for float32; float16 on tensor cores, ours through
VK_KHR_cooperative_matrix; float64 ours by im2col and the float64 GEMM, ops/conv/f64.py).

Shapes (N, C_in, H=W, k, C_out, stride, padding): ResNet-like 3x3 layers, a 7x7 stride-2 first
layer and a 1x1. Metric: ms and TFLOP/s of 2 * N * C_out * H_out * W_out * C_in/groups * kH * kW
for every pass. torch: F.conv2d, torch.nn.grad.conv2d_input / conv2d_weight, with
torch.backends.cudnn.allow_tf32 = False and cudnn.benchmark = True (its best algorithm).

Tuning on the GPU: VKBACKEND_CONV_CONFIG (ops/conv/config.py, keys in docs/conv.md) forces paths
and tiles for every convolution, e.g. "BM=128,BN=64,BK=16,TM=8,TN=4" or "fwd.BK=8,wgrad.splits=64";
VKBACKEND_CONV_SWEEP="cfg1;cfg2;..." adds a copy of every case per config (each checked against
a float64 reference on a sample of outputs: metric max_rel_err). The plan is reported as
ops/conv/select.py routes the pass, the route the recording takes.
Stand-alone: python tools/benchmarks/conv.py [--quick] prints a table (no torch).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":  # stand-alone: make `benchmarks` and `vkbackend` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2])]

from benchmarks.common import poisoned, time_torch, time_vk, tflops  # noqa: E402

NAME = "conv"
# name: (N, C_in, H, k, C_out, stride, padding)
SHAPES = {
    "n32_c64_56_k3_co64": (32, 64, 56, 3, 64, 1, 1),
    "n8_c256_28_k3_co256": (8, 256, 28, 3, 256, 1, 1),
    "n16_c3_224_k7_co64_s2": (16, 3, 224, 7, 64, 2, 3),
    "n32_c128_28_k1_co128": (32, 128, 28, 1, 128, 1, 0),
}
PASSES = ("forward", "backward_input", "backward_weight")
F64_SHAPES = ("n8_c256_28_k3_co256", "n32_c128_28_k1_co128")


def cases(quick: bool) -> list[dict]:
    shapes = list(SHAPES)[:2] if quick else list(SHAPES)
    out = [{"name": f"{s} {p}", "shape": s, "pass": p} for s in shapes for p in PASSES]
    out += [{"name": f"{s} {p} f16", "shape": s, "pass": p, "dtype": "float16"} for s in shapes for p in PASSES]
    if not quick:
        out += [{"name": f"{s} {p} f64", "shape": s, "pass": p, "dtype": "float64"} for s in F64_SHAPES for p in PASSES]
    from vkbackend import config  # the registry checks the variables (ValueError naming them)
    for cfg in config.get("VKBACKEND_CONV_SWEEP"):
        # f16.* and wgrad16.* keys tune the float16 kernels: those configs run the float16 cases only.
        kinds = ("float16",) if cfg.startswith(("f16.", "wgrad16.")) else ("float32",)
        out += [{"name": f"{s} {p}{' f16' if d == 'float16' else ''} [{cfg}]", "shape": s, "pass": p,
                 "config": cfg, "dtype": d} for d in kinds for s in shapes for p in PASSES]
    return out


def _dims(case):
    n, c, h, k, co, s, p = SHAPES[case["shape"]]
    ho = (h + 2 * p - k) // s + 1
    return n, c, h, k, co, s, p, ho


def _flops(case) -> float:
    n, c, h, k, co, s, p, ho = _dims(case)
    return 2.0 * n * co * ho * ho * c * k * k


def _data(case):
    """x, w, g in the case's dtype."""
    import numpy as np
    n, c, h, k, co, s, p, ho = _dims(case)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, h), dtype=np.float32)
    w = (rng.standard_normal((co, c, k, k), dtype=np.float32) / np.sqrt(c * k * k)).astype(np.float32)
    g = rng.standard_normal((n, co, ho, ho), dtype=np.float32)
    dt = np.dtype(case.get("dtype", "float32"))
    return x.astype(dt), w.astype(dt), g.astype(dt)


def _sample_error(case, x, w, g, got) -> float:
    """Max relative error on a sample of outputs against a float64 sum (cheap on the host)."""
    import numpy as np
    n, c, h, k, co, s, p, ho = _dims(case)
    rng = np.random.default_rng(1)
    x, w, g, got = (a.astype(np.float64) for a in (x, w, g, got))
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    errs = []
    for _ in range(16):
        if case["pass"] == "forward":
            b, o, i, j = (int(rng.integers(0, m)) for m in (n, co, ho, ho))
            patch = xp[b, :, i * s:i * s + k, j * s:j * s + k]
            want, scale = (patch * w[o]).sum(), (np.abs(patch) * np.abs(w[o])).sum()
            have = got[b, o, i, j]
        elif case["pass"] == "backward_weight":
            o, ci, u, v = (int(rng.integers(0, m)) for m in (co, c, k, k))
            patch = xp[:, ci, u:u + (ho - 1) * s + 1:s, v:v + (ho - 1) * s + 1:s]
            want, scale = (patch * g[:, o]).sum(), (np.abs(patch) * np.abs(g[:, o])).sum()
            have = got[o, ci, u, v]
        else:
            b, ci, i, j = (int(rng.integers(0, m)) for m in (n, c, h, h))
            want = scale = 0.0
            for u in range(k):
                for v in range(k):
                    oi, oj = i + p - u, j + p - v
                    if oi % s or oj % s or not (0 <= oi // s < ho and 0 <= oj // s < ho):
                        continue
                    t = g[b, :, oi // s, oj // s].astype(np.float64) * w[:, ci, u, v]
                    want += t.sum()
                    scale += np.abs(t).sum()
            have = got[b, ci, i, j]
        errs.append(abs(have - want) / max(scale, 1e-30))
    return float(max(errs))


def run_vk(case: dict) -> dict:
    import vkbackend as vk
    from vkbackend.ops.conv import geometry, select
    saved = os.environ.get("VKBACKEND_CONV_CONFIG")
    if "config" in case:
        os.environ["VKBACKEND_CONV_CONFIG"] = case["config"]
    try:
        n, c, h, k, co, s, p, ho = _dims(case)
        x, w, g = _data(case)
        vx, vw, vg = (vk.asarray(a, dtype=a.dtype) for a in (x, w, g))
        geom = geometry.build("bench", x.shape, w.shape, 2, (s, s), (p, p), (p, p), (1, 1), (1, 1), 1, False, False)
        kind = case["pass"]
        half = case.get("dtype") == "float16"
        if kind == "forward":
            fn = lambda: vk.conv2d(vx, vw, stride=s, padding=p)  # noqa: E731
            route = select.select("forward", geom, half)
        elif kind == "backward_input":
            fn = lambda: vk.conv_vjp(vx, vw, vg, stride=s, padding=p, weight_grad=False)[0]  # noqa: E731
            route = select.select("input", geom, half)
        else:
            fn = lambda: vk.conv_vjp(vx, vw, vg, stride=s, padding=p, input_grad=False)[1]  # noqa: E731
            route = select.select("wgrad", geom, half)
        with poisoned():
            got = fn().numpy()
        err = _sample_error(case, x, w, g, got)
        repeats = max(3, min(50, int(2e11 / _flops(case))))
        ms = time_vk(fn, repeats=repeats, replay=True)  # stateless: the same batch back to back
        plan = "im2col + float64 GEMM" if x.dtype.itemsize == 8 else route.describe(half)
        return {"ms": ms, "tflops": tflops(_flops(case), ms), "max_rel_err": err, "plan": plan}
    except Exception as e:  # noqa: BLE001 - a failing config is reported, not fatal
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        if "config" in case:
            if saved is None:
                os.environ.pop("VKBACKEND_CONV_CONFIG", None)
            else:
                os.environ["VKBACKEND_CONV_CONFIG"] = saved


def run_torch(case: dict) -> dict | None:
    if "config" in case:  # a sweep of our kernels: torch's time is the default case's
        return None
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    n, c, h, k, co, s, p, ho = _dims(case)
    x, w, g = (torch.from_numpy(a).cuda() for a in _data(case))  # float16 runs on tensor cores
    kind = case["pass"]
    if kind == "forward":
        fn = lambda: F.conv2d(x, w, stride=s, padding=p)  # noqa: E731
    elif kind == "backward_input":
        fn = lambda: torch.nn.grad.conv2d_input(x.shape, w, g, stride=s, padding=p)  # noqa: E731
    else:
        fn = lambda: torch.nn.grad.conv2d_weight(x, w.shape, g, stride=s, padding=p)  # noqa: E731
    repeats = max(3, min(50, int(2e11 / _flops(case))))
    ms = time_torch(fn, repeats=repeats)
    return {"ms": ms, "tflops": tflops(_flops(case), ms)}


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for case in cases(quick):
        r = run_vk(case)
        if "error" in r:
            print(f"{case['name']:48s} {r['error']}")
        else:
            print(f"{case['name']:48s} {r['ms']:9.3f} ms {r['tflops']:7.2f} TFLOP/s  err {r['max_rel_err']:.1e}  "
                  f"{r['plan']}", flush=True)
