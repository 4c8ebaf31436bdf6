"""The checked mode of device indices, what torch users get from device asserts.

By default an out-of-range index held on the device (an int32/uint32 vk.Array) is clamped by
gathers and dropped by scatters, silently: checking it on the host would cost a sync per op. In
the checked mode (`check_indices=True` on take, take_along_axis, put, put_along_axis,
scatter_add and getitem, or VKBACKEND_CHECK_INDICES=1 for every call that leaves it None) the
kernel notes the first bad position (atomicMin into a two-word flag buffer, gather_scatter.comp's
CHECK), a one-invocation pass after the op copies the index found there, and the next sync
(`.numpy()`, vk.synchronize(), a data-dependent shape) raises IndexError naming the index, its
position and the valid range. Everything recorded, the failing op included, has run by then (its
bad elements clamped or dropped as by default), and the stream carries on.

Only mode='raise' is checked: 'wrap' and 'clip' have no out-of-range index, and host indices are
checked on the host before any GPU work.
"""
from __future__ import annotations

import numpy as np

from .. import config, dtypes, runtime
from ..array import Array
from .operands import Plan

ENV = "VKBACKEND_CHECK_INDICES"
_NONE = 0xFFFFFFFF        # the flag's first word while no bad index was seen
_SHADER = "primitives/gather_scatter.comp"
_PUSH_WORDS = 10          # the shader's push block at RANK 1 (the value pass reads none of it)


def wanted(check_indices, name: str) -> bool:
    """Whether an op checks its device indices: the argument, else (None) the environment."""
    if check_indices is None:
        return config.get(ENV)
    if not isinstance(check_indices, (bool, np.bool_)):
        raise TypeError(f"{name}: check_indices must be True, False or None (None: {ENV}), "
                        f"got {check_indices!r}")
    return bool(check_indices)


class IndexCheck:
    """One op's check of its device indices: make it before the op's first checked dispatch (it
    records the flag's reset), bind `buffer` 5th to each, then `arm()` after the last."""

    def __init__(self, indices: Array, axis_len: int, axis: int, name: str, what: str, scatter: bool):
        self.flag = Array.empty((2,), dtypes.uint32)
        runtime.get().stream.fill(self.flag.buffer, _NONE)
        self._indices = indices
        self._about = (indices.shape, indices.dtype, indices.offset, axis_len, axis, name, what, scatter)

    @property
    def buffer(self):
        return self.flag.buffer

    def arm(self) -> None:
        """Record the pass that copies the first bad index, and have the next sync report it."""
        flag, indices = self.flag.buffer, self._indices.buffer
        Plan(_SHADER, {"OP_FLAG_VALUE": 1}, [0] * _PUSH_WORDS, 1, workgroup=1).launch(
            [flag, indices, flag, flag, flag])
        self._indices = None
        runtime.get().stream.add_check(self._report, [flag])

    def _report(self) -> None:
        pos, raw = (int(w) for w in self.flag.buffer.host()[self.flag.offset:self.flag.offset + 2])
        if pos == _NONE:
            return
        shape, dtype, offset, n, axis, name, what, scatter = self._about
        value = int(np.uint32(raw).view(np.int32)) if dtype == dtypes.int32 else raw
        where = ", ".join(str(int(c)) for c in np.unravel_index(pos - offset, shape)) if shape else "()"
        lo = -n if dtype == dtypes.int32 else 0
        raise IndexError(
            f"{name}: index {value} is out of bounds for axis {axis} with size {n} (valid: {lo} to "
            f"{n - 1}), at {what}[{where}]: the first out-of-range device index, found by the checked "
            f"mode (check_indices=True or {ENV}=1) and reported at this sync; the op ran with its "
            f"out-of-range indices {'dropped' if scatter else 'clamped'}, as by default")
