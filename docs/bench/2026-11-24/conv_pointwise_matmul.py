import os, sys
sys.path[:0] = ["tools", "."]
import numpy as np
from benchmarks.common import time_vk, tflops
import vkbackend as vk
from vkbackend.primitives.matmul import record_gemm
from vkbackend.array import Array
from vkbackend import dtypes
rng = np.random.default_rng(0)
for n, c, h, co in [(32, 128, 28, 128), (32, 256, 56, 64), (32, 64, 56, 256), (8, 512, 7, 2048)]:
    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
    w = rng.standard_normal((co, c, 1, 1)).astype(np.float32)
    vx, vw = vk.asarray(x), vk.asarray(w)
    flops = 2.0 * n * co * h * h * c
    f = lambda: vk.conv2d(vx, vw)
    def g():
        y = Array.empty((n, co, h, h), dtypes.float32)
        record_gemm(vw, vx, y, m=co, n=h * h, k=c, lda=c, ldb=h * h, ldc=h * h, batch_shape=(n,),
                    batch_strides_a=(0,), batch_strides_b=(c * h * h,), batch_strides_c=(co * h * h,))
        return y
    ref = np.einsum('oc,ncp->nop', w[:, :, 0, 0].astype(np.float64), x.reshape(n, c, -1)).reshape(n, co, h, h)
    for name, fn in (("conv", f), ("gemm", g)):
        err = np.abs(fn().numpy() - ref).max() / np.abs(ref).max()
        for cfg in ((None,) if name == "conv" else (None, "large", "medium", "small")):
            if cfg: os.environ["VKBACKEND_MATMUL_CONFIG"] = cfg
            else: os.environ.pop("VKBACKEND_MATMUL_CONFIG", None)
            t = time_vk(fn, replay=True)
            print(f"n{n} c{c} {h}x{h} co{co} {name} {cfg or ''}: {tflops(flops, t):.1f} TFLOP/s ({t:.4f} ms) err {err:.1e}", flush=True)
    os.environ.pop("VKBACKEND_MATMUL_CONFIG", None)
