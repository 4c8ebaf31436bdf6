"""vk.matmul / vk.gemm against numpy float64 references (shaders/primitives/matmul.comp)."""
import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import matmul as mm

from tests.conftest import kernels_asked, no_gpu_work, random_array

EPS = np.finfo(np.float32).eps


def ref_matmul(a, b):
    return np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))


def assert_close(got, want, absprod, k):
    """float32 accumulation over k terms: |error| <= c * k * eps * (|A| @ |B|)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == np.float32
    assert np.isfinite(got).all(), "non-finite output (an unwritten, poisoned element?)"
    bound = 2.0 * max(k, 1) * EPS * absprod + 1e-30
    err = np.abs(got.astype(np.float64) - want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else None
    assert (err <= bound).all(), f"error {err[worst]} > bound {bound[worst]} at {worst}"


def check_matmul(got, a, b):
    k = a.shape[-1]
    assert_close(got, ref_matmul(a, b), ref_matmul(np.abs(a), np.abs(b)), k)


# Configs runnable on lavapipe (32 KiB shared): its two defaults on every shape; on a subset, shapes
# that exercise what the NVIDIA defaults do (16x8 and 8x4 per thread, the operands of the next K
# step read ahead), the H100's (8x8 with BK = 16, several vec4 loads per thread; 8x4), a BK that
# does not divide the loads evenly, other thread layouts.
DEFAULT_CONFIGS = ["small", "large_bk8"]
OTHER_CONFIGS = ["medium", "128x128x12/8x8/4x8", "32x64x8/4x8/2x4", "wide", "mid", "tiny", "64x32x12/4x4/4x4+prefetch"]


@pytest.fixture
def config(request, monkeypatch):
    if request.param is None:
        monkeypatch.delenv("VKBACKEND_MATMUL_CONFIG", raising=False)
    else:
        monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", request.param)
    return request.param


SHAPES_2D = [  # (m, k, n) around 64/128 tile edges, BK = 8/12/16 edges, primes, 1s
    (1, 1, 1), (1, 37, 1), (63, 64, 65), (64, 15, 64), (65, 17, 63), (127, 128, 129),
    (128, 8, 128), (129, 257, 37), (37, 129, 257), (257, 3, 5), (2, 200, 131), (96, 24, 100),
]
SHAPES_SUBSET = [(65, 17, 63), (128, 8, 128), (129, 257, 37), (96, 24, 100), (1, 5, 1)]


def _matmul_2d(rng, m, k, n):
    a = random_array(rng, (m, k), np.float32)
    b = random_array(rng, (k, n), np.float32)
    check_matmul((vk.asarray(a) @ vk.asarray(b)).numpy(), a, b)


@pytest.mark.parametrize("config", DEFAULT_CONFIGS, indirect=True)
@pytest.mark.parametrize("m,k,n", SHAPES_2D)
def test_matmul_2d(rng, config, m, k, n):
    _matmul_2d(rng, m, k, n)


@pytest.mark.parametrize("config", OTHER_CONFIGS, indirect=True)
@pytest.mark.parametrize("m,k,n", SHAPES_SUBSET)
def test_matmul_2d_other_tiles(rng, config, m, k, n):
    _matmul_2d(rng, m, k, n)


@pytest.mark.parametrize("config,m,k,n,trans_a,trans_b", [
    ("large", 300, 77, 260, False, False), ("large", 129, 33, 131, True, True),
    ("large", 200, 64, 140, True, False), ("large", 97, 100, 120, False, True),
    ("128x256x8/8x8/4x8", 300, 64, 260, False, False), ("64x32x8/16x4/8x4", 129, 33, 131, False, False),
], indirect=["config"])
def test_nvidia_default_tile_on_lavapipe(rng, dev, monkeypatch, config, m, k, n, trans_a, trans_b):
    """The NVIDIA default ("large", 33 KiB of shared memory) and other big tiles, run on lavapipe
    past its advertised 32 KiB: lavapipe allocates what the shader declares."""
    if not dev.is_software:
        pytest.skip("needs lavapipe (or a device with the shared memory)")
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(rt.device, max_shared_memory=65536))
    a = random_array(rng, (k, m) if trans_a else (m, k), np.float32)
    b = random_array(rng, (n, k) if trans_b else (k, n), np.float32)
    got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a, trans_b).numpy()
    check_matmul(got, a.T if trans_a else a, b.T if trans_b else b)


@pytest.mark.parametrize("config", ["wide", "mid", "tiny", "large_bk8"], indirect=True)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,k,n", [(128, 64, 256), (256, 8, 128), (128, 60, 128), (130, 64, 128)])
def test_whole_tiles(rng, monkeypatch, config, trans_a, trans_b, m, k, n):
    """Products of whole tiles and K steps load their operands without bounds tests (EDGE=0);
    one step short of whole in K or M keeps the tests. The GPUs' tiles (wide, mid, tiny) run here too."""
    used = kernels_asked(monkeypatch)  # (conftest clears the recipes: every kernel is asked for)
    a = random_array(rng, (k, m) if trans_a else (m, k), np.float32)
    b = random_array(rng, (n, k) if trans_b else (k, n), np.float32)
    got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a, trans_b).numpy()
    check_matmul(got, a.T if trans_a else a, b.T if trans_b else b)
    cfg = mm.parse_config(config)
    whole = m % cfg.bm == 0 and n % cfg.bn == 0 and k % cfg.bk == 0
    assert (128, 64, 256) != (m, k, n) or whole  # every config's whole case
    edges = {d.get("EDGE", 1) for shader, d in used if shader == "primitives/matmul.comp"}
    assert edges == ({0} if whole else {1}), used


@pytest.mark.parametrize("shape_a,shape_b", [
    ((7,), (7,)), ((1,), (1,)), ((37,), (37, 5)), ((5, 37), (37,)), ((130,), (130, 67)),
    ((4, 6, 9), (9,)), ((9,), (3, 9, 4)), ((2, 1, 3, 8), (8,)),
])
def test_matmul_vectors(rng, shape_a, shape_b):
    a = random_array(rng, shape_a, np.float32)
    b = random_array(rng, shape_b, np.float32)
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    assert got.shape == np.matmul(a, b).shape
    check_matmul(got, a, b)


@pytest.mark.parametrize("shape_a,shape_b", [
    ((3, 1, 5, 7), (2, 7, 4)),        # both broadcast
    ((2, 3, 4), (4, 5)),              # shared B: folded into one taller matrix
    ((4, 5), (2, 5, 3)),              # shared A
    ((1, 5, 7), (3, 7, 4)),
    ((2, 3, 65, 33), (2, 3, 33, 66)),  # merged batch dims
    ((2, 1, 2, 1, 2, 1, 3, 4), (1, 2, 1, 2, 1, 2, 4, 5)),  # 6 unmergeable batch dims
    ((5, 1, 2, 3), (1, 4, 3, 2)),
])
def test_matmul_batched_broadcast(rng, shape_a, shape_b):
    a = random_array(rng, shape_a, np.float32)
    b = random_array(rng, shape_b, np.float32)
    check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)


@pytest.mark.parametrize("shape_a,shape_b", [
    ((3, 0), (0, 4)), ((0,), (0,)), ((2, 5, 0), (0, 3)), ((0, 4), (4, 3)), ((3, 4), (4, 0)),
    ((0, 3, 4), (4, 2)), ((1, 3, 4), (0, 4, 2)), ((0,), (0, 6)),
])
def test_matmul_empty(shape_a, shape_b):
    a = np.ones(shape_a, np.float32)
    b = np.ones(shape_b, np.float32)
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    want = np.matmul(a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # K == 0: zeros (the output starts poisoned)


def test_matmul_misaligned_views(rng):
    """Offsets and leading dimensions that rule out vec4 access take the scalar paths."""
    m, k, n = 33, 19, 45
    ha = random_array(rng, (1 + m * k,), np.float32)
    hb = random_array(rng, (3 + k * n,), np.float32)
    a = vk.asarray(ha)[1:].reshape(m, k)
    b = vk.asarray(hb)[3:].reshape(k, n)
    check_matmul((a @ b).numpy(), ha[1:].reshape(m, k), hb[3:].reshape(k, n))
    # aligned leading dims (k = 20, n = 44) but an odd offset
    ha = random_array(rng, (2 + 16 * 20,), np.float32)
    a = vk.asarray(ha)[2:].reshape(16, 20)
    hb = random_array(rng, (20, 44), np.float32)
    check_matmul((a @ vk.asarray(hb)).numpy(), ha[2:].reshape(16, 20), hb)


def test_matmul_operators_and_host_operands(rng):
    a = random_array(rng, (6, 5), np.float32)
    b = random_array(rng, (5, 4), np.float32)
    va, vb = vk.asarray(a), vk.asarray(b)
    check_matmul((va @ vb).numpy(), a, b)
    r1, r2 = va @ b, a @ vb  # numpy defers to vk.Array's __rmatmul__
    assert isinstance(r1, vk.Array) and isinstance(r2, vk.Array)
    check_matmul(r1.numpy(), a, b)
    check_matmul(r2.numpy(), a, b)
    check_matmul(vk.matmul(a.tolist(), b).numpy(), a, b)
    # float64 host data computes in float32; int32 @ float32 converts the int operand
    check_matmul(vk.matmul(a.astype(np.float64), vb).numpy(), a, b)
    ib = rng.integers(-5, 5, (5, 4)).astype(np.int32)
    check_matmul(vk.matmul(va, vk.asarray(ib)).numpy(), a, ib.astype(np.float32))


def test_matmul_does_not_touch_inputs(rng):
    a = random_array(rng, (9, 13), np.float32)
    va = vk.asarray(a)
    check_matmul((va @ va.reshape(13, 9)).numpy(), a, a.reshape(13, 9))  # the same buffer twice
    np.testing.assert_array_equal(va.numpy(), a)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,k,n", [(37, 129, 65), (64, 16, 68)])
def test_gemm_transposes_alpha_beta(rng, trans_a, trans_b, m, k, n):
    a = random_array(rng, (k, m) if trans_a else (m, k), np.float32)
    b = random_array(rng, (n, k) if trans_b else (k, n), np.float32)
    c0 = random_array(rng, (m, n), np.float32)
    opa, opb = (a.T if trans_a else a), (b.T if trans_b else b)
    # new output, alpha only
    got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a=trans_a, trans_b=trans_b, alpha=-0.5).numpy()
    assert_close(got, -0.5 * ref_matmul(opa, opb), 0.5 * ref_matmul(np.abs(opa), np.abs(opb)), k)
    # in place with beta
    c = vk.asarray(c0)
    r = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a, trans_b, alpha=2.0, beta=0.75, c=c)
    assert r is c
    want = 2.0 * ref_matmul(opa, opb) + 0.75 * c0.astype(np.float64)
    bound_base = 2.0 * ref_matmul(np.abs(opa), np.abs(opb)) + 0.75 * np.abs(c0)
    assert_close(c.numpy(), want, bound_base, k + 1)


def test_gemm_beta_zero_never_reads_c(rng):
    a = random_array(rng, (10, 7), np.float32)
    b = random_array(rng, (7, 6), np.float32)
    c = vk.full((10, 6), np.nan, dtype=vk.float32)
    vk.gemm(vk.asarray(a), vk.asarray(b), c=c)
    check_matmul(c.numpy(), a, b)
    c = vk.full((10, 5), np.nan, dtype=vk.float32)  # scalar stores (n % 4 != 0)
    vk.gemm(vk.asarray(a), vk.asarray(b[:, :5].T.copy()), trans_b=True, c=c)
    check_matmul(c.numpy(), a, b[:, :5])


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_batched(rng, trans_a, trans_b):
    m, k, n = 9, 21, 14
    a = random_array(rng, (2, 1) + ((k, m) if trans_a else (m, k)), np.float32)
    b = random_array(rng, (3,) + ((n, k) if trans_b else (k, n)), np.float32)
    c0 = random_array(rng, (2, 3, m, n), np.float32)
    opa = np.swapaxes(a, -1, -2) if trans_a else a
    opb = np.swapaxes(b, -1, -2) if trans_b else b
    c = vk.asarray(c0)
    vk.gemm(vk.asarray(a), vk.asarray(b), trans_a, trans_b, alpha=1.5, beta=-1.0, c=c)
    want = 1.5 * ref_matmul(opa, opb) - c0
    assert_close(c.numpy(), want, 1.5 * ref_matmul(np.abs(opa), np.abs(opb)) + np.abs(c0), k + 1)


def test_gemm_k_zero_scales_c(rng):
    c0 = random_array(rng, (3, 5), np.float32)
    c = vk.asarray(c0)
    vk.gemm(vk.zeros((3, 0)), vk.zeros((0, 5)), alpha=3.0, beta=2.0, c=c)
    np.testing.assert_allclose(c.numpy(), 2.0 * c0, rtol=1e-6)


def test_chain_of_matmuls_is_one_submit(rng, whole_submits):
    a = random_array(rng, (40, 40), np.float32) / 6
    va = vk.asarray(a)
    vk.synchronize()
    before = vk.stats()
    r = va
    for _ in range(6):
        r = r @ va
    got = r.numpy()
    after = vk.stats()
    assert after["submits"] - before["submits"] == 1
    want, absw = a.astype(np.float64), np.abs(a).astype(np.float64)
    for _ in range(6):
        want, absw = want @ a, absw @ np.abs(a)
    assert_close(got, want, 4 * absw, 40 * 7)


def test_grid_loops_when_workgroup_counts_are_capped(rng, monkeypatch):
    """Fewer workgroups than tiles or batches: the kernel walks the rest."""
    rt = runtime.get()
    monkeypatch.setattr(rt, "device", dataclasses.replace(rt.device, max_workgroup_count=(2, 3, 2)))
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "32x64x8/4x8/2x4")
    a = random_array(rng, (5, 200, 33), np.float32)
    b = random_array(rng, (5, 33, 300), np.float32)
    check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)


@pytest.mark.parametrize("group", ["2", "3", "0"])
def test_tile_swizzle(rng, monkeypatch, group):
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "32x64x8/4x8/2x4")
    monkeypatch.setenv("VKBACKEND_MATMUL_GROUP", group)
    a = random_array(rng, (233, 40), np.float32)  # 8 row tiles: groups of 3 leave a short last group
    b = random_array(rng, (40, 330), np.float32)
    check_matmul((vk.asarray(a) @ vk.asarray(b)).numpy(), a, b)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 140), k=st.integers(0, 140), n=st.integers(1, 140),
       batch=st.sampled_from([(), (2,), (1, 3)]), seed=st.integers(0, 2**32 - 1))
def test_matmul_random_shapes(m, k, n, batch, seed):
    rng = np.random.default_rng(seed)
    a = random_array(rng, batch + (m, k), np.float32)
    b = random_array(rng, (k, n), np.float32)
    check_matmul((vk.asarray(a) @ vk.asarray(b)).numpy(), a, b)


# -- configuration ---------------------------------------------------------------------------------
def test_config_parsing_and_choice(dev, monkeypatch):
    assert mm.parse_config("128x128x16/8x8") == mm.TileConfig(128, 128, 16, 8, 8, 8, 32)
    assert mm.parse_config("64x64x8/4x4/16x2") == mm.TileConfig(64, 64, 8, 4, 4, 16, 32)
    assert mm.parse_config("large") == mm.CONFIGS["large"]
    for name, cfg in mm.CONFIGS.items():  # each prints as a string that parses back to it
        assert mm.parse_config(str(cfg)) == cfg, name
    assert mm.parse_config("64x64x8/8x4/4x8+prefetch") == mm.CONFIGS["mid"]
    for bad in ["128x128/8x8", "128x128x16/6x8", "128x128x16/20x8", "128x128x6/8x8", "100x128x16/8x8", "64x64x8/4x4/5x4"]:
        with pytest.raises(ValueError):
            mm.parse_config(bad)
    monkeypatch.delenv("VKBACKEND_MATMUL_CONFIG", raising=False)
    for shape in [(1, 1, 1), (4096, 4096, 1), (100, 3000, 7)]:
        cfg = mm.choose_config(dev, *shape)
        assert not cfg.problems(dev)
    # an NVIDIA-like device gets the 128x128 16x8 tile for big problems, smaller tiles for small ones
    nv = dataclasses.replace(dev, name="NVIDIA H100", subgroup_size=32, min_subgroup_size=32,
                             max_subgroup_size=32, max_shared_memory=49152, max_workgroup_invocations=1024)
    assert mm.choose_config(nv, 4096, 4096) == mm.CONFIGS["wide"]  # measured fastest on the H200
    assert mm.choose_config(nv, 1024, 1024) == mm.CONFIGS["mid"]
    assert mm.choose_config(nv, 256, 256) == mm.CONFIGS["tiny"]
    small = dataclasses.replace(dev, max_shared_memory=16384, subgroup_size=8)
    assert mm.choose_config(small, 4096, 4096).shared_bytes <= 16384
    tiny = dataclasses.replace(dev, max_shared_memory=4096, max_workgroup_invocations=128)
    assert not mm.choose_config(tiny, 512, 512).problems(tiny)


# -- bad input: refused before any GPU work --------------------------------------------------------
def test_bad_inputs_do_no_gpu_work(rng, monkeypatch):
    a = vk.asarray(random_array(rng, (3, 4), np.float32))
    b = vk.asarray(random_array(rng, (5, 6), np.float32))
    i = vk.asarray(np.ones((4, 4), np.int32))
    t = vk.asarray(np.ones((4, 4), bool))
    c = vk.asarray(random_array(rng, (3, 4), np.float32))
    host = np.ones((4, 7), np.float32)
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(ValueError, match="does not have enough dimensions"):
            vk.matmul(a, 3.0)
        with pytest.raises(ValueError, match="does not have enough dimensions"):
            vk.matmul(np.float32(2), a)
        with pytest.raises(ValueError, match=r"\(3, 4\).*\(5, 6\)"):
            a @ b
        with pytest.raises(ValueError, match=r"\(3, 4\).*\(7, 4\)"):
            vk.matmul(a, np.ones((7, 4), np.float32))  # host operand: not uploaded
        with pytest.raises(ValueError, match=r"\(5,\)"):
            vk.matmul(np.ones(5, np.float32), a)
        with pytest.raises(ValueError, match="do not broadcast"):
            vk.matmul(np.ones((2, 3, 4), np.float32), np.ones((3, 4, 4), np.float32))
        with pytest.raises(TypeError, match="bool"):
            t @ t
        with pytest.raises(ValueError, match=r"\(4, 4\).*\(3, 4\)"):
            i @ np.ones((3, 4), np.int32)  # the integer path checks alike
        with pytest.raises(TypeError, match="`x2` must be a vk.Array or an array-like, got str"):
            vk.matmul(a, "x")
        # gemm
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            vk.gemm(np.ones(4, np.float32), host)
        with pytest.raises(ValueError, match="inner dimensions 4 and 7"):
            vk.gemm(a, host, trans_b=True)
        with pytest.raises(ValueError, match="inner dimensions 3 and 4"):
            vk.gemm(a, host, trans_a=True)
        with pytest.raises(ValueError, match="beta != 0 needs c"):
            vk.gemm(a, host, beta=1.0)
        with pytest.raises(ValueError, match=r"c has shape \(3, 4\)"):
            vk.gemm(a, host, c=c)
        with pytest.raises(TypeError, match="c has dtype int32"):
            vk.gemm(a, np.ones((4, 4), np.float32), c=i[:3])
        with pytest.raises(ValueError, match="shares memory"):
            vk.gemm(c, np.ones((4, 4), np.float32), c=c)
        with pytest.raises(TypeError, match="vk.Array"):
            vk.gemm(a, np.ones((4, 4), np.float32), c=np.ones((3, 4), np.float32))
        with pytest.raises(TypeError, match="alpha"):
            vk.gemm(a, np.ones((4, 4), np.float32), alpha="2")
        with pytest.raises(TypeError, match="int32"):
            vk.gemm(i, i)
        monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "99x99")
        with pytest.raises(ValueError, match="VKBACKEND_MATMUL_CONFIG|matmul config"):
            vk.matmul(a, np.ones((4, 2), np.float32))
        monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "1024x1024x64/8x8")
        with pytest.raises(ValueError, match="does not fit"):
            vk.matmul(a, np.ones((4, 2), np.float32))


@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m, n, k", [(100, 1, 1000), (1, 100, 1001), (37, 3, 999), (5, 7, 130), (3, 5, 64 * 2 + 1)])
def test_split_k_skinny_products(rng, m, n, k, trans_a, trans_b):
    """Few output tiles and a long K: K is cut into slices (whole BK steps, the rest apart), summed
    into C by reduce.sum_into; into a c= view at an odd offset too (beta 0 never reads it)."""
    dev = runtime.get().device
    assert mm._split_k(dev, mm.choose_config(dev, m, n), m, n, k) > 1
    a = random_array(rng, (k, m) if trans_a else (m, k), np.float32)
    b = random_array(rng, (n, k) if trans_b else (k, n), np.float32)
    oa, ob = (a.T if trans_a else a), (b.T if trans_b else b)
    got = vk.gemm(a, b, trans_a=trans_a, trans_b=trans_b, alpha=-0.5)
    assert_close(got.numpy(), -0.5 * ref_matmul(oa, ob), 0.5 * ref_matmul(np.abs(oa), np.abs(ob)), k)
    holder = vk.full((m * n + 3,), np.nan, dtype=np.float32)
    c = holder[3:].reshape((m, n))
    assert c.offset == 3
    vk.gemm(a, b, trans_a=trans_a, trans_b=trans_b, c=c)
    check_matmul(c.numpy(), oa, ob)
    assert np.isnan(holder.numpy()[:3]).all()


# -- integer matmul: exact, wrapping modulo 2**32 as numpy's int32 / uint32 -------------------------
def full_range(rng, shape, dtype):
    """Values over the dtype's whole range: products and sums overflow."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(dtype)


def ref_int_matmul(a, b, dtype):
    """Independent of numpy's int32 matmul: int64 (wrapping modulo 2**64, a multiple of 2**32),
    then reduced modulo 2**32 by the cast."""
    return np.matmul(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)).astype(dtype)


def check_int(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


INT_VIAS = {"@": lambda a, b: a @ b, "matmul": vk.matmul, "linalg": vk.linalg.matmul}
INT_SHAPES = [  # vectors, matrices around 4/8/16/32, broadcast batches, K == 0, empty results
    ((7,), (7,)), ((5,), (5, 3)), ((4, 6), (6,)), ((1, 1), (1, 1)), ((4, 8), (8, 16)), ((3, 5), (5, 7)),
    ((8, 16), (16, 32)), ((15, 17), (17, 33)), ((33, 31), (31, 9)), ((16, 32), (32, 4)), ((9, 64), (64, 3)),
    ((2, 1, 5, 7), (3, 7, 4)), ((3, 4, 8), (8, 5)), ((4, 8), (2, 3, 8, 16)), ((2, 1, 3, 4), (1, 5, 4, 2)),
    ((6,), (2, 6, 3)), ((2, 3, 6), (6,)), ((4, 0), (0, 3)), ((2, 3, 0), (0, 5)), ((0,), (0,)),
    ((0, 5), (5, 3)), ((3, 5), (5, 0)), ((0, 3, 4), (4, 2)),
]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("i, shapes", list(enumerate(INT_SHAPES)))
def test_integer_matmul_wraps_as_numpy(rng, dtype, i, shapes):
    via = list(INT_VIAS)[i % len(INT_VIAS)]
    a, b = full_range(rng, shapes[0], dtype), full_range(rng, shapes[1], dtype)
    want = ref_int_matmul(a, b, dtype)
    np.testing.assert_array_equal(np.matmul(a, b), want)  # numpy's own int32 matmul wraps alike
    check_int(INT_VIAS[via](vk.asarray(a), vk.asarray(b)).numpy(), want)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("chunk", [1, 7, 40, 200])
@pytest.mark.parametrize("shapes", [((9, 13), (13, 6)), ((2, 1, 5, 11), (3, 11, 4)), ((12,), (12, 5)),
                                    ((3, 17), (2, 1, 17, 3))])
def test_integer_matmul_in_chunks(rng, monkeypatch, dtype, chunk, shapes):
    """Row blocks and K slices (a product bigger than INT_CHUNK), the slices summed by add."""
    monkeypatch.setattr(mm, "INT_CHUNK", chunk)
    a, b = full_range(rng, shapes[0], dtype), full_range(rng, shapes[1], dtype)
    check_int(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), ref_int_matmul(a, b, dtype))


def test_integer_matmul_promotion_and_host_operands(rng):
    """numpy's promotion: bool with an integer gives the integer; host data is uploaded (int64
    host data is int32 here, as elsewhere); float with an integer stays on the float32 path."""
    i, u = full_range(rng, (5, 6), np.int32), full_range(rng, (6, 3), np.uint32)
    t = random_array(rng, (6, 3), np.bool_)
    vi, vu = vk.asarray(i), vk.asarray(u)
    check_int(vk.matmul(vi, vk.asarray(t)).numpy(), ref_int_matmul(i, t, np.int32))
    check_int((vk.asarray(t.T) @ vu).numpy(), ref_int_matmul(t.T, u, np.uint32))
    small = rng.integers(-2**31, 2**31, (6, 4), dtype=np.int64)
    check_int((vi @ small).numpy(), ref_int_matmul(i, small.astype(np.int32), np.int32))  # host operand
    want = ref_int_matmul(small.T.astype(np.int32), i.T, np.int32)
    check_int(vk.matmul(small.T.tolist(), vk.asarray(i.T)).numpy(), want)  # Python ints
    check_int((small.T.astype(np.int32) @ vk.asarray(i.T)).numpy(), want)  # numpy defers: __rmatmul__
    f = random_array(rng, (6, 2), np.float32)
    check_matmul((vi @ f).numpy(), i.astype(np.float64), f)  # the int rounded to float32 within the bound


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_tensordot_and_vecdot_wrap(rng, monkeypatch, dtype):
    """tensordot's integer path is matmul's (in chunks too); vecdot multiplies and sums."""
    a, b = full_range(rng, (3, 4, 5), dtype), full_range(rng, (4, 5, 6), dtype)
    want = np.tensordot(a.astype(np.int64), b.astype(np.int64), axes=2).astype(dtype)
    check_int(vk.tensordot(vk.asarray(a), vk.asarray(b), axes=2).numpy(), want)
    check_int(vk.linalg.tensordot(a, vk.asarray(b), axes=([1, 2], [0, 1])).numpy(), want)
    monkeypatch.setattr(mm, "INT_CHUNK", 17)
    check_int(vk.tensordot(vk.asarray(a), vk.asarray(b), axes=2).numpy(), want)
    x, y = full_range(rng, (2, 1, 33), dtype), full_range(rng, (3, 33), dtype)
    want = (x.astype(np.int64) * y.astype(np.int64)).sum(axis=-1).astype(dtype)
    check_int(vk.vecdot(vk.asarray(x), vk.asarray(y)).numpy(), want)
    check_int(vk.linalg.vecdot(vk.asarray(x), vk.asarray(y)).numpy(), want)
