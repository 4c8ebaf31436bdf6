"""float16 vk.matmul / vk.gemm (primitives/matmul_half.py) against numpy: float64 products of the
float16 inputs, rounded once to float16. Each test runs on every kernel this device can run:
'coopmat' (matmul_coopmat.comp, VK_KHR_cooperative_matrix), 'storage16' and 'packed' (matmul.comp
reading float16_t, or halves unpacked from words), the latter two forced by hiding features."""
import dataclasses

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import launch
from vkbackend.primitives import matmul as mm
from vkbackend.primitives import matmul_half as mh

from tests.conftest import assert_rounded_once, h200_like, kernels_asked, no_gpu_work

U32 = 2.0 ** -24   # float32 unit roundoff

NO_COOPMAT = ("the device reports no VK_KHR_cooperative_matrix 16x16x16 float16 x float16 -> float32 "
              "shape with float16 storage and a fixed subgroup size (lavapipe has none): this path "
              "runs on GPUs that do (the H200)")


@pytest.fixture(params=["coopmat", "storage16", "packed"])
def kernel(request, monkeypatch):
    """Runs the test on one float16 kernel: the device as it is where it takes that path, else the
    device with the features that would select another path hidden (the kernels run on the real
    device, which has them)."""
    rt = runtime.get()
    dev = rt.device
    if request.param == "coopmat":
        if not mh.has_coopmat(dev):
            pytest.skip(NO_COOPMAT)
    elif request.param == "storage16":
        if not mh.HALF_STORAGE <= dev.features:
            pytest.skip("the device lacks 16-bit storage or float16 arithmetic (shaderFloat16)")
        monkeypatch.setattr(rt, "device", dataclasses.replace(dev, features=dev.features - {"cooperativeMatrix"}))
    else:
        hidden = mh.HALF_STORAGE | {"cooperativeMatrix"}
        monkeypatch.setattr(rt, "device", dataclasses.replace(dev, features=dev.features - hidden))
    assert mh.path() == request.param
    return request.param


def f16(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def check_half(got, want64, absprod, k):
    """got (float16) against the exact product `want64` rounded to float16: one float16 rounding
    (half an ulp, a whole one where float32's error crosses a rounding boundary) plus float32
    accumulation over k terms (k * 2**-24 * |A| @ |B|, twice for the summation order)."""
    got = np.asarray(got)
    want = want64.astype(np.float16)
    assert got.dtype == np.float16, got.dtype
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.isfinite(got).all(), "non-finite output (an unwritten, poisoned element?)"
    ulp = np.spacing(np.abs(want)).astype(np.float64)
    bound = ulp + 2.0 * max(k, 1) * U32 * absprod
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if err.size:
        worst = np.unravel_index(np.argmax(err - bound), err.shape)
        assert (err <= bound).all(), f"error {err[worst]} > bound {bound[worst]} at {worst} (k={k})"


def ref(a, b):
    return np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))


def check_matmul(got, a, b):
    check_half(got, ref(a, b), ref(np.abs(a), np.abs(b)), a.shape[-1])


SIZES = [1, 15, 16, 17, 33, 64, 100]
SHAPES = ([(m, k, n) for m in (1, 16, 17, 33) for k in (1, 17, 64) for n in (1, 15, 64)]
          + [(100, 100, 100), (15, 31, 16), (64, 127, 33), (33, 255, 100), (128, 64, 130), (7, 1000, 9)])


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_shapes(kernel, m, k, n):
    rng = np.random.default_rng(m * 10007 + k * 101 + n)
    a, b = f16(rng, (m, k)), f16(rng, (k, n))
    got = vk.matmul(vk.asarray(a), vk.asarray(b))
    assert got.dtype == np.float16 and np.matmul(a, b).dtype == np.float16
    check_matmul(got.numpy(), a, b)


@pytest.mark.parametrize("n", SIZES)
def test_vectors(kernel, n):
    rng = np.random.default_rng(n)
    a, v = f16(rng, (17, n)), f16(rng, (n,))
    check_matmul(vk.matmul(vk.asarray(a), vk.asarray(v)).numpy(), a, v)          # (17,)
    check_matmul(vk.matmul(vk.asarray(v), vk.asarray(a.T.copy())).numpy(), v, a.T)  # (17,)
    check_matmul((vk.asarray(v) @ vk.asarray(v)).numpy(), v, v)                   # ()


def test_float32_accumulation(kernel):
    # 3000 products of 1: float16 sums stop at 2048 (2048 + 1 rounds back to 2048); float32 sums
    # are exact and 3000 is a float16.
    k = 3000
    a, b = np.ones((3, k), np.float16), np.ones((k, 5), np.float16)
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    np.testing.assert_array_equal(got, np.full((3, 5), 3000, np.float16))
    # Products below float16's range (2**-14 * 2**-14) summed in float32 give a normal float16.
    tiny = np.full((2, 1024), 2.0 ** -14, np.float16)
    got = vk.matmul(vk.asarray(tiny), vk.asarray(tiny.T.copy())).numpy()
    np.testing.assert_array_equal(got, np.full((2, 2), 2.0 ** -18, np.float16))


def test_overflow_rounds_to_inf(kernel):
    # float32 sums past float16's largest (65504) round to inf, as numpy's float64 -> float16.
    a = np.full((2, 64), 100.0, np.float16)
    b = np.full((64, 3), 20.0, np.float16)   # 128000 each
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, ref(a, b).astype(np.float16))
    assert np.isposinf(got).all()


@pytest.mark.parametrize("sa,sb", [
    ((3, 17, 33), (3, 33, 15)), ((3, 1, 17, 33), (2, 33, 15)), ((4, 16, 16), (16, 16)),
    ((17, 33), (5, 33, 64)), ((2, 3, 64, 16), (2, 3, 16, 64)), ((33,), (4, 33, 17)), ((4, 15, 33), (33,)),
    ((2, 2, 2, 2, 2, 5, 7), (7, 3)), ((2, 1, 2, 1, 2, 5, 7), (1, 2, 1, 2, 1, 7, 3)),
])
def test_batched(kernel, sa, sb):
    rng = np.random.default_rng(len(sa) * 31 + len(sb))
    a, b = f16(rng, sa), f16(rng, sb)
    got = vk.matmul(vk.asarray(a), vk.asarray(b))
    assert got.shape == np.matmul(a, b).shape
    check_matmul(got.numpy(), a, b)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,k,n", [(17, 33, 15), (64, 64, 64), (16, 24, 40), (1, 100, 33), (100, 9, 1)])
def test_gemm_transposed(kernel, trans_a, trans_b, m, k, n):
    rng = np.random.default_rng(m + 3 * k + 7 * n + trans_a + 2 * trans_b)
    a, b = f16(rng, (k, m) if trans_a else (m, k)), f16(rng, (n, k) if trans_b else (k, n))
    opa, opb = (a.T if trans_a else a), (b.T if trans_b else b)
    got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a=trans_a, trans_b=trans_b, alpha=0.5)
    assert got.dtype == np.float16
    check_half(got.numpy(), 0.5 * ref(opa, opb), 0.5 * ref(np.abs(opa), np.abs(opb)), k)


@pytest.mark.parametrize("trans_a,trans_b", [(False, True), (True, False)])
def test_gemm_batched_transposed(kernel, trans_a, trans_b):
    rng = np.random.default_rng(5)
    m, k, n = 33, 40, 17
    a = f16(rng, (3, 1, k, m) if trans_a else (3, 1, m, k))
    b = f16(rng, (2, n, k) if trans_b else (2, k, n))
    opa, opb = (np.swapaxes(a, -1, -2) if trans_a else a), (np.swapaxes(b, -1, -2) if trans_b else b)
    got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a=trans_a, trans_b=trans_b)
    assert got.shape == (3, 2, m, n)
    check_half(got.numpy(), ref(opa, opb), ref(np.abs(opa), np.abs(opb)), k)


@pytest.mark.parametrize("beta", [0.0, 0.75])
def test_gemm_into_float32(kernel, beta):
    # float16 operands, float32 C updated in place (C = alpha op(A) op(B) + beta C), a C at an
    # offset (a view) and with a leading dimension that no vector store can take.
    rng = np.random.default_rng(11)
    m, k, n = 35, 70, 18
    a, b = f16(rng, (m, k)), f16(rng, (n, k))
    c_host = rng.standard_normal((3, m, n)).astype(np.float32)
    c_all = vk.asarray(c_host)
    c = c_all[1]
    out = vk.gemm(vk.asarray(a), vk.asarray(b), trans_b=True, alpha=-1.5, beta=beta, c=c)
    assert out is c and out.dtype == np.float32
    want = -1.5 * ref(a, b.T) + beta * c_host[1]
    bound = 2 * k * U32 * (1.5 * ref(np.abs(a), np.abs(b.T)) + abs(beta) * np.abs(c_host[1])) + 1e-30
    got = c_all.numpy()
    assert (np.abs(got[1] - want) <= bound).all()
    np.testing.assert_array_equal(got[[0, 2]], c_host[[0, 2]])   # its neighbours untouched


@pytest.mark.parametrize("offset", [1, 2, 3, 4, 8])
def test_views_at_offsets(kernel, offset):
    # Operands starting at any half (odd, within a word, past a vector boundary).
    rng = np.random.default_rng(offset)
    m, k, n = 24, 32, 16
    flat_a, flat_b = f16(rng, offset + m * k), f16(rng, offset + k * n)
    a, b = flat_a[offset:].reshape(m, k), flat_b[offset:].reshape(k, n)
    va = vk.asarray(flat_a)[offset:].reshape(m, k)
    vb = vk.asarray(flat_b)[offset:].reshape(k, n)
    assert va.offset == offset
    check_matmul(vk.matmul(va, vb).numpy(), a, b)
    got = vk.gemm(vb, va, trans_a=True, trans_b=True)   # (n, m) = b.T @ a.T
    check_half(got.numpy(), ref(b.T, a.T), ref(np.abs(b.T), np.abs(a.T)), k)


def test_deep_k_and_loop_budget(kernel):
    # Deep products: split-K where few tiles (matmul.py), and under a small loop budget
    # (VKBACKEND_LOOP_BUDGET=1024) K slices adding into the float32 sum before its one rounding.
    rng = np.random.default_rng(7)
    for m, k, n in [(16, 5000, 16), (3, 40000, 5), (40, 2049, 24)]:
        a, b = f16(rng, (m, k)), f16(rng, (k, n))
        check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)
    budget = launch.loop_budget()
    if budget is not None and budget <= 1024 and kernel != "coopmat":
        cfg = mm.choose_config(runtime.get().device, 3, 5)
        trips = mm._grid(runtime.get().device, cfg, 3, 5, 1)[1]
        assert len(mm._k_slices(40000, cfg.bk, trips, 3, 5, 1)) > 1  # the case above was sliced


def test_mixed_dtypes_promote_to_float32(kernel):
    rng = np.random.default_rng(3)
    a16, b32 = f16(rng, (17, 33)), rng.standard_normal((33, 15)).astype(np.float32)
    i32 = rng.integers(-5, 5, (33, 15)).astype(np.int32)
    for x, y in [(a16, b32), (b32.T.copy(), a16.T.copy()), (a16, i32)]:
        got = vk.matmul(vk.asarray(x), vk.asarray(y))
        assert got.dtype == np.float32 and np.matmul(x, y).dtype in (np.float32, np.float64)
        want = ref(x, y)
        bound = 2 * x.shape[-1] * 2.0 ** -23 * ref(np.abs(x), np.abs(y)) + 1e-30
        assert (np.abs(got.numpy() - want) <= bound).all()
    # host float16 data with a device array, and a bool operand, stay float16 (numpy's rules)
    mask = rng.random((33, 15)) < 0.5
    assert np.matmul(a16, mask).dtype == np.float16
    got = vk.matmul(vk.asarray(a16), vk.asarray(mask))
    check_matmul(got.numpy(), a16, mask.astype(np.float16))
    got = vk.matmul(a16, vk.asarray(mask.astype(np.float16)))
    check_matmul(got.numpy(), a16, mask.astype(np.float16))


def test_empty_and_zero_k(kernel):
    a, b = np.zeros((0, 5), np.float16), np.zeros((5, 3), np.float16)
    got = vk.matmul(vk.asarray(a), vk.asarray(b))
    assert got.shape == (0, 3) and got.dtype == np.float16
    a, b = np.zeros((4, 0), np.float16), np.zeros((0, 3), np.float16)
    got = vk.matmul(vk.asarray(a), vk.asarray(b)).numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.zeros((4, 3), np.float16))


def test_replayed_recipe_on_fresh_data(kernel):
    rng = np.random.default_rng(9)
    for _ in range(3):   # the second and third calls replay the first's plan
        a, b = f16(rng, (33, 17)), f16(rng, (17, 65))
        check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)


def test_bad_inputs():
    h = vk.asarray(np.ones((3, 4), np.float16))
    c16, c32 = vk.asarray(np.ones((3, 3), np.float16)), vk.zeros((3, 4))
    s0, h3 = vk.asarray(np.float16(1)), vk.asarray(np.ones((2, 3, 4), np.float16))
    h5 = vk.asarray(np.ones((3, 4, 5), np.float16))
    with no_gpu_work():
        with pytest.raises(TypeError, match="float16"):
            vk.gemm(h, h, trans_b=True, beta=1.0, c=c16)
        with pytest.raises(ValueError, match="beta != 0 needs c"):
            vk.gemm(h, h, trans_b=True, beta=1.0)
        with pytest.raises(ValueError, match="not aligned"):
            vk.matmul(h, h)
        with pytest.raises(ValueError, match="inner dimensions"):
            vk.gemm(h, h)
        with pytest.raises(ValueError, match="shape"):
            vk.gemm(h, h, trans_b=True, c=c32)
        with pytest.raises(ValueError, match="enough dimensions"):
            vk.matmul(s0, h)
        with pytest.raises(ValueError, match="do not broadcast"):
            vk.matmul(h3, h5)
        with pytest.raises(TypeError, match="alpha"):
            vk.gemm(h, h, trans_b=True, alpha="2")


# -- the cooperative-matrix kernel: planning on a stand-in device (runs anywhere) ----------------
def coop_device(dev):
    """An H200-like stand-in that reports a 16x16x16 float16 -> float32 cooperative matrix."""
    fake = h200_like(dev)
    shape = (16, 16, 16, "float16", "float16", "float32", "float32")
    return dataclasses.replace(fake, features=fake.features | mh.COOPMAT_FEATURES,
                               cooperative_matrix=fake.cooperative_matrix + (shape,))


def test_coopmat_planning():
    dev = runtime.get().device
    fake = coop_device(dev)
    assert mh.path(fake) == "coopmat"
    assert mh.path(dataclasses.replace(fake, min_subgroup_size=16)) != "coopmat"   # varying subgroups
    assert mh.path(dataclasses.replace(fake, features=fake.features - {"vulkanMemoryModel"})) != "coopmat"
    assert mh.path(dataclasses.replace(fake, cooperative_matrix=())) != "coopmat"
    for ta in (False, True):
        for tb in (False, True):
            for cfg in mh.COOP_CONFIGS:   # every tile fits the H200's 48 KiB and 1024 invocations
                assert cfg.shared_bytes(ta, tb) <= fake.max_shared_memory
                assert cfg.threads(fake.subgroup_size) <= fake.max_workgroup_invocations
                assert cfg.bm % (16 * cfg.sg_m) == 0 and cfg.bn % (16 * cfg.sg_n) == 0 and cfg.bk % 16 == 0
    # big whole products take the large whole-only tile, big ragged ones the next, small ones the small
    big, ragged = mh.COOP_CONFIGS[0], mh.COOP_CONFIGS[1]
    assert big.whole_only and not ragged.whole_only
    assert mh._coop_config(fake, 4096, 4096, 4096, 1, False, False, True, True) == big
    assert big.is_whole(4096, 4096, 4096, True, True) and not big.is_whole(4096, 4096, 4096, True, False)
    assert mh._coop_config(fake, 4000, 4096, 4096, 1, False, False, True, True) == ragged
    assert mh._coop_config(fake, 4096, 4096, 4096, 1, False, False, False, True) == ragged
    assert mh._coop_config(fake, 4096, 4096, 4000, 1, False, False, True, True) == ragged
    assert mh._coop_config(fake, 64, 64, 64, 1, False, False, True, True) == mh.COOP_CONFIGS[-1]
    # a product whole but for M or N (K whole): its whole tiles on the big tile, the rest after
    assert mh._whole_block(fake, 2200, 2304, 128, 1, False, False, True, True) == (2176, 2304)
    assert mh._whole_block(fake, 2048, 2216, 128, 1, False, False, True, True) == (2048, 2176)
    assert mh._whole_block(fake, 2200, 2216, 128, 1, False, False, True, True) == (2176, 2176)
    assert mh._whole_block(fake, 2200, 2304, 100, 1, False, False, True, True) == (0, 0)    # K ragged
    assert mh._whole_block(fake, 2200, 2304, 128, 1, False, False, False, True) == (0, 0)   # A not in vectors
    assert mh._whole_block(fake, 300, 2304, 128, 1, False, False, True, True) == (0, 0)     # too few tiles


def test_coopmat_shader_compiles():
    # Every variant the planner may ask for compiles and validates (SPIR-V), whatever this device.
    from vkbackend.runtime import compiler
    for ta in (0, 1):
        for tb in (0, 1):
            for cfg in mh.COOP_CONFIGS:
                for whole in (0, 1):
                    defines = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "SG_M": cfg.sg_m, "SG_N": cfg.sg_n,
                               "STAGES": cfg.stages, "WHOLE": whole, "SGS": 32, "TRANS_A": ta, "TRANS_B": tb,
                               "A_VEC": ta | whole, "B_VEC": (1 - tb) | whole, "HAS_BETA": ta ^ tb,
                               "OUT_HALF": 1 - (ta ^ tb), "BATCH_RANK": 2 * ta}
                    assert compiler.compile_shader(mh.SHADER, defines)


# -- on devices with cooperative matrices (the H200) ---------------------------------------------
@pytest.mark.parametrize("m,k,n,batch", [
    (128, 64, 128, 300),    # 300 whole tiles: the large whole-only tile (WHOLE)
    (2304, 128, 2048, 1),   # the same, swizzled launch order
    (128, 64, 64, 200),     # 200 tiles: the middle tile, whole along M and N, not K
    (256, 96, 192, 1), (130, 72, 70, 3), (16, 16, 16, 1), (48, 40, 80, 2), (1000, 512, 1000, 1),
    (2000, 136, 1992, 1),   # ragged tiles swizzled, whole ones among them (their loads unchecked)
    (2200, 128, 2304, 1),   # whole but for M: 2176 rows on the whole-only tile, 24 after
    (2048, 128, 2216, 1),   # whole but for N: 2176 columns on the whole-only tile, 40 after
    (2200, 64, 2216, 1),    # neither: the whole block, the columns right of it, the rows below
])
def test_coopmat_tiles(m, k, n, batch):
    dev = runtime.get().device
    if not mh.has_coopmat(dev):
        pytest.skip(NO_COOPMAT)
    rng = np.random.default_rng(m + k + n + batch)
    a, b = f16(rng, (batch, m, k)), f16(rng, (batch, k, n))
    check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)
    for ta, tb in ((True, False), (False, True), (True, True)):
        at = np.ascontiguousarray(np.swapaxes(a, 1, 2)) if ta else a
        bt = np.ascontiguousarray(np.swapaxes(b, 1, 2)) if tb else b
        got = vk.gemm(vk.asarray(at), vk.asarray(bt), trans_a=ta, trans_b=tb)
        check_matmul(got.numpy(), a, b)


def test_coopmat_ragged_rows_over_a_shared_b():
    """A batch over one B made one taller matrix (3 x 800 rows), whole but for M: split in two."""
    dev = runtime.get().device
    if not mh.has_coopmat(dev):
        pytest.skip(NO_COOPMAT)
    rng = np.random.default_rng(11)
    a, b = f16(rng, (3, 800, 64)), f16(rng, (64, 2048))
    check_matmul(vk.matmul(vk.asarray(a), vk.asarray(b)).numpy(), a, b)
    at = np.ascontiguousarray(np.swapaxes(a, 1, 2))
    check_matmul(vk.gemm(vk.asarray(at), vk.asarray(b), trans_a=True).numpy(), a, b)


@pytest.mark.parametrize("m,k,n,batch", [
    (128, 64, 128, 300), (130, 72, 70, 3), (1000, 512, 1000, 1), (33, 17, 2, 2), (16, 40, 15, 1),
    (2200, 128, 2304, 1),
])
def test_coopmat_float16_output_is_the_float32_product_rounded(monkeypatch, m, k, n, batch):
    """The kernel writes a float16 result itself (OUT_HALF, even rows) bit for bit as numpy rounds
    the same kernel's float32 result (gemm into a float32 c); odd rows go through a float32 array."""
    dev = runtime.get().device
    if not mh.has_coopmat(dev):
        pytest.skip(NO_COOPMAT)
    rng = np.random.default_rng(m + k + n)
    va, vb = vk.asarray(f16(rng, (batch, m, k))), vk.asarray(f16(rng, (batch, k, n)))
    asked = kernels_asked(monkeypatch)
    got = vk.matmul(va, vb).numpy()
    assert any(s == mh.SHADER and d.get("OUT_HALF") for s, d in asked) == (n % 2 == 0), asked
    c = vk.zeros((batch, m, n), np.float32)
    want = vk.gemm(va, vb, c=c).numpy().astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


# -- the cooperative-matrix kernel's own logic on lavapipe, the extension emulated ----------------
@pytest.mark.slow
@pytest.mark.parametrize("m,k,n,trans_b,beta", [(17, 33, 15, False, 0.0), (64, 64, 64, True, 0.5),
                                                 (18, 40, 34, False, None)])   # None: a float16 result
def test_coopmat_kernel_emulated(request, monkeypatch, m, k, n, trans_b, beta):
    """matmul_coopmat.comp with primitives/coopmat_emulated.glsl standing in for the extension:
    its staging, tiling, bounds, alpha/beta and its stores (through the scratch: edge tiles and
    float16 results; direct: whole fragments) against numpy. Opt-in (pytest -m slow): lavapipe takes ~4 minutes to compile
    each variant, and the emulation's loops count against a loop budget."""
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("opt-in: lavapipe compiles each emulated variant in ~4 minutes; run with -m slow")
    if runtime.get().device.loop_budget_emulated:
        pytest.skip("the emulation's own loops count against VKBACKEND_LOOP_BUDGET")
    monkeypatch.setattr(mh, "has_coopmat", lambda dev: True)
    monkeypatch.setattr(mh, "EXTRA_DEFINES", {"COOPMAT_EMULATED": 1})
    assert mh.path() == "coopmat"
    rng = np.random.default_rng(m + n)
    a, b = f16(rng, (m, k)), f16(rng, (n, k) if trans_b else (k, n))
    opb = b.T if trans_b else b
    if beta is None:   # the kernel rounds to float16 itself (OUT_HALF)
        got = vk.gemm(vk.asarray(a), vk.asarray(b), trans_b=trans_b, alpha=2.0).numpy()
        assert got.dtype == np.float16
        assert_rounded_once(got, 2.0 * ref(a, opb), slack=2 * k * U32 * 2.0 * ref(np.abs(a), np.abs(opb)))
        return
    c_host = rng.standard_normal((m, n)).astype(np.float32)
    c = vk.asarray(c_host)
    vk.gemm(vk.asarray(a), vk.asarray(b), trans_b=trans_b, alpha=2.0, beta=beta, c=c)
    want = 2.0 * ref(a, opb) + beta * c_host
    bound = 2 * k * U32 * (2.0 * ref(np.abs(a), np.abs(opb)) + abs(beta) * np.abs(c_host)) + 1e-30
    assert (np.abs(c.numpy() - want) <= bound).all()
