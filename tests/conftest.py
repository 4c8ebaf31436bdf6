import functools
import os

# Every fresh buffer starts poisoned (all bits set), so elements a kernel forgets to write show up.
os.environ.setdefault("VKBACKEND_POISON", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import vkbackend as vk  # noqa: E402


def pytest_report_header(config):
    d = vk.device()
    return (f"vkbackend device: {d.name} | subgroup size {d.subgroup_size} | features "
            f"{','.join(sorted(d.subgroup_features))} | disabled {','.join(sorted(d.disabled_subgroup_features)) or '-'}")


@pytest.fixture
def rng(request):
    """Fresh random data every run; the seed is printed with a failure (VKBACKEND_TEST_SEED replays it)."""
    seed = vk.config.get("VKBACKEND_TEST_SEED")
    seed = np.random.SeedSequence().entropy % 2**32 if seed is None else seed
    request.node.user_properties.append(("seed", seed))
    print(f"random seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def dev():
    return vk.device()


@pytest.fixture(scope="session")
def sg(dev):
    return dev.subgroup_size


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, dtype=dtype)


def h200_like(dev):
    """An NVIDIA H200-like device, for the planners only (kernels run on the real one): subgroups
    of 32 with every feature (less those VKBACKEND_DISABLE_SUBGROUP turns off), workgroups of 1024,
    48 KiB of shared memory, 132 multiprocessors, no loop limit."""
    import dataclasses
    from vkbackend.runtime.devices import SUBGROUP_FEATURE_BITS
    features = frozenset(SUBGROUP_FEATURE_BITS) - dev.disabled_subgroup_features
    return dataclasses.replace(dev, name="NVIDIA H200", vendor="NVIDIA", subgroup_size=32,
                               min_subgroup_size=32, max_subgroup_size=32, subgroup_features=features,
                               max_workgroup_invocations=1024, max_shared_memory=49152, loop_budget=None,
                               multiprocessors=132, multiprocessors_source="queried")


@pytest.fixture(autouse=True)
def _fresh_recipes():
    """Each test plans its ops anew: a test may swap the device or a planner (primitives/recipes.py
    keys recipes on the device object's identity, which a later test's stand-in could reuse)."""
    from vkbackend.primitives import recipes
    recipes.clear()


@pytest.fixture
def whole_submits(monkeypatch):
    """Eager submits off (stream.Stream.eager): what is recorded goes in one submit at the next
    sync, so that a test can count submits to show an operation never waits mid-recording."""
    from vkbackend import runtime
    monkeypatch.setattr(runtime.get().stream, "eager", False)


@pytest.fixture
def planned_budget(monkeypatch):
    """planned_budget(n): the planners see a loop budget of n (at most the device's; it may be set
    again, higher or lower); the kernels keep the device's own. The planners read it through
    launch.loop_budget(), except the convolutions', which import the name."""
    from vkbackend.ops.conv import loops as conv_loops
    from vkbackend.primitives import launch
    real = launch.loop_budget()

    def set_(n):
        value = n if real is None else min(n, real)
        for mod in (launch, conv_loops):
            monkeypatch.setattr(mod, "loop_budget", lambda: value)
        return value
    return set_


@functools.lru_cache(maxsize=None)
def flushes_subnormals() -> bool:
    """Does the device flush float32 subnormals to zero (NVIDIA's Vulkan driver does, as CUDA's
    -ftz; lavapipe keeps them)?"""
    return float((vk.asarray(np.array([1e-40], np.float32)) * 1.0).numpy()[0]) == 0.0


def flush_subnormals(x):
    """`x` as such a device reads it: float32 subnormals flushed to zero of their sign (elsewhere
    the identity). Tests feed both the device and numpy with it."""
    x = np.asarray(x)
    if x.dtype.kind != "f" or not flushes_subnormals():
        return x
    return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(x.dtype.type(0), x), x).astype(x.dtype)


def check_array(got, want):
    """A vk.Array with numpy's shape, dtype and values, exactly."""
    want = np.asarray(want)
    assert isinstance(got, vk.Array)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def kernels_asked(monkeypatch) -> list:
    """The (shader, defines) of every kernel asked of the runtime from here on, in order (a list
    that grows as the test runs)."""
    from vkbackend import runtime
    rt, asked = runtime.get(), []
    kernel = rt.kernel

    def spy(shader, defines=None, *args, **kw):
        asked.append((shader, defines))
        return kernel(shader, defines, *args, **kw)
    monkeypatch.setattr(rt, "kernel", spy)
    return asked


def assert_rounded_once(got, exact, slack=0.0, dtype=np.float16):
    """Results of a wider computation rounded once to `dtype` (float16 of float32's, float32 of
    float64's): within half a `dtype` ulp of the exact values, plus `slack` (the wider type's own
    error)."""
    got, exact = np.asarray(got, np.float64), np.asarray(exact, np.float64)
    bound = 0.5 * np.spacing(np.abs(exact).astype(dtype)).astype(np.float64) + slack
    assert (np.abs(got - exact) <= bound).all(), np.abs(got - exact).max()


def no_gpu_work():
    """Context manager: asserts nothing was recorded or submitted inside it."""
    class _Guard:
        def __enter__(self):
            self.before = vk.stats()
            return self

        def __exit__(self, *exc):
            after = vk.stats()
            for k in ("dispatches", "fills", "submits", "uploads"):
                assert after[k] == self.before[k], f"{k} changed on a bad-input path"
            return False
    return _Guard()
