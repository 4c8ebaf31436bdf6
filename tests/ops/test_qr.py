"""vk.linalg.qr / householder_product / apply_q against numpy (float64 as the reference)."""

import numpy as np
import pytest

import vkbackend as vk
from tests.conftest import no_gpu_work

EPS = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)

from vkbackend.ops import qr as qr_mod  # noqa: E402


def _norm2(x):
    x = np.asarray(x, np.float64)
    if x.ndim > 2:
        return max(_norm2(m) for m in x.reshape(-1, *x.shape[-2:]))
    return np.linalg.norm(x, 2) if x.size else 0.0


def check_qr(a, q, r, complete=False, diag=True, c=4.0, eps=EPS):
    """Orthogonality, reconstruction, exact upper-triangular R, |diag R| as numpy's, to `eps`
    (float32's unless given)."""
    a64 = np.asarray(a, np.float64)
    q64, r64 = np.asarray(q, np.float64), np.asarray(r, np.float64)
    M, N = a.shape[-2:]
    K = min(M, N)
    assert q.shape == a.shape[:-2] + ((M, M) if complete else (M, K))
    assert r.shape == a.shape[:-2] + ((M, N) if complete else (K, N))
    assert np.isfinite(q).all() and np.isfinite(r).all()
    tol = c * max(M, N, 8) * eps
    eye = np.eye(q.shape[-1])
    assert _norm2(np.swapaxes(q64, -1, -2) @ q64 - eye) <= tol, "Q^T Q != I"
    scale = max(_norm2(a64), np.finfo(np.float32).tiny)
    assert _norm2(q64 @ r64 - a64) / scale <= tol, "A != QR"
    rows = np.arange(r.shape[-2])[:, None]
    cols = np.arange(r.shape[-1])[None, :]
    assert (r[..., rows > cols] == 0).all(), "R has nonzeros below the diagonal"
    if diag and K:
        ref = np.linalg.qr(a64, mode="r")
        d_ref = np.abs(np.diagonal(ref, axis1=-2, axis2=-1))
        d = np.abs(np.diagonal(r64, axis1=-2, axis2=-1))[..., :K]
        np.testing.assert_allclose(d, d_ref, rtol=c * max(M, N) * eps * 10,
                                   atol=tol * np.abs(d_ref).max(initial=1.0))


def qr_np(a, mode="reduced"):
    res = vk.linalg.qr(vk.asarray(a), mode)
    if isinstance(res, tuple):
        return tuple(x.numpy() for x in res)
    return res.numpy()


def _shapes(sg):
    return [(1, 1), (2, 2), (sg - 1, sg - 1), (sg, sg), (sg + 1, sg + 1), (40, 33), (33, 40),
            (129, 129), (257, 257), (1000, 37), (37, 300), (65, 1), (1, 65)]


@pytest.mark.parametrize("idx", range(13))
def test_qr_random(rng, sg, idx):
    M, N = _shapes(sg)[idx]
    if min(M, N) < 1:
        pytest.skip("degenerate with this subgroup size")
    a = rng.standard_normal((M, N)).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)


def qr64(a, mode="reduced"):
    res = vk.linalg.qr(vk.asarray(a, dtype=vk.float64), mode)
    out = tuple(x.numpy() for x in res) if isinstance(res, tuple) else (res.numpy(),)
    assert all(x.dtype == np.float64 for x in out)
    return out if isinstance(res, tuple) else out[0]


@pytest.mark.parametrize("idx", range(13))
def test_qr_float64(rng, sg, idx):
    """float64 in, float64 out, computed in it: every bound at float64's eps, which a float32
    computation misses by eight orders of magnitude."""
    M, N = _shapes(sg)[idx]
    a = rng.standard_normal((M, N)) * 10.0 ** rng.integers(-150, 150)  # far outside float32's range
    q, r = qr64(a)
    check_qr(a, q, r, eps=EPS64)


def test_qr_float64_modes_batched_and_reflectors(rng):
    """complete / r / raw modes over a batch (several panels), raw's reflectors as LAPACK's, and
    householder_product and apply_q in float64, mixed with float32 operands (computed in float64)."""
    a = rng.standard_normal((2, 70, 45))
    q, r = qr64(a, "complete")
    check_qr(a, q, r, complete=True, eps=EPS64)
    np.testing.assert_array_equal(qr64(a, "r"), np.triu(r[:, :45]))
    h, tau = qr64(a, "raw")
    h_ref, tau_ref = np.linalg.qr(a, "raw")
    np.testing.assert_allclose(h, h_ref, atol=200 * EPS64 * np.abs(a).max())
    np.testing.assert_allclose(tau, tau_ref, atol=200 * EPS64)
    hT = np.ascontiguousarray(np.swapaxes(h_ref, -1, -2))
    got = vk.linalg.householder_product(vk.asarray(hT, dtype=vk.float64), vk.asarray(tau_ref, dtype=vk.float64))
    assert got.dtype == vk.float64
    np.testing.assert_allclose(got.numpy(), np.linalg.qr(a).Q, atol=200 * EPS64)
    c = rng.standard_normal((2, 70, 9)).astype(np.float32)
    got = vk.linalg.apply_q(vk.asarray(hT, dtype=vk.float64), vk.asarray(tau_ref, dtype=vk.float64), vk.asarray(c),
                            transpose=True)
    assert got.dtype == vk.float64
    qc = np.linalg.qr(a, "complete").Q
    np.testing.assert_allclose(got.numpy(), np.swapaxes(qc, -1, -2) @ c, atol=200 * EPS64 * np.abs(c).max())


def test_qr_result_type_and_lazy():
    a = vk.asarray(np.eye(3, dtype=np.float32))
    res = vk.linalg.qr(a)
    assert type(res).__name__ == "QRResult" and res._fields == ("Q", "R")
    assert isinstance(res.Q, vk.Array) and isinstance(res.R, vk.Array)
    assert res.Q.dtype == np.float32


def _with_condition(rng, M, N, cond):
    K = min(M, N)
    u, _ = np.linalg.qr(rng.standard_normal((M, K)))
    v, _ = np.linalg.qr(rng.standard_normal((N, K)))
    s = np.logspace(0, -np.log10(cond), K)
    return ((u * s) @ v.T).astype(np.float32)


@pytest.mark.parametrize("shape", [(120, 120), (200, 70)])
def test_qr_ill_conditioned(rng, shape):
    a = _with_condition(rng, *shape, 1e6)
    q, r = qr_np(a)
    check_qr(a, q, r, diag=False)


@pytest.mark.parametrize("shape,rank", [((100, 100), 30), ((150, 60), 1), ((50, 120), 20)])
def test_qr_rank_deficient(rng, shape, rank):
    M, N = shape
    # The first `rank` columns well conditioned (orthogonal, scaled by 1..2), the rest their random
    # combinations: unpivoted QR's trailing block is roundoff amplified by cond(A[:, :rank]), which
    # for a product of two Gaussian factors reached 8e6 in one draw (LAPACK's float32 QR then left
    # 0.83 there, 5.6x the bound below).
    u = np.linalg.qr(rng.standard_normal((M, rank)))[0] * rng.uniform(1, 2, rank)
    a = np.concatenate([u, u @ rng.standard_normal((rank, N - rank))], axis=1).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r, diag=False)
    # Beyond the rank, R is roundoff, bounded by c n eps ||A||_F (backward stability). Over 60 draws
    # per shape the largest c was 0.0084 here and 0.0007 for LAPACK's float32 QR.
    assert np.abs(r[rank:, rank:]).max(initial=0) <= max(M, N) * EPS * np.linalg.norm(a)


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (3, 5), (70, 70), (2, 40, 35)])
def test_qr_zero(shape):
    a = np.zeros(shape, np.float32)
    q, r = qr_np(a)
    K = min(shape[-2:])
    assert (r == 0).all()
    np.testing.assert_array_equal(q, np.broadcast_to(np.eye(shape[-2], K), q.shape))
    h, tau = qr_np(a, "raw")
    assert (tau == 0).all() and (h == 0).all()


def test_qr_zero_column_and_negative_pivot(rng):
    a = rng.standard_normal((30, 20)).astype(np.float32)
    a[:, 3] = 0
    a[5:, 7] = 0
    a[7, 7] = -2.0
    q, r = qr_np(a)
    check_qr(a, q, r, diag=False)
    _, tau = qr_np(a, "raw")
    assert tau[3] == 0.0


def test_qr_batched(rng):
    a = rng.standard_normal((3, 2, 20, 10)).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)
    for i in np.ndindex(3, 2):
        qi, ri = qr_np(a[i])
        np.testing.assert_allclose(q[i], qi, rtol=0, atol=1e-5)
        np.testing.assert_allclose(r[i], ri, rtol=0, atol=1e-5)


def test_qr_batched_multi_panel(rng):
    a = rng.standard_normal((3, 90, 75)).astype(np.float32)
    a[1] = 0
    for mode in ("reduced", "complete"):
        q, r = qr_np(a, mode)
        check_qr(a[[0, 2]], q[[0, 2]], r[[0, 2]], complete=mode == "complete")
        assert (r[1] == 0).all()


def test_qr_batch_does_not_add_dispatches(rng):
    def count(shape):
        a = vk.asarray(rng.standard_normal(shape).astype(np.float32))
        vk.synchronize()
        d0 = vk.stats()["dispatches"]
        vk.linalg.qr(a)
        n = vk.stats()["dispatches"] - d0
        vk.synchronize()
        return n
    assert count((1, 64, 64)) == count((16, 64, 64))


@pytest.mark.parametrize("shape", [(50, 30), (30, 50), (40, 40), (2, 37, 21)])
def test_qr_modes(rng, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    M, N = shape[-2:]
    K = min(M, N)
    qc, rc = qr_np(a, "complete")
    check_qr(a, qc, rc, complete=True)
    q, r = qr_np(a)
    r_only = qr_np(a, "r")
    assert r_only.shape == r.shape
    np.testing.assert_array_equal(r_only, r)
    np.testing.assert_allclose(qc[..., :K], q, atol=1e-5)
    np.testing.assert_allclose(rc[..., :K, :], r, atol=1e-5)
    h, tau = qr_np(a, "raw")
    h_ref, tau_ref = np.linalg.qr(a, "raw")  # numpy: h transposed, (..., N, M)
    assert h.shape == h_ref.shape == shape[:-2] + (N, M) and tau.shape == tau_ref.shape
    hT = np.swapaxes(h, -1, -2)
    # R sits on and above the diagonal of h^T.
    np.testing.assert_array_equal(np.triu(hT[..., :K, :]), r)
    qh = vk.linalg.householder_product(vk.asarray(np.ascontiguousarray(hT[..., :, :K])),
                                       vk.asarray(tau)).numpy()
    np.testing.assert_allclose(qh, q, atol=2e-5)


def test_householder_product_matches_numpy(rng):
    # Reflectors from LAPACK (float64), rebuilt on the GPU; K < N exercises tau shorter than h.
    a = rng.standard_normal((2, 80, 50))
    h, tau = np.linalg.qr(a, "raw")
    hT = np.swapaxes(h, -1, -2)  # (2, 80, 50)
    q_ref = np.linalg.qr(a).Q
    q = vk.linalg.householder_product(vk.asarray(hT.astype(np.float32)), vk.asarray(tau.astype(np.float32))).numpy()
    np.testing.assert_allclose(q, q_ref, atol=1e-5)
    k = 45
    q_part = vk.linalg.householder_product(vk.asarray(hT.astype(np.float32)),
                                           vk.asarray(tau[:, :k].astype(np.float32))).numpy()
    ref = np.eye(80)[None, :, :50].repeat(2, 0)
    for i in reversed(range(k)):
        v = np.concatenate([np.zeros((2, i)), np.ones((2, 1)), hT[:, i + 1:, i]], axis=1)
        ref = ref - tau[:, i, None, None] * v[:, :, None] * np.einsum("bm,bmn->bn", v, ref)[:, None, :]
    np.testing.assert_allclose(q_part, ref, atol=1e-5)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("shape,p", [((90, 60), 45), ((2, 70, 70), 33), ((40, 70), 20)])
def test_apply_q(rng, side, transpose, shape, p):
    a = rng.standard_normal(shape).astype(np.float32)
    M = shape[-2]
    h, tau = vk.linalg.qr(vk.asarray(a), "raw")
    hT = np.ascontiguousarray(np.swapaxes(h.numpy(), -1, -2))
    qc, _ = qr_np(a, "complete")
    qc = qc.astype(np.float64)
    cshape = shape[:-2] + ((M, p) if side == "left" else (p, M))
    c = rng.standard_normal(cshape).astype(np.float32)
    got = vk.linalg.apply_q(vk.asarray(hT), tau, vk.asarray(c), transpose=transpose, side=side).numpy()
    qq = np.swapaxes(qc, -1, -2) if transpose else qc
    want = qq @ c if side == "left" else c @ qq
    assert got.shape == c.shape
    np.testing.assert_allclose(got, want, atol=4 * M * EPS * np.abs(c).max())


def test_apply_q_shared_reflectors(rng):
    a = rng.standard_normal((50, 30)).astype(np.float32)
    h, tau = np.linalg.qr(a.astype(np.float64), "raw")
    c = rng.standard_normal((3, 50, 7)).astype(np.float32)
    qc = np.linalg.qr(a.astype(np.float64), "complete").Q
    got = vk.linalg.apply_q(np.ascontiguousarray(h.T).astype(np.float32), tau.astype(np.float32), c,
                            transpose=True).numpy()
    np.testing.assert_allclose(got, qc.T @ c, atol=1e-4)


def test_one_submit_300(rng, whole_submits):
    a = vk.asarray(rng.standard_normal((300, 300)).astype(np.float32))
    vk.synchronize()
    s0 = vk.stats()
    q, r = vk.linalg.qr(a)
    d = vk.stats()["dispatches"] - s0["dispatches"]
    vk.synchronize()
    s1 = vk.stats()
    assert s1["submits"] - s0["submits"] == 1
    print(f"300x300 qr: {d} dispatches (with poison fills), 1 submit")
    check_qr(a.numpy(), q.numpy(), r.numpy())


@pytest.mark.parametrize("tune,shape", [
    # the GPU plan in miniature: register-resident panels, their width shrinking with the height
    ({"sw_reg_cap": 64, "sw_panel_wgs": (64,)}, (300, 140)),
    ({"sw_reg_cap": 64, "sw_panel_wgs": (64,)}, (2, 100, 45)),
    ({"sw_reg_cap": 256, "sw_panel_wgs": (64,), "nb_max": 16}, (70, 90)),
    # the GPU's unrolled column loop
    ({"sw_reg_cap": 16, "sw_panel_wgs": (64,), "nb_max": 16, "sw_unroll_k": 1}, (150, 70)),
    # streaming panels of other widths
    ({"stream_nb": 8}, (60, 50)),
    ({"stream_nb": 16, "nb_max": 16}, (130, 40)),
    # Q from the panels' own T blocks, or from rebuilt ones narrower than the default
    ({"q_nb": 0}, (300, 140)),
    ({"q_nb": 16, "q_min_rows": 1, "stream_nb": 8}, (2, 100, 45)),
    ({"q_nb": 32, "q_min_rows": 1}, (3, 70, 50)),
])
def test_qr_panel_variants(rng, monkeypatch, tune, shape):
    for k, v in tune.items():
        monkeypatch.setitem(qr_mod.TUNE, k, v)
    a = rng.standard_normal(shape).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)


def test_qr_lookahead_order(rng, monkeypatch):
    """The look-ahead schedule: the next panel is recorded without a barrier after it, beside the
    trailing update; results stay right and single-panel problems have nothing to look ahead to."""
    from vkbackend.runtime.kernel import Kernel
    monkeypatch.setitem(qr_mod.TUNE, "lookahead", 1)
    plain = Kernel.__call__
    seen = []

    def call(self, buffers, push=(), groups=(1, 1, 1), barrier=True):
        seen.append(barrier)
        return plain(self, buffers, push, groups, barrier)
    monkeypatch.setattr(Kernel, "__call__", call)
    for shape in [(150, 120), (2, 70, 100), (100, 12)]:
        seen.clear()
        a = rng.standard_normal(shape).astype(np.float32)
        q, r = qr_np(a)
        check_qr(a, q, r)
        assert (shape[-1] > 12) == (False in seen)  # one panel: nothing to look ahead to


@pytest.mark.parametrize("dtype,eps", [(np.float32, EPS), (np.float64, EPS64)])
def test_qr_row_chunks(rng, monkeypatch, dtype, eps):
    """Block reflectors streamed over row chunks (qr_update_rows.comp, both phases), forced onto
    small corners: several chunks, partial column strips, blocks whose last rows and reflectors
    are ragged; qr (R and Q, batched), householder_product and apply_q on both sides."""
    for key, value in (("rows_min", 1), ("rows_groups", 8), ("rows_chunk", 40)):
        monkeypatch.setitem(qr_mod.TUNE, key, value)
    used = []
    kernel = qr_mod._kernel

    def spy(shader, defines, wg):
        used.append(shader)
        return kernel(shader, defines, wg)
    monkeypatch.setattr(qr_mod, "_kernel", spy)
    for shape, mode in [((300, 140), "reduced"), ((2, 170, 90), "complete"), ((90, 200), "reduced")]:
        a = rng.standard_normal(shape).astype(dtype)
        q, r = vk.linalg.qr(vk.asarray(a, dtype=dtype), mode)
        check_qr(a, q.numpy(), r.numpy(), complete=mode == "complete", eps=eps)
    assert "qr_update_rows.comp" in used
    a = rng.standard_normal((260, 70)).astype(dtype)
    h, tau = vk.linalg.qr(vk.asarray(a, dtype=dtype), "raw")
    hT = vk.asarray(np.ascontiguousarray(h.numpy().T), dtype=dtype)
    q = vk.linalg.householder_product(hT, tau).numpy().astype(np.float64)
    ref_q = np.linalg.qr(a.astype(np.float64))[0]
    signs = np.sign(np.sum(q * ref_q, axis=0))
    np.testing.assert_allclose(q * signs, ref_q, atol=200 * eps * 70)
    c = rng.standard_normal((260, 33)).astype(dtype)
    qt_c = vk.linalg.apply_q(hT, tau, vk.asarray(c, dtype=dtype), transpose=True).numpy()
    np.testing.assert_allclose(qt_c[:70], q.T @ c, atol=200 * eps * 70)
    c_q = vk.linalg.apply_q(hT, tau, vk.asarray(c.T.copy(), dtype=dtype), side="right").numpy()
    np.testing.assert_allclose(c_q[:, :70], c.T @ q, atol=200 * eps * 70)  # (c Q)[:, :N] = c Q[:, :N]


def test_qr_replays_its_recipe(rng, monkeypatch):
    """qr, householder_product and apply_q of one shape (and mode, TUNE) record their dispatches
    once and replay them (primitives/recipes.py) on fresh data and fresh buffers; another mode or
    a changed TUNE plans anew."""
    from vkbackend.primitives import recipes

    def counted(fn, *args, **kwargs):
        before = recipes.stats()
        out = fn(*args, **kwargs)
        after = recipes.stats()
        return out, (after["captures"] - before["captures"], after["hits"] - before["hits"])
    for mode, runs in (("reduced", [(1, 0), (0, 1), (0, 1)]), ("r", [(1, 0), (0, 1)])):
        for want in runs:
            a = rng.standard_normal((300, 140)).astype(np.float32)
            res, got = counted(vk.linalg.qr, vk.asarray(a), mode)
            assert got == want
            if mode == "r":
                np.testing.assert_allclose(np.abs(res.numpy()), np.abs(np.linalg.qr(a.astype(np.float64), "r")),
                                           atol=400 * EPS * np.abs(a).max())
            else:
                assert isinstance(res, qr_mod.QRResult)
                check_qr(a, res.Q.numpy(), res.R.numpy())
    monkeypatch.setitem(qr_mod.TUNE, "q_nb", 16)
    a = rng.standard_normal((300, 140)).astype(np.float32)
    res, got = counted(vk.linalg.qr, vk.asarray(a))
    assert got == (1, 0)
    check_qr(a, res.Q.numpy(), res.R.numpy())
    for want in ((1, 0), (0, 1)):
        a = rng.standard_normal((260, 70)).astype(np.float32)
        c = rng.standard_normal((33, 260)).astype(np.float32)
        h, tau = vk.linalg.qr(vk.asarray(a), "raw")
        hT = vk.asarray(np.ascontiguousarray(h.numpy().T))
        q, got_q = counted(vk.linalg.householder_product, hT, tau)
        cq, got_c = counted(vk.linalg.apply_q, hT, tau, vk.asarray(c), side="right")
        assert got_q == want and got_c == want
        q = q.numpy().astype(np.float64)
        ref_q = np.linalg.qr(a.astype(np.float64))[0]
        np.testing.assert_allclose(q * np.sign(np.sum(q * ref_q, axis=0)), ref_q, atol=200 * EPS * 70)
        np.testing.assert_allclose(cq.numpy()[:, :70], c @ q, atol=200 * EPS * 70)


def test_qr_large_square(rng):
    a = rng.standard_normal((1000, 1000)).astype(np.float32)
    q, r = qr_np(a)
    check_qr(a, q, r)


def test_qr_empty():
    for shape, mode in [((0, 3), "reduced"), ((3, 0), "complete"), ((2, 0, 0), "reduced")]:
        ref = np.linalg.qr(np.zeros(shape, np.float32), mode)
        got = qr_np(np.zeros(shape, np.float32), mode)
        for g, w in zip(got, ref):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_bad_inputs():
    ints = vk.asarray(np.ones((4, 4), np.int32))
    vec = vk.asarray(np.ones(4, np.float32))
    good = vk.asarray(np.ones((4, 4), np.float32))
    tau = vk.asarray(np.ones(4, np.float32))
    vk.synchronize()
    with no_gpu_work():
        with pytest.raises(ValueError):
            vk.linalg.qr(vec)
        with pytest.raises(ValueError):
            vk.linalg.qr(np.ones(4, np.float32))
        with pytest.raises(ValueError):
            vk.linalg.qr(np.float32(1.0))
        with pytest.raises(TypeError):
            vk.linalg.qr(ints)
        with pytest.raises(TypeError):
            vk.linalg.qr(np.ones((3, 3), np.int64))
        with pytest.raises(TypeError):
            vk.linalg.qr(np.ones((3, 3), bool))
        with pytest.raises(ValueError):
            vk.linalg.qr(good, mode="economic")
        with pytest.raises(ValueError):
            vk.linalg.qr(good, mode="bogus")
        with pytest.raises(ValueError):
            vk.linalg.apply_q(good, tau, good, side="up")
        with pytest.raises(ValueError):
            vk.linalg.apply_q(good, tau, np.ones((5, 2), np.float32))
        with pytest.raises(TypeError):
            vk.linalg.apply_q(good, tau, ints)
        with pytest.raises(ValueError):
            vk.linalg.householder_product(np.ones((3, 4), np.float32), np.ones(3, np.float32))
        with pytest.raises(ValueError):
            vk.linalg.householder_product(good, np.ones(5, np.float32))
        with pytest.raises(ValueError):
            vk.linalg.householder_product(np.ones((2, 4, 4), np.float32), np.ones((3, 4), np.float32))


def test_qr_float64_with_inexact_builtins(rng, monkeypatch):
    """The float64 panel's sqrt and divisions refine the device's, which Vulkan lets be only
    float32-accurate: built with VK_TEST_INEXACT_BUILTINS (both 2**-30 off), the factorization
    still meets float64's bounds (the unrefined guesses miss them by about 1e4)."""
    real = qr_mod._kernel

    def inexact(shader, defines, wg):
        return real(shader, {**defines, "VK_TEST_INEXACT_BUILTINS": 1} if "F64" in defines else defines, wg)
    monkeypatch.setattr(qr_mod, "_kernel", inexact)
    a = rng.standard_normal((2, 70, 45))
    q, r = qr64(a)
    check_qr(a, q, r, eps=EPS64)
