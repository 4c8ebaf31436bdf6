"""Registers and shared memory (VK_KHR_pipeline_executable_properties) of every kernel a set of
workloads dispatches: the kernels' residency on the device at a glance."""
import sys, subprocess, json
import numpy as np
import vkbackend as vk
from vkbackend.runtime import kernel as K
seen = {}
orig = K.Kernel.__call__
def spy(self, buffers, push=(), groups=(1, 1, 1), *a, **kw):
    key = (self.shader, json.dumps({k: v for k, v in sorted(self.defines.items()) if not k.startswith("HAS_")}), self.spec)
    if key not in seen:
        seen[key] = (self, len(buffers), len(K.pack_push(push)), tuple(groups) + (1,) * (3 - len(groups)))
    return orig(self, buffers, push, groups, *a, **kw)
K.Kernel.__call__ = spy
rng = np.random.default_rng(0)
f32 = lambda *s: vk.asarray(rng.standard_normal(s).astype(np.float32))
W = {}
def run(name, fn):
    before = set(seen)
    fn(); vk.synchronize()
    W.update({k: name for k in seen if k not in before})
a = f32(2048, 2048)
run("matmul f32 2048", lambda: a @ a)
h = a.astype(vk.float16)
run("matmul f16 2048", lambda: h @ h)
x = f32(4096, 4096); g = f32(4096); b = f32(4096)
run("layer_norm fwd", lambda: vk.layer_norm(x, (4096,), g, b))
run("layer_norm bwd", lambda: vk.layer_norm_vjp(x, g, b, x, (4096,)))
q = f32(2000, 2000)
run("qr 2000", lambda: vk.linalg.qr(q))
q4 = f32(4096, 4096)
run("qr 4096", lambda: vk.linalg.qr(q4))
c = f32(32, 64, 56, 56); w = f32(64, 64, 3, 3)
run("conv fwd", lambda: vk.conv2d(c, w, padding=1))
run("conv bwd", lambda: vk.conv_vjp(c, w, vk.conv2d(c, w, padding=1), padding=1))
v = f32(1 << 24)
run("sum 16M", lambda: vk.sum(v)); run("cumsum 16M", lambda: vk.cumsum(v)); run("sort 16M", lambda: vk.sort(v))
exe = sys.argv[1]
for key, (k, nbuf, push, groups) in seen.items():
    open("/tmp/k.spv", "wb").write(k.spirv)
    r = subprocess.run([exe, "/tmp/k.spv", str(nbuf), str(push), *map(str, k.spec)], capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip().replace("Local Memory Size=68719476736 ", "").replace("[CS] subgroup 32: ", "")
    print(f"{W.get(key, '?'):16s} {key[0]} {key[1]} wg {k.workgroup} groups {groups}\n     {out[:300]}", flush=True)
