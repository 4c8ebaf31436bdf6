"""layer_norm / rms_norm and their vjps in float64 (ops/layernorm.py: layernorm.comp's F64
variants; reductions along the rows and elementwise kernels where a row is too long for the loop
budget) against a long-double reference: rows near 1e3 with a spread of 1e-3 (a float32 step
anywhere gives errors of order one), lengths around the vec4 and subgroup sizes, each kernel shape
(a subgroup or a workgroup per row, rows streamed from memory), weight and bias present or not,
batches of rows shared by several workgroups; mixed dtypes computed in float64 with each result in
its input's dtype. Outputs are poisoned (conftest)."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.ops import layernorm as LN
from tests.conftest import assert_rounded_once, kernels_asked

EPS64 = float(np.finfo(np.float64).eps)
L = np.longdouble


def _data(rng, shape):
    return 1e3 + rng.standard_normal(shape) * 1e-3


def _stats(x, d_axes, eps, rms):
    x = x.astype(L)
    mean = 0 if rms else x.mean(axis=d_axes, keepdims=True)
    xc = x - mean
    std = np.sqrt((xc * xc).mean(axis=d_axes, keepdims=True) + eps)
    return xc / std, std


def _bound(x, d, rms, eps=1e-5):
    """The float64 rounding of the statistics, relative to the spread: n eps |x| / std."""
    cond = np.max(np.abs(x)) / np.min(np.sqrt(np.var(x, axis=-1) + eps)) if not rms else 1.0
    return 64 * d * EPS64 * (cond + 1)


def _vk(a, dtype=np.float64):
    return None if a is None else vk.asarray(a, dtype=dtype)


@pytest.mark.parametrize("ns", [(1,), (3,), (4,), (5,), (63,), (64,), (65,), (7, 33), (257,)])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_forward_and_vjp(rng, ns, affine):
    d = int(np.prod(ns))
    x = _data(rng, (3, 2) + ns)
    w = rng.standard_normal(ns) if affine else None
    b = rng.standard_normal(ns) if affine else None
    dy = rng.standard_normal(x.shape)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    xhat, std = _stats(x, axes, 1e-5, rms=False)
    want = xhat * (1 if w is None else L(w)) + (0 if b is None else L(b))
    y = vk.layer_norm(_vk(x), ns, _vk(w), _vk(b))
    assert y.dtype == np.float64
    tol = _bound(x.reshape(-1, d), d, False) * (1 + (0 if w is None else np.max(np.abs(w))))
    assert np.max(np.abs(y.numpy() - want)) <= tol + (0 if b is None else 4 * EPS64 * np.max(np.abs(b)))
    g = dy.astype(L) * (1 if w is None else L(w))
    dx_want = (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True)) / std
    dx, dw, db = vk.layer_norm_vjp(_vk(x), _vk(w), _vk(b), _vk(dy), ns)
    assert dx.dtype == np.float64
    scale = np.max(np.abs(dx_want)) + np.max(np.abs(g)) / np.min(std)
    assert np.max(np.abs(dx.numpy() - dx_want)) <= _bound(x.reshape(-1, d), d, False) * scale
    if affine:
        rows = tuple(range(x.ndim - len(ns)))
        dw_want = (dy.astype(L) * xhat).sum(axis=rows)
        db_want = dy.astype(L).sum(axis=rows)
        assert dw.dtype == db.dtype == np.float64
        n = x.size // d
        assert np.max(np.abs(dw.numpy() - dw_want)) <= _bound(x.reshape(-1, d), d, False) * n * np.max(np.abs(dy))
        assert np.max(np.abs(db.numpy() - db_want)) <= 4 * n * EPS64 * np.max(np.abs(dy))
    else:
        assert dw is None and db is None


@pytest.mark.parametrize("d", [1, 4, 65, 300])
def test_rms_norm_forward_and_vjp(rng, d):
    x = rng.standard_normal((5, d)) * np.exp(rng.uniform(-3, 3, (5, 1)))
    w = rng.standard_normal(d)
    dy = rng.standard_normal(x.shape)
    xhat, std = _stats(x, (1,), 1e-6, rms=True)
    y = vk.rms_norm(_vk(x), d, _vk(w), eps=1e-6)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), (xhat * L(w)).astype(np.float64), rtol=0, atol=64 * d * EPS64 * np.max(np.abs(w)))
    g = dy.astype(L) * L(w)
    dx_want = (g - xhat * (g * xhat).mean(axis=1, keepdims=True)) / std
    dx, dw = vk.rms_norm_vjp(_vk(x), _vk(w), _vk(dy), d, eps=1e-6)
    np.testing.assert_allclose(dx.numpy(), dx_want.astype(np.float64), rtol=0,
                               atol=64 * d * EPS64 * np.max(np.abs(g) / std))
    np.testing.assert_allclose(dw.numpy(), (dy.astype(L) * xhat).sum(axis=0).astype(np.float64), rtol=0,
                               atol=64 * 5 * d * EPS64 * np.max(np.abs(dy)))


def test_mixed_dtypes_compute_in_float64(rng):
    """float64 x with float32 weight and float16 bias: y (x's dtype) float64; the vjp's dweight in
    float32 and dbias in float16, each the float64 result rounded once. float32 x with a float64
    weight: computed in float64, y rounded once to float32."""
    ns = (40,)
    x = _data(rng, (6, 40))
    w = rng.standard_normal(ns).astype(np.float32)
    b = rng.standard_normal(ns).astype(np.float16)
    dy = rng.standard_normal(x.shape)
    y = vk.layer_norm(_vk(x), ns, _vk(w, np.float32), _vk(b, np.float16))
    assert y.dtype == np.float64
    xhat, _ = _stats(x, (1,), 1e-5, rms=False)
    want = xhat * L(w) + L(b)
    assert np.max(np.abs(y.numpy() - want)) <= _bound(x, 40, False) * 4
    dx, dw, db = vk.layer_norm_vjp(_vk(x), _vk(w, np.float32), _vk(b, np.float16), _vk(dy), ns)
    assert (dx.dtype, dw.dtype, db.dtype) == (np.float64, np.float32, np.float16)
    assert_rounded_once(dw.numpy(), (dy.astype(L) * xhat).sum(axis=0),
                        _bound(x, 40, False) * 6 * np.max(np.abs(dy)), np.float32)
    assert_rounded_once(db.numpy(), dy.astype(L).sum(axis=0), 24 * EPS64 * np.max(np.abs(dy)), np.float16)
    assert vk.layer_norm(x, ns).dtype == np.float32  # host float64 is held as float32, as asarray does
    x32 = rng.standard_normal((4, 40)).astype(np.float32)
    w64 = rng.standard_normal(ns)
    y32 = vk.layer_norm(_vk(x32, np.float32), ns, _vk(w64))
    assert y32.dtype == np.float32
    xh, _ = _stats(x32.astype(np.float64), (1,), 1e-5, rms=False)
    assert_rounded_once(y32.numpy(), xh * L(w64), _bound(x32.astype(np.float64), 40, False) * np.max(np.abs(w64)),
                        np.float32)


@pytest.mark.parametrize("rows,d,mode", [(7, 12, "sg"), (300, 96, None), (5, 1000, "wg"), (4, 1023, "wg"),
                                         (3, 20000, "stream"), (2, 20001, "stream")])
@pytest.mark.parametrize("rms", [False, True])
def test_kernel_shapes(rng, monkeypatch, rows, d, mode, rms):
    """Every shape of the float64 kernels: a subgroup per row (where the device has subgroup
    arithmetic), a workgroup per row with the row in registers, rows streamed from memory (past
    16 doubles per invocation), vec4 rows and scalar ones; 300 rows: the weight and bias sums
    partial over several workgroups."""
    dev = runtime.get().device
    pl = LN.plan(d, d % 4 == 0, backward=False, dev=dev, f64=True)
    if mode is not None and (mode != "sg" or dev.has("arithmetic")):
        assert pl.mode == mode
    asked = kernels_asked(monkeypatch)
    x = _data(rng, (rows, d))
    w, b, dy = rng.standard_normal(d), rng.standard_normal(d), rng.standard_normal((rows, d))
    xhat, std = _stats(x, (1,), 1e-5, rms)
    tol = _bound(x, d, rms) * (1 + np.max(np.abs(w)))
    if rms:
        y = vk.rms_norm(_vk(x), d, _vk(w), eps=1e-5)
        dx, dw = vk.rms_norm_vjp(_vk(x), _vk(w), _vk(dy), d, eps=1e-5)
        db = None
    else:
        y = vk.layer_norm(_vk(x), d, _vk(w), _vk(b))
        dx, dw, db = vk.layer_norm_vjp(_vk(x), _vk(w), _vk(b), _vk(dy), d)
    ln = [defines for shader, defines in asked if shader == "ops/layernorm.comp"]
    assert len(ln) == 2 and all(k.get("F64") for k in ln), asked  # forward and backward kernels
    assert np.max(np.abs(y.numpy() - (xhat * L(w) + (0 if rms else L(b))))) <= tol + 4 * EPS64 * np.max(np.abs(b))
    g = dy.astype(L) * L(w)
    dx_want = (g - xhat * (g * xhat).mean(axis=1, keepdims=True)) / std
    if not rms:
        dx_want -= g.mean(axis=1, keepdims=True) / std
    scale = np.max(np.abs(dx_want)) + np.max(np.abs(g)) / np.min(std)
    assert np.max(np.abs(dx.numpy() - dx_want)) <= _bound(x, d, rms) * scale
    dw_want = (dy.astype(L) * xhat).sum(axis=0)
    assert np.max(np.abs(dw.numpy() - dw_want)) <= _bound(x, d, rms) * rows * np.max(np.abs(dy))
    if not rms:
        assert np.max(np.abs(db.numpy() - dy.astype(L).sum(axis=0))) <= 4 * rows * EPS64 * np.max(np.abs(dy))


def test_rows_past_the_loop_budget_take_the_split_path(rng, planned_budget, monkeypatch):
    """A row too long for one workgroup's loop budget: reductions along it and elementwise kernels,
    in float64 as well."""
    d = 1 << 16
    dev = runtime.get().device
    pl = LN.plan(d, True, backward=False, dev=dev, f64=True)
    planned_budget(1 + LN._row_cost(pl, d, False, False, dev))  # a trip short of one row
    assert pl.mode == "stream" and not LN._row_fits(pl, d, False, False, 0, dev)
    asked = kernels_asked(monkeypatch)
    x, w = _data(rng, (3, d)), rng.standard_normal(d)
    xhat, _ = _stats(x, (1,), 1e-5, rms=False)
    y = vk.layer_norm(_vk(x), d, _vk(w))
    assert "ops/layernorm.comp" not in [shader for shader, _ in asked] and y.dtype == np.float64
    assert np.max(np.abs(y.numpy() - xhat * L(w))) <= _bound(x, d, False) * (1 + np.max(np.abs(w)))
