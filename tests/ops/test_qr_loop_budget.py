"""QR under the device's loop budget (lavapipe: 65535 counted loop iterations per invocation): tall
matrices whose row loops used to be cut short, the plan's costs inside the budget, LoopBudgetError
before any GPU work past the limit. Shapes scale with the budget (VKBACKEND_LOOP_BUDGET lowers it)."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.ops import qr as qr_mod
from vkbackend.primitives import launch

from tests.conftest import h200_like, no_gpu_work
from tests.ops.test_qr import check_qr, qr_np


@pytest.fixture
def budget(dev):
    return dev.loop_budget or 65535  # GPUs: no limit; the same shapes then just run


def _old_panel_cost(m, nb):
    """The software plan before the budget was planned for: 128 invocations, all nb columns."""
    return qr_mod._panel_cost(m, 16, 128, 0, nb)


def test_tall_qr_past_the_old_limit(rng, dev, budget):
    M, N = 6 * budget, 16   # lavapipe: 393210 rows
    if dev.is_software:
        assert _old_panel_cost(M, N) > budget
    panels, _ = qr_mod._plan(M, N)
    if dev.loop_budget is not None:
        for pl in panels:
            assert qr_mod._panel_cost(M - pl.p0, pl.width, pl.wg, pl.rpt, pl.kk) <= dev.loop_budget
    a = rng.standard_normal((M, N)).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)


def test_tall_few_columns_r_and_raw(rng, budget):
    M, N = 12 * budget, 3
    a = rng.standard_normal((M, N)).astype(np.float32)
    r = qr_np(a, "r")
    h, tau = qr_np(a, "raw")
    q = vk.linalg.householder_product(np.ascontiguousarray(h.T), tau).numpy()
    check_qr(a, q, r)  # |diag R| against numpy's too


def test_reflectors_past_the_old_limit(rng, budget):
    """householder_product / apply_q build T over all M rows (qr_buildt): once cut at a few
    thousand rows per 64-row tile's 4 x 64 inner loop."""
    M, N = 4 * budget, 8
    a = rng.standard_normal((M, N))
    h, tau = np.linalg.qr(a, "raw")
    hT = np.ascontiguousarray(h.T).astype(np.float32)
    q_ref = np.linalg.qr(a).Q
    q = vk.linalg.householder_product(hT, tau.astype(np.float32)).numpy()
    np.testing.assert_allclose(q, q_ref, atol=1e-5)
    c = rng.standard_normal((M, 3)).astype(np.float32)
    got = vk.linalg.apply_q(hT, tau.astype(np.float32), c, transpose=True).numpy()
    np.testing.assert_allclose(got[:N], q_ref.T @ c, atol=2e-3)  # Q^T c: its first N rows
    back = vk.linalg.apply_q(hT, tau.astype(np.float32), got).numpy()
    np.testing.assert_allclose(back, c, atol=1e-4)


def _narrow_case(monkeypatch):
    """(M, N, budget): N = 20 columns and M = 3000 rows, doubled until the first panel streams its
    rows (a GPU holds 3000 in registers, where no row loop counts); the budget is the least that the
    rest of the factorization and householder_product need over M rows (the trailing updates at the
    panel's width, T's build at 16 columns), and one column of the first panel as planned: it holds
    only part of a streamed panel's columns."""
    monkeypatch.setattr(launch, "loop_budget", lambda: None)  # the usual plan
    M, N = 3000, 20
    while qr_mod._panel_config(M)[2]:
        M *= 2
    width, wg, _ = qr_mod._panel_config(M)
    budget = max([qr_mod._update_cost(M, width, cw) for cw in (8, 16, 32)]
                 + [qr_mod._buildt_cost(M, 16), qr_mod._panel_cost(M, width, wg, 0, 1)])
    return M, N, budget


@pytest.mark.parametrize("device", ["this device", "H200-like"])
def test_narrow_panels_on_any_device(monkeypatch, device):
    """The planning half of the next test, also for an H200-like GPU (planning only: no kernels)."""
    rt = runtime.get()
    if device != "this device":
        monkeypatch.setattr(rt, "device", h200_like(rt.device))
    M, N, budget = _narrow_case(monkeypatch)
    width, wg, rpt = qr_mod._panel_config(M)
    assert rpt == 0 and qr_mod._panel_cost(M, width, wg, rpt, width) > budget
    monkeypatch.setattr(launch, "loop_budget", lambda: budget)
    panels, _ = qr_mod._make_plan(M, N)
    assert any(pl.nb < min(pl.width, N - pl.p0) for pl in panels)
    for pl in panels:
        assert qr_mod._panel_cost(M - pl.p0, pl.width, pl.wg, pl.rpt, pl.kk) <= budget and pl.wg >= wg
    assert qr_mod._apply_nb(M) < 32


def test_narrow_panels_and_wider_workgroups(rng, monkeypatch):
    """A budget that holds only part of a panel's columns: narrower panels, larger workgroups."""
    real = launch.loop_budget()
    M, N, budget = _narrow_case(monkeypatch)
    if real is not None and real < budget:
        pytest.skip("the device's loop budget is below this test's")
    monkeypatch.setattr(launch, "loop_budget", lambda: budget)
    panels, _ = qr_mod._make_plan(M, N)
    assert any(pl.nb < min(pl.width, N - pl.p0) for pl in panels)
    for pl in panels:
        assert qr_mod._panel_cost(M - pl.p0, pl.width, pl.wg, pl.rpt, pl.kk) <= budget
    a = rng.standard_normal((M, N)).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)
    assert qr_mod._apply_nb(M) < 32  # T's recurrence over 32 columns alone counts more than the budget
    qh = vk.linalg.householder_product(q, np.zeros(N, np.float32)).numpy()
    np.testing.assert_array_equal(qh, np.eye(M, N))


def test_past_the_update_limit_raises_before_gpu_work(budget, dev):
    if dev.loop_budget is None:
        pytest.skip("no loop budget on this device")
    M = budget * 128 // 3 + 4096  # qr_update's two row passes alone count more
    a = np.zeros((M, 1), np.float32)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(launch.LoopBudgetError, match=f"{M} rows"):
            vk.linalg.qr(a)
        with pytest.raises(launch.LoopBudgetError, match=f"{M} rows"):
            vk.linalg.householder_product(a, np.zeros(1, np.float32))
        with pytest.raises(launch.LoopBudgetError, match=f"{M} rows"):
            vk.linalg.apply_q(a, np.zeros(1, np.float32), a)
    r = vk.linalg.qr(a, "r").numpy()  # one panel, no update: fits
    assert r.shape == (1, 1) and r[0, 0] == 0


def test_float64_tall_past_the_old_limit(rng, budget):
    """float64's qr_update runs half the row tile (32 and 64 rows): its row passes count twice
    float32's, still inside the budget for a tall matrix; householder_product over the same rows."""
    M, N = 3 * budget, 16
    a = rng.standard_normal((M, N))
    q, r = (x.numpy() for x in vk.linalg.qr(vk.asarray(a, dtype=vk.float64)))
    check_qr(a, q, r, eps=float(np.finfo(np.float64).eps))
    h, tau = np.linalg.qr(a, "raw")
    q2 = vk.linalg.householder_product(vk.asarray(np.ascontiguousarray(h.T), dtype=vk.float64),
                                       vk.asarray(tau, dtype=vk.float64)).numpy()
    np.testing.assert_allclose(q2, np.linalg.qr(a).Q, atol=1e-13)


def test_float64_past_the_update_limit_raises_before_gpu_work(budget, dev):
    """float64 fits half float32's rows: a height float32 takes raises for float64, naming it."""
    if dev.loop_budget is None:
        pytest.skip("no loop budget on this device")
    M = budget * 64 // 3 + 4096
    assert max(qr_mod._update_cost(M, 16, cw) for cw in (8, 16, 32)) <= budget  # float32 fits
    a = vk.zeros((M, 2), dtype=vk.float64)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(launch.LoopBudgetError, match=f"{M} rows"):
            vk.linalg.qr(a)
