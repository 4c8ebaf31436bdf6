"""QR's trailing updates and Q formation: qr_update at CW=32 has 129 registers (one 256-invocation
workgroup per multiprocessor), at CW=16 107 (two). target_groups 120 (CW=32 where 120 strips
exist) against 240 (CW=16 at 4096), alternated."""
import sys
import numpy as np
sys.path[:0] = ["tools"]
from benchmarks.common import time_vk
import vkbackend as vk
from vkbackend.ops import qr as qrmod
rng = np.random.default_rng(0)
for n in (4096, 2000, 1000):
    a = vk.asarray(rng.standard_normal((n, n)).astype(np.float32))
    for rnd in range(2):
        for tg in (120, 240, 480):
            qrmod.TUNE["target_groups"] = tg
            t = time_vk(lambda: vk.linalg.qr(a), replay=True, repeats=3 if n == 4096 else 10)
            print(n, "target_groups", tg, round(t, 3), "ms", flush=True)
    qrmod.TUNE["target_groups"] = 120
q, r = vk.linalg.qr(a); print("check", float(np.abs(q.numpy() @ r.numpy() - a.numpy()).max()))
