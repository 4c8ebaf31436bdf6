"""float32 convolution backward-weight of 3x3 kernels by Winograd's F(3x3, TILE x TILE).

The weight gradient sums, over every TILE x TILE block of output positions, the correlation of
the cotangent block with the input patch it meets: a minimal-filtering problem with the
cotangent as the filter and the 3x3 gradient as the output. In the transformed domain each of
the ALPHA^2 = (TILE + 2)^2 points is a GEMM over the tiles:
    V = BT d BT^T (input patches), U = Gm g Gm^T (cotangent blocks)    conv_winograd.comp
    M[xi] = U[xi] @ V[xi]^T per point and group, the tiles split S ways  primitives/matmul.comp
    dW = AT (sum_s M_s) AT^T, into the weight's layout                   conv_winograd.comp
That is 2.25x (TILE 2) or 4x (TILE 4) fewer multiplications than conv_wgrad.comp's GEMM, which
is what a wide layer needs to keep pace with cuDNN's own Winograd backward-weight (H100, n8 c256
28x28: 89 TFLOP/s counted as the direct sum, above the float32 FMA peak).

Applies to kernels 3x3 on the last two axes (1 on a third), stride and kernel dilation 1 on
those axes; any padding, cropping, input dilation, groups and flip (index math in the
transforms). Workspaces: ALPHA^2 x (C_in + C_out) x tiles floats for U and V, S x ALPHA^2 x
C_out x C_in/groups for M.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from .. import dtypes, runtime
from ..array import Array
from ..primitives.matmul import CONFIGS, record_gemm

_SHADER = "ops/conv_winograd.comp"
_MAX_WORKSPACE = 512 << 20   # bytes of U, V and M; beyond it the GEMM path runs
# The default where both channel counts per group reach this. H100, against conv_wgrad.comp:
# n32 c64 56x56 42.6 TFLOP/s vs 16.1, n8 c256 28x28 58.1 vs 23.2 (TILE 4). Narrower layers
# are bound by the transforms' memory traffic (not measured).
MIN_CHANNELS = 64


@dataclass(frozen=True)
class WinogradPlan:
    tile: int      # output positions per tile side (2 or 4)
    splits: int    # the tiles' sum split this many ways (GEMM batches)
    tiles: int     # tiles in all
    padded: int    # tiles rounded up: splits x a multiple of 4 (vector loads in the GEMM)
    gemm: str | None  # matmul tile config (None: matmul's own choice)

    def describe(self) -> str:
        return (f"conv_winograd.comp F(3x3, {self.tile}x{self.tile}) tiles={self.tiles} splits={self.splits} "
                f"gemm={self.gemm or 'auto'}")


def applies(geom) -> bool:
    return geom.k == (1, 3, 3) and geom.st[1:] == (1, 1) and geom.kd[1:] == (1, 1)


@functools.lru_cache(maxsize=256)
def plan(geom, devkey: tuple, cfg: tuple) -> WinogradPlan | None:
    """The plan for geom on the device `devkey` (ops.conv._device_key) under the wgrad. config
    items `cfg`, or None where conv_wgrad.comp runs: path=gemm, a kernel or stride it does not
    cover, workspaces over 512 MiB, dispatch limits; by default also software devices and
    layers under MIN_CHANNELS channels per group (path=winograd forces it where it applies)."""
    cfg = dict(cfg)
    path = cfg.get("path")
    if path not in (None, "winograd") or not applies(geom):
        return None
    if path is None and (devkey[1] or min(geom.cig, geom.cog) < MIN_CHANNELS):
        return None
    tile = cfg.get("WT", 4)
    if tile not in (2, 4):
        raise ValueError(f"conv backward-weight Winograd tile WT={tile}: expected 2 or 4")
    aa = (tile + 2) ** 2
    tiles = geom.n * geom.so[0] * -(-geom.so[1] // tile) * -(-geom.so[2] // tile)
    # 64 x 64 GEMM tiles where a 128-wide one would be half padding (H100, n32 c64: 42.6
    # TFLOP/s against 26.1 on matmul's 128 x 128 choice)
    small = CONFIGS["small"]
    fits = small.threads <= devkey[3] and small.shared_bytes <= devkey[2]
    gemm, width = ("small", 64) if fits and min(geom.cog, geom.cig) <= 64 else (None, 128)
    gemm_tiles = -(-geom.cog // width) * -(-geom.cig // width) * aa * geom.groups
    # about two GEMM workgroups per multiprocessor, each summing >= 64 tiles (H100, TILE 4:
    # n8 c256 1 / 2 / 4 splits 55.8 / 58.1 / 58.7 TFLOP/s; n32 c64 7 / 16 splits 42.6 / 35.9)
    splits = cfg.get("splits", max(1, min(round(264 / gemm_tiles), tiles // 64)))
    splits = max(1, min(splits, -(-tiles // 4)))
    per_split = -(-tiles // (4 * splits)) * 4
    padded = splits * per_split
    max_count = devkey[4]
    workspace = 4 * aa * ((geom.cin + geom.cout) * padded + splits * geom.cout * geom.cig)
    if (workspace > _MAX_WORKSPACE or -(-padded // 64) > max_count[0]
            or max(geom.cin, geom.cout) > max_count[1] or splits * aa * geom.groups > max_count[2]):
        return None
    return WinogradPlan(tile, splits, tiles, padded, gemm)


def record(geom, p: WinogradPlan, x: Array, g: Array, wshape: tuple) -> Array:
    """Record the transforms, the GEMMs and the output transform; dW (float32) in wshape."""
    rt = runtime.get()
    aa = (p.tile + 2) ** 2
    wg = 64 if rt.device.is_software else 256
    spec = geom.spec()
    v = Array.empty((aa * geom.cin * p.padded,), dtypes.float32)
    u = Array.empty((aa * geom.cout * p.padded,), dtypes.float32)
    for mode, src, dst, channels in (("WINO_X", x, v, geom.cin), ("WINO_G", g, u, geom.cout)):
        rt.kernel(_SHADER, {"TILE": p.tile, mode: 1}, wg, spec)(
            [src.buffer, dst.buffer], [src.offset, dst.offset, p.padded], (-(-p.padded // wg), channels))
    per_split = p.padded // p.splits
    prod = Array.empty((p.splits * aa * geom.cout * geom.cig,), dtypes.float32)
    # M[s][xi, group][j][c] = sum over split s's tiles of U[xi, group][j][t] V[xi, group][c][t]
    record_gemm(u, v, prod, m=geom.cog, n=geom.cig, k=per_split, lda=p.padded, ldb=p.padded,
                ldc=geom.cig, trans_b=True, batch_shape=(p.splits, aa * geom.groups),
                batch_strides_a=(per_split, geom.cog * p.padded),
                batch_strides_b=(per_split, geom.cig * p.padded),
                batch_strides_c=(aa * geom.cout * geom.cig, geom.cog * geom.cig), config=p.gemm)
    dw = Array.empty(wshape, dtypes.float32)
    n = geom.cout * geom.cig
    rt.kernel(_SHADER, {"TILE": p.tile, "WINO_OUT": 1}, wg, spec)(
        [prod.buffer, dw.buffer], [prod.offset, dw.offset, p.splits], (max(1, min(-(-n // wg), 4096)),))
    return dw
