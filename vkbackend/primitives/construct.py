"""The array API's creation functions beyond creation.py's: eye, linspace, meshgrid.

eye is a fill of zeros and one strided copy of a single 1 along the diagonal (stride n_cols + 1).
linspace is computed on the host, in float64 as numpy computes it, and uploaded: float32 values
of start + i * step need float64 arithmetic to come out as numpy's (within rounding of the cast)
when start and i * step nearly cancel, and Vulkan devices need not have float64
(shaderFloat64 is optional). meshgrid is one broadcast_to per input.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..array import Array
from .creation import asarray, check_device, full, zeros
from .layout import launch_copy, plan_copy
from .manipulation import broadcast_to
from .operands import integer, operand

__all__ = ["eye", "linspace", "meshgrid"]


def _count(value, name: str, what: str) -> int:
    """A non-negative integer argument."""
    v = integer(value, name, what)
    if v < 0:
        raise ValueError(f"{name}: `{what}` must be non-negative, got {v}")
    return v


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None) -> Array:
    """A 2-D array of n_rows x n_cols (default n_rows) with ones on diagonal k (> 0 above the
    main one, < 0 below) and zeros elsewhere; float32 unless dtype says otherwise."""
    name = "eye"
    check_device(device, name)
    rows = _count(n_rows, name, "n_rows")
    cols = rows if n_cols is None else _count(n_cols, name, "n_cols")
    k = integer(k, name, "k")
    dtype = dtypes.float32 if dtype is None else dtypes.check(dtype, held=True)
    if dtypes.is_half(dtype):
        dtypes.computable(dtype, name)
    # Diagonal k starts at (0, k) or (-k, 0) and runs while both indices are in range.
    length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    start = k if k >= 0 else -k * cols
    plan = plan_copy((length,), start, [cols + 1], 0, [0], dtype, dtype, name) if length else None
    out = zeros((rows, cols), dtype)
    if plan is not None:
        one = full((1,), 1, dtype)
        launch_copy(plan, out.buffer, one.buffer)
    return out


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True) -> Array:
    """`num` evenly spaced values from start to stop (endpoint=True: stop included), float32
    unless dtype says otherwise; numpy's values exactly (computed by numpy, in float64, on the
    host, then uploaded: see the module's docstring). Integer dtypes get numpy's floor."""
    name = "linspace"
    check_device(device, name)
    for what, v in (("start", start), ("stop", stop)):
        if isinstance(v, (complex, np.complexfloating)):
            raise TypeError(f"{name}: vkbackend has no complex dtype (`{what}` is {v!r})")
        if not isinstance(v, (numbers.Real, np.number)) or isinstance(v, np.timedelta64):
            raise TypeError(f"{name}: `{what}` must be a real number, got {type(v).__name__}")
    num = _count(num, name, "num")
    if not isinstance(endpoint, (bool, np.bool_)):
        raise TypeError(f"{name}: endpoint must be a bool, got {endpoint!r}")
    dtype = dtypes.float32 if dtype is None else dtypes.check(dtype, held=True)
    if dtype == dtypes.bool_:
        raise TypeError(f"{name}: expected a numeric dtype, got bool")
    with np.errstate(over="ignore", invalid="ignore"):  # float32 overflow gives inf, as numpy's cast
        host = np.linspace(float(start), float(stop), num, endpoint=bool(endpoint), dtype=np.float64)
        if dtype.kind in "iu":
            host = np.floor(host)
            info = np.iinfo(dtype)
            if host.size and (host.min() < info.min or host.max() > info.max):
                raise OverflowError(f"{name}: values in [{host.min()}, {host.max()}] do not fit in {dtype}")
        host = host.astype(dtype)
    return asarray(host, dtype)


def meshgrid(*arrays, indexing="xy") -> list:
    """Coordinate arrays from coordinate vectors (inputs of more dimensions are flattened, as
    numpy does): a list of N arrays of shape (N1, N2, ..., Nn) for indexing='ij', with the first
    two lengths swapped for 'xy' (Cartesian). Each is one broadcast copy of its input."""
    name = "meshgrid"
    if indexing not in ("xy", "ij"):
        raise ValueError(f"{name}: indexing must be 'xy' or 'ij', got {indexing!r}")
    held = [operand(a, name, f"arrays[{k}]", host="keep", half=True, wide=True) for k, a in enumerate(arrays)]
    lengths = [int(np.prod(a.shape)) for a in held]
    nd = len(held)
    out_shape = list(lengths)
    axes = list(range(nd))
    if indexing == "xy" and nd >= 2:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
        axes[0], axes[1] = 1, 0
    out = []
    for a, n, ax in zip(held, lengths, axes):
        a = a if isinstance(a, Array) else asarray(a)
        out.append(broadcast_to(a.reshape((1,) * ax + (n,) + (1,) * (nd - ax - 1)), tuple(out_shape)))
    return out
