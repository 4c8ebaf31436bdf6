"""The float32 transcendentals (shaders/lib/math.glsl) against numpy in float64, in ulps of the
exact result: random bit patterns of all finite floats, dense samples near 1, near the overflow
and underflow edges and over each function's main range, fresh every run.

Error: |got - exact| / ulp(exact), ulp(v) = 2^(max(floor(log2 |v|), -126) - 23); 0.5 is correct
rounding. Infinities, NaN and exact zeros must come out as the reference's. The bound asserted is
1 ulp for every function (faithful rounding). Measured maxima on lavapipe over 2^21 and 2^22
samples per function and sample kind, with exact and with inexact built-ins (below), worst of all:
    exp 0.627 (0.764 at subnormal results; every float32 checked)   exp2 0.526 (0.754)   expm1 0.575
    log 0.532 (every float32 checked)   log2 log10 log1p 0.502   sqrt divide reciprocal 0.500 (correctly rounded)
    sin 0.753  cos 0.758  tan 0.887  arcsin 0.614  arccos 0.619  arctan 0.636  arctan2 0.640
    sinh 0.549  cosh 0.532  tanh 0.547 (these three: every float32 checked)  arcsinh 0.516  arccosh 0.515  arctanh 0.501
    power 0.635 (0.765 at subnormal results)   hypot 0.500 (0.747)
    logaddexp 0.734 in ulps of the larger of the result and log1p(e^-|x - y|) (near its zeros
    max(x, y) < 0 and that term cancel, and no float32 result can do better there)
Results above 0.5 ulp at subnormals are the double rounding of p 2^n (24 bits, then fewer).
lavapipe keeps subnormals (a subnormal times 1 is exact there); a device that flushes them may
return 0 for results below 2^-126, which the check accepts after probing for it, and reads
subnormal inputs as zero, so there both sides get the flushed inputs (tests/conftest.py).

VK_TEST_INEXACT_BUILTINS makes the built-in division and sqrt 4-8 ulps off (up or down) and fma a separate
multiply and add, worse than Vulkan allows: the same bounds hold, so they do not rest on
lavapipe's exact built-ins."""
import numpy as np
import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.primitives.launch import grid_groups
from tests.conftest import flush_subnormals, flushes_subnormals

N = 1 << 15  # samples per kind; each function draws 4-6 kinds
BOUND = 1.0


def _ulp(v):
    e = np.frexp(v)[1]
    return np.ldexp(1.0, np.maximum(e - 1, -126) - 23)


def ulp_errors(got, ref, scale=None, ftz=None):
    """|got - ref| in float32 ulps of ref (or of `scale`); non-finite references must match. On a
    device that flushes subnormals (ftz; probed when None) an error within 2^-126 absolute is
    the flush's (a subnormal result or intermediate read as zero) and counts as none."""
    if ftz is None:
        ftz = flushes_subnormals()
    got64 = got.astype(np.float64)
    with np.errstate(all="ignore"):
        ref32 = ref.astype(np.float32)
    err = np.zeros(got.shape)
    fin = np.isfinite(ref32)
    s = np.abs(ref if scale is None else scale)[fin]
    err[fin] = np.abs(got64[fin] - ref[fin]) / _ulp(s)
    if ftz:
        err[fin & (np.abs(got64 - ref) <= 2.0 ** -126)] = 0.0
    same = (np.isnan(got) & np.isnan(ref32)) | (got == ref32)
    err[~fin] = np.where(same[~fin], 0.0, np.inf)
    return err


# -- samples ------------------------------------------------------------------------------------
def any_floats(rng, n=None):
    """Random bit patterns: every finite float32, subnormals and both signs included."""
    n = n or N
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), x, np.float32(1.5))


def near(rng, center, n=None, ulps=2**20):
    n = n or N
    bits = np.float32(center).view(np.int32).astype(np.int64) + rng.integers(-ulps, ulps, n)
    return bits.astype(np.int32).view(np.float32)


def uniform(rng, lo, hi, n=None):
    n = n or N
    return rng.uniform(lo, hi, n).astype(np.float32)


def log_uniform(rng, lo, hi, n=None):
    n = n or N
    mag = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    return (mag * rng.choice([-1.0, 1.0], n)).astype(np.float32)


# 16 of them: the vk.* calls below see lengths that are multiples of 4 (the 16-byte load path)
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0 ** -149, -(2.0 ** -149),
                     2.0 ** -126, 3.4028235e38, -3.4028235e38, 0.5, -0.5, 1e-30, -65504.0], np.float32)

UNARY = {  # name: (float64 reference, sample kinds)
    "exp": (np.exp, lambda r: [uniform(r, -104, 89), near(r, 88.72), near(r, -103.9), near(r, -87.3),
                               uniform(r, -1, 1), log_uniform(r, 1e-12, 1)]),
    "exp2": (np.exp2, lambda r: [uniform(r, -151, 128), near(r, 127.9), near(r, -126), uniform(r, -1, 1)]),
    "expm1": (np.expm1, lambda r: [uniform(r, -20, 89), uniform(r, -1, 1), log_uniform(r, 1e-9, 1), near(r, 88.7)]),
    "log": (np.log, lambda r: [near(r, 1.0), uniform(r, 0, 4), np.abs(any_floats(r))]),
    "log2": (np.log2, lambda r: [near(r, 1.0), uniform(r, 0, 4), np.abs(any_floats(r))]),
    "log10": (np.log10, lambda r: [near(r, 1.0), uniform(r, 0, 4), np.abs(any_floats(r))]),
    "log1p": (np.log1p, lambda r: [uniform(r, -1, 1), log_uniform(r, 1e-9, 1), near(r, -1.0)]),
    "sqrt": (np.sqrt, lambda r: [np.abs(any_floats(r)), uniform(r, 0, 4)]),
    "reciprocal": (lambda x: 1.0 / x, lambda r: [uniform(r, -4, 4), near(r, 3.4e38), near(r, 1e-38)]),
    "sin": (np.sin, lambda r: [uniform(r, -10, 10), log_uniform(r, 1e-5, 1e6), near(r, np.pi), near(r, 1e30)]),
    "cos": (np.cos, lambda r: [uniform(r, -10, 10), log_uniform(r, 1e-5, 1e6), near(r, np.pi / 2), near(r, 1e30)]),
    "tan": (np.tan, lambda r: [uniform(r, -10, 10), log_uniform(r, 1e-5, 1e6), near(r, np.pi / 2), near(r, 1e30)]),
    "arcsin": (np.arcsin, lambda r: [uniform(r, -1, 1), near(r, 1.0, ulps=2**18), near(r, 0.5)]),
    "arccos": (np.arccos, lambda r: [uniform(r, -1, 1), near(r, 1.0, ulps=2**18), near(r, -1.0, ulps=2**18), near(r, 0.5)]),
    "arctan": (np.arctan, lambda r: [uniform(r, -3, 3), log_uniform(r, 1e-5, 1e9)]),
    "sinh": (np.sinh, lambda r: [uniform(r, -90, 90), uniform(r, -1, 1), near(r, 89.4)]),
    "cosh": (np.cosh, lambda r: [uniform(r, -90, 90), uniform(r, -1, 1), near(r, -89.4)]),
    "tanh": (np.tanh, lambda r: [uniform(r, -10, 10), uniform(r, -1, 1), log_uniform(r, 1e-5, 1)]),
    "arcsinh": (np.arcsinh, lambda r: [uniform(r, -10, 10), log_uniform(r, 1e-5, 1e6)]),
    "arccosh": (np.arccosh, lambda r: [uniform(r, 1, 10), near(r, 1.0), np.abs(any_floats(r))]),
    "arctanh": (np.arctanh, lambda r: [uniform(r, -1, 1), near(r, 1.0, ulps=2**18), near(r, -1.0, ulps=2**18)]),
}
BINARY = {  # name: (float64 reference, sample kinds as (x1, x2) pairs)
    "power": (np.power, lambda r: [(np.abs(any_floats(r)), uniform(r, -50, 50)), (uniform(r, 0, 4), log_uniform(r, 1e-3, 1e3)),
                                   (near(r, 1.0), log_uniform(r, 1, 1e8)), (-uniform(r, 0, 4), np.round(uniform(r, -60, 60)))]),
    "arctan2": (np.arctan2, lambda r: [(uniform(r, -2, 2), uniform(r, -2, 2)), (log_uniform(r, 1e-30, 1e30), log_uniform(r, 1e-30, 1e30))]),
    "hypot": (np.hypot, lambda r: [(uniform(r, -2, 2), uniform(r, -2, 2)), (log_uniform(r, 1e-30, 1e30), log_uniform(r, 1e-30, 1e30))]),
    "logaddexp": (np.logaddexp, lambda r: [(uniform(r, -200, 200), uniform(r, -200, 200)), (uniform(r, -2, 2), uniform(r, -2, 2)),
                                           (log_uniform(r, 1e-30, 1e3), log_uniform(r, 1e-30, 1e3))]),
    "divide": (np.divide, lambda r: [(uniform(r, -2, 2), uniform(r, -2, 2)), (log_uniform(r, 1e-38, 1e38), log_uniform(r, 1e-38, 1e38))]),
}


@pytest.fixture(scope="module")
def ftz():
    """Does the device flush subnormals? (lavapipe does not; NVIDIA's driver does)"""
    return flushes_subnormals()


def _inexact(name, *arrays):
    """The elementwise kernel for contiguous float32 operands, with VK_TEST_INEXACT_BUILTINS."""
    defines = {f"OP_{name}": 1, "NARGS": len(arrays), "T": "float", "T_OUT": "float",
               "T_A": "float", "T_B": "float", "VK_TEST_INEXACT_BUILTINS": 1}
    kernel = runtime.get().kernel("primitives/elementwise.comp", defines, 64)
    out = vk.empty(arrays[0].shape, np.float32)
    kernel([out.buffer] + [a.buffer for a in arrays],
           [out.size, out.offset] + [a.offset for a in arrays] + [0] * (3 - len(arrays)),
           (grid_groups(out.size, 64),))
    return out


def _call(name, inexact, *xs):
    arrays = [vk.asarray(x) for x in xs]
    if inexact:
        return _inexact(name, *arrays).numpy()
    return getattr(vk, name)(*arrays).numpy()


def _report(name, err, xs):
    i = int(np.argmax(err))
    at = ", ".join(repr(x[i]) for x in xs)
    return f"{name}: max error {err[i]:.3f} ulp at ({at})"


@pytest.mark.parametrize("inexact", [False, True], ids=["builtins", "inexact_builtins"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_within_one_ulp(rng, ftz, name, inexact):
    ref_fn, kinds = UNARY[name]
    x = flush_subnormals(np.concatenate(kinds(rng) + [any_floats(rng), SPECIALS]))
    got = _call(name, inexact, x)
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64))
    err = ulp_errors(got, ref, ftz=ftz)
    assert err.max() <= BOUND, _report(name, err, [x])


@pytest.mark.parametrize("inexact", [False, True], ids=["builtins", "inexact_builtins"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_within_one_ulp(rng, ftz, name, inexact):
    ref_fn, kinds = BINARY[name]
    pairs = kinds(rng) + [(any_floats(rng), any_floats(rng))]
    s1, s2 = np.meshgrid(SPECIALS, SPECIALS)
    x1 = np.concatenate([p[0] for p in pairs] + [s1.ravel()])
    x2 = np.concatenate([p[1] for p in pairs] + [s2.ravel()])
    x1, x2 = flush_subnormals(x1), flush_subnormals(x2)
    got = _call(name, inexact, x1, x2)
    a, b = x1.astype(np.float64), x2.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = ref_fn(a, b)
        # logaddexp's sum cancels where x1, x2 < 0: errors count in ulps of its larger term
        scale = np.maximum(np.abs(ref), np.log1p(np.exp(-np.abs(a - b)))) if name == "logaddexp" else None
    err = ulp_errors(got, ref, scale, ftz=ftz)
    assert err.max() <= BOUND, _report(name, err, [x1, x2])


def _hard_cases(rng, n=None):
    """(a, b) whose quotient lies within an ulp or so of a midpoint between two floats or of a
    float, and x whose sqrt does: where a correction of the built-in's guess that stops one step
    early rounds the wrong way."""
    n = n or N
    q = uniform(rng, 1, 2, n).astype(np.float64)
    on = np.arange(n) % 2 == 0
    t = np.where(on, q, q + np.ldexp(1.0, -24))  # a float, or halfway to its upper neighbour
    b = log_uniform(rng, 1e-18, 1e18, n)
    a = (t * b.astype(np.float64)).astype(np.float32)
    x = (t * t * np.ldexp(1.0, rng.integers(-60, 60, n) * 2)).astype(np.float32)
    # quotients a hair (1 / mb of a unit) below the float q1 2^e: ma 2^24 = q1 mb - 1 with the
    # significands ma < mb, q1 = 1 / mb modulo 2^24
    mb = rng.integers(2**22, 2**23, n, dtype=np.uint64) * 2 + 1
    q1 = mb.copy()
    for _ in range(4):  # Newton's iteration for the inverse modulo 2^24 (3, 6, 12, 24 bits)
        q1 = (q1 * ((2 - mb * q1) % 2**24)) % 2**24
    ma = (q1 * mb - 1) >> 24
    ok = (q1 > 2**23) & (ma >= 2**23) & (ma < mb)
    e = rng.integers(0, 40, n)
    # every other one's quotient subnormal (2^-149 to 2^-127), its last 1 to 24 bits rounded off
    de = np.where(np.arange(n) % 4 < 2, rng.integers(-2, 3, n), rng.integers(126, 150, n))
    a = np.where(ok, np.ldexp(ma.astype(np.float64), e - 100), a).astype(np.float32)
    b = np.where(ok, np.ldexp(mb.astype(np.float64), e - 100 + de), b).astype(np.float32)
    return a, b, x


@pytest.mark.parametrize("inexact", [False, True], ids=["builtins", "inexact_builtins"])
@pytest.mark.parametrize("name", ["divide", "reciprocal", "sqrt"])
def test_correctly_rounded(rng, ftz, name, inexact):
    """divide, reciprocal and sqrt give numpy's float32 results bit for bit (IEEE's correct
    rounding), subnormal results included, near floats and midpoints too; on a device that flushes
    subnormals a result below 2^-126 may be a zero of its sign."""
    a, b, x = _hard_cases(rng)
    if name == "divide":
        xs = [np.concatenate([a, any_floats(rng), uniform(rng, -2, 2), log_uniform(rng, 1e-38, 1e38)]),
              np.concatenate([b, any_floats(rng), uniform(rng, -2, 2), log_uniform(rng, 1e-38, 1e38)])]
    elif name == "reciprocal":
        xs = [np.concatenate([b, any_floats(rng), near(rng, 1e-38), near(rng, 3.4e38), SPECIALS])]
    else:
        xs = [np.concatenate([x, np.abs(any_floats(rng)), uniform(rng, 0, 4), SPECIALS])]
    xs = [flush_subnormals(v) for v in xs]
    got = _call(name, inexact, *xs)
    with np.errstate(all="ignore"):
        ref = {"divide": np.divide, "reciprocal": np.reciprocal, "sqrt": np.sqrt}[name](*xs)
    same = (got.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(got) & np.isnan(ref))
    if ftz:
        same |= (np.abs(ref) < 2.0 ** -126) & (np.abs(got) <= 2.0 ** -126) & (np.signbit(got) == np.signbit(ref))
    i = int(np.argmin(same))
    assert same.all(), f"{name}{tuple(v[i] for v in xs)}: {got[i]!r}, numpy {ref[i]!r}"


def test_log_and_exp_examples_of_the_issue():
    """issue 15: log(0.9046) was -0.10030537 (numpy: -0.10030542); exp(88) 14 ulp off."""
    x = np.array([0.9046, 88.0, 1.0 - 2.0 ** -24, 1.0 + 2.0 ** -23], np.float32)
    got_log = vk.log(vk.asarray(x)).numpy()
    got_exp = vk.exp(vk.asarray(x)).numpy()
    assert ulp_errors(got_log, np.log(x.astype(np.float64))).max() <= 0.5
    assert ulp_errors(got_exp, np.exp(x.astype(np.float64))).max() <= 0.5
