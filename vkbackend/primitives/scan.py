"""numpy's cumulative operations: cumsum, cumprod, cummax, cummin (np.maximum/minimum.accumulate).

    vk.cumsum(a, axis=None, dtype=None, exclusive=False, reverse=False, algorithm="decoupled")

axis=None scans the flattened array, as numpy does. exclusive=True shifts the result by one: it
starts at the operator's identity (0, 1, -inf / the type's minimum for max, +inf / the maximum for
min; -0.0 for float sums, the identity of IEEE addition, so that out[i + 1] == the inclusive
out[i] bit for bit: float sums keep numpy's -0.0 over a leading run of -0.0). reverse=True scans
from the end of the axis (out[i] combines a[i:]).

Result types follow the array API standard's cumulative_sum (numpy where it is silent), 32-bit
where numpy would widen: sums and products of bool and of signed integers of up to 32 bits run in
int32 (the default integer), of unsigned ones in uint32, and wrap modulo 2**32; int64, uint64 and
float64 keep their dtype (integers wrapping modulo 2**64); dtype= converts each element before it
is combined (dtype=bool: logical or / and, as numpy; 8/16-bit dtypes combine in 32 bits and wrap
when stored, as numpy's own wrap). NaN propagates
through cummax/cummin as through np.maximum.accumulate; there -0.0 counts as less than +0.0
(IEEE 754-2019's maximum and minimum; numpy's sign for two equal zeros follows its SIMD code, on
x86 the later one).

Kernels (shaders/primitives/scan.comp, one shader, variants by defines):
- Contiguous rows (the last axis, or the flattened array) are cut into tiles of
  TUNING.workgroup * TUNING.items elements, one workgroup each. algorithm="decoupled" (default) is
  the single-pass chained scan (2n memory traffic): decoupled look-back made portable by the
  decoupled fallback (Smith, Levien & Owens, SPAA 2025), so no forward-progress guarantee between
  workgroups is assumed; its tile-state buffer is kept from scan to scan (epochs, see _TileState),
  so a scan is one dispatch. Tiles go by workgroup id (TUNING.static_tiles; else by a counter in
  start order), each publishes its aggregate right after its local scan, and the look-back is
  walked by a whole subgroup, one predecessor state per lane (TUNING.lookback per lane), so a
  window of subgroup-size tiles costs one round trip to memory; a tile whose predecessor has not
  started or published reduces it itself. algorithm="reduce_then_scan": reduce tiles, scan the
  tile sums (recursively), scan tiles again from their prefix (3n traffic), for comparison. Rows
  that fit one tile are one dispatch either way.
- Other axes (and very short last-axis rows): shaders/primitives/scan_strided.comp, a thread per
  column and chunk, coalesced across columns; reduce-then-scan over chunks when the axis is long.
  `algorithm` does not apply there.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
import os

import numpy as np

from .axes import normalize_axis
from .. import dtypes, runtime
from ..array import Array
from . import elementwise, launch, windows
from .creation import asarray, zeros
from .launch import LoopBudgetError, collective_cost, grid_groups
from .operands import flag
from .tuning import SCAN_ITEMS, SCAN_LAYOUT, SCAN_STATIC_TILES, SCAN_WORKGROUP

__all__ = ["cumsum", "cumprod", "cummax", "cummin"]

ALGORITHMS = ("decoupled", "reduce_then_scan")
LAYOUTS = ("striped", "staged", "blocked")
SHADER = "primitives/scan.comp"
STRIDED_SHADER = "primitives/scan_strided.comp"
STATE_HEADER = 8  # words before the tile states in the chained scan's state buffer (scan.comp)


@dataclasses.dataclass(frozen=True)
class Tuning:
    """Tunables, read at each call: replace `TUNING` (dataclasses.replace) to try others. The
    measured defaults come from tuning.py, with their measurements."""
    workgroup: int = SCAN_WORKGROUP  # invocations per tile workgroup
    items: int = SCAN_ITEMS    # elements per invocation (a multiple of 4: vec4 loads and stores;
                               # longer runs per invocation spill registers)
    layout: str = SCAN_LAYOUT  # a tile over the threads (scan.comp): "striped" (a contiguous run
                               # per subgroup, coalesced; "blocked" where the device lacks subgroup
                               # arithmetic), "blocked" or "staged" (through shared memory).
                               # Striped by default: a blocked quad run per invocation leaves each
                               # warp access half a sector per lane
    lookback: int = 1          # predecessor states each look-back walker reads per round: with
                               # subgroup arithmetic a window of lookback * subgroup size tiles
    subgroup_lookback: bool = True  # the look-back walks with a whole subgroup where it can
                                    # (False: one invocation reads `lookback` states per round)
    spin: int = 64             # look-back rounds on a silent predecessor before the fallback
    software_spin: int = 16    # the same on lavapipe, whose loop budget (65535) every spin uses up
    static_tiles: bool = SCAN_STATIC_TILES  # tiles by gl_WorkGroupID, not by a counter
                                            # (scan.comp's STATIC_TILES; the faster of the two)
    short_row: int = 32        # last-axis rows up to this long: a thread per row (scan_strided)
    chunk: int = 256           # scan_strided: positions along the axis per thread
    strided_workgroup: int = 256
    force_fallback: bool = False  # tests: every look-back reduces its predecessors from the input

    @property
    def tile(self) -> int:
        return self.workgroup * self.items


TUNING = Tuning()

_VEC4 = {"float": "vec4", "int": "ivec4", "uint": "uvec4", "int8_t": "i8vec4", "uint8_t": "u8vec4",
         "int16_t": "i16vec4", "uint16_t": "u16vec4", "int64_t": "i64vec4", "uint64_t": "u64vec4",
         "double": "dvec4"}
_NP = {"float": dtypes.float32, "int": dtypes.int32, "uint": dtypes.uint32, "int64_t": dtypes.int64,
       "uint64_t": dtypes.uint64, "double": dtypes.float64}
_NARROW = {t: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for t, d in
           (("int8_t", np.int8), ("uint8_t", np.uint8), ("int16_t", np.int16), ("uint16_t", np.uint16))}


@dataclasses.dataclass(frozen=True)
class _Kind:
    """What the kernels compute, as shaders/primitives/scan_types.glsl's defines."""
    op: str         # add, mul, min, max, over s
    t_in: str       # GLSL type of the input elements
    t: str          # GLSL type of the results
    s: str          # GLSL type the scan runs in
    key: int = 0    # 1 / 2: float max / min over uint keys

    @property
    def neg_zero(self) -> bool:
        """Float sums: scan.comp keeps their -0.0 apart, at up to one more workgroup reduction per
        tile (NEG_ZERO)."""
        return self.op == "add" and self.s in ("float", "double")

    @property
    def s64(self) -> bool:
        """The scan runs in a 64-bit type (scan_types.glsl's S64)."""
        return _NP[self.s].itemsize == 8

    @property
    def subgroups(self) -> bool:
        """Whether subgroup arithmetic takes S: the device's arithmetic feature, and for 64-bit
        integers (float64's keys included) shaderSubgroupExtendedTypes."""
        dev = runtime.get().device
        return dev.has("arithmetic") and (not self.s64 or self.s == "double"
                                          or "shaderSubgroupExtendedTypes" in dev.features)

    def defines(self) -> dict:
        d = {"OP": self.op, "T_IN": self.t_in, "T": self.t, "S": self.s, "KEY": self.key,
             "T_IN4": _VEC4[self.t_in], "T4": _VEC4[self.t], "S4": _VEC4[self.s]}
        if self.neg_zero:
            d["NEG_ZERO"] = 1
        if self.op in ("max", "min") and self.t in _NARROW:  # exclusive scans start at T's extremes
            d.update(T_MIN=_NARROW[self.t][0], T_MAX=_NARROW[self.t][1])
        if any(t not in ("float", "int", "uint") for t in (self.t_in, self.t, self.s)):
            d["VK_WIDE"] = 1  # (not VK_MATH64: lib/math64.glsl is not needed)
        if self.s64:
            d.update(S64=1, WG_T64=self.s)
            if self.subgroups:
                d["SG_T64"] = 1
        return d

    def spine(self) -> "_Kind":
        """The scan of partial results (already in s, keys included) that reduce-then-scan runs."""
        return _Kind(self.op, self.s, self.s, self.s)


@dataclasses.dataclass(frozen=True)
class _Span:
    """Where an operand lives: a pooled buffer and an element offset into it."""
    buffer: object
    offset: int


def _span(a: Array) -> _Span:
    return _Span(a.buffer, a.offset)


# ---- validation (no GPU work) ----------------------------------------------------------------
def _inspect(a, name: str):
    """(shape, dtype, host array or None) of the operand, without uploading anything."""
    if isinstance(a, Array):
        return a.shape, a.dtype, None
    if isinstance(a, (np.ndarray, np.generic, list, tuple, numbers.Number)) and not isinstance(a, complex):
        host = np.asarray(a)
        return host.shape, dtypes.from_host(host.dtype), host
    raise TypeError(f"{name}: expected a vk.Array, a numpy array or a number, got {type(a).__name__}")


def _normalize_axis(name: str, axis, ndim: int):
    return None if axis is None else normalize_axis(axis, ndim, name, "an integer or None")


def _plan_types(name: str, op: str, in_dtype: np.dtype, dtype):
    """(kernel kind, result dtype, dtype the input is cast to first or None)."""
    if dtype is None:
        target = in_dtype
        if op in ("add", "mul") and in_dtype.kind in "biu" and in_dtype.itemsize < 4:
            # bools count, and narrow integers sum, in the default integers (numpy's are 64-bit)
            target = dtypes.uint32 if in_dtype.kind == "u" else dtypes.int32
    else:
        try:
            target = dtypes.check(dtype, held=True)  # the WIDE dtypes where the device has them
        except TypeError as e:
            raise TypeError(f"{name}: dtype: {e}") from None
        if dtypes.is_half(target):
            raise TypeError(f"{name}: dtype: {target} is not supported ({dtypes.HALF_USES})")
    if target == dtypes.bool_:
        # numpy adds bools as logical or and multiplies them as logical and: on 0/1 words, max and
        # mul (whose identity, 1, keeps an exclusive scan's first word a valid bool).
        bool_op = "max" if op in ("add", "max") else "mul"
        cast = None if in_dtype == dtypes.bool_ else dtypes.bool_
        return _Kind(bool_op, "uint", "uint", "uint"), dtypes.bool_, cast
    t_in, t = dtypes.glsl(dtypes.storage(in_dtype)), dtypes.glsl(target)
    if target.kind == "f" and op in ("max", "min"):
        key = "uint64_t" if t == "double" else "uint"
        if key == "uint64_t":
            dtypes.check(dtypes.uint64, held=True)  # float64's keys need shaderInt64
        return _Kind(op, t_in, t, key, key=1 if op == "max" else 2), target, None
    return _Kind(op, t_in, t, dtypes.glsl_compute(target)), target, None


def _check_tuning(tuning: Tuning, kind: "_Kind") -> None:
    dev = runtime.get().device
    if tuning.layout not in LAYOUTS:
        raise ValueError(f"scan tuning: layout={tuning.layout!r} must be one of {LAYOUTS}")
    if tuning.items < 4 or tuning.items % 4:
        raise ValueError(f"scan tuning: items={tuning.items} must be a positive multiple of 4")
    # scan.comp's shared memory: the staged tile (padded), workgroup.glsl's scratch, a few words.
    size = _NP[kind.s].itemsize
    shared = ((tuning.tile * 33 // 32 * size if tuning.layout == "staged" else 0) + (tuning.workgroup + 1) * 4
              + (tuning.workgroup * 8 if kind.s64 else 0) + 64)
    if shared > dev.max_shared_memory:
        raise ValueError(f"scan tuning: a tile of {tuning.workgroup} x {tuning.items} needs {shared} bytes "
                         f"of shared memory, the device has {dev.max_shared_memory}")
    if tuning.lookback < 1:
        raise ValueError(f"scan tuning: lookback={tuning.lookback} must be positive")
    if tuning.chunk < 1:
        raise ValueError(f"scan tuning: chunk={tuning.chunk} must be positive")
    budget = launch.loop_budget()
    cost = _tile_collectives(kind) * _collective_cost(tuning.workgroup, kind)
    if budget is not None and cost + 1 > budget:
        raise LoopBudgetError(f"scan: a tile's workgroup scan of {tuning.workgroup} invocations costs "
                              f"{cost} loop iterations, more than the loop budget of {budget}")


# ---- kernels ---------------------------------------------------------------------------------
class _TileState:
    """The chained scan's tile states (scan.comp), kept from one scan to the next: each scan
    gets a new epoch whose flags lie above every earlier scan's, and its own range of the tile
    counter, so the buffer is zeroed (one fill dispatch) only when it is created, grows, or would
    run out of epochs or counter values, not before every scan."""
    MAX_EPOCH = 0x7FFE  # flags 2 * epoch + 2 fit the 16 bits above each half value

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.array: Array | None = None
        self.rt = None
        self.tiles = self.epoch = self.base = 0

    def claim(self, tiles: int, workgroups: int) -> tuple:
        """(buffer, epoch, counter base) for a scan of `tiles` tiles run by `workgroups`."""
        rt = runtime.get()
        if (self.rt is not rt or tiles > self.tiles or self.epoch > self.MAX_EPOCH
                or self.base + workgroups > 0xFFFFFFFF):
            # grows geometrically; a buffer that ran out of epochs or counter values keeps its size
            kept = (2 if tiles > self.tiles else 1) * self.tiles if self.rt is rt else 0
            capacity = max(tiles, kept, 1024)
            self.reset()
            self.array = zeros((STATE_HEADER + 2 * capacity,), dtypes.uint32)
            self.rt, self.tiles = rt, capacity
        claimed = (self.array, self.epoch, self.base)
        self.epoch += 1
        self.base += workgroups
        return claimed


_STATE = _TileState()


def _flags(**flags) -> dict:
    return {k.upper(): None for k, on in flags.items() if on}


def _grid(workgroups: int) -> tuple:
    """A 2-D grid of at least `workgroups` (the shader skips the spare ones)."""
    limit = runtime.get().device.max_workgroup_count
    x = min(workgroups, limit[0])
    y = -(-workgroups // x)
    if y > limit[1]:
        raise ValueError(f"scan: {workgroups} tiles exceed the device's grid {limit[:2]}")
    return (x, y)


def _aligned(span: _Span, length: int, rows: int, reverse: bool) -> bool:
    """Whether every row's quads of logical elements are whole, 16-byte aligned vec4s: rows start
    (forward) or end (reverse) at a multiple of 4 elements."""
    anchor = span.offset + (length if reverse else 0)
    return anchor % 4 == 0 and (rows == 1 or length % 4 == 0)


def _spin(tuning: Tuning) -> int:
    return tuning.software_spin if runtime.get().device.is_software else tuning.spin


def _tile_kernel(kind: _Kind, mode: int, tuning: Tuning, **flags):
    defines = kind.defines()
    layout = tuning.layout
    if layout == "striped" and (mode == 1 or not kind.subgroups):
        layout = "blocked"  # the reduce pass has one layout; striped runs need subgroup scans
    serial = not tuning.subgroup_lookback or (kind.s64 and not kind.subgroups)  # see _Kind.subgroups
    defines.update(MODE=mode, ITEMS=tuning.items, LOOKBACK=tuning.lookback,
                   **_flags(staged=layout == "staged", striped=layout == "striped",
                            serial_lookback=mode == 2 and serial, **flags))
    return runtime.get().kernel(SHADER, defines, tuning.workgroup, spec=(_spin(tuning),))


# ---- the loop budget (see launch.loop_budget) -------------------------------------------------
# scan.comp's fixed-count loops are unrolled; a tile costs one workgroup scan or reduce. The
# chained scan's look-back adds rounds that depend on its predecessors: each round either moves
# past at least one unfinished predecessor (an aggregate, or one it reduces itself after SPIN_LIMIT
# + 1 silent rounds) or ends the walk at a finished one (whose prefix is published). So a tile
# costs at most `unfinished` x (SPIN_LIMIT + 2 rounds, a walk's exit, a fallback reduce and a trip
# of the outer loop) + a few, where `unfinished` counts the predecessors in its row that may not
# have finished when it starts.

def _concurrency() -> int | None:
    """Workgroups that may run at once, where known: lavapipe runs one per thread of its pool
    (LP_NUM_THREADS, else one per CPU). None elsewhere."""
    if not runtime.get().device.is_software:
        return None
    threads = os.environ.get("LP_NUM_THREADS", "").strip()
    if threads.isdigit():
        return max(1, int(threads))
    return os.cpu_count() or 1  # all the CPUs, not just this process's: what Mesa counts, or more


def _collective_cost(wg: int, kind: "_Kind | None") -> int:
    """launch.collective_cost, or the shared-memory fallback's where subgroups do not take a 64-bit
    S while they take the 32-bit types (lib/workgroup.glsl's WG_T64)."""
    cost = collective_cost(wg)
    if kind is not None and kind.s64 and not kind.subgroups:
        cost = max(cost, (wg - 1).bit_length() + 1)
    return cost


def _tile_collectives(kind: "_Kind | None") -> int:
    """Workgroup scans or reductions a tile (or a fallback's reduction of one) costs at most: 1,
    and 1 more for float sums (NEG_ZERO: a tile that starts with -0.0 measures its run of them)."""
    return 2 if kind is not None and kind.neg_zero else 1


def _chained_cost(tiles_per_row: int, static: bool, tuning: Tuning, kind: "_Kind | None" = None) -> int:
    """The chained scan's worst count for one invocation. Tiles by workgroup id may start before
    their predecessors (lavapipe hands each thread a contiguous run of workgroup ids), so every
    predecessor in the row may be unfinished; tiles from the counter have predecessors that all
    started, of which at most `concurrency - 1` are still running."""
    unfinished = tiles_per_row - 1
    collective = _tile_collectives(kind) * _collective_cost(tuning.workgroup, kind)
    if tuning.force_fallback:  # no walk: every predecessor reduced, one outer trip each
        return collective + unfinished * (1 + collective) + 2
    limit = _concurrency()
    if not static and limit is not None:
        unfinished = min(unfinished, limit - 1)
    return collective + unfinished * (_spin(tuning) + 4 + collective) + 4


def _chained_plan(tiles_per_row: int, tuning: Tuning, kind: "_Kind | None" = None) -> tuple:
    """(algorithm, static tiles) for a multi-tile row under the loop budget: the chained scan as
    tuned where its worst look-back fits, else with tiles from the counter, else reduce-then-scan
    (whose every pass costs a tile's workgroup scans or reductions, see _check_tuning)."""
    budget = launch.loop_budget()
    if budget is None or _chained_cost(tiles_per_row, tuning.static_tiles, tuning, kind) <= budget:
        return "decoupled", tuning.static_tiles
    if tuning.static_tiles and _chained_cost(tiles_per_row, False, tuning, kind) <= budget:
        return "decoupled", False
    return "reduce_then_scan", tuning.static_tiles


def _scan_rows(kind: _Kind, src: _Span, dst: _Span, rows: int, length: int, exclusive: bool,
               reverse: bool, algorithm: str, tuning: Tuning) -> None:
    """Record the scan of `rows` contiguous rows of `length` from src into dst."""
    tiles_per_row = -(-length // tuning.tile)
    tiles = rows * tiles_per_row
    flags = dict(exclusive=exclusive, reverse=reverse)
    vec = int(_aligned(src, length, rows, reverse)) | 2 * int(_aligned(dst, length, rows, reverse))
    push = [length, rows, tiles_per_row, src.offset, dst.offset]
    static = tuning.static_tiles
    if tiles_per_row > 1 and algorithm == "decoupled":
        algorithm, static = _chained_plan(tiles_per_row, tuning, kind)
    if tiles_per_row == 1:
        k = _tile_kernel(kind, 0, tuning, **flags)
        k([src.buffer, dst.buffer, dst.buffer], push + [0, vec], _grid(tiles))
    elif algorithm == "decoupled":
        grid = _grid(tiles)
        # the tile counter advances only for scans that take tiles from it
        # (a 64-bit S takes two tiles' words: scan.comp's STATE_WORDS)
        state, epoch, base = _STATE.claim(tiles * (2 if kind.s64 else 1), 0 if static else grid[0] * grid[1])
        k = _tile_kernel(kind, 2, tuning, force_fallback=tuning.force_fallback,
                         static_tiles=static, **flags)
        k([src.buffer, dst.buffer, state.buffer], push + [state.offset, vec, epoch, base], grid)
    else:
        sums = Array.empty((tiles,), _NP[kind.s])
        reduce_k = _tile_kernel(kind, 1, tuning, reverse=reverse)
        reduce_k([src.buffer, sums.buffer, sums.buffer], push + [sums.offset, vec], _grid(tiles))
        prefixes = Array.empty((tiles,), _NP[kind.s])
        _scan_rows(kind.spine(), _span(sums), _span(prefixes), rows, tiles_per_row, True, False,
                   algorithm, tuning)
        k = _tile_kernel(kind, 0, tuning, has_prefix=True, **flags)
        k([src.buffer, dst.buffer, prefixes.buffer], push + [prefixes.offset, vec], _grid(tiles))


def _strided_plan(outer: int, length: int, inner: int, tuning: Tuning) -> tuple:
    """(chunk, workgroups) of scan_strided.comp: each invocation's grid-stride trips (a trip and
    its loop over a chunk, 1 more on its way out) fit the loop budget; the chunk shrinks where
    the grid alone cannot make room. (The grid-stride loop's exit passes the chunk loop's end
    once more on lavapipe, but ends the kernel: nothing after it can be cut short.)"""
    chunk = tuning.chunk
    budget = launch.loop_budget()
    if budget is not None:
        chunk = max(1, min(chunk, budget - 3))
    while True:
        threads = outer * -(-length // chunk) * inner
        try:
            return chunk, grid_groups(threads, tuning.strided_workgroup, per_trip=min(chunk, length) + 2)
        except LoopBudgetError:
            if chunk == 1:
                raise
            chunk = max(1, chunk // 2)


def _scan_strided(kind: _Kind, src: _Span, dst: _Span, outer: int, length: int, inner: int,
                  exclusive: bool, reverse: bool, tuning: Tuning) -> None:
    """Record the scan along the middle axis of an (outer, length, inner) array."""
    chunk, groups = _strided_plan(outer, length, inner, tuning)
    chunks = -(-length // chunk)
    threads = outer * chunks * inner
    wg = tuning.strided_workgroup
    rt = runtime.get()

    def kernel(mode, **flags):
        defines = kind.defines()
        defines.update(MODE=mode, **_flags(**flags))
        return rt.kernel(STRIDED_SHADER, defines, wg)

    push = [length, inner, outer, chunks, chunk, src.offset, dst.offset]
    groups = (groups,)
    if chunks == 1:
        k = kernel(0, exclusive=exclusive, reverse=reverse)
        k([src.buffer, dst.buffer, dst.buffer], push + [0], groups)
        return
    sums = Array.empty((threads,), _NP[kind.s])
    kernel(1, reverse=reverse)([src.buffer, sums.buffer, sums.buffer], push + [sums.offset], groups)
    prefixes = Array.empty((threads,), _NP[kind.s])
    _scan_strided(kind.spine(), _span(sums), _span(prefixes), outer, chunks, inner, True, False, tuning)
    k = kernel(0, exclusive=exclusive, reverse=reverse, has_prefix=True)
    k([src.buffer, dst.buffer, prefixes.buffer], push + [prefixes.offset], groups)


# ---- the API ---------------------------------------------------------------------------------
def _cumulative(name: str, op: str, a, axis, dtype, exclusive, reverse, algorithm) -> Array:
    shape, in_dtype, host = _inspect(a, name)
    exclusive = flag(exclusive, name, "exclusive")
    reverse = flag(reverse, name, "reverse")
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"{name}: algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    half = dtypes.computed_half(in_dtype, name)  # scanned as a float32 copy; without dtype=, each
    if half:                                      # result rounded once to it
        in_dtype = dtypes.float32
    kind, out_dtype, cast = _plan_types(name, op, in_dtype, dtype)
    axis = _normalize_axis(name, axis, max(len(shape), 1))  # a 0-d array scans as shape (1,)
    size = math.prod(shape)
    out_shape = (size,) if axis is None or not shape else shape
    tuning = TUNING
    _check_tuning(tuning, kind)
    big = windows.is_big(max(dtypes.words(size, in_dtype), dtypes.words(size, out_dtype)) * 4)
    if big and (dtypes.is_wide(in_dtype) or dtypes.is_wide(out_dtype)):
        raise ValueError(f"{name}: an array of {size} {in_dtype} elements is larger than a shader may bind "
                         f"(maxStorageBufferRange): windows hold 32-bit elements")
    if big and not (len(out_shape) == 1 and not exclusive and not reverse):
        raise ValueError(f"{name}: an array of {size * 4} bytes is larger than a shader may bind "
                         "(maxStorageBufferRange): scans of it work in windows only flattened or 1-D, "
                         "inclusive and forward")
    # Validated: GPU work from here on.
    x = asarray(host, in_dtype) if host is not None else a
    if half:
        x = elementwise.astype(x, in_dtype) if host is None else x  # host data: uploaded as float32
        out = _cumulative(name, op, x, axis, dtype, exclusive, reverse, algorithm)
        return out if dtype is not None else elementwise.astype(out, half)
    if size == 0:
        return Array.empty(out_shape, out_dtype)
    if cast is not None:
        x = elementwise.astype(x, cast)
    if big:
        return _cumulative_windows(name, op, x, out_dtype, algorithm)
    out = Array.empty(out_shape, out_dtype)
    ax = 0 if axis is None else axis
    outer, length, inner = math.prod(out_shape[:ax]), out_shape[ax], math.prod(out_shape[ax + 1:])
    if inner == 1 and length > tuning.short_row:
        _scan_rows(kind, _span(x), _span(out), outer, length, exclusive, reverse, algorithm, tuning)
    else:
        _scan_strided(kind, _span(x), _span(out), outer, length, inner, exclusive, reverse, tuning)
    return out


_CARRY = {"add": "add", "mul": "multiply", "max": "maximum", "min": "minimum"}


def _cumulative_windows(name: str, op: str, x: Array, out_dtype, algorithm: str) -> Array:
    """An inclusive forward scan of a flat x larger than a shader may bind: each window's chunk
    copied out and scanned, the scan of everything before it (the previous chunk's last value)
    combined in, and the chunk written back through a window of the result."""
    n, step = x.size, windows.piece_words()
    out = Array.empty((n,), out_dtype)
    carry_with = getattr(elementwise, _CARRY[op])
    carry = None
    for start in range(0, n, step):
        count = min(step, n - start)
        piece = elementwise.astype(Array(x._storage, (count,), x.dtype, x.offset + start), x.dtype)
        part = _cumulative(name, op, piece, None, None, False, False, algorithm)
        if carry is not None:
            part = carry_with(part, carry)
        if part.dtype != out_dtype:
            part = elementwise.astype(part, out_dtype)
        view = Array(out._storage, (count,), out_dtype, out.offset + start)
        elementwise.copy_into(part, view)
        carry = Array(part._storage, (1,), part.dtype, part.offset + count - 1)
    return out


def cumsum(a, axis=None, dtype=None, exclusive: bool = False, reverse: bool = False,
           algorithm: str = "decoupled") -> Array:
    """numpy.cumsum(a, axis, dtype); `exclusive` starts from 0 (-0.0 for floats), `reverse` sums
    from the end.
    int32/uint32 sums wrap modulo 2**32 (numpy widens to 64 bits); bools count in int32."""
    return _cumulative("cumsum", "add", a, axis, dtype, exclusive, reverse, algorithm)


def cumprod(a, axis=None, dtype=None, exclusive: bool = False, reverse: bool = False,
            algorithm: str = "decoupled") -> Array:
    """numpy.cumprod(a, axis, dtype); `exclusive` starts from 1, `reverse` multiplies from the end.
    int32/uint32 products wrap modulo 2**32 (numpy widens to 64 bits)."""
    return _cumulative("cumprod", "mul", a, axis, dtype, exclusive, reverse, algorithm)


def cummax(a, axis=None, exclusive: bool = False, reverse: bool = False,
           algorithm: str = "decoupled") -> Array:
    """numpy.maximum.accumulate(a, axis) (axis=None: flattened); NaN propagates.
    `exclusive` starts from -inf (floats) or the type's minimum."""
    return _cumulative("cummax", "max", a, axis, None, exclusive, reverse, algorithm)


def cummin(a, axis=None, exclusive: bool = False, reverse: bool = False,
           algorithm: str = "decoupled") -> Array:
    """numpy.minimum.accumulate(a, axis) (axis=None: flattened); NaN propagates.
    `exclusive` starts from +inf (floats) or the type's maximum."""
    return _cumulative("cummin", "min", a, axis, None, exclusive, reverse, algorithm)


def fallback_count() -> int | None:
    """Diagnostics (synchronizes): how many tiles chained scans reduced from the input because a
    predecessor had published nothing within the spin limit, since the tile state was last
    zeroed (`_STATE.reset()` starts afresh); None before any chained scan."""
    if _STATE.array is None:
        return None
    return int(_STATE.array.numpy()[1])
