"""Lazy recording: dispatches go into a kp.Sequence and run when the host needs data.

A submit + wait costs far more than recording a dispatch (tools/benchmarks/programs.py measures
both), so nothing submits per op: `synchronize` submits everything recorded (and the downloads) once.
Long graphs are flushed in chunks, without waiting, through two sequences used in turn.
Mapped buffers (memory.py) are read in place, with no copy recorded: the submit before the read
ends with a barrier to host reads (which covers every submit before it on the queue). Other
buffers are copied through the staging area (staging.py), in the same submit as the work.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ._kpmod import kp
from .memory import WORD, locked
from .staging import StagingArea

WAIT_SLICE_NS = 50_000_000  # a wait returns to Python this often, so Ctrl-C lands promptly
# Uploads up to this size travel in the command buffer (vkCmdUpdateBuffer allows 64 KiB): no
# staging memory to wait for, so a buffer released a moment ago can take the next small upload.
UPDATE_BYTES = 65536
STAGING_LIMIT = 64 << 20  # bytes of the staging area, unless VKBACKEND_STAGING_LIMIT says otherwise
FLUSH_AFTER = 4096  # recorded operations per chunk (each keeps a kp op alive until its submit completes)
# With the GPU idle (the other sequence finished), what is recorded is submitted, without waiting
# for it, once this long has passed since the last submit: the GPU runs it while the host records
# the next operations, and a submit's host cost is spread over this much recording.
EAGER_SECONDS = 100e-6
# While the GPU is still busy with the other sequence, the host asks its fence again only after
# this fraction of eager_seconds: a fence query per recorded operation costs more than recording it.
RECHECK = 0.25


class Stream:
    def __init__(self, manager, pool, lock=None, staging_limit: int = STAGING_LIMIT):
        self.lock = lock or threading.RLock()
        self._area = StagingArea(manager, staging_limit)
        self._seqs = [manager.sequence(), manager.sequence()]
        self._epochs = [0, 0]   # the submit number each sequence last carried
        self._cur = 0
        self._ops = 0           # operations recorded in the current sequence
        # The last operation recorded was followed by a global barrier. Its second scope is every
        # later command in submission order, later submits included, so a new chunk needs no
        # barrier of its own ahead of its first operation.
        self._ordered = True
        self._barrier = kp.OpGlobalBarrier()
        self._host_barrier = kp.OpHostReadBarrier()
        self._host_epoch = 0    # the newest submit that ended with the host barrier
        self._pool = pool
        self.submitted = 0      # submit count so far == epoch of the newest submit
        self.completed = 0      # every submit up to this epoch has finished
        self._checks = []       # (check, buffers) for the next synchronize: see add_check
        self._interrupted = False  # a wait was interrupted with the current sequence in flight
        self.capture = None     # a recipe capture (primitives/recipes.py) watching what is recorded
        self.fuser = None       # the elementwise chain waiting to be recorded (fusion.py), if fusing
        self.eager = True       # submit early while the GPU idles (False: only flushes and syncs submit)
        self.eager_seconds = EAGER_SECONDS  # VKBACKEND_EAGER_US
        self._next_check = 0.0  # perf_counter() from which the next eager submit is considered
        self.stats = {"submits": 0, "dispatches": 0, "uploads": 0, "downloads": 0, "flushes": 0, "fills": 0,
                      "eager_submits": 0}

    @property
    def staging_bytes(self) -> int:
        return self._area.words * WORD

    @property
    def next_epoch(self) -> int:
        return self.submitted + 1

    def _begin_op(self, eager: bool = True, barrier: bool | None = True, chain: bool = True):
        """The sequence to record the next operation into (flushing a full chunk first, or what
        waits while the GPU idles, unless the caller is about to submit anyway), after the
        waiting elementwise chain unless `chain` is False (an operation that touches none of its
        buffers). `barrier`: the operation ends with a global barrier (kp's fills, updates and
        copies do), False for a dispatch without one, None for one that writes nothing (the
        order stays as it was). Every operation passes here: the common case is a few tests."""
        if chain:
            fuser = self.fuser
            if fuser is not None and fuser.ops:
                fuser.emit(self)
        ops = self._ops
        if ops >= FLUSH_AFTER:
            self.flush(chain=False)
            ops = 0
        elif eager and ops and self.eager:
            now = time.perf_counter()
            if now >= self._next_check:
                if self._idle():
                    self.flush(eager=True, chain=False)
                    ops = 0
                else:
                    self._next_check = now + self.eager_seconds * RECHECK
        seq = self._seqs[self._cur]
        if ops == 0 and not self._ordered:
            # Orders this chunk after what an unbarriered last dispatch of the previous one wrote.
            seq.record(self._barrier)
            self._ordered = True
        if barrier is not None:
            self._ordered = barrier
        self._ops = ops + 1
        return seq

    def emit_chain(self) -> None:
        """Record the waiting elementwise chain, if any (holding the lock)."""
        fuser = self.fuser
        if fuser is not None and fuser.ops:
            fuser.emit(self)

    def _record_now(self, pipeline, tensors, push: bytes, groups) -> None:
        """Record a dispatch followed by a global barrier (the fuser's chains)."""
        self._begin_op().record_dispatch(pipeline, tensors, push, groups[0], groups[1], groups[2], True)
        self.stats["dispatches"] += 1

    def dispatch(self, pipeline, tensors, push: bytes, groups, barrier: bool = True, windows=None,
                 fuse=None) -> None:
        """Record a dispatch of `pipeline` over `tensors`, one native call; `barrier=False` lets
        the next dispatch run beside it (the caller guarantees they touch disjoint data), as QR's
        look-ahead panel does; `windows`: (byte offset, byte range) per tensor (range 0: all);
        `fuse`: an elementwise dispatch's fusion.descriptor (it may wait to join a chain)."""
        with self.lock:  # inline, not @locked: every op passes here
            if windows is not None:
                if self.capture is not None:
                    self.capture.other()  # windows are not replayed
                self._begin_op(barrier=barrier).record_dispatch(pipeline, tensors, push, groups[0], groups[1],
                                                                groups[2], barrier, windows)
                self.stats["dispatches"] += 1
            else:
                if self.capture is not None:
                    self.capture.dispatch(pipeline, tensors, push, groups, barrier, fuse)
                if fuse is not None and self.fuser is not None:
                    self.fuser.add(self, pipeline, tensors, push, groups, fuse)
                    return
                self._begin_op(barrier=barrier).record_dispatch(pipeline, tensors, push, groups[0], groups[1],
                                                                groups[2], barrier)
                self.stats["dispatches"] += 1

    @staticmethod
    def native_steps(steps):
        """A recipe's steps (pipeline, roles, push, groups, barrier, fuse) as one kp.Steps for
        record_native; None where there are none or one may join an elementwise chain."""
        if not steps or any(fuse is not None for *_, fuse in steps):
            return None
        return kp.Steps([(pipe, list(roles), push, *groups, barrier)
                         for pipe, roles, push, groups, barrier, _ in steps])

    def record_native(self, steps, tensors: list, barrier: bool) -> None:
        """Record a replayed recipe's dispatches (primitives/recipes.py), none of them waiting to
        join an elementwise chain, with no capture running: `steps` is their kp.Steps, recorded over
        `tensors` in one native call; `barrier`: the last one ends with a global barrier."""
        with self.lock:
            n = len(steps)
            self._begin_op(barrier=barrier).record_steps(steps, tensors)
            self._ops += n - 1  # one chunk holds them all (FLUSH_AFTER is a soft bound)
            self.stats["dispatches"] += n

    def record_steps(self, steps, tensors: list) -> None:
        """Record a replayed recipe's dispatches one by one (record_native where no step may
        join an elementwise chain), with no capture running: each step is (pipeline, roles,
        push, groups, barrier, fuse), its roles indexing `tensors`."""
        with self.lock:
            fuser = self.fuser
            begin = self._begin_op
            recorded = 0
            for pipeline, roles, push, groups, barrier, fuse in steps:
                if fuse is not None and fuser is not None:
                    fuser.add(self, pipeline, [tensors[r] for r in roles], push, groups, fuse)
                    continue
                begin(barrier=barrier).record_dispatch(pipeline, [tensors[r] for r in roles], push,
                                                       groups[0], groups[1], groups[2], barrier)
                recorded += 1
            self.stats["dispatches"] += recorded

    @locked
    def fill(self, buf, word: int) -> None:
        """Record a fill of the whole buffer with one 32-bit word (a transfer, no shader)."""
        if self.capture is not None:
            self.capture.fill(buf.tensor, word)
        fuser = self.fuser  # a fresh buffer's poisoning need not end the chain
        self._begin_op(chain=fuser is None or fuser.touches(buf.tensor)).record_fill(buf.tensor, word)
        self.stats["fills"] += 1

    @locked
    def upload(self, buf, words) -> None:
        """Copy `words` (uint32) into the buffer, in order with what is recorded: up to
        UPDATE_BYTES inside the command buffer itself, else through the staging area (written
        now, copied when the submit runs; in pieces of the area's size past it)."""
        if self.capture is not None:
            self.capture.other()
        if len(words) * WORD <= UPDATE_BYTES:
            self._begin_op().record_update(buf.tensor, words.tobytes())
        else:
            area = self._area
            for pos in range(0, len(words), area.limit):
                piece = words[pos:pos + area.limit]
                off = self._stage(len(piece))
                area.host[off:off + len(piece)] = piece
                self._begin_op().record_copy(area.tensor, buf.tensor, off * WORD, pos * WORD, len(piece) * WORD)
                area.epoch = self.next_epoch
        self.stats["uploads"] += 1

    def _stage(self, words: int) -> int:
        """The staging area's word offset of `words` words for a copy recorded next; where they
        do not fit, the area starts over once every copy through it has completed (a submit and
        wait of what is recorded, if one is still to run)."""
        area = self._area
        if not area.fits(words):
            if area.epoch > self.completed:
                self._drain()
            area.restart(words)
        return area.take(words)

    def _drain(self, host: bool = False) -> None:
        """Submit what is recorded (host=True: ending with the barrier to host reads, submitted
        even alone) and wait for every submit: synchronize without its downloads and checks."""
        if self._interrupted:
            self._settle()
        self.emit_chain()
        if self._ops or host:
            self._submit(wait=True, host=host)
        else:
            self._await_other()
            self.completed = self.submitted

    @locked
    def read(self, buf, first: int, count: int) -> np.ndarray:
        """Words first..first+count of the buffer, after everything recorded has run (as
        synchronize): read in place when it is mapped, else copied through the staging area in
        the same submit as the work (a piece of the area's size per submit past it)."""
        if buf.mapped:
            self.synchronize(downloads=[buf])
            return buf.host()[first:first + count].copy()
        out = np.empty(count, np.uint32)
        area = self._area
        for pos in range(0, count, area.limit):
            n = min(area.limit, count - pos)
            off = self._stage(n)
            self._begin_op(eager=False).record_copy(buf.tensor, area.tensor, (first + pos) * WORD, off * WORD,
                                                    n * WORD)
            area.epoch = self.next_epoch
            self.stats["downloads"] += 1
            self.synchronize(host=True)
            out[pos:pos + n] = area.host[off:off + n]
        return out

    def _idle(self) -> bool:
        """Whether the other sequence's submit (the only one that can be in flight) has finished;
        a fence query, no wait."""
        if not self._seqs[1 - self._cur].wait(0):
            return False
        self.completed = max(self.completed, self._epochs[1 - self._cur])
        return True

    def _await_other(self) -> None:
        """Wait for the other sequence's submit if it is still running; it is complete after.
        (A sequence is waited for before `completed` passes its epoch: no fence to ask then.)"""
        other = 1 - self._cur
        if self._epochs[other] > self.completed:
            self._wait(self._seqs[other])
            self.completed = max(self.completed, self._epochs[other])

    def _submit(self, wait: bool, host: bool = False) -> None:
        """Submit the current sequence; host=True: it ends with the barrier to host reads."""
        seq = self._seqs[self._cur]
        self.submitted += 1
        if host:
            self._host_epoch = self.submitted
        self._epochs[self._cur] = self.submitted
        self._next_check = time.perf_counter() + self.eager_seconds
        self.stats["submits"] += 1
        self._ops = 0
        seq.submit(host)
        if not wait:
            return
        try:
            self._wait(seq)
        except BaseException:  # Ctrl-C: the work runs on; the next operation settles it first
            self._interrupted = True
            self._ops = FLUSH_AFTER  # so that the next recording goes through flush()
            raise
        self._await_other()
        self.completed = self.submitted
        seq.clear()  # drops the recorded ops and the pipelines and buffers they held

    @staticmethod
    def _wait(seq) -> None:
        """Wait for a submitted sequence in slices, so that a KeyboardInterrupt (raised between
        them) lands within WAIT_SLICE_NS whatever the work's length."""
        while not seq.wait(WAIT_SLICE_NS):
            pass

    def _settle(self) -> None:
        """After an interrupted wait: finish waiting for the sequence left in flight (it holds no
        unsubmitted work) and make it the empty current one again."""
        seq = self._seqs[self._cur]
        self._wait(seq)
        self._await_other()
        self.completed = max(self.completed, self._epochs[self._cur])
        seq.clear()
        self._ops = 0
        self._interrupted = False

    @locked
    def flush(self, eager: bool = False, chain: bool = True) -> None:
        """Submit what is recorded without waiting, and record on into the other sequence; the
        waiting elementwise chain too unless `chain` is False (it is recorded after anyway)."""
        if self._interrupted:
            self._settle()
        if chain:
            self.emit_chain()
        if self._ops == 0:
            return
        other = 1 - self._cur
        self._await_other()  # the other sequence must finish before it is re-recorded
        self._seqs[other].clear()
        self._submit(wait=False)
        self._cur = other
        self.stats["eager_submits" if eager else "flushes"] += 1

    @locked
    def replay(self, times: int) -> list:
        """Run what is recorded `times` times, one submit + wait each, then finish as synchronize
        does; the seconds each submit + wait took ([] when nothing is recorded). For benchmarks
        of stateless work only: the same dispatches on the same buffers back to back, with no
        host recording in between. Work that carries state from one recording to the next (the
        chained scan's tile-state epochs) is wrong when run twice."""
        if self.capture is not None:
            self.capture.other()
        if self._interrupted:
            self._settle()
        self.emit_chain()
        if not self._ops:
            return []
        self._await_other()
        if not self._ordered:  # each eval after the previous one's writes
            self._seqs[self._cur].record(self._barrier)
            self._ordered = True
        self._seqs[self._cur].record(self._host_barrier)  # once: each eval submits the same commands
        took = []
        for i in range(times):
            t0 = time.perf_counter()
            if i + 1 < times:
                self._seqs[self._cur].eval()
            else:
                self._submit(wait=True)  # its host barrier is recorded above, once
                self._host_epoch = self.submitted
            took.append(time.perf_counter() - t0)
        return took

    @locked
    def add_check(self, check, buffers=()) -> None:
        """Have the next synchronize download `buffers` too and then call `check()` once: a
        post-sync check (the checked mode of device indices). What it raises comes out of that
        synchronize, after the wait, with everything recorded complete."""
        self._checks.append((check, tuple(buffers)))

    @locked
    def synchronize(self, downloads=(), host: bool = False) -> None:
        """Run everything recorded and wait once, then run the post-sync checks (the first to
        raise ends it; all are dropped either way). `downloads`: mapped buffers the host reads
        next; host=True: the host reads what copies wrote (Stream.read)."""
        if self._interrupted:
            self._settle()
        self.emit_chain()
        checks, self._checks = self._checks, []
        downloads = list(downloads) + [b for _, bufs in checks for b in bufs]
        if self.capture is not None:
            self.capture.other()
        for buf in downloads:
            assert buf.mapped, "synchronize downloads mapped buffers only; Stream.read copies others"
            host = True
            self.stats["downloads"] += 1
        if not (self._ops or checks or self.completed < self.submitted or (host and self._host_epoch < self.submitted)):
            return  # everything submitted has completed (and ended with the host barrier if asked)
        # the submit ends with the barrier to host reads (alone, for earlier submits' writes)
        host = host and (self._ops > 0 or self._host_epoch < self.submitted)
        try:
            self._drain(host)
        except BaseException:
            self._checks[:0] = checks  # the interrupted sync's checks run at the next one
            raise
        for check, _ in checks:
            check()
