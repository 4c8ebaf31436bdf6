# Ran from .prof/gpu19/ beside probe1.py (= h200-session19-program-split.py); kp built with h200-session19-queued-submits.patch
# and stream.py passing queued=self.queued and not wait to Sequence.submit. Measured and dropped.
"""Queued submits (kp's submit thread) against direct ones, and the eager-submit interval, on the
three small-op programs: alternated slice by slice in one process."""
import sys, time, json
import numpy as np
sys.path[:0] = [".prof/gpu19", "tools"]
from probe1 import setup, steady, split_read, stream
import vkbackend as vk
MODES = [("direct", False, 100), ("queued", True, 100), ("queued", True, 50), ("queued", True, 25),
         ("queued", True, 10), ("queued", True, 0)]
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for name in ("logreg", "mlp", "many"):
    rec = setup(name)
    for _ in range(3): steady(rec, 0.3)
    rows = {}
    for rnd in range(rounds):
        for label, q, us in MODES:
            stream.queued, stream.eager_seconds = q, us * 1e-6
            steady(rec, 0.1)
            s0 = vk.stats()["submits"]; n0 = time.perf_counter()
            t = steady(rec, 0.3)
            key = f"{label}{us}"
            rows.setdefault(key, []).append(round(t, 1))
            r, w = split_read(rec, 100)
            rows.setdefault(key + "_rec/read", []).append((round(r, 1), round(w, 1)))
    print(name, json.dumps(rows), flush=True)
stream.queued, stream.eager_seconds = True, 100e-6
a = vk.asarray(np.ones(1000, np.float32))
for q in (False, True, False, True):
    stream.queued = q
    ts = []
    for _ in range(2000):
        t0 = time.perf_counter(); float((a + 1.0).numpy()[0]); ts.append(time.perf_counter() - t0)
    print("tiny op + read", q, round(float(np.median(ts)) * 1e6, 1), flush=True)
