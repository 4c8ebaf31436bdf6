"""The patched Kompute bindings, as `kp`: vkbackend._kp, built into the package by setup.py (from
kp 0.9.0's sdist with third_party/kompute/*.patch; 0007 names the module and gives it a pybind11
registry of its own, so an upstream kp in the same environment, or process, is never touched).
A checkout set up before the package built its own (a `kp` wheel of tools/build_kp.sh in the
virtualenv) still works through the fallback; devices.open_device refuses a kp without the patches."""
try:
    from .. import _kp as kp
except ImportError:
    import kp  # noqa: F401

__all__ = ["kp"]
