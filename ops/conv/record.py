"""Recording the passes select.py routed: the kernels' dispatches, split-K partial sums added
by conv_reduce.comp, the channels-last packing of the float16 kernels, and float16 on widened
copies where the route says so. Nothing here decides which kernels run."""
from __future__ import annotations

import math
from dataclasses import replace

from ... import dtypes, runtime
from ...array import Array
from ...primitives.creation import asarray_or_none, zeros
from ...primitives.launch import groups_for, workgroup_size
from ...primitives.matmul import record_gemm
from . import col2im, loops, winograd
from .kernels import DIRECT, PACK, PACKED, REDUCE, WGRAD16_GATHER
from .select import Route, select


def _to32(a: Array | None) -> Array | None:
    return asarray_or_none(a, dtypes.float32)


def _record_sum(part: Array, splits: int, n: int, out: Array) -> None:
    """out (float32, n elements) = the sum of the `splits` partial sums part[s * n + i]
    (conv_reduce.comp MODE_SPLITS), in rounds where one pass would loop past the loop budget."""
    rt = runtime.get()
    wg = workgroup_size()
    red = rt.kernel(REDUCE, {"MODE_SPLITS": 1}, wg)
    grid = (groups_for(n, wg),)
    fanin = loops.sum_fanin(loops.loop_budget(), n, wg) or splits
    src, off = part, part.offset
    while splits > fanin:
        rounds = -(-splits // fanin)
        tmp = Array.empty((rounds * n,), dtypes.float32)
        for r in range(rounds):
            red([src.buffer, tmp.buffer], [n, min(fanin, splits - r * fanin), off + r * fanin * n, tmp.offset + r * n],
                grid)
        src, off, splits = tmp, tmp.offset, rounds
    red([src.buffer, out.buffer], [n, splits, off, out.offset], grid)


def _record_pointwise(geom, x: Array, w: Array) -> Array:
    """y[n] = W @ x[n] (C_out x C_in times C_in x positions) for every batch element, W read in
    place (transposed when its input channels are the unit stride of a backward-input)."""
    y = Array.empty(geom.out_shape(), dtypes.float32)
    positions = math.prod(geom.so)
    _, wj, wc = geom.wstrides
    record_gemm(w, x, y, m=geom.cout, n=positions, k=geom.cin, lda=wj if wc == 1 else wc, ldb=positions,
                ldc=positions, trans_a=wc != 1, batch_shape=(geom.n,), batch_strides_a=(0,),
                batch_strides_b=(geom.cin * positions,), batch_strides_c=(geom.cout * positions,))
    return y


def pack_input(geom, x: Array) -> Array:
    """x (float16, N x C_in x spatial) channels-last, channels padded to multiples of 8, for
    conv_coopmat_packed.comp (conv_pack.comp)."""
    rt = runtime.get()
    cigp = -(-geom.cig // 8) * 8
    si = math.prod(geom.si)
    xp = Array.empty((geom.n * si * geom.groups * cigp,), dtypes.float16)
    k = rt.kernel(PACK, {"PACK_X": 1}, 256, geom.spec())
    k([x.buffer, xp.buffer], [x.offset, xp.offset], (-(-si // 64), geom.groups * -(-cigp // 64), geom.n))
    return xp


def pack_weight(geom, w: Array) -> Array:
    """The weight (read through geom's strides) as [group][tap][C_in/groups][C_out/groups], both
    channel counts padded to multiples of 8, for conv_coopmat_packed.comp (conv_pack.comp): a
    forward weight by a tiled transpose, a transposed one gathered 8 halves per vector."""
    rt = runtime.get()
    cigp, cogp = -(-geom.cig // 8) * 8, -(-geom.cog // 8) * 8
    wp = Array.empty((geom.groups * geom.kp * cigp * cogp,), dtypes.float16)
    _, wj, wc = geom.wstrides
    if wc == geom.kp and wj == geom.cig * geom.kp:
        k = rt.kernel(PACK, {"PACK_W": 1, "W_TILED": 1}, 256, geom.spec())
        grid = (-(-cigp * geom.kp // 64), -(-cogp // 64), geom.groups)
    else:
        k = rt.kernel(PACK, {"PACK_W": 1}, 256, geom.spec())
        grid = (max(1, min(groups_for(wp.size // 8, 256), 4096)),)
    k([w.buffer, wp.buffer], [w.offset, wp.offset], grid)
    return wp


def record_input(geom, g: Array, w: Array, route: Route | None = None) -> Array:
    """dx of the convolution geom for the cotangent g, by `route` (select's 'input', by default)."""
    if math.prod(geom.in_shape()) == 0:
        return Array.empty(geom.in_shape(), g.dtype)
    route = route or select("input", geom, g.dtype == dtypes.float16)
    if route.family == "cast" and route.inner.family == "col2im":
        return record_input(geom, _to32(g), _to32(w), route.inner).astype(dtypes.float16)
    if route.family == "col2im":
        return col2im.record(geom, route.plan, g, w)
    return record_forward(geom.backward_input(), g, w, None, route)


def record_forward(geom, x: Array, w: Array, b: Array | None, route: Route | None = None) -> Array:
    """y = the convolution geom of x with w (+ b), in x's dtype, by `route` (select's, by default)."""
    if math.prod(geom.out_shape()) == 0:
        return Array.empty(geom.out_shape(), x.dtype)
    rt = runtime.get()
    half = x.dtype == dtypes.float16
    route = route or select("forward", geom, half, b is not None)
    if route.family == "cast":
        return record_forward(geom, _to32(x), _to32(w), _to32(b), route.inner).astype(dtypes.float16)
    if route.family == "winograd":
        return winograd.record_forward(geom, route.plan, x, w, b)
    if route.family == "matmul":
        return _record_pointwise(geom, x, w)
    p = route.plan
    half_in = half and route.family == "kernel"   # conv_gemm.comp reading the halves (HALF_IN)
    y = Array.empty(geom.out_shape(), dtypes.float32 if half_in else x.dtype)
    k = rt.kernel(p.shader, dict(p.defines, HALF_IN=1) if half_in else dict(p.defines), p.workgroup, p.spec)
    if p.shader == PACKED:
        x, w = pack_input(geom, x), pack_weight(geom, w)
    bb = b if b is not None else w
    # split-K: the splits' partial sums (float32), then their sum into y
    out = y if p.splits == 1 else Array.empty((p.splits * y.size,), dtypes.float32)
    push = [x.offset, w.offset, bb.offset, out.offset]
    if p.shader == DIRECT:
        push.append(y.size)
    k([x.buffer, w.buffer, bb.buffer, out.buffer], push, p.grid)
    if p.splits > 1:
        _record_sum(out, p.splits, y.size, y)
    return y.astype(dtypes.float16) if half_in else y


def _record_wgrad_coopmat(geom, p, x: Array, g: Array, wshape: tuple) -> Array:
    """conv_coopmat_wgrad.comp on channels-last copies of x and of the cotangent (packed as the
    input of a convolution with the cotangent's channels and positions), or
    conv_coopmat_wgrad_gather.comp on them as they are; then the kernel's FINISH dispatch: the
    splits summed into the weight's layout, in float16."""
    rt = runtime.get()
    n = geom.weight_size()
    if p.shader == WGRAD16_GATHER:  # partial sums laid out by PF
        part = Array.empty((p.splits * geom.groups * p.grid[1] * 64 * 16 * dict(p.defines)["PF"],), dtypes.float32)
    else:
        x, g = pack_input(geom, x), pack_input(replace(geom, cin=geom.cout, si=geom.so), g)
        part = Array.empty((p.splits * n,), dtypes.float32)
    rt.kernel(p.shader, dict(p.defines), p.workgroup, p.spec)(
        [x.buffer, g.buffer, part.buffer], [x.offset, g.offset, part.offset], p.grid)
    dw = Array.empty(wshape, dtypes.float16)
    finish = rt.kernel(p.shader, {"FINISH": 1, **{k: v for k, v in p.defines if k == "PF"}}, 256, p.spec)
    finish([part.buffer, dw.buffer], [part.offset, dw.offset], (max(1, min(groups_for(n, 256), 4096)),))
    return dw


def record_wgrad(geom, x: Array, g: Array, wshape: tuple, route: Route | None = None) -> Array:
    """The weight gradient (shape wshape, x's dtype) of geom for input x and cotangent g."""
    rt = runtime.get()
    half = x.dtype == dtypes.float16
    if geom.n == 0:
        dw = zeros(wshape, dtypes.float32)
        return dw.astype(dtypes.float16) if half else dw
    route = route or select("wgrad", geom, half)
    p = route.plan
    if route.family == "cast":
        return record_wgrad(geom, _to32(x), _to32(g), wshape, route.inner).astype(dtypes.float16)
    if route.family == "winograd":
        return winograd.record_wgrad(geom, p, x, g, wshape)
    if route.family == "coopmat":
        return _record_wgrad_coopmat(geom, p, x, g, wshape)
    # conv_wgrad.comp, reading float16 operands in place
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


def record_bgrad(geom, g: Array, route: Route | None = None) -> Array:
    """The bias gradient (C_out, g's dtype): g summed over batch and positions."""
    rt = runtime.get()
    half = g.dtype == dtypes.float16
    if geom.n == 0:
        db = zeros((geom.cout,), dtypes.float32)
        return db.astype(dtypes.float16) if half else db
    route = route or select("bias", geom, half)
    if route.family == "cast":
        return record_bgrad(geom, _to32(g), route.inner).astype(dtypes.float16)
    db = Array.empty((geom.cout,), dtypes.float32)
    plane = math.prod(geom.so)
    nb, npos = route.plan
    ochunks = -(-plane // npos)
    chunks = -(-geom.n // nb) * ochunks
    out = db if chunks == 1 else Array.empty((chunks * geom.cout,), dtypes.float32)
    wg = workgroup_size()
    red = rt.kernel(REDUCE, {"MODE_BIAS": 1, "HALF_IN": 1} if half else {"MODE_BIAS": 1}, wg)
    grid = (max(1, min(geom.cout, rt.device.max_workgroup_count[0])), chunks)
    red([g.buffer, out.buffer], [geom.n, geom.cout, plane, g.offset, out.offset, nb, npos, ochunks], grid)
    if chunks > 1:
        _record_sum(out, chunks, geom.cout, db)
    return db.astype(dtypes.float16) if half else db
