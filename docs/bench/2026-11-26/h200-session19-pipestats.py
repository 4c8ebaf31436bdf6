"""Driver statistics (registers, ...) of kernels: dumps each variant's SPIR-V and runs pipestats."""
import sys, subprocess, os
import vkbackend as vk
from vkbackend import runtime
rt = runtime.get()
exe = sys.argv[1]
J = [("primitives/radix_sort.comp", {"UPSWEEP": 1, "ITEMS": 8}, 256, 5, 44),
     ("primitives/radix_sort.comp", {"DOWNSWEEP": 1, "ITEMS": 8}, 256, 5, 44),
     ("primitives/radix_sort.comp", {"DOWNSWEEP": 1, "ITEMS": 16}, 256, 5, 44),
     ("primitives/radix_sort.comp", {"DOWNSWEEP": 1, "ITEMS": 8, "PAIRS": 1}, 256, 5, 44)]
for ko in ["X_LOADPOS", "X_NS", "X_BALLOT1", "X_LOADPOS,X_NS,X_BALLOT1"]:
    for items in (8,):
        J.append(("primitives/radix_sort_probe.comp", {"DOWNSWEEP": 1, "ITEMS": items, **{k: 1 for k in ko.split(",")}}, 256, 5, 44))
for shader, defs, wg, nbuf, push in J:
    k = rt.kernel(shader, defs, wg)
    open("/tmp/k.spv", "wb").write(k.spirv)
    r = subprocess.run([exe, "/tmp/k.spv", str(nbuf), str(push), *map(str, k.spec)], capture_output=True, text=True)
    print(shader, defs, wg, "spec", k.spec, "\n   ", (r.stdout + r.stderr).strip()[:1500], flush=True)
