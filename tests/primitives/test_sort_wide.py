"""vk.sort / argsort / searchsorted / unique_* of the WIDE dtypes (int8/16/64, uint8/16/64,
float64) against numpy's stable sort, bit for bit: 64-bit keys that differ only in their high or
only in their low word, uint64 past 2**63, float64 NaNs (several payloads, both signs), -0.0,
infinities and subnormals; sizes around the device's subgroups, workgroups and tiles."""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import sort as sort_mod

from tests.conftest import h200_like, no_gpu_work
from tests.primitives.test_sort import bits, check_sorts, check_unique, make as make32, ref_argsort

WIDE = [np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64, np.float64]
SIZES = [1, 7, 33, 257, 4099, 70001]
# word patterns of 64-bit keys: the sign bit, NaN/inf exponents, subnormals, zero
_WORDS = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0x7FF00000, 0xFFF00000,
                   0x000FFFFF, 0x3FF00000, 0xBFF00000], np.uint64)
F64_SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 2.225073858507201e-308,
                         -2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0],
                        np.float64)
F64_NANS = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF0000100000000,
                     0xFFFFFFFFFFFFFFFF], np.uint64).view(np.float64)


def make(rng, shape, dtype, kind="random"):
    """Test data of a WIDE dtype. 'random': a third over the whole range, a third from a handful
    of values (runs of equal keys), and for 64-bit dtypes a third whose words come from a few
    high and low words (keys equal in one word, different in the other; float64: NaNs, infinities,
    zeros and subnormals among them), else from the extremes. 'dups': only the handful."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "f":
        full = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
        pool = np.concatenate([F64_SPECIALS, F64_NANS, [1.5, 1.5, -2.0]])
    else:
        info = np.iinfo(dtype)
        full = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        pool = np.array([info.min, info.max, 0, 1, 3, 3, info.max - 1] + ([-1, info.min + 1] if info.min else []),
                        dtype)
    dups = pool[rng.integers(0, len(pool), n)].astype(dtype)
    if kind == "dups":
        return dups.reshape(shape)
    if dtype.itemsize == 8:
        hi = np.concatenate([_WORDS, rng.integers(0, 1 << 32, 3, dtype=np.uint64)])
        lo = np.concatenate([_WORDS[:6], rng.integers(0, 1 << 32, 3, dtype=np.uint64)])
        third = ((hi[rng.integers(0, len(hi), n)] << np.uint64(32)) | lo[rng.integers(0, len(lo), n)]).view(dtype)
    else:
        third = pool[rng.integers(0, 2, n)].astype(dtype)  # the extremes
    pick = rng.integers(0, 3, n)
    x = np.where(pick == 0, full, np.where(pick == 1, dups, third)).astype(dtype)
    if n:
        x[rng.integers(0, n, min(n, 2))] = pool[:min(n, 2)]  # the extremes (float64: a NaN)
    return x.reshape(shape)


def test_data_has_what_it_should(rng):
    """The cases named in the module doc are in the data the sizes of 257 and up get."""
    x = make(rng, 4099, np.int64)
    lo, hi = x.view(np.uint64) & np.uint64(0xFFFFFFFF), x.view(np.uint64) >> np.uint64(32)
    assert len(np.unique(hi[lo == 0])) > 3 and len(np.unique(lo[hi == 0x80000000])) > 3
    assert (make(rng, 4099, np.uint64) >= 1 << 63).sum() > 1000
    f = make(rng, 4099, np.float64)
    u = f.view(np.uint64)
    assert np.isnan(f).sum() > 50 and len(np.unique(u[np.isnan(f)])) > 3
    assert (u == 1 << 63).any() and (u == 0).any() and np.isinf(f).any()
    assert ((f != 0) & (np.abs(f) < np.finfo(np.float64).tiny)).sum() > 50


# ---- 1-D ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("n", SIZES)
def test_sort_sizes(rng, n, dtype, descending):
    check_sorts(make(rng, n, dtype), descending=descending)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", WIDE)
def test_duplicates_keep_their_order(rng, dtype, descending):
    check_sorts(make(rng, 3001, dtype, "dups"), descending=descending)


def test_64_bit_words_decide_in_order():
    """Keys equal in their low words and different in their high words, and the reverse."""
    for dtype in (np.int64, np.uint64, np.float64):
        hi = np.array([5, 0x80000000, 5, 0x7FFFFFFF, 0xFFFFFFFF, 5, 0, 1], np.uint64)
        lo = np.array([7, 7, 3, 7, 7, 0xFFFFFFFF, 7, 0x80000000], np.uint64)
        x = ((hi << np.uint64(32)) | lo).view(dtype)
        check_sorts(x)
        check_sorts(x, descending=True)
    big = np.array([2**63 + 5, 2**63 - 1, 2**64 - 1, 2**63, 0, 2**32, 2**32 - 1, 2**63 + 2**32], np.uint64)
    check_sorts(big)
    check_sorts(big.view(np.int64))


@pytest.mark.parametrize("max_blocks", [1, 3])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int16])
def test_blocks_of_several_tiles(rng, monkeypatch, dtype, max_blocks):
    """Workgroups walking several tiles each (a block), as many as the loop budget allows with
    max_blocks=1: VKBACKEND_LOOP_BUDGET lowers it and enforces it in the kernels."""
    monkeypatch.setattr(sort_mod, "TUNING", dataclasses.replace(sort_mod.TUNING, max_blocks=max_blocks))
    key_words = np.dtype(dtype).itemsize // 4 or 1
    tile = sort_mod._plan(1, True, "test", key_words).tile
    n = 12 * tile + 11
    assert sort_mod._plan(n, True, "test", key_words).tiles_per_block > 1
    check_sorts(make(rng, n, dtype))


# ---- axes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, -1, None])
@pytest.mark.parametrize("dtype", WIDE)
def test_axes_of_a_2d_array(rng, dtype, axis, descending):
    check_sorts(make(rng, (37, 70), dtype), axis, descending)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.uint64, np.float64])
def test_3d_many_rows_and_views(rng, dtype):
    """A middle axis; 300 rows (two row passes); a 64-bit view at an odd element offset."""
    check_sorts(make(rng, (4, 37, 6), dtype), 1, True)
    check_sorts(make(rng, (300, 5), dtype, "dups"), -1)
    x = make(rng, 91, dtype)
    a = vk.asarray(x, dtype=dtype)[3:]
    np.testing.assert_array_equal(bits(vk.sort(a).numpy()), bits(np.sort(x[3:], kind="stable")))
    np.testing.assert_array_equal(vk.argsort(a, descending=True).numpy(), ref_argsort(x[3:], descending=True))


def test_empty_rows_of_one_and_0d(rng):
    for dtype in WIDE:
        for shape, axis in [((0,), -1), ((3, 0), -1), ((5, 1), -1), ((1, 6), 0)]:
            check_sorts(make(rng, shape, dtype), axis)
    check_sorts(F64_NANS.reshape(-1, 1))  # rows of one: copied with their payloads
    got = vk.argsort(vk.asarray(np.float64(2.0), dtype=np.float64))
    np.testing.assert_array_equal(got.numpy(), np.argsort(np.float64(2.0)))


def test_passes_per_dtype(rng, monkeypatch):
    """64-bit keys take 8 passes of 3 dispatches; 8-bit ones 1 and 16-bit ones 2, with a cast
    each way (int8/int16: and their offset)."""
    monkeypatch.setattr(runtime.get(), "poison", False)
    for dtype, sort_dispatches, argsort_dispatches in [
            (np.int64, 24, 24), (np.uint64, 24, 24), (np.float64, 24, 24), (np.uint8, 3 + 2, 3 + 1),
            (np.int8, 3 + 4, 3 + 2), (np.uint16, 6 + 2, 6 + 1), (np.int16, 6 + 4, 6 + 2)]:
        a = vk.asarray(make(rng, 1000, dtype), dtype=dtype)
        for fn, want in [(vk.sort, sort_dispatches), (vk.argsort, argsort_dispatches)]:
            vk.synchronize()
            before = vk.stats()["dispatches"]
            fn(a)
            assert vk.stats()["dispatches"] - before == want, (fn, dtype)


def test_h200_plan(monkeypatch):
    """On an H200-like device (48 KiB of shared memory): 64-bit keys, alone or with values
    (argsort), keep the tuning's tiles of 256 x 8 (word pairs: twice the shared memory of 32-bit
    keys, within the 48 KiB)."""
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", h200_like(rt.device))
    for pairs in (False, True):
        plan = sort_mod._plan(1 << 24, pairs, "test", 2)
        assert (plan.workgroup, plan.items) == (256, 8)


# ---- searchsorted --------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("n", [1, 7, 1000])
def test_searchsorted(rng, n, dtype, side):
    x1 = np.sort(make(rng, n, dtype), kind="stable")
    x2 = np.concatenate([make(rng, 40, dtype), x1[rng.integers(0, n, 10)]]).reshape(5, 10)
    a1, a2 = vk.asarray(x1, dtype=dtype), vk.asarray(x2, dtype=dtype)
    got = vk.searchsorted(a1, a2, side=side)
    assert got.dtype == np.int32 and got.shape == x2.shape
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(x1, x2, side=side))
    # the same through a permutation that sorts a shuffled x1
    shuffled = x1[rng.permutation(n)]
    sorter = np.argsort(shuffled, kind="stable").astype(np.int32)
    got = vk.searchsorted(vk.asarray(shuffled, dtype=dtype), a2, side=side, sorter=vk.asarray(sorter))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(shuffled, x2, side=side, sorter=sorter))


def test_searchsorted_promotes_as_numpy(rng):
    """Mixed dtypes search in numpy's result_type (uint64 with int64: float64); a Python int past
    an integer dtype's range goes past every element."""
    cases = [(np.int8, np.int64), (np.uint64, np.int64), (np.int16, np.float32), (np.uint8, np.int8),
             (np.float64, np.float32), (np.int32, np.uint16), (np.uint32, np.int64)]
    for d1, d2 in cases:
        x1 = np.sort((make if d1 in WIDE else make32)(rng, 300, d1), kind="stable")
        x2 = (make if d2 in WIDE else make32)(rng, 40, d2)
        for side in ("left", "right"):
            got = vk.searchsorted(vk.asarray(x1, dtype=d1), vk.asarray(x2, dtype=d2), side=side)
            np.testing.assert_array_equal(got.numpy(), np.searchsorted(x1, x2, side=side), err_msg=f"{d1} {d2}")
    x1 = np.array([-100, -3, 0, 0, 5, 100], np.int8)
    for q in (300, -300, 5, 2.5, -3):
        for side in ("left", "right"):
            got = vk.searchsorted(vk.asarray(x1, dtype=np.int8), q, side=side)
            assert got.shape == () and int(got.numpy()) == np.searchsorted(x1, q, side=side), (q, side)
    x1 = np.array([0, 2**40, 2**63, 2**64 - 1], np.uint64)
    for q in (2**40, 2**64, -1):
        got = vk.searchsorted(vk.asarray(x1, dtype=np.uint64), q, side="right")
        assert int(got.numpy()) == np.searchsorted(x1, q, side="right"), q


# ---- unique_* ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["random", "dups"])
@pytest.mark.parametrize("dtype", WIDE)
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (3, 50), (4099,)])
def test_unique(rng, shape, dtype, kind):
    """Against numpy's unique_all (equal_nan=False: NaNs distinct), bit for bit: each value as it
    first occurs (-0.0 or 0.0), indices its first occurrence, inverse of x's shape."""
    x = make(rng, shape, dtype, kind)
    a = vk.asarray(x, dtype=dtype)
    want = np.unique_all(x)
    got = vk.unique_all(a)
    check_unique(a, got, want)


def test_bad_input_before_gpu_work():
    x = vk.asarray(np.arange(6, dtype=np.int64).reshape(2, 3), dtype=np.int64)
    row = vk.asarray(np.arange(3, dtype=np.int64), dtype=np.int64)
    with no_gpu_work():
        with pytest.raises(np.exceptions.AxisError):
            vk.sort(x, axis=2)
        with pytest.raises(TypeError, match="descending"):
            vk.argsort(x, descending=1)
        with pytest.raises(ValueError, match="1-D"):
            vk.searchsorted(x, x)
        with pytest.raises(TypeError, match="sorter"):
            vk.searchsorted(row, x, sorter=row)  # argsort's int32 positions, or uint32
