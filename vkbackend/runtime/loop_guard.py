"""A loop budget on any device: SPIR-V rewritten to end its loops the way lavapipe does.

lavapipe (Mesa's gallivm, lp_bld_ir_common.c) gives every shader invocation one counter of
LP_MAX_TGSI_LOOP_ITERATIONS = 65535, decremented at the end of every iteration of every loop the
JIT did not unroll, and leaves the loop once it reaches 0: silently, with whatever was computed.
`instrument` puts the same counter into a SPIR-V module with a smaller start, so that tests can
run every kernel under a small budget (VKBACKEND_LOOP_BUDGET) and a planner that ignores the
budget gives wrong numbers at small, fast sizes, on lavapipe and on GPUs alike.

Counted: every loop whose OpLoopMerge does not ask for unrolling (lavapipe unrolls the
[[unroll]] loops, whose trip counts our shaders fix at compile time); the counter is one
Private variable, shared by all loops and functions of an invocation, as lavapipe's is. As on
lavapipe, a loop of n iterations costs n + 1 + L: one at the end of each iteration, checked there,
and on the way out one more for itself and one for each of the L counted loops nested in its body
(lavapipe runs the body once more with every lane masked off, and each nested loop passes its end
once in it; measured there: 70000 passes of an outer loop around an empty inner one end after
32768). Not modelled: a counted loop inside an [[unroll]] loop inside a counted loop is one loop
here but several copies in lavapipe's dead pass.
"""
from __future__ import annotations

import struct

_MAGIC = 0x07230203
# Opcodes used below.
_OP = dict(EntryPoint=15, TypeBool=20, TypeInt=21, TypePointer=32, Constant=43, Function=54,
           Variable=59, Load=61, Store=62, ISub=130, SGreaterThan=173, LogicalOr=166,
           LogicalAnd=167, LogicalNot=168, Phi=245, LoopMerge=246, Label=248, Branch=249,
           BranchConditional=250, Undef=1, FunctionCall=57)
_PRIVATE = 6            # StorageClass Private
_UNROLL = 0x1           # LoopControl Unroll
_TERMINATORS = {249, 250, 251, 252, 253, 254, 255, 4416}


class _Module:
    def __init__(self, spirv: bytes):
        if len(spirv) % 4:
            raise ValueError("SPIR-V length is not a multiple of 4")
        words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
        if words[0] != _MAGIC:
            raise ValueError("not a little-endian SPIR-V module")
        self.header = words[:5]
        self.insts: list[list[int]] = []
        i = 5
        while i < len(words):
            n = words[i] >> 16
            if n == 0:
                raise ValueError(f"malformed SPIR-V: zero-length instruction at word {i}")
            self.insts.append(words[i:i + n])
            i += n

    def new_id(self) -> int:
        self.header[3] += 1
        return self.header[3] - 1

    def bytes(self) -> bytes:
        words = self.header + [w for inst in self.insts for w in inst]
        return struct.pack(f"<{len(words)}I", *words)


def _inst(op: str, *operands: int) -> list[int]:
    return [((len(operands) + 1) << 16) | _OP[op], *operands]


def _opcode(inst) -> int:
    return inst[0] & 0xFFFF


def instrument(spirv: bytes, budget: int) -> bytes:
    """`spirv` with every non-unrolled loop ending once the invocation has run `budget`
    iterations in all (counted at each loop's back edge, as lavapipe counts)."""
    if not 1 <= budget < 2**31:
        raise ValueError(f"loop budget {budget}: expected 1 .. 2**31 - 1")
    mod = _Module(spirv)
    insts = mod.insts
    first_fn = next(i for i, x in enumerate(insts) if _opcode(x) == _OP["Function"])

    def find_type(op: str, *operands: int) -> int | None:
        for x in insts[:first_fn]:
            if _opcode(x) == _OP[op] and x[2:] == list(operands):
                return x[1]
        return None

    glob: list[list[int]] = []
    t_bool = find_type("TypeBool")
    if t_bool is None:
        t_bool = mod.new_id()
        glob.append(_inst("TypeBool", t_bool))
    t_uint = find_type("TypeInt", 32, 0)
    if t_uint is None:
        t_uint = mod.new_id()
        glob.append(_inst("TypeInt", t_uint, 32, 0))
    t_ptr, c_budget, c_one, c_zero, ctr = (mod.new_id() for _ in range(5))
    glob += [_inst("TypePointer", t_ptr, _PRIVATE, t_uint),
             _inst("Constant", t_uint, c_budget, budget), _inst("Constant", t_uint, c_one, 1),
             _inst("Constant", t_uint, c_zero, 0), _inst("Variable", t_ptr, ctr, _PRIVATE, c_budget)]
    if mod.header[1] >= 0x10400:  # SPIR-V 1.4+: every global an entry point uses is in its interface
        for i, x in enumerate(insts[:first_fn]):
            if _opcode(x) == _OP["EntryPoint"]:
                insts[i] = x + [ctr]
                insts[i][0] = (len(insts[i]) << 16) | _OP["EntryPoint"]

    # Blocks: label id -> (index of OpLabel, index of the terminator), in layout order.
    blocks: dict[int, tuple[int, int]] = {}
    label_at = None
    for i in range(first_fn, len(insts)):
        op = _opcode(insts[i])
        if op == _OP["Label"]:
            label_at = i
        elif op in _TERMINATORS and label_at is not None:
            blocks[insts[label_at][1]] = (label_at, i)
            label_at = None

    # Counted loops nested in a loop's body (by layout: glslang lays a loop's blocks out between its
    # header and its merge block), with those of the functions it calls.
    fn_of, fn_start = {}, None
    for i in range(first_fn, len(insts)):
        op = _opcode(insts[i])
        if op == _OP["Function"]:
            fn_start = insts[i][2]
        fn_of[i] = fn_start

    def counted(i: int) -> bool:
        return _opcode(insts[i]) == _OP["LoopMerge"] and not insts[i][3] & _UNROLL

    calls: dict[int, list[int]] = {}
    own: dict[int, int] = {}
    for i in range(first_fn, len(insts)):
        f = fn_of[i]
        own[f] = own.get(f, 0) + counted(i)
        if _opcode(insts[i]) == _OP["FunctionCall"]:
            calls.setdefault(f, []).append(insts[i][3])

    def loops_in_fn(f: int, seen=()) -> int:
        if f in seen:
            raise ValueError(f"recursive call to %{f}")
        return own.get(f, 0) + sum(loops_in_fn(g, seen + (f,)) for g in calls.get(f, []))

    def nested(lo: int, hi: int) -> int:
        return sum(counted(i) + (loops_in_fn(insts[i][3]) if _opcode(insts[i]) == _OP["FunctionCall"] else 0)
                   for i in range(lo + 1, hi))

    def successors(term) -> list[int]:
        op = _opcode(term)
        if op == _OP["Branch"]:
            return [term[1]]
        if op == _OP["BranchConditional"]:
            return [term[2], term[3]]
        return []

    edits: dict[int, list[list[int]]] = {}   # terminator index -> replacement instructions
    undefs: dict[int, int] = {}              # type id -> OpUndef id, for OpPhi in merge blocks
    for i in range(first_fn, len(insts)):
        x = insts[i]
        if _opcode(x) != _OP["LoopMerge"] or x[3] & _UNROLL:
            continue
        merge = x[1]
        header = next(lab for lab, (a, b) in blocks.items() if a < i <= b)
        h_at = blocks[header][0]
        backs = [lab for lab, (a, b) in blocks.items() if a >= h_at and header in successors(insts[b])]
        if len(backs) != 1 or backs[0] == header:
            raise ValueError(f"loop at %{header}: back edges from {backs}, expected one block after the header")
        back = backs[0]
        b_at, t_at = blocks[back]
        term = insts[t_at]
        old, new, ok = mod.new_id(), mod.new_id(), mod.new_id()
        seq = [_inst("Load", t_uint, old, ctr), _inst("ISub", t_uint, new, old, c_one),
               _inst("Store", ctr, new), _inst("SGreaterThan", t_bool, ok, new, c_zero)]
        if _opcode(term) == _OP["Branch"]:
            seq.append(_inst("BranchConditional", ok, header, merge))
        else:
            cond, t_true, t_false = term[1], term[2], term[3]
            if {t_true, t_false} != {header, merge}:
                raise ValueError(f"loop at %{header}: back edge leads to %{t_true}/%{t_false}, "
                                 f"expected the header and the merge block %{merge}")
            both = mod.new_id()
            if t_true == header:
                seq.append(_inst("LogicalAnd", t_bool, both, cond, ok))
            else:
                nok = mod.new_id()
                seq += [_inst("LogicalNot", t_bool, nok, ok), _inst("LogicalOr", t_bool, both, cond, nok)]
            seq.append(_inst("BranchConditional", both, t_true, t_false))
        edits[t_at] = seq
        m_at = blocks[merge][0]
        j = m_at + 1
        if merge not in successors(term):  # a new edge into the merge block: its OpPhis learn it
            while _opcode(insts[j]) == _OP["Phi"]:
                ty = insts[j][1]
                if ty not in undefs:
                    undefs[ty] = mod.new_id()
                    glob.append(_inst("Undef", ty, undefs[ty]))
                insts[j] = insts[j] + [undefs[ty], back]
                insts[j][0] = (len(insts[j]) << 16) | _OP["Phi"]
                j += 1
        while _opcode(insts[j]) == _OP["Phi"]:
            j += 1
        # The exit's extra count (1 + the nested loops'), after the merge block's OpPhis (edits
        # are keyed by the instruction they follow, here the label or the last OpPhi).
        extra = 1 + nested(i, m_at)
        c_extra = mod.new_id()
        glob.append(_inst("Constant", t_uint, c_extra, extra))
        old2, new2 = mod.new_id(), mod.new_id()
        edits[j - 1] = [insts[j - 1], _inst("Load", t_uint, old2, ctr),
                        _inst("ISub", t_uint, new2, old2, c_extra), _inst("Store", ctr, new2)]

    out = insts[:first_fn] + glob
    for i in range(first_fn, len(insts)):
        out += edits.get(i, [insts[i]])
    mod.insts = out
    return mod.bytes()
