"""Elementwise fusion: consecutive float32 elementwise dispatches run as one kernel.

A dispatch that primitives/elementwise.py marks fusible (its operation and which operands are
scalars or one element; at least MIN_ELEMENTS long: deferring costs host time, which only pays
where the GPU's time per operation outweighs it) waits in the stream instead of being recorded;
the next ones over arrays of the same length join it, reading what the earlier ones computed from
registers instead of memory. Whatever
else the stream records next (another dispatch, a copy, a fill of a buffer the chain touches, a
submit) first records the chain: as the dispatches it was made of until the same chain has
come `after` times (VKBACKEND_FUSION: a program's loop repeats its chains, a test suite's one-off
expressions would each compile a pipeline for nothing), then as one dispatch of
shaders/primitives/fused_elementwise.comp with the chain in specialization constants (one
pipeline per distinct chain, made once and kept). A fused chain does not store a result whose
array was freed before it ran (the temporaries of 1 / (1 + exp(-z))).

Why the order is kept: in a chain each buffer is bound at one offset and every operand has the
chain's length, so thread i touches element i of each binding and nothing else; reading every
input first and writing every result last is each element's own program order. A buffer at two
offsets, or of another length, ends the chain first.
"""
from __future__ import annotations

import struct
import warnings

SHADER = "primitives/fused_elementwise.comp"
# The shader's operation codes (its switch) are 1 + the position here: the operations elementwise
# programs chain most (arithmetic, activations, the logistic loss), few, since each step compiles
# all of them before they fold (lavapipe's compile time).
OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "negative", "absolute", "square",
       "exp", "log", "sqrt", "tanh", "copy")
CODES = {name: i + 1 for i, name in enumerate(OPS)}
# Elements from which an operation joins chains: below, a program of small operations is bound by
# the host, and deferring costs it more than the fewer dispatches save (tools/bench.py's programs).
MIN_ELEMENTS = 1 << 20
STEPS = 8       # operations a chain holds
BINDINGS = 8    # buffers it binds
SCALARS = 8     # scalar operands it pushes
SEEN = 4096     # chains counted before being fused (forgotten past it)
STATS = ("fused_dispatches", "fused_ops", "fusion_failures")  # vk.stats() keys
_LOAD_REG, _SCALAR_REG, _STEP_REG = 0, 8, 16  # the shader's register file
_UNFUSABLE = object()  # a chain whose pipeline could not be made: recorded unfused from then on
_PUSH = struct.Struct(f"={1 + BINDINGS + SCALARS}I")
_HEADS = [struct.Struct(f"={2 + k}I") for k in range(4)]  # n, out offset, each operand's head


def descriptor(op: str, kinds: tuple, vec4: bool, workgroup: int):
    """What a fusible elementwise dispatch tells the stream: (code, operands, scalar bit mask,
    one-element bit mask, vec4, workgroup size); None where `op` has no code here. `kinds`: per
    operand "a" (an array of the output's length), "u" (of one element, broadcast) or "s" (a
    scalar). Its push words start n, the output's offset, then each operand's offset (an array)
    or float32 bits (a scalar)."""
    code = CODES.get(op)
    if code is None or len(kinds) > 2:
        return None
    scalars = sum(1 << k for k, kind in enumerate(kinds) if kind == "s")
    uniform = sum(1 << k for k, kind in enumerate(kinds) if kind == "u")
    return (code, len(kinds), scalars, uniform, vec4, workgroup)


class Fuser:
    """The chain waiting in a stream (under its lock)."""

    def __init__(self, rt, after: int = 1):
        self._rt = rt
        self.after = after
        self._pipes: dict = {}  # specialization constants -> pipeline
        self._seen: dict = {}   # specialization constants -> times run unfused
        self.stats = dict.fromkeys(STATS, 0)
        self._clear()

    def _clear(self) -> None:
        self.ops: list = []        # the deferred dispatches: (pipeline, tensors, push, groups)
        self._n = -1
        self._workgroup = 0
        self._vec4 = True
        self._groups = (0, 1, 1)
        self._tensors: list = []   # per binding
        self._offsets: list = []
        self._binding: dict = {}   # id(tensor) -> binding
        self._value: dict = {}     # binding -> register holding its newest value
        self._loads = 0            # bit b: binding b is read from memory
        self._uniform = 0          # bit b: binding b is one element, read by every thread
        self._stores: dict = {}    # binding -> register to store (results whose array lives)
        self._scalars: list = []
        self._steps: list = []

    def add(self, stream, pipeline, tensors: list, push: bytes, groups, fuse) -> None:
        """Defer a dispatch that fusion.descriptor described (`fuse`), recording the waiting
        chain first where it cannot join it. On every elementwise operation's path: one pass."""
        code, nargs, mask, uniform, vec4, workgroup = fuse
        words = _HEADS[nargs].unpack_from(push)
        if self.ops and (words[0] != self._n or workgroup != self._workgroup or len(self.ops) >= STEPS):
            self.emit(stream)
        binding, offsets, uniforms = self._binding, self._offsets, self._uniform
        places = []  # per operand (the output first): (tensor, offset, binding or None: new, one element), None: a scalar
        new = 0
        for k in range(-1, nargs):  # -1: the output, tensors[0] at words[1]
            if k >= 0 and mask >> k & 1:
                places.append(None)
                continue
            t, offset, one = tensors[1 + k], words[2 + k], k >= 0 and uniform >> k & 1
            b = binding.get(id(t))
            if b is None:
                new += 1
                if any(p is not None and p[0] is t and (p[1] != offset or p[3] != one) for p in places):
                    b = -1
            elif offsets[b] != offset or (uniforms >> b & 1) != one:
                b = -1
            # b == -1: one buffer at two offsets, or both whole and as one element (read by every
            # thread, so never written: the output is never one element): another chain, or
            # (within this dispatch) none
            if b == -1:
                if not self.ops:
                    stream._record_now(pipeline, tensors, push, groups)
                    return
                self.emit(stream)
                return self.add(stream, pipeline, tensors, push, groups, fuse)
            places.append((t, offset, b, one))
        scalars = self._scalars
        if self.ops and (len(self._tensors) + new > BINDINGS or (
                mask and len(scalars) + len({words[2 + k] for k in range(nargs) if mask >> k & 1}
                                            .difference(scalars)) > SCALARS)):
            self.emit(stream)
            return self.add(stream, pipeline, tensors, push, groups, fuse)
        if not self.ops:
            self._n, self._workgroup, self._groups = words[0], workgroup, groups
        elif groups[0] > self._groups[0]:
            self._groups = groups
        self._vec4 = self._vec4 and vec4
        self.ops.append((pipeline, tensors, push, groups))
        value = self._value
        step = out = code
        for k in range(-1, nargs):
            place = places[1 + k]
            if place is None:  # a scalar operand
                bits = words[2 + k]
                if bits not in scalars:
                    scalars.append(bits)
                step |= (_SCALAR_REG + scalars.index(bits)) << (4 + 5 * k)
                continue
            t, offset, b, one = place
            if b is None:
                b = binding.get(id(t))  # bound by an earlier operand of this dispatch
                if b is None:
                    b = binding[id(t)] = len(self._tensors)
                    self._tensors.append(t)
                    offsets.append(offset)
                    if one:
                        self._uniform |= 1 << b
            if k < 0:
                out = b
                continue
            reg = value.get(b)
            if reg is None:
                self._loads |= 1 << b
                reg = value[b] = _LOAD_REG + b
            step |= reg << (4 + 5 * k)
        value[out] = self._stores[out] = _STEP_REG + len(self._steps)
        self._steps.append(step)

    def touches(self, tensor) -> bool:
        return id(tensor) in self._binding

    def released(self, tensor) -> None:
        """The pool took `tensor` back: the array the chain computes into it is gone, so the
        chain need not store it (the buffer may be handed out again: a later step writing it
        stores anew)."""
        b = self._binding.get(id(tensor))
        if b is not None:
            self._stores.pop(b, None)
            self._value.pop(b, None)  # a later read loads what the buffer holds then

    def emit(self, stream) -> None:
        """Record the chain into the stream and start an empty one."""
        ops, stores = self.ops, self._stores
        if not stores:  # every result freed unread
            self._clear()
            return
        pipe = None
        if len(ops) > 1:
            steps = self._steps
            spec = (len(steps), int(self._vec4), self._loads, *[stores.get(b, 0) for b in range(BINDINGS)],
                    *steps, *[0] * (STEPS - len(steps)), self._uniform)
            pipe = self._pipes.get(spec)
            if pipe is _UNFUSABLE:
                pipe = None
            elif pipe is None:
                seen = self._seen[spec] = self._seen.get(spec, 0) + 1
                if seen >= self.after:
                    del self._seen[spec]
                    try:
                        pipe = self._pipeline(spec)
                    except Exception as e:  # noqa: BLE001 - a driver or compiler failure: never fused
                        pipe = None
                        self.stats["fusion_failures"] += 1
                        warnings.warn(f"vkbackend: an elementwise chain could not be fused ({e}); its "
                                      "operations run one dispatch each", RuntimeWarning, stacklevel=2)
                    self._pipes[spec] = _UNFUSABLE if pipe is None else pipe
                elif len(self._seen) > SEEN:
                    self._seen.clear()
        if pipe is None:  # as recorded, one dispatch each (every result stored)
            self._clear()
            for pipeline, tensors, push, groups in ops:
                stream._record_now(pipeline, tensors, push, groups)
            return
        tensors, unused = self._tensors, BINDINGS - len(self._tensors)
        push = _PUSH.pack(self._n, *self._offsets, *[0] * unused, *self._scalars,
                          *[0] * (SCALARS - len(self._scalars)))
        groups = self._groups
        self.stats["fused_dispatches"] += 1
        self.stats["fused_ops"] += len(ops)
        self._clear()
        stream._record_now(pipe, tensors + [tensors[0]] * unused, push, groups)

    def _pipeline(self, spec: tuple):
        kernel = self._rt.kernel(SHADER, {}, self._workgroup, spec)
        return self._rt.pipelines.get(kernel.spirv_hash, kernel.spirv, kernel.spec, BINDINGS, _PUSH.size // 4)
