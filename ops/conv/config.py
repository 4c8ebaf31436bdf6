"""VKBACKEND_CONV_CONFIG: overrides of the convolution planners' choices, for tuning.

Items `key=value` separated by commas (or semicolons); a key may carry the prefix of the kernels
it tunes: fwd. (float32 forward and backward-input), wgrad. (float32 backward-weight), f16.
(float16 forward and backward-input on cooperative matrices), wgrad16. (float16 backward-weight
on cooperative matrices). Without a prefix a key applies to fwd. and wgrad., wherever it is
declared for them. Every key is declared in KEYS with where it is valid and what it takes;
anything else raises ValueError naming the item and what is allowed, before any GPU work.
Values are checked here one by one; whether a combination fits the kernels and the device
(a tile's workgroup, its shared memory) is the planner's check. docs/conv.md lists the keys.
The table is registered in vkbackend/config.py (the configuration registry), which parses and
checks the string (config.ConfigString) and lists the keys in docs/configuration.md.
"""
from __future__ import annotations

from vkbackend import config as registry
from vkbackend.config import Key, pow2  # noqa: F401  (pow2: plan_f32's tile check)

ENV = "VKBACKEND_CONV_CONFIG"
PREFIXES = ("fwd", "wgrad", "f16", "wgrad16")
UNPREFIXED = ("fwd", "wgrad")  # the kinds a key without a prefix applies to
_positive = registry.at_least(1)
_between = registry.between


KEYS = (
    Key("path", ("fwd",), "one of gemm, direct, narrow, winograd, matmul, col2im",
        "direct up to 4 channels per group in and out, narrow up to 8 out, else gemm; winograd and "
        "matmul on hardware where they pay, col2im for backward-input on hardware up to 4 input "
        "channels with a stride (tuning.py)",
        "float32 forward kernel: conv_gemm.comp tiled (gemm) or NARROW, conv_direct.comp, Winograd, "
        "matmul.comp, or for backward-input a GEMM into columns and conv_col2im.comp's gather; "
        "winograd, matmul and col2im where they apply, else the default",
        words=("gemm", "direct", "narrow", "winograd", "matmul", "col2im")),
    Key("path", ("wgrad",), "one of gemm, winograd", "winograd on hardware where it pays, else gemm",
        "float32 backward-weight kernel: conv_wgrad.comp (gemm) or Winograd where it applies; an "
        "unprefixed forward-only path (direct, narrow, matmul) means gemm here",
        words=("gemm", "winograd")),
    Key("path", ("f16",), "one of packed, coopmat, cast",
        "packed from 16 channels per group with more than one tap, else coopmat",
        "float16 forward kernel: conv_coopmat_packed.comp on channels-last copies, conv_coopmat.comp "
        "gathering in place, or the float32 kernels (cast)",
        words=("packed", "coopmat", "cast")),
    Key("path", ("wgrad16",), "one of packed, coopmat, cast",
        "packed where both channel counts pad well, else coopmat",
        "float16 backward-weight kernel: conv_coopmat_wgrad.comp (packed), "
        "conv_coopmat_wgrad_gather.comp (coopmat) or the float32 kernels (cast)",
        words=("packed", "coopmat", "cast")),
    Key("gather", ("fwd", "f16"), "one of uniform, flat, table",
        "uniform unless it wastes over 1/8 of the steps, then table where it fits, else flat",
        "how the reduction is gathered: channel-chunked at one tap (uniform), flat over (channel, "
        "tap), or flat through a shared-memory table of offsets",
        words=("uniform", "flat", "table")),
    Key("phased", ("fwd", "f16"), "0 or 1", "1",
        "split input-dilated passes by output phase, skipping the inserted zeros", valid=_between(0, 1)),
    Key("BM", ("fwd", "wgrad"), "a power of two", "per layer (tuning.py)", "rows per workgroup tile", valid=pow2),
    Key("BN", ("fwd", "wgrad"), "a power of two", "per layer (tuning.py)", "output channels per workgroup tile",
        valid=pow2),
    Key("BK", ("fwd", "wgrad"), "a power of two", "per layer (tuning.py)", "reduction step per stage", valid=pow2),
    Key("TM", ("fwd", "wgrad"), "a power of two >= 4", "per layer (tuning.py)",
        "rows per invocation (register block)", valid=lambda v: pow2(v) and v >= 4),
    Key("TN", ("fwd", "wgrad"), "a power of two >= 4", "per layer (tuning.py)",
        "output channels per invocation (register block)", valid=lambda v: pow2(v) and v >= 4),
    Key("BM", ("f16", "wgrad16"), "a multiple of 16 x SGM",
        "f16: 128, or 96 where it balances the multiprocessors; wgrad16: the output channels rounded "
        "up to a power of two, 16 to 128",
        "rows (wgrad16: output channels) per workgroup tile", valid=_positive),
    Key("BN", ("f16", "wgrad16"), "a multiple of 16 x SGN",
        "the channels rounded up to a power of two, 16 to 64 (128 packed from 128 channels; "
        "wgrad16: 16 to 128)",
        "output (wgrad16: input) channels per workgroup tile", valid=_positive),
    Key("BK", ("f16", "wgrad16"), "a multiple of 16", "packed: 64 from 128 channels per group, else 32; 16 gathering",
        "reduction step per stage", valid=_positive),
    Key("STAGES", ("f16", "wgrad16"), "1 or 2", "f16: 1; wgrad16: 2",
        "packed kernels: shared copies of the tiles (1: two barriers a step)",
        valid=lambda v: v in (1, 2)),
    Key("SGM", ("f16", "wgrad16"), "an integer >= 1", "8 subgroups in all (wgrad16: each >= 32 rows)",
        "subgroups along the tile's rows", valid=_positive),
    Key("SGN", ("f16", "wgrad16"), "an integer >= 1", "BN / 32, 1 to 4", "subgroups along the tile's columns",
        valid=_positive),
    Key("splits", ("wgrad", "wgrad16"), "an integer >= 1", "enough workgroups to fill the device",
        "ways the backward-weight reduction is split (partial sums added after)", valid=_positive),
    Key("gridx", ("fwd", "f16"), "an integer >= 1", "the device's limit",
        "cap on workgroups along x (the kernels loop over the rest; the loop budget may lift it)",
        valid=_positive),
    Key("RT", ("fwd",), "1 to 16", "4 or 2 while a full wave remains, else 1 (1 on software devices)",
        "narrow kernel: rows per invocation", valid=_between(1, 16)),
    Key("NN", ("fwd",), "4 or 8", "4 up to 4 output channels per group, else 8",
        "narrow kernel: output channels per workgroup", valid=lambda v: v in (4, 8)),
    Key("KC", ("fwd",), "an integer >= 1", "32 (8 on software devices), at most the channels",
        "narrow kernel: input channels per weight chunk in shared memory", valid=_positive),
    Key("CU", ("fwd",), "1 to 16", "8", "narrow kernel: channels whose loads are issued together",
        valid=_between(1, 16)),
    Key("WG", ("fwd",), "an integer >= 1", "256 (64 on software devices)", "narrow kernel: workgroup size",
        valid=_positive),
    Key("WT", ("fwd", "wgrad"), "2 or 4", "4", "Winograd's output tile: F(2x2, 3x3) or F(4x4, 3x3)",
        valid=lambda v: v in (2, 4)),
)
# A float32 forward-only path without a prefix (direct, narrow, matmul) leaves backward-weight on
# conv_wgrad.comp.
TABLE = registry.register(registry.ConfigString(
    ENV, KEYS, PREFIXES, UNPREFIXED, fallback={("path", "wgrad"): "gemm"},
    doc="`key=value` items separated by commas (or semicolons), later items overriding earlier ones; a "
        "prefix names the kernels a key tunes (`fwd.` float32 forward and backward-input, `wgrad.` float32 "
        "backward-weight, `f16.` and `wgrad16.` the same in float16 on cooperative matrices), and a key "
        "without one applies to `fwd.` and `wgrad.` wherever it is declared for them. An unknown key or "
        "prefix, a key its prefix does not read or a value a key does not take raises ValueError naming "
        "the item. docs/conv.md says more."))


def raw() -> str:
    """The configuration string in effect (planners cache on it)."""
    return registry.raw(ENV)


def declared(name: str, prefix: str) -> Key | None:
    """The declaration of key `name` under `prefix`, or None where those kernels do not read it."""
    return TABLE.declared(name, prefix)


def table() -> str:
    """KEYS as docs/conv.md's table (tests/ops/test_conv_config.py keeps the two alike)."""
    return TABLE.markdown()


def parse(text: str) -> dict:
    """The configuration string -> {kind: {key: value}} for each of PREFIXES; ValueError naming
    the item and what is allowed for an item without '=', an unknown prefix or key, a key its
    prefix does not read, or a value the key does not take. Later items override earlier ones."""
    return TABLE.parse(text)
