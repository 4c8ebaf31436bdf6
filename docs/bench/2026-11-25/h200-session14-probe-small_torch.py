# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-small_torch.py ...).
import torch, sys
for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26):
    x = torch.ones(n, device="cuda")
    out = []
    for f, name in ((torch.sum, "sum"), (lambda t: torch.cumsum(t, 0), "cumsum")):
        for _ in range(3): f(x)
        torch.cuda.synchronize(); best = 1e9
        for r in range(3):
            s, e = torch.cuda.Event(True), torch.cuda.Event(True); s.record()
            for _ in range(200): f(x)
            e.record(); torch.cuda.synchronize(); best = min(best, s.elapsed_time(e) / 200)
        out.append(f"{name} {best*1e3:.1f}us")
    print(f"torch n={n:>9}: " + " ".join(out), flush=True)
