"""Bad input over the whole public API, table-driven (issue 15).

Each `Bad` row calls one public function (or Array method / operator) with one bad argument and
checks three things: the exception type is numpy's for the same call (computed here by making the
call on numpy: `call(m, *args)` runs with m = vkbackend and m = numpy), or, where numpy has no such
call or accepts what vkbackend refuses by design (`ref=False`), the documented type; the message
names the offending argument or value (any of `says`, case-insensitive); and nothing was recorded
or submitted before the error (no_gpu_work). The nn ops follow torch.nn.functional's signatures,
but torch raises RuntimeError for bad shapes where vkbackend raises ValueError/TypeError, as the
README documents, so their rows give the expected type.

`Val` rows are inputs that are not errors (NaN/inf as values, empty arrays, 0-d): they must
compute what numpy computes. `Huge` rows (sizes no device holds) run in a subprocess, since a
wrong answer there could crash the process: MemoryError or ValueError, before any GPU work.

A row whose call shows a library bug carries `bug=` (xfail, strict: the mark fails once fixed).
test_catalogue_covers_api checks that every public function has a row.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import warnings
from typing import Callable

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work


# ---- arguments ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Arr:
    """An array argument: a vk.Array on vkbackend's side, the same data as numpy on numpy's."""
    shape: tuple
    dtype: str = "float32"
    values: tuple | None = None   # explicit data (flattened), else random

    def host(self, rng) -> np.ndarray:
        dt = np.dtype(self.dtype)
        if self.values is not None:
            return np.array(self.values, dtype=dt).reshape(self.shape)
        if dt == np.bool_:
            return rng.random(self.shape) < 0.5
        if dt.kind == "f":
            return rng.standard_normal(self.shape).astype(dt)
        if dt.kind == "u":
            return rng.integers(0, 5, self.shape).astype(dt)
        return rng.integers(-5, 5, self.shape).astype(dt)


@dataclasses.dataclass(frozen=True)
class Host:
    """Host data given as is to both sides (dtypes no vk.Array holds: complex, object, ...)."""
    make: Callable

    def __repr__(self):
        return "Host"


def F(*shape, dtype="float32", values=None):
    return Arr(tuple(shape), dtype, None if values is None else tuple(values))


def I(*shape, values=None):  # noqa: E743
    return F(*shape, dtype="int32", values=values)


def U(*shape, values=None):
    return F(*shape, dtype="uint32", values=values)


def B(*shape, values=None):
    return F(*shape, dtype="bool", values=values)


def H(*shape):
    return F(*shape, dtype="float16")


COMPLEX = Host(lambda: np.array([1 + 2j, 3j, 1, 0], np.complex64))
OBJECT = Host(lambda: np.array([1, "a", None, 2.5], dtype=object))
JUNK = {"None": None, "str": "abc", "dict": {"a": 1}}
JUNK_SAYS = {"None": ("NoneType", "None"), "str": ("str", "abc"), "dict": ("dict",)}


def materialize(args, rng):
    """(vkbackend's arguments, numpy's arguments)."""
    vk_args, np_args = [], []
    for a in args:
        if isinstance(a, Arr):
            h = a.host(rng)
            vk_args.append(vk.asarray(h))
            np_args.append(h.copy())
        elif isinstance(a, Host):
            vk_args.append(a.make())
            np_args.append(a.make())
        elif isinstance(a, list) and any(isinstance(x, Arr) for x in a):  # a sequence of arrays
            v, n = materialize(a, rng)
            vk_args.append(v)
            np_args.append(n)
        else:
            vk_args.append(a)
            np_args.append(a)
    return vk_args, np_args


# ---- the rows -----------------------------------------------------------------------------------
@dataclasses.dataclass
class Bad:
    fn: str                       # the public name covered ("sum", "Array.__add__", "linalg.qr")
    what: str
    call: Callable                # call(m, *args), m = vkbackend or numpy
    args: tuple = ()
    says: tuple = ()              # one of these appears in str(e)
    expect: type | tuple | None = None   # None: numpy's exception type for the same call
    ref: bool = True              # False: no numpy equivalent, or numpy accepts it (by design)
    bug: str | None = None        # a library bug: xfail(strict=True)
    syncs: bool = False           # the error depends on the data: a submit to read it is allowed

    @property
    def id(self):
        return f"{self.fn}: {self.what}"


@dataclasses.dataclass
class Val:
    fn: str
    what: str
    call: Callable
    args: tuple = ()
    ref_call: Callable | None = None   # numpy's side when it differs (cummax, torch-style ops)
    rtol: float = 2e-6
    atol: float = 0.0
    signed_zero: bool = True          # also the sign of zeros (elementwise results)
    upcast: bool = True               # numpy computes float32 inputs in float64
    bug: str | None = None

    @property
    def id(self):
        return f"{self.fn}: {self.what}"


# The one public exception types numpy's own ones are compared as (numpy's UFuncTypeError is a
# TypeError; its AxisError is both a ValueError and an IndexError and stays itself).
_PUBLIC = (np.exceptions.AxisError, np.linalg.LinAlgError, MemoryError, OverflowError,
           ZeroDivisionError, IndexError, KeyError, TypeError, ValueError, AttributeError,
           NotImplementedError, RuntimeError)


def public_type(exc_type) -> type:
    for t in exc_type.__mro__:
        if t in _PUBLIC:
            return t
    return exc_type


BAD: list[Bad] = []

# Library bugs found by this catalogue get rows with bug= (xfail(strict=True): they fail once fixed); none open.
VAL: list[Val] = []


def bad(*a, **k):
    BAD.append(Bad(*a, **k))


# vkbackend reduces float16 in float32 and rounds once; numpy's float16 var/std come out up to 3
# float16 ulps from the rounded exact value (20000 random triples): 4 ulps of relative slack.
F16_REDUCED = 4 * 2.0 ** -10


def junk_inputs(name, f):
    """Rows for inputs no reduction or scan takes: complex, object, str, None, a dict; and float16,
    which they take (computed in float32, rounded to float16 as numpy's)."""
    bad(name, "complex input", f, (COMPLEX,), ("complex",), TypeError, ref=False)
    bad(name, "object input", f, (OBJECT,), ("object",), TypeError, ref=False)
    # atol: numpy's float16 scans round every step, so a running sum that cancels (a partial sum
    # near 0 after larger ones) keeps their absolute error, not a relative one
    val(name, "float16 input", f, (H(4),), rtol=F16_REDUCED, atol=4 * F16_REDUCED)
    bad(name, "str input", f, ("abc",), ("str", "<U3"), TypeError, ref=False)
    bad(name, "None input", f, (None,), ("NoneType", "None"), TypeError, ref=False)
    bad(name, "dict input", f, ({"a": 1},), ("dict",), TypeError, ref=False)


def val(*a, **k):
    VAL.append(Val(*a, **k))


# -- elementwise ---------------------------------------------------------------------------------
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal"]
OPERATORS = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__eq__": "==",
             "__ne__": "!=", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}
REFLECTED = {"__radd__": "+", "__rsub__": "-", "__rmul__": "*", "__rtruediv__": "/"}


def _fn(name):
    return lambda m, *a, **k: getattr(m, name)(*a, **k)


for name in BINARY:
    f = _fn(name)
    bad(name, "complex operand", f, (F(4), COMPLEX), ("complex",), TypeError, ref=False)
    bad(name, "object operand", f, (F(4), OBJECT), ("object",), TypeError, ref=False)
    for jn, junk in JUNK.items():
        if name in ("equal", "not_equal") and junk is None:
            continue  # elementwise against None: a value row below
        if name in ("equal", "not_equal"):  # numpy: elementwise False/True against anything
            bad(name, f"{jn} operand", f, (F(4), junk), JUNK_SAYS[jn], TypeError, ref=False)
        else:
            bad(name, f"{jn} operand", f, (F(4), junk), JUNK_SAYS[jn])
    val(name, "float16 with float32 (float32, as numpy)", f, (F(4), H(4)))
    val(name, "float16 operands", f, (H(4), H(4)), rtol=1e-3)
    bad(name, "shapes that do not broadcast", f, (F(3, 4), F(5)), ("(3, 4)", "(5,)"))
    bad(name, "host operand that does not broadcast", f, (F(3, 4), Host(lambda: np.zeros(5, np.float32))),
        ("(3, 4)", "(5,)"))
    if name not in ("divide", "true_divide"):
        val(name, "int32 with uint32 (numpy: int64)", f, (I(4), U(4)))
        if name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
            val(name, "Python int out of int32's range", f, (I(4), 2**40))
        else:
            bad(name, "Python int out of int32's range", f, (I(4), 2**40), ("1099511627776",))
    else:
        val(name, "integers by zero", f, (I(4, values=[1, -1, 0, 3]), I(4, values=[0, 0, 0, 2])))
    val(name, "NaN and inf as values", f, (F(6, values=[np.nan, np.inf, -np.inf, 1, 0, -0.0]),
                                            F(6, values=[1, np.inf, np.nan, 0, 0, -np.inf])))
    val(name, "0-d operands", f, (F(), F()))
    val(name, "empty operands broadcast", f, (F(0, 3), F(1, 3)))
    val(name, "inf scalar", f, (F(3), float("inf")))
for name in ("add", "multiply", "maximum", "minimum"):
    bad(name, "bool arithmetic (numpy: logical or/and)", _fn(name), (B(4), B(4)), ("bool",), TypeError, ref=False)
bad("subtract", "bool arithmetic", _fn("subtract"), (B(4), B(4)), ("bool",))
for name in ("add", "multiply", "less", "equal"):
    val(name, "bool array with a Python int", _fn(name), (B(5, values=[1, 0, 1, 1, 0]), 2))
val("Array.__rsub__", "Python int minus a bool array", lambda m, x: 3 - x, (B(3, values=[1, 0, 1]),))
for name in ("equal", "not_equal"):
    val(name, "None operand", _fn(name), (F(3), None))

for dunder, op in {**OPERATORS, **REFLECTED}.items():
    reflected = dunder in REFLECTED
    f = eval(f"lambda m, x, y: y {op} x") if reflected else eval(f"lambda m, x, y: x {op} y")
    bad(f"Array.{dunder}", "shapes that do not broadcast", f, (F(3, 4), F(2, 5)), ("(3, 4)", "(2, 5)"))
    val(f"Array.{dunder}", "float16 operand", f, (F(4), H(4)))
    bad(f"Array.{dunder}", "complex host operand", f, (F(4), COMPLEX), ("complex",), TypeError, ref=False)
    if dunder not in ("__eq__", "__ne__"):
        # x * "abc": Python falls back to str repetition, which asks the Array for __index__
        bad(f"Array.{dunder}", "str operand", f, (F(4), "abc"), ("str", "sequence", "index"))
        bad(f"Array.{dunder}", "dict operand", f, (F(4), {"a": 1}), ("dict",))
    if dunder not in ("__truediv__", "__rtruediv__"):
        val(f"Array.{dunder}", "int32 with uint32 (numpy: int64)", f, (I(4), U(4)))
    val(f"Array.{dunder}", "NaN and inf", f, (F(4, values=[np.nan, np.inf, -np.inf, 2]),
                                            F(4, values=[np.inf, np.inf, 1, np.nan])))
bad("Array.__matmul__", "inner dims differ", lambda m, x, y: x @ y, (F(3, 4), F(5, 2)), ("(3, 4)", "(5, 2)"))
bad("Array.__rmatmul__", "0-d operand", lambda m, x, y: y @ x, (F(3, 3), F()), ("0", "dimension"))
val("Array.__matmul__", "int32 with uint32 (numpy: int64)", lambda m, x, y: x @ y, (I(2, 2), U(2, 2)))
bad("Array.__neg__", "bool", lambda m, x: -x, (B(3),), ("bool",))
val("Array.__neg__", "NaN, inf, -0", lambda m, x: -x, (F(4, values=[np.nan, np.inf, -0.0, 0]),))
val("Array.__pos__", "NaN, inf", lambda m, x: +x, (F(3, values=[np.nan, -np.inf, 1]),))
val("Array.__abs__", "NaN, -inf, -0", lambda m, x: abs(x), (F(4, values=[np.nan, -np.inf, -0.0, -2]),))
val("Array.__abs__", "int32 minimum wraps", lambda m, x: abs(x), (I(2, values=[-2**31, -3]),))
val("Array.__abs__", "float16", lambda m, x: abs(x), (H(3),))

UNARY = ["exp", "log", "sqrt", "abs", "absolute", "negative"]
for name in UNARY:
    f = _fn(name)
    bad(name, "complex input", f, (COMPLEX,), ("complex",), TypeError, ref=False)
    bad(name, "object input", f, (OBJECT,), ("object",), TypeError, ref=False)
    bad(name, "None", f, (None,), JUNK_SAYS["None"])
    bad(name, "str", f, ("abc",), JUNK_SAYS["str"])
    bad(name, "dict", f, ({"a": 1},), JUNK_SAYS["dict"])
    val(name, "float16", f, (H(4),), rtol=1e-3)
    val(name, "NaN, inf, negative, zero", f, (F(8, values=[np.nan, np.inf, -np.inf, -1, 0, -0.0, 1e-30, 3e38]),))
    val(name, "0-d", f, (F(),))
    val(name, "empty", f, (F(0, 5),))
    val(name, "int32", f, (I(5, values=[-3, 0, 1, 7, 2**31 - 1]),))
bad("negative", "bool", _fn("negative"), (B(3),), ("bool",))
val("abs", "bool", _fn("abs"), (B(4, values=[True, False, True, True]),))

bad("astype", "complex64", lambda m, x: m.astype(x, np.complex64), (F(3),), ("complex64",), TypeError, ref=False)
bad("astype", "a name no dtype has", lambda m, x: m.astype(x, "notadtype"), (F(3),), ("notadtype",))
val("astype", "float64", lambda m, x: m.astype(x, np.float64), (F(3, values=[np.nan, -0.0, 3e38]),), upcast=False)
bad("astype", "None as the array", lambda m: m.astype(None, np.float32), (), ("NoneType", "None"))
bad("astype", "a numpy array", lambda m, x: m.astype(x, np.float32),
    (Host(lambda: np.arange(3, dtype=np.float32)),), ("ndarray",), TypeError, ref=False)
bad("Array.astype", "object", lambda m, x: x.astype(object), (F(3),), ("object",), TypeError, ref=False)
val("Array.astype", "int64", lambda m, x: x.astype(np.int64), (I(3),))
val("astype", "NaN/inf to bool", lambda m, x: m.astype(x, np.bool_), (F(4, values=[np.nan, np.inf, 0, -0.0]),))
val("Array.astype", "float32 to float16 overflow", lambda m, x: x.astype(np.float16).astype(np.float32),
    (F(4, values=[7e4, -1e9, np.nan, 65504]),))
val("Array.copy", "NaN and inf", lambda m, x: x.copy(), (F(3, values=[np.nan, np.inf, -np.inf]),))

bad("where", "condition does not broadcast", lambda m, c, x, y: m.where(c, x, y), (B(3), F(4), F(4)),
    ("(3,)", "(4,)"))
bad("where", "x does not broadcast", lambda m, c, x, y: m.where(c, x, y), (B(4), F(2, 3), F(4)),
    ("(2, 3)", "(4,)"))
bad("where", "complex x", lambda m, c, x, y: m.where(c, x, y), (B(4), COMPLEX, F(4)), ("complex",), TypeError,
    ref=False)
val("where", "float16 y (float32, as numpy)", lambda m, c, x, y: m.where(c, x, y), (B(4), F(4), H(4)))
val("where", "int32 with uint32 (numpy: int64)", lambda m, c, x, y: m.where(c, x, y), (B(4), I(4), U(4)))
bad("where", "str x", lambda m, c, x, y: m.where(c, x, y), (B(4), "abc", F(4)), ("str",), TypeError, ref=False)
bad("where", "None condition", lambda m, c, x, y: m.where(c, x, y), (None, F(4), F(4)), JUNK_SAYS["None"],
    TypeError, ref=False)
val("where", "NaN values", lambda m, c, x, y: m.where(c, x, y),
    (B(3, values=[True, False, True]), F(3, values=[np.nan, 1, np.inf]), F(3, values=[0, np.nan, 0])))
val("where", "0-d and empty", lambda m, c, x, y: m.where(c, x, y), (B(), F(0, 2), F(1)))
val("where", "float condition (NaN is true)", lambda m, c, x, y: m.where(c, x, y),
    (F(3, values=[np.nan, 0, -0.0]), I(3), I(3)))

# -- creation ------------------------------------------------------------------------------------
for name in ("asarray", "array"):
    f = _fn(name)
    bad(name, "complex data", f, (COMPLEX,), ("complex",), TypeError, ref=False)
    bad(name, "object data", f, (OBJECT,), ("object",), TypeError, ref=False)
    bad(name, "str", f, ("abc",), ("str", "<U3"), TypeError, ref=False)
    bad(name, "dict", f, ({"a": 1},), ("dict", "object"), TypeError, ref=False)
    bad(name, "None", f, (None,), ("None", "object"), TypeError, ref=False)
    bad(name, "ragged list", f, ([[1, 2], [3]],), ("inhomogeneous", "shape"))
    bad(name, "dtype complex64", lambda m, x, nm=name: getattr(m, nm)(x, dtype=np.complex64),
        (Host(lambda: np.zeros(3)),), ("complex64",), TypeError, ref=False)
    bad(name, "int64 data out of int32's range", f, (Host(lambda: np.array([2**40], np.int64)),),
        ("1099511627776",), OverflowError, ref=False)
    bad(name, "uint32 data into int32", lambda m, x, nm=name: getattr(m, nm)(x, dtype=np.int32),
        (Host(lambda: np.array([2**31], np.uint32)),), ("2147483648",), OverflowError, ref=False)
    val(name, "float64 NaN/inf/overflow to float32", f,
        (Host(lambda: np.array([np.nan, np.inf, 1e300, -1e300, 1e-300])),))
    val(name, "0-d", f, (Host(lambda: np.float64(2.5)),))
    val(name, "empty", f, (Host(lambda: np.zeros((3, 0, 2))),))
    val(name, "bool list", f, ([True, False],))
for name in ("zeros", "ones", "empty"):
    f = _fn(name)
    bad(name, "negative dimension", f, ((3, -1),), ("-1", "negative"))
    bad(name, "float shape", f, ((2.0, 3),), ("2.0", "shape"), TypeError, ref=False)
    bad(name, "str shape", f, ("abc",), ("abc", "shape"))
    bad(name, "None shape", f, ((None,),), ("None", "shape"))
    bad(name, "dtype complex64", lambda m, nm=name: getattr(m, nm)(3, dtype=np.complex64), (), ("complex64",),
        TypeError,
        ref=False)
    bad(name, "dtype object", lambda m, nm=name: getattr(m, nm)(3, dtype=object), (), ("object",), TypeError, ref=False)
    bad(name, "dtype name no dtype has", lambda m, nm=name: getattr(m, nm)(3, dtype="notadtype"), (), ("notadtype",))
    if name != "empty":
        val(name, "0-d", lambda m, nm=name: getattr(m, nm)(()))
        val(name, "empty", lambda m, nm=name: getattr(m, nm)((4, 0)))
bad("full", "negative dimension", lambda m: m.full((2, -3), 1.0), (), ("-3", "negative"))
bad("full", "complex fill", lambda m: m.full(3, 1j), (), ("complex",), TypeError, ref=False)
bad("full", "str fill", lambda m: m.full(3, "abc"), (), ("abc", "<U3", "str"), TypeError, ref=False)
bad("full", "int fill out of int32", lambda m: m.full(3, 2**40, dtype=np.int32), (), ("1099511627776",),
    OverflowError)
val("full", "dtype float16", lambda m: m.full(3, 0.1, dtype=np.float16), ())
val("full", "NaN fill", lambda m: m.full((2, 2), np.nan, dtype=np.float32))
val("full", "-inf fill", lambda m: m.full(3, -np.inf, dtype=np.float32))
for name in ("zeros_like", "ones_like", "empty_like"):
    f = _fn(name)
    bad(name, "complex data", f, (COMPLEX,), ("complex",), TypeError, ref=False)
    bad(name, "object data", f, (OBJECT,), ("object",), TypeError, ref=False)
    bad(name, "dtype complex64", lambda m, x, nm=name: getattr(m, nm)(x, dtype=np.complex64), (F(3),), ("complex64",),
        TypeError, ref=False)
    bad(name, "None", f, (None,), ("None", "object"), TypeError, ref=False)
    bad(name, "dtype name no dtype has", lambda m, x, nm=name: getattr(m, nm)(x, dtype="nope"), (F(3),), ("nope",))
    if name != "empty_like":
        val(name, "0-d and empty", lambda m, x, nm=name: getattr(m, nm)(x), (F(),))
        val(name, "empty", lambda m, x, nm=name: getattr(m, nm)(x), (I(0, 4),))
bad("full_like", "str fill", lambda m, x: m.full_like(x, "abc"), (F(3),), ("abc", "<U3", "str"))
bad("full_like", "complex fill into float32", lambda m, x: m.full_like(x, 1j), (F(3),), ("complex",), TypeError,
    ref=False)
bad("full", "str fill, dtype float32", lambda m: m.full(3, "abc", dtype=np.float32), (), ("abc", "str"))
bad("full_like", "None", lambda m: m.full_like(None, 1.0), (), ("None", "object"), TypeError, ref=False)
val("full_like", "NaN fill", lambda m, x: m.full_like(x, np.nan), (F(2, 2),))
bad("arange", "step zero", lambda m: m.arange(0, 5, 0), (), ("step", "zero"))
bad("arange", "complex", lambda m: m.arange(1j), (), ("complex",), TypeError, ref=False)
bad("arange", "str", lambda m: m.arange("abc"), (), ("abc", "str"), TypeError, ref=False)
bad("arange", "None", lambda m: m.arange(None), (), ("None",), TypeError, ref=False)
bad("arange", "bool dtype", lambda m: m.arange(3, dtype=bool), (), ("bool",), TypeError, ref=False)
bad("arange", "int32 overflow", lambda m: m.arange(2**31 - 2, 2**31 + 2, dtype=np.int32), (), ("int32",),
    OverflowError, ref=False)
bad("arange", "NaN stop", lambda m: m.arange(0, np.nan), (), ("nan", "NaN"))
bad("arange", "inf stop", lambda m: m.arange(0, np.inf), (), ("inf", "size"))
val("arange", "empty (stop < start)", lambda m: m.arange(5, 2))
val("arange", "negative float step", lambda m: m.arange(1.0, -1.0, -0.25, dtype=np.float32))
# numpy raises AttributeError (no __dlpack__); vkbackend a TypeError naming the type
bad("from_dlpack", "None", lambda m, x: m.from_dlpack(x), (None,), ("NoneType", "__dlpack__"), TypeError, ref=False)
bad("from_dlpack", "str", lambda m, x: m.from_dlpack(x), ("abc",), ("str", "__dlpack__"), TypeError, ref=False)
bad("from_dlpack", "complex data", lambda m, x: m.from_dlpack(x), (COMPLEX,), ("complex",), TypeError, ref=False)
val("from_dlpack", "NaN data and 0-d", lambda m, x: m.from_dlpack(x),
    (Host(lambda: np.array([np.nan, np.inf], np.float32)),))

# -- reductions -----------------------------------------------------------------------------------
REDUCE = ["sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "mean", "var", "std", "all", "any"]
for name in REDUCE:
    f = _fn(name)
    meth = name if name not in ("amax", "amin") else None
    single = name in ("argmax", "argmin")
    bad(name, "axis out of range", lambda m, x, f=f: f(m, x, axis=2), (F(3, 4),), ("axis", "2"))
    bad(name, "negative axis out of range", lambda m, x, f=f: f(m, x, axis=-3), (F(3, 4),), ("axis", "-3"))
    # numpy (legacy) takes axis 0 of a 0-d array in reductions; vkbackend refuses it
    bad(name, "axis 0 of a 0-d array", lambda m, x, f=f: f(m, x, axis=0), (F(),), ("axis", "0"),
        np.exceptions.AxisError, ref=False)
    bad(name, "axis 1 of a 0-d array", lambda m, x, f=f: f(m, x, axis=1), (F(),), ("axis", "1"))
    bad(name, "bool axis", lambda m, x, f=f: f(m, x, axis=True), (F(3, 4),), ("axis", "True"), TypeError,
        ref=False)
    bad(name, "float axis", lambda m, x, f=f: f(m, x, axis=1.0), (F(3, 4),), ("axis", "1.0", "float"))
    bad(name, "str axis", lambda m, x, f=f: f(m, x, axis="0"), (F(3, 4),), ("axis", "'0'", "str"))
    bad(name, "list axis", lambda m, x, f=f: f(m, x, axis=[0]), (F(3, 4),), ("axis", "[0]", "list"))
    if single:
        bad(name, "tuple axis", lambda m, x, f=f: f(m, x, axis=(0,)), (F(3, 4),), ("axis", "(0,)", "tuple"))
        bad(name, "empty", f, (F(0, 3),), ("empty", "zero-size"))
        bad(name, "empty along the axis", lambda m, x, f=f: f(m, x, axis=1), (F(3, 0),), ("empty", "zero-size"))
    else:
        bad(name, "duplicate axes", lambda m, x, f=f: f(m, x, axis=(0, 0)), (F(3, 4),), ("duplicate", "repeated"))
        bad(name, "duplicate axes (negative)", lambda m, x, f=f: f(m, x, axis=(1, -1)), (F(3, 4),),
            ("duplicate", "repeated"))
        bad(name, "tuple axis out of range", lambda m, x, f=f: f(m, x, axis=(0, 5)), (F(3, 4),), ("axis", "5"))
    junk_inputs(name, f)
    if name in ("sum", "prod", "mean", "var", "std"):
        bad(name, "dtype complex64", lambda m, x, f=f: f(m, x, dtype=np.complex64), (F(3),), ("complex64",),
            TypeError, ref=False)
        bad(name, "dtype name no dtype has", lambda m, x, f=f: f(m, x, dtype="nope"), (F(3),), ("nope",))
    if name in ("var", "std"):
        bad(name, "str ddof", lambda m, x, f=f: f(m, x, ddof="a"), (F(3),), ("ddof", "'a'", "str"))
        bad(name, "None ddof", lambda m, x, f=f: f(m, x, ddof=None), (F(3),), ("ddof", "None"))
        val(name, "ddof past n (inf/NaN)", lambda m, x, f=f: f(m, x, ddof=5), (F(3),))
    if meth:
        bad(f"Array.{name}", "axis out of range", lambda m, x, nm=name: getattr(x, nm)(axis=5), (F(3, 4),),
            ("axis", "5"))
        val(f"Array.{name}", "float16", lambda m, x, nm=name: getattr(x, nm)(), (H(3),), rtol=F16_REDUCED)
        if not single:
            bad(f"Array.{name}", "duplicate axes", lambda m, x, nm=name: getattr(x, nm)(axis=(1, 1)), (F(3, 4),),
                ("duplicate", "repeated"))
        val(f"Array.{name}", "keepdims, axis tuple", lambda m, x, nm=name, s=single: getattr(x, nm)(
            axis=1 if s else (0, 2), keepdims=True), (F(3, 4, 5),),
            atol=2e-5)  # sums of 15 random terms that partly cancel: an absolute bound
    # values that are no error
    nan_data = F(2, 5, values=[1, np.nan, 3, -np.inf, 0, np.inf, 2, -1, np.nan, np.nan])
    val(name, "NaN and inf, axis None", f, (nan_data,))
    val(name, "NaN and inf, axis 1", lambda m, x, f=f: f(m, x, axis=1), (nan_data,))
    val(name, "0-d", f, (F(values=[2.5]),))
    val(name, "0-d, axis ()", lambda m, x, f=f, s=single: f(m, x) if s else f(m, x, axis=()), (F(values=[2.5]),))
    val(name, "empty kept axis", lambda m, x, f=f: f(m, x, axis=1), (F(0, 3),))
    val(name, "int32 0-d", f, (I(values=[-7]),))
    if name not in ("max", "min", "amax", "amin", "argmax", "argmin"):
        val(name, "empty reduced", f, (F(0),))
        val(name, "empty reduced, axis 0", lambda m, x, f=f: f(m, x, axis=0), (F(0, 3),))
        val(name, "empty reduced, keepdims", lambda m, x, f=f: f(m, x, axis=(0, 2), keepdims=True), (I(2, 3, 0),))
    else:
        bad(name, "empty reduced", f, (F(0),), ("empty", "zero-size"))
        if not single:
            bad(name, "empty reduced, axis 0", lambda m, x, f=f: f(m, x, axis=0), (F(0, 3),), ("zero-size", "empty"))
val("max", "-0 and 0", _fn("max"), (F(2, values=[-0.0, 0.0]),))
val("argmax", "first of equal maxima, inf", _fn("argmax"), (F(4, values=[np.inf, 1, np.inf, np.nan]),))
val("argmin", "first NaN wins", _fn("argmin"), (F(4, values=[-np.inf, 1, np.nan, np.nan]),))
val("all", "NaN counts as true", _fn("all"), (F(2, values=[np.nan, 1]),))
val("any", "-0 counts as false", _fn("any"), (F(2, values=[-0.0, 0]),))

# -- scans ---------------------------------------------------------------------------------------
SCAN_REF = {"cumsum": lambda x, axis=None, **k: np.cumsum(x, axis=axis, **k),
            "cumprod": lambda x, axis=None, **k: np.cumprod(x, axis=axis, **k),
            "cummax": lambda x, axis=None: np.maximum.accumulate(x.ravel() if axis is None or x.ndim == 0 else x,
                                                                axis=0 if axis is None else axis),
            "cummin": lambda x, axis=None: np.minimum.accumulate(x.ravel() if axis is None or x.ndim == 0 else x,
                                                                axis=0 if axis is None else axis)}


def _scan(name):
    return lambda m, *a, **k: (getattr(vk, name) if m is vk else SCAN_REF[name])(*a, **k)


for name in SCAN_REF:
    f = _scan(name)
    bad(name, "axis out of range", lambda m, x, f=f: f(m, x, axis=2), (F(3, 4),), ("axis", "2"))
    bad(name, "negative axis out of range", lambda m, x, f=f: f(m, x, axis=-3), (F(3, 4),), ("axis", "-3"))
    val(name, "axis 0 of a 0-d array", lambda m, x, f=f: f(m, x, axis=0), (F(values=[2.0]),))
    bad(name, "axis 1 of a 0-d array", lambda m, x, f=f: f(m, x, axis=1), (F(),), ("axis", "1"))
    bad(name, "bool axis", lambda m, x, f=f: f(m, x, axis=False), (F(3, 4),), ("axis", "False"), TypeError,
        ref=False)
    bad(name, "float axis", lambda m, x, f=f: f(m, x, axis=0.0), (F(3, 4),), ("axis", "0.0", "float"))
    bad(name, "tuple axis", lambda m, x, f=f: f(m, x, axis=(0,)), (F(3, 4),), ("axis", "(0,)", "tuple"), TypeError,
        ref=name in ("cumsum", "cumprod"))  # ufunc.accumulate takes (0,); np.cumsum does not
    junk_inputs(name, f)
    bad(name, "exclusive not a bool", lambda m, x, nm=name: getattr(vk, nm)(x, exclusive="yes"), (F(3),),
        ("exclusive", "yes"), TypeError, ref=False)
    bad(name, "reverse not a bool", lambda m, x, nm=name: getattr(vk, nm)(x, reverse=None), (F(3),),
        ("reverse", "None"), TypeError, ref=False)
    bad(name, "unknown algorithm", lambda m, x, nm=name: getattr(vk, nm)(x, algorithm="magic"), (F(3),),
        ("algorithm", "magic"), ValueError, ref=False)
    if name in ("cumsum", "cumprod"):
        bad(name, "dtype complex64", lambda m, x, f=f: f(m, x, dtype=np.complex64), (F(3),), ("complex64",),
            TypeError, ref=False)
        bad(name, "dtype name no dtype has", lambda m, x, f=f: f(m, x, dtype="nope"), (F(3),), ("nope",))
    nan_data = F(2, 5, values=[1, np.nan, 3, -np.inf, 0, np.inf, 2, -1, np.nan, np.inf])
    val(name, "NaN and inf, axis None", f, (nan_data,))
    val(name, "NaN and inf, axis 1", lambda m, x, f=f: f(m, x, axis=1), (nan_data,))
    val(name, "NaN and inf, axis 0", lambda m, x, f=f: f(m, x, axis=0), (nan_data,))
    val(name, "0-d", f, (F(values=[3.0]),))
    val(name, "empty", f, (F(0),))
    val(name, "empty, axis 1", lambda m, x, f=f: f(m, x, axis=1), (I(3, 0),))
    val(name, "empty, axis 0", lambda m, x, f=f: f(m, x, axis=0), (I(3, 0),))
    val(name, "bool input", f, (B(5, values=[True, False, True, True, False]),))

# -- layout --------------------------------------------------------------------------------------
bad("transpose", "axes of the wrong length", lambda m, x: m.transpose(x, (1, 0)), (F(2, 3, 4),), ("axes", "(1, 0)"))
bad("transpose", "repeated axes", lambda m, x: m.transpose(x, (0, 0, 1)), (F(2, 3, 4),), ("repeated", "axes"))
bad("transpose", "axis out of range", lambda m, x: m.transpose(x, (0, 1, 3)), (F(2, 3, 4),), ("axis", "3"))
bad("transpose", "bool axes", lambda m, x: m.transpose(x, (True, False)), (F(2, 3),), ("True", "axis", "bool"),
    TypeError, ref=False)
bad("transpose", "float axes", lambda m, x: m.transpose(x, (1.0, 0.0)), (F(2, 3),), ("1.0", "float", "axis"))
bad("transpose", "axes on a 0-d array", lambda m, x: m.transpose(x, (0,)), (F(),), ("axes", "(0,)", "axis"))
bad("transpose", "None", lambda m, x: m.transpose(x), (None,), ("NoneType", "None"), TypeError, ref=False)
bad("transpose", "complex", lambda m, x: m.transpose(x), (COMPLEX,), ("complex", "ndarray"), TypeError, ref=False)
bad("transpose", "host array (device arrays only)", lambda m, x: m.transpose(x),
    (Host(lambda: np.zeros((2, 3), np.float32)),), ("ndarray",), TypeError, ref=False)
val("transpose", "0-d", lambda m, x: m.transpose(x), (F(),))
val("transpose", "empty", lambda m, x: m.transpose(x, (1, 2, 0)), (F(2, 0, 3),))
val("transpose", "NaN", lambda m, x: m.transpose(x), (F(2, 2, values=[np.nan, np.inf, -np.inf, 0]),))
val("transpose", "float16 (its bits moved)", lambda m, x: m.transpose(x), (H(3, 5),))
val("Array.T", "empty and NaN", lambda m, x: x.T, (F(0, 3),))
bad("moveaxis", "source out of range", lambda m, x: m.moveaxis(x, 3, 0), (F(2, 3, 4),), ("source", "3", "axis"))
bad("moveaxis", "destination out of range", lambda m, x: m.moveaxis(x, 0, -4), (F(2, 3, 4),),
    ("destination", "-4", "axis"))
bad("moveaxis", "repeated source", lambda m, x: m.moveaxis(x, (0, 0), (1, 2)), (F(2, 3, 4),), ("repeated", "source"))
bad("moveaxis", "lengths differ", lambda m, x: m.moveaxis(x, (0, 1), (2,)), (F(2, 3, 4),), ("source", "destination"))
bad("moveaxis", "bool axis", lambda m, x: m.moveaxis(x, True, 0), (F(2, 3),), ("True", "axis", "bool"),
    TypeError, ref=False)
bad("moveaxis", "str axis", lambda m, x: m.moveaxis(x, "a", 0), (F(2, 3),), ("'a'", "str", "axis"))
val("moveaxis", "empty", lambda m, x: m.moveaxis(x, 0, -1), (I(0, 2, 3),))
bad("swapaxes", "axis1 out of range", lambda m, x: m.swapaxes(x, 2, 0), (F(2, 3),), ("axis", "2"))
bad("swapaxes", "axis2 out of range", lambda m, x: m.swapaxes(x, 0, -3), (F(2, 3),), ("axis", "-3"))
bad("swapaxes", "float axis", lambda m, x: m.swapaxes(x, 0.5, 1), (F(2, 3),), ("axis", "0.5", "float"))
bad("swapaxes", "bool axis", lambda m, x: m.swapaxes(x, False, 1), (F(2, 3),), ("axis", "False", "bool"),
    TypeError, ref=False)
val("swapaxes", "empty", lambda m, x: m.swapaxes(x, 0, 2), (B(2, 0, 3),))
bad("concatenate", "no arrays", lambda m: m.concatenate([]), (), ("at least one", "need"))
bad("concatenate", "ndim differs", lambda m, a, b: m.concatenate([a, b]), (F(2, 3), F(3)), ("dimensions",))
bad("concatenate", "shapes differ off the axis", lambda m, a, b: m.concatenate([a, b], axis=0), (F(2, 3), F(2, 4)),
    ("dimension 1", "3", "4"))
bad("concatenate", "axis out of range", lambda m, a, b: m.concatenate([a, b], axis=2), (F(2, 3), F(2, 3)),
    ("axis", "2"))
bad("concatenate", "0-d arrays", lambda m, a, b: m.concatenate([a, b]), (F(), F()), ("zero-dimensional",))
bad("concatenate", "None instead of a sequence", lambda m: m.concatenate(None), (), ("NoneType", "sequence"),
    TypeError, ref=False)
bad("concatenate", "None in the sequence", lambda m, a: m.concatenate([a, None]), (F(2),), ("NoneType", "array 1"),
    TypeError, ref=False)
val("concatenate", "int32 with uint32 (numpy: int64)", lambda m, a, b: m.concatenate([a, b]), (I(2), U(2)))
val("concatenate", "float16 with float32 (float32, as numpy)", lambda m, a, b: m.concatenate([a, b]), (H(2), F(2)))
bad("concatenate", "complex host array", lambda m, a, b: m.concatenate([a, b]), (F(4), COMPLEX), ("complex",),
    TypeError, ref=False)
bad("concatenate", "bool axis", lambda m, a, b: m.concatenate([a, b], axis=True), (F(2, 3), F(2, 3)),
    ("axis", "True", "bool"), TypeError, ref=False)
bad("concatenate", "host array that does not fit", lambda m, a, b: m.concatenate([a, b]),
    (F(2, 3), Host(lambda: np.zeros((2, 4), np.float32))), ("dimension 1", "3", "4"))
val("concatenate", "empty pieces", lambda m, a, b, c: m.concatenate([a, b, c], axis=1), (F(2, 0), F(2, 3), F(2, 0)))
val("concatenate", "axis None", lambda m, a, b: m.concatenate([a, b], axis=None), (F(2, 3), F(4)))
val("concatenate", "int32 with bool", lambda m, a, b: m.concatenate([a, b]), (I(2), B(3)))
val("concatenate", "NaN", lambda m, a, b: m.concatenate([a, b]), (F(1, values=[np.nan]), F(1, values=[np.inf])))
bad("stack", "shapes differ", lambda m, a, b: m.stack([a, b]), (F(2, 3), F(3, 2)), ("shape",))
bad("stack", "axis out of range", lambda m, a, b: m.stack([a, b], axis=3), (F(2, 3), F(2, 3)), ("axis", "3"))
bad("stack", "no arrays", lambda m: m.stack([]), (), ("at least one", "need"))
bad("stack", "None instead of a sequence", lambda m: m.stack(None), (), ("NoneType", "sequence"), TypeError,
    ref=False)
val("stack", "int32 with uint32 (numpy: int64)", lambda m, a, b: m.stack([a, b]), (I(2), U(2)))
val("stack", "host float32 then host float16 (float32, as numpy)", lambda m, a, b: m.stack([a, b]),
    (Host(lambda: np.zeros(2, np.float32)), Host(lambda: np.zeros(2, np.float16))))
val("stack", "0-d arrays", lambda m, a, b: m.stack([a, b]), (F(), F()))
val("stack", "empty, axis -1", lambda m, a, b: m.stack([a, b], axis=-1), (F(0, 2), F(0, 2)))
bad("strided_copy", "strides of the wrong length", lambda m, x: vk.strided_copy(x, (2, 2), (1,)), (F(6),),
    ("strides",), ValueError, ref=False)
bad("strided_copy", "view past the end", lambda m, x: vk.strided_copy(x, (4,), (2,)), (F(6),), ("outside", "6"),
    ValueError, ref=False)
bad("strided_copy", "negative offset", lambda m, x: vk.strided_copy(x, (2,), (1,), -1), (F(6),), ("offset", "-1"),
    ValueError, ref=False)
bad("strided_copy", "negative dimension", lambda m, x: vk.strided_copy(x, (-2,), (1,)), (F(6),),
    ("negative", "-2"), ValueError, ref=False)
bad("strided_copy", "float strides", lambda m, x: vk.strided_copy(x, (2,), (1.5,)), (F(6),), ("strides",),
    TypeError, ref=False)
bad("strided_copy", "None", lambda m: vk.strided_copy(None, (2,), (1,)), (), ("NoneType",), TypeError, ref=False)
bad("strided_copy", "float16", lambda m, x: vk.strided_copy(x, (2,), (1,)), (H(4),), ("float16",), TypeError,
    ref=False)


val("strided_copy", "zero and negative strides, NaN", lambda m, x: vk.strided_copy(x, (2, 3), (0, -1), 2)
    if m is vk else np.broadcast_to(x[2::-1], (2, 3)), (F(4, values=[np.nan, 1, np.inf, 3]),))
val("strided_copy", "empty view", lambda m, x: vk.strided_copy(x, (0, 3), (100, 1)) if m is vk
    else np.zeros((0, 3), np.float32), (F(2),))

# -- Array views -------------------------------------------------------------------------------------
bad("Array.reshape", "wrong size", lambda m, x: x.reshape(4, 2), (F(2, 3),), ("size 6", "(4, 2)"))
bad("Array.reshape", "two unknown dims", lambda m, x: x.reshape(-1, -1), (F(2, 3),), ("one unknown", "-1"))
# numpy reads any negative dim as the unknown one; vkbackend only -1
bad("Array.reshape", "negative dim", lambda m, x: x.reshape(-2, 3), (F(2, 3),), ("-2", "negative"), ValueError,
    ref=False)
bad("Array.reshape", "float dim", lambda m, x: x.reshape(2.0, 3), (F(2, 3),), ("float", "2.0"))
bad("Array.reshape", "str shape", lambda m, x: x.reshape("ab"), (F(2, 3),), ("str", "ab"))
bad("Array.reshape", "-1 into an empty array", lambda m, x: x.reshape(0, -1), (F(0, 3),), ("-1", "size 0"))
val("Array.reshape", "0-d to 1-d and back", lambda m, x: x.reshape(1).reshape(()), (F(values=[np.nan]),))
val("Array.reshape", "empty", lambda m, x: x.reshape(3, 0, 2), (F(0, 6),))
val("Array.ravel", "0-d and empty", lambda m, x: x.ravel(), (F(),))
val("Array.flatten", "empty", lambda m, x: x.flatten(), (F(2, 0),))
bad("Array.flatten", "with an order argument", lambda m, x: x.flatten("F"), (F(2, 3),), ("order", "'F'", "F",
    "argument"), TypeError, ref=False)
bad("Array.item", "size 3", lambda m, x: x.item(), (F(3),), ("size", "3"))
bad("Array.item", "empty", lambda m, x: x.item(), (F(0),), ("size", "0"))
val("Array.item", "NaN", lambda m, x: np.float32(x.item()), (F(1, values=[np.nan]),))
val("Array.tolist", "0-d and NaN", lambda m, x: np.array(x.tolist(), np.float32), (F(values=[np.nan]),))
val("Array.tolist", "empty", lambda m, x: np.array(x.tolist(), np.float32).reshape(0, 2), (F(0, 2),))
bad("Array.__len__", "0-d", lambda m, x: len(x), (F(),), ("0-d", "unsized"))
bad("Array.__bool__", "size 2", lambda m, x: bool(x), (F(2),), ("ambiguous", "more than one"))
bad("Array.__bool__", "empty", lambda m, x: bool(x), (F(0),), ("empty", "ambiguous"))
bad("Array.__float__", "size 2", lambda m, x: float(x), (F(2),), ("0-dimensional", "size", "length-1"))
bad("Array.__int__", "size 2", lambda m, x: int(x), (I(2),), ("0-dimensional", "size", "length-1"))
bad("Array.__float__", "1-d of one element", lambda m, x: float(x), (F(1),), ("0-dimensional", "size"))
bad("Array.__int__", "1-d of one element", lambda m, x: int(x), (I(1),), ("0-dimensional", "size"))
val("Array.__float__", "NaN", lambda m, x: np.float32(float(x)), (F(values=[np.nan]),))
val("Array.__int__", "int32 minimum", lambda m, x: np.int32(int(x)), (I(values=[-2**31]),))
bad("Array.__int__", "NaN", lambda m, x: int(x), (F(values=[np.nan]),), ("nan", "NaN"), syncs=True)
bad("Array.__int__", "inf", lambda m, x: int(x), (F(values=[np.inf]),), ("inf", "infinity"), syncs=True)
bad("Array.__index__", "a float 0-d array", lambda m, x: [1, 2, 3][x], (F(values=[1.0]),), ("float32", "integer"))
bad("Array.__index__", "an int array of 2", lambda m, x: [1, 2, 3][x], (I(2),), ("0-d", "scalar", "shape"))
val("Array.__index__", "an int 0-d array", lambda m, x: np.int32([10, 20, 30][x]), (I(values=[-1]),))
bad("Array.__getitem__", "int out of range", lambda m, x: x[3], (F(3, 2),), ("3", "bounds"))
bad("Array.__getitem__", "negative int out of range", lambda m, x: x[:, -3], (F(3, 2),), ("-3", "bounds"))
bad("Array.__getitem__", "too many indices", lambda m, x: x[0, 0, 0], (F(3, 2),), ("too many",))
bad("Array.__getitem__", "float index", lambda m, x: x[1.0], (F(3, 2),), ("float", "integers"))
bad("Array.__getitem__", "str index", lambda m, x: x["a"], (F(3, 2),), ("str", "integers"))
bad("Array.__getitem__", "None-and-dict index", lambda m, x: x[{"a": 1}], (F(3, 2),), ("dict", "integers"))
bad("Array.__getitem__", "two ellipses", lambda m, x: x[..., 0, ...], (F(3, 2),), ("ellipsis",))
bad("Array.__getitem__", "mask of the wrong shape", lambda m, x, k: x[k], (F(3, 2), B(4)), ("boolean", "3", "4"))
bad("Array.__getitem__", "float array index", lambda m, x, k: x[k], (F(3, 2), F(2)), ("float32", "integer"))
bad("Array.__getitem__", "index array out of range", lambda m, x: x[np.array([0, 5])], (F(3, 2),), ("5", "bounds"))
bad("Array.__getitem__", "index array out of range on axis 1", lambda m, x: x[:, [-3]], (F(3, 2),), ("-3", "bounds"))
bad("Array.__getitem__", "0-d indexed", lambda m, x: x[0], (F(),), ("too many", "0-dimensional"))
bad("Array.__getitem__", "two index arrays, one out of range", lambda m, x: x[[0, 1], [1, 2]], (F(3, 2),),
    ("2", "bounds", "axis 1"))
bad("Array.__getitem__", "two index arrays that do not broadcast", lambda m, x: x[[0, 1], [1, 0, 1]], (F(3, 2),),
    ("broadcast", "(2,)", "(3,)"))
bad("Array.__getitem__", "bool scalar index", lambda m, x: x[True], (F(3),), ("boolean", "bool"), IndexError,
    ref=False)
bad("Array.__getitem__", "float16 mask after a slice", lambda m, x, k: x[:, k], (F(3, 2), B(2)), ("mask", "first"),
    IndexError, ref=False)
val("Array.__getitem__", "empty slice, stepped", lambda m, x: x[3:1, ::-2], (F(4, 5),))
val("Array.__getitem__", "None and ellipsis", lambda m, x: x[None, ..., 1], (F(2, 3),))
val("Array.__getitem__", "empty index list", lambda m, x: x[[]], (F(3, 2),))
val("Array.__getitem__", "all-false mask", lambda m, x, k: x[k], (F(3, 2), B(3, values=[0, 0, 0])))
val("Array.__getitem__", "NaN gathered", lambda m, x: x[[2, 0, 2]], (F(3, values=[np.nan, 1, np.inf]),))
val("Array.__getitem__", "0-d by ()", lambda m, x: x[()], (F(values=[4.0]),))
val("Array.__getitem__", "two index arrays apart", lambda m, x: x[[0, -1], :, [[1], [0]]], (F(3, 2, 2),))

# -- gather / scatter -----------------------------------------------------------------------------------
bad("take", "index out of range", lambda m, x: m.take(x, [0, 6]), (F(2, 3),), ("6", "bounds"))
bad("take", "negative index out of range", lambda m, x: m.take(x, [-4], axis=1), (F(2, 3),), ("-4", "bounds"))
# numpy truncates float indices in take/put; vkbackend refuses them
bad("take", "float indices", lambda m, x: m.take(x, [0.5]), (F(2, 3),), ("float64", "integer", "cast"), TypeError,
    ref=False)
bad("take", "axis out of range", lambda m, x: m.take(x, [0], axis=2), (F(2, 3),), ("axis", "2"))
bad("take", "bool axis", lambda m, x: m.take(x, [0], axis=True), (F(2, 3),), ("axis", "True", "bool"), TypeError,
    ref=False)
bad("take", "unknown mode", lambda m, x: m.take(x, [0], mode="nope"), (F(2, 3),), ("mode", "nope"))
bad("take", "non-empty take from an empty axis", lambda m, x: m.take(x, [0], axis=1), (F(2, 0),),
    ("empty", "bounds", "0"))
bad("take", "None indices", lambda m, x: m.take(x, None), (F(2, 3),), ("NoneType", "None", "indices"), TypeError,
    ref=False)
bad("take", "float32 device indices", lambda m, x, i: m.take(x, i), (F(2, 3), F(2)), ("float32", "indices",
    "integer", "cast"))
bad("take", "bool indices", lambda m, x: m.take(x, [True, False]), (F(2, 3),), ("bool", "indices", "integer"),
    TypeError, ref=False)
bad("take", "complex input", lambda m, x: m.take(x, [0]), (COMPLEX,), ("complex", "ndarray"), TypeError, ref=False)
val("take", "float16 input (16-bit words)", lambda m, x: m.take(x, [0]), (H(4),))
val("take", "empty indices", lambda m, x: m.take(x, np.zeros((2, 0), np.int32), axis=1), (F(2, 3),))
val("take", "wrap and clip", lambda m, x: m.concatenate([m.take(x, [-7, 9], mode="wrap"),
                                                        m.take(x, [-7, 9], mode="clip")]), (F(5),))
val("take", "NaN", lambda m, x: m.take(x, [1, 1, 0]), (F(2, values=[np.inf, np.nan]),))
val("take", "0-d index", lambda m, x: m.take(x, 2), (F(4),))
bad("take_along_axis", "ndim differs", lambda m, x, i: m.take_along_axis(x, i, axis=1), (F(2, 3), I(2)),
    ("dimensions",))
bad("take_along_axis", "does not broadcast", lambda m, x, i: m.take_along_axis(x, i, axis=1),
    (F(2, 3), I(3, 2, values=[0] * 6)), ("broadcast", "(3, 2)", "shape"))
bad("take_along_axis", "axis out of range", lambda m, x, i: m.take_along_axis(x, i, axis=2),
    (F(2, 3), I(2, 1, values=[0, 0])), ("axis", "2"))
bad("take_along_axis", "index out of range", lambda m, x: m.take_along_axis(x, np.array([[3], [0]]), axis=1),
    (F(2, 3),), ("3", "bounds"))
bad("take_along_axis", "float indices", lambda m, x, i: m.take_along_axis(x, i, axis=1), (F(2, 3), F(2, 1)),
    ("float32", "integer"))
bad("take_along_axis", "axis None with 2-d indices", lambda m, x, i: m.take_along_axis(x, i, axis=None),
    (F(2, 3), I(2, 1, values=[0, 0])), ("single dimension", "1d", "1-d", "dimension"))
bad("take_along_axis", "None", lambda m, i: m.take_along_axis(None, i, axis=0), (I(1, values=[0]),),
    ("NoneType", "arr"), TypeError, ref=False)
val("take_along_axis", "empty", lambda m, x, i: m.take_along_axis(x, i, axis=1), (F(2, 3), I(2, 0)))
val("take_along_axis", "NaN, broadcast indices", lambda m, x, i: m.take_along_axis(x, i, axis=1),
    (F(2, 3, values=[np.nan, 1, 2, np.inf, -np.inf, 0]), I(1, 2, values=[0, 2])))


def _put(m, x, ind, v, **k):
    m.put(x, ind, v, **k)
    return x


def _put_along(m, x, ind, v, axis):
    m.put_along_axis(x, ind, v, axis)
    return x


bad("put", "index out of range", lambda m, x: _put(m, x, [7], 1.0), (F(2, 3),), ("7", "bounds"))
bad("put", "empty array", lambda m, x: _put(m, x, [0], 1.0), (F(0),), ("empty",))
bad("put", "unknown mode", lambda m, x: _put(m, x, [0], 1.0, mode="nope"), (F(3),), ("mode", "nope"))
bad("put", "float indices", lambda m, x: _put(m, x, [0.5], 1.0), (F(3),), ("float64", "ind", "cast"), TypeError,
    ref=False)
bad("put", "complex values", lambda m, x: _put(m, x, [0], 1j), (F(3),), ("complex",), TypeError, ref=False)
bad("put", "None values", lambda m, x: _put(m, x, [0], None), (F(3),), ("NoneType", "values", "None"),
    TypeError, ref=False)
bad("put", "host array (device arrays only)", lambda m, x: _put(m, x, [0], 1.0),
    (Host(lambda: np.zeros(3, np.float32)),), ("ndarray",), TypeError, ref=False)
val("put", "float values into int32 (cast, as numpy)", lambda m, x: _put(m, x, [0, 1], [1.5, -2.7]), (I(3),))
val("put", "NaN values, wrap", lambda m, x: _put(m, x, [-1, 7], [np.nan, np.inf], mode="wrap"), (F(2, 3),))
val("put", "empty v puts nothing", lambda m, x: _put(m, x, [0, 1], np.zeros(0, np.float32)), (F(3),))
bad("put_along_axis", "ndim differs", lambda m, x, i: _put_along(m, x, i, 1.0, 1), (F(2, 3), I(2)), ("dimensions",))
bad("put_along_axis", "index out of range", lambda m, x: _put_along(m, x, np.array([[3]]), 1.0, 1), (F(2, 3),),
    ("3", "bounds"))
bad("put_along_axis", "axis out of range", lambda m, x, i: _put_along(m, x, i, 1.0, -3),
    (F(2, 3), I(2, 1, values=[0, 0])), ("axis", "-3"))
bad("put_along_axis", "values do not broadcast", lambda m, x, i: _put_along(m, x, i, np.zeros(3), 1),
    (F(2, 3), I(2, 2, values=[0, 1, 0, 1])), ("broadcast", "(3,)", "shape"))
val("put_along_axis", "float values into uint32 (cast, as numpy)", lambda m, x, i: _put_along(m, x, i, 2.5, 0),
    (U(2, 3), I(1, 3, values=[0, 1, 0])))
val("put_along_axis", "NaN values", lambda m, x, i: _put_along(m, x, i, np.nan, 1),
    (F(2, 3), I(2, 1, values=[2, 0])))
bad("scatter_add", "bool target", lambda m, x, i: vk.scatter_add(x, i, 1), (B(3), I(1, values=[0])), ("bool",),
    TypeError, ref=False)
bad("scatter_add", "0-d target", lambda m, x: vk.scatter_add(x, [0], 1.0), (F(),), ("dimension",), ValueError,
    ref=False)
bad("scatter_add", "index out of range", lambda m, x: vk.scatter_add(x, [5], 1.0), (F(3),), ("5", "bounds"),
    IndexError, ref=False)
bad("scatter_add", "axis out of range", lambda m, x: vk.scatter_add(x, [[0]], 1.0, axis=2), (F(3, 2),),
    ("axis", "2"), np.exceptions.AxisError, ref=False)
bad("scatter_add", "indices ndim differs", lambda m, x: vk.scatter_add(x, [0], 1.0), (F(3, 2),),
    ("dimensions",), ValueError, ref=False)
bad("scatter_add", "indices larger off the axis", lambda m, x: vk.scatter_add(x, np.zeros((1, 3), int), 1.0),
    (F(3, 2),), ("larger", "dimension 1"), ValueError, ref=False)
bad("scatter_add", "float values into int32", lambda m, x: vk.scatter_add(x, [0], 1.5), (I(3),), ("float",
    "values"), TypeError, ref=False)
bad("scatter_add", "values neither broadcast nor cover", lambda m, x: vk.scatter_add(x, [[0, 1]], np.ones((1, 1, 2))),
    (F(3, 2),), ("values", "shape"), ValueError, ref=False)
bad("scatter_add", "float16 with str values", lambda m, x: vk.scatter_add(x, [0], "a"),
    (H(3),), ("values", "str"), TypeError, ref=False)
val("scatter_add", "NaN and inf values, duplicates", lambda m, x: vk.scatter_add(x, [0, 0, 2], [np.inf, 1, np.nan])
    if m is vk else (np.add.at(x, [0, 0, 2], np.array([np.inf, 1, np.nan], np.float32)), x)[1], (F(4),))
val("scatter_add", "empty indices", lambda m, x: vk.scatter_add(x, np.zeros((0, 2), int), 1.0) if m is vk else x,
    (F(3, 2),))
bad("compress_mask", "mask of the wrong shape", lambda m, x, k: vk.compress_mask(x, k) if m is vk else x[k],
    (F(3, 2), B(2)), ("3", "2", "boolean", "match"))
bad("compress_mask", "int mask", lambda m, x, k: vk.compress_mask(x, k), (F(3), I(3)), ("bool", "int32"),
    TypeError, ref=False)
val("compress_mask", "0-d masks", lambda m, x, t, f: tuple(vk.compress_mask(x, k) if m is vk else x[k] for k in (t, f)),
    (F(3, 2), B(values=[1]), B(values=[0])))
bad("compress_mask", "mask with more dims", lambda m, x, k: vk.compress_mask(x, k) if m is vk else x[k],
    (F(3), B(3, 1)), ("too many", "dimensions"))
bad("compress_mask", "None mask", lambda m, x: vk.compress_mask(x, None), (F(3),), ("NoneType", "mask"), TypeError,
    ref=False)
val("compress_mask", "empty", lambda m, x, k: vk.compress_mask(x, k) if m is vk else x[k], (F(0, 2), B(0)))
val("compress_mask", "NaN selected", lambda m, x, k: vk.compress_mask(x, k) if m is vk else x[k],
    (F(3, values=[np.nan, 1, np.inf]), B(3, values=[1, 0, 1])))
val("compress_mask", "float16 rows", lambda m, x, k: vk.compress_mask(x, k) if m is vk else x[k],
    (H(3, 2), B(3, values=[0, 1, 1])))
bad("nonzero", "0-d", lambda m, x: m.nonzero(x), (F(),), ("0d", "0-d"))
bad("nonzero", "complex", lambda m, x: m.nonzero(x), (COMPLEX,), ("complex",), TypeError, ref=False)
bad("nonzero", "None", lambda m, x: m.nonzero(x), (None,), ("NoneType", "None"), TypeError, ref=False)
# float16 is compared through an exact float32 copy (compaction.py's _words): numpy's answer
val("nonzero", "float16 (a subnormal, NaN, -0)", lambda m, x: m.nonzero(x),
    (F(2, 3, dtype="float16", values=[0, -0.0, 1e-7, np.nan, -2, 0]),))
val("flatnonzero", "float16 (the smallest subnormal, inf, -0)", lambda m, x: m.flatnonzero(x),
    (F(5, dtype="float16", values=[np.inf, 0, -0.0, 6e-8, 0]),))
val("nonzero", "NaN is nonzero, -0 is zero", lambda m, x: m.nonzero(x),
    (F(2, 3, values=[np.nan, 0, -0.0, np.inf, 1, 0]),))
val("nonzero", "empty", lambda m, x: m.nonzero(x), (I(0, 3),))
bad("flatnonzero", "complex", lambda m, x: m.flatnonzero(x), (COMPLEX,), ("complex",), TypeError, ref=False)
bad("flatnonzero", "str", lambda m, x: m.flatnonzero(x), ("abc",), ("str", "<U3"), TypeError, ref=False)
val("flatnonzero", "0-d and NaN", lambda m, x: m.flatnonzero(x), (F(values=[np.nan]),))
val("flatnonzero", "empty", lambda m, x: m.flatnonzero(x), (B(0),))

# -- sorting (primitives/sort.py) -------------------------------------------------------------------
for name in ("sort", "argsort"):
    junk_inputs(name, _fn(name))
    bad(name, "axis out of range", lambda m, x, nm=name: getattr(m, nm)(x, axis=2), (F(3, 4),), ("axis 2",))
    bad(name, "axis a float", lambda m, x, nm=name: getattr(m, nm)(x, axis=1.0), (F(3, 4),), ("axis", "1.0"),
        TypeError, ref=False)
    bad(name, "descending a str", lambda m, x, nm=name: getattr(vk, nm)(x, descending="yes"), (F(3),),
        ("descending",), TypeError, ref=False)
    val(name, "NaN, inf, -0 (stable)", lambda m, x, nm=name: getattr(m, nm)(x, **({} if m is vk else {"kind": "stable"})),
        (F(2, 6, values=[np.nan, 0, -np.inf, -0.0, np.inf, np.nan, 1, -0.0, 0, 1, -1, np.nan]),))
    val(name, "empty", _fn(name), (F(0, 3),))
bad("sort", "0-d", _fn("sort"), (F(),), ("axis -1", "dimension 0"))
val("argsort", "0-d (numpy: as one element)", _fn("argsort"), (F(values=[2.0]),))
bad("searchsorted", "side 'middle'", lambda m, a, v: m.searchsorted(a, v, side="middle"), (F(4), F(2)), ("side",))
bad("searchsorted", "2-D x1", lambda m, a, v: m.searchsorted(a, v), (F(2, 3), F(2)), ("1-D", "(2, 3)"), ValueError,
    ref=False)
val("searchsorted", "float16 x1, float32 x2 (searched as float32)", lambda m, a, v: m.searchsorted(a, v),
    (F(4, dtype="float16", values=[-1.5, 0.0, 0.0, 2.5]), F(3, values=[0.0, -2.0, 2.4])))
bad("searchsorted", "float sorter", lambda m, a, v, s: m.searchsorted(a, v, sorter=s), (F(3), F(2), F(3)),
    ("sorter",), TypeError, ref=False)
bad("searchsorted", "sorter of another length", lambda m, a, v, s: vk.searchsorted(a, v, sorter=s),
    (F(3), F(2), I(2)), ("sorter", "(3,)"), ValueError, ref=False)
val("searchsorted", "NaN, -0, inf; both sides",
    lambda m, a, v: (m.searchsorted(a, v), m.searchsorted(a, v, side="right")),
    (F(5, values=[-np.inf, -0.0, 1, 1, np.nan]), F(2, 3, values=[np.nan, 0, 1, np.inf, -1, -0.0])))
val("searchsorted", "empty", _fn("searchsorted"), (F(0), F(3)))
for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    junk_inputs(name, _fn(name))
    val(name, "NaNs distinct, -0 equal to 0", _fn(name),
        (F(2, 4, values=[np.nan, 1, -0.0, 0, np.nan, 1, 3, -np.inf]),), signed_zero=False)
    val(name, "empty", _fn(name), (F(0, 2),))
    val(name, "0-d", _fn(name), (I(values=[7]),))

# -- matmul ---------------------------------------------------------------------------------------------
bad("matmul", "0-d operand", lambda m, a, b: m.matmul(a, b), (F(), F(3)), ("0", "dimension"))
bad("matmul", "inner dims differ", lambda m, a, b: m.matmul(a, b), (F(2, 3), F(4, 2)), ("(2, 3)", "(4, 2)", "3", "4"))
bad("matmul", "vector inner dims differ", lambda m, a, b: m.matmul(a, b), (F(3), F(4)), ("3", "4"))
bad("matmul", "batch dims do not broadcast", lambda m, a, b: m.matmul(a, b), (F(2, 3, 4), F(3, 4, 5)),
    ("batch", "(2,", "(3,"))
val("matmul", "int32 with uint32 (numpy: int64)", lambda m, a, b: m.matmul(a, b), (I(2, 2), U(2, 2)))
bad("matmul", "bool operands", lambda m, a, b: m.matmul(a, b), (B(2, 2), B(2, 2)), ("bool",), TypeError, ref=False)
val("matmul", "float16 with float32 (float32, as numpy)", lambda m, a, b: m.matmul(a, b), (H(2, 3), F(3, 2)),
    rtol=1e-5, atol=1e-6)
bad("matmul", "complex operand", lambda m, a, b: m.matmul(a, b), (F(4, 4), COMPLEX), ("complex",), TypeError,
    ref=False)
bad("matmul", "None operand", lambda m, a: m.matmul(a, None), (F(2, 2),), ("NoneType", "None"), TypeError,
    ref=False)
bad("matmul", "str operand", lambda m, a: m.matmul(a, "ab"), (F(2, 2),), ("str",), TypeError, ref=False)
bad("matmul", "host operand that does not fit", lambda m, a, b: m.matmul(a, b),
    (F(2, 3), Host(lambda: np.zeros((4, 2), np.float32))), ("(2, 3)", "(4, 2)", "3", "4"))
val("matmul", "empty k", lambda m, a, b: m.matmul(a, b), (F(3, 0), F(0, 4)))
val("matmul", "empty m", lambda m, a, b: m.matmul(a, b), (F(0, 3), F(3, 4)))
val("matmul", "empty batch", lambda m, a, b: m.matmul(a, b), (F(0, 2, 3), F(3, 4)))
val("matmul", "NaN and inf propagate", lambda m, a, b: m.matmul(a, b),
    (F(2, 2, values=[np.nan, 1, 1, 1]), F(2, 2, values=[1, np.inf, 0, 1])), atol=0)
# a float32 dot's error scales with sum |a_i b_i|, not with the (possibly cancelling) sum: atol too
val("matmul", "vector @ vector", lambda m, a, b: m.matmul(a, b), (F(5), F(5)), rtol=1e-5, atol=1e-6)
bad("gemm", "inner dims differ", lambda m, a, b: vk.gemm(a, b), (F(2, 3), F(4, 2)), ("3", "4"), ValueError,
    ref=False)
bad("gemm", "1-d operand", lambda m, a, b: vk.gemm(a, b), (F(3), F(3, 2)), ("2 dimensions", "(3,)"), ValueError,
    ref=False)
bad("gemm", "beta without c", lambda m, a, b: vk.gemm(a, b, beta=1.0), (F(2, 2), F(2, 2)), ("beta", "c"),
    ValueError, ref=False)
bad("gemm", "c of the wrong shape", lambda m, a, b, c: vk.gemm(a, b, c=c, beta=1.0), (F(2, 3), F(3, 4), F(2, 3)),
    ("c", "(2, 3)", "(2, 4)"), ValueError, ref=False)
bad("gemm", "c int32", lambda m, a, b, c: vk.gemm(a, b, c=c, beta=1.0), (F(2, 3), F(3, 4), I(2, 4)),
    ("c", "int32"), TypeError, ref=False)
bad("gemm", "c a host array", lambda m, a, b: vk.gemm(a, b, c=np.zeros((2, 4), np.float32), beta=1.0),
    (F(2, 3), F(3, 4)), ("c", "ndarray"), TypeError, ref=False)
bad("gemm", "c is an operand", lambda m, a: vk.gemm(a, a, c=a, beta=1.0), (F(3, 3),), ("shares", "c"), ValueError,
    ref=False)
bad("gemm", "alpha a str", lambda m, a, b: vk.gemm(a, b, alpha="1"), (F(2, 2), F(2, 2)), ("alpha", "str"),
    TypeError, ref=False)
bad("gemm", "int32 operands", lambda m, a, b: vk.gemm(a, b), (I(2, 2), I(2, 2)), ("int32",), TypeError, ref=False)
val("gemm", "transposes, alpha, beta, NaN in c", lambda m, a, b, c: vk.gemm(a, b, True, True, 2.0, 0.5, c) if m is vk
    else 2.0 * (a.T @ b.T) + 0.5 * c, (F(3, 2), F(4, 3), F(2, 4, values=[np.nan] + [1] * 7)), rtol=1e-5, atol=1e-5)
val("gemm", "empty k with beta", lambda m, a, b, c: vk.gemm(a, b, beta=2.0, c=c) if m is vk else 2.0 * c,
    (F(2, 0), F(0, 3), F(2, 3)))
val("linalg.matmul", "int32 with uint32 (numpy: int64)", lambda m, a, b: vk.linalg.matmul(a, b) if m is vk
    else np.matmul(a, b), (I(2, 2), U(2, 2)))
bad("linalg.gemm", "int32 operands", lambda m, a, b: vk.linalg.gemm(a, b), (I(2, 2), I(2, 2)), ("int32",), TypeError,
    ref=False)

# -- nn: layer norm (torch.nn.functional; torch raises RuntimeError for the shape errors) ---------------------
bad("layer_norm", "normalized_shape not trailing", lambda m, x: vk.layer_norm(x, (3,)), (F(2, 4),),
    ("normalized_shape", "(3,)"), ValueError, ref=False)
bad("layer_norm", "empty normalized_shape", lambda m, x: vk.layer_norm(x, ()), (F(2, 4),), ("normalized_shape",),
    ValueError, ref=False)
bad("layer_norm", "negative normalized_shape", lambda m, x: vk.layer_norm(x, (-4,)), (F(2, 4),),
    ("normalized_shape", "-4", "negative"), ValueError, ref=False)
bad("layer_norm", "str normalized_shape", lambda m, x: vk.layer_norm(x, "4"), (F(2, 4),), ("normalized_shape",),
    TypeError, ref=False)
bad("layer_norm", "weight of the wrong shape", lambda m, x, w: vk.layer_norm(x, 4, w), (F(2, 4), F(3)),
    ("weight", "(3,)"), ValueError, ref=False)
bad("layer_norm", "bias of the wrong shape", lambda m, x, b: vk.layer_norm(x, 4, None, b), (F(2, 4), F(4, 1)),
    ("bias", "(4, 1)"), ValueError, ref=False)
bad("layer_norm", "int32 input", lambda m, x: vk.layer_norm(x, 4), (I(2, 4),), ("int32", "x"), TypeError, ref=False)
bad("layer_norm", "int32 weight", lambda m, x, w: vk.layer_norm(x, 4, w), (F(2, 4), I(4)), ("weight", "int32"),
    TypeError, ref=False)
bad("layer_norm", "None input", lambda m: vk.layer_norm(None, 4), (), ("NoneType", "x"), TypeError, ref=False)
bad("layer_norm", "negative eps", lambda m, x: vk.layer_norm(x, 4, eps=-1.0), (F(2, 4),), ("eps", "-1"), ValueError,
    ref=False)
bad("layer_norm", "NaN eps", lambda m, x: vk.layer_norm(x, 4, eps=float("nan")), (F(2, 4),), ("eps", "nan"),
    ValueError, ref=False)
bad("layer_norm", "str eps", lambda m, x: vk.layer_norm(x, 4, eps="a"), (F(2, 4),), ("eps",), TypeError, ref=False)
bad("layer_norm", "complex host input", lambda m, x: vk.layer_norm(x, 4), (COMPLEX,), ("complex",), TypeError,
    ref=False)


def _ln_ref(x, ns, w=None, b=None, eps=1e-5, rms=False):
    x64 = x.astype(np.float64)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    if rms:
        y = x64 / np.sqrt((x64 ** 2).mean(axis=axes, keepdims=True) + eps)
    else:
        mu = x64.mean(axis=axes, keepdims=True)
        y = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(axis=axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


val("layer_norm", "NaN in a row stays in that row", lambda m, x: vk.layer_norm(x, 4) if m is vk else _ln_ref(x, (4,)),
    (F(2, 4, values=[np.nan, 1, 2, 3, 1, 2, 3, 4]),), rtol=1e-5, atol=1e-5)
val("layer_norm", "inf in a row", lambda m, x: vk.layer_norm(x, 4) if m is vk else _ln_ref(x, (4,)),
    (F(2, 4, values=[np.inf, 1, 2, 3, 1, 2, 3, 4]),), rtol=1e-5, atol=1e-5)
val("layer_norm", "constant rows (eps only)", lambda m, x: vk.layer_norm(x, 4) if m is vk else _ln_ref(x, (4,)),
    (F(2, 4, values=[3] * 8),), atol=1e-6)
val("layer_norm", "empty batch", lambda m, x: vk.layer_norm(x, (3,)) if m is vk else _ln_ref(x, (3,)), (F(0, 3),))
val("layer_norm", "1-d input", lambda m, x: vk.layer_norm(x, 5) if m is vk else _ln_ref(x, (5,)), (F(5),),
    rtol=1e-5, atol=1e-5)
bad("rms_norm", "normalized_shape not trailing", lambda m, x: vk.rms_norm(x, (2, 4)), (F(4, 2),),
    ("normalized_shape", "(2, 4)"), ValueError, ref=False)
bad("rms_norm", "weight of the wrong shape", lambda m, x, w: vk.rms_norm(x, 4, w), (F(2, 4), F(5)), ("weight", "(5,)"),
    ValueError, ref=False)
bad("rms_norm", "bool input", lambda m, x: vk.rms_norm(x, 4), (B(2, 4),), ("bool",), TypeError, ref=False)
bad("rms_norm", "inf eps", lambda m, x: vk.rms_norm(x, 4, eps=float("inf")), (F(2, 4),), ("eps", "inf"), ValueError,
    ref=False)
bad("rms_norm", "dict input", lambda m: vk.rms_norm({"a": 1}, 4), (), ("dict", "x"), TypeError, ref=False)
val("rms_norm", "NaN and zero rows", lambda m, x: vk.rms_norm(x, 3, eps=1e-6) if m is vk else
    _ln_ref(x, (3,), eps=1e-6, rms=True), (F(2, 3, values=[np.nan, 1, 1, 0, 0, 0]),), rtol=1e-5, atol=1e-6)
val("rms_norm", "empty batch", lambda m, x: vk.rms_norm(x, 2) if m is vk else _ln_ref(x, (2,), rms=True), (F(0, 2),))
bad("layer_norm_vjp", "cotangent of the wrong shape", lambda m, x, g: vk.layer_norm_vjp(x, None, None, g, 4),
    (F(2, 4), F(4, 2)), ("cotangent", "(4, 2)"), ValueError, ref=False)
bad("layer_norm_vjp", "None cotangent", lambda m, x: vk.layer_norm_vjp(x, None, None, None, 4), (F(2, 4),),
    ("cotangent",), TypeError, ref=False)
bad("layer_norm_vjp", "weight of the wrong shape", lambda m, x, w, g: vk.layer_norm_vjp(x, w, None, g, 4),
    (F(2, 4), F(2), F(2, 4)), ("weight", "(2,)"), ValueError, ref=False)
bad("layer_norm_vjp", "int32 cotangent", lambda m, x, g: vk.layer_norm_vjp(x, None, None, g, 4), (F(2, 4), I(2, 4)),
    ("cotangent", "int32"), TypeError, ref=False)
bad("rms_norm_vjp", "cotangent of the wrong shape", lambda m, x, g: vk.rms_norm_vjp(x, None, g, 4),
    (F(2, 4), F(3, 4)), ("cotangent", "(3, 4)"), ValueError, ref=False)
bad("rms_norm_vjp", "normalized_shape not trailing", lambda m, x, g: vk.rms_norm_vjp(x, None, g, 3),
    (F(2, 4), F(2, 4)), ("normalized_shape", "3"), ValueError, ref=False)
bad("rms_norm_vjp", "int32 x", lambda m, x, g: vk.rms_norm_vjp(x, None, g, 4), (I(2, 4), F(2, 4)), ("int32",),
    TypeError, ref=False)

# -- nn: convolutions (torch raises RuntimeError for the shape errors, ValueError for bad padding strings) --------
CONVS = {1: "conv1d", 2: "conv2d", 3: "conv3d"}
TCONVS = {1: "conv_transpose1d", 2: "conv_transpose2d", 3: "conv_transpose3d"}
for nd, name in CONVS.items():
    sp, k = (5,) * nd, (3,) * nd
    f = lambda m, *a, nm=name, **kw: getattr(vk, nm)(*a, **kw)  # noqa: E731
    bad(name, "channels do not match", f, (F(1, 3, *sp), F(2, 4, *k)), ("channels", "3", "4"), ValueError, ref=False)
    bad(name, "channels not divisible by groups", lambda m, x, w, f=f: f(m, x, w, groups=2),
        (F(1, 3, *sp), F(2, 1, *k)),
        ("groups", "3", "2"), ValueError, ref=False)
    bad(name, "groups zero", lambda m, x, w, f=f: f(m, x, w, groups=0), (F(1, 2, *sp), F(2, 2, *k)), ("groups", "0"),
        ValueError, ref=False)
    bad(name, "groups a float", lambda m, x, w, f=f: f(m, x, w, groups=1.0), (F(1, 2, *sp), F(2, 2, *k)),
        ("groups", "1.0"), TypeError, ref=False)
    bad(name, "weight of the wrong ndim", f, (F(1, 2, *sp), F(2, 2)), ("weight", "dimensions"), ValueError, ref=False)
    bad(name, "input of the wrong ndim", f, (F(2, *(5,) * (nd + 2)), F(2, 2, *k)), ("input", "dimensions"), ValueError,
        ref=False)
    bad(name, "int32 input", f, (I(1, 2, *sp), F(2, 2, *k)), ("int32", "input"), TypeError, ref=False)
    bad(name, "float16 input, float32 weight", f, (H(1, 2, *sp), F(2, 2, *k)), ("float16", "float32"), TypeError,
        ref=False)
    bad(name, "complex weight", f, (F(1, 1, *sp), Host(lambda nd=nd: np.ones((1, 1) + (3,) * nd, np.complex64))),
        ("complex", "weight"), TypeError, ref=False)
    bad(name, "None weight", f, (F(1, 2, *sp), None), ("NoneType", "weight"), TypeError, ref=False)
    bad(name, "stride zero", lambda m, x, w, f=f: f(m, x, w, stride=0), (F(1, 2, *sp), F(2, 2, *k)), ("stride", "0"),
        ValueError, ref=False)
    bad(name, "negative padding", lambda m, x, w, f=f: f(m, x, w, padding=-1), (F(1, 2, *sp), F(2, 2, *k)),
        ("padding", "-1"), ValueError, ref=False)
    bad(name, "dilation zero", lambda m, x, w, f=f: f(m, x, w, dilation=0), (F(1, 2, *sp), F(2, 2, *k)),
        ("dilation", "0"), ValueError, ref=False)
    bad(name, "stride tuple of the wrong length", lambda m, x, w, f=f, nd=nd: f(m, x, w, stride=(1,) * (nd + 1)),
        (F(1, 2, *sp), F(2, 2, *k)), ("stride",), ValueError, ref=False)
    bad(name, "padding 'same' with stride 2", lambda m, x, w, f=f: f(m, x, w, stride=2, padding="same"),
        (F(1, 2, *sp), F(2, 2, *k)), ("same", "stride"), ValueError, ref=False)
    bad(name, "padding an unknown string", lambda m, x, w, f=f: f(m, x, w, padding="full"),
        (F(1, 2, *sp), F(2, 2, *k)), ("padding", "full"), ValueError, ref=False)
    bad(name, "kernel larger than the input", f, (F(1, 2, *(2,) * nd), F(2, 2, *k)), ("kernel", "larger"), ValueError,
        ref=False)
    bad(name, "bias of the wrong shape", lambda m, x, w, b, f=f: f(m, x, w, b), (F(1, 2, *sp), F(2, 2, *k), F(3)),
        ("bias", "(3,)"), ValueError, ref=False)
    bad(name, "empty channels", f, (F(1, 0, *sp), F(2, 0, *k)), ("empty", "channel"), ValueError, ref=False)
for nd, name in TCONVS.items():
    sp, k = (4,) * nd, (3,) * nd
    f = lambda m, *a, nm=name, **kw: getattr(vk, nm)(*a, **kw)  # noqa: E731
    bad(name, "channels do not match", f, (F(1, 3, *sp), F(2, 4, *k)), ("3", "2", "channels", "first dimension"),
        ValueError, ref=False)
    bad(name, "output_padding not below stride", lambda m, x, w, f=f: f(m, x, w, stride=2, output_padding=2),
        (F(1, 2, *sp), F(2, 2, *k)), ("output_padding", "2"), ValueError, ref=False)
    bad(name, "groups do not divide", lambda m, x, w, f=f: f(m, x, w, groups=2), (F(1, 3, *sp), F(3, 2, *k)),
        ("groups", "3", "2"), ValueError, ref=False)
    bad(name, "int32 weight", f, (F(1, 2, *sp), I(2, 2, *k)), ("int32", "weight"), TypeError, ref=False)
    bad(name, "stride negative", lambda m, x, w, f=f: f(m, x, w, stride=-1), (F(1, 2, *sp), F(2, 2, *k)),
        ("stride", "-1"), ValueError, ref=False)
    bad(name, "str input", f, ("abc", F(2, 2, *k)), ("str", "input"), TypeError, ref=False)
bad("conv_general", "flip not a bool", lambda m, x, w: vk.conv_general(x, w, flip="yes"),
    (F(1, 2, 5, 5), F(2, 2, 3, 3)),
    ("flip", "yes"), TypeError, ref=False)
bad("conv_general", "input_dilation zero", lambda m, x, w: vk.conv_general(x, w, input_dilation=0),
    (F(1, 2, 5, 5), F(2, 2, 3, 3)), ("input_dilation", "0"), ValueError, ref=False)
bad("conv_general", "channels do not match", lambda m, x, w: vk.conv_general(x, w), (F(1, 2, 5, 5), F(2, 3, 3, 3)),
    ("channels", "2", "3"), ValueError, ref=False)
bad("conv_general", "negative padding_hi larger than the input", lambda m, x, w: vk.conv_general(x, w, padding_hi=-4),
    (F(1, 2, 5, 5), F(2, 2, 3, 3)), ("kernel", "larger", "padding"), ValueError, ref=False)
bad("conv_general", "weight of 6 dims", lambda m, x, w: vk.conv_general(x, w),
    (F(1, 1, 2, 2, 2, 2), F(1, 1, 1, 1, 1, 1)),
    ("weight", "dimensions"), ValueError, ref=False)
bad("conv_vjp", "cotangent of the wrong shape", lambda m, x, w, g: vk.conv_vjp(x, w, g), (F(1, 2, 5, 5), F(2, 2, 3, 3),
    F(1, 2, 5, 5)), ("cotangent", "(1, 2, 3, 3)"), ValueError, ref=False)
bad("conv_vjp", "channels do not match", lambda m, x, w, g: vk.conv_vjp(x, w, g), (F(1, 3, 5, 5), F(2, 2, 3, 3),
    F(1, 2, 3, 3)), ("channels", "3", "2"), ValueError, ref=False)
bad("conv_vjp", "int32 cotangent", lambda m, x, w, g: vk.conv_vjp(x, w, g), (F(1, 2, 5, 5), F(2, 2, 3, 3),
    I(1, 2, 3, 3)), ("int32", "cotangent"), TypeError, ref=False)
bad("conv_general_vjp", "cotangent of the wrong shape", lambda m, x, w, g: vk.conv_general_vjp(x, w, g),
    (F(1, 2, 5, 5), F(2, 2, 3, 3), F(1, 2, 4, 4)), ("cotangent", "(1, 2, 3, 3)"), ValueError, ref=False)
bad("conv_transpose_vjp", "cotangent of the wrong shape", lambda m, x, w, g: vk.conv_transpose_vjp(x, w, g),
    (F(1, 2, 4, 4), F(2, 2, 3, 3), F(1, 2, 4, 4)), ("cotangent", "(1, 2, 6, 6)"), ValueError, ref=False)
bad("conv_transpose_vjp", "None cotangent", lambda m, x, w: vk.conv_transpose_vjp(x, w, None),
    (F(1, 2, 4, 4), F(2, 2, 3, 3)), ("cotangent", "NoneType"), TypeError, ref=False)


def _conv_ref(x, w, stride=1, padding=0):
    """torch's conv2d (cross-correlation), float64, for one batch of N, C, H, W."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, co, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out


val("conv2d", "NaN and inf propagate", lambda m, x, w: vk.conv2d(x, w, padding=1) if m is vk else
    _conv_ref(x, w, padding=1), (F(1, 2, 4, 4, values=[np.nan] + [1] * 15 + [np.inf] + [0] * 15), F(3, 2, 3, 3)),
    rtol=1e-4, atol=1e-4)
val("conv2d", "batch of 0", lambda m, x, w: vk.conv2d(x, w) if m is vk else _conv_ref(x, w),
    (F(0, 2, 4, 4), F(3, 2, 3, 3)))
val("conv2d", "unbatched", lambda m, x, w: vk.conv2d(x, w) if m is vk else _conv_ref(x[None], w)[0],
    (F(2, 4, 4), F(3, 2, 3, 3)), rtol=1e-4, atol=1e-4)

# -- linalg ---------------------------------------------------------------------------------------------------
bad("linalg.qr", "1-d input", lambda m, a: m.linalg.qr(a), (F(4),), ("1-dimensional", "two dimensions",
    "at least two"))
bad("linalg.qr", "unknown mode", lambda m, a: m.linalg.qr(a, mode="nope"), (F(3, 3),), ("mode", "nope"))
bad("linalg.qr", "int32 input (numpy: float64)", lambda m, a: m.linalg.qr(a), (I(3, 3),), ("int32",), TypeError,
    ref=False)
bad("linalg.qr", "complex input", lambda m, a: m.linalg.qr(a), (Host(lambda: np.eye(3, dtype=np.complex64)),),
    ("complex64",), TypeError, ref=False)
bad("linalg.qr", "float16 input", lambda m, a: m.linalg.qr(a), (H(3, 3),), ("float16",), TypeError, ref=False)
bad("linalg.qr", "None", lambda m: m.linalg.qr(None), (), ("None", "object", "NoneType"), TypeError, ref=False)
bad("linalg.qr", "str", lambda m: m.linalg.qr("abc"), (), ("str", "<U3"), TypeError, ref=False)
bad("linalg.qr", "mode not a str", lambda m, a: m.linalg.qr(a, mode=1), (F(3, 3),), ("mode", "1"))
val("linalg.qr", "r of a matrix with NaN", lambda m, a: np.isnan(np.asarray(m.linalg.qr(a, mode="r")))[0],
    (F(3, 3, values=[np.nan] + [1] * 8),))
val("linalg.qr", "r of an empty matrix", lambda m, a: m.linalg.qr(a, mode="r"), (F(0, 3),))
val("linalg.qr", "r of a zero matrix", lambda m, a: m.linalg.qr(a, mode="r"), (F(3, 2, values=[0] * 6),),
    signed_zero=False)
bad("linalg.householder_product", "too many reflectors", lambda m, h, t: vk.linalg.householder_product(h, t),
    (F(4, 3), F(4)), ("tau", "4"), ValueError, ref=False)
bad("linalg.householder_product", "M < N", lambda m, h, t: vk.linalg.householder_product(h, t), (F(2, 3), F(2)),
    ("M >= N", "(2, 3)"), ValueError, ref=False)
bad("linalg.householder_product", "batch dims differ", lambda m, h, t: vk.linalg.householder_product(h, t),
    (F(2, 4, 3), F(3, 3)), ("batch",), ValueError, ref=False)
bad("linalg.householder_product", "0-d tau", lambda m, h, t: vk.linalg.householder_product(h, t), (F(4, 3), F()),
    ("tau",), ValueError, ref=False)
bad("linalg.householder_product", "1-d h", lambda m, h, t: vk.linalg.householder_product(h, t), (F(4), F(1)),
    ("h", "dimension"), np.linalg.LinAlgError, ref=False)
bad("linalg.householder_product", "int32 tau", lambda m, h, t: vk.linalg.householder_product(h, t), (F(4, 3), I(3)),
    ("tau", "int32"), TypeError, ref=False)
bad("linalg.apply_q", "side unknown", lambda m, h, t, c: vk.linalg.apply_q(h, t, c, side="up"),
    (F(4, 3), F(3), F(4, 2)),
    ("side", "up"), ValueError, ref=False)
bad("linalg.apply_q", "c does not match", lambda m, h, t, c: vk.linalg.apply_q(h, t, c), (F(4, 3), F(3), F(3, 2)),
    ("c", "(3, 2)"), ValueError, ref=False)
bad("linalg.apply_q", "c batch differs", lambda m, h, t, c: vk.linalg.apply_q(h, t, c), (F(2, 4, 3), F(2, 3),
    F(3, 4, 2)), ("batch",), ValueError, ref=False)
bad("linalg.apply_q", "bool c", lambda m, h, t, c: vk.linalg.apply_q(h, t, c), (F(4, 3), F(3), B(4, 2)),
    ("c", "bool"), TypeError, ref=False)


# -- the other ufuncs (the array API's elementwise functions), rows made from numpy's answers ----------------
# For each vkbackend function named like a numpy ufunc that has no hand-written rows above: junk
# operands (numpy's type), complex and float16 (TypeError by design), and special values as float32,
# small int32 and bool inputs, which must compute what numpy computes, or raise numpy's error.
_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0)
_HANDWRITTEN = set(BINARY) | set(UNARY) | {"astype", "where", "matmul", "conj", "vecdot"}  # vecdot, conj: issue 18 rows


def _numpy_raises(fn, *args) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except TypeError:
            return True
    return False


def _ufunc_rows(name: str, uf: np.ufunc) -> None:
    f = _fn(name)
    if uf.nin == 1:
        operands = {"float32": (F(9, values=_SPECIALS),), "int32": (I(5, values=[-3, 0, 1, 5, 100]),),
                    "bool": (B(2, values=[True, False]),)}
    else:
        operands = {"float32": (F(9, 9, values=np.array(np.meshgrid(_SPECIALS, _SPECIALS))[0].ravel()),
                                F(9, values=_SPECIALS)),
                    "int32": (I(5, values=[-3, 0, 5, 100, 7]), I(5, values=[1, 2, 4, 3, 1])),
                    "bool": (B(4, values=[1, 1, 0, 0]), B(4, values=[1, 0, 1, 0]))}
    takes_float = not _numpy_raises(uf, *[a.host(None) for a in operands["float32"]])
    G = F if takes_float else I  # the operands' maker for the rows below  # noqa: N806
    # junk: vkbackend's TypeError naming it (numpy's answer varies: TypeError, AttributeError, or an
    # object array for the logical functions)
    junk_args = [(jn, junk) for jn, junk in JUNK.items()]
    for jn, junk in junk_args:
        args = (junk,) if uf.nin == 1 else (G(4), junk)
        bad(name, f"{jn} operand", f, args, JUNK_SAYS[jn], TypeError, ref=False)
    bad(name, "complex operand", f, (COMPLEX,) if uf.nin == 1 else (G(4), COMPLEX), ("complex",), TypeError, ref=False)
    if takes_float:  # computed in float32 and rounded where the result is float16, as numpy's
        val(name, "float16 operand", f, (H(4),) if uf.nin == 1 else (H(4), H(4)), rtol=1e-3)
    else:
        bad(name, "float16 operand", f, (H(4),) if uf.nin == 1 else (G(4), H(4)), ("float16",), TypeError, ref=False)
    if uf.nin == 2:
        bad(name, "shapes that do not broadcast", f, (G(3, 4), G(5)), ("(3, 4)", "(5,)"))
        val(name, "0-d and empty", f, (G(0, 2), G()), rtol=1e-5)
    else:
        val(name, "0-d", f, (G(values=[1]),), rtol=1e-5)
        val(name, "empty", f, (G(0, 3),))
    for dt, args in operands.items():
        hosts = [a.host(None) for a in args]
        if _numpy_raises(uf, *hosts):
            bad(name, f"{dt} input", f, args, (dt, "bool" if dt == "bool" else dt))
            continue
        with np.errstate(all="ignore"):
            out = np.result_type(uf(*hosts))
        if dt == "bool" and out == np.float16:  # numpy computes bool in float16; compare in float64
            val(name, "bool input", f, args, rtol=1e-5, atol=1e-6,
                ref_call=lambda m, *a: uf(*[x.astype(np.float64) for x in a]))
        else:
            val(name, f"{dt} input" + (" (NaN, inf, -0)" if dt == "float32" else ""), f, args, rtol=1e-5,
                atol=1e-6)


for _name in sorted(dir(vk)):
    _uf = getattr(np, _name, None)
    if (isinstance(_uf, np.ufunc) and _name not in _HANDWRITTEN and not _name.startswith("_")
            and callable(getattr(vk, _name)) and _uf.nin in (1, 2) and _uf.nout == 1):
        _ufunc_rows(_name, _uf)


# -- linalg extension (issue 18): products, diagonals, norms, QR-based solvers; conj/real/imag ------------
for nm, f in (("tensordot", lambda m: m.tensordot), ("linalg.tensordot", lambda m: m.linalg.tensordot)):
    bad(nm, "contracted lengths differ", lambda m, a, b, f=f: f(m)(a, b, axes=1), (F(2, 3), F(2, 3)),
        ("shape-mismatch",))
    val(nm, "inf and NaN", lambda m, a, b, f=f: f(m)(a, b, axes=1), (F(2, 2, values=[np.inf, 1, np.nan, 2]), F(2, 3)))
bad("tensordot", "axes past the rank", lambda m, a, b: m.tensordot(a, b, axes=3), (F(2, 3), F(3, 2)), ("axes",),
    ValueError, ref=False)
val("tensordot", "empty contraction", lambda m, a, b: m.tensordot(a, b, axes=1), (F(3, 0), F(0, 2)))
val("tensordot", "int32", lambda m, a, b: m.tensordot(a, b, axes=([0], [1])), (I(4, 3), I(2, 4)))
for nm, f in (("vecdot", lambda m: m.vecdot), ("linalg.vecdot", lambda m: m.linalg.vecdot)):
    bad(nm, "vector lengths differ", lambda m, a, b, f=f: f(m)(a, b), (F(3), F(4)), ("differ", "length"))
    val(nm, "NaN and inf, broadcast", lambda m, a, b, f=f: f(m)(a, b), (F(2, 3, values=[np.nan, 1, 2, 3, np.inf, 0]), F(3)))
bad("vecdot", "bool vectors (numpy: accepted)", lambda m, a, b: m.vecdot(a, b), (B(3), B(3)), ("numeric",), TypeError,
    ref=False)
val("vecdot", "empty vectors", lambda m, a, b: m.vecdot(a, b), (F(2, 0), F(2, 0)))
for nm in ("conj", "real", "imag"):
    bad(nm, "a list", lambda m, nm=nm: getattr(vk, nm)([1.0, 2.0]), (), ("vk.Array", "list"), TypeError, ref=False)
    val(nm, "NaN, inf, -0", lambda m, x, nm=nm: getattr(m, nm)(x), (F(4, values=[np.nan, np.inf, -0.0, 1]),))
bad("count_nonzero", "axis out of range", lambda m, x: m.count_nonzero(x, axis=2), (F(2, 3),), ("axis", "2"))
val("count_nonzero", "NaN and -0", lambda m, x: m.count_nonzero(x, axis=0), (F(2, 2, values=[np.nan, -0.0, 0, 1]),))
val("count_nonzero", "empty", lambda m, x: m.count_nonzero(x), (F(0, 3),))
bad("linalg.matrix_transpose", "1-d input", lambda m, x: m.linalg.matrix_transpose(x), (F(3),), ("at least 2",
    "dimensions"))
val("linalg.matrix_transpose", "NaN, empty", lambda m, x, e: (m.linalg.matrix_transpose(x), m.linalg.matrix_transpose(e)),
    (F(2, 3, values=[np.nan, 1, 2, 3, np.inf, -0.0]), F(2, 0, 3)))
bad("linalg.outer", "2-d input", lambda m, a, b: m.linalg.outer(a, b), (F(2, 2), F(3)), ("1-D", "1-dimensional"))
val("linalg.outer", "NaN and inf", lambda m, a, b: m.linalg.outer(a, b), (F(2, values=[np.nan, np.inf]), F(3)))
val("linalg.outer", "empty", lambda m, a, b: m.linalg.outer(a, b), (F(0), I(3)))
bad("linalg.cross", "2-vectors", lambda m, a, b: m.linalg.cross(a, b), (F(2), F(2)), ("3",))
val("linalg.cross", "NaN, broadcast", lambda m, a, b: m.linalg.cross(a, b), (F(2, 3, values=[np.nan, 1, 2, 3, 4, 5]), F(3)),
    atol=1e-5)  # differences of products of terms up to ~20: a few ulp of the terms, not of the result
val("linalg.cross", "int32", lambda m, a, b: m.linalg.cross(a, b), (I(4, 3), I(4, 3)))
bad("linalg.diagonal", "1-d input", lambda m, x: m.linalg.diagonal(x), (F(3),), ("at least 2", "two dimensions"))
val("linalg.diagonal", "offsets past the matrix", lambda m, x: tuple(m.linalg.diagonal(x, offset=k) for k in (-4, 5)),
    (F(2, 3, 4),))
val("linalg.diagonal", "NaN, offset", lambda m, x: m.linalg.diagonal(x, offset=-1), (F(3, 3, values=[np.nan] * 9),))
bad("linalg.trace", "1-d input", lambda m, x: m.linalg.trace(x), (F(3),), ("at least 2", "two dimensions"))
val("linalg.trace", "int32, empty", lambda m, x, e: (m.linalg.trace(x, dtype=np.int32), m.linalg.trace(e)),
    (I(2, 3, 3), F(2, 0, 3)))
bad("linalg.vector_norm", "ord a str (numpy: ValueError)", lambda m, x: m.linalg.vector_norm(x, ord="fro"), (F(3),),
    ("ord",), TypeError, ref=False)
val("linalg.vector_norm", "NaN, inf, big", lambda m, x: tuple(m.linalg.vector_norm(x, axis=1, ord=o) for o in (2, 1, np.inf, 0)),
    (F(3, 2, values=[np.nan, 1, np.inf, 2, 3e20, 4e20]),), rtol=1e-6)
val("linalg.vector_norm", "empty", lambda m, x: m.linalg.vector_norm(x, axis=0), (F(0, 3),))
val("linalg.matrix_norm", "ord 2, -2, nuc", lambda m, x: tuple(m.linalg.matrix_norm(x, ord=o) for o in (2, -2, "nuc")),
    (F(3, 3, values=[4, 1, 2, 1, 3, 0, 2, 0, 5]),), rtol=1e-5)
for nm in ("linalg.cholesky", "linalg.eigh", "linalg.eigvalsh", "linalg.pinv", "linalg.matrix_rank",
           "linalg.svd", "linalg.svdvals"):
    f = nm.split(".")[1]
    bad(nm, "int32 input (numpy: float64)", lambda m, x, f=f: getattr(m.linalg, f)(x), (I(2, 2),), ("int32",),
        TypeError, ref=False)
    bad(nm, "1-d input", lambda m, x, f=f: getattr(m.linalg, f)(x), (F(3),), ("at least 2", "dimensions",
        "two-dimensional"), ValueError, ref=False)
for nm in ("linalg.cholesky", "linalg.eigh", "linalg.eigvalsh"):
    f = nm.split(".")[1]
    bad(nm, "not square", lambda m, x, f=f: getattr(m.linalg, f)(x), (F(2, 3),), ("square",), ValueError, ref=False)
bad("linalg.cholesky", "upper not a bool", lambda m, x: m.linalg.cholesky(x, upper=1), (F(2, 2),), ("upper",),
    TypeError, ref=False)
bad("linalg.svd", "full_matrices not a bool", lambda m, x: m.linalg.svd(x, full_matrices="no"), (F(2, 2),),
    ("full_matrices",), TypeError, ref=False)
bad("linalg.pinv", "rtol a str", lambda m, x: m.linalg.pinv(x, rtol="big"), (F(2, 2),), ("rtol",), TypeError,
    ref=False)
val("linalg.eigvalsh", "symmetric", lambda m, x: m.linalg.eigvalsh(x), (F(3, 3, values=[4, 1, 2, 1, 3, 0, 2, 0, 5]),),
    rtol=1e-5, atol=1e-5)
val("linalg.svdvals", "rank 1", lambda m, x: m.linalg.svdvals(x), (F(2, 3, values=[1, 2, 3, 2, 4, 6]),),
    rtol=1e-5, atol=1e-5)
bad("linalg.matrix_norm", "1-d input", lambda m, x: m.linalg.matrix_norm(x), (F(3),), ("at least 2", "dimensions"),
    ValueError, ref=False)
val("linalg.matrix_norm", "NaN, inf", lambda m, x: tuple(m.linalg.matrix_norm(x, ord=o) for o in ("fro", 1, -np.inf)),
    (F(2, 2, values=[np.nan, 1, np.inf, 2]),))
for nm in ("linalg.det", "linalg.slogdet", "linalg.inv"):
    f = nm.split(".")[1]
    bad(nm, "not square", lambda m, x, f=f: getattr(m.linalg, f)(x), (F(2, 3),), ("square",))
    bad(nm, "int32 input (numpy: float64)", lambda m, x, f=f: getattr(m.linalg, f)(x), (I(2, 2),), ("int32",),
        TypeError, ref=False)
val("linalg.det", "NaN, 0x0", lambda m, x, e: (m.linalg.det(x), m.linalg.det(e)), (F(2, 2, values=[np.nan, 1, 2, 3]),
    F(3, 0, 0)))
val("linalg.det", "diagonal", lambda m, x: m.linalg.det(x), (F(3, 3, values=[2, 0, 0, 0, -3, 0, 0, 0, 0.5]),))
val("linalg.slogdet", "exactly singular", lambda m, x: m.linalg.slogdet(x), (F(2, 2, values=[0, 0, 0, 1]),))
val("linalg.inv", "diagonal", lambda m, x: m.linalg.inv(x), (F(2, 2, values=[2, 0, 0, 4]),), signed_zero=False)
bad("linalg.solve", "rows differ", lambda m, a, b: m.linalg.solve(a, b), (F(3, 3), F(4, 2)), ("3", "4", "match"))
val("linalg.solve", "empty", lambda m, a, b: m.linalg.solve(a, b), (F(0, 0), F(0, 2)))
val("linalg.solve", "diagonal, a vector", lambda m, a, b: m.linalg.solve(a, b), (F(2, 2, values=[2, 0, 0, 4]),
    F(2, values=[1, 2])), signed_zero=False)
bad("linalg.matrix_power", "n a float", lambda m, x: m.linalg.matrix_power(x, 1.5), (F(2, 2),), ("integer",))
val("linalg.matrix_power", "n = 0, empty", lambda m, x, e: (m.linalg.matrix_power(x, 0), m.linalg.matrix_power(e, 3)),
    (F(2, 3, 3), F(0, 0)))
bad("Array.__complex__", "a 1-d array", lambda m, x: complex(x), (F(2),), ("0-dimensional", "size-1", "scalar"))
# -- end of issue 18 rows


# -- the array API's other functions (where vkbackend has them) ---------------------------------------
def _has(*names):
    return all(hasattr(vk, n) for n in names)


if _has("round", "around"):
    for name in ("round", "around"):
        bad(name, "decimals a str", lambda m, x, nm=name: getattr(m, nm)(x, decimals="a"), (F(3),), ("decimals", "'a'",
            "str"))
        bad(name, "complex input", _fn(name), (COMPLEX,), ("complex",), TypeError, ref=False)
        bad(name, "None", _fn(name), (None,), ("NoneType", "None"), TypeError, ref=False)
        val(name, "NaN, inf, halves, decimals 1", lambda m, x, nm=name: getattr(m, nm)(x, decimals=1),
            (F(6, values=[np.nan, np.inf, -0.25, 0.35, 2.5, -1e30]),), upcast=False)  # numpy's float32 scaling
        val(name, "halves to even", _fn(name), (F(6, values=[0.5, 1.5, 2.5, -0.5, -2.5, -0.0]),))
        val(name, "int32", lambda m, x, nm=name: getattr(m, nm)(x, decimals=-1), (I(4, values=[15, 25, -35, 4]),))
if _has("broadcast_to"):
    bad("broadcast_to", "shape that does not fit", lambda m, x: m.broadcast_to(x, (3, 4)), (F(2, 4),), ("(2, 4)",
        "(3, 4)"))
    bad("broadcast_to", "negative dim", lambda m, x: m.broadcast_to(x, (-1, 4)), (F(4),), ("-1", "negative"))
    bad("broadcast_to", "fewer dims", lambda m, x: m.broadcast_to(x, (4,)), (F(2, 4),), ("(2, 4)", "(4,)"))
    bad("broadcast_to", "str shape", lambda m, x: m.broadcast_to(x, "ab"), (F(4),), ("ab", "str", "shape"), TypeError,
        ref=False)
    val("broadcast_to", "0-d to (3, 0)", lambda m, x: m.broadcast_to(x, (3, 0)), (F(values=[np.nan]),))
    val("broadcast_to", "NaN rows", lambda m, x: m.broadcast_to(x, (2, 3)), (F(3, values=[np.nan, np.inf, -0.0]),))
if _has("broadcast_arrays"):
    bad("broadcast_arrays", "shapes that do not broadcast", lambda m, a, b: m.broadcast_arrays(a, b), (F(2, 3), F(4)),
        ("(2, 3)", "(4,)"))
    val("broadcast_arrays", "0-d and empty", lambda m, a, b: tuple(m.broadcast_arrays(a, b)), (F(), I(0, 2)))
if _has("clip"):
    bad("clip", "complex bound", lambda m, x: m.clip(x, 0, 1j), (F(3),), ("complex",), TypeError, ref=False)
    bad("clip", "bounds that do not broadcast", lambda m, x, lo: m.clip(x, lo, 5.0), (F(3, 4), F(3)),
        ("(3, 4)", "(3,)"))
    val("clip", "NaN values and bounds", lambda m, x: m.clip(x, -1.0, 1.0),
        (F(5, values=[np.nan, np.inf, -np.inf, 0.5, -0.0]),))
    val("clip", "int32, min > max", lambda m, x: m.clip(x, 5, 1), (I(4, values=[0, 3, 7, -2]),))
if _has("concat"):
    bad("concat", "axis out of range", lambda m, a, b: m.concat([a, b], axis=2), (F(2, 3), F(2, 3)), ("axis", "2"))
    bad("concat", "no arrays", lambda m: m.concat([]), (), ("at least one", "need"))
    bad("concat", "shapes differ", lambda m, a, b: m.concat([a, b], axis=0), (F(2, 3), F(2, 4)), ("3", "4"))
    val("concat", "axis None, empty piece", lambda m, a, b: m.concat([a, b], axis=None), (F(2, 3), F(0)))
for name in ("cumulative_sum", "cumulative_prod"):
    if _has(name):
        f = _fn(name)
        bad(name, "2-d without an axis", f, (F(2, 3),), ("axis",))
        bad(name, "axis out of range", lambda m, x, f=f: f(m, x, axis=2), (F(2, 3),), ("axis", "2"))
        bad(name, "complex input", f, (COMPLEX,), ("complex", "ndarray"), TypeError, ref=False)
        val(name, "include_initial, NaN", lambda m, x, f=f: f(m, x, axis=1, include_initial=True),
            (F(2, 3, values=[1, np.nan, 2, np.inf, 1, 0.5]),), rtol=1e-6)
        val(name, "empty, include_initial", lambda m, x, f=f: f(m, x, include_initial=True), (I(0),))
if _has("diff"):
    bad("diff", "negative n", lambda m, x: m.diff(x, n=-1), (F(5),), ("-1", "order", "n"))
    bad("diff", "axis out of range", lambda m, x: m.diff(x, axis=1), (F(5),), ("axis", "1"))
    bad("diff", "0-d", lambda m, x: m.diff(x), (F(),), ("0d", "0-d", "dimension", "scalar"))
    val("diff", "NaN and inf", lambda m, x: m.diff(x), (F(5, values=[1, np.nan, np.inf, np.inf, 2]),))
    val("diff", "n past the length", lambda m, x: m.diff(x, n=4), (I(3),))
if _has("expand_dims"):
    bad("expand_dims", "axis out of range", lambda m, x: m.expand_dims(x, axis=3), (F(2, 3),), ("axis", "3"))
    bad("expand_dims", "repeated axis", lambda m, x: m.expand_dims(x, axis=(0, 0)), (F(2, 3),), ("repeated", "axis"))
    val("expand_dims", "0-d", lambda m, x: m.expand_dims(x, axis=-1), (F(values=[np.nan]),))
if _has("eye"):
    bad("eye", "negative size", lambda m: m.eye(-2), (), ("-2", "negative"))
    bad("eye", "float size", lambda m: m.eye(2.5), (), ("2.5", "float", "integer"))
    bad("eye", "complex dtype", lambda m: m.eye(2, dtype=np.complex64), (), ("complex64",), TypeError, ref=False)
    val("eye", "rectangular, k", lambda m: m.eye(3, 5, k=2))
    val("eye", "empty, k past the edge", lambda m: m.eye(0, 3, k=7))
if _has("flip"):
    bad("flip", "axis out of range", lambda m, x: m.flip(x, axis=2), (F(2, 3),), ("axis", "2"))
    val("flip", "0-d", lambda m, x: m.flip(x), (F(values=[1.0]),))
    val("flip", "axes, empty", lambda m, x: m.flip(x, axis=(0, 2)), (I(2, 0, 3),))
if _has("linspace"):
    bad("linspace", "negative num", lambda m: m.linspace(0, 1, num=-1), (), ("num", "-1"))
    bad("linspace", "float num", lambda m: m.linspace(0, 1, num=2.5), (), ("num", "2.5", "float", "integer"))
    val("linspace", "num 0 and 1", lambda m: m.concat([m.linspace(0, 1, num=0), m.linspace(2, 3, num=1)])
        if m is vk else np.concatenate([np.linspace(0, 1, num=0), np.linspace(2, 3, num=1)]))
    val("linspace", "NaN start", lambda m: m.linspace(np.nan, 1.0, num=3))
    val("linspace", "no endpoint", lambda m: m.linspace(-1.0, 1.0, num=5, endpoint=False), rtol=1e-6, atol=1e-7)
if _has("matrix_transpose"):
    bad("matrix_transpose", "1-d", lambda m, x: m.matrix_transpose(x), (F(3),), ("dimension", "2"))
    val("matrix_transpose", "batched, empty", lambda m, x: m.matrix_transpose(x), (F(2, 0, 3),))
bad("Array.mT", "1-d", lambda m, x: x.mT, (F(3),), ("dimension", "2"))
val("Array.mT", "batched NaN", lambda m, x: x.mT, (F(1, 2, 2, values=[np.nan, 1, np.inf, -0.0]),))
bad("Array.to_device", "an unknown device", lambda m, x: x.to_device("nope"), (F(3),), ("nope", "device"))
if _has("meshgrid"):
    bad("meshgrid", "unknown indexing", lambda m, a, b: m.meshgrid(a, b, indexing="zz"), (F(2), F(3)),
        ("indexing", "zz"))
    val("meshgrid", "ij, empty", lambda m, a, b: tuple(m.meshgrid(a, b, indexing="ij")), (F(2), I(0)))
if _has("permute_dims"):
    bad("permute_dims", "axes of the wrong length", lambda m, x: m.permute_dims(x, (1, 0)), (F(2, 3, 4),),
        ("axes", "(1, 0)"))
    bad("permute_dims", "repeated axes", lambda m, x: m.permute_dims(x, (0, 0, 1)), (F(2, 3, 4),), ("repeated", "axes"))
    val("permute_dims", "empty", lambda m, x: m.permute_dims(x, (2, 0, 1)), (I(2, 0, 3),))
if _has("repeat"):
    bad("repeat", "negative repeats", lambda m, x: m.repeat(x, -1), (F(3),), ("negative", "-1"))
    bad("repeat", "repeats of the wrong length", lambda m, x: m.repeat(x, [1, 2], axis=0), (F(3),), ("repeats", "2",
        "3", "broadcast"))
    bad("repeat", "axis out of range", lambda m, x: m.repeat(x, 2, axis=1), (F(3),), ("axis", "1"))
    val("repeat", "per-element counts, NaN", lambda m, x: m.repeat(x, [0, 2, 1]), (F(3, values=[np.nan, np.inf, 1]),))
    val("repeat", "0-d", lambda m, x: m.repeat(x, 3), (I(values=[4]),))
if _has("reshape"):
    bad("reshape", "wrong size", lambda m, x: m.reshape(x, (4, 2)), (F(2, 3),), ("size 6", "(4, 2)"))
    bad("reshape", "two unknown dims", lambda m, x: m.reshape(x, (-1, -1)), (F(2, 3),), ("one unknown", "-1"))
    val("reshape", "empty", lambda m, x: m.reshape(x, (3, 1, 0)), (F(0, 3),))
if _has("roll"):
    bad("roll", "float shift", lambda m, x: m.roll(x, 1.5), (F(3),), ("1.5", "float", "shift", "integer"), TypeError,
        ref=False)  # numpy truncates it
    bad("roll", "axis out of range", lambda m, x: m.roll(x, 1, axis=1), (F(3),), ("axis", "1"))
    val("roll", "two shifts on one axis (broadcast)", lambda m, x: m.roll(x, (1, 2), axis=(0,)), (F(3, 2),))
    val("roll", "flattened, negative and large shift", lambda m, x: m.roll(x, -7), (F(2, 3),))
    val("roll", "empty", lambda m, x: m.roll(x, 2, axis=1), (I(2, 0),))
if _has("squeeze"):
    bad("squeeze", "axis of size 2", lambda m, x: m.squeeze(x, axis=1), (F(1, 2),), ("size", "axis", "1"))
    bad("squeeze", "axis out of range", lambda m, x: m.squeeze(x, axis=2), (F(1, 2),), ("axis", "2"))
    val("squeeze", "to 0-d", lambda m, x: m.squeeze(x), (F(1, 1, values=[np.nan]),))
if _has("tile"):
    bad("tile", "negative reps", lambda m, x: m.tile(x, -1), (F(3),), ("negative", "-1"))
    bad("tile", "float reps", lambda m, x: m.tile(x, (1.5,)), (F(3),), ("1.5", "float", "integer"))
    val("tile", "more reps than dims, zero", lambda m, x: m.tile(x, (2, 0, 3)), (F(2),))
for name in ("tril", "triu"):
    if _has(name):
        bad(name, "None", lambda m, nm=name: getattr(m, nm)(None), (), ("NoneType", "None"), TypeError, ref=False)
        bad(name, "float k", lambda m, x, nm=name: getattr(m, nm)(x, k=0.5), (F(3, 3),), ("k", "0.5", "float",
            "integer"), TypeError, ref=False)
        val(name, "batched, k, NaN", lambda m, x, nm=name: getattr(m, nm)(x, k=-1),
            (F(2, 2, 3, values=[np.nan] * 12),))
        val(name, "empty", lambda m, x, nm=name: getattr(m, nm)(x, k=5), (I(0, 4),))
if _has("unstack"):
    bad("unstack", "0-d", lambda m, x: m.unstack(x), (F(),), ("0-d", "dimension", "scalar", "axis"))
    bad("unstack", "axis out of range", lambda m, x: m.unstack(x, axis=2), (F(2, 3),), ("axis", "2"))
    val("unstack", "axis 1, NaN", lambda m, x: tuple(m.unstack(x, axis=1)), (F(2, 2, values=[np.nan, 1, 2, np.inf]),))
if _has("can_cast", "result_type", "isdtype", "finfo", "iinfo"):
    bad("can_cast", "junk", lambda m: m.can_cast("nope", np.float32), (), ("nope",), TypeError, ref=False)
    bad("result_type", "junk", lambda m: m.result_type("nope"), (), ("nope",))
    bad("result_type", "None", lambda m: m.result_type(None, np.int32), (), ("None",), TypeError, ref=False)
    bad("isdtype", "unknown kind", lambda m: m.isdtype(np.dtype(np.float32), "nope"), (), ("nope", "kind"))
    val("isdtype", "a scalar type", lambda m: np.bool_(m.isdtype(np.float32, "real floating")))
    bad("finfo", "an integer dtype", lambda m: m.finfo(np.int32), (), ("int32",))
    bad("iinfo", "a float dtype", lambda m: m.iinfo(np.float32), (), ("float32",))
    bad("finfo", "junk", lambda m: m.finfo("nope"), (), ("nope",))
if hasattr(vk.Array, "__setitem__"):
    def _set(m, x, key, v):
        x[key] = v
        return x
    bad("Array.__setitem__", "index out of range", lambda m, x: _set(m, x, 5, 1.0), (F(3),), ("5", "bounds"))
    bad("Array.__setitem__", "value that does not broadcast", lambda m, x: _set(m, x, slice(None), np.zeros(2)),
        (F(3),), ("(2,)", "(3,)", "broadcast"))
    bad("Array.__setitem__", "str value", lambda m, x: _set(m, x, 0, "abc"), (F(3),), ("abc", "str"))
    bad("Array.__setitem__", "complex value", lambda m, x: _set(m, x, 0, 1j), (F(3),), ("complex",), TypeError,
        ref=False)
    bad("Array.__setitem__", "float key", lambda m, x: _set(m, x, 1.0, 0.0), (F(3),), ("float", "integer", "index"))
    val("Array.__setitem__", "NaN into a slice", lambda m, x: _set(m, x, slice(1, None, 2), np.nan), (F(5),))
    val("Array.__setitem__", "mask", lambda m, x, k: _set(m, x, k, -np.inf), (F(3), B(3, values=[1, 0, 1])))


@pytest.fixture(scope="module")
def base_rng():
    seed = vk.config.get("VKBACKEND_TEST_SEED")
    seed = np.random.SeedSequence().entropy % 2**32 if seed is None else seed
    print(f"random seed {seed}")
    return seed


def _marks(row):
    return [pytest.mark.xfail(strict=True, reason=row.bug)] if row.bug else []


@pytest.mark.parametrize("row", [pytest.param(r, id=r.id, marks=_marks(r)) for r in BAD])
def test_bad_input(row: Bad, base_rng):
    assert row.says, "a row names what its message must mention"
    rng = np.random.default_rng(base_rng)
    vk_args, np_args = materialize(row.args, rng)
    expected = row.expect
    if row.ref:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                row.call(np, *np_args)
            except Exception as e:  # noqa: BLE001 - numpy's type is the reference
                numpy_type = public_type(type(e))
            else:
                pytest.fail("numpy accepts this call: give the row ref=False and the documented type")
        if expected is not None:
            assert issubclass(expected, numpy_type), f"row's {expected} is not numpy's {numpy_type}"
        expected = numpy_type
    vk.synchronize()
    error = None
    with (_no_recording() if row.syncs else no_gpu_work()):
        try:
            row.call(vk, *vk_args)
        except Exception as e:  # noqa: BLE001 - checked below, after the guard's check
            error = e
    assert error is not None, f"no error; expected {getattr(expected, '__name__', expected)}"
    assert isinstance(error, expected), \
        f"raised {type(error).__name__} ({error}), expected {getattr(expected, '__name__', expected)}"
    msg = str(error).lower()
    assert any(s.lower() in msg for s in row.says), f"the message {str(error)!r} names none of {row.says}"


class _no_recording:
    """no_gpu_work, less the submit that reading a value takes."""
    def __enter__(self):
        self.before = vk.stats()

    def __exit__(self, *exc):
        after = vk.stats()
        for k in ("dispatches", "fills", "uploads"):
            assert after[k] == self.before[k], f"{k} changed on a bad-input path"
        return False


def _host(r):
    """A result as numpy: Arrays, tuples of them (nonzero, QR), numbers."""
    if isinstance(r, tuple):
        return tuple(_host(x) for x in r)
    return np.asarray(r)


def _compare(got, want, row: Val):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"got {type(got)}, numpy gives a {len(want)}-tuple"
        for g, w in zip(got, want):
            _compare(g, w, row)
        return
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, numpy's {want.shape}"
    if want.dtype == np.float16:
        assert got.dtype == np.float16, f"dtype {got.dtype}, numpy's float16"
    if want.dtype.kind == "f":
        assert got.dtype.kind == "f", f"dtype {got.dtype}, numpy's {want.dtype}"
        # numpy in float32 may overflow where float64 does not, and the other way: compare in float32
        with np.errstate(over="ignore"):  # float64 past float32's range is inf, as vkbackend's
            w32 = want.astype(np.float32) if want.dtype != np.float16 else want
        np.testing.assert_allclose(got.astype(np.float64), w32.astype(np.float64), rtol=row.rtol, atol=row.atol,
                                   equal_nan=True)
        if row.signed_zero:
            np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(w32[got == 0]),
                                          err_msg="the sign of zero")
    else:
        # numpy's dtype, or its 32-bit narrowing where vkbackend keeps 32 bits (sum of int32)
        narrowed = want.dtype if got.dtype == want.dtype else {"i": np.int32, "u": np.uint32}.get(want.dtype.kind, want.dtype)
        assert got.dtype == narrowed, f"dtype {got.dtype}, numpy's {want.dtype} (narrowed: {np.dtype(narrowed)})"
        np.testing.assert_array_equal(got, want.astype(narrowed))


@pytest.mark.parametrize("row", [pytest.param(r, id=r.id, marks=_marks(r)) for r in VAL])
def test_value_input(row: Val, base_rng):
    """NaN/inf as values, empty and 0-d arrays: no error, numpy's answer (float32 for float64)."""
    rng = np.random.default_rng(base_rng)
    vk_args, np_args = materialize(row.args, rng)
    if row.upcast:
        np_args = [x.astype(np.float64) if isinstance(x, np.ndarray) and x.dtype == np.float32 else x for x in np_args]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = (row.ref_call or row.call)(np, *np_args)
        got = _host(row.call(vk, *vk_args))
    _compare(got, want, row)


# ---- sizes no device holds, in a subprocess ---------------------------------------------------------------
@dataclasses.dataclass
class Huge:
    fn: str
    what: str
    code: str            # an expression of vk, np and what setup defines
    setup: str = ""
    says: tuple = ("byte", "memory", "size")   # the message names the size (or what made it)
    bug: str | None = None

    @property
    def id(self):
        return f"{self.fn}: {self.what}"


_N40, _B40 = str(2**40), str(2**42)   # elements, float32 bytes
HUGE = [
    Huge("zeros", "shape (2**40,)", "vk.zeros((2**40,))", says=(_B40,)),
    Huge("empty", "shape (2**20, 2**20)", "vk.empty((2**20, 2**20))", says=(_B40,)),
    Huge("ones", "2**64 elements (numpy: ValueError)", "vk.ones((2**62, 4))", says=(str(2**66), "big")),
    Huge("full", "2**33 int32s", "vk.full((2**33,), 1, dtype=np.int32)", says=(str(2**35),)),
    Huge("zeros", "past the device's largest buffer (lavapipe: 2**30 floats)",
         "vk.zeros(vk.device().max_buffer_size // 4 + 2**20)", says=("maxBufferSize",)),
    Huge("arange", "2**40 floats", "vk.arange(float(2**40))", says=(_B40,)),
    Huge("zeros_like", "a broadcast host view of 2**40", "vk.zeros_like(np.broadcast_to(np.float32(0), (2**40,)))",
         says=(_B40,)),
    Huge("full_like", "a broadcast host view of 2**40",
         "vk.full_like(np.broadcast_to(np.float32(0), (2**40,)), 2.0)", says=(_B40,)),
    Huge("empty_like", "a broadcast host view of 2**40",
         "vk.empty_like(np.broadcast_to(np.float32(0), (2**40,)))", says=(_B40,)),
    # lavapipe's loop budget refuses these first (LoopBudgetError, a ValueError), naming the item count
    Huge("add", "broadcast to 2**40", "vk.add(a, b)", "a = vk.zeros((2**20, 1)); b = vk.zeros((1, 2**20))",
         says=(_N40, _B40)),
    Huge("Array.__mul__", "broadcast to 2**40", "a * b", "a = vk.zeros((2**20, 1)); b = vk.zeros((1, 2**20))",
         says=(_N40, _B40)),
    Huge("matmul", "an outer product of 2**40", "vk.matmul(a, b)",
         "a = vk.zeros((2**20, 1)); b = vk.zeros((1, 2**20))", says=(_N40, _B40)),
    Huge("strided_copy", "a zero-stride view of 2**40", "vk.strided_copy(a, (2**40,), (0,))", "a = vk.zeros(1)",
         says=(_N40, _B40)),
    Huge("take", "2**40 broadcast host indices", "vk.take(a, np.broadcast_to(np.int32(0), (2**40,)))",
         "a = vk.zeros(3)", says=(_N40, _B40)),
    Huge("Array.__getitem__", "2**40 broadcast host indices", "a[np.broadcast_to(np.int32(0), (2**40,))]",
         "a = vk.zeros(3)", says=(_N40, _B40)),
    Huge("conv2d", "padding 2**20", "vk.conv2d(x, w, padding=2**20)",
         "x = vk.zeros((1, 1, 4, 4)); w = vk.zeros((1, 1, 3, 3))", says=("padding", "byte", "size")),
    Huge("conv_transpose2d", "stride 2**21", "vk.conv_transpose2d(x, w, stride=2**21)",
         "x = vk.zeros((1, 1, 4, 4)); w = vk.zeros((1, 1, 3, 3))", says=("stride", "byte", "size")),
    Huge("concatenate", "2**33 elements of broadcast host views",
         "vk.concatenate([np.broadcast_to(np.float32(0), (2**32,))] * 2)", says=(str(2**35),)),
    Huge("stack", "2**33 elements of broadcast host views",
         "vk.stack([np.broadcast_to(np.float32(0), (2**32,))] * 2)", says=(str(2**35), str(2**34))),
]

# One process runs the cases in turn, printing a line as each starts and one with its outcome; its
# address space is capped (4 GiB: lavapipe needs under 1), so a host allocation of the full size
# fails instead of paging. A case past its time (or a crash) ends the process: the next one resumes.
_HUGE_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import numpy as np
    import vkbackend as vk
    first, cases = int(sys.argv[1]), json.loads(sys.argv[2])
    for i, (setup, code) in enumerate(cases, first):
        ns = {"vk": vk, "np": np}
        exec(setup, ns)
        vk.synchronize()
        before = vk.stats()
        print(json.dumps({"i": i, "started": True}), flush=True)
        try:
            eval(code, ns)
            out = {"i": i, "type": None, "mro": [], "msg": "no error"}
        except BaseException as e:
            out = {"i": i, "type": type(e).__name__, "mro": [t.__name__ for t in type(e).__mro__],
                   "msg": str(e)[:500]}
        after = vk.stats()
        out["work"] = {k: after[k] - before[k] for k in ("dispatches", "fills", "submits", "uploads")}
        print(json.dumps(out), flush=True)
""")
HUGE_CASE_SECONDS = 6


def _run_huge(cases) -> dict:
    import selectors
    import time
    results, first = {}, 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while first < len(cases):
        p = subprocess.Popen([sys.executable, "-c", _HUGE_SCRIPT, str(first), json.dumps(cases[first:])],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
                             env=dict(os.environ, VKBACKEND_POISON="1"))
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        current, deadline = None, time.monotonic() + 120  # the first case: import and device start
        while True:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                p.kill()
                p.communicate()
                if current is None:
                    raise RuntimeError("the subprocess did not start")
                results[current] = {"type": "timeout", "mro": [], "msg": f"over {HUGE_CASE_SECONDS} s", "work": {}}
                break
            line = p.stdout.readline()
            if not line:  # exited
                _, err = p.communicate()
                if current is not None and current not in results:
                    results[current] = {"type": "crash", "mro": [], "work": {},
                                        "msg": f"exit {p.returncode}: {err[-2000:]}"}
                elif current is None:
                    raise RuntimeError(f"the subprocess failed: {err[-2000:]}")
                break
            r = json.loads(line)
            if r.get("started"):
                current, deadline = r["i"], time.monotonic() + HUGE_CASE_SECONDS
            else:
                results[r["i"]] = r
        sel.close()
        first = (current + 1) if current is not None else len(cases)
    return results


@pytest.fixture(scope="module")
def huge_results():
    return _run_huge([(h.setup, h.code) for h in HUGE])


@pytest.mark.parametrize("k", [pytest.param(k, id=h.id, marks=_marks(h)) for k, h in enumerate(HUGE)])
def test_huge_input(k, huge_results):
    """MemoryError or ValueError naming the size (or what made it), before any GPU work, and no crash."""
    h, r = HUGE[k], huge_results[k]
    assert r["type"] is not None, "no error"
    assert "MemoryError" in r["mro"] or "ValueError" in r["mro"], f"{r['type']}: {r['msg']}"
    assert not any(r["work"].values()), f"GPU work before the error: {r['work']}"
    assert any(s.lower() in r["msg"].lower() for s in h.says), f"the message {r['msg']!r} names none of {h.says}"


# ---- the catalogue covers the API ---------------------------------------------------------------
# Public names of vkbackend that take no input worth a row: types, dtypes, exceptions, modules and
# argument-free runtime calls.
NOT_FUNCTIONS = {
    "Array", "Device",                                   # classes (their methods are listed below)
    "CompileError", "DeviceError", "LoopBudgetError",    # exceptions
    "bool_", "float32", "int32", "uint32",               # dtypes
    "device", "synchronize", "stats", "memory_stats",    # no arguments
}
# Array members that are data, not calls, or numpy protocol hooks (tests/runtime/test_interop.py).
ARRAY_NOT_CALLS = {"shape", "dtype", "offset", "buffer", "size", "ndim", "nbytes", "empty", "numpy",
                   "__array__", "__array_ufunc__", "__array_function__", "__dlpack__", "__dlpack_device__",
                   "__array_priority__", "__hash__", "__repr__", "__init__"}
ARRAY_COMPUTED = {"T", "mT"}   # properties that compute a new array
ARRAY_DUNDERS = {"__setitem__", "__index__",
                 "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                 "__rtruediv__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__matmul__",
                 "__rmatmul__", "__neg__", "__pos__", "__abs__", "__getitem__", "__len__", "__bool__",
                 "__float__", "__int__", "__complex__"}


def public_api() -> set:
    import inspect
    names = set()
    for n in dir(vk):
        obj = getattr(vk, n)
        # constants (e, pi, newaxis), dtypes, classes and modules take no input
        if n.startswith("_") or n in NOT_FUNCTIONS or not callable(obj) or inspect.isclass(obj) \
                or inspect.ismodule(obj) or isinstance(obj, np.dtype):
            continue
        names.add(n)
    names |= {f"linalg.{n}" for n in dir(vk.linalg) if not n.startswith("_")
              and callable(getattr(vk.linalg, n)) and not inspect.isclass(getattr(vk.linalg, n))}
    for n in dir(vk.Array):
        member = inspect.getattr_static(vk.Array, n)
        if n in ARRAY_NOT_CALLS or (n.startswith("_") and n not in ARRAY_DUNDERS):
            continue
        if isinstance(member, property) and n not in ARRAY_COMPUTED:
            continue  # data (shape, device, ...)
        names.add(f"Array.{n}")
    return names


def test_catalogue_covers_api():
    covered = {r.fn for r in BAD} | {r.fn for r in VAL} | {h.fn for h in HUGE}
    missing = sorted(public_api() - covered)
    assert not missing, f"public functions without a row in tests/test_bad_inputs.py: {missing}"
