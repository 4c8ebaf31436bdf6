"""Elementwise operations with numpy's broadcasting and type rules, on shaders/primitives/elementwise.comp."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from .creation import asarray
from .launch import groups_for

_WG = 256
_MAX_PUSH_WORDS = 32  # 128 bytes: the push-constant size every Vulkan device guarantees


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, complex)


def _operand(x, name: str):
    if isinstance(x, Array) or _is_scalar(x):
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        return asarray(x)
    raise TypeError(f"{name}: unsupported operand type {type(x).__name__}: expected vk.Array, "
                    "a numpy array or a Python number")


def _np_type(x):
    # Python scalars stay "weak" (NEP 50), as numpy treats them.
    if isinstance(x, Array):
        return x.dtype
    return x.dtype if isinstance(x, np.generic) else x


def _promote(operands, name: str) -> np.dtype:
    """numpy's result type; with no array among the operands, Python ints give int32 and floats
    float32 (as asarray does), since numpy's default int64/float64 have no 32-bit home."""
    promoted = np.result_type(*[_np_type(x) for x in operands])
    if not any(isinstance(x, (Array, np.generic)) for x in operands):
        return dtypes.from_host(promoted)
    return dtypes.narrow(promoted, name)


def _scalar_bits(value, dtype: np.dtype, name: str) -> int:
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)):
            raise TypeError(f"{name}: float scalar {value} with an integer computation")
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise OverflowError(f"{name}: Python integer {value} out of bounds for {dtype}")
    return int(np.asarray(value, dtype).view(np.uint32))


def broadcast_shape(shapes, name: str) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{name}: shapes {' '.join(map(str, shapes))} do not broadcast") from None


def _strides(shape: tuple, out_shape: tuple) -> list:
    """Element strides of a C-contiguous `shape` broadcast to `out_shape` (0 on broadcast axes)."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, acc = [], 1
    for extent in reversed(padded):
        strides.append(acc if extent != 1 else 0)
        acc *= extent
    return strides[::-1]


def _collapse(out_shape: tuple, strides: list) -> tuple:
    """Drop unit axes and merge neighbours that every operand walks contiguously."""
    dims = [(e, [s[d] for s in strides]) for d, e in enumerate(out_shape) if e != 1]
    merged = []
    for extent, st in dims:
        if merged:
            pe, ps = merged[-1]
            if all(p == s * extent for p, s in zip(ps, st)):
                merged[-1] = (pe * extent, st)
                continue
        merged.append((extent, st))
    shape = [e for e, _ in merged]
    per_operand = [[st[k] for _, st in merged] for k in range(len(strides))]
    return shape, per_operand


def apply(op: str, operands: list, out_dtype, compute_dtype, name: str | None = None) -> Array:
    """Record out = op(*operands) elementwise; operands are Arrays or scalars, in compute_dtype."""
    name = name or op
    arrays = [x for x in operands if isinstance(x, Array)]
    out_shape = broadcast_shape([x.shape for x in arrays] or [()], name)
    scalars = {k: _scalar_bits(x, compute_dtype, name) for k, x in enumerate(operands)
               if not isinstance(x, Array)}  # checked before any GPU work
    out = Array.empty(out_shape, out_dtype)
    n = out.size
    if n == 0:
        return out
    nargs = len(operands)
    defines = {f"OP_{op}": 1, "NARGS": nargs, "T_OUT": dtypes.GLSL[out.dtype], "T": dtypes.GLSL[compute_dtype]}
    buffers = [out.buffer]
    words = [n, out.offset]
    strides = []
    for k, x in enumerate(operands):
        letter = "ABC"[k]
        if isinstance(x, Array):
            defines[f"T_{letter}"] = dtypes.GLSL[x.dtype]
            buffers.append(x.buffer)
            words.append(x.offset)
            strides.append(_strides(x.shape, out_shape))
        else:
            defines[f"T_{letter}"] = "uint"
            defines[f"{letter}_SCALAR"] = 1
            buffers.append(out.buffer)  # a dummy binding
            words.append(scalars[k])
            strides.append([0] * len(out_shape))
    words += [0] * (3 - nargs)
    shape, per_operand = _collapse(out_shape, strides)
    contiguous = len(shape) <= 1 and all(
        (not isinstance(x, Array)) or s == [1] * len(shape) for x, s in zip(operands, per_operand))
    rank = 0 if contiguous else len(shape)
    if 5 + rank * (1 + nargs) > _MAX_PUSH_WORDS:
        raise ValueError(f"{name}: broadcasting over {rank} non-mergeable axes exceeds the supported rank")
    if rank:
        defines["RANK"] = rank
        words += shape
        for x, s in zip(operands, per_operand):
            words += s
    rt = runtime.get()
    rt.kernel("primitives/elementwise.comp", defines, _WG)(buffers, words, (groups_for(n, _WG),))
    return out


def _binary(op: str, kind: str):
    """kind: 'arith' (result type), 'divide' (float result), 'compare' (bool result)."""
    def f(x1, x2):
        a, b = _operand(x1, op), _operand(x2, op)
        if not (isinstance(a, Array) or isinstance(b, Array)):
            a = asarray(a)
        # true division of any two numbers is a float (numpy: float64; here float32)
        compute = dtypes.float32 if kind == "divide" else _promote([a, b], op)
        if compute == dtypes.bool_ and kind != "compare":
            raise TypeError(f"{op}: arithmetic on bool arrays is not supported; cast with .astype() first")
        if compute == dtypes.bool_:
            compute = dtypes.uint32
        out = dtypes.bool_ if kind == "compare" else compute
        return apply(op, [a, b], out, compute)
    f.__name__ = op
    f.__doc__ = f"numpy.{op}(x1, x2) with broadcasting."
    return f


add = _binary("add", "arith")
subtract = _binary("subtract", "arith")
multiply = _binary("multiply", "arith")
divide = _binary("divide", "divide")
true_divide = divide
maximum = _binary("maximum", "arith")
minimum = _binary("minimum", "arith")
equal = _binary("equal", "compare")
not_equal = _binary("not_equal", "compare")
less = _binary("less", "compare")
less_equal = _binary("less_equal", "compare")
greater = _binary("greater", "compare")
greater_equal = _binary("greater_equal", "compare")


def _as_array(x, name: str) -> Array:
    x = _operand(x, name)
    return x if isinstance(x, Array) else asarray(x)


def _float_unary(op: str):
    def f(x):
        a = _as_array(x, op)
        return apply(op, [a], dtypes.float32, dtypes.float32)
    f.__name__ = op
    f.__doc__ = f"numpy.{op}(x); float32 result (integers are converted, as numpy does)."
    return f


exp = _float_unary("exp")
log = _float_unary("log")
sqrt = _float_unary("sqrt")


def negative(x) -> Array:
    a = _as_array(x, "negative")
    if a.dtype == dtypes.bool_:
        raise TypeError("negative: not supported for bool arrays (numpy refuses it too)")
    return apply("negative", [a], a.dtype, a.dtype)


def absolute(x) -> Array:
    a = _as_array(x, "absolute")
    if a.dtype == dtypes.bool_:
        return a.copy()
    return apply("absolute", [a], a.dtype, a.dtype)


abs = absolute


def astype(a: Array, dtype) -> Array:
    dtype = dtypes.check(dtype)
    if dtype == dtypes.bool_ and a.dtype != dtypes.bool_:
        return apply("not_equal", [a, 0], dtypes.bool_, a.dtype)
    return apply("copy", [a], dtype, dtypes.STORAGE[a.dtype])


def where(condition, x, y) -> Array:
    """numpy.where(condition, x, y); the one-argument form is vk.nonzero's job."""
    cond = _as_array(condition, "where")
    if cond.dtype != dtypes.bool_:
        cond = astype(cond, dtypes.bool_)
    a, b = _operand(x, "where"), _operand(y, "where")
    compute = _promote([a, b], "where")
    if compute == dtypes.bool_:
        compute = dtypes.uint32
        out = dtypes.bool_
    else:
        out = compute
    return apply("where", [cond, a, b], out, compute)
