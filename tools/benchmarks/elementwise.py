"""Elementwise add (float32, and the wider and narrower dtypes, float16 and bfloat16 at 16M), a chain of three
operations (one fused kernel here, three kernels in torch) and host sync latency."""
from __future__ import annotations

from benchmarks.common import gbps, time_torch, time_vk

NAME = "elementwise"


MATH = ("divide", "sqrt", "exp", "log", "tanh")  # float32 over [1, 2) (divide: x / y)


def cases(quick: bool) -> list:
    sizes = [1 << 20, 1 << 26] if quick else [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26]
    wide = [] if quick else [{"name": f"add {d} {1 << 24}", "size": 1 << 24, "dtype": d}
                             for d in ("float64", "int64", "int16", "int8", "float16", "bfloat16")]
    chains = [{"name": f"chain (x * 2 + 1) * y {n}", "size": n, "chain": True} for n in (1 << 20, 1 << 24)]
    # the correctly rounded and the transcendental functions: memory-bound in torch, compute-bound
    # in ours where the exactness costs more than a load and a store
    math = [{"name": f"{fn} {1 << 24}", "size": 1 << 24, "fn": fn} for fn in MATH]
    return [{"name": f"add {n}", "size": n} for n in sizes] + wide + chains + math + [
        {"name": "latency: tiny op + read-back", "sync": "op+read"},
        {"name": "latency: tiny op + synchronize", "sync": "op"},
        {"name": "latency: read-back of a ready array", "sync": "read"}]


def _latency(kind: str, op, read, sync) -> dict:
    """Mean wall time per iteration of the host-visible round trip `kind` (200 iterations)."""
    import time
    steps = {"op+read": lambda: read(op()), "op": lambda: (op(), sync()), "read": lambda: read(None)}[kind]
    steps()
    t = time.perf_counter()
    for _ in range(200):
        steps()
    return {"ms": (time.perf_counter() - t) / 200 * 1e3}


def run_vk(case: dict) -> dict:
    import numpy as np

    import vkbackend as vk
    if case.get("sync"):
        a = vk.zeros(16)
        ready = a + 1
        return _latency(case["sync"], lambda: a + 1, lambda r: (ready if r is None else r).numpy(),
                        vk.synchronize)
    n, dtype = case["size"], np.dtype(case.get("dtype", "float32"))
    if n * dtype.itemsize > vk.device().max_storage_buffer_range:
        return {"skipped": "larger than maxStorageBufferRange"}
    if case.get("fn"):
        return _math(case, vk, vk.asarray, time_vk)
    x, y = vk.asarray(np.ones(n, dtype), dtype=dtype), vk.asarray(np.ones(n, dtype), dtype=dtype)
    if case.get("chain"):  # GB/s of the one pass it needs: x and y read, the result written
        ms = time_vk(lambda: (x * 2.0 + 1.0) * y, fuse=True)
    else:
        ms = time_vk(lambda: x + y)
    return {"ms": ms, "gbps": gbps(3 * dtype.itemsize * n, ms)}


def _math(case: dict, lib, upload, time_it) -> dict:
    """case["fn"] of `lib` (vkbackend or torch) over float32 data in [1, 2), timed by time_it."""
    import numpy as np
    n, f = case["size"], getattr(lib, case["fn"])
    rng = np.random.default_rng(0)
    x = upload(rng.uniform(1, 2, n).astype(np.float32))
    y = upload(rng.uniform(1, 2, n).astype(np.float32)) if case["fn"] == "divide" else None
    ms = time_it((lambda: f(x, y)) if y is not None else (lambda: f(x)))
    return {"ms": ms, "gbps": gbps((3 if y is not None else 2) * 4 * n, ms)}


def run_torch(case: dict) -> dict:
    import torch
    if case.get("sync"):
        a = torch.zeros(16, device="cuda")
        ready = a + 1
        return _latency(case["sync"], lambda: a + 1, lambda r: (ready if r is None else r).cpu(),
                        torch.cuda.synchronize)
    if case.get("fn"):
        return _math(case, torch, lambda a: torch.as_tensor(a, device="cuda"), time_torch)
    n, dtype = case["size"], getattr(torch, case.get("dtype", "float32"))
    x, y = torch.ones(n, device="cuda", dtype=dtype), torch.ones(n, device="cuda", dtype=dtype)
    ms = time_torch((lambda: (x * 2.0 + 1.0) * y) if case.get("chain") else (lambda: x + y))
    return {"ms": ms, "gbps": gbps(3 * x.element_size() * n, ms)}
