import textwrap

import pytest

from vkbackend.runtime import compiler

SHADER = textwrap.dedent("""\
    #version 450
    #extension GL_GOOGLE_include_directive : require
    #include "lib/common.glsl"
    #include "helper.glsl"
    layout(std430, binding = 0) buffer B { uint b[]; };
    void main() { b[gl_GlobalInvocationID.x] = VALUE + helper(); }
    """)


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VKBACKEND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compiler, "_memory", {})
    src = tmp_path / "s.comp"
    src.write_text(SHADER)
    (tmp_path / "helper.glsl").write_text("uint helper() { return 1u; }\n")
    return src


def test_cache_miss_then_hits(tmp_cache):
    before = dict(compiler.stats)
    a = compiler.compile_shader(str(tmp_cache), {"VALUE": "2u"})
    assert compiler.stats["compiles"] == before["compiles"] + 1
    assert a[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number
    assert compiler.compile_shader(str(tmp_cache), {"VALUE": "2u"}) == a
    assert compiler.stats["memory_hits"] == before["memory_hits"] + 1
    compiler._memory.clear()  # a new process: the disk cache answers
    assert compiler.compile_shader(str(tmp_cache), {"VALUE": "2u"}) == a
    assert compiler.stats["disk_hits"] == before["disk_hits"] + 1
    assert compiler.stats["compiles"] == before["compiles"] + 1


def test_key_covers_defines_and_includes(tmp_cache):
    k1 = compiler.cache_key(tmp_cache, {"VALUE": "2u"})
    assert compiler.cache_key(tmp_cache, {"VALUE": "3u"}) != k1
    (tmp_cache.parent / "helper.glsl").write_text("uint helper() { return 5u; }\n")
    assert compiler.cache_key(tmp_cache, {"VALUE": "2u"}) != k1


def test_error_names_shader_defines_and_line(tmp_cache):
    tmp_cache.write_text(SHADER.replace("VALUE + helper()", "VALUE + undefined_thing"))
    with pytest.raises(compiler.CompileError) as e:
        compiler.compile_shader(str(tmp_cache), {"VALUE": "2u"})
    msg = str(e.value)
    assert "s.comp" in msg and "VALUE" in msg and "undefined_thing" in msg
    assert "> " in msg  # the offending source line is shown, marked


def test_missing_shader_and_include(tmp_cache):
    with pytest.raises(compiler.CompileError, match="no shader"):
        compiler.compile_shader("primitives/does_not_exist.comp")
    tmp_cache.write_text(SHADER.replace("helper.glsl", "nowhere.glsl"))
    with pytest.raises(compiler.CompileError, match="nowhere.glsl"):
        compiler.compile_shader(str(tmp_cache), {"VALUE": "2u"})
