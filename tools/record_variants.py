"""Ask for the shader variants everyday use asks for, so the package can ship them compiled.

The planners pick variants from a space far larger than the shaders' `// @variants` samples
(operator x the operands' dtypes x scalar or array x layout; tiles by shape and device), so the
package also ships those of shaders/recorded.variants (vkbackend/runtime/variants.py). This sweep
of the public API adds the common cases the suite may not reach: every elementwise function over
bool/int32/uint32/float32 arrays and Python scalars, contiguous, 4-aligned and broadcast;
reductions and scans over each axis; matmul, indexing and layout functions; layer norm. Run it
with the recorder on, on lavapipe and on each kind of GPU (whose planners choose other tiles):

    VKBACKEND_RECORD_VARIANTS=$PWD/shaders/recorded.variants python tools/record_variants.py

Failures the API raises on purpose (refused dtypes, e.g. int32 with uint32) are expected and
skipped; anything else is printed. The last line counts what was asked for.
"""
from __future__ import annotations

import itertools
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import vkbackend as vk  # noqa: E402
from vkbackend.runtime import compiler  # noqa: E402

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
SCALARS = [2, 2.5, True]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "fmod",
          "power", "maximum", "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "arctan2", "hypot", "logaddexp",
          "logaddexp2", "copysign", "nextafter", "heaviside"]
UNARY = ["negative", "positive", "absolute", "abs", "sign", "square", "reciprocal", "sqrt", "cbrt",
         "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
         "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil",
         "trunc", "rint", "round", "isnan", "isinf", "isfinite", "signbit", "logical_not", "invert",
         "bitwise_not", "deg2rad", "rad2deg"]
REDUCE = ["sum", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "mean", "var", "std", "all",
          "any", "nansum", "count_nonzero"]
SCAN = ["cumsum", "cumprod", "cummax", "cummin"]
EXPECTED = (TypeError, ValueError, OverflowError, IndexError, NotImplementedError)

rng = np.random.default_rng(0)
failures: list[str] = []


def host(dtype, shape):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype == np.float32:
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)  # inside every function's domain
    return rng.integers(1, 8, shape).astype(dtype)


def arrays(dtype):
    """The layouts the elementwise planner tells apart: 4-aligned (VEC4), not (rank 0), a
    non-mergeable view (rank 2), and a 2-D array to broadcast rows and columns against."""
    a = vk.asarray(host(dtype, (33, 64)))
    return {"vec4": vk.asarray(host(dtype, 1024)), "odd": vk.asarray(host(dtype, 1001)), "2d": a,
            "view": a[:, 1:], "row": vk.asarray(host(dtype, 64)), "col": vk.asarray(host(dtype, (33, 1)))}


def attempt(what, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except EXPECTED:
        pass
    except vk.CompileError:
        raise
    except Exception:  # noqa: BLE001 - a sweep reports and goes on
        failures.append(f"{what}: {traceback.format_exc(limit=2)}")


def sweep_elementwise():
    data = {d: arrays(d) for d in DTYPES}
    for name in BINARY:
        fn = getattr(vk, name, None)
        if fn is None:
            continue
        for da, db in itertools.product(DTYPES, DTYPES):
            a, b = data[da], data[db]
            for x, y in ((a["vec4"], b["vec4"]), (a["odd"], b["odd"]), (a["2d"], b["row"]),
                         (a["2d"], b["col"]), (a["view"], b["view"])):
                attempt(f"{name} {da.__name__} {db.__name__}", fn, x, y)
        for d, s in itertools.product(DTYPES, SCALARS):
            for x in (data[d]["vec4"], data[d]["odd"], data[d]["view"]):
                attempt(f"{name} {d.__name__} {s!r}", fn, x, s)
                attempt(f"{name} {s!r} {d.__name__}", fn, s, x)
        vk.synchronize()
    for name in UNARY:
        fn = getattr(vk, name, None)
        if fn is None:
            continue
        for d in DTYPES:
            for layout in ("vec4", "odd", "view"):
                attempt(f"{name} {d.__name__}", fn, data[d][layout])
        vk.synchronize()
    for d, t in itertools.product(DTYPES, DTYPES):
        for layout in ("vec4", "odd", "view"):
            attempt(f"astype {d.__name__} {t.__name__}", data[d][layout].astype, t)
    for dc, dx in itertools.product(DTYPES, DTYPES):
        c = data[dc]
        for x, y in ((data[dx]["vec4"], data[dx]["vec4"]), (data[dx]["odd"], 0), (data[dx]["2d"], data[dx]["row"])):
            cond = c["vec4"] if x.shape == (1024,) else c["odd"] if x.shape == (1001,) else c["2d"]
            attempt(f"where {dc.__name__} {dx.__name__}", vk.where, cond, x, y)
        for x in (data[dx]["vec4"], data[dx]["odd"]):
            attempt(f"clip {dx.__name__}", getattr(vk, "clip", lambda *a: None), x, 1, 3)
    vk.synchronize()


def sweep_reduce_scan():
    for d in DTYPES:
        for shape in ((1000,), (33, 64), (64, 33), (7, 9, 130)):
            x = vk.asarray(host(d, shape))
            for axis in [None, *range(len(shape)), (0, len(shape) - 1)]:
                for name in REDUCE:
                    fn = getattr(vk, name, None)
                    if fn is not None:
                        attempt(f"{name} {d.__name__} {shape} {axis}", fn, x, axis=axis)
                if axis is None or isinstance(axis, int):
                    for name in SCAN:
                        fn = getattr(vk, name, None)
                        if fn is not None:
                            attempt(f"{name} {d.__name__} {shape} {axis}", fn, x, axis=axis)
                            attempt(f"{name} excl/rev", fn, x, axis=axis, exclusive=True, reverse=True)
            vk.synchronize()


def sweep_linalg_layout():
    for d in (np.float32, np.int32):
        for (m, k), n in itertools.product(((64, 64), (33, 17), (256, 128), (1, 300)), (64, 5, 1)):
            a, b = vk.asarray(host(d, (m, k))), vk.asarray(host(d, (k, n)))
            attempt(f"matmul {d.__name__} {m}x{k}x{n}", vk.matmul, a, b)
            attempt("matmul transposed", vk.matmul, vk.asarray(host(d, (k, m))).T, b)
        attempt("matmul batched", vk.matmul, vk.asarray(host(d, (3, 8, 16))), vk.asarray(host(d, (16, 8))))
        attempt("matmul vector", vk.matmul, vk.asarray(host(d, 16)), vk.asarray(host(d, (16, 8))))
        vk.synchronize()
    for d in DTYPES:
        x = vk.asarray(host(d, (33, 64)))
        idx = vk.asarray(rng.integers(0, 33, 20).astype(np.int32))
        for fn, args in ((vk.take, (x, idx)), (vk.take, (x, idx, 0)), (vk.transpose, (x,)),
                         (vk.concatenate, ([x, x],)), (vk.concatenate, ([x, x], 1)), (vk.stack, ([x, x],)),
                         (getattr(vk, "nonzero", None), (x,)), (getattr(vk, "flatnonzero", None), (x,))):
            if fn is not None:
                attempt(f"{fn.__name__} {d.__name__}", fn, *args)
        attempt("mask", x.__getitem__, vk.asarray(host(np.bool_, (33, 64))))
        attempt("stepped", x.__getitem__, (slice(None, None, 2), slice(1, None, 3)))
        attempt("copy", x.copy)
        vk.synchronize()
    for shape in ((64, 256), (5, 1000), (4, 8, 96)):
        x = vk.asarray(host(np.float32, shape))
        w, b = vk.asarray(host(np.float32, shape[-1])), vk.asarray(host(np.float32, shape[-1]))
        attempt("layer_norm", vk.layer_norm, x, shape[-1:], w, b)
        attempt("layer_norm bare", vk.layer_norm, x, shape[-1:])
        attempt("rms_norm", vk.rms_norm, x, shape[-1:], w)
    vk.synchronize()


def main() -> int:
    if not os.environ.get("VKBACKEND_RECORD_VARIANTS"):
        print("record_variants: set VKBACKEND_RECORD_VARIANTS to the record file "
              "(e.g. $PWD/shaders/recorded.variants)", file=sys.stderr)
        return 2
    print(f"record_variants: on {vk.device().name}")
    sweep_elementwise()
    sweep_reduce_scan()
    sweep_linalg_layout()
    for f in failures:
        print(f)
    s = compiler.stats
    print(f"record_variants: {s['compiles'] + s['disk_hits'] + s['shipped_hits']} variants asked for "
          f"({s['compiles']} compiled); {len(failures)} unexpected failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
