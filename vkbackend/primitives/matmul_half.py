"""float16 and bfloat16 matrix products: half operands, float32 products and sums, one rounding to
the half at the end (as cuBLAS and torch do). matmul.py routes here when both operands are the same
half (numpy keeps float16 @ float16 in float16; with float32 it promotes to float32 and never
comes here).

The kernels, chosen per device and dtype (`path`):
  'coopmat'   shaders/primitives/matmul_coopmat.comp: VK_KHR_cooperative_matrix 16 x 16 x 16
              float16 products accumulating in float32, where the device reports that shape and
              has COOPMAT_FEATURES and a fixed subgroup size (NVIDIA, ...; not lavapipe);
  'storage16' matmul.comp with HALF_IN=1: float16_t loads (16-bit storage), float32 arithmetic;
  'packed'    matmul.comp with HALF_IN=2: halves unpacked from 32-bit words (any device);
  'bf16'      matmul.comp with HALF_IN=3: bfloat16 halves likewise (every device: glslang 13.1
              has no bfloat16 cooperative matrices, GL_EXT_bfloat16); large bfloat16 products
              cast to float32 and run on float32's tiles instead (tuning.BF16_VIA_FLOAT32_WORK).
All write a float32 matrix (every K slice of the loop budget adding into it), which astype rounds
to the half once (the cooperative-matrix kernel writes float16 itself where it can); gemm with a
float32 `c` writes into `c` itself (halves in, float32 out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from . import launch, tuning
from . import matmul as mm

SHADER = "primitives/matmul_coopmat.comp"
# What each kernel needs of the device beyond the core API (VkPhysicalDevice*Features names).
COOPMAT_FEATURES = frozenset({"cooperativeMatrix", "shaderFloat16", "storageBuffer16BitAccess",
                              "vulkanMemoryModel"})
HALF_STORAGE = frozenset({"storageBuffer16BitAccess", "shaderFloat16"})
_HALF_IN = {"storage16": 1, "packed": 2, "bf16": 3, "float32": 0}
# Defines added to matmul_coopmat.comp's: tests set COOPMAT_EMULATED to run it on lavapipe.
EXTRA_DEFINES: dict = {}


def staged_tile_bytes(stages: int, a_tile: tuple, b_tile: tuple, subgroups: int) -> int:
    """Shared memory of a kernel staging float16 tiles (lib/staged_steps.glsl: this module's and the
    packed convolutions'): `stages` copies of A and B ((rows, halves) each, every row padded by one
    16-byte vector against bank conflicts) and a 16 x 16 float32 scratch per subgroup."""
    padded = sum(rows * (cols // 8 + 1) for rows, cols in (a_tile, b_tile))
    return stages * 16 * padded + subgroups * 1024


@dataclass(frozen=True)
class CoopConfig:
    """matmul_coopmat.comp's tile: BM x BN of C per workgroup, K in BK steps, SG_M x SG_N subgroups,
    STAGES shared buffers; taken for products of at least `waves` workgroups per multiprocessor,
    and with `whole_only` only where every tile and K step is whole (WHOLE: loads without bounds)."""
    bm: int
    bn: int
    bk: int
    sg_m: int
    sg_n: int
    stages: int = 2
    waves: int = 1
    whole_only: bool = False

    def threads(self, sgs: int) -> int:
        return self.sg_m * self.sg_n * sgs

    def shared_bytes(self, trans_a: bool, trans_b: bool) -> int:
        a_tile = (self.bk, self.bm) if trans_a else (self.bm, self.bk)
        b_tile = (self.bn, self.bk) if trans_b else (self.bk, self.bn)
        return staged_tile_bytes(self.stages, a_tile, b_tile, self.sg_m * self.sg_n)

    def is_whole(self, m: int, n: int, k: int, a_vec: bool, b_vec: bool) -> bool:
        return a_vec and b_vec and m % self.bm == 0 and n % self.bn == 0 and k % self.bk == 0


# The first that fits the product (tuning: docs/bench/2026-11-25/h200-session15-hgemm-sweep.txt). One
# shared stage with the next step's operands in registers beats two stages once the loads have no
# bounds tests; a whole-only tile's loads have none, the others test them only in edge tiles and the
# last K step (a uniform branch; the two paths in one loop cost the 8-subgroup tile a third).
COOP_CONFIGS = (CoopConfig(128, 128, 64, 2, 4, stages=1, waves=2, whole_only=True),
                CoopConfig(128, 128, 32, 2, 2, stages=1),
                CoopConfig(64, 64, 64, 2, 2, stages=1, waves=0))


def has_coopmat(dev) -> bool:
    """Whether matmul_coopmat.comp runs on `dev` (ops/conv/kernels.coopmat_key asks the same)."""
    return (COOPMAT_FEATURES <= dev.features and dev.has_cooperative_matrix(16, 16, 16)
            and dev.min_subgroup_size == dev.max_subgroup_size)


def path(dev=None, half: np.dtype = dtypes.float16) -> str:
    """'coopmat', 'storage16' or 'packed': the kernel float16 products take on `dev` (the open
    device); 'bf16' for bfloat16 ones (glslang 13 has no bfloat16 cooperative matrices)."""
    if half == dtypes.bfloat16:
        return "bf16"
    dev = dev or runtime.get().device
    if has_coopmat(dev) and all(_coop_configs(dev, ta, tb) for ta in (False, True) for tb in (False, True)):
        return "coopmat"
    return "storage16" if HALF_STORAGE <= dev.features else "packed"


def _coop_configs(dev, trans_a: bool, trans_b: bool) -> list:
    return [c for c in COOP_CONFIGS if c.threads(dev.subgroup_size) <= dev.max_workgroup_invocations
            and c.shared_bytes(trans_a, trans_b) <= dev.max_shared_memory]


def _coop_config(dev, m: int, n: int, k: int, batch: int, trans_a: bool, trans_b: bool,
                 a_vec: bool = False, b_vec: bool = False) -> CoopConfig:
    """The first config that fits: whole where it must be, and enough workgroups (else the last)."""
    fitting = _coop_configs(dev, trans_a, trans_b)
    for cfg in fitting:
        if cfg.whole_only and not cfg.is_whole(m, n, k, a_vec, b_vec):
            continue
        if math.ceil(m / cfg.bm) * math.ceil(n / cfg.bn) * batch >= cfg.waves * dev.multiprocessors:
            return cfg
    return fitting[-1]


def check(m: int, n: int, k: int, lda: int, ldc: int, trans_a: bool, trans_b: bool, batch, strides,
          half: np.dtype = dtypes.float16) -> None:
    """LoopBudgetError (before any GPU work) where the product does not fit the loop budget."""
    m, extents, _ = mm._collapse(m, lda, ldc, trans_a, batch, strides)
    if path(half=half) != "coopmat":
        mm.check_loop_budget(m, n, k, extents)
        return
    if launch.loop_budget() is None or m == 0 or n == 0 or math.prod(extents) == 0:
        return
    dev = runtime.get().device
    nb = math.prod(extents[-mm._MAX_BATCH_RANK:])
    cfg = _coop_config(dev, m, n, k, nb, trans_a, trans_b)   # the K steps of any config that fits
    mm._k_slices(k, cfg.bk, mm._grid(dev, _tile(cfg), m, n, nb)[1], m, n, nb)


def _tile(cfg: CoopConfig):
    """A stand-in with the .bm / .bn that matmul._grid reads."""
    return mm.TileConfig(cfg.bm, cfg.bn, cfg.bk, 4, 4, 1, 1)


def product(A: Array, B: Array, out_shape: tuple, *, c: Array | None = None, m: int, n: int, k: int,
            lda: int, ldb: int, trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0,
            beta: float = 0.0, batch_shape=(), strides=((), (), ())) -> Array:
    """alpha * op(A) @ op(B) (+ beta * c) for float16 or bfloat16 A, B (contiguous (..., rows, ld),
    batch strides in halves). c None: a new array of out_shape in A's dtype, summed in float32 and
    rounded once (beta must be 0): by the cooperative-matrix kernel itself where it can (one K
    slice, an even row length), else through a float32 array; else c (float32) updated in place
    and returned."""
    half = A.dtype
    kind = path(half=half)
    if kind == "bf16" and m * n * k * math.prod(batch_shape) >= tuning.BF16_VIA_FLOAT32_WORK:
        A, B, kind = A.astype(dtypes.float32), B.astype(dtypes.float32), "float32"  # (tuning.py)
    if c is not None:
        _record(kind, A, B, c, m=m, n=n, k=k, lda=lda, ldb=ldb, trans_a=trans_a, trans_b=trans_b,
                alpha=alpha, beta=beta, batch_shape=batch_shape, strides=strides)
        return c
    if math.prod(out_shape) == 0:
        return Array.empty(out_shape, half)
    direct = kind == "coopmat" and n % 2 == 0 and launch.loop_budget() is None
    out = Array.empty(out_shape, half if direct else dtypes.float32)
    _record(kind, A, B, out, m=m, n=n, k=k, lda=lda, ldb=ldb, trans_a=trans_a, trans_b=trans_b,
            alpha=alpha, beta=0.0, batch_shape=batch_shape, strides=strides, out_half=direct)
    return out if direct else out.astype(half)


def _record(kind, A, B, C, *, m, n, k, lda, ldb, trans_a, trans_b, alpha, beta, batch_shape, strides,
            out_half: bool = False) -> None:
    if kind != "coopmat":
        mm.record_gemm(A, B, C, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=n, trans_a=trans_a, trans_b=trans_b,
                       alpha=alpha, beta=beta, batch_shape=batch_shape, batch_strides_a=strides[0],
                       batch_strides_b=strides[1], batch_strides_c=strides[2], half_in=_HALF_IN[kind])
        return
    record_coopmat(A, B, C, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=n, trans_a=trans_a, trans_b=trans_b,
                   alpha=alpha, beta=beta, batch_shape=batch_shape, batch_strides_a=strides[0],
                   batch_strides_b=strides[1], batch_strides_c=strides[2], out_half=out_half)


def record_coopmat(a: Array, b: Array, c: Array, *, m: int, n: int, k: int, lda: int, ldb: int, ldc: int,
                   offset_a: int | None = None, offset_b: int | None = None, offset_c: int | None = None,
                   trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0, beta: float = 0.0,
                   batch_shape=(), batch_strides_a=(), batch_strides_b=(), batch_strides_c=(),
                   out_half: bool = False) -> None:
    """matmul.record_gemm's contract (float16 a, b; float32 c; offsets in elements) on
    matmul_coopmat.comp: batch dims past the push constants' four recorded one by one, K cut into
    slices (the later ones adding into C) where the loop budget asks for it, a product whole but
    for M or N in parts (_whole_block). out_half: c is
    float16, written rounded (OUT_HALF: ldc and c's offsets even, beta 0, no loop budget)."""
    dev = runtime.get().device
    if m == 0 or n == 0 or math.prod(batch_shape) == 0:
        return
    offs, m, extents, (sa, sb, sc) = mm.gemm_layout(a, b, c, (offset_a, offset_b, offset_c), m, lda, ldc,
        trans_a, batch_shape, (batch_strides_a, batch_strides_b, batch_strides_c))
    if len(extents) > mm._MAX_BATCH_RANK:
        for (oa, ob, oc), inner, (ia, ib, ic) in mm.outer_batches(extents, (sa, sb, sc), offs):
            record_coopmat(a, b, c, m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=ldc, offset_a=oa, offset_b=ob,
                           offset_c=oc, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta,
                           batch_shape=inner, batch_strides_a=ia, batch_strides_b=ib, batch_strides_c=ic,
                           out_half=out_half)
        return
    batch = math.prod(extents)
    # 16-byte vectors of 8 halves where every row starts on one and none straddles the end
    a_vec = _aligned8(offs[0], lda, *sa, m if trans_a else k)
    b_vec = _aligned8(offs[1], ldb, *sb, k if trans_b else n)
    cfg = _coop_config(dev, m, n, k, batch, trans_a, trans_b, a_vec, b_vec)
    rows, cols = (0, 0) if cfg.is_whole(m, n, k, a_vec, b_vec) else _whole_block(dev, m, n, k, batch, trans_a,
                                                                                  trans_b, a_vec, b_vec)
    if rows:   # the whole tiles on the whole-only tile, then the columns right of them, then the rows below
        for r0, nr, c0, nc in ((0, rows, 0, cols), (0, rows, cols, n - cols), (rows, m - rows, 0, n)):
            if nr and nc:
                record_coopmat(a, b, c, m=nr, n=nc, k=k, lda=lda, ldb=ldb, ldc=ldc,
                               offset_a=offs[0] + (r0 if trans_a else r0 * lda),
                               offset_b=offs[1] + (c0 * ldb if trans_b else c0), offset_c=offs[2] + r0 * ldc + c0,
                               trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta,
                               batch_shape=tuple(extents), batch_strides_a=sa, batch_strides_b=sb,
                               batch_strides_c=sc, out_half=out_half)
        return
    defines = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "SG_M": cfg.sg_m, "SG_N": cfg.sg_n,
               "STAGES": cfg.stages, "WHOLE": int(cfg.is_whole(m, n, k, a_vec, b_vec)),
               "SGS": dev.subgroup_size, "TRANS_A": int(bool(trans_a)), "TRANS_B": int(bool(trans_b)),
               "A_VEC": int(a_vec), "B_VEC": int(b_vec),
               "HAS_BETA": int(beta != 0), "BATCH_RANK": len(extents), **EXTRA_DEFINES}
    if out_half:
        assert beta == 0 and ldc % 2 == 0 and offs[2] % 2 == 0 and all(s % 2 == 0 for s in sc), \
            "OUT_HALF writes whole words: even ldc and offsets, no beta"
        defines["OUT_HALF"] = 1
    groups, trips = mm._grid(dev, _tile(cfg), m, n, batch)
    mm.record_k_slices(SHADER, defines, cfg.threads(dev.subgroup_size), groups, trips, cfg.bk, (a, b, c), offs,
                       m=m, n=n, k=k, lda=lda, ldb=ldb, ldc=ldc, trans_a=trans_a, trans_b=trans_b, alpha=alpha,
                       beta=beta, group=mm.swizzle_group(cfg, groups, m, n), extents=extents,
                       strides=(sa, sb, sc))


def _whole_block(dev, m: int, n: int, k: int, batch: int, trans_a: bool, trans_b: bool, a_vec: bool,
                 b_vec: bool) -> tuple:
    """(rows, columns) of a ragged product whole but for M or N (tokens x model width, or x a
    vocabulary) that a whole-only tile would take if they were the whole product ((0, 0): none);
    the columns right of them and the rows below, fewer than a tile, go to further dispatches."""
    for cfg in _coop_configs(dev, trans_a, trans_b):
        if cfg.whole_only:
            rows, cols = m - m % cfg.bm, n - n % cfg.bn
            if (rows and cols and cfg.is_whole(rows, cols, k, a_vec, b_vec)
                    and _coop_config(dev, rows, cols, k, batch, trans_a, trans_b, a_vec, b_vec) == cfg):
                return rows, cols
    return 0, 0


def _aligned8(*vals) -> bool:
    return all(v % 8 == 0 for v in vals)
