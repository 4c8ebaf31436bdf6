"""Sorting: sort, argsort, searchsorted and unique_values / unique_counts / unique_inverse /
unique_all, with the array API's (2024.12) signatures and numpy's results.

    vk.sort(x, /, *, axis=-1, descending=False, stable=True)       (argsort the same; int32 indices)
    vk.searchsorted(x1, x2, /, *, side='left', sorter=None)         (int32)
    vk.unique_all(x) -> (values, indices, inverse_indices, counts)  (and the other three)

Order: numpy's. NaNs last (all equal to each other, so a stable sort keeps them in input order),
-0.0 equal to +0.0; descending=True sorts by the reversed order, keeping equal elements in input
order (NaNs first: numpy's flip of a stable sort of the flipped input). Sorts are always stable.
axis=None (numpy's) sorts the flattened array; argsort of a 0-d array sorts it as one element
(numpy). unique_*: NaNs are distinct (the standard; numpy's equal_nan=False), and each
unique value's `indices` entry is its first occurrence (the value itself as it first occurs:
-0.0 or 0.0). The unique_* functions read the number of unique values back: one host sync.

Kernels: shaders/primitives/radix_sort.comp, an LSD radix sort of 32-bit words (its KEY64
variants: of 64-bit elements, word pairs) by 8-bit digits of order-preserving keys
(lib/sort_keys.glsl), moving the words themselves (so -0.0 and NaN payloads survive) and, for
argsort, int32 positions. A pass is three dispatches: per-block digit histograms (UPSWEEP), their
exclusive scan (vk.cumsum: scan.comp), and the stable scatter (DOWNSWEEP: ranking by subgroup
ballot, or one-bit splits in shared memory without it). float32, int32 and uint32 take 4 passes,
bool 1, int64, uint64 and float64 8; int8/uint8 and int16/uint16 sort as uint32 words holding
x - min(dtype) (exact and order-preserving: a cast each way) in 1 and 2 passes. Rows (any other
shape) sort as one array whose rows are the most significant digits: after the key passes, stable
passes by row (argsort positions carried through), ceil(log2(rows) / 8) of them; other axes are
moved last first (a transpose each way; 64-bit elements as uint32 word pairs).
searchsorted: shaders/primitives/searchsorted.comp, a binary search per query over the same keys
(8/16-bit operands cast to their 32-bit home; 64-bit ones: its KEY64 variant).
"""
from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np

from .. import dtypes, runtime
from ..array import Array
from .axes import normalize_axis
from .creation import asarray, full, zeros
from .elementwise import add, astype, not_equal, subtract
from .indexing import take
from . import launch
from .launch import LoopBudgetError, collective_cost, grid_groups
from .operands import flag, held_dtype, operand

__all__ = ["sort", "argsort", "searchsorted", "unique_values", "unique_counts", "unique_inverse",
           "unique_all", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]

SHADER = "primitives/radix_sort.comp"
SEARCH_SHADER = "primitives/searchsorted.comp"
RADIX_BITS = 8
RADIX = 1 << RADIX_BITS
MAX_TILE = (1 << 16) - 1  # elements a tile may hold: the ranking counts them in 16 bits
# radix_sort.comp's p.mode: the key type (bits 0-1, lib/sort_keys.glsl's KEY_*; of 64-bit
# elements in the KEY64 variants), then flags
_KEY_TYPE = {dtypes.uint32: 0, dtypes.bool_: 0, dtypes.int32: 1, dtypes.float32: 2,
             dtypes.uint64: 0, dtypes.int64: 1, dtypes.float64: 2}
DESCENDING, ROW_DIGIT, IOTA, WRITE_KEYS, WRITE_VALUES, COLUMN = 4, 8, 16, 32, 64, 128

UniqueAllResult = collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


@dataclasses.dataclass(frozen=True)
class Tuning:
    """Tunables, read at each call: replace `TUNING` (dataclasses.replace) to try others."""
    workgroup: int = 256           # invocations per tile
    items: int = 8                 # elements per invocation and tile (fewer where shared memory
                                   # cannot hold the tile)
    software_workgroup: int = 64   # lavapipe runs each invocation as a SIMD lane and switches at
    software_items: int = 8        # barriers: small tiles, and multi-tile sorts in small tests
    max_blocks: int = 2048         # workgroups per pass: each walks a block of consecutive tiles,
                                   # so the histograms (RADIX per block) stay small to scan


TUNING = Tuning()


@dataclasses.dataclass(frozen=True)
class _Plan:
    workgroup: int
    items: int
    tiles_per_block: int
    blocks: int

    @property
    def tile(self) -> int:
        return self.workgroup * self.items


# ---- planning (no GPU work) ------------------------------------------------------------------
def _tile_cost(wg: int, ballot: bool) -> int:
    """Counted loop iterations (launch.loop_budget) one tile costs a DOWNSWEEP invocation, at
    most: loops over the digits striped over the workgroup, workgroup scans, and with ballot the
    (digit, subgroup) counters of the smallest subgroup size the device may pick; without, the
    eight one-bit splits."""
    striped = -(-RADIX // wg) + 1
    collective = collective_cost(wg)
    if ballot:
        slots = -(-wg // max(1, runtime.get().device.min_subgroup_size))
        runs = 2 * (-(-RADIX // wg) * (slots + 2) + 2)
        return 1 + (-(-slots * RADIX // wg) + 1) + runs + collective + striped
    return 1 + 2 * striped + RADIX_BITS * (collective + 1) + 1 + 2 * (-(-RADIX // wg) + 1) + collective


def _plan(n: int, pairs: bool, name: str, key_words: int = 1) -> _Plan:
    """Tile shape and blocks of a sort of n elements (`pairs`: with values; `key_words`: 2 for
    64-bit keys): the tile held in shared memory, each workgroup's walk over its tiles inside the
    loop budget."""
    tuning = TUNING
    dev = runtime.get().device
    wg, items = ((tuning.software_workgroup, tuning.software_items) if dev.is_software
                 else (tuning.workgroup, tuning.items))
    wg = min(wg, dev.max_workgroup_invocations)
    ballot = dev.has("ballot")
    slots = -(-wg // max(1, dev.min_subgroup_size))

    def shared(items):  # DOWNSWEEP's shared memory, bytes (with ballot one tile array serves keys and values)
        tile_words = wg * items * (key_words + (1 if pairs and not ballot else 0))
        return 4 * (tile_words + 3 * RADIX + (-(-slots // 2) * RADIX if ballot else 0) + wg + 2)
    # the tile in shared memory, and under 65536 elements (the ranking's 16-bit counters)
    while items > 1 and (shared(items) > dev.max_shared_memory or wg * items > MAX_TILE):
        items //= 2
    if shared(items) > dev.max_shared_memory:
        raise ValueError(f"{name}: a sort tile of {wg} invocations needs {shared(items)} bytes of shared "
                         f"memory, the device has {dev.max_shared_memory}")
    tiles = max(1, -(-n // (wg * items)))
    per_block = -(-tiles // max(1, tuning.max_blocks))
    budget = launch.loop_budget()
    if budget is not None:
        fixed = 2 * (-(-RADIX // wg) + 1) + 16  # the block's digit loops; the tile loop's exit, nested loops
        room = (budget - fixed) // _tile_cost(wg, ballot)
        if room < 1:
            raise LoopBudgetError(f"{name}: one sort tile of {wg} invocations costs {_tile_cost(wg, ballot)} "
                                  f"loop iterations, more than the loop budget of {budget}")
        per_block = min(per_block, room)
    blocks = -(-tiles // per_block)
    limit = dev.max_workgroup_count
    if blocks > limit[0] * limit[1]:
        raise ValueError(f"{name}: {n} elements need {blocks} workgroups, more than the device's grid")
    return _Plan(wg, items, per_block, blocks)


def _grid(blocks: int) -> tuple:
    x = min(blocks, runtime.get().device.max_workgroup_count[0])
    return (x, -(-blocks // x))


def _passes(key_bits: int, rows: int) -> list:
    """(digit of the row, shift) of each pass, least significant first: the key's digits (bool: its
    one word bit), then the row's."""
    return ([(False, s) for s in range(0, key_bits, RADIX_BITS)]
            + [(True, s) for s in range(0, (rows - 1).bit_length(), RADIX_BITS)])


# ---- keys -------------------------------------------------------------------------------------
def _key_words(d: np.dtype) -> int:
    return 2 if d.itemsize == 8 else 1


def _sort_keys(x: Array) -> tuple:
    """(the array the kernels sort, its key type, the key's bits) for x: 32- and 64-bit elements as
    they are (bool: one bit); 8/16-bit integers as uint32 words holding x - min(dtype), exact and
    order-preserving, so that only their own bits take passes."""
    d = x.dtype
    if d == dtypes.bool_:
        return x, _KEY_TYPE[d], 1
    if d.itemsize >= 4:
        return x, _KEY_TYPE[d], 8 * d.itemsize
    bits = 8 * d.itemsize
    if d.kind == "u":
        return astype(x, dtypes.uint32), _KEY_TYPE[dtypes.uint32], bits
    return add(astype(x, dtypes.int32), 1 << (bits - 1)), _KEY_TYPE[dtypes.uint32], bits  # int32 words >= 0


def _from_keys(keys: Array, d: np.dtype) -> Array:
    """x of dtype d back from sorted _sort_keys(x)."""
    if keys.dtype == d:
        return keys
    if d.kind == "i":
        keys = subtract(keys, 1 << (8 * d.itemsize - 1))
    return astype(keys, d)


def _words(a: Array) -> Array:
    """A 64-bit array as its (low, high) uint32 word pairs: a view of shape a.shape + (2,)."""
    return Array(a._storage, a.shape + (2,), dtypes.uint32, a.offset * 2)


def _from_words(w: Array, d: np.dtype) -> Array:
    """The 64-bit array of dtype d whose word pairs w holds (a view)."""
    assert w.offset % 2 == 0 and w.shape[-1] == 2
    return Array(w._storage, w.shape[:-1], d, w.offset // 2)


def _moveaxis(a: Array, source: int, destination: int) -> Array:
    """layout.moveaxis, 64-bit elements as word pairs (moved by the 32-bit copies)."""
    from .layout import moveaxis
    if a.dtype.itemsize != 8:
        return moveaxis(a, source, destination)
    return _from_words(moveaxis(_words(a), source % a.ndim, destination % a.ndim), a.dtype)


def _take(a: Array, indices: Array) -> Array:
    """take(a, indices) of a 1-D array (indices unchecked: ours), 64-bit elements as word pairs."""
    if a.dtype.itemsize != 8:
        return take(a, indices, check_indices=False)
    return _from_words(take(_words(a), indices, axis=0, check_indices=False), a.dtype)


def _part(a: Array, start: int, size: int) -> Array:
    """A view of `size` elements of the 1-D a from `start`."""
    return Array(a._storage, (size,), a.dtype, a.offset + start)


# ---- the radix sort ---------------------------------------------------------------------------
def _radix_sort(keys: Array, plan: _Plan, descending: bool, rows: int, want_keys: bool,
                want_values: bool, key_type: int, key_bits: int) -> tuple:
    """Record a stable sort of the elements of `keys` (C order; 32-bit words, or 64-bit elements
    as word pairs) by (row, key of `key_type` and `key_bits`), rows being runs of size // rows:
    (sorted keys, positions) as flat arrays (None where not wanted); positions are in the flat
    array, or with rows > 1 in the row."""
    from .scan import cumsum
    n, row_len = keys.size, keys.size // rows
    pairs = want_values or rows > 1
    passes = _passes(key_bits, rows)
    kw = _key_words(keys.dtype)
    wide = {"KEY64": 1} if kw == 2 else {}
    rt = runtime.get()
    up = rt.kernel(SHADER, {"UPSWEEP": 1, "ITEMS": plan.items, **wide}, plan.workgroup)
    down = rt.kernel(SHADER, {"DOWNSWEEP": 1, "ITEMS": plan.items, **({"PAIRS": 1} if pairs else {}), **wide},
                     plan.workgroup)
    grid = _grid(plan.blocks)
    out_keys = Array.empty((n,), keys.dtype) if want_keys else None
    out_vals = Array.empty((n,), dtypes.int32) if want_values else None
    # passes between the first and the last ping-pong between two spare arrays (of each)
    spares = min(2, len(passes) - 1)
    key_tmp = [Array.empty((n * kw,), dtypes.uint32) for _ in range(spares)]
    val_tmp = [Array.empty((n,), dtypes.uint32) for _ in range(spares if pairs else 0)]
    hist = Array.empty((RADIX * plan.blocks,), dtypes.uint32)
    key_src, val_src = keys, None
    for i, (row_digit, shift) in enumerate(passes):
        last = i == len(passes) - 1
        if last:  # the input stands in where nothing is written
            key_dst = out_keys if out_keys is not None else keys
            val_dst = out_vals if out_vals is not None else keys
        else:
            key_dst, val_dst = key_tmp[i % 2], (val_tmp[i % 2] if pairs else keys)
        mode = key_type | (ROW_DIGIT if row_digit else 0) | (DESCENDING if descending else 0)
        mode |= IOTA if pairs and i == 0 else 0
        mode |= WRITE_KEYS if want_keys or not last else 0
        mode |= WRITE_VALUES if pairs and (want_values or not last) else 0
        mode |= COLUMN if last and rows > 1 else 0
        vals_in = val_src if val_src is not None else keys
        # key offsets in words: 64-bit arrays' offsets are in elements (key_tmp's are 0)
        words = [n, plan.blocks, plan.tiles_per_block, key_src.offset * _key_words(key_src.dtype),
                 key_dst.offset * _key_words(key_dst.dtype), vals_in.offset,
                 val_dst.offset, hist.offset, mode, shift, row_len]
        up([key_src.buffer, key_src.buffer, vals_in.buffer, vals_in.buffer, hist.buffer], words, grid)
        offsets = cumsum(hist, exclusive=True)
        words[7] = offsets.offset
        down([key_src.buffer, key_dst.buffer, vals_in.buffer, val_dst.buffer, offsets.buffer], words, grid)
        key_src, val_src = key_dst, (val_dst if pairs else None)
    return out_keys, out_vals


# ---- sort, argsort -----------------------------------------------------------------------------
def _keys_dtype(x) -> tuple:
    """(the dtype x is sorted as, the half it is or None: a half sorts as its exact float32 values)."""
    d = held_dtype(x)
    return (dtypes.float32, d) if dtypes.is_half(d) else (d, None)


def _sort(name: str, x, axis, descending, stable, want_keys: bool) -> Array:
    x = operand(x, name, "x", host="keep", half="words", wide=True)  # host data uploaded once every argument is checked
    descending = flag(descending, name, "descending")
    flag(stable, name, "stable")  # always stable
    shape = tuple(x.shape)
    if axis is None or (not want_keys and not shape):  # numpy: flattened; argsort of 0-d as 1 element
        shape = (math.prod(shape),)
        axis = -1 if axis is None else axis
    axis = normalize_axis(axis, len(shape), name, "an integer or None")
    n = math.prod(shape)
    rows = n // shape[axis] if n else 0
    d, half = _keys_dtype(x)
    plan = _plan(n, not want_keys or rows > 1, name, _key_words(d)) if n and shape[axis] > 1 else None
    # Checked: GPU work from here on.
    x = asarray(x)
    if x.shape != shape:
        x = x.reshape(shape)
    if plan is None:  # empty, or rows of one element
        return x.copy() if want_keys else zeros(shape, dtypes.int32)
    if half:
        x = astype(x, d)
    last = axis == len(shape) - 1
    keys, key_type, key_bits = _sort_keys(x)
    work = keys if last else _moveaxis(keys, axis, -1)
    keys, positions = _radix_sort(work, plan, descending, rows, want_keys, not want_keys, key_type, key_bits)
    out = (keys if want_keys else positions).reshape(work.shape)
    out = out if last else _moveaxis(out, -1, axis)
    if not want_keys:
        return out
    out = _from_keys(out, d)
    return astype(out, half) if half else out


def sort(x, /, *, axis=-1, descending: bool = False, stable: bool = True) -> Array:
    """The array API's sort (numpy.sort's order: NaNs last); axis=None sorts the flattened array.
    Always stable."""
    return _sort("sort", x, axis, descending, stable, want_keys=True)


def argsort(x, /, *, axis=-1, descending: bool = False, stable: bool = True) -> Array:
    """The array API's argsort: int32 positions along `axis` that sort x (numpy.argsort with
    kind='stable'; descending keeps equal elements in input order). axis=None: of the flattened
    array."""
    return _sort("argsort", x, axis, descending, stable, want_keys=False)


# ---- searchsorted --------------------------------------------------------------------------------
def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> Array:
    """The array API's searchsorted (numpy's): int32 insertion points of x2's elements into the
    1-D x1, sorted ascending (or by the permutation `sorter`); side='left': before equal elements,
    'right': after. Both operands promote to their result_type (numpy's where one is of a WIDE
    dtype: int8 with uint64 search as float64)."""
    from ..array_api import result_type
    name = "searchsorted"
    if not isinstance(side, str) or side not in ("left", "right"):
        raise ValueError(f"{name}: side must be 'left' or 'right', got {side!r}")
    a = operand(x1, name, "x1", host="keep", half="words", wide=True)
    if a.ndim != 1:
        raise ValueError(f"{name}: x1 must be 1-D, got shape {tuple(a.shape)}")
    weak = isinstance(x2, (bool, int, float)) and not isinstance(x2, np.generic)
    if weak:  # a Python scalar: its (NEP 50, weak) kind promotes, its value is cast to the result
        kind = True if isinstance(x2, bool) else 1 if isinstance(x2, int) else 1.0
    else:
        v = operand(x2, name, "x2", host="keep", half="words", wide=True)
    s = None
    if sorter is not None:
        s = operand(sorter, name, "sorter", host="keep", wide=True)
        if held_dtype(s) not in (dtypes.int32, dtypes.uint32):
            raise TypeError(f"{name}: sorter must be int32 or uint32 (argsort's positions), got {held_dtype(s)}")
        if tuple(s.shape) != tuple(a.shape):
            raise ValueError(f"{name}: sorter must have x1's shape {tuple(a.shape)}, got {tuple(s.shape)}")
    types = (held_dtype(a), kind if weak else held_dtype(v))
    if any(map(dtypes.is_wide, types)):
        common = dtypes.narrow(np.result_type(*types), name, exact=True)
    else:
        common = result_type(*types)
    beyond = None  # a Python int past the integer dtype's range: past every element (numpy's answer)
    if weak:
        if type(kind) is int and common.kind in "iu" and not np.iinfo(common).min <= x2 <= np.iinfo(common).max:
            beyond = 0 if x2 < 0 else a.shape[0]
        with np.errstate(over="ignore"):  # to float32: past its range gives inf, as numpy's cast does
            v = np.asarray(x2 if beyond is None else 0, common)
    n, queries = a.shape[0], math.prod(v.shape)
    wg = launch.workgroup_size()
    groups = grid_groups(queries, wg, per_trip=n.bit_length() + 3) if queries and n else 1
    # Checked: GPU work from here on.
    if beyond is not None:
        return full((), beyond, dtypes.int32)
    a, v = asarray(a), asarray(v, common if weak else None)
    if not queries or not n:
        return zeros(v.shape, dtypes.int32)
    home = dtypes.home32(common)  # 8/16-bit operands search as their 32-bit home; 64-bit: KEY64
    a, v = (t if t.dtype == home else astype(t, home) for t in (a, v))
    if s is not None:
        a = _take(a, asarray(s))
    out = Array.empty(v.shape, dtypes.int32)
    kw = _key_words(home)
    k = runtime.get().kernel(SEARCH_SHADER, {"KEY64": 1} if kw == 2 else {}, wg)
    k([a.buffer, v.buffer, out.buffer],
      [n, queries, a.offset * kw, v.offset * kw, out.offset, _KEY_TYPE[home], int(side == "right")], (groups,))
    return out


# ---- unique_* ------------------------------------------------------------------------------------
def _unique(name: str, x):
    """(values, indices, inverse_indices, counts) of the flattened x: one stable argsort, the
    first of each run of equal sorted values (NaN != NaN: each its own run) compacted."""
    from .compaction import flatnonzero
    from .manipulation import concat, diff
    from .scan import cumsum
    from .scatter import put
    x = operand(x, name, "x", host="keep", half="words", wide=True)  # host data uploaded once every argument is checked
    shape = tuple(x.shape)
    n = math.prod(shape)
    d, half = _keys_dtype(x)
    plan = _plan(n, True, name, _key_words(d)) if n else None
    # Checked: GPU work from here on.
    x = asarray(x).reshape(-1)
    if plan is None:
        empty = Array.empty((0,), dtypes.int32)
        return Array.empty((0,), x.dtype), empty, Array.empty(shape, dtypes.int32), empty
    if half:
        x = astype(x, d)
    keys, key_type, key_bits = _sort_keys(x)  # 8/16-bit: equal keys, equal values
    values, perm = _radix_sort(keys, plan, False, 1, True, True, key_type, key_bits)
    first = concat([asarray(np.ones(1, np.bool_)), not_equal(_part(values, 1, n - 1), _part(values, 0, n - 1))])
    starts = flatnonzero(first)  # the one host sync: how many unique values
    counts = diff(starts, append=n)
    inverse = Array.empty((n,), dtypes.int32)
    put(inverse, perm, cumsum(first, dtype=dtypes.int32) - 1, unique_indices=True, check_indices=False)
    values = _from_keys(_take(values, starts), d)
    return (astype(values, half) if half else values, take(perm, starts, check_indices=False),
            inverse.reshape(shape), counts)


def unique_values(x, /) -> Array:
    """The array API's unique_values: the sorted unique elements of x (flattened); NaNs distinct."""
    return _unique("unique_values", x)[0]


def unique_counts(x, /) -> UniqueCountsResult:
    """The array API's unique_counts: (values, counts), counts int32."""
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    """The array API's unique_inverse: (values, inverse_indices), the latter of x's shape, int32:
    values[inverse_indices] == x."""
    values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inverse)


def unique_all(x, /) -> UniqueAllResult:
    """The array API's unique_all: (values, indices of the first occurrences in the flattened x,
    inverse_indices, counts), all indices int32."""
    return UniqueAllResult(*_unique("unique_all", x))
