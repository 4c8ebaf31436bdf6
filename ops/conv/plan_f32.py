"""Plans of the float32 kernels (which also read float16 operands in place, HALF_IN):
conv_gemm.comp (tiled, or NARROW for few output channels), conv_direct.comp, conv_wgrad.comp.

Forward (and backward-input, a forward convolution of the cotangent): rows (batch, output
position) x output channels over (input channel, tap). Backward-weight: (input channel, tap) x
output channels over (batch, output position), split across workgroups. Defaults come from
tuning.py, overrides from config.py, and the loop budget's cuts from loops.py.
"""
from __future__ import annotations

import functools
import math

from . import config, geometry as G, loops as L, tuning
from .kernels import DIRECT, GEMM, WGRAD, DeviceKey, Plan, shared_bytes
from ...primitives.launch import LoopBudgetError


def check_tiles(kind, bm, bn, bk, tm, tn, devkey, table=0) -> int:
    """Workgroup size of a tile configuration; ValueError when the kernels cannot run it."""
    max_shared, max_inv = devkey.max_shared, devkey.max_invocations
    what = {"fwd": "forward", "wgrad": "backward-weight"}[kind]
    if not (tm % 4 == 0 and tn % 4 == 0 and all(map(config.pow2, (bm, bn, bk, tm, tn))) and bm >= tm and bn >= tn):
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} BK={bk} TM={tm} TN={tn}: need powers of two, "
                         "TM and TN multiples of 4, BM >= TM, BN >= TN")
    nt = (bm // tm) * (bn // tn)
    if nt > max_inv:
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} TM={tm} TN={tn}: a workgroup of {nt} exceeds "
                         f"the device's {max_inv}")
    if kind == "fwd" and nt // min(bm, nt) > bk:
        raise ValueError(f"conv {what} tiles: BK={bk} too small for {nt} invocations over BM={bm}")
    shared = shared_bytes(kind, bm, bn, bk, table)
    if shared > max_shared:
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} BK={bk}: {shared} bytes of shared memory "
                         f"exceed the device's {max_shared}")
    return nt


def _tiles(kind, cfg, rows, cols, batches, red, devkey, table=0, transposed=False):
    """(BM, BN, BK, TM, TN, workgroup): tuning's defaults under cfg's overrides, checked."""
    bm, bn, bk, tm, tn = tuning.default_tiles(kind, rows, cols, batches, red, devkey, transposed)
    bm, bn, bk = cfg.get("BM", bm), cfg.get("BN", bn), cfg.get("BK", bk)
    tm, tn = cfg.get("TM", min(tm, bm)), cfg.get("TN", min(tn, bn))
    nt = check_tiles(kind, bm, bn, bk, tm, tn, devkey, table)
    return bm, bn, bk, tm, tn, nt


def plan_narrow(geom, has_bias: bool, devkey: DeviceKey, cfg: dict, nph: int, rows: int, kp: int,
                budget) -> Plan | None:
    """conv_gemm.comp's NARROW mode: no A tile; each invocation gathers RT rows straight from x
    and accumulates NN (4 or 8) channels, the weight chunk in shared memory (few output channels
    per group: the backward-input of a first layer, a GEMM with N = 3). None when the dispatch
    limits do not allow it (the tiled GEMM then)."""
    max_count = devkey.max_count
    soft = devkey.software
    nn = cfg.get("NN", 4 if geom.cog <= 4 else 8)
    wg = cfg.get("WG", 64 if soft else 256)
    kc = cfg.get("KC", min(8 if soft else 32, geom.cig))
    cu = cfg.get("CU", tuning.NARROW_CU)
    if not 1 <= cu <= 16:
        raise ValueError(f"conv narrow plan CU={cu}: channels loaded together must be 1 to 16")
    if nn not in (4, 8) or not 1 <= wg <= devkey.max_invocations or kc < 1 or 4 * kc * nn > devkey.max_shared:
        raise ValueError(f"conv narrow plan NN={nn} WG={wg} KC={kc}: need NN 4 or 8, WG <= "
                         f"{devkey.max_invocations}, KC >= 1 and the weight chunk in shared memory")
    ny = -(-geom.cog // nn)
    if ny > max_count[1] or geom.groups * nph > max_count[2]:
        return None
    if "RT" in cfg:
        rt = cfg["RT"]
        if not 1 <= rt <= 16:
            raise ValueError(f"conv narrow plan RT={rt}: rows per invocation must be 1 to 16")
    elif soft:
        rt = 1
    else:
        rt = tuning.narrow_rows(rows, wg, ny * geom.groups * nph, devkey.multiprocessors)
    defines = (("NARROW", 1), ("NN", nn), ("RT", rt), ("KC", kc), ("CU", cu), ("HAS_BIAS", int(has_bias)))
    if nph > 1:
        defines += (("PHASED", 1),)
    if soft:
        defines += (("NO_UNROLL", 1),)
    tiles = -(-rows // (rt * wg))
    other = L.phase_cost(geom, nph)
    gx = L.grid_x(tiles, max_count[0], cfg, budget,
                  lambda trips: L.narrow_cost(dict(defines), wg, not soft, 1, trips, other))
    splits, split_steps = L.split_k(
        budget, "forward (narrow kernel)", kp * -(-geom.cig // kc),
        lambda steps: L.narrow_cost(dict(defines), wg, not soft, steps, -(-tiles // gx), other))
    z = geom.groups * nph
    L.check_grid(budget, "forward", splits, z, math.prod(geom.out_shape()), devkey)
    return Plan(GEMM, defines, wg, geom.spec(split_steps, splits), (gx, ny, z * splits), splits, geom.flops())


def plan_direct(geom, has_bias: bool, devkey: DeviceKey, cfg: dict, budget) -> Plan | None:
    """conv_direct.comp: one output per invocation, all its taps and channels (depthwise and
    other tiny per-group channel counts); None where those loops pass the loop budget (the GEMM
    kernels split them)."""
    max_count = devkey.max_count
    wg = 64 if devkey.software else 128
    total = geom.n * geom.cout * math.prod(geom.so)
    k0, k1, k2 = geom.k
    per_output = L.loop(k0, L.loop(k1, L.loop(k2, L.loop(geom.cig))))
    gx = L.grid_x(-(-total // wg), min(max_count[0], 65535), cfg, budget,
                  lambda trips: L.total(L.loop(trips, per_output)))
    if budget is not None and L.total(L.loop(-(-total // (gx * wg)), per_output)) > budget:
        return None
    defines = (("HAS_BIAS", int(has_bias)),) + ((("NO_UNROLL", 1),) if devkey.software else ())
    return Plan(DIRECT, defines, wg, geom.spec(), (gx, 1, 1), flops=geom.flops())


def plan_gemm(geom, has_bias: bool, devkey: DeviceKey, cfg: dict, nph: int, rows: int, kp: int,
              budget) -> Plan | None:
    """conv_gemm.comp's tiled GEMM: tiles gathered into shared memory, a register block per
    invocation; None where its channel tiles or groups pass the grid's limits."""
    max_count = devkey.max_count
    bm, bn, bk, tm, tn, nt = _tiles("fwd", cfg, rows, geom.cog, geom.groups * nph, geom.cig * kp, devkey,
                                    transposed=geom.wstrides[1] < geom.wstrides[2])
    ny = -(-geom.cog // bn)
    if geom.groups > max_count[2] or ny > max_count[1]:
        return None
    gather, table_n = G.gather(geom, cfg, nph, kp, bk)
    if not devkey.software and "BK" not in cfg and (bm, bn) == (128, 64):
        tiles = -(-rows // bm) * -(-geom.cog // bn) * geom.groups * nph
        bk = tuning.forward_bk(gather, geom.cig * kp, tiles, devkey.multiprocessors)
        gather, table_n = G.gather(geom, cfg, nph, kp, bk)
        nt = check_tiles("fwd", bm, bn, bk, tm, tn, devkey)
    if gather == "table":
        check_tiles("fwd", bm, bn, bk, tm, tn, devkey, table_n)
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn), ("GATHER", G.GATHERS[gather]),
               ("B_J_FAST", int(G.weight_j_fast(geom, gather))), ("HAS_BIAS", int(has_bias)))
    if nph > 1:
        defines += (("PHASED", 1),)
    if gather == "table":
        defines += (("TABLE_N", table_n),)
    if devkey.software:
        defines += (("NO_UNROLL", 1),)
    tiles = -(-rows // bm)
    nsteps = kp * -(-geom.cig // bk) if gather == "uniform" else -(-(geom.cig * kp) // bk)
    other = L.phase_cost(geom, nph) + (L.total(L.loop(-(-table_n // nt))) if gather == "table" else 0)
    gx = L.grid_x(tiles, max_count[0], cfg, budget,
                  lambda trips: L.tiled_cost(dict(defines), not devkey.software, 1, trips, other))
    splits, split_steps = L.split_k(
        budget, "forward", nsteps,
        lambda steps: L.tiled_cost(dict(defines), not devkey.software, steps, -(-tiles // gx), other))
    z = geom.groups * nph
    L.check_grid(budget, "forward", splits, z, math.prod(geom.out_shape()), devkey)
    return Plan(GEMM, defines, nt, geom.spec(split_steps, splits), (gx, ny, z * splits), splits, geom.flops())


@functools.lru_cache(maxsize=256)
def plan_forward(geom, has_bias: bool, devkey: DeviceKey, cfg_raw: str, budget=None) -> Plan:
    """The forward plan on `devkey` (kernels.device_key) under the config string and loop budget
    (None: no limit): conv_direct.comp for tiny channel counts, conv_gemm.comp narrow for few
    output channels, else tiled; split-K where one invocation's reduction would pass the budget,
    and the next kernel where one cannot run it."""
    cfg = config.parse(cfg_raw)["fwd"]
    max_count = devkey.max_count
    path = cfg.get("path")
    if path in (None, "winograd", "matmul"):  # winograd, matmul: where they do not apply
        if geom.cig <= tuning.DIRECT_MAX_CHANNELS and geom.cog <= tuning.DIRECT_MAX_CHANNELS:
            path = "direct"
        elif geom.cog <= tuning.NARROW_MAX_COG:
            path = "narrow"
        else:
            path = "gemm"
    nph, rows, kp = G.phase_extents(geom, cfg, max_count)
    if path == "direct":
        p = plan_direct(geom, has_bias, devkey, cfg, budget)
        if p is not None:
            return p
        path = "narrow" if geom.cog <= tuning.NARROW_MAX_COG else "gemm"   # split-K instead
    if path == "narrow":
        p = plan_narrow(geom, has_bias, devkey, cfg, nph, rows, kp, budget)
        if p is not None:
            return p
    p = plan_gemm(geom, has_bias, devkey, cfg, nph, rows, kp, budget)
    if p is None:
        p = plan_direct(geom, has_bias, devkey, cfg, budget)
    if p is None:
        raise LoopBudgetError(f"conv forward: {geom.cig} input channels x {geom.kp} taps per output do not fit the "
                              f"device's loop budget of {budget} in conv_direct.comp, and the GEMM kernels' "
                              f"{geom.groups} groups exceed its dispatch limits {max_count}")
    return p


@functools.lru_cache(maxsize=256)
def plan_wgrad(geom, devkey: DeviceKey, cfg_raw: str, budget=None) -> Plan:
    """conv_wgrad.comp's plan, its reduction split to fill the device and to fit the loop budget."""
    cfg = config.parse(cfg_raw)["wgrad"]
    max_count = devkey.max_count
    bm, bn, bk, tm, tn, nt = _tiles("wgrad", cfg, geom.ktot, geom.cog, geom.groups, geom.rows, devkey)
    tiles = -(-geom.ktot // bm) * -(-geom.cog // bn) * geom.groups
    if -(-geom.ktot // bm) > max_count[0] or -(-geom.cog // bn) > max_count[1]:
        raise ValueError(f"conv backward-weight: {geom.ktot} x {geom.cog} weight tiles exceed the device's "
                         f"dispatch limits {max_count}")
    nsteps = max(1, -(-geom.rows // bk))
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn))
    if devkey.software:
        defines += (("NO_UNROLL", 1),)
    least, _ = L.split_k(budget, "backward-weight", nsteps,
                         lambda steps: L.wgrad_cost(dict(defines), not devkey.software, steps))
    if geom.groups > max_count[2]:
        raise ValueError(f"conv backward-weight: {geom.groups} groups exceed the device's dispatch limit "
                         f"{max_count[2]}")
    splits, split_steps = L.split_rows(geom, cfg, tuning.wgrad_splits(tiles, nsteps, devkey), nsteps,
                                       max_count[2] // geom.groups, least)
    L.check_grid(budget, "backward-weight", splits, geom.groups, geom.weight_size(), devkey)
    grid = (-(-geom.ktot // bm), -(-geom.cog // bn), geom.groups * splits)
    return Plan(WGRAD, defines, nt, geom.spec(split_steps, splits), grid, splits, geom.flops())
