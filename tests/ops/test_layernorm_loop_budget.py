"""Layer norm under the loop budget (lavapipe ends an invocation's loops after 65535 iterations in
all): long rows, many rows per workgroup for the weight and bias sums, the forward's rows over
several dispatches, and rows too long for one workgroup (the split path), against the float64
references of test_layernorm.py."""
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.ops import layernorm as L
from vkbackend.primitives import launch

from tests.conftest import h200_like

from tests.ops.test_layernorm import (f32, ref_layer_norm, ref_layer_norm_vjp, ref_rms_norm,
                                      ref_rms_norm_vjp, rel_err)


def check_all(x, w, b, dy, d, tol=1e-4):
    assert rel_err(vk.layer_norm(x, d, w, b).numpy(), ref_layer_norm(x, 1, w, b)) <= tol
    assert rel_err(vk.rms_norm(x, d, w).numpy(), ref_rms_norm(x, 1, w)) <= tol
    for got, ref in zip(vk.layer_norm_vjp(x, w, b, dy, d), ref_layer_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= tol
    for got, ref in zip(vk.rms_norm_vjp(x, w, dy, d), ref_rms_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= tol


@pytest.mark.parametrize("d", [1 << 20, (1 << 20) + 1])  # vec4 rows, and float rows
def test_rows_of_a_million(rng, d):
    x, dy = f32(rng, (2, d), loc=0.5), f32(rng, (2, d))
    check_all(x, f32(rng, d, loc=1.0), f32(rng, d), dy, d)


def test_many_rows_for_one_workgroup_each_sum_weight_and_bias(rng, monkeypatch, planned_budget):
    """BWD_THREADS = 1 asks for a single workgroup for 2048 rows of 1024: 6 counted iterations a
    row on lavapipe (its trip, the mean's workgroup sum; lavapipe unrolls the loop over the 32
    subgroups' three sums), 40 where every loop counts (VKBACKEND_LOOP_BUDGET), so under a budget
    of 1024 the planner gives the rows more workgroups and partial sums."""
    monkeypatch.setattr(L, "BWD_THREADS", 1)
    planned_budget(1024)
    rows, d = 2048, 1024
    dev = runtime.get().device
    assert L._bwd_groups(rows, 1, 1, L.plan(d, True, backward=True), d, False, 2, dev) > 1
    x, dy, w, b = f32(rng, (rows, d)), f32(rng, (rows, d)), f32(rng, d, loc=1.0), f32(rng, d)
    for got, ref in zip(vk.layer_norm_vjp(x, w, b, dy, d), ref_layer_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4
    for got, ref in zip(vk.rms_norm_vjp(x, w, dy, d), ref_rms_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4


def test_forward_rows_over_several_dispatches(rng, monkeypatch):
    """FWD_MAX_GROUPS = 1: one workgroup of 256 for 6144 rows of 1024 costs 11 iterations a row
    (its trip, two workgroup sums over 32 subgroups at subgroup size 8), past the budget; the
    rows go over as many dispatches as the budget needs."""
    monkeypatch.setattr(L, "FWD_MAX_GROUPS", 1)
    monkeypatch.setattr(runtime.get(), "poison", False)
    rows, d = 6144, 1024
    x, w, b = vk.asarray(f32(rng, (rows, d))), f32(rng, d, loc=1.0), f32(rng, d)
    wv, bv = vk.asarray(w), vk.asarray(b)
    dev = runtime.get().device
    pl = L.plan(d, True, backward=False)
    expected = launch.budget_chunks(rows // L._rows_per_group(pl, dev), 1 + L._row_cost(pl, d, False, False, dev))
    before = vk.stats()["dispatches"]
    y = vk.layer_norm(x, d, wv, bv)
    assert vk.stats()["dispatches"] - before == expected
    assert rel_err(y.numpy(), ref_layer_norm(x.numpy(), 1, w, b)) <= 1e-5


# The fused kernel's passes check_all makes over one row: (backward, rms, weight and bias sums).
PASSES = [(False, False, 0), (False, True, 0)] + [(True, rms, kk) for rms in (False, True)
                                                   for kk in (0, 1, 2)]


def _split_budget(d):
    """(the budget just below what the cheapest of PASSES costs one workgroup for a row of d,
    {pass: its plan}): under it every pass takes the split path."""
    dev = runtime.get().device
    plans = {p: L.plan(d, True, backward=p[0]) for p in PASSES}
    cost = {p: (L._bwd_reserve(plans[p], d, p[2], dev) if p[0] else 1) + 1
            + L._row_cost(plans[p], d, p[0], p[1], dev) for p in PASSES}
    return min(cost.values()) - 1, plans


@pytest.mark.parametrize("device", ["this device", "H200-like"])
def test_split_budget_on_any_device(planned_budget, monkeypatch, device):
    """The planning half of the next test, also for an H200-like GPU (planning only: no kernels)."""
    rt = runtime.get()
    if device != "this device":
        monkeypatch.setattr(rt, "device", h200_like(rt.device))
    d = 1 << 16
    budget, plans = _split_budget(d)
    planned_budget(budget)
    for (backward, rms, kk), pl in plans.items():
        assert pl.mode == "stream" and not L._row_fits(pl, d, backward, rms, kk, rt.device)
    monkeypatch.setattr(launch, "loop_budget", lambda: budget + 1)  # the cheapest pass fits one more
    assert any(L._row_fits(pl, d, *p, rt.device) for p, pl in plans.items())


def test_rows_too_long_for_a_workgroup_take_the_split_path(rng, planned_budget, monkeypatch):
    d = 1 << 16
    budget, plans = _split_budget(d)
    assert planned_budget(budget) == budget
    for (backward, rms, kk), pl in plans.items():
        assert pl.mode == "stream" and not L._row_fits(pl, d, backward, rms, kk, runtime.get().device)
    x, dy = f32(rng, (3, d), loc=0.5), f32(rng, (3, d))
    check_all(x, f32(rng, d, loc=1.0), f32(rng, d), dy, d)
    dx, dw, db = vk.layer_norm_vjp(x, None, None, dy, d)  # no weight or bias
    assert rel_err(dx.numpy(), ref_layer_norm_vjp(x, None, dy, 1)[0]) <= 1e-4 and dw is None and db is None
