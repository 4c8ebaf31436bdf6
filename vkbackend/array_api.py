"""vkbackend as a Python array API namespace (the 2024.12 standard): the version, the constants,
`bool` under the standard's name, the inspection namespace (`__array_namespace_info__()`), the
dtype functions (finfo, iinfo, can_cast, result_type, isdtype) and the statistical functions
vkbackend has under numpy's names (cumulative_sum and cumulative_prod over vk.cumsum/cumprod).

The dtypes are the standard's bool, int8-int64, uint8-uint64, float32 and float64 (numpy dtype
objects, as vk.float32 is np.dtype('float32')), those the device has the features for (the
inspection namespace lists them); float16 (vk.float16) and bfloat16 (vk.bfloat16, ml_dtypes')
are outside the standard's set; there is no complex type.
"""
from __future__ import annotations

import builtins
import math
import numbers
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from . import dtypes, runtime
from .array import Array
from .primitives.axes import normalize_axis
from .primitives.creation import check_device, full
from .primitives.layout import concatenate
from .primitives.operands import operand
from .primitives.scan import cumprod, cumsum

__all__ = ["__array_api_version__", "__array_namespace_info__", "e", "pi", "inf", "nan", "newaxis",
           "bool", "finfo", "iinfo", "can_cast", "result_type", "isdtype", "cumulative_sum",
           "cumulative_prod"]

__array_api_version__ = "2024.12"
# The versions whose namespace this one is (a superset of): what __array_namespace__ accepts.
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

_PyBool = builtins.bool  # `bool` is the dtype below, in this module as in the namespace
_SIGNED = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
_UNSIGNED = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
_FLOATS = (dtypes.float32, dtypes.float64)
_STANDARD = (dtypes.bool_,) + _SIGNED + _UNSIGNED + _FLOATS
_KINDS = {
    "bool": (dtypes.bool_,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _FLOATS,
    "complex floating": (),
    "numeric": _SIGNED + _UNSIGNED + _FLOATS,
}


# -- the inspection namespace ----------------------------------------------------------------

class _Info:
    """What `__array_namespace_info__()` returns: capabilities, devices and dtypes."""

    def capabilities(self) -> dict:
        # Boolean masks index (getitem) and assign scalars (setitem); unique_* is missing, so the
        # data-dependent shapes are not all there. Arrays take any number of dimensions.
        return {"boolean indexing": True, "data-dependent shapes": False, "max dimensions": None}

    def default_device(self):
        return runtime.get().device

    def devices(self) -> list:
        return [runtime.get().device]

    def default_dtypes(self, *, device=None) -> dict:
        check_device(device, "default_dtypes")
        return {"real floating": dtypes.float32, "complex floating": None, "integral": dtypes.int32,
                "indexing": dtypes.int32}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes vkbackend computes in on this device (the 8/16/64-bit ones need
        device features: dtypes.missing_features), by canonical name, of `kind` (None: all; a kind
        name; or a tuple of them)."""
        check_device(device, "dtypes")
        wanted = _STANDARD if kind is None else _dtypes_of_kind(kind, "dtypes")
        return {_name(d): d for d in _STANDARD if d in wanted and dtypes.available(d)}

    def __repr__(self) -> str:
        return "vkbackend.__array_namespace_info__()"


def __array_namespace_info__() -> _Info:
    return _Info()


def _name(d: np.dtype) -> str:
    return "bool" if d == dtypes.bool_ else d.name


def _dtypes_of_kind(kind, name: str) -> tuple:
    if isinstance(kind, tuple):
        return tuple(d for k in kind for d in _dtypes_of_kind(k, name))
    if not isinstance(kind, str) or kind not in _KINDS:
        raise ValueError(f"{name}: kind must be one of {sorted(_KINDS)} or a tuple of them, got {kind!r}")
    return _KINDS[kind]


# -- dtype functions -------------------------------------------------------------------------

def _dtype_of(value, name: str, what: str = "type") -> np.dtype:
    """A dtype argument (an array stands for its dtype) as np.dtype, or TypeError."""
    if isinstance(value, Array):
        return value.dtype
    if isinstance(value, (np.ndarray, np.generic)) or value is None or isinstance(value, (str, numbers.Number)):
        raise TypeError(f"{name}: `{what}` must be a dtype or a vk.Array, got {value!r}")
    try:
        return np.dtype(value)
    except TypeError:
        raise TypeError(f"{name}: `{what}` must be a dtype or a vk.Array, got {value!r}") from None


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def _info_dtype(value, name: str) -> np.dtype:
    """finfo/iinfo's argument: as _dtype_of, and a dtype name as numpy's finfo/iinfo take it; a
    string that names no dtype is numpy's ValueError."""
    if isinstance(value, str):
        try:
            return np.dtype(value)
        except TypeError:
            raise ValueError(f"{name}: {value!r} is not a dtype name") from None
    return _dtype_of(value, name)


def finfo(type, /) -> finfo_object:
    """Machine limits of float32, float64 (or float16 and bfloat16, the held types), as Python
    floats. Another dtype: ValueError, as numpy's for a dtype that is not floating-point."""
    d = _info_dtype(type, "finfo")
    if d not in _FLOATS + dtypes.HALVES:
        raise ValueError(f"finfo: expected a floating-point dtype vkbackend has (float32, float64, or float16 "
                         f"and bfloat16 held), got {d}")
    f = ml_dtypes.finfo(d) if d == dtypes.bfloat16 else np.finfo(d)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), d)


def iinfo(type, /) -> iinfo_object:
    """Machine limits of an integer dtype, as Python ints. Another dtype: ValueError, as numpy's."""
    d = _info_dtype(type, "iinfo")
    if d not in _SIGNED + _UNSIGNED:
        raise ValueError(f"iinfo: expected an integer dtype (int8-int64, uint8-uint64), got {d}")
    i = np.iinfo(d)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), d)


def _family(d: np.dtype) -> str:
    return {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}.get(dtypes.kind(d), "other")


def can_cast(from_, to, /) -> _PyBool:
    """Whether the standard's type promotion takes from_ (a dtype, or an array's) to `to`: within
    a kind only (bool, integers, floating; real floating to complex), never losing range. From an
    array the answer is the device's: only to a dtype vkbackend has."""
    src = _dtype_of(from_, "can_cast", "from_")
    dst = _dtype_of(to, "can_cast", "to")
    if isinstance(from_, Array) and not (dst in _STANDARD and dtypes.available(dst)):
        return False
    families = (_family(src), _family(dst))
    if families[0] != families[1] and families != ("float", "complex"):
        return False
    return _PyBool(np.can_cast(src, dst, "safe"))


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype of an operation on these arrays, dtypes and Python scalars (weak, as NEP 50 and
    the standard make them): numpy's promotion on the device's dtypes, as vkbackend's operations
    compute it (int and float mixed give float32; int32 with uint32 gives int64 where the device
    has it, as numpy's)."""
    keys, typed = [], False
    for k, x in enumerate(arrays_and_dtypes):
        if isinstance(x, Array):
            keys.append(x.dtype)
        elif isinstance(x, np.generic):
            keys.append(x.dtype)
        elif isinstance(x, (_PyBool, int, float)):
            keys.append(x)
            continue
        elif isinstance(x, complex):
            raise TypeError("result_type: vkbackend has no complex dtype")
        else:
            keys.append(_dtype_of(x, "result_type", f"arrays_and_dtypes[{k}]"))
        typed = True
    if not typed:
        raise ValueError("result_type: at least one array or dtype is required")
    return dtypes.promoted(keys, "result_type")


def isdtype(dtype, kind) -> _PyBool:
    """Whether `dtype` is `kind`: a dtype (equality), a kind name of the standard ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric'), or a tuple of these. float16 and bfloat16 count as 'real floating' (an extension). `dtype`
    may also be a numpy scalar type (np.float32), as numpy's isdtype takes it; not a string."""
    if isinstance(dtype, builtins.type) and issubclass(dtype, np.generic):
        try:
            dtype = np.dtype(dtype)
        except TypeError:  # abstract types (np.floating) have no dtype
            raise TypeError(f"isdtype: `dtype` must be a dtype or a concrete scalar type, got {dtype!r}") from None
    if not isinstance(dtype, np.dtype):
        raise TypeError(f"isdtype: `dtype` must be a dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        families = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
                    "real floating": "f", "complex floating": "c", "numeric": "iufc"}
        if kind not in families:
            raise ValueError(f"isdtype: unknown kind {kind!r}: expected a dtype, one of "
                             f"{sorted(families)}, or a tuple of these")
        return dtypes.kind(dtype) in families[kind]
    try:
        return dtype == np.dtype(kind)
    except TypeError:
        raise TypeError(f"isdtype: `kind` must be a dtype, a kind name or a tuple of them, got {kind!r}") from None


# -- cumulative_sum / cumulative_prod --------------------------------------------------------

def _cumulative(name: str, scan, identity, x, axis, dtype, include_initial) -> Array:
    x = operand(x, name, "x", wide=True)
    if not isinstance(include_initial, (_PyBool, np.bool_)):
        raise TypeError(f"{name}: include_initial must be a bool, got {include_initial!r}")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: an axis is required for arrays of more than one dimension "
                             f"(got shape {x.shape})")
        axis = 0
    else:
        axis = normalize_axis(axis, max(x.ndim, 1), name)
    out = scan(x, axis=axis if x.ndim else None, dtype=dtype)  # 0-d: numpy's shape (1,)
    if not include_initial:
        return out
    slab = list(out.shape)
    slab[axis] = 1
    return concatenate([full(tuple(slab), identity, out.dtype), out], axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False) -> Array:
    """The standard's cumulative_sum over vk.cumsum: axis optional for 1-D input only;
    include_initial starts the axis with 0 (its length N + 1). int32/uint32 sums wrap."""
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False) -> Array:
    """The standard's cumulative_prod over vk.cumprod (include_initial starts with 1)."""
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def namespace_version(api_version, name: str = "__array_namespace__") -> None:
    """ValueError unless api_version is None or a version this namespace implements."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"{name}: api_version must be None or one of {API_VERSIONS}, got {api_version!r}")


bool = dtypes.bool_  # noqa: A001 (the standard's name for the dtype)
