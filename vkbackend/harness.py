"""The shader test harness: run one shader on numpy arrays and get numpy arrays back.

    incl, = run_shader("primitives/x.comp", [data], [((n,), np.float32)],
                       defines={"T": "float"}, workgroup=64, push=[n], groups=(4,))

Bindings are the inputs then the outputs, in order. Outputs start poisoned (all bits set: NaN for
float32, -1 for int32), so an element the shader forgets to write shows. Device subgroup features
become HAS_SUBGROUP_* defines, as for every kernel of the library.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, runtime
from .array import Array
from .primitives.creation import asarray, poison


def run_shader(shader: str, inputs, outputs, *, defines=None, workgroup: int = 64, spec=(), push=(),
               groups=(1,)) -> list[np.ndarray]:
    rt = runtime.get()
    ins = [asarray(np.asarray(x), dtype=dtypes.from_host(np.asarray(x).dtype)) for x in inputs]
    outs = []
    for shape, dtype in outputs:
        a = Array.empty(shape, dtype)
        poison(a.buffer)
        outs.append(a)
    kernel = rt.kernel(shader, defines or {}, workgroup, tuple(spec))
    kernel([a.buffer for a in ins + outs], push, groups)
    return [a.numpy() for a in outs]
