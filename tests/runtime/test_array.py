import math

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
SHAPES = [(), (0,), (1,), (7,), (3, 0, 2), (2, 3, 4), (5, 1, 3, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    a = vk.asarray(x)
    assert a.shape == shape and a.dtype == np.dtype(dtype) and a.ndim == len(shape) and a.size == x.size
    got = a.numpy()
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(np.asarray(a), x)


def test_host_dtype_mapping():
    assert vk.asarray([1, 2]).dtype == np.int32
    assert vk.asarray([1.5]).dtype == np.float32
    assert vk.asarray(np.arange(3, dtype=np.uint64)).dtype == np.uint32
    assert vk.asarray([True]).dtype == np.bool_
    assert vk.asarray([1, 2], dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(vk.asarray(np.array([1e40, -np.inf, np.nan])).numpy(),
                                  np.array([np.inf, -np.inf, np.nan], np.float32))


def test_bad_inputs_raise_before_gpu_work():
    with no_gpu_work():
        with pytest.raises(TypeError, match="complex"):
            vk.asarray(np.ones(3, np.complex64))
        with pytest.raises(TypeError, match="complex"):
            vk.asarray([1.0], dtype=np.complex128)
        with pytest.raises(TypeError, match="host dtype"):
            vk.asarray(np.array(["a"]))
        with pytest.raises(OverflowError, match="int32"):
            vk.asarray(np.array([2**31]))
        with pytest.raises(ValueError, match="negative"):
            vk.empty((-1, 2))
        with pytest.raises(TypeError, match="shape"):
            vk.zeros("abc")


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_creation(dtype):
    for shape in [(), (0,), (5,), (3, 4)]:
        np.testing.assert_array_equal(vk.zeros(shape, dtype).numpy(), np.zeros(shape, dtype))
        np.testing.assert_array_equal(vk.ones(shape, dtype).numpy(), np.ones(shape, dtype))
        np.testing.assert_array_equal(vk.full(shape, 7, dtype).numpy(), np.full(shape, 7, dtype))
        assert vk.empty(shape, dtype).shape == shape
    assert vk.full((2,), 3).dtype == np.int32 and vk.full((2,), 3.5).dtype == np.float32
    assert vk.zeros(3).dtype == np.float32


@pytest.mark.parametrize("args", [(10,), (3, 20, 3), (5, -7, -2), (0,), (0.5, 3.0, 0.25), (-1.0, 1.0, 0.1)])
def test_arange(args):
    ref = np.arange(*args)
    got = vk.arange(*args).numpy()
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    with pytest.raises(ZeroDivisionError, match="step"):  # numpy's type
        vk.arange(0, 5, 0)
    with pytest.raises(ValueError, match="inf"):
        vk.arange(0, np.inf)


def test_reshape_and_leading_slices_are_views(rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    a = vk.asarray(x)
    np.testing.assert_array_equal(a.reshape(6, 20).numpy(), x.reshape(6, 20))
    np.testing.assert_array_equal(a.reshape(-1, 5).numpy(), x.reshape(-1, 5))
    np.testing.assert_array_equal(a[2].numpy(), x[2])
    np.testing.assert_array_equal(a[-1, 3].numpy(), x[-1, 3])
    np.testing.assert_array_equal(a[1:3].numpy(), x[1:3])
    np.testing.assert_array_equal(a[2, 1:4].numpy(), x[2, 1:4])
    np.testing.assert_array_equal((a[1:3] * 2).numpy(), x[1:3] * 2)   # ops on views read the offset
    assert a[3:1].shape == (0, 6, 5)
    assert a[1].reshape(-1)._storage is a._storage
    with no_gpu_work():
        with pytest.raises(ValueError, match="cannot reshape"):
            a.reshape(7, 7)
        with pytest.raises(ValueError, match="one unknown"):
            a.reshape(-1, -1)
        with pytest.raises(IndexError, match="out of bounds"):
            a[4]
        with pytest.raises(IndexError, match="too many"):
            a[0, 0, 0, 0]


SHAPE_PAIRS = [((), ()), ((5,), ()), ((), (5,)), ((4, 1), (1, 3)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)),
               ((1,), (0,)), ((3, 0), (3, 1)), ((6, 1, 5, 1), (1, 4, 1, 3)), ((65,), (65,)),
               ((2, 3, 4, 5, 6), (3, 1, 5, 1))]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("sa,sb", SHAPE_PAIRS)
def test_broadcasting_against_numpy(rng, sa, sb):
    x, y = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    a, b = vk.asarray(x), vk.asarray(y)
    for name in BINARY:
        got = getattr(vk, name)(a, b).numpy()
        ref = getattr(np, name)(x, y)
        assert got.shape == ref.shape and got.dtype == ref.dtype, name
        np.testing.assert_allclose(got, ref, rtol=2e-7, err_msg=name)


@pytest.mark.parametrize("da", [np.float32, np.int32, np.uint32, np.bool_])
@pytest.mark.parametrize("db", [np.float32, np.int32, np.uint32, np.bool_])
def test_type_promotion(rng, da, db):
    x, y = random_array(rng, (33,), da), random_array(rng, (33,), db)
    if np.dtype(db).kind in "iu":
        y = y | 1 if np.dtype(db) != np.bool_ else y  # nonzero divisors
    a, b = vk.asarray(x), vk.asarray(y)
    for name in ["add", "multiply", "maximum", "less", "divide"]:
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                ref = getattr(np, name)(x, y)
        except TypeError:
            continue
        if ref.dtype == np.bool_ and name in ("add", "multiply", "maximum"):
            with no_gpu_work(), pytest.raises(TypeError, match="bool"):
                getattr(vk, name)(a, b)
            continue
        got = getattr(vk, name)(a, b).numpy()
        expected_dtype = np.float32 if ref.dtype.kind == "f" else ref.dtype
        assert got.dtype == expected_dtype, (name, da, db)
        np.testing.assert_allclose(got, ref.astype(expected_dtype), rtol=1e-6, err_msg=name)


def test_python_scalars_follow_nep50(rng):
    x = rng.integers(-50, 50, 20, dtype=np.int32)
    a = vk.asarray(x)
    assert (a + 3).dtype == np.int32
    np.testing.assert_array_equal((a + 3).numpy(), x + 3)
    np.testing.assert_array_equal((3 - a).numpy(), 3 - x)
    assert (a * 1.5).dtype == np.float32
    np.testing.assert_allclose((a * 1.5).numpy(), x * 1.5)
    np.testing.assert_allclose((a / 4).numpy(), x / 4)
    np.testing.assert_array_equal((a > 0).numpy(), x > 0)
    f = vk.asarray(x.astype(np.float32))
    np.testing.assert_allclose((2.0 / (f + 100)).numpy(), 2.0 / (x + 100), rtol=1e-6)
    with no_gpu_work(), pytest.raises(OverflowError, match="out of bounds"):
        a + 2**40
    u = vk.asarray(np.array([1], np.uint32))
    with no_gpu_work(), pytest.raises(OverflowError, match="out of bounds"):
        u + (-1)


def test_integer_wraparound_matches_numpy():
    x = np.array([2**31 - 1, -2**31, 7], np.int32)
    u = np.array([0, 2**32 - 1, 5], np.uint32)
    np.testing.assert_array_equal((vk.asarray(x) + 1).numpy(), x + np.int32(1))
    np.testing.assert_array_equal((vk.asarray(u) + np.uint32(1)).numpy(), u + np.uint32(1))
    np.testing.assert_array_equal((-vk.asarray(u)).numpy(), -u)


def test_unary_and_special_values(rng):
    x = np.array([-2.0, -0.0, 0.0, 0.5, 1.0, 80.0, 100.0, np.inf, -np.inf, np.nan], np.float32)
    a = vk.asarray(x)
    with np.errstate(all="ignore"):
        for name in ["exp", "log", "sqrt", "abs", "negative"]:
            got, ref = getattr(vk, name)(a).numpy(), getattr(np, name)(x)
            np.testing.assert_allclose(got, ref, rtol=2e-6, err_msg=name)
        np.testing.assert_array_equal(vk.maximum(a, 0.5).numpy(), np.maximum(x, np.float32(0.5)))
        np.testing.assert_array_equal(vk.minimum(0.5, a).numpy(), np.minimum(np.float32(0.5), x))
        np.testing.assert_array_equal((a / 0.0).numpy(), x / np.float32(0.0))
        np.testing.assert_array_equal((a == a).numpy(), x == x)
        np.testing.assert_array_equal((a != a).numpy(), x != x)
    y = rng.integers(-9, 9, 40, dtype=np.int32)
    np.testing.assert_allclose(vk.exp(vk.asarray(y)).numpy(), np.exp(y), rtol=2e-6)
    np.testing.assert_array_equal(abs(vk.asarray(y)).numpy(), np.abs(y))


def test_where_and_astype(rng):
    c = rng.random((4, 5)) < 0.5
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = rng.integers(-5, 5, (5,), dtype=np.int32)
    np.testing.assert_array_equal(vk.where(vk.asarray(c), vk.asarray(x), vk.asarray(y)).numpy(),
                                  np.where(c, x, y))
    np.testing.assert_array_equal(vk.where(vk.asarray(x) > 0, 1, 0).numpy(), np.where(x > 0, 1, 0))
    np.testing.assert_array_equal(vk.where(vk.asarray(y), 2.5, vk.asarray(x)).numpy(),
                                  np.where(y, np.float32(2.5), x))  # non-bool condition: truthiness
    f = np.array([-2.7, -0.5, 0.0, 0.5, 3.9, np.nan], np.float32)
    np.testing.assert_array_equal(vk.asarray(f).astype(np.bool_).numpy(), f.astype(bool))
    np.testing.assert_array_equal(vk.asarray(f[:5]).astype(np.int32).numpy(), f[:5].astype(np.int32))
    np.testing.assert_array_equal(vk.asarray(y).astype(np.float32).numpy(), y.astype(np.float32))
    np.testing.assert_array_equal(vk.asarray(c).astype(np.int32).numpy(), c.astype(np.int32))


def test_broadcast_errors_raise_before_gpu_work(rng):
    a, b = vk.asarray(np.ones((3, 4), np.float32)), vk.asarray(np.ones((5,), np.float32))
    t = vk.asarray(np.array([True]))
    with no_gpu_work():
        with pytest.raises(ValueError, match=r"\(3, 4\).*\(5,\)"):
            a + b
        with pytest.raises(TypeError, match="unsupported operand"):
            vk.add(a, "x")
        with pytest.raises(TypeError, match="bool"):
            -t


def test_mixed_with_numpy_operands(rng):
    x = rng.standard_normal(6).astype(np.float32)
    a = vk.asarray(x)
    np.testing.assert_allclose((a + x).numpy(), x + x)
    r = x + a  # numpy defers to vk.Array through __array_priority__ / __radd__
    assert isinstance(r, vk.Array)
    np.testing.assert_allclose(r.numpy(), x + x)


def test_scalar_conversions():
    a = vk.asarray(np.array(2.5, np.float32))
    assert float(a) == 2.5 and int(a) == 2 and bool(a)
    one = vk.asarray(np.array([2.5], np.float32))
    assert bool(one)
    for convert in (float, int):  # numpy 2: only 0-d arrays, size 1 or not
        with pytest.raises(TypeError, match="only 0-dimensional"):
            convert(one)
    assert vk.asarray(np.array(7, np.int32)).item() == 7
    assert vk.asarray([1, 2]).tolist() == [1, 2]
    assert len(vk.zeros((3, 2))) == 3 and math.prod(vk.zeros((3, 2)).shape) == 6
    with pytest.raises(ValueError, match="ambiguous"):
        bool(vk.zeros(2))


def test_reduction_methods_match_functions(rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    a = vk.asarray(x)
    # a float32 sum is accurate relative to the sum of magnitudes, not to a result that cancels
    err = np.abs(a.sum(axis=1).numpy() - x.sum(axis=1, dtype=np.float64))
    assert np.all(err <= 8 * np.finfo(np.float32).eps * np.abs(x).sum(axis=1, dtype=np.float64)), err
    np.testing.assert_array_equal(a.max(axis=0, keepdims=True).numpy(), x.max(axis=0, keepdims=True))
    np.testing.assert_array_equal(a.argmin().numpy(), x.argmin())
    np.testing.assert_allclose(a.std(ddof=1).numpy(), x.astype(np.float64).std(ddof=1), rtol=1e-5)
