"""Device buffers pooled by size class (a kp.Tensor is slow to create), with a bound on what the
pool keeps and a retry when the device runs out of memory.

Small buffers are mapped: one allocation that shaders use and the host reads in place
(device-local where the device has such memory: resizable BAR, integrated GPUs, lavapipe), so that
reading a small result back records no copy (uploads to them travel in the command buffer). Larger
buffers are device memory only: their transfers go through the stream's staging area (staging.py)."""
from __future__ import annotations

import functools
import mmap
import threading

import numpy as np

WORD = 4  # every supported dtype is 4 bytes wide; buffers are counted in 32-bit words
POISON = 0xFFFFFFFF  # what poisoned buffers are filled with: NaN as float32, -1 as int32


def size_class(words: int) -> int:
    """Round up to 64 words, a power of two up to 1024, then quarter steps (waste <= 25%)."""
    words = max(int(words), 1)
    if words <= 1024:
        return max(64, 1 << (words - 1).bit_length())
    step = 1 << ((words - 1).bit_length() - 3)  # an eighth of the next power of two -> <= 1/4 of words
    return -(-words // step) * step


# Size classes up to this many words are mapped (see the module docstring). Where they are device
# memory seen through a BAR the host reads them uncached, at tens of MB/s: only the smallest class.
MAPPED_WORDS = 64


class Buffer:
    """One pooled kp tensor: device memory only, or (mapped) one host-visible allocation that
    shaders use and the host reads."""
    __slots__ = ("tensor", "words", "mapped", "big", "_host", "__weakref__")

    def __init__(self, tensor, words: int, mapped: bool = False, big: bool = False):
        self.tensor = tensor
        self.words = words
        self.mapped = mapped
        self.big = big  # larger than a shader may bind at once: bound in windows (Kernel)
        self._host = None

    def host(self) -> np.ndarray:
        """A mapped buffer's memory as uint32 words, without a copy (read it after a synchronize
        that downloads it); made once, it stays valid while the tensor lives."""
        assert self.mapped, "only mapped buffers are host-visible; read others with Stream.read"
        if self._host is None:
            self._host = self.tensor.data()
        return self._host


def locked(method):
    """Run the method holding `self.lock`: the runtime's one lock over recording, submits and the
    pool (kp's sequences are not thread-safe, and a thread waiting for the GPU releases the GIL)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)
    return wrapper


def _reserve_host(nbytes: int) -> None:
    """Raise MemoryError unless the process can map `nbytes` more now. A software driver takes
    device memory from the process's address space, and lavapipe crashes (SIGSEGV) instead of
    failing when it cannot (under ulimit -v, or with overcommit off): ask the kernel first."""
    try:
        mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS).close()
    except OSError:
        raise MemoryError(f"the host cannot map {nbytes} more bytes") from None


def _out_of_memory(e: Exception) -> bool:
    if isinstance(e, MemoryError):
        return True
    text = str(e)
    return "OutOfDeviceMemory" in text or "OutOfHostMemory" in text or "out of memory" in text.lower()


class Pool:
    """Buffers by size class. Released buffers are cached for reuse up to `limit` bytes
    (VKBACKEND_POOL_LIMIT, default a quarter of the device's local memory); past it, and when an
    allocation fails, cached buffers are freed (the largest first) and the allocation is tried
    once more. VKBACKEND_MEMORY_LIMIT caps what the pool holds in all, as if the device had that
    much memory."""

    def __init__(self, manager, max_bytes: int, limit: int, capacity: int | None = None, lock=None,
                 host_backed: bool = False, bind_bytes: int | None = None):
        self.lock = lock or threading.RLock()
        self._host_backed = host_backed  # device memory is the process's own (lavapipe)
        self._mgr = manager
        self.max_bytes = max_bytes  # the largest buffer (maxBufferSize, within kp's 2**32 - 1 elements)
        self._bind_bytes = bind_bytes or max_bytes  # the most a shader binds (maxStorageBufferRange)
        self.limit = limit
        self.capacity = capacity  # bytes the pool may hold in all (None: what the device gives)
        self._free: dict[int, list[Buffer]] = {}
        self._classes: dict[int, int] = {}  # words -> size class, for sizes asked before
        self.in_use = 0        # bytes of buffers handed out
        self.cached = 0        # bytes of buffers kept for reuse
        self.peak_in_use = 0
        self.on_release = None  # called with each released buffer's tensor (the stream's fuser)
        self.stats = {"buffers_created": 0, "bytes_created": 0, "reused": 0, "buffers_freed": 0,
                      "allocation_retries": 0}

    def acquire(self, words: int) -> Buffer:
        with self.lock:  # inline, not @locked: every array passes here
            cls = self._classes.get(words)
            if cls is None:
                cls = self._class_of(words)
            free = self._free.get(cls)
            if free:
                self.stats["reused"] += 1
                buf = free.pop()
                self.cached -= cls * WORD
            else:
                buf = self._create(cls)
            self.in_use += cls * WORD
            if self.in_use > self.peak_in_use:
                self.peak_in_use = self.in_use
            return buf

    def _class_of(self, words: int) -> int:
        """size_class(words), checked against the device's largest buffer and remembered (a
        program asks for the same few sizes again and again)."""
        cls = size_class(words)
        if cls * WORD > self._bind_bytes >= words * WORD:
            # rounding up would make a buffer a shader could bind whole too big to bind (windows)
            cls = self._bind_bytes // WORD
        if cls * WORD > self.max_bytes:
            raise MemoryError(f"an array of {words * WORD} bytes exceeds the largest buffer "
                              f"({self.max_bytes} bytes: this device's maxBufferSize, at most 2**32 - 1 words)")
        if len(self._classes) < 65536:
            self._classes[words] = cls
        return cls

    def _create(self, cls: int) -> Buffer:
        from ._kpmod import kp
        need = cls * WORD
        mapped = cls <= MAPPED_WORDS
        if self.capacity is not None and self.in_use + self.cached + need > self.capacity:
            self.stats["allocation_retries"] += 1
            self.trim(max(0, self.capacity - self.in_use - need))
            if self.in_use + self.cached + need > self.capacity:
                raise self._exhausted(need, f"VKBACKEND_MEMORY_LIMIT={self.capacity} bytes")
        for attempt in (0, 1):
            try:
                if self._host_backed:
                    _reserve_host(need)
                kind = kp.TensorTypes.host if mapped else kp.TensorTypes.storage
                tensor = self._mgr.tensor_t(np.zeros(cls, np.uint32), kind)
                break
            except Exception as e:  # noqa: BLE001 - kp raises RuntimeError for vk::OutOfDeviceMemoryError
                if not _out_of_memory(e):
                    raise
                if attempt == 1 or not self.cached:
                    raise self._exhausted(need, "the device's memory") from None
                self.stats["allocation_retries"] += 1
                self.trim(0)
        self.stats["buffers_created"] += 1
        self.stats["bytes_created"] += need
        return Buffer(tensor, cls, mapped, need > self._bind_bytes)

    def _exhausted(self, need: int, what: str) -> MemoryError:
        return MemoryError(f"out of memory allocating {need} bytes: "
                           f"{self.in_use} bytes in use by arrays and {self.cached} cached after trimming, "
                           f"within {what}; free arrays (del) or lower VKBACKEND_POOL_LIMIT")

    def release(self, buf: Buffer) -> None:
        """Take `buf` back for reuse: recorded operations that use it run before any later one
        that reuses it (the stream keeps their order), so it may be handed out at once."""
        with self.lock:
            if self.on_release is not None:
                self.on_release(buf.tensor)
            self.in_use -= buf.words * WORD
            self.cached += buf.words * WORD
            self._free.setdefault(buf.words, []).append(buf)
            if self.cached > self.limit:
                self.trim(self.limit)

    @locked
    def trim(self, keep: int = 0) -> None:
        """Free cached buffers, the largest size classes first, until at most `keep` bytes stay
        cached. The memory goes once no recorded operation holds the buffer any more."""
        for cls in sorted(self._free, reverse=True):
            bufs = self._free[cls]
            while bufs and self.cached > keep:
                bufs.pop(0)
                self.cached -= cls * WORD
                self.stats["buffers_freed"] += 1
            if not bufs:
                del self._free[cls]
            if self.cached <= keep:
                break

    def cached_buffers(self) -> int:
        return sum(len(v) for v in self._free.values())
