"""lib/workgroup.glsl through the shader harness: reduce, inclusive and exclusive scan for every
(type, op), at workgroup sizes that are and are not multiples of the subgroup size."""
from pathlib import Path

import numpy as np
import pytest

from vkbackend.harness import run_shader

SHADER = str(Path(__file__).with_name("workgroup_ops.comp"))
OPS = {
    "float": ["add", "mul", "min", "max"],
    "int": ["add", "mul", "min", "max", "and", "or", "xor"],
    "uint": ["add", "mul", "min", "max", "and", "or", "xor"],
}
NP_TYPE = {"float": np.float32, "int": np.int32, "uint": np.uint32}
UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
         "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def identity(op, dtype):
    if op in ("add", "or", "xor"):
        return dtype(0)
    if op == "mul":
        return dtype(1)
    if op == "and":
        return dtype(~dtype(0))
    info = np.finfo(dtype) if dtype == np.float32 else np.iinfo(dtype)
    big = np.inf if dtype == np.float32 else info.max
    small = -np.inf if dtype == np.float32 else info.min
    return dtype(big if op == "min" else small)


def data(rng, t, op, n):
    dtype = NP_TYPE[t]
    if t == "float":
        return (rng.uniform(0.9, 1.1, n) if op == "mul" else rng.standard_normal(n)).astype(dtype)
    if op == "mul":
        return rng.choice(np.array([1, 1, 1, 3, -1] if t == "int" else [1, 1, 3], dtype), n)
    return rng.integers(-500 if t == "int" else 0, 1000, n).astype(dtype)


def reference(x, op, wg, dtype):
    """Per workgroup chunk (padded with the identity): inclusive, exclusive, reduce."""
    groups = -(-len(x) // wg)
    pad = np.full(groups * wg, identity(op, dtype), dtype)
    pad[: len(x)] = x
    chunks = pad.reshape(groups, wg)
    f = UFUNC[op]
    if dtype == np.float32:
        chunks = chunks.astype(np.float64)
    incl = f.accumulate(chunks, axis=1, dtype=chunks.dtype)
    excl = np.concatenate([np.full((groups, 1), identity(op, dtype), chunks.dtype), incl[:, :-1]], axis=1)
    return incl.ravel()[: len(x)], excl.ravel()[: len(x)], incl[:, -1]


@pytest.mark.parametrize("t", ["float", "int", "uint"])
@pytest.mark.parametrize("wg", [1, 3, 32, 100, 256])
def test_workgroup_reduce_and_scan(rng, sg, t, wg):
    dtype = NP_TYPE[t]
    for op in OPS[t]:
        for n in sorted({1, wg - 1, wg, wg + 1, 3 * wg + sg + 1} - {0}):
            x = data(rng, t, op, n)
            groups = -(-n // wg)
            incl, excl, red = run_shader(
                SHADER, [x], [((n,), dtype), ((n,), dtype), ((2 * groups,), dtype)],
                defines={"T": t, "OP": op}, workgroup=wg, push=[n], groups=(groups,))
            r_incl, r_excl, r_red = reference(x, op, wg, dtype)
            tol = dict(rtol=1e-5, atol=1e-5 * np.sqrt(wg)) if t == "float" else dict(rtol=0, atol=0)
            ctx = f"op={op} n={n} wg={wg} sg={sg}"
            np.testing.assert_allclose(incl, r_incl, **tol, err_msg="inclusive " + ctx)
            np.testing.assert_allclose(excl, r_excl, **tol, err_msg="exclusive " + ctx)
            np.testing.assert_allclose(red[0::2], r_red, **tol, err_msg="reduce " + ctx)
            np.testing.assert_allclose(red[1::2], r_red, **tol, err_msg="aggregate " + ctx)
