"""The checked mode of device indices (check_indices=True, VKBACKEND_CHECK_INDICES=1): the kernel
notes the first out-of-range index and the next sync raises IndexError naming it; the default
mode clamps (gathers) or drops (scatters) silently; host indices are checked on the host."""
import re

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

ENV = "VKBACKEND_CHECK_INDICES"


@pytest.fixture(autouse=True)
def _env_unset(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)


def dev(x, dtype=np.int32):
    return vk.asarray(np.asarray(x, dtype))


def plant_bad(rng, idx, n, count, signed=True):
    """idx with `count` out-of-range values at random positions; (idx, first bad flat position)."""
    idx = idx.copy()
    pos = rng.choice(idx.size, count, replace=False)
    for p in pos:
        if signed and rng.random() < 0.5:
            idx.flat[p] = rng.integers(-2**31, -n)          # below -n: out of range even from the end
        else:
            idx.flat[p] = rng.integers(n, 2**31 - 1)
    return idx, int(pos.min())


def raised(name, idx, first, n, axis, what="indices", lo=None):
    """The pattern of the error for the first bad index of idx at flat position `first`."""
    value = int(idx.flat[first])
    at = ", ".join(str(int(c)) for c in np.unravel_index(first, idx.shape))
    lo = -n if lo is None else lo
    return re.escape(f"{name}: index {value} is out of bounds for axis {axis} with size {n} "
                     f"(valid: {lo} to {n - 1}), at {what}[{at}]")


def clamped(idx, n):
    """What the default mode gathers from: negatives from the end, then clamped to [0, n)."""
    i = idx.astype(np.int64)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


def in_range(idx, n):
    i = idx.astype(np.int64)
    return (i >= -n) & (i < n)


# -- the default mode ------------------------------------------------------------------------

def test_default_mode_clamps_and_drops_silently(rng):
    n = 37
    x = random_array(rng, (n,), np.float32)
    idx, _ = plant_bad(rng, rng.integers(-n, n, 50), n, 5)
    a = vk.asarray(x)
    got = vk.take(a, dev(idx))
    want_add = x.astype(np.float64)
    np.add.at(want_add, np.where(idx < 0, idx + n, idx)[in_range(idx, n)], 1.0)
    added = vk.scatter_add(a, dev(idx), 1.0)
    vk.synchronize()  # nothing to report
    np.testing.assert_array_equal(got.numpy(), x[clamped(idx, n)])
    np.testing.assert_allclose(added.numpy(), want_add, rtol=1e-6)


def test_default_mode_records_no_check(rng):
    a = vk.asarray(random_array(rng, (100,), np.float32))
    i = dev(rng.integers(0, 100, 64))
    vk.synchronize()
    d0, f0 = vk.stats()["dispatches"], vk.stats()["fills"]
    vk.take(a, i)
    d1, f1 = vk.stats()["dispatches"], vk.stats()["fills"]
    assert d1 == d0 + 1                               # the gather; fills: its output's poison, if on
    vk.take(a, i, check_indices=True)                 # + the value pass, the flag's reset and poison
    assert vk.stats()["dispatches"] == d1 + 2 and vk.stats()["fills"] == f1 + 2 * (f1 - f0) + 1
    vk.synchronize()


# -- take / getitem --------------------------------------------------------------------------

@pytest.mark.parametrize("idx_dtype", [np.int32, np.uint32])
def test_take_reports_the_first_bad_index_at_the_next_sync(rng, sg, idx_dtype):
    signed = idx_dtype == np.int32
    for n, m in [(sg - 1, sg + 1), (sg + 1, 255), (257, 257), (1000, 3 * 256 + 5)]:
        x = random_array(rng, (n,), np.float32)
        lo = -n if signed else 0
        idx = rng.integers(lo, n, (m,)).astype(np.int64)
        idx, first = plant_bad(rng, idx, n, int(rng.integers(1, 4)), signed)
        idx = idx.astype(idx_dtype)
        a = vk.asarray(x)
        before = a * 3                               # recorded before the bad op
        got = vk.take(a, vk.asarray(idx), check_indices=True)   # no error while recording
        after = a + 1                                # recorded after it
        with pytest.raises(IndexError, match=raised("take", idx, first, n, 0, lo=lo)):
            after.numpy()
        # everything ran: the bad op's own elements clamped, the others right
        np.testing.assert_array_equal(before.numpy(), x * 3)
        np.testing.assert_array_equal(after.numpy(), x + 1)
        np.testing.assert_array_equal(got.numpy(), x[clamped(idx, n)])


def test_take_along_an_axis_names_the_position_in_the_indices(rng):
    x = random_array(rng, (3, 9, 5), np.int32)
    idx = rng.integers(-9, 9, (4, 6))
    idx, first = plant_bad(rng, idx, 9, 2)
    got = vk.take(vk.asarray(x), dev(idx), axis=1, check_indices=True)
    with pytest.raises(IndexError, match=raised("take", idx, first, 9, 1)):
        vk.synchronize()
    np.testing.assert_array_equal(got.numpy(), x[:, clamped(idx, 9)])


def test_negative_indices_in_range_pass_the_check(rng, sg):
    n = 2 * sg + 3
    x = random_array(rng, (n,), np.float32)
    idx = rng.integers(-n, n, 300)
    idx[:2] = [-n, n - 1]                            # the edges of the valid range
    got = vk.take(vk.asarray(x), dev(idx), check_indices=True)
    np.testing.assert_array_equal(got.numpy(), np.take(x, idx))   # numpy's wrap of negatives
    bad = np.array([0, -n - 1], np.int32)
    vk.take(vk.asarray(x), dev(bad), check_indices=True)
    with pytest.raises(IndexError, match=raised("take", bad, 1, n, 0)):
        vk.synchronize()


def test_wrap_and_clip_have_nothing_to_report(rng):
    x = random_array(rng, (11,), np.float32)
    big = np.array([-30, -12, -11, 0, 10, 11, 25], np.int32)
    for mode in ("wrap", "clip"):
        got = vk.take(vk.asarray(x), dev(big), mode=mode, check_indices=True)
        np.testing.assert_array_equal(got.numpy(), np.take(x, big, mode=mode))


def test_take_along_axis_and_getitem(rng):
    x = random_array(rng, (6, 10), np.float32)
    a = vk.asarray(x)
    idx = rng.integers(-10, 10, (6, 4))
    idx, first = plant_bad(rng, idx, 10, 2)
    got = vk.take_along_axis(a, dev(idx), 1, check_indices=True)
    with pytest.raises(IndexError, match=raised("take_along_axis", idx, first, 10, 1)):
        vk.synchronize()
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(x, clamped(idx, 10), 1))
    from vkbackend.primitives.getitem import getitem
    rows, first = plant_bad(rng, rng.integers(-6, 6, (2, 3)), 6, 1)
    got = getitem(a, (dev(rows), slice(None, None, 2)), check_indices=True)
    with pytest.raises(IndexError, match=raised("getitem", rows, first, 6, 0)):
        got.numpy()
    np.testing.assert_array_equal(got.numpy(), x[clamped(rows, 6), ::2])


def test_getitem_and_setitem_with_several_arrays(rng, monkeypatch):
    """Several device index arrays: each is checked on its own axis (the report names that axis
    and the array's own position); gathers clamp and scatters drop as with one array."""
    from vkbackend.primitives.getitem import getitem
    x = random_array(rng, (7, 5, 11), np.float32)
    a = vk.asarray(x)
    i = rng.integers(-7, 7, (3, 1))
    j, first = plant_bad(rng, rng.integers(-11, 11, (3, 4)), 11, 2)
    got = getitem(a, (dev(i), slice(None), dev(j)), check_indices=True)
    with pytest.raises(IndexError, match=raised("getitem", j, first, 11, 2)):
        got.numpy()
    np.testing.assert_array_equal(got.numpy(), x[clamped(i, 7), :, clamped(j, 11)])
    k, first = plant_bad(rng, rng.integers(0, 5, (4,)), 5, 1, signed=False)
    got = getitem(a, (2, dev(k, np.uint32), dev(j[0] % 11)), check_indices=True)
    with pytest.raises(IndexError, match=raised("getitem", k, first, 5, 1, lo=0)):
        vk.synchronize()
    np.testing.assert_array_equal(got.numpy(), x[2, np.minimum(k, 4), j[0] % 11])
    monkeypatch.setenv(ENV, "1")                      # setitem follows the environment
    b = vk.asarray(x)
    rows = rng.permutation(7)[:3] - 7 * rng.integers(0, 2, 3)
    cols, first = plant_bad(rng, rng.permutation(11)[:3], 11, 1)
    v = random_array(rng, (3, 5), np.float32)
    b[dev(rows), :, dev(cols)] = vk.asarray(v)
    with pytest.raises(IndexError, match=raised("setitem", cols, first, 11, 2)):
        vk.synchronize()
    want = x.copy()
    ok = in_range(cols, 11)
    want[rows[ok], :, cols[ok]] = v[ok]
    np.testing.assert_array_equal(b.numpy(), want)    # the bad writes dropped


# -- the scatters ----------------------------------------------------------------------------

@pytest.mark.parametrize("unique", [False, True])
def test_put_along_axis(rng, unique):
    x = random_array(rng, (5, 12), np.int32)
    idx = np.stack([rng.permutation(12)[:7] for _ in range(5)]) - rng.integers(0, 2, (5, 7)) * 12
    idx, first = plant_bad(rng, idx, 12, 3)
    vals = random_array(rng, (5, 7), np.int32)
    a = vk.asarray(x)
    vk.put_along_axis(a, dev(idx), vk.asarray(vals), 1, unique_indices=unique, check_indices=True)
    with pytest.raises(IndexError, match=raised("put_along_axis", idx, first, 12, 1)):
        vk.synchronize()
    want = x.copy()
    ok = in_range(idx, 12)
    for r in range(5):
        want[r, np.where(idx[r] < 0, idx[r] + 12, idx[r])[ok[r]]] = vals[r][ok[r]]
    np.testing.assert_array_equal(a.numpy(), want)    # the bad writes dropped


def test_put(rng, sg):
    n = 4 * sg + 1
    x = random_array(rng, (n,), np.float32)
    ind = rng.permutation(n)[:n // 2] - n * rng.integers(0, 2, n // 2)
    ind, first = plant_bad(rng, ind, n, 2)
    v = random_array(rng, (n // 2,), np.float32)
    a = vk.asarray(x)
    vk.put(a, dev(ind), vk.asarray(v), check_indices=True)
    with pytest.raises(IndexError, match=raised("put", ind, first, n, 0, what="ind")):
        a.numpy()
    ok = in_range(ind, n)
    want = x.copy()
    want[np.where(ind < 0, ind + n, ind)[ok]] = v[ok]
    np.testing.assert_array_equal(a.numpy(), want)


@pytest.mark.parametrize("dtype,deterministic", [(np.float32, False), (np.int32, False), (np.float32, True)])
def test_scatter_add(rng, dtype, deterministic):
    x = random_array(rng, (4, 9), dtype)
    idx = rng.integers(-9, 9, (3, 20))
    idx, first = plant_bad(rng, idx, 9, 4)
    vals = random_array(rng, (3, 20), dtype)
    got = vk.scatter_add(vk.asarray(x), dev(idx), vk.asarray(vals), 1, deterministic=deterministic,
                         check_indices=True)
    with pytest.raises(IndexError, match=raised("scatter_add", idx, first, 9, 1)):
        vk.synchronize()
    want = x.astype(np.float64)
    ok = in_range(idx, 9)
    rows = np.broadcast_to(np.arange(3)[:, None], idx.shape)
    np.add.at(want, (rows[ok], np.where(idx < 0, idx + 9, idx)[ok]), vals[ok])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_ordered_scatter_add_in_pieces_reports_the_first_position(rng, planned_budget):
    """Under a small loop budget the deterministic scatter-add runs in pieces along the indexed
    axis; the report is still the smallest position over all of them."""
    planned_budget(40)
    m = 200
    idx = rng.integers(0, 16, (3, m))
    vals = random_array(rng, (3, m), np.float32)
    idx[0, m - 1] = 16                                # in the last piece, the first position
    idx[1, 0] = -17                                   # in the first piece
    x = random_array(rng, (3, 16), np.float32)
    d0 = vk.stats()["dispatches"]
    got = vk.scatter_add(vk.asarray(x), dev(idx), vk.asarray(vals), 1, deterministic=True, check_indices=True)
    assert vk.stats()["dispatches"] - d0 >= 2 + 1     # two pieces at least, and the value pass
    with pytest.raises(IndexError, match=raised("scatter_add", idx, m - 1, 16, 1)):
        vk.synchronize()
    want = x.astype(np.float64)
    ok = in_range(idx, 16)
    rows = np.broadcast_to(np.arange(3)[:, None], idx.shape)
    np.add.at(want, (rows[ok], idx[ok]), vals[ok])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


# -- the environment, host indices, recovery ---------------------------------------------------

def test_environment_turns_it_on_and_the_argument_wins(rng, monkeypatch):
    x = random_array(rng, (8,), np.float32)
    a = vk.asarray(x)
    bad = np.array([1, 8], np.int32)
    monkeypatch.setenv(ENV, "1")
    vk.take(a, dev(bad))
    with pytest.raises(IndexError, match=raised("take", bad, 1, 8, 0)):
        vk.synchronize()
    got = a[dev(bad)]                                 # Array.__getitem__ follows the environment
    with pytest.raises(IndexError, match=raised("getitem", bad, 1, 8, 0)):
        got.numpy()
    got = vk.take(a, dev(bad), check_indices=False)
    np.testing.assert_array_equal(got.numpy(), x[[1, 7]])
    monkeypatch.setenv(ENV, "0")
    np.testing.assert_array_equal(vk.take(a, dev(bad)).numpy(), x[[1, 7]])


def test_host_indices_raise_at_once_in_either_mode(rng, monkeypatch):
    a = vk.asarray(random_array(rng, (4, 6), np.float32))
    i = dev([0])
    monkeypatch.setenv(ENV, "1")
    with no_gpu_work():
        for check in (None, True, False):
            with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
                vk.take(a, [0, 6], axis=1, check_indices=check)
            with pytest.raises(IndexError, match="index -7 is out of bounds for axis 1 with size 6"):
                vk.scatter_add(a, np.full((4, 2), -7), 1.0, 1, check_indices=check)
            with pytest.raises(IndexError, match="index 24 is out of bounds"):
                vk.put(a, [24], 1.0, check_indices=check)
            with pytest.raises(IndexError, match="index 6 is out of bounds"):
                vk.put_along_axis(a, np.full((4, 1), 6), 1.0, 1, check_indices=check)
        with pytest.raises(TypeError, match="check_indices"):
            vk.take(a, i, check_indices="yes")


def test_one_report_per_sync_and_the_library_carries_on(rng):
    x = random_array(rng, (20,), np.int32)
    a = vk.asarray(x)
    first_bad = np.array([0, 25], np.int32)
    second_bad = np.array([-21, 3], np.int32)
    t1 = vk.take(a, dev(first_bad), check_indices=True)
    t2 = vk.take(a, dev(second_bad), check_indices=True)
    with pytest.raises(IndexError, match=raised("take", first_bad, 1, 20, 0)):
        vk.synchronize()                             # the first op recorded is the one named
    vk.synchronize()                                  # reported once: nothing left to raise
    np.testing.assert_array_equal(t1.numpy(), x[[0, 19]])
    np.testing.assert_array_equal(t2.numpy(), x[[0, 3]])
    good = rng.integers(-20, 20, 33)
    np.testing.assert_array_equal(vk.take(a, dev(good), check_indices=True).numpy(), x[good])
