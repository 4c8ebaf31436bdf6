"""Ahead-of-time compilation of every shader variant, declared in the shaders themselves.

A shader lists its variant space in comment lines, each a cross product of its terms:
    // @variants T=float|int|uint OP_add|OP_mul ?ARANGE
  NAME=a|b   -D NAME=a, or -D NAME=b
  A|B|C      exactly one of the flags -D A, -D B, -D C
  ?NAME      with and without -D NAME
  +subgroup  these variants exist only on devices with subgroup features (no fallback compile)
Each variant compiles with every subgroup feature define and with none (the fallbacks).
"""
from __future__ import annotations

import concurrent.futures
import itertools
import re
import sys
from pathlib import Path

from . import compiler
from .kernel import _FEATURE_DEFINES

_LINE = re.compile(r"^\s*//\s*@variants\b(.*)$", re.M)
_TESTS_DIR = compiler.SHADER_DIR.parent / "tests" / "shaders"


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


def shader_files() -> list[Path]:
    files = sorted(compiler.SHADER_DIR.rglob("*.comp"))
    if _TESTS_DIR.is_dir():
        files += sorted(_TESTS_DIR.glob("*.comp"))
    return files


def compile_all(out=sys.stdout, jobs: int = 1) -> int:
    """Compile (and spirv-validate) every declared variant, `jobs` glslang processes at a time;
    print failures; 0 if none failed."""
    all_features = {d: 1 for d in _FEATURE_DEFINES.values()}
    work = []
    for path in shader_files():
        for defines in parse(path.read_text()):
            fallback = defines.pop(_NEEDS_SUBGROUP, None) is None
            for features in (all_features, {}) if fallback else (all_features,):
                work.append((str(path), {**features, **defines}))

    def one(item):
        try:
            compiler.compile_shader(*item)
        except compiler.CompileError as e:
            return str(e)
        return None

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:  # the work is subprocesses
        failures = [f for f in pool.map(one, work) if f]
    for f in failures:
        print(f, file=out)
    print(f"compile-shaders: {len(work) - len(failures)} of {len(work)} variants compiled and validated "
          f"({len(shader_files())} shaders)", file=out)
    return 1 if failures else 0
