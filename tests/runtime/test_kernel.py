"""vkbackend/runtime/kernel.py: push-constant packing (on every dispatch's path) and the two ways a
dispatch binds its buffers."""
import numpy as np
import pytest

from vkbackend.runtime.kernel import pack_push


def reference_word(v) -> int:
    if isinstance(v, (float, np.floating)):
        with np.errstate(over="ignore"):
            return int(np.array([v], np.float32).view(np.uint32)[0])
    return int(v) % 2**32


def test_pack_push_matches_a_word_by_word_reference(rng):
    for _ in range(200):
        values = []
        for kind in rng.integers(0, 6, rng.integers(0, 12)):
            if kind == 0:
                values.append(int(rng.integers(0, 2**32)))
            elif kind == 1:
                values.append(-int(rng.integers(1, 2**31)))          # wraps modulo 2**32
            elif kind == 2:
                values.append(float(rng.standard_normal() * 10.0 ** rng.integers(-40, 40)))
            elif kind == 3:
                values.append(np.float32(rng.standard_normal()))
            elif kind == 4:
                values.append(np.int64(rng.integers(0, 2**31)))
            else:
                values.append(float(rng.choice([np.inf, -np.inf, 1e300, -1e300, 0.0, -0.0])))
        got = np.frombuffer(pack_push(values), np.uint32)
        assert [int(w) for w in got] == [reference_word(v) for v in values], values
    assert pack_push([]) == b""


# The same program on the push-descriptor path (lavapipe and NVIDIA have VK_KHR_push_descriptor)
# and on the descriptor-set path: elementwise, a reduction, a product, a gather and a scan over
# many buffer combinations, views at offsets included, against float64 numpy.
_BINDINGS_PROGRAM = """
import json, numpy as np, vkbackend as vk
from vkbackend import runtime
rt = runtime.get()
rng = np.random.default_rng({seed})
made = rt.pipelines.stats["created"]
errs = []
for n in (1, 7, 33, 257, 4099):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = vk.asarray(a), vk.asarray(b)
    got = [((x * 2.0 + y) - x[::-1]).numpy(), vk.sum(x * y).numpy(), vk.cumsum(x[1:]).numpy(),
           vk.take(x, vk.asarray(np.arange(n)[::-1].copy().astype(np.int32))).numpy()]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = [(a64 * 2 + b64) - a64[::-1], (a64 * b64).sum(), np.cumsum(a64[1:]), a64[::-1]]
    errs += [float(np.max(np.abs(g - w)) / (1 + np.max(np.abs(w)))) if np.size(w) else 0.0 for g, w in zip(got, want)]
m = rng.standard_normal((37, 19)).astype(np.float32)
errs.append(float(np.max(np.abs(vk.matmul(vk.asarray(m), vk.asarray(m.T.copy())).numpy() - m.astype(np.float64) @ m.T))))
print(json.dumps({{"push": rt.device.push_descriptors, "errs": errs}}))
"""


@pytest.mark.parametrize("disable", ["", "pushDescriptor"])
def test_dispatch_bindings_with_and_without_push_descriptors(disable):
    """Every dispatch binds the buffers it was given on both binding paths: push descriptors where
    the device has VK_KHR_push_descriptor (unless VKBACKEND_DISABLE_FEATURE names them), recycled
    descriptor sets otherwise."""
    import json
    import os
    import subprocess
    import sys
    from vkbackend import runtime
    env = dict(os.environ, VKBACKEND_DISABLE_FEATURE=disable)
    out = subprocess.run([sys.executable, "-c", _BINDINGS_PROGRAM.format(seed=len(disable))], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    listed = "VK_KHR_push_descriptor" in runtime.get().device.extensions
    assert res["push"] == (listed and not disable)
    assert max(res["errs"]) < 1e-4, res["errs"]
