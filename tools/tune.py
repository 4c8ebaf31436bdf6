#!/usr/bin/env python3
"""Sweep a module constant (a planning knob) over values and time a benchmark module's cases.

    python tools/tune.py layernorm vkbackend.ops.layernorm:VECS_PER_THREAD=1,2,4,8 [--quick]

One line per (value, case): the vkbackend metrics only (no torch: see tools/bench.py for that)."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("benchmark")
    ap.add_argument("knob", help="module:NAME=v1,v2,...")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default="", help="substring filter on case names")
    args = ap.parse_args()
    target, values = args.knob.split("=", 1)
    module_name, const = target.split(":")
    module = importlib.import_module(module_name)
    bench = importlib.import_module(f"benchmarks.{args.benchmark}")
    cases = [c for c in bench.cases(args.quick) if args.cases in c["name"]]
    original = getattr(module, const)
    for raw in values.split(","):
        value = type(original)(raw) if not isinstance(original, bool) else raw == "1"
        setattr(module, const, value)
        for fn in ("plan",):  # planning caches would keep the old choice
            cached = getattr(module, fn, None)
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
        for case in cases:
            r = bench.run_vk(case)
            metrics = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items())
            print(f"{const}={value!s:<6} {case['name']:32s} {metrics}", flush=True)
    setattr(module, const, original)
    return 0


if __name__ == "__main__":
    sys.exit(main())
