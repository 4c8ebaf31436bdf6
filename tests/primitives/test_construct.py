"""eye, linspace, meshgrid (vkbackend/primitives/construct.py) and the standard's device= and
copy= arguments of the creation functions (creation.py), against numpy."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import check_array as check, no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


# -- eye ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows,cols", [(0, 0), (1, None), (4, None), (8, 3), (3, 8), (16, 17), (65, 64), (0, 5),
                                       (257, 1)])
def test_eye(rows, cols):
    n = cols if cols is not None else rows
    for k in sorted({0, 1, -1, 2, -3, n - 1, n, -rows, 1 - rows, n + 3, -rows - 3}):
        check(vk.eye(rows, cols, k=k), np.eye(rows, cols, k, dtype=np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eye_dtypes(dtype):
    check(vk.eye(5, 7, k=2, dtype=dtype), np.eye(5, 7, 2, dtype=dtype))
    check(vk.eye(6, dtype=dtype, device=vk.device()), np.eye(6, dtype=dtype))


def test_eye_bad_inputs():
    with no_gpu_work():
        with pytest.raises(ValueError, match="n_rows.*non-negative"):
            vk.eye(-1)
        with pytest.raises(ValueError, match="n_cols.*non-negative"):
            vk.eye(2, -2)
        with pytest.raises(TypeError, match="n_rows"):
            vk.eye(2.0)
        with pytest.raises(TypeError, match="`k`"):
            vk.eye(2, k=0.5)
        with pytest.raises(TypeError, match="float16"):  # held only (float64 is an eye: test_manipulation_wide.py)
            vk.eye(2, dtype=np.float16)
        with pytest.raises(ValueError, match="device"):
            vk.eye(2, device="cpu")


# -- linspace ----------------------------------------------------------------------------------

def _reference(start, stop, num, endpoint):
    """The standard's definition in float64 (start + i * step; stop itself last with endpoint),
    rounded once to float32."""
    div = (num - 1) if endpoint else num
    i = np.arange(num, dtype=np.float64)
    step = (stop - start) / div if div else 0.0
    ref = start + i * step
    if endpoint and num > 1:
        ref[-1] = stop
    return ref.astype(np.float32)


@pytest.mark.parametrize("num", [0, 1, 2, 5, 16, 64, 257, 1000, 100_003])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_matches_numpy_float32(rng, num, endpoint):
    for start, stop in [(0.0, 1.0), (-1.0, 1.0), (float(rng.uniform(-1e3, 1e3)), float(rng.uniform(-1e3, 1e3))),
                        (float(rng.standard_normal()), float(rng.standard_normal()) * 1e-6),
                        (5, -3), (1e30, -1e30), (2, 2)]:
        got = vk.linspace(start, stop, num, endpoint=endpoint)
        assert got.shape == (num,) and got.dtype == vk.float32
        host = got.numpy()
        np.testing.assert_array_max_ulp(host, np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float32), 1)
        np.testing.assert_array_max_ulp(host, _reference(start, stop, num, endpoint), 1)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float16])
def test_linspace_other_dtypes(dtype):
    check(vk.linspace(0, 100, 7, dtype=dtype), np.linspace(0, 100, 7, dtype=dtype))
    check(vk.linspace(3, 250, 33, dtype=dtype, endpoint=False), np.linspace(3, 250, 33, dtype=dtype, endpoint=False))


def test_linspace_bad_inputs():
    with no_gpu_work():
        with pytest.raises(ValueError, match="num.*non-negative"):
            vk.linspace(0, 1, -1)
        with pytest.raises(TypeError, match="num"):
            vk.linspace(0, 1, 2.5)
        with pytest.raises(TypeError, match="complex"):
            vk.linspace(0, 1j, 3)
        with pytest.raises(TypeError, match="real number"):
            vk.linspace("0", 1, 3)
        with pytest.raises(TypeError, match="bool"):
            vk.linspace(0, 1, 3, dtype=vk.bool)
        with pytest.raises(TypeError, match="endpoint"):
            vk.linspace(0, 1, 3, endpoint="no")
        with pytest.raises(OverflowError):
            vk.linspace(0, 1e10, 3, dtype=np.int32)


# -- meshgrid ----------------------------------------------------------------------------------

@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("lengths", [(), (5,), (3, 4), (4, 0), (2, 3, 5), (1, 17, 2, 3)])
def test_meshgrid(rng, indexing, lengths):
    hosts = [random_array(rng, (n,), DTYPES[k % 4]) for k, n in enumerate(lengths)]
    got = vk.meshgrid(*[vk.asarray(h) for h in hosts], indexing=indexing)
    want = np.meshgrid(*hosts, indexing=indexing)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


def test_meshgrid_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (3,), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="indexing"):
            vk.meshgrid(a, a, indexing="yx")
        with pytest.raises(TypeError, match=r"arrays\[1\]"):
            vk.meshgrid(a, "abc")


# -- device= and copy= -------------------------------------------------------------------------

def test_creation_functions_take_a_device(rng):
    x = random_array(rng, (3, 4), np.float32)
    a = vk.asarray(x)
    for dev in (None, vk.device(), a.device):
        check(vk.asarray(x, device=dev), x)
        check(vk.zeros((2, 3), device=dev), np.zeros((2, 3), np.float32))
        check(vk.ones(4, dtype=vk.int32, device=dev), np.ones(4, np.int32))
        check(vk.full((2,), 7, device=dev), np.full(2, 7, np.int32))
        assert vk.empty((5,), device=dev).shape == (5,)
        check(vk.zeros_like(a, device=dev), np.zeros_like(x))
        check(vk.ones_like(a, dtype=vk.bool, device=dev), np.ones_like(x, dtype=bool))
        check(vk.full_like(a, 2.5, device=dev), np.full_like(x, 2.5))
        assert vk.empty_like(a, device=dev).shape == x.shape
        check(vk.arange(5, device=dev), np.arange(5, dtype=np.int32))
        check(vk.linspace(0, 1, 3, device=dev), np.linspace(0, 1, 3, dtype=np.float32))


def test_default_dtypes_follow_the_standard():
    # zeros/ones/empty default to the default float; full infers from the value.
    assert vk.zeros(3).dtype == vk.float32 and vk.ones((2,)).dtype == vk.float32
    assert vk.empty(3).dtype == vk.float32 and vk.eye(2).dtype == vk.float32
    assert vk.full(3, 1).dtype == vk.int32 and vk.full(3, 1.0).dtype == vk.float32
    assert vk.full(3, True).dtype == vk.bool
    b = vk.full(4, 2, dtype=vk.bool)  # a bool word holds 1, as numpy's bool(2)
    np.testing.assert_array_equal(b.astype(vk.int32).numpy(), np.ones(4, np.int32))


def test_bad_devices_are_refused_before_gpu_work(rng):
    a = vk.asarray(random_array(rng, (3,), np.float32))
    with no_gpu_work():
        for bad in ("cpu", 0, (1, 0), "vulkan"):
            for call in (lambda: vk.asarray([1, 2], device=bad), lambda: vk.zeros(3, device=bad),
                         lambda: vk.ones(3, device=bad), lambda: vk.full(3, 1, device=bad),
                         lambda: vk.empty(3, device=bad), lambda: vk.zeros_like(a, device=bad),
                         lambda: vk.full_like(a, 1, device=bad), lambda: vk.arange(3, device=bad),
                         lambda: vk.linspace(0, 1, 3, device=bad), lambda: a.to_device(bad)):
                with pytest.raises(ValueError, match="device must be None or vk.device()"):
                    call()


def test_asarray_copy(rng):
    x = random_array(rng, (5,), np.int32)
    a = vk.asarray(x)
    assert vk.asarray(a) is a and vk.asarray(a, copy=False) is a and vk.asarray(a, dtype=vk.int32, copy=None) is a
    c = vk.asarray(a, copy=True)
    assert c is not a and c._storage is not a._storage
    check(c, x)
    check(vk.asarray(a, dtype=vk.float32, copy=True), x.astype(np.float32))
    check(vk.asarray(a, dtype=vk.float32), x.astype(np.float32))
    check(vk.asarray([True, False]), np.array([True, False]))   # Python scalars: bool, int32, float32
    check(vk.asarray(3), np.int32(3))
    check(vk.asarray([1.5, 2]), np.array([1.5, 2], np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="copy=False"):
            vk.asarray(x, copy=False)
        with pytest.raises(ValueError, match="copy=False"):
            vk.asarray([1, 2], copy=False)
        with pytest.raises(ValueError, match="copy=False.*needs a copy"):
            vk.asarray(a, dtype=vk.float32, copy=False)
        with pytest.raises(TypeError, match="copy"):
            vk.asarray(a, copy="no")
        with pytest.raises(OverflowError):
            vk.asarray(2**40)
