"""The array API's manipulation functions (vkbackend/primitives/manipulation.py) against numpy."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
MOVED = DTYPES + [np.float16]  # functions that only move elements take float16 too
# Around subgroup (4, 8, 16) and workgroup (64, 256) sizes, 0-d and 0-size.
SHAPES = [(), (0,), (1,), (4,), (7,), (9,), (16,), (17,), (63,), (65,), (255,), (257,), (3, 0, 2),
          (8, 8), (5, 17), (2, 3, 4), (3, 1, 65), (2, 2, 2, 2, 3)]


def pair(rng, shape, dtype=np.float32):
    x = random_array(rng, shape, dtype)
    return x, vk.asarray(x)


def dispatches():
    vk.synchronize()
    return vk.stats()["dispatches"]


# -- views -------------------------------------------------------------------------------------

def test_squeeze_expand_dims_reshape_are_views(rng):
    x, a = pair(rng, (1, 3, 1, 5, 1))
    before = dispatches()
    cases = [(vk.squeeze(a, axis=0), np.squeeze(x, 0)), (vk.squeeze(a, axis=(0, -1)), np.squeeze(x, (0, 4))),
             (vk.squeeze(a, 2), np.squeeze(x, 2)), (vk.squeeze(a), np.squeeze(x)),
             (vk.expand_dims(a, axis=0), np.expand_dims(x, 0)), (vk.expand_dims(a, axis=-1), np.expand_dims(x, -1)),
             (vk.expand_dims(a, axis=5), np.expand_dims(x, 5)), (vk.expand_dims(a, axis=-6), np.expand_dims(x, -6)),
             (vk.expand_dims(a, axis=(0, 3)), np.expand_dims(x, (0, 3))),
             (vk.reshape(a, (5, 3)), x.reshape(5, 3)), (vk.reshape(a, -1), x.reshape(-1)),
             (vk.reshape(a, (3, -1), copy=False), x.reshape(3, -1))]
    assert dispatches() == before
    for got, want in cases:
        assert got._storage is a._storage
        check(got, want)
    c = vk.reshape(a, (15,), copy=True)
    assert c._storage is not a._storage
    check(c, x.reshape(15))


@pytest.mark.parametrize("dtype", MOVED)
def test_views_of_every_dtype_and_0d(rng, dtype):
    x, a = pair(rng, (), dtype)
    check(vk.expand_dims(a, axis=0), x[None])
    check(vk.squeeze(vk.expand_dims(a, axis=0), axis=0), x)
    check(vk.reshape(a, (1, 1)), x.reshape(1, 1))
    y, b = pair(rng, (4, 1, 9), dtype)
    check(vk.squeeze(b, axis=1), y[:, 0])


def test_squeeze_expand_dims_reshape_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (1, 3), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="axis 1 of length 3"):
            vk.squeeze(a, axis=1)
        with pytest.raises(np.exceptions.AxisError):
            vk.squeeze(a, axis=2)
        with pytest.raises(ValueError, match="repeated axis"):
            vk.squeeze(a, axis=(0, -2))
        with pytest.raises(IndexError):  # the standard's error; numpy's AxisError is one
            vk.expand_dims(a, axis=3)
        with pytest.raises(IndexError):
            vk.expand_dims(a, axis=-4)
        with pytest.raises(ValueError, match="repeated axis"):
            vk.expand_dims(a, axis=(0, 0))
        with pytest.raises(TypeError, match="integer"):
            vk.expand_dims(a, axis=1.0)
        with pytest.raises(ValueError, match="cannot reshape"):
            vk.reshape(a, (2, 2))
        with pytest.raises(TypeError, match="copy"):
            vk.reshape(a, (3,), copy="yes")
        with pytest.raises(TypeError, match="vk.Array"):
            vk.squeeze(np.ones((1, 3)), axis=0)


# -- flip --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
def test_flip_shapes(rng, shape):
    x, a = pair(rng, shape, np.int32)
    check(vk.flip(a), np.flip(x))
    for axis in range(-len(shape), len(shape)):
        check(vk.flip(a, axis=axis), np.flip(x, axis))
    if len(shape) >= 2:
        check(vk.flip(a, axis=(0, -1)), np.flip(x, (0, -1)))


@pytest.mark.parametrize("dtype", MOVED)
def test_flip_dtypes_and_views(rng, dtype):
    x, a = pair(rng, (33, 1, 7), dtype)
    check(vk.flip(a, axis=(0, 2)), np.flip(x, (0, 2)))
    view = vk.flip(a, axis=1)  # nothing moves along an axis of length 1: numpy gives a view too
    assert view._storage is a._storage
    check(view, np.flip(x, 1))
    check(vk.flip(a[5], axis=-1), np.flip(x[5], -1))  # a view at an offset


# -- roll --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
def test_roll_shapes(rng, shape):
    x, a = pair(rng, shape, np.float32)
    n = max(1, x.size)
    for shift in (0, 1, -1, 3, n, -n - 2, 10 * n + 1):
        check(vk.roll(a, shift), np.roll(x, shift))
    for axis in range(-len(shape), len(shape)):
        s = int(rng.integers(-20, 20))
        check(vk.roll(a, s, axis=axis), np.roll(x, s, axis))


def test_roll_several_axes(rng):
    x, a = pair(rng, (5, 6, 7, 3, 2), np.int32)
    check(vk.roll(a, (1, -2), axis=(0, 2)), np.roll(x, (1, -2), (0, 2)))
    check(vk.roll(a, 2, axis=(1, 3)), np.roll(x, 2, (1, 3)))          # one shift, several axes
    check(vk.roll(a, (1, 4), axis=1), np.roll(x, (1, 4), 1))          # several shifts, one axis
    check(vk.roll(a, (1, 2, -1), axis=(0, 0, 4)), np.roll(x, (1, 2, -1), (0, 0, 4)))  # repeated axes add
    shifts = tuple(int(s) for s in rng.integers(1, 9, 5))
    check(vk.roll(a, shifts, axis=(0, 1, 2, 3, 4)), np.roll(x, shifts, (0, 1, 2, 3, 4)))  # two passes
    check(vk.roll(a, (3, 4)), np.roll(x, (3, 4)))                     # axis None: shifts add up


@pytest.mark.parametrize("dtype", MOVED)
def test_roll_dtypes(rng, dtype):
    x, a = pair(rng, (17, 65), dtype)
    check(vk.roll(a, (5, -9), axis=(0, 1)), np.roll(x, (5, -9), (0, 1)))
    check(vk.roll(a[3:9], 7), np.roll(x[3:9], 7))


def test_roll_flip_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="same length"):
            vk.roll(a, (1, 2), axis=(0, 1, 1))
        with pytest.raises(np.exceptions.AxisError):
            vk.roll(a, 1, axis=2)
        with pytest.raises(TypeError, match="shift"):
            vk.roll(a, 1.5)
        with pytest.raises(TypeError, match="shift"):
            vk.roll(a, True)
        with pytest.raises(np.exceptions.AxisError):
            vk.flip(a, axis=-3)
        with pytest.raises(ValueError, match="repeated"):
            vk.flip(a, axis=(1, -1))


# -- broadcast_to, broadcast_arrays ----------------------------------------------------------------

@pytest.mark.parametrize("shape,target", [((), (5,)), ((1,), (257,)), ((3,), (4, 3)), ((4, 1), (4, 65)),
                                          ((2, 1, 3), (5, 2, 4, 3)), ((1, 1), (0, 7)), ((0,), (3, 0)),
                                          ((5, 3), (5, 3)), ((3,), (1, 1, 3))])
@pytest.mark.parametrize("dtype", MOVED)
def test_broadcast_to(rng, shape, target, dtype):
    x, a = pair(rng, shape, dtype)
    check(vk.broadcast_to(a, target), np.broadcast_to(x, target))


def test_broadcast_to_without_repeats_is_a_view(rng):
    x, a = pair(rng, (3, 5))
    before = dispatches()
    b = vk.broadcast_to(a, (1, 1, 3, 5))
    assert dispatches() == before and b._storage is a._storage
    check(b, x[None, None])


def test_broadcast_arrays(rng):
    x, a = pair(rng, (3, 1), np.int32)
    y, b = pair(rng, (1, 4), np.float32)
    z = random_array(rng, (4,), np.uint32)  # host data is uploaded
    got = vk.broadcast_arrays(a, b, z)
    want = np.broadcast_arrays(x, y, z)
    assert isinstance(got, list) and len(got) == 3
    for g, w in zip(got, want):
        check(g, w)
    assert vk.broadcast_arrays() == []
    check(vk.broadcast_arrays(a)[0], x)


def test_broadcast_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 2), np.float32))
    b = vk.asarray(np.ones(4, np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match=r"cannot broadcast an array of shape \(3, 2\) to shape \(3, 3\)"):
            vk.broadcast_to(a, (3, 3))
        with pytest.raises(ValueError, match="cannot broadcast"):
            vk.broadcast_to(a, (2,))
        with pytest.raises(ValueError, match="negative"):
            vk.broadcast_to(a, (-1, 2))
        with pytest.raises(TypeError, match="shape"):
            vk.broadcast_to(a, "3,2")
        with pytest.raises(ValueError, match="do not broadcast"):
            vk.broadcast_arrays(a, b)
        with pytest.raises(TypeError, match=r"arrays\[1\]"):
            vk.broadcast_arrays(a, object())


# -- tile, repeat ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,reps", [((), (3,)), ((4,), (2,)), ((4,), 3), ((7,), (0,)), ((3, 5), (2, 1)),
                                        ((3, 5), (1, 3)), ((2, 3), (2, 2, 2)), ((2, 3, 4), (3,)),
                                        ((0, 3), (2, 2)), ((16,), (1, 16)), ((5, 1, 3), (2, 64, 1)),
                                        ((2, 3, 2, 3, 2, 3), (2, 2, 3, 2, 2, 2))])  # the last: split in two copies
@pytest.mark.parametrize("dtype", MOVED)
def test_tile(rng, shape, reps, dtype):
    x, a = pair(rng, shape, dtype)
    check(vk.tile(a, reps), np.tile(x, reps))


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 0, 3), (2, 3, 65)])
@pytest.mark.parametrize("dtype", MOVED)
def test_repeat_int(rng, shape, dtype):
    x, a = pair(rng, shape, dtype)
    for r in (0, 1, 3):
        check(vk.repeat(a, r), np.repeat(x, r))
        for axis in range(-len(shape), len(shape)):
            check(vk.repeat(a, r, axis=axis), np.repeat(x, r, axis))


@pytest.mark.parametrize("dtype", MOVED)
def test_repeat_per_element(rng, dtype):
    x, a = pair(rng, (6, 9), dtype)
    counts = rng.integers(0, 4, 9)
    check(vk.repeat(a, counts, axis=1), np.repeat(x, counts, 1))
    check(vk.repeat(a, list(counts[:6]), axis=0), np.repeat(x, counts[:6], 0))
    check(vk.repeat(a, vk.asarray(counts.astype(np.int32)), axis=-1), np.repeat(x, counts, -1))
    flat = rng.integers(0, 3, 54)
    check(vk.repeat(a, vk.asarray(flat.astype(np.uint32))), np.repeat(x, flat))
    check(vk.repeat(a, vk.asarray(np.array([2], np.int32)), axis=0), np.repeat(x, 2, 0))  # length 1: broadcast


def test_tile_repeat_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    float_counts = vk.asarray(np.ones(3, np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="non-negative"):
            vk.tile(a, (2, -1))
        with pytest.raises(TypeError, match="repetitions"):
            vk.tile(a, (2.0,))
        with pytest.raises(ValueError, match="non-negative"):
            vk.repeat(a, -1)
        with pytest.raises(ValueError, match="non-negative"):
            vk.repeat(a, [1, -1, 1], axis=0)
        with pytest.raises(ValueError, match="does not broadcast"):
            vk.repeat(a, [1, 2], axis=0)
        with pytest.raises(ValueError, match="does not broadcast"):
            vk.repeat(a, [[1, 2, 3]], axis=0)
        with pytest.raises(TypeError, match="integers"):
            vk.repeat(a, [1.0, 2.0, 3.0], axis=0)
        with pytest.raises(TypeError, match="repeats"):
            vk.repeat(a, True)
        with pytest.raises(TypeError, match="integer dtype"):
            vk.repeat(a, float_counts, axis=0)
        with pytest.raises(np.exceptions.AxisError):
            vk.repeat(a, 2, axis=2)


# -- permute_dims, matrix_transpose, unstack, concat -------------------------------------------

@pytest.mark.parametrize("dtype", MOVED)
def test_permute_dims_matrix_transpose_mT(rng, dtype):
    x, a = pair(rng, (3, 9, 33, 2), dtype)
    check(vk.permute_dims(a, (2, 0, 3, 1)), np.permute_dims(x, (2, 0, 3, 1)))
    check(vk.permute_dims(a, (-1, 0, 1, 2)), np.transpose(x, (-1, 0, 1, 2)))
    check(vk.matrix_transpose(a), np.matrix_transpose(x))
    check(a.mT, x.mT)
    y, b = pair(rng, (40, 33), dtype)
    check(b.mT, y.T)
    s, c = pair(rng, (), dtype)
    check(vk.permute_dims(c, ()), s)


@pytest.mark.parametrize("dtype", MOVED)
def test_unstack(rng, dtype):
    x, a = pair(rng, (3, 4, 5), dtype)
    for axis in (0, 1, 2, -1):
        got, want = vk.unstack(a, axis=axis), np.unstack(x, axis=axis)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
    assert all(g._storage is a._storage for g in vk.unstack(a))  # axis 0: views
    assert vk.unstack(vk.asarray(np.ones((0, 3), np.float32))) == ()


@pytest.mark.parametrize("dtype", MOVED)
def test_concat(rng, dtype):
    x, a = pair(rng, (3, 5), dtype)
    y, b = pair(rng, (2, 5), dtype)
    z, c = pair(rng, (3, 7), dtype)
    check(vk.concat((a, b)), np.concat((x, y)))
    check(vk.concat([a, c], axis=-1), np.concat([x, z], axis=-1))
    check(vk.concat([a, b, c], axis=None), np.concat([x, y, z], axis=None))


def test_permute_unstack_concat_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    h = vk.asarray(random_array(rng, (3, 4), np.float16))
    h2 = vk.asarray(random_array(rng, (3, 2), np.float16))
    with no_gpu_work():
        with pytest.raises(ValueError, match="don't match"):
            vk.permute_dims(a, (0,))
        with pytest.raises(ValueError, match="repeated"):
            vk.permute_dims(a, (0, 0))
        with pytest.raises(np.exceptions.AxisError):
            vk.permute_dims(a, (0, 2))
        with pytest.raises(ValueError, match="at least 2"):
            vk.matrix_transpose(a[0])
        with pytest.raises(ValueError, match="at least 2"):
            a[0].mT
        with pytest.raises(np.exceptions.AxisError):
            vk.unstack(a, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            vk.unstack(a[0, 0])
        with pytest.raises(ValueError, match="must match exactly"):
            vk.concat([h, h2])
        with pytest.raises(ValueError, match="at least one"):
            vk.concat([])


# -- tril, triu --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 9), (9, 5), (2, 17, 16), (3, 2, 8, 65), (0, 3), (2, 0, 0)])
def test_tril_triu(rng, shape):
    x, a = pair(rng, shape, np.float32)
    m, n = shape[-2:]
    for k in sorted({0, 1, -1, 2, -3, n - 1, n, -m, 1 - m, n + 5, -m - 5, 10**12, -10**12}):
        check(vk.tril(a, k=k), np.tril(x, k))
        check(vk.triu(a, k=k), np.triu(x, k))


@pytest.mark.parametrize("dtype", MOVED)
def test_tril_triu_dtypes(rng, dtype):
    x, a = pair(rng, (3, 7, 6), dtype)
    if dtype == np.float32:
        x[0, 0, :2] = [np.nan, -0.0]  # kept as they are: no arithmetic touches kept elements
        a = vk.asarray(x)
    check(vk.tril(a, k=-1), np.tril(x, -1))
    check(vk.triu(a, k=2), np.triu(x, 2))
    check(vk.tril(a[1:]), np.tril(x[1:]))


def test_tril_triu_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            vk.tril(a[0])
        with pytest.raises(TypeError, match="`k` must be an integer"):
            vk.triu(a, k=1.0)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.tril(np.ones((2, 2)))


# -- diff --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1,), (2,), (17,), (257,), (4, 9), (3, 0), (2, 3, 65)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_diff(rng, shape, dtype):
    x, a = pair(rng, shape, dtype)
    for axis in range(-len(shape), len(shape)):
        for n in (0, 1, 2, 3):
            want = np.diff(x, n=n, axis=axis)
            got = vk.diff(a, n=n, axis=axis)
            if dtype == np.float32 and n > 1:  # float32 rounding of each pass, as numpy's
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
                assert got.shape == want.shape and got.dtype == want.dtype
            else:
                check(got, want)


def test_diff_prepend_append(rng):
    x, a = pair(rng, (4, 6), np.int32)
    p, pa = pair(rng, (4, 2), np.int32)
    q, qa = pair(rng, (4, 1), np.int32)
    check(vk.diff(a, prepend=pa, append=qa), np.diff(x, prepend=p, append=q))
    check(vk.diff(a, axis=0, prepend=7, n=2), np.diff(x, axis=0, prepend=np.int32(7), n=2))
    check(vk.diff(a, append=vk.asarray(np.int32(-3))), np.diff(x, append=np.int32(-3)))
    u, ua = pair(rng, (9,), np.uint32)
    check(vk.diff(ua, prepend=0), np.diff(u, prepend=np.uint32(0)))  # uint32 differences wrap, as numpy's


def test_diff_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="at least 1 dimension"):
            vk.diff(a[0, 0])
        with pytest.raises(ValueError, match="non-negative"):
            vk.diff(a, n=-1)
        with pytest.raises(np.exceptions.AxisError):
            vk.diff(a, axis=2)
        with pytest.raises(ValueError, match="must match exactly"):
            vk.diff(a, prepend=np.ones((2, 2), np.float32))


# -- the loop budget -------------------------------------------------------------------------------

def test_large_copies(rng):
    # Enough elements that with VKBACKEND_LOOP_BUDGET=1024 each invocation's grid-stride loop
    # must be cut by more workgroups.
    x, a = pair(rng, (1 << 20,), np.int32)
    check(vk.flip(a), x[::-1])
    check(vk.roll(a, 12345), np.roll(x, 12345))
    y = x.reshape(1024, 1024)
    check(vk.tile(a[:1024], (1024, 1)), np.tile(x[:1024], (1024, 1)))
    check(vk.repeat(a[:4096], 256), np.repeat(x[:4096], 256))
    check(vk.tril(vk.asarray(y), k=5), np.tril(y, 5))
