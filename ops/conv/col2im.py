"""Backward-input as a GEMM into columns and a gather (col2im; float16 on widened copies), for
layers whose input gradient the implicit-GEMM kernels compute poorly: few input channels (a
network's first layer: 3) with a stride, where the backward-input geometry has a handful of
output channels and its input dilation leaves most of every gathered window zero.

  cols[n] = W^T @ dy[n]         (C_in * taps) x positions, one batched matmul.comp product, W read
                                in place (its rows are the output channels)
  dx[n][c][i] = sum of cols[n][c * taps + k][o] over the taps k and outputs o that read i
                                (shaders/ops/conv_col2im.comp: each dx element sums its own)

The columns of a slice of the batch at a time (tuning.COL2IM_COLS_BYTES); one group, no input
dilation, the weight in its own layout (not a transposed convolution's)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ... import dtypes, runtime
from ...array import Array
from ...primitives.launch import grid_groups
from ...primitives.matmul import check_loop_budget, record_gemm
from . import config, tuning

SHADER = "ops/conv_col2im.comp"
WG = 256


def applies(geom) -> bool:
    """Whether this route can take geom's backward-input (geom: the forward convolution)."""
    return (geom.groups == 1 and geom.id == (1, 1, 1) and not geom.flip
            and geom.wstrides == (geom.cout * geom.cin * geom.kp, geom.cin * geom.kp, geom.kp))


def _slice_bytes(geom, dev) -> int:
    """The most bytes of columns at a time: tuning's bound, within what a shader may bind."""
    return min(tuning.COL2IM_COLS_BYTES, dev.max_storage_buffer_range)


def wanted(geom, dev, cfg_raw: str) -> bool:
    """fwd.path=col2im forces it where it applies; by default on hardware, for at most
    tuning.COL2IM_MAX_CIN input channels and a stride. Never where one batch element's columns
    exceed _slice_bytes."""
    if not applies(geom) or 4 * geom.cin * geom.kp * math.prod(geom.so) > _slice_bytes(geom, dev):
        return False
    path = config.parse(cfg_raw)["fwd"].get("path")
    if path is None:
        return not dev.is_software and geom.cin <= tuning.COL2IM_MAX_CIN and max(geom.st) > 1
    return path == "col2im"


@dataclass(frozen=True)
class Plan:
    per: int      # batch elements per slice (columns of `per` at a time)
    groups: int   # workgroups of the gather

    def describe(self) -> str:
        return f"col2im: matmul.comp into columns ({self.per} images at a time), conv_col2im.comp's gather"


def plan(geom) -> Plan:
    """The slices and the gather's grid, within the loop budget (LoopBudgetError, before any GPU
    work, where the product or the gather cannot fit it)."""
    rows, so = geom.cin * geom.kp, math.prod(geom.so)
    per = max(1, min(geom.n, _slice_bytes(geom, runtime.get().device) // (4 * rows * so)))
    check_loop_budget(rows, so, geom.cout, (per,))
    k0, k1, k2 = geom.k  # the gather's taps loops, nested per axis (at most every tap) or flat
    groups = grid_groups(per * geom.cin * math.prod(geom.si), WG, per_trip=k0 * (1 + k1 * (1 + k2)) + 4,
                         nested=3)
    return Plan(per, groups)


def record(geom, p: Plan, g: Array, w: Array) -> Array:
    """dx (float32, geom's input shape) for the cotangent g and the weight w (float32)."""
    rt = runtime.get()
    rows, so, si = geom.cin * geom.kp, math.prod(geom.so), math.prod(geom.si)
    dx = Array.empty(geom.in_shape(), dtypes.float32)
    cols = Array.empty((p.per * rows * so,), dtypes.float32)
    k = rt.kernel(SHADER, {"NO_UNROLL": 1} if rt.device.is_software else {}, WG, geom.spec())
    for n0 in range(0, geom.n, p.per):
        nb = min(p.per, geom.n - n0)
        record_gemm(w, g, cols, m=rows, n=so, k=geom.cout, lda=rows, ldb=so, ldc=so, trans_a=True,
                    offset_b=g.offset + n0 * geom.cout * so, batch_shape=(nb,), batch_strides_a=(0,),
                    batch_strides_b=(geom.cout * so,), batch_strides_c=(rows * so,))
        k([cols.buffer, dx.buffer], [nb * geom.cin * si, cols.offset, dx.offset + n0 * geom.cin * si],
          (p.groups,))
    return dx
