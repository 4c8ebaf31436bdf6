"""Shared launch arithmetic for primitives."""
from __future__ import annotations

from .. import runtime

GRID_CAP = 8192  # workgroups per 1-D dispatch; kernels grid-stride past it


def groups_for(items: int, per_group: int) -> int:
    """Workgroups to cover `items` with `per_group` each, capped (the kernel loops over the rest)."""
    cap = min(GRID_CAP, runtime.get().device.max_workgroup_count[0])
    return max(1, min(cap, -(-items // per_group)))


def workgroup_size() -> int:
    """Invocations per workgroup for the simple one-item-per-invocation kernels: 256, or 64 on
    software rasterizers (lavapipe runs each invocation as a SIMD lane and switches at barriers)."""
    return 64 if runtime.get().device.is_software else 256
