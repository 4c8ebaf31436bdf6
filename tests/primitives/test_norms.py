"""vk.linalg.vector_norm and vk.linalg.matrix_norm (vkbackend/primitives/norms.py) against
numpy.linalg in float64."""
import math

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array
from vkbackend.primitives import norms

EPS = float(np.finfo(np.float32).eps)


def close(got, want, n, rtol_terms=4):
    assert got.dtype == vk.float32 and got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol_terms * (n + 4) * EPS, atol=0)


ORDS = [2, 1, 0, -1, -2, math.inf, -math.inf, 3, 0.5, -1.5, 7.25]


@pytest.mark.parametrize("ord", ORDS)
def test_vector_norm(rng, sg, ord):
    for shape, axis in [((sg * 8 + 3,), None), ((3, sg + 1), 1), ((4, 5, 6), (0, 2)), ((2, 3, 4), None),
                        ((5, 7), -2), ((2, 3), ())]:
        x = random_array(rng, shape, np.float32)
        if ord in (0, -1, -2, -1.5):
            x[..., 0] = 0  # zeros count (0) and make negative orders 0
        for keepdims in (False, True):
            got = vk.linalg.vector_norm(vk.asarray(x), axis=axis, keepdims=keepdims, ord=ord)
            with np.errstate(divide="ignore"):  # 0 ** negative: inf, as intended
                want = np.linalg.vector_norm(x.astype(np.float64), axis=axis, keepdims=keepdims, ord=ord)
            close(got, want, x.size)


def test_vector_norm_scaling_and_specials():
    big = np.array([3e20, 4e20], np.float32)  # |x|**2 overflows float32: the scaled sum does not
    close(vk.linalg.vector_norm(vk.asarray(big)), np.float64(5e20), 2)
    tiny = np.array([3e-25, 4e-25], np.float32)  # |x|**2 underflows
    close(vk.linalg.vector_norm(vk.asarray(tiny)), np.float64(5e-25), 2)
    close(vk.linalg.vector_norm(vk.asarray(big), ord=3), np.linalg.vector_norm(big.astype(np.float64), ord=3), 2)
    for vals in ([np.inf, 1.0], [-np.inf, np.nan], [np.nan, 2.0], [0.0, -0.0]):
        x = np.array(vals, np.float32)
        for ord in (2, 3, 1, math.inf, 0):
            got = vk.linalg.vector_norm(vk.asarray(x), ord=ord).numpy()
            want = np.linalg.vector_norm(x.astype(np.float64), ord=ord)
            np.testing.assert_array_equal(got, np.float32(want))
    for ord in (2, 1, 3, math.inf, 0):  # empty vectors: 0, as numpy
        close(vk.linalg.vector_norm(vk.zeros((0, 3)), axis=0, ord=ord), np.zeros(3), 1)
    i = np.array([[3, -4], [0, 7]], np.int32)  # integers are taken as float32
    close(vk.linalg.vector_norm(vk.asarray(i), axis=1), np.linalg.vector_norm(i.astype(np.float64), axis=1), 2)


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm(rng, sg, ord):
    for shape in [(1, 1), (3, 5), (sg + 1, sg - 1), (2, 3, 4, 4), (4, 0, 3), (2, 3, 0)]:
        if ord in (-1, -math.inf) and shape[-1 if ord == -1 else -2] == 0:
            continue  # the smallest of no sums: ValueError (test_norms_bad_inputs)
        x = random_array(rng, shape, np.float32)
        for keepdims in (False, True):
            got = vk.linalg.matrix_norm(vk.asarray(x), keepdims=keepdims, ord=ord)
            want = np.linalg.matrix_norm(x.astype(np.float64), keepdims=keepdims, ord=ord)
            close(got, want, x.size)


def test_norms_bad_inputs():
    x, v, e0, e1 = vk.ones((3, 3)), vk.ones(3), vk.ones((0, 3)), vk.ones((0,))
    with no_gpu_work():
        for ord in (2, -2, "nuc"):  # the primitive without the singular values (ops/svd.py passes them)
            with pytest.raises(NotImplementedError, match="singular values"):
                norms.matrix_norm(x, ord=ord)
        with pytest.raises(ValueError, match="ord"):
            vk.linalg.matrix_norm(x, ord=3)
        with pytest.raises(ValueError, match="ord"):
            vk.linalg.matrix_norm(x, ord="max")
        with pytest.raises(ValueError, match="at least 2"):
            vk.linalg.matrix_norm(v)
        with pytest.raises(ValueError, match="no value"):
            vk.linalg.matrix_norm(e0, ord=-math.inf)
        with pytest.raises(TypeError, match="ord"):
            vk.linalg.vector_norm(v, ord="fro")
        with pytest.raises(ValueError, match="NaN"):
            vk.linalg.vector_norm(v, ord=math.nan)
        with pytest.raises(ValueError, match="empty"):
            vk.linalg.vector_norm(e1, ord=-math.inf)
        with pytest.raises(np.exceptions.AxisError):
            vk.linalg.vector_norm(x, axis=2)
        with pytest.raises(ValueError, match="repeated"):
            vk.linalg.vector_norm(x, axis=(0, -2))
