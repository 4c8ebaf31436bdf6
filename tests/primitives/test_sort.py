"""vk.sort / argsort / searchsorted / unique_* against numpy (shaders/primitives/radix_sort.comp,
searchsorted.comp): numpy's stable sort is the reference, bit for bit (sorts move the words, so
-0.0 and NaN payloads keep their place among equal elements)."""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import sort as sort_mod

from tests.conftest import flush_subnormals, h200_like, no_gpu_work

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
# Sizes as expressions of the device's tile T (elements per workgroup and tile): around subgroups
# and workgroups, tile edges, 16 T (the histograms, 256 words per block, fill one scan tile of 4096)
# and past it (several scan tiles).
SIZES = ["1", "2", "7", "8", "9", "255", "256", "257", "T-1", "T", "T+1", "3*T+5", "16*T", "16*T+1", "40*T+7"]


@pytest.fixture(scope="module")
def T():
    return sort_mod._plan(1, False, "test").tile


def size(expr, T):
    return eval(expr, {"T": T})


def make(rng, shape, dtype, kind="random"):
    """Test data: 'random' (floats: normal; integers: their whole range, the extremes included),
    'dups' (a handful of values: runs of equal keys; floats with -0.0, 0.0 and NaNs of several
    payloads among them) or 'special' (floats: NaNs of both signs, infinities, zeros of both signs,
    subnormals, the extremes, among normal values)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if kind == "dups":
        if dtype.kind == "f":
            pool = np.array([1.5, -2.0, 0.0, -0.0, np.inf, 1.5], np.float32)
            pool = np.concatenate([pool, np.array([0x7FC00000, 0xFFC00001, 0x7F800123], np.uint32).view(np.float32)])
        else:
            info = np.iinfo(dtype)
            pool = np.array([info.min, info.max, 0, 1, 3, 3], dtype)
        return pool[rng.integers(0, len(pool), shape)]
    if dtype.kind == "f":
        x = rng.standard_normal(shape).astype(np.float32)
        if kind == "special":
            words = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0x80000000, 0,
                              1, 0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF], np.uint32)
            flat = x.reshape(-1)
            at = rng.random(flat.size) < 0.3
            flat[at] = words[rng.integers(0, len(words), int(at.sum()))].view(np.float32)
        return x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    x.reshape(-1)[:2] = [info.min, info.max][:x.size]
    return x


def ref_sort(x, axis=-1, descending=False):
    """numpy's stable sort; descending: the flip of the stable sort of the flipped input (equal
    elements keep their order, NaNs come first)."""
    if axis is None:
        x, axis = x.reshape(-1), -1
    if descending:
        return np.flip(np.sort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return np.sort(x, axis=axis, kind="stable")


def ref_argsort(x, axis=-1, descending=False):
    if axis is None:
        x, axis = x.reshape(-1), -1
    if descending:
        n = x.shape[axis]
        return np.flip(n - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return np.argsort(x, axis=axis, kind="stable")


def bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def check_sorts(x, axis=-1, descending=False):
    """vk.sort (bit for bit) and vk.argsort (exactly) of host data x, uploaded as its dtype, against
    numpy (test_sort_wide.py's dtypes too)."""
    a = vk.asarray(x, dtype=x.dtype)
    got = vk.sort(a, axis=axis, descending=descending)
    want = ref_sort(x, axis, descending)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape)
    np.testing.assert_array_equal(bits(got.numpy()), bits(want))
    got = vk.argsort(a, axis=axis, descending=descending)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.numpy(), ref_argsort(x, axis, descending))


# ---- 1-D ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sort_sizes(rng, T, n, dtype, descending):
    check_sorts(make(rng, size(n, T), dtype), descending=descending)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", ["300", "3*T+5", "17*T+2"])
def test_duplicates_keep_their_order(rng, T, n, dtype, descending):
    check_sorts(make(rng, size(n, T), dtype, "dups"), descending=descending)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("n", ["64", "2*T+9"])
def test_nan_inf_signed_zeros_subnormals(rng, T, n, descending):
    check_sorts(make(rng, size(n, T), np.float32, "special"), descending=descending)


def test_integer_extremes():
    for dtype in (np.int32, np.uint32):
        info = np.iinfo(dtype)
        x = np.array([info.max, 0, info.min, 1, info.max, info.min + 1, info.max - 1, info.min], dtype)
        check_sorts(x)
        check_sorts(x, descending=True)


@pytest.mark.parametrize("max_blocks", [1, 3])
def test_blocks_of_several_tiles(rng, T, monkeypatch, max_blocks):
    """Workgroups walking several tiles each (a block), as many as the loop budget allows with
    max_blocks=1: VKBACKEND_LOOP_BUDGET lowers it and enforces it in the kernels."""
    monkeypatch.setattr(sort_mod, "TUNING", dataclasses.replace(sort_mod.TUNING, max_blocks=max_blocks))
    n = 12 * T + 11
    plan = sort_mod._plan(n, True, "test")
    assert plan.tiles_per_block > 1
    check_sorts(make(rng, n, np.float32, "dups"))
    check_sorts(make(rng, n, np.int32))


@pytest.mark.parametrize("workgroup", [36, 37])
def test_partial_subgroups(rng, monkeypatch, workgroup):
    """Workgroups that are not a multiple of the subgroup size (37 of none; 36 of 4 but not of 8
    or 16): the last subgroup is partial, so the ranking places elements by ballot instead of the
    affine positions of full subgroups. Keys and pairs, several tiles and blocks."""
    monkeypatch.setattr(sort_mod, "TUNING", dataclasses.replace(
        sort_mod.TUNING, software_workgroup=workgroup, workgroup=workgroup, max_blocks=3))
    n = 7 * workgroup * sort_mod.TUNING.software_items + 5
    check_sorts(make(rng, n, np.float32, "dups"))
    check_sorts(make(rng, n, np.int32), descending=True)


# ---- axes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
@pytest.mark.parametrize("dtype", DTYPES)
def test_axes_of_a_3d_array(rng, dtype, axis, descending):
    check_sorts(make(rng, (4, 37, 6), dtype, "dups" if dtype != np.bool_ else "random"), axis, descending)


@pytest.mark.parametrize("shape, axis", [((300, 3), -1), ((3, 300), 0), ((2, "2*T+3"), 1), (("2*T+3", 2), 0),
                                         ((2, 2, 70), 1)])
def test_many_rows_and_long_rows(rng, T, shape, axis):
    """Rows are the most significant digits: 300 rows take two row passes; long rows span tiles."""
    shape = tuple(size(s, T) if isinstance(s, str) else s for s in shape)
    check_sorts(make(rng, shape, np.float32, "dups"), axis)
    check_sorts(make(rng, shape, np.int32), axis, descending=True)


def test_empty_rows_of_one_and_0d(rng):
    for shape, axis in [((0,), -1), ((3, 0), -1), ((0, 4), 0), ((5, 1), -1), ((1, 6), 0), ((1,), 0)]:
        check_sorts(make(rng, shape, np.float32), axis)
    with pytest.raises(np.exceptions.AxisError):
        vk.sort(vk.asarray(np.float32(2.0)))
    got = vk.argsort(vk.asarray(np.float32(2.0)))  # numpy: a 0-d array argsorts as one element
    np.testing.assert_array_equal(got.numpy(), np.argsort(np.float32(2.0)))
    check_sorts(np.array(3.5, np.float32), axis=None)


def test_numpy_functions_dispatch_to_the_device(rng):
    x = make(rng, (5, 40), np.float32, "dups")
    a = vk.asarray(x)
    for got, want in [(np.sort(a), np.sort(x, kind="stable")), (np.sort(a, axis=0), np.sort(x, axis=0, kind="stable")),
                      (np.argsort(a, axis=None), np.argsort(x, axis=None, kind="stable"))]:
        assert isinstance(got, vk.Array)
        np.testing.assert_array_equal(bits(got.numpy()), bits(want))


def test_host_input_and_dispatch_count(rng, T, monkeypatch):
    """A 1-D float sort is 4 passes of 3 dispatches (histograms, their scan: one tile of scan.comp
    up to 16 tiles of sort, the scatter); a bool sort 1 pass; 2 rows add one row pass."""
    monkeypatch.setattr(runtime.get(), "poison", False)
    x = make(rng, 4 * T + 1, np.float32)
    a = vk.asarray(x)
    for fn, arg, passes in [(vk.sort, a, 4), (vk.argsort, a, 4), (vk.sort, a > 0, 1),
                            (vk.argsort, a.reshape(1, -1), 4), (vk.sort, a[:4 * T].reshape(2, -1), 5)]:
        vk.synchronize()
        before = vk.stats()["dispatches"]
        fn(arg)
        assert vk.stats()["dispatches"] - before == 3 * passes, (fn, arg.shape, arg.dtype)
    np.testing.assert_array_equal(vk.sort(x).numpy(), np.sort(x))  # host data is uploaded


def test_h200_plan(monkeypatch):
    """The planner on an H200-like device (48 KiB of shared memory, subgroups of 32): tiles of
    256 x 8 for keys and for pairs, 16M in 2048 blocks of 4 tiles (64-bit keys: test_sort_wide)."""
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", h200_like(rt.device))
    for pairs in (False, True):
        plan = sort_mod._plan(1 << 24, pairs, "test")
        assert (plan.workgroup, plan.items, plan.blocks, plan.tiles_per_block) == (256, 8, 2048, 4)


def test_tiles_stay_under_the_counters_range(monkeypatch):
    """The ranking counts a tile's elements in 16 bits: a tuning (and a device) that would allow a
    tile of 65536 or more gets fewer elements per invocation."""
    rt = runtime.get()
    big = dataclasses.replace(h200_like(rt.device), max_shared_memory=1 << 22)
    monkeypatch.setattr(rt, "device", big)
    monkeypatch.setattr(sort_mod, "TUNING", dataclasses.replace(sort_mod.TUNING, workgroup=1024, items=128))
    for pairs in (False, True):
        plan = sort_mod._plan(1 << 24, pairs, "test")
        assert plan.workgroup == 1024 and plan.tile <= sort_mod.MAX_TILE and plan.items == 32


def test_bad_input_before_gpu_work():
    x = vk.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    with no_gpu_work():
        with pytest.raises(np.exceptions.AxisError):
            vk.argsort(x, axis=2)
        with pytest.raises(TypeError, match="descending"):
            vk.sort(x, descending=None)
        with pytest.raises(TypeError, match="stable"):
            vk.argsort(x, stable="yes")
        with pytest.raises(ValueError, match="side"):
            vk.searchsorted(x[0], x, side="up")
        with pytest.raises(ValueError, match="1-D"):
            vk.searchsorted(x, x)
        with pytest.raises(TypeError, match="sorter"):
            vk.searchsorted(x[0], x, sorter=x[0])
        with pytest.raises(TypeError, match="str"):
            vk.unique_values("abc")
    # int32 with uint32: numpy's int64 comparison, as the elementwise functions promote
    si, u = np.array([-7, 0, 5, 2**31 - 1], np.int32), np.array([0, 6, 2**31, 2**32 - 1], np.uint32)
    got = vk.searchsorted(vk.asarray(si), vk.asarray(u))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(si, u))


# ---- searchsorted --------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_searchsorted(rng, n, dtype, side):
    x1 = np.sort(make(rng, n, dtype, "dups" if dtype != np.bool_ else "random"), kind="stable")
    x2 = make(rng, (3, 11), dtype, "special" if dtype == np.float32 else "dups" if dtype != np.bool_ else "random")
    got = vk.searchsorted(vk.asarray(x1), vk.asarray(x2), side=side)
    assert got.dtype == np.int32 and got.shape == x2.shape
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(x1, x2, side=side))
    # the same through a permutation that sorts a shuffled x1
    shuffled = x1[rng.permutation(n)]
    sorter = np.argsort(shuffled, kind="stable").astype(np.int32)
    got = vk.searchsorted(vk.asarray(shuffled), vk.asarray(x2), side=side, sorter=vk.asarray(sorter))
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(shuffled, x2, side=side, sorter=sorter))


def test_searchsorted_promotes_and_takes_scalars(rng):
    x1 = np.arange(-5, 20, 3, dtype=np.int32)
    for q in (2.5, 4, np.float32(-7.5)):
        for side in ("left", "right"):
            got = vk.searchsorted(vk.asarray(x1), q, side=side)
            assert got.shape == () and int(got.numpy()) == np.searchsorted(x1, q, side=side)
    q = np.array([-5.5, 1.0, 1.5, 19.0], np.float32)
    np.testing.assert_array_equal(vk.searchsorted(vk.asarray(x1), vk.asarray(q)).numpy(), np.searchsorted(x1, q))
    assert vk.searchsorted(vk.asarray(x1), vk.asarray(np.zeros((0, 2), np.int32))).shape == (0, 2)


# ---- unique_* ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (9,), (4, 0), (3, 50), ("T+3",), ("5*T",)])
def test_unique(rng, T, shape, dtype):
    """Against numpy's unique_all (equal_nan=False: NaNs distinct), bit for bit: each value as it
    first occurs (-0.0 or 0.0), indices its first occurrence, inverse of x's shape."""
    shape = tuple(size(s, T) if isinstance(s, str) else s for s in shape)
    x = flush_subnormals(make(rng, shape, dtype, "dups" if dtype != np.bool_ else "random"))
    a = vk.asarray(x)
    want = np.unique_all(x)
    got = vk.unique_all(a)
    assert type(got).__name__ == "UniqueAllResult"
    check_unique(a, got, want)


def check_unique(a, got, want) -> None:
    """vk.unique_all's result `got` for `a` against numpy's `want`, bit for bit, and the other
    three unique functions against the same."""
    for g, w, name in zip(got, want, got._fields):
        assert g.shape == w.shape, (name, g.shape, w.shape)
        assert g.dtype == (w.dtype if name == "values" else np.int32), (name, g.dtype)
        np.testing.assert_array_equal(bits(g.numpy()), bits(w), err_msg=name)
    values, counts = vk.unique_counts(a)
    np.testing.assert_array_equal(counts.numpy(), want.counts)
    values, inverse = vk.unique_inverse(a)
    np.testing.assert_array_equal(inverse.numpy(), want.inverse_indices)
    np.testing.assert_array_equal(bits(vk.unique_values(a).numpy()), bits(want.values))
