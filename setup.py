"""vkbackend's build (pip install . / pip wheel . / python -m build; `make setup` installs it editable).

Besides the Python packages it makes the two things a wheel needs so that it runs with only a
Vulkan loader and a driver, no compiler and no glslang:
  vkbackend/_kp*.so     Kompute 0.9.0 from kp's sdist with third_party/kompute/*.patch, as the
                        private module vkbackend._kp (tools/build_kp.sh --module _kp); built once
                        per (build script, patches, Python ABI) and kept in ~/.cache/vkbackend/kp
  vkbackend/_spirv.zip  every shader variant declared with `// @variants`, compiled to SPIR-V
                        (vkbackend/runtime/variants.py; through the SPIR-V disk cache)
Building needs CMake, a C++ compiler, the Vulkan headers and loader, fmt's and pybind11's headers;
glslang comes from the build requirements (pyproject.toml).
Environment:
  VKBACKEND_KP_SDIST=path   kp-0.9.0.tar.gz to build from (offline builds); else
                            ~/.cache/vkbackend/sdist/kp-0.9.0.tar.gz, else downloaded from PyPI
  VKBACKEND_BUILD_JOBS=N    glslang processes at a time (default: the CPU count)
  VKBACKEND_BUILD_SPIRV=0   ship no SPIR-V (every shader compiles at first use, as in a plain checkout)
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import types
import urllib.request
from pathlib import Path

from setuptools import Extension, find_namespace_packages, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
KP_SDIST = "kp-0.9.0.tar.gz"
KP_SDIST_SHA256 = "98e583dc6e9731ff6d7a3e3317817e4d93f7b2945929619e29a56325db279949"  # PyPI's


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vkbackend"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kp_sdist() -> Path:
    """kp 0.9.0's sdist: $VKBACKEND_KP_SDIST, the cached one, else PyPI's (checked against its hash)."""
    given = _setting("VKBACKEND_KP_SDIST")
    if given:
        if not Path(given).is_file():
            raise SystemExit(f"VKBACKEND_KP_SDIST={given!r}: no such file (expected {KP_SDIST})")
        return Path(given)
    cached = _cache() / "sdist" / KP_SDIST
    if cached.is_file():
        return cached
    try:
        with urllib.request.urlopen("https://pypi.org/pypi/kp/0.9.0/json", timeout=60) as r:
            url = next(u["url"] for u in json.load(r)["urls"] if u["filename"] == KP_SDIST)
        with urllib.request.urlopen(url, timeout=300) as r:
            data = r.read()
    except Exception as e:  # noqa: BLE001 - any failure means: no network route to PyPI
        raise SystemExit(
            f"vkbackend's build needs kp's sdist ({KP_SDIST}) and could not download it ({e}). Fetch it "
            f"(pip download --no-deps --no-binary=:all: -d DIR kp==0.9.0) and set VKBACKEND_KP_SDIST="
            f"DIR/{KP_SDIST}, or put it at {cached}") from None
    if hashlib.sha256(data).hexdigest() != KP_SDIST_SHA256:
        raise SystemExit(f"{url}: sha256 {hashlib.sha256(data).hexdigest()} is not {KP_SDIST_SHA256}")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
        return cached
    except OSError:
        tmp = Path(tempfile.mkdtemp()) / KP_SDIST
        tmp.write_bytes(data)
        return tmp


def kp_module() -> Path:
    """vkbackend._kp built for this interpreter, from the cache when the recipe is unchanged."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    recipe = [ROOT / "tools" / "build_kp.sh", *sorted((ROOT / "third_party" / "kompute").glob("*.patch"))]
    h = hashlib.sha256(suffix.encode())
    for p in recipe:
        h.update(p.name.encode() + p.read_bytes())
    cached = _cache() / "kp" / f"module-{h.hexdigest()[:16]}" / f"_kp{suffix}"
    if cached.is_file():
        return cached
    sdist = kp_sdist()
    if _sha256(sdist) != KP_SDIST_SHA256:
        raise SystemExit(f"{sdist}: not kp 0.9.0's sdist (sha256 {_sha256(sdist)}, expected {KP_SDIST_SHA256})")
    out = Path(tempfile.mkdtemp(prefix="vkbackend-kp-"))
    print(f"vkbackend: building Kompute (kp 0.9.0 + third_party/kompute patches) from {sdist}, about a minute",
          flush=True)
    subprocess.run(["bash", str(ROOT / "tools" / "build_kp.sh"), "--module", "_kp", str(sdist), str(out)],
                   check=True, env={**os.environ, "PYTHON": sys.executable}, stdout=subprocess.DEVNULL)
    built = out / f"_kp{suffix}"
    try:  # keep it for the next build; a cache that cannot be written only costs the next one a rebuild
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(built, tmp)
        os.replace(tmp, cached)
        return cached
    except OSError:
        return built


def _module(name: str):
    """vkbackend's module `name`, loaded without importing vkbackend (which needs _kp): bare
    packages stand for vkbackend and vkbackend.runtime, so only the modules it imports load."""
    top = "_vkbackend_build"
    for pkg_name, path in ((top, ROOT / "vkbackend"), (f"{top}.runtime", ROOT / "vkbackend" / "runtime")):
        if pkg_name not in sys.modules:
            pkg = types.ModuleType(pkg_name)
            pkg.__path__ = [str(path)]
            sys.modules[pkg_name] = pkg
    return importlib.import_module(f"{top}.{name}")


def _variants():
    """vkbackend/runtime/variants.py (and the compiler, and the registry it reads)."""
    return _module("runtime.variants")


def _setting(name: str):
    """An environment variable of the build, checked by vkbackend's configuration registry
    (vkbackend/config.py, which imports nothing of vkbackend); None while unset."""
    return _module("config").get(name)


class BuildNative(build_ext):
    """The Kompute module, then the shipped SPIR-V next to it."""

    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kp_module(), target)

    def _archive(self) -> Path:
        pkg_dir = ROOT / "vkbackend" if self.inplace else Path(self.build_lib) / "vkbackend"
        return pkg_dir / "_spirv.zip"

    def run(self):
        super().run()
        dest = self._archive()
        if _setting("VKBACKEND_BUILD_SPIRV") is False:
            if not self.inplace:
                dest.unlink(missing_ok=True)  # an earlier build's, left in build/
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        jobs = _setting("VKBACKEND_BUILD_JOBS") or os.cpu_count() or 1
        # A checkout's own (editable) build also ships tests/shaders, whose keys name its paths, and
        # leaves out a shader being worked on that does not compile (its tests say so).
        if _variants().build_archive(str(dest), jobs=jobs, tests=self.inplace, strict=not self.inplace) != 0:
            raise SystemExit("vkbackend: shaders failed to compile (above)")

    def get_outputs(self):
        outputs = super().get_outputs()
        if _setting("VKBACKEND_BUILD_SPIRV") is not False:
            outputs.append(str(self._archive()))
        return outputs


# vkbackend and its subpackages; ops/ and shaders/ (GLSL only, as data) live beside it in the tree.
SHADER_DIRS = ["vkbackend.shaders"] + [f"vkbackend.shaders.{p}" for p in find_namespace_packages(str(ROOT / "shaders"))]
PACKAGES = (["vkbackend", "vkbackend.ops"] + [f"vkbackend.{p}" for p in find_packages(str(ROOT / "vkbackend"))]
            + [f"vkbackend.ops.{p}" for p in find_packages(str(ROOT / "ops"))] + SHADER_DIRS)

setup(
    packages=PACKAGES,
    package_dir={"vkbackend": "vkbackend", "vkbackend.ops": "ops", "vkbackend.shaders": "shaders"},
    package_data={d: ["*.glsl", "*.comp"] for d in SHADER_DIRS},
    ext_modules=[Extension("vkbackend._kp", sources=[])],
    cmdclass={"build_ext": BuildNative},
)
