"""The configuration registry (vkbackend/config.py): every VKBACKEND_ name of the code declared,
docs/configuration.md generated from it, malformed values and unknown keys refused with a
ValueError naming the variable, the value and what is allowed, and never at import."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vkbackend as vk
from vkbackend import config
from vkbackend.ops import qr as qr_mod
from vkbackend.ops.conv import config as conv_config
from vkbackend.primitives import matmul as mm
from vkbackend.runtime import devices

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"
NAME = re.compile(r"\bVKBACKEND_[A-Z0-9_]*")
QR = "VKBACKEND_QR_<KEY>"


def _code_files():
    for top in ("vkbackend", "ops", "tools", "tests"):
        yield from (p for p in (ROOT / top).rglob("*.py") if ".venv" not in p.parts)
    yield from (ROOT / "tools").rglob("*.sh")
    yield ROOT / "setup.py"
    yield ROOT / "Makefile"


def _families():
    return {v.name[:v.name.index("<")]: v.name for v in config.VARIABLES.values() if "<" in v.name}


def test_docs_are_the_registry():
    """docs/configuration.md is config.markdown(): regenerate it with
    `python -m vkbackend config-docs > docs/configuration.md`."""
    assert DOC.read_text(encoding="utf-8") == config.markdown()


def test_every_name_in_the_code_is_declared():
    families = _families()
    members = {config.TABLES[QR].name(k) for k in config.TABLES[QR].keys}
    undeclared = set()
    for path in _code_files():
        for name in NAME.findall(path.read_text(encoding="utf-8", errors="replace")):
            if name == "VKBACKEND_":  # the prefix alone (the wheel test's environment filter)
                continue
            if name.endswith("_"):
                ok = name in families  # VKBACKEND_QR_ in f"VKBACKEND_QR_{key}"
            else:
                ok = name in config.VARIABLES or name in members
            if not ok:
                undeclared.add(f"{name} ({path.relative_to(ROOT)})")
    assert not undeclared, sorted(undeclared)


def test_every_declaration_is_read_where_it_says():
    """Each variable's read_by files exist and name it (or its family's prefix)."""
    for v in config.VARIABLES.values():
        assert v.layer in config.LAYERS, v
        wanted = v.name.split("<")[0]
        for f in v.read_by.split(", "):
            assert wanted in (ROOT / f).read_text(encoding="utf-8"), (v.name, f)


def test_the_registry_agrees_with_what_it_lists():
    assert config.SUBGROUP_FEATURES == tuple(devices.SUBGROUP_FEATURE_BITS)
    patch = (ROOT / "third_party" / "kompute" / "0004-device-features.patch").read_text()
    enabled = set(re.findall(r'take\([^;]*?"(\w+)"\);', patch, re.S))
    assert enabled | {"pushDescriptor"} == set(config.DEVICE_FEATURES)  # the extension devices.py asks for
    allowed = config.VARIABLES["VKBACKEND_MATMUL_CONFIG"].allowed
    assert all(name in allowed for name in mm.CONFIGS)
    # the tables registered are the ones the ops read
    assert config.TABLES["VKBACKEND_CONV_CONFIG"] is conv_config.TABLE
    assert conv_config.TABLE.keys == conv_config.KEYS
    assert config.TABLES[QR].keys == qr_mod.KEYS
    assert [k.name for k in qr_mod.KEYS] == list(qr_mod.TUNE)
    assert all(k.convert(k.default) == qr_mod.TUNE[k.name] for k in qr_mod.KEYS), "TUNE's defaults, declared"


# (variable, malformed values) for every variable whose value can be malformed
BAD = {
    "VKBACKEND_DISABLE_SUBGROUP": ["arithmetik", "vote,nope", "all,bogus"],
    "VKBACKEND_DISABLE_FEATURE": ["cooperativeMatrx", "shaderFloat16,float16"],
    "VKBACKEND_LOOP_BUDGET": ["x", "0", "1", "-5", str(2**31), "1e3"],
    "VKBACKEND_MEMORY_LIMIT": ["lots", "2X", "-1G"],
    "VKBACKEND_POOL_LIMIT": ["1.2.3", "G"],
    "VKBACKEND_STAGING_LIMIT": ["-1", "64 pages"],
    "VKBACKEND_SUBALLOC_LIMIT": ["-1", "lots"],
    "VKBACKEND_EAGER_US": ["-1", "never", "1.5"],
    "VKBACKEND_FUSION": ["0", "yes", "2.5", "1000001"],
    "VKBACKEND_POISON": ["yes", "2", "true"],
    "VKBACKEND_CHECK_INDICES": ["on", "-1"],
    "VKBACKEND_MATMUL_CONFIG": ["99x99", "128x128x16/6x8", "huge"],
    "VKBACKEND_MATMUL_MIN_TILES": ["0", "many", "1.5"],
    "VKBACKEND_MATMUL_GROUP": ["-1", "eight"],
    "VKBACKEND_CONV_CONFIG": ["colour=blue", "wgrad.RT=4", "BM", "path=packed", "bwd.BM=64"],
    "VKBACKEND_TEST_SEED": ["-1", "seed"],
    "VKBACKEND_TEST_WHEEL": ["yes"],
    "VKBACKEND_FUZZ_CASES": ["0", "all"],
    "VKBACKEND_FUZZ_SEED": ["x"],
    "VKBACKEND_MATMUL_SWEEP_N": ["0", "4k"],
    "VKBACKEND_QR_SWEEP_N": ["big"],
    "VKBACKEND_BUILD_JOBS": ["0", "auto"],
    "VKBACKEND_BUILD_SPIRV": ["no"],
}
FREE = {"text", "path", "items"}  # kinds any text is valid for


def test_every_checked_variable_has_malformed_samples():
    checked = {n for n, v in config.VARIABLES.items() if v.kind not in FREE and "<" not in n}
    assert checked == set(BAD)


@pytest.mark.parametrize("name,bad", [(n, b) for n, bads in BAD.items() for b in bads])
def test_malformed_values_name_the_variable_the_value_and_what_is_allowed(monkeypatch, name, bad):
    monkeypatch.setenv(name, bad)
    with pytest.raises(ValueError) as e:
        config.get(name)
    msg = str(e.value)
    assert msg.startswith(name), msg
    var = config.VARIABLES[name]
    assert repr(bad) in msg, msg   # the value (VKBACKEND_CONV_CONFIG: the item)
    if var.kind in ("integer", "flag", "size"):
        assert var.allowed in msg, msg
    elif var.kind == "names":
        every = config.SUBGROUP_FEATURES if "SUBGROUP" in name else config.DEVICE_FEATURES
        assert all(f in msg for f in every), msg
    elif var.kind == "tile":
        assert "BMxBNxBK/TMxTN" in msg or "must be" in msg, msg


GOOD = [
    ("VKBACKEND_DEVICE", " llvm ", "llvm"),
    ("VKBACKEND_DISABLE_SUBGROUP", "arithmetic, shuffle", frozenset({"arithmetic", "shuffle"})),
    ("VKBACKEND_DISABLE_SUBGROUP", "all", frozenset(config.SUBGROUP_FEATURES[1:])),
    ("VKBACKEND_DISABLE_FEATURE", "cooperativeMatrix,shaderFloat16", frozenset({"cooperativeMatrix", "shaderFloat16"})),
    ("VKBACKEND_LOOP_BUDGET", "1024", 1024),
    ("VKBACKEND_MEMORY_LIMIT", "1.5G", 3 << 29),
    ("VKBACKEND_STAGING_LIMIT", "16M", 16 << 20),
    ("VKBACKEND_SUBALLOC_LIMIT", "0", 0),
    ("VKBACKEND_EAGER_US", "off", False),
    ("VKBACKEND_FUSION", "off", False),
    ("VKBACKEND_FUSION", "1", 1),
    ("VKBACKEND_EAGER_US", "250", 250),
    ("VKBACKEND_POOL_LIMIT", "512M", 512 << 20),
    ("VKBACKEND_POISON", "0", False),
    ("VKBACKEND_CHECK_INDICES", "1", True),
    ("VKBACKEND_MATMUL_CONFIG", "auto", None),
    ("VKBACKEND_MATMUL_CONFIG", "large", mm.CONFIGS["large"]),
    ("VKBACKEND_MATMUL_CONFIG", "64x64x8/4x4/16x2", mm.TileConfig(64, 64, 8, 4, 4, 16, 32)),
    ("VKBACKEND_MATMUL_GROUP", "0", 0),
    ("VKBACKEND_CONV_SWEEP", "BM=64; ;path=gemm", ("BM=64", "path=gemm")),
]


@pytest.mark.parametrize("name,text,want", GOOD, ids=[f"{g[0]}={g[1]}" for g in GOOD])
def test_values_parse(monkeypatch, name, text, want):
    monkeypatch.setenv(name, text)
    assert config.get(name) == want
    monkeypatch.setenv(name, "  ")   # empty is unset
    assert config.get(name) == config.VARIABLES[name].unset
    monkeypatch.delenv(name)
    assert config.get(name) == config.VARIABLES[name].unset


def test_undeclared_names_are_a_programming_error():
    with pytest.raises(KeyError, match="not declared"):
        config.get("VKBACKEND_" + "NO_SUCH_THING")


def test_conv_keys_are_checked_through_the_registry(monkeypatch):
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", "fwd.BM=64,f16.path=cast")
    got = config.get("VKBACKEND_CONV_CONFIG")
    assert got["fwd"] == {"BM": 64} and got["f16"] == {"path": "cast"}
    for text, words in [("colour=blue", ["unknown key 'colour'", "BM"]),
                        ("bwd.BM=64", ["unknown prefix 'bwd'", "fwd, wgrad, f16, wgrad16"]),
                        ("f16.TM=8", ["f16. kernels do not read TM", "fwd.TM"])]:
        monkeypatch.setenv("VKBACKEND_CONV_CONFIG", text)
        with pytest.raises(ValueError) as e:
            config.get("VKBACKEND_CONV_CONFIG")
        assert all(w in str(e.value) for w in words), str(e.value)


def _clear_qr(monkeypatch):
    for n in config.TABLES[QR].members():
        monkeypatch.delenv(n)


def test_qr_variables(monkeypatch):
    _clear_qr(monkeypatch)
    monkeypatch.setenv("VKBACKEND_QR_SWEEP", "nb_max=8")      # a tool's variable of its own, not a key
    monkeypatch.setenv("VKBACKEND_QR_NB_MAX", "8")
    monkeypatch.setenv("VKBACKEND_QR_PANEL_WGS", "512, 256")
    monkeypatch.setenv("VKBACKEND_QR_LOOKAHEAD", "")           # empty: unset
    assert config.family(QR) == {"nb_max": 8, "panel_wgs": (512, 256)}
    for name, bad, words in [("VKBACKEND_QR_NB_MAX", "abc", ["an integer from 1 to 32"]),
                             ("VKBACKEND_QR_NB_MAX", "64", ["an integer from 1 to 32"]),
                             ("VKBACKEND_QR_PANEL_WGS", "512,,256", ["workgroup sizes"]),
                             ("VKBACKEND_QR_LOOKAHEAD", "2", ["0 or 1"]),
                             ("VKBACKEND_QR_" + "NBMAX", "8", ["unknown key 'NBMAX'", "NB_MAX", "APPLY_NB"])]:
        monkeypatch.setenv(name, bad)
        with pytest.raises(ValueError) as e:
            config.family(QR)
        msg = str(e.value)
        assert msg.startswith(f"{name}={bad!r}") and all(w in msg for w in words), msg
        monkeypatch.delenv(name)


def test_qr_applies_its_variables_at_the_first_call(monkeypatch):
    """A malformed VKBACKEND_QR_<KEY> fails each QR call (before any GPU work) until fixed; then
    its values are in TUNE."""
    _clear_qr(monkeypatch)
    monkeypatch.setattr(qr_mod, "_tuned", False)
    for k, v in qr_mod.TUNE.items():
        monkeypatch.setitem(qr_mod.TUNE, k, v)   # restored after the test
    monkeypatch.setenv("VKBACKEND_QR_TARGET_GROUPS", "many")
    a = [[1.0, 2.0], [3.0, 4.0]]
    for call in (lambda: vk.linalg.qr(a), lambda: vk.linalg.householder_product(a, [0.5]),
                 lambda: vk.linalg.apply_q(a, [0.5], a)):
        with pytest.raises(ValueError, match="VKBACKEND_QR_TARGET_GROUPS='many'"):
            call()
    monkeypatch.setenv("VKBACKEND_QR_TARGET_GROUPS", "7")
    qr_mod._tune_from_env()
    assert qr_mod.TUNE["target_groups"] == 7


def test_unknown_variables_are_named_with_the_closest_declared():
    typo = "VKBACKEND_" + "DISABLE_FEATURES"   # spelt apart: the test above greps this file too
    env = {typo: "x", "VKBACKEND_QR_NB_MAX": "8", "VKBACKEND_QR_SWEEP": "", "VKBACKEND_POISON": "1", "HOME": "/"}
    assert config.unknown(env) == [f"{typo} (did you mean VKBACKEND_DISABLE_FEATURE?)"]


def test_import_never_fails_on_a_malformed_value():
    """`import vkbackend` with malformed values everywhere succeeds; the QR call raises naming its
    variable, before the device opens; an unknown VKBACKEND_ variable is warned about at the open."""
    script = textwrap.dedent("""
        import warnings
        import vkbackend as vk
        from vkbackend import runtime
        try:
            vk.linalg.qr([[1.0, 2.0], [3.0, 4.0]])
        except ValueError as e:
            print("raised:", e)
        print("opened:", runtime.is_open())
    """)
    env = dict(os.environ, VKBACKEND_QR_NB_MAX="sixteen", VKBACKEND_CONV_CONFIG="colour=blue",
               VKBACKEND_MATMUL_CONFIG="99x99", VKBACKEND_LOOP_BUDGET="x", VKBACKEND_POISON="yes")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "raised: VKBACKEND_QR_NB_MAX='sixteen': expected an integer from 1 to 32" in out.stdout, out.stdout
    assert "opened: False" in out.stdout, out.stdout
    typo = "VKBACKEND_" + "DISABLE_SUBGROUPS"
    script = "import warnings, vkbackend as vk\nwith warnings.catch_warnings(record=True) as w:\n" \
             "    warnings.simplefilter('always'); vk.device()\nprint([str(x.message) for x in w])\n"
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, **{typo: "all"}), cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"{typo} (did you mean VKBACKEND_DISABLE_SUBGROUP?)" in out.stdout, out.stdout
