"""Shared launch arithmetic for primitives."""
from __future__ import annotations

from .. import runtime

GRID_CAP = 8192  # workgroups per 1-D dispatch; kernels grid-stride past it
WG = 256         # invocations per workgroup of the 1-D per-element kernels (fill, elementwise, copies)


def pow2ceil(v: int) -> int:
    """The smallest power of two >= v (1 for v <= 1)."""
    return 1 << (max(int(v), 1) - 1).bit_length()


def groups_for(items: int, per_group: int) -> int:
    """Workgroups to cover `items` with `per_group` each, capped (the kernel loops over the rest)."""
    cap = min(GRID_CAP, runtime.get().device.max_workgroup_count[0])
    return max(1, min(cap, -(-items // per_group)))


def workgroup_size() -> int:
    """Invocations per workgroup for the simple one-item-per-invocation kernels: 256, or 64 on
    software rasterizers (lavapipe runs each invocation as a SIMD lane and switches at barriers)."""
    return 64 if runtime.get().device.is_software else 256


def loop_budget() -> int | None:
    """Counted loop iterations one invocation may run in all, or None where the device sets no
    limit (lavapipe: 65535). A loop of n iterations whose body's loops count c counts
    n * (c + 1) + 1 + L, L the counted loops nested in it (lavapipe passes its end once more on the
    way out, and each nested loop's end in that pass); loops the compiler unrolls ([[unroll]] with
    trip counts fixed at compile time) count nothing."""
    return runtime.get().device.loop_budget


def budget_chunks(trips: int, per_trip: int = 1, reserve: int = 0, nested: int = 0) -> int:
    """Pieces a loop of `trips` iterations must be cut into (split-K, more workgroups, more
    dispatches) so that each piece fits the loop budget: each iteration costs `per_trip` (1 plus
    its inner loops' counts), the loop's exit 1 + `nested` (the counted loops in its body, whose
    ends lavapipe passes once more on the way out; only counted work after the loop can be cut
    short by them, so a kernel's last loop may leave it 0) and the kernel's other loops `reserve`.
    1 where the device sets no limit."""
    budget = loop_budget()
    if budget is None or trips <= 0:
        return 1
    rest = reserve + 1 + nested
    room = (budget - rest) // max(1, per_trip)
    if room < 1:
        raise LoopBudgetError(f"one loop iteration costs {per_trip} counted iterations and the rest of "
                              f"the kernel {rest}: more than the device's loop budget of {budget} "
                              "per invocation")
    return -(-trips // room)


class LoopBudgetError(ValueError):
    """Work that cannot be cut to fit the device's loop budget (lavapipe: 65535 iterations per
    invocation), raised before any GPU work instead of letting the driver cut loops short."""


def collective_cost(wg: int) -> int:
    """Counted loop iterations one workgroup reduce or scan of lib/workgroup.glsl costs an
    invocation of a `wg`-wide workgroup: with subgroup arithmetic, subgroup 0 walks the subgroup
    totals (for the smallest subgroup size the device may pick); without, the shared-memory tree's
    log2(wg) levels. Each loop adds 1 on its way out."""
    dev = runtime.get().device
    if dev.has("arithmetic"):
        sg = max(1, dev.min_subgroup_size)
        subgroups = -(-wg // sg)
        return -(-subgroups // sg) + 1
    return (wg - 1).bit_length() + 1


def grid_groups(items: int, per_group: int, per_trip: int = 1, reserve: int = 0, nested: int = 0) -> int:
    """groups_for(items, per_group), raised where needed so that each invocation's grid-stride
    loop (per_trip counted iterations a trip, the loop's own included; `nested` counted loops in
    its body, see budget_chunks) fits the loop budget beside `reserve`; LoopBudgetError where even
    the device's largest grid leaves too many trips."""
    groups = groups_for(items, per_group)
    trips = -(-items // (groups * per_group))
    pieces = budget_chunks(trips, per_trip, reserve, nested)
    if pieces == 1:
        return groups
    dev = runtime.get().device
    need = -(-items // (per_group * (trips // pieces)))
    if need > dev.max_workgroup_count[0]:
        raise LoopBudgetError(f"{items} items at {per_group} per workgroup need {need} workgroups to keep "
                              f"each invocation inside the loop budget of {loop_budget()}; the device "
                              f"allows {dev.max_workgroup_count[0]}")
    return need
