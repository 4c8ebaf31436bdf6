"""float32 convolutions with 3x3 kernels by Winograd's minimal filtering (Lavin & Gray 2016).

One set of transforms (shaders/ops/conv_winograd.comp) serves two problems on tiles of
TILE x TILE output positions, ALPHA = TILE + 2 interpolation points:
  forward, F(TILE x TILE, 3x3): each output tile is the correlation of an ALPHA x ALPHA input
    patch with the 3x3 weight,
        y_t = GM^T [ sum_c (AT^T w_jc AT) (.) (BT d_tc BT^T) ] GM        (+ bias)
  backward-weight, F(3x3, TILE x TILE): the cotangent tile is the filter, the gradient the output,
        dW_jc = AT [ sum_t (GM g_tj GM^T) (.) (BT d_tc BT^T) ] AT^T.
(The forward's filter and output matrices are the weight gradient's output and filter matrices,
transposed; BT depends on the points alone.) In the transformed domain each of the ALPHA^2
points is one GEMM per group, run by primitives/matmul.comp between the transforms:
    forward   M[xi][j][t] = sum_c U[xi][c][j] V[xi][c][t]     K = C_in / groups
    weight    M[s][xi][j][c] = sum_t U[xi][j][t] V[xi][c][t]  K = tiles, split S ways
TILE 4 does 4x fewer multiplications than the direct sum (TILE 2: 2.25x), at a larger float32
rounding error (docs/conv.md).

Applies to kernels 3x3 on the last two axes (1 on a third), stride and kernel dilation 1 on
those axes; any padding, cropping, input dilation, groups and flip (index math in the
transforms), so backward-input of a stride-1 convolution (a forward convolution of the
cotangent) runs it too. By default only on hardware (not software rasterizers) for layers of
tuning.WINOGRAD_MIN_CHANNELS channels per group or more, and a forward only without input
dilation (that would transform zeros; the phase-split GEMM skips them); the config's path
(winograd forces it wherever it applies, gemm keeps the GEMM kernels), WT (the tile) and
wgrad.splits override. Batches whose workspaces (U, V, M) would pass MAX_WORKSPACE run in
chunks of images, one after the other, reusing them.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from . import tuning
from .kernels import DeviceKey
from ... import dtypes, runtime
from ...array import Array
from ...primitives.launch import groups_for, workgroup_size
from ...primitives.matmul import CONFIGS, record_gemm

_SHADER = "ops/conv_winograd.comp"
# Bytes of U, V and M at most: larger batches run in chunks of images (a 56x56 layer with 64
# channels needs 3.6 MB per image at TILE 4), each chunk's transforms and GEMMs in turn.
MAX_WORKSPACE = 256 << 20


@dataclass(frozen=True)
class WinogradPlan:
    tile: int      # output positions per tile side (2 or 4)
    splits: int    # backward-weight: the tiles' sum split this many ways (GEMM batches)
    tiles: int     # tiles in all
    padded: int    # tiles rounded up: splits x a multiple of 4 (vector loads in the GEMM)
    gemm: str | None  # matmul tile config (None: matmul's own choice)
    chunk: int     # images per chunk of the batch (tiles and padded count one full chunk)

    @property
    def points(self) -> int:
        """ALPHA^2: the transformed domain's points, one GEMM (per group) each."""
        return (self.tile + 2) ** 2

    def describe(self) -> str:
        return (f"conv_winograd.comp TILE={self.tile} tiles={self.tiles} splits={self.splits} "
                f"gemm={self.gemm or 'auto'}" + (f" chunks of {self.chunk} images" if self.chunk else ""))

    def chunks(self, n: int):
        """(first image, images) of each chunk of a batch of n."""
        step = self.chunk or n
        return [(n0, min(step, n - n0)) for n0 in range(0, n, step)]


def applies(geom) -> bool:
    """Whether the transforms take geom: a 3x3 kernel on the last two axes, stride and kernel
    dilation 1 there."""
    return geom.k == (1, 3, 3) and geom.st[1:] == (1, 1) and geom.kd[1:] == (1, 1)


def _tile(geom, devkey: DeviceKey, cfg: dict, holes: bool) -> int | None:
    """The tile size where the path is chosen or forced, else None."""
    path = cfg.get("path")
    if path not in (None, "winograd") or not applies(geom):
        return None
    if path is None and (devkey.software or min(geom.cig, geom.cog) < tuning.WINOGRAD_MIN_CHANNELS or holes):
        return None
    tile = cfg.get("WT", tuning.WINOGRAD_TILE)
    if tile not in (2, 4):
        raise ValueError(f"conv Winograd tile WT={tile}: expected 2 or 4")
    return tile


def _gemm_config(devkey: DeviceKey, narrow: int, wide: str | None) -> tuple:
    """(matmul config, its tile width): tuning.WINOGRAD_NARROW_GEMM's tiles up to its channels,
    else `wide` (None: matmul's choice), where the device can run it."""
    small, most = tuning.WINOGRAD_NARROW_GEMM
    name = small if narrow <= most else wide
    cfg = CONFIGS.get(name)
    if cfg is None or cfg.threads > devkey.max_invocations or cfg.shared_bytes > devkey.max_shared:
        return None, 128
    return name, most if name == small else 128


def _tiles_per_image(geom, tile: int) -> int:
    return geom.so[0] * -(-geom.so[1] // tile) * -(-geom.so[2] // tile)


def _chunk(geom, per_image: int, fixed: int) -> int:
    """Images per chunk: as many as keep per_image x chunk + fixed floats within MAX_WORKSPACE."""
    return min(geom.n, max(0, (MAX_WORKSPACE // 4 - fixed) // max(1, per_image)))


def _grid_stride_trips(n: int, devkey: DeviceKey) -> int:
    """Rounds of WINO_W's and WINO_OUT's grid-stride loops over n weight elements (groups_for's
    grid of launch.workgroup_size() invocations: 64 on software devices, else 256)."""
    wg = 64 if devkey.software else 256
    return -(-n // (groups_for(n, wg) * wg))


def _fits(geom, devkey: DeviceKey, padded: int, batches: int) -> bool:
    max_count = devkey.max_count
    return (-(-padded // 64) <= max_count[0] and max(geom.cin, geom.cout) <= max_count[1]
            and batches <= max_count[2])


@functools.lru_cache(maxsize=256)
def plan_forward(geom, devkey: DeviceKey, cfg: tuple, budget: int | None = None) -> WinogradPlan | None:
    """The forward plan for geom on `devkey` (kernels.device_key) under the fwd. config items
    `cfg`, or None where the GEMM kernels run (see the module's docstring; also where not one
    image fits MAX_WORKSPACE, dispatch limits, and where WINO_W's loop passes the loop budget
    `budget`; the transforms' other loops unroll)."""
    tile = _tile(geom, devkey, dict(cfg), holes=geom.id[1:] != (1, 1))
    if tile is None:
        return None
    if budget is not None and _grid_stride_trips(geom.cout * geom.cig, devkey) + 1 > budget:
        return None
    aa = (tile + 2) ** 2
    per_image = _tiles_per_image(geom, tile)
    # V and M (their tiles padded by up to 4), and U
    chunk = _chunk(geom, aa * (geom.cin + geom.cout) * per_image,
                   aa * (geom.cin + geom.cout) * 4 + aa * geom.cout * geom.cig)
    if chunk == 0:
        return None
    tiles = chunk * per_image
    padded = -(-tiles // 4) * 4
    gemm, _ = _gemm_config(devkey, geom.cog, tuning.WINOGRAD_FORWARD_GEMM)
    if not _fits(geom, devkey, padded, aa * geom.groups):
        return None
    return WinogradPlan(tile, 1, tiles, padded, gemm, chunk if chunk < geom.n else 0)


@functools.lru_cache(maxsize=256)
def plan_wgrad(geom, devkey: DeviceKey, cfg: tuple, budget: int | None = None) -> WinogradPlan | None:
    """The backward-weight plan, as plan_forward (wgrad. config items); the splits also capped
    so that WINO_OUT's loop over them, in each round of its grid-stride loop, fits `budget`."""
    cfg = dict(cfg)
    tile = _tile(geom, devkey, cfg, holes=False)
    if tile is None:
        return None
    aa = (tile + 2) ** 2
    per_image = _tiles_per_image(geom, tile)
    gemm, width = _gemm_config(devkey, min(geom.cog, geom.cig), None)
    gemm_tiles = -(-geom.cog // width) * -(-geom.cig // width) * aa * geom.groups
    splits = cfg.get("splits", tuning.winograd_splits(gemm_tiles, geom.n * per_image, devkey.multiprocessors))
    # V and U (each split's tiles padded by up to 4), and M
    chunk = _chunk(geom, aa * (geom.cin + geom.cout) * per_image, aa * (geom.cin + geom.cout) * 4 * splits
                   + splits * aa * geom.cout * geom.cig)
    if chunk == 0:
        return None
    tiles = chunk * per_image
    splits = max(1, min(splits, -(-tiles // 4)))
    if budget is not None:
        # lavapipe's count of WINO_OUT's loops: trips * (splits + 2) + 2 (see loops.loop)
        most = (budget - 2) // _grid_stride_trips(geom.cout * geom.cig, devkey) - 2
        if most < 1:
            return None
        splits = min(splits, most)
    per_split = -(-tiles // (4 * splits)) * 4
    padded = splits * per_split
    if not _fits(geom, devkey, padded, splits * aa * geom.groups):
        return None
    return WinogradPlan(tile, splits, tiles, padded, gemm, chunk if chunk < geom.n else 0)


def _transform(mode: str, p: WinogradPlan, geom, src: Array, src_off: int, dst: Array, channels: int) -> None:
    """WINO_X / WINO_G: the tiles of geom's images at src_off into dst[xi][channel][padded]."""
    wg = workgroup_size()
    runtime.get().kernel(_SHADER, {"TILE": p.tile, mode: 1}, wg, geom.spec())(
        [src.buffer, dst.buffer], [src_off, dst.offset, p.padded, 0], (-(-p.padded // wg), channels))


def record_forward(geom, p: WinogradPlan, x: Array, w: Array, b: Array | None) -> Array:
    """Record the forward pass (x, w, b float32; b may be None): y in geom.out_shape()."""
    rt = runtime.get()
    aa = p.points
    wg = workgroup_size()
    u = Array.empty((aa * geom.cout * geom.cig,), dtypes.float32)
    n = geom.cout * geom.cig
    rt.kernel(_SHADER, {"TILE": p.tile, "WINO_W": 1}, wg, geom.spec())(
        [w.buffer, u.buffer], [w.offset, u.offset, 0, 0], (groups_for(n, wg),))
    v = Array.empty((aa * geom.cin * p.padded,), dtypes.float32)
    prod = Array.empty((aa * geom.cout * p.padded,), dtypes.float32)
    y = Array.empty(geom.out_shape(), dtypes.float32)
    bb = b if b is not None else w
    si, so = math.prod(geom.si), math.prod(geom.so)
    for n0, count in p.chunks(geom.n):
        part = replace(geom, n=count)
        _transform("WINO_X", p, part, x, x.offset + n0 * geom.cin * si, v, geom.cin)
        # M[xi, group][j][t] = sum_c U[xi, group][c][j] V[xi, group][c][t]
        record_gemm(u, v, prod, m=geom.cog, n=p.padded, k=geom.cig, lda=geom.cog, ldb=p.padded, ldc=p.padded,
                    trans_a=True, batch_shape=(aa * geom.groups,), batch_strides_a=(geom.cig * geom.cog,),
                    batch_strides_b=(geom.cig * p.padded,), batch_strides_c=(geom.cog * p.padded,),
                    config=p.gemm)
        rt.kernel(_SHADER, {"TILE": p.tile, "WINO_Y": 1, "HAS_BIAS": int(b is not None)}, wg, part.spec())(
            [prod.buffer, y.buffer, bb.buffer], [prod.offset, y.offset + n0 * geom.cout * so, p.padded, bb.offset],
            (-(-p.padded // wg), geom.cout))
    return y


def record_wgrad(geom, p: WinogradPlan, x: Array, g: Array, wshape: tuple) -> Array:
    """Record the backward-weight pass (x, g float32): dW (float32) in wshape; the chunks of the
    batch accumulate into the GEMMs' products (beta = 1)."""
    rt = runtime.get()
    aa = p.points
    wg = workgroup_size()
    v = Array.empty((aa * geom.cin * p.padded,), dtypes.float32)
    u = Array.empty((aa * geom.cout * p.padded,), dtypes.float32)
    per_split = p.padded // p.splits
    prod = Array.empty((p.splits * aa * geom.cout * geom.cig,), dtypes.float32)
    si, so = math.prod(geom.si), math.prod(geom.so)
    for n0, count in p.chunks(geom.n):
        part = replace(geom, n=count)
        _transform("WINO_X", p, part, x, x.offset + n0 * geom.cin * si, v, geom.cin)
        _transform("WINO_G", p, part, g, g.offset + n0 * geom.cout * so, u, geom.cout)
        # M[s][xi, group][j][c] += sum over split s's tiles of U[xi, group][j][t] V[xi, group][c][t]
        record_gemm(u, v, prod, m=geom.cog, n=geom.cig, k=per_split, lda=p.padded, ldb=p.padded,
                    ldc=geom.cig, trans_b=True, beta=float(n0 > 0), batch_shape=(p.splits, aa * geom.groups),
                    batch_strides_a=(per_split, geom.cog * p.padded),
                    batch_strides_b=(per_split, geom.cig * p.padded),
                    batch_strides_c=(aa * geom.cout * geom.cig, geom.cog * geom.cig), config=p.gemm)
    dw = Array.empty(wshape, dtypes.float32)
    n = geom.cout * geom.cig
    rt.kernel(_SHADER, {"TILE": p.tile, "WINO_OUT": 1}, wg, geom.spec())(
        [prod.buffer, dw.buffer], [prod.offset, dw.offset, p.splits, 0], (groups_for(n, wg),))
    return dw
