"""Device buffers pooled by size class: a kp.Tensor is slow to create (~4 ms for 4 MB on NVIDIA)."""
from __future__ import annotations

import itertools

import numpy as np

WORD = 4  # every supported dtype is 4 bytes wide; buffers are counted in 32-bit words


def size_class(words: int) -> int:
    """Round up to 64 words, a power of two up to 1024, then quarter steps (waste <= 25%)."""
    words = max(int(words), 1)
    if words <= 1024:
        return max(64, 1 << (words - 1).bit_length())
    step = 1 << ((words - 1).bit_length() - 3)  # an eighth of the next power of two -> <= 1/4 of words
    return -(-words // step) * step


class Buffer:
    """One pooled kp device tensor (device-local memory plus its host-visible staging copy)."""
    __slots__ = ("tensor", "words", "serial", "staged_epoch", "__weakref__")
    _serials = itertools.count()

    def __init__(self, tensor, words: int):
        self.tensor = tensor
        self.words = words
        self.serial = next(Buffer._serials)
        self.staged_epoch = -1  # the submit whose copy of the staging memory is still pending

    def staging(self) -> np.ndarray:
        """The mapped staging memory as uint32 words (no copy)."""
        return self.tensor.data()


class Pool:
    def __init__(self, manager, max_bytes: int):
        self._mgr = manager
        self._max_bytes = max_bytes
        self._free: dict[int, list[Buffer]] = {}
        self._deferred: list[Buffer] = []
        self.stats = {"buffers_created": 0, "bytes_created": 0, "reused": 0}

    def acquire(self, words: int) -> Buffer:
        cls = size_class(words)
        if cls * WORD > self._max_bytes:
            raise MemoryError(f"an array of {words * WORD} bytes exceeds this device's largest storage buffer "
                              f"({self._max_bytes} bytes, maxStorageBufferRange)")
        free = self._free.get(cls)
        if free:
            self.stats["reused"] += 1
            return free.pop()
        import kp
        tensor = self._mgr.tensor_t(np.zeros(cls, np.uint32), kp.TensorTypes.device)
        self.stats["buffers_created"] += 1
        self.stats["bytes_created"] += cls * WORD
        return Buffer(tensor, cls)

    def release(self, buf: Buffer, completed_epoch: int) -> None:
        # A buffer whose staging memory is still to be copied by an unfinished submit must not be
        # handed out (and its staging overwritten) until that submit completes.
        if buf.staged_epoch > completed_epoch:
            self._deferred.append(buf)
        else:
            self._free.setdefault(buf.words, []).append(buf)

    def collect(self, completed_epoch: int) -> None:
        pending, self._deferred = self._deferred, []
        for buf in pending:
            self.release(buf, completed_epoch)

    def cached_buffers(self) -> int:
        return sum(len(v) for v in self._free.values()) + len(self._deferred)

    def clear(self) -> None:
        """Drop the free buffers (the memory goes once no pipeline or sequence holds them)."""
        self._free.clear()
