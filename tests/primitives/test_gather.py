"""The gather/scatter family composed: a chain of recorded ops runs in one submit."""
import numpy as np

import vkbackend as vk
from vkbackend.primitives.getitem import getitem
from tests.conftest import random_array


def test_chain_of_gathers_and_transposes_is_one_submit(rng, whole_submits):
    x = random_array(rng, (40, 50), np.float32)
    i1 = rng.integers(-40, 40, 30)
    i2 = rng.integers(0, 50, (7, 30))
    i3 = rng.integers(0, 14, (3, 30))
    a = vk.asarray(x)
    vk.synchronize()
    s0 = vk.stats()["submits"]

    t = vk.transpose(a)                                  # (50, 40), tiled
    u = vk.take(t, i1, axis=1)                           # (50, 30)
    v = vk.take_along_axis(u, i2, 0)                     # (7, 30)
    w = vk.concatenate([v, getitem(v, np.s_[::-1])], axis=0)  # (14, 30)
    y = vk.moveaxis(w.reshape(2, 7, 30), 0, -1)          # (7, 30, 2), strided
    z = vk.scatter_add(vk.swapaxes(y, 0, 1).reshape(30, 14), i3.T, 1.0, axis=1)  # (30, 14)
    vk.put_along_axis(z, np.zeros((30, 1), int), -5.0, 1)
    got = z.numpy()
    assert vk.stats()["submits"] == s0 + 1

    ref_v = np.take_along_axis(np.take(x.T, i1, axis=1), i2, 0)
    ref_w = np.concatenate([ref_v, ref_v[::-1]])
    ref_z = np.swapaxes(np.moveaxis(ref_w.reshape(2, 7, 30), 0, -1), 0, 1).reshape(30, 14).copy()
    np.add.at(ref_z, (np.arange(30)[:, None], i3.T), 1.0)
    ref_z[:, 0] = -5.0
    np.testing.assert_allclose(got, ref_z, rtol=1e-6)


def test_array_T(rng):
    for shape in [(5,), (33, 34), (2, 3, 4)]:
        x = random_array(rng, shape, np.int32)
        np.testing.assert_array_equal(vk.asarray(x).T.numpy(), x.T)


def test_grid_stride_loops_with_a_tiny_grid(monkeypatch, rng):
    # Every kernel loops over what its capped grid does not cover: cap the grid at 3 workgroups.
    from vkbackend.primitives import launch
    monkeypatch.setattr(launch, "GRID_CAP", 3)
    x = random_array(rng, (70, 150), np.float32)
    a = vk.asarray(x)
    np.testing.assert_array_equal(vk.transpose(a).numpy(), x.T)                      # 15 tiles
    np.testing.assert_array_equal(vk.moveaxis(a.reshape(7, 10, 150), 0, -1).numpy(),
                                  np.moveaxis(x.reshape(7, 10, 150), 0, -1))
    np.testing.assert_array_equal(vk.concatenate([a, a]).numpy(), np.concatenate([x, x]))
    idx = rng.integers(-150, 150, (70, 40))
    np.testing.assert_array_equal(vk.take_along_axis(a, idx, 1).numpy(), np.take_along_axis(x, idx, 1))
    m = rng.random(x.shape) < 0.5                                                     # 6 compaction tiles
    big = np.concatenate([x.ravel()] * 4)
    bm = np.concatenate([m.ravel()] * 4)
    np.testing.assert_array_equal(vk.compress_mask(vk.asarray(big), vk.asarray(bm)).numpy(), big[bm])
    flat = rng.integers(0, 150, 5000)
    ref = np.zeros(150, np.int32)
    np.add.at(ref, flat, 1)
    np.testing.assert_array_equal(vk.scatter_add(vk.zeros(150, np.int32), flat, 1).numpy(), ref)


def test_compaction_scan_over_many_tiles(rng):
    # More tiles (2048 elements each) than one workgroup scans at once: the scan pass loops.
    n = 600_000
    x = np.arange(n, dtype=np.int32)
    m = rng.random(n) < 0.1
    np.testing.assert_array_equal(vk.compress_mask(vk.asarray(x), vk.asarray(m)).numpy(), x[m])
