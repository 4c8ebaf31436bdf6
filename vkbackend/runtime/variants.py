"""Ahead-of-time compilation of every shader variant, declared in the shaders themselves.

A shader lists its variant space in comment lines, each a cross product of its terms:
    // @variants T=float|int|uint OP_add|OP_mul ?ARANGE
  NAME=a|b   -D NAME=a, or -D NAME=b
  A|B|C      exactly one of the flags -D A, -D B, -D C
  ?NAME      with and without -D NAME
  +subgroup  these variants exist only on devices with subgroup features (no fallback compile)
Each variant compiles with every subgroup feature define and with none (the fallbacks): what the
runtime asks for on a device with all of them (lavapipe, NVIDIA, AMD, Intel) or with
VKBACKEND_DISABLE_SUBGROUP=all.

The declarations sample each shader's space for validation; the runtime's planners pick from a far
larger one (dtype triples, operators, tiles). So what the package ships (setup.py: build_archive)
is the declared variants plus shaders/recorded.variants: every variant runs asked for, appended by
the compiler while VKBACKEND_RECORD_VARIANTS names that file (one JSON line each: the suite and
tools/record_variants.py on lavapipe; a GPU's own plans once run there). Anything else is compiled
at first use.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import json
import os
import re
import sys
import zipfile
from pathlib import Path

from . import compiler
from .kernel import _FEATURE_DEFINES

_LINE = re.compile(r"^\s*//\s*@variants\b(.*)$", re.M)
_TESTS_DIR = compiler.SHADER_DIR.parent / "tests" / "shaders"
RECORDED = compiler.SHADER_DIR / "recorded.variants"
_CHUNK_BYTES = 1 << 20


_NEEDS_SUBGROUP = "+subgroup"


def _term_choices(term: str) -> list[dict]:
    if term == _NEEDS_SUBGROUP:
        return [{_NEEDS_SUBGROUP: 1}]
    if term.startswith("?"):
        return [{}, {term[1:]: 1}]
    if "=" in term:
        name, values = term.split("=", 1)
        return [{name: v} for v in values.split("|")]
    return [{flag: 1} for flag in term.split("|")]


def parse(source: str) -> list[dict]:
    """The define sets a shader declares (one empty set if it declares none)."""
    variants = []
    for line in _LINE.findall(source):
        choices = [_term_choices(t) for t in line.split()]
        for combo in itertools.product(*choices):
            merged = {}
            for d in combo:
                merged.update(d)
            variants.append(merged)
    return variants or [{}]


def shader_files(tests: bool = True) -> list[Path]:
    files = sorted(compiler.SHADER_DIR.rglob("*.comp"))
    if tests and _TESTS_DIR.is_dir():
        files += sorted(_TESTS_DIR.glob("*.comp"))
    return files


def declared(tests: bool = True) -> list[tuple[str, dict]]:
    """(shader path, defines) for every declared variant, with all subgroup features and with none."""
    all_features = {d: 1 for d in _FEATURE_DEFINES.values()}
    work = []
    for path in shader_files(tests):
        for defines in parse(path.read_text()):
            fallback = defines.pop(_NEEDS_SUBGROUP, None) is None
            for features in (all_features, {}) if fallback else (all_features,):
                work.append((str(path), {**features, **defines}))
    return work


def recorded(path: Path | None = None) -> list[tuple[str, dict]]:
    """(shader path, defines) for each variant in a record file (shaders/recorded.variants) whose
    shader still exists."""
    path = Path(path or RECORDED)
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    work, seen = [], set()
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#") or line in seen:
            continue
        seen.add(line)
        try:
            v = json.loads(line)
            shader, defines = compiler.SHADER_DIR / v["shader"], dict(v["defines"])
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}:{n}: expected {{\"shader\": ..., \"defines\": {{...}}}}, got {line!r} ({e})")
        if shader.is_file():
            work.append((str(shader), defines))
    return work


def _compile_each(work, jobs: int):
    """[(item, SPIR-V or the CompileError's message)], `jobs` glslang processes at a time."""
    def one(item):
        try:
            return item, compiler.compile_shader(*item)
        except compiler.CompileError as e:
            return item, str(e)

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:  # the work is subprocesses
        return list(pool.map(one, work))


def compile_all(out=sys.stdout, jobs: int = 1) -> int:
    """Compile (and spirv-validate) every declared variant, `jobs` glslang processes at a time;
    print failures; 0 if none failed."""
    work = declared()
    failures = [r for _, r in _compile_each(work, jobs) if isinstance(r, str)]
    for f in failures:
        print(f, file=out)
    print(f"compile-shaders: {len(work) - len(failures)} of {len(work)} variants compiled and validated "
          f"({len(shader_files())} shaders)", file=out)
    return 1 if failures else 0


def build_archive(dest, jobs: int = 1, tests: bool = False, strict: bool = True, out=sys.stdout) -> int:
    """Compile every declared and recorded variant (through the disk cache) into the zip `dest`
    that compiler.shipped reads: <source_key>.spv each, and manifest.json (shader, defines, key;
    the glslang that built them). The shaders under tests/ only with `tests` (their keys hold
    absolute paths: only for a checkout's own build). A declared variant that fails to compile
    fails the build (1, after printing why), or without `strict` (a checkout's own build, whose
    tests report it) is left out with a warning, as a recorded one always is (stale: its defines
    are no longer what the shader takes)."""
    work = declared(tests)
    n_declared = len(work)
    known = {compiler.variant_line(s, d) for s, d in work}
    work += [(s, d) for s, d in recorded() if compiler.variant_line(s, d) not in known]
    results = _compile_each(work, jobs)
    failures = [r for i, (_, r) in enumerate(results) if isinstance(r, str) and i < n_declared]
    stale = [item for i, (item, r) in enumerate(results) if isinstance(r, str) and i >= n_declared]
    if failures:
        print(*failures, sep="\n", file=out)
        print(f"build_archive: {len(failures)} of {n_declared} declared variants failed to compile"
              + ("" if strict else "; shipping the others"), file=out)
        if strict:
            return 1
    if stale:
        print(f"build_archive: warning: {len(stale)} recorded variants no longer compile and are left out "
              f"(re-record {RECORDED.name}); the first: {stale[0]}", file=out)
    results = [(item, r) for item, r in results if not isinstance(r, str)]
    import lzma  # here: a Python without it can still compile, only not pack
    try:
        version = compiler.compiler_version()
    except compiler.CompileError:  # every variant came from a previous archive
        version = None
    # Each shader's variants, in a stable order, in xz chunks of up to 1 MiB (decompressed in a
    # few milliseconds at first use); manifest.json indexes them: shader, defines, key, chunk,
    # offset, length.
    by_shader: dict = {}
    for (shader, defines), spirv in sorted(results, key=lambda r: compiler.variant_line(*r[0])):
        path = Path(shader).resolve()
        name = str(path.relative_to(compiler.SHADER_DIR) if path.is_relative_to(compiler.SHADER_DIR) else path)
        by_shader.setdefault(name, []).append((defines, compiler.source_key(path, defines), spirv))
    manifest = {"glslang": version, "variants": []}
    tmp = f"{dest}.{os.getpid()}.tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
        chunk, where = bytearray(), {}

        def flush():
            if chunk:
                z.writestr(f"chunks/{len(z.namelist())}.xz", lzma.compress(bytes(chunk)))
                chunk.clear()

        for name, items in by_shader.items():
            flush()
            for defines, key, spirv in items:
                if key not in where:
                    if chunk and len(chunk) + len(spirv) > _CHUNK_BYTES:
                        flush()
                    where[key] = (f"chunks/{len(z.namelist())}.xz", len(chunk), len(spirv))
                    chunk += spirv
                manifest["variants"].append([name, defines, key, *where[key]])
        flush()
        z.writestr("manifest.json", json.dumps(manifest, separators=(",", ":")))
    os.replace(tmp, dest)
    print(f"build_archive: {len(results)} variants ({n_declared} declared) into {dest} "
          f"({os.path.getsize(dest) >> 10} KiB) "
          f"({compiler.stats['compiles']} compiled, {compiler.stats['disk_hits']} from the disk cache, "
          f"{compiler.stats['shipped_hits']} from the previous archive)", file=out)
    return 0
