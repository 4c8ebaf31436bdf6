"""The convolution kernels' loops counted against the loop budget, and the cuts that keep them
inside it.

lavapipe ends every loop of an invocation once it has counted 65,535 iterations in all
(devices.Device.loop_budget; VKBACKEND_LOOP_BUDGET lowers it and enforces it on any device;
docs/loop_budget/conv.md has the measurements). The planners count each kernel's loops here and
cut what would pass the budget: a reduction split across workgroups (split-K, its partial sums
added by conv_reduce.comp, in rounds where many), more workgroups, the bias gradient in chunks;
or raise LoopBudgetError before anything is recorded. With NO_UNROLL (software devices) the
kernels' UNROLL loops count too. Where the budget is None (GPUs) nothing is cut.

Every budget read of the convolutions goes through loop_budget here (tests plan for another).
"""
from __future__ import annotations

import functools
import math

from ... import runtime
from ...primitives.launch import LoopBudgetError, groups_for, loop_budget, workgroup_size
from .kernels import DeviceKey


def loop(trips: int, *body: tuple, counted: bool = True) -> tuple:
    """(counted iterations, loops) of a loop of `trips` iterations around the loops `body`, each
    such a pair. Each iteration counts 1 and its body's loops; the way out 1 and 1 more for every
    loop within, at any depth (lavapipe runs the body once more with all lanes masked off, and
    each loop there passes its end once). Unrolled (counted=False): the body's, trips times."""
    cost, loops = sum(c for c, _ in body), sum(n for _, n in body)
    if not counted:
        return trips * cost, trips * loops
    return trips * (cost + 1) + 1 + loops, loops + 1


def total(*loops: tuple) -> int:
    """Counted iterations of the top-level loops `loops` (pairs of loop())."""
    return sum(c for c, _ in loops)


def most(budget: int, cost) -> int:
    """The largest s with cost(s) <= budget, for a count cost(s) linear in s (-1: not even 0)."""
    base = cost(0)
    return (budget - base) // max(1, cost(1) - base) if base <= budget else -1


# -- the kernels' counts ------------------------------------------------------------------------
def phase_cost(geom, nph: int) -> int:
    """conv_gemm_view.glsl's phase_setup: inverse_mod's loop per axis, ID counts at most."""
    return sum(geom.id) if nph > 1 else 0


def tiled_cost(d: dict, unrolled: bool, steps: int, trips: int, other: int) -> int:
    """Counted iterations of an invocation of conv_gemm.comp's tiled mode (defines d): `trips`
    row tiles of `steps` reduction steps, besides `other` (the table, the phase setup)."""
    U = functools.partial(loop, counted=not unrolled)
    bm, bn, bk, tm, tn = (d[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    nt = (bm // tm) * (bn // tn)
    la_m = min(bm, nt)
    ra, qa, eb = bm // la_m, bk // (nt // la_m), -(-bk * bn // nt)
    load = (U(ra, U(qa)) if d["GATHER"] == 1 else U(qa, U(ra)), U(eb))
    store = (U(ra, U(qa)), U(eb))
    fma = U(bk, U(tm // 4), U(tn // 4, U(tm // 4)))
    epilogue = U(tn // 4, U(4, U(tm // 4, U(4))))
    step_loop = loop(steps, *load, fma, *store)
    return total(loop(trips, U(ra), U(tm // 4 * tn), *load, *store, step_loop, epilogue)) + other


def narrow_cost(d: dict, wg: int, unrolled: bool, steps: int, trips: int, other: int) -> int:
    """Counted iterations of an invocation of conv_gemm.comp's NARROW mode (defines d)."""
    U = functools.partial(loop, counted=not unrolled)
    nn, rt, kc, cu = (d[k] for k in ("NN", "RT", "KC", "CU"))
    nv = nn // 4
    fill = loop(-(-kc * nn // wg))
    channels = loop(-(-kc // cu), U(cu, U(rt)), U(cu, U(nv, U(rt))))
    step_loop = loop(steps, fill, U(rt), channels)
    return total(loop(trips, U(rt), U(rt * nv), step_loop, U(rt, U(nv, U(4))))) + other


def wgrad_cost(d: dict, unrolled: bool, steps: int) -> int:
    """Counted iterations of an invocation of conv_wgrad.comp (defines d) over `steps` steps."""
    U = functools.partial(loop, counted=not unrolled)
    bm, bn, bk, tm, tn = (d[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    nt = (bm // tm) * (bn // tn)
    lk = min(bk, nt)
    lp = nt // lk
    qk, pa, pb = bk // lk, -(-bm // lp), -(-bn // lp)
    load = store = U(qk, U(pa), U(pb))
    fma = U(bk, U(tm // 4), U(tn // 4, U(tm // 4)))
    epilogue = U(tn // 4, U(4, U(tm // 4, U(4))))
    return total(U(pa), U(tm // 4 * tn), load, store, loop(steps, load, fma, store), epilogue)


# conv_pack.comp's tiled transposes (256 invocations): 16 reads, 2 writes of 8 halves each.
PACK_COST = total(loop(16), loop(2, loop(8)))


def pack_cost(geom) -> int:
    """Counted iterations of the costlier invocation of conv_pack.comp's packing of x and of the
    weight (record.pack_input, record.pack_weight): a tiled transpose, or PACK_W's grid-stride
    loop over 16-byte vectors of the transposed weight, 8 halves gathered in each."""
    _, wj, wc = geom.wstrides
    if wc == geom.kp and wj == geom.cig * geom.kp:
        return PACK_COST
    vectors = geom.groups * geom.kp * -(-geom.cig // 8) * 8 * -(-geom.cog // 8)
    trips = -(-vectors // (max(1, min(groups_for(vectors, 256), 4096)) * 256))
    return max(PACK_COST, total(loop(trips, loop(8))))


# -- cuts -----------------------------------------------------------------------------------------
def split_k(budget, what: str, nsteps: int, cost) -> tuple:
    """(splits, steps per split) of a reduction of nsteps steps, where cost(s) is an invocation's
    count with s steps (linear in s): (1, 1) where all of it fits the loop budget (or there is
    none), else the fewest even splits that fit. LoopBudgetError where not one step fits."""
    if budget is None:
        return 1, 1
    room = most(budget, cost)
    if room < 1:
        raise LoopBudgetError(f"conv {what}: one reduction step per invocation counts {cost(1)} loop iterations, "
                              f"more than the device's loop budget of {budget}")
    if nsteps <= room:
        return 1, 1
    splits = -(-nsteps // room)
    return splits, -(-nsteps // splits)


def sum_fanin(budget, n: int, wg: int) -> int | None:
    """Partial sums of n elements one conv_reduce.comp MODE_SPLITS pass (wg invocations per
    workgroup) may add within the loop budget (None: any number); LoopBudgetError where not two
    fit."""
    if budget is None:
        return None
    trips = -(-n // (groups_for(n, wg) * wg))
    fanin = most(budget, lambda count: total(loop(trips, loop(count))))
    if fanin < 2:
        raise LoopBudgetError(f"conv: summing the split partial sums of {n} elements loops {trips} times per "
                              f"invocation: past the device's loop budget of {budget}")
    return fanin


def check_grid(budget, what: str, splits: int, z: int, out_size: int, devkey: DeviceKey) -> None:
    """The dispatch and index limits of a split-K plan: z x splits workgroups along z, splits x
    out_size partial sums within 32-bit indices (nothing to check where nothing was split)."""
    if budget is None or splits == 1:
        return
    if z * splits > devkey.max_count[2] or splits * out_size >= 2 ** 31:
        raise LoopBudgetError(f"conv {what}: the loop budget needs {splits} splits of the reduction, past the "
                              f"device's dispatch limit ({z} x {splits} > {devkey.max_count[2]}) or 32-bit indices "
                              f"({splits} x {out_size} partial sums)")
    sum_fanin(budget, out_size, 64 if devkey.software else 256)


def grid_x(tiles: int, largest: int, cfg: dict, budget, cost) -> int:
    """Workgroups along x for `tiles` row tiles (grid-stride beyond): at most `largest` and cfg's
    gridx, unless cost(tiles per workgroup) -- an invocation's count with one reduction step --
    would then pass the loop budget: the tuning cap gives way to it."""
    gx = max(1, min(tiles, largest, cfg.get("gridx", largest)))
    if budget is not None and cost(-(-tiles // gx)) > budget:
        gx = max(1, min(tiles, largest))
    return gx


def split_rows(geom, cfg: dict, default: int, nsteps: int, limit: int, least: int = 1) -> tuple:
    """(splits, steps per split) of a backward-weight reduction of `nsteps` steps: cfg's splits or
    `default`, the latter capped so the float32 partial sums take at most 64 MiB; never more
    splits than steps or than `limit` (the grid's), and none empty; at least `least` (the loop
    budget's), LoopBudgetError where the grid cannot take them."""
    if "splits" in cfg:
        splits = cfg["splits"]
    else:
        splits = min(default, (64 << 20) // max(1, 4 * geom.weight_size()))
    splits = max(1, min(splits, nsteps, limit), least)
    if splits > limit:
        raise LoopBudgetError(f"conv backward-weight: the loop budget needs {least} splits of the reduction "
                              f"over {nsteps} steps; the device's grid takes {limit}")
    split_steps = -(-nsteps // splits)
    return -(-nsteps // split_steps), split_steps


def finish_fits(budget, n: int, splits: int) -> bool:
    """Whether the float16 backward-weight kernels' FINISH dispatch (grid-stride over n weight
    elements, max(1, min(groups_for(n, 256), 4096)) workgroups of 256, the splits summed in
    each) stays within the loop budget."""
    if budget is None:
        return True
    trips = -(-n // (max(1, min(groups_for(n, 256), 4096)) * 256))
    return total(loop(trips, loop(splits))) <= budget


def bias_chunks(geom) -> tuple:
    """(batches, positions) per workgroup of conv_reduce.comp's MODE_BIAS: all of them, or chunks
    whose loops fit the loop budget (their sums then added); LoopBudgetError where even one
    position per invocation would not fit or the chunks pass the grid's limit."""
    plane = math.prod(geom.so)
    budget = loop_budget()
    if budget is None:
        return geom.n, plane
    dev = runtime.get().device
    wg = workgroup_size()
    trips_c = -(-geom.cout // min(geom.cout, dev.max_workgroup_count[0]))
    # wg_reduce_add: a shared-memory tree (log2 wg rounds) or the subgroup totals' loop
    sg = max(1, dev.min_subgroup_size)
    reduce = loop(max(wg.bit_length(), -(-wg // (sg * sg))))

    def cost(nb, rounds):  # nb batches of `rounds` position rounds per invocation
        return total(loop(trips_c, loop(nb, loop(rounds)), reduce))

    rounds = -(-plane // wg)
    nb = most(budget, lambda b: cost(b, rounds))
    if nb >= geom.n:
        return geom.n, plane
    if nb >= 1:
        npos = plane
    elif most(budget, lambda r: cost(1, r)) >= 1:
        nb, npos = 1, most(budget, lambda r: cost(1, r)) * wg
    else:
        raise LoopBudgetError(f"conv bias gradient: {geom.cout} channels over {dev.max_workgroup_count[0]} "
                              f"workgroups leave no room in the device's loop budget of {budget}")
    chunks = -(-geom.n // nb) * -(-plane // npos)
    if chunks > dev.max_workgroup_count[1]:
        raise LoopBudgetError(f"conv bias gradient: the loop budget of {budget} needs {chunks} chunks of the "
                              f"batch x {plane} positions, past the device's grid limit "
                              f"{dev.max_workgroup_count[1]}")
    sum_fanin(budget, geom.cout, wg)
    return nb, npos
