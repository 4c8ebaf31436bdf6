"""matmul / gemm under the device's loop budget (lavapipe: 65535 counted loop iterations per
invocation): K cut into slices, one dispatch each, accumulating with beta = 1 where one invocation's
K loop would not fit; LoopBudgetError before any GPU work where nothing fits."""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime.kernel import Kernel
from vkbackend.primitives import launch
from vkbackend.primitives import matmul as mm

from tests.conftest import no_gpu_work, random_array
from tests.primitives.test_matmul import assert_close, ref_matmul

TINY = "16x16x4/4x4/4x4"   # BK = 4, 16 invocations: long K loops at little work per step


def _dispatches(fn):
    """fn()'s result and how many matmul.comp dispatches it recorded."""
    seen = []
    plain = Kernel.__call__

    def call(self, *args, **kw):
        seen.append(self.shader)
        return plain(self, *args, **kw)
    Kernel.__call__ = call
    try:
        out = fn()
    finally:
        Kernel.__call__ = plain
    return out, seen.count(mm._SHADER)


def _planned_slices(m: int, n: int, k: int, batch: int) -> int:
    """The K slices record_gemm plans for this product on this device's tile (lavapipe's K steps
    of 16, a GPU's small-product tile's of 32)."""
    dev = runtime.get().device
    cfg = mm._config(dev, m, n, batch, None, False)
    return len(mm._k_slices(k, cfg.bk, mm._grid(dev, cfg, m, n, batch)[1], m, n, batch))


@pytest.fixture
def small_budget(monkeypatch):
    """A budget below the device's (so results stay right on any device) that splits short K."""
    def set_budget(b):
        real = launch.loop_budget()
        monkeypatch.setattr(launch, "loop_budget", lambda: b if real is None else min(b, real))
        return launch.loop_budget()
    return set_budget


def test_k_2_20_all_ones():
    """The reported case: 65535 steps of BK = 16 used to be all lavapipe ran (1048560)."""
    k = 1 << 20
    a, b = vk.ones((1, k)), vk.ones((k, 1))
    assert (a @ b).item() == float(k)


def test_k_just_past_one_dispatch(dev, monkeypatch):
    """One output tile: a single dispatch holds nk <= budget - 13 K steps (the tile loops' ends and
    exits, each exit counting the loops nested in it, and the K loop's exit); one more element of
    K needs a second dispatch."""
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", TINY)
    if dev.loop_budget is None:
        pytest.skip("no loop budget on this device: one dispatch for any K")
    k_max = (dev.loop_budget - 13) * 4
    for k, want in [(k_max, 1), (k_max + 1, 2)]:
        a, b = vk.ones((1, k)), vk.ones((k, 1))
        out, n = _dispatches(lambda: a @ b)
        assert n == want, f"K = {k}: {n} dispatches, expected {want}"
        assert out.item() == float(k)


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("k", [300, 301])  # vec4 and scalar operand paths
def test_gemm_split_batched_transposed(rng, small_budget, trans_a, trans_b, k):
    budget = small_budget(18)  # lavapipe: 5 K steps of 16 per dispatch, 4 slices of K = 300
    m, n = 9, 14
    a = random_array(rng, (2, 1) + ((k, m) if trans_a else (m, k)), np.float32)
    b = random_array(rng, (3,) + ((n, k) if trans_b else (k, n)), np.float32)
    c0 = random_array(rng, (2, 3, m, n), np.float32)
    opa = np.swapaxes(a, -1, -2) if trans_a else a
    opb = np.swapaxes(b, -1, -2) if trans_b else b
    va, vb, c = vk.asarray(a), vk.asarray(b), vk.asarray(c0)
    _, nd = _dispatches(lambda: vk.gemm(va, vb, trans_a, trans_b, alpha=1.5, beta=-1.0, c=c))
    assert nd == _planned_slices(m, n, k, 6) > 1
    if runtime.get().device.is_software:  # its tile's K steps of 16
        assert nd == -(-k // ((budget - 13) * 16))
    want = 1.5 * ref_matmul(opa, opb) - c0
    assert_close(c.numpy(), want, 1.5 * ref_matmul(np.abs(opa), np.abs(opb)) + np.abs(c0), k + 1)


def test_split_with_beta_zero_never_reads_c(rng, small_budget):
    small_budget(16)  # lavapipe: 3 K steps of 16 per dispatch
    a = random_array(rng, (10, 200), np.float32)
    b = random_array(rng, (200, 6), np.float32)
    c = vk.full((10, 6), np.nan, dtype=vk.float32)
    _, nd = _dispatches(lambda: vk.gemm(vk.asarray(a), vk.asarray(b), alpha=0.5, c=c))
    assert nd > 1  # K slices (or, on a GPU, split-K's partial products), C never read
    if runtime.get().device.is_software:
        assert nd == _planned_slices(10, 6, 200, 1)
    assert_close(c.numpy(), 0.5 * ref_matmul(a, b), 0.5 * ref_matmul(np.abs(a), np.abs(b)), 200)


def test_matmul_split_broadcast_and_vectors(rng, small_budget):
    small_budget(15)
    a = random_array(rng, (3, 1, 5, 123), np.float32)
    b = random_array(rng, (2, 123, 4), np.float32)
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    assert_close(got, ref_matmul(a, b), ref_matmul(np.abs(a), np.abs(b)), 123)
    x = random_array(rng, (77,), np.float32)
    got = vk.matmul(vk.asarray(x), vk.asarray(x)).numpy()
    assert_close(got, ref_matmul(x, x), ref_matmul(np.abs(x), np.abs(x)), 77)


def test_capped_grid_counts_its_tile_trips(rng, monkeypatch, small_budget):
    """Workgroup counts capped below the tiles: each invocation walks several tiles, and every tile
    runs the K loop, so K is cut finer; where one K step per tile does not fit: LoopBudgetError."""
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(rt.device, max_workgroup_count=(2, 1, 2)))
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", TINY)
    a = random_array(rng, (5, 40, 33), np.float32)   # 3 row tiles, 5 column tiles, 5 batches
    b = random_array(rng, (5, 33, 70), np.float32)
    trips = (3, 3, 3)                                 # per workgroup: x, y, z
    per_tile, fixed = 27, 2 * 27 + 3 * 9 + 4 * 3 + 3 + 1
    if small_budget(fixed + 3 * per_tile) < fixed + 3 * per_tile:  # 3 K steps of 4 per dispatch
        pytest.skip("the device's loop budget is below this test's")
    assert mm._k_slices(33, 4, trips, 40, 70, 5) == [(0, 12), (12, 12), (24, 9)]
    got, nd = _dispatches(lambda: vk.matmul(vk.asarray(a), vk.asarray(b)).numpy())
    assert nd == 3
    assert_close(got, ref_matmul(a, b), ref_matmul(np.abs(a), np.abs(b)), 33)
    small_budget(fixed + per_tile - 1)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(launch.LoopBudgetError, match="loop budget"):
            vk.matmul(a, b)
        with pytest.raises(launch.LoopBudgetError, match="loop budget"):
            vk.gemm(a, np.swapaxes(b, -1, -2), trans_b=True)


def test_no_budget_one_dispatch(monkeypatch):
    """Where the device sets no budget (GPUs), any K is one dispatch, as before."""
    monkeypatch.setattr(launch, "loop_budget", lambda: None)
    assert mm._k_slices(1 << 30, 16, (7, 7, 7), 1, 1, 1) == [(0, 1 << 30)]
