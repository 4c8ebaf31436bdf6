# Probe of the fourteenth session as run on the H200 (from the repository root: python3 docs/bench/2026-11-25/h200-session14-probe-smallmm.py ...).
# cfgs was, in turn: the first probe's list, the second's, then ["auto", "small", "tiny"] (the last run, shown here).
# GPU time of dependent chains of the programs' small products per tile config (alternating, one process)
import os, sys
import numpy as np
sys.path.insert(0, "tools")
import vkbackend as vk
from vkbackend.primitives import recipes
from benchmarks.common import time_vk
rng = np.random.default_rng(0)
f = lambda *s: vk.asarray(rng.standard_normal(s).astype(np.float32) * 0.05)
x, W1, W2, dy = f(256, 256), f(256, 512), f(512, 256), f(256, 256)
X, w = f(1000, 100), f(100, 1)
def mlp():   # forward, then the backward's products, each depending on the last
    h = x @ W1; y = h @ W2; dh = (y + dy) @ W2.T; dW1 = x.T @ dh; dW2 = h.T @ y
    return dW1 @ dW2
A5, B5 = f(512, 512), f(512, 512)
def sq512():
    return ((A5 @ B5) @ B5) @ B5
def logreg():
    r = X @ w; g = X.T @ r; return X @ (w - g)
cfgs = ["auto", "small", "tiny"]
res = {}
for r in range(3):
    for c in cfgs:
        if c == "auto": os.environ.pop("VKBACKEND_MATMUL_CONFIG", None)
        else: os.environ["VKBACKEND_MATMUL_CONFIG"] = c
        recipes.clear()
        for name, fn in (("mlp6", mlp), ("logreg3", logreg), ("sq512x3", sq512)):
            res.setdefault((name, c), []).append(time_vk(fn, repeats=200))
os.environ.pop("VKBACKEND_MATMUL_CONFIG", None)
for name in ("mlp6", "logreg3", "sq512x3"):
    print(name, "  ".join(f"{c} {min(res[(name, c)]) * 1e3:.1f}us" for c in cfgs), flush=True)
