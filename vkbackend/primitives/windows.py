"""Windows of arrays larger than one shader may bind.

A buffer may be as large as maxBufferSize, but a shader sees at most maxStorageBufferRange bytes
of it at once (4 GiB on NVIDIA, 128 MiB on lavapipe): an array past that (Buffer.big) is worked on
in chunks, each dispatch binding a window of the buffer (kp patch 0010) that starts at a multiple
of minStorageBufferOffsetAlignment and holds the chunk. Elementwise operations, astype,
reductions and flat inclusive scans do so (elementwise.py, reduce.py, scan.py); everything else
refuses such arrays (Kernel).
"""
from __future__ import annotations

from .. import runtime
from ..runtime.memory import size_class


def align_words() -> int:
    return max(1, runtime.get().device.min_storage_buffer_offset_alignment // 4)


def chunk_words() -> int:
    """Elements (32-bit words) one window holds for any start of the data: the bind range less
    one alignment step, a multiple of that step."""
    dev = runtime.get().device
    align = align_words()
    return (dev.max_storage_buffer_range // 4 - align) // align * align


def piece_words(range_bytes: int | None = None) -> int:
    """Elements of a chunk copied into a buffer of its own (a scan's piece): the pool rounds its
    size up to a size class, and that buffer is bound whole, so the class must fit the bind range
    too (NVIDIA's 2**32 - 1 bytes is no class: 896M words are the most)."""
    if range_bytes is None:
        range_bytes = runtime.get().device.max_storage_buffer_range
    align = align_words()
    words = (range_bytes // 4) // align * align
    while size_class(words) * 4 > range_bytes:
        words = (words - words // 16) // align * align
    return words


def is_big(nbytes: int) -> bool:
    return nbytes > runtime.get().device.max_storage_buffer_range


def bind(buffer, first: int, count: int) -> tuple:
    """(window or None, the data's offset in what is bound) for `count` words from word `first` of
    a buffer: a window only where the buffer is big, else all of it with the data at `first`."""
    return window(first, count) if buffer.big else (None, first)


def window(first: int, count: int) -> tuple:
    """((first word of the window, words), the data's offset inside it) for `count` words from
    word `first` of a buffer."""
    align = align_words()
    start = first - first % align
    return (start, first - start + count), first - start
