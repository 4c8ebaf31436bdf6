"""Layer norm forward and backward (dx, dweight, dbias), float32 (and float64, float16, bfloat16 at 4096^2), against
torch.nn.functional.layer_norm.

Bytes counted: forward x read + y written; backward x and dy read + dx written (the weight, bias
and their gradients are a rounding error at these shapes).

Standalone: `python -m tools.benchmarks.layernorm [--quick]` prints the vk side with each kernel plan.
"""
from __future__ import annotations

from .common import gbps, time_vk

NAME = "layernorm"
SHAPES = [(4096, 4096), (16384, 1024), (8192, 8192)]
QUICK_SHAPES = [(1024, 1024), (256, 4096)]
EPS = 1e-5


def cases(quick: bool) -> list[dict]:
    out = []
    for rows, d in (QUICK_SHAPES if quick else SHAPES):
        for direction in ("forward", "backward"):
            out.append({"name": f"{direction}_{rows}x{d}", "direction": direction, "rows": rows, "d": d})
    if not quick:
        out += [{"name": f"{direction}_4096x4096_{dt}", "direction": direction, "rows": 4096, "d": 4096,
                 "dtype": dt} for dt in ("float64", "float16", "bfloat16") for direction in ("forward", "backward")]
    return out


def _bytes(case: dict) -> int:
    size = {"float64": 8, "float16": 2, "bfloat16": 2}.get(case.get("dtype"), 4)
    return (2 if case["direction"] == "forward" else 3) * case["rows"] * case["d"] * size


def _host(case: dict):
    import ml_dtypes  # noqa: F401  (np.dtype("bfloat16"))
    import numpy as np
    rng = np.random.default_rng(0)
    rows, d = case["rows"], case["d"]
    dt = case.get("dtype", "float32")
    return tuple(a.astype(dt) for a in (rng.standard_normal((rows, d), dtype=np.float32),
                                        rng.standard_normal(d, dtype=np.float32),
                                        rng.standard_normal(d, dtype=np.float32),
                                        rng.standard_normal((rows, d), dtype=np.float32)))


def run_vk(case: dict) -> dict:
    import vkbackend as vk
    if case["rows"] * case["d"] * 4 > vk.device().max_storage_buffer_range:
        return {"skipped": "larger than maxStorageBufferRange"}
    x, w, b, dy = (vk.asarray(a, dtype=a.dtype) for a in _host(case))
    d = case["d"]
    if case["direction"] == "forward":
        def fn():
            return vk.layer_norm(x, d, w, b, EPS)
    else:
        def fn():
            return vk.layer_norm_vjp(x, w, b, dy, d, EPS)
    ms = time_vk(fn, replay=True)  # stateless: the same batch back to back, the GPU kept busy as torch keeps it
    return {"ms": ms, "gbps": gbps(_bytes(case), ms)}


def run_torch(case: dict) -> dict | None:
    import torch
    import torch.nn.functional as F

    from .common import time_torch
    if not torch.cuda.is_available():
        return None
    dt = getattr(torch, case.get("dtype", "float32"))  # bfloat16: torch's own, from float32 copies
    x, w, b, dy = (torch.from_numpy(a.astype("float64" if a.dtype.itemsize == 8 else "float32")).cuda().to(dt)
                   for a in _host(case))
    d = case["d"]
    if case["direction"] == "forward":
        with torch.no_grad():
            ms = time_torch(lambda: F.layer_norm(x, (d,), w, b, EPS))
    else:
        x.requires_grad_(True)
        w.requires_grad_(True)
        b.requires_grad_(True)
        y = F.layer_norm(x, (d,), w, b, EPS)
        # only the backward is timed: the graph is kept and differentiated again each call
        ms = time_torch(lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True))
    return {"ms": ms, "gbps": gbps(_bytes(case), ms)}


def _main() -> None:
    import argparse
    import json

    import vkbackend as vk
    from vkbackend.ops import layernorm as L
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(f"device: {vk.device().name}")
    for case in cases(args.quick):
        plan = L.plan(case["d"], case["d"] % 4 == 0, case["direction"] == "backward")
        res = run_vk(case)
        print(json.dumps({**case, "plan": f"{plan.mode} wg={plan.wg} n={plan.n} vec4={plan.vec4}",
                          **{k: round(v, 4) for k, v in res.items()}}))


if __name__ == "__main__":
    _main()
