"""Gathers by index: take and take_along_axis, and what the scatters (scatter.py) and fancy
getitem (getitem.py) share with them: index operands and the indexed kernel,
shaders/primitives/gather_scatter.comp.

Index arrays from the host (numpy, lists) are checked and normalized on the host: IndexError as
numpy, before any GPU work; no sync. Index arrays on the device (int32/uint32 vk.Arrays) cannot be
checked without a sync: negative indices count from the end, and what is still out of range is
clamped by gathers and dropped by scatters, unless the op runs in the checked mode (index_check.py:
IndexError at the next sync). No index ever makes a kernel access memory outside its buffers.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..array import Array
from .axes import normalize_axis
from .creation import asarray, check_fits
from .elementwise import broadcast_strides
from .index_check import IndexCheck, wanted
from .launch import grid_groups
from .operands import WG, Plan, checked_words, collapsed, contiguous_strides, operand

__all__ = ["take", "take_along_axis"]

MODES = ("raise", "wrap", "clip")


# -- index operands --------------------------------------------------------------------------

@dataclass
class Index:
    """An index operand, checked. Host indices are normalized to [0, axis_len) on the host and
    uploaded later (`host`); device ones are used as they are (`array`), normalized by the kernel
    per `mode`, and with `checked` their mode='raise' is checked there (index_check.py)."""
    shape: tuple
    axis_len: int
    axis: int
    name: str
    what: str = "indices"
    mode: str = "raise"
    host: np.ndarray | None = None
    array: Array | None = None
    checked: bool = False
    _check: IndexCheck | None = None

    @property
    def signed(self) -> bool:
        return self.array is None or self.array.dtype != dtypes.uint32

    @property
    def offset(self) -> int:
        return 0 if self.array is None else self.array.offset

    def device(self) -> Array:
        """The indices on the device (uploads host indices: call after all checks)."""
        if self.array is None:
            self.array = asarray(self.host, dtypes.int32)
        return self.array

    def launch(self, plan: Plan, direct, base, w) -> None:
        """Launch a gather_scatter.comp plan on buffers D, I (these indices), B and W; a checked
        plan binds the op's flag buffer 5th (made before its first dispatch)."""
        buffers = [direct, self.device().buffer, base, w]
        if "CHECK" in plan.defines:
            if self._check is None:
                self._check = IndexCheck(self.array, self.axis_len, self.axis, self.name, self.what,
                                         scatter="OP_GATHER" not in plan.defines)
            buffers.append(self._check.buffer)
        plan.launch(buffers)

    def done(self) -> None:
        """After the op's last dispatch: arm the checked mode's report for the next sync."""
        if self._check is not None:
            self._check.arm()
            self._check = None


def _host_indices(indices, name: str, what: str) -> np.ndarray:
    host = np.asarray(indices)
    if host.dtype.kind == "f" and host.size == 0:
        host = host.astype(np.int64)  # [] is an empty index list, as numpy reads it
    if host.dtype.kind not in "iu":
        raise TypeError(f"{name}: `{what}` must be integers, got dtype {host.dtype}")
    return host


def _normalize_host(host: np.ndarray, n: int, name: str, axis: int, mode: str) -> np.ndarray:
    """Host indices in [0, n) per numpy's mode; IndexError for mode='raise' out of range."""
    if host.size == 0 or n == 0:
        return host.astype(np.int32)
    if mode == "wrap":
        return np.mod(host, n).astype(np.int32)
    if mode == "clip":
        return np.clip(host, 0, n - 1).astype(np.int32)
    lo, hi = int(host.min()), int(host.max())  # exact for any integer dtype, uint64 included
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with size {n}")
    h = host.astype(np.int64)
    return np.where(h < 0, h + n, h).astype(np.int32)


def check_mode(mode, name: str) -> str:
    if mode not in MODES:
        raise ValueError(f"{name}: mode must be one of {MODES}, got {mode!r}")
    return mode


def index_operand(indices, axis_len: int, name: str, what: str = "indices", axis: int = 0,
                  mode: str = "raise", check_indices=None) -> Index:
    """Check an index operand for an axis of length axis_len (before any GPU work)."""
    checked = wanted(check_indices, name)
    if isinstance(indices, Array):
        if indices.dtype not in (dtypes.int32, dtypes.uint32):
            raise TypeError(f"{name}: `{what}` must be int32 or uint32, got {indices.dtype}")
        idx = Index(indices.shape, axis_len, axis, name, what, mode, array=indices,
                    checked=checked and mode == "raise")
    elif isinstance(indices, (np.ndarray, list, tuple, numbers.Integral, np.integer)) \
            and not isinstance(indices, (bool, np.bool_)):
        host = _host_indices(indices, name, what)
        # before _normalize_host walks them (minutes for a broadcast view of 2**40): numpy's MemoryError
        check_fits(host.size, name, f"{host.size} `{what}` uploaded as int32")
        idx = Index(host.shape, axis_len, axis, name, what, mode,
                    host=_normalize_host(host, axis_len, name, axis, mode))
    else:
        raise TypeError(f"{name}: `{what}` must be an integer vk.Array, numpy array or list, "
                        f"got {type(indices).__name__}")
    if axis_len == 0 and math.prod(idx.shape):
        raise IndexError(f"{name}: cannot do a non-empty take from an empty axis ({axis})")
    return idx


# -- the indexed kernel (gather_scatter.comp) ------------------------------------------------

@dataclass
class Walk:
    """How one operand walks the iteration space: element offset and per-dim strides."""
    offset: int
    strides: list


def zero_at(strides, axis: int) -> list:
    """Strides with the indexed axis taken out (the kernel adds index * axis stride itself)."""
    return [0 if d == axis else s for d, s in enumerate(strides)]


def plan_indexed(op: str, shape, direct: Walk, index: Walk, base: Walk, axis_stride: int, idx: Index,
                 defines=None, ordered=None, per_trip: int = 1, check: bool = True) -> Plan:
    """Plan a gather_scatter.comp dispatch over `shape` (see the shader for the operands).
    axis_stride: word 2 (ORDERED: the contributions per fiber). ordered: (axis dim in shape,
    off_W, I axis stride, D axis stride) for OP_SCATTER_ADD_ORDERED; a marker operand keeps that
    dim from merging so the kernel can read its coordinate. per_trip: counted loop iterations of
    one element, its grid-stride trip included. check: this pass checks checked indices (a
    scatter's claim pass leaves it to the write pass)."""
    lists = [direct.strides, index.strides, base.strides]
    if ordered is not None:
        lists.append([int(d == ordered[0]) for d in range(len(shape))])
    cshape, cstrides = collapsed(shape, lists)
    extra = []
    if ordered is not None:
        marker = cstrides.pop()
        extra = list(ordered[1:]) + [marker.index(1) if 1 in marker else -1]
    rank = len(cshape)
    words = [math.prod(shape), idx.axis_len, axis_stride, direct.offset, index.offset, base.offset]
    words += cshape + [s for st in cstrides for s in st] + extra
    defs = {f"OP_{op}": 1, "RANK": rank, **(defines or {})}
    if idx.signed:
        defs["IDX_SIGNED"] = 1
    if idx.array is not None and idx.mode != "raise":
        defs[f"MODE_{idx.mode.upper()}"] = 1  # host indices arrive normalized
    if idx.checked and check:
        defs["CHECK"] = 1
    return Plan("primitives/gather_scatter.comp", defs, checked_words(words, idx.name, rank),
                grid_groups(math.prod(shape), WG, per_trip=per_trip))


def gather(src: Array, src_offset: int, out_shape, base_strides, idx: Index, idx_strides,
           axis_stride: int) -> Array:
    """out[c] = src[src_offset + sum(c * base_strides) + index(c) * axis_stride] over out_shape."""
    out_shape = tuple(out_shape)
    plan = None
    if math.prod(out_shape):
        plan = plan_indexed("GATHER", out_shape, Walk(0, contiguous_strides(out_shape)),
                            Walk(idx.offset, idx_strides), Walk(src_offset, base_strides), axis_stride, idx)
    out = Array.empty(out_shape, src.dtype)
    if plan is not None:
        idx.launch(plan, out.buffer, src.buffer, out.buffer)
        idx.done()
    return out


# -- take / take_along_axis ------------------------------------------------------------------

def take(a, indices, axis=None, mode="raise", *, check_indices=None) -> Array:
    """numpy.take: elements of `a` (flattened when axis is None) at `indices` along `axis`.
    mode 'raise' (host indices checked; device ones: see the module doc), 'wrap' or 'clip'.
    check_indices: the checked mode of device indices (index_check.py; None: the environment)."""
    name = "take"
    a = operand(a, name)
    check_mode(mode, name)
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = normalize_axis(axis, a.ndim, name)
    n = a.shape[axis]
    idx = index_operand(indices, n, name, axis=axis, mode=mode, check_indices=check_indices)
    outer, inner = a.shape[:axis], a.shape[axis + 1:]
    a_strides = contiguous_strides(a.shape)
    k = len(idx.shape)
    base = a_strides[:axis] + [0] * k + a_strides[axis + 1:]
    idx_strides = [0] * len(outer) + contiguous_strides(idx.shape) + [0] * len(inner)
    return gather(a, a.offset, outer + idx.shape + inner, base, idx, idx_strides, a_strides[axis])


def _along_axis_shape(arr_shape, idx_shape, axis: int, name: str) -> tuple:
    """The iteration shape of take/put_along_axis: indices broadcast against arr off the axis."""
    if len(idx_shape) != len(arr_shape):
        raise ValueError(f"{name}: `indices` and `arr` must have the same number of dimensions, "
                         f"got {len(idx_shape)} and {len(arr_shape)}")
    stripped = list(arr_shape)
    stripped[axis] = 1
    try:
        shape = list(np.broadcast_shapes(tuple(stripped), tuple(idx_shape)))
    except ValueError:  # numpy: IndexError (indexing arrays could not be broadcast together)
        raise IndexError(f"{name}: `indices` of shape {tuple(idx_shape)} does not broadcast against "
                         f"`arr` of shape {tuple(arr_shape)} off axis {axis}") from None
    shape[axis] = idx_shape[axis]
    return tuple(shape)


def along_axis_walks(arr: Array, idx: Index, shape, axis: int) -> tuple:
    """(arr's walk without the axis, the indices' walk) over the iteration shape."""
    return (Walk(arr.offset, zero_at(broadcast_strides(arr.shape, shape), axis)),
            Walk(idx.offset, broadcast_strides(idx.shape, shape)))


def _along_axis_integers(indices, name: str) -> None:
    """numpy's take/put_along_axis refuse indices that are not integers with IndexError (take's
    TypeError stays index_operand's); an empty host list is an empty index list, as for take."""
    if isinstance(indices, Array):
        d = indices.dtype
    elif isinstance(indices, (np.ndarray, list, tuple)):
        host = np.asarray(indices)
        if host.size == 0:
            return
        d = host.dtype
    else:
        return  # index_operand names the type
    if d.kind not in "iu":
        raise IndexError(f"{name}: `indices` must be an integer array, got dtype {d}")


def along_axis_args(arr, indices, axis, name: str, check_indices) -> tuple:
    """(arr, axis, index operand, iteration shape) of take/put_along_axis, checked."""
    arr = operand(arr, name, "arr")
    _along_axis_integers(indices, name)
    if axis is None:
        idx_ndim = np.ndim(indices) if not isinstance(indices, Array) else indices.ndim
        if idx_ndim != 1:
            raise ValueError(f"{name}: when axis=None, `indices` must have a single dimension")
        arr, axis = arr.reshape(-1), 0
    else:
        axis = normalize_axis(axis, arr.ndim, name)
    idx = index_operand(indices, arr.shape[axis], name, axis=axis, check_indices=check_indices)
    shape = _along_axis_shape(arr.shape, idx.shape, axis, name)
    return arr, axis, idx, shape


def take_along_axis(arr, indices, axis=-1, *, check_indices=None) -> Array:
    """numpy.take_along_axis: out[..., j, ...] = arr[..., indices[..., j, ...], ...].
    check_indices: as take's."""
    name = "take_along_axis"
    arr, axis, idx, shape = along_axis_args(arr, indices, axis, name, check_indices)
    base, index = along_axis_walks(arr, idx, shape, axis)
    return gather(arr, base.offset, shape, base.strides, idx, index.strides, contiguous_strides(arr.shape)[axis])
