"""Sub-allocation (small arrays as pieces of slabs) against one buffer per array, alternated in
one process: the host time to make a new small array when the pool has none cached (the cost
the first pass of a program pays for every array it keeps), allocations made, and whole
programs' steps (tools/benchmarks/programs.py) in steady state, where the pool reuses buffers."""
import sys, time, json, gc
sys.path[:0] = ["tools"]
import numpy as np
import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime import memory
from benchmarks import programs

rt = runtime.get()
pool = rt.pool
SUB = pool._suballoc  # the session's run switched memory.SUBALLOC_BYTES, read at each allocation then


def mode(on: bool):
    vk.synchronize()
    pool.trim(0)
    pool._suballoc = SUB if on else 0


def fresh_arrays(count: int, n: int) -> dict:
    """`count` live arrays of n float32, none of them cached: µs each, buffers created."""
    before = vk.stats()["buffers_created"]
    t0 = time.perf_counter()
    keep = [vk.empty((n,), vk.float32) for _ in range(count)]
    t1 = time.perf_counter()
    keep2 = [a + 1.0 for a in keep]  # the first dispatch binding each
    vk.synchronize()
    t2 = time.perf_counter()
    made = vk.stats()["buffers_created"] - before
    del keep, keep2
    return {"alloc_us": round((t1 - t0) / count * 1e6, 2), "first_use_us": round((t2 - t1) / count * 1e6, 2),
            "buffers": made}


out = {}
for rnd in range(3):
    for on in (True, False):
        for n in (100, 3000):
            mode(on)
            r = fresh_arrays(5000, n)
            key = f"{'slabs' if on else 'whole'} n{n}"
            out.setdefault(key, []).append(r)
            print(rnd, key, r, flush=True)
progs = {}
for rnd in range(3):
    for on in (True, False):
        mode(on)
        for case in programs.cases(quick=True):
            if case["program"] in ("logreg", "mlp", "many_sizes"):
                r = programs.run_vk(case)
                key = f"{'slabs' if on else 'whole'} {case['program']}"
                progs.setdefault(key, []).append(r.get("ms") or r)
                print(rnd, key, progs[key][-1], flush=True)
mode(True)
print(json.dumps({"arrays": out, "programs": progs}))
