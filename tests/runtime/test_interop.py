"""numpy's protocols (__array__, __array_ufunc__, __array_function__) and DLPack on vk.Array,
against numpy on the host: numpy calls run on the device or raise TypeError naming the call."""
import contextlib

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

EPS = float(np.finfo(np.float32).eps)


@pytest.fixture(params=["small", "subgroup", "workgroup"])
def n(request, sg):
    """A length around the subgroup or the workgroup (256) boundary."""
    return {"small": 5, "subgroup": sg + 1, "workgroup": 257}[request.param]


@contextlib.contextmanager
def refused(pattern):
    """TypeError matching `pattern`, with nothing recorded, submitted or downloaded (no host copy)."""
    vk.synchronize()
    before = vk.stats()["downloads"]
    with no_gpu_work(), pytest.raises(TypeError, match=pattern):
        yield
    assert vk.stats()["downloads"] == before, "a refused call copied data to the host"


def device_result(r):
    assert isinstance(r, vk.Array), f"expected a vk.Array (computed on the device), got {type(r).__name__}"
    return r.numpy()


# -- ufuncs ------------------------------------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("name", BINARY + COMPARE)
def test_binary_ufuncs_run_on_the_device(rng, n, name):
    uf = getattr(np, name)
    x = rng.standard_normal((3, n)).astype(np.float32)
    y = rng.standard_normal((3, n)).astype(np.float32)
    y[0, ::3] = x[0, ::3]  # ties for the comparisons
    a, b = vk.asarray(x), vk.asarray(y)
    for got, w in ((uf(a, b), uf(x, y)), (uf(x, b), uf(x, y)), (uf(a, y), uf(x, y)),  # numpy operands are uploaded
                   (uf(a, y[1]), uf(x, y[1])), (uf(x[:1], b), uf(x[:1], y))):   # broadcasting
        if name in COMPARE:
            np.testing.assert_array_equal(device_result(got), w)
        else:
            # GLSL's division is good to 2.5 ulp, the rest is exact
            np.testing.assert_allclose(device_result(got), w, rtol=3 * EPS if name == "divide" else 0, atol=0)


def test_python_scalars_and_operators(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    a = vk.asarray(x)
    np.testing.assert_allclose(device_result(np.multiply(a, 2.5)), x * np.float32(2.5), rtol=1e-7)
    np.testing.assert_allclose(device_result(np.subtract(1, a)), 1 - x, rtol=1e-7)
    # numpy's operators on a numpy left operand come here through np.add etc.
    np.testing.assert_allclose(device_result(x + a), x + x, rtol=1e-7)
    np.testing.assert_array_equal(device_result(x < a), np.zeros(n, bool))
    i = rng.integers(-100, 100, n).astype(np.int32)
    np.testing.assert_array_equal(device_result(np.maximum(vk.asarray(i), 7)), np.maximum(i, 7))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "negative", "absolute"])
def test_unary_ufuncs(rng, n, name):
    x = (rng.random((2, n)) + 0.1).astype(np.float32)
    if name in ("negative", "absolute"):
        x -= 0.6
    got = device_result(getattr(np, name)(vk.asarray(x)))
    np.testing.assert_allclose(got, getattr(np, name)(x.astype(np.float64)), rtol=2e-6, atol=5e-7)  # GLSL: log to 2**-21 near 1


def test_ufuncs_found_by_name_at_call_time(monkeypatch, rng):
    """Any vkbackend function named like the ufunc answers it, including ones added later."""
    calls = []

    def fake_hypot(x1, x2):
        calls.append((x1, x2))
        return vk.sqrt(x1 * x1 + x2 * x2)
    monkeypatch.setattr(vk, "hypot", fake_hypot, raising=False)
    x, y = rng.random(9).astype(np.float32), rng.random(9).astype(np.float32)
    a = vk.asarray(x)
    got = device_result(np.hypot(a, y))
    assert len(calls) == 1 and isinstance(calls[0][1], vk.Array)  # the numpy operand was uploaded
    np.testing.assert_allclose(got, np.hypot(x, y), rtol=1e-6)


def test_matmul_ufunc(rng, sg):
    x = rng.standard_normal((sg + 1, 33)).astype(np.float32)
    y = rng.standard_normal((33, 7)).astype(np.float32)
    want = x.astype(np.float64) @ y
    for got in (np.matmul(vk.asarray(x), vk.asarray(y)), x @ vk.asarray(y)):
        np.testing.assert_allclose(device_result(got), want, rtol=1e-5, atol=1e-5)


REDUCE = [("add", np.float32), ("multiply", np.float32), ("maximum", np.int32), ("minimum", np.float32),
          ("logical_and", np.bool_), ("logical_or", np.bool_)]


@pytest.mark.parametrize("name,dtype", REDUCE)
def test_reduce(rng, n, name, dtype):
    uf = getattr(np, name)
    if name == "multiply":
        x = (1 + (rng.random((4, n)) - 0.5) / n).astype(np.float32)  # products near 1
    elif dtype == np.bool_:
        x = rng.random((4, n)) < (0.9 if name == "logical_and" else 0.1)
        x[1] = name == "logical_and"  # one row all True (and) / all False (or)
    else:
        x = random_array(rng, (4, n), dtype)
    a = vk.asarray(x)
    ref = x.astype(np.float64) if dtype == np.float32 else x
    for kwargs in ({}, {"axis": 1}, {"axis": None}, {"axis": (0, 1)}, {"axis": 0, "keepdims": True},
                   {"axis": -1, "keepdims": True}):
        got = uf.reduce(a, **kwargs)
        want = uf.reduce(ref, **kwargs)
        assert isinstance(got, vk.Array) and got.shape == np.shape(want), kwargs
        count = x.size // max(np.size(want), 1)
        err = np.abs(got.numpy().astype(np.float64) - want)
        if name == "add":  # rounding grows with log n, relative to the sum of magnitudes
            assert np.all(err <= 2 * np.log2(count + 2) * EPS * np.add.reduce(np.abs(ref), **kwargs)), kwargs
        elif name == "multiply":  # each of the n - 1 products rounds
            assert np.all(err <= 2 * count * EPS * np.abs(want)), kwargs
        else:
            np.testing.assert_array_equal(got.numpy(), want, err_msg=str(kwargs))


def test_reduce_positional_axis_and_dtype(rng, n):
    i = rng.integers(0, 1000, (3, n)).astype(np.int32)
    a = vk.asarray(i)
    np.testing.assert_array_equal(device_result(np.add.reduce(a, 1)), i.sum(1))
    got = np.add.reduce(a, axis=0, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), i.sum(0), rtol=1e-6)


ACCUMULATE = [("add", np.float32), ("multiply", np.float32), ("maximum", np.float32), ("minimum", np.int32)]


@pytest.mark.parametrize("name,dtype", ACCUMULATE)
def test_accumulate(rng, n, name, dtype):
    uf = getattr(np, name)
    if name == "multiply":
        x = (1 + (rng.random((3, n)) - 0.5) / n).astype(np.float32)
    else:
        x = random_array(rng, (3, n), dtype)
    a = vk.asarray(x)
    ref = x.astype(np.float64) if dtype == np.float32 else x

    def check(got, kwargs, r=ref):
        want = uf.accumulate(r, **kwargs)
        err = np.abs(device_result(got).astype(np.float64) - want)
        count = r.shape[kwargs.get("axis") or 0]
        if name == "add":
            assert np.all(err <= 2 * np.log2(count + 2) * EPS * np.add.accumulate(np.abs(r), **kwargs)), kwargs
        elif name == "multiply":
            assert np.all(err <= 2 * count * EPS * np.abs(want)), kwargs
        else:
            assert np.all(err == 0), kwargs
    for kwargs in ({}, {"axis": 1}, {"axis": -1}):
        check(uf.accumulate(a, **kwargs), kwargs)
    check(uf.accumulate(a[1], axis=None), {}, ref[1])
    with pytest.raises(ValueError, match="multiple axes"):
        uf.accumulate(a, axis=None)


def test_accumulate_dtype(rng, n):
    i = rng.integers(-50, 50, n).astype(np.int32)
    got = np.add.accumulate(vk.asarray(i), dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), np.cumsum(i).astype(np.float32))


def test_ufunc_refusals_name_the_ufunc_and_method(monkeypatch, rng):
    monkeypatch.delattr(vk, "gcd", raising=False)
    x = rng.random((3, 4)).astype(np.float32)
    a, b = vk.asarray(x), vk.asarray(x)
    host, out, i = x.copy(), vk.zeros(4), vk.arange(3)
    with refused(r"numpy\.gcd has no vkbackend implementation"):
        np.gcd(i, 2)
    with refused(r"numpy\.add\.outer has no vkbackend implementation"):
        np.add.outer(a, b)
    with refused(r"numpy\.add\.at"):
        np.add.at(a, [0], 1.0)
    with refused(r"numpy\.add\.reduceat"):
        np.add.reduceat(a, [0, 1])
    with refused(r"numpy\.subtract\.reduce has no vkbackend"):
        np.subtract.reduce(a)
    with refused(r"numpy\.divide\.accumulate has no vkbackend"):
        np.divide.accumulate(a)
    with refused(r"numpy\.add: out= is not supported"):
        np.add(a, b, out=host)
    with refused(r"numpy\.add: out= is not supported"):
        host += a  # numpy's in-place operator is np.add(host, a, out=host)
    with refused(r"numpy\.add: where=<ndarray"):
        np.add(a, b, where=x > 0.5)
    with refused(r"numpy\.multiply: dtype="):
        np.multiply(a, b, dtype=np.float32)
    with refused(r"numpy\.maximum\.reduce: initial=0"):
        np.maximum.reduce(a, initial=0)
    with refused(r"numpy\.maximum\.reduce: dtype= is not supported"):
        np.maximum.reduce(a, dtype=np.float32)
    with refused(r"numpy\.add\.reduce: out="):
        np.add.reduce(a, out=out)
    np.testing.assert_array_equal(host, x)  # untouched


# -- numpy functions ---------------------------------------------------------------------------

def test_array_functions_run_on_the_device(rng, n):
    x = rng.standard_normal((4, n)).astype(np.float32)
    y = rng.standard_normal((4, n)).astype(np.float32)
    a, b = vk.asarray(x), vk.asarray(y)
    x64 = x.astype(np.float64)
    close = dict(rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(device_result(np.sum(a)), x64.sum(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(device_result(np.sum(a, 0)), x64.sum(0), **close)  # positional axis
    np.testing.assert_allclose(device_result(np.mean(a, axis=1, keepdims=True)), x64.mean(1, keepdims=True), **close)
    np.testing.assert_allclose(device_result(np.var(a, axis=1, ddof=1)), x64.var(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(device_result(np.cumsum(a, axis=1)), np.cumsum(x64, axis=1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(device_result(np.max(a, axis=0)), x.max(0))
    np.testing.assert_array_equal(device_result(np.argmax(a, axis=1)), x.argmax(1))
    np.testing.assert_array_equal(device_result(np.concatenate([a, y], axis=1)), np.concatenate([x, y], 1))
    np.testing.assert_array_equal(device_result(np.stack((a, b))), np.stack((x, y)))
    np.testing.assert_array_equal(device_result(np.transpose(a)), x.T)
    np.testing.assert_array_equal(device_result(np.reshape(a, (n, 4))), x.reshape(n, 4))
    np.testing.assert_array_equal(device_result(np.reshape(a, -1, copy=True)), x.ravel())
    np.testing.assert_array_equal(device_result(np.ravel(a)), x.ravel())
    idx = rng.integers(0, n, 11)
    np.testing.assert_array_equal(device_result(np.take(a, idx, 1)), np.take(x, idx, 1))
    np.testing.assert_array_equal(device_result(np.where(a > b, a, y)), np.where(x > y, x, y))
    z = np.zeros_like(a)
    np.testing.assert_array_equal(device_result(z), np.zeros_like(x))
    e = np.empty_like(a, dtype=np.int32)  # numpy's first parameter is `prototype`
    assert isinstance(e, vk.Array) and e.shape == x.shape and e.dtype == np.int32


def test_linalg_functions_go_to_vk_linalg(rng):
    x = rng.standard_normal((37, 9)).astype(np.float32)
    q, r = np.linalg.qr(vk.asarray(x))
    assert isinstance(q, vk.Array) and isinstance(r, vk.Array)
    q, r = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
    np.testing.assert_allclose(q @ r, x, atol=1e-5)
    np.testing.assert_allclose(q.T @ q, np.eye(9), atol=1e-5)
    np.testing.assert_allclose(np.abs(np.diag(r)), np.abs(np.diag(np.linalg.qr(x.astype(np.float64))[1])), rtol=1e-4)


def test_metadata_functions_move_no_data(rng):
    a = vk.asarray(rng.random((2, 3, 5)).astype(np.float32))
    vk.synchronize()
    with no_gpu_work():
        assert np.shape(a) == (2, 3, 5) and np.ndim(a) == 3 and np.size(a) == 30 and np.size(a, 1) == 3
        assert np.result_type(a, np.int32) == np.result_type(np.float32, np.int32)
        assert np.result_type(a, 1.0) == np.float32


def test_function_refusals_name_the_function(monkeypatch, rng):
    monkeypatch.delattr(vk, "median", raising=False)
    monkeypatch.delattr(vk, "allclose", raising=False)
    x = rng.random((3, 4)).astype(np.float32)
    a = vk.asarray(x)
    with refused(r"numpy\.median has no vkbackend implementation"):
        np.median(a)
    with refused(r"numpy\.allclose has no vkbackend implementation"):
        np.allclose(a, x)
    with refused(r"numpy\.fft\.fft has no vkbackend implementation"):
        np.fft.fft(a)
    with refused(r"numpy\.sum: vkbackend's sum does not take out="):
        np.sum(a, out=np.zeros(()))
    with refused(r"numpy\.sum: vkbackend's sum does not take where="):
        np.sum(a, where=x > 0)
    with refused(r"numpy\.var: vkbackend's var does not take mean="):
        np.var(a, mean=np.zeros((1, 1), np.float32))
    with refused(r"numpy\.reshape: order='F'"):
        np.reshape(a, (4, 3), order="F")
    with refused(r"numpy\.concatenate: vkbackend's concatenate does not take dtype="):
        np.concatenate([a, a], dtype=np.float32)
    # numpy's defaults passed explicitly are fine
    np.testing.assert_array_equal(device_result(np.take(a, [1], axis=0, out=None)), x[[1]])
    np.testing.assert_allclose(device_result(np.var(a, correction=1)), x.astype(np.float64).var(ddof=1), rtol=1e-5)


# -- __array__ ---------------------------------------------------------------------------------

def test_array_copy_semantics(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    a = vk.asarray(x)
    h = np.asarray(a)
    np.testing.assert_array_equal(h, x)
    h[0] = 123.0  # a host copy: the device array is unchanged
    assert a.numpy()[0] == x[0]
    np.testing.assert_array_equal(np.array(a, copy=True), x)
    got = np.asarray(a, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x.astype(np.float64))
    with pytest.raises(ValueError, match="Unable to avoid copy.*device memory"):
        np.asarray(a, copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.array(a, copy=False)


# -- DLPack ------------------------------------------------------------------------------------

DL_DTYPES = [np.float32, np.int32, np.uint32, np.bool_, np.float16]


@pytest.mark.parametrize("dtype", DL_DTYPES)
def test_dlpack_to_numpy(rng, n, dtype):
    x = random_array(rng, (3, n), dtype)
    a = vk.asarray(x)
    assert a.__dlpack_device__() == (1, 0)
    for got, want in ((np.from_dlpack(a), x), (np.from_dlpack(a[1:]), x[1:]),
                      (np.from_dlpack(a.reshape(-1)[1:]), x.reshape(-1)[1:]),  # odd offset (float16)
                      (np.from_dlpack(a, device="cpu"), x), (np.from_dlpack(a, copy=True), x)):
        assert got.dtype == np.dtype(dtype) and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint16) if dtype == np.float16 else got,
                                      want.view(np.uint16) if dtype == np.float16 else want)
    with pytest.raises(BufferError, match="copy=False"):
        np.from_dlpack(a, copy=False)


def test_dlpack_capsule_arguments(rng):
    a = vk.asarray(rng.random(5).astype(np.float32))
    assert "dltensor_versioned" in repr(a.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(a.__dlpack__())  # a consumer that knows no versions
    assert "dltensor" in repr(a.__dlpack__(dl_device=(1, 0), copy=True))
    with pytest.raises(BufferError, match=r"DLPack device \(2, 0\)"):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream must be None"):
        a.__dlpack__(stream=1)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_, np.float16, np.float64, np.int64])
def test_from_dlpack_numpy(rng, n, dtype):
    x = random_array(rng, (2, n), np.float32 if dtype == np.float64 else dtype).astype(dtype)
    a = vk.from_dlpack(x)
    assert isinstance(a, vk.Array) and a.shape == x.shape
    assert a.dtype == vk.asarray(x[:1, :1]).dtype  # asarray's rules: float64 -> float32, int64 -> int32
    np.testing.assert_array_equal(a.numpy(), x.astype(a.dtype))
    strided = x[:, ::2]  # DLPack carries strides
    np.testing.assert_array_equal(vk.from_dlpack(strided).numpy(), strided.astype(a.dtype))
    np.testing.assert_array_equal(vk.from_dlpack(x, copy=True).numpy(), x.astype(a.dtype))
    with pytest.raises(BufferError, match="copy=False"):
        vk.from_dlpack(x, copy=False)


def test_from_dlpack_round_trips_and_devices(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    a = vk.asarray(x)
    assert vk.from_dlpack(a) is a and vk.from_dlpack(a, copy=False) is a
    c = vk.from_dlpack(a, copy=True)
    assert c is not a and c._storage is not a._storage
    np.testing.assert_array_equal(c.numpy(), x)
    np.testing.assert_array_equal(vk.from_dlpack(np.from_dlpack(a)).numpy(), x)
    h = vk.from_dlpack(a, device="cpu")
    assert type(h) is np.ndarray
    np.testing.assert_array_equal(h, x)
    np.testing.assert_array_equal(vk.from_dlpack(a, device=(1, 0)), x)
    assert vk.from_dlpack(x, device=vk.device()).shape == x.shape
    with pytest.raises(ValueError, match="device must be"):
        vk.from_dlpack(x, device="cuda")
    with pytest.raises(TypeError, match="__dlpack__"):
        vk.from_dlpack([1.0, 2.0])


def test_from_dlpack_asks_another_device_for_a_host_copy(rng):
    """An exporter on another device (here a fake 'CUDA' one) is asked for dl_device=(1, 0)."""
    x = rng.standard_normal(10).astype(np.float32)
    seen = []

    class OnGpu:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
            seen.append(dl_device)
            if dl_device is None or tuple(dl_device) != (1, 0):
                raise BufferError("device memory")
            return x.copy().__dlpack__(max_version=max_version)
    np.testing.assert_array_equal(vk.from_dlpack(OnGpu()).numpy(), x)
    assert seen == [(1, 0)]


def test_torch_cpu_round_trip(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((4, 9)).astype(np.float32)
    a = vk.asarray(x)
    t = torch.from_dlpack(a)
    assert t.device.type == "cpu"
    np.testing.assert_array_equal(t.numpy(), x)
    b = vk.from_dlpack(torch.from_numpy(x * 2))
    np.testing.assert_array_equal(b.numpy(), x * 2)
    m = torch.from_numpy(x > 0)
    np.testing.assert_array_equal(vk.from_dlpack(m).numpy(), x > 0)


def _capsule_dtype(capsule) -> tuple:
    """(code, bits, lanes) of an unconsumed capsule's DLTensor, read independently of interop.py."""
    import ctypes
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = get_name(capsule)

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64))]

    class Versioned(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("ctx", ctypes.c_void_p),
                    ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]
    ptr = get_ptr(capsule, name)
    t = Versioned.from_address(ptr).dl_tensor if name == b"dltensor_versioned" else DLTensor.from_address(ptr)
    return (t.dtype.code, t.dtype.bits, t.dtype.lanes), tuple(t.shape[i] for i in range(t.ndim))


def test_bfloat16_exports_and_imports_as_kdlbfloat(rng):
    """bfloat16 leaves as DLPack's kDLBfloat (code 4), as torch and JAX export it, in both capsule
    versions, and such a capsule imports back bit for bit (numpy alone refuses both)."""
    bits = rng.integers(0, 1 << 16, (3, 37), dtype=np.uint16)
    bits[(bits & 0x7F80) == 0x7F80] &= 0xBFFF  # finite: NaN payloads aside, every pattern kept
    x = bits.view(vk.bfloat16)
    a = vk.asarray(x)
    for kwargs in ({}, {"max_version": (1, 0)}):
        assert _capsule_dtype(a.__dlpack__(**kwargs)) == ((4, 16, 1), (3, 37))
    assert _capsule_dtype(a[1:, 5:].__dlpack__()) == ((4, 16, 1), (2, 32))
    b = vk.from_dlpack(a, copy=True)  # a vk.Array: copied on the device
    np.testing.assert_array_equal(b.numpy().view(np.uint16), bits)

    class Exporter:  # a foreign producer handing out vk's kDLBfloat capsules (torch's, without torch)
        def __init__(self, arr):
            self.arr = arr

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return self.arr.__dlpack__(**kwargs)
    c = vk.from_dlpack(Exporter(a[:, 1:]))
    assert c.dtype == vk.bfloat16
    np.testing.assert_array_equal(c.numpy().view(np.uint16), bits[:, 1:])
    words = np.arange(4, dtype=np.uint16)  # 16-bit unsigned words stay integers (asarray's dtype)
    f = vk.from_dlpack(Exporter(words))
    assert f.dtype == vk.asarray(words).dtype and f.dtype != vk.bfloat16
    np.testing.assert_array_equal(f.numpy(), words)


def test_torch_bfloat16_round_trip(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((5, 11)).astype(vk.bfloat16)
    t = torch.from_dlpack(vk.asarray(x))
    assert t.dtype == torch.bfloat16
    np.testing.assert_array_equal(t.view(torch.int16).numpy().view(np.uint16), x.view(np.uint16))
    back = vk.from_dlpack(t * 2)
    assert back.dtype == vk.bfloat16
    np.testing.assert_array_equal(back.numpy().view(np.uint16),
                                  (x.astype(np.float32) * 2).astype(vk.bfloat16).view(np.uint16))
