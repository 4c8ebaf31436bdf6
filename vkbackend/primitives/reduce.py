"""numpy's reductions: sum, prod, max/amax, min/amin, argmax, argmin, mean, var, std, all, any.

One generic kernel, shaders/primitives/reduce.comp, reduces C-contiguous data viewed as
(outer, n, inner) along n. Reduced axes are merged where adjacent (unit axes dropped); runs that are
not adjacent are reduced one after another, innermost first. Each run is one dispatch: when there
are too few outputs to fill the device, n is split across workgroups and the last workgroup of each
output tile merges their partial states (an atomic counter), so there is never a second pass.

Result types follow the array API standard (numpy where it is silent), 32-bit where numpy would
widen: sums and products of bool and of signed integers of up to 32 bits are int32 (the default
integer), of unsigned ones uint32, and wrap modulo 2**32; int64, uint64 and float64 keep their
dtype (wrapping modulo 2**64); dtype= may ask for any dtype but bool and the halves (8/16-bit ones
accumulate in 32 bits and wrap when stored, as numpy's own wrap). mean, var and std return float64
for float64, int64 and uint64 data, else float32 (dtype= may ask for either); argmax/argmin
return int32 indices. mean sums in float32 along a tree (per invocation, workgroup, split), var and
std take two passes (the mean, then double-float sums of the deviations from it: see reduce.comp's
DEV), within about an ulp of numpy's float64 result for any offset of the data, integers near
2**31 included. float64 sums (sum, mean, the deviations of float64 var/std) accumulate as
double-doubles (reduce.comp's DD_SUM, DEV64): more accurate than numpy's pairwise sum.
max/min of a tie between -0.0 and +0.0 may return either zero: numpy's answer depends on the
order it meets them, and NVIDIA's subgroupMin orders -0.0 below +0.0.
"""
from __future__ import annotations

import builtins
import dataclasses
import math
import numbers
import weakref

import numpy as np

from .axes import normalize_axis
from .. import dtypes, runtime
from ..array import Array
from . import launch, layout, recipes, windows
from .creation import asarray, zeros
from .elementwise import astype
from .launch import LoopBudgetError, collective_cost, pow2ceil
from .tuning import REDUCE_GROUPS, REDUCE_WG

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "mean", "var", "std",
           "all", "any"]

SHADER = "primitives/reduce.comp"

# Tunables (read at each call); the measured ones come from tuning.py, with their measurements.
WG = REDUCE_WG        # invocations per workgroup (wider ones gained next to nothing)
UNROLL = 4            # loads in flight per invocation (vec4 loads on contiguous rows)
MIN_ITEMS = 4         # elements per invocation below which one workgroup takes several outputs
COALESCE = 32         # invocations along a contiguous inner axis, at least
SPLIT_ITEMS = 16      # elements per invocation, at least, in each piece of a split n (one unrolled vec4 step)
# Workgroups that fill a GPU (about 8 resident groups of 256 per multiprocessor): a constant, not
# derived from Device.multiprocessors.
GROUPS = REDUCE_GROUPS
SOFTWARE_GROUPS = 8   # the same for lavapipe, which runs a few at a time on CPU threads
_COUNTERS = 4096      # tile counters kept zeroed for split reductions (bounds the split tiles)


TREE = 0  # _Op.collectives of states that merge in reduce.comp's shared-memory tree, not by wg_merge


@dataclasses.dataclass(frozen=True)
class _Op:
    name: str
    red: str | None = None   # RED_OP: add, mul, min, max, and, or
    arg: str | None = None   # ARG_OP: max, min
    dev: bool = False        # var/std: sums of the deviations from a first pass's mean (DEV)
    truth: bool = False      # all/any: elements count as x != 0
    divide: bool = False     # out = value / den (mean, var)
    sqrt: bool = False       # std
    identity: bool = True    # False: an empty reduction is an error (numpy: "no identity")

    def state_words(self, t, out_dtype) -> int:
        """32-bit words of one partial state, T = t (see _kernel_type): value (a 64-bit one two
        words, a float64 sum's double-double four); value and index; count and two double-floats
        (float64 results: double-doubles, whatever T)."""
        wide = t.itemsize == 8
        if self.arg:
            return 3 if wide else 2
        if self.dev:
            return 9 if out_dtype == dtypes.float64 else 5
        if self.red == "add" and t == dtypes.float64:
            return 4
        return 2 if wide else 1

    def collectives(self, acc) -> int:
        """Workgroup reductions in one wg_merge of reduce.comp: 3 for float argmax/argmin (NaN
        flag, value, index), 2 for integer argmax/argmin (value, index) and float min/max (NaN
        flag, value), else 1; 0 for var/std and float64 sums (TREE: their states merge in the
        shared-memory tree in every layout)."""
        is_float = acc.kind == "f"
        if self.dev or (self.red == "add" and acc == dtypes.float64):
            return TREE
        if self.arg and is_float:
            return 3
        return 2 if self.arg or (is_float and self.red in ("min", "max")) else 1


_SUM = _Op("sum", red="add")
_PROD = _Op("prod", red="mul")
_MAX = _Op("max", red="max", identity=False)
_MIN = _Op("min", red="min", identity=False)
_ARGMAX = _Op("argmax", arg="max", identity=False)
_ARGMIN = _Op("argmin", arg="min", identity=False)
_ALL = _Op("all", red="and", truth=True)
_ANY = _Op("any", red="or", truth=True)
_MEAN = _Op("mean", red="add", divide=True)
_VAR = _Op("var", dev=True, divide=True)
_STD = _Op("std", dev=True, divide=True, sqrt=True)


# ---- validation (no GPU work) ----------------------------------------------------------------
def _inspect(a, name: str):
    """(shape, dtype, host array or None) of the operand, without uploading anything."""
    if isinstance(a, Array):
        return a.shape, a.dtype, None
    if isinstance(a, (np.ndarray, np.generic, list, tuple, numbers.Number)):
        host = np.asarray(a)
        return host.shape, dtypes.from_host(host.dtype), host
    raise TypeError(f"{name}: expected a vk.Array, a numpy array or a number, got {type(a).__name__}")


def _axis_index(ax, ndim: int, name: str) -> int:
    return normalize_axis(ax, ndim, name, "None, an integer or a tuple of integers")


def _axes(axis, ndim: int, name: str, single: bool = False) -> tuple:
    """The reduced axes, sorted and non-negative; `single`: None or one int (argmax/argmin)."""
    if axis is None:
        return tuple(range(ndim))
    if single and isinstance(axis, tuple):
        raise TypeError(f"{name}: axis must be None or an integer, got the tuple {axis!r}")
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = [_axis_index(ax, ndim, name) for ax in items]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in axis {axis!r}")
    return tuple(sorted(axes))


def _types(op: _Op, in_dtype, dtype):
    """(accumulation dtype, result dtype) for `op` on `in_dtype` (see the module's docstring)."""
    if dtype is not None and (op.red in ("add", "mul") or op.divide):
        dtype = dtypes.check(dtype, held=True)  # the WIDE dtypes where the device has them
        if op.divide and dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError(f"{op.name}: dtype {dtype} is not supported; expected float32 or float64")
        if dtype == dtypes.bool_ or dtypes.is_half(dtype):
            raise TypeError(f"{op.name}: dtype {dtype} is not supported; expected an integer dtype, "
                            "float32 or float64")
        return dtype, dtype
    if op.divide:  # float64 data, and 64-bit integers (numpy's float64), else float32
        out = dtypes.float64 if in_dtype.itemsize == 8 else dtypes.float32
        return dtypes.check(out, held=True), out
    acc = dtypes.storage(in_dtype)  # bool compares and counts as uint32 words
    if op.truth:
        return dtypes.uint32, dtypes.bool_
    if op.arg:
        return acc, dtypes.int32
    if op.red in ("add", "mul") and acc.itemsize < 8 and acc.kind in "iu":
        acc = dtypes.int32 if in_dtype.kind in "ib" else dtypes.uint32  # the standard's default integers
        return acc, acc
    return acc, in_dtype


def _check_ddof(ddof, name: str) -> float:
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, numbers.Real):
        raise TypeError(f"{name}: ddof must be a real number, got {ddof!r}")
    return float(ddof)


# ---- planning ----------------------------------------------------------------------------------
def _runs(shape: tuple, axes: tuple) -> list:
    """Merged groups [extent, reduced], unit axes dropped and adjacent groups of a kind merged."""
    groups = []
    for d, extent in enumerate(shape):
        if extent == 1:
            continue
        red = d in axes
        if groups and groups[-1][1] == red:
            groups[-1][0] *= extent
        else:
            groups.append([extent, red])
    return groups


def _steps(shape: tuple, axes: tuple) -> list:
    """(outer, n, inner) per dispatch: each run of reduced axes, innermost first."""
    n_total = math.prod(shape[d] for d in axes)
    outputs = math.prod(s for d, s in enumerate(shape) if d not in axes)
    groups = _runs(shape, axes)
    if n_total <= 1:
        return [(outputs, n_total, 1)]  # nothing to combine: one dispatch writes identity or x
    steps = []
    while builtins.any(red for _, red in groups):
        k = builtins.max(i for i, (_, red) in enumerate(groups) if red)
        steps.append((math.prod(e for e, _ in groups[:k]), groups[k][0],
                      math.prod(e for e, _ in groups[k + 1:])))
        del groups[k]
        if 0 < k < len(groups):  # the kept neighbours of the reduced run become one axis
            groups[k - 1][0] *= groups.pop(k)[0]
    return steps


@dataclasses.dataclass(frozen=True)
class _Plan:
    cols: int        # outputs per workgroup
    row_fast: int    # 1: consecutive invocations walk n
    tiles: int
    splits: int      # workgroups per output along n
    chunk: int       # elements of n per split

    @property
    def row_layout(self) -> bool:
        return self.cols == 1


def _split(n: int, splits: int) -> tuple:
    """(splits, chunk): n cut into about `splits` chunks whose boundaries keep 16-byte alignment."""
    if splits <= 1:
        return 1, n
    chunk = -(-n // splits)
    chunk = -(-chunk // 4) * 4
    return -(-n // chunk), chunk


def _plan(n: int, inner: int, outputs: int, dev, collectives: int = 1, tree64: bool = False) -> _Plan:
    rows = builtins.min(WG, pow2ceil(-(-n // MIN_ITEMS)))
    cols = WG // rows
    if inner > 1:
        cols = builtins.max(cols, builtins.min(WG, pow2ceil(inner), COALESCE))
    rows = WG // cols
    tiles = -(-outputs // cols)
    target = SOFTWARE_GROUPS if dev.is_software else GROUPS
    splits = 1
    if tiles < target and tiles <= _COUNTERS:
        splits = builtins.max(1, builtins.min(-(-target // tiles), n // (rows * SPLIT_ITEMS)))
    plan = _Plan(cols, int(inner == 1 and cols > 1), tiles, *_split(n, splits))
    budget = launch.loop_budget()
    if budget is None or _cost(plan, dev, collectives, tree64) <= budget:
        return plan
    return _fit_budget(plan, n, dev, collectives, budget, tree64)


# ---- the loop budget: counted iterations of one invocation (see launch.loop_budget) -------------
def _tile_trips(plan: _Plan, dev) -> int:
    return -(-plan.tiles // builtins.min(plan.tiles, dev.max_workgroup_count[0]))


def _fold_cost(plan: _Plan, chunk: int) -> int:
    """fold / fold_row over `chunk` elements: UNROLL-wide steps, a tail below UNROLL (each loop 1
    more on its way out); rows also fold a scalar head and tail around the vec4 body."""
    rows = WG // plan.cols
    if plan.row_layout:
        return -(-chunk // (4 * rows)) // UNROLL + UNROLL + 1 + 6
    return -(-chunk // rows) // UNROLL + UNROLL + 1


def _merge_cost(plan: _Plan, collectives: int, tree64: bool = False) -> int:
    """merge_rows: wg_merge's workgroup reductions, or the shared-memory tree over the rows (the
    tree layout, and states that merge so: collectives == TREE). tree64: 64-bit values reduce
    through lib/workgroup.glsl's shared-memory fallback (no subgroup arithmetic on them)."""
    if plan.row_layout and collectives != TREE:
        tree = (WG - 1).bit_length() + 1
        return collectives * (builtins.max(collective_cost(WG), tree) if tree64 else collective_cost(WG))
    return (WG // plan.cols - 1).bit_length() + 1


def _cost(plan: _Plan, dev, collectives: int, tree64: bool = False) -> int:
    """reduce.comp's count for one invocation: per output tile, its trip, the fold over its chunk
    and the merge; split, the merge of the splits' partial states and a second merge."""
    merge = _merge_cost(plan, collectives, tree64)
    per_tile = 1 + _fold_cost(plan, plan.chunk) + merge
    if plan.splits > 1:
        per_tile += -(-plan.splits // (WG // plan.cols)) + 1 + merge
    return _tile_trips(plan, dev) * per_tile + 1


def _fit_budget(plan: _Plan, n: int, dev, collectives: int, budget: int, tree64: bool = False) -> _Plan:
    """The fewest splits along n that fit the loop budget: each split shortens every invocation's
    fold, and adds to the merge of the partial states (a workgroup per output tile and split:
    tiles along the grid's x, splits along its y)."""
    if _tile_trips(plan, dev) == 1:
        splits = builtins.max(plan.splits, 2)
        while splits <= builtins.min(-(-n // 4), dev.max_workgroup_count[1]):
            candidate = dataclasses.replace(plan, **dict(zip(("splits", "chunk"), _split(n, splits))))
            if _cost(candidate, dev, collectives, tree64) <= budget:
                return candidate
            splits = builtins.max(splits + 1, splits * 9 // 8)
    raise LoopBudgetError(f"reduce: {n} elements into each of {plan.tiles * plan.cols} outputs do not fit "
                          f"the loop budget of {budget} iterations per invocation (a workgroup's share "
                          f"costs {_cost(plan, dev, collectives, tree64)})")


_counters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _tile_counters(rt, tiles: int) -> Array:
    """Zeroed once per runtime, and again larger when a split has more tiles (only the loop
    budget's splits do, see _fit_budget); each split reduction leaves its counters at zero."""
    c = _counters.get(rt)
    if c is None or c.size < tiles:
        c = _counters[rt] = zeros((builtins.max(_COUNTERS, tiles),), dtypes.uint32)
        recipes.persistent(c)
    return c


def _kernel_type(op: _Op, in_dtype, acc, out_dtype):
    """The dtype reduce.comp's T computes in: the accumulation's, but for var/std, whose deviations
    are taken from the elements as they are (64-bit ones as float32 for a float32 result)."""
    if not op.dev:
        return acc
    t = dtypes.storage(in_dtype)
    return dtypes.float32 if t.itemsize == 8 and out_dtype == dtypes.float32 else t


def _tree64(t) -> bool:
    """Whether T = t's workgroup reductions go through lib/workgroup.glsl's shared-memory fallback
    while others may use subgroup arithmetic: 64-bit integers without shaderSubgroupExtendedTypes."""
    return t.itemsize == 8 and not _subgroup64(t, runtime.get().device)


def _subgroup64(t, dev) -> bool:
    """Subgroup arithmetic on the 64-bit type t: doubles with the arithmetic feature, 64-bit
    integers also with shaderSubgroupExtendedTypes."""
    return dev.has("arithmetic") and (t == dtypes.float64 or "shaderSubgroupExtendedTypes" in dev.features)


def _defines(op: _Op, in_dtype, acc, out_dtype, plan: _Plan, final: bool) -> dict:
    t = _kernel_type(op, in_dtype, acc, out_dtype)
    d = {"T_IN": dtypes.glsl(dtypes.storage(in_dtype)), "T": dtypes.glsl_compute(t),
         "T_OUT": dtypes.glsl(dtypes.storage(out_dtype)), "UNROLL": UNROLL}
    if dtypes.is_wide(in_dtype) or dtypes.is_wide(t) or dtypes.is_wide(out_dtype):
        d["VK_WIDE"] = 1  # (not VK_MATH64: lib/math64.glsl is not needed, and needs shaderInt64)
    if t.itemsize == 8:
        d.update(T64=1, WG_T64=dtypes.glsl(t))
        if _subgroup64(t, runtime.get().device):
            d["SG_T64"] = 1
    if t.kind == "f":
        d["IS_FLOAT"] = 1
    if op.arg:
        d["ARG_OP"] = op.arg
    elif op.dev:
        d["DEV"] = 1
        if out_dtype == dtypes.float64:
            d["DEV64"] = 1
    else:
        d["RED_OP"] = op.red
        if t.kind == "f" and op.red in ("min", "max"):
            d["NAN_AWARE"] = 1
        if op.red == "add" and t == dtypes.float64:
            d["DD_SUM"] = 1
    if op.truth:
        d["TRUTH"] = 1
    if op.divide and final:
        d["DIVIDE"] = 1
        if op.sqrt:
            d["SQRT"] = 1
    if plan.row_layout:
        d["LAYOUT_ROW"] = 1
    return d


def _launch(x: Array, step: tuple, op: _Op, acc, out_dtype, den: float, final: bool,
            pivot: Array | None = None, out: Array | None = None, at: tuple | None = None) -> Array:
    """Record one reduction of x, seen as (outer, n, inner), along n (var/std: `pivot` holds each
    output's mean and `den` is ddof), into `out` (contiguous, outer * inner) or a new array.
    `at`: x and out through windows of big buffers: (x's window, x's offset in it, out's window,
    out's offset in it), a window None where that buffer is bound whole (windows.py)."""
    outer, n, inner = step
    outputs = outer * inner
    if out is None:
        out = Array.empty((outputs,), out_dtype)
    if outputs == 0:
        return out
    rt = runtime.get()
    t = _kernel_type(op, x.dtype, acc, out_dtype)
    plan = _plan(n, inner, outputs, rt.device, op.collectives(t), _tree64(t))
    defines = _defines(op, x.dtype, acc, out_dtype, plan, final)
    kernel = rt.kernel(SHADER, defines, WG, spec=(plan.cols, plan.row_fast))
    partials = counters = out
    if plan.splits > 1:
        partials = Array.empty((plan.splits * outputs * op.state_words(t, out_dtype),), dtypes.uint32)
        counters = _tile_counters(rt, plan.tiles)
    x_win, x_at, out_win, out_at = at or (None, x.offset, None, out.offset)
    push = (n, inner, outputs, plan.tiles, x_at, out_at, plan.splits, plan.chunk, float(den),
            0 if pivot is None else pivot.offset)
    if "DD_SUM" in defines:
        push += (int(den),)  # the exact count a float64 mean divides by
    grid = (builtins.min(plan.tiles, rt.device.max_workgroup_count[0]), plan.splits)
    buffers = [x.buffer, out.buffer, partials.buffer, counters.buffer]
    if at is None:
        kernel(buffers if pivot is None else buffers + [pivot.buffer], push, grid)
    else:
        kernel(buffers, push, grid, windows=[x_win, out_win, out_win if partials is out else None,
                                             out_win if counters is out else None])
    return out


def _windowed(step: tuple) -> str | None:
    """Why a reduction step over an input past maxStorageBufferRange cannot go in windows, or
    None: whole (n, inner) slabs per window, or with one slab (outer 1) pieces of n."""
    outer, n, inner = step
    w = windows.chunk_words()
    if n * inner <= w or (outer == 1 and inner <= w):
        return None
    return (f"each of its {outer} outputs' slabs of {n} x {inner} elements is larger than "
            "maxStorageBufferRange")


def _launch_big(x: Array, step: tuple, op: _Op, acc, out_dtype, den: float, final: bool) -> Array:
    """_launch over an x larger than a shader may bind: whole slabs of outer rows per window (out
    windowed too where it is big), or, for one slab, pieces of n reduced into partial results
    that a last dispatch combines (mean: sums, divided there)."""
    outer, n, inner = step
    w = windows.chunk_words()
    slab = n * inner
    if slab <= w:
        out = Array.empty((outer * inner,), out_dtype)
        rows = builtins.max(1, w // builtins.max(slab, inner, 1))
        for o in range(0, outer, rows):
            r = builtins.min(rows, outer - o)
            x_win, x_at = windows.window(x.offset + o * slab, r * slab)
            out_win, out_at = windows.bind(out.buffer, out.offset + o * inner, r * inner)
            view = Array(out._storage, (r * inner,), out_dtype, out.offset + o * inner)
            _launch(x, (r, n, inner), op, acc, out_dtype, den, final, out=view,
                    at=(x_win, x_at, out_win, out_at))
        return out
    per = builtins.max(1, w // inner)
    pieces = -(-n // per)
    partial_op = dataclasses.replace(op, divide=False, sqrt=False)
    partials = Array.empty((pieces * inner,), acc)
    for p in range(pieces):
        m = builtins.min(per, n - p * per)
        x_win, x_at = windows.window(x.offset + p * per * inner, m * inner)
        view = Array(partials._storage, (inner,), acc, partials.offset + p * inner)
        _launch(x, (1, m, inner), partial_op, acc, acc, den, False, out=view,
                at=(x_win, x_at, None, view.offset))
    # the same op combines the pieces (mean: it sums their sums and divides by all of n)
    launch_step = _launch_big if partials.buffer.big else _launch
    return launch_step(partials, (1, pieces, inner), op, acc, out_dtype, den, final)


def sum_into(x: Array, step: tuple, out: Array) -> None:
    """Record out = x's sum along n, x seen as (outer, n, inner) and `out` a contiguous view of
    outer * inner elements of x's dtype, float32 or float64 (split-K's partial products: matmul.py)."""
    _launch(x, step, _SUM, x.dtype, x.dtype, step[1], True, out=out)


# ---- the reductions ----------------------------------------------------------------------------
def _adjacent(x: Array, axes: tuple) -> tuple:
    """(x, steps): x's reduced axes made one run of the last ones where they are not (one
    transpose), so that one dispatch reduces them all."""
    steps = _steps(x.shape, axes)
    if len(steps) > 1:
        kept = [d for d in range(x.ndim) if d not in axes]
        n = math.prod(x.shape[d] for d in axes)
        x = layout.transpose(x, kept + list(axes)).reshape((-1, n))
        steps = _steps(x.shape, (1,))
    return x, steps


def _chain(x: Array, axes: tuple, op: _Op, acc, out_dtype, den: float) -> Array:
    """One dispatch per run of reduced axes; only the last divides (mean: sum, then / n). float64
    sums reduce in one dispatch (a transpose first): rounded partial sums between dispatches would
    lose their double-double accuracy."""
    if op.red == "add" and acc == dtypes.float64:
        x, steps = _adjacent(x, axes)
    else:
        steps = _steps(x.shape, axes)
    partial_op = dataclasses.replace(op, divide=False, sqrt=False)
    for k, step in enumerate(steps):
        final = k == len(steps) - 1
        launch_step = _launch_big if x.buffer.big else _launch
        x = launch_step(x, step, op if final else partial_op, acc, out_dtype if final else acc, den, final)
    return x


def _var(x: Array, axes: tuple, op: _Op, ddof: float, out_dtype) -> Array:
    """var/std in two passes over the same (outer, n, inner) view: each output's mean (in the
    result dtype), then double-float sums of the deviations from it (reduce.comp's DEV; float64
    results: double-doubles, DEV64). The second read of the data is the price (lavapipe, 2**25
    elements: var ~1.9x sum's time, 0.51 s to 0.27 s); one-pass
    float32 Welford/Chan states were off by ~1e-5 relative for float data with an offset (1e4 +
    N(0, 1)) and by 10 to 10**7 ulps for integers near 2**31 (float32 deviations rounded to 64 or
    128). Reduced axes that are not adjacent are first copied to the end (one transpose)."""
    x, [step] = _adjacent(x, axes)
    mean = _launch(x, step, _MEAN, out_dtype, out_dtype, step[1], True)
    return _launch(x, step, op, out_dtype, out_dtype, ddof, True, pivot=mean)


def _check_windows(op: _Op, shape: tuple, in_dtype, axes: tuple) -> None:
    """ValueError, before any GPU work, for a reduction of an array past maxStorageBufferRange that
    cannot go in windows (argmax/argmin, var/std, slabs too large, 2-byte elements)."""
    size = math.prod(shape)
    nbytes = dtypes.words(size, in_dtype) * 4
    if not windows.is_big(nbytes):
        return
    why = None
    if dtypes.is_wide(in_dtype):
        why = f"windows hold 32-bit elements, not {in_dtype}"
    elif op.dev:
        why = "var and std do not work in windows"
    elif op.arg:
        if len(axes) != len(shape) and builtins.sum(1 for s in shape if s != 1) > 1:
            why = "argmax and argmin work in windows only over all of it"
        elif size > 2**31 - 1:
            why = "its flat indices do not fit int32"
    else:
        for step in _steps(shape, axes):
            if windows.is_big(math.prod(step) * 4):
                why = why or _windowed(step)
    if why:
        raise ValueError(f"{op.name}: an array of {nbytes} bytes is larger than a "
                         f"shader may bind (maxStorageBufferRange): {why}")


def _reduce(op: _Op, a, axis, keepdims: bool, dtype=None, ddof=0) -> Array:
    shape, in_dtype, host = _inspect(a, op.name)
    half = dtypes.computed_half(in_dtype, op.name)  # reduced in float32, a float result rounded to it
    if half:
        in_dtype = dtypes.float32
    elif not dtypes.is_wide(in_dtype):
        dtypes.computable(in_dtype, op.name)
    axes = _axes(axis, len(shape), op.name, single=bool(op.arg))
    acc, out_dtype = _types(op, in_dtype, dtype)
    ddof = _check_ddof(ddof, op.name)
    n = math.prod(shape[d] for d in axes)
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape)) if keepdims else \
        tuple(s for d, s in enumerate(shape) if d not in axes)
    if n == 0 and not op.identity:
        raise ValueError(f"{op.name}: zero-size reduction (axes {axes} of shape {shape}) has no identity")
    _check_windows(op, shape, in_dtype, axes)
    x = a if host is None else asarray(host, in_dtype)
    if half and host is None:
        x = astype(x, dtypes.float32)
    if op.arg and x.buffer.big:
        out = _arg_windows(x, op)
    else:
        out = _var(x, axes, op, ddof, out_dtype) if op.dev else _chain(x, axes, op, acc, out_dtype, n)
    if half and dtype is None and out_dtype.kind == "f":
        out = astype(out, half)
    return out.reshape(out_shape)


def _arg_windows(x: Array, op: _Op) -> Array:
    """Flat argmax/argmin of an x past the bind range: per window's chunk its max (min) and the
    first index of it, then the first chunk holding the overall one (numpy's first occurrence,
    NaN first) and its index there plus the chunk's start."""
    from .indexing import take  # a sibling primitive, only this path needs it
    n, w = x.size, windows.chunk_words()
    chunks = -(-n // w)
    value_op = _MAX if op is _ARGMAX else _MIN
    v_acc, v_out = _types(value_op, x.dtype, None)
    i_acc, i_out = _types(op, x.dtype, None)
    values, firsts = Array.empty((chunks,), v_out), Array.empty((chunks,), i_out)
    for j in range(chunks):
        count = builtins.min(w, n - j * w)
        win, at = windows.window(x.offset + j * w, count)
        for dest, kind, acc, dt in ((values, value_op, v_acc, v_out), (firsts, op, i_acc, i_out)):
            view = Array(dest._storage, (1,), dt, dest.offset + j)
            _launch(x, (1, count, 1), kind, acc, dt, count, True, out=view, at=(win, at, None, view.offset))
    starts = asarray(np.arange(0, chunks * w, w, dtype=np.int32))
    from .elementwise import add
    return take(add(firsts, starts), _chain(values, (0,), op, i_acc, i_out, chunks))


@recipes.recipe()
def sum(a, axis=None, dtype=None, keepdims=False) -> Array:
    """numpy.sum, in the array API's dtypes: bool and integers of up to 32 bits sum in int32 (unsigned:
    uint32) and wrap modulo 2**32 (numpy would widen to int64); 64-bit dtypes keep theirs."""
    return _reduce(_SUM, a, axis, keepdims, dtype)


@recipes.recipe()
def prod(a, axis=None, dtype=None, keepdims=False) -> Array:
    """numpy.prod, in sum's dtypes; integer products wrap modulo 2**32 (64-bit ones 2**64)."""
    return _reduce(_PROD, a, axis, keepdims, dtype)


@recipes.recipe()
def max(a, axis=None, keepdims=False) -> Array:
    """numpy.max: NaN propagates; a zero-size reduction raises ValueError."""
    return _reduce(_MAX, a, axis, keepdims)


@recipes.recipe()
def min(a, axis=None, keepdims=False) -> Array:
    """numpy.min: NaN propagates; a zero-size reduction raises ValueError."""
    return _reduce(_MIN, a, axis, keepdims)


amax = max
amin = min


@recipes.recipe()
def argmax(a, axis=None, keepdims=False) -> Array:
    """numpy.argmax (int32 indices): the first NaN, else the first maximum; axis None flattens."""
    return _reduce(_ARGMAX, a, axis, keepdims)


@recipes.recipe()
def argmin(a, axis=None, keepdims=False) -> Array:
    """numpy.argmin (int32 indices): the first NaN, else the first minimum; axis None flattens."""
    return _reduce(_ARGMIN, a, axis, keepdims)


@recipes.recipe()
def mean(a, axis=None, dtype=None, keepdims=False) -> Array:
    """numpy.mean in float32 (float64 for float64 and 64-bit integer data); the mean of nothing
    is nan."""
    return _reduce(_MEAN, a, axis, keepdims, dtype)


def _correction(name: str, ddof, correction):
    """The standard's `correction` is numpy's `ddof`: either one, not both."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise TypeError(f"{name}: give the degrees of freedom as ddof or correction, not both")
    return correction


@recipes.recipe()
def var(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None) -> Array:
    """numpy.var, returned in float32 (float64 for float64 and 64-bit integer data): the mean, then
    double-float sums of the deviations (see _var). `correction` is the array API's name for ddof."""
    return _reduce(_VAR, a, axis, keepdims, dtype, _correction("var", ddof, correction))


@recipes.recipe()
def std(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None) -> Array:
    """numpy.std: the square root of var (`correction`: the array API's name for ddof)."""
    return _reduce(_STD, a, axis, keepdims, dtype, _correction("std", ddof, correction))


@recipes.recipe()
def all(a, axis=None, keepdims=False) -> Array:
    """numpy.all: a bool array; True for an empty reduction."""
    return _reduce(_ALL, a, axis, keepdims)


@recipes.recipe()
def any(a, axis=None, keepdims=False) -> Array:
    """numpy.any: a bool array; False for an empty reduction."""
    return _reduce(_ANY, a, axis, keepdims)
