"""Command line: `python -m vkbackend info [--json] | demo | compile-shaders | config-docs`."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def info(as_json: bool) -> int:
    import vkbackend as vk
    from vkbackend.runtime.probe import probe_subgroup
    dev = vk.device()
    report = dev.report()
    report["probed_subgroup_size"], _ = probe_subgroup()
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    width = max(map(len, report))
    for k, v in report.items():
        if isinstance(v, (list, tuple, frozenset)):
            v = ", ".join(map(str, v)) or "-"
        print(f"{k:<{width}}  {v}")
    return 0


def demo() -> int:
    """The device report, then a small end-to-end computation checked against numpy."""
    import vkbackend as vk
    info(as_json=False)
    print()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 257)).astype(np.float32)
    y = rng.standard_normal((257,)).astype(np.float32)
    before = vk.stats()["submits"]
    t = time.perf_counter()
    gx, gy = vk.asarray(x), vk.asarray(y)
    z = vk.where(gx > 0, vk.sqrt(vk.abs(gx)) * gy, vk.exp(gx / 4) - 1)
    got = z.numpy()
    dt = time.perf_counter() - t
    ref = np.where(x > 0, np.sqrt(np.abs(x)) * y, np.exp(x / 4) - 1)
    err = float(np.max(np.abs(got - ref) / (1 + np.abs(ref))))
    submits = vk.stats()["submits"] - before
    print(f"demo: where(x > 0, sqrt|x| * y, exp(x/4) - 1) on {x.shape} float32, broadcast y {y.shape}")
    # recorded lazily: submitted while the GPU idles (eager submits) and at .numpy()
    print(f"      {submits} submit{'s' if submits != 1 else ''}, {dt * 1e3:.1f} ms, max relative error vs "
          f"numpy {err:.2e}")
    ok = err < 1e-5 and submits >= 1
    print("demo: OK" if ok else "demo: FAILED")
    return 0 if ok else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="vkbackend")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("info", help="the device report")
    p.add_argument("--json", action="store_true")
    sub.add_parser("demo", help="device report + a small computation checked against numpy")
    p = sub.add_parser("compile-shaders", help="compile and validate every shader variant")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="glslang processes at a time (default: the CPU count)")
    sub.add_parser("config-docs", help="docs/configuration.md: every VKBACKEND_ variable and tuning key")
    args = ap.parse_args(argv)
    if args.cmd == "info":
        return info(args.json)
    if args.cmd == "demo":
        return demo()
    if args.cmd == "config-docs":
        from vkbackend import config
        sys.stdout.write(config.markdown())
        return 0
    from vkbackend.runtime.variants import compile_all
    return compile_all(jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
