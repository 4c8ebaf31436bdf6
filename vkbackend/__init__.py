"""vkbackend: one GPU array API on any vendor's GPU, through Vulkan compute and SPIR-V.

Operations record into a command sequence and run when the host needs data (`.numpy()`,
`np.asarray`, `vk.synchronize()`), one submit for all of them.
"""

from . import runtime as _runtime
from .array import Array
from .runtime.compiler import CompileError
from .runtime.devices import Device, DeviceError
from .primitives.launch import LoopBudgetError
from .dtypes import bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
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
from .primitives.sort import *  # noqa: F401,F403
from .primitives.matmul import *  # noqa: F401,F403
from .primitives.products import *  # noqa: F401,F403  (tensordot, vecdot)
from .primitives.realparts import *  # noqa: F401,F403  (conj, real, imag of real arrays)
from .interop import from_dlpack  # noqa: F401
from .primitives.manipulation import *  # noqa: F401,F403
from .primitives.construct import *  # noqa: F401,F403
from .array_api import *  # noqa: F401,F403  (version, constants, bool, info, dtype functions)
from . import array_methods as _array_methods  # noqa: F401  (vk.Array's operators: x + y, x[k], x.sum())


def _checkout_ops() -> None:
    """vkbackend.ops is ops/ at the top of the tree, mapped into the package by setup.py's
    package_dir: installed it is vkbackend/ops, and in a checkout the editable install's finder
    (`make setup`) maps it. A checkout run with no install (PYTHONPATH=., as on the GPU machine)
    gets that one mapping here; nothing else of the tree joins the package."""
    import importlib.util
    import os
    import sys
    name = f"{__name__}.ops"
    ops = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops")
    if importlib.util.find_spec(name) is not None or not os.path.isfile(os.path.join(ops, "__init__.py")):
        return  # found, or not there (the import below names it)
    spec = importlib.util.spec_from_file_location(name, os.path.join(ops, "__init__.py"),
                                                  submodule_search_locations=[ops])
    sys.modules[name] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setattr(sys.modules[__name__], "ops", module)  # as the import system binds a subpackage


_checkout_ops()
from .ops.layernorm import *  # noqa: E402,F401,F403
from .ops.conv import *  # noqa: E402,F401,F403
from . import linalg  # noqa: E402,F401  (vk.linalg.qr and friends)

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
