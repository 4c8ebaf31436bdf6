"""vk.cumsum / cumprod / cummax / cummin against numpy (shaders/primitives/scan.comp, scan_strided.comp)."""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vkbackend as vk
from vkbackend.primitives import scan

from tests.conftest import no_gpu_work, random_array

EPS = np.finfo(np.float32).eps
OPS = ["cumsum", "cumprod", "cummax", "cummin"]
DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]  # (exclusive, reverse)
ACCUMULATE = {"cumsum": np.add.accumulate, "cumprod": np.multiply.accumulate,
              "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


# ---- references ------------------------------------------------------------------------------
def result_dtype(op, dtype, want=None):
    if want is not None:
        return np.dtype(want)
    if op in ("cumsum", "cumprod") and np.dtype(dtype) == np.bool_:
        return np.dtype(np.int32)
    return np.dtype(dtype)


def identity(op, dtype):
    dtype = np.dtype(dtype)
    if op == "cumsum":
        return 0
    if op == "cumprod" or (dtype == np.bool_ and op == "cummin"):
        return 1
    if dtype.kind == "f":
        return -np.inf if op == "cummax" else np.inf
    if dtype == np.bool_:
        return 0
    info = np.iinfo(dtype)
    return info.min if op == "cummax" else info.max


def reference(x, op, axis=None, exclusive=False, reverse=False, dtype=None):
    """numpy's scan in vkbackend's result dtype: float sums and products in float64, integers
    wide and then wrapped to 32 bits (exact: 2**32 divides numpy's 2**64 wrap-around)."""
    x = np.asarray(x)
    out_dtype = result_dtype(op, x.dtype, dtype)
    if out_dtype == np.bool_:
        wide = x.astype(bool)
    elif out_dtype.kind == "f":
        wide = x.astype(np.float32).astype(np.float64 if op in ("cumsum", "cumprod") else np.float32)
    else:
        wide = x.astype(out_dtype).astype(np.int64 if out_dtype.kind == "i" else np.uint64)
    if axis is None:
        wide, axis = wide.reshape(-1), 0
    elif wide.ndim == 0:
        wide = wide.reshape(1)
    if reverse:
        wide = np.flip(wide, axis)
    with np.errstate(over="ignore", invalid="ignore"):
        r = ACCUMULATE[op](wide, axis=axis)
    if exclusive and r.shape[axis]:
        r = np.moveaxis(r, axis, 0)
        first = np.full((1,) + r.shape[1:], identity(op, out_dtype), r.dtype)
        r = np.moveaxis(np.concatenate([first, r[:-1]]), 0, axis)
    if reverse:
        r = np.flip(r, axis)
    return r if out_dtype.kind == "f" and op in ("cumsum", "cumprod") else r.astype(out_dtype)


def check(got, x, op, axis=None, exclusive=False, reverse=False, dtype=None):
    x = np.asarray(x)
    want = reference(x, op, axis, exclusive, reverse, dtype)
    got = np.asarray(got.numpy() if isinstance(got, vk.Array) else got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == result_dtype(op, x.dtype, dtype), got.dtype
    if got.dtype.kind != "f" or op in ("cummax", "cummin"):
        np.testing.assert_array_equal(got, want)
        return
    assert not np.isnan(got).any(), "NaN in the output (an unwritten, poisoned element?)"
    n = max(want.shape[axis] if axis is not None else want.size, 1) if want.ndim else 1
    if op == "cumsum":
        # |error| <= c * log2(n) * eps * sum of |x| over the scanned elements.
        scale = np.abs(reference(np.abs(x.astype(np.float64)), op, axis, exclusive, reverse))
        bound = 4 * math.log2(n + 1) * EPS * scale + 1e-30
    else:
        # Products: relative error grows like sqrt(n) roundings (random signs), bound generously.
        bound = 16 * math.sqrt(n) * EPS * np.abs(want) + 1e-30
    err = np.abs(got.astype(np.float64) - want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else None
    assert (err <= bound).all(), f"error {err[worst]} > bound {bound[worst]} at {worst}"


def data(rng, op, shape, dtype):
    """Random data that keeps float products finite (values near 1)."""
    if op == "cumprod" and np.dtype(dtype).kind == "f":
        return rng.uniform(0.9, 1.1, shape).astype(np.float32)
    return random_array(rng, shape, dtype)


def run(op, x, **kw):
    return getattr(vk, op)(x, **kw)


@pytest.fixture
def tuning(monkeypatch):
    """Set scan.TUNING for one test: tuning(workgroup=64, items=4)."""
    def set_(**kw):
        monkeypatch.setattr(scan, "TUNING", dataclasses.replace(scan.TUNING, **kw))
        return scan.TUNING
    return set_


@pytest.fixture
def small(tuning):
    """Tiles of 64 x 4 = 256 elements: many tiles from little data, and quick pipeline compiles
    (every op/type/flag combination is a pipeline; lavapipe compiles each in 0.1-0.5 s)."""
    return tuning(workgroup=64, items=4)


def latin(i, j):
    """(exclusive, reverse) for row i, column j of a Latin square: every op meets every flag
    combination, and so does every dtype, in 16 pipelines rather than 64."""
    return FLAGS[(i + j) % len(FLAGS)]


# ---- sizes -----------------------------------------------------------------------------------
def boundary_sizes(sg, wg, tile):
    sizes = {0, 1, 2, 3, sg - 1, sg, sg + 1, wg - 1, wg, wg + 1, tile - 1, tile, tile + 1,
             2 * tile - 1, 2 * tile + 1, 5 * tile - 1, 5 * tile, 5 * tile + 3}
    return sorted(s for s in sizes if s >= 0)


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_cumsum_float32_at_every_boundary(rng, sg, algorithm):
    """The default tiles (workgroup x items), around every size that changes the work split."""
    t = scan.TUNING
    for n in boundary_sizes(sg, t.workgroup, t.tile) + [300_001]:
        x = random_array(rng, n, np.float32)
        check(vk.cumsum(x, algorithm=algorithm), x, "cumsum")


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_many_small_tiles(rng, small, sg, algorithm):
    """Hundreds of tiles: long look-back chains, and fallbacks where lavapipe runs a predecessor late."""
    for n in boundary_sizes(sg, small.workgroup, small.tile) + [100_003]:
        x = random_array(rng, n, np.int32)
        check(vk.cumsum(x, algorithm=algorithm), x, "cumsum")
    x = random_array(rng, 150_001, np.float32)
    check(vk.cumsum(x, exclusive=True, reverse=True, algorithm=algorithm), x, "cumsum", exclusive=True,
          reverse=True)


@pytest.mark.parametrize("layout", scan.LAYOUTS)
def test_each_layout_and_narrow_lookback(rng, tuning, sg, layout):
    """Every tile layout, with several quads per thread (items=8) and a workgroup that is not a
    multiple of the subgroup size (40: a partial last subgroup for sizes 16 and 32), and a
    look-back one state at a time."""
    tuning(workgroup=40, items=8, layout=layout, lookback=1)
    for n in boundary_sizes(sg, 40, 320) + [100_003]:
        x = random_array(rng, n, np.int32)
        check(vk.cumsum(x), x, "cumsum")
    x = random_array(rng, 30_001, np.float32)
    check(vk.cummax(x, exclusive=True, reverse=True), x, "cummax", exclusive=True, reverse=True)
    check(vk.cumsum(x[1:], algorithm="reduce_then_scan"), x[1:], "cumsum")


@pytest.mark.parametrize("static", [True, False])
def test_tile_order(rng, tuning, sg, static):
    """Tiles numbered by workgroup id (lavapipe may start a tile before its predecessors, which
    the look-back must survive: the fallback) or by a counter in start order."""
    t = tuning(workgroup=64, items=8, static_tiles=static)
    for i, n in enumerate(boundary_sizes(sg, t.workgroup, t.tile) + [200_003]):
        exclusive, reverse = FLAGS[i % len(FLAGS)]
        x = random_array(rng, n, np.int32)
        check(vk.cumsum(x, exclusive=exclusive, reverse=reverse), x, "cumsum", exclusive=exclusive,
              reverse=reverse)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_and_dtype(rng, small, op, dtype):
    exclusive, reverse = latin(OPS.index(op), DTYPES.index(dtype))
    x = data(rng, op, 8 * small.tile + 5, dtype)
    got = run(op, x, exclusive=exclusive, reverse=reverse)
    check(got, x, op, exclusive=exclusive, reverse=reverse)
    if exclusive:  # numpy's identity: 0, 1, -inf / the type's minimum, +inf / its maximum
        first = got.numpy()[-1 if reverse else 0]
        assert first == identity(op, result_dtype(op, dtype)), (op, dtype, first)


@pytest.mark.parametrize("op", OPS)
def test_every_op_with_default_tiles(rng, op):
    exclusive, reverse = latin(OPS.index(op), 1)
    x = data(rng, op, 7 * scan.TUNING.tile // 2 + 5, np.float32)
    check(run(op, x, exclusive=exclusive, reverse=reverse), x, op, exclusive=exclusive, reverse=reverse)


@pytest.mark.parametrize("op", OPS)
def test_reduce_then_scan_every_op(rng, small, op):
    for j, dtype in enumerate((np.float32, np.int32)):
        exclusive, reverse = latin(OPS.index(op), 2 * j)
        x = data(rng, op, 50_001, dtype)
        check(run(op, x, exclusive=exclusive, reverse=reverse, algorithm="reduce_then_scan"), x, op,
              exclusive=exclusive, reverse=reverse)


# ---- the decoupled fallback ------------------------------------------------------------------
def test_fallback_alone_computes_every_prefix(rng, tuning):
    """Every look-back ignores the published states and reduces its predecessors from the input:
    the fallback on its own must give the scan."""
    tuning(workgroup=64, items=4, force_fallback=True)
    for op, dtype, (exclusive, reverse) in [("cumsum", np.int32, FLAGS[0]), ("cummax", np.float32, FLAGS[3])]:
        x = data(rng, op, 60 * 256 + 17, dtype)
        scan._STATE.reset()
        check(run(op, x, exclusive=exclusive, reverse=reverse), x, op, exclusive=exclusive, reverse=reverse)
        tiles = -(-x.size // 256)
        assert scan.fallback_count() == tiles * (tiles - 1) // 2


def test_no_patience_falls_back_and_stays_exact(rng, tuning):
    """A spin limit of 0: a predecessor that has not published is reduced from the input at once."""
    tuning(workgroup=64, items=4, spin=0, software_spin=0)
    x = random_array(rng, 200_000, np.int32)
    scan._STATE.reset()
    check(vk.cumsum(x), x, "cumsum")
    print("fallbacks:", scan.fallback_count(), "of", -(-x.size // 256), "tiles")


@pytest.mark.parametrize("walk", ["subgroup", "serial"])
@pytest.mark.parametrize("lookback", [1, 3])
def test_lookback_windows_over_many_tiles(rng, tuning, walk, lookback):
    """The look-back with narrow windows (lookback states per walker; with subgroups, one walker per
    lane, whatever the subgroup size) over hundreds of tiles, across row boundaries (a window
    clipped at a row's first tile), and with no patience at all (every silent predecessor reduced)."""
    tuning(workgroup=64, items=4, lookback=lookback, subgroup_lookback=walk == "subgroup")
    x = random_array(rng, 150_001, np.int32)
    check(vk.cumsum(x), x, "cumsum")
    y = random_array(rng, (6, 5 * 256 + 7), np.float32)  # six tiles a row
    check(vk.cumsum(y, axis=1, reverse=True), y, "cumsum", axis=1, reverse=True)
    check(vk.cummin(y, axis=1, exclusive=True), y, "cummin", axis=1, exclusive=True)
    tuning(spin=0, software_spin=0)
    check(vk.cumprod(x, exclusive=True), x, "cumprod", exclusive=True)


def test_lookback_reads_states_at_an_odd_offset(rng, small):
    """A tile-state buffer at an odd word offset: the states are read word by word, not as pairs."""
    from vkbackend import runtime
    st = scan._STATE
    st.reset()
    words = vk.asarray(np.zeros(1 + scan.STATE_HEADER + 2 * 1024, np.uint32))
    st.array, st.rt, st.tiles = words[1:], runtime.get(), 1024
    assert st.array.offset % 2 == 1
    x = random_array(rng, 300 * 256 + 11, np.int32)
    check(vk.cumsum(x), x, "cumsum")
    check(vk.cummax(x, reverse=True), x, "cummax", reverse=True)
    assert words.numpy()[0] == 0  # nothing written before the view


def test_tile_state_carries_over_between_scans(rng, small, tuning):
    """The tile state is zeroed only now and then: states left by earlier scans (older epochs)
    must read as empty, and the buffer must be zeroed before epochs or the tile counter run out."""
    from vkbackend import runtime
    tuning(static_tiles=False)  # tiles from the counter
    x = random_array(rng, 40 * 256 + 3, np.int32)
    workgroups, epoch, base = 41, 1000, 2**32 - 50
    words = np.zeros(scan.STATE_HEADER + 2 * 1024, np.uint32)
    words[0] = base  # the counter where earlier scans left it
    words[scan.STATE_HEADER:] = ((2 * epoch) << 16) | 0xBEEF  # the last scan's PREFIX, other values
    st = scan._STATE
    st.reset()
    st.array, st.rt, st.tiles, st.epoch, st.base = vk.asarray(words), runtime.get(), 1024, epoch, base
    kept = st.array
    check(vk.cumsum(x), x, "cumsum")
    assert st.array is kept and st.epoch == epoch + 1 and st.base == base + workgroups
    check(vk.cumsum(x, reverse=True), x, "cumsum", reverse=True)  # the counter would overflow: zeroed
    assert st.array is not kept and st.epoch == 1
    for _ in range(3):  # the flags would overflow: zeroed again, at the same size (no growth)
        st.epoch = scan._TileState.MAX_EPOCH + 1
        kept = st.array
        check(vk.cummax(x), x, "cummax")
        assert st.array is not kept and st.epoch == 1 and st.tiles == 1024 and st.array.size == kept.size


# ---- axes, shapes, views ---------------------------------------------------------------------
SHAPES = [(7,), (3, 5), (2, 1, 9), (3, 4, 5, 6), (2, 3000), (5, 9000), (1000, 3), (3, 700, 5), (600, 2, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_axis(rng, small, shape):
    x = random_array(rng, shape, np.int32)
    for axis in [None] + list(range(-len(shape), len(shape))):
        check(vk.cumsum(x, axis=axis), x, "cumsum", axis=axis)
    x = random_array(rng, shape, np.float32)
    for axis in range(len(shape)):
        exclusive, reverse = FLAGS[(axis + len(shape)) % 4]
        check(vk.cummax(x, axis=axis, exclusive=exclusive, reverse=reverse), x, "cummax", axis=axis,
              exclusive=exclusive, reverse=reverse)
        check(vk.cumsum(x, axis=axis, reverse=True), x, "cumsum", axis=axis, reverse=True)


def test_long_strided_axis_is_chunked(rng, tuning):
    """An axis longer than a chunk: reduce-then-scan over chunks, recursively (chunk 16)."""
    tuning(chunk=16)
    x = random_array(rng, (1000, 3, 2), np.float32)
    for exclusive, reverse in FLAGS:
        check(vk.cumsum(x, axis=0, exclusive=exclusive, reverse=reverse), x, "cumsum", axis=0,
              exclusive=exclusive, reverse=reverse)
    check(vk.cummin(x, axis=0, exclusive=True), x, "cummin", axis=0, exclusive=True)
    y = random_array(rng, (5, 700), np.int32)  # short rows along the last axis: a thread per row
    check(vk.cumprod(y, axis=1, reverse=True), y, "cumprod", axis=1, reverse=True)


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_many_rows_each_several_tiles(rng, small, algorithm):
    for i, shape in enumerate([(7, 1000), (40, 257), (3, 1024), (2, 4099)]):  # rows unaligned / aligned
        exclusive, reverse = FLAGS[i]
        x = random_array(rng, shape, np.float32)
        check(vk.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse, algorithm=algorithm), x,
              "cumsum", axis=1, exclusive=exclusive, reverse=reverse)


def test_views_at_odd_offsets(rng, small):
    """Views starting off a 16-byte boundary take the scalar loads; reverse anchors at the end."""
    base = random_array(rng, 13 * 256 + 9, np.float32)
    a = vk.asarray(base)
    for i, (start, stop) in enumerate([(1, None), (3, -2), (4, -1), (5, 1029)]):
        x = base[start:stop]
        view = a[start:len(base) if stop is None else stop % len(base)]
        for exclusive, reverse in FLAGS:
            check(vk.cumsum(view, exclusive=exclusive, reverse=reverse), x, "cumsum",
                  exclusive=exclusive, reverse=reverse)


def test_zero_d_and_empty(rng):
    check(vk.cumsum(np.float32(2.5)), np.float32(2.5), "cumsum")
    assert vk.cumsum(np.array(7, np.int32), axis=0).numpy().tolist() == [7]
    assert vk.cumprod(np.array(3, np.int32), axis=-1, exclusive=True).numpy().tolist() == [1]
    for shape, axis in [((0,), None), ((0, 3), 1), ((2, 0, 3), 1), ((2, 0, 3), None)]:
        x = np.zeros(shape, np.float32)
        got = vk.cummax(x, axis=axis)
        assert got.shape == reference(x, "cummax", axis).shape and got.dtype == np.float32
        assert got.numpy().size == 0


# ---- numerics and types ----------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_nan_propagates_through_cummax_and_cummin(rng, small, algorithm):
    x = random_array(rng, 5000, np.float32)
    x[rng.choice(5000, 3, replace=False)] = np.nan
    x[rng.choice(5000, 3, replace=False)] = -np.inf
    x[rng.choice(5000, 3, replace=False)] = np.float32(-0.0)
    x[1234] = -np.nan  # sign bit set: still a NaN to numpy
    for i, op in enumerate(("cummax", "cummin", "cumsum")):
        for exclusive, reverse in FLAGS if op != "cumsum" else [FLAGS[i]]:
            got = run(op, x, exclusive=exclusive, reverse=reverse, algorithm=algorithm).numpy()
            want = reference(x, op, exclusive=exclusive, reverse=reverse)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            if op != "cumsum":
                np.testing.assert_array_equal(got, want)
    assert vk.cummax(np.array([1, 2], np.float32), exclusive=True).numpy()[0] == -np.inf
    assert vk.cummin(np.array([1, 2], np.float32), exclusive=True, reverse=True).numpy()[-1] == np.inf


def signed_zero_data(rng, shape, run, values=(-0.0, 0.0, 1.0, -1.0, 2.0)):
    """float32 from `values` (small integers: float sums exact in any order) after a leading run
    of -0.0 of `run` elements along the last axis."""
    x = rng.choice(np.array(values, np.float32), shape)
    x[..., :run] = -0.0
    return x


def ieee_cumsum(x, exclusive=False, reverse=False):
    """numpy's float64 cumsum along the last axis, exclusive starting from -0.0 (the identity of
    float addition: vk's choice), reverse from the end."""
    x = np.flip(x, -1) if reverse else x
    r = np.cumsum(x.astype(np.float64), axis=-1)
    if exclusive:
        r = np.concatenate([np.full(r.shape[:-1] + (1,), -0.0), r[..., :-1]], axis=-1)
    return np.flip(r, -1) if reverse else r


def assert_same_bits(got, want):
    """Equal values, NaN where NaN (of either sign), and the same sign on zeros."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(got, want)
    bad = (np.signbit(got) != np.signbit(want)) & ~np.isnan(want)
    assert not bad.any(), f"{bad.sum()} zeros of the wrong sign, first at {np.argwhere(bad)[0]}"


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
@pytest.mark.parametrize("tiles", ["default", "small"])
def test_cumsum_keeps_leading_negative_zeros(rng, tuning, algorithm, tiles):
    """numpy's cumsum keeps a leading -0.0 (-0.0 + -0.0 is -0.0); a +0.0 identity made it +0.0, as
    did the subgroup and workgroup sums (lavapipe's start from +0.0). Runs of -0.0 that end in the
    first tile, mid-row, exactly at a tile's end, or fill the row; every flag; rows of many tiles
    (the look-back and reduce-then-scan carry whole tiles of -0.0); short rows and strided axes
    (scan_strided); zeros of both signs mixed in later."""
    if tiles == "small":
        tuning(workgroup=64, items=4)
    tile = scan.TUNING.tile
    for n in (1, 7, 40, tile - 1, tile, 3 * tile + 5):
        for run in sorted({0, 1, n // 2, min(n, tile), n}):
            x = signed_zero_data(rng, n, run)
            for exclusive, reverse in FLAGS:
                got = vk.cumsum(x, exclusive=exclusive, reverse=reverse, algorithm=algorithm).numpy()
                assert_same_bits(got, ieee_cumsum(x, exclusive, reverse))
    rows = signed_zero_data(rng, (6, 2 * tile + 3), 0)
    for r, run in enumerate((0, 1, 5, tile, tile + 7, rows.shape[1])):
        rows[r, :run] = -0.0
    assert_same_bits(vk.cumsum(rows, axis=1, algorithm=algorithm).numpy(), ieee_cumsum(rows))
    short = signed_zero_data(rng, (50, 9), 3)
    assert_same_bits(vk.cumsum(short, axis=1, exclusive=True).numpy(), ieee_cumsum(short, True))
    cols = np.ascontiguousarray(signed_zero_data(rng, (5, 700), 400).T)  # along axis 0, chunked
    assert_same_bits(vk.cumsum(cols, axis=0, reverse=True).numpy(), ieee_cumsum(cols.T, False, True).T)


@pytest.mark.parametrize("case", ["fallback", "serial look-back", "staged", "blocked"])
def test_cumsum_negative_zeros_through_every_path(rng, tuning, case):
    """The look-back's fallback (a tile reduced from the input: whole tiles of -0.0 reduce to
    -0.0), one walker instead of a subgroup, and the tile layouts without subgroup scans."""
    kw = {"fallback": dict(force_fallback=True), "serial look-back": dict(subgroup_lookback=False),
          "staged": dict(layout="staged"), "blocked": dict(layout="blocked")}[case]
    t = tuning(workgroup=64, items=4, **kw)
    for run in (0, 3, t.tile, 2 * t.tile + 9, 6 * t.tile):
        x = signed_zero_data(rng, 6 * t.tile, run)
        for exclusive, reverse in FLAGS:
            assert_same_bits(vk.cumsum(x, exclusive=exclusive, reverse=reverse).numpy(),
                             ieee_cumsum(x, exclusive, reverse))


def ieee_accumulate(x, op):
    """cummax / cummin by IEEE 754-2019's maximum / minimum, one element at a time in float64: a
    NaN wins, -0.0 is below +0.0 (numpy's own sign for equal zeros follows its SIMD code: on x86
    the later zero)."""
    key = lambda v: (v, not np.signbit(v))  # noqa: E731
    out, acc = np.empty(x.shape, np.float64), None
    for i, v in enumerate(x.astype(np.float64)):
        if acc is None or np.isnan(v) or np.isnan(acc):
            acc = v if acc is None or np.isnan(v) else acc
        elif (key(v) > key(acc)) == (op == "cummax") and key(v) != key(acc):
            acc = v
        out[i] = acc
    return out


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_signed_zeros_and_nan_in_cumprod_cummax_cummin(rng, small, algorithm):
    """cumprod's zeros take the sign of their factors (numpy's float64, bit for bit); cummax and
    cummin order -0.0 below +0.0 and let NaN win from where it appears (numpy's values, and the
    IEEE 754-2019 sign where numpy's depends on its SIMD code)."""
    n = 5 * scan.TUNING.tile + 3
    x = signed_zero_data(rng, n, 2, values=(-0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0))
    x[rng.choice(n, 3, replace=False)] = 0.0 * rng.choice([-1, 1])
    for exclusive, reverse in FLAGS:
        want = np.cumprod(np.flip(x) if reverse else x, dtype=np.float64)
        if exclusive:
            want = np.concatenate([[1.0], want[:-1]])
        got = vk.cumprod(x, exclusive=exclusive, reverse=reverse, algorithm=algorithm).numpy()
        assert_same_bits(got, np.flip(want) if reverse else want)
    y = signed_zero_data(rng, n, 3, values=(-0.0, 0.0, -1.0, -2.0))
    for op in ("cummax", "cummin"):
        z = y if op == "cummax" else -y
        for nan_at in (None, n // 2, 0):
            w = z.copy()
            if nan_at is not None:
                w[nan_at] = np.nan
            got = run(op, w, algorithm=algorithm).numpy()
            np.testing.assert_array_equal(got, ACCUMULATE[op](w))  # numpy's values, NaN where NaN
            assert_same_bits(got, ieee_accumulate(w, op))


def test_integers_wrap_modulo_2_32(rng):
    big = np.full(100_000, 2**30 + 12345, np.int32)
    check(vk.cumsum(big), big, "cumsum")  # wraps many times over
    assert vk.cumsum(big).numpy()[3] == np.int32(np.int64(4 * (2**30 + 12345)) - 2**32)
    factors = rng.integers(-3, 4, 10_000).astype(np.int32)
    check(vk.cumprod(factors), factors, "cumprod")
    u = rng.integers(2**31, 2**32 - 1, 9000, dtype=np.uint32)
    check(vk.cumsum(u, reverse=True), u, "cumsum", reverse=True)


def test_dtype_argument(rng, small):
    b = random_array(rng, 9000, np.bool_)
    check(vk.cumsum(b), b, "cumsum")  # counts in int32
    check(vk.cumprod(b, reverse=True), b, "cumprod", reverse=True)
    check(vk.cummax(b), b, "cummax")  # stays bool
    check(vk.cummin(b, exclusive=True), b, "cummin", exclusive=True)
    i = random_array(rng, 9000, np.int32)
    check(vk.cumsum(i, dtype=np.float32), i, "cumsum", dtype=np.float32)
    check(vk.cumsum(i, dtype=np.uint32), i, "cumsum", dtype=np.uint32)
    f = (random_array(rng, 9000, np.float32) * 3)
    check(vk.cumsum(f, dtype=np.int32), f, "cumsum", dtype=np.int32)  # each element truncated first
    small_ints = rng.integers(0, 3, 9000).astype(np.int32)
    for op, (exclusive, reverse) in [("cumsum", FLAGS[0]), ("cumprod", FLAGS[3])]:
        got = run(op, small_ints, dtype=bool, exclusive=exclusive, reverse=reverse)
        check(got, small_ints, op, dtype=np.bool_, exclusive=exclusive, reverse=reverse)
        assert set(np.unique(got.astype(np.uint32).numpy())) <= {0, 1}  # the stored words


def test_host_inputs():
    assert vk.cumsum([1, 2, 3]).numpy().tolist() == [1, 3, 6]
    assert vk.cumprod(np.arange(1, 6, dtype=np.float64)).numpy().tolist() == [1, 2, 6, 24, 120]
    assert vk.cummax([[3, 1], [2, 5]], axis=0).numpy().tolist() == [[3, 1], [3, 5]]
    assert vk.cumsum(4).numpy().tolist() == [4]


# ---- bad inputs ------------------------------------------------------------------------------
BAD = [
    (lambda a: vk.cumsum(a, axis=1), np.exceptions.AxisError),
    (lambda a: vk.cumsum(a, axis=-2), np.exceptions.AxisError),
    (lambda a: vk.cumsum(a, axis=0.0), TypeError),
    (lambda a: vk.cumsum(a, axis=True), TypeError),
    (lambda a: vk.cumsum(a, axis=(0,)), TypeError),
    (lambda a: vk.cumsum(a, dtype=np.float16), TypeError),
    (lambda a: vk.cumsum(a, dtype="complex64"), TypeError),
    (lambda a: vk.cumsum(a, dtype="not a dtype"), TypeError),
    (lambda a: vk.cumprod(a, exclusive=1), TypeError),
    (lambda a: vk.cummax(a, reverse="yes"), TypeError),
    (lambda a: vk.cummin(a, algorithm="blelloch"), ValueError),
    (lambda a: vk.cumsum(a, algorithm=None), ValueError),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_arguments_raise_before_gpu_work(i):
    call, err = BAD[i]
    a = vk.asarray(np.arange(10, dtype=np.float32))
    host = np.arange(10, dtype=np.float32)
    vk.synchronize()
    for operand in (a, host):
        with no_gpu_work(), pytest.raises(err):
            call(operand)


def test_bad_operands_raise_before_gpu_work():
    vk.synchronize()
    with no_gpu_work():
        for bad in ["abc", {"a": 1}, None, 1 + 2j, np.array([1 + 2j]), np.array(["x"])]:
            with pytest.raises(TypeError):
                vk.cumsum(bad)
        with pytest.raises(OverflowError):
            vk.cumsum(np.array([2**40]))


def test_bad_tuning_raises_before_gpu_work(tuning):
    vk.synchronize()
    with no_gpu_work():
        tuning(items=6)
        with pytest.raises(ValueError, match="multiple of 4"):
            vk.cumsum(np.ones(10, np.float32))
        tuning(items=4096, layout="staged")  # the staged layout keeps the whole tile in shared memory
        with pytest.raises(ValueError, match="shared memory"):
            vk.cumsum(np.ones(10, np.float32))
        tuning(items=4, layout="diagonal")
        with pytest.raises(ValueError, match="layout"):
            vk.cumsum(np.ones(10, np.float32))


# ---- recording -------------------------------------------------------------------------------
def test_chain_of_scans_is_one_submit(rng, whole_submits):
    x = random_array(rng, 20_000, np.int32)
    vk.synchronize()
    s0 = vk.stats()["submits"]
    a = vk.asarray(x)
    b = vk.cumsum(a, reverse=True)
    c = vk.cummax(b, exclusive=True)
    d = vk.cumsum(c, algorithm="reduce_then_scan")
    e = vk.cummin(d.reshape(100, 200), axis=0)
    got = e.numpy()
    assert vk.stats()["submits"] == s0 + 1
    ref = reference(x, "cumsum", reverse=True)
    ref = reference(ref, "cummax", exclusive=True)
    ref = reference(ref, "cumsum")
    np.testing.assert_array_equal(got, reference(ref.reshape(100, 200), "cummin", axis=0))


# ---- property --------------------------------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(0, 40), min_size=0, max_size=3).map(tuple), axis_seed=st.integers(0, 10),
       exclusive=st.booleans(), reverse=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_cumsum_matches_numpy_on_random_shapes(shape, axis_seed, exclusive, reverse, seed):
    x = np.random.default_rng(seed).integers(-1000, 1000, shape, dtype=np.int32)
    axis = None if axis_seed == 0 else axis_seed % max(len(shape), 1)
    check(vk.cumsum(x, axis=axis, exclusive=exclusive, reverse=reverse), x, "cumsum", axis=axis,
          exclusive=exclusive, reverse=reverse)
