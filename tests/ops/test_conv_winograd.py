"""float32 3x3 convolutions by Winograd (ops/conv/winograd.py): forward, backward-input (a
forward convolution of the cotangent) and backward-weight.

Forced with VKBACKEND_CONV_CONFIG=path=winograd (by default it runs on hardware for wide layers
only), at both tile sizes, against float64 references from test_conv.py: output sizes around the
tiles (1 to 10: partial tiles on either axis), bias, padding that crops or is asymmetric, input
dilation, flip, groups, a transposed weight, a 3-D kernel of depth 1, and more splits than
tiles. Each case counts its Winograd recordings, so none passes on the GEMM kernels.
"""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from vkbackend.ops.conv import geometry
from vkbackend.ops.conv import winograd as wino
from tests.conftest import no_gpu_work
from tests.ops.test_conv import (_h100_key, _ref_vjp, assert_adjoint, close, rand, ref_conv, ref_conv_general,
                                 ref_conv_transpose)

TILES = (2, 4)


def _force(monkeypatch, tile, extra=""):
    """Force the Winograd path for every pass; returns {"forward": [plans], "wgrad": [plans]},
    what was recorded (backward-input counts as a forward)."""
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", f"path=winograd,WT={tile}{extra}")
    calls = {"forward": [], "wgrad": []}
    for kind in calls:
        def spy(geom, p, *args, _record=getattr(wino, f"record_{kind}"), _calls=calls[kind]):
            _calls.append(p)
            return _record(geom, p, *args)
        monkeypatch.setattr(wino, f"record_{kind}", spy)
    return calls


def _ref_dw(conv, x, w_shape, g):
    """dW by its definition (the convolution is linear in w): <conv(x, e_i), g> per weight entry."""
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    dw = np.zeros(w_shape)
    for i in np.ndindex(*w_shape):
        e = np.zeros(w_shape)
        e[i] = 1.0
        dw[i] = (conv(x64, e) * g64).sum()
    return dw


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("xs,co,padding,groups", [
    ((2, 5, 7, 9), 6, 1, 1),         # odd sizes: partial tiles on both axes
    ((3, 4, 3, 1), 6, 1, 2),         # a single output column, groups
    ((1, 3, 4, 5), 4, (0, 1), 1),    # 2 x 5 outputs (no padding along rows)
    ((2, 8, 10, 6), 8, 2, 4),        # padding 2: outputs larger than the input
])
def test_all_passes(rng, monkeypatch, tile, xs, co, padding, groups):
    calls = _force(monkeypatch, tile)
    w, b = rand(rng, co, xs[1] // groups, 3, 3), rand(rng, co)
    x = rand(rng, *xs)
    y = vk.conv2d(x, w, b, padding=padding, groups=groups)
    close(y.numpy(), ref_conv(x, w, 1, padding, 1, groups) + b[:, None, None])
    g = rand(rng, *y.shape)
    dx, dw = vk.conv_vjp(x, w, g, padding=padding, groups=groups)
    ref_dx, ref_dw = _ref_vjp(x, w, g, 1, padding, 1, groups)
    close(dx.numpy(), ref_dx)
    close(dw.numpy(), ref_dw)
    assert [p.tile for p in calls["forward"] + calls["wgrad"]] == [tile] * 3


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("kw", [
    dict(padding_lo=(2, 0), padding_hi=(0, 3)),                               # asymmetric
    dict(padding_lo=(-1, 1), padding_hi=(1, -1), groups=2),                   # cropping
    dict(padding_lo=1, padding_hi=2, input_dilation=(2, 1), flip=True),       # holes, a convolution
])
def test_general(rng, monkeypatch, tile, kw):
    calls = _force(monkeypatch, tile)
    groups = kw.get("groups", 1)
    x, w = rand(rng, 2, 4, 6, 7), rand(rng, 3 * groups, 4 // groups, 3, 3)
    ref_kw = dict(lo=kw["padding_lo"], hi=kw["padding_hi"], idil=kw.get("input_dilation", 1), groups=groups,
                  flip=kw.get("flip", False))
    y = vk.conv_general(x, w, **kw).numpy()
    close(y, ref_conv_general(x, w, **ref_kw))
    g = rand(rng, *y.shape)
    dx, dw = vk.conv_general_vjp(x, w, g, **kw)
    close(dw.numpy(), _ref_dw(lambda a, b: ref_conv_general(a, b, **ref_kw), x, w.shape, g))
    assert_adjoint(x, w, y.astype(np.float64), g, dx.numpy().astype(np.float64), dw.numpy().astype(np.float64))
    # backward-input with input dilation 2 is a stride-2 convolution: the GEMM kernels
    assert len(calls["forward"]) == (1 if "input_dilation" in kw else 2) and len(calls["wgrad"]) == 1


def test_transposed_and_3d(rng, monkeypatch):
    """A transposed convolution's weight (C_in, C_out/groups, 3, 3) is read and written through its
    strides, mirrored; a 3-D kernel of depth 1 takes its first axis as more tiles (stride 2 there)."""
    calls = _force(monkeypatch, 4)
    x, w = rand(rng, 2, 4, 5, 6), rand(rng, 4, 3, 3, 3)
    y = vk.conv_transpose2d(x, w, padding=1, groups=2)
    close(y.numpy(), ref_conv_transpose(x, w, 1, 1, 0, 2, 1))
    g = rand(rng, *y.shape)
    _, dw = vk.conv_transpose_vjp(x, w, g, padding=1, groups=2)
    ref = _ref_dw(lambda a, b: ref_conv_transpose(a, b, (1, 1), (1, 1), (0, 0), 2, (1, 1)), x, w.shape, g)
    close(dw.numpy(), ref)

    x3, w3 = rand(rng, 1, 3, 5, 4, 6), rand(rng, 4, 3, 1, 3, 3)
    conv = dict(stride=(2, 1, 1), padding=(0, 1, 1))
    y3 = vk.conv3d(x3, w3, **conv)
    close(y3.numpy(), ref_conv(x3, w3, **conv))
    g3 = rand(rng, *y3.shape)
    dx3, dw3 = vk.conv_vjp(x3, w3, g3, **conv)
    ref_dx3, ref_dw3 = _ref_vjp(x3, w3, g3, conv["stride"], conv["padding"], 1, 1)
    close(dw3.numpy(), ref_dw3)
    close(dx3.numpy(), ref_dx3)
    # forwards and backward-inputs of both (the 3-D one's input dilation 2 is on the first axis,
    # whose kernel is 1: the holes skip whole tiles, not patch entries)
    assert len(calls["forward"]) == 4 and len(calls["wgrad"]) == 2


@pytest.mark.parametrize("splits", [1, 3, 50])
def test_splits(rng, monkeypatch, splits):
    """The tiles' sum split any number of ways, capped where a split would hold under 4 tiles."""
    calls = _force(monkeypatch, 2, f",wgrad.splits={splits}")
    x, w = rand(rng, 3, 4, 9, 8), rand(rng, 5, 4, 3, 3)
    g = rand(rng, *vk.conv2d(x, w, padding=1).shape)
    _, dw = vk.conv_vjp(x, w, g, padding=1)
    close(dw.numpy(), _ref_vjp(x, w, g, 1, 1, 1, 1)[1])
    (p,) = calls["wgrad"]
    assert p.tiles == 3 * 5 * 4 and p.splits == min(splits, -(-p.tiles // 4))
    assert p.padded % (4 * p.splits) == 0 and p.padded >= p.tiles


@pytest.fixture
def fresh_plans():
    """Plans made under a patched MAX_WORKSPACE are dropped before and after the test."""
    for f in (wino.plan_forward, wino.plan_wgrad):
        f.cache_clear()
    yield
    for f in (wino.plan_forward, wino.plan_wgrad):
        f.cache_clear()


@pytest.mark.parametrize("tile", TILES)
def test_batch_in_chunks(rng, monkeypatch, fresh_plans, tile):
    """A batch whose workspace exceeds MAX_WORKSPACE runs in chunks of images (2, 2, 1 here): the
    forward writes each chunk's outputs, the weight gradient accumulates the chunks' products."""
    calls = _force(monkeypatch, tile)
    x, w, b = rand(rng, 5, 4, 7, 6), rand(rng, 6, 4, 3, 3), rand(rng, 6)
    aa, per_image = (tile + 2) ** 2, -(-7 // tile) * -(-6 // tile)
    fixed = aa * 10 * 4 + aa * 6 * 4   # padding of V and M (or V and U), and U (or M, one split)
    monkeypatch.setattr(wino, "MAX_WORKSPACE", 4 * (fixed + 2 * aa * 10 * per_image + 10))
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", f"path=winograd,WT={tile},wgrad.splits=1")
    y = vk.conv2d(x, w, b, padding=1)
    close(y.numpy(), ref_conv(x, w, 1, 1) + b[:, None, None])
    g = rand(rng, *y.shape)
    dx, dw = vk.conv_vjp(x, w, g, padding=1)
    ref_dx, ref_dw = _ref_vjp(x, w, g, 1, 1, 1, 1)
    close(dx.numpy(), ref_dx)
    close(dw.numpy(), ref_dw)
    assert [p.chunk for p in calls["forward"] + calls["wgrad"]] == [2, 2, 2]
    assert calls["forward"][0].chunks(5) == [(0, 2), (2, 2), (4, 1)]


def test_plan_rules():
    """Defaults on a large discrete GPU: wide 3x3 stride-1 layers only; tiles of 4; 64 x 64 GEMM
    tiles for 64 channels. Other kernels, strides, input dilation (forward) and software devices
    keep the GEMM kernels."""
    key = _h100_key()
    sw = dataclasses.replace(key, name="llvmpipe", software=True)

    def geom(n, c, h, k, co, s=1, dil=1, groups=1):
        return geometry.build("t", (n, c, h, h), (co, c // groups, k, k), 2, (s, s), (1, 1), (1, 1),
                              (dil, dil), (1, 1), groups, False, False)

    with no_gpu_work():
        p = wino.plan_wgrad(geom(8, 256, 28, 3, 256), key, ())
        assert (p.tile, p.gemm, p.tiles) == (4, None, 8 * 7 * 7) and p.splits >= 1
        assert wino.plan_wgrad(geom(32, 64, 56, 3, 64), key, ()).gemm == "small"
        assert wino.plan_wgrad(geom(8, 32, 28, 3, 256), key, ()) is None            # narrow input
        assert wino.plan_wgrad(geom(8, 256, 28, 3, 256, s=2), key, ()) is None      # stride
        assert wino.plan_wgrad(geom(8, 256, 28, 3, 256, dil=2), key, ()) is None    # kernel dilation
        assert wino.plan_wgrad(geom(8, 256, 28, 5, 256), key, ()) is None           # 5x5
        assert wino.plan_wgrad(geom(8, 256, 28, 3, 256), sw, ()) is None            # software device
        assert wino.plan_wgrad(geom(8, 256, 28, 3, 256), key, (("path", "gemm"),)) is None
        assert wino.plan_wgrad(geom(2, 8, 8, 3, 8), sw, (("path", "winograd"),)) is not None
        wide = geom(8, 256, 28, 3, 256)
        p = wino.plan_forward(wide, key, ())
        assert (p.tile, p.gemm, p.tiles, p.splits, p.padded) == (4, "medium", 392, 1, 392)
        assert wino.plan_forward(wide.backward_input(), key, ()) is not None
        holes = dataclasses.replace(wide, id=(1, 2, 2))
        assert wino.plan_forward(holes, key, ()) is None and wino.plan_wgrad(holes, key, ()) is not None
        assert wino.plan_forward(holes, key, (("path", "winograd"),)) is not None
        assert wino.plan_forward(geom(8, 256, 28, 3, 256, s=2).backward_input(), key, ()) is None
        assert wino.plan_forward(geom(32, 64, 56, 3, 64), key, ()).gemm == "small"
        big = geom(256, 64, 56, 3, 64)  # ResNet's first stage at batch 256: chunks of images
        for make in (wino.plan_forward, wino.plan_wgrad):
            p = make(big, key, ())
            assert 32 <= p.chunk < 256 and p.tiles == p.chunk * 14 * 14
        with pytest.raises(ValueError, match="WT=3"):
            wino.plan_wgrad(geom(2, 8, 8, 3, 8), key, (("WT", 3), ("path", "winograd")))
