"""Convolutions whose reductions are long enough to pass lavapipe's loop budget (65,535 counted
loop iterations per invocation): the planners split them (split-K, chunked bias sums, more
workgroups) and every number stays exact.

Inputs are all ones (the cotangent too, or 1/64 where float16 would overflow), so every output is
a count of the (channel, tap, position) terms that meet input elements: exact in float32, and in
float16 the float16 rounding of that count (the kernels accumulate in float32). Work is small,
reductions are long: a few outputs over thousands of steps.
"""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives.launch import LoopBudgetError
from vkbackend.ops.conv import geometry, kernels, loops, plan_f16, select
from vkbackend.ops.conv import winograd as wino
from tests.conftest import no_gpu_work
from tests.ops.test_conv import _h100_key


DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])


def ones(shape, dtype=np.float32, value=1.0):
    a = vk.ones(shape) if value == 1.0 else vk.full(shape, value)
    return a if dtype == np.float32 else a.astype(np.float16)


def check(got, count, dtype):
    """got (an Array) equals the exact count, rounded once to float16 for float16."""
    got = got.numpy().astype(np.float64)
    want = np.asarray(count, np.float64)
    if dtype == np.float16:
        want = want.astype(np.float16).astype(np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} wrong, first at {tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"


# -- exact counts of all-ones convolutions ------------------------------------------------------
def conv_axis(n, k, stride=1, pad=0, dil=1, idil=1):
    """A[o, t, i] = 1 where tap t of output o meets input element i along one axis."""
    full = (n - 1) * idil + 1
    out = (full + 2 * pad - dil * (k - 1) - 1) // stride + 1
    a = np.zeros((out, k, n))
    for o in range(out):
        for t in range(k):
            q = o * stride + t * dil - pad
            if 0 <= q < full and q % idil == 0:
                a[o, t, q // idil] = 1
    return a


def transpose_axis(n, k, stride=1, pad=0):
    """A[o, t, i] of conv_transpose: input i reaches output o through tap t."""
    out = (n - 1) * stride - 2 * pad + k
    a = np.zeros((out, k, n))
    for i in range(n):
        for t in range(k):
            o = i * stride + t - pad
            if 0 <= o < out:
                a[o, t, i] = 1
    return a


def counts(axes, role):
    """The per-position counts of an all-ones pass over 2 axes: role 'out' (forward, per output
    position), 'in' (input gradient, per input position) or 'tap' (weight gradient, per tap)."""
    keep = {"out": 0, "tap": 1, "in": 2}[role]
    per = [a.sum(axis=tuple(d for d in range(3) if d != keep)) for a in axes]
    return np.multiply.outer(per[0], per[1])


# -- the calls that returned wrong numbers ------------------------------------------------------
def test_the_reported_calls_are_exact():
    r = vk.conv2d(vk.ones((1, 576, 4, 4)), vk.ones((8, 576, 3, 3)), padding=1).numpy()[0, :, 1, 1]
    assert (r == 5184).all(), r
    r = vk.conv_vjp(vk.ones((1, 2, 118, 118)), vk.ones((1, 2, 5, 5)), vk.ones((1, 1, 118, 118)), padding=2)[1]
    assert r.numpy()[0, 0, 2, 2] == 13924
    r = vk.conv_transpose_vjp(vk.ones((1, 2, 25, 25)), vk.ones((2, 1, 5, 5)), vk.ones((1, 1, 121, 121)),
                              stride=5, padding=2)[1]
    assert r.numpy()[0, 0, 2, 2] == 625
    r = vk.conv2d(vk.ones((1, 1, 181, 181)), vk.ones((1, 1, 182, 182)), padding=1).numpy()
    assert (r == 32761).all(), r


# -- forward ------------------------------------------------------------------------------------
@DTYPES
@pytest.mark.parametrize("cin,k,cout", [(576, 3, 8), (640, 3, 32), (8192, 1, 8), (8192, 1, 32)],
                         ids=["576c3x3-narrow", "640c3x3-tiled", "8192c1x1-narrow", "8192c1x1-tiled"])
def test_forward_over_many_channels(dtype, cin, k, cout):
    """Just past the narrow kernel's limit (648 steps of 8 channels against lavapipe's 618) and
    the tiled one's (720 against 689), and far past both."""
    h = 4 if k == 3 else 2
    y = vk.conv2d(ones((1, cin, h, h), dtype), ones((cout, cin, k, k), dtype), padding=k // 2)
    per = cin * counts([conv_axis(h, k, pad=k // 2)] * 2, "out")
    check(y, np.broadcast_to(per, (1, cout, h, h)), dtype)


@DTYPES
def test_forward_with_a_182x182_kernel(dtype):
    """One channel: conv_direct.comp's loops over 33,124 taps per output do not fit; the narrow
    GEMM kernel takes it, split."""
    y = vk.conv2d(ones((1, 1, 181, 181), dtype), ones((1, 1, 182, 182), dtype), padding=1)
    check(y, np.full((1, 1, 2, 2), 181 * 181), dtype)


@DTYPES
@pytest.mark.parametrize("cout", [8, 16], ids=["narrow", "tiled"])
def test_general_with_input_dilation_16(dtype, cout):
    """16 x 16 phases (positions mod 16 per axis), each reducing over 256 channels x the 40 of
    640 taps that meet input elements."""
    x, w = ones((1, 256, 2, 41), dtype), ones((cout, 256, 1, 640), dtype)
    y = vk.conv_general(x, w, input_dilation=16, padding_lo=(0, 0), padding_hi=(0, 0))
    axes = [conv_axis(2, 1, idil=16), conv_axis(41, 640, idil=16)]
    check(y, 256 * np.broadcast_to(counts(axes, "out"), (1, cout) + y.shape[2:]), dtype)


# -- backward -----------------------------------------------------------------------------------
@DTYPES
def test_weight_gradient_n4_c16_64x64(dtype):
    x, w = ones((4, 16, 64, 64), dtype), ones((16, 16, 3, 3), dtype)
    g = ones((4, 16, 64, 64), dtype, 1 / 64 if dtype == np.float16 else 1.0)
    _, dw = vk.conv_vjp(x, w, g, padding=1, input_grad=False)
    scale = 1 / 64 if dtype == np.float16 else 1.0
    check(dw, scale * 4 * np.broadcast_to(counts([conv_axis(64, 3, pad=1)] * 2, "tap"), (16, 16, 3, 3)), dtype)


@DTYPES
def test_weight_gradient_of_a_224x224_first_layer(dtype):
    x, w = ones((1, 3, 224, 224), dtype), ones((16, 3, 7, 7), dtype)
    g = ones((1, 16, 112, 112), dtype)
    _, dw = vk.conv_vjp(x, w, g, stride=2, padding=3, input_grad=False)
    check(dw, np.broadcast_to(counts([conv_axis(224, 7, 2, 3)] * 2, "tap"), (16, 3, 7, 7)), dtype)


@DTYPES
def test_input_gradient_over_1024_channels(dtype):
    x, w, g = ones((1, 8, 4, 4), dtype), ones((1024, 8, 3, 3), dtype), ones((1, 1024, 4, 4), dtype)
    dx, _ = vk.conv_vjp(x, w, g, padding=1, weight_grad=False)
    check(dx, 1024 * np.broadcast_to(counts([conv_axis(4, 3, pad=1)] * 2, "in"), (1, 8, 4, 4)), dtype)


@DTYPES
def test_transposed_convolution_all_three_passes(dtype):
    """conv_transpose2d forward from 1024 channels; its input gradient over 1024 output
    channels; its weight gradient over 121 x 121 positions (stride 5)."""
    fwd = [transpose_axis(3, 3, 2, 1)] * 2
    y = vk.conv_transpose2d(ones((1, 1024, 3, 3), dtype), ones((1024, 8, 3, 3), dtype), stride=2, padding=1)
    check(y, 1024 * np.broadcast_to(counts(fwd, "out"), (1, 8, 5, 5)), dtype)
    dx, _ = vk.conv_transpose_vjp(ones((1, 8, 3, 3), dtype), ones((8, 1024, 3, 3), dtype),
                                  ones((1, 1024, 5, 5), dtype), stride=2, padding=1, weight_grad=False)
    check(dx, 1024 * np.broadcast_to(counts(fwd, "in"), (1, 8, 3, 3)), dtype)
    _, dw = vk.conv_transpose_vjp(ones((1, 2, 25, 25), dtype), ones((2, 1, 5, 5), dtype),
                                  ones((1, 1, 121, 121), dtype), stride=5, padding=2, input_grad=False)
    check(dw, np.broadcast_to(counts([transpose_axis(25, 5, 5, 2)] * 2, "tap"), (2, 1, 5, 5)), dtype)


@DTYPES
@pytest.mark.parametrize("shape", [(30000, 1, 1, 64), (1, 1, 1, 70000 * 64)], ids=["batch", "plane"])
def test_bias_gradient_over_a_long_batch_or_plane(dtype, shape):
    """conv_reduce.comp's MODE_BIAS cut into batch chunks, or position chunks, then summed."""
    value = 1 / 256 if dtype == np.float16 else 1.0   # float16 holds the sum
    g = ones(shape, dtype, value)
    _, _, db = vk.conv_vjp(ones(shape, dtype), ones((1, 1, 1, 1), dtype), g, input_grad=False,
                           weight_grad=False, bias_grad=True)
    check(db, [value * shape[0] * shape[3]], dtype)


def test_float16_on_widened_copies(monkeypatch):
    """Without 16-bit storage float16 takes the float32 plans on widened copies (the "cast"
    path): all three passes and the bias, each past the budget, exact."""
    import dataclasses
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(
        rt.device, features=rt.device.features - {"storageBuffer16BitAccess"}))
    h = np.float16
    y = vk.conv2d(ones((1, 576, 4, 4), h), ones((8, 576, 3, 3), h), padding=1)
    check(y, 576 * np.broadcast_to(counts([conv_axis(4, 3, pad=1)] * 2, "out"), (1, 8, 4, 4)), h)
    x, w, g = ones((4, 16, 64, 64), h), ones((16, 16, 3, 3), h), ones((4, 16, 64, 64), h, 1 / 64)
    dx, dw, db = vk.conv_vjp(x, w, g, padding=1, bias_grad=True)
    check(dx, 16 / 64 * np.broadcast_to(counts([conv_axis(64, 3, pad=1)] * 2, "in"), (4, 16, 64, 64)), h)
    check(dw, 4 / 64 * np.broadcast_to(counts([conv_axis(64, 3, pad=1)] * 2, "tap"), (16, 16, 3, 3)), h)
    check(db, np.full(16, 4 * 64), h)


# -- the splits themselves ----------------------------------------------------------------------
def _geom(xs, ws, padding):
    nd = len(xs) - 2
    return geometry.build("t", xs, ws, nd, (1,) * nd, (padding,) * nd, (padding,) * nd, (1,) * nd,
                          (1,) * nd, 1, False, False)


def _conv_kernels(monkeypatch) -> list:
    """The conv shaders dispatched from here on, one entry per dispatch, in order."""
    rt, used = runtime.get(), []
    kernel = rt.kernel

    def spy(shader, *args, **kw):
        k = kernel(shader, *args, **kw)
        if "conv" not in shader:
            return k

        def dispatch(*a, **kw2):
            used.append(shader)
            return k(*a, **kw2)
        return dispatch
    monkeypatch.setattr(rt, "kernel", spy)
    return used


def _planned_budget(software: int, hardware: int) -> int:
    """A budget to plan for (the device keeps its own, if any): `software` where the kernels'
    register-block loops count (NO_UNROLL), `hardware` where they unroll, a few steps' worth;
    never more than the device's own (VKBACKEND_LOOP_BUDGET may have lowered it)."""
    dev = vk.device()
    return min(software if dev.is_software else hardware, dev.loop_budget or 2 ** 31)


def test_a_long_reduction_is_split_and_summed_once(monkeypatch):
    """Under lavapipe's budget (planned for here on any device; a smaller one where loops
    unroll) the 576-channel forward runs as several workgroups along the reduction, then one
    conv_reduce.comp pass adds their partial sums."""
    monkeypatch.setattr(loops, "loop_budget", lambda: _planned_budget(65535, 64))
    p = select.plan("forward", _geom((1, 576, 4, 4), (8, 576, 3, 3), 1))
    assert p.splits > 1 and p.grid[2] == p.splits
    used = _conv_kernels(monkeypatch)
    y = vk.conv2d(vk.ones((1, 576, 4, 4)), vk.ones((8, 576, 3, 3)), padding=1)
    assert used == ["ops/conv_gemm.comp", "ops/conv_reduce.comp"]
    check(y, 576 * np.broadcast_to(counts([conv_axis(4, 3, pad=1)] * 2, "out"), (1, 8, 4, 4)), np.float32)


def test_no_split_without_a_budget(monkeypatch):
    """Where the device sets no budget (GPUs) the plans are unsplit, as before."""
    monkeypatch.setattr(loops, "loop_budget", lambda: None)
    p = select.plan("forward", _geom((1, 576, 4, 4), (8, 576, 3, 3), 1))
    assert p.splits == 1 and p.spec[-2:] == (1, 1)


def test_many_splits_are_summed_in_rounds(monkeypatch):
    """Under a small budget (300 on lavapipe: 1024 splits of one step against 296 partial sums
    per conv_reduce.comp pass) the 8192-channel forward's partial sums are added in rounds:
    passes of at most that many, then a pass over their sums."""
    budget = _planned_budget(300, 20)
    monkeypatch.setattr(loops, "loop_budget", lambda: budget)
    p = select.plan("forward", _geom((1, 8192, 2, 2), (32, 8192, 1, 1), 0))
    fanin = loops.sum_fanin(budget, 128, 64 if vk.device().is_software else 256)
    assert p.splits > fanin
    passes, left = 1, p.splits
    while left > fanin:
        left = -(-left // fanin)
        passes += left
    used = _conv_kernels(monkeypatch)
    y = vk.conv2d(vk.ones((1, 8192, 2, 2)), vk.ones((32, 8192, 1, 1)))
    assert used == ["ops/conv_gemm.comp"] + ["ops/conv_reduce.comp"] * passes
    check(y, np.full((1, 32, 2, 2), 8192), np.float32)


def test_chunked_bias_under_a_small_budget(monkeypatch):
    """Budget 200: batch chunks of a few images, summed (rounds too)."""
    monkeypatch.setattr(loops, "loop_budget", lambda: 200)
    g = vk.ones((600, 3, 1, 64))
    _, _, db = vk.conv_vjp(vk.ones((600, 1, 1, 64)), vk.ones((3, 1, 1, 1)), g, input_grad=False,
                           weight_grad=False, bias_grad=True)
    check(db, np.full(3, 600 * 64), np.float32)


def test_what_cannot_fit_raises_before_gpu_work(monkeypatch):
    """A budget below one reduction step and its loops' exits: LoopBudgetError naming it, and
    nothing recorded (no pass of a vjp is recorded before another fails to plan)."""
    x, w, g = vk.ones((1, 16, 6, 6)), vk.ones((32, 16, 3, 3)), vk.ones((1, 32, 6, 6))
    vk.synchronize()
    monkeypatch.setattr(loops, "loop_budget", lambda: 4)
    calls = (lambda: vk.conv2d(x, w, padding=1), lambda: vk.conv_vjp(x, w, g, padding=1),
             lambda: vk.conv_vjp(x, w, g, padding=1, input_grad=False))
    for call in calls:
        with no_gpu_work(), pytest.raises(LoopBudgetError, match="loop budget of 4"):
            call()


def test_winograd_weight_splits_fit_the_budget():
    """conv_winograd.comp's WINO_OUT sums the splits in one loop: they are capped by the budget."""
    key = kernels.device_key(runtime.get().device)
    geom = _geom((32, 8, 16, 16), (8, 8, 3, 3), 1)   # 512 tiles of 4 x 4 outputs
    cfg = (("path", "winograd"), ("splits", 100))
    assert wino.plan_wgrad(geom, key, cfg).splits > 40
    assert wino.plan_wgrad(geom, key, cfg, 44).splits == 40     # 1 round x (40 + 2) + 2 = 44


def test_cooperative_matrix_plans_respect_the_budget():
    """Plans only (the kernels need a GPU): float16 forward on cooperative matrices has no split,
    so past the budget it is None (conv_gemm.comp on the halves runs instead); the float16
    weight gradient splits its rows to fit."""
    key = _h100_key()
    wide = _geom((1, 1024, 8, 8), (64, 1024, 3, 3), 1)
    assert plan_f16.plan_coopmat(wide, False, key, "") is not None
    assert plan_f16.plan_coopmat(wide, False, key, "", 100) is None
    assert plan_f16.plan_coopmat(wide, False, key, "", 1000) is not None
    deep = _geom((64, 64, 56, 56), (64, 64, 3, 3), 1)
    free = plan_f16.plan_wgrad_coopmat(deep, key, "")
    bound = plan_f16.plan_wgrad_coopmat(deep, key, "", 200)
    assert bound.splits > free.splits and bound.spec[-2] < free.spec[-2]
    epilogue = loops.total(loops.loop(8)) * 4   # 2 x 2 fragments per subgroup, 256 / 32 lanes
    assert loops.total(loops.loop(bound.spec[-2])) + epilogue <= 200
    assert plan_f16.plan_wgrad_coopmat(deep, key, "", 100) is None   # FINISH's sum of 100+ splits


def test_the_cost_model_counts_nested_exits():
    """lavapipe leaves a loop after one more pass over its body with every lane masked off, in
    which each loop nested there passes its own end: measured, a loop of 2 around a loop of 1
    counts 8 (2 x (1 + 2) + 1 + 1), 8 around that 75."""
    inner = loops.loop(2, loops.loop(1))
    assert inner == (8, 2)
    assert loops.loop(8, inner) == (75, 3)
    assert loops.loop(8, inner, counted=False) == (64, 16)
