"""Whole programs of many small ops, each step reading a result back as a training loop does,
against the same code in torch; plus the per-op recording cost and the submit + wait floor.

Metrics: "ms" per iteration (per op for the host-cost cases) and "its" (iterations per second).
The programs draw their data once (numpy, fixed seed) and run the same arithmetic on both sides;
vkbackend's first steps are checked against float64 numpy first. "pipelines_created" counts the
pipelines vkbackend made in the timed loop, after a first pass (it should make none).
"""
from __future__ import annotations

import time

NAME = "programs"
SECONDS = 1.0  # each program runs at least this long after its warm-up pass
# ...and this long before it: a first pass that creates pipelines leaves the GPU idle long enough
# for its clocks to drop (the H200 took ~1 s of the program to recover: logistic regression
# 346 -> 245 us a step), which the timed part would otherwise average in.
WARM_SECONDS = 1.0


def cases(quick: bool) -> list:
    return [{"name": "logistic regression 1000x100", "program": "logreg"},
            {"name": "MLP step 256: 256-512-256", "program": "mlp"},
            {"name": "(a*2+1)^2 sum over 400 arrays 1k-200k", "program": "many_sizes"},
            {"name": f"Adam step over {'1M' if quick else '16M'} parameters", "program": "adam",
             "params": 1 << 20 if quick else 1 << 24},
            {"name": "host: record x + 1.0 (per op)", "program": "record"},
            {"name": "floor: submit + wait of a barrier", "program": "floor"},
            {"name": "upload 256 MiB float32 (host array -> device)", "program": "upload", "mib": 16 if quick else 256},
            {"name": "download 256 MiB float32 (device -> host array)", "program": "download",
             "mib": 16 if quick else 256}]


def _transfer(case: dict, upload, download, sync) -> dict:
    """The best of 3 of a host -> device or device -> host copy of case['mib'] MiB, in GB/s."""
    import numpy as np
    n = case["mib"] << 18
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    dev = upload(x)
    sync()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        if case["program"] == "upload":
            upload(x)
            sync()
        else:
            out = download(dev)
        best = min(best, time.perf_counter() - t)
    if case["program"] == "download" and not np.array_equal(out, x):
        return {"error": "the downloaded array differs from what was uploaded"}
    return {"ms": best * 1e3, "gbps": n * 4 / best / 1e9}


# -- the programs, written once for both libraries: `xp` is vkbackend or a torch shim ----------
def _logreg_data():
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 100)).astype(np.float32)
    w_true = rng.standard_normal((100, 1)).astype(np.float32)
    y = (X @ w_true > 0).astype(np.float32)
    return X, y


def _logreg_step(xp, X, y, w, lr=0.1):
    z = xp.matmul(X, w)
    p = 1.0 / (1.0 + xp.exp(-z))
    grad = xp.matmul_t(X, p - y) * (1.0 / X.shape[0])
    loss = xp.mean(xp.log(1.0 + xp.exp(-z)) + (1.0 - y) * z)
    return w - lr * grad, loss


def _mlp_data():
    import numpy as np
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    y = rng.standard_normal((256, 256)).astype(np.float32)
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    w2 = (rng.standard_normal((512, 256)) / 23).astype(np.float32)
    return x, y, w1, w2


def _mlp_step(xp, x, y, w1, w2, lr=0.01):
    h = xp.maximum(xp.matmul(x, w1), 0.0)
    d = xp.matmul(h, w2) - y
    loss = xp.mean(d * d)
    dout = d * (2.0 / d.shape[0] / d.shape[1])
    dw2 = xp.matmul_t(h, dout)
    dh = xp.where(h > 0.0, xp.matmul_tb(dout, w2), 0.0)
    dw1 = xp.matmul_t(x, dh)
    return w1 - lr * dw1, w2 - lr * dw2, loss


def _adam_data(n: int):
    import numpy as np
    rng = np.random.default_rng(3)
    return (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32) * 0.01)


def _adam_step(xp, w, m, v, g, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """Adam's update without bias correction: twelve elementwise operations over the parameters
    (torch runs each as a kernel; vkbackend fuses them)."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * (g * g)
    w = w - lr * m / (xp.sqrt(v) + eps)
    return w, m, v


def _sizes():
    import numpy as np
    return np.random.default_rng(2).integers(1000, 200_001, 400)


def _many_sizes_step(xp, a):
    b = a * 2.0 + 1.0
    return xp.sum(b * b)


class _VK:
    def __init__(self):
        import vkbackend as vk
        self.vk = vk
        self.matmul, self.exp, self.log, self.mean = vk.matmul, vk.exp, vk.log, vk.mean
        self.maximum, self.where, self.sum, self.sqrt = vk.maximum, vk.where, vk.sum, vk.sqrt
        self.zeros = lambda n: vk.zeros(n, dtype=vk.float32)
        self.matmul_t = lambda a, b: vk.gemm(a, b, trans_a=True)
        self.matmul_tb = lambda a, b: vk.gemm(a, b, trans_b=True)
        self.asarray = vk.asarray

    @staticmethod
    def read(x) -> float:
        return float(x.numpy())


class _Torch:
    def __init__(self):
        import torch
        self.torch = torch
        self.matmul, self.exp, self.log, self.mean = torch.matmul, torch.exp, torch.log, torch.mean
        self.maximum = lambda a, s: torch.clamp_min(a, s)
        self.where, self.sum, self.sqrt = torch.where, torch.sum, torch.sqrt
        self.zeros = lambda n: torch.zeros(n, device="cuda")
        self.matmul_t = lambda a, b: a.T @ b
        self.matmul_tb = lambda a, b: a @ b.T
        self.asarray = lambda x: torch.as_tensor(x, device="cuda")

    @staticmethod
    def read(x) -> float:
        return float(x.item())


def _timed(step, state, warm: int = 1, counter=lambda: 0) -> tuple:
    """Run `step(state) -> (state, value)` `warm` times and on for WARM_SECONDS, then for >= SECONDS;
    per-iteration ms, and what `counter()` (pipelines made so far) grew by in the timed part."""
    for _ in range(warm):
        state, _ = step(state)
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_SECONDS:
        state, _ = step(state)
    made, n, start = counter(), 0, time.perf_counter()
    while True:
        state, value = step(state)
        n += 1
        if time.perf_counter() - start >= SECONDS and n >= 20:
            break
    ms = (time.perf_counter() - start) / n * 1e3
    return {"ms": ms, "its": 1e3 / ms, "pipelines_created": counter() - made}, state, value


def _run(xp, case: dict, counter=lambda: 0) -> dict:
    import numpy as np
    prog = case["program"]
    if prog == "logreg":
        X, y = _logreg_data()
        Xd, yd = xp.asarray(X), xp.asarray(y)

        def step(w):
            w, loss = _logreg_step(xp, Xd, yd, w)
            return w, xp.read(loss)
        res, _, loss = _timed(step, xp.asarray(np.zeros((100, 1), np.float32)), counter=counter)
        res["last_loss"] = loss
        return res
    if prog == "mlp":
        x, y, w1, w2 = _mlp_data()
        xd, yd = xp.asarray(x), xp.asarray(y)

        def step(ws):
            w1, w2, loss = _mlp_step(xp, xd, yd, *ws)
            return (w1, w2), xp.read(loss)
        res, _, loss = _timed(step, (xp.asarray(w1), xp.asarray(w2)), counter=counter)
        res["last_loss"] = loss
        return res
    if prog == "many_sizes":
        arrays = [xp.asarray(np.linspace(-1, 1, n, dtype=np.float32)) for n in _sizes()]

        def step(i):
            return (i + 1) % len(arrays), xp.read(_many_sizes_step(xp, arrays[i]))
        res, _, _ = _timed(step, 0, warm=len(arrays), counter=counter)  # a first pass over every size
        return res
    if prog == "adam":  # the parameters' first element read back each step, as a loop reads its loss
        w, g = _adam_data(case["params"])
        gd = xp.asarray(g)

        def step(state):
            w, m, v = _adam_step(xp, *state, gd)
            return (w, m, v), xp.read(w[0])
        res, _, _ = _timed(step, (xp.asarray(w), xp.zeros(w.size), xp.zeros(w.size)), counter=counter)
        return res
    raise ValueError(prog)


class _NumPy:
    """The float64 reference the vkbackend runs are checked against."""
    def __init__(self):
        import numpy as np
        self.matmul, self.exp, self.log, self.mean = np.matmul, np.exp, np.log, np.mean
        self.maximum, self.where, self.sum, self.sqrt = np.maximum, np.where, np.sum, np.sqrt
        self.zeros = lambda n: np.zeros(n)
        self.matmul_t = lambda a, b: a.T @ b
        self.matmul_tb = lambda a, b: a @ b.T
        self.asarray = lambda x: np.asarray(x, np.float64)

    @staticmethod
    def read(x) -> float:
        return float(x)


def _replay(xp, prog: str, steps: int = 5) -> list:
    """The values read back in the first `steps` iterations of a program."""
    import numpy as np
    out = []
    if prog == "logreg":
        X, y = _logreg_data()
        Xd, yd, w = xp.asarray(X), xp.asarray(y), xp.asarray(np.zeros((100, 1), np.float32))
        for _ in range(steps):
            w, loss = _logreg_step(xp, Xd, yd, w)
            out.append(xp.read(loss))
    elif prog == "mlp":
        x, y, w1, w2 = _mlp_data()
        xd, yd, w1, w2 = xp.asarray(x), xp.asarray(y), xp.asarray(w1), xp.asarray(w2)
        for _ in range(steps):
            w1, w2, loss = _mlp_step(xp, xd, yd, w1, w2)
            out.append(xp.read(loss))
    elif prog == "adam":
        w, g = _adam_data(1 << 20)
        w, g, m, v = xp.asarray(w), xp.asarray(g), xp.zeros(w.size), xp.zeros(w.size)
        for _ in range(steps):
            w, m, v = _adam_step(xp, w, m, v, g)
            out.append(xp.read(w[12345]))
    else:
        for n in _sizes()[:steps]:
            out.append(xp.read(_many_sizes_step(xp, xp.asarray(np.linspace(-1, 1, n, dtype=np.float32)))))
    return out


def _max_rel_error(prog: str) -> float:
    got, want = _replay(_VK(), prog), _replay(_NumPy(), prog)
    return max(abs(g - w) / max(abs(w), 1e-30) for g, w in zip(got, want))


def _host_record_vk() -> dict:
    import numpy as np
    vk = _VK().vk
    x = vk.asarray(np.ones(1000, np.float32))
    best = float("inf")
    for _ in range(5):
        vk.synchronize()
        t = time.perf_counter()
        for _ in range(1000):
            x + 1.0
        best = min(best, (time.perf_counter() - t) / 1000)
    vk.synchronize()
    return {"ms": best * 1e3, "us": best * 1e6}


def _floor_vk() -> dict:
    from vkbackend.runtime._kpmod import kp

    from vkbackend import runtime
    seq = runtime.get().device.manager.sequence()
    seq.record(kp.OpGlobalBarrier())
    seq.eval()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(200):
            seq.eval()
        best = min(best, (time.perf_counter() - t) / 200)
    return {"ms": best * 1e3, "us": best * 1e6}


def run_vk(case: dict) -> dict:
    if case["program"] in ("upload", "download"):
        import vkbackend as vk
        return _transfer(case, vk.asarray, lambda a: a.numpy(), vk.synchronize)
    if case["program"] == "record":
        return _host_record_vk()
    if case["program"] == "floor":
        return _floor_vk()
    from vkbackend import runtime
    rt = runtime.get()
    err = _max_rel_error(case["program"])
    if err > 1e-4:
        return {"error": f"wrong result: the first steps' read-backs differ from float64 numpy by {err:.2e}"}
    res = _run(_VK(), case, counter=lambda: rt.stats()["pipelines_created"])
    res["rel_error"] = err
    return res


def run_torch(case: dict) -> dict:
    import torch
    if case["program"] in ("upload", "download"):
        return _transfer(case, lambda x: torch.as_tensor(x).cuda(), lambda t: t.cpu().numpy(),
                         torch.cuda.synchronize)
    if case["program"] == "record":
        x = torch.ones(1000, device="cuda")
        best = float("inf")
        for _ in range(5):
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(1000):
                x + 1.0
            best = min(best, (time.perf_counter() - t) / 1000)
        torch.cuda.synchronize()
        return {"ms": best * 1e3, "us": best * 1e6}
    if case["program"] == "floor":  # torch's nearest: an empty synchronize after a tiny op
        x = torch.ones(16, device="cuda")
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(200):
                x + 1.0
                torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t) / 200)
        return {"ms": best * 1e3, "us": best * 1e6}
    return _run(_Torch(), case)
