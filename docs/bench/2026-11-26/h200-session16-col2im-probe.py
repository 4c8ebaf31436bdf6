"""First layer backward-input (n16 c3 224^2 7x7 s2, C_out 64) on the H200: the col2im route's
pieces timed alone, against the narrow kernel's route, alternated in one process."""
import sys, math, json
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops.conv import geometry, select, col2im, record
from vkbackend.primitives.matmul import record_gemm
from vkbackend import runtime
from benchmarks.common import time_vk
n, c, h, k, co, s, p = 16, 3, 224, 7, 64, 2, 3
ho = (h + 2 * p - k) // s + 1
rng = np.random.default_rng(0)
x = vk.asarray(rng.standard_normal((n, c, h, h)).astype(np.float32))
w = vk.asarray(rng.standard_normal((co, c, k, k)).astype(np.float32))
g = vk.asarray(rng.standard_normal((n, co, ho, ho)).astype(np.float32))
geom = geometry.build("p", (n, c, h, h), (co, c, k, k), 2, (s, s), (p, p), (p, p), (1, 1), (1, 1), 1, False, False)
rows, so = c * k * k, ho * ho
cols = vk.zeros((n * rows * so,), dtype=np.float32)
wt = vk.asarray(np.ascontiguousarray(w.numpy().reshape(co, rows).T))
plan = col2im.plan(geom)
narrow = select.select("forward", geom.backward_input(), False)
def gemm_t():
    record_gemm(w, g, cols, m=rows, n=so, k=co, lda=rows, ldb=so, ldc=so, trans_a=True, batch_shape=(n,),
                batch_strides_a=(0,), batch_strides_b=(co * so,), batch_strides_c=(rows * so,))
    return cols
def gemm_n():
    record_gemm(wt, g, cols, m=rows, n=so, k=co, lda=co, ldb=so, ldc=so, trans_a=False, batch_shape=(n,),
                batch_strides_a=(0,), batch_strides_b=(co * so,), batch_strides_c=(rows * so,))
    return cols
rt = runtime.get()
kern = rt.kernel(col2im.SHADER, {}, col2im.WG, geom.spec())
dx = vk.zeros((n, c, h, h), dtype=np.float32)
def gather():
    kern([cols.buffer, dx.buffer], [n * c * h * h, cols.offset, dx.offset], (plan.groups,))
    return dx
def full():
    return col2im.record(geom, plan, g, w)
def old():
    return record.record_forward(geom.backward_input(), g, w, None, narrow)
a = full().numpy(); b = old().numpy()
print("max diff col2im vs narrow", float(np.max(np.abs(a - b))), "groups", plan.groups, flush=True)
out = {}
for rnd in range(3):
    for name, f in (("gemm_transA", gemm_t), ("gemm_plain", gemm_n), ("gather", gather), ("col2im", full), ("narrow", old)):
        ms = time_vk(f, repeats=20, replay=True)
        out.setdefault(name, []).append(round(ms, 4))
        print(rnd, name, round(ms, 4), flush=True)
print(json.dumps(out))
