"""dtypes: the 32-bit ones every op computes in, the wider and narrower ones some ops take, and
numpy's promotion rules."""
from __future__ import annotations

import ml_dtypes
import numpy as np

float32 = np.dtype(np.float32)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
bool_ = np.dtype(np.bool_)
SUPPORTED = (float32, int32, uint32, bool_)
_COMPUTED = frozenset(SUPPORTED)
# Held in arrays, two per 32-bit word, on any device, and read by the ops that say so; every other
# op refuses it by name (through GLSL below) rather than reading packed halves as words. Ops that
# read or write the halves as 16-bit words (arithmetic in float32 rounded as numpy's float16 loops,
# gathers, assignment, joins) need HALF_FEATURES (half_words checks them).
float16 = np.dtype(np.float16)
# bfloat16 (ml_dtypes', numpy's extension type, as JAX and torch's .numpy() use it) is held and
# computed the same way: its bits as 16-bit words, arithmetic in float32 rounded to nearest even.
bfloat16 = np.dtype(ml_dtypes.bfloat16)
HALVES = (float16, bfloat16)
HALF_USES = ("float16 and bfloat16 arrays support creation, astype(), numpy(), views, transposes, joins, indexing and "
             "assignment (put, take/put_along_axis too), the elementwise functions and operators, diff, "
             "reductions, count_nonzero, scans, sorting and searchsorted, matmul/gemm, tensordot, vecdot, "
             "outer, cross, the norms, scatter_add, the convolutions and layer/RMS norm (in float32); "
             "not the decompositions of vk.linalg (nor does numpy's); bfloat16's convolutions run float32's "
             "kernels on widened copies")
HALF_FEATURES = ("storageBuffer16BitAccess", "shaderInt16")

int8, int16, int64 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int64)
uint8, uint16, uint64 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint64)
float64 = np.dtype(np.float64)
# Packed at their own width in the buffer (int8: four a word, float64: one per two words). They
# need device features; the ops that take them say so (WIDE_USES), every other op refuses them.
WIDE = (int8, int16, int64, uint8, uint16, uint64, float64)
WIDE_USES = ("they support the array functions, elementwise functions and operators, reductions, scans, "
             "sorting, indexing, matmul, tensordot, vecdot, trace, the vector norms, and in float64 "
             "gemm, layer and RMS norm and the linear algebra of vk.linalg (qr, cholesky, eigh, svd, "
             "solve, det, inv, pinv, ...), and scatter_add; not yet the convolutions")
# dtype -> (GLSL element type in a buffer, GLSL type computed in, the Vulkan features it needs).
# 8/16-bit integers compute as 32-bit ones and wrap when stored, as numpy's do.
_WIDE = {
    int8: ("int8_t", "int", ("storageBuffer8BitAccess", "shaderInt8")),
    uint8: ("uint8_t", "uint", ("storageBuffer8BitAccess", "shaderInt8")),
    int16: ("int16_t", "int", ("storageBuffer16BitAccess", "shaderInt16")),
    uint16: ("uint16_t", "uint", ("storageBuffer16BitAccess", "shaderInt16")),
    int64: ("int64_t", "int64_t", ("shaderInt64",)),
    uint64: ("uint64_t", "uint64_t", ("shaderInt64",)),
    float64: ("double", "double", ("shaderFloat64", "shaderInt64")),  # math64.glsl works on the bits as uint64
}


def is_half(d) -> bool:
    """float16 or bfloat16: held as 16-bit words, computed in float32."""
    return d == float16 or d == bfloat16


def kind(d: np.dtype) -> str:
    """numpy's kind letter of d, with bfloat16 a float ('f'; ml_dtypes' type has kind 'V')."""
    return "f" if d == bfloat16 else d.kind


def missing_features(d: np.dtype) -> tuple:
    """The Vulkan features dtype `d` needs that the device lacks (empty: usable); float16's and
    bfloat16's are those their arithmetic needs (HALF_FEATURES: holding them needs none)."""
    need = _WIDE[d][2] if d in _WIDE else HALF_FEATURES if is_half(d) else ()
    if not need:
        return ()
    from . import runtime  # the device's features, opened on first use
    have = runtime.get().device.features
    return tuple(f for f in need if f not in have)


def half_words(what: str, d: np.dtype = float16) -> np.dtype:
    """d (float16 or bfloat16), for an op that computes on it or moves it as 16-bit words;
    TypeError naming the features the device lacks."""
    missing = missing_features(d)
    if missing:
        raise TypeError(f"{what}: {d} here needs the Vulkan feature{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)} (its halves are read and written as 16-bit words), which this "
                        "device does not have; cast with .astype(np.float32)")
    return d


def computed_half(d: np.dtype, what: str) -> np.dtype | None:
    """d where it is a half (its 16-bit words checked against the device: half_words), else None:
    for the ops that compute a half in float32 and round their result back to it."""
    return half_words(what, d) if is_half(d) else None


def available(d: np.dtype) -> bool:
    return (d in _COMPUTED or d in _WIDE) and not missing_features(d) or is_half(d)


def _usable(d: np.dtype) -> np.dtype:
    """d, or TypeError naming the features the device lacks for it."""
    missing = missing_features(d)
    if missing:
        raise TypeError(f"dtype {d} needs the Vulkan feature{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)}, which this device does not have")
    return d


def glsl(d: np.dtype) -> str:
    """The GLSL type of d's elements in a buffer (bool: a uint32 word each)."""
    return _WIDE[d][0] if d in _WIDE else GLSL[d]


def glsl_compute(d: np.dtype) -> str:
    """The GLSL type d computes in."""
    return _WIDE[d][1] if d in _WIDE else GLSL[d]


_HOME = {"f": "float32", "i": "int32", "u": "uint32"}  # the 32-bit dtype of each kind


def home32(d: np.dtype) -> np.dtype:
    """The 32-bit dtype an 8/16-bit one computes in, exactly and order-preserving (float16,
    bfloat16: float32; int8/int16: int32; uint8/uint16: uint32); any other dtype (bool too) itself."""
    return np.dtype(_HOME[kind(d)]) if d.itemsize < 4 and kind(d) in _HOME else d


def computable(d, what: str = "this operation") -> np.dtype:
    """d, or TypeError if ops cannot compute in it (float16 and bfloat16 are only held)."""
    if is_half(d):
        raise TypeError(f"{what} does not take {d}: {HALF_USES}; cast with .astype(np.float32) first")
    if d in _WIDE:
        raise TypeError(f"{what} does not take {d} arrays yet ({WIDE_USES}); cast with "
                        f".astype(np.{_HOME[d.kind]}) first")
    if d not in SUPPORTED:
        raise TypeError(f"{what}: unsupported dtype {d}: expected one of float32, int32, uint32, bool")
    return d


class _PerDtype(dict):
    """The tables below: looking up a half (or anything else) names the problem."""
    def __missing__(self, d):
        computable(d)


# GLSL element type per dtype; bool is stored as one uint32 word (0 or 1).
GLSL = _PerDtype({float32: "float", int32: "int", uint32: "uint", bool_: "uint"})
# Storage dtype of the words in a buffer.
STORAGE = _PerDtype({float32: float32, int32: int32, uint32: uint32, bool_: uint32})


def check(dtype, held: bool = False) -> np.dtype:
    """The dtype as np.dtype, or TypeError if vkbackend cannot compute in it (held=True: hold it,
    which admits float16, bfloat16 and, where the device has their features, the WIDE dtypes)."""
    if isinstance(dtype, np.dtype) and dtype in _COMPUTED:  # the common case, on every array's creation
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"unsupported dtype {dtype!r}: expected one of float32, int32, uint32, bool") from e
    if held and d in _WIDE:
        return _usable(d)
    if d not in SUPPORTED and not (held and is_half(d)):
        raise TypeError(f"unsupported dtype {d}: expected one of float32, int32, uint32, bool"
                        + (f", or {d} to hold" if is_half(d) else "")
                        + (f" ({d} arrays: {WIDE_USES})" if d in _WIDE else ""))
    return d


def words(size: int, d: np.dtype) -> int:
    """32-bit words that hold `size` elements of d (bool: a word each; the others packed)."""
    return size if d.itemsize == 4 or d == bool_ else (size * d.itemsize + 3) // 4


def from_host(d: np.dtype) -> np.dtype:
    """The dtype an array of host dtype `d` gets when none is asked for (float64 -> float32, int64 -> int32)."""
    d = np.dtype(d)
    if d in SUPPORTED or is_half(d):
        return d
    if d.kind == "f":
        return float32
    if d.kind == "i":
        return int32
    if d.kind == "u":
        return uint32
    raise TypeError(f"cannot make a GPU array from host dtype {d}: expected a bool, integer or float array")


def narrow(d: np.dtype, what: str, wide: bool = False, exact: bool = False) -> np.dtype:
    """Map a numpy result dtype to a supported one. Of 32-bit operands: floats compute in float32;
    an integer result wider or narrower than 32 bits (int64 of int32 with uint32) is kept for an
    op that takes the WIDE dtypes (`wide`) where the device has it, else refused rather than
    silently wrapped. `exact`: an operand is WIDE, so numpy's result is kept."""
    if d in SUPPORTED:
        return d
    if exact and d in _WIDE:
        return _usable(d)
    if d.kind == "f":
        return float32
    if wide and d.kind in "iu" and d in _WIDE and available(d):  # int64 of int32 and uint32, int8 of bool squared
        return d
    raise TypeError(f"{what}: numpy would promote to {d}, which vkbackend does not support; "
                    "cast one operand with .astype() first")


def result_type(*held) -> np.dtype:
    """np.result_type, with bfloat16 promoting as float16 does (numpy's own rules: bfloat16 with
    bool, int8 or uint8 is bfloat16, with float32 float32) also where ml_dtypes defines no
    promotion: with float16, or with a wider integer (float32 after narrowing, as float16's); and
    Python scalars weak, as the array API has them (ml_dtypes makes bfloat16 + 1.0 float32)."""
    if not any(isinstance(h, np.dtype) and h == bfloat16 for h in held):
        return np.result_type(*held)
    both = float16 in held
    d = np.result_type(*[float16 if isinstance(h, np.dtype) and h == bfloat16 else h for h in held])
    return (float32 if both else bfloat16) if d == float16 else d


def promoted(held, what: str) -> np.dtype:
    """numpy's result type of `held` (dtypes, or Python scalars as weak types), narrowed as the
    elementwise functions narrow it (32-bit operands stay 32-bit; with a WIDE operand numpy's result
    is kept); a half as it is, for the caller to take or refuse."""
    d = result_type(*held)
    if is_half(d):
        return d
    return narrow(d, what, wide=True, exact=any(map(is_wide, held)))


def storage(d: np.dtype) -> np.dtype:
    """The dtype of the elements in d's buffer: bool is a uint32 word each."""
    return uint32 if d == bool_ else d


def is_wide(d) -> bool:
    return d in _WIDE


def type_defines(types) -> dict:
    """The shader defines that enable the GLSL types of `types` (dtypes): VK_WIDE for 8/16/64-bit
    types, VK_MATH64 (shaders/lib/math64.glsl) for 64-bit ones."""
    out = {}
    for d in types:
        if d in _WIDE or is_half(d):  # halves: their bits as uint16_t
            out["VK_WIDE"] = 1
            if d.itemsize == 8:
                out["VK_MATH64"] = 1
    return out


def is_float(d) -> bool:
    return kind(np.dtype(d)) == "f"
