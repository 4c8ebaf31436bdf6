"""The functions that only move elements (manipulation.py, layout.py, diagonal.py, construct.py)
on the WIDE dtypes (int8/16/64, uint8/16/64, float64) against numpy, bit for bit: the elements
move as their bit patterns (primitives/moves.py), so float64 NaN payloads, -0.0 and integers past
2**32 (int64) or 2**63 (uint64) come back as they went in. Inputs are random bit patterns with
edge values mixed in, often views at odd element offsets (an int8 array's x[3:] starts inside a
32-bit word)."""
import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

WIDE = [np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64, np.float64]
OFFSETS = [0, 3]  # element offset of the device operand in its buffer (3: inside a word for 8/16-bit)
# float64 edge values by their bits: NaNs with payloads (quiet and signalling, both signs), -0.0,
# infinities, the smallest subnormal, the largest finite
F64_EDGES = np.array([0x7FF8000000000001, 0xFFF8DEADBEEF0000, 0x7FF0000000000001, 0xFFF4000000000123,
                      0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x0000000000000001,
                      0x7FEFFFFFFFFFFFFF], np.uint64).view(np.float64)


def sample(rng, shape, dtype):
    """Random bit patterns of dtype (int64 mostly past 2**32, uint64 half past 2**63, float64 over
    every exponent) with its edge values mixed in."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f" and dtype.itemsize < 8:  # converted, not moved, where these meet WIDE dtypes
        return rng.standard_normal(shape).astype(dtype)
    x = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype).copy()
    if dtype == np.float64:
        edges = F64_EDGES
    else:
        info = np.iinfo(dtype)
        edges = np.array([0, 1, info.max, info.min] + ([-1] if info.min else [info.max - 1]), dtype)
    k = min(n, edges.size)
    x[rng.choice(n, k, replace=False)] = edges[rng.permutation(edges.size)[:k]]
    return x.reshape(shape)


def device(rng, x, offset=0):
    """x on the device as a view starting `offset` elements into its buffer."""
    dtype = x.dtype
    flat = np.concatenate([sample(rng, (offset,), dtype), x.reshape(-1)])
    return vk.asarray(flat, dtype=dtype)[offset:].reshape(x.shape)


def check(got, want):
    """got (a vk.Array) has numpy's dtype, shape and bits."""
    want = np.asarray(want)
    assert isinstance(got, vk.Array)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(np.ascontiguousarray(got.numpy()).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


def pair(rng, shape, dtype, offset=0):
    x = sample(rng, shape, dtype)
    return x, device(rng, x, offset)


# -- flips, rolls, broadcasts, tiles, repeats --------------------------------------------------

@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_flip_and_roll(rng, dtype, offset):
    for shape in [(1,), (7,), (9,), (65,), (257,), (3, 5), (8, 9), (2, 3, 5), (4, 1, 33)]:
        x, a = pair(rng, shape, dtype, offset)
        check(vk.flip(a), np.flip(x))
        check(vk.flip(a, axis=-1), np.flip(x, axis=-1))
        check(vk.roll(a, 3), np.roll(x, 3))
        check(vk.roll(a, -2, axis=0), np.roll(x, -2, axis=0))
        if x.ndim >= 2:
            check(vk.flip(a, axis=0), np.flip(x, axis=0))
            check(vk.roll(a, (1, -3), axis=(0, -1)), np.roll(x, (1, -3), axis=(0, -1)))
    x, a = pair(rng, (2, 3, 4, 5), dtype, offset)  # four rolled axes: two passes
    check(vk.roll(a, (1, 2, 3, 4), axis=(0, 1, 2, 3)), np.roll(x, (1, 2, 3, 4), axis=(0, 1, 2, 3)))


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_broadcast_tile_repeat(rng, dtype, offset):
    x, a = pair(rng, (3, 1, 5), dtype, offset)
    check(vk.broadcast_to(a, (2, 3, 7, 5)), np.broadcast_to(x, (2, 3, 7, 5)))
    y, b = pair(rng, (7, 1), dtype, offset)
    for got, want in zip(vk.broadcast_arrays(a, b), np.broadcast_arrays(x, y)):
        check(got, want)
    for reps in [(2,), (2, 3), (3, 1, 2), (2, 1, 1, 2)]:
        check(vk.tile(a, reps), np.tile(x, reps))
    x, a = pair(rng, (3, 5, 9), dtype, offset)
    for axis in (None, 0, 1, 2):
        check(vk.repeat(a, 3, axis=axis), np.repeat(x, 3, axis=axis))
    counts = rng.integers(0, 4, 5)
    check(vk.repeat(a, counts, axis=1), np.repeat(x, counts, axis=1))
    check(vk.repeat(a, vk.asarray(counts.astype(np.int32)), axis=1), np.repeat(x, counts, axis=1))


# -- transposes --------------------------------------------------------------------------------

@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_transposes(rng, dtype, offset):
    # (33, 40) and (3, 17, 65) take the tiled transpose (edges >= 8), the others the strided copy
    for shape in [(7, 9), (33, 40), (3, 17, 65), (2, 3, 4, 5), (1, 9, 1)]:
        x, a = pair(rng, shape, dtype, offset)
        check(a.T, x.T)
        check(vk.transpose(a), np.transpose(x))
        check(vk.matrix_transpose(a), np.swapaxes(x, -1, -2))
        check(a.mT, np.swapaxes(x, -1, -2))
        check(vk.swapaxes(a, 0, -1), np.swapaxes(x, 0, -1))
        check(vk.moveaxis(a, 0, -1), np.moveaxis(x, 0, -1))
        perm = tuple(rng.permutation(x.ndim))
        check(vk.permute_dims(a, perm), np.transpose(x, perm))
        for got, want in zip(vk.unstack(a, axis=-1), np.moveaxis(x, -1, 0)):
            check(got, want)


# -- joins -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", WIDE)
def test_concat_and_stack_of_one_dtype(rng, dtype):
    for axis in (0, 1, -1, None):
        parts = [pair(rng, (3, n, 5) if axis in (1,) else (n, 3, 5) if axis == 0 else (3, 5, n), dtype, off)
                 for n, off in ((1, 0), (4, 3), (9, 1))]
        check(vk.concat([a for _, a in parts], axis=axis), np.concatenate([x for x, _ in parts], axis=axis))
        check(vk.concatenate([a for _, a in parts], axis=axis), np.concatenate([x for x, _ in parts], axis=axis))
    parts = [pair(rng, (5, 7), dtype, off) for off in (0, 1, 3)]
    for axis in (0, 1, 2, -1):
        check(vk.stack([a for _, a in parts], axis=axis), np.stack([x for x, _ in parts], axis=axis))
    x, a = pair(rng, (4, 3), dtype, 1)
    check(vk.concat([a, a[1:], a[:0]]), np.concatenate([x, x[1:], x[:0]]))


PROMOTIONS = [(np.int8, np.int16), (np.int8, np.uint8), (np.uint8, np.int8), (np.uint16, np.int32),
              (np.bool_, np.int8), (np.int8, np.float32), (np.uint16, np.float32), (np.int32, np.int64),
              (np.uint32, np.uint64), (np.float32, np.float64), (np.int16, np.float64), (np.int64, np.uint64),
              (np.uint8, np.uint64), (np.int64, np.int64)]


@pytest.mark.parametrize("d1, d2", PROMOTIONS)
def test_concat_promotes_as_numpy(rng, d1, d2):
    """Mixed dtypes join in numpy's result type, converted as numpy converts (exact here: the
    values of an integer into float64 are the ones float64 holds, or numpy's rounding)."""
    x, y = sample(rng, (3, 4), d1), sample(rng, (2, 4), d2)
    a, b = device(rng, x, 1), device(rng, y, 3)
    want = np.concatenate([x, y])
    check(vk.concat([a, b]), want)
    check(vk.concatenate([b, a], axis=None), np.concatenate([y, x], axis=None))
    check(vk.stack([a[:2], b]), np.stack([x[:2], y]))


@pytest.mark.parametrize("dtype", WIDE)
def test_concat_with_host_data(rng, dtype):
    """Host data joins a WIDE array as numpy would join the dtype it is held in (host int64 as
    int32, float64 as float32: vk.asarray's defaults), uploaded in the result's dtype."""
    x, a = pair(rng, (3, 4), dtype, 1)
    host = rng.integers(-100, 100, (2, 4))
    held = host.astype(np.int32)
    check(vk.concat([a, host]), np.concatenate([x, held]))
    check(vk.concat([host.tolist(), a], axis=0), np.concatenate([held, x]))


# -- triangles, diagonals, eye, meshgrid -------------------------------------------------------

@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", WIDE)
def test_tril_triu_diagonal(rng, dtype, offset):
    for shape in [(1, 1), (5, 7), (9, 4), (2, 3, 17, 9)]:
        x, a = pair(rng, shape, dtype, offset)
        m, n = shape[-2:]
        for k in (-m - 1, -m, -2, 0, 1, 3, n - 1, n):
            check(vk.tril(a, k=k), np.tril(x, k=k))
            check(vk.triu(a, k=k), np.triu(x, k=k))
            check(vk.linalg.diagonal(a, offset=k), np.diagonal(x, offset=k, axis1=-2, axis2=-1))


@pytest.mark.parametrize("dtype", WIDE)
def test_eye_and_meshgrid(rng, dtype):
    for shape, k in [((1, 1), 0), ((5, 7), 1), ((9, 4), -2), ((6, 6), 6)]:
        check(vk.eye(*shape, k=k, dtype=dtype), np.eye(*shape, k=k, dtype=dtype))
    vecs = [pair(rng, (n,), dtype, off) for n, off in ((3, 1), (5, 0), (4, 3))]
    for indexing in ("xy", "ij"):
        for got, want in zip(vk.meshgrid(*[a for _, a in vecs], indexing=indexing),
                             np.meshgrid(*[x for x, _ in vecs], indexing=indexing)):
            check(got, want)


@pytest.mark.parametrize("dtype", WIDE)
def test_views_and_copies(rng, dtype):
    x, a = pair(rng, (1, 3, 1, 5), dtype, 3)
    check(vk.squeeze(a), np.squeeze(x))
    check(vk.expand_dims(a, axis=(0, 5)), np.expand_dims(x, (0, 5)))
    check(vk.reshape(a, (5, 3), copy=True), x.reshape(5, 3))
    y, b = pair(rng, (5, 9), dtype, 1)
    check(vk.strided_copy(b, (3, 4), (-9, 2), b.offset + 20), np.lib.stride_tricks.as_strided(
        y.reshape(-1)[20:], (3, 4), (-9 * y.itemsize, 2 * y.itemsize)))


# -- what still refuses them -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float64])
def test_what_computes_refuses_them_before_any_gpu_work(rng, dtype):
    x, a = pair(rng, (4, 4), dtype, 1)
    half = vk.asarray(np.ones((1, 4), np.float16))
    with no_gpu_work():
        if dtype != np.float64:  # QR and the convolutions compute in float32 or float64
            with pytest.raises(TypeError, match=np.dtype(dtype).name):
                vk.linalg.qr(a)
            with pytest.raises(TypeError, match=np.dtype(dtype).name):
                vk.conv2d(a.reshape((1, 1, 4, 4)), a[:1].reshape((1, 1, 2, 2)))  # float dtypes only
        with pytest.raises(TypeError, match="float16"):
            vk.linalg.qr(half)  # numpy's linalg refuses float16 too


def test_contiguous_copies_move_whole_words(rng):
    """A contiguous copy of whole words (any 64-bit one; 8/16-bit ones that start and end on word
    boundaries) is a 32-bit word copy, 16 bytes at a time: the 32-bit variants, no others."""
    from vkbackend.primitives.layout import plan_copy
    plan, vec4 = plan_copy((10,), 4, [1], 2, [1], np.float64, np.float64, "test")
    assert vec4 and plan.defines == {"T_DST": "uint", "T_SRC": "uint", "VEC4": 1} and plan.words[:3] == [20, 8, 4]
    plan, vec4 = plan_copy((16,), 4, [1], 8, [1], np.int8, np.int8, "test")
    assert plan.defines == {"T_DST": "uint", "T_SRC": "uint"} and plan.words[:3] == [4, 1, 2]
    plan, vec4 = plan_copy((15,), 4, [1], 8, [1], np.int8, np.int8, "test")  # ends inside a word
    assert not vec4 and plan.defines["T_DST"] == "uint8_t" and plan.words[:3] == [15, 4, 8]
    plan, vec4 = plan_copy((8,), 0, [1], 0, [1], np.float32, np.float32, "test")
    assert vec4 and plan.defines == {"T_DST": "uint", "T_SRC": "uint", "VEC4": 1}
