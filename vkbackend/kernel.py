"""Kernels: SPIR-V + specialization constants + uint32 push constants, and an LRU of pipelines.

A kp.Algorithm (a pipeline, ~1.4 ms to create on NVIDIA) is bound to its buffers, so the cache key
holds the buffers' serial numbers; pooled buffers recur in loops, which makes hits the rule there.
"""
from __future__ import annotations

import hashlib
import math
import struct
from collections import OrderedDict

import numpy as np

from . import compiler, loop_guard

# Device capabilities become defines, so one shader source serves every device and fallback.
_FEATURE_DEFINES = {"vote": "HAS_SUBGROUP_VOTE", "arithmetic": "HAS_SUBGROUP_ARITHMETIC",
                    "ballot": "HAS_SUBGROUP_BALLOT", "shuffle": "HAS_SUBGROUP_SHUFFLE",
                    "shuffle_relative": "HAS_SUBGROUP_SHUFFLE_RELATIVE"}


_FLOATS = (float, np.floating)


def pack_push(values) -> np.ndarray:
    """Push constants as uint32 words: Python/numpy floats as float32 bits, ints modulo 2**32.
    One struct.pack in the usual case (ints in 0..2**32-1, floats in float32's range): it is on
    every dispatch's path, where the element-by-element way cost ~8 us for a mixed list."""
    try:
        fmt = "=" + "".join("f" if isinstance(v, _FLOATS) else "I" for v in values)
        return np.frombuffer(struct.pack(fmt, *values), np.uint32).copy()
    except (struct.error, OverflowError):  # negative ints, floats beyond float32 (-> inf)
        with np.errstate(over="ignore"):
            return np.array([int(np.float32(v).view(np.uint32)) if isinstance(v, _FLOATS)
                             else int(v) & 0xFFFFFFFF for v in values], np.uint32)


class PipelineCache:
    def __init__(self, manager, capacity: int = 512):
        self._mgr = manager
        self._lru: OrderedDict = OrderedDict()
        self.capacity = capacity
        self.stats = {"hits": 0, "misses": 0, "evictions": 0}

    def get(self, spirv_hash: str, spirv: bytes, spec: tuple, buffers, push_words: int):
        key = (spirv_hash, spec, tuple(b.serial for b in buffers), push_words)
        algo = self._lru.get(key)
        if algo is not None:
            self._lru.move_to_end(key)
            self.stats["hits"] += 1
            return algo
        self.stats["misses"] += 1
        algo = self._mgr.algorithm([b.tensor for b in buffers], spirv, (1, 1, 1),
                                   np.array(spec, np.uint32), np.zeros(max(push_words, 0), np.uint32))
        self._lru[key] = algo
        while len(self._lru) > self.capacity:
            # Dropping our reference is enough: a sequence still recording it keeps it alive.
            self._lru.popitem(last=False)
            self.stats["evictions"] += 1
        return algo

    def __len__(self):
        return len(self._lru)

    def clear(self):
        self._lru.clear()


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

    def __call__(self, buffers, push=(), groups=(1, 1, 1), barrier: bool = True) -> None:
        """Record a dispatch of `groups` workgroups over `buffers` (bindings 0..n-1), followed by a
        global barrier unless `barrier` is False (see Stream.dispatch)."""
        groups = tuple(groups) + (1,) * (3 - len(groups))
        limits = self.rt.device.max_workgroup_count
        if not (0 < groups[0] <= limits[0] and 0 < groups[1] <= limits[1] and 0 < groups[2] <= limits[2]):
            raise ValueError(f"{self.shader}: dispatch {groups} outside 1..{limits}")
        words = pack_push(push)
        algo = self.rt.pipelines.get(self.spirv_hash, self.spirv, self.spec, buffers, len(words))
        self.rt.stream.dispatch(algo, words, groups, barrier)
