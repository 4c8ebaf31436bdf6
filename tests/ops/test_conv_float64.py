"""The convolutions in float64 (ops/conv/f64.py: an im2col matrix and matmul's float64 kernel)
against the float64 references of test_conv.py, elementwise within a bound of float64's rounding
(k eps times the sum of the terms' magnitudes: a float32 step anywhere exceeds it by ~1e8): every
geometry of the general convolution, the transposed ones, 1 to 3 spatial axes, groups, bias,
unbatched input, the batch taken in slices; the gradients against finite differences of the
reference (exact: the loss is linear in each argument) and the adjoint identity. Outputs are
poisoned (conftest)."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.ops.conv import f64, geometry
from tests.conftest import no_gpu_work
from tests.ops.test_conv import ref_conv, ref_conv_general, ref_conv_transpose

EPS = float(np.finfo(np.float64).eps)


def _v(a):
    return vk.asarray(a, dtype=vk.float64)


def close64(got, ref, absref, terms):
    """|got - ref| <= 4 terms eps |x| * |w| elementwise (absref: the reference on magnitudes)."""
    got = np.asarray(got)
    assert got.dtype == np.float64 and got.shape == ref.shape, (got.dtype, got.shape, ref.shape)
    err = np.abs(got - ref)
    bound = 4 * max(terms, 1) * EPS * absref + 1e-300
    assert (err <= bound).all(), f"max error / bound {np.max(err / bound):.3g}"


@pytest.mark.parametrize("kw", [
    dict(),
    dict(padding_lo=(2, 0), padding_hi=(0, 3), stride=(2, 1)),
    dict(input_dilation=2, padding_lo=1, padding_hi=2, stride=(1, 2)),
    dict(flip=True, padding_lo=1, padding_hi=(1, 2), kernel_dilation=(2, 1)),
    dict(input_dilation=(3, 2), flip=True, groups=2, padding_lo=2, padding_hi=2),
    dict(padding_lo=(-1, 1), padding_hi=(0, -2)),
    dict(padding_lo=(-2, 0), padding_hi=(0, 0), input_dilation=(3, 1)),  # the crop lands between elements
])
def test_conv_general(rng, kw):
    x, w = rng.standard_normal((2, 4, 6, 7)), rng.standard_normal((6, 4 // kw.get("groups", 1), 3, 2))
    args = [kw.get(k, d) for k, d in (("stride", 1), ("padding_lo", 0), ("padding_hi", 0), ("kernel_dilation", 1),
                                      ("input_dilation", 1), ("groups", 1), ("flip", False))]
    got = vk.conv_general(_v(x), _v(w), **kw).numpy()
    close64(got, ref_conv_general(x, w, *args), ref_conv_general(np.abs(x), np.abs(w), *args), w[0].size)


@pytest.mark.parametrize("xs,ws,conv", [
    ((3, 6, 17), (8, 3, 5), dict(stride=3, padding=2, dilation=2, groups=2)),
    ((2, 5, 9, 8), (7, 5, 3, 3), dict(stride=2, padding=1)),
    ((2, 8, 7, 7), (8, 1, 3, 3), dict(padding=1, groups=8)),       # depthwise
    ((2, 20, 6, 5), (12, 20, 1, 1), dict()),                       # 1x1
    ((1, 4, 5, 6, 5), (6, 2, 3, 3, 3), dict(stride=(2, 1, 2), padding=(1, 1, 0), dilation=(1, 2, 1), groups=2)),
])
def test_conv_with_bias_and_vjp(rng, xs, ws, conv):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    nd = len(xs) - 2
    f = getattr(vk, f"conv{nd}d")
    y = f(_v(x), _v(w), _v(b), **conv).numpy()
    shape = (slice(None),) + (None,) * nd
    close64(y, ref_conv(x, w, **conv) + b[shape], ref_conv(np.abs(x), np.abs(w), **conv) + np.abs(b)[shape],
            w[0].size + 1)
    g = rng.standard_normal(y.shape)
    dx, dw, db = vk.conv_vjp(_v(x), _v(w), _v(g), **conv, bias_grad=True)
    assert dx.dtype == dw.dtype == db.dtype == np.float64
    # <conv(x, w), g> = <x, dx> = <w, dw>: exact up to the rounding of the sums
    lhs = (ref_conv(x, w, **conv) * g).sum()
    scale = (ref_conv(np.abs(x), np.abs(w), **conv) * np.abs(g)).sum()
    terms = w[0].size * y[0, 0].size * xs[0]
    for a, da in ((x, dx), (w, dw)):
        assert abs(lhs - (a * da.numpy()).sum()) <= 4 * terms * EPS * scale
    axes = (0,) + tuple(range(2, 2 + nd))
    close64(db.numpy(), g.sum(axis=axes), np.abs(g).sum(axis=axes), g.size // g.shape[1])


def test_vjp_entrywise(rng):
    """Each gradient entry against the reference's finite differences (L is linear in x and w)."""
    x, w = rng.standard_normal((1, 4, 5, 4)), rng.standard_normal((2, 2, 3, 2))
    conv = dict(stride=(1, 2), padding=(1, 0), dilation=(2, 1), groups=2)
    g = rng.standard_normal(ref_conv(x, w, **conv).shape)
    dx, dw = vk.conv_vjp(_v(x), _v(w), _v(g), **conv)
    for a, got, other in ((x, dx, w), (w, dw, x)):
        want = np.zeros_like(a)
        for i in np.ndindex(*a.shape):
            e = np.zeros_like(a)
            e[i] = 1.0
            want[i] = (ref_conv(e, other, **conv) if a is x else ref_conv(other, e, **conv)).__mul__(g).sum()
        np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=64 * EPS * np.abs(g).sum())


@pytest.mark.parametrize("case", [
    # (x shape, w shape, stride, padding, output_padding, groups, dilation)
    ((2, 4, 5), (4, 3, 3), 2, 1, 1, 1, 1),
    ((1, 6, 4, 3), (6, 2, 2, 3), (1, 2), (0, 1), 0, 3, (2, 1)),
    ((1, 2, 3, 2, 3), (2, 3, 2, 3, 2), 2, (0, 1, 0), (1, 1, 0), 1, 1),
])
def test_conv_transpose_and_its_vjp(rng, case):
    xs, ws, stride, padding, output_padding, groups, dilation = case
    nd = len(xs) - 2
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[1] * groups)
    f = getattr(vk, f"conv_transpose{nd}d")
    y = f(_v(x), _v(w), _v(b), stride, padding, output_padding, groups, dilation).numpy()
    shape = (slice(None),) + (None,) * nd
    args = (stride, padding, output_padding, groups, dilation)
    close64(y, ref_conv_transpose(x, w, *args) + b[shape],
            ref_conv_transpose(np.abs(x), np.abs(w), *args) + np.abs(b)[shape], w[:, 0].size + 1)
    g = rng.standard_normal(y.shape)
    dx, dw = vk.conv_transpose_vjp(_v(x), _v(w), _v(g), stride=stride, padding=padding,
                                   output_padding=output_padding, groups=groups, dilation=dilation)
    lhs = (ref_conv_transpose(x, w, *args) * g).sum()
    scale = (ref_conv_transpose(np.abs(x), np.abs(w), *args) * np.abs(g)).sum()
    for a, da in ((x, dx), (w, dw)):
        assert da.dtype == np.float64 and da.shape == a.shape
        assert abs(lhs - (a * da.numpy()).sum()) <= 4 * g.size * w.size * EPS * scale


def test_batch_in_slices_and_unbatched_input(rng, monkeypatch):
    """COLS_BYTES small: the im2col matrix is built for a batch element at a time, forward and
    weight gradient alike; an unbatched input; a view with an element offset."""
    monkeypatch.setattr(f64, "COLS_BYTES", 1)
    x, w = rng.standard_normal((3, 5, 8)), rng.standard_normal((4, 5, 3))
    assert len(f64._batch_slices(geometry.build("t", x.shape, w.shape, 1, (1,), (1,), (1,), (1,), (1,), 1,
                                                False, False))) == 3
    y = vk.conv1d(_v(x), _v(w), padding=1).numpy()
    close64(y, ref_conv(x, w, 1, 1), ref_conv(np.abs(x), np.abs(w), 1, 1), w[0].size)
    g = rng.standard_normal(y.shape)
    _, dw = vk.conv_vjp(_v(x), _v(w), _v(g), padding=1, input_grad=False)
    want = sum((ref_conv(x, e, 1, 1) * g).sum() * e for e in np.eye(w.size).reshape(-1, *w.shape))
    np.testing.assert_allclose(dw.numpy(), want, rtol=0, atol=64 * EPS * np.abs(g).sum() * np.abs(x).max())
    got = vk.conv1d(_v(x)[1], _v(w), padding=1)
    assert got.shape == (4, 8)
    close64(got.numpy(), ref_conv(x[1:2], w, 1, 1)[0], ref_conv(np.abs(x[1:2]), np.abs(w), 1, 1)[0], w[0].size)
    close64(vk.conv1d(_v(x)[1:], _v(w)).numpy(), ref_conv(x[1:], w), ref_conv(np.abs(x[1:]), np.abs(w)), w[0].size)


def test_mixed_dtypes_refused_before_gpu_work(rng):
    x, w = _v(rng.standard_normal((1, 2, 5))), vk.asarray(rng.standard_normal((3, 2, 2)).astype(np.float32))
    with no_gpu_work(), pytest.raises(TypeError, match="share one dtype"):
        vk.conv1d(x, w)
    g = _v(np.zeros((1, 3, 4)))
    with no_gpu_work(), pytest.raises(TypeError, match="share one dtype"):
        vk.conv_vjp(x, w, g)


def test_im2col_past_memory_refused_before_gpu_work(rng, monkeypatch):
    """A batch element's im2col matrix larger than the memory allowed: MemoryError naming it,
    before anything is recorded (forward and vjp)."""
    x, w = _v(rng.standard_normal((1, 8, 64, 64))), _v(rng.standard_normal((4, 8, 5, 5)))
    g = _v(np.zeros((1, 4, 60, 60)))
    monkeypatch.setattr(runtime.get().pool, "capacity", 1 << 20)  # the limit, whatever is in use
    with no_gpu_work(), pytest.raises(MemoryError, match="im2col"):
        vk.conv2d(x, w)
    with no_gpu_work(), pytest.raises(MemoryError, match="im2col"):
        vk.conv_vjp(x, w, g)
