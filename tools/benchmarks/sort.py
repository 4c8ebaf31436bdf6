"""1-D float32 sort and argsort (stable), against torch.sort / torch.argsort(stable=True) on CUDA.

torch.sort computes values and int64 indices in one call whichever is used; vk.sort moves only the
keys, vk.argsort keys and int32 positions. "gbps" counts 8 bytes per key (one read, one write: the
least any sort moves), "gkeys" keys per second. VKBACKEND_SORT_SIZES="64K,1M" replaces the sizes
(K/M suffixes), e.g. for a run on lavapipe.
"""
from __future__ import annotations

import os

from benchmarks.common import gbps, poisoned, time_torch, time_vk

NAME = "sort"
_UNITS = {"K": 1 << 10, "M": 1 << 20}


def _label(n: int) -> str:
    for shift, unit in ((20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def _sizes() -> list:
    raw = os.environ.get("VKBACKEND_SORT_SIZES", "").strip()
    if not raw:
        return [1 << 20, 1 << 24]
    return [int(s[:-1]) * _UNITS[s[-1].upper()] if s[-1].upper() in _UNITS else int(s)
            for s in (t.strip() for t in raw.split(",")) if s]


def cases(quick: bool) -> list:
    return [{"name": f"{op} f32 {_label(n)}", "size": n, "op": op} for n in _sizes() for op in ("sort", "argsort")]


def _metrics(n: int, ms: float) -> dict:
    return {"ms": ms, "gbps": gbps(8 * n, ms), "gkeys": n / (ms * 1e-3) / 1e9}


def run_vk(case: dict) -> dict:
    import numpy as np

    import vkbackend as vk
    n, op = case["size"], case["op"]
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x = vk.asarray(host)
    fn = getattr(vk, op)
    with poisoned():
        got = fn(x).numpy()
    want = np.sort(host) if op == "sort" else np.argsort(host, kind="stable")
    if not np.array_equal(got, want):
        return {"error": f"wrong result at element {int(np.argmax(got != want))} of {n}"}
    before = vk.stats()["dispatches"]
    fn(x)
    dispatches = vk.stats()["dispatches"] - before
    return {**_metrics(n, time_vk(lambda: fn(x))), "dispatches": dispatches}


def run_torch(case: dict) -> dict:
    import torch
    n = case["size"]
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    if case["op"] == "sort":
        ms = time_torch(lambda: torch.sort(x, stable=True))
    else:
        ms = time_torch(lambda: torch.argsort(x, stable=True))
    return _metrics(n, ms)
