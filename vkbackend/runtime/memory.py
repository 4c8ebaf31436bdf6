"""Device buffers pooled by size class (a kp.Tensor is slow to create), with a bound on what the
pool keeps and a retry when the device runs out of memory.

Small buffers are mapped: one allocation that shaders use and the host reads in place
(device-local where the device has such memory: resizable BAR, integrated GPUs, lavapipe), so that
reading a small result back records no copy (uploads to them travel in the command buffer). Larger
buffers are device memory only: their transfers go through the stream's staging area (staging.py).

Buffers up to SUBALLOC_BYTES (VKBACKEND_SUBALLOC_LIMIT) are pieces of slabs, larger allocations
carved into pieces of one size class (kp patch 0014: a slice binds, fills and copies only its
range): a program of many small arrays makes a few allocations, not one each (drivers bound their
number, and creating a buffer costs far more than slicing one)."""
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
# Size classes up to this many bytes are slab pieces (the default: VKBACKEND_SUBALLOC_LIMIT sets
# it per runtime). A class's first slab holds SLAB_FIRST pieces and each next one twice as many,
# up to SLAB_BYTES: few allocations for many arrays, little unused memory for a few.
SUBALLOC_BYTES = 64 << 10
SLAB_FIRST = 4
SLAB_BYTES = 1 << 20
# A piece's offset is a multiple of its size; Vulkan bounds minStorageBufferOffsetAlignment by 256
# bytes, so classes of whole multiples of 256 bytes bind at any device's alignment.
PIECE_ALIGN = 256


class Buffer:
    """One pooled kp tensor: device memory only, or (mapped) one host-visible allocation that
    shaders use and the host reads; a whole allocation or a piece of a slab."""
    __slots__ = ("tensor", "words", "mapped", "big", "slab", "_host", "__weakref__")

    def __init__(self, tensor, words: int, mapped: bool = False, big: bool = False, slab=None):
        self.tensor = tensor
        self.words = words
        self.mapped = mapped
        self.big = big  # larger than a shader may bind at once: bound in windows (Kernel)
        self.slab = slab  # the _Slab it is a piece of, or None
        self._host = None

    def host(self) -> np.ndarray:
        """A mapped buffer's memory as uint32 words, without a copy (read it after a synchronize
        that downloads it); made once, it stays valid while the tensor lives."""
        assert self.mapped, "only mapped buffers are host-visible; read others with Stream.read"
        if self._host is None:
            self._host = self.tensor.data()
        return self._host


class _Slab:
    """One allocation carved into pieces of one size class, front to back."""
    __slots__ = ("tensor", "words", "pieces", "carved", "free")

    def __init__(self, tensor, words: int, pieces: int):
        self.tensor = tensor
        self.words = words    # of each piece
        self.pieces = pieces  # it holds
        self.carved = 0       # pieces handed out so far
        self.free = 0         # of those, pieces back in the pool's free list

    def carve(self, mapped: bool) -> Buffer:
        piece = Buffer(self.tensor.slice(self.carved * self.words, self.words), self.words, mapped, slab=self)
        self.carved += 1
        return piece


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
    allocation fails, cached buffers and slabs none of whose pieces is in use are freed (the
    largest size classes first) and the allocation is tried once more. VKBACKEND_MEMORY_LIMIT
    caps what the pool holds in all, as if the device had that much memory."""

    def __init__(self, manager, max_bytes: int, limit: int, capacity: int | None = None, lock=None,
                 host_backed: bool = False, bind_bytes: int | None = None, suballoc_bytes: int | None = None):
        self.lock = lock or threading.RLock()
        self._host_backed = host_backed  # device memory is the process's own (lavapipe)
        self._mgr = manager
        self.max_bytes = max_bytes  # the largest buffer (maxBufferSize, within kp's 2**32 - 1 elements)
        self._bind_bytes = bind_bytes or max_bytes  # the most a shader binds (maxStorageBufferRange)
        # size classes up to this many bytes are slab pieces (fixed for the pool's life: a class
        # is pieces or whole buffers, never both)
        self._suballoc = min(SUBALLOC_BYTES if suballoc_bytes is None else suballoc_bytes, self._bind_bytes)
        self.limit = limit
        self.capacity = capacity  # bytes the pool may hold in all (None: what the device gives)
        self._free: dict[int, list[Buffer]] = {}
        self._slabs: dict[int, list[_Slab]] = {}  # size class -> its slabs, the one being carved last
        self._classes: dict[int, int] = {}  # words -> size class, for sizes asked before
        self.held = 0          # bytes of device memory the pool holds: buffers and slabs
        self.in_use = 0        # bytes of buffers handed out
        self.peak_in_use = 0
        self.on_release = None  # called with each released buffer's tensor (the stream's fuser)
        self.stats = {"buffers_created": 0, "bytes_created": 0, "reused": 0, "buffers_freed": 0,
                      "allocation_retries": 0, "slabs_created": 0, "pieces_carved": 0}

    @property
    def cached(self) -> int:
        """Bytes held but not handed out: released buffers and slab space not in use."""
        return self.held - self.in_use

    @property
    def slab_bytes(self) -> int:
        return sum(s.words * s.pieces for slabs in self._slabs.values() for s in slabs) * WORD

    def acquire(self, words: int) -> Buffer:
        with self.lock:  # inline, not @locked: every array passes here
            cls = self._classes.get(words)
            if cls is None:
                cls = self._class_of(words)
            free = self._free.get(cls)
            if free:
                self.stats["reused"] += 1
                buf = free.pop()
                if buf.slab is not None:
                    buf.slab.free -= 1
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
        """A new buffer of size class `cls`: the next piece of the class's slab (a new slab when
        it is full), or a whole allocation for classes past the pool's sub-allocation limit."""
        mapped = cls <= MAPPED_WORDS
        nbytes = cls * WORD
        if nbytes > self._suballoc or nbytes % PIECE_ALIGN:
            tensor = self._allocate(cls, mapped)
            return Buffer(tensor, cls, mapped, nbytes > self._bind_bytes)
        slabs = self._slabs.setdefault(cls, [])
        if not slabs or slabs[-1].carved == slabs[-1].pieces:
            grown = 2 * slabs[-1].pieces if slabs else SLAB_FIRST
            pieces = max(1, min(grown, SLAB_BYTES // nbytes))
            try:
                tensor = self._allocate(cls * pieces, mapped)
            except MemoryError:
                if pieces == 1:
                    raise
                pieces = 1  # no room for a whole slab: a slab of this one piece, if that fits
                tensor = self._allocate(cls, mapped)
            slabs.append(_Slab(tensor, cls, pieces))
            self.stats["slabs_created"] += 1
        self.stats["pieces_carved"] += 1
        return slabs[-1].carve(mapped)

    def _allocate(self, words: int, mapped: bool):
        """A kp tensor of `words` words, within the capacity (trimming the cache and retrying
        once when the device runs out)."""
        from ._kpmod import kp
        need = words * WORD
        if self.capacity is not None and self.held + need > self.capacity:
            self.stats["allocation_retries"] += 1
            self.trim(max(0, self.capacity - self.in_use - need))
            if self.held + need > self.capacity:
                raise self._exhausted(need, f"VKBACKEND_MEMORY_LIMIT={self.capacity} bytes")
        for attempt in (0, 1):
            try:
                if self._host_backed:
                    _reserve_host(need)
                kind = kp.TensorTypes.host if mapped else kp.TensorTypes.storage
                tensor = self._mgr.tensor_t(np.zeros(words, np.uint32), kind)
                break
            except Exception as e:  # noqa: BLE001 - kp raises RuntimeError for vk::OutOfDeviceMemoryError
                if not _out_of_memory(e):
                    raise
                if attempt == 1 or not self.cached:
                    raise self._exhausted(need, "the device's memory") from None
                self.stats["allocation_retries"] += 1
                self.trim(0)
        self.held += need
        self.stats["buffers_created"] += 1
        self.stats["bytes_created"] += need
        return tensor

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
            if buf.slab is not None:
                buf.slab.free += 1
            self._free.setdefault(buf.words, []).append(buf)
            if self.held - self.in_use > self.limit:
                self.trim(self.limit)

    @locked
    def trim(self, keep: int = 0) -> None:
        """Free cached buffers, and slabs none of whose pieces is in use, the largest size
        classes first, until at most `keep` bytes stay cached (or nothing more can go). The
        memory goes once no recorded operation holds the buffer (or a piece) any more."""
        for cls in sorted(set(self._free) | set(self._slabs), reverse=True):
            if self.cached <= keep:
                break
            if cls in self._slabs:
                self._trim_slabs(cls, keep)
                continue
            bufs = self._free[cls]
            while bufs and self.cached > keep:
                bufs.pop(0)
                self.held -= cls * WORD
                self.stats["buffers_freed"] += 1
            if not bufs:
                del self._free[cls]

    def _trim_slabs(self, cls: int, keep: int) -> None:
        slabs = self._slabs[cls]
        idle = [s for s in slabs if s.free == s.carved]
        for slab in idle:
            if self.cached <= keep:
                break
            slabs.remove(slab)
            if slab.carved:
                self._free[cls] = [b for b in self._free[cls] if b.slab is not slab]
            self.held -= slab.words * slab.pieces * WORD
            self.stats["buffers_freed"] += 1
        if not slabs:
            del self._slabs[cls]
        if not self._free.get(cls, True):
            del self._free[cls]

    def cached_buffers(self) -> int:
        return sum(len(v) for v in self._free.values())
