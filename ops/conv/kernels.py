"""The convolution kernels (shaders/ops/conv_*.comp; docs/conv.md catalogues them), a plan of
one dispatch, and what a device must offer to run them."""
from __future__ import annotations

from dataclasses import dataclass

GEMM = "ops/conv_gemm.comp"
DIRECT = "ops/conv_direct.comp"
WGRAD = "ops/conv_wgrad.comp"
REDUCE = "ops/conv_reduce.comp"
COOPMAT = "ops/conv_coopmat.comp"
PACKED = "ops/conv_coopmat_packed.comp"
PACK = "ops/conv_pack.comp"
WGRAD16 = "ops/conv_coopmat_wgrad.comp"
WGRAD16_GATHER = "ops/conv_coopmat_wgrad_gather.comp"

# What the float32 kernels need to read float16 operands in place (HALF_IN).
HALF_STORAGE = frozenset({"storageBuffer16BitAccess", "shaderFloat16"})
COOPMAT_FEATURES = frozenset({"cooperativeMatrix", "shaderFloat16", "storageBuffer16BitAccess",
                              "vulkanMemoryModel"})


@dataclass(frozen=True)
class Plan:
    """One kernel's dispatch: shader, defines, workgroup size, specialization constants, grid;
    splits > 1 where the reduction is split across workgroups (partial sums added after)."""
    shader: str
    defines: tuple
    workgroup: int
    spec: tuple
    grid: tuple
    splits: int = 1
    flops: int = 0

    def describe(self) -> str:
        text = f"{self.shader.split('/')[-1]} {dict(self.defines)} wg={self.workgroup} grid={self.grid}"
        return text + (f" splits={self.splits}" if self.splits > 1 else "")


@dataclass(frozen=True)
class DeviceKey:
    """What the planners read of a device, and the plans' cache key (hashable): device_key
    builds it from the open device, tests write one for a device they plan for."""
    name: str
    software: bool          # lavapipe: small tiles, loops not unrolled
    max_shared: int         # shared memory bytes per workgroup
    max_invocations: int    # invocations per workgroup
    max_count: tuple        # workgroups per dispatch, (x, y, z)
    subgroup_size: int
    min_subgroup_size: int
    multiprocessors: int    # what tuning.py fills with waves of workgroups (Device.multiprocessors)


def device_key(dev) -> DeviceKey:
    """The planners' view of the Device `dev`: the one place that reads it."""
    return DeviceKey(name=dev.name, software=dev.is_software, max_shared=dev.max_shared_memory,
                     max_invocations=dev.max_workgroup_invocations, max_count=tuple(dev.max_workgroup_count),
                     subgroup_size=dev.subgroup_size, min_subgroup_size=dev.min_subgroup_size,
                     multiprocessors=dev.multiprocessors)


def coopmat_key(dev) -> DeviceKey | None:
    """The device key for the cooperative-matrix kernels, or None where they cannot run: they
    need 16 x 16 x 16 float16 products accumulating in float32, 16-bit storage, float16
    arithmetic, the memory model, and a fixed subgroup size (workgroups are counted in subgroups)."""
    if (not COOPMAT_FEATURES <= dev.features or not dev.has_cooperative_matrix(16, 16, 16)
            or dev.min_subgroup_size != dev.max_subgroup_size):
        return None
    return device_key(dev)


def shared_bytes(kind: str, bm: int, bn: int, bk: int, table: int = 0) -> int:
    """Shared memory of conv_gemm.comp's tiles (kind 'fwd', with `table` gather entries) or
    conv_wgrad.comp's ('wgrad'): two stages of BK x (BM + BN) floats, padded."""
    if kind == "wgrad":
        return 2 * bk * (bm + bn + 8) * 4
    return 2 * bk * (bm + bn + 4) * 4 + 8 * table
