"""Ask the driver what it runs: a shader that reads gl_SubgroupSize confirms the queried value."""
from __future__ import annotations

from .. import runtime


def probe_subgroup(workgroup: int = 64) -> tuple[int, int]:
    """(gl_SubgroupSize, gl_NumSubgroups) as seen by a compute pipeline of `workgroup` invocations."""
    rt = runtime.get()
    buf = rt.pool.acquire(2)
    try:
        rt.kernel("runtime/probe_subgroup.comp", {}, workgroup)([buf], (), (1,))
        rt.stream.synchronize(downloads=[buf])
        size, count = (int(w) for w in buf.host()[:2])
    finally:
        rt.release(buf)
    return size, count
