"""The one registry of vkbackend's configuration: every VKBACKEND_* environment variable and every
tuning key, with its type, what it takes, its default, what it does and where it is read.

A value is read from the environment where the code that needs it runs, and parsed and checked
there, never at import: a malformed one cannot break `import vkbackend`, only the call that reads
it, which raises ValueError naming the variable, the value and what is allowed (before any GPU
work). An empty value is the same as unset. The key tables of the layers above (ops/conv/config.py:
VKBACKEND_CONV_CONFIG's keys; ops/qr.py: one VKBACKEND_QR_<KEY> variable per key of TUNE) stay
where they are read and are registered here (`register`), which checks them the same way; this
module imports nothing of vkbackend. docs/configuration.md is `markdown()` (`python -m vkbackend
config-docs`); tests/test_config.py keeps the two alike and every VKBACKEND_ name of the code
declared here.
"""
from __future__ import annotations

import difflib
import functools
import importlib
import os
import re
from dataclasses import dataclass
from typing import Callable

PREFIX = "VKBACKEND_"


# -- values --------------------------------------------------------------------------------------

def pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def at_least(lo: int) -> Callable[[int], bool]:
    return lambda v: v >= lo


def between(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda v: lo <= v <= hi


def _size(text: str) -> int:
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise ValueError("expected a size in bytes such as 268435456, 512M or 2G")
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def parse_bytes(text: str, name: str) -> int:
    """'512M', '2G', '1.5GiB', '1048576' -> bytes (ValueError naming `name` otherwise)."""
    try:
        return _size(text)
    except ValueError as e:
        raise ValueError(f"{name}={text!r}: {e}") from None


def _integer(lo: int, hi: int | None = None, unit: str = ""):
    top = "2**31 - 1" if hi == 2**31 - 1 else hi
    allowed = f"an integer from {lo} to {top}" if hi is not None else f"an integer >= {lo}"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < lo or (hi is not None and v > hi):
            raise ValueError(f"expected {allowed}{unit}")
        return v
    return parse


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError("expected 0 or 1")
    return text == "1"


def _names(allowed: tuple, every: tuple = (), what: str = "name"):
    """A comma-separated subset of `allowed` (a frozenset); 'all' means `every` where given."""
    def parse(text: str) -> frozenset:
        names = {n.strip() for n in text.split(",") if n.strip()}
        if every and "all" in names:
            names = (names - {"all"}) | set(every)
        unknown = names - set(allowed)
        if unknown:
            raise ValueError(f"unknown {what}(s) {sorted(unknown)}; expected names from {sorted(allowed)}"
                             + (" or 'all'" if every else ""))
        return frozenset(names)
    return parse


def _text(text: str) -> str:
    return text


def _items(text: str) -> tuple:
    """';'-separated items, blanks dropped."""
    return tuple(s.strip() for s in text.split(";") if s.strip())


# -- declarations ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variable:
    name: str
    layer: str               # runtime, primitives, ops, tests, tools or build
    kind: str                # its type: text, path, integer, flag, names, size, tile, items, keys
    allowed: str             # what it takes, in words (errors and docs)
    default: str             # what happens while it is unset, in words
    doc: str                 # what it does
    read_by: str             # the files that read it
    parse: Callable | str | None = None  # stripped text -> value, ValueError with the reason; or
                                         # "module:function" (imported at the first read); None: a
                                         # registered key table parses it
    unset: object = None     # the value while unset or empty


SUBGROUP_FEATURES = ("basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad")
# What kp's patched createDevice enables where the device has it (third_party/kompute/0004), and
# push descriptors (VK_KHR_push_descriptor, asked for by runtime/devices.py; 0011).
DEVICE_FEATURES = ("storageBuffer16BitAccess", "shaderFloat16", "shaderInt8", "storageBuffer8BitAccess",
                   "vulkanMemoryModel", "vulkanMemoryModelDeviceScope", "cooperativeMatrix", "pushDescriptor")
_SIZE = "a size in bytes such as 268435456, 512M or 2G"


def _integer_or_off(lo: int, hi: int, allowed: str):
    """An integer in lo..hi, or False for "off"."""
    def parse(text: str):
        if text.lower() == "off":
            return False
        try:
            return _integer(lo, hi)(text)
        except ValueError:
            raise ValueError(f"expected {allowed}") from None
    return parse


_EAGER = "an integer from 0 to 10000000 (microseconds), or off"
_eager = _integer_or_off(0, 10**7, _EAGER)  # VKBACKEND_EAGER_US
_FUSION = "an integer from 1 to 1000000, or off"
_fusion = _integer_or_off(1, 10**6, _FUSION)  # VKBACKEND_FUSION: runs before a chain is fused


VARIABLES = {v.name: v for v in (
    # runtime
    Variable("VKBACKEND_DEVICE", "runtime", "text",
             "a device index (0, 1, ...) or part of a device name (any case)", "the first GPU, else lavapipe",
             "the Vulkan device to open", "vkbackend/runtime/devices.py", _text, ""),
    Variable("VKBACKEND_DISABLE_SUBGROUP", "runtime", "names",
             f"comma-separated subgroup features ({', '.join(SUBGROUP_FEATURES)}) or all (every one but basic)",
             "none", "subgroup features treated as absent: kernels take their shared-memory fallbacks",
             "vkbackend/runtime/devices.py", _names(SUBGROUP_FEATURES, SUBGROUP_FEATURES[1:], "feature"),
             frozenset()),
    Variable("VKBACKEND_DISABLE_FEATURE", "runtime", "names",
             f"comma-separated device features ({', '.join(DEVICE_FEATURES)})", "none",
             "optional Vulkan features treated as absent: paths that need them are not taken",
             "vkbackend/runtime/devices.py", _names(DEVICE_FEATURES, (), "feature"), frozenset()),
    Variable("VKBACKEND_LOOP_BUDGET", "runtime", "integer", "an integer from 2 to 2**31 - 1",
             "the driver's: 65535 on lavapipe, none elsewhere",
             "loop iterations one invocation may run: lowers the budget and enforces it in every kernel "
             "(runtime/loop_guard.py)", "vkbackend/runtime/devices.py",
             _integer(2, 2**31 - 1, " (loop iterations per invocation)")),
    Variable("VKBACKEND_MEMORY_LIMIT", "runtime", "size", _SIZE, "the device's memory",
             "device memory the library may hold in all, as if the device had no more (MemoryError "
             "past it, after trimming the cache)", "vkbackend/runtime/__init__.py",
             _size),
    Variable("VKBACKEND_POOL_LIMIT", "runtime", "size", _SIZE, "a quarter of the device's local memory",
             "bytes of released buffers kept for reuse", "vkbackend/runtime/__init__.py",
             _size),
    Variable("VKBACKEND_EAGER_US", "runtime", "integer", _EAGER,
             "100",
             "microseconds of recording, with the GPU idle, after which what is recorded is submitted "
             "without waiting (0: whenever the GPU idles; off: only at a sync or a full chunk)",
             "vkbackend/runtime/__init__.py", _eager, None),
    Variable("VKBACKEND_SUBALLOC_LIMIT", "runtime", "size", _SIZE, "64 KiB",
             "arrays up to this size are pieces of larger allocations (slabs); 0: every array an "
             "allocation of its own (an out-of-bounds write then cannot reach a neighbour)",
             "vkbackend/runtime/__init__.py", _size),
    Variable("VKBACKEND_STAGING_LIMIT", "runtime", "size", _SIZE, "64 MiB",
             "the most host memory that uploads and downloads of device arrays go through at once "
             "(larger transfers go in pieces)", "vkbackend/runtime/__init__.py", _size),
    Variable("VKBACKEND_FUSION", "runtime", "integer", _FUSION, "2",
             "consecutive float32 elementwise operations over arrays of one length run as one kernel "
             "once the same chain has run this many times (1: at once; each new chain compiles a "
             "pipeline); off: each operation is its own dispatch", "vkbackend/runtime/__init__.py",
             _fusion, 2),
    Variable("VKBACKEND_POISON", "runtime", "flag", "0 or 1", "0",
             "1: fill every fresh buffer with all-ones bits (NaN, -1), so an element a kernel forgets "
             "to write shows; the tests set it", "vkbackend/runtime/__init__.py", _flag, False),
    Variable("VKBACKEND_CACHE_DIR", "runtime", "path", "a directory",
             "$XDG_CACHE_HOME/vkbackend, else ~/.cache/vkbackend",
             "where compiled SPIR-V is cached (its spirv/ folder)", "vkbackend/runtime/compiler.py", _text),
    Variable("VKBACKEND_RECORD_VARIANTS", "runtime", "path", "a file", "nothing recorded",
             "append every package shader variant a run asks for to this file (one JSON line each; "
             "shaders/recorded.variants, shipped compiled)",
             "vkbackend/runtime/compiler.py, tools/record_variants.py", _text),
    # primitives
    Variable("VKBACKEND_CHECK_INDICES", "primitives", "flag", "0 or 1", "0",
             "1: every call that leaves check_indices None checks its device indices (IndexError "
             "at the next sync)", "vkbackend/primitives/index_check.py", _flag, False),
    Variable("VKBACKEND_MATMUL_CONFIG", "primitives", "tile",
             "BMxBNxBK/TMxTN[/WXxWY][+prefetch] (e.g. 128x128x16/8x8), wide, mid, tiny, large, large_bk8, "
             "medium, small or auto",
             "auto: per call, from the device and the problem's size",
             "forces one matmul tile shape (tuning; checked against the device at the call)",
             "vkbackend/primitives/matmul.py", "vkbackend.primitives.matmul:env_parse"),
    Variable("VKBACKEND_MATMUL_MIN_TILES", "primitives", "integer", "an integer >= 1", "128 (matmul.MIN_TILES)",
             "the automatic tile choice takes the largest tile giving at least this many workgroups",
             "vkbackend/primitives/matmul.py", _integer(1)),
    Variable("VKBACKEND_MATMUL_GROUP", "primitives", "integer", "an integer >= 0", "8",
             "row tiles per group of the matmul's tile swizzle (0: no swizzle)",
             "vkbackend/primitives/matmul.py", _integer(0)),
    # ops
    Variable("VKBACKEND_CONV_CONFIG", "ops", "keys",
             "key=value items, comma- or semicolon-separated (keys below)", "the planners' choices",
             "overrides of the convolution planners' choices, for tuning", "ops/conv/config.py"),
    Variable("VKBACKEND_QR_<KEY>", "ops", "keys", "one variable per key below", "ops/qr.py's TUNE",
             "QR's tuning knobs (read at the first QR call)", "ops/qr.py"),
    # tests
    Variable("VKBACKEND_TEST_SEED", "tests", "integer", "an integer >= 0",
             "fresh each run (printed with a failure)", "the tests' random seed, to replay a failure",
             "tests/conftest.py, tests/test_bad_inputs.py", _integer(0)),
    Variable("VKBACKEND_TEST_WHEEL", "tests", "flag", "0 or 1",
             "1 in make test's LP_NATIVE_VECTOR_WIDTH=128 run (no loop budget, subgroups on), else 0",
             "1: tests/tools/test_wheel.py builds, installs and tests a wheel", "tests/tools/test_wheel.py",
             _flag),
    Variable("VKBACKEND_FUZZ_CASES", "tests", "integer", "an integer >= 1", "300",
             "cases tests/test_fuzz.py runs", "tests/test_fuzz.py", _integer(1)),
    Variable("VKBACKEND_FUZZ_SEED", "tests", "integer", "an integer >= 0",
             "fresh each run (printed with every failure)", "tests/test_fuzz.py's seed", "tests/test_fuzz.py",
             _integer(0)),
    # tools
    Variable("VKBACKEND_MATMUL_SWEEP", "tools", "items", "matmul configs separated by ;", "none",
             "one benchmark case per config at VKBACKEND_MATMUL_SWEEP_N", "tools/benchmarks/matmul.py",
             _items, ()),
    Variable("VKBACKEND_MATMUL_SWEEP_N", "tools", "integer", "an integer >= 1", "4096",
             "the size of VKBACKEND_MATMUL_SWEEP's products", "tools/benchmarks/matmul.py", _integer(1)),
    Variable("VKBACKEND_CONV_SWEEP", "tools", "items", "VKBACKEND_CONV_CONFIG strings separated by ;", "none",
             "a copy of every convolution benchmark case per config", "tools/benchmarks/conv.py", _items, ()),
    Variable("VKBACKEND_QR_SWEEP", "tools", "items",
             "settings key=value,key=value separated by ; (tuples with /)",
             "nb_max=16;nb_max=8;target_groups=264;unroll_k=0 (none with --quick)",
             "one QR benchmark case per setting of ops/qr.py's TUNE at VKBACKEND_QR_SWEEP_N",
             "tools/benchmarks/qr.py", _items, ()),
    Variable("VKBACKEND_QR_SWEEP_N", "tools", "integer", "an integer >= 1", "2000",
             "the order of VKBACKEND_QR_SWEEP's matrices", "tools/benchmarks/qr.py", _integer(1)),
    Variable("VKBACKEND_SCAN_SWEEP", "tools", "items", "settings key=value,key=value separated by ;", "none",
             "one scan benchmark case per setting of scan.py's tunables at 64M elements",
             "tools/benchmarks/scan.py", _items, ()),
    Variable("VKBACKEND_SORT_SIZES", "tools", "text", "comma-separated sizes, K and M suffixes allowed (64K,1M)",
             "2**20 and 2**24", "replaces the sort benchmark's sizes (a run on lavapipe)", "tools/benchmarks/sort.py",
             _text),
    # build
    Variable("VKBACKEND_KP_SDIST", "build", "path", "a file (kp-0.9.0.tar.gz)",
             "~/.cache/vkbackend/sdist/kp-0.9.0.tar.gz, else downloaded from PyPI",
             "kp's sdist to build Kompute from (offline builds)", "setup.py, tools/setup.sh", _text),
    Variable("VKBACKEND_BUILD_JOBS", "build", "integer", "an integer >= 1", "the CPU count",
             "glslang processes at a time while the build compiles the shipped SPIR-V", "setup.py", _integer(1)),
    Variable("VKBACKEND_BUILD_SPIRV", "build", "flag", "0 or 1", "1",
             "0: the build ships no SPIR-V (every shader compiles at first use)", "setup.py", _flag),
)}
LAYERS = ("runtime", "primitives", "ops", "tests", "tools", "build")


def declared(name: str) -> Variable:
    v = VARIABLES.get(name)
    if v is None:
        raise KeyError(f"{name} is not declared in vkbackend/config.py's VARIABLES")
    return v


def raw(name: str) -> str:
    """The variable's text as set (stripped; '' while unset): what planners key their caches on."""
    declared(name)
    return os.environ.get(name, "").strip()


def get(name: str):
    """The variable's value, parsed and checked now (ValueError naming it, its value and what it
    takes), or its `unset` value while it is unset or empty."""
    text = raw(name)
    return _parse(name, text) if text else VARIABLES[name].unset


@functools.lru_cache(maxsize=256)
def _parse(name: str, text: str):
    var = VARIABLES[name]
    if var.parse is None:
        table = TABLES.get(name)
        if table is None:  # pragma: no cover - vkbackend's import registers every table
            raise RuntimeError(f"{name}: its key table ({var.read_by}) is not registered; import vkbackend")
        return table.parse(text)
    parse = var.parse
    if isinstance(parse, str):
        module, function = parse.split(":")
        parse = getattr(importlib.import_module(module), function)
    try:
        return parse(text)
    except ValueError as e:
        raise ValueError(f"{name}={text!r}: {e}") from None


# -- key tables --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    name: str
    prefixes: tuple          # the kinds whose planners read it (empty in a table without prefixes)
    allowed: str             # what it takes, in words (errors and docs)
    default: str             # what the planner does without it
    doc: str                 # what it does
    words: tuple = ()        # the allowed words; empty for an integer key
    valid: Callable[[int], bool] | None = None   # an integer key's allowed values
    many: bool = False       # a comma-separated tuple of such integers

    def convert(self, value: str):
        """`value` as this key takes it, or None where it does not take it."""
        if self.words:
            return value if value in self.words else None
        try:
            ints = [int(p) for p in (value.split(",") if self.many else [value])]
        except ValueError:
            return None
        if not all(self.valid(v) for v in ints):
            return None
        return tuple(ints) if self.many else ints[0]


class ConfigString:
    """The keys of one *_CONFIG variable: `key=value` items separated by commas (or semicolons),
    a key optionally carrying the prefix of the kinds it tunes. A key without a prefix applies to
    the `unprefixed` kinds that declare it and take the value; `fallback` {(key, kind): value}
    fills a kind left out (a float32 forward-only path keeps backward-weight on GEMM)."""

    def __init__(self, variable: str, keys: tuple, prefixes: tuple, unprefixed: tuple,
                 fallback: dict | None = None, doc: str = ""):
        self.variable, self.keys, self.prefixes, self.unprefixed = variable, keys, prefixes, unprefixed
        self.fallback, self.doc = dict(fallback or {}), doc
        self._declared = {(k.name, p): k for k in keys for p in k.prefixes}
        self._names = sorted({k.name for k in keys})
        self.parse = functools.lru_cache(maxsize=16)(self._parse)

    def declared(self, name: str, prefix: str) -> Key | None:
        """The declaration of key `name` under `prefix`, or None where those kernels do not read it."""
        return self._declared.get((name, prefix))

    def markdown(self) -> str:
        rows = ["| key | prefixes | takes | default | what it sets |", "|---|---|---|---|---|"]
        for k in self.keys:
            rows.append(f"| {k.name} | {' '.join(p + '.' for p in k.prefixes)} | {k.allowed} | {k.default} | {k.doc} |")
        return "\n".join(rows)

    def _where(self, name: str) -> str:
        return ", ".join(f"{p}.{name} ({self._declared[(name, p)].allowed})"
                         for p in self.prefixes if (name, p) in self._declared)

    def _parse(self, text: str) -> dict:
        """The string -> {kind: {key: value}} for each prefix; ValueError naming the item and what
        is allowed for an item without '=', an unknown prefix or key, a key its prefix does not
        read, or a value the key does not take. Later items override earlier ones."""
        env = self.variable
        out = {k: {} for k in self.prefixes}
        for item in filter(None, (s.strip() for s in text.replace(";", ",").split(","))):
            if "=" not in item:
                raise ValueError(f"{env}: expected key=value, got {item!r}")
            name, value = (s.strip() for s in item.split("=", 1))
            prefix = None
            if "." in name:
                prefix, name = name.split(".", 1)
                if prefix not in self.prefixes:
                    raise ValueError(f"{env}: {item!r}: unknown prefix {prefix!r}; prefixes: {', '.join(self.prefixes)}")
            if name not in self._names:
                raise ValueError(f"{env}: {item!r}: unknown key {name!r}; keys: {', '.join(self._names)}")
            if prefix is not None:
                key = self._declared.get((name, prefix))
                if key is None:
                    raise ValueError(f"{env}: {item!r}: {prefix}. kernels do not read {name}; it is valid as "
                                     f"{self._where(name)}")
                v = key.convert(value)
                if v is None:
                    raise ValueError(f"{env}: {item!r}: {prefix}.{name} takes {key.allowed}, got {value!r}")
                out[prefix][name] = v
                continue
            # No prefix: the unprefixed kinds that declare the key and take the value.
            taken = {kind: self._declared[(name, kind)].convert(value)
                     for kind in self.unprefixed if (name, kind) in self._declared}
            taken = {kind: v for kind, v in taken.items() if v is not None}
            if not taken:
                raise ValueError(f"{env}: {item!r}: {name} takes {self._where(name)}, got {value!r} (a key "
                                 f"without a prefix means {'. and '.join(self.unprefixed)}.)")
            for kind in self.unprefixed:
                if kind not in taken and (name, kind) in self.fallback:
                    taken[kind] = self.fallback[(name, kind)]
            for kind, v in taken.items():
                out[kind][name] = v
        return out


class Family:
    """One variable per key: VKBACKEND_QR_<KEY> is VKBACKEND_QR_ and the key's name in capitals.
    A variable under the prefix that names no key (and is not declared on its own) is an error."""

    def __init__(self, variable: str, keys: tuple, doc: str = ""):
        self.variable, self.keys, self.doc = variable, keys, doc
        self.prefix = variable[:variable.index("<")]
        self._keys = {k.name.upper(): k for k in keys}

    def name(self, key: Key) -> str:
        return self.prefix + key.name.upper()

    def members(self, environ=None) -> list[str]:
        """The variables set under the prefix, declared ones of their own (VKBACKEND_QR_SWEEP) left out."""
        environ = os.environ if environ is None else environ
        return sorted(n for n in environ if n.startswith(self.prefix) and n not in VARIABLES)

    def values(self) -> dict:
        """{key: value} of the variables set (an empty one counts as unset), each checked."""
        out = {}
        for name in self.members():
            text = os.environ[name].strip()
            key = self._keys.get(name[len(self.prefix):])
            if key is None:
                raise ValueError(f"{name}={text!r}: unknown key {name[len(self.prefix):]!r}; "
                                 f"{self.variable} takes {', '.join(self._keys)}")
            if not text:
                continue
            v = key.convert(text)
            if v is None:
                raise ValueError(f"{name}={text!r}: expected {key.allowed}")
            out[key.name] = v
        return out

    def markdown(self) -> str:
        rows = ["| variable | takes | default | what it sets |", "|---|---|---|---|"]
        for k in self.keys:
            rows.append(f"| `{self.name(k)}` | {k.allowed} | {k.default} | {k.doc} |")
        return "\n".join(rows)


TABLES: dict = {}  # variable -> its ConfigString or Family, registered by the layer that reads it


def register(table):
    """Register the key table of a declared variable (ops/conv/config.py, ops/qr.py); returns it."""
    var = declared(table.variable)
    if var.kind != "keys" or var.parse is not None:
        raise ValueError(f"{table.variable} is not declared as a variable of keys")
    TABLES[table.variable] = table
    return table


def family(name: str) -> dict:
    """{key: value} of a Family's variables set now, each checked (ValueError naming it)."""
    return TABLES[name].values()


# -- the environment as a whole ----------------------------------------------------------------------

def unknown(environ=None) -> list[str]:
    """VKBACKEND_* variables set that nothing reads, each with the closest declared name if any."""
    environ = os.environ if environ is None else environ
    known = set(VARIABLES)
    for t in TABLES.values():
        if isinstance(t, Family):
            known |= {t.name(k) for k in t.keys}
    registered = {t.prefix for t in TABLES.values() if isinstance(t, Family)}
    # a family whose table is not registered yet: its reader checks it
    pending = [v.name[:v.name.index("<")] for v in VARIABLES.values() if "<" in v.name]
    pending = [f for f in pending if f not in registered]
    out = []
    for n in sorted(environ):
        if not n.startswith(PREFIX) or n in known or any(n.startswith(f) for f in pending):
            continue
        close = difflib.get_close_matches(n, sorted(known), n=1)
        out.append(f"{n} (did you mean {close[0]}?)" if close else n)
    return out


def markdown() -> str:
    """docs/configuration.md."""
    import vkbackend  # noqa: F401  (its ops register their key tables)
    out = [
        "# Configuration",
        "",
        "Generated from vkbackend/config.py by `python -m vkbackend config-docs > docs/configuration.md`;",
        "tests/test_config.py checks that the two agree and that every `VKBACKEND_` name in the code is",
        "declared there.",
        "",
        "Every variable is read where the code that needs it runs, never at import, and checked there: a",
        "malformed value raises ValueError naming the variable, the value and what it takes, before any GPU",
        "work (`import vkbackend` itself never fails on one). An empty value is the same as unset. A",
        "`VKBACKEND_` variable that nothing reads is warned about when the device opens.",
    ]
    titles = {"runtime": "Runtime", "primitives": "Primitives", "ops": "Ops", "tests": "Tests",
              "tools": "Benchmarks and tools", "build": "The build (setup.py)"}
    for layer in LAYERS:
        out += ["", f"## {titles[layer]}", "", "| variable | takes | default | what it does | read by |",
                "|---|---|---|---|---|"]
        out += [f"| `{v.name}` | {v.allowed} | {v.default} | {v.doc} | {v.read_by} |"
                for v in VARIABLES.values() if v.layer == layer]
    for name in (v.name for v in VARIABLES.values() if v.kind == "keys"):
        table = TABLES[name]
        out += ["", f"## `{name}` keys", ""]
        if table.doc:
            out += [table.doc, ""]
        out.append(table.markdown())
    return "\n".join(out) + "\n"
