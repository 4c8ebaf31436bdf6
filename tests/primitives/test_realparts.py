"""conj, real and imag of real arrays (vkbackend/primitives/realparts.py): numpy's np.conj,
np.real, np.imag of real input, new arrays of x's dtype."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_, np.int8, np.uint16, np.int64,
                                   np.uint64, np.float64])
def test_real_parts(rng, sg, dtype):
    for shape in [(), (sg + 1,), (3, 0), (2, sg - 1)]:
        x = random_array(rng, shape, dtype)
        if x.dtype.kind == "f" and x.size:
            x.reshape(-1)[0] = -0.0  # copies keep the sign of zero
        a = vk.asarray(x, dtype=dtype)
        for name in ("conj", "real", "imag"):
            got = getattr(vk, name)(a)
            check(got, x if name != "imag" else np.zeros_like(x))  # x's dtype (numpy: int8 for bool)
            np.testing.assert_array_equal(got.numpy(), getattr(np, name)(x))
            assert got is not a
        if x.dtype.kind == "f" and x.size:
            assert np.signbit(vk.conj(a).numpy().reshape(-1)[0])


def test_real_parts_bad_inputs():
    half = vk.asarray(np.ones(2, np.float16))
    with no_gpu_work():
        for name in ("conj", "real", "imag"):
            with pytest.raises(TypeError, match="vk.Array"):
                getattr(vk, name)([1.0, 2.0])
            with pytest.raises(TypeError, match="float16"):
                getattr(vk, name)(half)
