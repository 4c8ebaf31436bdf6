"""Seeded differential fuzz test against numpy (issue 15).

Each case draws one operation (elementwise, reduction, scan, take/take_along_axis, transpose/
reshape/indexing, matmul, concatenate/stack, where, astype) with random shapes (0-size dims,
1-element, sizes around 4/8/16/32/64/256), dtypes (float32, int32, uint32, bool, mixed), axes and
flags, runs it on vkbackend and on numpy, and compares: exact for integer and bool results, with
a tolerance scaled to the operation for float ones (numpy computes those in float64 from the same
float32 inputs). vkbackend's results are 32-bit by design: numpy's float64 is compared as float32,
its int64 (sums and products of int32, the int64 of bool sums) modulo 2**32 as int32.

An input vkbackend refuses with TypeError that numpy accepts is a *refusal*, not a failure, when it
is one of the documented limitations (REFUSALS: int32 mixed with uint32, bool arithmetic,
bool @ bool); any other refusal fails. Where numpy raises, vkbackend must raise the same type.
The refusal counts are printed at the end of the module.

    VKBACKEND_FUZZ_CASES=N   cases to run (default 300)
    VKBACKEND_FUZZ_SEED=S    the seed (default: fresh each run, printed with every failure);
                             case i always draws from (S, i): replay one case with its seed and
                             -k 'case-0042'
"""
from __future__ import annotations

import collections
import dataclasses
import math
import warnings
from typing import Callable

import numpy as np
import pytest

import vkbackend as vk

N_CASES = vk.config.get("VKBACKEND_FUZZ_CASES") or 300
SEED = vk.config.get("VKBACKEND_FUZZ_SEED")
SEED = np.random.SeedSequence().entropy % 2**32 if SEED is None else SEED

DTYPES = ("float32", "int32", "uint32", "bool")
SMALL = (1, 2, 3, 4, 5)
BOUNDARY = (0, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257)
MAX_ELEMENTS = 1 << 14
EPS = float(np.finfo(np.float32).eps)
TINY = float(np.finfo(np.float32).tiny)  # a device may flush denormals to zero

# Documented refusals (README): TypeError where numpy accepts.
REFUSALS = {
    "int32 with uint32": "integer matmul of int32 with uint32 (numpy: int64)",
    "bool arithmetic": "+ * maximum minimum of two bools (numpy: logical or/and)",
    "bool matmul": "bool @ bool: the array API's matmul is numeric only (numpy: logical)",
    "bool with a Python int past int32": "numpy computes it in int64, which has no 32-bit home",
}

STATS = collections.Counter()
REFUSED = collections.Counter()


# ---- random inputs --------------------------------------------------------------------------------
def rand_dim(rng) -> int:
    r = rng.random()
    return int(rng.choice(SMALL)) if r < 0.6 else int(rng.choice(BOUNDARY))


def rand_shape(rng, ndim=None, max_elements=MAX_ELEMENTS, min_ndim=0) -> tuple:
    ndim = int(rng.integers(min_ndim, 5)) if ndim is None else ndim
    for _ in range(50):
        shape = tuple(rand_dim(rng) for _ in range(ndim))
        if math.prod(shape) <= max_elements:
            return shape
    return tuple(int(rng.choice(SMALL)) for _ in range(ndim))


def rand_dtype(rng, allowed=DTYPES) -> str:
    return str(rng.choice(allowed))


def rand_data(rng, shape, dtype, **kw) -> np.ndarray:
    return np.asarray(_rand_data(rng, shape, dtype, **kw))


def _rand_data(rng, shape, dtype, *, special=False, wide=False, near_one=False, nonneg=False):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < rng.choice([0.1, 0.5, 0.9])
    if dt.kind == "f":
        if near_one:
            x = rng.uniform(0.9, 1.1, shape) * rng.choice([-1, 1], shape)
        else:
            x = rng.standard_normal(shape) * rng.choice([1.0, 100.0])
        if nonneg:
            x = np.abs(x)
        x = np.asarray(x, np.float32)
        if special and x.size:
            k = max(1, x.size // 8)
            pos = rng.integers(0, x.size, k)
            x.reshape(-1)[pos] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32), k)
        return x
    info = np.iinfo(dt)
    if wide:
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(dt)
    hi = int(rng.choice([4, 1000]))  # a small range makes ties (argmax) and exact products
    lo = 0 if dt.kind == "u" or nonneg else -hi
    return rng.integers(lo, hi, shape).astype(dt)


def broadcast_pair(rng, out_shape) -> tuple:
    """Two shapes that broadcast to out_shape (leading dims dropped, some dims 1)."""
    shapes = []
    for _ in range(2):
        nd = int(rng.integers(0, len(out_shape) + 1)) if rng.random() < 0.3 else len(out_shape)
        s = list(out_shape[len(out_shape) - nd:])
        for d in range(len(s)):
            if rng.random() < 0.25:
                s[d] = 1
        shapes.append(tuple(s))
    return tuple(shapes)


# ---- a case -----------------------------------------------------------------------------------------
@dataclasses.dataclass
class Case:
    op: str                          # family/name, for the counters
    desc: str
    inputs: list                     # numpy arrays and Python scalars
    run: Callable                    # run(m, *inputs): m is vk (inputs uploaded) or numpy
    tol: Callable | None = None      # tol(np_inputs, want) -> (atol array or float, rtol); None: exact
    upcast: bool = True              # numpy computes float32 inputs in float64
    refusal: str | None = None       # a documented refusal this input is, if vkbackend refuses it
    device: tuple = ()               # indices of inputs that go to vkbackend as device arrays (default: all arrays)
    signed_zero: bool = True         # compare the sign of zeros too

    def vk_inputs(self):
        out = []
        for k, x in enumerate(self.inputs):
            if isinstance(x, np.ndarray) and (not self.device or k in self.device):
                out.append(vk.asarray(x))
            else:
                out.append(x)
        return out

    def np_inputs(self):
        if not self.upcast:
            return list(self.inputs)
        # float32 arrays widened; a Python float is a float32 scalar in the computation (NEP 50's
        # weak scalar takes the arrays' type), so it enters rounded to float32
        return [x.astype(np.float64) if isinstance(x, np.ndarray) and x.dtype == np.float32
                else float(np.float32(x)) if type(x) is float else x for x in self.inputs]


def _mixes_signedness(*xs) -> bool:
    kinds = {str(x.dtype) for x in xs if isinstance(x, np.ndarray)}
    return {"int32", "uint32"} <= kinds


def _shape_desc(x):
    return f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else repr(x)


# -- elementwise --
ARITH = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
OPS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "equal": "==", "not_equal": "!=",
       "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def _float_tol(rtol, atol=TINY):
    return lambda ins, want: (atol, rtol)


def gen_binary(rng) -> Case:
    name = str(rng.choice(ARITH + COMPARE))
    out_shape = rand_shape(rng)
    sa, sb = broadcast_pair(rng, out_shape)
    da = rand_dtype(rng)
    db = da if rng.random() < 0.6 else rand_dtype(rng)
    wide = rng.random() < 0.2 and "float32" not in (da, db)
    special = rng.random() < 0.3
    a = rand_data(rng, sa, da, special=special, wide=wide)
    kind = rng.random()
    if kind < 0.2:  # a Python scalar operand
        b = {"float32": float(rng.standard_normal() * 10), "int32": int(rng.integers(-5, 6)),
             "uint32": int(rng.integers(0, 6)), "bool": bool(rng.random() < 0.5)}[db]
        if rng.random() < 0.1:
            b = int(rng.choice([2**31, -2**31 - 1, 2**40, -1, 2**32]))  # out of some range
    else:
        b = rand_data(rng, sb, db, special=special, wide=wide)
    swap = rng.random() < 0.5
    x, y = (b, a) if swap else (a, b)
    via = "operator" if name in OPS and rng.random() < 0.5 else "function"
    if via == "operator":
        fn = eval(f"lambda m, x, y: x {OPS[name]} y")
    else:
        fn = lambda m, x, y: getattr(m, name)(x, y)  # noqa: E731
    refusal = None
    arrays = [v for v in (x, y) if isinstance(v, np.ndarray)]
    # vk.add(vk.Array, numpy array): the function form uploads host operands itself
    device = (0,) if via == "function" and len(arrays) == 2 and rng.random() < 0.15 else ()
    if _mixes_signedness(x, y):
        refusal = "int32 with uint32"
    elif name in ("add", "multiply", "maximum", "minimum") and all(
            (isinstance(v, np.ndarray) and v.dtype == np.bool_) or isinstance(v, bool) for v in (x, y)):
        refusal = "bool arithmetic"
    elif any(type(v) is int and not -2**31 <= v < 2**31 for v in (x, y)) and all(
            v.dtype == np.bool_ for v in (x, y) if isinstance(v, np.ndarray)):
        refusal = "bool with a Python int past int32"
    tol = None
    if name in ("add", "subtract", "multiply"):
        tol = _float_tol(3e-7)
    elif name == "divide":
        tol = _float_tol(1e-6)
    return Case(f"elementwise.{name}", f"{name} via {via}: {_shape_desc(x)}, {_shape_desc(y)}"
                f"{' (second on the host)' if device else ''}", [x, y], fn, tol=tol,
                upcast=name in ("add", "subtract", "multiply", "divide"), refusal=refusal, device=device)


UNARY = ("exp", "log", "sqrt", "abs", "negative")


def gen_unary(rng) -> Case:
    name = str(rng.choice(UNARY))
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng), dt, special=rng.random() < 0.3, wide=rng.random() < 0.2)
    via = "operator" if name in ("abs", "negative") and rng.random() < 0.5 else "function"
    if via == "operator":
        fn = (lambda m, x: abs(x)) if name == "abs" else (lambda m, x: -x)
    else:
        fn = lambda m, x: getattr(m, name)(x)  # noqa: E731
    if name in ("exp", "log", "sqrt"):
        # numpy: float64 for int32 (float16 for bool); vkbackend float32: compare against float64
        ref = lambda m, x: getattr(m, name)(x.astype(np.float64)) if m is np else fn(m, x)  # noqa: E731
        if name == "exp":  # Vulkan's precision for exp: 3 + 2|x| ulp
            def tol(ins, want):
                return (3 + 2 * np.abs(ins[0].astype(np.float64))) * EPS * np.abs(want) + TINY, 0.0
        else:  # log: 3 ulp, absolute 2**-21 in [0.5, 2]; sqrt: a few ulp
            tol = _float_tol(4 * EPS, 2.0**-21) if name == "log" else _float_tol(4 * EPS)
        return Case(f"elementwise.{name}", f"{name}: {_shape_desc(x)}", [x], ref, tol=tol)
    return Case(f"elementwise.{name}", f"{name} via {via}: {_shape_desc(x)}", [x], fn, upcast=False)


def gen_where(rng) -> Case:
    out = rand_shape(rng)
    s1, s2 = broadcast_pair(rng, out)
    sc = broadcast_pair(rng, out)[0]
    cdt = "bool" if rng.random() < 0.7 else rand_dtype(rng)
    c = rand_data(rng, sc, cdt, special=True)
    dx = rand_dtype(rng)
    dy = dx if rng.random() < 0.7 else rand_dtype(rng)
    x, y = rand_data(rng, s1, dx, special=True), rand_data(rng, s2, dy, special=True)
    refusal = "int32 with uint32" if _mixes_signedness(x, y) else None
    return Case("elementwise.where", f"where({_shape_desc(c)}, {_shape_desc(x)}, {_shape_desc(y)})", [c, x, y],
                lambda m, c, x, y: m.where(c, x, y), upcast=False, refusal=refusal)


def gen_astype(rng) -> Case:
    src, dst = rand_dtype(rng), rand_dtype(rng)
    shape = rand_shape(rng)
    # float -> integer is exact only in range (numpy and GLSL leave the rest undefined)
    x = rand_data(rng, shape, src, special=src == "float32" and dst in ("float32", "bool"),
                  nonneg=dst == "uint32", wide=src != "float32" and rng.random() < 0.3)
    method = bool(rng.random() < 0.5)
    fn = (lambda m, x: x.astype(dst)) if method else (lambda m, x: m.astype(x, dst))
    return Case("elementwise.astype", f"astype{' (method)' if method else ''} {_shape_desc(x)} -> {dst}", [x], fn,
                upcast=False)


# -- reductions --
REDUCE = ("sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "mean", "var", "std", "all", "any")


def rand_axis(rng, ndim, single=False):
    r = rng.random()
    if r < 0.25 or ndim == 0:
        return None
    if single or r < 0.7:
        ax = int(rng.integers(0, ndim))
        return ax - ndim if rng.random() < 0.3 else ax
    k = int(rng.integers(1, ndim + 1))
    axes = rng.permutation(ndim)[:k]
    return tuple(int(a) - ndim if rng.random() < 0.3 else int(a) for a in axes)


def _reduced_count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(shape[a] for a in axes)


def gen_reduce(rng) -> Case:
    name = str(rng.choice(REDUCE))
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng), dt, special=rng.random() < 0.25, near_one=name == "prod",
                  wide=rng.random() < 0.2)
    single = name in ("argmax", "argmin")
    axis = rand_axis(rng, x.ndim, single)
    keepdims = bool(rng.random() < 0.3)
    kw = {"keepdims": keepdims}
    if axis is not None or rng.random() < 0.5:
        kw["axis"] = axis
    if name in ("var", "std") and rng.random() < 0.4:
        kw["ddof"] = int(rng.integers(0, 3))
    method = name not in ("amax", "amin") and rng.random() < 0.4

    def run(m, x):
        return getattr(x, name)(**kw) if method else getattr(m, name)(x, **kw)

    n = _reduced_count(x.shape, axis)
    tol = None
    if name in ("sum", "mean"):
        def tol(ins, want, axis=axis):
            x64 = np.abs(ins[0].astype(np.float64))
            scale = np.sum(x64, axis=axis, keepdims=keepdims) / (n if name == "mean" and n else 1)
            return 2 * max(n, 1) * EPS * scale + TINY, 1e-6
    elif name == "prod":
        tol = _float_tol(2 * max(n, 1) * EPS + 1e-6)
    elif name in ("var", "std"):
        def tol(ins, want, axis=axis):
            x64 = ins[0].astype(np.float64)
            mag = np.max(np.abs(x64), axis=axis, keepdims=keepdims, initial=0) if x64.size else 0.0
            return 1e-5 * (mag ** 2 if name == "var" else mag) + TINY, 1e-5
    # max/min of a ±0 tie may keep either zero (documented in primitives/reduce.py)
    return Case(f"reduce.{name}", f"{name}{' (method)' if method else ''} {_shape_desc(x)} {kw}", [x], run, tol=tol,
                upcast=name in ("sum", "prod", "mean", "var", "std"),
                signed_zero=name not in ("max", "min", "amax", "amin"))


# -- scans --
SCANS = ("cumsum", "cumprod", "cummax", "cummin")


def _np_scan(name, x, axis):
    if axis is None:
        x, axis = x.ravel(), 0
    if x.ndim == 0:
        x = x.reshape(1)
    if name == "cumsum":
        return np.cumsum(x, axis=axis)
    if name == "cumprod":
        return np.cumprod(x, axis=axis)
    return (np.maximum if name == "cummax" else np.minimum).accumulate(x, axis=axis)


def _identity(name, dtype):
    if name == "cumsum":
        return 0
    if name == "cumprod":
        return 1
    if dtype.kind == "f":
        return -np.inf if name == "cummax" else np.inf
    if dtype == np.bool_:
        return name != "cummax"
    info = np.iinfo(dtype)
    return info.min if name == "cummax" else info.max


def gen_scan(rng) -> Case:
    name = str(rng.choice(SCANS))
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng), dt, special=rng.random() < 0.25, near_one=name == "cumprod",
                  wide=rng.random() < 0.2)
    axis = None if x.ndim == 0 or rng.random() < 0.3 else int(rng.integers(-x.ndim, x.ndim))
    exclusive = bool(rng.random() < 0.2)
    reverse = bool(rng.random() < 0.2)
    kw = {"axis": axis}
    if exclusive:
        kw["exclusive"] = True
    if reverse:
        kw["reverse"] = True

    def run(m, x):
        if m is vk:
            return getattr(vk, name)(x, **kw)
        ax = 0 if axis is None else axis
        src = x.ravel() if axis is None else x.reshape(1) if x.ndim == 0 else x
        if reverse:
            src = np.flip(src, ax)
        out = _np_scan(name, src, ax)
        if exclusive:
            sh = np.moveaxis(out, ax, 0)
            ident = _identity(name, out.dtype)
            shifted = np.concatenate([np.full((1,) + sh.shape[1:], ident, out.dtype), sh[:-1]]) if sh.shape[0] else sh
            out = np.moveaxis(shifted, 0, ax)
        return np.flip(out, ax) if reverse else out

    tol = None
    if name in ("cumsum", "cumprod"):
        n = x.size if axis is None else (x.shape[axis] if x.ndim else 1)

        def tol(ins, want, n=n):
            if name == "cumprod":
                return TINY, 2 * max(n, 1) * EPS + 1e-6
            a = np.abs(ins[0].astype(np.float64))
            return 2 * max(n, 1) * EPS * np.abs(run(np, a)) + TINY, 1e-6
    # cummax/cummin: -0.0 counts as less than +0.0 (documented in primitives/scan.py); numpy keeps the first
    return Case(f"scan.{name}", f"{name} {_shape_desc(x)} {kw}", [x], run, tol=tol,
                upcast=name in ("cumsum", "cumprod"),
                signed_zero=name in ("cumsum", "cumprod"))


# -- gathers --
def gen_take(rng) -> Case:
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng, min_ndim=1, max_elements=4096), dt, special=True)
    axis = None if rng.random() < 0.3 else int(rng.integers(-x.ndim, x.ndim))
    n = x.size if axis is None else x.shape[axis]
    mode = str(rng.choice(["raise", "raise", "wrap", "clip"]))
    ishape = rand_shape(rng, ndim=int(rng.integers(0, 3)), max_elements=256)
    if n == 0:
        ishape = (0,) if rng.random() < 0.8 else ishape
    lo, hi = (-n, n) if mode == "raise" else (-3 * n - 2, 3 * n + 2)
    idx = rng.integers(lo, max(hi, lo + 1), ishape).astype(np.int64)
    device = rng.random() < 0.4 and mode == "raise"  # device indices: in range, negatives from the end
    if device:
        idx = idx.astype(np.int32)
    kw = {"axis": axis, "mode": mode}
    return Case("gather.take", f"take {_shape_desc(x)} indices {_shape_desc(idx)}{' (device)' if device else ''} {kw}",
                [x, idx], lambda m, x, i: m.take(x, i, **kw), upcast=False, device=(0, 1) if device else (0,))


def gen_take_along_axis(rng) -> Case:
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng, min_ndim=1, max_elements=4096), dt, special=True)
    axis = int(rng.integers(-x.ndim, x.ndim))
    n = x.shape[axis]
    ishape = [1 if rng.random() < 0.3 else s for s in x.shape]
    ishape[axis] = int(rng.choice([0, 1, 2, 5, 17])) if n else 0
    idx = rng.integers(-n, max(n, 1), ishape).astype(np.int64) if n else np.zeros(ishape, np.int64)
    device = rng.random() < 0.4
    if device:
        idx = idx.astype(np.int32)
    return Case("gather.take_along_axis", f"take_along_axis {_shape_desc(x)} {_shape_desc(idx)} axis={axis}",
                [x, idx], lambda m, x, i: m.take_along_axis(x, i, axis=axis), upcast=False,
                device=(0, 1) if device else (0,))


# -- layout --
def _rand_key(rng, shape):
    key = []
    ell = rng.random() < 0.2
    for d, n in enumerate(shape):
        r = rng.random()
        if r < 0.25 and n:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.85:
            start = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            stop = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            step = None if rng.random() < 0.5 else int(rng.choice([1, 2, 3, -1, -2]))
            key.append(slice(start, stop, step))
        else:
            key.append(slice(None))
        if rng.random() < 0.1:
            key.append(None)
    k = int(rng.integers(0, len(key) + 1))
    key = key[:k]
    if ell:
        key.insert(int(rng.integers(0, len(key) + 1)), Ellipsis)
    if rng.random() < 0.15 and shape and shape[0]:  # one integer array on the first axis
        key = [rng.integers(-shape[0], shape[0], int(rng.integers(0, 4))).tolist()] + [
            k for k in key[1:] if k is not Ellipsis]
    if rng.random() < 0.1 and shape:  # a mask on the first axis
        key = [rng.random(shape[0]) < 0.5]
    return tuple(key)


def gen_layout(rng) -> Case:
    kind = str(rng.choice(["transpose", "reshape", "getitem", "swapaxes", "moveaxis", "T"]))
    dt = rand_dtype(rng)
    x = rand_data(rng, rand_shape(rng), dt, special=True)
    nd = x.ndim
    if kind == "transpose":
        axes = None if rng.random() < 0.3 else tuple(int(a) for a in rng.permutation(nd))
        fn, desc = (lambda m, x: m.transpose(x, axes)), f"transpose axes={axes}"
    elif kind == "T":
        fn, desc = (lambda m, x: x.T), ".T"
    elif kind == "reshape":
        if x.size == 0:
            shape = [(0,), (3, 0), (0, 1, 5), (2, 0, 2)][int(rng.integers(0, 4))]
        else:
            dims, rest = [], x.size
            for _ in range(int(rng.integers(0, 4))):
                d = int(rng.choice([d for d in range(1, min(rest, 300) + 1) if rest % d == 0]))
                dims.append(d)
                rest //= d
            shape = [int(v) for v in rng.permutation(dims + [rest])]
            if rng.random() < 0.4:
                shape[int(rng.integers(0, len(shape)))] = -1
        shape = tuple(shape)
        fn, desc = (lambda m, x: x.reshape(shape)), f"reshape {shape}"
    elif kind == "getitem":
        key = _rand_key(rng, x.shape)
        fn, desc = (lambda m, x: x[key]), f"getitem {key!r}"
    elif kind == "swapaxes" and nd:
        a1, a2 = (int(v) for v in rng.integers(-nd, nd, 2))
        fn, desc = (lambda m, x: m.swapaxes(x, a1, a2)), f"swapaxes {a1} {a2}"
    elif kind == "moveaxis" and nd:
        k = int(rng.integers(1, nd + 1))
        src = tuple(int(a) for a in rng.permutation(nd)[:k])
        dst = tuple(int(a) for a in rng.permutation(nd)[:k])
        fn, desc = (lambda m, x: m.moveaxis(x, src, dst)), f"moveaxis {src} {dst}"
    else:
        fn, desc = (lambda m, x: m.transpose(x)), "transpose"
    return Case(f"layout.{kind}", f"{desc}: {_shape_desc(x)}", [x], fn, upcast=False)


# -- matmul --
def gen_matmul(rng) -> Case:
    def dim():
        return int(rng.choice(SMALL + BOUNDARY))
    for _ in range(50):
        m, n, k = dim(), dim(), dim()
        batch = rand_shape(rng, ndim=int(rng.integers(0, 3)), max_elements=8)
        ba, bb = broadcast_pair(rng, batch)
        sa, sb = ba + (m, k), bb + (k, n)
        if rng.random() < 0.15:
            sa = (k,)
        if rng.random() < 0.15:
            sb = (k,)
        if math.prod(sa) + math.prod(sb) + math.prod(batch) * m * n <= 3 * MAX_ELEMENTS:
            break
    da = "float32" if rng.random() < 0.85 else rand_dtype(rng)
    db = "float32" if rng.random() < 0.85 else rand_dtype(rng)
    a, b = rand_data(rng, sa, da), rand_data(rng, sb, db)
    via = str(rng.choice(["matmul", "@"]))
    fn = (lambda m, a, b: a @ b) if via == "@" else (lambda m, a, b: m.matmul(a, b))
    refusal = ("bool matmul" if da == db == "bool" else
               "int32 with uint32" if {da, db} == {"int32", "uint32"} else None)

    def tol(ins, want):
        return 2 * max(k, 1) * EPS * np.abs(np.matmul(np.abs(ins[0].astype(np.float64)),
                                                      np.abs(ins[1].astype(np.float64)))) + TINY, 1e-6
    return Case("matmul", f"{via} {_shape_desc(a)} {_shape_desc(b)}", [a, b], fn, tol=tol, refusal=refusal)


# -- joins --
def gen_join(rng) -> Case:
    kind = str(rng.choice(["concatenate", "stack"]))
    count = int(rng.integers(1, 5))
    base = list(rand_shape(rng, min_ndim=1 if kind == "concatenate" else 0, max_elements=2048))
    nd = len(base)
    axis = None if kind == "concatenate" and rng.random() < 0.15 else int(rng.integers(-nd - (kind == "stack"),
                                                                                        nd + (kind == "stack")))
    dt0 = rand_dtype(rng)
    xs = []
    for _ in range(count):
        s = list(base)
        if kind == "concatenate" and axis is not None and nd:
            s[axis] = int(rng.choice([0, 1, 2, 3, 8, 33]))
        elif axis is None:
            s = list(rand_shape(rng, max_elements=512))
        dt = dt0 if rng.random() < 0.75 else rand_dtype(rng)
        xs.append(rand_data(rng, tuple(s), dt, special=True))
    refusal = "int32 with uint32" if _mixes_signedness(*xs) else None
    host = rng.random() < 0.2  # some pieces stay numpy arrays (uploaded by the call)
    device = tuple(k for k in range(count) if not host or k % 2 == 0)
    return Case(f"join.{kind}", f"{kind} axis={axis} {[_shape_desc(x) for x in xs]}{' (mixed host)' if host else ''}",
                xs, lambda m, *xs: getattr(m, kind)(list(xs), axis=axis), upcast=False, refusal=refusal,
                device=device or (count,))


FAMILIES = [(gen_binary, 0.22), (gen_unary, 0.1), (gen_where, 0.05), (gen_astype, 0.05), (gen_reduce, 0.2),
            (gen_scan, 0.1), (gen_take, 0.06), (gen_take_along_axis, 0.04), (gen_layout, 0.1), (gen_matmul, 0.05),
            (gen_join, 0.03)]


def make_case(i: int) -> Case:
    rng = np.random.default_rng([SEED, i])
    gens, weights = zip(*FAMILIES)
    gen = gens[int(rng.choice(len(gens), p=np.array(weights) / sum(weights)))]
    return gen(rng)


# ---- comparison ------------------------------------------------------------------------------------
def _public(t: type) -> type:
    for c in t.__mro__:
        if c in (np.exceptions.AxisError, IndexError, OverflowError, TypeError, ValueError, MemoryError,
                 ZeroDivisionError):
            return c
    return t


def _narrowed(want: np.ndarray) -> np.ndarray:
    """numpy's result in vkbackend's dtype: float64 -> float32, int64 -> int32 (mod 2**32)."""
    if want.dtype.kind == "f":
        with np.errstate(over="ignore"):
            return want.astype(np.float32) if want.dtype != np.float16 else want.astype(np.float32)
    if want.dtype.kind == "i":
        return want.astype(np.int32)
    if want.dtype.kind == "u":
        return want.astype(np.uint32)
    return want


def compare(got, want, case: Case, np_inputs) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"got {type(got).__name__}"
        for g, w in zip(got, want):
            compare(g, w, case, np_inputs)
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, numpy's {want.shape}"
    # integers: numpy's own dtype where vkbackend computes it (int32 with uint32: int64), else narrowed
    expected = want if want.dtype.kind in "iu" and got.dtype == want.dtype else _narrowed(want)
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        assert got.dtype == np.float32, f"dtype {got.dtype}, numpy's {want.dtype} (expected float32)"
        g = got.astype(np.float64)
        w = expected.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        finite = np.isfinite(w)
        if case.tol is None:
            ok = (g == w) | both_nan
            if case.signed_zero:
                ok &= ~((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)))
        else:
            with np.errstate(all="ignore"):  # inf * 0 in a tolerance: handled below
                atol, rtol = case.tol(np_inputs, want)
            # an infinite input's tolerance (inf * 0) is moot: numpy's answer is then exact
            atol = np.nan_to_num(np.broadcast_to(np.asarray(atol, np.float64), w.shape), nan=TINY)
            with np.errstate(invalid="ignore"):
                ok = np.where(finite, np.abs(g - w) <= atol + rtol * np.abs(w), (g == w) | both_nan)
        if not ok.all():
            bad = np.argwhere(~ok)[:5]
            detail = ", ".join(f"{tuple(int(v) for v in b)}: got {g[tuple(b)]!r} want {w[tuple(b)]!r}" for b in bad)
            raise AssertionError(f"{int((~ok).sum())} of {ok.size} elements differ: {detail}")
    else:
        assert got.dtype == expected.dtype, f"dtype {got.dtype}, numpy's {want.dtype} (expected {expected.dtype})"
        if not np.array_equal(got, expected):
            bad = np.argwhere(got != expected)[:5]
            detail = ", ".join(f"{tuple(int(v) for v in b)}: got {got[tuple(b)]!r} want {expected[tuple(b)]!r}"
                               for b in bad)
            raise AssertionError(f"{int((got != expected).sum())} of {got.size} elements differ: {detail}")


def _host(r):
    if isinstance(r, tuple):
        return tuple(_host(x) for x in r)
    return np.asarray(r)


class _Summary:
    """Registered as a plugin by the fixture below: the counts go to pytest's terminal summary."""
    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("fuzz")
        for line in summary_lines():
            terminalreporter.write_line(line)


def summary_lines() -> list:
    lines = [f"seed {SEED}: {sum(STATS.values())} cases ({', '.join(f'{k} {v}' for k, v in sorted(STATS.items()))})"]
    lines += [f"refused (documented): {k} x{v}" for k, v in sorted(REFUSED.items())]
    return lines


@pytest.fixture(scope="module", autouse=True)
def fuzz_report(request):
    plugin = _Summary()
    request.config.pluginmanager.register(plugin, "vkbackend-fuzz-summary")
    yield


@pytest.mark.parametrize("i", [pytest.param(i, id=f"case-{i:04d}") for i in range(N_CASES)])
def test_fuzz(i):
    case = make_case(i)
    replay = f"VKBACKEND_FUZZ_SEED={SEED} pytest tests/test_fuzz.py -k 'case-{i:04d}'"
    header = f"case {i} (seed {SEED}): {case.desc}\n  replay: {replay}"
    np_inputs = case.np_inputs()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want, np_error = case.run(np, *np_inputs), None
        except Exception as e:  # noqa: BLE001 - numpy's error is the reference
            want, np_error = None, e
    try:
        got = _host(case.run(vk, *case.vk_inputs()))
        vk_error = None
    except Exception as e:  # noqa: BLE001
        got, vk_error = None, e
    STATS[case.op.split(".")[0]] += 1
    if np_error is not None:
        assert vk_error is not None, \
            f"{header}\n  numpy raises {type(np_error).__name__}: {np_error}; vkbackend does not"
        assert isinstance(vk_error, _public(type(np_error))), (
            f"{header}\n  numpy raises {type(np_error).__name__} ({np_error}); vkbackend "
            f"{type(vk_error).__name__} ({vk_error})")
        return
    if vk_error is not None:
        if isinstance(vk_error, TypeError) and case.refusal:
            REFUSED[f"{case.refusal} ({case.op})"] += 1
            return
        raise AssertionError(f"{header}\n  vkbackend raises {type(vk_error).__name__}: {vk_error}; numpy gives "
                             f"{getattr(want, 'dtype', type(want))}{list(np.shape(want))}") from vk_error
    try:
        compare(got, want, case, np_inputs)
    except AssertionError as e:
        raise AssertionError(f"{header}\n  {e}") from None
