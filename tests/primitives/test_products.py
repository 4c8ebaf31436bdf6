"""tensordot, vecdot, vk.linalg.outer and vk.linalg.cross (vkbackend/primitives/products.py)
against numpy: integers exactly (numpy's int32 wraps alike), float32 against a float64 reference."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array

EPS = float(np.finfo(np.float32).eps)


def close(got, want64, k):
    """float32 products of k terms: within a few ulps of the float64 sum of |terms|."""
    assert got.dtype == vk.float32
    got = got.numpy().astype(np.float64)
    np.testing.assert_allclose(got, want64[0], rtol=0, atol=4 * (k + 2) * EPS * (want64[1].max(initial=0) + 1e-30))


def ref_tensordot(a, b, axes):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.tensordot(a64, b64, axes), np.tensordot(np.abs(a64), np.abs(b64), axes)


@pytest.mark.parametrize("case", [
    ((3, 4, 5), (4, 5, 2), 2), ((7,), (7,), 1), ((2, 3), (4, 5), 0), ((3, 1, 5), (5, 1, 3), ([2, 0], [0, 2])),
    ((9, 8), (8, 9), ([0, 1], [1, 0])), ((4, 0), (0, 3), 1), ((), (), 0), ((2, 3, 4), (4, 3, 2), ([-1, 1], [0, -2])),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_tensordot(rng, case, dtype):
    s1, s2, axes = case
    a, b = random_array(rng, s1, dtype), random_array(rng, s2, dtype)
    got = vk.tensordot(vk.asarray(a), vk.asarray(b), axes=axes)
    assert vk.linalg.tensordot is vk.tensordot
    if dtype == np.float32:
        ax = axes
        close(got, ref_tensordot(a, b, ax), max(1, a.size))
        assert got.shape == np.tensordot(a, b, axes).shape
    else:
        check(got, np.tensordot(a, b, axes))


def test_tensordot_sizes(rng, sg):
    for m, k, n in [(sg - 1, sg + 1, sg), (2 * sg + 1, 3, 1), (1, 4 * sg + 3, 2)]:
        a = random_array(rng, (m, k), np.float32)
        b = random_array(rng, (2, k, n), np.float32)
        got = vk.tensordot(vk.asarray(a), vk.asarray(b), axes=([1], [1]))
        close(got, ref_tensordot(a, b, ([1], [1])), k)
        i, j = random_array(rng, (m, k), np.int32), random_array(rng, (k, n), np.int32) * 70000
        check(vk.tensordot(vk.asarray(i), vk.asarray(j), axes=1), np.tensordot(i, j, 1))  # wraps as numpy int32


def test_tensordot_mixed_and_host(rng):
    a, b = random_array(rng, (3, 4), np.int32), random_array(rng, (4, 2), np.float32)
    got = vk.tensordot(vk.asarray(a), b, axes=1)  # numpy operand uploaded, int32 promoted to float32
    close(got, ref_tensordot(a, b, 1), 4)


@pytest.mark.parametrize("shapes,axis", [
    (((5,), (5,)), -1), (((3, 4), (3, 4)), -1), (((3, 4), (4,)), -1), (((2, 1, 6), (3, 6)), -1),
    (((4, 3), (2, 4, 3)), -2), (((3, 4), (3, 4)), 0), (((2, 0), (2, 0)), -1), (((0, 3), (1, 3)), -1),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_vecdot(rng, shapes, axis, dtype):
    a, b = (random_array(rng, s, dtype) for s in shapes)
    got = vk.vecdot(vk.asarray(a), vk.asarray(b), axis=axis)
    assert vk.linalg.vecdot is vk.vecdot
    want = np.vecdot(a.astype(np.float64), b.astype(np.float64), axis=axis)
    if dtype == np.float32:
        bound = np.vecdot(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)), axis=axis)
        close(got, (want, bound), a.shape[axis])
    else:
        check(got, np.vecdot(a, b, axis=axis))


def test_vecdot_long(rng, sg):
    for n in (sg * 64 - 1, sg * 64 + 1):
        a, b = random_array(rng, (2, n), np.float32), random_array(rng, (2, n), np.float32)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        close(vk.vecdot(vk.asarray(a), vk.asarray(b)), (np.vecdot(a64, b64), np.vecdot(abs(a64), abs(b64))), n)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_outer(rng, sg, dtype):
    for m, n in [(1, 1), (sg - 1, sg + 1), (0, 3), (33, 7)]:
        a, b = random_array(rng, (m,), dtype), random_array(rng, (n,), dtype)
        check(vk.linalg.outer(vk.asarray(a), vk.asarray(b)), np.outer(a, b))  # one product each: exact


@pytest.mark.parametrize("shapes,axis", [(((3,), (3,)), -1), (((5, 3), (5, 3)), -1), (((3, 4), (3, 1)), -2),
                                         (((2, 1, 3), (4, 3)), -1), (((3, 2, 2), (3, 1, 2)), -3),
                                         (((0, 3), (3,)), -1), (((3, 5), (3, 5)), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cross(rng, shapes, axis, dtype):
    a, b = (random_array(rng, s, dtype) for s in shapes)
    got = vk.linalg.cross(vk.asarray(a), vk.asarray(b), axis=axis)
    # the components as the standard writes them, in the dtype (no fused multiply-add): exact
    want = np.cross(a, b, axis=axis)
    check(got, want)


def test_products_bad_inputs():
    b, col, v4, c23, c43 = vk.ones(3, dtype=vk.bool), vk.ones((3, 1)), vk.ones(4), vk.ones((2, 3)), vk.ones((4, 3))
    f = vk.ones((3, 4))
    with no_gpu_work():
        with pytest.raises(ValueError, match="shape-mismatch"):
            vk.tensordot(f, f, axes=1)
        with pytest.raises(ValueError, match="axes=3"):
            vk.tensordot(f, f, axes=3)
        with pytest.raises(ValueError, match="differ in number"):
            vk.tensordot(f, f, axes=([0], [0, 1]))
        with pytest.raises(TypeError, match="pair"):
            vk.tensordot(f, f, axes="x")
        with pytest.raises(TypeError, match="numeric"):
            vk.vecdot(b, b)
        with pytest.raises(ValueError, match="differ in length"):
            vk.vecdot(f, col)
        with pytest.raises(np.exceptions.AxisError):
            vk.vecdot(f, f, axis=-3)
        with pytest.raises(ValueError, match="one rank"):
            vk.vecdot(f, v4, axis=0)
        with pytest.raises(ValueError, match="1-D"):
            vk.linalg.outer(f, f)
        with pytest.raises(ValueError, match="3-vectors"):
            vk.linalg.cross(f, f)
        with pytest.raises(ValueError, match="broadcast"):
            vk.linalg.cross(c23, c43)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.vecdot(None, f)
