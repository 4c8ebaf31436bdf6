"""1-D float32 cumsum (8 bytes per element: one read, one write), against torch.cumsum on CUDA.

Cases with "size" (algorithm="decoupled", the default) make the bandwidth plot; the
reduce-then-scan cases and, in the full run, a sweep of scan.py's tunables at 64M elements (no
torch reference) carry "n" instead; VKBACKEND_SCAN_SWEEP="items=12,lookback=2;workgroup=256" adds
64M cases with those tunables (integers, or true/false). Decoupled cases also report how many tiles fell back to
reducing a predecessor from the input ("fallbacks", of "tiles"): on a GPU with forward progress
that should stay near 0; if not, raise Tuning.spin.
"""
from __future__ import annotations

from benchmarks.common import gbps, poisoned, time_torch, time_vk

NAME = "scan"
_ALGORITHMS = ("decoupled", "reduce_then_scan")
_TUNE = [  # the look-back first (window = lookback * subgroup size), then the tile shape and layout
    {"static_tiles": False}, {"lookback": 2}, {"subgroup_lookback": False}, {"spin": 8}, {"spin": 1024},
    {"items": 8}, {"items": 12}, {"workgroup": 128}, {"workgroup": 512}, {"workgroup": 1024, "items": 8},
    {"layout": "blocked", "workgroup": 512, "items": 12}, {"layout": "staged"},
]


def _label(n: int) -> str:
    for shift, unit in ((20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def _tunable(item: str) -> tuple:
    key, value = (v.strip() for v in item.split("=", 1))
    words = {"true": True, "false": False}
    return key, words[value.lower()] if value.lower() in words else (int(value) if value.lstrip("-").isdigit() else value)


def cases(quick: bool) -> list:
    sizes = [1 << 20, 1 << 26] if quick else [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28]
    out = []
    for n in sizes:
        out.append({"name": f"cumsum f32 {_label(n)}", "size": n, "algorithm": "decoupled"})
        out.append({"name": f"cumsum f32 {_label(n)} reduce_then_scan", "n": n,
                    "algorithm": "reduce_then_scan"})
    from vkbackend import config  # the registry checks the variables (ValueError naming them)
    extra = [dict(_tunable(kv) for kv in cfg.split(",") if kv.strip()) for cfg in config.get("VKBACKEND_SCAN_SWEEP")]
    if not quick or extra:
        for t in (_TUNE if not quick else []) + extra:
            label = " ".join(f"{k}={v}" for k, v in t.items())
            out.append({"name": f"cumsum f32 64M {label}", "n": 1 << 26, "algorithm": "decoupled", "tune": t})
    return out


def _pattern(n: int):
    """-1, 0, 1, -1, ...: every partial sum, in any order of combination, is a small integer, so
    float32 results are exact and the check is equality."""
    import numpy as np
    return (np.arange(n, dtype=np.int64) % 3 - 1).astype(np.float32)


def run_vk(case: dict) -> dict:
    import dataclasses

    import numpy as np

    import vkbackend as vk
    from vkbackend.runtime.memory import WORD, size_class
    from vkbackend.primitives import scan
    n = case.get("size") or case["n"]
    limit = vk.device().max_storage_buffer_range
    if size_class(n) * WORD > limit:
        return {"skipped": f"{n * 4} bytes exceed maxStorageBufferRange ({limit})"}
    saved = scan.TUNING
    try:
        scan.TUNING = dataclasses.replace(saved, **case.get("tune", {}))
        host = _pattern(n)
        x = vk.asarray(host)
        with poisoned():
            got = vk.cumsum(x, algorithm=case["algorithm"]).numpy()
        if not np.array_equal(got, np.cumsum(host)):
            bad = int(np.argmax(got != np.cumsum(host)))
            return {"error": f"wrong result at element {bad} of {n}"}
        result = {}
        if case["algorithm"] == "decoupled" and n > scan.TUNING.tile:
            result = {"fallbacks": scan.fallback_count(), "tiles": -(-n // scan.TUNING.tile)}
        ms = time_vk(lambda: vk.cumsum(x, algorithm=case["algorithm"]))
    finally:
        scan.TUNING = saved
    return {"ms": ms, "gbps": gbps(8 * n, ms), **result}


def run_torch(case: dict) -> dict | None:
    if "tune" in case or case["algorithm"] != "decoupled":
        return None
    import torch
    n = case["size"]
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    ms = time_torch(lambda: torch.cumsum(x, 0))
    return {"ms": ms, "gbps": gbps(8 * n, ms)}
