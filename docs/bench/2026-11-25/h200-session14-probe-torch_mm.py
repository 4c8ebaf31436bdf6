# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-torch_mm.py ...).
import torch, sys
torch.backends.cuda.matmul.allow_tf32 = False
for n in map(int, sys.argv[1:]):
    a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
    for _ in range(3): a @ b
    torch.cuda.synchronize()
    best = 1e9
    for r in range(5):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        reps = max(3, int(60 * (4096 / n) ** 3))
        s.record()
        for _ in range(reps): a @ b
        e.record(); torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) / reps)
    print(f"torch sgemm {n}: {best:.3f} ms {2*n**3/best/1e9:.1f} TFLOP/s", flush=True)
