"""Gather/scatter benchmarks: float32 transpose, take with random indices, and the plain device
copy that bounds them all (the copy ceiling).

Bandwidth counts the bytes an ideal kernel must move: transpose and copy read and write each
element once (8 bytes per float32); take reads an index and a (random) source element and writes
one (12 bytes per element).
"""
from __future__ import annotations

import numpy as np

from .common import gbps, time_torch, time_vk

NAME = "gather"


def cases(quick: bool) -> list[dict]:
    if quick:  # small enough for lavapipe (128 MB buffers, ~1-3 GB/s)
        return [
            {"name": "transpose_1024", "op": "transpose", "n": 1024},
            {"name": "take_1M", "op": "take", "n": 1 << 20},
            {"name": "copy_4M", "op": "copy", "n": 1 << 22},
        ]
    return [
        {"name": "transpose_4096", "op": "transpose", "n": 4096},
        {"name": "transpose_8192", "op": "transpose", "n": 8192},
        {"name": "take_16M", "op": "take", "n": 1 << 24},
        {"name": "copy_64M", "op": "copy", "n": 1 << 26},
    ]


def _bytes(case: dict) -> float:
    n = case["n"]
    if case["op"] == "transpose":
        return 8.0 * n * n
    if case["op"] == "take":
        return 12.0 * n
    return 8.0 * n


def _inputs(case: dict):
    """Host data: the source and, for take, int32 indices uniform over it."""
    rng = np.random.default_rng(0)
    n = case["n"]
    shape = (n, n) if case["op"] == "transpose" else (n,)
    x = rng.standard_normal(shape, dtype=np.float32)
    idx = rng.integers(0, n, n, dtype=np.int32) if case["op"] == "take" else None
    return x, idx


def _metrics(case: dict, ms: float) -> dict:
    return {"ms": ms, "gbps": gbps(_bytes(case), ms)}


def run_vk(case: dict) -> dict:
    import vkbackend as vk
    x, idx = _inputs(case)
    a = vk.asarray(x)
    if case["op"] == "transpose":
        def fn():
            return vk.transpose(a)
    elif case["op"] == "take":
        i = vk.asarray(idx)

        def fn():
            return vk.take(a, i)
    else:
        def fn():
            return vk.strided_copy(a, a.shape, (1,))
    return _metrics(case, time_vk(fn))


def run_torch(case: dict) -> dict | None:
    import torch
    if not torch.cuda.is_available():
        return None
    x, idx = _inputs(case)
    t = torch.from_numpy(x).cuda()
    if case["op"] == "transpose":
        def fn():
            return t.t().contiguous()
    elif case["op"] == "take":
        i = torch.from_numpy(idx.astype(np.int64)).cuda()  # torch indexes with int64

        def fn():
            return torch.take(t, i)
    else:
        def fn():
            return t.clone()
    out = _metrics(case, time_torch(fn))
    if case["op"] == "take":
        out["index_select_ms"] = time_torch(lambda: torch.index_select(t, 0, i))
    return out
