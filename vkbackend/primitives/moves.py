"""Elements of any dtype moved by their bit patterns: the GLSL type in which the kernels that only
move elements (copy.comp, transpose.comp, gather_scatter.comp's gathers and scatters) read and
write them, so that copies, transposes, joins, gathers and scatters take every dtype an array
holds, exactly (float64 NaN payloads and -0.0 included: no float ever loads them).

  32-bit dtypes and bool   uint (one word each; the kernels' default, so their variants stay as
                           they were)
  8/16-bit integers        uint8_t / uint16_t (VK_WIDE: 8/16-bit storage, which these dtypes need
                           anyway)
  64-bit dtypes            uvec2 (two words: core GLSL, so float64 moves where the device has
                           shaderFloat64 but not shaderInt64)

float16 is held on devices without 16-bit storage too: the ops that take it on any device move it
through elementwise.half_bits, one half per word; take and getitem's gathers and copies move it as
uint16_t, its itemsize's type, where the device has 16-bit storage (dtypes.half_words). Where an elementwise function must pick 64-bit elements
(tril's where, a masked assignment) it picks them as pairs of uint32 words (pairs: a view).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..array import Array

_TYPES = {1: "uint8_t", 2: "uint16_t", 8: "uvec2"}


def per_word(d: np.dtype) -> bool:
    """Whether d's elements are one 32-bit word each (the 32-bit dtypes and bool)."""
    return d.itemsize == 4 or d == dtypes.bool_


def move_type(d: np.dtype) -> str:
    """The GLSL type d's elements move as (a WIDE dtype's or a word's)."""
    return "uint" if per_word(d) else _TYPES[d.itemsize]


def move_defines(d: np.dtype, key: str) -> dict:
    """{key: move_type(d)} and the define that enables its type; nothing for one word an
    element (the kernels' default: their 32-bit variants keep their define sets)."""
    if per_word(d):
        return {}
    t = _TYPES[d.itemsize]
    return {key: t, **({"VK_WIDE": 1} if d.itemsize < 4 else {})}


def nbytes(n: int, d: np.dtype) -> int:
    """Bytes of the whole words that hold n elements of d (what windows.is_big weighs)."""
    return 4 * dtypes.words(n, d)


def check_windowed(d: np.dtype, name: str) -> None:
    """Arrays past maxStorageBufferRange are worked on in windows of 32-bit words (windows.py):
    ValueError, before any GPU work, for a dtype that is not one element per word."""
    if not per_word(d):
        raise ValueError(f"{name}: arrays larger than maxStorageBufferRange work in windows of 32-bit "
                         f"words, one element each, not of {d} elements (cast with .astype() first)")


def pairs(x: Array) -> Array:
    """A 64-bit array's elements as pairs of uint32 words: a view of its storage, shape + (2,)."""
    return Array(x._storage, x.shape + (2,), dtypes.uint32, 2 * x.offset)


def from_pairs(u: Array, d: np.dtype) -> Array:
    """The 64-bit array of dtype d whose elements `u` (shape + (2,), as pairs() gives them, at an
    even offset) holds: a view of its storage."""
    return Array(u._storage, u.shape[:-1], d, u.offset // 2)
