"""vkbackend as an array API namespace (vkbackend/array_api.py, the Array methods it asks for):
version, constants, the inspection namespace, dtype functions, cumulative_sum/prod."""
import math

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

OURS = [vk.bool, vk.int32, vk.uint32, vk.float32]


def test_version_constants_and_dtype_names():
    assert vk.__array_api_version__ == "2024.12"
    assert vk.e == math.e and vk.pi == math.pi and vk.inf == math.inf and math.isnan(vk.nan)
    assert vk.newaxis is None
    assert vk.bool == np.dtype(np.bool_) and vk.bool is vk.bool_
    x = vk.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x[vk.newaxis].shape == (1, 2, 3)


STANDARD_NAMES = [
    "squeeze", "expand_dims", "flip", "roll", "broadcast_to", "broadcast_arrays", "tile", "repeat", "moveaxis",
    "permute_dims", "concat", "stack", "reshape", "matrix_transpose", "unstack", "tril", "triu", "diff", "eye",
    "linspace", "meshgrid", "arange", "asarray", "empty", "empty_like", "full", "full_like", "ones", "ones_like",
    "zeros", "zeros_like", "from_dlpack", "cumulative_sum", "cumulative_prod", "finfo", "iinfo", "can_cast",
    "result_type", "isdtype", "astype", "__array_namespace_info__"]


def test_the_namespace_has_the_standard_names():
    missing = [n for n in STANDARD_NAMES if not callable(getattr(vk, n, None))]
    assert not missing, missing


# -- the inspection namespace ----------------------------------------------------------------

def test_info():
    info = vk.__array_namespace_info__()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert caps["max dimensions"] is None or isinstance(caps["max dimensions"], int)
    assert info.default_device() == vk.device() and info.devices() == [vk.device()]
    d = info.default_dtypes()
    assert d["real floating"] == vk.float32 and d["integral"] == vk.int32 and d["indexing"] == vk.int32
    assert info.default_dtypes(device=vk.device()) == d
    # the 32-bit dtypes everywhere; the others where the device has their features
    have = set(vk.device().features)
    def listed(*names):
        need = {"int8": {"shaderInt8", "storageBuffer8BitAccess"}, "uint8": {"shaderInt8", "storageBuffer8BitAccess"},
                "int16": {"shaderInt16", "storageBuffer16BitAccess"},
                "uint16": {"shaderInt16", "storageBuffer16BitAccess"}, "int64": {"shaderInt64"},
                "uint64": {"shaderInt64"}, "float64": {"shaderFloat64", "shaderInt64"}}
        return {n: getattr(vk, n if n != "bool" else "bool") for n in names if need.get(n, set()) <= have}
    signed, unsigned = ("int8", "int16", "int32", "int64"), ("uint8", "uint16", "uint32", "uint64")
    assert info.dtypes() == listed("bool", *signed, *unsigned, "float32", "float64")
    assert {"bool", "int32", "uint32", "float32"} <= set(info.dtypes())
    assert info.dtypes(kind="bool") == {"bool": vk.bool}
    assert info.dtypes(kind="signed integer") == listed(*signed)
    assert info.dtypes(kind="unsigned integer") == listed(*unsigned)
    assert info.dtypes(kind="integral") == listed(*signed, *unsigned)
    assert info.dtypes(kind="real floating") == listed("float32", "float64")
    assert info.dtypes(kind="complex floating") == {}
    assert info.dtypes(kind="numeric") == listed(*signed, *unsigned, "float32", "float64")
    assert info.dtypes(kind=("bool", "real floating"), device=vk.device()) == listed("bool", "float32", "float64")
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="device"):
        info.dtypes(device="cpu")
    with pytest.raises(ValueError, match="device"):
        info.default_dtypes(device=0)


@pytest.mark.parametrize("dtype", OURS + [vk.int8, vk.uint8, vk.int16, vk.uint16, vk.int64, vk.uint64, vk.float64])
def test_every_listed_dtype_computes_on_the_device(rng, dtype):
    if dtype not in vk.__array_namespace_info__().dtypes().values():
        assert dtype not in OURS
        pytest.skip(f"{dtype}: this device lacks its features")
    x = random_array(rng, (37,), dtype)
    a = vk.asarray(x, dtype=dtype)
    np.testing.assert_array_equal(vk.where(a == a, a, a).numpy(), x)
    np.testing.assert_array_equal(vk.flip(a).numpy(), x[::-1])


# -- dtype functions -------------------------------------------------------------------------

def test_finfo_iinfo():
    for d in (vk.float32, vk.float64, np.float16):
        f, ref = vk.finfo(d), np.finfo(d)
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == \
            (ref.bits, float(ref.eps), float(ref.max), float(ref.min), float(ref.smallest_normal))
        assert isinstance(f.eps, float) and f.dtype == d
    assert vk.finfo(vk.zeros(2)).bits == 32
    for d in (vk.int8, vk.int16, vk.int32, vk.int64, vk.uint8, vk.uint16, vk.uint32, vk.uint64):
        i, ref = vk.iinfo(d), np.iinfo(d)
        assert (i.bits, i.max, i.min, i.dtype) == (ref.bits, ref.max, ref.min, d)
        assert isinstance(i.max, int)
    assert vk.iinfo(vk.asarray(np.ones(2, np.uint32))).max == 2**32 - 1
    for bad in (vk.int32, np.complex128, vk.bool, "nope"):  # numpy's type: ValueError
        with pytest.raises(ValueError, match="finfo"):
            vk.finfo(bad)
    for bad in (vk.float32, np.float64, vk.bool, "nope"):
        with pytest.raises(ValueError, match="iinfo"):
            vk.iinfo(bad)
    assert vk.finfo("float32").bits == 32 and vk.iinfo("uint32").max == 2**32 - 1  # dtype names, as numpy
    with pytest.raises(TypeError, match="dtype"):
        vk.finfo(1.0)


def test_can_cast():
    # The standard's promotion graph: within a kind, never losing range; real float to complex.
    expected = {(a, b): a == b for a in OURS for b in OURS}
    for (a, b), want in expected.items():
        assert vk.can_cast(a, b) == want, (a, b)
    assert vk.can_cast(np.float16, vk.float32) and not vk.can_cast(vk.float32, np.float16)
    assert vk.can_cast(vk.float32, np.float64) and vk.can_cast(vk.int32, np.int64)
    assert vk.can_cast(vk.uint32, np.int64) and not vk.can_cast(vk.int32, np.uint64)
    assert not vk.can_cast(vk.int32, vk.float32) and not vk.can_cast(vk.bool, vk.int32)
    assert vk.can_cast(vk.float32, np.complex64)
    a = vk.asarray(np.ones(3, np.float32))
    assert vk.can_cast(a, vk.float32) and vk.can_cast(a, np.float64) == ("shaderFloat64" in vk.device().features)
    assert not vk.can_cast(a, np.float16)  # held, outside the standard's dtypes
    with pytest.raises(TypeError, match="dtype"):
        vk.can_cast(1, vk.float32)
    with pytest.raises(TypeError, match="dtype"):
        vk.can_cast(vk.float32, "float32")


def test_result_type():
    f = vk.asarray(np.ones(2, np.float32))
    i = vk.asarray(np.ones(2, np.int32))
    u = vk.asarray(np.ones(2, np.uint32))
    assert vk.result_type(f, i) == vk.float32          # numpy's float64, narrowed as the ops compute
    assert vk.result_type(i, vk.int32, True) == vk.int32
    assert vk.result_type(i, 7) == vk.int32 and vk.result_type(u, 7) == vk.uint32  # Python scalars are weak
    assert vk.result_type(i, 1.5) == vk.float32 and vk.result_type(vk.bool, False) == vk.bool
    assert vk.result_type(vk.float32) == vk.float32 and vk.result_type(np.float16) == np.float16
    assert vk.result_type(np.float16, f) == vk.float32
    for x in (i, u, f):  # what the operations themselves give
        for y in (i, u, f, 3, 2.5):
            try:
                want = (x + y).dtype
            except TypeError:
                with pytest.raises(TypeError):
                    vk.result_type(x, y)
            else:
                assert vk.result_type(x, y) == want, (x.dtype, y)
    assert vk.result_type(i, u) == np.int64 == (i + u).dtype  # numpy's, the device having int64
    assert vk.result_type(np.int8, np.uint8) == np.int16 and vk.result_type(np.float64, f) == np.float64
    with pytest.raises(ValueError, match="at least one"):
        vk.result_type(1, 2.0)
    with pytest.raises(TypeError, match="complex"):
        vk.result_type(f, 1j)


def test_isdtype():
    kinds = {"bool": [vk.bool], "signed integer": [vk.int32, np.int64], "unsigned integer": [vk.uint32],
             "integral": [vk.int32, vk.uint32, np.int64], "real floating": [vk.float32, np.float16, np.float64],
             "complex floating": [np.dtype(np.complex64)], "numeric": [vk.int32, vk.uint32, vk.float32, np.int64]}
    universe = [vk.bool, vk.int32, vk.uint32, vk.float32, np.dtype(np.float16), np.dtype(np.float64),
                np.dtype(np.int64), np.dtype(np.complex64)]
    for kind, members in kinds.items():
        for d in universe:
            want = d in members or (kind == "numeric" and d != vk.bool)
            assert vk.isdtype(d, kind) == want, (d, kind)
    assert vk.isdtype(vk.int32, vk.int32) and not vk.isdtype(vk.int32, vk.uint32)
    assert vk.isdtype(vk.uint32, ("bool", vk.uint32)) and vk.isdtype(vk.bool, ("real floating", "bool"))
    assert not vk.isdtype(vk.float32, ("integral", vk.bool))
    with pytest.raises(ValueError, match="kind"):
        vk.isdtype(vk.float32, "float")
    with pytest.raises(TypeError, match="dtype"):
        vk.isdtype("float32", "numeric")
    assert vk.isdtype(np.float32, "real floating") and not vk.isdtype(np.int32, "real floating")  # scalar types


# -- Array methods ---------------------------------------------------------------------------

def test_array_namespace_device_to_device_mT(rng):
    x = random_array(rng, (2, 3, 4), np.float32)
    a = vk.asarray(x)
    assert a.__array_namespace__() is vk
    assert a.__array_namespace__(api_version="2024.12") is vk
    assert a.__array_namespace__(api_version="2023.12") is vk
    with pytest.raises(ValueError, match="api_version"):
        a.__array_namespace__(api_version="2030.12")
    assert a.device == vk.device()
    assert a.to_device(vk.device()) is a and a.to_device(a.device) is a
    with pytest.raises(ValueError, match="stream"):
        a.to_device(a.device, stream=1)
    np.testing.assert_array_equal(a.mT.numpy(), np.swapaxes(x, -1, -2))


# -- cumulative_sum / cumulative_prod ----------------------------------------------------------

@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (64,), (257,), (3, 0), (4, 65), (2, 3, 17)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_cumulative_sum_prod(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    if dtype != np.bool_:
        x = (x % 3).astype(dtype) if dtype != np.float32 else x  # small products: no wrap
    a = vk.asarray(x)
    axes = [None] if len(shape) == 1 else []
    axes += list(range(-len(shape), len(shape)))
    for axis in axes:
        for initial in (False, True):
            for fn, ref in ((vk.cumulative_sum, np.cumulative_sum), (vk.cumulative_prod, np.cumulative_prod)):
                if dtype == np.bool_ and fn is vk.cumulative_prod:
                    continue  # the standard's numeric dtypes only
                got = fn(a, axis=axis, include_initial=initial)
                want = ref(x.astype(np.float64 if dtype == np.float32 else np.int64), axis=axis,
                           include_initial=initial)
                assert got.shape == want.shape
                want_dtype = np.int32 if dtype == np.bool_ else dtype  # numpy widens to 64 bits
                assert got.dtype == want_dtype
                if dtype == np.float32:
                    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=1e-4)
                else:
                    np.testing.assert_array_equal(got.numpy(), want.astype(want_dtype))


def test_cumulative_dtype_and_errors(rng):
    x = rng.integers(0, 100, (5, 7)).astype(np.int32)
    a = vk.asarray(x)
    got = vk.cumulative_sum(a, axis=1, dtype=vk.float32, include_initial=True)
    assert got.dtype == vk.float32
    np.testing.assert_allclose(got.numpy(), np.cumulative_sum(x, axis=1, include_initial=True), rtol=1e-6)
    with no_gpu_work():
        with pytest.raises(ValueError, match="axis is required"):
            vk.cumulative_sum(a)
        with pytest.raises(np.exceptions.AxisError):
            vk.cumulative_prod(a, axis=2)
        with pytest.raises(TypeError, match="include_initial"):
            vk.cumulative_sum(a, axis=0, include_initial=1)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.cumulative_sum(x, axis=0)


# -- numpy's functions reach the new ones (interop.py) -----------------------------------------

def test_numpy_functions_dispatch_to_the_new_functions(rng):
    x = random_array(rng, (3, 1, 4), np.float32)
    a = vk.asarray(x)
    for got, want in [(np.squeeze(a), np.squeeze(x)), (np.flip(a, 0), np.flip(x, 0)),
                      (np.roll(a, 2, axis=2), np.roll(x, 2, 2)), (np.tile(a, (2, 1, 1)), np.tile(x, (2, 1, 1))),
                      (np.repeat(a, 2, axis=0), np.repeat(x, 2, 0)), (np.expand_dims(a, 1), np.expand_dims(x, 1)),
                      (np.broadcast_to(a, (2, 3, 5, 4)), np.broadcast_to(x, (2, 3, 5, 4))),
                      (np.tril(a[:, 0]), np.tril(x[:, 0])), (np.diff(a, axis=0), np.diff(x, axis=0))]:
        assert isinstance(got, vk.Array)
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(TypeError, match="order='F'"):
        np.reshape(a, (4, 3), order="F")
