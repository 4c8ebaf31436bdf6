"""vkbackend: one GPU array API on any vendor's GPU, through Vulkan compute and SPIR-V.

Operations record into a command sequence and run when the host needs data (`.numpy()`,
`np.asarray`, `vk.synchronize()`), one submit for all of them.
"""

import os as _os

from . import runtime as _runtime
from .array import Array
from .runtime.compiler import CompileError
from .runtime.devices import Device, DeviceError
from .primitives.launch import LoopBudgetError
from .dtypes import bool_, float32, int32, uint32
from .primitives.creation import (arange, array, asarray, empty, empty_like, full, full_like, ones,
                                  ones_like, zeros, zeros_like)
from .primitives.elementwise import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin,
                                     arcsinh, arctan, arctan2, arctanh, around, asin, asinh,
                                     astype, atan, atan2, atanh, bitwise_and, bitwise_invert,
                                     bitwise_left_shift, bitwise_not, bitwise_or,
                                     bitwise_right_shift, bitwise_xor, ceil, clip, copysign, cos,
                                     cosh, divide, equal, exp, exp2, expm1, floor, floor_divide,
                                     fmod, greater, greater_equal, hypot, invert, isfinite, isinf,
                                     isnan, left_shift, less, less_equal, log, log10, log1p, log2,
                                     logaddexp, logical_and, logical_not, logical_or, logical_xor,
                                     maximum, minimum, mod, multiply, negative, nextafter,
                                     not_equal, positive, pow, power, reciprocal, remainder,
                                     right_shift, rint, round, sign, signbit, sin, sinh, sqrt,
                                     square, subtract, tan, tanh, true_divide, trunc, where)
from .primitives.reduce import *  # noqa: F401,F403
from .primitives.scan import *  # noqa: F401,F403
from .primitives.layout import *  # noqa: F401,F403
from .primitives.indexing import *  # noqa: F401,F403
from .primitives.scatter import *  # noqa: F401,F403
from .primitives.compaction import *  # noqa: F401,F403
from .primitives.matmul import *  # noqa: F401,F403
from .interop import from_dlpack  # noqa: F401
from .primitives.manipulation import *  # noqa: F401,F403
from .primitives.construct import *  # noqa: F401,F403
from .array_api import *  # noqa: F401,F403  (version, constants, bool, info, dtype functions)

# ops/ sits at the top of a checkout; installed, it is the subpackage vkbackend/ops.
if not _os.path.isdir(_os.path.join(__path__[0], "ops")):
    __path__.append(_os.path.join(_os.path.dirname(__path__[0])))

from .ops.layernorm import *  # noqa: E402,F401,F403
from .ops.conv import *  # noqa: E402,F401,F403
from . import linalg  # noqa: E402  (vk.linalg.qr and friends)

__version__ = "0.1.0"


def device() -> Device:
    """The open device (opened on first use): name, vendor, driver, limits, subgroup size/features."""
    return _runtime.get().device


def synchronize() -> None:
    """Run everything recorded so far and wait for it."""
    _runtime.get().stream.synchronize()


def memory_stats() -> dict:
    """Device memory in bytes: in_use (arrays alive), cached (kept for reuse, at most limit:
    VKBACKEND_POOL_LIMIT), peak_in_use, limit, device_local (the device's local heaps)."""
    return _runtime.get().memory_stats()


def stats() -> dict:
    """Counters for tests and benchmarks: submits, dispatches, pipeline and pool use, compiles."""
    return _runtime.get().stats()
