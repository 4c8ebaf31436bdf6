"""vkbackend/kernel.py: push-constant packing (on every dispatch's path)."""
import numpy as np

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
