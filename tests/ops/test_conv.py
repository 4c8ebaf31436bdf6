"""N-d convolution: forward, transposed, backward (input and weight), bias, plans, bad input.

References are float64 numpy written here from the definitions (a sum over windows on an
explicitly dilated and padded copy; the transposed convolution as a scatter), independent of the
kernels' index math. Sizes are tiny: lavapipe is slow and shared.
"""
import dataclasses
import itertools

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.ops.conv import geometry, kernels, plan_f16, plan_f32, record, select, tuning as conv_tuning
from tests.conftest import kernels_asked, no_gpu_work


# -- references -------------------------------------------------------------------------------
def _tup(v, nd):
    return (v,) * nd if isinstance(v, int) else tuple(v)


def ref_conv_general(x, w, stride=1, lo=0, hi=0, kd=1, idil=1, groups=1, flip=False):
    """Cross-correlation (convolution when flip) of x (N, C, *S) with w (Co, C/groups, *K)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    nd = x.ndim - 2
    stride, lo, hi, kd, idil = (_tup(v, nd) for v in (stride, lo, hi, kd, idil))
    if flip:
        w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    n, c = x.shape[:2]
    # Insert idil-1 zeros between input elements.
    dil = np.zeros((n, c) + tuple((s - 1) * i + 1 for s, i in zip(x.shape[2:], idil)))
    dil[(slice(None), slice(None)) + tuple(slice(None, None, i) for i in idil)] = x
    # Pad (negative padding crops).
    for d in range(nd):
        ax = 2 + d
        if lo[d] < 0:
            dil = dil.take(range(-lo[d], dil.shape[ax]), axis=ax)
        if hi[d] < 0:
            dil = dil.take(range(0, dil.shape[ax] + hi[d]), axis=ax)
        width = [(0, 0)] * dil.ndim
        width[ax] = (max(lo[d], 0), max(hi[d], 0))
        dil = np.pad(dil, width)
    co, cig = w.shape[:2]
    ksz = w.shape[2:]
    out = tuple((p - (k - 1) * dd - 1) // s + 1 for p, k, dd, s in zip(dil.shape[2:], ksz, kd, stride))
    y = np.zeros((n, co) + out)
    cog = co // groups
    for g in range(groups):
        xs = dil[:, g * cig:(g + 1) * cig]
        ws = w[g * cog:(g + 1) * cog]
        for k in itertools.product(*map(range, ksz)):
            window = tuple(slice(kk * dd, kk * dd + (o - 1) * s + 1, s) for kk, dd, o, s in zip(k, kd, out, stride))
            patch = xs[(slice(None), slice(None)) + window]
            y[:, g * cog:(g + 1) * cog] += np.einsum("nc...,oc->no...", patch, ws[(Ellipsis,) + k])
    return y


def ref_conv(x, w, stride=1, padding=0, dilation=1, groups=1):
    return ref_conv_general(x, w, stride, padding, padding, dilation, 1, groups)


def ref_conv_transpose(x, w, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Scatter form: every input element spreads x * w over its window of the output."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    nd = x.ndim - 2
    stride, padding, output_padding, dilation = (_tup(v, nd) for v in (stride, padding, output_padding, dilation))
    n, cin = x.shape[:2]
    cog = w.shape[1]
    cig = cin // groups
    ksz = w.shape[2:]
    full = tuple((s - 1) * st + dd * (k - 1) + 1 + op
                 for s, st, dd, k, op in zip(x.shape[2:], stride, dilation, ksz, output_padding))
    y = np.zeros((n, cog * groups) + full)
    for i in itertools.product(*map(range, x.shape[2:])):
        for k in itertools.product(*map(range, ksz)):
            pos = tuple(ii * st + kk * dd for ii, st, kk, dd in zip(i, stride, k, dilation))
            for g in range(groups):
                contrib = np.einsum("nc,co->no", x[(slice(None), slice(g * cig, (g + 1) * cig)) + i],
                                    w[(slice(g * cig, (g + 1) * cig), slice(None)) + k])
                y[(slice(None), slice(g * cog, (g + 1) * cog)) + pos] += contrib
    crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
    return y[(slice(None), slice(None)) + crop]


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(got, ref, tol=2e-5):
    got = np.asarray(got)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    scale = 1.0 + np.abs(ref).max(initial=0.0)
    err = np.abs(got - ref).max(initial=0.0) / scale
    assert np.isfinite(got).all() and err < tol, f"max error {err:.3g} (scale {scale:.3g})"


def _shaders(asked) -> list:
    """The shader names of conftest.kernels_asked's list."""
    return [shader for shader, _ in asked]


# -- forward ----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, dilation, groups)
    ((2, 3, 11), (4, 3, 3), 1, 0, 1, 1),
    ((3, 6, 13), (8, 3, 5), 2, 2, 1, 2),
    ((1, 16, 9), (12, 16, 7), 1, 3, 1, 1),
    ((2, 4, 10), (6, 4, 3), 3, 1, 3, 1),
    ((1, 3, 7, 9), (5, 3, 3, 3), 1, 1, 1, 1),            # first-layer-like (C_in = 3)
    ((3, 8, 6, 7), (16, 8, 3, 3), 1, (1, 0), 1, 1),
    ((2, 16, 9, 7), (8, 16, 5, 3), (2, 1), (2, 1), (1, 2), 1),
    ((1, 12, 7, 7), (12, 4, 3, 3), 2, 1, 2, 3),
    ((2, 24, 5, 5), (20, 24, 1, 1), 1, 0, 1, 1),          # 1x1: a plain GEMM
    ((1, 3, 15, 15), (16, 3, 7, 7), 2, 3, 1, 1),          # C_in = 3, 7x7, stride 2
    ((1, 6, 5, 6, 4), (4, 6, 3, 3, 1), 1, 1, 1, 1),
    ((2, 4, 5, 4, 5), (6, 2, 3, 1, 3), (1, 2, 2), (1, 0, 2), (2, 1, 1), 2),
])
def test_conv_forward(rng, case):
    xs, ws, stride, padding, dilation, groups = case
    nd = len(xs) - 2
    x, w = rand(rng, *xs), rand(rng, *ws)
    f = getattr(vk, f"conv{nd}d")
    got = f(vk.asarray(x), vk.asarray(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    close(got.numpy(), ref_conv(x, w, stride, padding, dilation, groups))


@pytest.mark.parametrize("groups", [1, 2, 8])
def test_conv_groups_and_depthwise_with_bias(rng, groups):
    x, w, b = rand(rng, 3, 8, 7, 6), rand(rng, 8, 8 // groups, 3, 3), rand(rng, 8)
    got = vk.conv2d(vk.asarray(x), vk.asarray(w), vk.asarray(b), padding=1, groups=groups)
    close(got.numpy(), ref_conv(x, w, 1, 1, 1, groups) + b[:, None, None])


def test_depthwise_multiplier_and_stride(rng):
    x, w = rand(rng, 2, 4, 9, 8), rand(rng, 8, 1, 5, 5)   # groups = C_in, 2 outputs per channel
    got = vk.conv2d(x, w, stride=2, padding=2, dilation=1, groups=4)
    close(got.numpy(), ref_conv(x, w, 2, 2, 1, 4))


@pytest.mark.parametrize("nd,k,dilation", [(1, 4, 1), (2, 3, 2), (3, 2, 1)])
def test_padding_same_and_valid(rng, nd, k, dilation):
    xs = (2, 3) + (5, 6, 4)[:nd]
    x, w, b = rand(rng, *xs), rand(rng, 4, 3, *(k,) * nd), rand(rng, 4)
    f = getattr(vk, f"conv{nd}d")
    got = f(x, w, b, padding="same", dilation=dilation).numpy()
    total = dilation * (k - 1)
    ref = ref_conv_general(x, w, 1, total // 2, total - total // 2, dilation) + b[(slice(None),) + (None,) * nd]
    assert got.shape[2:] == xs[2:]
    close(got, ref)
    got = f(x, w, padding="valid", dilation=dilation).numpy()
    close(got, ref_conv(x, w, 1, 0, dilation))


@pytest.mark.parametrize("kw", [
    dict(padding_lo=(2, 0), padding_hi=(0, 3)),                        # asymmetric
    dict(input_dilation=2, padding_lo=1, padding_hi=2, stride=(1, 2)),
    dict(flip=True, padding_lo=1, padding_hi=(1, 2), kernel_dilation=(2, 1)),
    dict(input_dilation=(3, 2), flip=True, groups=2, padding_lo=2, padding_hi=2),
    dict(padding_lo=(-1, 1), padding_hi=(0, -2)),                      # negative padding crops
])
def test_conv_general(rng, kw):
    x, w = rand(rng, 2, 4, 6, 7), rand(rng, 6, 4 // kw.get("groups", 1), 3, 2)
    got = vk.conv_general(vk.asarray(x), vk.asarray(w), **kw).numpy()
    ref = ref_conv_general(x, w, kw.get("stride", 1), kw.get("padding_lo", 0), kw.get("padding_hi", 0),
                           kw.get("kernel_dilation", 1), kw.get("input_dilation", 1), kw.get("groups", 1),
                           kw.get("flip", False))
    close(got, ref)


def test_conv_general_flip_is_convolution(rng):
    x, w = rand(rng, 1, 1, 12), rand(rng, 1, 1, 4)
    got = vk.conv_general(x, w, padding_lo=3, padding_hi=3, flip=True).numpy()[0, 0]
    close(got, np.convolve(x[0, 0].astype(np.float64), w[0, 0].astype(np.float64)))


def test_unbatched_input_and_views(rng):
    x, w = rand(rng, 3, 5, 8), rand(rng, 4, 5, 3)
    got = vk.conv1d(x[1], w, padding=1)
    assert got.shape == (4, 8)
    close(got.numpy(), ref_conv(x[1:2], w, 1, 1)[0])
    big = vk.asarray(x)
    close(vk.conv1d(big[1:], w).numpy(), ref_conv(x[1:], w))   # a view with an element offset


# -- transposed -------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, output_padding, groups, dilation)
    ((2, 4, 5), (4, 3, 3), 2, 1, 1, 1, 1),
    ((1, 6, 4), (6, 2, 4), 3, 0, 2, 2, 1),
    ((2, 4, 3, 4), (4, 5, 3, 3), 2, 1, (1, 0), 1, 1),
    ((1, 6, 4, 3), (6, 2, 2, 3), (1, 2), (0, 1), 0, 3, (2, 1)),
    ((1, 2, 3, 2, 3), (2, 3, 2, 3, 2), 2, (0, 1, 0), (1, 1, 0), 1, 1),
])
def test_conv_transpose(rng, case):
    xs, ws, stride, padding, output_padding, groups, dilation = case
    nd = len(xs) - 2
    x, w, b = rand(rng, *xs), rand(rng, *ws), rand(rng, ws[1] * groups)
    f = getattr(vk, f"conv_transpose{nd}d")
    got = f(vk.asarray(x), vk.asarray(w), vk.asarray(b), stride, padding, output_padding, groups, dilation)
    ref = ref_conv_transpose(x, w, stride, padding, output_padding, groups, dilation)
    close(got.numpy(), ref + b[(slice(None),) + (None,) * nd])


# -- backward ---------------------------------------------------------------------------------
def _fd_grads(x, w, g, **conv):
    """Gradients of L = <conv(x, w), g> by finite differences of the float64 reference (exact: L
    is linear in each argument)."""
    x64, w64, g64 = (a.astype(np.float64) for a in (x, w, g))
    base = (ref_conv(x64, w64, **conv) * g64).sum()
    dx = np.zeros_like(x64)
    for i in np.ndindex(*x.shape):
        xp = x64.copy()
        xp[i] += 1.0
        dx[i] = (ref_conv(xp, w64, **conv) * g64).sum() - base
    dw = np.zeros_like(w64)
    for i in np.ndindex(*w.shape):
        wp = w64.copy()
        wp[i] += 1.0
        dw[i] = (ref_conv(x64, wp, **conv) * g64).sum() - base
    return dx, dw


@pytest.mark.parametrize("xs,ws,conv", [
    ((2, 2, 6), (3, 2, 3), dict(stride=2, padding=1, dilation=1, groups=1)),
    ((1, 4, 5, 4), (2, 2, 3, 2), dict(stride=(1, 2), padding=(1, 0), dilation=(2, 1), groups=2)),
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), dict(stride=1, padding=1, dilation=1, groups=1)),
])
def test_conv_vjp_finite_differences(rng, xs, ws, conv):
    x, w = rand(rng, *xs), rand(rng, *ws)
    g = rand(rng, *ref_conv(x, w, **conv).shape)
    dx, dw = vk.conv_vjp(x, w, g, **conv)
    fdx, fdw = _fd_grads(x, w, g, **conv)
    close(dx.numpy(), fdx)
    close(dw.numpy(), fdw)


def assert_adjoint(x, w, y, g, dx, dw):
    """<conv(x, w), g> = <x, dinput(g)> = <w, dweight(g)>, relative to the size of the products."""
    lhs = (y * g).sum()
    scale = np.abs(y).sum() * np.abs(g).max() + 1.0
    assert abs(lhs - (x * dx).sum()) / scale < 1e-5
    assert abs(lhs - (w * dw).sum()) / scale < 1e-5


@pytest.mark.parametrize("xs,ws,conv", [
    ((3, 6, 17), (8, 3, 5), dict(stride=3, padding=2, dilation=2, groups=2)),
    ((2, 16, 9, 8), (12, 16, 3, 3), dict(stride=2, padding=1, dilation=1, groups=1)),
    ((1, 3, 13, 11), (8, 3, 7, 7), dict(stride=2, padding=3, dilation=1, groups=1)),   # first layer
    ((2, 8, 7, 7), (8, 1, 3, 3), dict(stride=1, padding=1, dilation=1, groups=8)),     # depthwise
    ((2, 20, 6, 5), (12, 20, 1, 1), dict(stride=1, padding=0, dilation=1, groups=1)),  # 1x1
    ((1, 4, 5, 6, 5), (6, 2, 3, 3, 3), dict(stride=(2, 1, 2), padding=(1, 1, 0), dilation=(1, 2, 1), groups=2)),
])
def test_conv_vjp_adjoint(rng, xs, ws, conv):
    """<conv(x, w), g> = <x, dinput(g)> = <w, dweight(g)>, and both against the reference."""
    x, w = rand(rng, *xs), rand(rng, *ws)
    nd = len(xs) - 2
    y = getattr(vk, f"conv{nd}d")(x, w, **conv).numpy().astype(np.float64)
    g = rand(rng, *y.shape)
    dx, dw, db = (a.numpy().astype(np.float64) for a in vk.conv_vjp(x, w, g, **conv, bias_grad=True))
    assert_adjoint(x, w, y, g, dx, dw)
    close(db, g.astype(np.float64).sum(axis=(0,) + tuple(range(2, 2 + nd))))
    if x.size + w.size <= 700:  # entrywise too, for the smaller cases
        fdx, fdw = _fd_grads(x, w, g, **conv)
        close(dx, fdx)
        close(dw, fdw)


@pytest.mark.parametrize("kw", [
    dict(input_dilation=2, padding_lo=1, padding_hi=2, stride=(1, 2), flip=True),
    dict(padding_lo=(2, -1), padding_hi=(0, 1), kernel_dilation=(1, 2), groups=2),
])
def test_conv_general_vjp_adjoint(rng, kw):
    x, w = rand(rng, 2, 4, 5, 7), rand(rng, 6, 4 // kw.get("groups", 1), 3, 2)
    y = vk.conv_general(x, w, **kw).numpy().astype(np.float64)
    g = rand(rng, *y.shape)
    dx, dw = (a.numpy().astype(np.float64) for a in vk.conv_general_vjp(x, w, g, **kw))
    assert_adjoint(x, w, y, g, dx, dw)


def test_conv_transpose_vjp_adjoint(rng):
    x, w = rand(rng, 2, 4, 4, 3), rand(rng, 4, 3, 3, 2)
    params = dict(stride=2, padding=1, output_padding=(1, 0), groups=2, dilation=(1, 2))
    y = vk.conv_transpose2d(x, w, None, **params).numpy().astype(np.float64)
    g = rand(rng, *y.shape)
    dx, dw, db = (a.numpy().astype(np.float64) for a in vk.conv_transpose_vjp(x, w, g, **params, bias_grad=True))
    assert_adjoint(x, w, y, g, dx, dw)
    close(db, g.astype(np.float64).sum(axis=(0, 2, 3)))


def test_forward_and_backward_record_into_one_submit(rng, whole_submits):
    x, w, b = rand(rng, 2, 8, 6, 6), rand(rng, 4, 8, 3, 3), rand(rng, 4)
    gx, gw, gb = vk.asarray(x), vk.asarray(w), vk.asarray(b)
    vk.synchronize()
    s0 = vk.stats()["submits"]
    y = vk.conv2d(gx, gw, gb, stride=1, padding=1)
    g = y * 0.5  # a loss of 0.25 * |y|^2
    dx, dw, db = vk.conv_vjp(gx, gw, g, stride=1, padding=1, bias_grad=True)
    vk.synchronize()
    assert vk.stats()["submits"] == s0 + 1
    ref = ref_conv(x, w, 1, 1) + b[:, None, None]
    close(y.numpy(), ref)
    g64 = 0.5 * ref
    close(db.numpy(), g64.sum(axis=(0, 2, 3)))
    xpad = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref_dw = np.stack([np.stack([np.einsum("nohw,nchw->oc", g64, xpad[:, :, i:i + 6, j:j + 6])
                                 for j in range(3)], -1) for i in range(3)], -2)
    close(dw.numpy(), ref_dw)
    ref_dx = np.zeros_like(xpad)
    for i, j in itertools.product(range(3), range(3)):
        ref_dx[:, :, i:i + 6, j:j + 6] += np.einsum("nohw,oc->nchw", g64, w[:, :, i, j].astype(np.float64))
    close(dx.numpy(), ref_dx[:, :, 1:-1, 1:-1])


# -- plans and kernel paths -------------------------------------------------------------------
@pytest.mark.parametrize("config", [
    "path=direct",
    "fwd.gather=flat,wgrad.splits=3",
    "fwd.gather=uniform,BM=64,BN=8,TM=4,TN=4,BK=4,gridx=1",
    "fwd.gather=table,fwd.gridx=2,wgrad.BM=16,wgrad.BN=8,wgrad.BK=32,wgrad.TM=4,wgrad.TN=4",
    "BM=32,BN=16,BK=16,TM=8,TN=4,wgrad.splits=1,phased=0",
    "path=gemm,BN=4,TN=4",
    "fwd.path=narrow,RT=3,KC=4,WG=32,gridx=1",      # 10 channels: two NN=8 chunks
    "fwd.path=narrow,NN=4,RT=2,KC=5,CU=3,phased=0",  # 6 channels: chunks of 5 and 1, loads by 3
])
def test_config_override_paths(rng, monkeypatch, config):
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", config)
    x, w, b = rand(rng, 2, 6, 7, 5), rand(rng, 10, 6, 3, 3), rand(rng, 10)
    conv = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    y = vk.conv2d(x, w, b, **conv)
    close(y.numpy(), ref_conv(x, w, **conv) + b[:, None, None])
    g = rand(rng, *y.shape)
    dx, dw = vk.conv_vjp(x, w, g, **conv)
    lhs = (ref_conv(x, w, **conv) * g).sum()
    scale = np.abs(y.numpy()).sum() * np.abs(g).max() + 1.0
    assert abs(lhs - (x * dx.numpy().astype(np.float64)).sum()) / scale < 1e-5
    assert abs(lhs - (w * dw.numpy().astype(np.float64)).sum()) / scale < 1e-5


def test_pointwise_as_batched_matmul(rng, monkeypatch):
    """fwd.path=matmul: 1x1 stride-1 convolutions as a batched GEMM on primitives/matmul.comp, the
    weight read in place (transposed for backward-input and a transposed convolution); with a
    bias, padding or groups the convolution kernels run."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "fwd.path=matmul")
    used = kernels_asked(monkeypatch)
    x, w, b = rand(rng, 3, 5, 6, 7), rand(rng, 4, 5, 1, 1), rand(rng, 4)
    close(vk.conv2d(x, w).numpy(), ref_conv(x, w))
    g = rand(rng, 3, 4, 6, 7)
    dx, dw = vk.conv_vjp(x, w, g)
    ref_dx, ref_dw = _ref_vjp(x, w, g, 1, 0, 1, 1)
    close(dx.numpy(), ref_dx)
    close(dw.numpy(), ref_dw)
    wt = rand(rng, 5, 6, 1, 1)  # conv_transpose2d: (C_in, C_out, 1, 1)
    close(vk.conv_transpose2d(x, wt).numpy(), ref_conv_transpose(x, wt))
    assert _shaders(used).count("primitives/matmul.comp") == 3, used
    del used[:]
    close(vk.conv2d(x, w, b).numpy(), ref_conv(x, w) + b[:, None, None])
    close(vk.conv2d(x, w, padding=1).numpy(), ref_conv(x, w, padding=1))
    x2, w2 = rand(rng, 2, 6, 3, 4), rand(rng, 4, 3, 1, 1)
    close(vk.conv2d(x2, w2, groups=2).numpy(), ref_conv(x2, w2, groups=2))
    assert "primitives/matmul.comp" not in _shaders(used), used


def test_pointwise_matmul_rules():
    """By default on hardware from 128 output channels and 256 positions (no GPU work)."""
    def geom(n, c, h, co, s=1, p=0):
        return geometry.build("t", (n, c, h, h), (co, c, 1, 1), 2, (s, s), (p, p), (p, p), (1, 1), (1, 1),
                              1, False, False)
    key = _h100_key()
    sw = dataclasses.replace(key, name="llvmpipe", software=True)
    with no_gpu_work():
        assert select.pointwise_matmul(geom(32, 128, 28, 128), False, key, "")
        assert select.pointwise_matmul(geom(32, 64, 56, 256).backward_input(), False, key, "") is False
        assert select.pointwise_matmul(geom(32, 256, 56, 64).backward_input(), False, key, "")
        assert not select.pointwise_matmul(geom(8, 512, 7, 2048), False, key, "")      # 49 positions
        assert not select.pointwise_matmul(geom(32, 128, 28, 128), True, key, "")      # bias
        assert not select.pointwise_matmul(geom(32, 128, 28, 128, s=2), False, key, "")
        assert not select.pointwise_matmul(geom(32, 128, 28, 128), False, sw, "")
        assert select.pointwise_matmul(geom(2, 4, 3, 4), False, sw, "fwd.path=matmul")
        assert not select.pointwise_matmul(geom(32, 128, 28, 128), False, key, "fwd.path=gemm")


@pytest.mark.parametrize("case", [
    # backward-input of strided convolutions and transposed convolutions: the phase split
    ("vjp", (2, 6, 11, 9), (8, 6, 3, 3), dict(stride=2, padding=1, dilation=1, groups=1)),
    ("vjp", (1, 16, 13), (12, 8, 5), dict(stride=3, padding=4, dilation=2, groups=2)),
    ("vjp", (1, 6, 5, 7, 6), (6, 6, 2, 3, 3), dict(stride=(1, 2, 3), padding=(0, 1, 2), dilation=1, groups=1)),
    ("transpose", (2, 8, 4, 5), (8, 6, 3, 4), dict(stride=2, padding=1, output_padding=1, groups=1, dilation=1)),
    ("transpose", (1, 12, 5), (12, 3, 4), dict(stride=3, padding=0, output_padding=2, groups=2, dilation=1)),
])
def test_phase_split(rng, case):
    kind, xs, ws, params = case
    x, w = rand(rng, *xs), rand(rng, *ws)
    nd = len(xs) - 2
    if kind == "vjp":
        y = ref_conv(x, w, **params)
        g = rand(rng, *y.shape)
        geom = geometry.build("t", xs, ws, nd, *(_tup(params[k], nd) for k in ("stride", "padding", "padding",
                          "dilation")), (1,) * nd, params["groups"], False, False).backward_input()
        assert dict(select.plan("forward", geom).defines).get("PHASED") == 1
        dx = vk.conv_vjp(x, w, g, **params, weight_grad=False)[0].numpy()
        ref_dx = np.zeros(x.shape)
        e = np.zeros(x.shape)
        for i in range(x.size):   # the transpose of the reference's linear map, column by column
            e.reshape(-1)[i] = 1.0
            ref_dx.reshape(-1)[i] = (ref_conv(e, w, **params) * g).sum()
            e.reshape(-1)[i] = 0.0
        close(dx, ref_dx)
    else:
        b = rand(rng, ws[1] * params["groups"])
        got = getattr(vk, f"conv_transpose{nd}d")(x, w, b, **params).numpy()
        close(got, ref_conv_transpose(x, w, **params) + b[(slice(None),) + (None,) * nd])


def _ref_dinput(x, w, g, params):
    """The transpose of the reference's linear map x -> <conv(x, w), g>, column by column."""
    ref_dx = np.zeros(x.shape)
    e = np.zeros(x.shape)
    for i in range(x.size):
        e.reshape(-1)[i] = 1.0
        ref_dx.reshape(-1)[i] = (ref_conv(e, w, **params) * g).sum()
        e.reshape(-1)[i] = 0.0
    return ref_dx


@pytest.mark.parametrize("case", [
    # the narrow kernel: few output channels per group (the dinput GEMM of a first layer has C_in)
    ("vjp", (2, 3, 11, 9), (12, 3, 7, 7), dict(stride=2, padding=3, dilation=1, groups=1), True),
    ("vjp", (1, 3, 8, 7), (9, 3, 3, 3), dict(stride=1, padding=1, dilation=1, groups=1), False),
    ("vjp", (1, 6, 9), (10, 3, 4), dict(stride=2, padding=1, dilation=2, groups=2), False),   # holes
    ("vjp", (1, 2, 4, 5, 4), (6, 2, 2, 3, 2), dict(stride=2, padding=(1, 1, 0), dilation=1, groups=1), True),
    ("fwd", (2, 20, 7, 6), (6, 20, 3, 3), dict(stride=1, padding=1, dilation=(2, 1), groups=1), False),
    ("fwd", (1, 16, 9, 8), (8, 8, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=1, groups=2), False),
])
def test_narrow_path(rng, case):
    kind, xs, ws, params, phased = case
    x, w = rand(rng, *xs), rand(rng, *ws)
    nd = len(xs) - 2
    geom = geometry.build("t", xs, ws, nd, *(_tup(params[k], nd) for k in ("stride", "padding", "padding",
                          "dilation")), (1,) * nd, params["groups"], False, False)
    if kind == "vjp":
        geom = geom.backward_input()
    p = select.plan("forward", geom, kind == "fwd")
    defines = dict(p.defines)
    assert defines.get("NARROW") == 1 and defines.get("PHASED", 0) == int(phased), p
    f = getattr(vk, f"conv{nd}d")
    if kind == "vjp":
        y = ref_conv(x, w, **params)
        g = rand(rng, *y.shape)
        dx = vk.conv_vjp(x, w, g, **params, weight_grad=False)[0].numpy()
        close(dx, _ref_dinput(x, w, g, params))
    else:
        b = rand(rng, ws[0])
        got = f(x, w, b, **params).numpy()
        close(got, ref_conv(x, w, **params) + b[(slice(None),) + (None,) * nd])


def _geom(xs, ws, params):
    nd = len(xs) - 2
    return geometry.build("t", xs, ws, nd, *(_tup(params[k], nd) for k in ("stride", "padding", "padding",
                          "dilation")), (1,) * nd, params.get("groups", 1), False, False)


@pytest.mark.parametrize("xs,ws,params", [
    ((2, 3, 11, 9), (12, 3, 7, 7), dict(stride=2, padding=3, dilation=1)),     # a first layer
    ((1, 2, 13), (5, 2, 4), dict(stride=3, padding=2, dilation=2)),            # 1-D, dilated
    ((1, 2, 10), (3, 2, 2), dict(stride=3, padding=0, dilation=1)),            # inputs no window reads
    ((2, 1, 5, 6, 4), (4, 1, 2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=1)),  # 3-D
    ((3, 4, 8, 8), (6, 4, 3, 3), dict(stride=1, padding=1, dilation=1)),       # stride 1
])
@pytest.mark.parametrize("slices", [False, True])
def test_col2im_backward_input(rng, monkeypatch, xs, ws, params, slices):
    """backward-input as columns (W^T dy, one batched GEMM) and col2im's gather (fwd.path=col2im;
    the default on hardware for narrow strided layers): dx against the reference's transpose, one
    image's columns at a time where `slices`."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "fwd.path=col2im")
    geom = _geom(xs, ws, params)
    if slices:  # room for one image's columns
        monkeypatch.setattr(conv_tuning, "COL2IM_COLS_BYTES", 4 * geom.cin * geom.kp * int(np.prod(geom.so)))
    x, w = rand(rng, *xs), rand(rng, *ws)
    route = select.select("input", geom, False)
    assert route.family == "col2im" and route.plan.per == (1 if slices else xs[0])
    y = ref_conv(x, w, **params)
    g = rand(rng, *y.shape)
    dx = vk.conv_vjp(x, w, g, **params, weight_grad=False)[0].numpy()
    close(dx, _ref_dinput(x, w, g, params))


def test_col2im_float16(rng, monkeypatch):
    """float16 takes col2im on widened copies, dx rounded once."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "fwd.path=col2im")
    xs, ws, params = (2, 3, 11, 9), (12, 3, 7, 7), dict(stride=2, padding=3, dilation=1)
    route = select.select("input", _geom(xs, ws, params), True)
    assert route.family == "cast" and route.inner.family == "col2im"
    x, w = rand(rng, *xs).astype(np.float16), rand(rng, *ws).astype(np.float16)
    g = rand(rng, *ref_conv(x.astype(np.float64), w.astype(np.float64), **params).shape).astype(np.float16)
    dx = vk.conv_vjp(x, w, g, **params, weight_grad=False)[0].numpy()
    close16(dx, _ref_dinput(x.astype(np.float64), w.astype(np.float64), g.astype(np.float64), params))


def test_col2im_only_where_it_applies(monkeypatch):
    """Groups, input dilation and transposed weights keep the kernels' route even when asked;
    by default only hardware takes col2im, for narrow strided layers."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "fwd.path=col2im")
    grouped = _geom((1, 4, 9, 9), (6, 2, 3, 3), dict(stride=2, padding=1, dilation=1, groups=2))
    assert select.select("input", grouped, False).family != "col2im"
    transposed = geometry.build("t", (1, 4, 5, 5), (4, 3, 3, 3), 2, (2, 2), (1, 1), (1, 1), (1, 1), (1, 1),
                                1, False, True)
    assert select.select("input", transposed, False).family != "col2im"
    monkeypatch.delenv("VKBACKEND_CONV_CONFIG")
    first = _geom((2, 3, 32, 32), (8, 3, 7, 7), dict(stride=2, padding=3, dilation=1))
    assert (select.select("input", first, False).family == "col2im") == (not vk.device().is_software)


# -- float16 ------------------------------------------------------------------------------------
def _ref_vjp(x, w, g, stride, padding, dilation, groups):
    """(dinput, dweight) in float64: dinput as the transposed convolution of g (a scatter),
    dweight as the correlation of the padded input with g, window by window."""
    nd = x.ndim - 2
    stride, padding, dilation = (_tup(v, nd) for v in (stride, padding, dilation))
    ksz, so = w.shape[2:], g.shape[2:]
    op = tuple(si - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
               for si, o, s, p, d, k in zip(x.shape[2:], so, stride, padding, dilation, ksz))
    dx = ref_conv_transpose(g, w, stride, padding, op, groups, dilation)
    xp = np.pad(np.asarray(x, np.float64), [(0, 0), (0, 0)] + [(p, p) for p in padding])
    g64 = np.asarray(g, np.float64)
    co, cig = w.shape[:2]
    cog = co // groups
    dw = np.zeros(w.shape)
    for gr in range(groups):
        xs, gs = xp[:, gr * cig:(gr + 1) * cig], g64[:, gr * cog:(gr + 1) * cog]
        for k in itertools.product(*map(range, ksz)):
            window = tuple(slice(kk * d, kk * d + (o - 1) * s + 1, s) for kk, d, o, s in zip(k, dilation, so, stride))
            patch = xs[(slice(None), slice(None)) + window]
            dw[(slice(gr * cog, (gr + 1) * cog), slice(None)) + k] = np.einsum("nop,ncp->oc", gs.reshape(gs.shape[:2] + (-1,)),
                                                                         patch.reshape(patch.shape[:2] + (-1,)))
    return dx, dw


def _half(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def close16(got, ref):
    """float16 results: float32 accumulation, then one rounding to float16 (2^-11 relative)."""
    assert got.dtype == np.float16, got.dtype
    close(got.astype(np.float64), ref, tol=2e-3)


@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, dilation, groups): around the float16 kernel's tiles
    # (128 rows, 16-128 channels, 32 reduction steps)
    ((3, 8, 13, 11), (17, 8, 3, 3), 1, 1, 1, 1),       # 429 rows, 17 channels, K = 72
    ((2, 24, 8, 8), (32, 24, 3, 3), 1, 1, 1, 1),       # 64 positions: whole fragments stored directly
    ((2, 33, 9, 9), (40, 33, 1, 1), 1, 0, 1, 1),       # 1x1, K = 33
    ((2, 12, 7, 7), (12, 4, 3, 3), 2, 1, 1, 3),        # groups of 4 channels (float32 kernels)
    ((1, 32, 6, 6), (32, 16, 3, 3), 1, 1, 1, 2),       # groups of 16 channels
    ((2, 16, 9, 9), (24, 16, 3, 3), 2, 1, 1, 1),       # backward-input split by phase
    ((2, 16, 37), (130, 16, 5), 1, 2, 2, 1),           # 130 channels: two tiles of 128
    ((1, 4, 5, 6, 5), (8, 4, 3, 3, 3), 1, 1, 1, 1),    # 3-D
    ((1, 3, 23, 23), (16, 3, 7, 7), 2, 3, 1, 1),       # a first layer
])
def test_float16_forward_and_vjp(rng, case):
    """float16 in, float16 out: cooperative matrices where the device has them, else the float32
    kernels on widened copies. The reference is float64 on the same (float16) values."""
    xs, ws, stride, padding, dilation, groups = case
    nd = len(xs) - 2
    x, w, b = _half(rng, *xs), _half(rng, *ws, scale=0.3), _half(rng, ws[0])
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    y = getattr(vk, f"conv{nd}d")(vk.asarray(x), vk.asarray(w), vk.asarray(b), **params)
    close16(y.numpy(), ref_conv(x, w, **params) + b.astype(np.float64)[(slice(None),) + (None,) * nd])
    g = _half(rng, *y.shape)
    dx, dw = vk.conv_vjp(x, w, g, **params)
    ref_dx, ref_dw = _ref_vjp(x, w, g, **params)
    close16(dx.numpy(), ref_dx)
    close16(dw.numpy(), ref_dw)


@pytest.mark.parametrize("config", ["f16.path=coopmat", "f16.BM=64,f16.BN=32,f16.BK=64,f16.SGM=2,f16.SGN=2",
                                    "f16.BM=96,f16.SGM=2,f16.SGN=2", "f16.STAGES=2,f16.BK=32",
                                    "wgrad16.splits=1", "wgrad16.BM=16,wgrad16.BN=32,wgrad16.BK=16,wgrad16.splits=3",
                                    "wgrad16.STAGES=1,wgrad16.BK=64"])
def test_float16_kernel_configs(rng, monkeypatch, config):
    """The cooperative-matrix kernels' other configurations (the gathering kernel on wide
    channels; small tiles with long steps; 96-row tiles; the packed forward double-buffered;
    backward-weight in one split, written directly, in three splits of short steps, and with one
    copy of its tiles), forward and both backward
    passes; 9 reduction steps of 32 (odd) forward, 3 x 3 phased ones backward. Where the device
    has no cooperative matrices the float32 kernels run, as in the test above."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", config)
    x, w = _half(rng, 2, 24, 11, 9), _half(rng, 40, 24, 3, 3, scale=0.3)
    params = dict(stride=2, padding=1, dilation=1, groups=1)
    close16(vk.conv2d(x, w, **params).numpy(), ref_conv(x, w, **params))
    g = _half(rng, 2, 40, 6, 5)
    dx, dw = vk.conv_vjp(x, w, g, **params)
    ref_dx, ref_dw = _ref_vjp(x, w, g, **params)
    close16(dx.numpy(), ref_dx)
    close16(dw.numpy(), ref_dw)


def _gathers_if_it_can(used):
    has = kernels.coopmat_key(runtime.get().device) is not None
    assert ("ops/conv_coopmat_wgrad_gather.comp" in _shaders(used)) == has, used


@pytest.mark.parametrize("xs,ws,params,config", [
    ((2, 3, 13, 11), (16, 3, 7, 7), dict(stride=2, padding=3), ""),                 # a first layer: 147 columns
    ((2, 3, 13, 11), (16, 3, 7, 7), dict(stride=2, padding=3), ",wgrad16.BK=32,wgrad16.splits=3"),
    ((1, 6, 9, 8), (34, 3, 3, 3), dict(padding=1, dilation=2, groups=2), ""),       # groups, 17 channels each
    ((2, 5, 6, 7), (80, 5, 3, 3), dict(padding=(0, 1)), ""),                         # two tiles of 64 channels
    ((1, 2, 4, 5, 6), (16, 2, 3, 3, 3), dict(padding=1), ",wgrad16.splits=1"),      # 3-D, one split
])
def test_float16_backward_weight_gathering(rng, monkeypatch, xs, ws, params, config):
    """conv_coopmat_wgrad_gather.comp (few input channels: x gathered in place) where the device
    has cooperative matrices, else the float32 kernels."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "wgrad16.path=coopmat" + config)
    used = kernels_asked(monkeypatch)
    nd = len(xs) - 2
    x, w = _half(rng, *xs), _half(rng, *ws, scale=0.3)
    y = getattr(vk, f"conv{nd}d")(vk.asarray(x), vk.asarray(w), **params)
    g = _half(rng, *y.shape)
    _, dw = vk.conv_vjp(x, w, g, **params)
    full = dict(dict(stride=1, padding=0, dilation=1, groups=1), **params)
    close16(dw.numpy(), _ref_vjp(x, w, g, **full)[1])
    _gathers_if_it_can(used)


def test_float16_backward_weight_gathering_general(rng, monkeypatch):
    """The gathering backward-weight kernel through conv_general: input dilation (holes), a
    stride, asymmetric padding and flip (the gradient lands on the mirrored taps)."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "wgrad16.path=coopmat")
    used = kernels_asked(monkeypatch)
    kw = dict(stride=(1, 2), padding_lo=(1, 0), padding_hi=(2, 1), input_dilation=2, flip=True)
    ref_kw = dict(stride=(1, 2), lo=(1, 0), hi=(2, 1), idil=2, flip=True)
    x, w = _half(rng, 2, 3, 7, 6), _half(rng, 16, 3, 3, 3, scale=0.3)
    g = _half(rng, *vk.conv_general(x, w, **kw).shape)
    _, dw = vk.conv_general_vjp(x, w, g, **kw)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    ref = np.zeros(w.shape)
    for i in np.ndindex(*w.shape):  # <conv(x, e_i), g>: the convolution is linear in w
        e = np.zeros(w.shape)
        e[i] = 1.0
        ref[i] = (ref_conv_general(x64, e, **ref_kw) * g64).sum()
    close16(dw.numpy(), ref)
    _gathers_if_it_can(used)


@pytest.mark.parametrize("xs,ws,groups", [
    ((2, 12, 9, 7), (16, 12, 3, 3), 1),        # 63 positions, 12 channels padded to 16
    ((1, 130, 5, 13), (24, 130, 1, 1), 1),     # 65 positions, three channel tiles of 64
    ((3, 40, 4, 4), (20, 20, 3, 2), 2),        # groups: 20 channels each, padded to 24
    ((1, 8, 3, 4, 5), (16, 8, 2, 3, 3), 1),    # 3-D
])
def test_float16_packing_for_the_channels_last_kernel(rng, xs, ws, groups):
    """conv_pack.comp (runs wherever float16 storage does): x channels-last with zero-padded
    channels, and the weight as [group][tap][C_in/group][C_out/group], for the forward pass and
    for the backward-input pass's transposed, mirrored read of the same weight."""
    nd = len(xs) - 2
    x, w = _half(rng, *xs), _half(rng, *ws)
    geom = geometry.build("t", xs, ws, nd, (1,) * nd, (0,) * nd, (0,) * nd, (1,) * nd, (1,) * nd,
                          groups, False, False)
    n, cin = xs[:2]
    cout, cig = ws[:2]
    cog, si, kp = cout // groups, int(np.prod(xs[2:])), int(np.prod(ws[2:]))
    pad8 = lambda c: -(-c // 8) * 8  # noqa: E731
    want_x = np.zeros((n, si, groups, pad8(cig)), np.float16)
    want_x[..., :cig] = x.reshape(n, groups, cig, si).transpose(0, 3, 1, 2)
    got_x = record.pack_input(geom, vk.asarray(x)).numpy()
    np.testing.assert_array_equal(got_x, want_x.ravel())
    wg = w.reshape(groups, cog, cig, kp)
    for gm, b in ((geom, wg.transpose(0, 3, 2, 1)),                    # [g][tap][c][j] = w[g*COG + j, c, tap]
                  (geom.backward_input(), wg.transpose(0, 3, 1, 2))):  # [g][tap][j][c]: channels swap roles
        want_w = np.zeros((groups, kp, pad8(b.shape[2]), pad8(b.shape[3])), np.float16)
        want_w[:, :, :b.shape[2], :b.shape[3]] = b
        got_w = record.pack_weight(gm, vk.asarray(w)).numpy()
        np.testing.assert_array_equal(got_w, want_w.ravel())


def test_float16_transposed_and_general(rng):
    x, wt = _half(rng, 2, 6, 5, 7), _half(rng, 6, 5, 3, 3, scale=0.3)
    got = vk.conv_transpose2d(x, wt, stride=2, padding=1, output_padding=1)
    close16(got.numpy(), ref_conv_transpose(x, wt, stride=2, padding=1, output_padding=1))
    w = _half(rng, 9, 6, 3, 2, scale=0.3)
    kw = dict(stride=(1, 2), padding_lo=(2, 0), padding_hi=(0, 1), kernel_dilation=(1, 2),
              input_dilation=(2, 1), flip=True)
    got = vk.conv_general(x, w, **kw)
    close16(got.numpy(), ref_conv_general(x, w, kw["stride"], kw["padding_lo"], kw["padding_hi"],
                                          kw["kernel_dilation"], kw["input_dilation"], 1, True))


@pytest.mark.parametrize("kw", [
    # wide enough (16 channels and more) for the packed kernels where the device has them
    dict(stride=(1, 2), padding_lo=(2, 0), padding_hi=(0, 1), kernel_dilation=(1, 2), input_dilation=(2, 1),
         flip=True),                                          # phase split on one axis, mirrored taps
    dict(stride=1, padding_lo=1, padding_hi=2, kernel_dilation=2, input_dilation=2),  # not coprime: holes
    dict(stride=2, padding_lo=0, padding_hi=-1, groups=2),   # negative padding crops, two groups
])
def test_float16_general_on_wide_channels(rng, kw):
    x, w = _half(rng, 2, 32, 6, 7), _half(rng, 24, 32 // kw.get("groups", 1), 3, 2, scale=0.2)
    y = vk.conv_general(x, w, **kw)
    ref = ref_conv_general(x, w, kw["stride"], kw["padding_lo"], kw["padding_hi"], kw.get("kernel_dilation", 1),
                           kw.get("input_dilation", 1), kw.get("groups", 1), kw.get("flip", False))
    close16(y.numpy(), ref)
    g = _half(rng, *y.shape)
    dx, dw = vk.conv_general_vjp(x, w, g, **kw)
    # The adjoint identities, in float64: <conv(x), g> = <x, dx> = <w, dw>. Each float16 element
    # of dx (dw) is within 2^-11 of its float32 sum, so each inner product is within a few 2^-11
    # of the sum of its terms' magnitudes.
    want = float((ref * g.astype(np.float64)).sum())
    for a, da in ((x, dx), (w, dw)):
        terms = a.astype(np.float64) * da.numpy().astype(np.float64)
        assert abs(terms.sum() - want) <= 2e-3 * max(np.abs(terms).sum(), np.abs(ref * g.astype(np.float64)).sum())


def test_float16_3d_on_wide_channels(rng):
    x, w = _half(rng, 2, 16, 5, 6, 7), _half(rng, 24, 16, 3, 3, 3, scale=0.2)
    params = dict(stride=(1, 2, 1), padding=1, dilation=(1, 1, 2), groups=1)
    close16(vk.conv3d(x, w, **params).numpy(), ref_conv(x, w, **params))
    g = _half(rng, *vk.conv3d(x, w, **params).shape)
    dx, dw = vk.conv_vjp(x, w, g, **params)
    ref_dx, ref_dw = _ref_vjp(x, w, g, **params)
    close16(dx.numpy(), ref_dx)
    close16(dw.numpy(), ref_dw)


def test_float16_transposed_weight_gradient(rng):
    """dweight of conv_transpose2d in float16 (the weight read transposed and mirrored by the
    backward-weight kernels) against a float64 sum written from the definition:
    y[n, o, i*s - p + k] += x[n, c, i] w[c, o, k], so dw[c, o, k] = sum_{n, i} x[n, c, i] g[n, o, i*s - p + k]."""
    s, p, op = 2, 1, 1
    x, w = _half(rng, 2, 16, 5, 7), _half(rng, 16, 24, 3, 3, scale=0.3)
    y = vk.conv_transpose2d(x, w, stride=s, padding=p, output_padding=op)
    g = _half(rng, *y.shape)
    _, dw = vk.conv_transpose_vjp(x, w, g, stride=s, padding=p, output_padding=op)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    ref = np.zeros(w.shape)
    for ka, kb in itertools.product(range(3), range(3)):
        for i in range(x.shape[2]):
            for j in range(x.shape[3]):
                oi, oj = i * s - p + ka, j * s - p + kb
                if 0 <= oi < g.shape[2] and 0 <= oj < g.shape[3]:
                    ref[:, :, ka, kb] += np.einsum("nc,no->co", x64[:, :, i, j], g64[:, :, oi, oj])
    close16(dw.numpy(), ref)


@pytest.mark.parametrize("storage16", [True, False])
def test_float16_in_the_float32_kernels(rng, monkeypatch, storage16):
    """A first layer (3 input channels) in float16, every pass: where no cooperative-matrix plan
    applies (the weight and input gradients here on any device), the float32 kernels read the
    halves in place where the device stores 16-bit values, else run on widened copies (as col2im,
    the input gradient's route on hardware, always does)."""
    rt = runtime.get()
    if not storage16:
        monkeypatch.setattr(rt, "device", dataclasses.replace(
            rt.device, features=rt.device.features - {"storageBuffer16BitAccess"}))
    widened, to32 = [], record._to32

    def spy(a):
        if a is not None:
            widened.append(a)
        return to32(a)
    monkeypatch.setattr(record, "_to32", spy)
    x, w, b = _half(rng, 2, 3, 9, 10), _half(rng, 16, 3, 3, 3, scale=0.3), _half(rng, 16)
    params = dict(stride=2, padding=1, dilation=1, groups=1)
    y = vk.conv2d(x, w, b, **params)
    close16(y.numpy(), ref_conv(x, w, **params) + b.astype(np.float64)[:, None, None])
    g = _half(rng, *y.shape)
    dx, dw, db = vk.conv_vjp(x, w, g, bias_grad=True, **params)
    ref_dx, ref_dw = _ref_vjp(x, w, g, **params)
    close16(dx.numpy(), ref_dx)
    close16(dw.numpy(), ref_dw)
    close16(db.numpy(), g.astype(np.float64).sum(axis=(0, 2, 3)))
    # the input gradient by col2im (hardware) runs on widened copies of the cotangent and weight
    dx_cast = select.select("input", _geom(x.shape, w.shape, params), True).family == "cast"
    if storage16:
        assert len(widened) == (2 if dx_cast else 0)
    else:  # at least the input gradient's cotangent and weight, the weight gradient's x and g, db's g
        assert len(widened) >= 5


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_empty_batch(rng, dtype):
    """A batch of 0: an empty output, an empty input gradient and a zero weight gradient, all in
    the operands' dtype."""
    x, w = np.zeros((0, 16, 6, 6), dtype), rng.standard_normal((24, 16, 3, 3)).astype(dtype)
    y = vk.conv2d(x, w, padding=1)
    assert y.shape == (0, 24, 6, 6) and y.dtype == dtype
    dx, dw = vk.conv_vjp(x, w, np.zeros((0, 24, 6, 6), dtype), padding=1)
    assert dx.shape == x.shape and dx.dtype == dtype
    got = dw.numpy()
    assert got.dtype == dtype and got.shape == w.shape and not got.any()


def test_float16_backward_weight_plans():
    """The float16 backward-weight planner for an H100-like key (no GPU work)."""
    def geom(n, c, h, k, co, s=1, p=1):
        return geometry.build("t", (n, c, h, h), (co, c, k, k), 2, (s, s), (p, p), (p, p), (1, 1), (1, 1),
                              1, False, False)
    pl = plan_f16.plan_wgrad_coopmat(geom(8, 256, 28, 3, 256), _h100_key(), "")
    d = dict(pl.defines)
    assert pl.shader == "ops/conv_coopmat_wgrad.comp" and (d["BM"], d["BN"], d["SG_M"], d["SG_N"]) == (128, 128, 2, 4)
    assert pl.grid[:2] == (4, 9) and pl.splits == pl.grid[2] > 1  # 2 x 2 channel tiles, 9 taps
    pl = plan_f16.plan_wgrad_coopmat(geom(32, 64, 56, 3, 64), _h100_key(), "")
    d = dict(pl.defines)
    assert (d["BM"], d["BN"], d["SG_M"], d["SG_N"], pl.workgroup) == (64, 64, 2, 2, 128)
    assert pl.grid == (1, 9, 2 * 132 // 9)  # about two workgroups per multiprocessor
    pl = plan_f16.plan_wgrad_coopmat(geom(32, 64, 56, 3, 64), _h100_key(), "wgrad16.splits=5")
    assert (pl.splits, pl.grid) == (5, (1, 9, 5))
    # A first layer's 3 channels: all 147 (channel, tap) columns in one tile, gathered in place.
    pl = plan_f16.plan_wgrad_coopmat(geom(16, 3, 64, 7, 64, 2, 3), _h100_key(), "")
    d = dict(pl.defines)
    assert pl.shader == "ops/conv_coopmat_wgrad_gather.comp" and (d["PF"], d["BK"], pl.workgroup) == (10, 16, 256)
    assert pl.grid == (pl.splits, 1, 1) and 1 < pl.splits <= 2 * 132
    # Under 16 output channels, the cast path, or no cooperative matrices: the float32 kernels.
    assert plan_f16.plan_wgrad_coopmat(geom(16, 3, 64, 7, 8, 2, 3), _h100_key(), "") is None
    assert plan_f16.plan_wgrad_coopmat(geom(8, 256, 28, 3, 256), _h100_key(), "wgrad16.path=cast") is None
    assert plan_f16.plan_wgrad_coopmat(geom(8, 256, 28, 3, 256), None, "") is None
    # A batch beyond the packing grid's z limit (65535): neither packed kernel.
    huge = geom(70000, 16, 2, 1, 16, p=0)
    assert plan_f16.plan_wgrad_coopmat(huge, _h100_key(), "") is None
    assert plan_f16.plan_coopmat(huge, False, _h100_key(), "f16.path=packed").shader == "ops/conv_coopmat.comp"
    with pytest.raises(ValueError, match="backward-weight plan"):
        plan_f16.plan_wgrad_coopmat(geom(8, 256, 28, 3, 256), _h100_key(), "wgrad16.BM=24")


def test_float16_plan_uses_cooperative_matrices_where_the_device_has_them():
    dev = vk.device()
    geom = geometry.build("t", (2, 16, 8, 8), (24, 16, 3, 3), 2, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1),
                          1, False, False)
    key = kernels.coopmat_key(dev)
    if dev.has_cooperative_matrix(16, 16, 16) and kernels.COOPMAT_FEATURES <= dev.features:
        assert key is not None or dev.min_subgroup_size != dev.max_subgroup_size
    else:
        assert key is None  # and the float32 kernels run instead (the test above)
    # The planner itself, for an H100-like key (no GPU work).
    pl = plan_f16.plan_coopmat(geom, True, _h100_key(), "")
    d = dict(pl.defines)
    assert pl.shader == "ops/conv_coopmat_packed.comp" and (d["BM"], d["BN"], d["BK"]) == (128, 32, 32)
    assert pl.workgroup == d["SG_M"] * d["SG_N"] * 32 == 256 and d["HAS_BIAS"] == 1
    # Few input channels (a first layer), or one tap: the kernel that gathers from the original layout.
    first = geometry.build("t", (2, 3, 16, 16), (24, 3, 7, 7), 2, (2, 2), (3, 3), (3, 3), (1, 1), (1, 1),
                           1, False, False)
    one_tap = geometry.build("t", (2, 64, 8, 8), (64, 64, 1, 1), 2, (1, 1), (0, 0), (0, 0), (1, 1), (1, 1),
                             1, False, False)
    for gm in (first, one_tap):
        pl = plan_f16.plan_coopmat(gm, False, _h100_key(), "")
        assert pl.shader == "ops/conv_coopmat.comp" and dict(pl.defines)["BK"] == 16
    # 128 output channels and more: 128-wide tiles of 2 x 4 subgroups, of 96 rows where that
    # spreads the tiles more evenly over the (132) multiprocessors: n8 c256 28x28 runs 66 x 2
    # tiles, 32 x 56 x 56 positions 784 x 2 of 128 rows (12 waves either way).
    for (n, h), want in (((8, 28), (96, 128, 2, 4, 66)), ((32, 56), (128, 128, 2, 4, 784)), ((2, 8), (96, 128, 2, 4, 2))):
        wide = geometry.build("t", (n, 256, h, h), (256, 256, 3, 3), 2, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1),
                              1, False, False)
        pl = plan_f16.plan_coopmat(wide, False, _h100_key(), "")
        d = dict(pl.defines)
        assert (d["BM"], d["BN"], d["SG_M"], d["SG_N"], pl.grid[0]) == want
    assert plan_f16.plan_coopmat(geom, False, _h100_key(), "f16.path=coopmat").shader == "ops/conv_coopmat.comp"
    with pytest.raises(ValueError, match="float16 plan"):
        plan_f16.plan_coopmat(geom, False, _h100_key(), "f16.BM=48")


def _h100_key():
    """The planners' view of an H100 (NVIDIA's Vulkan driver: 132 multiprocessors)."""
    return kernels.DeviceKey(name="NVIDIA H100 80GB HBM3", software=False, max_shared=49152, max_invocations=1024,
                             max_count=(2147483647, 65535, 65535), subgroup_size=32, min_subgroup_size=32,
                             multiprocessors=132)


@pytest.mark.parametrize("shape,passes", [
    # (N, C_in, H, k, C_out, stride, padding): {pass: expected (BM, BN, BK) or "narrow"}
    ((32, 64, 56, 3, 64, 1, 1), {"fwd": (128, 64, 16), "bwd": (128, 64, 16)}),
    ((8, 256, 28, 3, 256, 1, 1), {"fwd": (128, 64, 8), "bwd": (64, 64, 16)}),
    ((16, 3, 224, 7, 64, 2, 3), {"fwd": (128, 64, 8), "bwd": "narrow"}),
    ((32, 128, 28, 1, 128, 1, 0), {"fwd": (128, 64, 8), "bwd": (128, 64, 8)}),
])
def test_hardware_plan_rules(shape, passes):
    """The planner's rules for a large discrete GPU (no GPU work: plans only)."""
    n, c, h, k, co, s, p = shape
    geom = geometry.build("t", (n, c, h, h), (co, c, k, k), 2, (s, s), (p, p), (p, p), (1, 1), (1, 1),
                          1, False, False)
    for kind, want in passes.items():
        gm = geom if kind == "fwd" else geom.backward_input()
        pl = plan_f32.plan_forward(gm, False, _h100_key(), "")
        d = dict(pl.defines)
        if want == "narrow":
            assert d.get("NARROW") == 1 and d.get("PHASED") == 1 and d["NN"] == 4, pl
            assert pl.workgroup == 256 and pl.grid[1:] == (1, 4)
        else:
            assert (d["BM"], d["BN"], d["BK"]) == want, (kind, pl)
    wg = plan_f32.plan_wgrad(geom, _h100_key(), "")
    assert wg.splits * wg.grid[0] * wg.grid[1] <= 4 * _h100_key().multiprocessors
    assert plan_f32.plan_forward(geom.backward_input(), False, _h100_key(), "path=gemm").shader \
        == "ops/conv_gemm.comp"


def test_plans_are_cached_and_choose_paths():
    dev = vk.device()
    geom = geometry.build("t", (2, 16, 8, 8), (16, 16, 3, 3), 2, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1),
                          1, False, False)
    p1 = select.plan("forward", geom)
    assert select.plan("forward", geom) is p1
    assert p1.shader == "ops/conv_gemm.comp" and dict(p1.defines)["GATHER"] == 1
    dw = geometry.build("t", (2, 8, 8, 8), (8, 1, 3, 3), 2, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1),
                        8, False, False)
    assert select.plan("forward", dw).shader == "ops/conv_direct.comp"
    first = geometry.build("t", (2, 3, 16, 16), (16, 3, 7, 7), 2, (2, 2), (3, 3), (3, 3), (1, 1), (1, 1),
                           1, False, False)
    assert dict(select.plan("forward", first).defines)["GATHER"] == 2
    p = select.plan("forward", geom)
    nt = dict(p.defines)
    assert 2 * nt["BK"] * (nt["BM"] + nt["BN"]) * 4 <= dev.max_shared_memory
    assert p.workgroup <= dev.max_workgroup_invocations


def test_bad_config_is_reported(rng, monkeypatch):
    x, w = rand(rng, 1, 4, 5, 5), rand(rng, 16, 4, 3, 3)
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "BM=48")
    with pytest.raises(ValueError, match="BM=48"):
        vk.conv2d(x, w)
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "path=narrow,NN=6")
    with pytest.raises(ValueError, match="NN=6"):
        vk.conv2d(x, w)
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "path=narrow,CU=17")
    with pytest.raises(ValueError, match="CU=17"):
        vk.conv2d(x, w)
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "colour=blue")
    with pytest.raises(ValueError, match="colour"):
        vk.conv2d(x, w)


# -- bad input --------------------------------------------------------------------------------
def test_bad_inputs_raise_before_gpu_work(rng):
    x = vk.asarray(rand(rng, 2, 4, 6, 6))
    w = vk.asarray(rand(rng, 6, 4, 3, 3))
    w_g2 = vk.asarray(rand(rng, 6, 2, 3, 3))
    x_int = vk.asarray(np.ones((2, 4, 6, 6), np.int32))
    wt = vk.asarray(rand(rng, 4, 3, 3, 3))
    g = vk.asarray(rand(rng, 2, 6, 4, 4))
    vk.synchronize()
    cases = [
        (ValueError, "groups", lambda: vk.conv2d(x, w, groups=3)),
        (ValueError, "output channels", lambda: vk.conv2d(x, w_g2[:5], groups=2)),
        (ValueError, "input channels", lambda: vk.conv2d(x, w_g2)),
        (ValueError, "larger than the padded input", lambda: vk.conv2d(x, w, dilation=3)),
        (ValueError, "stride", lambda: vk.conv2d(x, w, stride=0)),
        (ValueError, "dilation", lambda: vk.conv2d(x, w, dilation=(1, 0))),
        (ValueError, "padding", lambda: vk.conv2d(x, w, padding=-1)),
        (ValueError, "padding", lambda: vk.conv2d(x, w, padding="full")),
        (ValueError, "same", lambda: vk.conv2d(x, w, stride=2, padding="same")),
        (ValueError, "stride", lambda: vk.conv2d(x, w, stride=(1, 1, 1))),
        (ValueError, "input", lambda: vk.conv2d(x.reshape(1, 2, 4, 6, 6), w)),
        (ValueError, "weight", lambda: vk.conv2d(x, w.reshape(6, 4, 9))),
        (ValueError, "weight", lambda: vk.conv_general(x, w.reshape(6, 4, 9, 1, 1, 1))),
        (ValueError, "groups", lambda: vk.conv2d(x, w, groups=0)),
        (TypeError, "groups", lambda: vk.conv2d(x, w, groups=1.5)),
        (TypeError, "stride", lambda: vk.conv2d(x, w, stride=1.0)),
        (TypeError, "float32", lambda: vk.conv2d(x_int, w)),
        (TypeError, "float32", lambda: vk.conv2d(np.ones((2, 4, 6, 6), np.int64), w)),
        (ValueError, "input", lambda: vk.conv2d([[1.0]], w)),  # host data is held as asarray holds it
        (ValueError, "bias", lambda: vk.conv2d(x, w, w.reshape(-1)[:5])),
        (ValueError, "input_dilation", lambda: vk.conv_general(x, w, input_dilation=0)),
        (TypeError, "flip", lambda: vk.conv_general(x, w, flip=1)),
        (ValueError, "output_padding", lambda: vk.conv_transpose2d(x, wt, stride=2, output_padding=2)),
        (ValueError, "output_padding", lambda: vk.conv_transpose2d(x, wt, stride=1, dilation=1, output_padding=1)),
        (ValueError, "channels", lambda: vk.conv_transpose2d(x[:1].reshape(1, 2, 12, 6), wt)),
        (ValueError, "groups", lambda: vk.conv_transpose2d(x, wt, groups=3)),
        (ValueError, "cotangent", lambda: vk.conv_vjp(x, w, g[:1])),
        (TypeError, "cotangent", lambda: vk.conv_vjp(x, w, x_int)),
        (TypeError, "weight float16", lambda: vk.conv2d(x, np.ones((6, 4, 3, 3), np.float16))),
        (TypeError, "bias float16", lambda: vk.conv2d(x, w, np.ones(6, np.float16))),
        (ValueError, "stride", lambda: vk.conv_vjp(x, w, g, stride=0)),
    ]
    for exc, word, call in cases:
        with no_gpu_work(), pytest.raises(exc, match=word):
            call()
