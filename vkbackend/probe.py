"""Ask the driver what it runs: a shader that reads gl_SubgroupSize confirms the queried value."""
from __future__ import annotations

import numpy as np

from . import runtime


def probe_subgroup(workgroup: int = 64) -> tuple[int, int]:
    """(gl_SubgroupSize, gl_NumSubgroups) as seen by a compute pipeline of `workgroup` invocations."""
    from .array import Array
    rt = runtime.get()
    out = Array.empty((2,), np.uint32)
    rt.kernel("runtime/probe_subgroup.comp", {}, workgroup)([out.buffer], (), (1,))
    size, count = out.numpy().tolist()
    return size, count
