"""N-d convolution, forward and both backward passes, by implicit GEMM on Vulkan compute.

torch.nn.functional's signatures and layout: input (N, C_in, *spatial), weight (C_out, C_in/groups,
*kernel) for convN and (C_in, C_out/groups, *kernel) for conv_transposeN; float32, or float16
(all operands alike; float16 out, float32 accumulation).

Everything is one general convolution (as MLX's conv_general): stride, low/high padding (negative
crops), kernel dilation, input dilation (zeros inserted between input elements), groups and flip
(a true convolution instead of cross-correlation), all by index math in the kernels, never by
copies. The weight is read through strides, so the channel-transposed weight of a backward-input
pass or of a transposed convolution is read in place.

Kernels (shaders/ops/):
  conv_gemm.comp    forward: rows (batch, output position) x output channels over (input channel,
                    tap); tiles gathered into shared memory, a register block per invocation.
                    Gathers: channel-chunked at one tap (wide channels; 1x1 stride 1 is a plain
                    GEMM), flat (few channels per group), and flat through a shared-memory table
                    of (channel, tap) offsets (a first layer with C_in <= 4).
                    NARROW mode (C_out per group <= 8, e.g. the backward-input of a first layer,
                    a GEMM with N = 3): no A tile; each invocation gathers RT rows straight from x
                    and accumulates all NN (4 or 8) channels, the weight chunk in shared memory.
  conv_direct.comp  one output per invocation: depthwise and other tiny per-group channel counts.
  conv_wgrad.comp   backward-weight: (input channel, tap) x output channels over (batch, output
                    position), the reduction split across workgroups into partial sums.
  conv_winograd.comp  float32 3x3 stride-1 layers with 64 or more channels per group (on
                    hardware), all three passes: Winograd F(4x4, 3x3) and F(3x3, 4x4) transforms
                    around batched GEMMs on primitives/matmul.comp, 4x fewer multiplications
                    (conv_winograd.py).
  conv_reduce.comp  the split partial sums, and the bias gradient.
  primitives/matmul.comp  float32 1x1 stride-1 layers without bias from 128 output channels on
                    hardware (both forward passes): a GEMM per batch element, the weight
                    broadcast (_pointwise_matmul).
  conv_coopmat_packed.comp  float16 forward (and backward-input) on VK_KHR_cooperative_matrix
                    16x16x16 fragments, float32 accumulation, on channels-last copies of x and of
                    the weight made by conv_pack.comp (every tile row a run of 16-byte vectors).
  conv_coopmat.comp the same GEMM gathering halves from the original layouts: first layers (few
                    channels) and 1x1 convolutions, where packing does not pay.
  conv_coopmat_wgrad.comp  float16 backward-weight: a GEMM per tap over (batch, output position)
                    on channels-last copies of x and the cotangent, split like conv_wgrad.comp.
  conv_coopmat_wgrad_gather.comp  the same for channel counts that pad badly (first layers):
                    one GEMM over all (channel, tap) columns, x gathered in place.
                    Where the device lacks cooperative matrices or below 16 output channels per
                    group, float16 forward runs the float32 kernels on widened copies; float16
                    backward-weight without a plan here (under 16 output channels) runs
                    conv_wgrad.comp reading the halves in place (widened copies only without
                    16-bit storage).
Backward-input is a forward convolution of the cotangent: the flipped, channel-transposed weight,
input dilation = the forward stride, stride = the forward input dilation. Where input dilation
meets stride 1 (backward-input of a strided convolution, a transposed convolution), conv_gemm
splits the outputs by phase (position mod dilation) and reduces over only the taps that meet
input elements, not the inserted zeros.

Loop budget (lavapipe ends every loop of an invocation past 65,535 counted iterations; see
docs/loop_budget/conv.md): the planners count each kernel's loops and cut what would pass it --
conv_gemm.comp's reduction split across workgroups (split-K, SPLITS / SPLIT_STEPS, partial sums
added by conv_reduce.comp, in rounds where many), conv_wgrad.comp's into more splits,
conv_direct.comp handed to the GEMM kernels, the bias gradient in chunks, the float16
cooperative-matrix forward (no split) handed to conv_gemm.comp -- or raise LoopBudgetError before
anything is recorded. Without a budget (GPUs) the plans are as below.

Plans (path, tiles, split count) are cached per (geometry, device, config, loop budget) in an LRU.
VKBACKEND_CONV_CONFIG overrides them for tuning, e.g. "BM=128,BN=64,BK=8,TM=8,TN=4" or
"fwd.path=direct,wgrad.splits=16"; keys: path (gemm|direct), gather (uniform|flat|table),
phased (0|1), BM, BN, BK, TM, TN (powers of two; TM, TN multiples of 4), splits, gridx (cap on
grid x: the kernels loop), optionally prefixed with fwd. (forward and backward-input) or wgrad.
The float16 kernels take f16. (path coopmat|packed|cast, BM, BN, BK, SGM, SGN: subgroups along
rows and channels) and wgrad16. (path packed|coopmat|cast: the packed kernel, the gathering
one, the float32 kernels; BM, BN, BK, SGM, SGN, splits; the gathering kernel takes BK and
splits). path=winograd
(fwd. or wgrad.) forces conv_winograd.py wherever it applies (WT=2|4 its tile; wgrad.splits);
path=gemm keeps the GEMM kernels; fwd.path=matmul forces the batched GEMM where it applies.
The narrow kernel (path=narrow; the default where C_out per group <= 8 and not direct) ignores
the tile keys and takes RT (rows per invocation, 1-16), NN (4|8 channels per workgroup), KC
(channels per weight chunk), CU (channels whose loads go out together, 1-16) and WG (workgroup
size); path=gemm forces the tiled GEMM.

Default plans on hardware (rules from H100 sweeps of tools/benchmarks/conv.py): forward GEMMs
with more than 32 output channels use 128x64 tiles (8x4 per invocation), or 64x64x16 (4x4) for a
transposed weight read (backward-input) with under two waves (2 x 132 workgroups) of 128x64
tiles; BK=16 only for the channel-chunked gather with K > 256 and at least two waves, else 8.
The packed float16 kernel takes 96-row tiles instead of 128 where they spread over the
multiprocessors more evenly (_balanced_rows).
"""
from __future__ import annotations

import functools
import math
import numbers
import os
from dataclasses import dataclass, replace

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from ..runtime.devices import MULTIPROCESSORS_ESTIMATE
from ..primitives.creation import asarray, zeros
from ..primitives.launch import LoopBudgetError, groups_for, loop_budget, workgroup_size
from ..primitives.matmul import record_gemm
from . import conv_winograd

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "conv_general", "conv_vjp", "conv_transpose_vjp", "conv_general_vjp"]

_MAXD = 3


# ----------------------------------------------------------------------------------------------
# argument checking (all of it before any GPU work)
# ----------------------------------------------------------------------------------------------
_DTYPES = (dtypes.float32, dtypes.float16)


def _shape_of(x, name: str, fn: str) -> tuple:
    """The shape of an operand; TypeError unless it is float32 or float16 (a vk.Array or a numpy
    array)."""
    if not isinstance(x, (Array, np.ndarray, np.generic)):
        raise TypeError(f"{fn}: {name} must be a vk.Array or a numpy array, got {type(x).__name__}")
    if np.dtype(x.dtype) not in _DTYPES:
        raise TypeError(f"{fn}: {name} has dtype {x.dtype}; convolutions take float32 or float16 "
                        "(cast with .astype(np.float32))")
    return tuple(x.shape)


def _common_dtype(fn: str, **operands) -> np.dtype:
    """The operands' one dtype (float32 or float16); TypeError naming them when they differ."""
    given = {k: np.dtype(v.dtype) for k, v in operands.items() if v is not None}
    if len(set(given.values())) > 1:
        listed = ", ".join(f"{k} {d}" for k, d in given.items())
        raise TypeError(f"{fn}: operands must share one dtype (float32 or float16), got {listed}")
    return next(iter(given.values()))


def _as_array(x) -> Array:
    return x if isinstance(x, Array) else asarray(np.ascontiguousarray(x))


def _ints(v, nd: int, name: str, fn: str, minimum=None) -> tuple:
    """An int or a sequence of nd ints, as an nd-tuple; checked against `minimum`."""
    def one(e):
        if isinstance(e, (bool, np.bool_)) or not isinstance(e, (numbers.Integral, np.integer)):
            raise TypeError(f"{fn}: {name} must be an int or a tuple of {nd} ints, got {v!r}")
        return int(e)
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        vals = (int(v),) * nd
    elif isinstance(v, (tuple, list)):
        if len(v) != nd:
            raise ValueError(f"{fn}: {name} needs {nd} value(s) (one per spatial dimension), got {v!r}")
        vals = tuple(one(e) for e in v)
    else:
        raise TypeError(f"{fn}: {name} must be an int or a tuple of {nd} ints, got {v!r}")
    if minimum is not None and any(e < minimum for e in vals):
        raise ValueError(f"{fn}: {name} must be >= {minimum}, got {v!r}")
    return vals


def _groups(groups, fn: str) -> int:
    if isinstance(groups, (bool, np.bool_)) or not isinstance(groups, (numbers.Integral, np.integer)):
        raise TypeError(f"{fn}: groups must be an int, got {groups!r}")
    if groups < 1:
        raise ValueError(f"{fn}: groups must be >= 1, got {groups}")
    return int(groups)


@dataclass(frozen=True)
class _Geom:
    """One general convolution, padded to 3 spatial axes with leading unit axes."""
    nd: int
    n: int
    cin: int
    cout: int
    groups: int
    si: tuple
    so: tuple
    k: tuple
    st: tuple
    kd: tuple
    id: tuple
    pl: tuple
    flip: bool
    wstrides: tuple  # (W_G, W_J, W_C): weight element of (group, out channel, in channel, tap 0)

    @property
    def cig(self) -> int:
        return self.cin // self.groups

    @property
    def cog(self) -> int:
        return self.cout // self.groups

    @property
    def kp(self) -> int:
        return math.prod(self.k)

    @property
    def ktot(self) -> int:
        return self.cig * self.kp

    @property
    def rows(self) -> int:
        return self.n * math.prod(self.so)

    def out_shape(self) -> tuple:
        return (self.n, self.cout) + self.so[_MAXD - self.nd:]

    def weight_size(self) -> int:
        return self.cout * self.cig * self.kp

    def flops(self) -> int:
        return 2 * self.rows * self.cout * self.ktot

    def spec(self, split_steps: int = 1, splits: int = 1) -> tuple:
        return (self.n, self.cin, self.cout, self.groups, self.cig, self.cog, *self.si, *self.so, *self.k,
                *self.st, *self.kd, *self.id, *(p & 0xFFFFFFFF for p in self.pl), int(self.flip),
                *self.wstrides, split_steps, splits)

    def backward_input(self) -> "_Geom":
        """The convolution of the cotangent that gives the input gradient: channels swap roles,
        the weight is read transposed (W_J <-> W_C) and mirrored, the forward stride becomes an
        input dilation and the forward input dilation a stride."""
        pl = tuple(d * (k - 1) - p for d, k, p in zip(self.kd, self.k, self.pl))
        wg, wj, wc = self.wstrides
        return _Geom(self.nd, self.n, self.cout, self.cin, self.groups, self.so, self.si, self.k, self.id,
                     self.kd, self.st, pl, not self.flip, (wg, wc, wj))


def _pad3(t: tuple, fill: int) -> tuple:
    return (fill,) * (_MAXD - len(t)) + tuple(t)


def _geometry(fn, xshape, wshape, nd, stride, plo, phi, kd, idil, groups, flip, transposed_weight):
    """Check shapes against parameters and build the geometry (ValueError naming the culprit)."""
    if len(wshape) != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions, got shape {wshape}")
    if len(xshape) != nd + 2:
        raise ValueError(f"{fn}: input must have {nd + 2} dimensions (batch, channels, {nd} spatial), "
                         f"got shape {xshape}")
    n, cin = xshape[0], xshape[1]
    spatial, kernel = tuple(xshape[2:]), tuple(wshape[2:])
    if cin < 1 or any(s < 1 for s in spatial):
        raise ValueError(f"{fn}: input has an empty channel or spatial dimension: shape {xshape}")
    if any(k < 1 for k in kernel) or wshape[0] < 1 or wshape[1] < 1:
        raise ValueError(f"{fn}: weight has an empty dimension: shape {wshape}")
    if cin % groups:
        raise ValueError(f"{fn}: input channels ({cin}) not divisible by groups ({groups})")
    if transposed_weight:  # (C_in, C_out / groups, *k)
        if wshape[0] != cin:
            raise ValueError(f"{fn}: weight's first dimension ({wshape[0]}) must equal the input "
                             f"channels ({cin})")
        cog = wshape[1]
        cout = cog * groups
        cig = cin // groups
        wstr = (cig * cog * math.prod(kernel), math.prod(kernel), cog * math.prod(kernel))
    else:  # (C_out, C_in / groups, *k)
        cout, cig = wshape[0], wshape[1]
        if cout % groups:
            raise ValueError(f"{fn}: output channels ({cout}) not divisible by groups ({groups})")
        if cig * groups != cin:
            raise ValueError(f"{fn}: weight expects {cig} input channels per group (C_in = "
                             f"{cig * groups} with groups={groups}) but the input has {cin}")
        cog = cout // groups
        kpn = math.prod(kernel)
        wstr = (cog * cig * kpn, cig * kpn, kpn)
    so = []
    for d in range(nd):
        eff_in = (spatial[d] - 1) * idil[d] + 1 + plo[d] + phi[d]
        eff_k = (kernel[d] - 1) * kd[d] + 1
        if eff_in < eff_k:
            raise ValueError(f"{fn}: kernel size {eff_k} (with dilation) is larger than the padded input "
                             f"size {eff_in} along spatial dimension {d}")
        so.append((eff_in - eff_k) // stride[d] + 1)
    return _Geom(nd, n, cin, cout, groups, _pad3(spatial, 1), _pad3(tuple(so), 1), _pad3(kernel, 1),
                 _pad3(stride, 1), _pad3(kd, 1), _pad3(idil, 1), _pad3(plo, 0), bool(flip), wstr)


def _check_bias(bias, cout, fn):
    if bias is None:
        return
    shape = _shape_of(bias, "bias", fn)
    if shape != (cout,):
        raise ValueError(f"{fn}: bias must have shape ({cout},) (the output channels), got {shape}")


def _nd_of(weight, fn, nd=None) -> int:
    wshape = _shape_of(weight, "weight", fn)
    if nd is None:
        nd = len(wshape) - 2
        if not 1 <= nd <= _MAXD:
            raise ValueError(f"{fn}: weight must have 3 to 5 dimensions (out, in, 1 to 3 kernel axes), "
                             f"got shape {wshape}")
    return nd


def _batched(input, nd, fn):
    """(shape with a batch axis, whether the caller gave an unbatched input)."""
    xshape = _shape_of(input, "input", fn)
    if len(xshape) == nd + 1:
        return (1,) + xshape, True
    if len(xshape) != nd + 2:
        raise ValueError(f"{fn}: input must have {nd + 1} (unbatched) or {nd + 2} (batched) dimensions, "
                         f"got shape {xshape}")
    return xshape, False


def _conv_params(fn, nd, wshape, stride, padding, dilation):
    """torch's (stride, padding, dilation) -> (stride, padding_lo, padding_hi, dilation)."""
    stride = _ints(stride, nd, "stride", fn, 1)
    dilation = _ints(dilation, nd, "dilation", fn, 1)
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{fn}: padding='same' is not supported for strided convolutions")
            total = tuple(d * (k - 1) for d, k in zip(dilation, wshape[2:]))
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - t // 2 for t in total)
        else:
            raise ValueError(f"{fn}: padding must be 'same', 'valid', an int or a tuple, got {padding!r}")
    else:
        lo = hi = _ints(padding, nd, "padding", fn, 0)
    return stride, lo, hi, dilation


# ----------------------------------------------------------------------------------------------
# planning
# ----------------------------------------------------------------------------------------------
_KEYS = {"path", "gather", "phased", "BM", "BN", "BK", "TM", "TN", "splits", "gridx", "RT", "NN", "KC", "CU", "WG",
         "SGM", "SGN", "WT"}
_KINDS = ("fwd", "wgrad", "f16", "wgrad16")
_WORDS = {"path": ("gemm", "direct", "narrow", "coopmat", "packed", "cast", "winograd", "matmul"), "gather": ("uniform", "flat", "table")}


@functools.lru_cache(maxsize=16)
def _parse_config(raw: str) -> dict:
    """VKBACKEND_CONV_CONFIG -> {"fwd": {...}, "wgrad": {...}, "f16": {...}}; unprefixed keys
    apply to the float32 kernels."""
    out = {k: {} for k in _KINDS}
    for item in filter(None, (s.strip() for s in raw.replace(";", ",").split(","))):
        if "=" not in item:
            raise ValueError(f"VKBACKEND_CONV_CONFIG: expected key=value, got {item!r}")
        key, value = (s.strip() for s in item.split("=", 1))
        kinds = ("fwd", "wgrad")
        if "." in key:
            prefix, key = key.split(".", 1)
            if prefix not in _KINDS:
                raise ValueError(f"VKBACKEND_CONV_CONFIG: unknown prefix {prefix!r} (one of {_KINDS})")
            kinds = (prefix,)
        if key not in _KEYS:
            raise ValueError(f"VKBACKEND_CONV_CONFIG: unknown key {key!r}; expected one of {sorted(_KEYS)}")
        if key in _WORDS:
            if value not in _WORDS[key]:
                raise ValueError(f"VKBACKEND_CONV_CONFIG: {key} must be one of {_WORDS[key]}, got {value!r}")
        else:
            try:
                value = int(value)
            except ValueError:
                raise ValueError(f"VKBACKEND_CONV_CONFIG: {key} needs an integer, got {value!r}") from None
        for k in kinds:
            out[k][key] = value
    return out


def _device_key(dev) -> tuple:
    return (dev.name, dev.is_software, dev.max_shared_memory, dev.max_workgroup_invocations,
            tuple(dev.max_workgroup_count), dev.subgroup_size, dev.min_subgroup_size)


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def _shared_bytes(kind, bm, bn, bk, table=0) -> int:
    if kind == "wgrad":
        return 2 * bk * (bm + bn + 8) * 4
    return 2 * bk * (bm + bn + 4) * 4 + 8 * table


def _check_tiles(kind, bm, bn, bk, tm, tn, devkey, table=0) -> int:
    """Workgroup size of a tile configuration; ValueError when the kernels cannot run it."""
    _, _, max_shared, max_inv, _, _, _ = devkey
    what = {"fwd": "forward", "wgrad": "backward-weight"}[kind]
    if not (tm % 4 == 0 and tn % 4 == 0 and all(map(_pow2, (bm, bn, bk, tm, tn))) and bm >= tm and bn >= tn):
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} BK={bk} TM={tm} TN={tn}: need powers of two, "
                         "TM and TN multiples of 4, BM >= TM, BN >= TN")
    nt = (bm // tm) * (bn // tn)
    if nt > max_inv:
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} TM={tm} TN={tn}: a workgroup of {nt} exceeds "
                         f"the device's {max_inv}")
    if kind == "fwd" and nt // min(bm, nt) > bk:
        raise ValueError(f"conv {what} tiles: BK={bk} too small for {nt} invocations over BM={bm}")
    shared = _shared_bytes(kind, bm, bn, bk, table)
    if shared > max_shared:
        raise ValueError(f"conv {what} tiles BM={bm} BN={bn} BK={bk}: {shared} bytes of shared memory "
                         f"exceed the device's {max_shared}")
    return nt


# Register blocks by tile (BM, BN) -> (TM, TN) and a rough relative efficiency per FMA (larger
# blocks reuse each shared-memory read more). Tiles of 256 invocations except the smallest.
_CANDIDATES = [
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


def _default_tiles(kind: str, rows: int, cols: int, batches: int, red: int, devkey,
                   transposed: bool = False) -> tuple:
    """(BM, BN, BK, TM, TN) for a GEMM of rows x cols over `red` (per group), `batches` times.

    Forward: the candidate with the least estimated time, (tiles per multiprocessor) x tile work /
    efficiency. Backward-weight splits its reduction to fill the device, so there only the padding
    waste / efficiency counts."""
    if devkey[1]:
        # lavapipe runs each invocation as a SIMD lane and switches at every barrier: small tiles.
        bn = 4
        while bn < min(cols, 32):
            bn *= 2
        return 32, bn, 8, 4, 4
    if kind == "fwd" and cols > 32:
        # Measured on an H100 (conv benchmark sweeps): 128x64 tiles with 8x4 blocks win or tie
        # almost everywhere; with under two waves of them (two 256-invocation workgroups per
        # multiprocessor), a transposed weight read (backward-input) does better with 64x64x16.
        # BK is refined by the planner once the gather is known.
        if transposed and -(-rows // 128) * -(-cols // 64) * batches < 2 * MULTIPROCESSORS_ESTIMATE:
            return 64, 64, 16, 4, 4
        return 128, 64, 16, 8, 4
    best = None
    for bm, bn, tm, tn, eff in _CANDIDATES:
        if bn > 4 and bn // 2 >= cols:   # a narrower candidate covers the columns
            continue
        if kind == "wgrad":
            cost = -(-rows // bm) * bm * -(-cols // bn) * bn / eff
        else:
            tiles = -(-rows // bm) * -(-cols // bn) * batches
            cost = -(-tiles // MULTIPROCESSORS_ESTIMATE) * bm * bn / eff
        if best is None or cost < best[0]:
            best = (cost, bm, bn, tm, tn)
    _, bm, bn, tm, tn = best
    bk = 16 if red >= 64 else 8
    while _shared_bytes(kind, bm, bn, bk, 0) > devkey[2] and bk > 4:
        bk //= 2
    return bm, bn, bk, tm, tn


@dataclass(frozen=True)
class _Plan:
    shader: str
    defines: tuple
    workgroup: int
    spec: tuple
    grid: tuple
    splits: int = 1
    flops: int = 0


# ----------------------------------------------------------------------------------------------
# the loop budget: lavapipe ends every loop of an invocation once it has counted 65,535 loop
# iterations in all (devices.Device.loop_budget; VKBACKEND_LOOP_BUDGET lowers it). The costs
# below follow the kernels' loops: with NO_UNROLL (software devices) their UNROLL loops count
# too. Where the budget is None nothing is split and the plans are those of a GPU.
# ----------------------------------------------------------------------------------------------
def _loop(trips: int, *body: tuple, counted: bool = True) -> tuple:
    """(counted iterations, loops) of a loop of `trips` iterations around the loops `body`, each
    such a pair. Each iteration counts 1 and its body's loops; the way out 1 and 1 more for every
    loop within, at any depth (lavapipe runs the body once more with all lanes masked off, and
    each loop there passes its end once). Unrolled (counted=False): the body's, trips times."""
    cost, loops = sum(c for c, _ in body), sum(n for _, n in body)
    if not counted:
        return trips * cost, trips * loops
    return trips * (cost + 1) + 1 + loops, loops + 1


def _total(*loops: tuple) -> int:
    """Counted iterations of the top-level loops `loops` (pairs of _loop)."""
    return sum(c for c, _ in loops)


def _phase_cost(geom: _Geom, nph: int) -> int:
    """conv_gemm_view.glsl's phase_setup: inverse_mod's loop per axis, ID counts at most."""
    return sum(geom.id) if nph > 1 else 0


def _tiled_cost(d: dict, unrolled: bool, steps: int, trips: int, other: int) -> int:
    """Counted iterations of an invocation of conv_gemm.comp's tiled mode (defines d): `trips`
    row tiles of `steps` reduction steps, besides `other` (the table, the phase setup)."""
    U = functools.partial(_loop, counted=not unrolled)
    bm, bn, bk, tm, tn = (d[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    nt = (bm // tm) * (bn // tn)
    la_m = min(bm, nt)
    ra, qa, eb = bm // la_m, bk // (nt // la_m), -(-bk * bn // nt)
    load = (U(ra, U(qa)) if d["GATHER"] == 1 else U(qa, U(ra)), U(eb))
    store = (U(ra, U(qa)), U(eb))
    fma = U(bk, U(tm // 4), U(tn // 4, U(tm // 4)))
    epilogue = U(tn // 4, U(4, U(tm // 4, U(4))))
    step_loop = _loop(steps, *load, fma, *store)
    return _total(_loop(trips, U(ra), U(tm // 4 * tn), *load, *store, step_loop, epilogue)) + other


def _narrow_cost(d: dict, wg: int, unrolled: bool, steps: int, trips: int, other: int) -> int:
    """Counted iterations of an invocation of conv_gemm.comp's NARROW mode (defines d)."""
    U = functools.partial(_loop, counted=not unrolled)
    nn, rt, kc, cu = (d[k] for k in ("NN", "RT", "KC", "CU"))
    nv = nn // 4
    fill = _loop(-(-kc * nn // wg))
    channels = _loop(-(-kc // cu), U(cu, U(rt)), U(cu, U(nv, U(rt))))
    step_loop = _loop(steps, fill, U(rt), channels)
    return _total(_loop(trips, U(rt), U(rt * nv), step_loop, U(rt, U(nv, U(4))))) + other


def _wgrad_cost(d: dict, unrolled: bool, steps: int) -> int:
    """Counted iterations of an invocation of conv_wgrad.comp (defines d) over `steps` steps."""
    U = functools.partial(_loop, counted=not unrolled)
    bm, bn, bk, tm, tn = (d[k] for k in ("BM", "BN", "BK", "TM", "TN"))
    nt = (bm // tm) * (bn // tn)
    lk = min(bk, nt)
    lp = nt // lk
    qk, pa, pb = bk // lk, -(-bm // lp), -(-bn // lp)
    load = store = U(qk, U(pa), U(pb))
    fma = U(bk, U(tm // 4), U(tn // 4, U(tm // 4)))
    epilogue = U(tn // 4, U(4, U(tm // 4, U(4))))
    return _total(U(pa), U(tm // 4 * tn), load, store, _loop(steps, load, fma, store), epilogue)


def _most(budget: int, cost) -> int:
    """The largest s with cost(s) <= budget, for a count cost(s) linear in s (-1: not even 0)."""
    base = cost(0)
    return (budget - base) // max(1, cost(1) - base) if base <= budget else -1


def _split_k(budget, what: str, nsteps: int, cost) -> tuple:
    """(splits, steps per split) of a reduction of nsteps steps, where cost(s) is an invocation's
    count with s steps (linear in s): (1, 1) where all of it fits the loop budget (or there is
    none), else the fewest even splits that fit. LoopBudgetError where not one step fits."""
    if budget is None:
        return 1, 1
    room = _most(budget, cost)
    if room < 1:
        raise LoopBudgetError(f"conv {what}: one reduction step per invocation counts {cost(1)} loop iterations, "
                              f"more than the device's loop budget of {budget}")
    if nsteps <= room:
        return 1, 1
    splits = -(-nsteps // room)
    return splits, -(-nsteps // splits)


def _sum_fanin(budget, n: int, wg: int) -> int | None:
    """Partial sums of n elements one conv_reduce.comp MODE_SPLITS pass (wg invocations per
    workgroup) may add within the loop budget (None: any number); LoopBudgetError where not two
    fit."""
    if budget is None:
        return None
    trips = -(-n // (groups_for(n, wg) * wg))
    fanin = _most(budget, lambda count: _total(_loop(trips, _loop(count))))
    if fanin < 2:
        raise LoopBudgetError(f"conv: summing the split partial sums of {n} elements loops {trips} times per "
                              f"invocation: past the device's loop budget of {budget}")
    return fanin


def _check_grid(budget, what: str, splits: int, z: int, out_size: int, devkey: tuple) -> None:
    """The dispatch and index limits of a split-K plan: z x splits workgroups along z, splits x
    out_size partial sums within 32-bit indices (nothing to check where nothing was split)."""
    if budget is None or splits == 1:
        return
    if z * splits > devkey[4][2] or splits * out_size >= 2 ** 31:
        raise LoopBudgetError(f"conv {what}: the loop budget needs {splits} splits of the reduction, past the "
                              f"device's dispatch limit ({z} x {splits} > {devkey[4][2]}) or 32-bit indices "
                              f"({splits} x {out_size} partial sums)")
    _sum_fanin(budget, out_size, 64 if devkey[1] else 256)


def _tiles_with_override(kind, cfg, rows, cols, batches, red, devkey, table=0, transposed=False):
    bm, bn, bk, tm, tn = _default_tiles(kind, rows, cols, batches, red, devkey, transposed)
    bm, bn, bk = cfg.get("BM", bm), cfg.get("BN", bn), cfg.get("BK", bk)
    tm, tn = cfg.get("TM", min(tm, bm)), cfg.get("TN", min(tn, bn))
    nt = _check_tiles(kind, bm, bn, bk, tm, tn, devkey, table)
    return bm, bn, bk, tm, tn, nt


def _phases(geom: _Geom, cfg: dict) -> int:
    """Phases (prod of the input dilation) when the phase split applies, else 1: stride 1, some
    input dilation, and kernel dilation coprime with it on every axis."""
    nph = math.prod(geom.id)
    ok = (nph > 1 and all(s == 1 for s in geom.st)
          and all(math.gcd(d, i) == 1 for d, i in zip(geom.kd, geom.id)))
    return nph if ok and cfg.get("phased", 1) else 1


def _phase_extents(geom: _Geom, cfg: dict, max_count) -> tuple:
    """(phases, output positions, taps) per phase at most: input dilation's phases where the
    grid's z can hold groups x phases, else one."""
    nph = _phases(geom, cfg)
    if geom.groups * nph > max_count[2]:
        nph = 1
    if nph == 1:
        return 1, geom.rows, geom.kp
    rows = geom.n * math.prod(-(-o // i) for o, i in zip(geom.so, geom.id))
    return nph, rows, math.prod(-(-k // i) for k, i in zip(geom.k, geom.id))


def _gather(geom: _Geom, cfg: dict, nph: int, kp: int, bk: int) -> tuple:
    """(gather, table entries) of conv_gemm.comp for reduction stages of bk."""
    steps_uniform = kp * -(-geom.cig // bk)
    steps_flat = -(-(geom.cig * kp) // bk)
    table_n = steps_flat * bk
    table_ok = (nph == 1 and all(i == 1 for i in geom.id)
                and all(d * (k - 1) < 1024 for d, k in zip(geom.kd, geom.k)) and table_n <= 2048)
    gather = cfg.get("gather")
    if gather is None:
        if steps_uniform * 8 <= steps_flat * 9:
            gather = "uniform"
        else:
            gather = "table" if table_ok else "flat"
    if gather == "table" and not table_ok:
        gather = "flat"  # the table needs no input dilation, taps < 1024, <= 2048 (channel, tap) pairs
    return gather, table_n


_NARROW_MAX_COG = 8   # output channels per group up to which the narrow kernel is the default


def _plan_narrow(geom: _Geom, has_bias: bool, devkey: tuple, cfg: dict, nph: int, rows: int, kp: int,
                 budget):
    """conv_gemm.comp's NARROW mode: few output channels per group (backward-input of a first
    layer). None when the dispatch limits do not allow it (the GEMM path then)."""
    max_count = devkey[4]
    soft = devkey[1]
    nn = cfg.get("NN", 4 if geom.cog <= 4 else 8)
    wg = cfg.get("WG", 64 if soft else 256)
    kc = cfg.get("KC", min(8 if soft else 32, geom.cig))
    # H100, first layer's backward-input: CU=1 5.0 TFLOP/s, 4 5.0, 8 7.3, 16 4.7 (registers).
    cu = cfg.get("CU", 8)
    if not 1 <= cu <= 16:
        raise ValueError(f"conv narrow plan CU={cu}: channels loaded together must be 1 to 16")
    if nn not in (4, 8) or not 1 <= wg <= devkey[3] or kc < 1 or 4 * kc * nn > devkey[2]:
        raise ValueError(f"conv narrow plan NN={nn} WG={wg} KC={kc}: need NN 4 or 8, WG <= "
                         f"{devkey[3]}, KC >= 1 and the weight chunk in shared memory")
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
        # Rows per invocation: the most (each weight read from shared memory serves RT rows)
        # that still gives a full wave of 256-invocation workgroups (8 per multiprocessor).
        rt = 1
        for cand in (4, 2):
            if -(-rows // (cand * wg)) * ny * geom.groups * nph >= 8 * MULTIPROCESSORS_ESTIMATE * 256 // wg:
                rt = cand
                break
    defines = (("NARROW", 1), ("NN", nn), ("RT", rt), ("KC", kc), ("CU", cu), ("HAS_BIAS", int(has_bias)))
    if nph > 1:
        defines += (("PHASED", 1),)
    if soft:
        defines += (("NO_UNROLL", 1),)
    tiles = -(-rows // (rt * wg))
    other = _phase_cost(geom, nph)
    gx = _grid_x(tiles, max_count[0], cfg, budget,
                 lambda trips: _narrow_cost(dict(defines), wg, not soft, 1, trips, other))
    splits, split_steps = _split_k(
        budget, "forward (narrow kernel)", kp * -(-geom.cig // kc),
        lambda steps: _narrow_cost(dict(defines), wg, not soft, steps, -(-tiles // gx), other))
    z = geom.groups * nph
    _check_grid(budget, "forward", splits, z, math.prod(geom.out_shape()), devkey)
    return _Plan("ops/conv_gemm.comp", defines, wg, geom.spec(split_steps, splits), (gx, ny, z * splits), splits,
                 geom.flops())


def _grid_x(tiles: int, most: int, cfg: dict, budget, cost) -> int:
    """Workgroups along x for `tiles` row tiles (grid-stride beyond): at most `most` and cfg's
    gridx, unless cost(tiles per workgroup) -- an invocation's count with one reduction step --
    would then pass the loop budget: the tuning cap gives way to it."""
    gx = max(1, min(tiles, most, cfg.get("gridx", most)))
    if budget is not None and cost(-(-tiles // gx)) > budget:
        gx = max(1, min(tiles, most))
    return gx


def _plan_direct(geom: _Geom, has_bias: bool, devkey: tuple, cfg: dict, budget) -> _Plan | None:
    """conv_direct.comp (one output per invocation, all its taps and channels); None where those
    loops pass the loop budget (the GEMM kernels split them)."""
    max_count = devkey[4]
    wg = 64 if devkey[1] else 128
    total = geom.n * geom.cout * math.prod(geom.so)
    k0, k1, k2 = geom.k
    per_output = _loop(k0, _loop(k1, _loop(k2, _loop(geom.cig))))
    gx = _grid_x(-(-total // wg), min(max_count[0], 65535), cfg, budget,
                 lambda trips: _total(_loop(trips, per_output)))
    if budget is not None and _total(_loop(-(-total // (gx * wg)), per_output)) > budget:
        return None
    grid = (gx, 1, 1)
    defines = (("HAS_BIAS", int(has_bias)),) + ((("NO_UNROLL", 1),) if devkey[1] else ())
    return _Plan("ops/conv_direct.comp", defines, wg, geom.spec(), grid, flops=geom.flops())


def _plan_gemm(geom: _Geom, has_bias: bool, devkey: tuple, cfg: dict, nph: int, rows: int, kp: int,
               budget) -> _Plan | None:
    """conv_gemm.comp's tiled GEMM; None where its channel tiles or groups pass the grid's limits."""
    max_count = devkey[4]
    bm, bn, bk, tm, tn, nt = _tiles_with_override("fwd", cfg, rows, geom.cog, geom.groups * nph,
                                                  geom.cig * kp, devkey,
                                                  transposed=geom.wstrides[1] < geom.wstrides[2])
    ny = -(-geom.cog // bn)
    if geom.groups > max_count[2] or ny > max_count[1]:
        return None
    gather, table_n = _gather(geom, cfg, nph, kp, bk)
    if not devkey[1] and "BK" not in cfg and (bm, bn) == (128, 64):
        # Measured on an H100: BK=16 pays only with a channel-chunked gather, a long reduction
        # and at least two waves of workgroups; BK=8 for the table/flat gathers (first layers),
        # short reductions (1x1 with few channels) and few tiles.
        tiles = -(-rows // bm) * -(-geom.cog // bn) * geom.groups * nph
        bk = 16 if (gather == "uniform" and geom.cig * kp > 256 and tiles >= 2 * MULTIPROCESSORS_ESTIMATE) else 8
        gather, table_n = _gather(geom, cfg, nph, kp, bk)
        nt = _check_tiles("fwd", bm, bn, bk, tm, tn, devkey)
    if gather == "table":
        _check_tiles("fwd", bm, bn, bk, tm, tn, devkey, table_n)
    # Weight tile loads run along the smaller weight stride.
    _, wj, wc = geom.wstrides
    j_fast = wj < wc if gather == "uniform" else wj == 1
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn),
               ("GATHER", {"flat": 0, "uniform": 1, "table": 2}[gather]), ("B_J_FAST", int(j_fast)),
               ("HAS_BIAS", int(has_bias)))
    if nph > 1:
        defines += (("PHASED", 1),)
    if gather == "table":
        defines += (("TABLE_N", table_n),)
    if devkey[1]:
        defines += (("NO_UNROLL", 1),)
    tiles = -(-rows // bm)
    nsteps = kp * -(-geom.cig // bk) if gather == "uniform" else -(-(geom.cig * kp) // bk)
    other = _phase_cost(geom, nph) + (_total(_loop(-(-table_n // nt))) if gather == "table" else 0)
    gx = _grid_x(tiles, max_count[0], cfg, budget,
                 lambda trips: _tiled_cost(dict(defines), not devkey[1], 1, trips, other))
    splits, split_steps = _split_k(
        budget, "forward", nsteps,
        lambda steps: _tiled_cost(dict(defines), not devkey[1], steps, -(-tiles // gx), other))
    z = geom.groups * nph
    _check_grid(budget, "forward", splits, z, math.prod(geom.out_shape()), devkey)
    return _Plan("ops/conv_gemm.comp", defines, nt, geom.spec(split_steps, splits), (gx, ny, z * splits), splits,
                 geom.flops())


@functools.lru_cache(maxsize=256)
def _plan_forward(geom: _Geom, has_bias: bool, devkey: tuple, cfg_raw: str, budget=None) -> _Plan:
    """The forward plan on `devkey` (_device_key) under the config string and loop budget
    (None: no limit): conv_direct.comp, or conv_gemm.comp narrow or tiled, split-K where one
    invocation's reduction would pass the budget."""
    cfg = _parse_config(cfg_raw)["fwd"]
    max_count = devkey[4]
    path = cfg.get("path")
    if path in (None, "winograd", "matmul"):  # winograd, matmul: where they do not apply
        if geom.cig <= 4 and geom.cog <= 4:
            path = "direct"
        elif geom.cog <= _NARROW_MAX_COG:
            path = "narrow"
        else:
            path = "gemm"
    nph, rows, kp = _phase_extents(geom, cfg, max_count)
    if path == "direct":
        p = _plan_direct(geom, has_bias, devkey, cfg, budget)
        if p is not None:
            return p
        path = "narrow" if geom.cog <= _NARROW_MAX_COG else "gemm"   # split-K instead
    if path == "narrow":
        p = _plan_narrow(geom, has_bias, devkey, cfg, nph, rows, kp, budget)
        if p is not None:
            return p
    p = _plan_gemm(geom, has_bias, devkey, cfg, nph, rows, kp, budget)
    if p is None:
        p = _plan_direct(geom, has_bias, devkey, cfg, budget)
    if p is None:
        raise LoopBudgetError(f"conv forward: {geom.cig} input channels x {geom.kp} taps per output do not fit the "
                              f"device's loop budget of {budget} in conv_direct.comp, and the GEMM kernels' "
                              f"{geom.groups} groups exceed its dispatch limits {max_count}")
    return p


def _split_rows(geom: _Geom, cfg: dict, default: int, nsteps: int, limit: int, least: int = 1) -> tuple:
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


@functools.lru_cache(maxsize=256)
def _plan_wgrad(geom: _Geom, devkey: tuple, cfg_raw: str, budget=None) -> _Plan:
    """conv_wgrad.comp's plan, its reduction split to fill the device and to fit the loop budget."""
    cfg = _parse_config(cfg_raw)["wgrad"]
    max_count = devkey[4]
    bm, bn, bk, tm, tn, nt = _tiles_with_override("wgrad", cfg, geom.ktot, geom.cog, geom.groups,
                                                  geom.rows, devkey)
    tiles = -(-geom.ktot // bm) * -(-geom.cog // bn) * geom.groups
    if -(-geom.ktot // bm) > max_count[0] or -(-geom.cog // bn) > max_count[1]:
        raise ValueError(f"conv backward-weight: {geom.ktot} x {geom.cog} weight tiles exceed the device's "
                         f"dispatch limits {max_count}")
    nsteps = max(1, -(-geom.rows // bk))
    # About 4 workgroups per multiprocessor, rounded down to whole waves of two per
    # multiprocessor (rounding up left a nearly empty third wave: n8 c256 3x3, 36 tiles
    # x 15 splits = 540 workgroups over 264 slots).
    target = 8 if devkey[1] else 4 * MULTIPROCESSORS_ESTIMATE
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("TM", tm), ("TN", tn))
    if devkey[1]:
        defines += (("NO_UNROLL", 1),)
    least, _ = _split_k(budget, "backward-weight", nsteps,
                        lambda steps: _wgrad_cost(dict(defines), not devkey[1], steps))
    if geom.groups > max_count[2]:
        raise ValueError(f"conv backward-weight: {geom.groups} groups exceed the device's dispatch limit "
                         f"{max_count[2]}")
    splits, split_steps = _split_rows(geom, cfg, min(target // tiles, nsteps // 16, 256), nsteps,
                                      max_count[2] // geom.groups, least)
    _check_grid(budget, "backward-weight", splits, geom.groups, geom.weight_size(), devkey)
    grid = (-(-geom.ktot // bm), -(-geom.cog // bn), geom.groups * splits)
    return _Plan("ops/conv_wgrad.comp", defines, nt, geom.spec(split_steps, splits), grid, splits, geom.flops())


_COOPMAT_MIN_COG = 16  # output channels per group below which float16 takes the float32 kernels
# What the float32 kernels need to read float16 operands in place (HALF_IN).
_HALF_STORAGE = frozenset({"storageBuffer16BitAccess", "shaderFloat16"})
_COOPMAT_FEATURES = frozenset({"cooperativeMatrix", "shaderFloat16", "storageBuffer16BitAccess",
                               "vulkanMemoryModel"})


def _coopmat_key(dev) -> tuple | None:
    """The device key for conv_coopmat.comp, or None where it cannot run: it needs 16 x 16 x 16
    float16 products accumulating in float32, 16-bit storage, float16 arithmetic, the memory
    model, and a fixed subgroup size (its workgroup is counted in subgroups)."""
    if (not _COOPMAT_FEATURES <= dev.features or not dev.has_cooperative_matrix(16, 16, 16)
            or dev.min_subgroup_size != dev.max_subgroup_size):
        return None
    return _device_key(dev)


_PACKED = "ops/conv_coopmat_packed.comp"
_PACK = "ops/conv_pack.comp"
# conv_pack.comp's tiled transposes (256 invocations): 16 reads, 2 writes of 8 halves each.
_PACK_COST = _total(_loop(16), _loop(2, _loop(8)))


def _pack_cost(geom: _Geom) -> int:
    """Counted iterations of the costlier invocation of conv_pack.comp's packing of x and of the
    weight (_pack_input, _pack_weight): a tiled transpose, or PACK_W's grid-stride loop over
    16-byte vectors of the transposed weight, 8 halves gathered in each."""
    _, wj, wc = geom.wstrides
    if wc == geom.kp and wj == geom.cig * geom.kp:
        return _PACK_COST
    vectors = geom.groups * geom.kp * -(-geom.cig // 8) * 8 * -(-geom.cog // 8)
    trips = -(-vectors // (max(1, min(groups_for(vectors, 256), 4096)) * 256))
    return max(_PACK_COST, _total(_loop(trips, _loop(8))))


def _pads_well(channels: int) -> bool:
    """Channels padded to a multiple of 8 (the packed kernels' 16-byte vectors) waste little:
    from 16 channels per group on, or a multiple of 8 (first layers' 3 do not)."""
    return channels % 8 == 0 or channels >= 16


def _packing_fits(geom: _Geom, devkey: tuple) -> bool:
    """conv_pack.comp's PACK_X grid (positions / 64, groups x channel tiles, batch) within the
    device's dispatch limits, for x and for the cotangent."""
    max_count = devkey[4]
    return geom.n <= max_count[2] and geom.groups * -(-max(geom.cig, geom.cog) // 64) <= max_count[1]


def _balanced_rows(rows: int, col_tiles: int, sgm: int) -> int:
    """BM for the packed kernel: 128, or 96 where that spreads the tiles more evenly over the
    multiprocessors (the time goes as the most row tiles one of them runs, times BM). H100,
    n8 c256 28x28 3x3: 98 tiles of 128 rows leave 34 of 132 idle; 132 tiles of 96 ran the
    forward at 116.5 TFLOP/s against 105.8, backward-input 113.7 against 101.3 (BM 64 87.6)."""
    def cost(bm):
        return -(-(-(-rows // bm) * col_tiles) // MULTIPROCESSORS_ESTIMATE) * bm
    return 96 if (96 % (16 * sgm) == 0 and cost(96) < cost(128)) else 128


@functools.lru_cache(maxsize=256)
def _plan_coopmat(geom: _Geom, has_bias: bool, devkey: tuple, cfg_raw: str, budget=None) -> _Plan | None:
    """float16 on cooperative matrices: conv_coopmat_packed.comp on channels-last copies
    (conv_pack.comp) where they pay, else conv_coopmat.comp, which gathers halves from the
    original layout. BM x BN tiles (BN the power of two >= the group's output channels, 16 to
    64, to 128 when packed), 8 subgroups.
    conv_coopmat.comp, H100 sweeps: BK 16 against 32: 65 TFLOP/s against 50 for the forward
    n32 c64 56x56 3x3, 21 against 16 for a 7x7 first layer (50 against 55 for n8 c256 28x28);
    BN 64 against 128: 35 against 24 for a 1x1 with 128 channels, 51 against 50 for n8 c256;
    BM 256 or 64 lost everywhere (53 and 46 for n32 c64).
    None where its reduction would pass the loop budget (it has no split-K: conv_gemm.comp on
    the halves then)."""
    cfg = _parse_config(cfg_raw)["f16"]
    _, _, max_shared, max_inv, max_count, sgs, _ = devkey
    nph, rows, kp = _phase_extents(geom, cfg, max_count)
    # Packing pays from 16 channels per group on and with more than one tap: with one, the
    # gathering kernel's loads are as contiguous (H100, 1x1 with 128 channels: 35 TFLOP/s
    # gathering, 23 packed).
    packs = kp > 1 and _pads_well(geom.cig)
    packed = cfg.get("path", "packed" if packs else "coopmat") == "packed" and _packing_fits(geom, devkey)
    # H100, n8 c256 28x28 3x3 forward, packed: 128 x 128 tiles of 2 x 4 subgroups 86 TFLOP/s,
    # 128 x 64 of 4 x 2 64.
    widest = 128 if packed and geom.cog >= 128 else 64
    bn = cfg.get("BN", min(widest, max(16, 1 << (geom.cog - 1).bit_length())))
    bk = cfg.get("BK", 32 if packed else 16)
    sgn = cfg.get("SGN", max(1, min(4, bn // 32)))
    sgm = cfg.get("SGM", max(1, 8 // sgn))
    bm = cfg.get("BM", _balanced_rows(rows, -(-geom.cog // bn) * geom.groups * nph, sgm) if packed else 128)
    nt = sgm * sgn * sgs
    # The gathering kernel takes conv_gemm.comp's gathers, the table too (H100, 7x7 first layer
    # forward: 37.9 TFLOP/s through the table, 23.2 flat).
    gather, table_n = (None, 0) if packed else _gather(geom, cfg, nph, kp, bk)
    if packed:
        shared = 2 * bm * (bk // 8 + 1) * 16 + 2 * bk * (bn // 8 + 1) * 16 + sgm * sgn * 1024
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
        _, wj, wc = geom.wstrides
        j_fast = wj < wc if gather == "uniform" else wj == 1
        defines += (("GATHER", {"flat": 0, "uniform": 1, "table": 2}[gather]), ("B_J_FAST", int(j_fast)))
        if gather == "table":
            defines += (("TABLE_N", table_n),)
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
        frag = _loop(-(-256 // sgs))
        frags = (bm // sgm // 16) * (bn // sgn // 16) + (bn // sgn // 16 if has_bias else 0)
        nsteps = kp * -(-geom.cig // bk) if packed or gather == "uniform" else -(-(geom.cig * kp) // bk)
        other = _phase_cost(geom, nph) + (_total(_loop(-(-table_n // nt))) if gather == "table" else 0)
        trips = -(-(-(-rows // bm)) // grid[0])
        if _total(_loop(trips, *[frag] * frags, _loop(nsteps))) + other > budget or (
                packed and _pack_cost(geom) > budget):
            return None
    return _Plan(_PACKED if packed else "ops/conv_coopmat.comp", defines, nt, geom.spec(), grid,
                 flops=geom.flops())


_WGRAD16 = "ops/conv_coopmat_wgrad.comp"


def _finish_fits(budget, n: int, splits: int) -> bool:
    """Whether the float16 backward-weight kernels' FINISH dispatch (grid-stride over n weight
    elements, max(1, min(groups_for(n, 256), 4096)) workgroups of 256, the splits summed in
    each) stays within the loop budget."""
    if budget is None:
        return True
    trips = -(-n // (max(1, min(groups_for(n, 256), 4096)) * 256))
    return _total(_loop(trips, _loop(splits))) <= budget


@functools.lru_cache(maxsize=256)
def _plan_wgrad_coopmat(geom: _Geom, devkey: tuple, cfg_raw: str, budget=None) -> _Plan | None:
    """conv_coopmat_wgrad.comp for float16 backward-weight, conv_coopmat_wgrad_gather.comp where
    channel counts pad badly (a first layer's 3 channels; its 49 taps would also re-read the
    cotangent 49 times), or None where conv_wgrad.comp runs instead (no cooperative matrices,
    wgrad16.path=cast, see _plan_wgrad_gather). Tiles of BM output x BN
    input channels (powers of two >= the group's, 16 to 128), one tap each, subgroups of at
    least 32 x 32 (H100, n32 c64 3x3: 4 subgroups of 32 x 32 on a 64 x 64 tile 58 TFLOP/s, 8 of
    16 x 32 37), the rows split to fill about two workgroups per multiprocessor and to fit the
    loop budget (None where they cannot)."""
    cfg = _parse_config(cfg_raw)["wgrad16"]
    if devkey is None or cfg.get("path") == "cast":
        return None
    if cfg.get("path", "packed" if _pads_well(geom.cig) and _pads_well(geom.cog) else "coopmat") == "coopmat":
        return _plan_wgrad_gather(geom, devkey, cfg, budget)
    if not _packing_fits(geom, devkey) or (budget is not None and _PACK_COST > budget):
        return None  # (it packs x and the cotangent, both by the tiled transpose)
    _, _, max_shared, max_inv, max_count, sgs, _ = devkey
    width = lambda c: min(128, max(16, 1 << (c - 1).bit_length()))  # noqa: E731
    bm, bn, bk = cfg.get("BM", width(geom.cog)), cfg.get("BN", width(geom.cig)), cfg.get("BK", 32)
    sgn = cfg.get("SGN", max(1, min(4, bn // 32)))
    sgm = cfg.get("SGM", max(1, min(8 // sgn, bm // 32)))
    nt = sgm * sgn * sgs
    shared = 2 * bk * (bm // 8 + 1) * 16 + 2 * bk * (bn // 8 + 1) * 16 + sgm * sgn * 1024
    if not (all(v % 16 == 0 for v in (bm, bn, bk)) and bm % (16 * sgm) == 0 and bn % (16 * sgn) == 0
            and nt <= max_inv and shared <= max_shared):
        raise ValueError(f"conv float16 backward-weight plan BM={bm} BN={bn} BK={bk} SGM={sgm} SGN={sgn}: need "
                         f"multiples of 16 split evenly over the subgroups, at most {max_inv} invocations and "
                         f"{max_shared} bytes of shared memory (this needs {nt} and {shared})")
    tiles = -(-geom.cog // bm) * -(-geom.cig // bn)
    nsteps = max(1, -(-geom.rows // bk))
    # About two workgroups per multiprocessor: more splits cost more than they fill (H100,
    # n8 c256 3x3: 7 splits 60 TFLOP/s, 14 41; n32 c64: 29 splits 58, 64 44, 117 44).
    default = min(2 * MULTIPROCESSORS_ESTIMATE // (tiles * geom.kp * geom.groups), nsteps // 8, 256)
    # counted: the steps and the epilogue's scratch loops (256 / SGS per fragment)
    epilogue = (bm // sgm // 16) * (bn // sgn // 16) * _total(_loop(-(-256 // sgs)))
    try:
        least, _ = _split_k(budget, "float16 backward-weight", nsteps, lambda steps: _total(_loop(steps)) + epilogue)
        splits, split_steps = _split_rows(geom, cfg, default, nsteps, max_count[2] // geom.groups, least)
    except LoopBudgetError:
        return None
    if (tiles > max_count[0] or geom.kp > max_count[1] or geom.groups * splits > max_count[2]
            or not _finish_fits(budget, geom.weight_size(), splits)):
        return None
    defines = (("BM", bm), ("BN", bn), ("BK", bk), ("SG_M", sgm), ("SG_N", sgn), ("SGS", sgs))
    return _Plan(_WGRAD16, defines, nt, geom.spec(split_steps, splits), (tiles, geom.kp, geom.groups * splits),
                 splits, geom.flops())


_WGRAD16_GATHER = "ops/conv_coopmat_wgrad_gather.comp"


def _plan_wgrad_gather(geom: _Geom, devkey: tuple, cfg: dict, budget=None) -> _Plan | None:
    """conv_coopmat_wgrad_gather.comp: float16 backward-weight for channel counts that pad badly
    (a first layer's 3), all (channel, tap) columns of a group in one tile, x gathered in place;
    None (the float32 kernels) below 16 output channels or where the columns' tiles do not fit
    shared memory. The rows split about two workgroups per multiprocessor. H100, n16 c3 224x224
    7x7 stride 2 (147 columns): BK 16 34.4 TFLOP/s, 32 31.4 (132 splits 33.9), float32 kernels
    on the halves 13.8, cuDNN 25.8."""
    _, _, max_shared, max_inv, max_count, sgs, _ = devkey
    pf = -(-geom.ktot // 16)
    bk = cfg.get("BK", 16)
    nt = 8 * sgs
    shared = 2 * (64 + 16 * pf) * (bk + 8) * 2 + 16 * 16 * pf
    if bk % 16 or nt % bk or nt > max_inv:
        raise ValueError(f"conv float16 backward-weight (gathering) BK={bk}: need a multiple of 16 that "
                         f"divides the workgroup of {nt} invocations")
    jt = -(-geom.cog // 64)
    if (geom.cog < _COOPMAT_MIN_COG or shared > max_shared or jt > max_count[1]
            or geom.groups > max_count[2]):
        return None
    nsteps = max(1, -(-geom.rows // bk))
    default = min(2 * MULTIPROCESSORS_ESTIMATE // (jt * geom.groups), nsteps // 8, 256)
    try:  # counted: the column table's loop and the steps
        least, _ = _split_k(budget, "float16 backward-weight", nsteps,
                            lambda steps: _total(_loop(-(-16 * pf // nt)), _loop(steps)))
        splits, split_steps = _split_rows(geom, cfg, default, nsteps, max_count[0], least)
    except LoopBudgetError:
        return None
    if not _finish_fits(budget, geom.weight_size(), splits):
        return None
    defines = (("PF", pf), ("BK", bk), ("SGS", sgs))
    return _Plan(_WGRAD16_GATHER, defines, nt, geom.spec(split_steps, splits), (splits, jt, geom.groups),
                 splits, geom.flops())


def plan(kind: str, geom: _Geom, has_bias: bool = False) -> _Plan | None:
    """The cached plan of a pass ('forward' also serves backward-input) on the open device, within
    its loop budget; 'forward16' is None where the cooperative-matrix kernels would pass the
    budget, 'wgrad16' None where float16 backward-weight runs the float32 kernels; 'winograd_fwd'
    and 'winograd' (backward-weight) are None where float32 runs the GEMM kernels instead of
    conv_winograd.py."""
    dev = runtime.get().device
    raw = os.environ.get("VKBACKEND_CONV_CONFIG", "")
    budget = loop_budget()
    if kind == "forward":
        return _plan_forward(geom, has_bias, _device_key(dev), raw, budget)
    if kind == "forward16":
        return _plan_coopmat(geom, has_bias, _coopmat_key(dev), raw, budget)
    if kind == "wgrad16":
        return _plan_wgrad_coopmat(geom, _coopmat_key(dev), raw, budget)
    if kind in ("winograd", "winograd_fwd"):
        fwd = kind == "winograd_fwd"
        cfg = tuple(sorted(_parse_config(raw)["fwd" if fwd else "wgrad"].items()))
        return (conv_winograd.plan_forward if fwd else conv_winograd.plan_wgrad)(geom, _device_key(dev), cfg,
                                                                                  budget)
    return _plan_wgrad(geom, _device_key(dev), raw, budget)


def _bias_chunks(geom: _Geom) -> tuple:
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
    reduce = _loop(max(wg.bit_length(), -(-wg // (sg * sg))))

    def cost(nb, rounds):  # nb batches of `rounds` position rounds per invocation
        return _total(_loop(trips_c, _loop(nb, _loop(rounds)), reduce))

    rounds = -(-plane // wg)
    nb = _most(budget, lambda b: cost(b, rounds))
    if nb >= geom.n:
        return geom.n, plane
    if nb >= 1:
        npos = plane
    elif _most(budget, lambda r: cost(1, r)) >= 1:
        nb, npos = 1, _most(budget, lambda r: cost(1, r)) * wg
    else:
        raise LoopBudgetError(f"conv bias gradient: {geom.cout} channels over {dev.max_workgroup_count[0]} "
                              f"workgroups leave no room in the device's loop budget of {budget}")
    chunks = -(-geom.n // nb) * -(-plane // npos)
    if chunks > dev.max_workgroup_count[1]:
        raise LoopBudgetError(f"conv bias gradient: the loop budget of {budget} needs {chunks} chunks of the "
                              f"batch x {plane} positions, past the device's grid limit "
                              f"{dev.max_workgroup_count[1]}")
    _sum_fanin(budget, geom.cout, wg)
    return nb, npos


# ----------------------------------------------------------------------------------------------
# recording
# ----------------------------------------------------------------------------------------------
def _to32(a: Array | None) -> Array | None:
    return None if a is None or a.dtype == dtypes.float32 else a.astype(dtypes.float32)


def uses_coopmat(geom: _Geom) -> bool:
    """Whether a float16 forward pass of geom runs on cooperative matrices (conv_coopmat*.comp;
    else the float32 kernels on widened copies)."""
    cast = _parse_config(os.environ.get("VKBACKEND_CONV_CONFIG", ""))["f16"].get("path") == "cast"
    return not cast and geom.cog >= _COOPMAT_MIN_COG and _coopmat_key(runtime.get().device) is not None


def _pointwise_matmul(geom: _Geom, has_bias: bool, devkey: tuple, cfg_raw: str) -> bool:
    """Whether a float32 forward runs as a batched GEMM on primitives/matmul.comp: 1x1 kernels,
    stride 1, no padding or input dilation, one group, no bias (matmul.comp has no epilogue), the
    weight's channels along one unit stride. By default (fwd.path=matmul forces it) on hardware
    from 128 output channels and 256 positions: H100, 128 -> 128 channels at 28x28 22.7 TFLOP/s
    against 19.2 on conv_gemm.comp, 64 -> 256 at 56x56 26.7 against 16.9; 256 -> 64 at 56x56 13.5
    against 25.6 and 512 -> 2048 at 7x7 12.0 against 15.1 (half-empty 128-wide tiles) stay there."""
    path = _parse_config(cfg_raw)["fwd"].get("path")
    pointwise = (geom.k == (1, 1, 1) and geom.st == (1, 1, 1) and geom.id == (1, 1, 1) and geom.pl == (0, 0, 0)
                 and geom.so == geom.si and geom.groups == 1 and 1 in geom.wstrides[1:]
                 and geom.n <= devkey[4][2] and not has_bias)
    if path is None:
        return pointwise and not devkey[1] and geom.cog >= 128 and math.prod(geom.so) >= 256
    return pointwise and path == "matmul"


def _record_pointwise(geom: _Geom, x: Array, w: Array) -> Array:
    """y[n] = W @ x[n] (C_out x C_in times C_in x positions) for every batch element, W read in
    place (transposed when its input channels are the unit stride of a backward-input)."""
    y = Array.empty(geom.out_shape(), dtypes.float32)
    positions = math.prod(geom.so)
    _, wj, wc = geom.wstrides
    record_gemm(w, x, y, m=geom.cout, n=positions, k=geom.cin, lda=wj if wc == 1 else wc, ldb=positions,
                ldc=positions, trans_a=wc != 1, batch_shape=(geom.n,), batch_strides_a=(0,),
                batch_strides_b=(geom.cin * positions,), batch_strides_c=(geom.cout * positions,))
    return y


def _forward_route(geom: _Geom, half: bool, has_bias: bool) -> tuple:
    """How a forward pass runs, planned before anything is recorded: ("winograd", plan),
    ("matmul", None), ("coopmat", plan), or ("kernel", plan) -- conv_gemm.comp / conv_direct.comp,
    float16 read in place or on widened copies."""
    dev = runtime.get().device
    if not half:
        wp = plan("winograd_fwd", geom)
        if wp is not None:
            return "winograd", wp
        if _pointwise_matmul(geom, has_bias, _device_key(dev), os.environ.get("VKBACKEND_CONV_CONFIG", "")):
            return "matmul", None
    elif uses_coopmat(geom):
        p = plan("forward16", geom, has_bias)
        if p is not None:
            return "coopmat", p
    return "kernel", plan("forward", geom, has_bias)


def _record_sum(part: Array, splits: int, n: int, out: Array) -> None:
    """out (float32, n elements) = the sum of the `splits` partial sums part[s * n + i]
    (conv_reduce.comp MODE_SPLITS), in rounds where one pass would loop past the loop budget."""
    rt = runtime.get()
    wg = workgroup_size()
    red = rt.kernel("ops/conv_reduce.comp", {"MODE_SPLITS": 1}, wg)
    grid = (groups_for(n, wg),)
    fanin = _sum_fanin(loop_budget(), n, wg) or splits
    src, off = part, part.offset
    while splits > fanin:
        rounds = -(-splits // fanin)
        tmp = Array.empty((rounds * n,), dtypes.float32)
        for r in range(rounds):
            red([src.buffer, tmp.buffer], [n, min(fanin, splits - r * fanin), off + r * fanin * n, tmp.offset + r * n],
                grid)
        src, off, splits = tmp, tmp.offset, rounds
    red([src.buffer, out.buffer], [n, splits, off, out.offset], grid)


def _record_forward(geom: _Geom, x: Array, w: Array, b: Array | None) -> Array:
    rt = runtime.get()
    if math.prod(geom.out_shape()) == 0:
        return Array.empty(geom.out_shape(), x.dtype)
    half = x.dtype == dtypes.float16
    route, p = _forward_route(geom, half, b is not None)
    if route == "winograd":
        return conv_winograd.record_forward(geom, p, x, w, b)
    if route == "matmul":
        return _record_pointwise(geom, x, w)
    # float16 without cooperative matrices (or a GEMM too narrow for 16-wide fragments: the first
    # layer's backward-input ran at 2.9 TFLOP/s on them, 7.3 in the narrow float32 kernel): the
    # float32 kernels, conv_gemm.comp reading the halves in place (HALF_IN), else on widened copies.
    half_in = half and route == "kernel"
    if half_in and (p.shader != "ops/conv_gemm.comp" or not _HALF_STORAGE <= rt.device.features):
        return _record_forward(geom, _to32(x), _to32(w), _to32(b)).astype(dtypes.float16)
    y = Array.empty(geom.out_shape(), dtypes.float32 if half_in else x.dtype)
    k = rt.kernel(p.shader, dict(p.defines, HALF_IN=1) if half_in else dict(p.defines), p.workgroup, p.spec)
    if p.shader == _PACKED:
        x, w = _pack_input(geom, x), _pack_weight(geom, w)
    bb = b if b is not None else w
    # split-K: the splits' partial sums (float32), then their sum into y
    out = y if p.splits == 1 else Array.empty((p.splits * y.size,), dtypes.float32)
    push = [x.offset, w.offset, bb.offset, out.offset]
    if p.shader == "ops/conv_direct.comp":
        push.append(y.size)
    k([x.buffer, w.buffer, bb.buffer, out.buffer], push, p.grid)
    if p.splits > 1:
        _record_sum(out, p.splits, y.size, y)
    return y.astype(dtypes.float16) if half_in else y


def _pack_input(geom: _Geom, x: Array) -> Array:
    """x (float16, N x C_in x spatial) channels-last for conv_coopmat_packed.comp (conv_pack.comp)."""
    rt = runtime.get()
    cigp = -(-geom.cig // 8) * 8
    si = math.prod(geom.si)
    xp = Array.empty((geom.n * si * geom.groups * cigp,), dtypes.float16)
    k = rt.kernel(_PACK, {"PACK_X": 1}, 256, geom.spec())
    k([x.buffer, xp.buffer], [x.offset, xp.offset], (-(-si // 64), geom.groups * -(-cigp // 64), geom.n))
    return xp


def _pack_weight(geom: _Geom, w: Array) -> Array:
    """The weight (read through geom's strides) as [group][tap][C_in/groups][C_out/groups], both
    channel counts padded to multiples of 8, for conv_coopmat_packed.comp (conv_pack.comp)."""
    rt = runtime.get()
    cigp, cogp = -(-geom.cig // 8) * 8, -(-geom.cog // 8) * 8
    wp = Array.empty((geom.groups * geom.kp * cigp * cogp,), dtypes.float16)
    _, wj, wc = geom.wstrides
    if wc == geom.kp and wj == geom.cig * geom.kp:  # a forward weight: transposed by tiles
        # (H100, 256 x 256 x 3 x 3: 7.3 us gathering 8 halves W_J apart per vector)
        k = rt.kernel(_PACK, {"PACK_W": 1, "W_TILED": 1}, 256, geom.spec())
        grid = (-(-cigp * geom.kp // 64), -(-cogp // 64), geom.groups)
    else:
        k = rt.kernel(_PACK, {"PACK_W": 1}, 256, geom.spec())
        grid = (max(1, min(groups_for(wp.size // 8, 256), 4096)),)
    k([w.buffer, wp.buffer], [w.offset, wp.offset], grid)
    return wp


def _wgrad_route(geom: _Geom, half: bool) -> tuple:
    """How a backward-weight pass runs, planned before anything is recorded: ("coopmat", plan),
    ("cast", None) (the float32 route on widened copies), ("winograd", plan) or ("kernel", plan)
    (conv_wgrad.comp, float16 read in place)."""
    if half:
        p = plan("wgrad16", geom)
        if p is not None:
            return "coopmat", p
        if not _HALF_STORAGE <= runtime.get().device.features:
            _wgrad_route(geom, False)
            return "cast", None
    else:
        wp = plan("winograd", geom)
        if wp is not None:
            return "winograd", wp
    return "kernel", plan("wgrad", geom)


def _record_wgrad(geom: _Geom, x: Array, g: Array, wshape: tuple) -> Array:
    rt = runtime.get()
    half = x.dtype == dtypes.float16
    if geom.n == 0:
        dw = zeros(wshape, dtypes.float32)
        return dw.astype(dtypes.float16) if half else dw
    route, p = _wgrad_route(geom, half)
    if route == "coopmat":
        return _record_wgrad_coopmat(geom, p, x, g, wshape)
    if route == "cast":
        return _record_wgrad(geom, _to32(x), _to32(g), wshape).astype(dtypes.float16)
    if route == "winograd":
        return conv_winograd.record_wgrad(geom, p, x, g, wshape)
    # conv_wgrad.comp, reading float16 operands in place (a first layer's cotangent widened cost
    # ~30 us of 324 on an H100)
    dw = Array.empty(wshape, dtypes.float32)
    k = rt.kernel(p.shader, dict(p.defines, HALF_IN=1) if half else dict(p.defines), p.workgroup, p.spec)
    if p.splits == 1:
        k([x.buffer, g.buffer, dw.buffer], [x.offset, g.offset, dw.offset], p.grid)
    else:
        n = dw.size
        part = Array.empty((p.splits * n,), dtypes.float32)
        k([x.buffer, g.buffer, part.buffer], [x.offset, g.offset, part.offset], p.grid)
        _record_sum(part, p.splits, n, dw)
    return dw.astype(dtypes.float16) if half else dw


def _record_wgrad_coopmat(geom: _Geom, p: _Plan, x: Array, g: Array, wshape: tuple) -> Array:
    """conv_coopmat_wgrad.comp on channels-last copies of x and of the cotangent (packed as the
    input of a convolution with the cotangent's channels and positions), or
    conv_coopmat_wgrad_gather.comp on them as they are; then the kernel's FINISH dispatch: the
    splits summed into the weight's layout, in float16."""
    rt = runtime.get()
    n = geom.weight_size()
    if p.shader == _WGRAD16_GATHER:  # x and the cotangent as they are
        d = dict(p.defines)
        part = Array.empty((p.splits * geom.groups * p.grid[1] * 64 * 16 * d["PF"],), dtypes.float32)
    else:
        x, g = _pack_input(geom, x), _pack_input(replace(geom, cin=geom.cout, si=geom.so), g)
        part = Array.empty((p.splits * n,), dtypes.float32)
    rt.kernel(p.shader, dict(p.defines), p.workgroup, p.spec)(
        [x.buffer, g.buffer, part.buffer], [x.offset, g.offset, part.offset], p.grid)
    dw = Array.empty(wshape, dtypes.float16)
    # (the gathering kernel's partial sums are laid out by PF)
    finish = rt.kernel(p.shader, {"FINISH": 1, **{k: v for k, v in p.defines if k == "PF"}}, 256, p.spec)
    finish([part.buffer, dw.buffer], [part.offset, dw.offset], (max(1, min(groups_for(n, 256), 4096)),))
    return dw


def _record_bgrad(geom: _Geom, g: Array) -> Array:
    rt = runtime.get()
    half = g.dtype == dtypes.float16
    if half and not _HALF_STORAGE <= rt.device.features:
        return _record_bgrad(geom, _to32(g)).astype(dtypes.float16)
    if geom.n == 0:
        db = zeros((geom.cout,), dtypes.float32)
    else:
        db = Array.empty((geom.cout,), dtypes.float32)
        plane = math.prod(geom.so)
        nb, npos = _bias_chunks(geom)
        ochunks = -(-plane // npos)
        chunks = -(-geom.n // nb) * ochunks
        out = db if chunks == 1 else Array.empty((chunks * geom.cout,), dtypes.float32)
        wg = workgroup_size()
        red = rt.kernel("ops/conv_reduce.comp", {"MODE_BIAS": 1, "HALF_IN": 1} if half else {"MODE_BIAS": 1}, wg)
        grid = (max(1, min(geom.cout, rt.device.max_workgroup_count[0])), chunks)
        red([g.buffer, out.buffer], [geom.n, geom.cout, plane, g.offset, out.offset, nb, npos, ochunks], grid)
        if chunks > 1:
            _record_sum(out, chunks, geom.cout, db)
    return db.astype(dtypes.float16) if half else db


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------
def _general_geometry(fn, input, weight, stride, padding_lo, padding_hi, kernel_dilation,
                      input_dilation, groups, flip):
    """conv_general's parameters checked (before any GPU work): (geometry, input shape, weight shape)."""
    nd = _nd_of(weight, fn)
    xshape = _shape_of(input, "input", fn)
    wshape = _shape_of(weight, "weight", fn)
    groups = _groups(groups, fn)
    stride = _ints(stride, nd, "stride", fn, 1)
    lo = _ints(padding_lo, nd, "padding_lo", fn)
    hi = _ints(padding_hi, nd, "padding_hi", fn)
    kd = _ints(kernel_dilation, nd, "kernel_dilation", fn, 1)
    idil = _ints(input_dilation, nd, "input_dilation", fn, 1)
    if not isinstance(flip, (bool, np.bool_)):
        raise TypeError(f"{fn}: flip must be a bool, got {flip!r}")
    geom = _geometry(fn, xshape, wshape, nd, stride, lo, hi, kd, idil, groups, flip, False)
    return geom, xshape, wshape


def conv_general(input, weight, stride=1, padding_lo=0, padding_hi=0, kernel_dilation=1,
                 input_dilation=1, groups=1, flip=False, *, bias=None) -> Array:
    """The general convolution (MLX's conv_general, in N, C, spatial layout).

    input (N, C_in, *S), weight (C_out, C_in/groups, *K), 1 to 3 spatial axes. input_dilation
    inserts input_dilation-1 zeros between neighbouring input elements; padding_lo/padding_hi
    pad (or, negative, crop) each spatial axis; flip mirrors the kernel (a true convolution).
    Output size per axis: ((S-1)*input_dilation + 1 + lo + hi - ((K-1)*kernel_dilation + 1)) // stride + 1.
    """
    fn = "conv_general"
    geom, _, _ = _general_geometry(fn, input, weight, stride, padding_lo, padding_hi, kernel_dilation,
                                   input_dilation, groups, flip)
    _check_bias(bias, geom.cout, fn)
    _common_dtype(fn, input=input, weight=weight, bias=bias)
    return _record_forward(geom, _as_array(input), _as_array(weight),
                           None if bias is None else _as_array(bias))


def _forward(fn, geom, input, weight, bias, xshape, unbatched: bool) -> Array:
    """Check the bias, then record the forward pass (an unbatched input gets a batch of one)."""
    _check_bias(bias, geom.cout, fn)
    _common_dtype(fn, input=input, weight=weight, bias=bias)
    x = _as_array(input)
    if unbatched:
        x = x.reshape(xshape)
    y = _record_forward(geom, x, _as_array(weight), None if bias is None else _as_array(bias))
    return y.reshape(y.shape[1:]) if unbatched else y


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    fn = f"conv{nd}d"
    wshape = _shape_of(weight, "weight", fn)
    if len(wshape) != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions (C_out, C_in/groups, {nd} kernel), "
                         f"got shape {wshape}")
    xshape, unbatched = _batched(input, nd, fn)
    groups = _groups(groups, fn)
    stride, lo, hi, dilation = _conv_params(fn, nd, wshape, stride, padding, dilation)
    geom = _geometry(fn, xshape, wshape, nd, stride, lo, hi, dilation, (1,) * nd, groups, False, False)
    return _forward(fn, geom, input, weight, bias, xshape, unbatched)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv1d: input (N, C_in, L), weight (C_out, C_in/groups, K)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv2d: input (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv3d: input (N, C_in, D, H, W), weight (C_out, C_in/groups, kD, kH, kW)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation):
    if len(wshape) != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions (C_in, C_out/groups, {nd} kernel), "
                         f"got shape {wshape}")
    groups = _groups(groups, fn)
    stride = _ints(stride, nd, "stride", fn, 1)
    padding = _ints(padding, nd, "padding", fn, 0)
    output_padding = _ints(output_padding, nd, "output_padding", fn, 0)
    dilation = _ints(dilation, nd, "dilation", fn, 1)
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise ValueError(f"{fn}: output_padding ({output_padding}) must be smaller than either stride "
                             f"({stride}) or dilation ({dilation})")
    k = wshape[2:]
    lo = tuple(d * (kk - 1) - p for d, kk, p in zip(dilation, k, padding))
    hi = tuple(l + op for l, op in zip(lo, output_padding))
    if len(xshape) == nd + 2 and xshape[1] != wshape[0]:
        raise ValueError(f"{fn}: weight's first dimension ({wshape[0]}) must equal the input channels "
                         f"({xshape[1]})")
    if wshape[0] % groups:
        raise ValueError(f"{fn}: input channels ({wshape[0]}) not divisible by groups ({groups})")
    geom = _geometry(fn, xshape, wshape, nd, (1,) * nd, lo, hi, dilation, stride, groups, True, True)
    return geom, (stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    fn = f"conv_transpose{nd}d"
    wshape = _shape_of(weight, "weight", fn)
    xshape, unbatched = _batched(input, nd, fn)
    geom, _ = _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation)
    return _forward(fn, geom, input, weight, bias, xshape, unbatched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Array:
    """torch.nn.functional.conv_transpose1d: weight (C_in, C_out/groups, K)."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Array:
    """torch.nn.functional.conv_transpose2d: weight (C_in, C_out/groups, kH, kW)."""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Array:
    """torch.nn.functional.conv_transpose3d: weight (C_in, C_out/groups, kD, kH, kW)."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


def _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad):
    gshape = _shape_of(cotangent, "cotangent", fn)
    if gshape != geom.out_shape():
        raise ValueError(f"{fn}: cotangent must have the output's shape {geom.out_shape()}, got {gshape}")
    half = _common_dtype(fn, input=input, weight=weight, cotangent=cotangent) == dtypes.float16
    # Every pass planned first: a LoopBudgetError (or a dispatch limit) before any GPU work.
    if input_grad and geom.n:
        _forward_route(geom.backward_input(), half, False)
    if weight_grad and geom.n:
        _wgrad_route(geom, half)
    if bias_grad and geom.n:
        _bias_chunks(geom)
    x, w, g = _as_array(input), _as_array(weight), _as_array(cotangent)
    dx = _record_forward(geom.backward_input(), g, w, None).reshape(xshape) if input_grad else None
    dw = _record_wgrad(geom, x, g, wshape) if weight_grad else None
    if bias_grad:
        return dx, dw, _record_bgrad(geom, g)
    return dx, dw


def conv_vjp(input, weight, cotangent, stride=1, padding=0, dilation=1, groups=1, *, input_grad=True,
             weight_grad=True, bias_grad=False):
    """Gradients of conv{1,2,3}d(input, weight, stride, padding, dilation, groups) for `cotangent`
    (the output's gradient): (dinput, dweight), plus dbias with bias_grad=True; input_grad=False
    or weight_grad=False skips that pass (None in its place). Recorded only, no host round trip:
    backward-input is a convolution of the cotangent with the flipped, channel-transposed weight
    read in place; backward-weight a GEMM over batch x output positions, split across workgroups."""
    fn = "conv_vjp"
    nd = _nd_of(weight, fn)
    wshape = _shape_of(weight, "weight", fn)
    xshape = _shape_of(input, "input", fn)
    groups = _groups(groups, fn)
    stride, lo, hi, dilation = _conv_params(fn, nd, wshape, stride, padding, dilation)
    geom = _geometry(fn, xshape, wshape, nd, stride, lo, hi, dilation, (1,) * nd, groups, False, False)
    return _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad)


def conv_general_vjp(input, weight, cotangent, stride=1, padding_lo=0, padding_hi=0, kernel_dilation=1,
                     input_dilation=1, groups=1, flip=False, *, input_grad=True, weight_grad=True,
                     bias_grad=False):
    """Gradients of conv_general (same parameters) for `cotangent`: (dinput, dweight[, dbias])."""
    fn = "conv_general_vjp"
    geom, xshape, wshape = _general_geometry(fn, input, weight, stride, padding_lo, padding_hi,
                                             kernel_dilation, input_dilation, groups, flip)
    return _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad)


def conv_transpose_vjp(input, weight, cotangent, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1, *, input_grad=True, weight_grad=True, bias_grad=False):
    """Gradients of conv_transpose{1,2,3}d (same parameters) for `cotangent`: (dinput, dweight[, dbias])."""
    fn = "conv_transpose_vjp"
    nd = _nd_of(weight, fn)
    xshape = _shape_of(input, "input", fn)
    wshape = _shape_of(weight, "weight", fn)
    geom, _ = _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation)
    return _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad)
