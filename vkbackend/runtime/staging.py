"""The staging area: the host memory every upload and download of a device buffer goes through.

Device buffers keep no host copy of themselves (kp patch 0009: storage tensors), so that an array
costs its size once. One staging tensor (host-cached memory where the device offers it) serves
every transfer, used front to back: a copy takes the next free words, and the area starts over
once every submit that copied through it has completed (the stream waits for them when a copy
does not fit). It grows, as transfers need, up to its limit (VKBACKEND_STAGING_LIMIT); a larger
transfer goes through in pieces of that size, one submit + wait each.
"""
from __future__ import annotations

import numpy as np

from .memory import WORD

FIRST_WORDS = 1 << 18  # 1 MiB: the area's first size


class StagingArea:
    def __init__(self, manager, limit_bytes: int):
        self._mgr = manager
        self.limit = max(1, limit_bytes // WORD)  # words
        self.tensor = None
        self.host: np.ndarray | None = None  # the tensor's memory as uint32 words (no copy)
        self.words = 0
        self.top = 0     # words taken since the area last started over
        self.epoch = 0   # the submit that carries the newest copy through it
        self.stats = {"grown": 0, "restarts": 0}

    def fits(self, words: int) -> bool:
        return self.top + words <= self.words

    def restart(self, words: int) -> None:
        """Start over (every copy through the area has completed), with room for `words` (at
        most the limit) in one piece: a larger tensor if need be (recorded copies hold the old one)."""
        from ._kpmod import kp
        self.top = 0
        self.stats["restarts"] += 1
        if words > self.words:
            size = min(self.limit, max(FIRST_WORDS, 1 << (words - 1).bit_length()))
            size = max(size, words)
            self.tensor = self._mgr.tensor_t(np.zeros(size, np.uint32), kp.TensorTypes.staging)
            self.host = self.tensor.data()
            self.words = size
            self.stats["grown"] += 1

    def take(self, words: int) -> int:
        """The word offset of `words` words at the top (the caller checked `fits`)."""
        off = self.top
        self.top += words
        return off
