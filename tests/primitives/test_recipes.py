"""Recipes (primitives/recipes.py): an op planned once per signature, replayed after.

Every replay is checked against float64 numpy on fresh data, and the counters show which path ran,
so a recipe that binds the wrong buffer, offset or size cannot pass."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend.primitives import recipes
from tests.primitives.test_matmul import check_matmul


def _counts():
    s = recipes.stats()
    return s["captures"], s["hits"]


def _mm_ref(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def test_matmul_replays_with_fresh_buffers(rng):
    shapes = [(33, 17), (17, 9)]
    for i in range(4):
        a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
        got = (vk.asarray(a) @ vk.asarray(b)).numpy()
        check_matmul(got, a, b)
    assert _counts() == (1, 3)


def test_aliasing_is_part_of_the_signature(rng):
    a = rng.standard_normal((20, 20)).astype(np.float32)
    b = rng.standard_normal((20, 20)).astype(np.float32)
    x, y = vk.asarray(a), vk.asarray(b)
    check_matmul((x @ x).numpy(), a, a)
    # same shapes and dtypes, but two buffers: must not replay x @ x's bindings
    check_matmul((x @ y).numpy(), a, b)
    check_matmul((y @ x).numpy(), b, a)
    check_matmul((y @ y).numpy(), b, b)
    assert _counts() == (2, 2)


def test_offsets_are_part_of_the_signature(rng):
    host = rng.standard_normal((5, 8, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    x, wd = vk.asarray(host), vk.asarray(w)
    for i in (1, 2, 1, 4, 0):
        check_matmul((x[i] @ wd).numpy(), host[i], w)
    captures, hits = _counts()
    assert captures == 4 and hits == 1


def test_gemm_in_place_returns_c_itself(rng):
    for _ in range(3):
        a = rng.standard_normal((12, 7)).astype(np.float32)
        b = rng.standard_normal((12, 5)).astype(np.float32)
        c0 = rng.standard_normal((7, 5)).astype(np.float32)
        c = vk.asarray(c0)
        out = vk.gemm(vk.asarray(a), vk.asarray(b), trans_a=True, alpha=0.5, beta=2.0, c=c)
        assert out is c
        want = 0.5 * _mm_ref(a.T, b) + 2.0 * c0
        np.testing.assert_allclose(c.numpy(), want, rtol=2e-5, atol=2e-5)
    assert _counts() == (1, 2)


def test_scalars_are_keyed_by_their_bits(rng):
    a = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    x, y = vk.asarray(a), vk.asarray(b)
    for alpha in (1.0, -0.0, 0.0, 2.0, float("nan")):
        got = vk.gemm(x, y, alpha=alpha).numpy()
        want = alpha * _mm_ref(a, b)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want.astype(np.float32)))


def test_environment_and_budget_change_the_plan(rng, monkeypatch):
    a = rng.standard_normal((64, 600)).astype(np.float32)
    b = rng.standard_normal((600, 64)).astype(np.float32)
    x, y = vk.asarray(a), vk.asarray(b)
    (x @ y).numpy()
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "32x64x8/4x8/2x4")
    check_matmul((x @ y).numpy(), a, b)
    monkeypatch.setenv("VKBACKEND_MATMUL_CONFIG", "99x99")  # a bad override is still refused
    with pytest.raises(ValueError, match="VKBACKEND_MATMUL_CONFIG"):
        x @ y
    monkeypatch.delenv("VKBACKEND_MATMUL_CONFIG")
    from vkbackend.primitives import launch
    monkeypatch.setattr(launch, "loop_budget", lambda: 30)  # planners see a budget: K is split
    before = vk.stats()["dispatches"]
    check_matmul((x @ y).numpy(), a, b)
    assert vk.stats()["dispatches"] - before > 1
    assert _counts()[0] == 3  # the refused override planned nothing


def test_a_key_function_is_part_of_the_signature(rng):
    """recipe(key=f): f()'s value keys the plan as the arguments do (module state a planner reads),
    so a change of it plans anew and the old value's recipe is replayed again after."""
    state = [1.0]

    @recipes.recipe(key=lambda: state[0])
    def shifted(x):
        return vk.add(x, state[0])
    a = rng.standard_normal(100).astype(np.float32)
    for value, want in ((1.0, (1, 0)), (1.0, (1, 1)), (2.0, (2, 1)), (1.0, (2, 2))):
        state[0] = value
        np.testing.assert_array_equal(shifted(vk.asarray(a)).numpy(), a + np.float32(value))
        assert _counts() == want


def test_errors_are_raised_on_every_call(rng):
    x = vk.asarray(rng.standard_normal((4, 3)).astype(np.float32))
    for _ in range(2):
        with pytest.raises(ValueError, match="not aligned"):
            x @ x
    assert _counts() == (0, 0)


def test_unreplayable_ops_run_plainly(rng):
    uploads = []

    @recipes.recipe()
    def plus_host(x):  # uploads inside: not a pure function of its signature
        uploads.append(1)
        return x + vk.asarray(np.float32(len(uploads)))

    x = vk.asarray(np.zeros(5, np.float32))
    for i in range(1, 4):
        np.testing.assert_array_equal(plus_host(x).numpy(), np.full(5, i, np.float32))
    assert len(uploads) == 3
    assert recipes.stats()["plain"] == 2


def test_host_operands_are_not_keyed(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    for _ in range(2):
        check_matmul(vk.matmul(a, vk.asarray(b)).numpy(), a, b)
    assert _counts() == (0, 0)


@pytest.mark.parametrize("poison", [False, True])
def test_an_ops_own_fill_is_not_mistaken_for_poisoning(poison, monkeypatch):
    from vkbackend import runtime
    from vkbackend.runtime.memory import POISON
    monkeypatch.setattr(runtime.get(), "poison", poison)

    @recipes.recipe()
    def filled(n):
        out = vk.Array.empty((n,), vk.uint32)
        runtime.get().stream.fill(out.buffer, POISON)  # the op's own fill, of the poison word
        return out

    for _ in range(3):
        assert (filled(7).numpy() == POISON).all()
    assert recipes.stats()["plain"] == 2
