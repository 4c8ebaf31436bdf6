"""Recipes: an op's dispatches, captured on its first call and replayed for the same signature.

Planning an op in Python (promotion, broadcasting, tile choice, splits under the loop budget)
costs several times more host time than recording its dispatches. An op decorated with
@recipe is planned once per signature: the first call runs normally while the stream captures
what it records (the buffers it allocates, each dispatch's pipeline, bindings, push constants and
grid); later calls with the same signature allocate the same buffers and record the same
dispatches, skipping the planner.

The signature is everything the plan may depend on: each Array argument's shape, dtype and
offset and which arguments share storage; every other argument by value (floats by their bits,
so -0.0 and NaN are told apart); the device, the loop budget, the environment variables the op
declares and the value of its `key` function (module state its planner reads, as QR's
TUNE). Ops whose recording is not a pure function of that (uploads, reads, fills other than
poisoning, buffers that are neither an argument nor allocated by the op) are run plainly every
time: the capture notices and marks the signature.
"""
from __future__ import annotations

import functools
import os
import threading

import numpy as np

from .. import runtime
from ..array import Array, Storage
from ..runtime.memory import POISON
from . import launch


CAPACITY = 4096        # signatures kept (the oldest dropped first: a hit costs no reordering)
_PLAIN = object()      # a signature whose op cannot be replayed
_cache: dict = {}
_stats = {"hits": 0, "captures": 0, "plain": 0}


_persistent: dict = {}  # id(kp tensor) -> Storage that lives as long as the runtime


def persistent(array: Array) -> None:
    """Let recipes bind `array`'s storage by reference: a runtime-wide buffer an op keeps (e.g.
    reduce's self-resetting tile counters), held alive by every recipe that binds it."""
    _persistent[id(array.buffer.tensor)] = array._storage


class _Unkeyable(Exception):
    """An argument with no cheap, exact key (host data, lists of arrays): run the op plainly."""


def _key_of(x, arrays: list):
    t = type(x)
    if t is Array:
        arrays.append(x)
        return (x.shape, x.dtype, x.offset)
    if t is float:
        return (float, x.hex())
    if t is int or t is bool or t is str or x is None:
        return (t, x)
    if t is tuple:
        return tuple(_key_of(v, arrays) for v in x)
    if isinstance(x, np.generic):
        return (x.dtype, x.tobytes())
    if isinstance(x, (np.dtype, type)):
        return x
    raise _Unkeyable


class Capture:
    """What the stream records while an op is planned (Stream.capture points here)."""

    def __init__(self, inputs: list, poisons: bool):
        self.thread = threading.get_ident()
        self.poisons = poisons
        self.storages: list = []      # allocated by the op, in order (kept alive until the end)
        self.roles: dict = {}         # id(kp tensor) -> binding role
        self.steps: list = []
        self.fixed: list = []         # persistent storages bound by reference
        self.poisoning = None
        self.ok = True
        for s in inputs:
            self.roles.setdefault(id(s.buffer.tensor), len(self.roles))
        self.inputs = len(self.roles)

    def allocated(self, storage) -> None:
        if threading.get_ident() == self.thread:
            self.storages.append(storage)
            self.roles[id(storage.buffer.tensor)] = self.inputs + len(self.storages) - 1
            if self.poisons:  # Storage fills it with POISON next
                self.poisoning = id(storage.buffer.tensor)

    def dispatch(self, pipeline, tensors, push: bytes, groups, barrier: bool, fuse=None) -> None:
        roles = []
        for t in tensors:
            role = self.roles.get(id(t))
            if role is None:
                kept = _persistent.get(id(t))
                if kept is None:
                    self.ok = False  # a buffer the signature does not determine
                    role = -1
                else:  # bound by reference; the recipe keeps it alive
                    self.fixed.append(kept)
                    role = self.roles[id(t)] = ("fixed", len(self.fixed) - 1)
            roles.append(role)
        self.steps.append((pipeline, tuple(roles), push, tuple(groups), barrier, fuse))

    def fill(self, tensor, word: int) -> None:
        # Storage's poisoning of a buffer it just allocated is redone by Storage on replay; any
        # other fill (even of the same word) belongs to the op and is not replayed
        if word != POISON or id(tensor) != self.poisoning:
            self.ok = False
        self.poisoning = None

    def other(self) -> None:
        """An upload, a download or a submit: not replayable."""
        self.ok = False


class Recipe:
    __slots__ = ("words", "steps", "result", "fixed", "native", "barrier")

    def __init__(self, words, steps, result, fixed, native):
        self.words = words      # words of each buffer the op allocates
        self.steps = steps      # (pipeline, roles, push, groups, barrier, fuse)
        self.result = result    # ('array', role, shape, dtype, offset), ('arg', i) or ('tuple', parts)
        self.fixed = fixed      # persistent storages the steps bind
        self.native = native    # the steps as one kp.Steps (Stream.native_steps), or None
        self.barrier = bool(steps) and steps[-1][4]  # the last step ends with a global barrier

    def replay(self, rt, inputs: list, arrays: list):
        """Allocate the op's buffers and record its steps: under the runtime's lock, with no
        capture running (op checked both)."""
        storages = inputs + [Storage(w) for w in self.words]
        if self.fixed:
            storages += self.fixed
        tensors = [s.buffer.tensor for s in storages]
        if self.native is not None:
            rt.stream.record_native(self.native, tensors, self.barrier)
        else:
            rt.stream.record_steps(self.steps, tensors)
        result = self.result
        if result[0] == "array":  # the common case, inline
            return Array(storages[result[1]], result[2], result[3], result[4])
        return _build(result, storages, arrays)


def _recipe(cap: Capture, spec) -> Recipe:
    """The capture's steps with fixed roles numbered after the inputs and new buffers."""
    first = cap.inputs + len(cap.storages)

    def index(role):
        return first + role[1] if type(role) is tuple else role
    steps = tuple((pipe, tuple(map(index, roles)), push, groups, barrier, fuse)
                  for pipe, roles, push, groups, barrier, fuse in cap.steps)
    return Recipe(tuple(s.buffer.words for s in cap.storages), steps, spec, tuple(cap.fixed),
                  runtime.get().stream.native_steps(steps))


def _build(spec, storages, arrays):
    kind = spec[0]
    if kind == "array":
        _, role, shape, dtype, offset = spec
        return Array(storages[role], shape, dtype, offset)
    if kind == "arg":  # an argument returned as it is (gemm's c)
        return arrays[spec[1]]
    return tuple(_build(s, storages, arrays) for s in spec[1])


def _describe(result, roles: dict, arrays: list):
    """The result in roles (None where it is not made of arrays on known storage)."""
    if isinstance(result, Array):
        for i, a in enumerate(arrays):
            if a is result:
                return ("arg", i)
        role = roles.get(id(result._storage.buffer.tensor))
        return None if role is None else ("array", role, result.shape, result.dtype, result.offset)
    if isinstance(result, tuple) and result:
        parts = [_describe(r, roles, arrays) for r in result]
        return None if None in parts else ("tuple", tuple(parts))
    return None


def recipe(env: tuple = (), key=None):
    """Decorate an op whose recording depends only on its signature (see the module docstring);
    `env`: the environment variables its planner reads; `key`: None, or a function of no
    arguments whose (hashable) value is part of the signature."""
    state = key

    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            rt = runtime.get()
            stream = rt.stream
            if stream.capture is not None:  # inside another op's capture: plan plainly
                return fn(*args, **kwargs)
            arrays: list = []
            try:
                key = [fn, id(rt.device), launch.loop_budget()]
                for x in args:  # _key_of, unrolled for the common arguments: this is the hot path
                    t = type(x)
                    if t is Array:
                        arrays.append(x)
                        key.append((x.shape, x.dtype, x.offset))
                    elif t is float:
                        key.append(x.hex())
                    elif t is int or t is bool or x is None:
                        key.append((t, x))
                    else:
                        key.append(_key_of(x, arrays))
                if kwargs:
                    key.append(_key_of(tuple(sorted(kwargs.items())), arrays))
                if env:
                    key.append(tuple(map(os.environ.get, env)))
                if state is not None:
                    key.append(state())
            except _Unkeyable:
                return fn(*args, **kwargs)
            storages = [a._storage for a in arrays]
            if len(storages) > 1:  # which arguments share storage is part of the plan
                key.append(tuple(map(storages.index, storages)))
                storages = list(dict.fromkeys(storages))
            key = tuple(key)
            with rt.lock:
                found = _cache.get(key)
                if found is _PLAIN:
                    _stats["plain"] += 1
                    return fn(*args, **kwargs)
                if found is not None:
                    _stats["hits"] += 1
                    return found.replay(rt, storages, arrays)
                cap = stream.capture = Capture(storages, rt.poison)
                try:
                    result = fn(*args, **kwargs)
                finally:
                    stream.capture = None
                spec = _describe(result, cap.roles, arrays) if cap.ok else None
                _cache[key] = _PLAIN if spec is None else _recipe(cap, spec)
                _stats["captures"] += 1
                while len(_cache) > CAPACITY:
                    del _cache[next(iter(_cache))]
                return result
        return op
    return wrap


def stats() -> dict:
    return dict(_stats, cached=len(_cache))


def clear() -> None:
    """Forget every recipe and zero the counters (tests that swap the device or a planner)."""
    _cache.clear()
    _stats.update(dict.fromkeys(_stats, 0))
