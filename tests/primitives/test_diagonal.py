"""vk.linalg.diagonal and vk.linalg.trace (vkbackend/primitives/diagonal.py) against numpy.linalg's."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def _shapes(sg):
    return [(1, 1), (3, 5), (5, 3), (sg + 1, sg - 1), (2, 3, sg), (2, 0, 4), (0, 3, 3), (4, 1, 2, 7)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal(rng, sg, dtype):
    for shape in _shapes(sg):
        x = random_array(rng, shape, dtype)
        m, n = shape[-2:]
        for offset in sorted({0, 1, -1, n - 1, n, -m + 1, -m, n + 5, -m - 5, 2}):
            check(vk.linalg.diagonal(vk.asarray(x), offset=offset), np.linalg.diagonal(x, offset=offset))


def test_diagonal_of_a_view(rng):
    x = random_array(rng, (3, 4, 5), np.float32)
    check(vk.linalg.diagonal(vk.asarray(x)[1], offset=1), np.linalg.diagonal(x[1], offset=1))  # offset view


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_trace(rng, sg, dtype):
    for shape in _shapes(sg):
        x = random_array(rng, shape, dtype)
        for offset in (0, 1, -2, 50):
            got = vk.linalg.trace(vk.asarray(x), offset=offset)
            want = np.linalg.trace(x, offset=offset, dtype=dtype)  # numpy would widen ints to 64 bits
            if dtype == np.float32:
                assert got.dtype == vk.float32 and got.shape == want.shape
                ref = np.linalg.trace(x.astype(np.float64), offset=offset)
                bound = np.linalg.trace(np.abs(x.astype(np.float64)), offset=offset)
                np.testing.assert_allclose(got.numpy(), ref, rtol=0, atol=float(4 * sg * np.finfo(np.float32).eps)
                                           * (np.max(bound, initial=0) + 1e-30))
            else:
                check(got, want)
    x = random_array(rng, (3, 3), np.int32)
    check(vk.linalg.trace(vk.asarray(x), dtype=vk.float32), np.linalg.trace(x, dtype=np.float32))
    b = random_array(rng, (4, 4), np.bool_)
    check(vk.linalg.trace(vk.asarray(b)), np.int32(np.linalg.trace(b)))  # bool counts in int32


def test_diagonal_bad_inputs():
    x, v = vk.ones((3, 3)), vk.ones(3)
    with no_gpu_work():
        with pytest.raises(ValueError, match="at least 2"):
            vk.linalg.diagonal(v)
        with pytest.raises(TypeError, match="offset"):
            vk.linalg.diagonal(x, offset=1.5)
        with pytest.raises(TypeError, match="bool"):
            vk.linalg.trace(x, dtype=vk.bool)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.linalg.trace([[1, 2], [3, 4]])
