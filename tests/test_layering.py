"""The package's layers, read from the sources' imports (every import statement, those inside
functions included), and its namespace: setup.py maps ops/ to vkbackend.ops (installed, or by the
editable install's finder; vkbackend/__init__.py where the tree runs with no install) and nothing
else of the tree joins the package.

  runtime      the device, memory, kernels: imports no array, primitive or op
  array.py     vk.Array: imports no operation (array_methods.py attaches them)
  primitives   import no op, nor the package namespace (which imports the ops)
  vkbackend/   imports no op but in its public namespace (__init__.py, linalg.py)
  everything   imports neither tools/ nor tests/
"""
import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vkbackend as vk

ROOT = Path(__file__).resolve().parents[1]
# The packages' trees and their module names (setup.py's package_dir).
TREES = {"vkbackend": ROOT / "vkbackend", "vkbackend.ops": ROOT / "ops"}


def _module_name(path: Path) -> tuple[str, bool]:
    """(dotted name, is a package's __init__) of a source file."""
    for pkg, tree in sorted(TREES.items(), key=lambda kv: -len(kv[0])):
        if tree in path.parents:
            parts = list(path.relative_to(tree).with_suffix("").parts)
            init = parts[-1] == "__init__"
            return ".".join([pkg] + (parts[:-1] if init else parts)), init
    raise ValueError(path)


def _imports(path: Path) -> set[str]:
    """The absolute names of everything `path` imports; `from a import b` counts as a.b (b may be
    a module or a name in a), `from a import *` as a."""
    module, init = _module_name(path)
    package = module if init else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                if node.module:
                    base.append(node.module)
                stem = ".".join(base)
            else:
                stem = node.module
            found.update(stem if a.name == "*" else f"{stem}.{a.name}" for a in node.names)
    return found


def _sources(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    return [base] if base.is_file() else sorted(base.rglob("*.py"))


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _offending(paths, forbidden, allowed=()) -> dict:
    bad = {}
    for p in paths:
        names = sorted(n for n in _imports(p) if _under(n, forbidden) and not _under(n, allowed))
        if names:
            bad[str(p.relative_to(ROOT))] = names
    return bad


def test_the_import_reader_resolves_relative_imports(tmp_path):
    """The reader this file relies on: relative imports, at module and at function level."""
    src = ROOT / "vkbackend" / "primitives" / "reduce.py"
    names = _imports(src)
    assert "vkbackend.array.Array" in names and "vkbackend.runtime" in names, sorted(names)
    assert _module_name(ROOT / "ops" / "conv" / "__init__.py") == ("vkbackend.ops.conv", True)
    assert "vkbackend.runtime.devices.Device" in _imports(ROOT / "vkbackend" / "primitives" / "creation.py")
    assert "vkbackend.runtime" in _imports(ROOT / "vkbackend" / "runtime" / "probe.py")  # from .. import


def test_runtime_imports_no_layer_above():
    assert not _offending(_sources("vkbackend", "runtime"),
                          ["vkbackend.primitives", "vkbackend.array", "vkbackend.ops", "vkbackend.array_methods",
                           "vkbackend.interop", "vkbackend.array_api", "vkbackend.linalg"])


def test_array_imports_no_operation():
    """vk.Array's module reaches only dtypes, config and the runtime; its operators come from above."""
    names = {n for n in _imports(ROOT / "vkbackend" / "array.py") if _under(n, ["vkbackend"])}
    assert names and all(_under(n, ["vkbackend.dtypes", "vkbackend.config", "vkbackend.runtime"]) for n in names), \
        sorted(names)


def test_primitives_import_no_op():
    assert not _offending(_sources("vkbackend", "primitives"), ["vkbackend", "ops"],
                          allowed=["vkbackend.primitives", "vkbackend.array", "vkbackend.dtypes",
                                   "vkbackend.config", "vkbackend.runtime", "vkbackend.array_api"])


def test_only_the_namespace_imports_ops():
    """vkbackend/ is below ops/: only the public namespace (__init__.py, linalg.py) imports it."""
    namespace = {ROOT / "vkbackend" / "__init__.py", ROOT / "vkbackend" / "linalg.py"}
    below = [p for p in _sources("vkbackend") if p not in namespace]
    assert not _offending(below, ["vkbackend.ops", "ops"])


def test_nothing_imports_tools_or_tests():
    assert not _offending(_sources("vkbackend") + _sources("ops"),
                          ["tools", "tests", "vkbackend.tools", "vkbackend.tests", "conftest"])


def test_only_ops_joins_the_package():
    """No checkout directory but ops/ is importable inside the package; vk.linalg's QR is the
    one module vkbackend.ops.qr, from ops/qr.py."""
    for name in ("vkbackend.tools", "vkbackend.tests", "vkbackend.benchmarks"):
        assert importlib.util.find_spec(name) is None, name
    qr = sys.modules["vkbackend.ops.qr"]
    assert Path(qr.__file__).resolve() == ROOT / "ops" / "qr.py" or "site-packages" in qr.__file__
    assert vk.linalg.qr is qr.qr and vk.linalg.qr.__module__ == "vkbackend.ops.qr"
    assert [m for m, mod in sys.modules.items() if getattr(mod, "__file__", None) == qr.__file__] \
        == ["vkbackend.ops.qr"]


def test_a_checkout_without_install_maps_ops_alone():
    """Run from the tree with no install (PYTHONPATH=., the GPU machine's way; -S: no site
    directory, so no editable finder), vkbackend.ops is still ops/ and nothing else joins."""
    from vkbackend.runtime._kpmod import kp
    numpy_site = str(Path(np.__file__).resolve().parents[1])
    # a separate kp (the GPU machine's, built beside the tree) comes from its own directory
    kp_site = [] if kp.__name__.startswith("vkbackend.") else [str(Path(kp.__file__).resolve().parent)]
    program = ("import importlib.util, sys; import vkbackend as vk; q = sys.modules['vkbackend.ops.qr']; "
               "assert not [f for f in sys.meta_path if 'Editable' in repr(f)], sys.meta_path; "
               "print(q.__file__, vk.linalg.qr is q.qr, vk.ops.qr is q, "
               "[importlib.util.find_spec(n) for n in ('vkbackend.tools', 'vkbackend.tests')])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), numpy_site] + kp_site)}
    run = subprocess.run([sys.executable, "-S", "-c", program], cwd=ROOT / "tests", env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == [str(ROOT / "ops" / "qr.py"), "True", "True", "[None,", "None]"], run.stdout


@pytest.mark.parametrize("name", ["__add__", "__rsub__", "__eq__", "__getitem__", "__setitem__", "__iadd__",
                                  "__matmul__", "__array_ufunc__", "sum", "astype", "T", "mT"])
def test_array_methods_are_attached(name):
    """array_methods.py gives vk.Array its operators (the class itself defines none of them)."""
    src = ast.parse((ROOT / "vkbackend" / "array.py").read_text())
    cls = next(n for n in src.body if isinstance(n, ast.ClassDef) and n.name == "Array")
    defined = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    defined |= {t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert name not in defined and hasattr(vk.Array, name)
