"""1-D float32 sum (bytes read per second), against torch.sum on CUDA.

The full run adds, at 64M elements, a sweep of reduce.py's tunables (workgroups in the grid,
invocations per workgroup, vec4 loads in flight) with no torch reference, to pick the defaults.
"""
from __future__ import annotations

from benchmarks.common import gbps, poisoned, time_torch, time_vk

NAME = "reduce"
_TUNE = [{"GROUPS": g} for g in (528, 2112, 4224)] + [{"UNROLL": u} for u in (2, 8)] + \
        [{"WG": 512, "GROUPS": 528}, {"WG": 128, "GROUPS": 2112}]


def cases(quick: bool) -> list:
    sizes = [1 << 20, 1 << 26] if quick else [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28]
    out = [{"name": f"sum f32 {n}", "size": n} for n in sizes]
    if not quick:  # "n", not "size": kept off the bandwidth plot
        out += [{"name": "sum f32 64M " + " ".join(f"{k}={v}" for k, v in t.items()), "n": 1 << 26, "tune": t}
                for t in _TUNE]
    return out


def run_vk(case: dict) -> dict:
    import numpy as np

    import vkbackend as vk
    from vkbackend.runtime.memory import WORD, size_class
    from vkbackend.primitives import reduce as R
    n = case.get("size") or case["n"]
    limit = vk.device().max_storage_buffer_range
    if size_class(n) * WORD > limit:
        return {"skipped": f"{n * 4} bytes exceed maxStorageBufferRange ({limit})"}
    saved = {k: getattr(R, k) for k in case.get("tune", {})}
    try:
        for k, v in case.get("tune", {}).items():
            setattr(R, k, v)
        x = vk.ones((n,), np.float32)
        with poisoned():
            got = vk.sum(x).item()
        if got != n:  # ones sum exactly: a wrong answer is a bug, not a timing
            return {"error": f"sum of {n} ones gave {got}"}
        ms = time_vk(lambda: vk.sum(x))
    finally:
        for k, v in saved.items():
            setattr(R, k, v)
    return {"ms": ms, "gbps": gbps(4 * n, ms)}


def run_torch(case: dict) -> dict | None:
    if "tune" in case:
        return None
    import torch
    n = case["size"]
    x = torch.ones(n, device="cuda", dtype=torch.float32)
    ms = time_torch(lambda: torch.sum(x))
    return {"ms": ms, "gbps": gbps(4 * n, ms)}
