"""Elementwise operations with numpy's broadcasting and type rules, on shaders/primitives/elementwise.comp."""
from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from ..runtime import fusion
from .creation import asarray, check_fits, full
from .launch import WG, grid_groups
from .operands import MAX_PUSH_WORDS, collapse_dims, operand
from .recipes import recipe
from . import windows


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, complex)


def _check_shapes(args, name: str) -> None:
    """Shapes that do not broadcast fail before any host operand is uploaded."""
    shapes = []
    for x in args:
        if isinstance(x, (Array, np.ndarray)):
            shapes.append(x.shape)
        elif isinstance(x, (list, tuple)):
            try:
                shapes.append(np.shape(x))
            except ValueError:
                return  # ragged: asarray says so
    if len(shapes) > 1:
        broadcast_shape(shapes, name)


def _operand(x, name: str):
    """Not operands.operand: a Python number stays a (weak, NEP 50) scalar here, not an array."""
    if isinstance(x, Array) or _is_scalar(x):
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        return asarray(x)
    raise TypeError(f"{name}: unsupported operand type {type(x).__name__}: expected vk.Array, "
                    "a numpy array or a Python number")


def _type_key(x):
    """An operand's type for promotion: its dtype, or for a Python scalar its (weak, NEP 50) type."""
    if isinstance(x, Array):
        return x.dtype
    if isinstance(x, np.generic):
        return x.dtype
    return bool if isinstance(x, bool) else int if isinstance(x, int) else float


_WEAK = {bool: True, int: 1, float: 1.0}


@functools.lru_cache(maxsize=1024)
def _promote_keys(keys: tuple, name: str) -> np.dtype:
    promoted = dtypes.result_type(*[_WEAK.get(k, k) for k in keys])
    if int in keys and float not in keys and all(k == dtypes.bool_ for k in keys if k not in _WEAK):
        # bool arrays with Python ints: numpy's int64 is the Python int's default type, and a
        # Python int is int32 here (as alone)
        return dtypes.int32
    if all(k in _WEAK for k in keys):
        # no array among the operands: Python ints give int32 and floats float32 (as asarray
        # does), since numpy's default int64/float64 have no 32-bit home
        return dtypes.from_host(promoted)
    if dtypes.is_half(promoted):  # a half with itself, bool, int8, uint8 or a Python number
        return promoted
    return dtypes.narrow(promoted, name, wide=True, exact=any(map(dtypes.is_wide, keys)))


def _promote(operands, name: str) -> np.dtype:
    """numpy's result type (of 32-bit operands narrowed to 32 bits), cached by operand types."""
    return _half_checked(_promote_keys(tuple(_type_key(x) for x in operands), name), name)


def _half_checked(d: np.dtype, name: str) -> np.dtype:
    """d, where a half's arithmetic is checked against the device (not cached with the types)."""
    return dtypes.half_words(name, d) if dtypes.is_half(d) else d


def _scalar_bits(value, dtype: np.dtype, name: str) -> int:
    """The scalar's bit pattern in the type `dtype` computes in, 32 or 64 bits (checked: no float
    into an integer computation, no integer out of its range); cached, since loops pass the same
    constants again and again."""
    return _scalar_bits_cached(value, type(value), dtype, name)


@functools.lru_cache(maxsize=4096)
def _scalar_bits_cached(value, _type, dtype: np.dtype, name: str) -> int:
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)):
            raise TypeError(f"{name}: float scalar {value} with an integer computation")
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise OverflowError(f"{name}: Python integer {value} out of bounds for {dtype}")
    if dtypes.is_half(dtype):  # the scalar as numpy takes it (rounded to the half), computed in float32
        with np.errstate(over="ignore"):
            return int(np.asarray(value, dtype).astype(np.float32).view(np.uint32))
    v = np.asarray(value, dtype)
    if dtype.itemsize == 8:
        return int(v.view(np.uint64))
    if dtype.itemsize < 4:  # 8/16-bit integers compute as 32-bit ones
        v = v.astype(np.int32 if dtype.kind == "i" else np.uint32)
    return int(v.view(np.uint32))


def broadcast_shape(shapes, name: str) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{name}: shapes {' '.join(map(str, shapes))} do not broadcast") from None


def broadcast_strides(shape: tuple, out_shape: tuple) -> list:
    """Element strides of a C-contiguous `shape` broadcast to `out_shape` (0 on broadcast axes)."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, acc = [], 1
    for extent in reversed(padded):
        strides.append(acc if extent != 1 else 0)
        acc *= extent
    return strides[::-1]


def _glsl(d: np.dtype, half: str) -> str:
    """d's GLSL type in the kernel, `half` for a half (its bits in a buffer, or the float it is
    computed and returned as)."""
    return half if dtypes.is_half(d) else dtypes.glsl(d)


@functools.lru_cache(maxsize=4096)
def _plan(op: str, out_dtype, compute_dtype, operands: tuple, aligned: bool, name: str):
    """What depends only on types and shapes, cached: the kernel, the output shape and the
    push-constant tail. `operands` holds (shape, dtype) per array and None per scalar;
    `aligned`: every array offset is a multiple of 4 (so 16-byte loads may be used)."""
    arrays = [x for x in operands if x is not None]
    out_shape = broadcast_shape([shape for shape, _ in arrays] or [()], name)
    nargs = len(operands)
    types = [out_dtype, compute_dtype] + [x[1] for x in arrays]
    defines = {f"OP_{op}": 1, "NARGS": nargs, "T_OUT": _glsl(out_dtype, "float"),
               "T": "float" if dtypes.is_half(compute_dtype) else dtypes.glsl_compute(compute_dtype),
               **dtypes.type_defines(types)}
    if dtypes.is_half(out_dtype):
        defines["OUT_HALF"] = 1
        if out_dtype == dtypes.bfloat16:
            defines["OUT_BF16"] = 1
    wide_scalars = compute_dtype.itemsize == 8 and None in operands
    if wide_scalars:
        defines["WIDE_SCALARS"] = 1
    strides = []
    for k, x in enumerate(operands):
        letter = "ABC"[k]
        if x is not None:
            defines[f"T_{letter}"] = _glsl(x[1], "uint16_t")
            if dtypes.is_half(x[1]):
                defines[f"{letter}_HALF"] = 1
                if x[1] == dtypes.bfloat16:
                    defines[f"{letter}_BF16"] = 1
            if compute_dtype == dtypes.int64 and x[1].kind == "i" and x[1].itemsize < 8:
                defines[f"{letter}_SEXT64"] = 1  # elementwise.comp: around a lavapipe miscompile
            strides.append(broadcast_strides(x[0], out_shape))
        else:
            defines[f"T_{letter}"] = "uint"
            defines[f"{letter}_SCALAR"] = 1
            strides.append([0] * len(out_shape))
    shape, per_operand = collapse_dims(out_shape, strides)
    contiguous = len(shape) <= 1 and all(x is None or s == [1] * len(shape) for x, s in zip(operands, per_operand))
    rank = 0 if contiguous else len(shape)
    if 5 + rank * (1 + nargs) + 3 * wide_scalars > MAX_PUSH_WORDS:
        raise ValueError(f"{name}: broadcasting over {rank} non-mergeable axes exceeds the supported rank")
    tail = [0] * (3 - nargs)
    n = math.prod(out_shape)
    # 4-vector loads for elements of up to 4 bytes (dvec4 loads ran at 2.7 of 4.1 TB/s on the H200)
    vec4 = rank == 0 and aligned and n % 4 == 0 and all(d.itemsize <= 4 for d in types)
    if vec4:
        defines["VEC4"] = 1
    if rank:
        defines["RANK"] = rank
        tail += shape
        for s in per_operand:
            tail += s
    kernel = runtime.get().kernel("primitives/elementwise.comp", defines, WG) if n else None
    # float32 over operands of the output's length or of one element, large enough for the GPU's
    # time to matter more than the host's, may join a chain (runtime/fusion.py)
    fuse = None
    if n >= fusion.MIN_ELEMENTS and all(d == dtypes.float32 for d in types):
        kind = {1: "u", n: "a"}  # an operand of the output's length is whole, even of one element
        kinds = tuple("s" if x is None else kind.get(math.prod(x[0])) for x in operands)
        if None not in kinds:
            fuse = fusion.descriptor(op, kinds, aligned and n % 4 == 0, WG)
    return kernel, out_shape, tail, (grid_groups(n // 4 if vec4 else n, WG),), fuse


def apply(op: str, operands: list, out_dtype, compute_dtype, name: str | None = None) -> Array:
    """Record out = op(*operands) elementwise; operands are Arrays or scalars, in compute_dtype."""
    name = name or op
    sig = tuple((x.shape, x.dtype) if isinstance(x, Array) else None for x in operands)
    aligned = all(x.offset % 4 == 0 for x in operands if isinstance(x, Array))
    kernel, out_shape, tail, groups, fuse = _plan(op, out_dtype, compute_dtype, sig, aligned, name)
    # scalars are checked against the computation's dtype before any GPU work
    try:
        heads = [x.offset if isinstance(x, Array) else _scalar_bits(x, compute_dtype, name) for x in operands]
    except OverflowError as e:
        if all(x.dtype == dtypes.bool_ for x in operands if isinstance(x, Array)):
            # numpy gives int64 (the Python int's type): no 32-bit home, so refused as int64 is
            raise TypeError(f"{e}: numpy would compute this bool array with the Python integer in "
                            "int64, which vkbackend does not support; use an int32 array") from None
        raise
    n = math.prod(out_shape)
    big = n and (windows.is_big(dtypes.words(n, out_dtype) * 4) or
                 any(isinstance(x, Array) and x.buffer.big for x in operands))
    if big:
        check_fits(dtypes.words(n, out_dtype), name, f"the result of {n} elements")
        _check_windows(operands, n, out_dtype, name)
    out = Array.empty(out_shape, out_dtype)
    if kernel is None:
        return out
    if big:
        _apply_windows(op, operands, out, compute_dtype, heads, name)
        return out
    buffers = [out.buffer] + [x.buffer if isinstance(x, Array) else out.buffer for x in operands]
    push = [out.size, out.offset, *heads, *tail]
    if compute_dtype.itemsize == 8 and None in sig:  # WIDE_SCALARS: low words in place, high words last
        push[2:2 + len(heads)] = [h & 0xFFFFFFFF for h in heads]
        push += [h >> 32 for h in heads] + [0] * (3 - len(heads))
    kernel(buffers, push, groups, fuse=fuse)
    return out


def copy_into(src: Array, dst: Array) -> None:
    """Record dst[...] = src for arrays of one size and dtype, through windows of either where it
    lives in a buffer larger than a shader may bind (a scan's chunk written back: scan.py)."""
    _apply_windows("copy", [src], dst, dtypes.storage(src.dtype), [src.offset], "copy")


def _check_windows(operands, n: int, out_dtype, name: str) -> None:
    """Past maxStorageBufferRange, operands of the output's size, one-element arrays and scalars
    go through windows (4-byte types): ValueError for the rest, before any GPU work."""
    for x in [out_dtype] + [x.dtype for x in operands if isinstance(x, Array)]:
        if x.itemsize != 4 and x != dtypes.bool_:
            raise ValueError(f"{name}: arrays larger than maxStorageBufferRange work in windows of 32-bit "
                             f"elements, not of {x}")
    for x in operands:
        if isinstance(x, Array) and x.size not in (n, 1):
            raise ValueError(f"{name}: broadcasting {x.shape} against an array larger than maxStorageBufferRange "
                             "is not supported: expected operands of the result's shape, one-element arrays or "
                             "scalars")


def _apply_windows(op: str, operands: list, out: Array, compute_dtype, heads: list, name: str) -> None:
    """out = op(*operands) in chunks of windows.chunk_words() elements, each dispatch binding
    the windows of the chunk (operands of out's size, out) or of the one element."""
    n, step = out.size, windows.chunk_words()
    for start in range(0, n, step):
        count = min(step, n - start)
        sig, push, bufs, wins = [], [], [], []
        out_win, out_at = windows.bind(out.buffer, out.offset + start, count)
        for x, head in zip(operands, heads):
            if not isinstance(x, Array):  # a scalar: its binding is a dummy, out's
                sig.append(None)
                push.append(head)
                bufs.append(out.buffer)
                wins.append(out_win)
                continue
            first, length = (x.offset + start, count) if x.size == n else (x.offset, 1)
            sig.append(((length,), x.dtype))
            win, at = windows.bind(x.buffer, first, length)
            push.append(at)
            bufs.append(x.buffer)
            wins.append(win)
        kernel, _, tail, groups, _ = _plan(op, out.dtype, compute_dtype, tuple(sig), False, name)
        kernel([out.buffer] + bufs, [count, out_at, *push, *tail], groups, windows=[out_win] + wins)


# array OP c for a Python int c above (below) every value of the array's type
_ABOVE = {"less": True, "less_equal": True, "not_equal": True, "greater": False, "greater_equal": False,
          "equal": False}
_BELOW = {"less": False, "less_equal": False, "not_equal": True, "greater": True, "greater_equal": True,
          "equal": False}


def _past_the_range(op: str, a, b, compute):
    """An integer array compared with a Python int outside its type's range: numpy compares the
    values exactly, so every element gives the same answer (None when the int is in range)."""
    for scalar, array, flip in ((b, a, False), (a, b, True)):
        if type(scalar) is int and isinstance(array, Array):
            info = np.iinfo(compute)
            if info.min <= scalar <= info.max:
                return None
            above = (scalar > info.max) != flip  # c OP array asks the mirrored question
            return full(array.shape, (_ABOVE if above else _BELOW)[op], dtypes.bool_)
    return None


def _binary(op: str, kind: str):
    """kind: 'arith' (result type), 'divide' (float result), 'compare' (bool result)."""
    def f(x1, x2):
        if op in ("equal", "not_equal") and (x1 is None or x2 is None):
            # numpy: nothing equals None, elementwise (all False for ==, all True for !=)
            other = x2 if x1 is None else x1
            if other is not None and not isinstance(other, (np.ndarray, list, tuple)):
                other = _operand(other, op)  # TypeError for what is no operand
            shape = other.shape if isinstance(other, Array) else np.shape(other)
            return full(shape, op == "not_equal", dtypes.bool_)
        _check_shapes((x1, x2), op)
        a, b = _operand(x1, op), _operand(x2, op)
        if not (isinstance(a, Array) or isinstance(b, Array)):
            a = asarray(a)
        if kind == "divide":  # true division is a float: numpy's float64 of 32-bit operands is float32 here
            compute = (_resolve("divide", (_ufunc_key(a), _ufunc_key(b)), op)[0]
                       if any(isinstance(x, Array) and (dtypes.is_wide(x.dtype) or dtypes.is_half(x.dtype))
                              for x in (a, b)) else dtypes.float32)
        else:
            compute = _promote([a, b], op)
        if compute == dtypes.bool_ and kind != "compare":
            raise TypeError(f"{op}: arithmetic on bool arrays is not supported; cast with .astype() first")
        if compute == dtypes.bool_:
            compute = dtypes.uint32
        if kind == "compare" and compute.kind in "iu":
            constant = _past_the_range(op, a, b, compute)
            if constant is not None:
                return constant
        out = dtypes.bool_ if kind == "compare" else compute
        return apply(op, [a, b], out, compute)
    f.__name__ = op
    f.__doc__ = f"numpy.{op}(x1, x2) with broadcasting."
    return recipe()(f)


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


def _ufunc_key(x):
    """An operand's type as numpy's ufunc.resolve_dtypes takes it: its dtype, or int / float for
    a Python number (weak, NEP 50)."""
    if isinstance(x, (Array, np.generic)):
        return x.dtype
    return dtypes.bool_ if isinstance(x, bool) else int if isinstance(x, int) else float


@functools.lru_cache(maxsize=1024)
def _resolve_keys(ufunc: str, keys: tuple, name: str) -> tuple:
    """(compute dtype, result dtype) of numpy's loop for these operand types, narrowed to 32 bits
    (bool computes as uint32 words)."""
    # bfloat16 takes float16's loops (dtypes.result_type: promoted as float16 is; with float16
    # itself, float32)
    bf16 = dtypes.bfloat16 in keys
    half = dtypes.float16 in keys
    try:
        loop = getattr(np, ufunc).resolve_dtypes(
            tuple(dtypes.float16 if k == dtypes.bfloat16 else k for k in keys) + (None,))
    except TypeError:
        shown = ", ".join(str(k) if isinstance(k, np.dtype) else f"Python {k.__name__}" for k in keys)
        raise TypeError(f"{name}: not supported for {shown} (numpy has no loop for it either)") from None
    exact = any(map(dtypes.is_wide, keys))
    # numpy's float16 loop stays float16 for float16 input (computed in float32, rounded; _resolve
    # checks the device); for bool input it is float32 here, as before float16 computed
    stays = dtypes.float32 if half and bf16 else dtypes.bfloat16 if bf16 else dtypes.float16

    def kept(d):
        if d == dtypes.float16 and (half or bf16):
            return stays
        return dtypes.narrow(d, name, wide=True, exact=exact)
    compute, out = kept(loop[0]), kept(loop[-1])
    return (dtypes.uint32 if compute == dtypes.bool_ else compute), out


def _resolve(ufunc: str, keys: tuple, name: str) -> tuple:
    compute, out = _resolve_keys(ufunc, keys, name)
    return _half_checked(compute, name), out


def _operands(args, name: str) -> list:
    _check_shapes(args, name)
    ops = [_operand(x, name) for x in args]
    if not any(isinstance(x, Array) for x in ops):
        ops[0] = asarray(ops[0])
    return ops


def _named(op: str, nargs: int, call, doc: str):
    """vk.<op> taking numpy's positional parameters (x, or x1 and x2), as a recipe."""
    if nargs == 1:
        def f(x):
            return call(x)
    else:
        def f(x1, x2):
            return call(x1, x2)
    f.__name__, f.__doc__ = op, doc
    return recipe()(f)


def _ufunc(op: str, nargs: int, shader_op: str | None = None):
    """vk.<op>: numpy.<op> elementwise, with numpy's broadcasting and its loop's types (narrowed
    to 32 bits); the shader's OP_<shader_op> (default: op) computes it."""
    shader_op = shader_op or op

    def call(*args):
        ops = _operands(args, op)
        compute, out = _resolve(op, tuple(_ufunc_key(x) for x in ops), op)
        return apply(shader_op, ops, out, compute, op)

    args = "x" if nargs == 1 else "x1, x2"
    return _named(op, nargs, call,
                  f"numpy.{op}({args}) elementwise, broadcasting; numpy's result type, float64 as float32.")


# Transcendentals: float32 results within 1 ulp of the exact value over the whole float32 range,
# most within 0.6 (measured per function in tests/primitives/test_elementwise_accuracy.py).
exp = _ufunc("exp", 1)
exp2 = _ufunc("exp2", 1)
expm1 = _ufunc("expm1", 1)
log = _ufunc("log", 1)
log2 = _ufunc("log2", 1)
log10 = _ufunc("log10", 1)
log1p = _ufunc("log1p", 1)
sqrt = _ufunc("sqrt", 1)
sin = _ufunc("sin", 1)
cos = _ufunc("cos", 1)
tan = _ufunc("tan", 1)
arcsin = asin = _ufunc("arcsin", 1)
arccos = acos = _ufunc("arccos", 1)
arctan = atan = _ufunc("arctan", 1)
sinh = _ufunc("sinh", 1)
cosh = _ufunc("cosh", 1)
tanh = _ufunc("tanh", 1)
arcsinh = asinh = _ufunc("arcsinh", 1)
arccosh = acosh = _ufunc("arccosh", 1)
arctanh = atanh = _ufunc("arctanh", 1)
arctan2 = atan2 = _ufunc("arctan2", 2)
hypot = _ufunc("hypot", 2)
logaddexp = _ufunc("logaddexp", 2)
# Exact ones: rounding, classification, signs, floats' bits.
floor = _ufunc("floor", 1)
ceil = _ufunc("ceil", 1)
trunc = _ufunc("trunc", 1)
rint = _ufunc("rint", 1)
isnan = _ufunc("isnan", 1)
isinf = _ufunc("isinf", 1)
isfinite = _ufunc("isfinite", 1)
signbit = _ufunc("signbit", 1)
sign = _ufunc("sign", 1)
square = _ufunc("square", 1)
positive = _ufunc("positive", 1, "copy")
reciprocal = _ufunc("reciprocal", 1)
copysign = _ufunc("copysign", 2)
nextafter = _ufunc("nextafter", 2)
# Integer and float division as numpy's: the remainder takes the divisor's sign (fmod: the
# dividend's); integers divided by 0 give 0 (numpy warns), INT_MIN // -1 wraps to INT_MIN. Float
# floor_divide with one operand infinite is floor(x1 / x2), as the array API standard specifies
# (inf // 2 = inf, -1 // inf = -0; numpy: NaN, -1).
remainder = mod = _ufunc("remainder", 2)
fmod = _ufunc("fmod", 2)
floor_divide = _ufunc("floor_divide", 2)
# Bits: integers and bools. Shifts by 32 or more (or by a negative count) shift every bit out,
# as numpy's do.
bitwise_and = _ufunc("bitwise_and", 2)
bitwise_or = _ufunc("bitwise_or", 2)
bitwise_xor = _ufunc("bitwise_xor", 2)
left_shift = bitwise_left_shift = _ufunc("left_shift", 2)
right_shift = bitwise_right_shift = _ufunc("right_shift", 2)
_power = _ufunc("power", 2)


@recipe()
def power(x1, x2) -> Array:
    """numpy.power(x1, x2) with broadcasting. Integers: exact, wrapping powers; a negative
    exponent in an integer array gives 1 / x1**|x2| truncated toward 0 (numpy raises ValueError
    on it; so does this for a negative Python integer exponent, before any GPU work)."""
    if (isinstance(x2, numbers.Integral) and not isinstance(x2, bool) and x2 < 0
            and isinstance(x1, Array) and x1.dtype.kind in "iu"):
        raise ValueError("power: integers to negative integer powers are not allowed")
    return _power(x1, x2)


pow = power


@recipe()
def invert(x) -> Array:
    """numpy.invert (bitwise NOT) of integers; of bools, logical NOT (numpy's too)."""
    a = operand(x, "invert", "x", host="upload", wide=True)
    compute, out = _resolve_keys("invert", (a.dtype,), "invert")
    return apply("logical_not" if out == dtypes.bool_ else "invert", [a], out, compute, "invert")


bitwise_not = bitwise_invert = invert


def _logical(op: str, nargs: int):
    """numpy.<op> on any dtypes: the operands' truth (nonzero; NaN is true), bool result. They
    compute as a float if any is one (int -> float keeps nonzero; float64 if any is, so that tiny
    values stay nonzero), else as unsigned words of the widest operand."""
    def call(*args):
        ops = _operands(args, op)
        held = [x.dtype for x in ops if isinstance(x, Array)]
        if any(map(dtypes.is_float, held)) or any(isinstance(x, float) for x in ops):
            compute = dtypes.float64 if dtypes.float64 in held else dtypes.float32
        else:
            compute = dtypes.uint64 if any(d.itemsize == 8 for d in held) else dtypes.uint32
        return apply(op, ops, dtypes.bool_, compute, op)

    return _named(op, nargs, call,
                  f"numpy.{op} elementwise: bool result from the operands' truth (nonzero; NaN is true).")


logical_and = _logical("logical_and", 2)
logical_or = _logical("logical_or", 2)
logical_xor = _logical("logical_xor", 2)
logical_not = _logical("logical_not", 1)


@recipe()
def round(a, decimals: int = 0) -> Array:
    """numpy.round: half to even; decimals as numpy's (floats: x * 10**d, rint, / 10**d in
    float32; integers: unchanged for decimals >= 0, else exact half-to-even multiples of 10**-d)."""
    decimals = operator.index(decimals)
    a = operand(a, "round", "a", host="upload", half="words", wide=True)
    if a.dtype.kind in "iu" and a.dtype != dtypes.bool_:
        if decimals >= 0:
            return a.copy()
        p = 10 ** -decimals
        info = np.iinfo(a.dtype)
        if p > info.max:  # every |a| < p / 2
            return full(a.shape, 0, a.dtype)
        q = floor_divide(a, p)
        r2 = multiply(subtract(a, multiply(q, p)), 2)  # 2 (a - q p), in [0, 2p)
        up = logical_or(greater(r2, p), logical_and(equal(r2, p), bitwise_and(q, 1)))
        return multiply(where(up, add(q, 1), q), p)
    if decimals == 0:
        return rint(a)
    f = 10.0 ** (decimals if decimals > 0 else -decimals)
    if decimals > 0:
        return divide(rint(multiply(a, f)), f)
    return multiply(rint(divide(a, f)), f)


around = round


@recipe()
def clip(a, /, min=None, max=None, *, a_min=None, a_max=None) -> Array:
    """The array API's clip(x, min, max) (numpy's a_min=, a_max= as keywords): minimum(maximum(a,
    min), max), so a NaN anywhere gives NaN and min > max gives max; either bound may be None."""
    if min is not None:
        if a_min is not None:
            raise TypeError("clip: give the lower bound as a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise TypeError("clip: give the upper bound as a_max or max, not both")
        a_max = max
    if a_min is None and a_max is None:
        return operand(a, "clip", "a", host="upload", half=True, wide=True).copy()
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    ops = _operands([a, a_min, a_max], "clip")
    keys = tuple(_ufunc_key(x) for x in ops)
    compute = _promote(ops, "clip")
    if compute == dtypes.bool_:
        compute = dtypes.uint32
    out = dtypes.bool_ if all(k == dtypes.bool_ for k in keys) else compute
    return apply("clip", ops, out, compute, "clip")


@recipe()
def negative(x) -> Array:
    a = operand(x, "negative", "x", host="upload", half="words", wide=True)
    if a.dtype == dtypes.bool_:
        raise TypeError("negative: not supported for bool arrays (numpy refuses it too)")
    return apply("negative", [a], a.dtype, a.dtype)


@recipe()
def absolute(x) -> Array:
    a = operand(x, "absolute", "x", host="upload", half="words", wide=True)
    if a.dtype.kind in "bu":  # GLSL has no abs(uint): it would go through float
        return a.copy()
    return apply("absolute", [a], a.dtype, a.dtype)


abs = absolute


def _cast_half(a: Array, dtype: np.dtype, bits: bool = False) -> Array:
    """float32 -> a half or a half -> float32 (primitives/cast_half.comp); bits=True moves the
    halves' bit patterns instead, half <-> uint32 (one half per word)."""
    out = Array.empty(a.shape, dtype)
    if a.size:
        to = dtypes.is_half(dtype)
        defines = {"TO_HALF" if to else "FROM_HALF": 1}
        if bits:
            defines["BITS"] = 1
        elif (dtype if to else a.dtype) == dtypes.bfloat16:
            defines["BF16"] = 1
        k = runtime.get().kernel("primitives/cast_half.comp", defines, WG)
        k([a.buffer, out.buffer], [a.size, a.offset, out.offset], (grid_groups(a.size, WG),))
    return out


def half_bits(a: Array) -> Array:
    """A half array's bit patterns, one per uint32 word (for the word-wise primitives)."""
    return _cast_half(a, dtypes.uint32, bits=True)


def from_half_bits(u: Array, dtype: np.dtype = dtypes.float16) -> Array:
    """The half array (float16 or bfloat16) whose bit patterns `u` (uint32, as half_bits gives them) holds."""
    return _cast_half(u, dtype, bits=True)


def moved_as_bits(x: Array, fn):
    """fn(x) for an fn that only moves elements: a half's bit patterns moved one per word (any
    device) and its dtype restored; any other dtype as it is."""
    if dtypes.is_half(x.dtype):
        return from_half_bits(fn(half_bits(x)), x.dtype)
    return fn(x)


@recipe()
def astype(a: Array, dtype, /, *, copy=True, device=None) -> Array:
    """The array API's astype: a new array of `dtype`; copy=False returns `a` itself when it
    already has that dtype; `device` may only be vk.device() (or None)."""
    if not isinstance(a, Array):  # the array API's astype takes the namespace's arrays only
        raise TypeError(f"astype: x must be a vk.Array, got {type(a).__name__} (vk.asarray(x, dtype) converts host data)")
    dtype = dtypes.check(dtype, held=True)
    if not isinstance(copy, (bool, np.bool_)):
        raise TypeError(f"astype: copy must be a bool, got {copy!r}")
    if device is not None:
        from .creation import check_device
        check_device(device, "astype")
    if not copy and dtype == a.dtype:
        return a
    if dtypes.is_half(dtype) or dtypes.is_half(a.dtype):  # through float32, rounded to nearest even
        if dtype == a.dtype:  # a copy: the bit patterns, NaN payloads included
            return from_half_bits(half_bits(a), dtype)
        if dtypes.is_half(a.dtype):
            f = _cast_half(a, dtypes.float32)
            return f if dtype == dtypes.float32 else astype(f, dtype)
        return _cast_half(a if a.dtype == dtypes.float32 else astype(a, dtypes.float32), dtype)
    if dtype == dtypes.bool_ and a.dtype != dtypes.bool_:
        return apply("not_equal", [a, 0], dtypes.bool_, a.dtype)
    return apply("copy", [a], dtype, dtypes.storage(a.dtype))


@recipe()
def where(condition, x, y) -> Array:
    """numpy.where(condition, x, y); the one-argument form is vk.nonzero's job."""
    cond = operand(condition, "where", "condition", host="upload", half=True, wide=True)
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
