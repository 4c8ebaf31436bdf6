"""Gathers by index: take and take_along_axis, and what the scatters (scatter.py) and fancy
getitem (getitem.py) share with them: index operands and the indexed kernel,
shaders/primitives/gather_scatter.comp.

Index arrays from the host (numpy, lists) are checked and normalized on the host: IndexError as
numpy, before any GPU work; no sync. Index arrays on the device (int32/uint32 vk.Arrays) cannot be
checked without a sync: negative indices count from the end, and what is still out of range is
clamped by gathers and dropped by scatters, unless the op runs in the checked mode (index_check.py:
IndexError at the next sync). No index ever makes a kernel access memory outside its buffers.

Gathers whose source, indices or result lie in a buffer larger than a shader may bind go in boxes
of the output (windows.py, gather_in_windows): each dispatch binds a window of every such buffer;
where the indices may reach more of the source than one window holds, one dispatch per part of
it writes the elements whose index falls there (a masked gather).

Elements move as their bits in their own width (moves.py): the gathers and scatters take the
8/16/64-bit dtypes too, exactly (not in windows: those hold 32-bit words); take and getitem's
gathers take float16 as 16-bit words where the device has 16-bit storage.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..array import Array
from . import windows
from .axes import normalize_axis
from .creation import asarray, check_fits
from .elementwise import broadcast_strides
from .index_check import IndexCheck, wanted
from .launch import grid_groups
from .moves import check_windowed, move_defines, nbytes
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
        if self.array is None:
            return self.host.dtype != np.uint32
        return self.array.dtype != dtypes.uint32

    @property
    def big(self) -> bool:
        """Whether the indices lie (will lie, uploaded) in a buffer larger than a shader may bind."""
        if self.array is None:
            return windows.is_big(4 * self.host.size)
        return self.array.buffer.big

    def reach(self) -> tuple:
        """The lowest and highest normalized index: the host indices' own, the axis for device ones."""
        if self.array is None and self.host.size:
            return int(self.host.min()), int(self.host.max())
        return 0, self.axis_len - 1

    @property
    def offset(self) -> int:
        return 0 if self.array is None else self.array.offset

    def device(self) -> Array:
        """The indices on the device (uploads host indices: call after all checks)."""
        if self.array is None:
            self.array = asarray(self.host, dtypes.uint32 if self.host.dtype == np.uint32 else dtypes.int32)
        return self.array

    def launch(self, plan: Plan, direct, base, w, wins=None) -> None:
        """Launch a gather_scatter.comp plan on buffers D, I (these indices), B and W; a checked
        plan binds the op's flag buffer 5th (made before its first dispatch). wins: the windows
        of D, I, B and W (windows.py), or None."""
        buffers = [direct, self.device().buffer, base, w]
        if "CHECK" in plan.defines:
            if self._check is None:
                self._check = IndexCheck(self.array, self.axis_len, self.axis, self.name, self.what,
                                         scatter="OP_GATHER" not in plan.defines)
            buffers.append(self._check.buffer)
            wins = None if wins is None else list(wins) + [None]
        if wins is None:
            plan.launch(buffers)
        else:
            windows.launch(plan, buffers, wins)

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
    """Host indices in [0, n) per numpy's mode; IndexError for mode='raise' out of range. int32,
    or uint32 for an axis past int32's range (only arrays past maxStorageBufferRange have one)."""
    held = np.int32 if n <= 2**31 else np.uint32
    if host.size == 0 or n == 0:
        return host.astype(held)
    if mode == "wrap":
        return np.mod(host, n).astype(held)
    if mode == "clip":
        return np.clip(host, 0, n - 1).astype(held)
    lo, hi = int(host.min()), int(host.max())  # exact for any integer dtype, uint64 included
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with size {n}")
    h = host.astype(np.int64)
    return np.where(h < 0, h + n, h).astype(held)


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


def plan_indexed(op: str, shape, direct: Walk, index: Walk, base: Walk, axis_stride: int, idx: Index | None,
                 defines=None, ordered=None, per_trip: int = 1, check: bool = True, window=None,
                 name: str | None = None, rank: Walk | None = None) -> Plan:
    """Plan a gather_scatter.comp dispatch over `shape` (see the shader for the operands).
    axis_stride: word 2 (ORDERED: the contributions per fiber). ordered: (axis dim in shape,
    off_W, I axis stride, D axis stride) for OP_SCATTER_ADD_ORDERED; a marker operand keeps that
    dim from merging so the kernel can read its coordinate. per_trip: counted loop iterations of
    one element, its grid-stride trip included. check: this pass checks checked indices (a
    scatter's claim pass leaves it to the write pass). window: (B_AT, B_COUNT) of a WINDOWED
    gather (gather_in_windows), where idx None is its strided copy (NO_INDEX); of a WINDOWED
    scatter (scatter.py), (B_AT, B_COUNT, W_AT) and `rank`: the walk of each element's C-order
    rank in the whole iteration space (its claim number)."""
    lists = [direct.strides, index.strides, base.strides]
    if ordered is not None:
        lists.append([int(d == ordered[0]) for d in range(len(shape))])
    if rank is not None:
        lists.append(rank.strides)
    cshape, cstrides = collapsed(shape, lists)
    rank_strides = cstrides.pop() if rank is not None else []
    extra = []
    if ordered is not None:
        marker = cstrides.pop()
        extra = list(ordered[1:]) + [marker.index(1) if 1 in marker else -1]
    if window is not None:
        extra = list(window) + ([rank.offset] + rank_strides if rank is not None else [])
    rank = len(cshape)
    words = [math.prod(shape), 1 if idx is None else idx.axis_len, axis_stride, direct.offset, index.offset,
             base.offset]
    words += cshape + [s for st in cstrides for s in st] + extra
    defs = {f"OP_{op}": 1, "RANK": rank, **(defines or {})}
    if window is not None:
        defs["WINDOWED"] = 1
    if idx is None:
        defs["NO_INDEX"] = 1
    else:
        name = idx.name
        if idx.signed:
            defs["IDX_SIGNED"] = 1
        if idx.array is not None and idx.mode != "raise":
            defs[f"MODE_{idx.mode.upper()}"] = 1  # host indices arrive normalized
        if idx.checked and check:
            defs["CHECK"] = 1
    return Plan("primitives/gather_scatter.comp", defs, checked_words(words, name, rank),
                grid_groups(math.prod(shape), WG, per_trip=per_trip))


def gather(src: Array, src_offset: int, out_shape, base_strides, idx: Index, idx_strides,
           axis_stride: int) -> Array:
    """out[c] = src[src_offset + sum(c * base_strides) + index(c) * axis_stride] over out_shape."""
    out_shape = tuple(out_shape)
    n = math.prod(out_shape)
    if n and (src.buffer.big or idx.big or windows.is_big(nbytes(n, src.dtype))):
        return gather_in_windows(src, src_offset, out_shape, base_strides, idx, idx_strides, axis_stride, idx.name)
    plan = None
    if n:
        plan = plan_indexed("GATHER", out_shape, Walk(0, contiguous_strides(out_shape)),
                            Walk(idx.offset, idx_strides), Walk(src_offset, base_strides), axis_stride, idx,
                            move_defines(src.dtype, "T_MOVE"))
    out = Array.empty(out_shape, src.dtype)
    if plan is not None:
        idx.launch(plan, out.buffer, src.buffer, out.buffer)
        idx.done()
    return out


def gather_in_windows(src: Array, src_offset: int, out_shape, base_strides, idx: Index | None, idx_strides,
                      axis_stride: int, name: str) -> Array:
    """gather where the source, the indices or the result lie in buffers larger than a shader may
    bind (idx None: the strided copy out[c] = src[src_offset + sum(c * base_strides)]). The output
    goes in boxes (windows.box_shape) that each such buffer sees through one window. Where the
    indices may reach more of the source than fits beside a box's walk (half a window), each box
    is gathered once per part of its source range, each dispatch writing the elements whose index
    falls in its part. Planned, and refused with ValueError, before any GPU work."""
    check_windowed(src.dtype, name)
    count = math.prod(out_shape)
    check_fits(count, name, f"the result of {count} elements")  # before planning its boxes
    limit = windows.chunk_words()
    out_big = windows.is_big(4 * count)
    src_big = src.buffer.big
    idx_big = idx is not None and idx.big
    if idx_big and idx.checked:
        raise ValueError(f"{name}: the checked mode of device indices (check_indices, VKBACKEND_CHECK_INDICES) "
                         "does not work with an index array larger than maxStorageBufferRange; "
                         "pass check_indices=False")
    lo, hi = idx.reach() if idx is not None else (0, 0)
    a_lo, a_hi = sorted((lo * axis_stride, hi * axis_stride))
    masked = src_big and a_hi - a_lo >= limit // 2
    cshape, (sd, si, sb) = collapsed(out_shape, [contiguous_strides(out_shape), idx_strides, base_strides])
    reaches = [windows.Reach(sd, limit if out_big else None), windows.Reach(si, limit if idx_big else None),
               windows.Reach(sb, limit if src_big else None, 0 if masked else a_hi - a_lo)]
    ext = windows.box_shape(cshape, reaches)
    i_first = idx.offset if idx is not None else 0
    plans = []
    for corner, box in windows.boxes(cshape, ext, name):
        d_off, d_win = windows.walk_window(out_big, box, sd, sum(c * s for c, s in zip(corner, sd)))
        i_off, i_win = windows.walk_window(idx_big, box, si, i_first + sum(c * s for c, s in zip(corner, si)))
        b_off = src_offset + sum(c * s for c, s in zip(corner, sb))
        parts = [(None, 0, b_off, 0xFFFFFFFF)]
        if src_big:
            b_lo, b_hi = windows.bounds(box, sb, b_off)
            parts = [(win, at, b_off - first, count) for first, count in windows.pieces(b_lo + a_lo, b_hi + a_hi)
                     for win, at in [windows.window(first, count)]]
        for b_win, b_at, rel, count in parts:
            plan = plan_indexed("GATHER", box, Walk(d_off, sd), Walk(i_off, si), Walk(rel, sb), axis_stride, idx,
                                window=(b_at, count), name=name)
            plans.append((plan, [d_win, i_win if idx is not None else d_win, b_win, d_win]))
    out = Array.empty(tuple(out_shape), src.dtype)
    for plan, wins in plans:
        if idx is None:
            windows.launch(plan, [out.buffer, out.buffer, src.buffer, out.buffer], wins)
        else:
            idx.launch(plan, out.buffer, src.buffer, out.buffer, wins)
    if idx is not None:
        idx.done()
    return out


# -- take / take_along_axis ------------------------------------------------------------------

def take(a, indices, axis=None, mode="raise", *, check_indices=None) -> Array:
    """numpy.take: elements of `a` (flattened when axis is None) at `indices` along `axis`.
    mode 'raise' (host indices checked; device ones: see the module doc), 'wrap' or 'clip'.
    check_indices: the checked mode of device indices (index_check.py; None: the environment)."""
    name = "take"
    a = operand(a, name, half="words", wide=True)  # float16 gathered as 16-bit words (moves.py)
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
    arr = operand(arr, name, "arr", half="words", wide=True)  # float16 moved as 16-bit words
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
