"""Kernels: SPIR-V + specialization constants + uint32 push constants, and their pipelines.

One kp.Pipeline per shader variant (SPIR-V, specialization constants, buffer count, push size),
shared by every dispatch whatever buffers it binds (kp patch 0005): a pipeline is made once, and
a dispatch pushes its bindings into the command buffer (VK_KHR_push_descriptor, kp patch 0011)
or, on devices without that extension, binds them through a recycled descriptor set.
"""
from __future__ import annotations

import copy
import hashlib
import math
import struct

import numpy as np

from . import compiler, loop_guard

# Device capabilities become defines, so one shader source serves every device and fallback.
_FEATURE_DEFINES = {"vote": "HAS_SUBGROUP_VOTE", "arithmetic": "HAS_SUBGROUP_ARITHMETIC",
                    "ballot": "HAS_SUBGROUP_BALLOT", "shuffle": "HAS_SUBGROUP_SHUFFLE",
                    "shuffle_relative": "HAS_SUBGROUP_SHUFFLE_RELATIVE"}


_FLOATS = (float, np.floating)


def pack_push(values) -> bytes:
    """Push constants as uint32 words (bytes): Python/numpy floats as float32 bits, ints modulo
    2**32. It is on every dispatch's path: all-int lists (most kernels) pack in one call, mixed
    ones in a second, only negatives and out-of-range values word by word."""
    try:
        return struct.pack(f"={len(values)}I", *values)
    except struct.error:
        pass
    try:
        return struct.pack("=" + "".join("f" if isinstance(v, _FLOATS) else "I" for v in values), *values)
    except (struct.error, OverflowError):  # negative ints, floats beyond float32 (-> inf)
        with np.errstate(over="ignore"):
            return np.array([int(np.float32(v).view(np.uint32)) if isinstance(v, _FLOATS)
                             else int(v) & 0xFFFFFFFF for v in values], np.uint32).tobytes()


class PipelineCache:
    """Pipelines by (SPIR-V, specialization constants, buffer count, push words), never dropped:
    a program uses a fixed set of shader variants. Kernels keep the ones they use, so this is
    asked once per kernel and binding layout."""

    def __init__(self, manager, push_descriptors: bool = False):
        self._mgr = manager
        self._push_descriptors = push_descriptors  # the device has VK_KHR_push_descriptor enabled
        self._pipes: dict = {}
        self.stats = {"hits": 0, "created": 0}

    def get(self, spirv_hash: str, spirv: bytes, spec: tuple, buffers: int, push_words: int):
        key = (spirv_hash, spec, buffers, push_words)
        pipe = self._pipes.get(key)
        if pipe is not None:
            self.stats["hits"] += 1
            return pipe
        pipe = self._pipes[key] = self._mgr.pipeline(spirv, list(spec), buffers, push_words,
                                                     self._push_descriptors)
        self.stats["created"] += 1
        return pipe

    def __len__(self):
        return len(self._pipes)


class Kernel:
    """One compiled shader variant. Spec constants: 0 = workgroup size, 1 = worst-case subgroup
    count (workgroup size / minSubgroupSize), then the shader's own."""

    def __init__(self, rt, shader: str, defines: dict, workgroup: int, spec: tuple = ()):
        dev = rt.device
        if workgroup > dev.max_workgroup_invocations:
            raise ValueError(f"{shader}: workgroup size {workgroup} exceeds the device's "
                             f"{dev.max_workgroup_invocations}")
        full = {_FEATURE_DEFINES[f]: 1 for f in dev.subgroup_features if f in _FEATURE_DEFINES}
        full.update(defines)
        self.rt = rt
        self.shader = shader
        self.defines = full
        self.workgroup = workgroup
        self.spirv = compiler.compile_shader(shader, full)
        if dev.loop_budget_emulated:
            self.spirv = loop_guard.instrument(self.spirv, dev.loop_budget)
        self.spirv_hash = hashlib.sha256(self.spirv).hexdigest()[:24]
        slots = max(1, math.ceil(workgroup / max(1, dev.min_subgroup_size)))
        self.spec = (workgroup, slots) + tuple(int(s) for s in spec)
        self._pipes: dict = {}  # (buffers, push words) -> pipeline, skipping the cache's key

    def with_spirv(self, spirv: bytes) -> "Kernel":
        """This kernel running other SPIR-V of the same interface (tests of rewritten modules)."""
        k = copy.copy(self)
        k.spirv, k.spirv_hash, k._pipes = spirv, hashlib.sha256(spirv).hexdigest()[:24], {}
        return k

    def __call__(self, buffers, push=(), groups=(1, 1, 1), barrier: bool = True, windows=None, fuse=None) -> None:
        """Record a dispatch of `groups` workgroups over `buffers` (bindings 0..n-1), followed by a
        global barrier unless `barrier` is False (see Stream.dispatch). `windows`: per buffer None
        (all of it) or (first word, words), the part of a buffer larger than a shader may bind
        (Buffer.big) that this dispatch sees, from its first word on (a multiple of
        windows.align_words); a big buffer without one is refused (ValueError). `fuse`: see
        Stream.dispatch."""
        if len(groups) != 3:
            groups = tuple(groups) + (1,) * (3 - len(groups))
        limits = self.rt.device.max_workgroup_count
        if not (0 < groups[0] <= limits[0] and 0 < groups[1] <= limits[1] and 0 < groups[2] <= limits[2]):
            raise ValueError(f"{self.shader}: dispatch {groups} outside 1..{limits}")
        words = pack_push(push)
        layout = (len(buffers), len(words))
        pipe = self._pipes.get(layout)
        if pipe is None:
            pipe = self._pipes[layout] = self.rt.pipelines.get(self.spirv_hash, self.spirv, self.spec,
                                                               len(buffers), len(words) // 4)
        if windows is None:
            for b in buffers:
                if b.big:
                    raise ValueError(
                        f"{self.shader}: an array of {b.words * 4} bytes is larger than a shader may "
                        f"bind ({self.rt.device.max_storage_buffer_range} bytes, maxStorageBufferRange), "
                        "and this operation does not work in windows of it (elementwise operations, "
                        "astype, reductions and flat scans do)")
            self.rt.stream.dispatch(pipe, [b.tensor for b in buffers], words, groups, barrier, fuse=fuse)
            return
        spans = [(0, 0) if w is None else (w[0] * 4, w[1] * 4) for w in windows]
        for b, w in zip(buffers, windows):
            if b.big and w is None:
                raise ValueError(f"{self.shader}: a buffer larger than maxStorageBufferRange needs a window")
        self.rt.stream.dispatch(pipe, [b.tensor for b in buffers], words, groups, barrier, spans)
