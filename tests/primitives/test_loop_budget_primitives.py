"""The loop budget (lavapipe ends a shader invocation's loops after 65535 iterations in all): the
primitives' planners cut their work so that no invocation passes it. Sizes past what one
invocation could do before, exact with integer-valued data; and a lower budget for the planners
alone (`planned_budget`: the kernels keep the device's own, higher, limit), which makes them cut
small inputs finely, so each way of cutting is checked at a cheap size."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import dtypes, runtime
from vkbackend.primitives import compaction, launch, reduce, scan

from tests.conftest import h200_like

LARGEST = 1 << 25  # float32 elements in lavapipe's largest buffer (128 MiB)


@pytest.fixture
def no_poison(monkeypatch):
    monkeypatch.setattr(runtime.get(), "poison", False)  # count only the kernels under test


def dispatches(f):
    """(result, kernels recorded by f())."""
    before = vk.stats()["dispatches"]
    out = f()
    return out, vk.stats()["dispatches"] - before


# ---- reductions ------------------------------------------------------------------------------
def test_reductions_of_the_largest_array():
    ones = vk.ones(LARGEST)
    assert float(vk.sum(ones).numpy()) == LARGEST
    np.testing.assert_array_equal(vk.sum(ones.reshape(2, -1), axis=1).numpy(), [LARGEST // 2] * 2)
    np.testing.assert_array_equal(vk.sum(ones.reshape(-1, 2), axis=0).numpy(), [LARGEST // 2] * 2)
    ramp = vk.arange(LARGEST, dtype=vk.int32)
    assert int(vk.max(ramp).numpy()) == LARGEST - 1
    assert int(vk.argmax(ramp).numpy()) == LARGEST - 1
    np.testing.assert_array_equal(vk.argmax(ramp.reshape(-1, 4), axis=0).numpy(), [LARGEST // 4 - 1] * 4)
    np.testing.assert_array_equal(vk.max(ramp.reshape(4, -1), axis=1).numpy(),
                                  np.arange(1, 5) * (LARGEST // 4) - 1)


@pytest.mark.parametrize("budget", [65535, 1024])
def test_reduce_plans_fit_the_budget(planned_budget, budget):
    dev = runtime.get().device
    budget = planned_budget(budget)
    for n in (1, 7, 1000, 1 << 16, 1 << 20, LARGEST):
        for inner in (1, 2, 33, 1024):
            for outputs in [o for o in (inner, 8 * inner, 5000 * inner) if o * n <= LARGEST]:
                for collectives in (reduce.TREE, 1, 3):
                    plan = reduce._plan(n, inner, outputs, dev, collectives)
                    assert reduce._cost(plan, dev, collectives) <= budget, (n, inner, outputs, plan)


# What test_reductions_split_for_a_small_budget runs on x of shape (3, n): (reduction, operand, axis);
# along x's rows (the row layout), down the columns of x.T (the tree layout) or over all of x, with
# one to three workgroup reductions per merge (sum; float max; argmax, argmin, var).
SPLIT_REDUCTIONS = [("sum", "x", 1), ("sum", "xt", 0), ("max", "xt", 0), ("argmax", "x", 1),
                    ("argmin", "xt", 0), ("sum", "x", None), ("var", "x", 1)]


def _collectives(name):
    return getattr(reduce, "_" + name.upper()).collectives(dtypes.float32)


def _split_budgets(monkeypatch):
    """(n, {reduction: (usual plan, planned budget, plan under it)}) for SPLIT_REDUCTIONS on the
    device the planners see. The budget is the one just below the usual plan (no budget) of a
    row's sum, where a reduction plans under it (lavapipe: all of them), else the one just below
    the reduction's own usual plan (a GPU's tree layout costs far more than its rows); n is the
    first of 2**21, 2**22, ... at which every reduction plans so (a GPU's usual plan already cuts n
    over ~1000 workgroups: only long rows leave a fold to shorten). Leaves launch.loop_budget set."""
    dev, real = runtime.get().device, launch.loop_budget()

    def plan(budget, name, shape, axis):
        monkeypatch.setattr(launch, "loop_budget", lambda: budget)
        [(outer, m, inner)] = reduce._steps(shape, reduce._axes(axis, len(shape), name))
        try:
            return reduce._plan(m, inner, outer * inner, dev, _collectives(name))
        except launch.LoopBudgetError:
            return None

    def below(name, shape, axis):  # the budget just below the usual plan, at most the device's
        b = reduce._cost(plan(None, name, shape, axis), dev, _collectives(name)) - 1
        return b if real is None else min(b, real)

    for n in (1 << e for e in range(21, 25)):
        shapes = {"x": (3, n), "xt": (n, 3)}
        row = below("sum", (3, n), 1)
        out = {}
        for name, which, axis in SPLIT_REDUCTIONS:
            own = below(name, shapes[which], axis)
            budget = next((b for b in (min(row, own), own) if plan(b, name, shapes[which], axis)), None)
            if budget is None:
                break
            out[name, which, axis] = (plan(None, name, shapes[which], axis), budget,
                                      plan(budget, name, shapes[which], axis))
        else:
            return n, out
    raise AssertionError("no row length up to 2**24 lets every reduction split further")


@pytest.mark.parametrize("device", ["this device", "H200-like"])
def test_split_budgets_on_any_device(monkeypatch, device):
    """The planning half of the next test, also for an H200-like GPU (planning only: no kernels)."""
    rt = runtime.get()
    if device != "this device":
        monkeypatch.setattr(rt, "device", h200_like(rt.device))
    n, plans = _split_budgets(monkeypatch)
    assert len(plans) == len(SPLIT_REDUCTIONS)
    for key, (usual, budget, plan) in plans.items():
        assert plan.splits > usual.splits, (n, key, usual, plan)
        assert reduce._cost(plan, rt.device, _collectives(key[0])) <= budget \
            < reduce._cost(usual, rt.device, _collectives(key[0])), (n, key, budget, usual, plan)


def test_reductions_split_for_a_small_budget(rng, planned_budget, monkeypatch):
    """_split_budgets' budgets (lavapipe: one, just below what the usual plan of a row of 2**21
    costs): every reduction splits further (row and tree layouts, one to three workgroup
    reductions per merge), exact with integer-valued data."""
    n, plans = _split_budgets(monkeypatch)
    x = rng.integers(-4, 5, (3, n)).astype(np.float32)
    host = {"x": x, "xt": np.ascontiguousarray(x.T)}  # along a strided axis: the tree layout
    for (name, which, axis), (usual, budget, plan) in plans.items():
        assert planned_budget(budget) == budget and plan.splits > usual.splits
        got = getattr(vk, name)(host[which], axis=axis).numpy()
        if name == "var":
            np.testing.assert_allclose(got, x.astype(np.float64).var(axis=1), rtol=1e-5)
        else:
            np.testing.assert_array_equal(got, getattr(np, name)(host[which].astype(np.float64), axis=axis))


# ---- scans -----------------------------------------------------------------------------------
@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(scan, "TUNING", scan.Tuning(workgroup=64, items=4))  # tiles of 256
    return scan.TUNING


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_cumsum_of_a_row_of_many_tiles(small_tiles, algorithm):
    """16384 tiles in one row: tiles by workgroup id would leave lavapipe's second thread (which
    starts halfway) to walk back over thousands of predecessors, past the budget; the planner
    takes tiles from the counter instead (or reduces then scans)."""
    n = 1 << 22
    got = vk.cumsum(vk.ones(n, dtype=vk.int32), algorithm=algorithm).numpy()
    np.testing.assert_array_equal(got, np.arange(1, n + 1, dtype=np.int32))
    if launch.loop_budget() is not None:
        assert scan._chained_plan(n // small_tiles.tile, small_tiles) != ("decoupled", True)


@pytest.mark.parametrize("algorithm", scan.ALGORITHMS)
def test_cumsum_of_the_largest_array(algorithm):
    got = vk.cumsum(vk.ones(LARGEST), algorithm=algorithm)
    assert float(got[LARGEST - 1].numpy()) == LARGEST  # ones sum exactly in float32 up to 2**24 ...
    np.testing.assert_array_equal(got[: 1 << 24].numpy(), np.arange(1, (1 << 24) + 1, dtype=np.float32))


def test_cumsum_along_a_long_strided_axis():
    n = LARGEST // 4
    got = vk.cumsum(vk.ones((n, 4), dtype=vk.int32), axis=0).numpy()
    np.testing.assert_array_equal(got[:, 3], np.arange(1, n + 1, dtype=np.int32))
    assert (got == got[:, :1]).all()


def test_scans_for_a_small_budget(rng, planned_budget, small_tiles):
    """A budget below one chained look-back's worst case: reduce-then-scan; along a strided axis
    the chunks shrink to fit."""
    budget = planned_budget(20)
    algorithm, static = scan._chained_plan(10, small_tiles)
    assert algorithm == "reduce_then_scan" or scan._chained_cost(10, static, small_tiles) <= budget
    x = rng.integers(-50, 50, 30_001).astype(np.int32)
    np.testing.assert_array_equal(vk.cumsum(x).numpy(), np.cumsum(x).astype(np.int32))
    np.testing.assert_array_equal(vk.cummax(x, reverse=True).numpy(), np.maximum.accumulate(x[::-1])[::-1])
    y = rng.integers(-50, 50, (3, 700, 5)).astype(np.float32)
    assert scan._strided_plan(3, 700, 5, small_tiles)[0] < small_tiles.chunk
    np.testing.assert_array_equal(vk.cumsum(y, axis=1).numpy(), np.cumsum(y, axis=1))
    np.testing.assert_array_equal(vk.cumsum(y, axis=1, exclusive=True, reverse=True).numpy()[:, 0],
                                  y[:, 1:].sum(axis=1))


# ---- scatter-add, compaction, grid-stride kernels ----------------------------------------------
def test_deterministic_scatter_add_of_70000_contributions_to_one_element(rng, no_poison):
    m = 70_000
    a = vk.asarray(np.arange(5, dtype=np.float32))
    vals = vk.asarray(rng.integers(0, 10, m).astype(np.float32))
    idx = vk.asarray(np.full(m, 3, np.int32))
    want = np.arange(5, dtype=np.float32)
    want[3] += vals.numpy().sum()  # below 2**24: exact in any order
    out, n = dispatches(lambda: vk.scatter_add(a, idx, vals, deterministic=True))
    np.testing.assert_array_equal(out.numpy(), want)
    assert n == launch.budget_chunks(m, per_trip=1, reserve=2)  # one destination per invocation
    np.testing.assert_array_equal(vk.scatter_add(a, idx, vals).numpy(), want)  # atomic


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_deterministic_scatter_add_in_pieces(rng, planned_budget, no_poison, dtype):
    planned_budget(50)
    a = rng.integers(-9, 9, (4, 6)).astype(dtype)
    idx = rng.integers(0, 6, (4, 300))
    vals = rng.integers(-9, 9, (4, 300)).astype(dtype)
    want = a.copy()
    for r in range(4):
        np.add.at(want[r], idx[r], vals[r])
    out, n = dispatches(lambda: vk.scatter_add(vk.asarray(a, dtype=dtype), idx, vals, axis=1, deterministic=True))
    np.testing.assert_array_equal(out.numpy(), want)
    assert n > 2 + 2  # the pieces, after the uploads of indices and values


def test_compaction_of_a_long_mask(rng):
    mask = rng.random(1 << 22) < 0.3
    np.testing.assert_array_equal(vk.flatnonzero(vk.asarray(mask)).numpy(), np.flatnonzero(mask))


def test_compaction_scan_in_several_dispatches(rng, planned_budget, no_poison):
    """A budget that lets the scan of the tile counts walk few tiles per dispatch."""
    step = launch.collective_cost(256) + 1  # one trip of PASS_SCAN: 256 tile counts
    budget = planned_budget(max(1 + step, 1 + compaction._scatter_trip()))
    tiles = 256 * ((budget - 1) // step) + 5
    n = 256 * 8 * tiles - 3
    ranges = compaction._scan_ranges(tiles)
    assert len(ranges) > 1
    mask = vk.asarray(rng.random(n) < 0.5)
    host = mask.numpy()
    got, k = dispatches(lambda: vk.flatnonzero(mask))
    np.testing.assert_array_equal(got.numpy(), np.flatnonzero(host))
    assert k == 1 + len(ranges) + 1  # count, the scan's dispatches, scatter
    x = vk.asarray(rng.integers(0, 100, n).astype(np.int32))
    np.testing.assert_array_equal(vk.compress_mask(x, mask).numpy(), x.numpy()[host])


def test_grid_stride_groups_grow_for_a_small_budget(planned_budget):
    planned_budget(4)  # three trips of one iteration per invocation, then the loop's exit
    items = 10_000_000
    groups = launch.grid_groups(items, 256)
    assert -(-items // (groups * 256)) <= 3 < -(-items // (launch.groups_for(items, 256) * 256))
    planned_budget(2)
    with pytest.raises(launch.LoopBudgetError, match="loop budget"):
        launch.grid_groups(1 << 40, 256)
