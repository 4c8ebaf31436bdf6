"""The planners' defaults where the configuration (config.py) does not set them, and the
measurements behind them: sweeps of tools/benchmarks/conv.py on an NVIDIA H100 80GB HBM3 (132
multiprocessors, NVIDIA Vulkan driver 580.159.04), 2026-11-23 and 2026-11-24; the runs are in
docs/bench/ and summarized in docs/conv.md. Software devices (lavapipe) take small tiles: each
invocation runs as a SIMD lane, switched at every barrier. Grids are sized for the device's
multiprocessors (kernels.DeviceKey.multiprocessors: 132 on the H100 and the H200).
"""
from __future__ import annotations

from .kernels import DeviceKey, shared_bytes

# -- float32, conv_gemm.comp and conv_wgrad.comp ---------------------------------------------------
# Register blocks by tile (BM, BN) -> (TM, TN) and a rough relative efficiency per FMA (larger
# blocks reuse each shared-memory read more). Tiles of 256 invocations except the smallest.
CANDIDATES = [
    (128, 128, 8, 8, 1.00),
    (128, 64, 8, 4, 0.90),
    (64, 128, 4, 8, 0.90),
    (64, 64, 4, 4, 0.70),
    (128, 32, 8, 4, 0.80),
    (64, 32, 4, 4, 0.65),
    (128, 16, 4, 4, 0.60),
    (256, 8, 8, 4, 0.50),
    (256, 4, 4, 4, 0.35),
    (32, 32, 4, 4, 0.45),
]


def default_tiles(kind: str, rows: int, cols: int, batches: int, red: int, devkey: DeviceKey,
                  transposed: bool = False) -> tuple:
    """(BM, BN, BK, TM, TN) for a GEMM of rows x cols over `red` (per group), `batches` times.

    Forward with more than 32 columns on hardware: 128x64 tiles (8x4 blocks) won or tied almost
    everywhere on the H100; with under two waves of them (two 256-invocation workgroups per
    multiprocessor) a transposed weight read (backward-input) did better with 64x64x16 (BK is
    refined by forward_bk once the gather is known). Otherwise the candidate with the least
    estimated time, (tiles per multiprocessor) x tile work / efficiency; backward-weight splits
    its reduction to fill the device, so there only the padding waste / efficiency counts."""
    if devkey.software:
        bn = 4
        while bn < min(cols, 32):
            bn *= 2
        return 32, bn, 8, 4, 4
    if kind == "fwd" and cols > 32:
        if transposed and -(-rows // 128) * -(-cols // 64) * batches < 2 * devkey.multiprocessors:
            return 64, 64, 16, 4, 4
        return 128, 64, 16, 8, 4
    best = None
    for bm, bn, tm, tn, eff in CANDIDATES:
        if bn > 4 and bn // 2 >= cols:   # a narrower candidate covers the columns
            continue
        if kind == "wgrad":
            cost = -(-rows // bm) * bm * -(-cols // bn) * bn / eff
        else:
            tiles = -(-rows // bm) * -(-cols // bn) * batches
            cost = -(-tiles // devkey.multiprocessors) * bm * bn / eff
        if best is None or cost < best[0]:
            best = (cost, bm, bn, tm, tn)
    _, bm, bn, tm, tn = best
    bk = 16 if red >= 64 else 8
    while shared_bytes(kind, bm, bn, bk, 0) > devkey.max_shared and bk > 4:
        bk //= 2
    return bm, bn, bk, tm, tn


def forward_bk(gather: str, red: int, tiles: int, multiprocessors: int) -> int:
    """BK of the 128x64 forward tiles on hardware: 16 paid only with the channel-chunked gather,
    a reduction over 256 and at least two waves of workgroups; 8 for the table and flat gathers
    (first layers), short reductions (1x1 with few channels) and few tiles."""
    return 16 if gather == "uniform" and red > 256 and tiles >= 2 * multiprocessors else 8


DIRECT_MAX_CHANNELS = 4   # conv_direct.comp where both channel counts per group are at most this
NARROW_MAX_COG = 8        # conv_gemm.comp's NARROW mode up to this many output channels per group
# Narrow kernel's channels loaded together; H100, first layer's backward-input: CU=1 5.0 TFLOP/s,
# 4 5.0, 8 7.3, 16 4.7 (registers).
NARROW_CU = 8


def narrow_rows(rows: int, wg: int, workgroups_per_row_tile: int, multiprocessors: int) -> int:
    """RT, rows per invocation of the narrow kernel on hardware: the most (each weight read from
    shared memory serves RT rows) that still gives a full wave of 256-invocation workgroups (8
    per multiprocessor)."""
    for cand in (4, 2):
        if -(-rows // (cand * wg)) * workgroups_per_row_tile >= 8 * multiprocessors * 256 // wg:
            return cand
    return 1


def wgrad_splits(tiles: int, nsteps: int, devkey: DeviceKey) -> int:
    """Default splits of conv_wgrad.comp's reduction: about 4 workgroups per multiprocessor,
    rounded down to whole waves of two per multiprocessor (rounding up left a nearly empty third
    wave: n8 c256 3x3, 36 tiles x 15 splits = 540 workgroups over 264 slots), each split at
    least 16 steps."""
    target = 8 if devkey.software else 4 * devkey.multiprocessors
    return min(target // tiles, nsteps // 16, 256)


# 1x1 stride-1 float32 forwards as a batched GEMM on primitives/matmul.comp, on hardware from
# these sizes: H100, 128 -> 128 channels at 28x28 22.7 TFLOP/s against 19.2 on conv_gemm.comp,
# 64 -> 256 at 56x56 26.7 against 16.9; 256 -> 64 at 56x56 13.5 against 25.6 and 512 -> 2048 at
# 7x7 12.0 against 15.1 (half-empty 128-wide tiles) stay on conv_gemm.comp.
POINTWISE_MIN_COG = 128
POINTWISE_MIN_POSITIONS = 256

# -- float32 backward-input by col2im (col2im.py) ----------------------------------------------------
# On hardware, layers of at most this many input channels with a stride take it (the first layer of
# an image network: 3). H200, 2026-11-26, n16 c3 224^2 7x7 stride 2 (tools/bench.py conv): see
# docs/bench/2026-11-26/h200-session16-bench.md.
COL2IM_MAX_CIN = 4
# The columns of at most this many bytes at a time (whole batch elements; at least one).
COL2IM_COLS_BYTES = 1 << 28

# -- float16 on cooperative matrices ------------------------------------------------------------
# Output channels per group below which float16 takes the float32 kernels: a GEMM too narrow for
# 16-wide fragments (the first layer's backward-input ran at 2.9 TFLOP/s on them, 7.3 in the
# narrow float32 kernel).
COOPMAT_MIN_COG = 16


def pads_well(channels: int) -> bool:
    """Channels padded to a multiple of 8 (the packed kernels' 16-byte vectors) waste little:
    from 16 channels per group on, or a multiple of 8 (first layers' 3 do not)."""
    return channels % 8 == 0 or channels >= 16


def packing_pays(taps: int, channels: int) -> bool:
    """Whether the float16 forward packs its operands channels-last (conv_coopmat_packed.comp):
    where channels pad well and there is more than one tap; with one the gathering kernel's loads
    are as contiguous (H100, 1x1 with 128 channels: 35 TFLOP/s gathering, 23 packed)."""
    return taps > 1 and pads_well(channels)


def coopmat_bn(cog: int, packed: bool) -> int:
    """BN of the float16 forward: the channels' power of two, 16 to 64, to 128 when packed (H100,
    n8 c256 28x28 3x3 packed: 128 x 128 tiles of 2 x 4 subgroups 86 TFLOP/s, 128 x 64 of 4 x 2
    64; gathering, 64 against 128: 35 against 24 for a 1x1 with 128 channels, 51 against 50 for
    n8 c256)."""
    widest = 128 if packed and cog >= 128 else 64
    return min(widest, max(16, 1 << (cog - 1).bit_length()))


# BK of the float16 forward; gathering, H100: 16 against 32 65 TFLOP/s against 50 for n32 c64
# 56x56 3x3, 21 against 16 for a 7x7 first layer (50 against 55 for n8 c256 28x28). BM 128:
# 256 or 64 lost everywhere (53 and 46 for n32 c64).
COOPMAT_BK = {"packed": 32, "gather": 16}
COOPMAT_BM = 128
# The packed kernel keeps one copy of its tiles (STAGES=1) and takes 64 channels a step from 128
# channels per group on. H200 (docs/bench/2026-11-25/h200-session15-conv-f16-sweep.md), forward /
# backward-input TFLOP/s: n32 c64 56x56 3x3 two stages BK 32 83 / 85, one stage BK 32 108 / 108,
# BK 64 100 / 99; n8 c256 28x28 3x3 115 / 112, one stage BK 64 125 / 122, BK 32 101 / 98.
PACKED_STAGES = 1


def packed_bk(cig: int) -> int:
    return 64 if cig >= 128 else COOPMAT_BK["packed"]


def balanced_rows(rows: int, col_tiles: int, sgm: int, multiprocessors: int) -> int:
    """BM for the packed kernel: 128, or 96 where that spreads the tiles more evenly over the
    multiprocessors (the time goes as the most row tiles one of them runs, times BM). H100,
    n8 c256 28x28 3x3: 98 tiles of 128 rows leave 34 of 132 idle; 132 tiles of 96 ran the
    forward at 116.5 TFLOP/s against 105.8, backward-input 113.7 against 101.3 (BM 64 87.6)."""
    def cost(bm):
        return -(-(-(-rows // bm) * col_tiles) // multiprocessors) * bm
    return 96 if (96 % (16 * sgm) == 0 and cost(96) < cost(128)) else 128


def wgrad16_splits(workgroups: int, nsteps: int, multiprocessors: int) -> int:
    """Default splits of the float16 backward-weight rows, `workgroups` per split: about two
    workgroups per multiprocessor, more cost more than they fill (H100, n8 c256 3x3: 7 splits 60
    TFLOP/s, 14 41; n32 c64: 29 splits 58, 64 44, 117 44), each at least 8 steps."""
    return min(2 * multiprocessors // workgroups, nsteps // 8, 256)


# conv_coopmat_wgrad.comp's subgroups cover at least 32 x 32 (H100, n32 c64 3x3: 4 subgroups of
# 32 x 32 on a 64 x 64 tile 58 TFLOP/s, 8 of 16 x 32 37); BK 32.
WGRAD16_SUBGROUP_EDGE = 32
WGRAD16_BK = 32
WGRAD16_STAGES = 2
# conv_coopmat_wgrad_gather.comp's BK; H100, n16 c3 224x224 7x7 stride 2 (147 columns): BK 16
# 34.4 TFLOP/s, 32 31.4 (132 splits 33.9), float32 kernels on the halves 13.8, cuDNN 25.8.
WGRAD16_GATHER_BK = 16

# -- Winograd (winograd.py) ---------------------------------------------------------------------
# By default where both channel counts per group reach this. H100, TILE 4 against the GEMM
# kernels, TFLOP/s counted as the direct sum: n32 c64 56x56 forward 42.7 vs 22.6, backward-input
# 43.3 vs 29.1, backward-weight 42.6 vs 16.1; n8 c256 28x28 69.1 vs 21.1, 70.4 vs 24.8, 58.1 vs
# 23.2 (TILE 2: 31-37). Narrower layers are bound by the transforms' memory traffic (not measured).
WINOGRAD_MIN_CHANNELS = 64
WINOGRAD_TILE = 4
# The forward's GEMM tiles (matmul.py's CONFIGS); H100, n8 c256 28x28 (256 x 392 x 256, 36
# times): 128 x 64 x 16 ("medium") 69.1 TFLOP/s, 64 x 64 x 16 66.7, 128 x 128 x 16 56.4, matmul's
# own 128 x 128 x 8 47.7. Backward-weight keeps matmul's choice (None).
WINOGRAD_FORWARD_GEMM = "medium"
# 64 x 64 GEMM tiles ("small") up to 64 channels, where a 128-wide one would be half padding
# (H100, backward-weight n32 c64: 42.6 TFLOP/s against 26.1 on matmul's 128 x 128 choice).
WINOGRAD_NARROW_GEMM = ("small", 64)


def winograd_splits(gemm_tiles: int, tiles: int, multiprocessors: int) -> int:
    """Default splits of Winograd's backward-weight sum over `tiles` tiles: about two GEMM
    workgroups per multiprocessor, each summing >= 64 tiles (H100, TILE 4: n8 c256 1 / 2 / 4
    splits 55.8 / 58.1 / 58.7 TFLOP/s; n32 c64 7 / 16 splits 42.6 / 35.9)."""
    return max(1, min(round(2 * multiprocessors / gemm_tiles), tiles // 64))
