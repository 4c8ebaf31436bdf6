import numpy as np

import vkbackend as vk
from vkbackend import runtime
from vkbackend.memory import size_class


def test_size_classes():
    prev = 0
    for words in list(range(1, 3000)) + [10**5, 123457, 2**20 + 1, 3 * 2**24 + 5]:
        c = size_class(words)
        assert c >= words and c >= prev
        assert words <= 1024 or c <= words * 1.25
        prev = c


def test_pool_does_not_grow_over_10000_ops(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    a = vk.asarray(x)
    acc = vk.zeros(1000)
    for _ in range(50):  # warm up: every size class in use is created
        acc = acc + a
    created = vk.stats()["buffers_created"]
    for _ in range(10_000):
        acc = acc + a
    assert vk.stats()["buffers_created"] == created
    ref = np.zeros(1000, np.float32)
    for _ in range(10_050):  # the same float32 additions, in the same order: bit-exact
        ref = ref + x
    np.testing.assert_array_equal(acc.numpy(), ref)


def test_staging_not_reused_before_its_copy_ran(rng):
    # a's staging memory must not be handed to c while the copy into a is still recorded.
    x = rng.standard_normal(777).astype(np.float32)
    y = rng.standard_normal(777).astype(np.float32)
    a = vk.asarray(x)
    b = a + 1
    del a
    c = vk.asarray(y)
    np.testing.assert_allclose(b.numpy(), x + 1, rtol=1e-6)
    np.testing.assert_array_equal(c.numpy(), y)


def test_views_keep_buffer_alive(rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    row = vk.asarray(x)[2]
    for _ in range(3):
        vk.asarray(rng.standard_normal((4, 5)).astype(np.float32))  # would reuse a freed buffer
    np.testing.assert_array_equal(row.numpy(), x[2])


def test_too_large_array_is_refused():
    limit = runtime.get().device.max_storage_buffer_range
    import pytest
    with pytest.raises(MemoryError, match="maxStorageBufferRange"):
        vk.empty((limit // 4 + 1024,))
