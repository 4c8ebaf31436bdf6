"""float64 convolutions: every pass of the general convolution (geometry.Geom) as one float64 GEMM
over an explicit im2col matrix, built from the array primitives (zeros, stepped assignment,
strided views, copies; matmul's float64 kernel; reductions), so every geometry the float32
kernels take (stride, padding or cropping, kernel and input dilation, groups, flip, the weight
read transposed) is taken here too, within the loop budget as those primitives plan it.

The matrix holds C_in/groups x taps rows per group and output position, kernel taps in the
weight's own order, so the forward is W (groups, C_out/groups, C_in/groups * taps) @ cols and the
weight gradient cotangent @ cols^T. It is built for a slice of the batch at a time, at most
COLS_BYTES of it: float64 convolutions are for accuracy, the float32 kernels for speed.
"""
from __future__ import annotations

import itertools
import math

from ... import dtypes
from ...array import Array
from ...primitives import elementwise as ew, reduce
from ...primitives.creation import check_fits, zeros
from ...primitives.manipulation import permute_dims
from ...primitives.matmul import check_loop_budget, matmul
from .geometry import Geom

COLS_BYTES = 1 << 28  # the im2col matrix of one slice of the batch at most (a whole batch element always)


def _need(geom: Geom) -> tuple:
    """Per axis, the extent of the dilated, padded input the outputs read."""
    return tuple((o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(geom.so, geom.st, geom.k, geom.kd))


def _placed(geom: Geom, x: Array) -> Array:
    """x (n, C_in, *spatial) dilated (id - 1 zeros between elements), padded (or cropped) by the low
    padding, within the extent the outputs read: (n, C_in, *_need) float64."""
    need = _need(geom)
    x = x.reshape((x.shape[0], geom.cin) + geom.si)
    if need == geom.si and all(p == 0 for p in geom.pl) and all(d == 1 for d in geom.id):
        return x  # read as it is
    xp = zeros((x.shape[0], geom.cin) + need, dtype=dtypes.float64)
    src, dst = [slice(None)] * 2, [slice(None)] * 2
    for s, d, lo, e in zip(geom.si, geom.id, geom.pl, need):
        first = max(0, -(-(-lo) // d))          # the first element at or past position 0
        last = min(s - 1, (e - 1 - lo) // d)    # the last one before the extent ends
        if last < first:
            return xp  # every element falls in the padding or is cropped
        src.append(slice(first, last + 1))
        dst.append(slice(lo + first * d, lo + last * d + 1, d))
    xp[tuple(dst)] = x[tuple(src)]
    return xp


def _cols(geom: Geom, x: Array) -> Array:
    """The im2col matrix of x (n, C_in, *spatial): (n, groups, C_in/groups * taps, outputs), row
    c * taps + t reading channel c at weight tap t (mirrored where the convolution flips)."""
    n, kp, outs = x.shape[0], geom.kp, math.prod(geom.so)
    xp = _placed(geom, x)
    if kp == 1 and tuple(xp.shape[2:]) == geom.so:  # one tap, every input position read: x itself
        return xp.reshape((n, geom.groups, geom.cig, outs))
    cols = Array.empty((n, geom.groups, geom.cig, kp) + geom.so, dtypes.float64)
    for t, tap in enumerate(itertools.product(*(range(k) for k in geom.k))):
        slot = kp - 1 - t if geom.flip else t
        window = tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                       for i, d, o, s in zip(tap, geom.kd, geom.so, geom.st))
        cols[:, :, :, slot] = xp[(slice(None), slice(None)) + window].reshape(
            (n, geom.groups, geom.cig) + geom.so)
    return cols.reshape((n, geom.groups, geom.cig * kp, outs))


def _weight(geom: Geom, w: Array) -> Array:
    """The weight as (groups, C_out/groups, C_in/groups * taps), from either layout its strides
    say (out channel outer: a view; in channel outer, as a transposed convolution's or a
    backward-input's: a transposed copy)."""
    _, wj, wc = geom.wstrides
    if wj > wc:
        return w.reshape((geom.groups, geom.cog, geom.cig * geom.kp))
    w4 = permute_dims(w.reshape((geom.groups, geom.cig, geom.cog, geom.kp)), (0, 2, 1, 3))
    return w4.reshape((geom.groups, geom.cog, geom.cig * geom.kp))


def check(fn: str, geom: Geom, forward: bool, wgrad: bool) -> None:
    """MemoryError or LoopBudgetError now, before any GPU work, where a batch element's im2col
    matrix fits no buffer or a pass's GEMM no loop budget (`forward`: the forward, or a
    backward-input as its geometry's forward; `wgrad`: the weight gradient)."""
    outs, k = math.prod(geom.so), geom.cig * geom.kp
    check_fits(2 * geom.cin * geom.kp * outs, fn, f"the float64 im2col matrix of one batch element "
               f"({geom.cin} channels x {geom.kp} taps x {outs} outputs)")
    count = _batch_slices(geom)[0][1] if geom.n else 0
    if forward:
        check_loop_budget(geom.cog, outs, k, (count, geom.groups), f64=True)
    if wgrad:
        check_loop_budget(geom.cog, k, outs, (count, geom.groups), f64=True)


def _batch_slices(geom: Geom):
    """(first, count) of the batch slices whose im2col matrix stays within COLS_BYTES."""
    per = geom.cin * geom.kp * math.prod(geom.so) * 8
    step = max(1, COLS_BYTES // max(per, 1))
    return [(n0, min(step, geom.n - n0)) for n0 in range(0, geom.n, step)]


def record_forward(geom: Geom, x: Array, w: Array, b: Array | None) -> Array:
    """The convolution of x (n, C_in, *spatial) with w and bias b, all float64: (n, C_out, *out)."""
    wm = _weight(geom, w)
    outs = math.prod(geom.so)
    slices = _batch_slices(geom)
    y = Array.empty((geom.n, geom.cout, outs), dtypes.float64) if len(slices) != 1 else None
    for n0, count in slices:
        part = matmul(wm, _cols(geom, x[n0:n0 + count])).reshape((count, geom.cout, outs))
        if y is None:
            y = part
        else:
            y[n0:n0 + count] = part
    if b is not None:
        y = ew.add(y, b.reshape((geom.cout, 1)))
    return y.reshape(geom.out_shape())


def record_wgrad(geom: Geom, x: Array, g: Array, wshape: tuple) -> Array:
    """The weight gradient for cotangent g (n, C_out, *out): the sum over the batch and output
    positions of g times the im2col matrix, in the weight's layout `wshape`."""
    outs = math.prod(geom.so)
    dw = zeros((geom.groups, geom.cog, geom.cig * geom.kp), dtype=dtypes.float64) if not geom.n else None
    for n0, count in _batch_slices(geom):
        cols = _cols(geom, x[n0:n0 + count])  # (count, groups, cig * taps, outputs)
        gm = g[n0:n0 + count].reshape((count, geom.groups, geom.cog, outs))
        # per batch element (cog x outputs) @ (outputs x cig * taps), read transposed; then their sum
        part = reduce.sum(matmul(gm, permute_dims(cols, (0, 1, 3, 2))), axis=0)
        dw = part if dw is None else ew.add(dw, part)
    _, wj, wc = geom.wstrides
    if wj > wc:
        return dw.reshape(wshape)
    dw4 = permute_dims(dw.reshape((geom.groups, geom.cog, geom.cig, geom.kp)), (0, 2, 1, 3))
    return dw4.reshape(wshape)


def record_bgrad(geom: Geom, g: Array) -> Array:
    """The bias gradient: g (n, C_out, *out) summed over the batch and the output positions."""
    return reduce.sum(g.reshape((geom.n, geom.cout, math.prod(geom.so))), axis=(0, 2))

