#!/usr/bin/env python3
"""Benchmarks: vkbackend against torch/CUDA on the same GPU, in one run.

    python tools/bench.py [--only reduce,scan] [--match f16,64M] [--quick] [--out bench-results] [--no-torch]
                          [--rounds 3]

Each module of tools/benchmarks/ (see its __init__.py for the protocol) gives cases; vkbackend runs
in this process, the torch reference in a separate one (kp and torch in one process abort).
--match keeps the cases whose name contains one of the comma-separated strings.
--rounds N runs torch's side and ours alternately N times and reports each case's median round
(its "rounds_ms" lists them all): host-bound cases (the programs) moved by up to 2x with the
host's state between runs minutes apart, more than the changes they measure.
Writes results.json, results.md and, where matplotlib is present, bandwidth plots.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))


def modules(only):
    names = sorted(p.stem for p in (ROOT / "tools" / "benchmarks").glob("*.py")
                   if p.stem not in ("__init__", "common"))
    return [n for n in names if not only or n in only]


def torch_worker(name: str, cases: list) -> None:
    """Run in a fresh process: the torch side of one module's cases, JSON on stdout."""
    sys.modules["kp"] = None  # importing kp next to torch aborts: fail loudly instead
    mod = importlib.import_module(f"benchmarks.{name}")
    from benchmarks.common import warm_up_torch
    warm_up_torch()
    out = []
    for case in cases:
        try:
            out.append(mod.run_torch(case))
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            out.append({"error": f"{type(e).__name__}: {e}"})
    import torch
    print(json.dumps({"results": out, "device": torch.cuda.get_device_name(0),
                      "torch": torch.__version__}))


def run_torch(name: str, cases: list) -> tuple[list, dict]:
    cmd = [sys.executable, __file__, "--torch-worker", name]
    proc = subprocess.run(cmd, input=json.dumps(cases), capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"error": f"torch worker: {err}"}] * len(cases), {}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data["results"], {"device": data["device"], "torch": data["torch"]}


def _fmt(r: dict | None) -> tuple[str, str]:
    if not r:
        return "-", "-"
    if "error" in r or "skipped" in r:
        return (r.get("error") or "skipped: " + r["skipped"])[:60], ""
    metric = next((f"{r[k]:.1f} {k.replace('gbps', 'GB/s').replace('tflops', 'TFLOP/s').replace('gflops', 'GFLOP/s')}"
                   for k in ("gbps", "tflops", "gflops") if k in r), "")
    return f"{r['ms']:.4f}", metric


def markdown(results: list, meta: dict) -> str:
    lines = [f"Measured {meta['date']} on {meta['vk_device']} ({meta['vk_driver']}) through Vulkan/Kompute; "
             f"reference: torch {meta.get('torch', {}).get('torch', '-')} on {meta.get('torch', {}).get('device', '-')}, "
             "same machine, same run." + (f" Each side's median of {meta['rounds']} alternating rounds "
                                          "(results.json: every round's time)." if meta.get("rounds", 1) > 1 else ""), "",
             "| benchmark | case | vkbackend ms | vkbackend | torch ms | torch | torch ms / vk ms |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        vms, vmet = _fmt(r["vk"])
        tms, tmet = _fmt(r["torch"])
        ratio = "-"
        if r["vk"] and r["torch"] and "ms" in r["vk"] and "ms" in (r["torch"] or {}):
            ratio = f"{r['torch']['ms'] / r['vk']['ms']:.2f}"
        lines.append(f"| {r['module']} | {r['case']['name']} | {vms} | {vmet} | {tms} | {tmet} | {ratio} |")
    return "\n".join(lines) + "\n"


def plot(results: list, out: Path) -> list:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    for module in sorted({r["module"] for r in results}):
        rows = [r for r in results if r["module"] == module and "size" in r["case"]
                and r["vk"] and "gbps" in r["vk"]]
        if len(rows) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for side in ("vk", "torch"):
            pts = [(r["case"]["size"], r[side]["gbps"]) for r in rows if r[side] and "gbps" in r[side]]
            if pts:
                ax.plot(*zip(*pts), marker="o", label="vkbackend" if side == "vk" else "torch (CUDA)")
        ceiling = [r["vk"]["gbps"] for r in results if r["module"] == "gather" and "copy" in r["case"]["name"]
                   and r["vk"] and "gbps" in r["vk"]]
        if ceiling:
            ax.axhline(max(ceiling), color="gray", ls="--", label="vkbackend copy")
        ax.set_xscale("log")
        ax.set_xlabel("elements")
        ax.set_ylabel("GB/s")
        ax.set_title(module)
        ax.legend()
        path = out / f"{module}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        made.append(path.name)
    return made


def _median(runs: list) -> dict:
    """One case's rounds as one result: the round of median time (with its other metrics), and
    every round's time under rounds_ms; a single round as it is, and the first round without a
    time (an error, a skip) where there is one."""
    if len(runs) == 1:
        return runs[0]
    untimed = [r for r in runs if not (r and "ms" in r)]
    if untimed:
        return untimed[0]
    order = sorted(runs, key=lambda r: r["ms"])
    return {**order[(len(order) - 1) // 2], "rounds_ms": [r["ms"] for r in runs]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--match", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench-results"))
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--torch-worker")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    if args.torch_worker:
        torch_worker(args.torch_worker, json.loads(sys.stdin.read()))
        return 0
    only = [s for s in args.only.split(",") if s]
    match = [s for s in args.match.split(",") if s]
    plan = {name: [c for c in importlib.import_module(f"benchmarks.{name}").cases(args.quick)
                   if not match or any(m in c["name"] for m in match)]
            for name in modules(only)}
    meta = {}
    refs = {name: [] for name in plan}  # per module: one list of torch results per round
    ours = {name: [] for name in plan}
    rounds = max(1, args.rounds)
    for rnd in range(rounds):
        if not args.no_torch:  # the first round's before kp is loaded here (the GPU not shared)
            for name, cases in plan.items():
                res, meta["torch"] = run_torch(name, cases)
                refs[name].append(res)
        if rnd == 0:
            import vkbackend as vk
            dev = vk.device()
            meta.update({"date": datetime.date.today().isoformat(), "vk_device": dev.name, "vk_driver": dev.driver,
                         "host": platform.node(), "python": platform.python_version(), "rounds": rounds})
            from benchmarks.common import warm_up_vk
            warm_up_vk()
        for name, cases in plan.items():
            mod = importlib.import_module(f"benchmarks.{name}")
            ours[name].append([])
            for i, case in enumerate(cases):
                try:
                    r = mod.run_vk(case)
                except Exception as e:  # noqa: BLE001 - reported in the table
                    r = {"error": f"{type(e).__name__}: {e}"}
                ours[name][-1].append(r)
                t = refs[name][-1][i] if refs[name] else None
                tag = f" (round {rnd + 1}/{rounds})" if rounds > 1 else ""
                print(f"{name:10s} {case['name']:32s} vk {_fmt(r)[0]:>10s} ms {_fmt(r)[1]:18s} "
                      f"torch {_fmt(t)[0]:>10s} ms {_fmt(t)[1]}{tag}", flush=True)
    results = [{"module": name, "case": case, "vk": _median([run[i] for run in ours[name]]),
                "torch": _median([run[i] for run in refs[name]]) if refs[name] else None}
               for name, cases in plan.items() for i, case in enumerate(cases)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    (out / "results.md").write_text(markdown(results, meta))
    plots = plot(results, out)
    print(f"wrote {out}/results.json, results.md" + (f", {', '.join(plots)}" if plots else ""))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
