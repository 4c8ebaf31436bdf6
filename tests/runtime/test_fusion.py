"""Elementwise fusion (runtime/fusion.py): chains of float32 elementwise operations recorded as one
dispatch give what the same operations give one dispatch each, bit for bit, and agree with numpy."""
import contextlib

import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives import elementwise, recipes
from vkbackend.runtime import fusion


@contextlib.contextmanager
def unfused():
    """Each elementwise operation its own dispatch (what VKBACKEND_FUSION=0 gives)."""
    stream = runtime.get().stream
    stream.synchronize()
    saved, stream.fuser = stream.fuser, None
    try:
        yield
    finally:
        stream.synchronize()
        stream.fuser = saved


@pytest.fixture(autouse=True)
def fuse_at_once(monkeypatch):
    """Chains of any length fused the first time they run (VKBACKEND_FUSION=1), unless a test
    says otherwise; plans and recipes made before or under it forgotten."""
    monkeypatch.setattr(runtime.get().stream.fuser, "after", 1)
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 1)
    elementwise._plan.cache_clear()
    recipes.clear()
    yield
    runtime.get().stream.synchronize()
    elementwise._plan.cache_clear()
    recipes.clear()


@pytest.fixture
def unpoisoned(monkeypatch):
    """Fresh buffers not poisoned: a poisoning fill of a buffer a chain still reads (a freed
    operand's, handed out again) records the chain first, splitting chains that the counts
    below expect whole."""
    monkeypatch.setattr(runtime.get(), "poison", False)


def counts(fn):
    """fn()'s result as numpy, with the dispatches and fused chains it recorded."""
    runtime.get().stream.synchronize()
    s0 = vk.stats()
    out = fn()
    out = [o.numpy() for o in out] if isinstance(out, tuple) else out.numpy()
    s1 = vk.stats()
    return out, s1["dispatches"] - s0["dispatches"], s1["fused_dispatches"] - s0["fused_dispatches"]


def same_bits(a, b):
    """Equal bit patterns, NaN for NaN (whose sign and payload no Vulkan float operation fixes:
    a compiler may fold -(x) - c into -(x + c), which turns a NaN's sign)."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    differ = np.flatnonzero(a.view(np.uint32) != b.view(np.uint32))
    assert differ.size == 0, (differ[:8], a[differ[:8]], b[differ[:8]])


def _operands(rng, n):
    x = rng.standard_normal(n).astype(np.float32) * 3
    # specials; no subnormals, which GPUs may flush to zero (fused or not, unlike numpy)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e38, 88.0][: min(8, n)]
    y = rng.standard_normal(n).astype(np.float32)
    y[:8] = [1.0, -0.0, 0.0, np.inf, 2.0, np.nan, 1e-30, -3.0][: min(8, n)]
    return x, y


UNARY = [vk.negative, vk.absolute, vk.square, vk.exp, vk.log, vk.sqrt, vk.tanh, vk.positive]
BINARY = [vk.add, vk.subtract, vk.multiply, vk.divide, vk.maximum, vk.minimum]


def test_the_shader_knows_every_code():
    src = (runtime.compiler.SHADER_DIR / fusion.SHADER).read_text()
    for name, code in fusion.CODES.items():
        assert f"case {code}u:" in src or (name == "copy" and "default: v = x;" in src), name


@pytest.mark.parametrize("n", [1, 3, 4, 255, 256, 257, 1000, 4099, 65536 + 12])
@pytest.mark.parametrize("f", UNARY + BINARY, ids=lambda f: f.__name__)
def test_each_operation_fused_gives_its_unfused_bits(rng, f, n):
    x, y = _operands(rng, n)
    a, b = vk.asarray(x), vk.asarray(y)

    def chain():  # f between two other steps, so that it runs inside a chain of three
        u = a * 1.5
        v = f(u) if f in UNARY else f(u, b)
        return v - 0.25
    fused, dispatches, chains = counts(chain)
    with unfused():
        plain, plain_dispatches, _ = counts(chain)
    assert (dispatches, chains, plain_dispatches) == (1, 1, 3)
    same_bits(fused, plain)
    with np.errstate(all="ignore"):
        u = (x * np.float32(1.5)).astype(np.float64)
        # in float64, rounded once: numpy's own float32 log was 3 ulps off (1.462924 -> 0.38043725,
        # exactly 0.380437175...), more than this bound allows
        g = getattr(np, f.__name__)
        mid = (g(u) if f in UNARY else g(u, y.astype(np.float64))).astype(np.float32)
        want = mid - np.float32(0.25)
        # ours within an ulp, mid within half of one: two of mid, and the subtraction may then
        # round either way (an ulp of want)
        bound = 2 * np.spacing(np.abs(mid)) + np.spacing(np.abs(want))
    np.testing.assert_array_equal(np.isnan(fused), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(fused[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    assert (np.abs(fused[finite] - want[finite]) <= bound[finite]).all()


def test_logistic_loss_is_two_dispatches_and_matches_float64(rng, unpoisoned):
    z = rng.standard_normal((1000, 1)).astype(np.float32) * 4
    y = (rng.random((1000, 1)) > 0.5).astype(np.float32)
    Z, Y = vk.asarray(z), vk.asarray(y)

    def step():
        p = 1.0 / (1.0 + vk.exp(-Z))
        return p - Y, vk.log(1.0 + vk.exp(-Z)) + (1.0 - Y) * Z
    (g, loss), dispatches, chains = counts(step)
    assert (dispatches, chains) == (2, 2)  # 8 steps a chain: 12 operations in two
    z64, y64 = z.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(g, 1 / (1 + np.exp(-z64)) - y64, rtol=0, atol=4e-7)
    np.testing.assert_allclose(loss, np.log1p(np.exp(-z64)) + (1 - y64) * z64, rtol=1e-6, atol=1e-6)
    with unfused():
        (g2, loss2), d2, _ = counts(step)
    assert d2 == 12
    same_bits(g, g2)
    same_bits(loss, loss2)


def test_intermediates_still_referenced_are_stored(rng):
    x = rng.standard_normal(777).astype(np.float32)
    a = vk.asarray(x)

    def f():
        t = a * 2.0
        u = t + 1.0
        w = vk.exp(u) * t
        return t, u, w
    (t, u, w), dispatches, chains = counts(f)
    assert (dispatches, chains) == (1, 1)
    t0 = x * np.float32(2)
    u0 = t0 + np.float32(1)
    np.testing.assert_array_equal(t, t0)
    np.testing.assert_array_equal(u, u0)
    np.testing.assert_allclose(w, np.exp(u0.astype(np.float64)) * t0, rtol=3e-7)


def test_a_chain_ends_where_the_length_changes_or_another_operation_reads(rng):
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(999).astype(np.float32)
    a, b = vk.asarray(x), vk.asarray(y)

    def f():
        s = (a * 2.0 + 1.0)             # chain of 2
        t = (b - 3.0) * (b - 3.0)       # another length: a new chain of 3
        m = vk.sum(s)                   # a reduction reads s: the chains are recorded before it
        return s * m, t
    (sm, t), dispatches, chains = counts(f)
    assert chains == 2
    s0 = x * np.float32(2) + np.float32(1)
    np.testing.assert_allclose(sm, s0 * s0.astype(np.float64).sum(), rtol=2e-5)
    np.testing.assert_array_equal(t, (y - np.float32(3)) * (y - np.float32(3)))


def test_long_chains_and_many_operands_split(rng, unpoisoned):
    xs = [rng.standard_normal(513).astype(np.float32) for _ in range(11)]
    arrays = [vk.asarray(x) for x in xs]

    def many_arrays():  # 11 inputs + the output: more than a chain's 8 bindings
        acc = arrays[0]
        for b in arrays[1:]:
            acc = acc + b
        return acc
    got, dispatches, chains = counts(many_arrays)
    want = xs[0]
    for x in xs[1:]:
        want = want + x
    np.testing.assert_array_equal(got, want)
    assert dispatches == 2 and chains == 2

    def many_scalars():  # 20 steps and 20 distinct scalars
        acc = arrays[0]
        for k in range(20):
            acc = acc * (1.0 + k / 64)
        return acc
    got, dispatches, _ = counts(many_scalars)
    want = xs[0]
    for k in range(20):
        want = want * np.float32(1.0 + k / 64)
    np.testing.assert_array_equal(got, want)
    assert dispatches == 3


def test_in_place_and_views(rng):
    x = rng.standard_normal(2048).astype(np.float32)
    a = vk.asarray(x)
    b = a * 1.0
    b += 2.0
    b *= b
    c = b - a
    np.testing.assert_array_equal(c.numpy(), (x + np.float32(2)) * (x + np.float32(2)) - x)
    # two views of one buffer at different offsets cannot share a chain's binding
    w = vk.asarray(x)
    lo, hi = w[:1024], w[1024:]
    got = (lo * 2.0) + (hi * 3.0)
    np.testing.assert_array_equal(got.numpy(), x[:1024] * np.float32(2) + x[1024:] * np.float32(3))


def test_a_freed_result_is_not_written_over_a_reused_buffer(rng):
    x = rng.standard_normal(4096).astype(np.float32)
    a = vk.asarray(x)
    t = a + 1.0       # waits in a chain
    del t             # its buffer goes back to the pool unwritten
    z = vk.zeros(4096, dtype=vk.float32)  # may reuse it: the fill must not be overwritten by the chain
    u = z * 2.0 + a
    np.testing.assert_array_equal(z.numpy(), np.zeros(4096, np.float32))
    np.testing.assert_array_equal(u.numpy(), x)


def test_chains_replay_and_create_no_pipelines_after_the_first_pass(rng, unpoisoned):
    a = vk.asarray(rng.standard_normal(3000).astype(np.float32))
    b = vk.asarray(rng.standard_normal(3000).astype(np.float32))

    def step():
        return vk.tanh(a * 0.5 + b) * vk.sqrt(vk.absolute(b) + 1.0)
    first, _, _ = counts(step)
    p0 = vk.stats()["pipelines_created"]
    for _ in range(3):
        again, dispatches, chains = counts(step)
        same_bits(again, first)
        assert (dispatches, chains) == (1, 1)
    assert vk.stats()["pipelines_created"] == p0


def test_eager_submits_in_the_middle_of_a_chain(rng, monkeypatch):
    stream = runtime.get().stream
    monkeypatch.setattr(stream, "eager_seconds", 0.0)
    x = rng.standard_normal(10000).astype(np.float32)
    a = vk.asarray(x)
    acc = a
    for k in range(30):
        acc = acc * 0.5 + vk.asarray(x)  # an upload between steps
    want = x
    for k in range(30):
        want = want * np.float32(0.5) + x
    np.testing.assert_array_equal(acc.numpy(), want)


def test_other_dtypes_and_broadcasting_are_not_fused(rng):
    i = vk.asarray(rng.integers(-9, 9, 500).astype(np.int32))
    f = vk.asarray(rng.standard_normal((20, 25)).astype(np.float32))
    row = vk.asarray(rng.standard_normal(25).astype(np.float32))
    _, d1, c1 = counts(lambda: (i * 2 + 1) * i)
    _, d2, c2 = counts(lambda: (f * row + 1.0) * row)
    assert (d1, c1, d2, c2) == (3, 0, 3, 0)


def test_a_chain_is_fused_once_it_has_run_after_times(rng, monkeypatch, unpoisoned):
    monkeypatch.setattr(runtime.get().stream.fuser, "after", 3)
    x = rng.standard_normal(1234).astype(np.float32)
    x = np.abs(x)
    a = vk.asarray(x)
    seen = []
    for scale in (0.5, 1.5, 2.5, 3.5):  # the scalars are push constants: one chain for all four
        got, dispatches, chains = counts(lambda: vk.sqrt(a * scale + 9.0) - a)
        np.testing.assert_array_equal(got, np.sqrt(x * np.float32(scale) + np.float32(9)) - x)
        seen.append((dispatches, chains))
    assert seen == [(4, 0), (4, 0), (1, 1), (1, 1)]


def test_small_operations_are_not_deferred(rng, monkeypatch, unpoisoned):
    """Below MIN_ELEMENTS an operation is recorded at once (the host's cost of deferring it
    outweighs what fusing saves the GPU there)."""
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 4096)
    elementwise._plan.cache_clear()
    recipes.clear()
    small = vk.asarray(rng.standard_normal(4095).astype(np.float32))
    large = vk.asarray(rng.standard_normal(4096).astype(np.float32))
    _, d_small, c_small = counts(lambda: (small * 2.0 + 1.0) * small)
    _, d_large, c_large = counts(lambda: (large * 2.0 + 1.0) * large)
    assert (d_small, c_small, d_large, c_large) == (3, 0, 1, 1)


@pytest.mark.parametrize("n", [4096, 4099])
def test_one_element_operands_broadcast_in_a_chain(rng, n, unpoisoned):
    """(x - mean) / std with the 0-d results of reductions: one kernel, the one-element arrays
    read by every thread, bit for bit the unfused result, and numpy's within float32 rounding."""
    x = rng.standard_normal(n).astype(np.float32) * 3 + 1
    a = vk.asarray(x)
    m, s = vk.mean(a), vk.std(a)

    def f():
        return (a - m) / s * 2.0 + m
    got, dispatches, chains = counts(f)
    assert (dispatches, chains) == (1, 1)
    with unfused():
        plain, _, _ = counts(f)
    same_bits(got, plain)
    m0, s0 = m.numpy().astype(np.float64), s.numpy().astype(np.float64)
    np.testing.assert_allclose(got, (x - m0) / s0 * 2 + m0, rtol=1e-6, atol=1e-6)


def test_one_element_views_of_a_chains_own_buffers(rng):
    """A buffer the chain reads whole or writes cannot also be its one-element operand: the chain
    is recorded first, and a dispatch that binds one buffer both ways runs alone."""
    x = rng.standard_normal(3000).astype(np.float32)
    a = vk.asarray(x)
    np.testing.assert_array_equal((a + a[:1]).numpy(), x + x[0])
    t = a * 2.0
    u = t + t[3:4]
    w = u * a[5:6]
    t2 = x * np.float32(2)
    np.testing.assert_array_equal(w.numpy(), (t2 + t2[3]) * x[5])
    np.testing.assert_array_equal(t.numpy(), t2)


def test_a_chain_that_cannot_be_fused_runs_unfused(rng, monkeypatch, unpoisoned):
    """A pipeline that cannot be made (a driver's or compiler's failure) costs the fusion, not
    the result: a warning, the operations one dispatch each, and no second attempt."""
    fuser = runtime.get().stream.fuser

    def broken(spec):
        raise RuntimeError("vk::Device::createComputePipelines: ErrorOutOfDeviceMemory")
    monkeypatch.setattr(fuser, "_pipeline", broken)
    x = rng.standard_normal(5000).astype(np.float32)
    a = vk.asarray(x)
    f0 = vk.stats()["fusion_failures"]
    with pytest.warns(RuntimeWarning, match="could not be fused"):
        got, dispatches, chains = counts(lambda: vk.exp(a * 0.25) - a / 3.0)
    assert (dispatches, chains, vk.stats()["fusion_failures"] - f0) == (4, 0, 1)
    again, dispatches, chains = counts(lambda: vk.exp(a * 0.25) - a / 3.0)
    assert (dispatches, chains, vk.stats()["fusion_failures"] - f0) == (4, 0, 1)
    same_bits(got, again)
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64) * 0.25) - x / 3.0, rtol=1e-6, atol=1e-6)
