import numpy as np

from vkbackend.harness import run_shader

FILL = "primitives/fill.comp"


def test_harness_runs_a_shader_and_poisons_outputs():
    out, = run_shader(FILL, [], [((100,), np.int32)], defines={"T": "int", "ARANGE": 1},
                      workgroup=32, push=[60, 10, 5, 3], groups=(2,))
    np.testing.assert_array_equal(out[10:70], 5 + 3 * np.arange(60))
    assert (out[:10] == -1).all() and (out[70:] == -1).all()  # untouched: still poisoned
