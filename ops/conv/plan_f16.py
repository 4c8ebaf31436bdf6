"""Plans of the float16 kernels on VK_KHR_cooperative_matrix (16x16x16 fragments, float32
accumulation): conv_coopmat_packed.comp (forward and backward-input on channels-last copies
made by conv_pack.comp, every tile row a run of 16-byte vectors), conv_coopmat.comp (the same
GEMM gathering halves from the original layout: first layers and 1x1 convolutions, where packing
does not pay), conv_coopmat_wgrad.comp (backward-weight, a GEMM per tap on channels-last copies)
and conv_coopmat_wgrad_gather.comp (backward-weight for channel counts that pad badly).

Each planner returns None where its kernels cannot take the pass (no cooperative matrices,
the dispatch limits, the loop budget: these kernels have no split-K in the forward): the
float32 kernels run it then (select.py). Defaults from tuning.py, overrides from config.py.
"""
from __future__ import annotations

import functools

from . import config, geometry as G, loops as L, tuning
from .kernels import COOPMAT, PACKED, WGRAD16, WGRAD16_GATHER, DeviceKey, Plan
from ...primitives.launch import LoopBudgetError
from ...primitives.matmul_half import staged_tile_bytes


def packing_fits(geom, devkey: DeviceKey) -> bool:
    """conv_pack.comp's PACK_X grid (positions / 64, groups x channel tiles, batch) within the
    device's dispatch limits, for x and for the cotangent."""
    max_count = devkey.max_count
    return geom.n <= max_count[2] and geom.groups * -(-max(geom.cig, geom.cog) // 64) <= max_count[1]


@functools.lru_cache(maxsize=256)
def plan_coopmat(geom, has_bias: bool, devkey: DeviceKey, cfg_raw: str, budget=None) -> Plan | None:
    """float16 forward: conv_coopmat_packed.comp where packing pays (tuning.packing_pays), else
    conv_coopmat.comp with conv_gemm.comp's gathers (the table too). BM x BN tiles (BN the power
    of two >= the group's output channels, 16 to 64, to 128 when packed), 8 subgroups. None
    where its reduction would pass the loop budget (conv_gemm.comp on the halves then)."""
    cfg = config.parse(cfg_raw)["f16"]
    max_shared, max_inv, max_count = devkey.max_shared, devkey.max_invocations, devkey.max_count
    sgs = devkey.subgroup_size
    nph, rows, kp = G.phase_extents(geom, cfg, max_count)
    packs = tuning.packing_pays(kp, geom.cig)
    packed = cfg.get("path", "packed" if packs else "coopmat") == "packed" and packing_fits(geom, devkey)
    bn = cfg.get("BN", tuning.coopmat_bn(geom.cog, packed))
    bk = cfg.get("BK", tuning.packed_bk(geom.cig) if packed else tuning.COOPMAT_BK["gather"])
    sgn = cfg.get("SGN", max(1, min(4, bn // 32)))
    sgm = cfg.get("SGM", max(1, 8 // sgn))
    bm = cfg.get("BM", tuning.balanced_rows(rows, -(-geom.cog // bn) * geom.groups * nph, sgm,
                                            devkey.multiprocessors) if packed
                 else tuning.COOPMAT_BM)
    nt = sgm * sgn * sgs
    gather, table_n = (None, 0) if packed else G.gather(geom, cfg, nph, kp, bk)
    stages = cfg.get("STAGES", tuning.PACKED_STAGES) if packed else 2
    if packed:
        shared = staged_tile_bytes(stages, (bm, bk), (bk, bn), sgm * sgn)
        loader_ok = nt % (bk // 8) == 0
    else:
        shared = (2 * bk * (bm + 8) * 2 + 2 * bn * (bk + 8) * 2 + sgm * sgn * 1024
                  + (8 * table_n if gather == "table" else 0))
        loader_ok = nt % bm == 0 and bk % (nt // bm) == 0 if nt >= bm else bm % nt == 0
    if not (all(v % 16 == 0 for v in (bm, bn, bk)) and bm % (16 * sgm) == 0 and bn % (16 * sgn) == 0
            and nt <= max_inv and shared <= max_shared and loader_ok):
        raise ValueError(f"conv float16 plan BM={bm} BN={bn} BK={bk} SGM={sgm} SGN={sgn}: need multiples of "
                         f"16 split evenly over the subgroups, at most {max_inv} invocations and "
                         f"{max_shared} bytes of shared memory (this needs {nt} and {shared})")
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("SG_M", sgm), ("SG_N", sgn), ("SGS", sgs),
               ("HAS_BIAS", int(has_bias)))
    if not packed:
        defines += (("GATHER", G.GATHERS[gather]), ("B_J_FAST", int(G.weight_j_fast(geom, gather))))
        if gather == "table":
            defines += (("TABLE_N", table_n),)
    if stages != 2:
        defines += (("STAGES", stages),)
    if nph > 1:
        defines += (("PHASED", 1),)
    ny = -(-geom.cog // bn)
    if ny > max_count[1] or geom.groups * nph > max_count[2]:
        raise ValueError(f"conv float16: {ny} x {geom.groups * nph} channel tiles exceed the device's "
                         f"dispatch limits {max_count[1:]}")
    grid = (max(1, min(-(-rows // bm), max_count[0], cfg.get("gridx", max_count[0]))), ny, geom.groups * nph)
    if budget is not None:
        # UNROLL loops unroll here; counted: the row tiles, the steps, the fragments' bias and
        # store loops (256 / SGS each), the table, the phases and the packing kernels.
        frag = L.loop(-(-256 // sgs))
        frags = (bm // sgm // 16) * (bn // sgn // 16) + (bn // sgn // 16 if has_bias else 0)
        nsteps = kp * -(-geom.cig // bk) if packed or gather == "uniform" else -(-(geom.cig * kp) // bk)
        other = L.phase_cost(geom, nph) + (L.total(L.loop(-(-table_n // nt))) if gather == "table" else 0)
        trips = -(-(-(-rows // bm)) // grid[0])
        if L.total(L.loop(trips, *[frag] * frags, L.loop(nsteps))) + other > budget or (
                packed and L.pack_cost(geom) > budget):
            return None
    return Plan(PACKED if packed else COOPMAT, defines, nt, geom.spec(), grid, flops=geom.flops())


@functools.lru_cache(maxsize=256)
def plan_wgrad_coopmat(geom, devkey: DeviceKey, cfg_raw: str, budget=None) -> Plan | None:
    """float16 backward-weight: conv_coopmat_wgrad.comp where both channel counts pad well, else
    conv_coopmat_wgrad_gather.comp (plan_wgrad_gather), or None where conv_wgrad.comp runs
    instead (no cooperative matrices, wgrad16.path=cast, limits). Tiles of BM output x BN input
    channels (powers of two >= the group's, 16 to 128), one tap each, subgroups of at least
    32 x 32, the rows split to fill about two workgroups per multiprocessor and to fit the loop
    budget (None where they cannot)."""
    cfg = config.parse(cfg_raw)["wgrad16"]
    if devkey is None or cfg.get("path") == "cast":
        return None
    path = cfg.get("path", "packed" if tuning.pads_well(geom.cig) and tuning.pads_well(geom.cog) else "coopmat")
    if path == "coopmat":
        return plan_wgrad_gather(geom, devkey, cfg, budget)
    if not packing_fits(geom, devkey) or (budget is not None and L.PACK_COST > budget):
        return None  # (it packs x and the cotangent, both by the tiled transpose)
    max_shared, max_inv, max_count = devkey.max_shared, devkey.max_invocations, devkey.max_count
    sgs = devkey.subgroup_size
    width = lambda c: min(128, max(16, 1 << (c - 1).bit_length()))  # noqa: E731
    bm, bn = cfg.get("BM", width(geom.cog)), cfg.get("BN", width(geom.cig))
    bk = cfg.get("BK", tuning.WGRAD16_BK)
    stages = cfg.get("STAGES", tuning.WGRAD16_STAGES)
    edge = tuning.WGRAD16_SUBGROUP_EDGE
    sgn = cfg.get("SGN", max(1, min(4, bn // edge)))
    sgm = cfg.get("SGM", max(1, min(8 // sgn, bm // edge)))
    nt = sgm * sgn * sgs
    shared = staged_tile_bytes(stages, (bk, bm), (bk, bn), sgm * sgn)
    if not (all(v % 16 == 0 for v in (bm, bn, bk)) and bm % (16 * sgm) == 0 and bn % (16 * sgn) == 0
            and nt <= max_inv and shared <= max_shared):
        raise ValueError(f"conv float16 backward-weight plan BM={bm} BN={bn} BK={bk} SGM={sgm} SGN={sgn}: need "
                         f"multiples of 16 split evenly over the subgroups, at most {max_inv} invocations and "
                         f"{max_shared} bytes of shared memory (this needs {nt} and {shared})")
    tiles = -(-geom.cog // bm) * -(-geom.cig // bn)
    nsteps = max(1, -(-geom.rows // bk))
    default = tuning.wgrad16_splits(tiles * geom.kp * geom.groups, nsteps, devkey.multiprocessors)
    # counted: the steps and the epilogue's scratch loops (256 / SGS per fragment)
    epilogue = (bm // sgm // 16) * (bn // sgn // 16) * L.total(L.loop(-(-256 // sgs)))
    try:
        least, _ = L.split_k(budget, "float16 backward-weight", nsteps,
                             lambda steps: L.total(L.loop(steps)) + epilogue)
        splits, split_steps = L.split_rows(geom, cfg, default, nsteps, max_count[2] // geom.groups, least)
    except LoopBudgetError:
        return None
    if (tiles > max_count[0] or geom.kp > max_count[1] or geom.groups * splits > max_count[2]
            or not L.finish_fits(budget, geom.weight_size(), splits)):
        return None
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("SG_M", sgm), ("SG_N", sgn), ("SGS", sgs))
    if stages != 2:
        defines += (("STAGES", stages),)
    return Plan(WGRAD16, defines, nt, geom.spec(split_steps, splits), (tiles, geom.kp, geom.groups * splits),
                splits, geom.flops())


def plan_wgrad_gather(geom, devkey: DeviceKey, cfg: dict, budget=None) -> Plan | None:
    """conv_coopmat_wgrad_gather.comp: float16 backward-weight for channel counts that pad badly
    (a first layer's 3; its 49 taps would also re-read the cotangent 49 times), all (channel,
    tap) columns of a group in one tile, x gathered in place; None (the float32 kernels) below
    tuning.COOPMAT_MIN_COG output channels or where the columns' tiles do not fit shared memory.
    The rows split about two workgroups per multiprocessor."""
    max_shared, max_inv, max_count = devkey.max_shared, devkey.max_invocations, devkey.max_count
    sgs = devkey.subgroup_size
    pf = -(-geom.ktot // 16)
    bk = cfg.get("BK", tuning.WGRAD16_GATHER_BK)
    nt = 8 * sgs
    shared = 2 * (64 + 16 * pf) * (bk + 8) * 2 + 16 * 16 * pf
    if bk % 16 or nt % bk or nt > max_inv:
        raise ValueError(f"conv float16 backward-weight (gathering) BK={bk}: need a multiple of 16 that "
                         f"divides the workgroup of {nt} invocations")
    jt = -(-geom.cog // 64)
    if (geom.cog < tuning.COOPMAT_MIN_COG or shared > max_shared or jt > max_count[1]
            or geom.groups > max_count[2]):
        return None
    nsteps = max(1, -(-geom.rows // bk))
    default = tuning.wgrad16_splits(jt * geom.groups, nsteps, devkey.multiprocessors)
    try:  # counted: the column table's loop and the steps
        least, _ = L.split_k(budget, "float16 backward-weight", nsteps,
                             lambda steps: L.total(L.loop(-(-16 * pf // nt)), L.loop(steps)))
        splits, split_steps = L.split_rows(geom, cfg, default, nsteps, max_count[0], least)
    except LoopBudgetError:
        return None
    if not L.finish_fits(budget, geom.weight_size(), splits):
        return None
    defines = (("PF", pf), ("BK", bk), ("SGS", sgs))
    return Plan(WGRAD16_GATHER, defines, nt, geom.spec(split_steps, splits), (splits, jt, geom.groups),
                splits, geom.flops())
