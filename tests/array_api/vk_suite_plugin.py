"""pytest plugin (-p vk_suite_plugin) that lets the array API conformance suite import against
vkbackend. tools/array_api_tests.sh loads it; it is not collected by the project's own `pytest`.

The suite (../shared/array-api-tests at the commit its PROVENANCE.md names) tests the namespace
itself, `vkbackend`, untouched: every test sees vkbackend's real names, dtypes and signatures.
The standard lists complex dtypes too; vkbackend has none. The suite skips a missing dtype
everywhere (ARRAY_API_TESTS_SKIP_DTYPES, or an absent name) except in the import of its dtype
tables (array_api_tests/dtype_helpers.py), which needs one complex dtype at module level:
`widest_complex_dtype = max(<complex dtypes>)` needs one that is not skipped, and then
`xp.asarray(complex()).dtype` is asked for the default complex dtype.

So while (and only while) that module is imported, vkbackend carries a placeholder object,
`complex64` (no dtype: nothing of vkbackend takes it), and asarray answers the complex() probe.
Afterwards the placeholder is removed from vkbackend again and scrubbed from every dtype table of
the module, so that the suite draws and expects no complex dtype. vkbackend's own dtypes() reports
what this device computes in (bool, int8-int64, uint8-uint64, float32, float64 on lavapipe);
vkbackend.complex64 does not exist while any test runs.

This must run before the suite's conftest.py imports array_api_tests.hypothesis_helpers (whose
strategies read the tables at import): `-p` plugins are imported before conftest files are.
"""
import os
import sys

os.environ.setdefault("ARRAY_API_TESTS_MODULE", "vkbackend")
assert os.environ["ARRAY_API_TESTS_MODULE"] == "vkbackend", "this plugin adapts the suite to vkbackend only"
import vkbackend  # noqa: E402

assert "array_api_tests.dtype_helpers" not in sys.modules, "load this plugin with -p, before the suite's conftest"
# First the suite's snapshot of the namespace (array_api_tests/_array_module.py): taken while
# vkbackend is itself, so complex64 is its "undefined" stub in every test module.
from array_api_tests import _array_module  # noqa: E402,F401


class _Placeholder:
    """Stands for a dtype vkbackend does not have, while the suite's tables are built."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}: not a vkbackend dtype (placeholder of tests/array_api/vk_suite_plugin.py)>"


_complex64 = _Placeholder("complex64")


class _ComplexProbe:
    dtype = _complex64


def _asarray_for_import(obj, /, *args, **kwargs):
    if type(obj) is complex and not args and not kwargs:  # dtype_helpers: default complex dtype
        return _ComplexProbe()
    return _real_asarray(obj, *args, **kwargs)


_real_asarray = vkbackend.asarray
vkbackend.complex64, vkbackend.asarray = _complex64, _asarray_for_import
try:
    from array_api_tests import dtype_helpers as _dh
finally:
    vkbackend.asarray = _real_asarray
    del vkbackend.complex64


def _scrub(value):
    """value without the complex64 placeholder: in tuples, lists, dicts and EqualityMappings."""
    if isinstance(value, (tuple, list)) and any(v is _complex64 for v in value):
        return type(value)(v for v in value if v is not _complex64)
    if isinstance(value, _dh.EqualityMapping):
        pairs = value._key_value_pairs
        keep = [(k, v) for k, v in pairs
                if k is not _complex64 and v is not _complex64
                and not (isinstance(k, tuple) and any(x is _complex64 for x in k))]
        return value if len(keep) == len(pairs) else _dh.EqualityMapping(keep)
    if isinstance(value, dict):
        for k in list(value):
            value[k] = _scrub(value[k])
    return value


for _name, _value in list(vars(_dh).items()):
    # dtype_to_name keeps the placeholder's name: test_signatures.py names "the widest complex
    # dtype" through it at import, then finds no vkbackend.complex64 and moves on.
    if _name != "dtype_to_name" and not _name.startswith("__"):
        setattr(_dh, _name, _scrub(_value))
_dh.default_complex = None  # what the module sets when every complex dtype is skipped
assert _complex64 not in _dh.all_dtypes and not _dh.complex_dtypes


def pytest_collection_modifyitems(config, items):
    """Missing dtype (complex): test_special_cases.py runs its complex cases whether or not the
    namespace has a complex dtype (with dh.widest_complex_dtype, here the placeholder, whose
    drawing fails). They are skipped by the suite's own flag, case.is_complex, rather than listed
    one by one (about 150 ids) in skips.txt."""
    import pytest
    for item in items:
        case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
        if getattr(case, "is_complex", False):
            item.add_marker(pytest.mark.skip(reason="complex special case: vkbackend has no complex dtype"))
