"""Per-warp addresses and costs of every shared and global access.

Two steps:
1. `Interpreter` runs a kernel's IR once, symbolically. Values are expressions over
   threadIdx/blockIdx/blockDim/gridDim, parameters and loop counters (analysis.symbolic);
   pointers are (region, byte offset). Branch conditions become the access's mask; if/else
   joins become `select`; device functions are inlined; a loop's induction variables become
   `init + k*step` (or a symbol walked value by value for `s *= 2`, `s >>= 1`), and every
   other variable the loop writes becomes unknown. Each access reached is an `Occurrence`.
2. `cost_occurrence` places lanes with the hardware model's linearisation, substitutes each
   lane's thread ids, walks the loop iterations that change the cost, and charges every warp's
   request with analysis.cost. What it cannot decide it states as an assumption.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Callable, Iterable

from analyzer.analysis import symbolic as S
from analyzer.analysis.cost import global_cost, shared_cost, split_access
from analyzer.analysis.results import AccessCost, Collision, KernelAnalysis, LaunchConfig
from analyzer.diagnostics import Diagnostic, Severity
from analyzer.arch import Architecture
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.records import record, replace

THREAD_SYMBOLS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
MAX_SCENARIOS = 2048  # iterations walked per warp and access before sampling instead
COMPILE_SCENARIOS = 2  # lane expressions are compiled to Python when walked more often than this
MAX_TRIP = 100_000
MAX_SUBSTITUTED_TRIPS = 4096  # trips counted by substitution when a bound is not compiled
MAX_MULTIPLICATIVE = 64
MAX_INLINE_DEPTH = 16
MAX_UNROLL = 64  # counted loops up to this many trips are unrolled when an address needs it
MAX_INLINED_STATEMENTS = 50_000  # per kernel; past it, calls are not followed (and it is said)
PARAM_SAMPLES = tuple(range(1, 65))
# Several unknown parameters at once are sampled more sparsely, so that their product stays
# below 150 scenarios: small values, powers of two and their neighbours, where costs change.
SPARSE_PARAM_SAMPLES = (
    (1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33),
    (1, 2, 3, 4, 8, 16, 17, 32, 33),
    (1, 2, 4, 17, 32),
)
SHARED_BASE_ALIGN = 128  # assumed alignment of a shared array's start (bank 0)


@record(slots=False)
class Ptr:
    region: str  # "param:a", "shared:tile#12", "field:A.elements", "unknown"
    space: str
    offset: S.Expr  # bytes from the region's start
    align: int  # alignment of the region's start


@record(slots=False)
class LoopCtx:
    uid: int
    counter: str  # the symbol walked: "k@12" (additive) or "s@12" (multiplicative)
    cond: S.Expr | None  # in terms of the counter; None = no condition
    kind: str  # additive multiplicative
    init: S.Expr | None = None  # multiplicative: first value
    op: str = ""  # multiplicative: * / << >>
    step: int = 0


@record(frozen=False, slots=False)
class Occurrence:
    access: N.Access
    ptr: Ptr | None
    mask: S.Expr
    loops: tuple[LoopCtx, ...]
    via: str | None
    struct_type: T.StructType | None = None
    reuses: N.Access | None = None  # the access whose value this load reuses (no request)


LANE_VARYING = "per-lane "


def _lane_varying(e: S.Expr) -> bool:
    return LANE_VARYING in str(e)


def _is_int_type(t: T.CType) -> bool:
    return isinstance(t, T.ScalarType) and not t.is_float


class Interpreter:
    def __init__(self, module: N.Module, launch: LaunchConfig, params: dict[str, int]) -> None:
        self.module = module
        self.launch = launch
        self.params = params
        self.occurrences: list[Occurrence] = []
        self.loop_uid = 0
        self.notes: list[str] = []
        self.depth = 0
        self.work = 0  # statements interpreted inside inlined calls
        self.stopped_inlining = False
        # values a thread holds in registers: (region, offset, bytes, mask) -> the access that
        # loaded or stored them. nvcc loads `data[tid].x` once in `data[tid].x * data[tid].x`
        # and reads back a value it has just stored from the register (measured on an H200)
        self.held: dict[tuple, N.Access] = {}

    # ------------------------------------------------------------------ values
    def param_value(self, var: N.Variable, kernel_param: bool) -> Any:
        t = var.type
        if isinstance(t, T.PointerType):
            return Ptr(f"param:{var.name}", "global" if kernel_param else "unknown", S.const(0), 256)
        if isinstance(t, T.StructType) and not t.is_vector:
            return {"__param__": var.name, "__kernel__": kernel_param}
        if var.name in self.params:
            return S.const(self.params[var.name])
        if _is_int_type(t):
            return S.sym(var.name)
        return S.unknown(var.name)

    def builtin(self, name: str) -> S.Expr:
        kind, axis = name.split(".")
        i = "xyz".index(axis)
        if kind == "blockDim" and self.launch.block is not None:
            return S.const(self.launch.block[i])
        if kind == "gridDim" and self.launch.grid is not None:
            return S.const(self.launch.grid[i])
        return S.sym(name)

    def eval(self, e: N.Expr, env: dict[int, Any], ctx: "Ctx") -> Any:
        if isinstance(e, N.Const):
            if isinstance(e.value, float) or (isinstance(e.type, T.ScalarType) and e.type.is_float):
                return S.unknown("float")
            return S.const(int(e.value))
        if isinstance(e, N.VarRef):
            var = e.var
            if var.uid in env:
                return env[var.uid]
            if isinstance(var.type, T.ArrayType) or var.kind in ("shared", "global", "constant"):
                space = var.space if var.space in ("shared", "global", "constant") else "local"
                return Ptr(f"{space}:{var.name}#{var.uid}", space, S.const(0), SHARED_BASE_ALIGN if space == "shared" else 256)
            if var.const_value is not None:
                return S.const(var.const_value)
            return S.unknown(f"uninitialised {var.name}")
        if isinstance(e, N.Builtin):
            return self.builtin(e.name)
        if isinstance(e, N.Binary):
            a = self.eval(e.left, env, ctx)
            b = self.eval(e.right, env, ctx)
            return self.binary(e.op, a, b, e)
        if isinstance(e, N.Unary):
            a = self.eval(e.operand, env, ctx)
            if not isinstance(a, S.Expr):
                return S.unknown("pointer op")
            if e.op == "-":
                return -a
            if e.op == "~":
                return ~a
            if e.op == "!":
                return S.logical_not(a)
            return S.unknown(e.op)
        if isinstance(e, N.Select):
            # each side runs only in the lanes that choose it: a load in `c ? a[i] : 0` is
            # made by the lanes where c holds
            c = self.eval(e.cond, env, ctx)
            cond = c if isinstance(c, S.Expr) else S.unknown("condition")
            a = self.eval(e.then, env, ctx.child(S.logical_and(ctx.mask, cond)))
            b = self.eval(e.otherwise, env, ctx.child(S.logical_and(ctx.mask, S.logical_not(cond))))
            return self.join(c, a, b)
        if isinstance(e, N.PtrAdd):
            base = self.eval(e.base, env, ctx)
            off = self.eval(e.offset, env, ctx)
            if isinstance(base, Ptr) and isinstance(off, S.Expr):
                return Ptr(base.region, base.space, base.offset + off, base.align)
            return None
        if isinstance(e, N.Cast):
            v = self.eval(e.operand, env, ctx)
            if isinstance(e.type, T.ScalarType):
                if e.type.is_float:
                    return S.unknown("float")
                if isinstance(v, S.Expr) and isinstance(e.operand.type, T.ScalarType) and e.operand.type.is_float:
                    return S.unknown("float to int")
            return v
        if isinstance(e, N.Load):
            self.record(e.access, env, ctx)
            if isinstance(e.type, T.PointerType):
                return None
            return S.unknown(self.value_tag(e.access, env, ctx))
        if isinstance(e, N.Call):
            if e.atomic is not None:
                for a in e.args:
                    self.eval(a, env, ctx)
                self.record(e.atomic, env, ctx)
                return S.unknown(f"result of {e.name}")
            args = [self.eval(a, env, ctx) for a in e.args]
            if e.name in ("min", "max") and len(args) == 2 and all(isinstance(a, S.Expr) for a in args):
                return S.minimum(*args) if e.name == "min" else S.maximum(*args)
            fn = self.module.functions.get(e.name)
            if fn is not None:
                return self.inline(fn, args, ctx)
            return S.unknown(f"call {e.name}")
        if isinstance(e, N.FieldRef):
            base = self.eval(e.base, env, ctx)
            if isinstance(base, dict):
                if e.name in base:
                    return base[e.name]
                if "__param__" in base:
                    name = f"{base['__param__']}.{e.name}"
                    if isinstance(e.type, T.PointerType):
                        return Ptr(f"field:{name}", "global" if base.get("__kernel__") else "unknown", S.const(0), 256)
                    if name in self.params:
                        return S.const(self.params[name])
                    return S.sym(name) if _is_int_type(e.type) else S.unknown(name)
            return S.unknown(e.name)
        if isinstance(e, N.StructValue):
            return {k: self.eval(v, env, ctx) for k, v in e.fields.items()}
        if isinstance(e, N.Opaque):
            for op in e.operands:
                self.eval(op, env, ctx)
            self.held.clear()  # a barrier, or a call warplint does not follow
            if e.reason.startswith("method call"):
                # `tile.thread_rank()`, `g.meta_group_rank()`: may differ between lanes
                return S.unknown(f"{LANE_VARYING}{e.reason}")
            return S.unknown(e.reason)
        return S.unknown(type(e).__name__)

    def binary(self, op: str, a: Any, b: Any, e: N.Binary) -> Any:
        if not isinstance(a, S.Expr) or not isinstance(b, S.Expr):
            return S.unknown("pointer comparison")
        if isinstance(e.type, T.ScalarType) and e.type.is_float:
            return S.unknown("float")
        try:
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                return a // b
            if op == "%":
                return a % b
            if op == "<<":
                return a << b
            if op == ">>":
                return a >> b
            if op == "&":
                return a & b
            if op == "|":
                return a | b
            if op == "^":
                return a ^ b
            if op in ("<", "<=", ">", ">=", "==", "!="):
                return S.compare(op, a, b)
            if op == "&&":
                return S.logical_and(a, b)
            if op == "||":
                return S.logical_or(a, b)
        except (ZeroDivisionError, ValueError, OverflowError):
            return S.unknown(op)
        return S.unknown(op)

    def join(self, c: Any, a: Any, b: Any) -> Any:
        if a is b:
            return a
        if isinstance(a, S.Expr) and isinstance(b, S.Expr):
            if not isinstance(c, S.Expr):
                return S.unknown("join")
            return S.select(c, a, b)
        if isinstance(a, Ptr) and isinstance(b, Ptr) and a.region == b.region and isinstance(c, S.Expr):
            return Ptr(a.region, a.space, S.select(c, a.offset, b.offset), min(a.align, b.align))
        if isinstance(a, dict) and isinstance(b, dict):
            return {k: self.join(c, a.get(k), b.get(k)) for k in set(a) | set(b)}
        return None if isinstance(a, Ptr) or isinstance(b, Ptr) else S.unknown("join")

    # ------------------------------------------------------------------ accesses
    def value_tag(self, access: N.Access, env: dict[int, Any], ctx: "Ctx") -> str:
        """The tag of a value read from memory; `LANE_VARYING` marks one read at an address
        that differs between lanes (so the value may differ too)."""
        ptr = self.eval(access.address, env, ctx)
        if isinstance(ptr, Ptr) and not (ptr.offset.free_symbols & set(THREAD_SYMBOLS)) and not _lane_varying(ptr.offset):
            return f"value of {access.text}"
        return f"{LANE_VARYING}value of {access.text}"

    def record(self, access: N.Access, env: dict[int, Any], ctx: "Ctx") -> None:
        ptr = self.eval(access.address, env, ctx)
        struct_t = _struct_of(access.address)
        occ = Occurrence(access, ptr if isinstance(ptr, Ptr) else None, ctx.mask, ctx.loops, ctx.via, struct_t)
        self.occurrences.append(occ)
        size = access.element.size
        if not isinstance(ptr, Ptr) or not size or access.volatile or ptr.space not in ("shared", "global"):
            if access.op != "load":
                self.held.clear()  # a store we cannot place may change anything
            return
        if access.op == "load":
            occ.reuses = self.holder(ptr, size, ctx.mask)
            if occ.reuses is None:
                self.held[(ptr.region, ptr.offset, size, ctx.mask)] = access
            return
        # a store or an atomic: what the thread held in this space may have changed, unless
        # it is in the same array at bytes the store provably does not touch (two pointers
        # into one space may alias); a plain store's own value is then held
        self.held = {k: a for k, a in self.held.items()
                     if _space_of_region(k[0]) != ptr.space or _disjoint(k, ptr, size)}
        if access.op == "store":
            self.held[(ptr.region, ptr.offset, size, ctx.mask)] = access

    def holder(self, ptr: Ptr, size: int, mask: S.Expr) -> N.Access | None:
        """The access whose value covers the `size` bytes at `ptr` for lanes under `mask`."""
        exact = self.held.get((ptr.region, ptr.offset, size, mask))
        if exact is not None:
            return exact
        covered: list[tuple[int, int, N.Access]] = []
        conditions = S.conjuncts(mask)
        for (region, offset, nbytes, m), acc in self.held.items():
            # held by every lane that runs now: loaded under a condition this one implies
            if region != ptr.region or not S.conjuncts(m) <= conditions:
                continue
            delta = offset - ptr.offset
            if delta.is_const and delta.value < size and delta.value + nbytes > 0:
                covered.append((delta.value, delta.value + nbytes, acc))
        reach = 0
        for start, end, _ in sorted(covered, key=lambda c: c[:2]):
            if start > reach:
                return None
            reach = max(reach, end)
        return covered[0][2] if covered and reach >= size and min(c[0] for c in covered) <= 0 else None

    # ------------------------------------------------------------------ statements
    def run_kernel(self, kernel: N.Function) -> None:
        env: dict[int, Any] = {}
        for p in kernel.params:
            env[p.uid] = self.param_value(p, True)
        ctx = Ctx(S.const(1), (), None, True)
        self.block(kernel.body, env, ctx)

    def inline(self, fn: N.Function, args: list[Any], ctx: "Ctx") -> Any:
        if self.depth >= MAX_INLINE_DEPTH:
            return S.unknown(f"call {fn.name} (inlining too deep)")
        if self.work >= MAX_INLINED_STATEMENTS:
            # helpers calling helpers many times over (interval arithmetic) multiply: stop
            # following calls rather than run for minutes, and say so
            if not self.stopped_inlining:
                self.stopped_inlining = True
                self.notes.append(f"calls past the first {MAX_INLINED_STATEMENTS:,} statements of inlined code "
                                  "were not followed: their accesses are not checked and their results are unknown")
            return S.unknown(f"call {fn.name} (not followed)")
        env: dict[int, Any] = {}
        for p, a in zip(fn.params, args):
            env[p.uid] = a if a is not None else self.param_value(p, False)
        inner = Ctx(ctx.mask, ctx.loops, ctx.via or f"inlined from {fn.name}", False)
        self.depth += 1
        try:
            result = self.block(fn.body, env, inner)
        finally:
            self.depth -= 1
        return result.value if result.value is not None else S.unknown(f"result of {fn.name}")

    def block(self, stmts: list[N.Stmt], env: dict[int, Any], ctx: "Ctx") -> "Flow":
        flow = Flow()
        for s in stmts:
            f = self.stmt(s, env, ctx)
            if f.returned is not None:
                # an early `return` under a condition masks the rest of the block
                if f.value is not None:
                    flow.value = f.value if flow.value is None else flow.value
                cond = f.returned
                if isinstance(cond, S.Expr) and cond.is_const and cond.value:
                    flow.returned = S.const(1)
                    return flow
                ctx.mask = S.logical_and(ctx.mask, S.logical_not(cond)) if isinstance(cond, S.Expr) else ctx.mask
                flow.returned = cond if flow.returned is None else S.logical_or(flow.returned, cond)
            if f.broke:
                flow.broke = True
                return flow
        return flow

    def stmt(self, s: N.Stmt, env: dict[int, Any], ctx: "Ctx") -> "Flow":
        if ctx.via is not None:
            self.work += 1
        if isinstance(s, N.Assign):
            value = self.eval(s.value, env, ctx)
            if s.field:
                current = env.get(s.var.uid)
                current = dict(current) if isinstance(current, dict) else {}
                target = current
                for name in s.field[:-1]:
                    nxt = target.get(name)
                    nxt = dict(nxt) if isinstance(nxt, dict) else {}
                    target[name] = nxt
                    target = nxt
                target[s.field[-1]] = value
                env[s.var.uid] = current
            else:
                env[s.var.uid] = value
            return Flow()
        if isinstance(s, N.Store):
            self.eval(s.value, env, ctx)
            self.record(s.access, env, ctx)
            return Flow()
        if isinstance(s, N.Eval):
            self.eval(s.expr, env, ctx)
            return Flow()
        if isinstance(s, N.If):
            return self.if_stmt(s, env, ctx)
        if isinstance(s, N.Loop):
            self.loop(s, env, ctx)
            return Flow()
        if isinstance(s, N.Return):
            value = self.eval(s.value, env, ctx) if s.value is not None else None
            return Flow(returned=S.const(1), value=value)
        if isinstance(s, N.Break):
            return Flow(broke=True)
        if isinstance(s, N.Continue):
            return Flow(broke=True)
        if isinstance(s, N.Skipped):
            for v in s.writes:
                env[v.uid] = S.unknown(f"{v.name} (written by a skipped statement)")
            self.held.clear()
            return Flow()
        if isinstance(s, N.Sync):
            self.held.clear()  # other threads' stores become visible
        return Flow()

    def if_stmt(self, s: N.If, env: dict[int, Any], ctx: "Ctx") -> "Flow":
        c = self.eval(s.cond, env, ctx)
        if not isinstance(c, S.Expr):
            c = S.unknown("condition")
        if c.is_const:
            return self.block(s.then if c.value else s.otherwise, env, ctx)
        then_env = dict(env)
        else_env = dict(env)
        then_ctx = ctx.child(S.logical_and(ctx.mask, c))
        else_ctx = ctx.child(S.logical_and(ctx.mask, S.logical_not(c)))
        held = dict(self.held)
        f1 = self.block(s.then, then_env, then_ctx)
        then_held, self.held = self.held, dict(held)
        f2 = self.block(s.otherwise, else_env, else_ctx)
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
        flow = Flow()
        r1 = S.logical_and(c, f1.returned) if f1.returned is not None else None
        r2 = S.logical_and(S.logical_not(c), f2.returned) if f2.returned is not None else None
        if r1 is not None and r2 is not None:
            flow.returned = S.logical_or(r1, r2)
        else:
            flow.returned = r1 if r1 is not None else r2
        flow.value = f1.value if f1.value is not None else f2.value
        return flow

    def loop(self, s: N.Loop, env: dict[int, Any], ctx: "Ctx") -> None:
        self.held.clear()  # each iteration loads again (the body is interpreted once for all)
        try:
            if not self.unrolled(s, env, ctx):
                self._loop(s, env, ctx)
        finally:
            self.held.clear()

    def unrolled(self, s: N.Loop, env: dict[int, Any], ctx: "Ctx") -> bool:
        """Run a short counted loop iteration by iteration when an address in it depends on a
        value the loop carries other than by a constant step (histogram64's
        `pos = (pos + 4) & 63`): each iteration's accesses are then exact. False (and nothing
        done) when the loop is not such a loop."""
        if not s.test_first or s.cond is None:
            return False
        if any(isinstance(x, (N.Break, N.Continue, N.Return, N.Skipped)) for x in N.walk_statements(s.body + s.step)):
            return False
        written = _written(s.body + s.step)
        inductions = _inductions(s.step + s.body, written)
        carried = {uid: v for uid, v in written.items() if v not in inductions}
        if not carried or _mentions(s.cond, carried):
            return False
        if not any(_mentions(acc.address, carried) for acc in _accesses_in(s.body)):
            return False
        # the trip count, from the initialisation and the inductions alone
        trial = dict(env)
        for st in s.init:
            if not isinstance(st, N.Assign) or st.field or _mentions(st.value, {}):
                return False
            trial[st.var.uid] = self.eval(st.value, trial, ctx)
        trips = 0
        while True:
            c = self.eval(s.cond, trial, ctx)
            if not isinstance(c, S.Expr) or not c.is_const:
                return False
            if not c.value:
                break
            trips += 1
            if trips > MAX_UNROLL:
                return False
            for var, (op, step_expr) in inductions.items():
                current, step = trial.get(var.uid), self.eval(step_expr, trial, ctx)
                if not (isinstance(current, S.Expr) and isinstance(step, S.Expr)):
                    return False
                trial[var.uid] = _step(op, current, step)
        for st in s.init:
            self.stmt(st, env, ctx)
        for _ in range(trips):
            self.held.clear()
            self.block(s.body, env, ctx)
            for st in s.step:
                self.stmt(st, env, ctx)
        return True

    def _loop(self, s: N.Loop, env: dict[int, Any], ctx: "Ctx") -> None:
        self.loop_uid += 1
        uid = self.loop_uid
        for st in s.init:
            self.stmt(st, env, ctx)
        written = _written(s.body + s.step)
        inductions = _inductions(s.step + s.body, written)
        k = S.sym(f"k@{uid}")
        loop_env = dict(env)
        loop_ctx: LoopCtx | None = None
        # a variable the loop changes other than by a known step is unknown inside it; it may
        # differ between lanes (`pos = (pos + 1) % 32` with `pos = threadIdx.x` before)
        per_lane = _lane_dependent_in_loop(s.body + s.step, written, env)
        for var_uid in written:
            loop_env[var_uid] = S.unknown(f"{LANE_VARYING if var_uid in per_lane else ''}modified in loop")
        multiplicative = [(v, op, c) for v, (op, c) in inductions.items() if op in ("*", "/", "<<", ">>")]
        for var, (op, step_expr) in inductions.items():
            if op not in ("+", "-"):
                continue
            init = env.get(var.uid)
            step = self.eval(step_expr, env, ctx)
            if isinstance(init, S.Expr) and isinstance(step, S.Expr) and not (step.free_symbols & {f"k@{uid}"}):
                loop_env[var.uid] = init + k * step if op == "+" else init - k * step
            elif isinstance(init, Ptr) and isinstance(step, S.Expr):
                size = (var.type.pointee.size or 1) if isinstance(var.type, T.PointerType) else 1
                delta = k * step * size
                loop_env[var.uid] = Ptr(init.region, init.space, init.offset + (delta if op == "+" else -delta), init.align)
        counter = f"k@{uid}"
        kind = "additive"
        init_value = None
        mop, mstep = "", 0
        if multiplicative and len(multiplicative) == 1 and not any(op in ("+", "-") for op, _ in inductions.values()):
            var, mop, step_expr = multiplicative[0]
            init = env.get(var.uid)
            step = self.eval(step_expr, env, ctx)
            if isinstance(init, S.Expr) and isinstance(step, S.Expr) and step.is_const:
                counter = f"{var.name}@{uid}"
                loop_env[var.uid] = S.sym(counter)
                kind = "multiplicative"
                init_value = init
                mstep = step.value
        cond = self.eval(s.cond, loop_env, ctx) if s.cond is not None else None
        if cond is not None and not isinstance(cond, S.Expr):
            cond = S.unknown("loop condition")
        if not s.test_first:
            cond = None  # a do-while body runs at least once; its trip count is not walked
        loop_ctx = LoopCtx(uid, counter, cond, kind, init_value, mop, mstep)
        inner = ctx.child(ctx.mask)
        inner.loops = ctx.loops + (loop_ctx,)
        body_env = dict(loop_env)
        self.block(s.body, body_env, inner)
        for st in s.step:
            self.stmt(st, dict(body_env), inner)
        for var_uid in written:
            env[var_uid] = S.unknown(f"{LANE_VARYING if var_uid in per_lane else ''}value after a loop")


@record(frozen=False, slots=False)
class Flow:
    returned: S.Expr | None = None  # the condition under which the block returned
    value: Any = None
    broke: bool = False


@record(frozen=False, slots=False)
class Ctx:
    mask: S.Expr
    loops: tuple[LoopCtx, ...]
    via: str | None
    kernel_level: bool

    def child(self, mask: S.Expr) -> "Ctx":
        return Ctx(mask, self.loops, self.via, self.kernel_level)


def _struct_of(address: N.Expr) -> T.StructType | None:
    """For `data[tid].x` (a field of an element in memory), the element's struct type."""
    if isinstance(address, N.PtrAdd) and isinstance(address.offset, N.Const):
        base_t = address.base.type
        if isinstance(base_t, T.PointerType) and isinstance(base_t.pointee, T.StructType):
            return base_t.pointee
    if isinstance(address.type, T.PointerType) and isinstance(address.type.pointee, T.StructType):
        return address.type.pointee
    return None


def _lane_dependent(value: Any) -> bool:
    """Whether an interpreted value may differ between the lanes of a warp."""
    if isinstance(value, Ptr):
        value = value.offset
    if isinstance(value, dict):
        return any(_lane_dependent(v) for v in value.values())
    return isinstance(value, S.Expr) and (bool(value.free_symbols & _THREAD_SET) or _lane_varying(value))


def _lane_dependent_in_loop(stmts: list[N.Stmt], written: dict[int, N.Variable], env: dict[int, Any]) -> set[int]:
    """The variables written in a loop whose values may differ between lanes: lane-dependent
    before the loop, or assigned from something lane-dependent in it (to a fixed point).
    A statement that was skipped counts as lane-dependent for what it writes."""
    dependent = {uid for uid in written if _lane_dependent(env.get(uid))}
    assigns: list[tuple[int, N.Expr | None]] = []
    for st in N.walk_statements(stmts):
        if isinstance(st, N.Assign):
            assigns.append((st.var.uid, st.value))
        elif isinstance(st, N.Skipped):
            assigns.extend((v.uid, None) for v in st.writes)

    def depends(e: N.Expr | None) -> bool:
        if e is None:
            return True
        stack: list[Any] = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, N.Builtin):
                if x.name.startswith("threadIdx") or x.name == "laneid":
                    return True
            elif isinstance(x, N.VarRef):
                uid = x.var.uid
                if uid in dependent or (uid not in written and _lane_dependent(env.get(uid))):
                    return True
            elif isinstance(x, N.Load):
                stack.append(x.access.address)
            elif isinstance(x, N.Call) and x.name.startswith(("__shfl", "atomic")):
                return True
            stack.extend(N.sub_expressions(x))
        return False

    changed = True
    while changed:
        changed = False
        for uid, value in assigns:
            if uid not in dependent and depends(value):
                dependent.add(uid)
                changed = True
    return dependent


def _written(stmts: list[N.Stmt]) -> dict[int, N.Variable]:
    out: dict[int, N.Variable] = {}
    for s in N.walk_statements(stmts):
        if isinstance(s, N.Assign):
            out[s.var.uid] = s.var
        elif isinstance(s, N.Skipped):
            for v in s.writes:
                out[v.uid] = v
    return out


def _step(op: str, value: S.Expr, step: S.Expr) -> S.Expr:
    """`value op step` for an induction variable's update."""
    return {"+": lambda: value + step, "-": lambda: value - step, "*": lambda: value * step,
            "/": lambda: S.floordiv(value, step), "<<": lambda: S.shl(value, step),
            ">>": lambda: S.shr(value, step)}[op]()


def _accesses_in(stmts: list[N.Stmt]) -> Iterable[N.Access]:
    """The memory accesses of statements (stores, loads and atomics, at any depth)."""
    return (x for x in N.walk_nodes(stmts) if isinstance(x, N.Access))


def _inductions(stmts: list[N.Stmt], written: dict[int, N.Variable]) -> dict[N.Variable, tuple[str, N.Expr]]:
    """Variables updated once per iteration as `v = v op invariant` at the top level of the loop."""
    found: dict[N.Variable, tuple[str, N.Expr]] = {}
    counts: dict[int, int] = {}
    for s in N.walk_statements(stmts):
        if isinstance(s, N.Assign) and not s.field:
            counts[s.var.uid] = counts.get(s.var.uid, 0) + 1
    for s in stmts:
        if not isinstance(s, N.Assign) or s.field or counts.get(s.var.uid) != 1:
            continue
        v = s.value
        if isinstance(v, N.PtrAdd) and isinstance(v.base, N.VarRef) and v.base.var is s.var:
            off = v.offset
            if isinstance(off, N.Binary) and off.op == "*" and isinstance(off.right, N.Const):
                if not _mentions(off.left, written):
                    found[s.var] = ("+", off.left)
            continue
        if isinstance(v, N.Binary) and isinstance(v.left, N.VarRef) and v.left.var is s.var:
            if v.op in ("+", "-", "*", "/", "<<", ">>") and not _mentions(v.right, written):
                found[s.var] = (v.op, v.right)
    return found


def _mentions(e: N.Expr, written: dict[int, N.Variable]) -> bool:
    stack: list[Any] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.VarRef):
            if x.var.uid in written:
                return True
        elif isinstance(x, (N.Load, N.Call)):
            return True
        stack.extend(N.sub_expressions(x))
    return False


# ============================================================================ costing


@functools.lru_cache(maxsize=64)
def warp_lanes(block: tuple[int, int, int], warp_size: int) -> tuple[tuple[dict[str, int] | None, ...], ...]:
    """Each warp's lanes as threadIdx values (x fastest), None for lanes past the block's end.
    Shared between callers (remembered): not to be changed."""
    bx, by, bz = block
    n = bx * by * bz
    warps = []
    for w in range((n + warp_size - 1) // warp_size):
        lanes: list[dict[str, int] | None] = []
        for lane in range(warp_size):
            linear = w * warp_size + lane
            if linear >= n:
                lanes.append(None)
                continue
            lanes.append({"threadIdx.x": linear % bx, "threadIdx.y": (linear // bx) % by, "threadIdx.z": linear // (bx * by)})
        warps.append(tuple(lanes))
    return tuple(warps)


@record(frozen=False, slots=False)
class _Charge:
    per_request: int
    ideal: int
    detail: Any
    addresses: tuple[int | None, ...]


def _charge(addresses: tuple[int | None, ...], size: int, space: str, arch: Architecture) -> _Charge:
    if space == "shared":
        c = shared_cost(addresses, size, arch)
        return _Charge(c.wavefronts, c.ideal, c, addresses)
    c = global_cost(addresses, size, arch)
    return _Charge(c.sectors, c.ideal, c, addresses)


def _iterations(loop: LoopCtx, known: dict[str, int]) -> list[int] | None:
    """The counter values of a loop whose condition is uniform and decidable, else None."""
    values: list[int] = []
    if loop.kind == "multiplicative":
        if loop.init is None:
            return None
        v = loop.init.subs(known)
        if not v.is_const:
            return None
        value = v.value
        for _ in range(MAX_MULTIPLICATIVE):
            if loop.cond is not None:
                c = loop.cond.subs({**known, loop.counter: value})
                if not c.is_const:
                    return None
                if not c.value:
                    break
            values.append(value)
            nxt = {"*": value * loop.step, "/": int(value / loop.step) if loop.step else 0,
                   "<<": value << loop.step, ">>": value >> loop.step}.get(loop.op, value)
            if nxt == value:
                break
            value = nxt
        return values
    if loop.cond is None:
        return None
    cond = loop.cond.subs(known) if known else loop.cond
    key = (cond, loop.counter)
    if key not in _TRIPS:
        if len(_TRIPS) >= _LANE_MEMO_LIMIT:
            _TRIPS.clear()
        _TRIPS[key] = _trip_count([cond], loop.counter)
    trip = _TRIPS[key]
    return None if trip is None else list(range(trip))


_TRIPS: dict[tuple, int | None] = {}


def _trip_count(conds: list[S.Expr], counter: str, limit: int = MAX_TRIP) -> int | None:
    """How many iterations k = 0, 1, ... run while any of `conds` (one per lane) holds; None
    when a condition is not a number or the loop runs `limit` times or more. The conditions
    are compiled, so a loop of 100,000 trips costs milliseconds, not seconds."""
    if any(c.free_symbols - {counter} for c in conds):
        # other symbols may cancel once the counter is known (`aBegin + 32 k <= aBegin + wA - 1`
        # with aBegin = wA * 32 * blockIdx.y): substitute, slowly, and only so far
        for k in range(min(limit, MAX_SUBSTITUTED_TRIPS)):
            values = [c.subs({counter: k}) for c in conds]
            if any(not v.is_const for v in values):
                return None
            if not any(v.value for v in values):
                return k
        return None
    evaluate = S.compile_values(conds, [counter])
    try:
        for k in range(limit):
            values = evaluate(k)
            if any(v is None for v in values):
                return None
            if not any(values):
                return k
    except (ZeroDivisionError, ValueError):
        return None
    return None


def cost_occurrence(occ: Occurrence, kernel: str, launch: LaunchConfig, arch: Architecture,
                    known: dict[str, int], describe: bool = True) -> AccessCost:
    access = occ.access
    elem = access.element
    assumptions: list[str] = []
    ptr = occ.ptr
    space = ptr.space if ptr is not None and ptr.space != "unknown" else access.space
    size = elem.size or 0
    base = AccessCost(access, kernel, space, access.op, size, size, 1,
                      "wavefronts" if space == "shared" else "sectors", None, None,
                      via=occ.via, assumptions=assumptions)
    base.struct_type = occ.struct_type  # type: ignore[attr-defined]
    if launch.assumed:
        assumptions.append(f"block size unknown: {launch.origin}")
    if space not in ("shared", "global"):
        base.exact = False
        assumptions.append(f"{space} memory is not costed" if space in ("local", "constant") else
                           "the memory space of this pointer is unknown (a pointer loaded from memory or computed in a way warplint does not follow)")
        return base
    if ptr is None or not size:
        base.exact = False
        assumptions.append("the address could not be followed")
        return base
    pieces = split_access(size, elem.align or 1, arch)
    base.pieces = len(pieces)
    base.bytes = pieces[0][1]
    offset = ptr.offset.subs(known) if known else ptr.offset
    mask = occ.mask.subs(known) if known else occ.mask
    if S.is_unknown(offset):
        # an unknown uniform part of the address (a value read once per warp) is harmless;
        # an unknown that differs between lanes is data-dependent
        affine = S.affine_in(offset, THREAD_SYMBOLS)
        if affine is None or S.is_unknown(offset - affine[1]) or _lane_varying(offset):
            base.exact = False
            base.data_dependent = True
            text = str(offset)
            if "modified in loop" in text or "value after a loop" in text:
                assumptions.append("the index depends on a variable that a loop updates in a way warplint does "
                                   "not follow (not by a constant step) and that differs between lanes: cost unknown")
            else:
                assumptions.append("the index depends on data loaded from memory: cost unknown")
            return base
    block = launch.block
    if block is None:
        base.exact = False
        assumptions.append("block size unknown")
        return base
    lanes_by_warp = warp_lanes(block, arch.warp_size)
    nblocks = math.prod(launch.grid) if launch.grid is not None else None

    worst: _Charge | None = None
    best: int | None = None
    requests = 0
    total = 0
    totals_known = True
    exact = True
    undecided_mask = False
    unaligned: set[str] = set()
    ideal_if_aligned = True
    per_value: dict[int, tuple[int, int]] = {}  # value of the one unknown -> (worst, its ideal)
    depends: set[str] = set()
    affine = S.affine_in(offset, THREAD_SYMBOLS)
    loops = occ.loops
    cache: dict[tuple, _Charge] = {}
    outcomes: dict[tuple, tuple] = {}  # (lane addresses, start residues) -> see _scenario_outcome

    for warp, lanes in enumerate(lanes_by_warp):
        where = (block, arch.warp_size, warp)
        loop_conds = [_per_lane(lp.cond, lanes, where) for lp in loops]
        free: set[str] = set()
        if affine is not None:  # the lanes differ by plain numbers
            coeffs, rest = affine
            first, diffs = _affine_lanes(coeffs, lanes, where)
            if first is None:
                continue
            ref = rest + first
        else:
            lane_offsets = _per_lane(offset, lanes, where)
            ref = next((o for o in lane_offsets if o is not None), None)
            if ref is None:
                continue
            diffs = tuple(None if o is None else o - ref for o in lane_offsets)
            for d in diffs:
                if d is not None:
                    free |= d.free_symbols
        lane_masks = _decided_masks(mask, lanes, where, launch)
        for m in lane_masks:
            if m is not None and not m.is_const:
                free |= {x for x in m.free_symbols if "@" in x}
        # the loops whose counters change this warp's cost or mask must be walked
        walk: list[int] = []
        factor: int | None = 1
        for i, lp in enumerate(loops):
            conds = [c for c in loop_conds[i] if c is not None]
            lane_varying = len({str(c) for c in conds}) > 1
            if lp.counter in free or lane_varying:
                walk.append(i)
            else:
                its = _iterations(replace(lp, cond=conds[0] if conds else None), known)
                if its is None:
                    factor = None
                elif factor is not None:
                    factor *= len(its)
        loop_counters = {loops[i].counter for i in walk}
        others = sorted(s for s in free if s not in loop_counters and "@" not in s)
        # scenarios: values for the walked counters (and samples for unknown parameters)
        counter_values: list[list[int]] = []
        walk_exact = True
        for i in walk:
            lp = loops[i]
            if lp.kind == "multiplicative":
                its = _iterations(lp, known)
                if its is None:
                    its = [1 << j for j in range(10)]
                    walk_exact = False
            else:
                its = None
                cond_lanes = [c for c in loop_conds[i] if c is not None]
                if cond_lanes:
                    trips = _trip_count(cond_lanes, lp.counter, MAX_SCENARIOS + 1)
                    its = None if trips is None else list(range(trips))
                if its is None:
                    its = list(range(8))
                    walk_exact = False
            counter_values.append(its)
        samples = _param_samples(len(others))
        param_values: list[tuple[int, ...]] = [samples for _ in others]
        if others:
            exact = False
            depends.update(others)
        combos = itertools.product(*counter_values, *param_values)
        n_combos = math.prod(len(v) for v in counter_values) * math.prod(len(v) for v in param_values)
        if n_combos > MAX_SCENARIOS:
            walk_exact = False
            combos = itertools.islice(combos, MAX_SCENARIOS)
        if not walk_exact:
            totals_known = False
        names = [loops[i].counter for i in walk] + others
        bound = frozenset(names)
        # the lane expressions are evaluated once per scenario: compiled, not substituted
        n_lanes = len(diffs)
        lane_exprs = [*diffs, *lane_masks, *(loop_conds[i][j] for i in walk for j in range(n_lanes)), ref]
        # where each lane's mask and walked loop conditions sit in `values`
        mask_at = [n_lanes + j if lane_masks[j] is not None else -1 for j in range(n_lanes)]
        conds_at = [tuple(2 * n_lanes + i_w * n_lanes + j for i_w in range(len(walk))) for j in range(n_lanes)] \
            if walk else [()] * n_lanes
        present = [j for j, d in enumerate(diffs) if d is not None]
        # compiling costs about a millisecond: worth it only for many scenarios
        evaluate = pick = None
        if n_combos > COMPILE_SCENARIOS:
            # where every lane's address is a number in each scenario, the addresses are
            # compiled and subtracted, not their differences: half the source and the work
            absolute = affine is None and all(lane_offsets[j].free_symbols <= bound for j in present)
            compiled_exprs = [*(lane_offsets if absolute else diffs), *lane_exprs[n_lanes:]]
            evaluate = S.compile_values(compiled_exprs, names)
            pick = _lane_picker(evaluate.compiled, present, mask_at, conds_at, absolute)
        one_unknown_at = len(walk) if len(others) == 1 else -1
        for combo in combos:
            lane_rel = ref_value = assign = None
            try:
                if evaluate is None:
                    raise ValueError("not compiled")
                values = evaluate(*combo)
                if pick is not None:
                    lane_rel = pick[0](values)
                    undecided_mask = undecided_mask or pick[1]
                    ref_value = values[-1]
            except (ZeroDivisionError, ValueError):  # one lane divides by zero: the slow way
                assign = dict(zip(names, combo))
                values = tuple(_substituted_value(e, assign, bound) for e in lane_exprs) if names else \
                    tuple(None if e is None or not e.is_const else e.value for e in lane_exprs)
            if lane_rel is None:
                # an entry that is None in `values` mentions a symbol that is not assigned here
                # (a parameter that is not known, a value loaded from memory): it stays undecided
                rel: list[int | None] = [None] * n_lanes
                ok = True
                for j in present:
                    on = True
                    at = mask_at[j]
                    if at >= 0:
                        mv = values[at]
                        if mv is not None:
                            on = bool(mv)
                        else:
                            undecided_mask = True
                    for at in conds_at[j]:
                        cv = values[at]
                        if cv is not None:
                            on = on and bool(cv)
                    dv = values[j]
                    if dv is None:
                        ok = False
                        break
                    if on:
                        rel[j] = dv
                if not ok:
                    exact = False
                    continue
                lane_rel = tuple(rel)
            if all(x is None for x in lane_rel):
                continue
            ref_v = None  # the first lane's address as an expression, where it is not a number
            if ref_value is None:
                if ref.is_const:
                    ref_value = ref.value
                else:
                    if assign is None:
                        assign = dict(zip(names, combo))
                    ref_v = _evaluated(ref, assign) if assign else ref
                    if ref_v.is_const:
                        ref_value, ref_v = ref_v.value, None
            if ref_value is not None:
                residues: tuple[int, ...] = (ref_value % 128,)
            elif space == "shared" and pieces[0][1] >= 4:
                # moving every lane by the same number of words rotates the banks: same cost
                residues = (0,)
            else:
                residues = tuple(sorted(S.residues(ref_v, 128)))
                if space == "global":
                    residues = _one_per_sector_shift(residues, arch.sector_bytes)
            key = (lane_rel, residues)
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = _scenario_outcome(lane_rel, residues, pieces, space, arch, cache)
            charges, some_start_is_ideal, request_worst, low, alignment_matters = outcome
            # False once a request costs more than ideal whatever the alignment of its start
            ideal_if_aligned = ideal_if_aligned and some_start_is_ideal
            if alignment_matters:
                exact = False  # the cost really depends on the unknown alignment
                unaligned.add(str(ref_v))
            if worst is None or request_worst.per_request > worst.per_request:
                worst = request_worst
            if one_unknown_at >= 0:  # the cost at each value of the one unknown, for `cases`
                value = combo[one_unknown_at]
                seen = per_value.get(value)
                if seen is None or request_worst.per_request > seen[0]:
                    per_value[value] = (request_worst.per_request, request_worst.ideal)
            best = low if best is None else min(best, low)
            if factor is not None:
                requests += factor * len(pieces)
                total += factor * sum(c.per_request for c in charges[: len(pieces)])
        if factor is None:
            totals_known = False
    if worst is None:
        base.exact = exact and not undecided_mask
        assumptions.append("no lane of any warp executes this access")
        base.per_request = 0
        base.ideal_per_request = 0
        base.requests = 0 if nblocks is not None and totals_known else None
        base.total = base.requests
        return base
    if undecided_mask:
        exact = False
        assumptions.append("a condition on values warplint does not know was assumed true for every lane (the worst case)")
    base.only_alignment = bool(unaligned) and ideal_if_aligned and worst.per_request > worst.ideal
    if unaligned:
        assumptions.append("the alignment of the warp's first address is not known and changes the cost: "
                           "per_request is the worst case over its possible alignments, best_per_request the best")
    if depends:
        tried = "values 1..64" if len(depends) == 1 else "sampled values from 1 to 64 of each"
        params = sorted(d for d in depends if not d.startswith(("blockIdx.", "gridDim.", "blockDim.")))
        indices = sorted(d for d in depends if d.startswith("blockIdx."))
        sizes = sorted(d for d in depends if d.startswith(("gridDim.", "blockDim.")))
        what = []
        if params:
            what.append(f"{', '.join(params)} (not known)")
        if indices:
            what.append(f"the block ({', '.join(indices)})")
        if sizes:
            what.append(f"the launch ({', '.join(sizes)}, not known)")
        how = []
        if params:
            how.append(" ".join(f"--param {p}=VALUE" for p in params))
        if sizes:
            how.append("--grid/--block")
        hint = f" (pass {' and '.join(how)})" if how else ""
        assumptions.append(f"the cost depends on {' and on '.join(what)}: worst case over {tried}{hint}")
    base.per_request = worst.per_request
    base.ideal_per_request = worst.ideal
    base.best_per_request = best
    base.exact = exact and not launch.assumed
    base.lane_addresses = worst.addresses
    base.stride_bytes = _stride(worst.addresses)
    base.depends_on = tuple(sorted(depends))
    if space == "shared":
        base.collisions = tuple(Collision(c.bank, c.lanes, c.words) for c in worst.detail.worst)
    if nblocks is not None and totals_known and not undecided_mask and not depends:
        base.requests = requests * nblocks
        base.total = total * nblocks
    if occ.reuses is not None:
        _reuse(base, occ.reuses)
    if space == "shared" and access.op == "load" and base.exact:
        note = _vectorizable(offset, occ.loops, known, size)
        if note is not None:
            base.exact = False
            assumptions.append(note)
    if len(depends) == 1 and describe:
        name = next(iter(depends))
        if all(v in per_value for v in CASE_VALUES):  # seen while sampling: no second pass
            base.cases = _cases_text({v: per_value[v] for v in CASE_VALUES}, name)
        else:
            base.cases = _describe_cases(occ, kernel, launch, arch, known, name)
    return base


def _one_per_sector_shift(residues: tuple[int, ...], sector_bytes: int) -> tuple[int, ...]:
    """The first of the sorted `residues` in each class modulo the sector size: moving every
    lane by whole sectors moves the sectors, so a global request costs the same (and the
    smallest start of each class, the one that would be reported, is kept)."""
    kept: dict[int, int] = {}
    for r in residues:
        kept.setdefault(r % sector_bytes, r)
    return tuple(sorted(kept.values()))


def _scenario_outcome(lane_rel: tuple[int | None, ...], residues: tuple[int, ...], pieces: list[tuple[int, int]],
                      space: str, arch: Architecture, cache: dict[tuple, _Charge]) -> tuple:
    """What one request costs, given each active lane's address relative to the first lane and
    the possible starts of the first lane (residues modulo 128): the charges of each start and
    piece, whether some start costs no more than ideal, the worst and the lowest charge, and
    whether the start changes the cost."""
    charges = []
    some_start_is_ideal = False
    for r in residues:
        ideal_here = True
        for poff, psize in pieces:
            addrs = tuple(None if x is None else r + x + poff for x in lane_rel)
            key = (addrs, psize)
            ch = cache.get(key)
            if ch is None:
                ch = cache[key] = _charge(addrs, psize, space, arch)
            charges.append(ch)
            ideal_here = ideal_here and ch.per_request <= ch.ideal
        some_start_is_ideal = some_start_is_ideal or ideal_here
    alignment_matters = len(residues) > 1 and len({c.per_request for c in charges}) > 1
    request_worst = max(charges, key=lambda c: c.per_request)
    low = min(c.per_request for c in charges)
    return charges, some_start_is_ideal, request_worst, low, alignment_matters


_THREAD_SET = frozenset(THREAD_SYMBOLS)


_LANE_MEMO: dict[tuple, S.Expr] = {}
_LANE_MEMO_LIMIT = 200_000


_WARP_MEMO: dict[tuple, tuple] = {}


def _affine_lanes(coeffs: tuple[int, ...], lanes: tuple[dict[str, int] | None, ...],
                  where: tuple) -> tuple[int | None, tuple[S.Expr | None, ...]]:
    """For an address whose threadIdx part is `coeffs` (x, y, z), the first lane's threadIdx
    part and each lane's distance from it (None for a lane the warp does not have)."""
    key = ("affine", coeffs, where)
    done = _WARP_MEMO.get(key)
    if done is None:
        moved = [None if env is None else sum(c * env[n] for c, n in zip(coeffs, THREAD_SYMBOLS)) for env in lanes]
        first = next((m for m in moved if m is not None), None)
        diffs = tuple(None if m is None or first is None else S.const(m - first) for m in moved)
        done = (first, diffs)
        _remember(_WARP_MEMO, key, done)
    return done


def _remember(memo: dict, key: tuple, value: Any) -> None:
    if len(memo) >= _LANE_MEMO_LIMIT:
        memo.clear()
    memo[key] = value


def _per_lane(e: S.Expr | None, lanes: tuple[dict[str, int] | None, ...], where: tuple) -> tuple[S.Expr | None, ...]:
    """`e` at each lane of the warp at `where` (None for a lane the warp does not have, and
    for every lane when `e` is None). Remembered per warp as well as per lane."""
    if e is None:
        return (None,) * len(lanes)
    key = (e, where)
    done = _WARP_MEMO.get(key)
    if done is None:
        done = tuple(None if env is None else _at_lane(e, env) for env in lanes)
        _remember(_WARP_MEMO, key, done)
    return done


def _at_lane(e: S.Expr, env: dict[str, int]) -> S.Expr:
    """`e` with one lane's threadIdx put in; evaluated directly when nothing else is free.
    Remembered: the accesses under one condition share its mask, warps share loop bounds."""
    if e.is_const:
        return e
    key = (e, env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"])
    done = _LANE_MEMO.get(key)
    if done is not None:
        return done
    done = _evaluated(e, env) if e.free_symbols <= _THREAD_SET else e.subs(env)
    _remember(_LANE_MEMO, key, done)
    return done


def _param_samples(count: int) -> tuple[int, ...]:
    """The values tried for each of `count` unknown parameters (1..64 for one alone)."""
    if count <= 1:
        return PARAM_SAMPLES
    for samples in SPARSE_PARAM_SAMPLES:
        if len(samples) ** count <= 150:
            return samples
    return SPARSE_PARAM_SAMPLES[-1]


def _substituted_value(e: S.Expr | None, assign: dict[str, int], bound: frozenset[str]) -> int | None:
    """The value of a lane expression in one scenario, None when it is not a number (as
    `compile_values` gives it: a symbol other than those `bound` leaves it undecided)."""
    if e is None:
        return None
    if e.is_const:
        return e.value
    if not e.free_symbols <= bound:
        return None
    try:
        return e.evaluate(assign)
    except (ArithmeticError, ValueError, LookupError):  # as `_evaluated`: substitute instead
        v = e.subs(assign)
        return v.value if v.is_const else None


def _evaluated(e: S.Expr, env: dict[str, int]) -> S.Expr:
    """`e` with `env` put in: a constant computed straight away, without building the
    substituted expression; as `subs` leaves it where `env` does not bind every symbol, or
    where evaluating divides by zero or shifts out of range."""
    try:
        return S.const(e.evaluate(env))
    except (ArithmeticError, ValueError, LookupError):
        return e.subs(env)


_DECIDED: dict[tuple, S.Expr] = {}


def _space_of_region(region: str) -> str:
    return "shared" if region.startswith("shared:") else "global"


def _disjoint(key: tuple, ptr: Ptr, size: int) -> bool:
    """Whether a held value `key` lies in the same array as `size` bytes at `ptr`, apart."""
    region, offset, nbytes, _ = key
    if region != ptr.region:
        return False
    delta = offset - ptr.offset
    return delta.is_const and (delta.value >= size or delta.value + nbytes <= 0)


def _vectorizable(offset: S.Expr, loops: tuple[LoopCtx, ...], known: dict[str, int], size: int) -> str | None:
    """Why nvcc may unroll a loop and merge this shared load with the next iterations' into
    one 16-byte load (`As[ty][e]`, e = 0, 1, 2, 3 -> one LDS.128, measured on an H200), or
    None: consecutive elements per iteration, a trip count that is a multiple of 4 and a
    start that is 16-byte aligned in every lane."""
    if size not in (4, 8):
        return None
    group = 16 // size
    for lp in reversed(loops):
        if lp.kind != "additive":
            continue
        affine = S.affine_in(offset, [lp.counter])
        if affine is None or affine[0][0] != size:
            continue
        trips = _iterations(lp, known)
        if trips is None or len(trips) < group or len(trips) % group:
            continue
        if any(r % 16 for r in S.residues(affine[1], 16)):
            continue
        return (f"nvcc may unroll the loop and load {group} consecutive iterations' elements with one "
                "16-byte load (fewer requests, more wavefronts each); the figure is for the access as written")
    return None


def _reuse(cost: AccessCost, holder: N.Access) -> None:
    """A load whose value the thread already holds: no request of its own."""
    cost.reuses = holder.uid
    verb = "loaded" if holder.op == "load" else "stored"
    line_note = f"`{holder.text}`" if holder.text != cost.access.text else "the same access"
    cost.assumptions.append(f"no request of its own: nvcc reuses the value {verb} by {line_note} "
                            "(same address, nothing in between can change it)")
    if cost.requests is not None:
        cost.requests = 0
        cost.total = 0


def _lane_picker(compiled: tuple[bool, ...], present: list[int], mask_at: list[int],
                 conds_at: list[tuple[int, ...]], absolute: bool) -> tuple[Callable[[tuple], tuple], bool] | None:
    """From the values of a warp's lane expressions (see `cost_occurrence`), the function
    giving each lane's address relative to the first lane, None for a lane that is off; and
    whether some lane's mask stays undecided. The values hold the lanes' addresses where
    `absolute` (the last value is the first lane's), else their distances from the first.
    None where some lane's address is not compiled: the lanes are then picked one by one.
    Remembered: warps and accesses share the shape."""
    key = (compiled, tuple(present), tuple(mask_at), tuple(conds_at), absolute)
    done = _PICKERS.get(key)
    if done is None:
        if not all(compiled[j] for j in present) or (absolute and not compiled[-1]):
            return None
        undecided = False
        items = ["None"] * len(mask_at)
        for j in present:
            tests = []
            at = mask_at[j]
            if at >= 0:
                if compiled[at]:
                    tests.append(f"v[{at}]")
                else:
                    undecided = True
            tests += [f"v[{at}]" for at in conds_at[j] if compiled[at]]
            value = f"v[{j}] - v[-1]" if absolute else f"v[{j}]"
            items[j] = f"({value} if {' and '.join(tests)} else None)" if tests else f"({value})"
        source = f"lambda v: ({', '.join(items)},)"
        done = (eval(source, {"__builtins__": {}}), undecided)  # noqa: S307 - our own source
        _remember(_PICKERS, key, done)
    return done


_PICKERS: dict[tuple, tuple] = {}


def _decided_masks(mask: S.Expr, lanes: tuple[dict[str, int] | None, ...], where: tuple,
                   launch: LaunchConfig) -> tuple[S.Expr | None, ...]:
    """Each lane's mask in the warp at `where`, decided where it depends only on block
    indices of a known grid (see `_decide_mask`). Remembered per warp: the accesses under
    one condition share it."""
    key = (mask, where, launch.grid)
    done = _WARP_MEMO.get(key)
    if done is None:
        done = tuple(_decide_mask(m, launch) for m in _per_lane(mask, lanes, where))
        _remember(_WARP_MEMO, key, done)
    return done


def _decide_mask(m: S.Expr | None, launch: LaunchConfig) -> S.Expr | None:
    """Decide a lane's mask when it depends only on block indices of a known grid: the
    condition must hold (or fail) at every corner of the grid, as bounds checks do."""
    if m is None or m.is_const:
        return m
    key = (m, launch.grid)
    done = _DECIDED.get(key)
    if done is None:
        done = _decide_mask_at_corners(m, launch)
        _remember(_DECIDED, key, done)
    return done


def _decide_mask_at_corners(m: S.Expr, launch: LaunchConfig) -> S.Expr:
    names = [n for n in m.free_symbols if "@" not in n]
    if not names or any(not n.startswith("blockIdx.") for n in names) or launch.grid is None:
        return m
    axes = {n: launch.grid["xyz".index(n[-1])] - 1 for n in names}
    values = set()
    for corner in itertools.product(*[(0, hi) for hi in axes.values()]):
        v = m.subs(dict(zip(axes, corner)))
        if not v.is_const:
            return m
        values.add(bool(v.value))
    return S.const(1) if values == {True} else S.const(0) if values == {False} else m


def _stride(addresses: tuple[int | None, ...]) -> int | None:
    pts = [(i, a) for i, a in enumerate(addresses) if a is not None]
    if len(pts) < 2:
        return None
    (i0, a0), (i1, a1) = pts[0], pts[1]
    if (a1 - a0) % (i1 - i0):
        return None
    stride = (a1 - a0) // (i1 - i0)
    if all(a == a0 + (i - i0) * stride for i, a in pts):
        return stride
    return None


def _describe_cases(occ: Occurrence, kernel: str, launch: LaunchConfig, arch: Architecture,
                    known: dict[str, int], name: str) -> str | None:
    costs: dict[int, tuple[int, int]] = {}
    for v in CASE_VALUES:
        c = cost_occurrence(occ, kernel, launch, arch, {**known, name: v}, describe=False)
        if c.per_request is None or c.ideal_per_request is None:
            return None
        costs[v] = (c.per_request, c.ideal_per_request)
    return _cases_text(costs, name)


CASE_VALUES = (1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64)


def _cases_text(costs: dict[int, tuple[int, int]], name: str) -> str | None:
    """How the cost of an access depends on one unknown, from its cost at `CASE_VALUES`."""
    ideal_values = {v for v, (p, i) in costs.items() if p <= i}
    odd = {v for v in costs if v % 2}
    if ideal_values == set(costs):
        return None
    if ideal_values == odd:
        return f"ideal exactly when {name} is odd"
    shown = ", ".join(f"{name}={v}: {p}" for v, (p, _) in costs.items() if v in (1, 2, 4, 8, 16, 32, 33))
    return f"{'never ideal' if not ideal_values else 'cost depends on ' + name}; per request: {shown}"


def merge_costs(costs: list[AccessCost]) -> list[AccessCost]:
    """One entry per access site: occurrences from several call sites are combined."""
    by_uid: dict[int, AccessCost] = {}
    order: list[int] = []
    for c in costs:
        prev = by_uid.get(c.access.uid)
        if prev is None:
            by_uid[c.access.uid] = c
            order.append(c.access.uid)
            continue
        if c.per_request is not None and (prev.per_request is None or c.per_request > prev.per_request):
            keep, other = c, prev
        else:
            keep, other = prev, c
        keep.exact = keep.exact and other.exact
        if other.reuses is None:  # reached once without the value at hand: a real request
            keep.reuses = None
        if keep.requests is not None and other.requests is not None:
            keep.requests += other.requests
            keep.total = (keep.total or 0) + (other.total or 0)
        else:
            keep.requests = keep.total = None
        for a in other.assumptions:
            if a not in keep.assumptions:
                keep.assumptions.append(a)
        by_uid[c.access.uid] = keep
    return [by_uid[u] for u in order]


def _merge_struct_fields(costs: list[AccessCost]) -> None:
    """Loads of several fields of one naturally aligned struct element in one statement are
    one wide load (what nvcc emits): charge the first as the whole element, mark the others."""
    groups: dict[tuple, list[AccessCost]] = {}
    for c in costs:
        st = getattr(c, "struct_type", None)
        if st is None or c.op != "load" or c.space != "global" or not T.is_natural_access(st) or st.size not in (8, 16):
            continue
        if c.access.element is st:
            continue
        key = (c.access.array, c.access.text.rsplit(".", 1)[0], c.access.statement)
        groups.setdefault(key, []).append(c)
    for group in groups.values():
        fields = {c.access.text.rsplit(".", 1)[-1] for c in group}
        if len(fields) < 2:
            continue
        first = group[0]
        # the wide load moves the whole element: its ideal is the element's sectors, not one field's
        scale = (first.access.element.size and (first.struct_type.size // first.access.element.size)) or 1  # type: ignore[attr-defined]
        for c in group:
            c.merged_into = first.access.uid if c is not first else None
        first.bytes = first.struct_type.size  # type: ignore[attr-defined]
        if first.per_request is not None and first.ideal_per_request is not None:
            first.ideal_per_request *= scale
        first.assumptions.append(f"fields {', '.join(sorted(fields))} of one `{first.struct_type.name}` element are loaded with one {first.bytes}-byte access")  # type: ignore[attr-defined]
        for c in group[1:]:
            # no request of its own: the wide load of `first` moved this field too
            c.assumptions.append(f"moved by the {first.bytes}-byte load of `{first.text}`")
            c.bytes = first.bytes
            c.per_request, c.ideal_per_request, c.best_per_request = first.per_request, first.ideal_per_request, first.best_per_request
            c.requests = 0 if c.requests is not None else None
            c.total = 0 if c.total is not None else None


def analyze_kernel(module: N.Module, kernel: N.Function, launch: LaunchConfig, arch: Architecture,
                   params: dict[str, int] | None = None, arrays: Iterable[str] | None = None) -> KernelAnalysis:
    """Cost every shared and global access of `kernel` for one launch configuration; with
    `arrays`, only the accesses to those arrays. (A padding fix is checked by lowering the file
    again with the wider array, `analyzer.ir.lower.lower(..., padding=...)`, and costing the
    accesses to that array.)"""
    known_params = dict(launch.params)
    known_params.update(params or {})
    interp = Interpreter(module, launch, known_params)
    interp.run_kernel(kernel)
    known = launch_values(launch, known_params)
    wanted = None if arrays is None else set(arrays)
    costs = [cost_occurrence(o, kernel.display_name, launch, arch, known) for o in interp.occurrences
             if wanted is None or o.access.array in wanted]
    merged = merge_costs(costs)
    _merge_struct_fields(merged)
    # a limit the analysis hit is said where every report format shows it
    diagnostics = [Diagnostic(Severity.WARNING, f"in kernel `{kernel.display_name}`: {note}", "WL903",
                              kernel.name_span) for note in interp.notes]
    return KernelAnalysis(kernel, launch, merged, diagnostics, interp.notes,
                          shared_arrays=_shared_arrays(module, kernel))


def launch_values(launch: LaunchConfig, params: dict[str, int]) -> dict[str, int]:
    """The symbols a launch fixes, for costing: blockDim, gridDim (when known) and the
    kernel parameters whose values are known (`params`, which already holds the launch's)."""
    known: dict[str, int] = {}
    if launch.block is not None:
        known.update({f"blockDim.{a}": v for a, v in zip("xyz", launch.block)})
    if launch.grid is not None:
        known.update({f"gridDim.{a}": v for a, v in zip("xyz", launch.grid)})
    known.update(params)
    return known


def reused_loads(module: N.Module, kernel: N.Function, launch: LaunchConfig,
                 params: dict[str, int] | None = None) -> dict[int, N.Access]:
    """The loads of `kernel` whose value a thread already holds every time they run (uid ->
    the access that loaded or stored it): nvcc issues no request for them. The simulator
    applies the same rule, as it applies `_merge_struct_fields`."""
    known = dict(launch.params)
    known.update(params or {})
    interp = Interpreter(module, launch, known)
    interp.run_kernel(kernel)
    reused: dict[int, N.Access] = {}
    fresh: set[int] = set()
    for occ in interp.occurrences:
        if occ.reuses is None:
            fresh.add(occ.access.uid)
        else:
            reused.setdefault(occ.access.uid, occ.reuses)
    return {uid: holder for uid, holder in reused.items() if uid not in fresh}


def _shared_arrays(module: N.Module, kernel: N.Function) -> dict[str, N.Variable]:
    """The `__shared__` arrays that the kernel (or a function it calls) accesses, by name."""
    arrays: dict[str, N.Variable] = {}
    reached, todo = {kernel.name}, [kernel]
    while todo:
        fn = todo.pop()
        for name in fn.calls:
            callee = module.functions.get(name)
            if callee is not None and name not in reached:
                reached.add(name)
                todo.append(callee)
        for acc in fn.accesses:
            for v in _vars_in(acc.address):
                if v.space == "shared" and isinstance(v.type, T.ArrayType):
                    arrays.setdefault(v.name, v)
    return arrays


def _vars_in(e: N.Expr) -> Iterable[N.Variable]:
    stack: list[Any] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.VarRef):
            yield x.var
        stack.extend(N.sub_expressions(x))


