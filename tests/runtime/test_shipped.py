"""The SPIR-V shipped in the package (compiler.shipped, variants.build_archive) and the record of
the variants runs ask for (VKBACKEND_RECORD_VARIANTS, variants.recorded); no device needed."""
import io
import json
import zipfile

import pytest

from vkbackend.runtime import compiler, variants

SHADER = "ops/qr_util.comp"


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty disk cache and memory cache, and no shipped archive yet."""
    monkeypatch.setenv("VKBACKEND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VKBACKEND_RECORD_VARIANTS", raising=False)
    monkeypatch.setattr(compiler, "_memory", {})
    monkeypatch.setattr(compiler, "SHIPPED", tmp_path / "_spirv.zip")
    monkeypatch.setattr(compiler, "_shipped_state", [])
    return tmp_path


def _variants():
    path = compiler.SHADER_DIR / SHADER
    return [(str(path), d) for d in variants.parse(path.read_text())]


def test_shipped_variants_need_no_compiler(fresh, monkeypatch):
    work = _variants()
    monkeypatch.setattr(variants, "declared", lambda tests=False: work)
    monkeypatch.setattr(variants, "RECORDED", fresh / "none.variants")
    assert variants.build_archive(str(compiler.SHIPPED), jobs=2) == 0
    with zipfile.ZipFile(compiler.SHIPPED) as z:
        manifest = json.loads(z.read("manifest.json"))
        assert sorted(v[0] for v in manifest["variants"]) == [SHADER] * len(work)
        keys = {compiler.source_key(compiler.SHADER_DIR / SHADER, d) for _, d in work}
        assert {v[2] for v in manifest["variants"]} == keys
        assert {v[3] for v in manifest["variants"]} <= set(z.namelist())  # the chunks

    # A new process (empty caches) on a machine without glslang: every shipped variant loads.
    compiled = [compiler.compile_shader(SHADER, d) for _, d in work]
    monkeypatch.setattr(compiler, "_memory", {})
    monkeypatch.setattr(compiler, "_shipped_state", [])

    def no_glslang():
        raise compiler.CompileError("glslangValidator not found: (test)")
    monkeypatch.setattr(compiler, "glslang", no_glslang)
    monkeypatch.setattr(compiler, "compiler_version", lambda: compiler.glslang())
    before = dict(compiler.stats)
    for i, (_, d) in enumerate(work):
        assert compiler.compile_shader(SHADER, d) == compiled[i]
    assert compiler.stats["compiles"] == before["compiles"]
    assert compiler.stats["disk_hits"] == before["disk_hits"]
    assert compiler.stats["shipped_hits"] == before["shipped_hits"] + len(work)

    # A variant not shipped: the error says so, and what is missing.
    with pytest.raises(compiler.CompileError, match="not among the SPIR-V shipped.*glslangValidator not found"):
        compiler.compile_shader(SHADER, {**work[0][1], "SOMETHING_ELSE": 1})


def test_shipped_key_follows_the_sources(fresh, tmp_path):
    """A shipped variant is found by its sources' contents: an edited shader misses it."""
    src = tmp_path / "s.comp"
    src.write_text("#version 450\nvoid main() {}\n")
    k = compiler.source_key(src, {"A": 1})
    assert compiler.source_key(src, {"A": "1"}) == k  # -DA=1 either way
    assert compiler.source_key(src, {"A": 2}) != k
    src.write_text("#version 450\nvoid main() { }\n")
    assert compiler.source_key(src, {"A": 1}) != k


def test_recording(fresh, monkeypatch):
    record = fresh / "rec.variants"
    monkeypatch.setenv("VKBACKEND_RECORD_VARIANTS", str(record))
    monkeypatch.setattr(compiler, "_recorded", {})
    (_, d0), (_, d1) = _variants()[:2]
    compiler.compile_shader(SHADER, d0)
    compiler.compile_shader(SHADER, d0)   # a memory hit: not asked again
    monkeypatch.setattr(compiler, "_memory", {})
    monkeypatch.setattr(compiler, "_recorded", {})  # a new process reads what is there
    compiler.compile_shader(SHADER, d0)
    compiler.compile_shader(SHADER, d1)
    lines = record.read_text().splitlines()
    assert [json.loads(x) for x in lines] == [{"shader": SHADER, "defines": d0}, {"shader": SHADER, "defines": d1}]
    assert variants.recorded(record) == [(str(compiler.SHADER_DIR / SHADER), d0),
                                         (str(compiler.SHADER_DIR / SHADER), d1)]
    # shaders outside the package (tests') are not recorded
    other = fresh / "other.comp"
    other.write_text("#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n")
    compiler.compile_shader(str(other))
    assert len(record.read_text().splitlines()) == 2


def test_stale_recorded_variants_are_left_out(fresh, monkeypatch):
    """A recorded variant that no longer compiles is dropped with a warning; a declared one fails."""
    work = _variants()[:1]
    record = fresh / "rec.variants"
    record.write_text("# comment\n" + compiler.variant_line(SHADER, {"main": "renamed"}) + "\n")
    monkeypatch.setattr(variants, "declared", lambda tests=False: list(work))
    monkeypatch.setattr(variants, "RECORDED", record)
    out = io.StringIO()
    assert variants.build_archive(str(compiler.SHIPPED), out=out) == 0
    assert "1 recorded variants no longer compile" in out.getvalue()
    monkeypatch.setattr(variants, "declared", lambda tests=False: [(work[0][0], {"main": "renamed"})])
    assert variants.build_archive(str(fresh / "b.zip"), out=out) == 1
