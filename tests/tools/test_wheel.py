"""The wheel: built from this tree (setup.py), installed into a fresh virtualenv with no glslang
anywhere on PATH, it runs ops on lavapipe from the SPIR-V it ships (no compiles) and its own
Kompute (vkbackend._kp), and names glslang when a variant it does not ship is asked for.

Slow (a minute or two: the Kompute build and the SPIR-V come from ~/.cache/vkbackend when
`make setup` made them, else several minutes). It does not depend on lavapipe's vector width, so it
runs once per `make test`, in its first configuration (LP_NATIVE_VECTOR_WIDTH=128), or wherever
VKBACKEND_TEST_WHEEL=1."""
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from vkbackend import config as vk_config

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# make test's first configuration, in a checkout where make setup ran (the GPU machine's copy has
# neither the build requirements nor a registry to fetch them from)
_FIRST_CONFIG = (os.environ.get("LP_NATIVE_VECTOR_WIDTH") == "128"
                 and not os.environ.get("VKBACKEND_LOOP_BUDGET")
                 and not os.environ.get("VKBACKEND_DISABLE_SUBGROUP"))
_WANTED = vk_config.get("VKBACKEND_TEST_WHEEL")
if not (_FIRST_CONFIG if _WANTED is None else _WANTED):
    pytest.skip("the wheel is tested once per make test: LP_NATIVE_VECTOR_WIDTH=128 (or VKBACKEND_TEST_WHEEL=1)",
                allow_module_level=True)

# In the fresh environment: ops with shipped variants (elementwise with broadcasting, a reduction,
# a scan, matmul) against numpy in float64, then the compiler's counters.
PROGRAM = r"""
import json, sys
import numpy as np
import vkbackend as vk
from vkbackend.runtime import compiler
assert compiler._tool("glslangValidator") is None, "glslang is reachable"
rng = np.random.default_rng(int(sys.argv[1]))
x = rng.standard_normal((37, 129)).astype(np.float32)
y = rng.standard_normal(129).astype(np.float32)
gx, gy = vk.asarray(x), vk.asarray(y)
x64, y64 = x.astype(np.float64), y.astype(np.float64)
checks = {
    "exp": (vk.exp(gx / 4) * gy - 1, np.exp(x64 / 4) * y64 - 1),
    "sum": (vk.sum(gx, axis=1), x64.sum(axis=1)),
    "cumsum": (vk.cumsum(gx, axis=1), np.cumsum(x64, axis=1)),
    "matmul": (gx @ gx.T, x64 @ x64.T),
}
errors = {}
for name, (got, want) in checks.items():
    got = got.numpy()
    assert got.shape == want.shape, (name, got.shape, want.shape)
    errors[name] = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
import vkbackend._kp
print(json.dumps({"errors": errors, "stats": dict(compiler.stats), "module": vkbackend._kp.__file__}))
"""

# A variant the wheel does not ship (a partial set of subgroup features): glslang is named.
UNSHIPPED = r"""
import numpy as np
import vkbackend as vk
try:
    vk.sum(vk.asarray(np.ones(100, np.float32))).numpy()
except vk.CompileError as e:
    print(str(e))
else:
    print("no error")
"""


def _no_glslang_path() -> str:
    """PATH without any directory holding glslangValidator (and without this virtualenv's bin)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not Path(d, "glslangValidator").exists() and Path(d).resolve() != Path(sys.prefix, "bin").resolve()]
    return os.pathsep.join(dirs)


def _source_copy(dest: Path) -> Path:
    """The tree as a fresh clone would have it (tracked and new files, nothing ignored: no earlier
    build's products), so the build starts from the sources."""
    try:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                               capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", "_kp.*.so", "_spirv.zip", ".prof"))
        return dest
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    return dest


def test_wheel_runs_without_a_compiler(tmp_path, rng):
    src = _source_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    # Built by this environment's setuptools, numpy and glslang (what the build requirements pin),
    # so the test needs no index for the build.
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(wheels), str(src)], capture_output=True, text=True, timeout=1500)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    (wheel,) = wheels.glob("vkbackend-*.whl")
    assert "-none-any" not in wheel.name, f"{wheel.name}: a platform wheel was expected"

    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        kp_modules = [n for n in names if n.startswith("vkbackend/_kp.") and n.endswith(".so")]
        assert kp_modules, f"no vkbackend/_kp*.so in {wheel.name}"
        assert not [n for n in names if n.startswith("kp.") or n.startswith("kp/")], "an upstream-named kp is shipped"
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
        assert not [r for r in requires if r.split()[0].lower().startswith("kp")], requires
        assert "numpy>=2" in [r.replace(" ", "") for r in requires], requires
        spirv = zipfile.ZipFile(z.open("vkbackend/_spirv.zip"))
        manifest = json.loads(spirv.read("manifest.json"))
    shipped_shaders = {v[0] for v in manifest["variants"]}
    declared_shaders = {str(p.relative_to(ROOT / "shaders")) for p in (ROOT / "shaders").rglob("*.comp")}
    assert shipped_shaders == declared_shaders  # every shader of the package, none of the tests'
    assert {v[3] for v in manifest["variants"]} <= set(spirv.namelist())  # the xz chunks
    assert len(manifest["variants"]) > 2 * len(declared_shaders)
    if shutil.which("readelf"):  # the module needs only the loader and the C++ runtime
        module = tmp_path / "_kp.so"
        module.write_bytes(zipfile.ZipFile(wheel).read(kp_modules[0]))
        dynamic = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True).stdout
        needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
        assert "libvulkan.so.1" in needed and not [n for n in needed if "fmt" in n or "python" in n], needed

    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    install = subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True,
                             timeout=600)
    assert install.returncode == 0, install.stdout[-4000:] + install.stderr[-4000:]

    env = {k: v for k, v in os.environ.items()
           if not k.startswith("VKBACKEND_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=_no_glslang_path(), VKBACKEND_DEVICE="llvmpipe",
               VKBACKEND_CACHE_DIR=str(tmp_path / "spirv-cache"), HOME=str(tmp_path))
    seed = int(rng.integers(2**31))
    run = subprocess.run([py, "-c", PROGRAM, str(seed)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["module"].startswith(str(env_dir)), out["module"]  # the wheel's Kompute, not a checkout's
    for name, err in out["errors"].items():
        assert err < 1e-4, (name, err)
    stats = out["stats"]
    assert stats["compiles"] == 0 and stats["disk_hits"] == 0, stats  # nothing compiled, nothing cached
    assert stats["shipped_hits"] >= len(out["errors"]), stats

    env["VKBACKEND_DISABLE_SUBGROUP"] = "arithmetic"  # a feature subset no wheel ships
    run = subprocess.run([py, "-c", UNSHIPPED], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "not among the SPIR-V shipped" in run.stdout and "glslangValidator not found" in run.stdout, run.stdout
