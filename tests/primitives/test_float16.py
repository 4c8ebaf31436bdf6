"""float16 arrays: held two per word, converted by primitives/cast_half.comp, refused by the ops
that neither compute on it (test_float16_compute.py) nor read it otherwise. References: numpy's own float16 conversions (round to nearest even)."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import assert_rounded_once
from vkbackend.harness import run_shader

# Values past float16's range become inf on purpose (numpy warns about it).
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
SIZES = [0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1001]


def _values(rng, n):
    # Normal numbers, subnormals, values that round up to inf, exact halves (ties), signed zeros.
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-7, 5, n)).astype(np.float32)
    specials = np.array([0.0, -0.0, 65504.0, 65520.0, 1e-8, -7e-8, 1 + 2.0 ** -11, np.inf, -np.inf],
                        np.float32)
    x[: min(n, specials.size)] = specials[: min(n, specials.size)]
    return x


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    bits = np.dtype(f"u{got.dtype.itemsize}")
    bad = np.flatnonzero(got.reshape(-1).view(bits) != want.reshape(-1).view(bits))
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: {got.reshape(-1)[bad[0]]} vs {want.reshape(-1)[bad[0]]}"


@pytest.mark.parametrize("n", SIZES)
def test_astype_round_trip_matches_numpy(rng, n):
    x = _values(rng, n)
    h = vk.asarray(x).astype(np.float16)
    assert h.dtype == np.float16 and h.shape == (n,) and h.nbytes == 2 * n
    _same_bits(h.numpy(), x.astype(np.float16))
    back = vk.asarray(x.astype(np.float16)).astype(np.float32)
    _same_bits(back.numpy(), x.astype(np.float16).astype(np.float32))


def test_views_at_odd_offsets_and_other_dtypes(rng):
    x = _values(rng, 257).astype(np.float16).reshape(1, 257)
    a = vk.asarray(x)
    assert a.dtype == np.float16  # numpy's dtype is kept
    for lo, hi in [(1, 2), (1, 257), (3, 130), (0, 255)]:
        v = a.reshape(257)[lo:hi]
        _same_bits(v.numpy(), x[0, lo:hi])
        _same_bits(v.astype(np.float32).numpy(), x[0, lo:hi].astype(np.float32))
    ints = vk.asarray(np.arange(-40, 40, dtype=np.int32))
    _same_bits(ints.astype(np.float16).numpy(), np.arange(-40, 40).astype(np.float16))
    finite = (np.arange(-20, 20) * 1.75).astype(np.float16)  # float -> int of inf/NaN is undefined
    _same_bits(vk.asarray(finite).astype(np.int32).numpy(), finite.astype(np.int32))
    _same_bits(a.copy().numpy(), x)


@pytest.mark.parametrize("n", [1, 6, 65])
def test_cast_half_shader(rng, n):
    """The shader alone through the harness: halves at an odd offset of the packed input."""
    x = _values(rng, n + 1)
    packed = np.append(x.astype(np.float16), np.float16(0)) if (n + 1) % 2 else x.astype(np.float16)
    (got,) = run_shader("primitives/cast_half.comp", [packed.view(np.uint32)], [((n,), np.float32)],
                        defines={"FROM_HALF": 1}, workgroup=64, push=[n, 1, 0], groups=(1,))
    _same_bits(got, x[1:].astype(np.float16).astype(np.float32))
    (words,) = run_shader("primitives/cast_half.comp", [x], [(((n + 1) // 2,), np.uint32)],
                          defines={"TO_HALF": 1}, workgroup=64, push=[n, 1, 0], groups=(1,))
    half = words.view(np.float16)[:n]
    _same_bits(half, x[1:].astype(np.float16))
    if n % 2:
        assert words.view(np.float16)[n] == 0  # the last word's spare half is written, as zero


def test_ops_that_compute_in_words_refuse_float16():
    h = vk.asarray(np.arange(12, dtype=np.float16).reshape(3, 4))
    calls = {  # (the elementwise functions, reductions, scans and sorting compute on it: test_float16_compute.py)
        "qr": lambda: vk.linalg.qr(h),  # numpy's linalg refuses float16 too
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match="float16"):
            call()
            pytest.fail(f"{name} accepted float16")
    # Views and matmul (float16 in and out, float32 accumulation) do work.
    np.testing.assert_array_equal(h[1].numpy(), np.arange(4, 8, dtype=np.float16))
    np.testing.assert_allclose((h @ h.reshape(4, 3)).numpy(),
                               np.arange(12.0).reshape(3, 4) @ np.arange(12.0).reshape(4, 3))


@pytest.mark.parametrize("n", [1, 2, 3, 33, 256, 257])
def test_full_zeros_ones(n):
    """Filled by whole words of two halves (any device), numpy's rounding of the value."""
    for value in (1.0, 0.1, -0.0, 70000.0, float("nan"), 1e-7):
        _same_bits(vk.full((n,), value, np.float16).numpy(), np.full((n,), value, np.float16))
    _same_bits(vk.zeros((n, 2), dtype=np.float16).numpy(), np.zeros((n, 2), np.float16))
    _same_bits(vk.ones(n, dtype=vk.float16).numpy(), np.ones(n, np.float16))
    _same_bits(vk.full_like(vk.ones(n, dtype=vk.float16), 2.5).numpy(), np.full(n, 2.5, np.float16))
    for args in ((0, n), (0.5, n / 3, 0.1), (-2, 2, 1e-3 * 4 / max(n, 1) + 0.01)):
        _same_bits(vk.arange(*args, dtype=vk.float16).numpy(), np.arange(*args, dtype=np.float16))


def test_transposes(rng):
    """transpose, .T, swapaxes, moveaxis (layout.py) as permute_dims and .mT: the halves' bits."""
    x = rng.standard_normal((3, 70, 33)).astype(np.float16)
    x.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    h = vk.asarray(x)
    _same_bits(vk.transpose(h).numpy(), x.transpose())
    _same_bits(h.T.numpy(), x.T)
    _same_bits(vk.transpose(h, (1, 0, 2)).numpy(), x.transpose(1, 0, 2))
    _same_bits(vk.swapaxes(h, 1, 2).numpy(), np.swapaxes(x, 1, 2))
    _same_bits(vk.moveaxis(h, 0, -1).numpy(), np.moveaxis(x, 0, -1))
    _same_bits(h.mT.numpy(), np.swapaxes(x, -1, -2))
    _same_bits(vk.permute_dims(h, (2, 0, 1)).numpy(), x.transpose(2, 0, 1))


def test_gathers(rng):
    """take and getitem's gathers and strided copies move the halves as 16-bit words (where the
    device has 16-bit storage: lavapipe and the GPUs tested do): numpy's bits."""
    x = rng.standard_normal((9, 37)).astype(np.float16)
    x.reshape(-1)[:3] = [np.nan, -0.0, -np.inf]
    h = vk.asarray(x)
    idx = rng.integers(0, 37, 11)
    _same_bits(vk.take(h, idx, axis=1).numpy(), np.take(x, idx, axis=1))
    _same_bits(vk.take(h, [5, 0, 300]).numpy(), np.take(x, [5, 0, 300]))
    _same_bits(h[np.array([2, 0, 8])].numpy(), x[[2, 0, 8]])
    _same_bits(h[:, ::3].numpy(), x[:, ::3])
    _same_bits(h[::-2, 1:30:7].numpy(), x[::-2, 1:30:7])
    _same_bits(h[1:][:, np.array([3, 3, 1])].numpy(), x[1:][:, [3, 3, 1]])


def test_joins(rng):
    """concatenate/concat/stack: float16 with float16 stays float16 (its bits), with float32 it is
    float32 (numpy's promotion), host float16 data too."""
    x = rng.standard_normal((3, 5)).astype(np.float16)
    y = rng.standard_normal((2, 5)).astype(np.float32)
    h = vk.asarray(x)
    _same_bits(vk.concatenate([h, h]).numpy(), np.concatenate([x, x]))
    _same_bits(vk.concat([h, h], axis=None).numpy(), np.concatenate([x, x], axis=None))
    _same_bits(vk.concatenate([h, x[:1]]).numpy(), np.concatenate([x, x[:1]]))
    _same_bits(vk.stack([h, h], axis=1).numpy(), np.stack([x, x], axis=1))
    _same_bits(vk.concat([h, vk.asarray(y)]).numpy(), np.concatenate([x, y]))
    _same_bits(vk.concatenate([vk.asarray(y), h]).numpy(), np.concatenate([y, x]))


@pytest.mark.parametrize("n", [1, 7, 33, 257])
def test_more_functions_take_float16(rng, n):
    """diff, count_nonzero, searchsorted, take/put_along_axis, put, outer and cross on float16, bit
    for bit numpy's (their arithmetic in float32, each result rounded to float16 as numpy's float16
    loops round); vecdot and tensordot sum in float32 and round once: within half an ulp of the
    exact sum, plus the float32 sum's own error."""
    x = (rng.standard_normal((3, n)) * 10.0 ** rng.integers(-3, 1)).astype(np.float16)  # sums within range
    x[0, 0] = -0.0
    h = vk.asarray(x)
    _same_bits(vk.diff(h, axis=1).numpy(), np.diff(x, axis=1))
    _same_bits(vk.diff(h, axis=0, n=2, append=x[:1]).numpy(), np.diff(x, axis=0, n=2, append=x[:1]))
    _same_bits(vk.count_nonzero(h, axis=1).numpy(), np.count_nonzero(x, axis=1).astype(np.int32))
    s = np.sort(x[1])
    order = np.argsort(x[2]).astype(np.int32)
    for side in ("left", "right"):
        _same_bits(vk.searchsorted(vk.asarray(s), h[0], side=side).numpy(),
                    np.searchsorted(s, x[0], side=side).astype(np.int32))
        _same_bits(vk.searchsorted(h[2], h[0], side=side, sorter=vk.asarray(order)).numpy(),
                    np.searchsorted(x[2], x[0], side=side, sorter=order).astype(np.int32))
    idx = rng.integers(0, n, (3, 5)).astype(np.int32)
    _same_bits(vk.take_along_axis(h, vk.asarray(idx), axis=1).numpy(), np.take_along_axis(x, idx, axis=1))
    vals = rng.standard_normal((3, 5)).astype(np.float16)
    got, want = vk.asarray(x), x.copy()
    vk.put_along_axis(got, vk.asarray(idx), vk.asarray(vals), axis=1)
    np.put_along_axis(want, idx, vals, axis=1)
    _same_bits(got.numpy(), want)
    got, want = vk.asarray(x), x.copy()
    vk.put(got, [0, n - 1, 2 * n], [1.5, -2.25, 7.0])
    np.put(want, [0, n - 1, 2 * n], [1.5, -2.25, 7.0])
    _same_bits(got.numpy(), want)
    _same_bits(vk.linalg.outer(h[0], h[1]).numpy(), np.outer(x[0], x[1]))
    if n >= 3:
        _same_bits(vk.linalg.cross(h[:, :3], h[:, -3:]).numpy(), np.cross(x[:, :3], x[:, -3:]))
    x64 = x.astype(np.float64)
    for got, exact in ((vk.vecdot(h, h), (x64 * x64).sum(axis=1)),
                       (vk.tensordot(h, vk.asarray(np.ascontiguousarray(x.T)), axes=1), x64 @ x64.T)):
        assert got.dtype == vk.float16
        assert_rounded_once(got.numpy(), exact, n * 2.0 ** -23 * np.abs(exact) + 2.0 ** -24)


def test_norms_of_float16(rng):
    """vector_norm and matrix_norm of float16 (numpy's result dtype), normed in float32 and rounded
    once: within half a float16 ulp of the exact norm (plus float32's error); no overflow where
    the squares pass float16's range (numpy's float16 norm of [300, 400] is inf)."""
    x = (rng.standard_normal((4, 33)) * 4).astype(np.float16)
    x64 = x.astype(np.float64)
    h = vk.asarray(x)

    def close(got, exact):
        assert got.dtype == vk.float16
        assert_rounded_once(got.numpy(), exact, 1e-6 * np.abs(exact) + 2.0 ** -25)
    for ord in (2, 1, 3, 0, -1, np.inf, -np.inf):
        close(vk.linalg.vector_norm(h, axis=1, ord=ord), np.linalg.vector_norm(x64, axis=1, ord=ord))
    close(vk.linalg.vector_norm(h, keepdims=True), np.linalg.vector_norm(x64, keepdims=True))
    for ord in ("fro", 1, -1, np.inf, 2, "nuc"):
        close(vk.linalg.matrix_norm(h.reshape((4, 3, 11)), ord=ord),
              np.linalg.matrix_norm(x64.reshape(4, 3, 11), ord=ord))
    got = vk.linalg.vector_norm(vk.asarray(np.array([300, 400], np.float16)))
    assert got.dtype == vk.float16 and got.numpy() == 500


@pytest.mark.parametrize("deterministic", [False, True])
def test_scatter_add_float16(rng, deterministic):
    """scatter_add into float16 (np.add.at's values cast to float16 first, float32 host values
    too), summed in float32 and rounded once: within half a float16 ulp of the exact sum."""
    a = rng.standard_normal((33, 5)).astype(np.float16)
    idx = rng.integers(0, 33, (70, 5)).astype(np.int32)  # duplicates
    v = rng.standard_normal((70, 5)).astype(np.float32)
    got = vk.scatter_add(vk.asarray(a), vk.asarray(idx), v, 0, deterministic=deterministic)
    assert got.dtype == vk.float16 and got.shape == a.shape
    want = a.astype(np.float64)
    for j in range(5):
        np.add.at(want[:, j], idx[:, j], v[:, j].astype(np.float16).astype(np.float64))
    assert_rounded_once(got.numpy(), want, 1e-6 * np.abs(want).max())
