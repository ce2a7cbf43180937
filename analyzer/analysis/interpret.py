"""The symbolic IR interpreter: runs a kernel once and records every access it reaches.

Values are expressions over threadIdx/blockIdx/blockDim/gridDim, parameters and loop counters
(analysis.symbolic); pointers are (region, byte offset) (`values.Ptr`). Branch conditions
become the access's mask; if/else joins become `select`; device functions are inlined; a
loop's induction variables become `init + k*step` (or a symbol walked value by value for
`s *= 2`, `s >>= 1`), and every other variable the loop writes becomes unknown (`loops.py`).
Each access reached is an `Occurrence`, which `costing.cost_occurrence` charges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from analyzer import budget
from analyzer.analysis import loops
from analyzer.analysis import symbolic as S
from analyzer.analysis.facts import NO_FACTS, stated
from analyzer.analysis.float_trees import skipped_operands
from analyzer.analysis.node_facts import deeply_nested, if_converted, struct_of
from analyzer.analysis.pure import ABSENT, ABSENTS, PURE_NODES, READS, ValueMemo, pure_reads, trip_reads
from analyzer.analysis.replay import LoopMemo
from analyzer.analysis.results import LaunchConfig
from analyzer.analysis.symbolic import Origin
from analyzer.analysis.values import (
    THREAD_SET,
    LoopCtx,
    LoopKind,
    Occurrence,
    Ptr,
    StructParam,
    Value,
    lane_dependent,
    lane_varying,
    struct_fields,
)
from analyzer.arch import Architecture
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.nodes import AccessOp, OpaqueKind, Space
from analyzer.ir.visit import Visitor
from analyzer.records import record
from analyzer.roomy_stack import roomy_stack

_spend = budget.spend  # looked up once: `eval` spends a step for each of 935,000 expressions (five corpora)
_meter_now = budget.current_meter  # (`eval` and `stmt` write `spend` out)

__all__ = ["Ctx", "Flow", "Interpreter"]

MAX_INLINE_DEPTH = 16
MAX_INLINED_STATEMENTS = 50_000  # per kernel; past it, calls are not followed (and it is said)
LOOP_STEPS = 64  # the budget's steps a loop costs before its body runs: walks of its statements
COSTED_SPACES = (Space.SHARED, Space.GLOBAL)

#: A value a thread holds in a register, by (region, offset, bytes, mask): see `Interpreter.held`.
HeldKey = tuple[str, S.Expr, int, S.Expr]


@record(frozen=False, slots=False)
class Flow:
    """How a block of statements ended."""

    returned: Condition | None = None  # the condition under which the block returned (built when read)
    value: Value = None
    broke: bool = False


#: How a statement that neither returns nor breaks ended: one object for all of them, which
#: no one changes (`block` makes its own `Flow`). tf32TensorCoreGemm.cu interprets 79,000
#: statements, and a record's `__init__` is a Python call.
_CARRIED_ON = Flow()


class _Deferred:
    """A condition not built yet: `left op right` (op ``&&`` or ``||``), either side negated
    where said, each side built or not; once built, kept (`built`) for every reader. What a
    branch's mask and the condition under which a block returned stand for until read
    (`built`): the branches of inlined helpers that make no access read neither. Never a
    number: both sides of one are conditions that are not (an `if`'s on a number runs one
    branch, and a block that surely returned stops), and `&&`, `||` and `!` of such give none."""

    __slots__ = ("built", "left", "negate_left", "negate_right", "op", "right")
    is_const = False

    def __init__(
        self, op: str, left: S.Expr | _Deferred, right: S.Expr | _Deferred, negate_left: bool, negate_right: bool
    ) -> None:
        self.op, self.left, self.right = op, left, right
        self.negate_left, self.negate_right = negate_left, negate_right
        self.built: S.Expr | None = None


Condition = S.Expr | _Deferred  # a condition, built or not (`built`)


def _under(outer: Condition, cond: Condition, negated: bool = False) -> _Deferred:
    """`outer && cond` (`outer && !cond`, `negated`), built when read."""
    return _Deferred("&&", outer, cond, False, negated)


def built(cond: Condition) -> S.Expr:
    """The condition `cond` stands for, built as `logical_and`, `logical_or` and `logical_not`
    would have built it where it was made, its sides first (left, then right); without
    recursion, however deep the conditions nest."""
    if not isinstance(cond, _Deferred):
        return cond
    if cond.built is not None:
        return cond.built
    stack: list[_Deferred] = [cond]
    while stack:
        top = stack[-1]
        pending = [side for side in (top.left, top.right) if isinstance(side, _Deferred) and side.built is None]
        if pending:
            stack.extend(reversed(pending))  # the left built first, as it was
            continue
        stack.pop()
        if top.built is not None:
            continue
        left = top.left.built if isinstance(top.left, _Deferred) else top.left
        assert left is not None
        if top.negate_left:
            left = S.logical_not(left)
        right = top.right.built if isinstance(top.right, _Deferred) else top.right
        assert right is not None
        if top.negate_right:
            right = S.logical_not(right)
        top.built = S.logical_and(left, right) if top.op == "&&" else S.logical_or(left, right)
    assert cond.built is not None
    return cond.built


class Ctx:
    """Where the interpreter is: the condition under which a lane runs, the enclosing loops,
    the call it was inlined through. The mask of a branch is built when it is first read
    (`under`): the branches of inlined helpers that make no access need none (interval.cu's
    interval arithmetic: `logical_and` and `logical_not` about a fifth of its check)."""

    __slots__ = ("_mask", "kernel_level", "loops", "via")

    def __init__(self, mask: Condition, loops: tuple[LoopCtx, ...], via: str | None, kernel_level: bool) -> None:
        self._mask = mask
        self.loops = loops
        self.via = via
        self.kernel_level = kernel_level

    @property
    def mask(self) -> S.Expr:
        mask = self._mask
        if isinstance(mask, _Deferred):
            mask = self._mask = built(mask)
        return mask

    def in_loop(self, loop: LoopCtx) -> Ctx:
        """The same lanes, inside `loop` as well: the mask as it is, built or not."""
        return Ctx(self._mask, (*self.loops, loop), self.via, self.kernel_level)

    def past(self, returned: Condition) -> None:
        """Narrow the mask to the lanes where `returned` fails: the rest of a block runs where
        it did not return (built when read)."""
        self._mask = _under(self._mask, returned, True)

    def under(self, cond: S.Expr, negated: bool = False) -> Ctx:
        """The context of the lanes where `cond` holds (fails, `negated`), its mask not built yet."""
        return Ctx(_under(self._mask, cond, negated), self.loops, self.via, self.kernel_level)

    def within(self, via: str | None, kernel_level: bool) -> Ctx:
        """The same lanes and loops, inlined through `via`: the mask as it is, built or not."""
        return Ctx(self._mask, self.loops, via, kernel_level)


@record
class HeldValue:
    """The access that loaded or stored a value a thread holds, and the space it is in."""

    access: N.Access
    space: Space


def _is_int_type(t: T.CType) -> bool:
    return isinstance(t, T.ScalarType) and not t.is_float


class Interpreter(Visitor):
    """Runs a kernel's IR once, symbolically (see the module docstring): `occurrences` holds
    every access reached, `notes` the limits the run hit (calls not followed). One
    `visit_<NodeClass>` per IR node: expressions give a `Value`, statements a `Flow`."""

    #: the expressions whose values `eval` remembers (`analysis.pure`; none: worked out each time)
    remembered: frozenset[type] = PURE_NODES
    #: whether a loop reached again alike is replayed (`analysis.replay`; False: interpreted each time)
    replays: bool = True
    inlined_limit = MAX_INLINED_STATEMENTS  # (`replay` reads it)

    def __init__(self, module: N.Module, launch: LaunchConfig, params: dict[str, int], arch: Architecture) -> None:
        self.module = module
        self.launch = launch
        self.params = params
        self.arch = arch
        self.occurrences: list[Occurrence] = []
        self.loop_uid = 0
        self.notes: list[str] = []
        self.depth = 0
        self.work = 0  # statements interpreted inside inlined calls
        self.stopped_inlining = False
        # values a thread holds in registers -> the access that loaded or stored them. nvcc
        # loads `data[tid].x` once in `data[tid].x * data[tid].x` and reads back a value it
        # has just stored from the register (measured on an H200)
        self.held: dict[HeldKey, HeldValue] = {}
        self.facts = NO_FACTS  # stated by `__assume` and the like, reached by every thread so far
        self.region_bytes: dict[str, int] = {}  # the size of each array a `Ptr` region names
        # runs of shared accesses nvcc may merge (`window_of`): numbered, a new number when one ends
        self.windows = 0
        self.load_window = self.store_window = 0
        self.store_region: str | None = None
        self.memo = ValueMemo()  # pure expressions' values (`analysis.pure`)
        self.loop_memo = LoopMemo() if self.replays else None  # loops' runs (`analysis.replay`)
        self.recording = 0  # how many runs of loops `loop_memo` is recording now
        self.joined: list[int] = []  # the if/else statements joined while recording, by id

    # ------------------------------------------------------------------ values
    def param_value(self, var: N.Variable, kernel_param: bool) -> Value:
        t = var.type
        if isinstance(t, T.PointerType):
            space = Space.GLOBAL if kernel_param else Space.UNKNOWN
            return Ptr(f"param:{var.name}", space, S.const(0), self.arch.global_pointer_alignment)
        if isinstance(t, T.StructType) and not t.is_vector:
            return StructParam(var.name, kernel_param)
        if var.name in self.params:
            return S.const(self.params[var.name])
        if _is_int_type(t):
            return S.sym(var.name)
        return S.unknown(var.name, Origin.PARAMETER)

    def builtin(self, name: str) -> S.Expr:
        """A built-in variable's value: the launch's block and grid sizes where known, the
        architecture's warp size, else its symbol (`threadIdx.x`, `blockIdx.y`)."""
        spec = builtins.BUILTINS[name]
        kind, axis = spec.kind, spec.axis
        if kind is BuiltinKind.BLOCK_SIZE and self.launch.block is not None and axis is not None:
            return S.const(self.launch.block[axis])
        if kind is BuiltinKind.GRID_SIZE and self.launch.grid is not None and axis is not None:
            return S.const(self.launch.grid[axis])
        if kind is BuiltinKind.WARP_SIZE:
            return S.const(self.arch.warp_size)
        return S.sym(name)

    def eval(self, e: N.Expr, env: dict[int, Value], ctx: Ctx) -> Value:
        """The value of `e` (its `visit_<class>`), recording the accesses it makes; a pure
        expression's remembered (`analysis.pure`). `pure_reads` and `ValueMemo.key` are written
        out here, the key hashed once (by the look-up, which raises for a struct's fields):
        one frame a level of nesting, and three Python calls fewer an expression looked up
        (tf32TensorCoreGemm.cu looks up 119,000 of the 242,000 it evaluates). `budget.spend`
        is written out too where it spends a step: every expression evaluated, 242,000 frames."""
        cls = e.__class__
        if cls in self.remembered:
            known = READS.get(id(e))
            reads = known[1] if known is not None and known[0] is e else pure_reads(e)
            if reads is not None:
                n = len(reads)
                if n == 1:  # the key of one or two reads written out (see `block` for the figures)
                    key: tuple = (id(e), env.get(reads[0], ABSENT))
                elif n == 2:
                    key = (id(e), env.get(reads[0], ABSENT), env.get(reads[1], ABSENT))
                else:
                    key = (id(e), *map(env.get, reads, ABSENTS))
                try:
                    seen = self.memo.values.get(key)
                except TypeError:  # a struct's fields among the values read: not remembered
                    seen, reads = None, None
                if seen is not None:
                    _spend(seen[1])
                    return seen[0]
                if reads is not None:
                    mark = self.memo.mark()
                    _spend()  # an expression evaluated (analyzer.budget)
                    value = self.visits[cls](self, e, env, ctx)
                    self.memo.keep(key, value, mark)
                    return value
        meter = _meter_now()  # an expression evaluated (analyzer.budget)
        if meter is not None:
            meter.left -= 1
            if meter.left < 0:
                raise budget.BudgetExceeded(meter.stage, meter.limit)
        return self.visits[cls](self, e, env, ctx)

    def visit_Const(self, e: N.Const, env: dict[int, Value], ctx: Ctx) -> Value:
        if isinstance(e.value, float) or (isinstance(e.type, T.ScalarType) and e.type.is_float):
            return S.unknown("float", Origin.FLOAT)
        return S.const(int(e.value))

    def visit_VarRef(self, e: N.VarRef, env: dict[int, Value], ctx: Ctx) -> Value:
        var = e.var
        if var.uid in env:
            return env[var.uid]
        if isinstance(var.type, T.ArrayType) or var.kind in ("shared", "global", "constant"):
            named = (Space.SHARED, Space.GLOBAL, Space.CONSTANT)
            space = Space(var.space) if var.space in named else Space.LOCAL
            # a shared array starts at bank 0 of a costing period; other memory as cudaMalloc's
            align = self.arch.address_period if space == Space.SHARED else self.arch.global_pointer_alignment
            region = f"{space}:{var.name}#{var.uid}"
            if var.type.size:
                self.region_bytes[region] = var.type.size
            return Ptr(region, space, S.const(0), align)
        if var.const_value is not None:
            return S.const(var.const_value)
        return S.unknown(f"uninitialised {var.name}", Origin.UNINITIALISED)

    def visit_Builtin(self, e: N.Builtin, env: dict[int, Value], ctx: Ctx) -> Value:
        return self.builtin(e.name)

    def visit_Binary(self, e: N.Binary, env: dict[int, Value], ctx: Ctx) -> Value:
        if e.type.__class__ is T.ScalarType and e.type.is_float and skipped_operands(self, e, env):  # (`float_trees`)
            return S.unknown("float", Origin.FLOAT)
        a = self.eval(e.left, env, ctx)
        b = self.eval(e.right, env, ctx)
        return self.binary(e.op, a, b, e)

    def visit_Unary(self, e: N.Unary, env: dict[int, Value], ctx: Ctx) -> Value:
        a = self.eval(e.operand, env, ctx)
        if not isinstance(a, S.Expr):
            return S.unknown("pointer op", Origin.UNMODELLED)
        if e.op == "-":
            return -a
        if e.op == "~":
            return ~a
        if e.op == "!":
            return S.logical_not(a)
        return S.unknown(e.op, Origin.UNMODELLED)

    def visit_Select(self, e: N.Select, env: dict[int, Value], ctx: Ctx) -> Value:
        # each side runs only in the lanes that choose it: a load in `c ? a[i] : 0` is
        # made by the lanes where c holds
        c = self.eval(e.cond, env, ctx)
        cond = c if isinstance(c, S.Expr) else S.unknown("condition", Origin.UNMODELLED)
        a = self.eval(e.then, env, ctx.under(cond))
        b = self.eval(e.otherwise, env, ctx.under(cond, negated=True))
        return self.join(c, a, b)

    def visit_PtrAdd(self, e: N.PtrAdd, env: dict[int, Value], ctx: Ctx) -> Value:
        base = self.eval(e.base, env, ctx)
        off = self.eval(e.offset, env, ctx)
        if isinstance(base, Ptr) and isinstance(off, S.Expr):
            return Ptr(base.region, base.space, base.offset + off, base.align)
        return None

    def visit_Cast(self, e: N.Cast, env: dict[int, Value], ctx: Ctx) -> Value:
        v = self.eval(e.operand, env, ctx)
        if isinstance(e.type, T.ScalarType):
            if e.type.is_float:
                return S.unknown("float", Origin.FLOAT)
            if isinstance(v, S.Expr) and isinstance(e.operand.type, T.ScalarType) and e.operand.type.is_float:
                return S.unknown("float to int", Origin.FLOAT)
        return v

    def visit_Load(self, e: N.Load, env: dict[int, Value], ctx: Ctx) -> Value:
        ptr = self.record(e.access, env, ctx)
        if isinstance(e.type, T.PointerType):
            return None
        if not deeply_nested(e):
            # evaluated again, as always: the inner loads recorded again are reuses, which the
            # reports say; deeper, that doubled the work per level of `p[q[q[...]]]`
            ptr = self.eval(e.access.address, env, ctx)
        return self.loaded_value(e.access, ptr)

    def visit_Call(self, e: N.Call, env: dict[int, Value], ctx: Ctx) -> Value:
        if e.atomic is not None:
            for a in e.args:
                self.eval(a, env, ctx)
            self.record(e.atomic, env, ctx)
            return S.unknown(f"result of {e.name}", Origin.LOADED)
        args = [self.eval(a, env, ctx) for a in e.args]
        spec = _builtin(e.name)
        if (
            spec is not None
            and spec.kind is BuiltinKind.MIN_MAX
            and len(args) == 2
            and all(isinstance(a, S.Expr) for a in args)
        ):
            return _MIN_MAX[spec.operation](*args)
        fn = self.module.functions.get(e.name)
        if fn is not None:
            return self.inline(fn, args, ctx)
        return S.unknown(f"call {e.name}", Origin.CALL_RESULT)

    def visit_FieldRef(self, e: N.FieldRef, env: dict[int, Value], ctx: Ctx) -> Value:
        base = self.eval(e.base, env, ctx)
        if isinstance(base, StructParam):
            return base.fields[e.name] if e.name in base.fields else self.param_field(base, e)
        if isinstance(base, dict) and e.name in base:
            return base[e.name]
        return S.unknown(e.name, Origin.UNMODELLED)

    def param_field(self, param: StructParam, e: N.FieldRef) -> Value:
        """A field of a struct parameter the code did not assign: named `A.width`, its value
        given (`--param A.width=64`) or a symbol; a pointer field points to global memory
        when the struct is a parameter of the kernel itself."""
        name = f"{param.name}.{e.name}"
        if isinstance(e.type, T.PointerType):
            space = Space.GLOBAL if param.kernel else Space.UNKNOWN
            return Ptr(f"field:{name}", space, S.const(0), self.arch.global_pointer_alignment)
        if name in self.params:
            return S.const(self.params[name])
        return S.sym(name) if _is_int_type(e.type) else S.unknown(name, Origin.PARAMETER)

    def visit_StructValue(self, e: N.StructValue, env: dict[int, Value], ctx: Ctx) -> Value:
        return {k: self.eval(v, env, ctx) for k, v in e.fields.items()}

    def visit_Opaque(self, e: N.Opaque, env: dict[int, Value], ctx: Ctx) -> Value:
        operands = [self.eval(op, env, ctx) for op in e.operands]
        spec = _builtin(e.callee) if e.kind is OpaqueKind.CALL and e.callee else None
        if spec is not None and spec.kind is BuiltinKind.ASSUME:
            self.assume(e, env, ctx)
            return S.const(1)
        self.held.clear()  # a barrier, or a call warplint does not follow
        self.break_windows()
        if e.kind is OpaqueKind.CALL:
            return S.unknown(e.reason, Origin.CALL_RESULT, lane_varying=call_varies(spec, operands))
        # `tile.thread_rank()`, `g.meta_group_rank()`, a call through a pointer: may differ between lanes
        varies = e.kind in (OpaqueKind.METHOD_CALL, OpaqueKind.INDIRECT_CALL)
        return S.unknown(e.reason, Origin.UNMODELLED, lane_varying=varies)

    def assume(self, e: N.Opaque, env: dict[int, Value], ctx: Ctx) -> None:
        """Take the condition of `__assume(c)` (`__builtin_assume`, `assert`) as a fact of the
        kernel when every thread reaches it: not under a condition (an early return included),
        not in a loop (whose counter it may name). Later accesses are costed with it."""
        if not e.operands or not (ctx.mask.is_const and ctx.mask.value) or ctx.loops:
            return
        self.facts = self.facts.merged(stated(e.operands[0], lambda x: self.eval(x, env, ctx)))

    def binary(self, op: str, a: Value, b: Value, e: N.Binary) -> Value:
        if not isinstance(a, S.Expr) or not isinstance(b, S.Expr):
            return S.unknown("pointer comparison", Origin.UNMODELLED)
        if isinstance(e.type, T.ScalarType) and e.type.is_float:
            return S.unknown("float", Origin.FLOAT)
        operation = _BINARY.get(op)
        if operation is None:
            return S.unknown(op, Origin.UNMODELLED)
        try:
            return operation(a, b)
        except (ZeroDivisionError, ValueError, OverflowError):
            return S.unknown(op, Origin.UNMODELLED)

    def join(self, c: Value, a: Value, b: Value) -> Value:
        if a is b:
            return a
        if isinstance(a, S.Expr) and isinstance(b, S.Expr):
            if not isinstance(c, S.Expr):
                return S.unknown("join", Origin.JOIN)
            return S.select(c, a, b)
        if isinstance(a, Ptr) and isinstance(b, Ptr) and a.region == b.region and isinstance(c, S.Expr):
            return Ptr(a.region, a.space, S.select(c, a.offset, b.offset), min(a.align, b.align))
        if isinstance(a, StructParam) and isinstance(b, StructParam) and (a.name, a.kernel) == (b.name, b.kernel):
            return StructParam(a.name, a.kernel, self.join_fields(c, a.fields, b.fields))
        if isinstance(a, (dict, StructParam)) and isinstance(b, (dict, StructParam)):
            # two different structs: what either assigned is known, the rest is not
            return self.join_fields(c, struct_fields(a), struct_fields(b))
        return None if isinstance(a, Ptr) or isinstance(b, Ptr) else S.unknown("join", Origin.JOIN)

    def join_fields(self, c: Value, a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
        return {k: self.join(c, a.get(k), b.get(k)) for k in set(a) | set(b)}

    # ------------------------------------------------------------------ accesses
    def loaded_value(self, access: N.Access, ptr: Value) -> S.Expr:
        """The unknown value read by a load at `ptr` (its address); it may differ between
        lanes when its address does."""
        uniform = isinstance(ptr, Ptr) and not (ptr.offset.free_symbols & THREAD_SET) and not lane_varying(ptr.offset)
        return S.unknown(f"value of {access.text}", Origin.LOADED, lane_varying=not uniform)

    def record(self, access: N.Access, env: dict[int, Value], ctx: Ctx) -> Value:
        """Record `access` as reached under `ctx`; returns the value of its address."""
        ptr = self.eval(access.address, env, ctx)
        struct = struct_of(access)
        occ = Occurrence(access, ptr if isinstance(ptr, Ptr) else None, ctx.mask, ctx.loops, ctx.via, struct)
        occ.facts = self.facts
        occ.region_bytes = self.region_bytes.get(ptr.region) if isinstance(ptr, Ptr) else None
        occ.window = self.window_of(access, ptr if isinstance(ptr, Ptr) else None)
        self.occurrences.append(occ)
        size = access.element.size
        if not isinstance(ptr, Ptr) or not size or access.volatile or ptr.space not in COSTED_SPACES:
            if access.op != AccessOp.LOAD:
                self.held.clear()  # a store we cannot place may change anything
            return ptr
        key = (ptr.region, ptr.offset, size, ctx.mask)
        if access.op == AccessOp.LOAD:
            occ.reuses = self.holder(ptr, size, ctx.mask)
            if occ.reuses is None:
                self.held[key] = HeldValue(access, ptr.space)
            return ptr
        # a store or an atomic: what the thread held in this space may have changed, unless
        # it is in the same array at bytes the store provably does not touch (two pointers
        # into one space may alias); a plain store's own value is then held
        self.held = {k: h for k, h in self.held.items() if h.space != ptr.space or _disjoint(k, ptr, size)}
        if access.op == AccessOp.STORE:
            self.held[key] = HeldValue(access, ptr.space)
        return ptr

    def window_of(self, access: N.Access, ptr: Ptr | None) -> int | None:
        """The run of accesses nvcc may merge `access` with (`merge.merge_adjacent`), or None.
        ptxas merges shared loads that no shared store or atomic (of any array) separates, and
        shared stores to one array that no other shared access separates; barriers, fences,
        calls and control flow end every run (`break_windows`). An access whose space is not
        known may be a shared one."""
        space = ptr.space if ptr is not None else Space.UNKNOWN
        if space not in (Space.SHARED, Space.UNKNOWN):
            return None
        if space == Space.UNKNOWN or access.volatile or access.op == AccessOp.ATOMIC:
            if access.op == AccessOp.LOAD:
                self.store_window = self.new_window()
            else:
                self.break_windows()
            return None
        if access.op == AccessOp.LOAD:
            self.store_window = self.new_window()  # a shared load ends a run of stores
            return self.load_window
        self.load_window = self.new_window()  # a shared store ends a run of loads
        if ptr is not None and ptr.region != self.store_region:
            self.store_window = self.new_window()
            self.store_region = ptr.region
        return self.store_window

    def new_window(self) -> int:
        self.windows += 1
        return self.windows

    def break_windows(self) -> None:
        """End every run of accesses nvcc may merge: a barrier, a call, a branch, a loop.
        (Two `new_window`s written out: tf32TensorCoreGemm.cu breaks them 51,612 times.)"""
        windows = self.windows
        self.load_window, self.store_window = windows + 1, windows + 2
        self.windows = windows + 2
        self.store_region = None

    def holder(self, ptr: Ptr, size: int, mask: S.Expr) -> N.Access | None:
        """The access whose value covers the `size` bytes at `ptr` for lanes under `mask`."""
        exact = self.held.get((ptr.region, ptr.offset, size, mask))
        if exact is not None:
            return exact.access
        covered: list[tuple[int, int, N.Access]] = []
        conditions = S.conjuncts(mask)
        # whether each held value's condition is implied, asked once per condition: the values
        # held are mostly under a few (myocyte/main.cu's unrolled loops: `conjuncts` 2.8% of its check)
        implied: dict[S.Expr, bool] = {}
        for (region, offset, nbytes, m), held in self.held.items():
            if region != ptr.region:
                continue
            holds = implied.get(m)
            if holds is None:
                holds = implied[m] = S.conjuncts(m) <= conditions
            if not holds:  # held by every lane that runs now: loaded under a condition this one implies
                continue
            delta = S.spent_difference(offset, ptr.offset)  # (`offset - ptr.offset`, not built)
            if delta is not None and delta < size and delta + nbytes > 0:
                covered.append((delta, delta + nbytes, held.access))
        reach = 0
        for start, end, _ in sorted(covered, key=lambda c: c[:2]):
            if start > reach:
                return None
            reach = max(reach, end)
        return covered[0][2] if covered and reach >= size and min(c[0] for c in covered) <= 0 else None

    # ------------------------------------------------------------------ statements
    @roomy_stack  # the recursion below maps and unmaps frame-stack blocks otherwise (roomy_stack)
    def run_kernel(self, kernel: N.Function) -> None:
        env: dict[int, Value] = {}
        for p in kernel.params:
            env[p.uid] = self.param_value(p, True)
        ctx = Ctx(S.const(1), (), None, True)
        self.block(kernel.body, env, ctx)

    def inline(self, fn: N.Function, args: list[Value], ctx: Ctx) -> Value:
        if self.depth >= MAX_INLINE_DEPTH:
            return S.unknown(f"call {fn.name} (inlining too deep)", Origin.CALL_RESULT)
        if self.work >= MAX_INLINED_STATEMENTS:
            # helpers calling helpers many times over (interval arithmetic) multiply: stop
            # following calls rather than run for minutes, and say so
            if not self.stopped_inlining:
                self.stopped_inlining = True
                self.notes.append(
                    f"calls past the first {MAX_INLINED_STATEMENTS:,} statements of inlined code "
                    "were not followed: their accesses are not checked and their results are unknown"
                )
            return S.unknown(f"call {fn.name} (not followed)", Origin.CALL_RESULT)
        env: dict[int, Value] = {}
        for p, a in zip(fn.params, args):
            env[p.uid] = a if a is not None else self.param_value(p, False)
        inner = ctx.within(ctx.via or f"inlined from {fn.name}", False)
        self.depth += 1
        try:
            result = self.block(fn.body, env, inner)
        finally:
            self.depth -= 1
        return result.value if result.value is not None else S.unknown(f"result of {fn.name}", Origin.CALL_RESULT)

    def block(self, stmts: list[N.Stmt], env: dict[int, Value], ctx: Ctx) -> Flow:
        """How `stmts` ended: `_CARRIED_ON` unless one returned or broke (a `Flow` made only
        then: tf32TensorCoreGemm.cu interprets 26,000 blocks, and few return). With `eval`'s
        key of one or two reads written out (a `map` and a star less: 1,800 and 1,100 callgrind
        instructions fewer a key), its check under callgrind, 2026-11-28: 9.20 G -> 9.04 G."""
        flow: Flow | None = None
        for s in stmts:
            f = self.stmt(s, env, ctx)
            if f is _CARRIED_ON:
                continue
            if flow is None:
                flow = Flow()
            if f.returned is not None:
                # an early `return` under a condition masks the rest of the block
                if f.value is not None:
                    flow.value = f.value if flow.value is None else flow.value
                cond = f.returned
                if isinstance(cond, S.Expr) and cond.is_const and cond.value:  # (a `_Deferred` is no number)
                    flow.returned = S.const(1)
                    return flow
                ctx.past(cond)
                flow.returned = cond if flow.returned is None else _Deferred("||", flow.returned, cond, False, False)
            if f.broke:
                flow.broke = True
                return flow
        return flow if flow is not None else _CARRIED_ON

    def stmt(self, s: N.Stmt, env: dict[int, Value], ctx: Ctx) -> Flow:
        meter = _meter_now()  # a statement interpreted (analyzer.budget)
        if meter is not None:
            meter.left -= 1
            if meter.left < 0:
                raise budget.BudgetExceeded(meter.stage, meter.limit)
        if ctx.via is not None:
            self.work += 1
        return self.visits[s.__class__](self, s, env, ctx)

    def visit_Assign(self, s: N.Assign, env: dict[int, Value], ctx: Ctx) -> Flow:
        value = self.eval(s.value, env, ctx)
        if not s.field:
            env[s.var.uid] = value
            return _CARRIED_ON
        env[s.var.uid] = _with_field(env.get(s.var.uid), s.field, value)
        return _CARRIED_ON

    def visit_Store(self, s: N.Store, env: dict[int, Value], ctx: Ctx) -> Flow:
        self.eval(s.value, env, ctx)
        self.record(s.access, env, ctx)
        return _CARRIED_ON

    def visit_Eval(self, s: N.Eval, env: dict[int, Value], ctx: Ctx) -> Flow:
        self.eval(s.expr, env, ctx)
        return _CARRIED_ON

    def visit_Loop(self, s: N.Loop, env: dict[int, Value], ctx: Ctx) -> Flow:
        if self.loop_memo is not None:
            self.loop_memo.visit(self, s, env, ctx)
        else:
            self.run_loop(s, env, ctx)
        return _CARRIED_ON

    def run_loop(self, s: N.Loop, env: dict[int, Value], ctx: Ctx) -> None:
        """Interpret the loop `s`: unrolled where it is worth it, else its body once for all."""
        budget.spend(LOOP_STEPS)  # what it writes, its inductions and trips, worked out (analyzer.budget)
        self.held.clear()  # each iteration loads again (the body is interpreted once for all)
        self.break_windows()  # nvcc's unrolled copies are not merged here: see `MayVectorize`
        try:
            if not self.unrolled(s, env, ctx):
                self.loop_once(s, env, ctx)
        finally:
            self.held.clear()
            self.break_windows()

    def visit_Return(self, s: N.Return, env: dict[int, Value], ctx: Ctx) -> Flow:
        value = self.eval(s.value, env, ctx) if s.value is not None else None
        return Flow(returned=S.const(1), value=value)

    def visit_Break(self, s: N.Stmt, env: dict[int, Value], ctx: Ctx) -> Flow:
        return Flow(broke=True)  # `break` and `continue` alike end the body interpreted once

    visit_Continue = visit_Break

    def visit_LaunchStmt(self, s: N.LaunchStmt, env: dict[int, Value], ctx: Ctx) -> Flow:
        return _CARRIED_ON  # a launch from device code starts another grid: this thread touches nothing

    def visit_Skipped(self, s: N.Skipped, env: dict[int, Value], ctx: Ctx) -> Flow:
        for v in s.writes:
            env[v.uid] = S.unknown(f"{v.name} (written by a skipped statement)", Origin.SKIPPED)
        self.held.clear()
        self.break_windows()
        return _CARRIED_ON

    def visit_Sync(self, s: N.Sync, env: dict[int, Value], ctx: Ctx) -> Flow:
        self.held.clear()  # other threads' stores become visible
        self.break_windows()
        return _CARRIED_ON

    def visit_If(self, s: N.If, env: dict[int, Value], ctx: Ctx) -> Flow:
        c = self.eval(s.cond, env, ctx)
        if not isinstance(c, S.Expr):
            c = S.unknown("condition", Origin.UNMODELLED)
        if c.is_const:
            return self.block(s.then if c.value else s.otherwise, env, ctx)
        if self.recording:
            self.joined.append(id(s))  # its join may read what a branch assigns (`analysis.replay`)
        then_env = dict(env)
        else_env = dict(env)
        then_ctx = ctx.under(c)
        else_ctx = ctx.under(c, negated=True)
        held = dict(self.held)
        start = len(self.occurrences)
        self.break_windows()  # accesses in different blocks are not merged (a conservative rule)
        f1 = self.block(s.then, then_env, then_ctx)
        then_held, self.held = self.held, dict(held)
        self.break_windows()
        f2 = self.block(s.otherwise, else_env, else_ctx)
        self.break_windows()
        self.mark_if_converted(s, start)
        # after the join a thread holds what it held before and neither branch changed
        self.held = {k: a for k, a in held.items() if then_held.get(k) is a and self.held.get(k) is a}
        for uid in set(then_env) | set(else_env):
            a, b = then_env.get(uid), else_env.get(uid)
            if a is b:
                env[uid] = a
            elif f1.returned is not None and f1.returned.is_const and f2.returned is None:
                env[uid] = b
            elif f2.returned is not None and f2.returned.is_const and f1.returned is None:
                env[uid] = a
            else:
                env[uid] = self.join(c, a, b)
        return _joined_flow(c, f1, f2)

    def mark_if_converted(self, s: N.If, start: int) -> None:
        """Mark the loads recorded since `start` that nvcc may merge into one (`ifconvert`)."""
        for accesses, uids in if_converted(s):
            for occ in self.occurrences[start:]:
                if occ.access.uid in uids:
                    others = (a.text for a in accesses if a.uid != occ.access.uid)
                    occ.if_converted = tuple(dict.fromkeys(others))

    # ------------------------------------------------------------------ loops
    def unrolled(self, s: N.Loop, env: dict[int, Value], ctx: Ctx) -> bool:
        """Run a short counted loop iteration by iteration when an address in it depends on a
        value the loop carries other than by a constant step (`loops.unroll_inductions`): each
        iteration's accesses are then exact. False (and nothing done) for any other loop, or
        when its trip count is not a number of at most `loops.MAX_UNROLL`."""
        inductions = loops.shape(s).unroll
        if inductions is None:
            return False
        trips = self.remembered_trips(s, inductions, env, ctx)
        if trips is None:
            return False
        for st in s.init:
            self.stmt(st, env, ctx)
        for _ in range(trips):
            self.held.clear()
            self.break_windows()
            self.block(s.body, env, ctx)
            for st in s.step:
                self.stmt(st, env, ctx)
        return True

    def remembered_trips(self, s: N.Loop, inductions: loops.Inductions, env: dict[int, Value], ctx: Ctx) -> int | None:
        """`trip_count`, remembered by the loop and the values it reads (`pure.trip_reads`) with
        the steps it spent, which a remembered count spends again. The loops nested in an
        unrolled one are reached once per trip with the same bounds: tf32TensorCoreGemm.cu
        walked 3,214 trip counts for 5 loops (its check under callgrind, 2026-11-28, with
        `S.unknown`'s frames written out: 10.11 G -> 9.44 G instructions)."""
        if not self.remembered:  # the memo switched off (tests)
            return self.trip_count(s, inductions, env, ctx)
        reads = trip_reads(s, inductions)
        if reads is None:
            return self.trip_count(s, inductions, env, ctx)
        key = ValueMemo.key(s, reads, env)
        if key is None:  # a struct's fields among the values read
            return self.trip_count(s, inductions, env, ctx)
        seen = self.memo.trips.get(key)
        if seen is not None:
            _spend(seen[1])
            return seen[0]
        mark = self.memo.mark()
        trips = self.trip_count(s, inductions, env, ctx)
        self.memo.keep_trips(key, trips, mark)
        return trips

    def trip_count(self, s: N.Loop, inductions: loops.Inductions, env: dict[int, Value], ctx: Ctx) -> int | None:
        """The trips of a counted loop from its initialisation and inductions alone."""
        trial = dict(env)
        for st in s.init:
            assert isinstance(st, N.Assign)  # `unroll_inductions` took no other loop
            trial[st.var.uid] = self.eval(st.value, trial, ctx)
        trips = 0
        while True:
            c = self.eval(s.cond, trial, ctx) if s.cond is not None else None
            if not isinstance(c, S.Expr) or not c.is_const:
                return None
            if not c.value:
                return trips
            trips += 1
            if trips > loops.MAX_UNROLL:
                return None
            for var, (op, step_expr) in inductions.items():
                current, by = trial.get(var.uid), self.eval(step_expr, trial, ctx)
                if not (isinstance(current, S.Expr) and isinstance(by, S.Expr)):
                    return None
                trial[var.uid] = loops.step(op, current, by)

    def loop_once(self, s: N.Loop, env: dict[int, Value], ctx: Ctx) -> None:
        """Interpret a loop's body once for all its iterations, under a new `LoopCtx`."""
        self.loop_uid += 1
        uid = self.loop_uid
        for st in s.init:
            self.stmt(st, env, ctx)
        shape = loops.shape(s)
        writes, found = shape.writes, shape.inductions
        loop_env = dict(env)
        # a variable the loop changes other than by a known step is unknown inside it; it may
        # differ between lanes (`pos = (pos + 1) % 32` with `pos = threadIdx.x` before)
        per_lane = loops.lane_dependent_in_loop(shape.assigned, writes, env)
        for var_uid in writes:
            loop_env[var_uid] = S.unknown("modified in loop", Origin.LOOP_CARRIED, var_uid in per_lane)
        loop_ctx = self.bind_inductions(s, uid, found, env, loop_env, ctx)
        if self.recording:
            self.loop_memo.made.append(loop_ctx)  # type: ignore[union-attr]  # (recording: there is one)
        inner = ctx.in_loop(loop_ctx)
        body_env = dict(loop_env)
        self.block(s.body, body_env, inner)
        for st in s.step:
            self.stmt(st, dict(body_env), inner)
        for var_uid in writes:
            env[var_uid] = S.unknown("value after a loop", Origin.LOOP_CARRIED, var_uid in per_lane)

    def bind_inductions(
        self, s: N.Loop, uid: int, found: loops.Inductions, env: dict[int, Value], loop_env: dict[int, Value], ctx: Ctx
    ) -> LoopCtx:
        """Write each induction in `loop_env` as a function of the loop's counter (`init + k*step`,
        or the counter itself for a lone multiplicative one) and make the loop's `LoopCtx`."""
        counter = f"k@{uid}"
        k = S.sym(counter)
        for var, (op, step_expr) in found.items():
            if op not in ("+", "-"):
                continue
            init = env.get(var.uid)
            by = self.eval(step_expr, env, ctx)
            if isinstance(init, S.Expr) and isinstance(by, S.Expr) and not (by.free_symbols & {counter}):
                loop_env[var.uid] = init + k * by if op == "+" else init - k * by
            elif isinstance(init, Ptr) and isinstance(by, S.Expr):
                size = (var.type.pointee.size or 1) if isinstance(var.type, T.PointerType) else 1
                delta = k * by * size
                loop_env[var.uid] = Ptr(
                    init.region, init.space, init.offset + (delta if op == "+" else -delta), init.align
                )
        kind, init_value, mop, mstep = LoopKind.ADDITIVE, None, "", 0
        multiplicative = [(v, op, c) for v, (op, c) in found.items() if op in ("*", "/", "<<", ">>")]
        if len(multiplicative) == 1 and not any(op in ("+", "-") for op, _ in found.values()):
            var, op, step_expr = multiplicative[0]
            init = env.get(var.uid)
            by = self.eval(step_expr, env, ctx)
            if isinstance(init, S.Expr) and isinstance(by, S.Expr) and by.is_const:
                counter = f"{var.name}@{uid}"
                loop_env[var.uid] = S.sym(counter)
                kind, init_value, mop, mstep = LoopKind.MULTIPLICATIVE, init, op, by.value
        cond = self.eval(s.cond, loop_env, ctx) if s.cond is not None else None
        if cond is not None and not isinstance(cond, S.Expr):
            cond = S.unknown("loop condition", Origin.UNMODELLED)
        if not s.test_first:
            cond = None  # a do-while body runs at least once; its trip count is not walked
        return LoopCtx(uid, counter, cond, kind, init_value, mop, mstep)


_BINARY: dict[str, Callable[[S.Expr, S.Expr], S.Expr]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    **{op: functools.partial(S.compare, op) for op in ("<", "<=", ">", ">=", "==", "!=")},
    "&&": S.logical_and,
    "||": S.logical_or,
}


_MIN_MAX: dict[str, Callable[[S.Expr, S.Expr], S.Expr]] = {"min": S.minimum, "max": S.maximum}


#: `builtins.lookup` by the name called (the table never changes): interval.cu's inlined
#: interval arithmetic calls 25,000 intrinsics and helpers, each name split at its `::` again
#: (its check under callgrind, 2026-11-29: 4.545 G -> 4.520 G instructions).
_BUILTIN_OF: dict[str, builtins.BuiltinSpec | None] = {}


def _builtin(name: str) -> builtins.BuiltinSpec | None:
    """`builtins.lookup(name)`, remembered (`_BUILTIN_OF`)."""
    try:
        return _BUILTIN_OF[name]
    except KeyError:
        spec = _BUILTIN_OF[name] = builtins.lookup(name)
        return spec


def call_varies(spec: builtins.BuiltinSpec | None, operands: list[Value]) -> bool:
    """Whether what a call warplint does not follow returns may differ between the lanes of a
    warp. A builtin's value is fixed by its arguments unless its record says otherwise (a
    shuffle); any other function's body is not seen, and it may read threadIdx or memory itself
    (a `laneId()` takes no argument), so its result may differ whatever its arguments."""
    if spec is None:
        return True
    if spec.kind is BuiltinKind.SHUFFLE and spec.operation == "idx":
        # `__shfl_sync(mask, v, 0)`: every lane reads lane 0's value, unless a width splits the warp
        rest = operands[1:] if spec.takes_mask else operands
        width = rest[2] if len(rest) > 2 else None
        whole_warp = width is None or (isinstance(width, S.Expr) and width.is_const and width.value >= 32)
        return len(rest) < 2 or lane_dependent(rest[1]) or not whole_warp
    return spec.lane_varying or any(lane_dependent(v) for v in operands)


def _joined_flow(c: S.Expr, f1: Flow, f2: Flow) -> Flow:
    """How an if/else with condition `c` ended, from how its branches did."""
    flow = Flow()
    r1 = _Deferred("&&", c, f1.returned, False, False) if f1.returned is not None else None
    r2 = _Deferred("&&", c, f2.returned, True, False) if f2.returned is not None else None
    if r1 is not None and r2 is not None:
        flow.returned = _Deferred("||", r1, r2, False, False)
    else:
        flow.returned = r1 if r1 is not None else r2
    flow.value = f1.value if f1.value is not None else f2.value
    return flow


def _with_field(struct: Value, path: tuple[str, ...], value: Value) -> Value:
    """A copy of the struct value `struct` (fields, a struct parameter, or nothing known yet)
    whose field at `path` (`("a", "b")` for `s.a.b`) is `value`."""
    if isinstance(struct, StructParam):
        return StructParam(struct.name, struct.kernel, _with_field(struct.fields, path, value))
    fields = dict(struct) if isinstance(struct, dict) else {}
    fields[path[0]] = value if len(path) == 1 else _with_field(fields.get(path[0]), path[1:], value)
    return fields


def _disjoint(key: HeldKey, ptr: Ptr, size: int) -> bool:
    """Whether a held value `key` lies in the same array as `size` bytes at `ptr`, apart."""
    region, offset, nbytes, _ = key
    if region != ptr.region:
        return False
    delta = S.spent_difference(offset, ptr.offset)  # (`offset - ptr.offset`, not built)
    return delta is not None and (delta >= size or delta + nbytes <= 0)
