"""QR on the H200, alternated in one process with torch.linalg.qr (cuSOLVER) in the same run: ms per
call (time_vk: device time), the host's recording time of one call, the error of Q and R.
Default: Q from rebuilt 32-wide T blocks (q_nb), outer blocks of 32 columns (outer_nb), block
reflectors on large corners as three GEMMs (gemm_min); --tg: qr_update.comp's target workgroup
count; --split: its rows split over workgroups; --rows: qr_update_rows.comp (rows_min) with Q's
blocks 32 or 16 wide; --ru: the same after its loops took 4 rows a step, one round. outer_nb, gemm_min and the split were removed after their runs (slower), so
only --rows and --tg still run what they ran."""
import sys, time
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend.ops import qr as qrmod
from benchmarks.common import time_vk, time_torch

CONFIGS = {"q32": dict(q_nb=32, rows_min=0),
           "q32 rows256K 528/256": dict(q_nb=32, rows_min=1 << 18, rows_groups=528, rows_chunk=256),
           "q32 rows1M 528/256": dict(q_nb=32, rows_min=1 << 20, rows_groups=528, rows_chunk=256),
           "q32 rows256K 1056/128": dict(q_nb=32, rows_min=1 << 18, rows_groups=1056, rows_chunk=128),
           "q16 rows1M 528/256": dict(q_nb=16, rows_min=1 << 20, rows_groups=528, rows_chunk=256),
           } if "--ru" in sys.argv else {"old": dict(q_nb=0, rows_min=0), "q32": dict(q_nb=32, rows_min=0),
           "q32 rows256K": dict(q_nb=32, rows_min=1 << 18), "q16 rows256K": dict(q_nb=16, rows_min=1 << 18),
           "q16 rows64K": dict(q_nb=16, rows_min=1 << 16), "q16 rows1M": dict(q_nb=16, rows_min=1 << 20)
           } if "--rows" in sys.argv or "--ru" in sys.argv else {f"split {r}/{g}": dict(q_nb=32, outer_nb=0, gemm_min=0, split_rows=r, split_groups=g)
           for r, g in [(0, 1), (512, 1056), (256, 1056), (1024, 1056), (512, 528), (512, 2112), (256, 2112)]
           } if "--split" in sys.argv else {"q32 tg120": dict(q_nb=32, outer_nb=0, gemm_min=0, target_groups=120),
           "q32 tg264": dict(q_nb=32, outer_nb=0, gemm_min=0, target_groups=264),
           "q32 tg528": dict(q_nb=32, outer_nb=0, gemm_min=0, target_groups=528),
           "q32 tg1056": dict(q_nb=32, outer_nb=0, gemm_min=0, target_groups=1056)} if "--tg" in sys.argv else {"old": dict(q_nb=0, outer_nb=0, gemm_min=0), "q32": dict(q_nb=32, outer_nb=0, gemm_min=0),
           "q32+o32": dict(q_nb=32, outer_nb=32, gemm_min=0),
           "q32+o32+g1M": dict(q_nb=32, outer_nb=32, gemm_min=1 << 20),
           "q32+o32+g256K": dict(q_nb=32, outer_nb=32, gemm_min=1 << 18),
           "q32+g256K": dict(q_nb=32, outer_nb=0, gemm_min=1 << 18)}
sizes = [int(x) for x in sys.argv[1:] if x.isdigit()]
for cfg in CONFIGS.values():
    for k in ("rows_min", "q_nb", "split_rows", "outer_nb", "gemm_min", "target_groups"):
        cfg.setdefault(k, {"rows_min": 0, "q_nb": 32, "target_groups": 120}.get(k, 0))
    for k in list(cfg):
        if k not in qrmod.TUNE:
            del cfg[k]  # keys of experiments since removed or [512, 1000, 2000, 4096]
try:
    import torch
except ImportError:
    torch = None
for n in sizes:
    a_np = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    a = vk.asarray(a_np)
    reps = 3 if n >= 4096 else 10
    if torch is not None:
        ta = torch.from_numpy(a_np).cuda()
        for mode in ("reduced", "r"):
            print(f"n={n} {mode:8s} torch {time_torch(lambda: torch.linalg.qr(ta, mode=mode), repeats=reps, warmup=3):8.3f} ms", flush=True)
    for rnd in range(1 if "--ru" in sys.argv else 2):
        for name, cfg in CONFIGS.items():
            qrmod.TUNE.update(cfg)
            for mode in ("reduced", "r"):
                q = vk.linalg.qr(a, mode)
                if mode == "reduced":
                    qq, rr = q.Q.numpy().astype(np.float64), q.R.numpy().astype(np.float64)
                    err = max(np.abs(qq.T @ qq - np.eye(n)).max(), np.abs(qq @ rr - a_np).max() / np.abs(a_np).max())
                else:
                    err = 0.0
                ms = time_vk(lambda: vk.linalg.qr(a, mode), repeats=reps, warmup=2)
                t0 = time.perf_counter(); vk.linalg.qr(a, mode); rec = 1e3 * (time.perf_counter() - t0)
                vk.synchronize()
                print(f"n={n} {mode:8s} {name:14s} {ms:8.3f} ms  record {rec:6.1f} ms  err {err:.1e}", flush=True)
