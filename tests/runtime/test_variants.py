import io

from vkbackend.runtime import variants


def test_parse_variant_lines():
    src = "// @variants T=float|int ?FAST\n// @variants A|B N=3\nvoid main() {}\n"
    assert variants.parse(src) == [
        {"T": "float"}, {"T": "float", "FAST": 1}, {"T": "int"}, {"T": "int", "FAST": 1},
        {"A": 1, "N": "3"}, {"B": 1, "N": "3"}]
    assert variants.parse("void main() {}") == [{}]


def test_every_shader_declares_its_variants():
    missing = [p.name for p in variants.shader_files() if "@variants" not in p.read_text()]
    assert not missing, f"shaders without a // @variants line: {missing}"


def test_every_declared_variant_compiles():
    out = io.StringIO()
    assert variants.compile_all(out) == 0, out.getvalue()
