"""Supported dtypes and numpy's promotion rules, narrowed to 32-bit storage; float16 is held only."""
from __future__ import annotations

import numpy as np

float32 = np.dtype(np.float32)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
bool_ = np.dtype(np.bool_)
SUPPORTED = (float32, int32, uint32, bool_)
_COMPUTED = frozenset(SUPPORTED)
# Held in arrays, two per 32-bit word, and read by the ops that say so (the convolutions); every
# other op refuses it by name (through GLSL below) rather than reading packed halves as words.
float16 = np.dtype(np.float16)
HALF_USES = "float16 arrays support astype(), numpy(), reshape, views, matmul/gemm and the convolutions"


def computable(d, what: str = "this operation") -> np.dtype:
    """d, or TypeError if ops cannot compute in it (float16 is only held)."""
    if d == float16:
        raise TypeError(f"{what} does not take float16: {HALF_USES}; cast with .astype(np.float32) first")
    if d not in SUPPORTED:
        raise TypeError(f"{what}: unsupported dtype {d}: expected one of float32, int32, uint32, bool")
    return d


class _PerDtype(dict):
    """The tables below: looking up float16 (or anything else) names the problem."""
    def __missing__(self, d):
        computable(d)


# GLSL element type per dtype; bool is stored as one uint32 word (0 or 1).
GLSL = _PerDtype({float32: "float", int32: "int", uint32: "uint", bool_: "uint"})
# Storage dtype of the words in a buffer.
STORAGE = _PerDtype({float32: float32, int32: int32, uint32: uint32, bool_: uint32})


def check(dtype, held: bool = False) -> np.dtype:
    """The dtype as np.dtype, or TypeError if vkbackend cannot compute in it (held=True: hold it)."""
    if isinstance(dtype, np.dtype) and dtype in _COMPUTED:  # the common case, on every array's creation
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"unsupported dtype {dtype!r}: expected one of float32, int32, uint32, bool") from e
    if d not in SUPPORTED and not (held and d == float16):
        raise TypeError(f"unsupported dtype {d}: expected one of float32, int32, uint32, bool"
                        + (", or float16 to hold" if d == float16 else ""))
    return d


def words(size: int, d: np.dtype) -> int:
    """32-bit words that hold `size` elements of d."""
    return (size + 1) // 2 if d == float16 else size


def from_host(d: np.dtype) -> np.dtype:
    """The dtype an array of host dtype `d` gets when none is asked for (float64 -> float32, int64 -> int32)."""
    d = np.dtype(d)
    if d in SUPPORTED or d == float16:
        return d
    if d.kind == "f":
        return float32
    if d.kind == "i":
        return int32
    if d.kind == "u":
        return uint32
    raise TypeError(f"cannot make a GPU array from host dtype {d}: expected a bool, integer or float array")


def narrow(d: np.dtype, what: str) -> np.dtype:
    """Map a numpy result dtype to a supported one: floats compute in float32; int64 (int32 mixed
    with uint32) has no 32-bit home, so it is refused rather than silently wrapped."""
    if d in SUPPORTED:
        return d
    if d.kind == "f":
        return float32
    raise TypeError(f"{what}: numpy would promote to {d}, which vkbackend does not support; "
                    "cast one operand with .astype() first")


def is_float(d) -> bool:
    return np.dtype(d).kind == "f"
