"""Layer norm and RMS norm, forward and backward, with torch.nn.functional's signatures.

    y = vk.layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5)
    y = vk.rms_norm(x, normalized_shape, weight=None, eps=None)
    dx, dweight, dbias = vk.layer_norm_vjp(x, weight, bias, cotangent, normalized_shape, eps=1e-5)
    dx, dweight = vk.rms_norm_vjp(x, weight, cotangent, normalized_shape, eps=None)

x is normalized over its trailing dims `normalized_shape`; every leading dim is a row. float32,
float32 accumulation; float16 and bfloat16 arrays (x, weight, bias, cotangent, each its own) are
computed in float32 and each result rounded once to its input's dtype (y and dx x's, dweight
weight's, dbias bias's), as torch's half layer norm computes: x and dy of one half dtype are read
and y and dx written as halves by the kernels themselves (HALF_IO, where the device has 16-bit
storage), the rest converted first. With a float64 array among them
everything is converted to float64 and computed in it by the same kernels' float64 variants,
each result then in its input's dtype as above.
Kernels (shaders/ops/layernorm.comp):

* forward, one dispatch: a workgroup per row (a subgroup per row for short rows, where the device
  has subgroup arithmetic), grid-strided over rows; the row sits in registers (vec4s when D % 4 == 0
  and the offsets allow), mean and variance by two passes over the registers. Rows too long for
  registers stream from memory (a pass per statistic).
* backward, one or two dispatches: dx in one pass over x and dy (mean/rstd recomputed, since the API
  passes x only); dweight/dbias accumulate in registers over a grid-strided set of rows per
  workgroup, are written as a (workgroups x D) partial per output, and a column-sum dispatch
  (shaders/ops/layernorm_colsum.comp) finishes them. The number of workgroups is capped, so the
  temporary is small: never rows x D.
* the loop budget (lavapipe): each invocation's loops (rows grid-stride, streamed passes over a
  row, workgroup sums) are planned to fit it: more workgroups, the forward's rows over several
  dispatches; a row too long for one workgroup's budget is normalized by budget-aware reductions
  along it and elementwise kernels instead (_forward_split, _backward_split).
* float64: the kernels' F64 variants (doubles in registers: half the elements per invocation);
  the backward's partial sums are summed by the float64 reduction.

Bad input raises (ValueError / TypeError) before anything is recorded.
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes, runtime
from ..array import Array, Storage
from ..primitives import elementwise as ew, launch, reduce
from ..primitives.creation import asarray_or_none, zeros
from ..primitives.launch import LoopBudgetError, budget_chunks, collective_cost, pow2ceil
from ..primitives.operands import held_dtype, operand
from .tuning import (LAYERNORM_BWD_THREADS, LAYERNORM_FLOATS_PER_THREAD_BWD, LAYERNORM_HALF_MIN_WG_BWD,
                     LAYERNORM_HALF_MIN_WG_FWD, LAYERNORM_HALF_WG_DIV, LAYERNORM_PREFERRED_WG_BWD,
                     LAYERNORM_VECS_PER_THREAD, LAYERNORM_VECS_PER_THREAD_BWD)

__all__ = ["layer_norm", "rms_norm", "layer_norm_vjp", "rms_norm_vjp"]

_SHADER = "ops/layernorm.comp"
_COLSUM = "ops/layernorm_colsum.comp"

# Planning knobs (vectors are vec4 or float, whichever the row is read as); the measured ones come
# from tuning.py, with their measurements.
VECS_PER_THREAD = LAYERNORM_VECS_PER_THREAD  # target vectors per invocation, workgroup-per-row mode
VECS_PER_THREAD_BWD = LAYERNORM_VECS_PER_THREAD_BWD  # ... in the backward
FLOATS_PER_THREAD_FWD = 32  # most floats of the row held per invocation (forward)
FLOATS_PER_THREAD_BWD = LAYERNORM_FLOATS_PER_THREAD_BWD  # the same for the backward
HALF_WG_DIV = LAYERNORM_HALF_WG_DIV  # halves: the workgroup this many times smaller (a power of two) ...
HALF_MIN_WG_FWD = LAYERNORM_HALF_MIN_WG_FWD  # ... not below this in the forward ...
HALF_MIN_WG_BWD = LAYERNORM_HALF_MIN_WG_BWD  # ... nor this in the backward
PREFERRED_WG_FWD = 512     # largest workgroup the forward picks before it must go larger
PREFERRED_WG_BWD = LAYERNORM_PREFERRED_WG_BWD  # ... and the backward
MIN_WG = 32
SG_VECS = 4                # a subgroup per row while a row is at most this many vectors per lane
SG_VECS_BWD = 2            # ... in the backward (five register arrays: x, dy, weight, 2 partials)
SG_WG = 256                # workgroup size in subgroup-per-row mode
BWD_THREADS = LAYERNORM_BWD_THREADS  # backward: about this many invocations in all (caps the workgroups) ...
BWD_MIN_ROWS = 2           # ... each worker taking at least this many rows ...
PARTIAL_MAX_FLOATS = 1 << 23  # ... and the partial sums at most this many floats
FWD_MAX_GROUPS = 1 << 16  # forward workgroups at most (and the device's limit); rows grid-stride
COLSUM_WG = 256
COLSUM_MIN_GROUPS = 128    # column sum: narrower column tiles (more row slices) until this many


@dataclass(frozen=True)
class Plan:
    mode: str   # "sg" (a subgroup per row), "wg" (a workgroup per row, row in registers), "stream"
    wg: int     # workgroup size
    n: int      # vectors per invocation in registers (0 when streaming)
    vec4: bool

    @property
    def width(self) -> int:
        return 4 if self.vec4 else 1


def plan(d: int, vec4: bool, backward: bool, dev=None, f64: bool = False, half: bool = False) -> Plan:
    """Kernel shape for rows of `d` elements (float64's: `f64`; float16's or bfloat16's: `half`):
    mode, workgroup size and register vectors."""
    dev = dev or runtime.get().device
    width = 4 if vec4 else 1
    dv = -(-d // width)
    max_wg = min(1024, dev.max_workgroup_invocations)
    max_floats = FLOATS_PER_THREAD_BWD if backward else FLOATS_PER_THREAD_FWD
    if f64:
        max_floats //= 2  # a double takes two registers
    min_sg = max(1, dev.min_subgroup_size)
    if dev.has("arithmetic") and dv <= min_sg * (SG_VECS_BWD if backward else SG_VECS) and SG_WG <= max_wg \
            and SG_WG % max(1, dev.max_subgroup_size) == 0:
        return Plan("sg", SG_WG, -(-dv // min_sg), vec4)
    pref = min(max_wg, PREFERRED_WG_BWD if backward else PREFERRED_WG_FWD)
    per_thread = VECS_PER_THREAD_BWD if backward else VECS_PER_THREAD
    wg = max(min(MIN_WG, max_wg), min(pref, pow2ceil(-(-dv // per_thread))))
    n = -(-dv // wg)
    if n * width > max_floats:
        wg = max_wg
        n = -(-dv // wg)
    if n * width > max_floats:
        return Plan("stream", max_wg, 0, vec4)
    # halves: the same workgroup reads half float32's bytes in float32's time; smaller workgroups
    # holding more vectors each keep more rows (and bytes) in flight
    div = HALF_WG_DIV if half else 1
    floor = max(MIN_WG, HALF_MIN_WG_BWD if backward else HALF_MIN_WG_FWD)
    while div > 1 and wg // 2 >= floor and (n * 2) * width <= max_floats and wg % 2 == 0:
        wg //= 2
        n = -(-dv // wg)
        div //= 2
    return Plan("wg", wg, n, vec4)


# ----------------------------------------------------------------------------- validation
_FLOATS = (dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64)


def _float_operand(obj, name: str, fn: str):
    """operand(obj) (host data kept, uploaded once every argument is checked), float32, float16,
    bfloat16 or float64: a vk.Array or numpy data already (numpy's float64 held as float32, as asarray
    does), or Python floats (a list or a number, uploaded as float32)."""
    x = operand(obj, fn, name, host="keep", half=True, wide=True)
    held = held_dtype(x)
    if held not in _FLOATS:
        raise TypeError(f"{fn}: {name} must be float32, float64, float16 or bfloat16, got {held}")
    return x


def _normalized_shape(ns, fn: str) -> tuple:
    if isinstance(ns, (bool, np.bool_)):
        raise TypeError(f"{fn}: normalized_shape must be an int or a tuple of ints, got {ns!r}")
    if isinstance(ns, (numbers.Integral, np.integer)):
        ns = (ns,)
    try:
        ns = tuple(operator.index(s) for s in ns)
    except TypeError as e:
        raise TypeError(f"{fn}: normalized_shape must be an int or a tuple of ints, got {ns!r}") from e
    if not ns:
        raise ValueError(f"{fn}: normalized_shape must have at least one dimension")
    if any(s < 0 for s in ns):
        raise ValueError(f"{fn}: normalized_shape {ns} has a negative dimension")
    return ns


def _eps(eps, default, fn: str) -> float:
    if eps is None:
        if default is None:
            raise TypeError(f"{fn}: eps must be a number, got None")
        return default
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{fn}: eps must be a real number, got {eps!r}")
    eps = float(eps)
    if not (eps >= 0.0) or math.isinf(eps):
        raise ValueError(f"{fn}: eps must be finite and >= 0, got {eps}")
    return eps


_NO_COTANGENT = object()


def _check(fn, x, normalized_shape, params: dict, cotangent=_NO_COTANGENT):
    """Validate everything, then upload host inputs, the halves converted to float32. Returns (x, ns,
    params, cotangent, the dtypes each result takes: {'x': x's, and each param's})."""
    ns = _normalized_shape(normalized_shape, fn)
    x = _float_operand(x, "x", fn)
    k = len(ns)
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != ns:
        raise ValueError(f"{fn}: normalized_shape {ns} does not match the trailing dims of x {tuple(x.shape)}")
    checked = {}
    for name, v in params.items():
        if v is None:
            checked[name] = None
            continue
        v = _float_operand(v, name, fn)
        if tuple(v.shape) != ns:
            raise ValueError(f"{fn}: {name} has shape {tuple(v.shape)}, expected normalized_shape {ns}")
        checked[name] = v
    if cotangent is _NO_COTANGENT:
        cotangent = None
    elif cotangent is None:
        raise TypeError(f"{fn}: cotangent must be an array, got None")
    else:
        cotangent = _float_operand(cotangent, "cotangent", fn)
        if tuple(cotangent.shape) != tuple(x.shape):
            raise ValueError(f"{fn}: cotangent has shape {tuple(cotangent.shape)}, expected x's {tuple(x.shape)}")
    out_dtypes = {n: None if v is None else held_dtype(v) for n, v in {"x": x, **checked}.items()}
    held = [held_dtype(v) for v in (x, *checked.values(), cotangent) if v is not None]
    compute = dtypes.float64 if dtypes.float64 in held else dtypes.float32
    # x (and dy) of one half stay as they are where the kernel reads them in place (HALF_IO)
    hx = out_dtypes["x"]
    rows = hx if (dtypes.is_half(hx) and compute == dtypes.float32 and not dtypes.missing_features(hx)
                  and (cotangent is None or held_dtype(cotangent) == hx)) else compute
    return (asarray_or_none(x, rows), ns, {n: asarray_or_none(v, compute) for n, v in checked.items()},
            asarray_or_none(cotangent, rows), out_dtypes)


def _buf(a, dummy):
    """The buffer of `a`, or a dummy binding (never read) where it is None."""
    return (dummy if a is None else a).buffer


def _vec4_ok(d: int, *arrays) -> bool:
    return d % 4 == 0 and all(a is None or a.offset % 4 == 0 for a in arrays)


# ------------------------------------------------------------------------------- recording
def _defines(pl: Plan, backward: bool, rms: bool, has_w: bool, has_b: bool, dev, f64: bool,
             half=None) -> dict:
    """half: x's dtype where it is a half (HALF_IO: x, y / dy, dx held as its bits)."""
    d = {"N": pl.n}
    if half is not None:
        d.update(HALF_IO=1, VK_WIDE=1)
        if half == dtypes.bfloat16:
            d["HALF_BF16"] = 1
    if f64:
        d.update(F64=1, VK_WIDE=1, VK_MATH64=1, WG_T64="double")
        if dev.has("arithmetic"):
            d["SG_T64"] = 1
    if backward:
        d["BACKWARD"] = 1
    if rms:
        d["RMS"] = 1
    if has_w:
        d["HAS_W"] = 1
    if has_b:
        d["HAS_B"] = 1
    if pl.vec4:
        d["VEC4"] = 1
    if pl.mode == "sg":
        d["SG_ROWS"] = 1
        d["SG_MIN"] = max(1, dev.min_subgroup_size)
        if backward and (has_w or has_b):
            d["SG_CAP"] = pl.n * max(1, dev.max_subgroup_size)
    return d


def _push(rows: int, dv: int, d: int, eps: float, offsets, ps: int, kstride: int, f64: bool) -> tuple:
    """layernorm.comp's push constants (offsets: x, weight, bias or dy, y or dx, in vectors);
    float64's kernel takes eps as a double's two words at the end."""
    words = tuple(int(w) for w in np.array([eps]).view(np.uint32)) if f64 else ()
    return (rows, dv, 1.0 / d, eps, *offsets, ps, kstride, *words)


def _rows_per_group(pl: Plan, dev) -> int:
    return max(1, pl.wg // max(1, dev.subgroup_size)) if pl.mode == "sg" else 1


# ----------------------------------------------------------------------------- loop budget
# layernorm.comp's counted loops, per invocation: the rows loop (a trip per row it takes), in
# each row the streamed passes over it (N == 0) and the workgroup sums (wg_reduce_add; the
# backward's row_sum3 walks the subgroups' sums), and in the backward the loops before and after
# the rows (zeroing a streamed partial row; SG_ROWS's merge of the subgroups' partials).
# The rows loop's exit is counted 1, where lavapipe counts 1 + the counted loops in its body
# (launch.budget_chunks' `nested`): that matters only where counted loops follow it, which is
# SG_ROWS's merge alone, and SG_ROWS's rows hold none (registers and subgroup sums). Checked
# under VKBACKEND_LOOP_BUDGET=1024 (rows of 32, weight and bias): planned to the budget's last
# trip, dweight and dbias are exact, and stay so up to 3 trips past it, wrong from 4 on; an exit
# costing more than modelled would break them sooner.
def _subgroups(wg: int, dev) -> int:
    return -(-wg // max(1, dev.min_subgroup_size))


def _row_cost(pl: Plan, d: int, backward: bool, rms: bool, dev) -> int:
    """Counted iterations of one row, its trip of the rows loop excluded: the mean's workgroup sum
    (layer norm), the variance's (forward) or row_sum3's (backward), and streamed, a loop per pass
    over the row (forward: mean, variance, y; backward: mean, the three sums, dx)."""
    if pl.mode == "sg":
        return 0  # subgroup sums, rows in registers
    coll = collective_cost(pl.wg)
    cost = 0 if rms else coll
    if backward:
        cost += _subgroups(pl.wg, dev) + 1 if dev.has("arithmetic") else 3 * coll
    else:
        cost += coll
    if pl.mode == "stream":
        dv = -(-d // pl.width)
        cost += (2 if rms else 3) * (-(-dv // pl.wg) + 1)
    return cost


def _bwd_reserve(pl: Plan, d: int, kk: int, dev) -> int:
    """The backward's counted loops outside the rows loop (with weight or bias sums: zeroing the
    streamed partial row, or SG_ROWS's merge of the subgroups' partials), and that loop's exit."""
    dv = -(-d // pl.width)
    if kk and pl.mode == "stream":
        return 1 + -(-dv // pl.wg) + 1
    if kk and pl.mode == "sg":
        return 1 + kk * (_subgroups(pl.wg, dev) + 1 + -(-dv // pl.wg) + 1)
    return 1


def _row_fits(pl: Plan, d: int, backward: bool, rms: bool, kk: int, dev) -> bool:
    """Whether one workgroup (one trip) can take a row inside the loop budget."""
    budget = launch.loop_budget()
    reserve = _bwd_reserve(pl, d, kk, dev) if backward else 1
    return budget is None or reserve + 1 + _row_cost(pl, d, backward, rms, dev) <= budget


def _forward(x, ns, w, b, eps, rms) -> Array:
    d = math.prod(ns)
    rows = x.size // d if d else 0
    if x.size == 0:
        return Array.empty(x.shape, x.dtype)
    f64 = x.dtype == dtypes.float64
    half = x.dtype if dtypes.is_half(x.dtype) else None
    rt = runtime.get()
    dev = rt.device
    pl = plan(d, _vec4_ok(d, x, w, b), backward=False, dev=dev, f64=f64, half=half is not None)
    if not _row_fits(pl, d, False, rms, 0, dev):
        return _forward_split(x, ns, w, b, eps, rms)
    out = Array.empty(x.shape, x.dtype)
    wd = pl.width
    per_group = _rows_per_group(pl, dev)
    groups = min(-(-rows // per_group), FWD_MAX_GROUPS, dev.max_workgroup_count[0])
    trips = -(-rows // (groups * per_group))
    # rows grid-stride; where the budget cannot take them all, several dispatches take turns
    step = groups * per_group * -(-trips // budget_chunks(trips, 1 + _row_cost(pl, d, False, rms, dev)))
    k = rt.kernel(_SHADER, _defines(pl, False, rms, w is not None, b is not None, dev, f64, half), pl.wg)
    dv = d // wd
    for r0 in range(0, rows, step):
        push = _push(min(step, rows - r0), dv, d, eps, (x.offset // wd + r0 * dv, 0 if w is None else w.offset // wd,
                     0 if b is None else b.offset // wd, out.offset // wd + r0 * dv), 0, 0, f64)
        k([x.buffer, _buf(w, x), _buf(b, x), out.buffer], push, (min(groups, -(-(rows - r0) // per_group)),))
    return out


def _rows_view(a: Array, d: int) -> Array:
    return a.reshape((a.size // d, d))


def _statistics(x2: Array, eps: float, rms: bool) -> tuple:
    """(x - mean (x for RMS), sqrt(var + eps)) of each row of x2, by reductions along the rows."""
    xc = x2 if rms else ew.subtract(x2, reduce.mean(x2, axis=1, keepdims=True))
    var = reduce.mean(ew.multiply(xc, xc), axis=1, keepdims=True)
    return xc, ew.sqrt(ew.add(var, eps))


def _widened(a: Array) -> Array:
    """A half x or dy as float32 (the split paths compute on whole arrays, rounded once at the end)."""
    return a.astype(dtypes.float32) if dtypes.is_half(a.dtype) else a


def _forward_split(x, ns, w, b, eps, rms) -> Array:
    """Rows too long for one workgroup's loop budget: the statistics by reductions along the rows
    (split across workgroups as the budget needs), the normalization elementwise."""
    d = math.prod(ns)
    xc, std = _statistics(_rows_view(_widened(x), d), eps, rms)
    y = ew.divide(xc, std)
    if w is not None:
        y = ew.multiply(y, w.reshape((d,)))
    if b is not None:
        y = ew.add(y, b.reshape((d,)))
    return y.reshape(x.shape)


def _backward_split(x, ns, w, dy, eps, rms, want_w: bool, want_b: bool):
    """_forward_split's counterpart: dx = (g - mean(g) - xhat * mean(g * xhat)) / std with
    g = dy * w and xhat = xc / std; dweight and dbias as column sums."""
    d = math.prod(ns)
    x2, dy2 = _rows_view(_widened(x), d), _rows_view(_widened(dy), d)
    xc, std = _statistics(x2, eps, rms)
    xhat = ew.divide(xc, std)
    g = dy2 if w is None else ew.multiply(dy2, w.reshape((d,)))
    t = ew.subtract(g, ew.multiply(xhat, reduce.mean(ew.multiply(g, xhat), axis=1, keepdims=True)))
    if not rms:
        t = ew.subtract(t, reduce.mean(g, axis=1, keepdims=True))
    dx = ew.divide(t, std).reshape(x.shape)
    dw = reduce.sum(ew.multiply(dy2, xhat), axis=0).reshape(ns) if want_w else None
    db = reduce.sum(dy2, axis=0).reshape(ns) if want_b else None
    return dx, dw, db


def colsum_shape(ncols: int, dev) -> tuple:
    """(workgroup size, vec4 columns per workgroup) of the column sum: 64 columns (coalesced rows),
    halved while that leaves fewer than COLSUM_MIN_GROUPS workgroups, down to 2; the rest of the
    workgroup splits the partial rows."""
    wg = 1 << (min(COLSUM_WG, dev.max_workgroup_invocations).bit_length() - 1)
    cols = min(64, wg)
    while cols > 2 and -(-ncols // cols) < COLSUM_MIN_GROUPS:
        cols //= 2
    return wg, cols


def _bwd_groups(rows: int, per_group: int, groups: int, pl: Plan, d: int, rms: bool, kk: int, dev,
                itemsize: int = 4) -> int:
    """`groups`, raised where the loop budget cannot take each workgroup's share of the rows (the
    weight and bias partials grow with it: one row of each per workgroup)."""
    budget = launch.loop_budget()
    if budget is None:
        return groups
    trips = -(-rows // (groups * per_group))
    room = (budget - _bwd_reserve(pl, d, kk, dev)) // (1 + _row_cost(pl, d, True, rms, dev))
    if trips <= room:
        return groups
    need = -(-rows // (per_group * room))
    dp = -(-d // 4) * 4
    if need > dev.max_workgroup_count[0] or kk * need * dp * itemsize > dev.max_storage_buffer_range:
        raise LoopBudgetError(f"layer norm backward: {rows} rows of {d} need {need} workgroups to keep "
                              f"each inside the loop budget of {budget}; the device allows "
                              f"{dev.max_workgroup_count[0]} (and partial sums of at most "
                              f"{dev.max_storage_buffer_range} bytes)")
    return need


def _colsum_cost(g: int, ncols: int, wg: int, cols: int, dev) -> int:
    """layernorm_colsum.comp's count: per column tile, its trip, the 4-way loop and the tail over
    this invocation's partial rows, and the tree over the row slices."""
    slices = wg // cols
    tiles = -(-ncols // cols)
    per = -(-g // slices)
    per_tile = 1 + per // 4 + 1 + 3 + 1 + (slices - 1).bit_length() + 1
    return -(-tiles // min(tiles, dev.max_workgroup_count[0])) * per_tile + 1


def _colsum_plan(g: int, ncols: int, dev) -> tuple:
    """(workgroup size, columns per workgroup): colsum_shape's, with narrower column tiles (more
    row slices) where the loop budget needs them."""
    wg, cols = colsum_shape(ncols, dev)
    budget = launch.loop_budget()
    while budget is not None and cols > 1 and _colsum_cost(g, ncols, wg, cols, dev) > budget:
        cols //= 2
    if budget is not None and _colsum_cost(g, ncols, wg, cols, dev) > budget:
        raise LoopBudgetError(f"layer norm backward: a column sum over {g} partial rows does not fit "
                              f"the loop budget of {budget}")
    return wg, cols


def _backward(x, ns, w, dy, eps, rms, want_w: bool, want_b: bool):
    """dx, and dweight / dbias (None where not wanted)."""
    d = math.prod(ns)
    rows = x.size // d if d else 0
    kk = int(want_w) + int(want_b)
    if d == 0 or rows == 0:
        dx = Array.empty(x.shape, x.dtype)
        dw = zeros(ns, dtype=x.dtype) if want_w else None  # rounded to the weight's dtype by the caller
        db = zeros(ns, dtype=x.dtype) if want_b else None
        return dx, dw, db
    f64 = x.dtype == dtypes.float64
    half = x.dtype if dtypes.is_half(x.dtype) else None
    acc = dtypes.float32 if half else x.dtype  # the partial sums' dtype
    rt = runtime.get()
    dev = rt.device
    pl = plan(d, _vec4_ok(d, x, w, dy), backward=True, dev=dev, f64=f64, half=half is not None)
    if not _row_fits(pl, d, True, rms, kk, dev):
        return _backward_split(x, ns, w, dy, eps, rms, want_w, want_b)
    wd = pl.width
    per_group = _rows_per_group(pl, dev)
    groups = -(-rows // per_group)
    dp = -(-d // 4) * 4  # partial rows padded to whole vec4s for the column sum
    if kk:
        groups = min(groups, -(-rows // (per_group * BWD_MIN_ROWS)), max(1, BWD_THREADS // pl.wg),
                     max(1, PARTIAL_MAX_FLOATS // (kk * dp)))
    groups = max(1, min(groups, dev.max_workgroup_count[0]))
    groups = _bwd_groups(rows, per_group, groups, pl, d, rms, kk, dev, acc.itemsize)
    ps4 = dp // 4
    ncols = kk * ps4
    if kk and not f64:
        cwg, cols = _colsum_plan(groups, ncols, dev)
    dx = Array.empty(x.shape, x.dtype)
    ps = dp // wd
    part = Array.empty((kk * groups * dp,), acc) if kk else None
    k = rt.kernel(_SHADER, _defines(pl, True, rms, want_w, want_b, dev, f64, half), pl.wg)
    push = _push(rows, d // wd, d, eps, (x.offset // wd, 0 if w is None else w.offset // wd, dy.offset // wd,
                 dx.offset // wd), ps, groups * ps, f64)
    bufs = [x.buffer, _buf(w, x), dy.buffer, dx.buffer]
    if part is not None:
        bufs.append(part.buffer)
    k(bufs, push, (groups,))
    if not kk:
        return dx, None, None
    if f64:  # float64's partials: summed down their columns by the reduction (in float64)
        sums = reduce.sum(part.reshape((kk, groups, dp)), axis=1)
        views = [sums[i, :d].reshape(ns) for i in range(kk)]
    else:
        # Column sums of the partials into one (kk * D) storage; dweight / dbias are views of it.
        storage = Storage(kk * d)
        cs = rt.kernel(_COLSUM, {}, cwg, (cols,))
        cgroups = max(1, min(-(-ncols // cols), dev.max_workgroup_count[0]))
        cs([part.buffer, storage.buffer], (groups, ps4, ncols, d, 0), (cgroups,))
        views = [Array(storage, ns, dtypes.float32, i * d) for i in range(kk)]
    dw = views.pop(0) if want_w else None
    db = views.pop(0) if want_b else None
    return dx, dw, db


# ------------------------------------------------------------------------------------- API
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5) -> Array:
    """torch.nn.functional.layer_norm: (x - mean) / sqrt(var + eps) * weight + bias over the
    trailing `normalized_shape` dims (biased variance)."""
    fn = "layer_norm"
    eps = _eps(eps, None, fn)
    x, ns, p, _, dts = _check(fn, x, normalized_shape, {"weight": weight, "bias": bias})
    return asarray_or_none(_forward(x, ns, p["weight"], p["bias"], eps, rms=False), dts["x"])


def rms_norm(x, normalized_shape, weight=None, eps=None) -> Array:
    """torch.nn.functional.rms_norm: x / sqrt(mean(x^2) + eps) * weight; eps None -> float32's
    machine epsilon (torch's default)."""
    fn = "rms_norm"
    eps = _eps(eps, float(np.finfo(np.float32).eps), fn)
    x, ns, p, _, dts = _check(fn, x, normalized_shape, {"weight": weight})
    return asarray_or_none(_forward(x, ns, p["weight"], None, eps, rms=True), dts["x"])


def layer_norm_vjp(x, weight, bias, cotangent, normalized_shape, eps=1e-5):
    """(dx, dweight, dbias) of layer_norm at x for the cotangent dy; dweight / dbias are None where
    weight / bias are None."""
    fn = "layer_norm_vjp"
    eps = _eps(eps, None, fn)
    x, ns, p, dy, dts = _check(fn, x, normalized_shape, {"weight": weight, "bias": bias}, cotangent)
    dx, dw, db = _backward(x, ns, p["weight"], dy, eps, False, p["weight"] is not None, p["bias"] is not None)
    return asarray_or_none(dx, dts["x"]), asarray_or_none(dw, dts["weight"]), asarray_or_none(db, dts["bias"])


def rms_norm_vjp(x, weight, cotangent, normalized_shape, eps=None):
    """(dx, dweight) of rms_norm at x for the cotangent dy; dweight is None where weight is None."""
    fn = "rms_norm_vjp"
    eps = _eps(eps, float(np.finfo(np.float32).eps), fn)
    x, ns, p, dy, dts = _check(fn, x, normalized_shape, {"weight": weight}, cotangent)
    dx, dw, _ = _backward(x, ns, p["weight"], dy, eps, True, p["weight"] is not None, False)
    return asarray_or_none(dx, dts["x"]), asarray_or_none(dw, dts["weight"])
