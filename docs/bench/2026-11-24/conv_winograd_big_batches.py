"""Winograd float32 on large batches (chunked workspaces) against the GEMM kernels, H100."""
import os, sys
sys.path[:0] = ["tools", "."]  # run from the repository root
import numpy as np
from benchmarks.common import time_vk, tflops
import vkbackend as vk
from vkbackend.ops import conv as C, conv_winograd as W
rng = np.random.default_rng(0)
for n, c, h in [(64, 64, 56), (256, 64, 56), (128, 128, 28), (64, 256, 14)]:
    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
    w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    g = rng.standard_normal((n, c, h, h)).astype(np.float32)
    vx, vw, vg = vk.asarray(x), vk.asarray(w), vk.asarray(g)
    flops = 2.0 * n * c * h * h * c * 9
    out = {}
    for cfg in ("", "path=gemm"):
        os.environ["VKBACKEND_CONV_CONFIG"] = cfg
        geom = C._geometry("b", x.shape, w.shape, 2, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), 1, False, False)
        pf, pw = C.plan("winograd_fwd", geom), C.plan("winograd", geom)
        f = lambda: vk.conv2d(vx, vw, padding=1)
        b = lambda: vk.conv_vjp(vx, vw, vg, padding=1, input_grad=False)[1]
        y, dw = f().numpy(), b().numpy()
        out[cfg] = (y, dw)
        tf, tb = time_vk(f, replay=True), time_vk(b, replay=True)
        print(f"n{n} c{c} {h}x{h} [{cfg or 'default'}] fwd {tflops(flops, tf):.1f} TFLOP/s ({tf:.3f} ms) "
              f"wgrad {tflops(flops, tb):.1f} ({tb:.3f} ms)  plans: {pf and pf.describe()} | {pw and pw.describe()}", flush=True)
    for i, name in enumerate(("fwd", "wgrad")):
        a, r = out[""][i], out["path=gemm"][i]
        print(f"   {name}: max |wino - gemm| / max |gemm| = {np.abs(a - r).max() / np.abs(r).max():.2e}")
