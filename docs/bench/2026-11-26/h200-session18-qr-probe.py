"""Where QR's time goes on the H200 (n = 2000, 4096 float32): the whole call (reduced, 'r'), the
factorization with its trailing updates dropped (panels alone) or its panels dropped (updates
alone), and Q formed from (h, tau) by householder_product at block widths 8, 16, 32 (qr forms Q
with the panels' own T blocks, 8 or 16 wide). Timings only: the dropped dispatches make the
numbers meaningless."""
import sys, time
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import qr as qrmod
from benchmarks.common import time_vk

orig_kernel, orig_dispatch = qrmod._kernel, qrmod._dispatch
skip = set()


def kernel(shader, defines, wg):
    return (shader, orig_kernel(shader, defines, wg))


def dispatch(k, *a, **kw):
    if k[0] not in skip:
        orig_dispatch(k[1], *a, **kw)


qrmod._kernel, qrmod._dispatch = kernel, dispatch
sizes = [int(x) for x in sys.argv[1:]] or [2000, 4096]
for n in sizes:
    a = vk.asarray(np.random.default_rng(0).standard_normal((n, n)).astype(np.float32))
    reps = 3 if n >= 4096 else 10
    panels, _ = qrmod._plan(n, n)
    print(f"n={n}: panels {len(panels)} widths {sorted(set(p.width for p in panels))} wgs "
          f"{sorted(set(p.wg for p in panels))} rpt {sorted(set(p.rpt for p in panels))}", flush=True)
    for label, mode, sk in [("reduced", "reduced", ()), ("r", "r", ()),
                            ("r panels only", "r", ("qr_update.comp",)),
                            ("r updates only", "r", ("qr_panel.comp",))]:
        skip.clear(); skip.update(sk)
        ms = time_vk(lambda: vk.linalg.qr(a, mode), repeats=reps, warmup=2)
        print(f"  {label:20s} {ms:8.3f} ms", flush=True)
    skip.clear()
    h, tau = vk.linalg.qr(a, "raw")
    hT = vk.asarray(np.ascontiguousarray(h.numpy().T))
    for nb in (8, 16, 32):
        qrmod.TUNE["apply_nb"] = nb
        ms = time_vk(lambda: vk.linalg.householder_product(hT, tau), repeats=reps, warmup=2)
        print(f"  householder_product nb={nb:2d} {ms:8.3f} ms", flush=True)
    qrmod.TUNE["apply_nb"] = 32
    t0 = time.perf_counter(); vk.linalg.qr(a); print(f"  record reduced {1e3*(time.perf_counter()-t0):.1f} ms")
    vk.synchronize()
