"""Elementwise add and host sync latency."""
from __future__ import annotations

from benchmarks.common import gbps, time_torch, time_vk

NAME = "elementwise"


def cases(quick: bool) -> list:
    sizes = [1 << 20, 1 << 26] if quick else [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26]
    return [{"name": f"add {n}", "size": n} for n in sizes] + [{"name": "sync (1 tiny op + read-back)", "sync": True}]


def run_vk(case: dict) -> dict:
    import time

    import numpy as np

    import vkbackend as vk
    if case.get("sync"):
        a = vk.zeros(16)
        (a + 1).numpy()
        t = time.perf_counter()
        for _ in range(200):
            (a + 1).numpy()
        return {"ms": (time.perf_counter() - t) / 200 * 1e3}
    n = case["size"]
    if n * 4 > vk.device().max_storage_buffer_range:
        return {"skipped": "larger than maxStorageBufferRange"}
    x, y = vk.asarray(np.ones(n, np.float32)), vk.asarray(np.ones(n, np.float32))
    ms = time_vk(lambda: x + y)
    return {"ms": ms, "gbps": gbps(12 * n, ms)}


def run_torch(case: dict) -> dict:
    import time

    import torch
    if case.get("sync"):
        a = torch.zeros(16, device="cuda")
        (a + 1).cpu()
        t = time.perf_counter()
        for _ in range(200):
            (a + 1).cpu()
        return {"ms": (time.perf_counter() - t) / 200 * 1e3}
    n = case["size"]
    x, y = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
    ms = time_torch(lambda: x + y)
    return {"ms": ms, "gbps": gbps(12 * n, ms)}
