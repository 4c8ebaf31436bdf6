"""transpose / moveaxis / swapaxes / strided_copy / concatenate / stack against numpy."""
import itertools

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def check(got, want):
    want = np.asarray(want)
    if want.dtype == np.float64:  # numpy's int32 + float32 -> float64, narrowed to float32 here
        want = want.astype(np.float32)
    assert isinstance(got, vk.Array)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


# Around the 32x32 tile and the tiled/strided switch (an edge below 8 takes the strided copy).
@pytest.mark.parametrize("shape", [(1, 1), (1, 300), (7, 100), (8, 9), (31, 33), (32, 32), (33, 31),
                                   (64, 65), (257, 9), (513, 1031)])
def test_transpose_2d(rng, shape):
    x = random_array(rng, shape, np.float32)
    check(vk.transpose(vk.asarray(x)), x.T)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_dtypes_and_T(rng, dtype):
    x = random_array(rng, (45, 70), dtype)
    a = vk.asarray(x)
    check(a.T, x.T)
    check(vk.transpose(a, (1, 0)), x.T)


def test_transpose_every_permutation_4d(rng):
    x = random_array(rng, (2, 3, 4, 5), np.int32)
    a = vk.asarray(x)
    for perm in itertools.permutations(range(4)):
        check(vk.transpose(a, perm), x.transpose(perm))
    check(vk.transpose(a, (-1, 0, -2, 1)), x.transpose((-1, 0, -2, 1)))


@pytest.mark.parametrize("shape,perm", [((3, 33, 40), (0, 2, 1)), ((2, 3, 40, 35), (0, 1, 3, 2)),
                                        ((40, 9, 33), (1, 2, 0)), ((40, 9, 33), (2, 0, 1)),
                                        ((33, 1, 40, 1), (2, 1, 3, 0)), ((5, 70, 3), (2, 1, 0))])
def test_transpose_batched_and_merged(rng, shape, perm):
    # (1, 2, 0) merges into a 2-D transpose of (40, 9*33); unit axes are dropped before planning.
    x = random_array(rng, shape, np.float32)
    check(vk.transpose(vk.asarray(x), perm), x.transpose(perm))


def test_transpose_that_moves_no_element_is_a_view(rng):
    x = random_array(rng, (1, 5, 1, 7), np.float32)
    a = vk.asarray(x)
    z = vk.asarray(np.float32(3))
    vk.synchronize()
    d0 = vk.stats()["dispatches"]
    for perm in [(0, 1, 2, 3), (2, 1, 0, 3), (0, 2, 1, 3), (1, 3, 0, 2)]:
        t = vk.transpose(a, perm)
        assert t._storage is a._storage and t.shape == x.transpose(perm).shape
    assert vk.transpose(z)._storage is z._storage
    assert vk.stats()["dispatches"] == d0
    check(vk.transpose(a, (1, 3, 0, 2)), x.transpose((1, 3, 0, 2)))


def test_moveaxis_swapaxes(rng):
    x = random_array(rng, (3, 4, 5, 6), np.float32)
    a = vk.asarray(x)
    for src, dst in [(0, -1), (-1, 0), (1, 2), ([0, 1], [-1, -2]), ((0, 3), (1, 0))]:
        check(vk.moveaxis(a, src, dst), np.moveaxis(x, src, dst))
    for i, j in [(0, 3), (1, -1), (2, 2)]:
        check(vk.swapaxes(a, i, j), np.swapaxes(x, i, j))


def test_transpose_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4, 5), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="repeated axis"):
            vk.transpose(a, (0, 0, 1))
        with pytest.raises(ValueError, match="don't match"):
            vk.transpose(a, (0, 1))
        with pytest.raises(np.exceptions.AxisError):
            vk.transpose(a, (0, 1, 3))
        with pytest.raises(TypeError, match="vk.Array"):
            vk.transpose(np.zeros((2, 2)))
        with pytest.raises(TypeError, match="axis must be an integer"):
            vk.swapaxes(a, 0.5, 1)
        with pytest.raises(ValueError, match="same number"):
            vk.moveaxis(a, (0, 1), 2)
        with pytest.raises(np.exceptions.AxisError):
            vk.moveaxis(a, 0, 3)


def test_strided_copy(rng):
    x = random_array(rng, (6, 10), np.float32)
    a = vk.asarray(x)
    flat = x.ravel()
    # reversed rows, every other column; a broadcast row; an interior window with an offset
    check(vk.strided_copy(a, (6, 5), (-10, 2), a.offset + 50), x[::-1, ::2])
    check(vk.strided_copy(a, (4, 10), (0, 1)), np.broadcast_to(flat[:10], (4, 10)))
    check(vk.strided_copy(a, (3, 3), (10, 1), a.offset + 12), x[1:4, 2:5])
    check(vk.strided_copy(a, (0, 3), (1, 1)), np.zeros((0, 3), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="largest index 9, smallest -50"):
            vk.strided_copy(a, (6, 10), (-10, 1))
        with pytest.raises(ValueError, match="strides"):
            vk.strided_copy(a, (6, 10), (10,))
        with pytest.raises(TypeError):
            vk.strided_copy(a, (6, 10), (10.0, 1))


def test_strided_copy_sizes_near_workgroup(rng, sg):
    for n in sorted({1, sg - 1, sg, sg + 1, 255, 256, 257, 1027}):
        x = random_array(rng, (n,), np.int32)
        a = vk.asarray(x)
        check(vk.strided_copy(a, (n,), (1,)), x)          # contiguous (vec4 + tail)
        check(vk.strided_copy(a, ((n + 1) // 2,), (2,)), x[::2])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_concatenate(rng, axis):
    shapes = [(4, 5, 6), (4, 5, 6), (4, 5, 6)]
    shapes = [tuple(s if d != axis % 3 else s + k for d, s in enumerate(sh)) for k, sh in enumerate(shapes)]
    xs = [random_array(rng, s, np.float32) for s in shapes]
    check(vk.concatenate([vk.asarray(x) for x in xs], axis), np.concatenate(xs, axis))


def test_concatenate_promotion_host_empty_and_none(rng):
    b = random_array(rng, (3, 4), np.bool_)
    i = random_array(rng, (2, 4), np.int32)
    f = random_array(rng, (5, 4), np.float32)
    u = random_array(rng, (1, 4), np.uint32)
    check(vk.concatenate([vk.asarray(b), vk.asarray(i)]), np.concatenate([b, i]))
    check(vk.concatenate([vk.asarray(i), vk.asarray(f), vk.asarray(b)]), np.concatenate([i, f, b]))
    check(vk.concatenate([vk.asarray(u), vk.asarray(b)]), np.concatenate([u, b]))
    check(vk.concatenate([vk.asarray(b), vk.asarray(b)]), np.concatenate([b, b]))
    check(vk.concatenate([f, vk.asarray(i)]), np.concatenate([f, i]))  # host operands
    check(vk.concatenate([vk.asarray(f), np.zeros((0, 4), np.float32)]), f)
    check(vk.concatenate([vk.asarray(i), vk.asarray(f)], axis=None), np.concatenate([i, f], axis=None))
    a = vk.asarray(f)
    check(vk.concatenate([a[1:3], a[3:4], a[0:1]], 0), np.concatenate([f[1:3], f[3:4], f[0:1]]))


def test_concatenate_stack_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    i = vk.asarray(random_array(rng, (3, 4), np.int32))
    u = vk.asarray(random_array(rng, (3, 4), np.uint32))
    z = vk.asarray(np.float32(1))
    with no_gpu_work():
        with pytest.raises(ValueError, match="at least one"):
            vk.concatenate([])
        with pytest.raises(ValueError, match="number of dimensions"):
            vk.concatenate([a, a.reshape(12)])
        with pytest.raises(ValueError, match="must match exactly"):
            vk.concatenate([a, a[:2]], axis=1)
        with pytest.raises(ValueError, match="zero-dimensional"):
            vk.concatenate([z, z])
        with pytest.raises(np.exceptions.AxisError):
            vk.concatenate([a, a], axis=2)
        with pytest.raises(TypeError, match="sequence"):
            vk.concatenate(a)
        with pytest.raises(TypeError, match="array 1"):
            vk.concatenate([a, "x"])
        with pytest.raises(ValueError, match="same shape"):
            vk.stack([a, a[:2]])
        with pytest.raises(np.exceptions.AxisError):
            vk.stack([a, a], axis=3)
    joined = vk.concatenate([i, u])  # numpy's int64, as the elementwise functions give
    assert joined.dtype == np.int64
    np.testing.assert_array_equal(joined.numpy(), np.concatenate([i.numpy(), u.numpy()]))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(rng, axis):
    xs = [random_array(rng, (3, 5), np.int32) for _ in range(4)]
    check(vk.stack([vk.asarray(x) for x in xs], axis), np.stack(xs, axis))
