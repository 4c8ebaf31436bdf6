"""vk.layer_norm / vk.rms_norm and their vjps against float64 numpy references written here."""
import math

import numpy as np
import pytest

import vkbackend as vk
from vkbackend.array import Storage
from vkbackend import runtime
from vkbackend.ops import layernorm as L

from tests.conftest import assert_rounded_once, no_gpu_work

F32_EPS = float(np.finfo(np.float32).eps)


# ------------------------------------------------------------------ float64 references
def _axes(x, k):
    return tuple(range(x.ndim - k, x.ndim))


def ref_layer_norm(x, k, w=None, b=None, eps=1e-5):
    x = np.asarray(x, np.float64)
    ax = _axes(x, k)
    mean = x.mean(ax, keepdims=True)
    var = ((x - mean) ** 2).mean(ax, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * np.asarray(w, np.float64)
    if b is not None:
        y = y + np.asarray(b, np.float64)
    return y


def ref_rms_norm(x, k, w=None, eps=F32_EPS):
    x = np.asarray(x, np.float64)
    y = x / np.sqrt((x * x).mean(_axes(x, k), keepdims=True) + eps)
    return y if w is None else y * np.asarray(w, np.float64)


def ref_layer_norm_vjp(x, w, dy, k, eps=1e-5):
    """Analytic vjp (checked against finite differences in test_reference_vjps_match_finite_differences)."""
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    ax = _axes(x, k)
    n = math.prod(x.shape[x.ndim - k:])
    xc = x - x.mean(ax, keepdims=True)
    rstd = 1.0 / np.sqrt((xc * xc).sum(ax, keepdims=True) / n + eps)
    xhat = xc * rstd
    g = dy if w is None else dy * np.asarray(w, np.float64)
    dx = rstd * (g - g.sum(ax, keepdims=True) / n - xhat * (g * xhat).sum(ax, keepdims=True) / n)
    lead = tuple(range(x.ndim - k))
    return dx, (dy * xhat).sum(lead), dy.sum(lead)


def ref_rms_norm_vjp(x, w, dy, k, eps=F32_EPS):
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    ax = _axes(x, k)
    n = math.prod(x.shape[x.ndim - k:])
    rstd = 1.0 / np.sqrt((x * x).sum(ax, keepdims=True) / n + eps)
    xhat = x * rstd
    g = dy if w is None else dy * np.asarray(w, np.float64)
    dx = rstd * (g - xhat * (g * xhat).sum(ax, keepdims=True) / n)
    return dx, (dy * xhat).sum(tuple(range(x.ndim - k)))


def finite_difference_vjp(f, args, dy, h=1e-6):
    """<dy, df/darg> for each arg by central differences, in float64."""
    grads = []
    for a_i, a in enumerate(args):
        a = np.asarray(a, np.float64)
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [np.asarray(v, np.float64).copy() for v in args]
            minus = [np.asarray(v, np.float64).copy() for v in args]
            plus[a_i][idx] += h
            minus[a_i][idx] -= h
            g[idx] = np.sum(dy * (f(*plus) - f(*minus))) / (2 * h)
        grads.append(g)
    return grads


def rel_err(got, ref, scale=0.0):
    """Largest error over the largest reference value (or `scale`, the size of the terms the
    result is a difference of, where that is larger: dx cancels for very short rows)."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    if ref.size == 0:
        return 0.0
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), scale, 1e-30))


def dx_scale(x, w, dy, k, eps, rms=False):
    """max |dy * w| * rstd: the size of the terms of dx."""
    x = np.asarray(x, np.float64)
    ax = _axes(x, k)
    xc = x if rms else x - x.mean(ax, keepdims=True)
    rstd = 1.0 / np.sqrt((xc * xc).mean(ax, keepdims=True) + eps)
    g = np.abs(dy) * (1.0 if w is None else np.abs(w))
    return float((g * rstd).max()) if g.size else 0.0


def y_scale(x, w, k, eps):
    """max |x| * rstd * |w|: the size of the terms of y. x - mean loses float32 digits when a row's
    values nearly agree (a short row, as d = 2 with 0.33914 and 0.33943), which rstd then
    magnifies; the float64 reference has no such loss."""
    x = np.asarray(x, np.float64)
    ax = _axes(x, k)
    rstd = 1.0 / np.sqrt(((x - x.mean(ax, keepdims=True)) ** 2).mean(ax, keepdims=True) + eps)
    return float((np.abs(x) * rstd * np.abs(w)).max()) if x.size else 0.0


def f32(rng, shape, loc=0.0, scale=1.0):
    return (loc + scale * rng.standard_normal(shape)).astype(np.float32)


# -------------------------------------------------------------------------- row lengths
def _lengths():
    dev = vk.device()
    sg = dev.subgroup_size
    sg_rows = dev.min_subgroup_size * L.SG_VECS * 4  # longest vec4 row a subgroup takes (forward)
    sg_rows_bwd = dev.min_subgroup_size * L.SG_VECS_BWD * 4  # (backward)
    out = {1, 2, 3, sg - 1, sg, sg + 1, 4 * sg, sg_rows, sg_rows + 4, sg_rows_bwd, sg_rows_bwd + 4,
           255, 256, 257, 1023, 1025, 4096, 4097, 65536}
    return sorted(d for d in out if d >= 1)


@pytest.mark.parametrize("d", _lengths())
def test_forward_and_backward_match_reference(rng, d):
    rows = 2 if d > 10000 else (3 if d > 1000 else 7)
    x, dy = f32(rng, (rows, d), loc=0.5), f32(rng, (rows, d))
    w, b = f32(rng, d, loc=1.0), f32(rng, d)
    xv = vk.asarray(x)
    y = vk.layer_norm(xv, d, w, b)
    dx, dw, db = vk.layer_norm_vjp(xv, w, b, dy, (d,))
    yr = vk.rms_norm(xv, d, w)
    dxr, dwr = vk.rms_norm_vjp(xv, w, dy, d)
    assert rel_err(y.numpy(), ref_layer_norm(x, 1, w, b), y_scale(x, w, 1, 1e-5)) <= 1e-5
    rdx, rdw, rdb = ref_layer_norm_vjp(x, w, dy, 1)
    assert rel_err(dx.numpy(), rdx, dx_scale(x, w, dy, 1, 1e-5)) <= 1e-4
    assert rel_err(dw.numpy(), rdw) <= 1e-4
    assert rel_err(db.numpy(), rdb) <= 1e-4
    assert rel_err(yr.numpy(), ref_rms_norm(x, 1, w)) <= 1e-5
    rdx, rdw = ref_rms_norm_vjp(x, w, dy, 1)
    assert rel_err(dxr.numpy(), rdx, dx_scale(x, w, dy, 1, F32_EPS, rms=True)) <= 1e-4
    assert rel_err(dwr.numpy(), rdw) <= 1e-4


@pytest.mark.parametrize("lead", [(0,), (1,), (), (2, 3), (2, 0, 4), (3, 1, 2)])
def test_leading_shapes(rng, lead):
    d = 24
    x, dy = f32(rng, lead + (d,)), f32(rng, lead + (d,))
    w, b = f32(rng, d), f32(rng, d)
    y = vk.layer_norm(x, d, w, b)
    assert y.shape == x.shape
    np.testing.assert_allclose(y.numpy(), ref_layer_norm(x, 1, w, b), rtol=1e-5, atol=1e-5)
    dx, dw, db = vk.layer_norm_vjp(x, w, b, dy, d)
    assert dx.shape == x.shape and dw.shape == (d,) and db.shape == (d,)
    for got, ref in zip((dx, dw, db), ref_layer_norm_vjp(x, w, dy, 1)):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-4, atol=1e-4)  # zeros when no rows


def test_two_trailing_normalized_dims(rng):
    shape, ns = (2, 3, 5, 7), (5, 7)
    x, dy = f32(rng, shape, loc=2.0), f32(rng, shape)
    w, b = f32(rng, ns), f32(rng, ns)
    assert rel_err(vk.layer_norm(x, ns, w, b).numpy(), ref_layer_norm(x, 2, w, b)) <= 1e-5
    dx, dw, db = vk.layer_norm_vjp(x, w, b, dy, list(ns))
    assert dw.shape == ns and db.shape == ns
    for got, ref in zip((dx, dw, db), ref_layer_norm_vjp(x, w, dy, 2)):
        assert rel_err(got.numpy(), ref) <= 1e-4
    assert rel_err(vk.rms_norm(x, ns, w).numpy(), ref_rms_norm(x, 2, w)) <= 1e-5
    for got, ref in zip(vk.rms_norm_vjp(x, w, dy, ns), ref_rms_norm_vjp(x, w, dy, 2)):
        assert rel_err(got.numpy(), ref) <= 1e-4


def test_empty_normalized_dims(rng):
    x = np.zeros((3, 0), np.float32)
    w = np.zeros(0, np.float32)
    assert vk.layer_norm(x, 0, w, w).shape == (3, 0)
    dx, dw, db = vk.layer_norm_vjp(x, w, w, x, (0,))
    assert dx.shape == (3, 0) and dw.shape == (0,) and db.shape == (0,)
    assert vk.rms_norm(np.zeros((2, 0, 4), np.float32), (0, 4)).numpy().shape == (2, 0, 4)


@pytest.mark.parametrize("has_w,has_b", [(False, False), (True, False), (False, True)])
def test_without_weight_or_bias(rng, has_w, has_b):
    d = 40
    x, dy = f32(rng, (6, d)), f32(rng, (6, d))
    w = f32(rng, d) if has_w else None
    b = f32(rng, d) if has_b else None
    assert rel_err(vk.layer_norm(x, d, w, b).numpy(), ref_layer_norm(x, 1, w, b)) <= 1e-5
    dx, dw, db = vk.layer_norm_vjp(x, w, b, dy, d)
    rdx, rdw, rdb = ref_layer_norm_vjp(x, w, dy, 1)
    assert rel_err(dx.numpy(), rdx) <= 1e-4
    assert (dw is None) == (not has_w) and (db is None) == (not has_b)
    if has_w:
        assert rel_err(dw.numpy(), rdw) <= 1e-4
    if has_b:
        assert rel_err(db.numpy(), rdb) <= 1e-4
    if not has_b:
        assert rel_err(vk.rms_norm(x, d, w).numpy(), ref_rms_norm(x, 1, w)) <= 1e-5
        dxr, dwr = vk.rms_norm_vjp(x, w, dy, d)
        rdxr, rdwr = ref_rms_norm_vjp(x, w, dy, 1)
        assert rel_err(dxr.numpy(), rdxr) <= 1e-4
        assert (dwr is None) == (not has_w)
        if has_w:
            assert rel_err(dwr.numpy(), rdwr) <= 1e-4


def test_rms_norm_default_eps_is_float32_epsilon(rng):
    # mean(x^2) ~ 1e-8 < eps: the result depends on eps's value.
    x = f32(rng, (4, 16), scale=1e-4)
    got = vk.rms_norm(x, 16).numpy()
    assert rel_err(got, ref_rms_norm(x, 1, eps=F32_EPS)) <= 1e-5
    assert rel_err(got, ref_rms_norm(x, 1, eps=1e-6)) > 1e-2
    assert rel_err(vk.rms_norm(x, 16, eps=1e-6).numpy(), ref_rms_norm(x, 1, eps=1e-6)) <= 1e-5
    dx, _ = vk.rms_norm_vjp(x, None, x, 16)
    assert rel_err(dx.numpy(), ref_rms_norm_vjp(x, None, x, 1)[0]) <= 1e-4


def test_eps_and_large_mean_are_handled_stably(rng):
    # A large common offset: E[x^2] - mean^2 in float32 would lose the variance entirely.
    d = 300
    x = f32(rng, (5, d), loc=3000.0)
    ref = ref_layer_norm(x, 1, eps=0.5)
    assert rel_err(vk.layer_norm(x, d, eps=0.5).numpy(), ref) <= 1e-3
    dy = f32(rng, (5, d))
    dx, _, _ = vk.layer_norm_vjp(x, None, None, dy, d, eps=0.5)
    assert rel_err(dx.numpy(), ref_layer_norm_vjp(x, None, dy, 1, eps=0.5)[0]) <= 1e-3
    # Constant rows: variance 0, y = bias.
    c = np.full((3, 8), 7.0, np.float32)
    b = f32(rng, 8)
    np.testing.assert_allclose(vk.layer_norm(c, 8, None, b).numpy(), np.broadcast_to(b, c.shape), atol=1e-6)


def test_reference_vjps_match_finite_differences(rng):
    x, dy = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    w, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    fd = finite_difference_vjp(lambda x_, w_, b_: ref_layer_norm(x_, 2, w_, b_), [x, w, b], dy)
    for got, ref in zip(ref_layer_norm_vjp(x, w, dy, 2), fd):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)
    fd = finite_difference_vjp(lambda x_, w_: ref_rms_norm(x_, 2, w_), [x, w], dy)
    for got, ref in zip(ref_rms_norm_vjp(x, w, dy, 2), fd):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


def test_gpu_vjps_match_finite_differences(rng):
    x, dy = f32(rng, (3, 5)), f32(rng, (3, 5))
    w, b = f32(rng, 5), f32(rng, 5)
    fd = finite_difference_vjp(lambda x_, w_, b_: ref_layer_norm(x_, 1, w_, b_), [x, w, b], dy)
    for got, ref in zip(vk.layer_norm_vjp(x, w, b, dy, 5), fd):
        assert rel_err(got.numpy(), ref) <= 1e-4
    fd = finite_difference_vjp(lambda x_, w_: ref_rms_norm(x_, 1, w_), [x, w], dy)
    for got, ref in zip(vk.rms_norm_vjp(x, w, dy, 5), fd):
        assert rel_err(got.numpy(), ref) <= 1e-4


def test_unaligned_views_and_rows_grid_stride(rng, monkeypatch):
    # Rows from an offset view (offset % 4 != 0: the scalar path for D % 4 == 0), and fewer
    # workgroups than rows in both directions (grid-stride over rows).
    monkeypatch.setattr(L, "FWD_MAX_GROUPS", 3)
    monkeypatch.setattr(L, "BWD_THREADS", 1)
    d = 260
    base = f32(rng, (1 + 11 * d,))
    xv = vk.asarray(base)[1:].reshape(11, d)
    x = base[1:].reshape(11, d)
    dy, w, b = f32(rng, (11, d)), f32(rng, d), f32(rng, d)
    assert rel_err(vk.layer_norm(xv, d, w, b).numpy(), ref_layer_norm(x, 1, w, b)) <= 1e-5
    for got, ref in zip(vk.layer_norm_vjp(xv, w, b, dy, d), ref_layer_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4
    for got, ref in zip(vk.rms_norm_vjp(xv, w, dy, d), ref_rms_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4


def test_column_sum_over_many_partials(rng, monkeypatch):
    # A workgroup per row and a partial per row; 64-column tiles leave 4 row slices, so the
    # column sum runs its 4-way unrolled loop and its tail.
    monkeypatch.setattr(L, "SG_VECS", 0)
    monkeypatch.setattr(L, "SG_VECS_BWD", 0)
    monkeypatch.setattr(L, "BWD_MIN_ROWS", 1)
    monkeypatch.setattr(L, "COLSUM_MIN_GROUPS", 1)
    rows, d = 37, 300
    x, dy, w, b = f32(rng, (rows, d)), f32(rng, (rows, d)), f32(rng, d), f32(rng, d)
    for got, ref in zip(vk.layer_norm_vjp(x, w, b, dy, d), ref_layer_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4
    for got, ref in zip(vk.rms_norm_vjp(x, w, dy, d), ref_rms_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4


def test_weight_gradient_temporary_is_small(rng, monkeypatch):
    rows, d = 512, 64
    x, dy, w, b = f32(rng, (rows, d)), f32(rng, (rows, d)), f32(rng, d), f32(rng, d)
    sizes = []
    real = Storage.__init__

    def spy(self, words, *args, **kwargs):  # every buffer the vjp allocates, however it does
        sizes.append(words)
        real(self, words, *args, **kwargs)
    monkeypatch.setattr(Storage, "__init__", spy)
    dx, dw, db = vk.layer_norm_vjp(x, w, b, dy, d)
    temporaries = [s for s in sizes if s != rows * d]  # dx is rows x d
    assert temporaries and max(temporaries) <= 2 * d * rows // 4
    assert rel_err(dw.numpy(), ref_layer_norm_vjp(x, w, dy, 1)[1]) <= 1e-4


def test_forward_and_backward_of_a_batch_is_one_submit(rng, monkeypatch, whole_submits):
    monkeypatch.setattr(runtime.get(), "poison", False)  # count only our dispatches
    x, dy = f32(rng, (4, 8, 96)), f32(rng, (4, 8, 96))
    w, b = f32(rng, 96), f32(rng, 96)
    xv, dyv, wv, bv = (vk.asarray(a) for a in (x, dy, w, b))
    vk.synchronize()
    s0 = vk.stats()
    y = vk.layer_norm(xv, 96, wv, bv)
    dx, dw, db = vk.layer_norm_vjp(xv, wv, bv, dyv, 96)
    dx2, = vk.layer_norm_vjp(xv, None, None, dyv, 96)[:1]
    vk.synchronize()
    s1 = vk.stats()
    assert s1["submits"] - s0["submits"] == 1
    assert s1["dispatches"] - s0["dispatches"] == 1 + 2 + 1  # forward; dx + column sum; dx only
    assert s1["uploads"] == s0["uploads"]
    assert rel_err(y.numpy(), ref_layer_norm(x, 1, w, b)) <= 1e-5
    for got, ref in zip((dx, dw, db), ref_layer_norm_vjp(x, w, dy, 1)):
        assert rel_err(got.numpy(), ref) <= 1e-4
    assert rel_err(dx2.numpy(), ref_layer_norm_vjp(x, None, dy, 1)[0]) <= 1e-4


# --------------------------------------------------------------------------- bad input
def _bad_cases():
    x = np.ones((2, 3, 4), np.float32)
    w4 = np.ones(4, np.float32)
    return [
        (ValueError, lambda: vk.layer_norm(x, 3)),                          # not the trailing dims
        (ValueError, lambda: vk.layer_norm(x, (2, 4))),
        (ValueError, lambda: vk.layer_norm(x, (1, 2, 3, 4))),               # more dims than x
        (ValueError, lambda: vk.layer_norm(x, ())),
        (ValueError, lambda: vk.layer_norm(x, -4)),
        (TypeError, lambda: vk.layer_norm(x, 4.0)),
        (TypeError, lambda: vk.layer_norm(x, "4")),
        (ValueError, lambda: vk.layer_norm(x, 4, np.ones(3, np.float32))),  # weight shape
        (ValueError, lambda: vk.layer_norm(x, (3, 4), w4)),
        (ValueError, lambda: vk.layer_norm(x, 4, w4, np.ones((1, 4), np.float32))),  # bias shape
        (ValueError, lambda: vk.layer_norm(x, 4, eps=-1e-5)),
        (ValueError, lambda: vk.layer_norm(x, 4, eps=float("nan"))),
        (TypeError, lambda: vk.layer_norm(x, 4, eps=None)),
        (TypeError, lambda: vk.layer_norm(x.astype(np.int32), 4)),          # integer dtype
        (TypeError, lambda: vk.layer_norm(x.astype(np.int16), 4)),
        (TypeError, lambda: vk.layer_norm([[1, 2], [3, 4]], 2)),
        (TypeError, lambda: vk.layer_norm(x, 4, w4.astype(np.int32))),
        (TypeError, lambda: vk.layer_norm(x, 4, None, w4.astype(np.uint8))),
        (ValueError, lambda: vk.rms_norm(x, 4, eps=-1.0)),
        (ValueError, lambda: vk.rms_norm(x, 5)),
        (ValueError, lambda: vk.rms_norm(x, 4, np.ones(5, np.float32))),
        (TypeError, lambda: vk.rms_norm(x.astype(np.int64), 4)),
        (ValueError, lambda: vk.layer_norm_vjp(x, w4, w4, np.ones((2, 3, 5), np.float32), 4)),  # dy shape
        (ValueError, lambda: vk.layer_norm_vjp(x, w4, np.ones(3, np.float32), x, 4)),
        (ValueError, lambda: vk.layer_norm_vjp(x, None, None, x, 3)),
        (ValueError, lambda: vk.layer_norm_vjp(x, None, None, x, 4, eps=-1)),
        (TypeError, lambda: vk.layer_norm_vjp(x, None, None, x.astype(np.int32), 4)),
        (TypeError, lambda: vk.layer_norm_vjp(x, None, None, None, 4)),
        (ValueError, lambda: vk.rms_norm_vjp(x, np.ones(3, np.float32), x, 4)),
        (ValueError, lambda: vk.rms_norm_vjp(x, None, x[:1], 4)),
        (TypeError, lambda: vk.rms_norm_vjp(x, None, x, 4, eps="1e-5")),
    ]


@pytest.mark.parametrize("i", range(len(_bad_cases())))
def test_bad_input_raises_before_gpu_work(i):
    exc, call = _bad_cases()[i]
    with no_gpu_work():
        with pytest.raises(exc):
            call()


def test_bad_input_with_gpu_arrays_raises_before_gpu_work():
    xi = vk.asarray(np.ones((2, 4), np.int32))
    xf = vk.asarray(np.ones((2, 4), np.float32))
    wi = vk.asarray(np.ones(4, np.int32))
    vk.synchronize()
    with no_gpu_work():
        for call in (lambda: vk.layer_norm(xi, 4), lambda: vk.layer_norm(xf, 4, wi),
                     lambda: vk.rms_norm_vjp(xf, None, xi, 4), lambda: vk.layer_norm_vjp(xi, None, None, xf, 4)):
            with pytest.raises(TypeError):
                call()
        with pytest.raises(ValueError):
            vk.layer_norm(xf, 4, np.ones(4, np.float32), xf)  # bias (2, 4): wrong shape, nothing uploaded


def _close16(got, want, half=np.float16):
    """A half, rounded once from float32: float32's error taken at the results' scale."""
    assert got.dtype == half
    assert_rounded_once(got.numpy(), want, 1e-5 * np.abs(np.asarray(want, np.float64)).max(), dtype=half)


def _modes():
    """The kernel's shapes: (name, patches of ops.layernorm's constants)."""
    return [("planned", {}), ("workgroup rows", {"SG_VECS": 0, "SG_VECS_BWD": 0}),
            ("streamed", {"SG_VECS": 0, "SG_VECS_BWD": 0, "FLOATS_PER_THREAD_FWD": 0,
                          "FLOATS_PER_THREAD_BWD": 0}),
            ("smaller workgroups", {"SG_VECS": 0, "SG_VECS_BWD": 0, "HALF_WG_DIV": 8, "HALF_MIN_WG_FWD": 32,
                                    "HALF_MIN_WG_BWD": 32})]


@pytest.mark.parametrize("mode", _modes(), ids=lambda m: m[0])
@pytest.mark.parametrize("half", [np.float16, vk.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("d", [4, 33, 256, 1025])
def test_halves_in_float32_rounded_once(rng, monkeypatch, d, half, mode):
    """float16 or bfloat16 x, weight, bias and cotangent (torch's half layer norm): computed in
    float32 (x and dy read, y and dx written as halves by the kernel itself), each result rounded
    once to its input's dtype; a float32 weight with half x keeps dweight float32. Rows in
    registers of a subgroup or a workgroup, or streamed; vec4s and single halves; a view at an
    odd offset."""
    for name, value in mode[1].items():
        monkeypatch.setattr(L, name, value)
    x = (rng.standard_normal((5, d)) * 3 + 1).astype(half)
    w = (1 + 0.1 * rng.standard_normal(d)).astype(half)
    b = (0.1 * rng.standard_normal(d)).astype(half)
    dy = rng.standard_normal((5, d)).astype(half)
    X, W, B, DY = (vk.asarray(a) for a in (x, w, b, dy))
    _close16(vk.layer_norm(X, d, W, B), ref_layer_norm(x, 1, w, b), half)
    _close16(vk.rms_norm(X, d, W), ref_rms_norm(x, 1, w), half)
    dx, dw, db = vk.layer_norm_vjp(X, W, B, DY, d)
    for got, want in zip((dx, dw, db), ref_layer_norm_vjp(x, w, dy, 1)):
        _close16(got, want, half)
    dx, dw = vk.rms_norm_vjp(X, W, DY, d)
    for got, want in zip((dx, dw), ref_rms_norm_vjp(x, w, dy, 1)):
        _close16(got, want, half)
    odd = vk.asarray(np.concatenate([x.reshape(-1)[:1], x.reshape(-1)]))[1:].reshape(5, d)
    _close16(vk.layer_norm(odd, d, W, B), ref_layer_norm(x, 1, w, b), half)
    w32 = w.astype(np.float32)
    dx, dw, db = vk.layer_norm_vjp(X, vk.asarray(w32), None, DY, d)
    assert dx.dtype == half and dw.dtype == vk.float32 and db is None
    want = ref_layer_norm_vjp(x, w32, dy, 1)
    np.testing.assert_allclose(dw.numpy(), want[1], rtol=1e-5, atol=1e-5 * np.abs(want[1]).max())
