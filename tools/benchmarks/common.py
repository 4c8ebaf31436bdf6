"""Timing helpers shared by the benchmark modules.

Both sides warm up until the GPU has been busy for a while (clocks ramp up from idle; a cold first
case ran 3x slow on the H100), then time batches of calls (at least `repeats`, and enough to run
BATCH_SECONDS) three times and keep the fastest."""
from __future__ import annotations

import time

WARM_SECONDS = 0.3
BATCHES = 3


BATCH_SECONDS = 0.02  # each timed batch runs at least this long, so one submit + wait (~45 us
                     # through kp on the H100) is under 1% of it


def _warm(call, sync) -> float:
    """Run call+sync until the GPU has been busy WARM_SECONDS; the mean seconds per round."""
    start = time.perf_counter()
    for i in range(200):
        call()
        sync()
        if i >= 1 and time.perf_counter() - start > WARM_SECONDS:
            break
    return (time.perf_counter() - start) / (i + 1)


def _repeats(asked: int, per_call: float, cap: int) -> int:
    return max(asked, min(cap, int(BATCH_SECONDS / max(per_call, 1e-7)) + 1))


def time_vk(fn, *, repeats: int = 20, warmup: int = 2) -> float:
    """Milliseconds of device time per call of `fn` (which records vkbackend work).

    Recording is lazy: nothing runs until the sync, so the calls are recorded first and the time
    from the submit to the end of the wait, divided by the number of calls, is the device's time
    (plus one submit + wait, ~45 us on an H100, spread over >= BATCH_SECONDS of work). Where the
    recording was long enough to be flushed in chunks, the recording time is counted too."""
    import vkbackend as vk
    from vkbackend import stream
    for _ in range(warmup):
        fn()  # also creates the pipelines
    before = vk.stats()["dispatches"]
    fn()
    ops = max(1, vk.stats()["dispatches"] - before)  # dispatches per call
    per_call = _warm(fn, vk.synchronize)
    # as many calls as fill BATCH_SECONDS, but no more than one recorded chunk holds
    repeats = _repeats(repeats, per_call, max(1, stream.FLUSH_AFTER // ops - 1))
    best = float("inf")
    for _ in range(BATCHES):
        flushes = vk.stats()["flushes"]
        start = time.perf_counter()
        for _ in range(repeats):
            fn()  # results are dropped: their buffers come back from the pool, as in a real loop
        t0 = time.perf_counter()
        vk.synchronize()
        t1 = time.perf_counter()
        if vk.stats()["flushes"] != flushes:
            t0 = start  # part ran while recording: count the recording too (an upper bound)
        best = min(best, (t1 - t0) / repeats * 1e3)
    return best


def time_torch(fn, *, repeats: int = 20, warmup: int = 3) -> float:
    """Milliseconds per call of `fn` on the current CUDA device, by CUDA events."""
    import torch
    for _ in range(warmup):
        fn()
    repeats = _repeats(repeats, _warm(fn, torch.cuda.synchronize), 2000)
    best = float("inf")
    for _ in range(BATCHES):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / repeats)
    return best


def gbps(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12
