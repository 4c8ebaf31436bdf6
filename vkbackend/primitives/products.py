"""Products of the array API standard built from other primitives: tensordot and vecdot (in the
namespace and in vk.linalg), outer and cross (vk.linalg).

    vk.tensordot(a, b, axes=2)     # contract the last `axes` axes of a with the first of b
    vk.vecdot(a, b, axis=-1)       # dot products along `axis`, the other axes broadcast
    vk.linalg.outer(a, b)          # a[:, None] * b[None, :]
    vk.linalg.cross(a, b, axis=-1) # 3-vectors along `axis`, the other axes broadcast

tensordot is one matmul of the operands permuted to (free, contracted) x (contracted, free):
in the operands' dtype as vk.matmul (float32 on its kernel, the integers and float64 by its summed
path); vecdot, outer and cross are elementwise products and sums. Integer results wrap modulo
2**bits, as numpy's do. Every
argument is checked, and the result dtype known, before any GPU work; numpy arrays are accepted
and uploaded after that.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..array import Array
from .creation import asarray
from .elementwise import multiply, subtract
from .layout import stack, transpose
from .matmul import matmul
from .operands import held_dtype, integer, normalize_axes, operand
from .reduce import sum as _sum

__all__ = ["tensordot", "vecdot"]


def _result_dtype(a, b, name: str) -> np.dtype:
    """The dtype both operands (vk.Arrays or kept host data) are computed in: numeric only."""
    kinds = [held_dtype(x) for x in (a, b)]
    if dtypes.bool_ in kinds:
        raise TypeError(f"{name}: expected arrays of a numeric dtype, got {kinds[0]} and {kinds[1]}")
    return dtypes.promoted(kinds, name)


def _operands(x1, x2, name: str) -> tuple:
    """The halves too where the device computes on them (16-bit storage): in float32, each result
    rounded once (tensordot through matmul; the others through the elementwise functions)."""
    return (operand(x1, name, "x1", host="keep", half="words", wide=True),
            operand(x2, name, "x2", host="keep", half="words", wide=True))


def _broadcast(name: str, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{name}: shapes {' and '.join(map(str, shapes))} do not broadcast") from None


def _permuted(x: Array, perm: list) -> Array:
    return x if perm == sorted(perm) else transpose(x, perm)


def _vector_axis(name: str, axis, a, b) -> int:
    """The vector axis of vecdot and cross, negative: the standard counts it from the end, in
    [-N, -1] for N the smaller rank; a non-negative one is taken for operands of one rank."""
    n = min(a.ndim, b.ndim)
    if n == 0:
        raise ValueError(f"{name}: expected arrays of at least one dimension, got shapes {a.shape} and {b.shape}")
    ax = integer(axis, name, "axis")
    if ax >= 0:
        if a.ndim != b.ndim:
            raise ValueError(f"{name}: a non-negative axis ({ax}) needs operands of one rank, got shapes "
                             f"{a.shape} and {b.shape}: count it from the end (-1, -2, ...)")
        ax -= a.ndim
    if not -n <= ax <= -1:
        raise np.exceptions.AxisError(ax, n, msg_prefix=name)
    return ax


def tensordot(x1, x2, /, *, axes=2) -> Array:
    """numpy.tensordot: `axes` an int N (the last N axes of x1 against the first N of x2, in
    order) or a pair of axis sequences; the result has x1's free axes, then x2's."""
    name = "tensordot"
    a, b = _operands(x1, x2, name)
    dt = _result_dtype(a, b, name)
    if isinstance(axes, (numbers.Integral, np.integer)) and not isinstance(axes, (bool, np.bool_)):
        n = integer(axes, name, "axes")
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"{name}: axes={n} must lie in [0, {min(a.ndim, b.ndim)}] for shapes "
                             f"{a.shape} and {b.shape}")
        ax1, ax2 = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            s1, s2 = axes
        except (TypeError, ValueError):
            raise TypeError(f"{name}: axes must be an int or a pair of axis sequences, got {axes!r}") from None
        ax1 = normalize_axes(s1, a.ndim, name, "axes[0]")
        ax2 = normalize_axes(s2, b.ndim, name, "axes[1]")
        if len(ax1) != len(ax2):
            raise ValueError(f"{name}: axes {tuple(ax1)} of x1 and {tuple(ax2)} of x2 differ in number")
    for i, j in zip(ax1, ax2):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"{name}: shape-mismatch for sum: axis {i} of x1 {a.shape} has {a.shape[i]} "
                             f"elements, axis {j} of x2 {b.shape} has {b.shape[j]}")
    free1 = [d for d in range(a.ndim) if d not in ax1]
    free2 = [d for d in range(b.ndim) if d not in ax2]
    m = math.prod(a.shape[d] for d in free1)
    k = math.prod(a.shape[d] for d in ax1)
    n = math.prod(b.shape[d] for d in free2)
    out_shape = tuple(a.shape[d] for d in free1) + tuple(b.shape[d] for d in free2)
    A = _permuted(asarray(a, dt), free1 + ax1).reshape((m, k))
    B = _permuted(asarray(b, dt), ax2 + free2).reshape((k, n))
    return matmul(A, B).reshape(out_shape)  # integers: exact, by bounded chunks (matmul's docstring)


def vecdot(x1, x2, /, *, axis=-1) -> Array:
    """The dot products of the vectors along `axis` (counted from the end, in [-N, -1] for N the
    smaller rank; a non-negative axis for operands of one rank), the other axes broadcast. The
    vector axis itself must have one length in both (it is not broadcast)."""
    name = "vecdot"
    a, b = _operands(x1, x2, name)
    dt = _result_dtype(a, b, name)
    ax = _vector_axis(name, axis, a, b)
    if a.shape[ax] != b.shape[ax]:
        raise ValueError(f"{name}: the vectors along axis {ax} differ in length: {a.shape[ax]} in x1 "
                         f"{a.shape}, {b.shape[ax]} in x2 {b.shape}")
    shape = _broadcast(name, a.shape, b.shape)
    t = dtypes.float32 if dtypes.is_half(dt) else dt  # a half: exact products summed in float32
    out = _sum(multiply(asarray(a, t), asarray(b, t)), axis=len(shape) + ax, dtype=t)
    return out if t == dt else out.astype(dt)  # rounded once


def outer(x1, x2, /) -> Array:
    """The outer product of two 1-D arrays: out[i, j] = x1[i] * x2[j]."""
    name = "outer"
    a, b = _operands(x1, x2, name)
    dt = _result_dtype(a, b, name)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"{name}: expected two 1-D arrays, got shapes {a.shape} and {b.shape}")
    return multiply(asarray(a, dt).reshape((-1, 1)), asarray(b, dt).reshape((1, -1)))


def cross(x1, x2, /, *, axis=-1) -> Array:
    """Cross products of 3-vectors along `axis` (as vecdot's), the other axes broadcast; each component a1*b2 - a2*b1 as written (no fused
    multiply-add). numpy's 2-vector form is not the standard's: ValueError."""
    name = "cross"
    a, b = _operands(x1, x2, name)
    dt = _result_dtype(a, b, name)
    ax = _vector_axis(name, axis, a, b)
    if a.shape[ax] != 3 or b.shape[ax] != 3:
        raise ValueError(f"{name}: expected 3-vectors along axis {ax}, got shapes {a.shape} and {b.shape}")
    _broadcast(name, a.shape, b.shape)
    A, B = asarray(a, dt), asarray(b, dt)

    def comp(x, i):  # component i: the vector axis indexed away
        return x[(slice(None),) * (x.ndim + ax) + (i,)]

    a0, a1, a2 = (comp(A, i) for i in range(3))
    b0, b1, b2 = (comp(B, i) for i in range(3))
    parts = [subtract(multiply(a1, b2), multiply(a2, b1)),
             subtract(multiply(a2, b0), multiply(a0, b2)),
             subtract(multiply(a0, b1), multiply(a1, b0))]
    return stack(parts, axis=ax)
