"""Matrix products: numpy's matmul and a BLAS-like gemm, on shaders/primitives/matmul.comp.

    vk.matmul(a, b)      # a @ b with numpy's rules: 1-D operands promoted then squeezed,
                         # leading (batch) dims broadcast (stride 0, never copied)
    vk.gemm(a, b, trans_a=False, trans_b=False, alpha=1.0, beta=0.0, c=None)
                         # C = alpha * op(A) @ op(B) + beta * C, op(X) = X or its last two axes
                         # swapped (read in place, no transpose copy); batched like matmul

gemm is float32, or float16 (both operands; matmul_half.py: float32 sums, one rounding to float16,
on cooperative matrices where the device has them). matmul computes in float32 where numpy would
promote to a float other than float16 (int32 @ float32: the int operand is converted first; float16
@ float32 too); float16 @ float16 is float16, as in numpy and gemm; a float64 operand (or int64 @
float32: numpy's float64 of a 64-bit operand) gives float64; integer products are exact, wrapping
modulo 2**bits as numpy's do (int32 @ uint32 is int64, as numpy's). Integers and float64 are
computed as elementwise products reduced over K (multiply + sum, in chunks of at most INT_CHUNK
temporaries: much slower than float32's tiled kernel); bool @ bool raises TypeError (the array
API's matmul is numeric only).

The kernel is a tiled SIMT GEMM (see the shader's header). Tile shapes are TileConfigs, written
"BMxBNxBK/TMxTN[/WARP_X]" (e.g. "128x128x16/8x8"); `choose_config` picks one per call from the
device's shared memory and the number of tiles, and VKBACKEND_MATMUL_CONFIG overrides it
(a config string, or a name from CONFIGS). `record_gemm` is the low-level entry (explicit
leading dimensions and offsets: sub-matrices of a larger array, e.g. QR trailing updates).
Under a loop budget (lavapipe) a K loop too long for one invocation is cut into several dispatches
accumulating into C (beta = 1 after the first); see _k_slices.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np

from .. import config as registry, dtypes, runtime  # registry: `config` names tile arguments here
from ..array import Array
from . import launch
from .recipes import recipe
from .tuning import MATMUL_ORDER, MATMUL_SPLIT_K_DEPTH
from .creation import asarray, zeros
from .elementwise import add, copy_into, multiply
from .operands import collapse_dims, held_dtype, operand

__all__ = ["matmul", "gemm"]

_SHADER = "primitives/matmul.comp"
_MAX_BATCH_RANK = 4       # push words: 13 + 4 per batch dim <= 32
_PUSH_BASE = 13


# -- tile configurations ------------------------------------------------------------------------
@dataclass(frozen=True)
class TileConfig:
    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    warp_x: int = 8     # thread layout: blocks of `lanes` invocations, warp_x along N
    lanes: int = 32
    prefetch: bool = False  # read step k + 1's operands from shared memory during step k's products

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    @property
    def shared_bytes(self) -> int:
        """Worst case (both operands padded): two buffers of BK x (BM+4) and BK x (BN+4) floats."""
        return 2 * self.bk * ((self.bm + 4) + (self.bn + 4)) * 4

    def __str__(self) -> str:
        return (f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}/{self.warp_x}x{self.lanes // self.warp_x}"
                + ("+prefetch" if self.prefetch else ""))

    def problems(self, dev=None) -> list[str]:
        p = []
        if self.tm not in (4, 8, 12, 16) or self.tn not in (4, 8, 12, 16):
            p.append("TM and TN must be 4, 8, 12 or 16")
        if self.bm % self.tm or self.bn % self.tn:
            p.append("BM must be a multiple of TM and BN of TN")
        if self.bk < 4 or self.bk % 4:
            p.append("BK must be a positive multiple of 4")
        tx, ty = self.bn // max(self.tn, 1), self.bm // max(self.tm, 1)
        if self.lanes < 1 or self.warp_x < 1 or self.lanes % self.warp_x:
            p.append("LANES must be a multiple of WARP_X")
        elif tx % self.warp_x or ty % (self.lanes // self.warp_x):
            p.append(f"the {tx}x{ty} thread grid does not split into {self.warp_x}x"
                     f"{self.lanes // self.warp_x} blocks")
        if dev is not None:
            if self.threads > dev.max_workgroup_invocations:
                p.append(f"{self.threads} invocations > the device's {dev.max_workgroup_invocations}")
            if self.shared_bytes > dev.max_shared_memory:
                p.append(f"{self.shared_bytes} bytes of shared memory > the device's {dev.max_shared_memory}")
        return p


_CONFIG_RE = re.compile(r"^\s*(\d+)x(\d+)x(\d+)\s*/\s*(\d+)x(\d+)\s*(?:/\s*(\d+)(?:x(\d+))?)?\s*(\+prefetch)?\s*$")


def parse_config(text: str) -> TileConfig:
    """"BMxBNxBK/TMxTN", optionally "/WX" or "/WXxWY" (the thread block: WX along N, WY along M),
    then optionally "+prefetch" (TileConfig.prefetch)."""
    try:
        return _parse_config(text)
    except ValueError as e:
        raise ValueError(f"matmul config {text!r}: {e}") from None


def env_parse(text: str) -> TileConfig | None:
    """VKBACKEND_MATMUL_CONFIG's parser (vkbackend/config.py): None for "auto"."""
    return None if text == "auto" else _parse_config(text)


def _parse_config(text: str) -> TileConfig:
    if text.strip() in CONFIGS:
        return CONFIGS[text.strip()]
    m = _CONFIG_RE.match(text)
    if not m:
        raise ValueError(f"expected 'BMxBNxBK/TMxTN[/WXxWY][+prefetch]' or one of {sorted(CONFIGS)}")
    bm, bn, bk, tm, tn = (int(g) for g in m.groups()[:5])
    wx = int(m.group(6)) if m.group(6) else 8
    wy = int(m.group(7)) if m.group(7) else 32 // wx if 32 % wx == 0 else 1
    cfg = TileConfig(bm, bn, bk, tm, tn, wx, wx * wy, bool(m.group(8)))
    bad = cfg.problems()
    if bad:
        raise ValueError("; ".join(bad))
    return cfg


CONFIGS = {
    # 128 invocations, 16x8 each, BK = 8; 16.9 KiB shared: GPUs, big problems.
    "wide": TileConfig(128, 128, 8, 16, 8, 4, 16, prefetch=True),
    # 128 invocations, 8x4 each, BK = 8; 8.5 KiB: GPUs, mid-sized problems.
    "mid": TileConfig(64, 64, 8, 8, 4, 4, 32, prefetch=True),
    # 256 invocations, 8x8 each; 33.8 KiB shared: NVIDIA-class (48 KiB) devices, big problems.
    "large": TileConfig(128, 128, 16, 8, 8),
    # The same with BK = 8: 16.9 KiB, fits 32 KiB devices.
    "large_bk8": TileConfig(128, 128, 8, 8, 8),
    # 256 invocations, 8x4 each: twice the tiles of "large" for mid-sized problems.
    "medium": TileConfig(128, 64, 16, 8, 4),
    # 256 invocations, 4x4 each; 17.4 KiB: small problems, small-shared-memory devices.
    "small": TileConfig(64, 64, 16, 4, 4),
    # 64 invocations, 4x4 each, K steps of 32; 18 KiB: GPUs, small problems, whose K loop waits on
    # memory once per step with a workgroup or two per multiprocessor (fewer, longer steps).
    "tiny": TileConfig(32, 32, 32, 4, 4),
}
# Use the largest tile that still yields at least this many workgroups (to fill the GPU's cores).
MIN_TILES = 128
# Fewer tiles than MIN_TILES and K at least SPLIT_K_DEPTH times the longer side of C (a matrix
# times a vector, deep products) cut K into slices of at least SPLIT_K_MIN elements, one batch of
# the kernel each, summed by reduce.sum_into. Shallower products lose more to that sum than they
# gain (tuning.py).
SPLIT_K_MIN = 64
SPLIT_K_DEPTH = MATMUL_SPLIT_K_DEPTH


def _fits(cfg: TileConfig, dev) -> bool:
    return not cfg.problems(dev)


# float64's tile (matmul.comp's F64): a double takes two registers and twice a float's shared
# memory, so a 64 x 64 tile over K steps of 8 with 4 x 4 per invocation (17 KiB, within lavapipe's
# 32); VKBACKEND_MATMUL_CONFIG, whose sizes are float32's, does not apply.
F64_CONFIG = TileConfig(64, 64, 8, 4, 4)


def f64_config(dev) -> TileConfig | None:
    """F64_CONFIG where `dev` holds it (its threads, and twice a float tile's shared memory)."""
    cfg = F64_CONFIG
    ok = cfg.threads <= dev.max_workgroup_invocations and 2 * cfg.shared_bytes <= dev.max_shared_memory
    return cfg if ok else None


def env_config(dev) -> TileConfig | None:
    """VKBACKEND_MATMUL_CONFIG, checked against `dev` (ValueError), or None when unset / "auto"."""
    cfg = registry.get("VKBACKEND_MATMUL_CONFIG")
    if cfg is None:
        return None
    bad = cfg.problems(dev)
    if bad:
        raise ValueError(f"VKBACKEND_MATMUL_CONFIG={registry.raw('VKBACKEND_MATMUL_CONFIG')!r} does not fit "
                         f"{dev.name}: {'; '.join(bad)}")
    return cfg


def choose_config(dev, m: int, n: int, batch: int = 1) -> TileConfig:
    """The tile shape for an m x n (x batch) product on `dev`: VKBACKEND_MATMUL_CONFIG if set, else
    the largest shape that fits the device and gives >= MIN_TILES workgroups (the smallest otherwise)."""
    cfg = env_config(dev)
    if cfg is not None:
        return cfg
    min_tiles = registry.get("VKBACKEND_MATMUL_MIN_TILES") or MIN_TILES
    big_device = dev.subgroup_size >= 32 and not dev.is_software
    order = MATMUL_ORDER if big_device else ("large_bk8", "small")  # largest first (tuning.py)
    fitting = [CONFIGS[name] for name in order if _fits(CONFIGS[name], dev)]
    if not fitting:  # tiny devices: shrink until it fits
        cfg = TileConfig(32, 32, 4, 4, 4, 8, 8 * 2)
        while not _fits(cfg, dev) and cfg.bm > 8:
            cfg = TileConfig(cfg.bm // 2, cfg.bn // 2, 4, 4, 4, 2, 4)
        return cfg
    for cfg in fitting:
        if math.ceil(m / cfg.bm) * math.ceil(n / cfg.bn) * batch >= min_tiles:
            return cfg
    return fitting[-1]


# -- the low-level entry ----------------------------------------------------------------------
def record_gemm(a: Array, b: Array, c: Array, *, m: int, n: int, k: int, lda: int, ldb: int, ldc: int,
                offset_a: int | None = None, offset_b: int | None = None, offset_c: int | None = None,
                trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0, beta: float = 0.0,
                batch_shape=(), batch_strides_a=(), batch_strides_b=(), batch_strides_c=(),
                config: TileConfig | str | None = None, half_in: int = 0, f64: bool = False) -> None:
    """Record C = alpha * op(A) @ op(B) + beta * C on raw storage, without checks beyond the kernel's.

    a, b, c give the buffers (and, unless offset_* is given, the element offsets); op(A) is m x k,
    stored row-major as m x k (k x m with trans_a) with leading dimension lda; likewise B (k x n,
    or n x k with trans_b) and C (m x n, ldc). batch_shape with per-operand element strides (0 =
    broadcast) adds batches. beta == 0 never reads C. c must not overlap a or b.
    half_in: a and b are float16 (offsets, leading dims and strides in halves), read as float16_t
    (1: 16-bit storage) or as packed words (2: any device); C stays float32 (matmul.comp's HALF_IN).
    f64: a, b and c are float64, on F64_CONFIG's tile (config is then ignored; alpha and beta are
    taken as float32; split-K sums its partial products in float64).
    Where the device's loop budget cannot hold the whole K loop in one invocation (lavapipe), K is
    cut into slices, one dispatch each, the later ones accumulating into C with beta = 1;
    LoopBudgetError (before any GPU work) where even one K step per tile does not fit."""
    dev = runtime.get().device
    if m == 0 or n == 0 or math.prod(batch_shape) == 0:
        return
    offs, m, extents, (sa, sb, sc) = gemm_layout(a, b, c, (offset_a, offset_b, offset_c), m, lda, ldc,
        trans_a, batch_shape, (batch_strides_a, batch_strides_b, batch_strides_c))
    if len(extents) > _MAX_BATCH_RANK:  # record the outer dims one by one
        outer = len(extents) - _MAX_BATCH_RANK
        check_loop_budget(m, n, k, extents[outer:], config, f64)  # every call alike: fail before the first
        for (oa, ob, oc), inner, (ia, ib, ic) in outer_batches(extents, (sa, sb, sc), offs):
            record_gemm(a, b, c, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=ldc, offset_a=oa, offset_b=ob,
                        offset_c=oc, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta,
                        batch_shape=inner, batch_strides_a=ia, batch_strides_b=ib, batch_strides_c=ic,
                        config=config, half_in=half_in, f64=f64)
        return
    batch = math.prod(extents)
    cfg = _config(dev, m, n, batch, config, f64)
    if not extents and beta == 0 and ldc == n and config is None and env_config(dev) is None:
        splits = _split_k(dev, cfg, m, n, k)
        if splits > 1:
            _record_split_k(a, b, c, offs, cfg, splits, m=m, n=n, k=k, lda=lda, ldb=ldb,
                            trans_a=trans_a, trans_b=trans_b, alpha=alpha, half_in=half_in, f64=f64)
            return

    a_vec = _aligned(offs[0], lda, *sa, (m if trans_a else k))
    b_vec = _aligned(offs[1], ldb, *sb, (k if trans_b else n))
    c_vec = _aligned(offs[2], ldc, *sc, n)
    defines = _defines(cfg, trans_a, trans_b, a_vec, b_vec, c_vec, beta != 0, len(extents), half_in, f64,
                       whole=_whole(cfg, m, n, k))
    groups, trips = _grid(dev, cfg, m, n, batch)
    group = swizzle_group(cfg, groups, m, n)
    record_k_slices(_SHADER, defines, cfg.threads, groups, trips, cfg.bk, (a, b, c), offs, m=m, n=n, k=k,
                    lda=lda, ldb=ldb, ldc=ldc, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta,
                    group=group, extents=extents, strides=(sa, sb, sc))


def gemm_layout(a, b, c, offsets, m: int, lda: int, ldc: int, trans_a: bool, batch_shape,
                batch_strides) -> tuple:
    """(element offsets of a, b, c: theirs unless given), then _collapse's m, batch extents and
    per-operand strides: the start of record_gemm and of the float16 kernels' recorders."""
    offs = [x.offset if o is None else o for x, o in zip((a, b, c), offsets)]
    return (offs, *_collapse(m, lda, ldc, trans_a, batch_shape, batch_strides))


def record_k_slices(shader: str, defines: dict, threads: int, groups, trips, bk: int, arrays, offs, *,
                    m, n, k, lda, ldb, ldc, trans_a, trans_b, alpha, beta, group, extents, strides) -> None:
    """Record a GEMM kernel of matmul.comp's push-constant layout over K in the slices the loop
    budget allows (_k_slices), the later ones adding to what the earlier ones wrote (HAS_BETA,
    beta = 1, so they read C)."""
    rt = runtime.get()
    batch = math.prod(extents)
    sa, sb, sc = strides
    for k0, kl in _k_slices(k, bk, trips, m, n, batch):
        first = k0 == 0
        kernel = rt.kernel(shader, defines if first else dict(defines, HAS_BETA=1), threads)
        o_a = offs[0] + (k0 * lda if trans_a else k0)
        o_b = offs[1] + (k0 if trans_b else k0 * ldb)
        push = [m, n, kl, lda, ldb, ldc, o_a, o_b, offs[2], float(alpha), float(beta if first else 1.0),
                batch, group, *extents, *sa, *sb, *sc]
        kernel([x.buffer for x in arrays], push, groups)


def outer_batches(extents, strides, offs):
    """For more batch dims than the push constants hold (_MAX_BATCH_RANK): per index of the outer
    ones, ((a, b, c offsets), the inner extents, (the inner strides of a, b, c))."""
    outer = len(extents) - _MAX_BATCH_RANK
    inner = tuple(st[outer:] for st in strides)
    for idx in np.ndindex(*extents[:outer]):
        yield [o + sum(i * s for i, s in zip(idx, st)) for o, st in zip(offs, strides)], extents[outer:], inner


def _split_k(dev, cfg: TileConfig, m: int, n: int, k: int) -> int:
    """Slices of K for an m x n product that gives too few tiles to fill the device (1: none),
    each of whole BK steps, at least SPLIT_K_MIN long, and within the loop budget in one dispatch."""
    if k < SPLIT_K_DEPTH * max(m, n):
        return 1
    tiles = -(-m // cfg.bm) * -(-n // cfg.bn)
    target = registry.get("VKBACKEND_MATMUL_MIN_TILES") or MIN_TILES
    splits = min(-(-target // tiles), k // max(SPLIT_K_MIN, cfg.bk))
    if splits < 2:
        return 1
    kc = -(-(-(-k // splits)) // cfg.bk) * cfg.bk
    groups, trips = _grid(dev, cfg, m, n, -(-k // kc))
    try:
        if len(_k_slices(kc, cfg.bk, trips, m, n, 1)) > 1:
            return 1
    except launch.LoopBudgetError:
        return 1
    return -(-k // kc)


def _record_split_k(a, b, c, offs, cfg, splits: int, *, m, n, k, lda, ldb, trans_a, trans_b, alpha,
                    half_in: int = 0, f64: bool = False) -> None:
    """C = alpha * op(A) @ op(B) as products over slices of K (kc long, one batch of the kernel;
    the rest of K in a second dispatch beside it), each into its own m x n plane of a workspace,
    then the planes summed into C."""
    from . import reduce  # a sibling primitive; imported here as only this path needs it
    rt = runtime.get()
    kc = -(-(-(-k // splits)) // cfg.bk) * cfg.bk
    full, rest = divmod(k, kc)
    planes = full + (rest > 0)
    work = Array.empty((planes * m * n,), dtypes.float64 if f64 else dtypes.float32)
    step_a, step_b = kc * lda if trans_a else kc, kc if trans_b else kc * ldb
    for first, count, kl in ((0, full, kc), (full, 1, rest)):
        if not count or not kl:
            continue
        o_a, o_b, o_c = offs[0] + first * step_a, offs[1] + first * step_b, first * m * n
        batched = count > 1
        defines = _defines(cfg, trans_a, trans_b, _aligned(o_a, lda, step_a, m if trans_a else kl),
                           _aligned(o_b, ldb, step_b, kl if trans_b else n), _aligned(o_c, n, m * n),
                           False, int(batched), half_in, f64, whole=_whole(cfg, m, n, k))
        groups, _ = _grid(rt.device, cfg, m, n, count)
        push = [m, n, kl, lda, ldb, n, o_a, o_b, o_c, float(alpha), 0.0, count, 0]
        if batched:
            push += [count, step_a, step_b, m * n]
        # the two dispatches write apart: the first needs no barrier before the second
        rt.kernel(_SHADER, defines, cfg.threads)([a.buffer, b.buffer, work.buffer], push, groups,
                                                 barrier=not (first == 0 and rest))
    reduce.sum_into(work, (1, planes, m * n), Array(c._storage, (m * n,), c.dtype, offs[2]))


def _whole(cfg: TileConfig, m: int, n: int, k: int) -> bool:
    """Whether m, n and k are whole tiles and K steps (then every K slice of _k_slices and
    _record_split_k is too)."""
    return m % cfg.bm == 0 and n % cfg.bn == 0 and k % cfg.bk == 0


def _defines(cfg: TileConfig, trans_a, trans_b, a_vec, b_vec, c_vec, has_beta, batch_rank: int,
             half_in: int = 0, f64: bool = False, whole: bool = False) -> dict:
    """matmul.comp's defines for a tile shape, the operands' layout and vec4 access, beta and batch
    (HALF_IN only for float16 operands, F64 for float64 ones, EDGE=0 only for float32's whole tiles,
    PREFETCH only for the tiles that gain by it: the other variants keep their shipped define sets)."""
    d = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "TM": cfg.tm, "TN": cfg.tn,
         "WARP_X": cfg.warp_x, "LANES": cfg.lanes, "TRANS_A": int(bool(trans_a)),
         "TRANS_B": int(bool(trans_b)), "A_VEC": int(a_vec), "B_VEC": int(b_vec),
         "C_VEC": int(c_vec), "HAS_BETA": int(bool(has_beta)), "BATCH_RANK": batch_rank}
    if whole and not (half_in or f64):
        d["EDGE"] = 0  # no bounds tests on the operands' loads (float32: F64's ran 5 % slower so)
    if cfg.prefetch:
        d["PREFETCH"] = 1
    if half_in:
        d["HALF_IN"] = half_in
    if f64:
        d.update(F64=1, VK_WIDE=1)
    return d


def _aligned(*vals) -> bool:
    return all(v % 4 == 0 for v in vals)


def _collapse(m: int, lda: int, ldc: int, trans_a: bool, batch_shape, strides):
    """(m, batch extents, (A, B, C strides)) with batch dims merged where the strides allow, and a
    batch of row-major A over a shared B, with C contiguous across batches, made one taller matrix."""
    extents, (sa, sb, sc) = collapse_dims(list(batch_shape), [list(s) for s in strides])
    if len(extents) == 1 and not trans_a and sb[0] == 0 and sa[0] == m * lda and sc[0] == m * ldc:
        return m * extents[0], [], ([], [], [])
    return m, extents, (sa, sb, sc)


def _config(dev, m: int, n: int, batch: int, config, f64: bool = False) -> TileConfig:
    if f64:  # one tile for float64 (config and the override are float32's)
        return F64_CONFIG
    if config is None:
        return choose_config(dev, m, n, batch)
    cfg = parse_config(config) if isinstance(config, str) else config
    bad = cfg.problems(dev)
    if bad:
        raise ValueError(f"matmul config {cfg}: {'; '.join(bad)}")
    return cfg


def swizzle_group(cfg, groups, m: int, n: int) -> int:
    """Push word 12 of the GEMM kernels: tile rows per group of the launch order's swizzle
    (VKBACKEND_MATMUL_GROUP, default 8), 0 where the grid does not cover every tile (grid-stride
    loops) or the tile rows are no more than one group."""
    tiles_x, tiles_y = -(-n // cfg.bn), -(-m // cfg.bm)
    swizzle = registry.get("VKBACKEND_MATMUL_GROUP")
    swizzle = 8 if swizzle is None else swizzle
    exact = groups[0] == tiles_x and groups[1] == tiles_y
    return swizzle if exact and tiles_y > swizzle > 0 else 0


def _grid(dev, cfg: TileConfig, m: int, n: int, batch: int):
    """Workgroups (x column tiles, y row tiles, z batches), capped by the device, and the
    grid-stride trips each workgroup then makes over them."""
    tiles = (-(-n // cfg.bn), -(-m // cfg.bm), batch)
    groups = tuple(min(t, cap) for t, cap in zip(tiles, dev.max_workgroup_count))
    return groups, tuple(-(-t // g) for t, g in zip(tiles, groups))


def check_loop_budget(m: int, n: int, k: int, batch_extents, config=None, f64: bool = False) -> None:
    """LoopBudgetError now (before any GPU work) if record_gemm could not fit this product into the
    device's loop budget; m and batch_extents as after _collapse."""
    if launch.loop_budget() is None or m == 0 or n == 0 or math.prod(batch_extents) == 0:
        return
    dev = runtime.get().device
    batch = math.prod(batch_extents[-_MAX_BATCH_RANK:])  # outer dims are recorded one by one
    cfg = _config(dev, m, n, batch, config, f64)
    _k_slices(k, cfg.bk, _grid(dev, cfg, m, n, batch)[1], m, n, batch)


def _k_slices(k: int, bk: int, trips: tuple, m: int, n: int, batch: int) -> list[tuple[int, int]]:
    """(first k, length) of each dispatch: the whole of K in one where the loop budget allows (always
    on GPUs), else slices of whole BK steps short enough for it.

    Cost of one invocation of matmul.comp (only its tile loops and K loop count; the rest is
    [[unroll]]ed; each loop's exit also counts the loops nested in it):
    Z * (Y * (X * (nk + 2) + 3) + 4) + 4 for nk = ceil(K / BK) steps and X, Y, Z the grid-stride
    trips over column tiles, row tiles and batches."""
    x, y, z = trips
    nk = -(-k // bk)
    try:
        pieces = launch.budget_chunks(nk, per_trip=x * y * z, reserve=2 * x * y * z + 3 * y * z + 4 * z + 3)
    except launch.LoopBudgetError as e:
        raise launch.LoopBudgetError(
            f"matmul: a {m}x{n} product (batch {batch}) walks {x * y * z} tiles per workgroup "
            f"(grid-stride over the capped workgroup counts), too many for one K step each: {e}") from None
    if pieces <= 1:
        return [(0, k)]
    step = -(-nk // pieces) * bk
    return [(k0, min(step, k - k0)) for k0 in range(0, k, step)]


# -- operands and checks ----------------------------------------------------------------------
def _result_dtype(name: str, *ops, integers: bool = False) -> np.dtype:
    """The product's dtype from its operands (vk.Arrays or kept host data): float16 where numpy
    keeps float16 (float16 with float16 or bool: matmul_half.py), bfloat16 likewise (as torch and
    JAX keep it; ml_dtypes' numpy loop gives float32), float32 where numpy would promote
    to another float; with `integers`, int32 or uint32 (dtypes.narrow refuses int32 with uint32,
    which numpy makes int64); TypeError otherwise."""
    held = [held_dtype(o) for o in ops]
    promoted = dtypes.result_type(*held)
    exact = any(map(dtypes.is_wide, held))  # a wide operand: numpy's result is kept (float64 too)
    if integers and promoted.kind in "iu":
        return dtypes.narrow(promoted, name, wide=True, exact=exact)
    if integers and promoted.kind == "b":
        raise TypeError(f"{name}: bool operands are not supported: expected a numeric dtype (int32, "
                        "uint32, float32); cast with .astype()")
    if not dtypes.is_float(promoted):
        raise TypeError(f"{name}: {promoted} operands are not supported (float32, float64, float16 or "
                        "bfloat16 only); cast with .astype(vk.float32)")
    if exact:  # float64 kept (numpy's float64 of a 64-bit operand too)
        return dtypes.narrow(promoted, name, exact=True)
    return promoted if dtypes.is_half(promoted) else dtypes.float32


def _batch_shape(name: str, shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*[s[:-2] for s in shapes]))
    except ValueError:
        raise ValueError(f"{name}: batch dimensions of shapes "
                         f"{' and '.join(map(str, shapes))} do not broadcast") from None


def _strides(shape: tuple, out_batch: tuple, matrix_words: int) -> list:
    """Element strides over out_batch for a contiguous (..., r, c) operand (0 where broadcast)."""
    batch = shape[:-2]
    padded = (1,) * (len(out_batch) - len(batch)) + tuple(batch)
    st, acc = [], matrix_words
    for e in reversed(padded):
        st.append(acc if e != 1 else 0)
        acc *= e
    return st[::-1]


def _contiguous_strides(out_batch: tuple, matrix_words: int) -> list:
    st, acc = [], matrix_words
    for e in reversed(out_batch):
        st.append(acc)
        acc *= e
    return st[::-1]


def _check_product(m, n, k, lda, ldc, trans_a, batch, strides, f64: bool = False) -> None:
    """The loop budget's LoopBudgetError before any upload, as record_gemm would raise it."""
    m, extents, _ = _collapse(m, lda, ldc, trans_a, batch, strides)
    check_loop_budget(m, n, k, extents, f64=f64)


# -- public API -------------------------------------------------------------------------------
_ENV = ("VKBACKEND_MATMUL_CONFIG", "VKBACKEND_MATMUL_GROUP", "VKBACKEND_MATMUL_MIN_TILES")


@recipe(env=_ENV)
def matmul(x1, x2) -> Array:
    """numpy.matmul(x1, x2) (the `@` operator): float32 and float64 on the tiled kernel (float64
    summed in float64); the integers exact, the products and sums wrapping as numpy's, by
    elementwise multiply + sum over K (_summed_matmul, float64's too on a device too small for its
    tile); bool @ bool TypeError.

    1-D operands: x1 (K,) is a row (1, K), x2 (K,) a column (K, 1), and that axis is dropped from
    the result. Leading dims broadcast: (3, 1, 5, 7) @ (2, 7, 4) -> (3, 2, 5, 4). K == 0 gives zeros."""
    # host data kept (numpy) until every check has passed; float16 promotes to float32 (numpy's)
    a = operand(x1, "matmul", "x1", host="keep", half=True, wide=True)
    b = operand(x2, "matmul", "x2", host="keep", half=True, wide=True)
    for index, o in enumerate((a, b)):
        if len(o.shape) == 0:
            raise ValueError(f"matmul: Input operand {index} does not have enough dimensions "
                             f"(has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    dtype = _result_dtype("matmul", a, b, integers=True)
    sa = (1,) + a.shape if len(a.shape) == 1 else a.shape
    sb = b.shape + (1,) if len(b.shape) == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned: the inner dimensions "
                         f"{sa[-1]} (last of operand 0) and {sb[-2]} "
                         f"({'only' if len(b.shape) == 1 else 'second-to-last'} of operand 1) differ")
    batch = _batch_shape("matmul", [sa, sb])
    m, k, n = sa[-2], sa[-1], sb[-1]
    out_shape = batch + ((m,) if len(a.shape) > 1 else ()) + ((n,) if len(b.shape) > 1 else ())
    if dtypes.is_half(dtype):
        return _half_matmul(a, b, sa, sb, batch, m, k, n, out_shape, dtype)
    dev = runtime.get().device
    f64 = dtype == dtypes.float64 and f64_config(dev) is not None
    if dtype != dtypes.float32 and not f64:
        if math.prod(out_shape) == 0:
            return Array.empty(out_shape, dtype)
        A, B = asarray(a, dtype).reshape(sa), asarray(b, dtype).reshape(sb)
        return _summed_matmul(A, B, batch, m, k, n).reshape(out_shape)
    env_config(dev)  # a bad override fails here, before any GPU work
    strides = (_strides(sa, batch, m * k), _strides(sb, batch, k * n), _contiguous_strides(batch, m * n))
    _check_product(m, n, k, k, n, False, batch, strides, f64)
    A, B = asarray(a, dtype), asarray(b, dtype)
    out = Array.empty(out_shape, dtype)
    if out.size == 0:
        return out
    record_gemm(A, B, out, m=m, n=n, k=k, lda=k, ldb=n, ldc=n, batch_shape=batch,
                batch_strides_a=strides[0], batch_strides_b=strides[1], batch_strides_c=strides[2], f64=f64)
    return out


def _half_matmul(a, b, sa: tuple, sb: tuple, batch: tuple, m: int, k: int, n: int, out_shape: tuple,
                 half: np.dtype) -> Array:
    """float16 @ float16 or bfloat16 @ bfloat16 (a bool operand taken as the half, as numpy does):
    float32 sums rounded once to the half, on matmul_half.py's kernels."""
    from . import matmul_half  # it builds on this module
    env_config(runtime.get().device)
    strides = (_strides(sa, batch, m * k), _strides(sb, batch, k * n), _contiguous_strides(batch, m * n))
    matmul_half.check(m, n, k, k, n, False, False, batch, strides, half)
    A, B = asarray(a, half), asarray(b, half)
    return matmul_half.product(A, B, out_shape, m=m, n=n, k=k, lda=k, ldb=n, batch_shape=batch,
                               strides=strides)


# Elements of the summed path's products (batch x rows x K-slice x N) made at once, at most
# (beyond it only where one row of one K step, batch x N, is larger: no larger than the result),
# and within what a shader may bind (the 8-byte dtypes have no windows).
INT_CHUNK = 1 << 26


def _summed_matmul(A: Array, B: Array, batch: tuple, m: int, k: int, n: int) -> Array:
    """A (..., m, k) @ B (..., k, n) -> (*batch, m, n) in A's dtype (B's too) for the dtypes
    without a tiled kernel (the integers, float64): sum over k of A[..., :, k, None] *
    B[..., None, k, :], the integers exact modulo 2**bits (the device's multiply and sum wrap as
    numpy's do), float64 summed as vk.sum does, by blocks of rows and K slices whose products hold
    at most INT_CHUNK elements, the slices' sums accumulated by add, the row blocks written into
    the result. K == 0: zeros."""
    from .reduce import sum as _sum  # siblings; imported here as only this path needs them
    from .setitem import setitem
    dtype = A.dtype
    if k == 0:
        return zeros(batch + (m, n), dtype=dtype)
    chunk = min(INT_CHUNK, runtime.get().device.max_storage_buffer_range // dtype.itemsize)
    per_row = max(1, math.prod(batch) * n)    # product elements per (row, k) pair
    mc = max(1, min(m, chunk // per_row))
    kc = max(1, min(k, chunk // (per_row * mc)))
    out = None if mc == m else Array.empty(batch + (m, n), dtype)
    for i0 in range(0, m, mc):
        Ai = A if mc == m else A[..., i0:i0 + mc, :]
        acc = None
        for k0 in range(0, k, kc):
            a = Ai if kc == k else Ai[..., k0:k0 + kc]
            b = B if kc == k else B[..., k0:k0 + kc, :]
            prod = multiply(a.reshape(a.shape + (1,)), b.reshape(b.shape[:-2] + (1,) + b.shape[-2:]))
            part = _sum(prod, axis=-2, dtype=dtype)
            acc = part if acc is None else add(acc, part)
        if out is None:
            return acc
        setitem(out, (Ellipsis, slice(i0, i0 + mc), slice(None)), acc)
    return out


@recipe(env=_ENV)
def gemm(a, b, trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0, beta: float = 0.0,
         c: Array | None = None) -> Array:
    """C = alpha * op(A) @ op(B) + beta * C, recorded; returns C.

    a: (..., M, K), or (..., K, M) with trans_a (read transposed in place, no copy); b: (..., K, N),
    or (..., N, K) with trans_b; leading dims broadcast as in matmul. float32, float64 (computed in
    float64; with a 64-bit operand, numpy's float64 result), or both float16 (float32 products and
    sums, matmul_half.py), both at least 2-D.
    c: None -> a new (..., M, N) array (beta must be 0; float16 for float16 operands, rounded
    once); else a vk.Array of exactly that shape and the product's dtype (float32 for float16
    operands: their product added in float32), not sharing memory with a or b, updated in place
    and returned. beta == 0 never reads C (so NaNs in it do not propagate), as in BLAS."""
    A_ = operand(a, "gemm", "a", host="keep", half=True, wide=True)
    B_ = operand(b, "gemm", "b", host="keep", half=True, wide=True)
    for index, o in enumerate((A_, B_)):
        if len(o.shape) < 2:
            raise ValueError(f"gemm: operand {index} has shape {o.shape}: expected at least 2 dimensions "
                             "(use matmul for vectors)")
    for name, v in (("alpha", alpha), ("beta", beta)):
        if not isinstance(v, (numbers.Real, np.floating, np.integer)) or isinstance(v, (bool, np.bool_)):
            raise TypeError(f"gemm: {name} must be a real number, got {type(v).__name__}")
    dtype = _result_dtype("gemm", A_, B_)
    m, k = A_.shape[-2:][::-1] if trans_a else A_.shape[-2:]
    kb, n = B_.shape[-2:][::-1] if trans_b else B_.shape[-2:]
    if k != kb:
        raise ValueError(f"gemm: op(a) is {m}x{k} (a{A_.shape}{', transposed' if trans_a else ''}) and op(b) is "
                         f"{kb}x{n} (b{B_.shape}{', transposed' if trans_b else ''}): inner dimensions "
                         f"{k} and {kb} differ")
    batch = _batch_shape("gemm", [A_.shape, B_.shape])
    out_shape = batch + (m, n)
    if c is None:
        if beta != 0:
            raise ValueError("gemm: beta != 0 needs c")
    else:
        if not isinstance(c, Array):
            raise TypeError(f"gemm: c must be a vk.Array (updated in place), got {type(c).__name__}")
        if dtypes.is_half(c.dtype) and dtypes.is_half(dtype):
            raise TypeError(f"gemm: c has dtype {c.dtype}: a {c.dtype} c is not updated in place; pass "
                            f"c=None (a new {dtype} result) or a float32 c ({dtype} operands, float32 C)")
        want = dtypes.float32 if dtypes.is_half(dtype) else dtype
        if c.dtype != want:
            raise TypeError(f"gemm: c has dtype {c.dtype}: expected {want} (the product's)")
        if c.shape != out_shape:
            raise ValueError(f"gemm: c has shape {c.shape}; a{A_.shape} and b{B_.shape} give {out_shape}")
        for index, o in enumerate((A_, B_)):
            if isinstance(o, Array) and o.buffer is c.buffer:
                raise ValueError(f"gemm: c shares memory with operand {index}; pass a copy")
    dev = runtime.get().device
    env_config(dev)
    sa, sb = A_.shape, B_.shape
    strides = (_strides(sa, batch, m * k), _strides(sb, batch, k * n), _contiguous_strides(batch, m * n))
    if dtypes.is_half(dtype):
        from . import matmul_half  # it builds on this module
        matmul_half.check(m, n, k, sa[-1], n, trans_a, trans_b, batch, strides, dtype)
        A, B = asarray(A_, dtype), asarray(B_, dtype)
        return matmul_half.product(A, B, out_shape, c=c, m=m, n=n, k=k, lda=sa[-1], ldb=sb[-1],
                                   trans_a=trans_a, trans_b=trans_b, alpha=alpha,
                                   beta=beta if c is not None else 0.0, batch_shape=batch, strides=strides)
    f64 = dtype == dtypes.float64
    if f64 and f64_config(dev) is None:
        raise TypeError(f"gemm: float64 needs {2 * F64_CONFIG.shared_bytes} bytes of shared memory and "
                        f"{F64_CONFIG.threads} invocations per workgroup, more than {dev.name} "
                        "has; use matmul (which sums float64 products elementwise there)")
    _check_product(m, n, k, sa[-1], n, trans_a, batch, strides, f64)
    A, B = asarray(A_, dtype), asarray(B_, dtype)
    out = Array.empty(out_shape, dtype) if c is None else c
    if out.size == 0:
        return out
    beta = beta if c is not None else 0.0
    # the kernel takes alpha and beta as float32: float64's that float32 does not hold scale the
    # kernel's bare product afterwards, in float64
    scaled = f64 and not (_float32_exact(alpha) and _float32_exact(beta))
    target = Array.empty(out_shape, dtype) if scaled else out
    record_gemm(A, B, target, m=m, n=n, k=k, lda=sa[-1], ldb=sb[-1], ldc=n, trans_a=trans_a,
                trans_b=trans_b, alpha=1.0 if scaled else alpha, beta=0.0 if scaled else beta,
                batch_shape=batch, batch_strides_a=strides[0], batch_strides_b=strides[1],
                batch_strides_c=strides[2], f64=f64)
    if scaled:
        value = multiply(target, float(alpha))
        if beta != 0:
            value = add(value, multiply(out, float(beta)))
        copy_into(value, out)
    return out


def _float32_exact(v) -> bool:
    with np.errstate(over="ignore"):
        return float(np.float32(v)) == float(v)
