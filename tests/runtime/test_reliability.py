"""Issue 15: float16 in the mask/compaction ops, strided_copy staying inside its array, and
errors that explain (array-likes in *_like, an unusable VKBACKEND_CACHE_DIR, comparisons with None)."""
import textwrap
import warnings

import numpy as np
import pytest

import vkbackend as vk
from vkbackend.runtime import compiler

from tests.conftest import no_gpu_work

HALF_SPECIALS = np.concatenate([
    np.array([0.0, -0.0, np.nan, 6e-8, -6e-8, 65504.0, -65504.0, np.inf, 1.0, 0.0], np.float16),
    np.array([0x7D55, 0xFD01], np.uint16).view(np.float16)])  # NaNs with payloads: kept bit for bit


def _halves(rng, n):
    """float16 data with about half zeros (of both signs) and the specials up front."""
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-7, 4, n)).astype(np.float16)
    x[rng.random(n) < 0.5] = 0.0
    x[rng.random(n) < 0.1] = -0.0
    k = min(n, HALF_SPECIALS.size)
    x[:k] = HALF_SPECIALS[:k]
    return x


# -- 1. float16 in nonzero / flatnonzero / a[mask] ----------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_float16_flatnonzero_and_nonzero_match_numpy(rng, n):
    x = _halves(rng, n)
    a = vk.asarray(x)
    assert a.dtype == np.float16
    np.testing.assert_array_equal(vk.flatnonzero(a).numpy(), np.flatnonzero(x))
    (got,) = vk.nonzero(a)
    np.testing.assert_array_equal(got.numpy(), np.nonzero(x)[0])
    if n > 1:  # a view at an odd half offset (the second half of a word)
        np.testing.assert_array_equal(vk.flatnonzero(a[1:]).numpy(), np.flatnonzero(x[1:]))


def test_float16_nonzero_2d(rng):
    x = _halves(rng, 7 * 9).reshape(7, 9)
    got = vk.nonzero(vk.asarray(x))
    for g, w in zip(got, np.nonzero(x)):
        np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("n", [1, 7, 64, 1000])
def test_float16_mask_selection_matches_numpy(rng, n):
    x = _halves(rng, n)
    a = vk.asarray(x)
    mask = rng.random(n) < 0.5
    want = x[mask]
    for got in (a[vk.asarray(mask)], a[mask], vk.compress_mask(a, vk.asarray(mask))):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))
    # rows of a 2-D float16 array under a leading-dim mask
    x2 = x[: (n // 2) * 2].reshape(-1, 2)
    if x2.size:
        m2 = mask[: x2.shape[0]]
        got = vk.compress_mask(vk.asarray(x2), vk.asarray(m2)).numpy()
        np.testing.assert_array_equal(got.view(np.uint16), x2[m2].view(np.uint16))
    # float16 conditions of where are read as values, not words
    np.testing.assert_array_equal(vk.where(a, 1.0, 2.0).numpy(), np.where(x, 1.0, 2.0))


def test_float16_bad_mask_is_refused_before_gpu_work():
    a = vk.asarray(np.arange(6, dtype=np.float16))
    with no_gpu_work():
        with pytest.raises(IndexError, match="size of axis is 6 but size of corresponding boolean axis is 5"):
            vk.compress_mask(a, np.ones(5, bool))
        with pytest.raises(TypeError, match="must be bool"):
            vk.compress_mask(a, np.ones(6, np.int32))


# -- 2. strided_copy stays inside the array -----------------------------------------------------

def test_strided_copy_outside_the_array_raises_before_gpu_work(rng):
    x = rng.standard_normal(12).astype(np.float32)
    a = vk.asarray(x)
    v = a[2:8]  # a view: buffer offset 2, 6 elements, storage on both sides
    assert v.offset == a.offset + 2 and v.size == 6
    cases = [
        (a, (13,), (1,), None, 12),            # one past the end (into the pool's slack)
        (a, (4, 4), (4, 1), None, 15),
        (a, (2,), (11,), a.offset + 1, 12),
        (v, (7,), (1,), None, 6),              # past the view, though inside the buffer
        (v, (3,), (-1,), v.offset + 1, 1),     # before the view's first element
        (v, (2,), (1,), v.offset - 1, 0),
    ]
    with no_gpu_work():
        for arr, shape, strides, offset, largest in cases:
            with pytest.raises(ValueError, match=rf"largest index {largest}\b.*\[0, {arr.size}\)"):
                vk.strided_copy(arr, shape, strides, offset)


def test_strided_copy_inside_the_array_matches_as_strided(rng):
    x = rng.standard_normal(24).astype(np.float32)
    a = vk.asarray(x)
    as_strided = np.lib.stride_tricks.as_strided
    s = x.itemsize
    for shape, strides, start in [((24,), (1,), 0), ((4, 6), (6, 1), 0), ((6, 4), (1, 6), 0),
                                  ((3, 3), (-6, 2), 18), ((5, 3), (0, 1), 21), ((2, 2, 2), (12, 3, 1), 1)]:
        want = as_strided(x[start:], shape, tuple(st * s for st in strides)) if min(strides) >= 0 else \
            np.array([[x[start + i * strides[0] + j * strides[1]] for j in range(shape[1])]
                      for i in range(shape[0])], np.float32)
        got = vk.strided_copy(a, shape, strides, a.offset + start).numpy()
        np.testing.assert_array_equal(got, want)
    v = a[4:20]  # relative to a view: its last element is fine, one more is not
    np.testing.assert_array_equal(vk.strided_copy(v, (4, 4), (4, 1)).numpy(), x[4:20].reshape(4, 4))
    np.testing.assert_array_equal(vk.strided_copy(v, (2,), (15,)).numpy(), x[[4, 19]])


# -- 3. errors that explain ---------------------------------------------------------------------

@pytest.mark.parametrize("like", [[1, 2, 3], [[1.5, 2.0]], [True, False], np.arange(6, dtype=np.int64).reshape(2, 3),
                                  np.ones(3, np.uint16), 7, ()])
def test_like_functions_take_array_likes(like):
    host = np.asarray(like)
    want_dtype = vk.asarray(host).dtype  # numpy's dtype narrowed to 32 bits
    for name, np_fn, args in [("zeros_like", np.zeros_like, ()), ("ones_like", np.ones_like, ()),
                              ("full_like", np.full_like, (3,)), ("empty_like", np.empty_like, ())]:
        got = getattr(vk, name)(like, *args)
        assert got.shape == host.shape and got.dtype == want_dtype, (name, got.shape, got.dtype)
        if name != "empty_like":
            np.testing.assert_array_equal(got.numpy(), np_fn(host, *args))
    assert vk.zeros_like([1, 2, 3], dtype=np.float32).dtype == np.float32


def test_like_functions_refuse_non_arrays_by_name():
    with no_gpu_work():
        with pytest.raises(TypeError, match="zeros_like.*object"):
            vk.zeros_like([object()])


_SHADER = textwrap.dedent("""\
    #version 450
    layout(local_size_x = 1) in;
    layout(std430, binding = 0) buffer B { uint b[]; };
    void main() { b[gl_GlobalInvocationID.x] = VALUE; }
    """)


def test_unusable_cache_dir_warns_once_and_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    bad = blocker / "cache"
    monkeypatch.setenv("VKBACKEND_CACHE_DIR", str(bad))
    monkeypatch.setattr(compiler, "_memory", {})
    src = tmp_path / "s.comp"
    src.write_text(_SHADER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = compiler.compile_shader(str(src), {"VALUE": "1u"})
        second = compiler.compile_shader(str(src), {"VALUE": "2u"})
    assert first[:4] == second[:4] == b"\x03\x02\x23\x07"  # SPIR-V
    ours = [w for w in caught if "VKBACKEND_CACHE_DIR" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert str(bad) in str(ours[0].message)
    assert not bad.exists()


def test_comparison_with_none_follows_numpy():
    x = np.array([[1.0, np.nan, 0.0]], np.float32)
    a = vk.asarray(x)
    for got, want in [(a == None, x == None), (a != None, x != None),  # noqa: E711
                      (None == a, None == x), (None != a, None != x),  # noqa: E711
                      (vk.equal(a, None), np.equal(x, None)), (vk.not_equal(None, a), np.not_equal(None, x))]:
        assert isinstance(got, vk.Array) and got.dtype == np.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    h = vk.asarray(np.ones(3, np.float16))  # needs no arithmetic on the halves
    np.testing.assert_array_equal((h == None).numpy(), [False] * 3)  # noqa: E711


def test_float16_copy_keeps_every_bit(rng):
    """astype(float16) of a float16 array, and .copy(), at odd offsets too: numpy's bits."""
    x = _halves(rng, 101)
    a = vk.asarray(x)
    for got, want in ((a.copy(), x), (a.astype(np.float16), x), (a[3:].copy(), x[3:])):
        np.testing.assert_array_equal(got.numpy().view(np.uint16), want.view(np.uint16))
