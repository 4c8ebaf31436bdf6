"""The public convolutions (torch.nn.functional's signatures and layout: input (N, C_in,
*spatial), weight (C_out, C_in/groups, *kernel) for convN and (C_in, C_out/groups, *kernel) for
conv_transposeN; float32, float16 in and out with float32 accumulation, bfloat16 on float32's
kernels (widened exactly, each result rounded once), or float64 computed in float64 (f64.py))
and their argument
checks, all made before any GPU work: TypeError/ValueError naming the function, the argument
and what was expected; MemoryError for an output no buffer of the device holds, naming its size
and the arguments that made it."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ... import dtypes
from ...array import Array
from ...primitives.creation import asarray, asarray_or_none, check_fits
from ...primitives.operands import held_dtype, operand
from . import f64, geometry as G, record
from .select import select

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "conv_general", "conv_vjp", "conv_transpose_vjp", "conv_general_vjp"]

_DTYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64)


# -- argument checks ------------------------------------------------------------------------------
def _shape_of(x, name: str, fn: str) -> tuple:
    """The shape of an operand (a vk.Array or host data, uploaded by asarray once every argument
    is checked; host float64 data is held as float32, as asarray holds it); TypeError unless it is
    float32, float16, bfloat16 or float64."""
    x = operand(x, fn, name, host="keep", half=True, wide=True)
    held = held_dtype(x)
    if held not in _DTYPES:
        raise TypeError(f"{fn}: {name} has dtype {held}; convolutions take float32, float16, bfloat16 or float64 "
                        "(cast with .astype(np.float32))")
    return tuple(x.shape)


def _common_dtype(fn: str, **operands) -> np.dtype:
    """The operands' one dtype (float32, float16, bfloat16 or float64); TypeError naming them when
    they differ."""
    given = {k: held_dtype(v) for k, v in operands.items() if v is not None}
    if len(set(given.values())) > 1:
        listed = ", ".join(f"{k} {d}" for k, d in given.items())
        raise TypeError(f"{fn}: operands must share one dtype (float32, float16, bfloat16 or float64), got {listed}")
    return next(iter(given.values()))


def _computed_in(dtype) -> np.dtype:
    """The dtype a convolution runs its kernels in: bfloat16 on float32's (its operands widened
    exactly, each result rounded once), the others in their own."""
    return dtypes.float32 if dtype == dtypes.bfloat16 else dtype


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


def _check_bias(bias, cout, fn):
    if bias is None:
        return
    shape = _shape_of(bias, "bias", fn)
    if shape != (cout,):
        raise ValueError(f"{fn}: bias must have shape ({cout},) (the output channels), got {shape}")


def _nd_of(weight, fn) -> int:
    """Spatial axes of a conv_general / vjp weight (1 to 3)."""
    wshape = _shape_of(weight, "weight", fn)
    nd = len(wshape) - 2
    if not 1 <= nd <= G.MAXD:
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


def _general_geometry(fn, input, weight, stride, padding_lo, padding_hi, kernel_dilation,
                      input_dilation, groups, flip):
    """conv_general's parameters checked: (geometry, input shape, weight shape)."""
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
    geom = G.build(fn, xshape, wshape, nd, stride, lo, hi, kd, idil, groups, flip, False)
    return geom, xshape, wshape


def _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation):
    """conv_transposeN's parameters checked: the geometry of the equivalent general convolution
    (input dilation = stride, the weight read transposed and mirrored)."""
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
    return G.build(fn, xshape, wshape, nd, (1,) * nd, lo, hi, dilation, stride, groups, True, True)


# -- forward ------------------------------------------------------------------------------------
def _forward(fn, geom, input, weight, bias, xshape, unbatched: bool, params: dict) -> Array:
    """Check the bias and the output's size, plan, then record the forward pass (an unbatched
    input gets a batch of one). params: the arguments that set the output's size, for its message."""
    _check_bias(bias, geom.cout, fn)
    held = _common_dtype(fn, input=input, weight=weight, bias=bias)
    dtype = _computed_in(held)
    half = dtype == dtypes.float16
    # An output no buffer holds (padding=2**20): MemoryError naming its size and the arguments,
    # before planning meets a loop budget it would exceed.
    out_shape = geom.out_shape()
    given = ", ".join(f"{k}={v}" for k, v in params.items())
    check_fits(dtypes.words(math.prod(out_shape), dtype), fn,
               f"the output of shape {out_shape} (from input {tuple(xshape)} with {given})")
    f64_pass = dtype == dtypes.float64
    if f64_pass:
        f64.check(fn, geom, forward=True, wgrad=False)
    route = select("forward", geom, half, bias is not None) if geom.n and not f64_pass else None
    x = asarray(input, dtype)
    if unbatched:
        x = x.reshape(xshape)
    b = asarray_or_none(bias, dtype)
    y = (f64.record_forward(geom, x, asarray(weight, dtype), b) if f64_pass
         else record.record_forward(geom, x, asarray(weight, dtype), b, route))
    y = asarray(y, held)  # bfloat16's rounded once
    return y.reshape(y.shape[1:]) if unbatched else y


def conv_general(input, weight, stride=1, padding_lo=0, padding_hi=0, kernel_dilation=1,
                 input_dilation=1, groups=1, flip=False, *, bias=None) -> Array:
    """The general convolution (MLX's conv_general, in N, C, spatial layout).

    input (N, C_in, *S), weight (C_out, C_in/groups, *K), 1 to 3 spatial axes. input_dilation
    inserts input_dilation-1 zeros between neighbouring input elements; padding_lo/padding_hi
    pad (or, negative, crop) each spatial axis; flip mirrors the kernel (a true convolution).
    Output size per axis: ((S-1)*input_dilation + 1 + lo + hi - ((K-1)*kernel_dilation + 1)) // stride + 1.
    """
    fn = "conv_general"
    geom, xshape, _ = _general_geometry(fn, input, weight, stride, padding_lo, padding_hi, kernel_dilation,
                                        input_dilation, groups, flip)
    params = dict(stride=stride, padding_lo=padding_lo, padding_hi=padding_hi, kernel_dilation=kernel_dilation,
                  input_dilation=input_dilation)
    return _forward(fn, geom, input, weight, bias, xshape, False, params)


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    fn = f"conv{nd}d"
    wshape = _shape_of(weight, "weight", fn)
    if len(wshape) != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions (C_out, C_in/groups, {nd} kernel), "
                         f"got shape {wshape}")
    xshape, unbatched = _batched(input, nd, fn)
    groups = _groups(groups, fn)
    stride, lo, hi, dilation = _conv_params(fn, nd, wshape, stride, padding, dilation)
    geom = G.build(fn, xshape, wshape, nd, stride, lo, hi, dilation, (1,) * nd, groups, False, False)
    params = dict(stride=stride, padding=padding, dilation=dilation)
    return _forward(fn, geom, input, weight, bias, xshape, unbatched, params)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv1d: input (N, C_in, L), weight (C_out, C_in/groups, K)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv2d: input (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Array:
    """torch.nn.functional.conv3d: input (N, C_in, D, H, W), weight (C_out, C_in/groups, kD, kH, kW)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    fn = f"conv_transpose{nd}d"
    wshape = _shape_of(weight, "weight", fn)
    xshape, unbatched = _batched(input, nd, fn)
    geom = _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation)
    params = dict(stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    return _forward(fn, geom, input, weight, bias, xshape, unbatched, params)


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


# -- gradients ----------------------------------------------------------------------------------
def _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad):
    gshape = _shape_of(cotangent, "cotangent", fn)
    if gshape != geom.out_shape():
        raise ValueError(f"{fn}: cotangent must have the output's shape {geom.out_shape()}, got {gshape}")
    held = _common_dtype(fn, input=input, weight=weight, cotangent=cotangent)
    if held == dtypes.float64:
        return _vjp_f64(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad)
    dtype = _computed_in(held)
    half = dtype == dtypes.float16
    # Every pass routed first: a bad config or a LoopBudgetError before any GPU work.
    routed = bool(geom.n)
    dx_route = select("input", geom, half) if input_grad and routed else None
    dw_route = select("wgrad", geom, half) if weight_grad and routed else None
    db_route = select("bias", geom, half) if bias_grad and routed else None
    x, w, g = asarray(input, dtype), asarray(weight, dtype), asarray(cotangent, dtype)
    dx = record.record_input(geom, g, w, dx_route).reshape(xshape) if input_grad else None
    dw = record.record_wgrad(geom, x, g, wshape, dw_route) if weight_grad else None
    if bias_grad:
        db = asarray(record.record_bgrad(geom, g, db_route), held)
        return asarray_or_none(dx, held), asarray_or_none(dw, held), db
    return asarray_or_none(dx, held), asarray_or_none(dw, held)  # bfloat16's rounded once


def _vjp_f64(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad):
    """_vjp in float64 (f64.py): the same passes, backward-input as the forward of its geometry."""
    if input_grad:
        f64.check(fn, geom.backward_input(), forward=True, wgrad=False)
    if weight_grad:
        f64.check(fn, geom, forward=False, wgrad=True)
    x, w, g = asarray(input), asarray(weight), asarray(cotangent)
    dx = f64.record_forward(geom.backward_input(), g, w, None).reshape(xshape) if input_grad else None
    dw = f64.record_wgrad(geom, x, g, wshape) if weight_grad else None
    if bias_grad:
        return dx, dw, f64.record_bgrad(geom, g)
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
    geom = G.build(fn, xshape, wshape, nd, stride, lo, hi, dilation, (1,) * nd, groups, False, False)
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
    geom = _transpose_geom(fn, nd, xshape, wshape, stride, padding, output_padding, groups, dilation)
    return _vjp(fn, geom, xshape, wshape, input, weight, cotangent, input_grad, weight_grad, bias_grad)
