"""The open Vulkan device: choice, capabilities queried at run time, the kp manager."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .. import config

# VkSubgroupFeatureFlagBits, in bit order.
SUBGROUP_FEATURE_BITS = {
    "basic": 0x1,
    "vote": 0x2,
    "arithmetic": 0x4,
    "ballot": 0x8,
    "shuffle": 0x10,
    "shuffle_relative": 0x20,
    "clustered": 0x40,
    "quad": 0x80,
}
_COMPUTE_STAGE = 0x20  # VK_SHADER_STAGE_COMPUTE_BIT
_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x10005: "Mesa", 0x13B5: "ARM",
            0x5143: "Qualcomm", 0x106B: "Apple"}


# Multiprocessors (what planners fill with waves of workgroups): Vulkan's core API does not
# report them. NVIDIA's driver tells a shader (gl_SMCountNV) on a device opened with this
# extension (runtime/__init__.py asks); lavapipe runs workgroups on Mesa's rasterizer threads
# (lavapipe_threads); elsewhere planners assume a large discrete GPU (H100 and H200 SXM: 132).
SM_BUILTINS = "VK_NV_shader_sm_builtins"
PUSH_DESCRIPTOR = "VK_KHR_push_descriptor"
MEMORY_BUDGET = "VK_EXT_memory_budget"  # memory_stats()'s heaps report the driver's budget and usage where listed
MULTIPROCESSORS_ESTIMATE = 132
LAVAPIPE_MAX_THREADS = 32  # Mesa's LP_MAX_THREADS (llvmpipe's lp_limits.h)

# lavapipe ends every loop once an invocation has run this many iterations of its non-unrolled
# loops in all (Mesa's gallivm: LP_MAX_TGSI_LOOP_ITERATIONS, one counter per invocation shared by
# every loop, in llvmpipe since the TGSI days and still in the NIR path); see loop_guard.py.
LAVAPIPE_LOOP_BUDGET = 65535


def is_lavapipe(name: str) -> bool:
    """Mesa's software Vulkan driver (lavapipe: device name "llvmpipe (...)")."""
    return "llvmpipe" in name.lower()


def lavapipe_threads() -> int:
    """The threads lavapipe runs workgroups on, counted as Mesa's llvmpipe screen counts them:
    LP_NUM_THREADS, else the CPU count where there is more than one, at most LP_MAX_THREADS; with
    none it runs them on the submitting thread (counted as 1 here)."""
    cpus = os.cpu_count() or 1
    raw = os.environ.get("LP_NUM_THREADS", "").strip()
    try:
        threads = int(raw, 0)
    except ValueError:  # Mesa takes what it cannot parse as unset
        threads = cpus if cpus > 1 else 0
    return max(1, min(threads, LAVAPIPE_MAX_THREADS))


class DeviceError(RuntimeError):
    """No usable Vulkan device, or a feature the work needs is missing."""


@dataclass(frozen=True)
class Device:
    index: int
    name: str
    vendor: str
    vendor_id: int
    device_type: str
    driver: str
    api_version: str
    subgroup_size: int
    min_subgroup_size: int
    max_subgroup_size: int
    subgroup_features: frozenset
    disabled_subgroup_features: frozenset
    max_workgroup_size: tuple
    max_workgroup_invocations: int
    max_workgroup_count: tuple
    max_shared_memory: int
    max_storage_buffer_range: int  # bytes one shader may bind of a buffer (a window of it)
    device_local_bytes: int
    # One buffer may be this large (VkPhysicalDeviceMaintenance4Properties; the bind range where
    # the device does not say); a window's offset is a multiple of the alignment.
    max_buffer_size: int = 0
    min_storage_buffer_offset_alignment: int = 16
    # Optional Vulkan features enabled on the device (kp patch 0004), e.g. shaderFloat16.
    features: frozenset = frozenset()
    # VK_KHR_cooperative_matrix shapes: (M, N, K, A, B, C, Result) with component type names.
    cooperative_matrix: tuple = ()
    # Loop iterations (non-unrolled loops, all of them together) one invocation may run before the
    # driver cuts its loops short: LAVAPIPE_LOOP_BUDGET on lavapipe, None where unlimited, or what
    # VKBACKEND_LOOP_BUDGET lowers it to. Planners keep every invocation's loops inside it.
    loop_budget: int | None = None
    # VKBACKEND_LOOP_BUDGET was set: every kernel carries loop_guard's counter, so the lowered
    # budget is enforced on this device as lavapipe enforces its own.
    loop_budget_emulated: bool = False
    # What planners fill with workgroups (NVIDIA: SMs), and where the number comes from: "queried"
    # (the driver, gl_SMCountNV), "lavapipe threads" (Mesa's rule, lavapipe_threads) or "estimate".
    multiprocessors: int = MULTIPROCESSORS_ESTIMATE
    multiprocessors_source: str = "estimate"
    # Device extensions vkbackend asked for besides kp's own (SM_BUILTINS, PUSH_DESCRIPTOR where listed).
    enabled_extensions: tuple = ()
    extensions: tuple = field(repr=False, default=())
    manager: object = field(repr=False, compare=False, default=None)

    @property
    def push_descriptors(self) -> bool:
        """Dispatches push their bindings (VK_KHR_push_descriptor) instead of binding a set."""
        return PUSH_DESCRIPTOR in self.enabled_extensions

    @property
    def is_software(self) -> bool:
        return is_lavapipe(self.name)

    def has(self, feature: str) -> bool:
        return feature in self.subgroup_features

    def has_cooperative_matrix(self, m: int, n: int, k: int, ab: str = "float16", c: str = "float32") -> bool:
        """Whether subgroup-scope M x N x K products with A, B of type `ab` accumulating in `c` run."""
        return (m, n, k, ab, ab, c, c) in self.cooperative_matrix

    def report(self) -> dict:
        """A plain dict of everything above, for `vkbackend info --json`."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("manager", "extensions")}
        d["subgroup_features"] = sorted(self.subgroup_features, key=list(SUBGROUP_FEATURE_BITS).index)
        d["disabled_subgroup_features"] = sorted(self.disabled_subgroup_features)
        d["features"] = sorted(self.features)
        d["cooperative_matrix"] = [list(s) for s in self.cooperative_matrix]
        d["lp_native_vector_width"] = os.environ.get("LP_NATIVE_VECTOR_WIDTH")
        return d


# VkComponentTypeKHR values (VK_KHR_cooperative_matrix) and VK_SCOPE_SUBGROUP_KHR.
_COMPONENT_TYPES = {0: "float16", 1: "float32", 2: "float64", 3: "int8", 4: "int16", 5: "int32", 6: "int64",
                    7: "uint8", 8: "uint16", 9: "uint32", 10: "uint64", 1000141000: "bfloat16"}
_SCOPE_SUBGROUP = 3


def _cooperative_shapes(mgr, disabled: frozenset) -> tuple:
    if "cooperativeMatrix" in disabled:
        return ()
    out = []
    for p in mgr.cooperative_matrix_properties():
        types = [_COMPONENT_TYPES.get(p[k]) for k in ("a", "b", "c", "result")]
        if p["scope"] == _SCOPE_SUBGROUP and None not in types and not p["saturating"]:
            out.append((p["m"], p["n"], p["k"], *types))
    return tuple(out)


def _version(v: int) -> str:
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def _disabled_features_from_env() -> frozenset:
    """VKBACKEND_DISABLE_FEATURE=cooperativeMatrix,shaderFloat16: paths that need them are not taken."""
    return config.get("VKBACKEND_DISABLE_FEATURE")


def _loop_budget(is_software: bool) -> tuple[int | None, bool]:
    """(budget, emulated): the driver's, lowered by VKBACKEND_LOOP_BUDGET when that is set."""
    native = LAVAPIPE_LOOP_BUDGET if is_software else None
    want = config.get("VKBACKEND_LOOP_BUDGET")
    if want is None:
        return native, False
    return (want if native is None else min(want, native)), True


def _disabled_from_env() -> frozenset:
    return config.get("VKBACKEND_DISABLE_SUBGROUP")


def _choose_index(devices: list[dict]) -> int:
    """VKBACKEND_DEVICE (an index or part of a name); else the first GPU; else lavapipe."""
    want = config.get("VKBACKEND_DEVICE")
    names = [d["device_name"] for d in devices]
    if want:
        if want.isdigit():
            i = int(want)
            if i >= len(devices):
                raise DeviceError(f"VKBACKEND_DEVICE={want}: only {len(devices)} device(s): {names}")
            return i
        for i, n in enumerate(names):
            if want.lower() in n.lower():
                return i
        raise DeviceError(f"VKBACKEND_DEVICE={want!r} matches none of {names}")
    for i, n in enumerate(names):
        if not is_lavapipe(n):
            return i
    return 0


def _with_extensions(kp, mgr, index: int, extensions, off: frozenset) -> tuple:
    """(manager, extensions asked for): the device reopened with those of SM_BUILTINS and
    PUSH_DESCRIPTOR it lists (kp enables only the extensions it is asked for), else as it is."""
    want = [e for e in (SM_BUILTINS, PUSH_DESCRIPTOR) if e in extensions
            and not (e == PUSH_DESCRIPTOR and "pushDescriptor" in off)]
    if not want:
        return mgr, ()
    mgr.destroy()
    try:
        return kp.Manager(index, [], want), tuple(want)
    except Exception:  # noqa: BLE001 - a driver that lists them and refuses them: the plain device
        return kp.Manager(index), ()


def open_device() -> Device:
    try:
        from ._kpmod import kp
    except ImportError as e:  # pragma: no cover - setup problem
        raise DeviceError("vkbackend._kp (Kompute, built with the package) is missing: reinstall "
                          "vkbackend (pip install .), or run `make setup` in a checkout") from e
    if not (hasattr(kp.Manager, "device_capabilities") and hasattr(kp.Manager, "enabled_features")
            and hasattr(kp.Sequence, "record_steps")):  # the first patch and the newest
        raise DeviceError(f"{kp.__name__} is not built with vkbackend's patches (third_party/kompute): "
                          "reinstall vkbackend (pip install .), or run `make setup` in a checkout")
    try:
        mgr = kp.Manager()
    except Exception as e:
        raise DeviceError(f"no Vulkan device could be opened ({e}); on a machine without a GPU "
                          "install mesa-vulkan-drivers for lavapipe") from e
    index = _choose_index(mgr.list_devices())
    if index != 0:
        mgr.destroy()
        mgr = kp.Manager(index)
    caps = mgr.device_capabilities()
    off = _disabled_features_from_env()
    mgr, asked = _with_extensions(kp, mgr, index, caps["extensions"], off)
    disabled = _disabled_from_env()
    ops = caps["subgroup_operations"] if caps["subgroup_stages"] & _COMPUTE_STAGE else 0
    features = frozenset(n for n, bit in SUBGROUP_FEATURE_BITS.items() if ops & bit) - disabled
    enabled = frozenset(mgr.enabled_features()) - off
    driver = " ".join(x for x in (caps["driver_name"], caps["driver_info"]) if x) or _version(caps["driver_version"])
    loop_budget, emulated = _loop_budget(is_lavapipe(caps["device_name"]))
    # NVIDIA's count is read once the runtime can run a shader (runtime/__init__.py)
    mp, mp_source = ((lavapipe_threads(), "lavapipe threads") if is_lavapipe(caps["device_name"])
                     else (MULTIPROCESSORS_ESTIMATE, "estimate"))
    return Device(
        index=index,
        name=caps["device_name"],
        vendor=_VENDORS.get(caps["vendor_id"], hex(caps["vendor_id"])),
        vendor_id=caps["vendor_id"],
        device_type=caps["device_type"],
        driver=driver,
        api_version=_version(caps["api_version"]),
        subgroup_size=caps["subgroup_size"],
        min_subgroup_size=caps["min_subgroup_size"],
        max_subgroup_size=caps["max_subgroup_size"],
        subgroup_features=features,
        disabled_subgroup_features=disabled,
        max_workgroup_size=tuple(caps["max_workgroup_size"]),
        max_workgroup_invocations=caps["max_workgroup_invocations"],
        max_workgroup_count=tuple(caps["max_workgroup_count"]),
        max_shared_memory=caps["max_shared_memory"],
        max_storage_buffer_range=caps["max_storage_buffer_range"],
        device_local_bytes=caps["device_local_bytes"],
        max_buffer_size=max(caps.get("max_buffer_size", 0), caps["max_storage_buffer_range"]),
        min_storage_buffer_offset_alignment=caps.get("min_storage_buffer_offset_alignment", 16),
        features=enabled,
        cooperative_matrix=_cooperative_shapes(mgr, off),
        loop_budget=loop_budget,
        loop_budget_emulated=emulated,
        multiprocessors=mp,
        multiprocessors_source=mp_source,
        enabled_extensions=asked,
        extensions=tuple(caps["extensions"]),
        manager=mgr,
    )
