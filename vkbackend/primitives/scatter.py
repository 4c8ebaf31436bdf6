"""Scatters by index: put and put_along_axis (assignment, in place) and scatter_add (a new array),
on shaders/primitives/gather_scatter.comp. Index operands, out-of-range device indices and the
checked mode are as for the gathers (indexing.py, index_check.py): device indices out of range
are dropped, or reported at the next sync in the checked mode.

Scatters whose destination, values or indices lie in buffers larger than a shader may bind go in
windows (windows.py, scatter_in_windows): the iteration space in boxes that each big values or
index buffer sees through one window, and each box once per part of the destination it may reach
(at most a window each), every dispatch writing only the elements whose position falls in its
part (a masked scatter, the gathers' masked dispatch turned around). The last write still wins
among duplicates: the claim pass numbers each element by its rank in the whole iteration space.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from . import windows
from .axes import normalize_axis
from .creation import asarray, zeros
from .elementwise import broadcast_strides, copy_into
from .indexing import (Index, Walk, along_axis_args, along_axis_walks, check_mode, index_operand,
                       plan_indexed, take, zero_at)
from .launch import budget_chunks
from .layout import launch_copy, plan_full_copy
from .moves import check_windowed, move_defines, nbytes
from .operands import HOST_DATA, WG, Plan, collapsed, contiguous_strides, operand

__all__ = ["put", "put_along_axis", "scatter_add"]


# -- values operands -------------------------------------------------------------------------

@dataclass
class _Values:
    """A checked values operand for a scatter into a `dtype` array: a device array (converted
    to dtype on use) or host data (uploaded on use, after all checks)."""
    shape: tuple
    dtype: np.dtype
    host: np.ndarray | None = None
    array: Array | None = None

    @property
    def offset(self) -> int:
        # Uploads and converted copies are fresh arrays, at offset 0.
        return self.array.offset if self.array is not None and self.array.dtype == self.dtype else 0

    @property
    def big(self) -> bool:
        """Whether the values lie (will lie, uploaded or converted) in a buffer larger than a
        shader may bind."""
        if self.array is None:
            return windows.is_big(nbytes(self.host.size, self.dtype))
        if self.array.dtype != self.dtype:
            return windows.is_big(nbytes(self.array.size, self.dtype))
        return self.array.buffer.big

    def device(self) -> Array:
        if self.array is None:
            self.array = asarray(self.host, self.dtype)
        elif self.array.dtype != self.dtype:
            self.array = self.array.astype(self.dtype)
        return self.array


def _castable(src: np.dtype, dst: np.dtype, host: np.ndarray | None) -> bool:
    """numpy's 'same_kind' rule, with Python scalars weak (NEP 50): an int scalar fits any integer
    dtype that holds its value."""
    if host is not None and host.ndim == 0 and src.kind in "iu" and dst.kind in "iu":
        info = np.iinfo(dst)
        return info.min <= int(host) <= info.max
    return np.can_cast(src, dst, "same_kind")


def _values(values, dtype: np.dtype, name: str, same_kind: bool = False) -> _Values:
    """Check scatter values. numpy's assignment casts unsafely (put, put_along_axis); scatter_add
    asks for same_kind (np.add.at's rule; torch even wants equal dtypes)."""
    if isinstance(values, Array):
        if same_kind and not _castable(values.dtype, dtype, None):
            raise TypeError(f"{name}: `values` of dtype {values.dtype} cannot be added into {dtype}")
        return _Values(values.shape, dtype, array=values)
    if not isinstance(values, HOST_DATA):
        raise TypeError(f"{name}: `values` must be a vk.Array, an array-like or a number, "
                        f"got {type(values).__name__}")
    host = np.asarray(values)
    if host.dtype.kind not in "biuf":
        raise TypeError(f"{name}: `values` of dtype {host.dtype}: expected bool, integer or float")
    if same_kind and not _castable(host.dtype, dtype, host):
        raise TypeError(f"{name}: `values` of dtype {host.dtype} cannot be added into {dtype}")
    return _Values(host.shape, dtype, host=host.astype(bool if dtype == dtypes.bool_ else dtype))


def _values_walk(vals: _Values, shape, name: str) -> Walk:
    """Values broadcast to the iteration shape (numpy's assignment rule)."""
    try:
        ok = tuple(np.broadcast_shapes(vals.shape, tuple(shape))) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name}: could not broadcast `values` from shape {vals.shape} into "
                         f"shape {tuple(shape)}")
    return Walk(vals.offset, broadcast_strides(vals.shape, shape))


# -- assignment: put_along_axis, put ---------------------------------------------------------

def _assign(arr: Array, shape, vals: _Values, direct: Walk, index: Walk, base: Walk, axis_stride: int,
            idx: Index, unique_indices: bool) -> None:
    """Record arr[base + index(c) * axis_stride] = values[c] over `shape`. Duplicates: the last
    write in C order of the iteration wins (what numpy does in practice), through a claim pass
    (atomicMax of the iteration number over an arr-sized temporary) before the write pass;
    unique_indices=True promises none and skips it."""
    if arr.buffer.big or vals.big or idx.big:
        return scatter_in_windows(arr, shape, vals, direct, index, base, axis_stride, idx,
                                  "SCATTER", claim=not unique_indices)
    plan_args = (shape, direct, index, base, axis_stride, idx)
    moves = move_defines(arr.dtype, "T_MOVE")  # the elements' bits, in their own width
    write = plan_indexed("SCATTER", *plan_args, defines=moves if unique_indices else {"LAST_WINS": 1, **moves})
    claim = None if unique_indices else plan_indexed("CLAIM", *plan_args, check=False)
    values = vals.device().buffer
    if claim is None:
        idx.launch(write, values, arr.buffer, arr.buffer)
    else:
        winners = zeros(arr.size, dtypes.uint32)
        idx.launch(claim, values, arr.buffer, winners.buffer)
        idx.launch(write, values, arr.buffer, winners.buffer)
    idx.done()


def put_along_axis(arr, indices, values, axis, *, unique_indices: bool = False, check_indices=None) -> None:
    """numpy.put_along_axis: arr[..., indices[..., j, ...], ...] = values[..., j, ...], in place
    (the writes are recorded into arr's buffer). `values` broadcasts to the indices' shape and
    is cast to arr's dtype, as numpy's assignment does. Duplicate indices are deterministic: the
    last write in C order wins; unique_indices=True promises none (one pass less). Device indices
    out of range are dropped; check_indices: the checked mode (index_check.py)."""
    name = "put_along_axis"
    arr, axis, idx, shape = along_axis_args(arr, indices, axis, name, check_indices)
    vals = _values(values, arr.dtype, name)
    direct = _values_walk(vals, shape, name)
    if not math.prod(shape):
        return None
    base, index = along_axis_walks(arr, idx, shape, axis)
    _assign(arr, shape, vals, direct, index, base, contiguous_strides(arr.shape)[axis], idx, unique_indices)
    return None


def put(a, ind, v, mode="raise", *, unique_indices: bool = False, check_indices=None) -> None:
    """numpy.put: a.flat[ind] = v, in place; `v` is repeated (flattened) as needed to cover
    `ind`, and cast to a's dtype. mode 'raise' (host indices checked; device ones out of range
    dropped, or the checked mode: check_indices), 'wrap' or 'clip'. Duplicates: the last wins,
    as put_along_axis."""
    name = "put"
    a = operand(a, name, half="words", wide=True)  # float16 moved as 16-bit words
    check_mode(mode, name)
    flat = a.reshape(-1)
    if not flat.size and (ind.size if isinstance(ind, Array) else np.size(ind)):
        raise IndexError(f"{name}: cannot replace elements of an empty array")
    idx = index_operand(ind, flat.size, name, "ind", mode=mode, check_indices=check_indices)
    m = math.prod(idx.shape)
    vals = _values(v, a.dtype, name)
    vsize = math.prod(vals.shape)
    if not m or not vsize:
        return None  # numpy: an empty `v` puts nothing
    if vsize not in (1, m):  # numpy repeats v: element i takes v.flat[i % v.size]
        if vals.host is not None:
            vals = dataclasses.replace(vals, shape=(m,), host=np.resize(vals.host.reshape(-1), m))
        else:
            cycled = take(vals.device().reshape(-1), np.arange(m), mode="wrap")
            vals = dataclasses.replace(vals, shape=(m,), array=cycled)
    direct = Walk(vals.offset, [0] if vsize == 1 else [1])
    index = Walk(idx.offset, [1])
    _assign(flat, (m,), vals, direct, index, Walk(flat.offset, [0]), 1, idx, unique_indices)
    return None


# -- in windows ------------------------------------------------------------------------------

def plan_in_windows(op: str, shape, direct: Walk, index: Walk, base: Walk, axis_stride: int, idx: Index | None,
                    d_big: bool, b_big: bool, name: str, defines=None, claim: bool = False,
                    per_trip: int = 1) -> tuple:
    """Plan a scatter `op` (gather_scatter.comp, WINDOWED) where the values (d_big), indices or
    destination (b_big) lie in buffers larger than a shader may bind; idx None: the strided copy
    B = D (NO_INDEX). claim: a LAST_WINS write after a claim pass. Returns (passes, claims):
    passes, a list per pass of (plan, windows of D, I, B and W); claims, None or (first position,
    words) of the destination the claim words cover (W's word k is position first + k)."""
    i_big = idx is not None and idx.big
    if i_big and idx.checked:
        raise ValueError(f"{name}: the checked mode of device indices (check_indices, VKBACKEND_CHECK_INDICES) "
                         "does not work with an index array larger than maxStorageBufferRange; "
                         "pass check_indices=False")
    limit = windows.chunk_words()
    cshape, (sd, si, sb, sr) = collapsed(shape, [direct.strides, index.strides, base.strides,
                                                 contiguous_strides(shape)])
    lo, hi = idx.reach() if idx is not None else (0, 0)
    a_lo, a_hi = sorted((lo * axis_stride, hi * axis_stride))
    b_lo, b_hi = windows.bounds(cshape, sb, base.offset)
    claims = (b_lo + a_lo, b_hi + a_hi - b_lo - a_lo + 1) if claim else None
    w_big = claim and windows.is_big(4 * claims[1])
    # The destination is not among the reaches: each box is written once per part of it.
    ext = windows.box_shape(cshape, [windows.Reach(sd, limit if d_big else None),
                                     windows.Reach(si, limit if i_big else None)])
    passes = [[] for _ in range(2 if claim else 1)]
    steps = [("CLAIM", {}, False), (op, {"LAST_WINS": 1}, True)] if claim else [(op, {}, True)]
    for corner, box in windows.boxes(cshape, ext, name):
        def at(strides, offset: int) -> int:
            return offset + sum(c * s for c, s in zip(corner, strides))
        d_off, d_win = windows.walk_window(d_big, box, sd, at(sd, direct.offset))
        i_off, i_win = windows.walk_window(i_big, box, si, at(si, index.offset))
        b_off = at(sb, base.offset)
        rank = Walk(at(sr, 0), sr)  # claim numbers: ranks in the whole iteration space
        lo_b, hi_b = windows.bounds(box, sb, b_off)
        lo_b, hi_b = lo_b + a_lo, hi_b + a_hi
        parts = windows.pieces(lo_b, hi_b) if b_big else [(lo_b, hi_b - lo_b + 1)]
        for first, count in parts:
            b_win, b_at = windows.window(first, count) if b_big else (None, first)
            w_win, w_at = b_win, 0  # W: a dummy, B's binding, unless there are claims
            if claim:
                w_win, w_at = (windows.window(first - claims[0], count) if w_big
                               else (None, first - claims[0]))
            wins = [d_win, d_win if idx is None else i_win, b_win, w_win]
            for k, (o, extra, check) in enumerate(steps):
                plan = plan_indexed(o, box, Walk(d_off, sd), Walk(i_off, si), Walk(b_off - first, sb), axis_stride,
                                    idx, {**(defines or {}), **extra}, check=check,
                                    window=(b_at, count, w_at), rank=rank, name=name, per_trip=per_trip)
                passes[k].append((plan, wins))
    return passes, claims


def launch_in_windows(passes, claims, values: Array, dest: Array, idx: Index | None) -> None:
    """Launch plan_in_windows' passes: values are D, dest is B; the claim words are made here."""
    w = None
    if claims is not None:
        w = Array.empty((claims[1],), dtypes.uint32)
        runtime.get().stream.fill(w.buffer, 0)
    for plans in passes:
        for plan, wins in plans:
            third = dest.buffer if w is None else w.buffer
            if idx is None:
                windows.launch(plan, [values.buffer, values.buffer, dest.buffer, third], wins)
            else:
                idx.launch(plan, values.buffer, dest.buffer, third, wins)
    if idx is not None:
        idx.done()


def scatter_in_windows(arr: Array, shape, vals: _Values, direct: Walk, index: Walk, base: Walk,
                       axis_stride: int, idx: Index | None, op: str, claim: bool = False, defines=None,
                       name: str | None = None) -> None:
    """_assign (or a scatter-add, op) in windows: planned, and refused with ValueError, before
    any GPU work."""
    name = name or idx.name
    check_windowed(arr.dtype, name)
    passes, claims = plan_in_windows(op, shape, direct, index, base, axis_stride, idx, vals.big,
                                     arr.buffer.big, name, defines, claim)
    launch_in_windows(passes, claims, vals.device(), arr, idx)


# -- scatter_add -----------------------------------------------------------------------------

def _scatter_add_values(values, a: Array, idx_shape, name: str) -> tuple:
    """(values, their walk over the indices' shape): numpy-broadcastable to it, or torch's rule
    (same ndim, at least as large in every dim: the leading block is used)."""
    vals = _values(values, a.dtype, name, same_kind=True)
    try:
        return vals, _values_walk(vals, idx_shape, name)
    except ValueError:
        if len(vals.shape) == len(idx_shape) and all(v >= i for v, i in zip(vals.shape, idx_shape)):
            return vals, Walk(vals.offset, contiguous_strides(vals.shape))
        raise ValueError(f"{name}: `values` of shape {vals.shape} neither broadcasts to the indices' "
                         f"shape {tuple(idx_shape)} nor covers it") from None


def scatter_add(a, indices, values, axis=0, *, deterministic: bool = False, check_indices=None) -> Array:
    """A new array: a with values added at indices along axis (torch.Tensor.scatter_add):
    out[..., indices[..., j, ...], ...] += values[..., j, ...] over the indices' shape, which may
    be smaller than a's off the axis (and than values'). Duplicates accumulate (np.add.at).

    int32/uint32 use atomicAdd (exact in any order). float32 uses a compare-and-swap loop on the
    bits (float atomics need VK_EXT_shader_atomic_float), so the rounding depends on the order;
    deterministic=True instead lets each output element sum its contributions in index order
    (bit-identical to np.add.at, run after run) at O(axis length x indices along the axis) work
    per fiber: for moderate sizes. float16 (values cast to float16 first, as np.add.at casts them)
    is summed in float32 and rounded once (np.add.at on float16 rounds after every add); 8/16-bit
    integers are summed as 32-bit ones and wrap when stored (exactly numpy's); 64-bit dtypes
    always take the deterministic path (no 64-bit atomics needed). Device indices out of range are
    dropped; check_indices: the checked mode (index_check.py)."""
    name = "scatter_add"
    a = operand(a, name, half=True, wide=True)
    if a.dtype == dtypes.bool_:
        raise TypeError(f"{name}: bool arrays cannot be added to; cast with .astype() first")
    if a.ndim == 0:
        raise ValueError(f"{name}: `a` must have at least one dimension")
    axis = normalize_axis(axis, a.ndim, name)
    idx = index_operand(indices, a.shape[axis], name, axis=axis, check_indices=check_indices)
    if len(idx.shape) != a.ndim:
        raise ValueError(f"{name}: `indices` must have as many dimensions as `a` ({a.ndim}), got {len(idx.shape)}")
    for d, (i, e) in enumerate(zip(idx.shape, a.shape)):
        if d != axis and i > e:
            raise ValueError(f"{name}: `indices` is larger than `a` along dimension {d} ({i} > {e})")
    vals, direct = _scatter_add_values(values, a, idx.shape, name)
    # float16 in float32 (rounded once at the end), 8/16-bit integers in 32 bits (wrapping when stored)
    home = dtypes.home32(a.dtype)
    if home != a.dtype:
        vals = dataclasses.replace(vals, dtype=home)
        direct = Walk(vals.offset, direct.strides)
    wide = home.itemsize == 8
    big = (windows.is_big(a.size * home.itemsize) if home != a.dtype else a.buffer.big) or vals.big or idx.big
    ordered = wide or (deterministic and home == dtypes.float32)
    if big and ordered:
        raise ValueError(f"{name}: " + (f"{home} arrays larger than maxStorageBufferRange are not supported"
                                        if wide else
                                        "deterministic=True does not work with arrays larger than "
                                        "maxStorageBufferRange; pass deterministic=False (atomic adds: the "
                                        "float32 rounding then depends on the order)"))
    # Checked: GPU work from here on.
    out = a if home == a.dtype else a.astype(home)
    if big:
        out = _scatter_add_in_windows(out, idx, vals, direct, axis)
    elif ordered:
        out = _scatter_add_ordered(out, idx, vals, direct, axis)
    else:
        out = _scatter_add_atomic(out, idx, vals, direct, axis)
    return out if home == a.dtype else out.astype(a.dtype)


def _adds(a: Array, idx: Index, direct: Walk, axis: int) -> tuple:
    """The atomic adds' plan arguments (plan_indexed's or plan_in_windows' first seven), defines
    and per-trip loop count."""
    strides = contiguous_strides(a.shape)
    t = dtypes.GLSL[a.dtype]
    defines = {"T": t, **({"T_IS_FLOAT": 1} if t == "float" else {})}
    args = ("SCATTER_ADD", idx.shape, direct, Walk(idx.offset, contiguous_strides(idx.shape)),
            Walk(0, zero_at(strides, axis)), strides[axis], idx)
    return args, defines, _cas_trip() if t == "float" else 1


def _scatter_add_atomic(a: Array, idx: Index, vals: _Values, direct: Walk, axis: int) -> Array:
    args, defines, per_trip = _adds(a, idx, direct, axis)
    add = plan_indexed(*args, defines, per_trip=per_trip) if math.prod(idx.shape) else None
    copy = plan_full_copy(a, idx.name) if a.size else None
    out = Array.empty(a.shape, a.dtype)
    if copy is not None:
        launch_copy(copy, out.buffer, a.buffer)
    if add is not None:
        idx.launch(add, vals.device().buffer, out.buffer, out.buffer)
        idx.done()
    return out


def _scatter_add_in_windows(a: Array, idx: Index, vals: _Values, direct: Walk, axis: int) -> Array:
    """_scatter_add_atomic where a, the values or the indices are past the bind range: the copy
    of a and the adds in windows (planned before any GPU work)."""
    check_windowed(a.dtype, idx.name)
    args, defines, per_trip = _adds(a, idx, direct, axis)
    passes = None
    if math.prod(idx.shape):
        passes, _ = plan_in_windows(*args, vals.big, windows.is_big(4 * a.size), idx.name, defines,
                                    per_trip=per_trip)
    out = Array.empty(a.shape, a.dtype)
    if a.size:
        copy_into(a, out)
    if passes is not None:
        launch_in_windows(passes, None, vals.device(), out, idx)
    return out


def _cas_trip() -> int:
    """Counted iterations of one float scatter-add, an estimate: its grid-stride trip and the
    compare-and-swap loop, which retries while other lanes of its subgroup (run one after another
    on lavapipe) win the same word, and once more on its way out. Contention from other
    workgroups adds retries no plan can bound."""
    return 2 + max(1, runtime.get().device.max_subgroup_size)


def _ordered_pieces(plan: Plan, m: int, i_stride: int, d_stride: int) -> list:
    """The ordered scatter-add's plan cut along the contributions (word 2, m of them): each piece
    takes the next run of them, from the offsets of D and I moved on, so that one destination's
    loop over them fits the loop budget (each contribution counts once per grid-stride trip, each
    trip 2 more: itself and the loop's exit). Pieces after the first add onto the output."""
    items = plan.words[0]
    trips = -(-items // (plan.groups * WG))
    pieces = budget_chunks(m, per_trip=trips, reserve=2 * trips)
    step = -(-m // pieces)
    out = []
    for j0 in range(0, m, step):
        words = list(plan.words)
        words[2] = min(step, m - j0)
        words[3] += j0 * d_stride
        words[4] += j0 * i_stride
        if j0:
            words[5] = 0  # the base is the output (offset 0) from the second piece on
        out.append(dataclasses.replace(plan, words=words))
    return out


def _ordered_defines(dt) -> dict:
    """The ordered kernel's element type: float32, or a 64-bit one (its words in pairs: T64)."""
    if dt.itemsize == 8:
        return {"T": dtypes.glsl(dt), "T64": 1, **dtypes.type_defines([dt])}
    return {"T": "float"}


def _scatter_add_ordered(a: Array, idx: Index, vals: _Values, direct: Walk, axis: int) -> Array:
    """Each destination element gathers its contributions in index order (no atomics, no sort).
    Where the indices cover all of a off the axis, one pass reads a and writes the output;
    otherwise the output starts as a copy of a and the covered block is updated in place. Where
    the loop budget cannot hold all the contributions of an element, several passes take them
    in turn, each adding onto the output: the same sums in the same order."""
    shape = list(idx.shape)
    shape[axis] = a.shape[axis]
    covers = tuple(shape) == a.shape
    idx_strides = contiguous_strides(idx.shape)
    pieces = []
    if math.prod(shape) and idx.shape[axis]:
        plan = plan_indexed(
            "SCATTER_ADD_ORDERED", shape, Walk(direct.offset, zero_at(direct.strides, axis)),
            Walk(idx.offset, zero_at(idx_strides, axis)),
            Walk(a.offset if covers else 0, contiguous_strides(a.shape)), idx.shape[axis], idx,
            _ordered_defines(a.dtype), ordered=(axis, 0, idx_strides[axis], direct.strides[axis]), per_trip=3)
        pieces = _ordered_pieces(plan, idx.shape[axis], idx_strides[axis], direct.strides[axis])
    copy = None if (covers and pieces) or not a.size else plan_full_copy(a, idx.name)
    out = Array.empty(a.shape, a.dtype)
    if copy is not None:
        launch_copy(copy, out.buffer, a.buffer)
    for k, plan in enumerate(pieces):
        src = a if covers and k == 0 else out
        idx.launch(plan, vals.device().buffer, src.buffer, out.buffer)
    idx.done()
    return out
