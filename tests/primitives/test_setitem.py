"""a[key] = value and the in-place operators (vkbackend/primitives/setitem.py) against numpy:
writes land in the array's own buffer, so views see them."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work, random_array

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


def same(a, x):
    assert a.shape == x.shape and a.dtype == x.dtype
    np.testing.assert_array_equal(a.numpy(), x)


def random_key(rng, shape):
    """A random basic key for `shape`: ints, slices of any step, at most one Ellipsis, None."""
    key, d = [], 0
    ellipsis = rng.random() < 0.3
    while d < len(shape):
        if ellipsis and rng.random() < 0.3:
            key.append(Ellipsis)
            ellipsis = False
            d = len(shape) - int(rng.integers(0, len(shape) - d + 1))
            continue
        n = shape[d]
        r = rng.random()
        if r < 0.1:
            key.append(None)
            continue
        if r < 0.35 and n:
            key.append(int(rng.integers(-n, n)))
        elif r < 0.9:
            lo, hi = -n - 2, n + 2
            start = None if rng.random() < 0.3 else int(rng.integers(lo, hi))
            stop = None if rng.random() < 0.3 else int(rng.integers(lo, hi))
            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 3, 5]))
            key.append(slice(start, stop, step))
        else:
            break  # the rest of the dims whole
        d += 1
    return tuple(key)


def random_value(rng, target_shape, dtype):
    """A scalar, or an array that broadcasts to target_shape (axes of length 1, fewer axes,
    or extra leading axes of length 1)."""
    r = rng.random()
    if r < 0.3:
        return random_array(rng, (), dtype)[()].item()  # a Python scalar
    shape = [1 if rng.random() < 0.3 else n for n in target_shape]
    if shape and rng.random() < 0.3:
        shape = shape[int(rng.integers(0, len(shape) + 1)):]
    if target_shape and rng.random() < 0.1:  # (numpy refuses it where the key selects one element)
        shape = [1] + shape
    return random_array(rng, tuple(shape), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(17,), (4, 9), (8, 1, 16), (2, 3, 4, 65), (3, 0, 2)])
def test_basic_keys_against_numpy(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    a = vk.asarray(x)
    for _ in range(12):
        key = random_key(rng, shape)
        try:
            target = x[key].shape
        except IndexError:  # the generator can index an empty axis after an Ellipsis
            continue
        value = random_value(rng, target, dtype)
        as_device = isinstance(value, np.ndarray) and rng.random() < 0.5
        x[key] = value
        a[key] = vk.asarray(value) if as_device else value
        same(a, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_see_writes_and_write_through(rng, dtype):
    x = random_array(rng, (6, 65), dtype)
    a = vk.asarray(x)
    row = a[2]                      # a view at an offset
    v = random_array(rng, (65,), dtype)
    a[2] = v
    same(row, v)
    w = random_array(rng, (65,), dtype)
    row[...] = w                    # writes through the view into a
    x[2] = w
    same(a, x)
    block = a[1:4]
    block[:, ::7] = x[0, :10]
    x[1:4, ::7] = x[0, :10]
    same(a, x)


def test_overlapping_values_are_read_before_written(rng):
    x = random_array(rng, (257,), np.int32)
    a = vk.asarray(x)
    a[1:] = a[:-1]
    x[1:] = x[:-1].copy()
    same(a, x)
    a[::-1] = a
    x[::-1] = x.copy()
    same(a, x)
    m = random_array(rng, (16, 16), np.float32)
    b = vk.asarray(m)
    b[3:, :] = b[:-3, :]
    m[3:, :] = m[:-3, :].copy()
    same(b, m)


def test_scalars_and_conversions(rng):
    x = random_array(rng, (5, 8), np.int32)
    a = vk.asarray(x)
    a[0] = 2.7                                   # numpy's assignment cast truncates
    a[1, ::2] = np.float32(-3.9)
    a[2] = vk.asarray(np.linspace(-4, 4, 8, dtype=np.float32))
    a[3] = np.array([True, False] * 4)
    a[4, 1] = "7"                                # strings are parsed, as numpy parses them
    a[4, 2:4] = ["-5", "12"]
    x[0] = 2.7
    x[1, ::2] = np.float32(-3.9)
    x[2] = np.linspace(-4, 4, 8, dtype=np.float32)
    x[3] = np.array([True, False] * 4)
    x[4, 1] = "7"
    x[4, 2:4] = ["-5", "12"]
    same(a, x)
    b = vk.asarray(np.zeros(6, bool))
    b[:3] = vk.asarray(np.array([0.5, 0.0, -2.0], np.float32))   # to bool: x != 0
    b[3:] = 7
    np.testing.assert_array_equal(b.numpy(), [True, False, True, True, True, True])
    f = vk.asarray(np.zeros(4, np.float32))
    f[1:3] = vk.asarray(np.array([True, True]))
    f[3] = vk.asarray(np.uint32(4000000000))
    np.testing.assert_array_equal(f.numpy(), np.array([0, 1, 1, 4000000000], np.float32))


def test_boolean_mask(rng):
    x = random_array(rng, (9, 65), np.float32)
    a = vk.asarray(x)
    mask = x > 0.5
    a[mask] = 0.0
    x[mask] = 0.0
    same(a, x)
    a[vk.asarray(x < -0.5)] = -1                # a device mask
    x[x < -0.5] = -1
    same(a, x)
    rows = rng.random(9) < 0.5
    row_value = random_array(rng, (65,), np.float32)
    a[rows] = row_value                        # a leading mask, the value for the trailing dims
    x[rows] = row_value
    same(a, x)
    a[rows, ...] = vk.asarray(row_value[:1])
    x[rows, ...] = row_value[:1]
    same(a, x)
    i = vk.asarray(random_array(rng, (33,), np.int32))
    xi = i.numpy()
    i[xi % 3 == 0] = 5.9                        # cast to int32 as numpy casts it
    xi[xi % 3 == 0] = 5.9
    same(i, xi)


def test_integer_array_index(rng):
    x = random_array(rng, (7, 5, 3), np.int32)
    a = vk.asarray(x)
    a[[0, -1, 3]] = 9
    x[[0, -1, 3]] = 9
    same(a, x)
    v = random_array(rng, (2, 2, 3), np.int32)
    idx = np.array([[1, 4], [0, 2]])
    a[:, idx] = v                               # an index array of 2 dims on axis 1
    x[:, idx] = v
    same(a, x)
    a[..., vk.asarray(np.array([2, 0], np.int32))] = vk.asarray(np.int32(-4))
    x[..., [2, 0]] = -4
    same(a, x)
    a[[1, 1, 1]] = np.array([[[1]], [[2]], [[3]]])  # duplicates: the last wins
    x[[1, 1, 1]] = np.array([[[1]], [[2]], [[3]]])
    same(a, x)


def with_index_arrays(rng, key, shape, count):
    """A basic key (random_key) with `count` of its ints and slices made integer arrays (random
    indices in [-n, n), shapes that broadcast together); None when it has too few."""
    consuming = [p for p, k in enumerate(key) if k is not None and k is not Ellipsis]
    if len(consuming) < count:
        return None
    e = key.index(Ellipsis) if Ellipsis in key else len(key)
    before, after = [p for p in consuming if p < e], [p for p in consuming if p > e]
    dims = {p: d for d, p in enumerate(before)}
    dims.update({p: len(shape) - len(after) + d for d, p in enumerate(after)})
    full = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 3))))
    key = list(key)
    for p in rng.choice(consuming, count, replace=False):
        n = shape[dims[p]]
        ishape = tuple(1 if rng.random() < 0.3 else m for m in full)[int(rng.integers(0, len(full) + 1)):]
        key[p] = rng.integers(-n, n, ishape)
    return tuple(key)


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_integer_arrays_against_numpy(rng, dtype):
    """Random keys with 2 or 3 integer arrays among ints, slices of any step, None and '...';
    values broadcast, from the host or the device; the index arrays on the host or the device.
    Duplicate targets are left out (numpy's order for them is its iteration's)."""
    for shape in [(5, 6, 7), (3, 4, 5, 6), (9, 17)]:
        x = random_array(rng, shape, dtype)
        a = vk.asarray(x)
        tried = 0
        while tried < 10:
            key = with_index_arrays(rng, random_key(rng, shape), shape, int(rng.integers(2, 4)))
            if key is None:
                continue
            target = x[key].shape
            flat = np.arange(x.size).reshape(shape)[key]
            if np.unique(flat).size != flat.size:
                continue
            tried += 1
            value = random_value(rng, target, dtype)
            device_key = tuple(vk.asarray(k.astype(np.int32)) if isinstance(k, np.ndarray) and rng.random() < 0.5
                               else k for k in key)
            as_device = isinstance(value, np.ndarray) and rng.random() < 0.5
            x[key] = value
            a[device_key] = vk.asarray(value) if as_device else value
            same(a, x)


def test_several_integer_arrays(rng):
    x = random_array(rng, (6, 7, 8), np.float32)
    a = vk.asarray(x)
    # No two elements of a key target the same one (numpy's order for those is its iteration's):
    # distinct rows i, columns j, and k distinct along both of its dims; some negative.
    i = (rng.permutation(6)[:3] - 6 * rng.integers(0, 2, 3))[:, None]
    j = rng.permutation(7)[:4] - 7 * rng.integers(0, 2, 4)
    k = (rng.permutation(8)[:4] + np.arange(3)[:, None]) % 8 - 8 * rng.integers(0, 2, (3, 4))
    for key in [(i, j), (i, slice(None), k), (i, j, k), (i, 2, k), (slice(None, None, -2), j, k),
                (None, i, ..., k), (i, j, slice(None, None, -3)), (-1, j[:2], [[3], [-2]])]:
        flat = np.arange(x.size).reshape(x.shape)[key]
        assert np.unique(flat).size == flat.size
        v = random_array(rng, x[key].shape, np.float32)
        a[key] = v
        x[key] = v
        same(a, x)
        a[key] = vk.asarray(v[..., :1])
        x[key] = v[..., :1]
        same(a, x)
    a[[1, 1, 1], [2, 2, 2]] = np.array([[1.0], [2.0], [3.0]], np.float32)  # duplicates: the last wins
    x[[1, 1, 1], [2, 2, 2]] = np.array([[1.0], [2.0], [3.0]], np.float32)
    same(a, x)
    a[[2, 3], [0, 1]] = a[4, :2]                                      # a value that views a itself
    x[[2, 3], [0, 1]] = x[4, :2].copy()
    same(a, x)
    part = a[1:5]                                                     # writes through a view
    part[[0, -1], :, [7, 0]] = -1.0
    x[1:5][[0, -1], :, [7, 0]] = -1.0
    same(a, x)
    a[[], []] = 5.0                                                   # empty: nothing written
    same(a, x)


def test_several_device_arrays_drop_out_of_range(rng):
    """Out-of-range device indices are dropped, the others written, as for one array."""
    x = random_array(rng, (5, 6), np.int32)
    a = vk.asarray(x)
    i = np.array([0, 7, -6, 4, 2**31 - 1, -1])
    j = np.array([1, 2, 3, -7, 5, 0])
    v = random_array(rng, (6,), np.int32)
    a[vk.asarray(i.astype(np.int32)), vk.asarray(j.astype(np.int32))] = vk.asarray(v)
    ok = (i >= -5) & (i < 5) & (j >= -6) & (j < 6)
    x[i[ok], j[ok]] = v[ok]
    same(a, x)
    u = np.array([0, 6, 3, 2**32 - 1], np.uint32)
    b = vk.asarray(random_array(rng, (5, 2, 6), np.int32))
    xb = b.numpy().copy()
    b[vk.asarray(u), 1, vk.asarray(u)] = 7
    xb[u[u < 5], 1, u[u < 5]] = 7
    same(b, xb)


def test_setitem_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (4, 5), np.float32))
    v3 = vk.asarray(np.ones(3, np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="could not broadcast"):
            a[0] = np.ones(4)
        with pytest.raises(ValueError, match="could not broadcast"):
            a[:, 1:3] = v3
        with pytest.raises(IndexError, match="out of bounds"):
            a[4] = 1
        with pytest.raises(IndexError, match="out of bounds"):
            a[[0, 5]] = 1
        with pytest.raises(IndexError, match="too many indices"):
            a[0, 0, 0] = 1
        with pytest.raises(IndexError, match="single ellipsis"):
            a[..., ...] = 1
        with pytest.raises(TypeError, match="complex"):
            a[0] = 1j
        with pytest.raises(ValueError, match="could not convert string to float: 'x'"):  # numpy's type
            a[0] = "x"
        with pytest.raises(TypeError, match="value must be"):
            a[0] = {"x": 1}
    i = vk.asarray(np.zeros(3, np.int32))
    m = vk.asarray(np.array([True, False, True, False]))
    with no_gpu_work():
        with pytest.raises(OverflowError):
            i[0] = 2**40
        with pytest.raises(IndexError, match="one value per True"):
            a[m] = np.ones((2, 5), np.float32)
        with pytest.raises(IndexError, match="does not match"):
            a[np.ones(3, bool)] = 1
        with pytest.raises(IndexError, match="mask together with integer array"):
            a[np.ones(4, bool), [0, 1, 2, 3]] = 1
        with pytest.raises(IndexError, match="could not be broadcast together"):
            a[[0, 1], [0, 1, 2]] = 1
        with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
            a[[0, 1], [0, 5]] = 1
        with pytest.raises(ValueError, match="could not broadcast"):
            a[[0, 1], [0, 1]] = np.ones(3)


# -- in-place operators ------------------------------------------------------------------------

def test_inplace_writes_into_the_buffer(rng):
    x = random_array(rng, (8, 65), np.float32)
    y = random_array(rng, (65,), np.float32)
    a = vk.asarray(x)
    row = a[3]
    before = a
    a += vk.asarray(y)
    x += y
    assert a is before
    same(a, x)
    same(row, x[3])                 # the view sees the update
    row *= 2.0                      # an update through a view lands in a
    x[3] *= 2.0
    same(a, x)
    a -= 1
    a /= 4
    x -= 1
    x /= 4
    np.testing.assert_allclose(a.numpy(), x, rtol=1e-6)
    sub = a[2:5]
    sub -= vk.asarray(x[2:5])
    x[2:5] -= x[2:5]
    np.testing.assert_allclose(a.numpy(), x, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_inplace_integers(rng, dtype):
    x = random_array(rng, (257,), dtype)
    a = vk.asarray(x)
    a += 3
    a *= vk.asarray(np.full(257, 2, dtype))
    a -= np.ones(257, dtype)
    x += 3
    x *= 2
    x -= 1
    same(a, x)
    f = vk.asarray(random_array(rng, (257,), np.float32))
    fx = f.numpy()
    f += a                          # float32 += int: same kind is fine
    np.testing.assert_allclose(f.numpy(), fx + x.astype(np.float32), rtol=1e-6)


OPTIONAL = [("__ifloordiv__", "floor_divide", np.floor_divide), ("__imod__", "remainder", np.remainder),
            ("__ipow__", "pow", np.power), ("__iand__", "bitwise_and", np.bitwise_and),
            ("__ior__", "bitwise_or", np.bitwise_or), ("__ixor__", "bitwise_xor", np.bitwise_xor),
            ("__ilshift__", "bitwise_left_shift", np.left_shift),
            ("__irshift__", "bitwise_right_shift", np.right_shift)]


@pytest.mark.parametrize("method,name,ref", OPTIONAL)
def test_inplace_other_operators(rng, method, name, ref):
    if not hasattr(vk, name):
        pytest.skip(f"vk.{name} is not there (yet)")
    x = rng.integers(1, 9, (5, 64)).astype(np.int32)
    y = rng.integers(1, 4, (64,)).astype(np.int32)
    a = vk.asarray(x)
    row = a[1]
    getattr(a, method)(vk.asarray(y))
    want = ref(x, y).astype(np.int32)
    same(a, want)
    same(row, want[1])


def test_inplace_matmul(rng):
    x = random_array(rng, (3, 16, 8), np.float32)
    m = random_array(rng, (8, 8), np.float32)
    a = vk.asarray(x)
    before = a
    a @= vk.asarray(m)
    assert a is before
    np.testing.assert_allclose(a.numpy(), x @ m, rtol=1e-5, atol=1e-5)


def test_inplace_bad_inputs(rng):
    a = vk.asarray(random_array(rng, (4, 5), np.float32))
    i = vk.asarray(random_array(rng, (4, 5), np.int32))
    f = vk.asarray(random_array(rng, (4, 5), np.float32))
    big = vk.asarray(random_array(rng, (2, 4, 5), np.float32))
    u = vk.asarray(random_array(rng, (4, 5), np.uint32))
    rect = vk.asarray(random_array(rng, (5, 3), np.float32))
    with no_gpu_work():
        with pytest.raises(ValueError, match="does not broadcast to the shape"):
            a += big
        with pytest.raises(TypeError, match="same_kind"):
            i += f
        with pytest.raises(TypeError, match="same_kind"):
            i += 1.5
        with pytest.raises(TypeError, match="same_kind"):
            i /= 2
        with pytest.raises(ValueError, match="would not keep the shape"):
            a @= rect
        with pytest.raises(TypeError, match="unsupported operand"):
            a += "x"


def test_inplace_int32_with_uint32_casts_back_as_numpy(rng):
    """numpy computes int32 += uint32 in int64 and casts back (same_kind allows it): so does this."""
    x, y = random_array(rng, (4, 5), np.int32), random_array(rng, (4, 5), np.uint32)
    i = vk.asarray(x)
    i += vk.asarray(y)
    x += y
    assert i.dtype == np.int32
    np.testing.assert_array_equal(i.numpy(), x)
