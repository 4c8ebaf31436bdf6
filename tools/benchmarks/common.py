"""Timing helpers shared by the benchmark modules.

Both sides time batches of calls (at least `repeats`, and enough to run BATCH_SECONDS each) until
the fastest batch stops improving, and keep the fastest. A fixed warm-up is not enough: after a few
seconds of host-side work (compiling, numpy references) the H100's clocks drop, and a 64M scan
timed 0.3 s after 5 s idle ran at 739 GB/s against 2010 when the GPU was busy (the earlier
"slowdown after other benchmarks in the same process" was this); recovery takes about a second.
"""
from __future__ import annotations

import contextlib
import time

WARM_SECONDS = 0.05  # calls with a sync each, to estimate the time per call
BATCH_SECONDS = 0.02  # each timed batch runs at least this long, so one submit + wait (~45 us
                     # through kp on the H100) is under 1% of it
SETTLE_SECONDS = 1.0  # batches run at least this long in all...
PATIENCE = 3  # ...and until this many batches in a row were not 1% faster than the best
MAX_SECONDS = 6.0
REPLAYS = 4  # submits of one recorded batch (time_vk's replay)
WARM_UP_SECONDS = 1.0  # of large matmuls before a side's first case: clocks up from idle


def warm_up_vk() -> None:
    """Keep the GPU busy for WARM_UP_SECONDS, so the first case does not meet idle clocks (an
    idle H200 gave the programs 0.4x torch where a warm one gave 0.6-1.0x)."""
    import numpy as np
    import vkbackend as vk
    a = vk.asarray(np.ones((2048, 2048), np.float32))
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_UP_SECONDS:
        (a @ a).sum().numpy()


def warm_up_torch() -> None:
    """warm_up_vk's torch counterpart, in the torch worker before its first case."""
    import torch
    a = torch.ones((2048, 2048), device="cuda")
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_UP_SECONDS:
        (a @ a).sum().item()


def _warm(call, sync) -> float:
    """Run call+sync for WARM_SECONDS (at least twice); the mean seconds per round."""
    start = time.perf_counter()
    for i in range(200):
        call()
        sync()
        if i >= 1 and time.perf_counter() - start > WARM_SECONDS:
            break
    return (time.perf_counter() - start) / (i + 1)


def _repeats(asked: int, per_call: float, cap: int) -> int:
    return max(asked, min(cap, int(BATCH_SECONDS / max(per_call, 1e-7)) + 1))


def _settled_best(batch) -> float:
    """The second fastest of repeated `batch()` timings (ms per call), once the fastest stops
    improving: robust to a single outlier batch."""
    times, stale, start = [], 0, time.perf_counter()
    while True:
        ms = batch()
        stale = 0 if not times or ms < 0.99 * min(times) else stale + 1
        times.append(ms)
        elapsed = time.perf_counter() - start
        if (stale >= PATIENCE and elapsed >= SETTLE_SECONDS) or elapsed >= MAX_SECONDS:
            return sorted(times)[1] if len(times) > 1 else times[0]


@contextlib.contextmanager
def poisoned():
    """vkbackend's fresh buffers filled with all-ones bits (as in the tests) while a benchmark
    checks its result: a kernel that writes nothing must not pass by reusing a pooled buffer that
    still holds an earlier case's identical result (a scan whose tiles all exited at once once
    timed 36 TB/s and passed its check that way). Not during timing: the fill is a dispatch."""
    from vkbackend import runtime
    rt = runtime.get()
    saved, rt.poison = rt.poison, True
    try:
        yield
    finally:
        rt.poison = saved


def time_vk(fn, *, repeats: int = 20, warmup: int = 2, replay: bool = False, fuse: bool = False) -> float:
    """Milliseconds of device time per call of `fn` (which records vkbackend work), with the
    stream's eager submits off: batches are recorded whole, then timed from submit to wait.
    Elementwise fusion is off unless `fuse` (then each call's chain is recorded at its end):
    calls whose results are dropped would otherwise join one chain that stores none of them.

    Recording is lazy: nothing runs until the sync, so the calls are recorded first and the time
    from the submit to the end of the wait, divided by the number of calls, is the device's time
    (plus one submit + wait, ~45 us on an H100, spread over >= BATCH_SECONDS of work). Where the
    recording was long enough to be flushed in chunks, the recording time is counted too.

    replay=True (stateless work only, see Stream.replay) submits each recorded batch REPLAYS
    times back to back and keeps the fastest: where recording an op from Python takes longer
    than the GPU runs it (a convolution's packing, kernel and allocations), the GPU otherwise
    idles between batches and its clocks drop (H100: one packed float16 convolution timed 62
    and 86 TFLOP/s in two runs). torch's asynchronous launches keep its GPU busy the same way."""
    from vkbackend import runtime
    stream = runtime.get().stream
    stream.synchronize()
    saved = stream.eager, stream.fuser
    stream.eager = False
    if not fuse:
        stream.fuser = None
    elif stream.fuser is not None:
        call = fn

        def fn():
            out = call()
            with stream.lock:
                stream.emit_chain()
            return out
    try:
        return _time_vk(fn, repeats, warmup, replay)
    finally:
        stream.synchronize()
        stream.eager, stream.fuser = saved


def _time_vk(fn, repeats: int, warmup: int, replay: bool) -> float:
    import vkbackend as vk
    from vkbackend import runtime
    from vkbackend.runtime import stream
    for _ in range(warmup):
        fn()  # also creates the pipelines
    before = vk.stats()["dispatches"]
    fn()
    ops = max(1, vk.stats()["dispatches"] - before)  # dispatches per call
    per_call = _warm(fn, vk.synchronize)
    # as many calls as fill BATCH_SECONDS, but no more than one recorded chunk holds
    repeats = _repeats(repeats, per_call, max(1, stream.FLUSH_AFTER // ops - 1))

    rt = runtime.get()

    def batch() -> float:
        flushes = vk.stats()["flushes"]
        start = time.perf_counter()
        for _ in range(repeats):
            fn()  # results are dropped: their buffers come back from the pool, as in a real loop
        if replay and vk.stats()["flushes"] == flushes:
            return min(rt.stream.replay(REPLAYS)) / repeats * 1e3
        t0 = time.perf_counter()
        vk.synchronize()
        t1 = time.perf_counter()
        if vk.stats()["flushes"] != flushes:
            t0 = start  # part ran while recording: count the recording too (an upper bound)
        return (t1 - t0) / repeats * 1e3
    return _settled_best(batch)


def time_torch(fn, *, repeats: int = 20, warmup: int = 3) -> float:
    """Milliseconds per call of `fn` on the current CUDA device, by CUDA events."""
    import torch
    for _ in range(warmup):
        fn()
    repeats = _repeats(repeats, _warm(fn, torch.cuda.synchronize), 2000)

    def batch() -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / repeats
    return _settled_best(batch)


def gbps(nbytes: float, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def tflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e12
