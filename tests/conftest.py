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
    seed = int(os.environ.get("VKBACKEND_TEST_SEED") or np.random.SeedSequence().entropy % 2**32)
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
    if dtype.kind == "u":
        return rng.integers(0, 1000, shape, dtype=dtype)
    return rng.integers(-1000, 1000, shape, dtype=dtype)


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
