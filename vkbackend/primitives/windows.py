"""Windows of arrays larger than one shader may bind.

A buffer may be as large as maxBufferSize, but a shader sees at most maxStorageBufferRange bytes
of it at once (4 GiB on NVIDIA, 128 MiB on lavapipe): an array past that (Buffer.big) is worked on
in chunks, each dispatch binding a window of the buffer (kp patch 0010) that starts at a multiple
of minStorageBufferOffsetAlignment and holds the chunk. Elementwise operations, astype,
reductions and flat inclusive scans do so (elementwise.py, reduce.py, scan.py); gathers (take,
integer-array indexing), transposes and copies of strided views in boxes (box_shape: a part of
the iteration space that every big operand sees through one window; indexing.py, layout.py);
scatters and assignments (masked dispatches per part of the destination: scatter.py, setitem.py);
everything else refuses such arrays (Kernel).

Positions stay 32-bit: a buffer holds at most 2**32 - 1 words (maxBufferSize as the pool caps
it), so a word's position, and any offset computed modulo 2**32 and then made relative to a
window, is exact without 64-bit arithmetic.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .. import runtime
from ..runtime.memory import size_class

MAX_BOXES = 4096  # dispatches one op may cut into: past this a layout is refused rather than crawled


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
    """Whether `nbytes` of data get a big buffer (the pool never rounds a bindable size past the
    bind range)."""
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


def bounds(shape, strides, offset: int) -> tuple:
    """The lowest and highest position a strided walk of `shape` (signed strides) reaches."""
    lo = hi = offset
    for extent, stride in zip(shape, strides):
        reach = (extent - 1) * stride
        lo, hi = lo + min(0, reach), hi + max(0, reach)
    return lo, hi


@dataclass
class Reach:
    """How a box's elements spread in one operand: its strides over the iteration space, the most
    words a box may span in it (None: no limit, its buffer is bound whole) and the span added
    outside the box's walk (a gather's range of index * axis stride)."""
    strides: list
    limit: int | None
    fixed: int = 0

    def span(self, extents) -> int:
        return self.fixed + 1 + sum(abs(s) * (e - 1) for s, e in zip(self.strides, extents))


def walk_window(big: bool, box, strides, offset: int) -> tuple:
    """(offset in what is bound, window or None) of an operand's walk of a box: a window of the
    words it reaches where its buffer is big, else the buffer whole."""
    if not big:
        return offset, None
    lo, hi = bounds(box, strides, offset)
    win, _ = window(lo, hi - lo + 1)
    return offset - win[0], win


def box_shape(shape, reaches, align=None) -> list:
    """Extents of a box of the iteration space `shape` within every operand's limit: while some
    operand's span is too large, its most spreading dim is cut to what fits beside the rest (in
    equal parts; a multiple of align[d] where that still fits, for tiled kernels). Each operand's
    fixed span must fit its limit on its own."""
    ext = list(shape)
    while True:
        over = next((r for r in reaches if r.limit is not None and r.span(ext) > r.limit), None)
        if over is None:
            return ext
        d = max(range(len(ext)), key=lambda k: abs(over.strides[k]) * (ext[k] - 1))
        step = abs(over.strides[d])
        if step * (ext[d] - 1) == 0:
            raise AssertionError(f"box_shape: a fixed span of {over.fixed} words past the limit {over.limit}")
        room = over.limit - (over.span(ext) - step * (ext[d] - 1))  # for step * (extent - 1)
        fit = room // step + 1 if room >= 0 else 1
        parts = -(-ext[d] // fit)
        cut = -(-ext[d] // parts)
        a = align[d] if align else 1
        if a > 1 and fit >= a:
            cut = min(fit // a * a, -(-cut // a) * a)
        ext[d] = cut


def boxes(shape, ext, name: str) -> list:
    """(corner, extents) of the boxes of `ext` tiling `shape` in C order; ValueError past
    MAX_BOXES (before any GPU work: call it while planning)."""
    count = math.prod(-(-s // e) for s, e in zip(shape, ext))
    if count > MAX_BOXES:
        raise ValueError(f"{name}: this layout of an array larger than maxStorageBufferRange would take "
                         f"{count} dispatches in windows (at most {MAX_BOXES}); copy it to a simpler "
                         "layout first")
    ranges = [range(0, s, e) for s, e in zip(shape, ext)]
    return [(corner, [min(e, s - c) for c, e, s in zip(corner, ext, shape)])
            for corner in itertools.product(*ranges)]


def pieces(lo: int, hi: int) -> list:
    """[lo, hi] cut into equal parts of at most chunk_words(): (first, count) each."""
    step = chunk_words()
    total = hi - lo + 1
    parts = -(-total // step)
    size = -(-total // parts)
    return [(first, min(size, hi + 1 - first)) for first in range(lo, hi + 1, size)]


def launch(plan, buffers, wins) -> None:
    """A planned dispatch (operands.Plan) binding `wins` (per buffer None or a window)."""
    runtime.get().kernel(plan.shader, plan.defines, plan.workgroup)(buffers, plan.words, (plan.groups,),
                                                                    windows=wins)
