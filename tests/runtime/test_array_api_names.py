"""The standard's names and signatures that the conformance suite (tools/array_api_tests.sh) checks
and cannot check here itself (tests/array_api/skips.txt), and the argument names the standard
gives: Array.__complex__/__int__/__index__/__lshift__/__rshift__, clip's min/max, astype's
copy/device, std/var's correction."""
import inspect

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array


def positional(fn) -> list:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def test_array_conversions():
    for cls_method, n in (("__int__", 0), ("__index__", 0), ("__complex__", 0), ("__lshift__", 1), ("__rshift__", 1)):
        params = list(inspect.signature(getattr(vk.Array, cls_method)).parameters)
        assert len(params) == n + 1, (cls_method, params)  # self, and `other` for the shifts
    assert complex(vk.asarray(np.float32(2.5))) == 2.5 + 0j
    assert complex(vk.asarray(np.int32(-3))) == -3 + 0j
    assert complex(vk.asarray(np.bool_(True))) == 1 + 0j
    with pytest.raises(TypeError, match="0-dimensional"):
        complex(vk.ones(2))
    x = vk.asarray(np.array([1, 2, 40], np.int32))
    check(x << 2, np.array([4, 8, 160], np.int32))
    check(x >> 1, np.array([0, 1, 20], np.int32))
    assert int(vk.asarray(np.int32(7))) == 7 and [10, 20, 30][vk.asarray(np.uint32(1))] == 20


def test_standard_argument_names(rng):
    assert positional(vk.clip)[:3] == ["a", "min", "max"]
    x = random_array(rng, (5, 6), np.float32)
    a = vk.asarray(x)
    check(vk.clip(a, min=-0.5, max=0.5), np.clip(x, -0.5, 0.5))
    check(vk.clip(a, a_min=-0.5), np.clip(x, -0.5, None))  # numpy's keyword names still work
    check(vk.clip(a, None, 0.25), np.clip(x, None, 0.25))
    assert vk.astype(a, vk.float32, copy=False) is a
    b = vk.astype(a, vk.float32)
    assert b is not a and b.numpy().tobytes() == x.tobytes()
    check(vk.astype(a, vk.int32, copy=False, device=vk.device()), x.astype(np.int32))
    for name in ("std", "var"):
        fn = getattr(vk, name)
        for c in (0, 1, 2.5):
            got = fn(a, axis=1, correction=c, keepdims=True).numpy()
            want = getattr(x.astype(np.float64), name)(axis=1, ddof=c, keepdims=True)
            np.testing.assert_allclose(got, want, rtol=1e-5)


def test_standard_argument_errors():
    a = vk.ones((2, 3))
    with no_gpu_work():
        with pytest.raises(TypeError, match="both"):
            vk.clip(a, 0.0, a_min=1.0)
        with pytest.raises(TypeError, match="copy"):
            vk.astype(a, vk.int32, copy="no")
        with pytest.raises(ValueError, match="device"):
            vk.astype(a, vk.int32, device="cpu")
        for name in ("std", "var"):
            with pytest.raises(TypeError, match="ddof or correction"):
                getattr(vk, name)(a, ddof=1, correction=1)
