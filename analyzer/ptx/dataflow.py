"""Register dataflow of one PTX `.entry`: every register as a symbolic per-lane value, and
every shared/global memory instruction as an access with its address, mask and loops.

    evaluate(fn, module, launch=..., params=..., naming=..., arch=...) -> Dataflow

Values are the CUDA-C path's (analysis.values): an `S.Expr` over threadIdx/blockIdx/blockDim/
gridDim, parameters and loop counters, or a `Ptr` (region, space, byte offset). Special
registers get the CUDA names (`%tid.x` -> threadIdx.x, `%ctaid.x` -> blockIdx.x, `%ntid.x` ->
blockDim.x, `%nctaid.x` -> gridDim.x, `%laneid` -> the linear thread index mod the warp size).
What an instruction moves, reads and writes comes from `ptx.instructions`. Blocks are
evaluated in topological order of the CFG without back edges:

* at a join, registers that differ become `select(edge condition, a, b)`, and the block's
  mask is its immediate dominator's when it post-dominates it (the end of an if/else), else
  the `or` of the incoming edges' masks;
* at a loop header, each register the loop writes once per iteration as `r = r +/- invariant`
  becomes `init + k*step` (k = the counter symbol `k@<loop>`, as the interpreter names it); a single
  `r = r >> c` / `<< c` / `* c` / `/ c` loop becomes a multiplicative counter; every other
  register the loop writes is unknown inside and after the loop;
* the loop's condition comes from its only exiting block: a bottom test (`@%p bra header`)
  runs iteration k when k == 0 or the test held after iteration k-1; a top test is the
  condition of iteration k itself.

A value loaded from memory is unknown (lane-varying when its address differs between lanes),
never guessed. Integer arithmetic assumes non-negative 31-bit values, as the CUDA-C path does
(docs/ARCHITECTURE.md, "Contracts between stages"): `shr.s32 x, 31` (the sign of an index)
is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.analysis.symbolic import Origin
from analyzer.analysis.values import THREAD_SET, THREAD_SYMBOLS, LoopCtx, LoopKind, Ptr, lane_varying
from analyzer.arch import Architecture, get_arch
from analyzer.ir.nodes import AccessOp, Space
from analyzer.ptx.cfg import EdgeGuard, Loop, PtxCfg, build_cfg
from analyzer.ptx.instructions import (
    MEMORY_OPS,
    TYPE_BYTES,
    demangle_variable,
    element_bytes,
    instruction_text,
    is_float,
    memory_space,
    operand_registers,
    type_of,
    written_registers,
)
from analyzer.ptx.nodes import Addr, Imm, Not, PtxFunction, PtxInstruction, PtxModule, Reg, SpecialReg, Sym, Vec
from analyzer.ptx.values import (
    Dataflow,
    LoopParts,
    ParamNaming,
    PtxAccess,
    Value,
    select_pointer,
    static_shared_offsets,
)

__all__ = ["Dataflow", "ParamNaming", "PtxAccess", "evaluate"]

_SIGNED_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
COMPARE = {**_SIGNED_COMPARE, "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}  # and the unsigned spellings
MULTIPLICATIVE = {"shl": "<<", "shr": ">>", "mul": "*", "div": "/"}
MAX_JOINED_PATHS = 16  # a join of more paths than this makes the registers that differ unknown
SPECIAL = {"%tid": "threadIdx", "%ctaid": "blockIdx", "%ntid": "blockDim", "%nctaid": "gridDim"}


class _Evaluator:
    def __init__(
        self,
        fn: PtxFunction,
        module: PtxModule,
        launch: LaunchConfig | None,
        params: Mapping[str, int],
        naming: ParamNaming,
        arch: Architecture,
    ) -> None:
        self.fn = fn
        self.arch = arch
        self.launch = launch
        self.params = dict(params)
        self.naming = naming
        self.variables = {
            v.name: v for v in (*module.globals, *fn.decls) if v.space in ("shared", "global", "const", "local")
        }
        self.entry_params = {p.name for p in fn.params}
        self.notes: list[str] = []
        self.shared_offsets = static_shared_offsets((*module.globals, *fn.decls))

    # ------------------------------------------------------------------ operands
    def special(self, reg: SpecialReg) -> Value:
        kind = SPECIAL.get(reg.base)
        comp = reg.component
        if kind is not None and comp in ("x", "y", "z"):
            i = "xyz".index(comp)
            if kind == "blockDim" and self.launch is not None and self.launch.block is not None:
                return S.const(self.launch.block[i])
            if kind == "gridDim" and self.launch is not None and self.launch.grid is not None:
                return S.const(self.launch.grid[i])
            return S.sym(f"{kind}.{comp}")
        if reg.base == "%laneid":
            tx, ty, tz = (S.sym(n) for n in THREAD_SYMBOLS)
            bx = self.special(SpecialReg("%ntid.x"))
            by = self.special(SpecialReg("%ntid.y"))
            return S.mod(tx + ty * bx + tz * bx * by, S.const(self.arch.warp_size))
        return S.unknown(reg.name, Origin.UNMODELLED)

    def symbol(self, sym: Sym) -> Value:
        var = self.variables.get(sym.name)
        if var is None:
            return S.unknown(f"address of {sym.name}", Origin.UNMODELLED)
        space = Space.CONSTANT if var.space == "const" else Space(var.space)
        # a shared array starts at bank 0 of a costing period; global memory as cudaMalloc's
        if space == Space.SHARED:
            align = self.arch.address_period
        else:
            align = max(var.align or 1, self.arch.global_pointer_alignment if space == Space.GLOBAL else 1)
        return Ptr(f"{space}:{demangle_variable(sym.name)}", space, S.const(sym.offset), align)

    def operand(self, op: Any, env: dict[str, Value]) -> Value:
        if isinstance(op, Reg):
            v = env.get(op.name)
            return v if v is not None else S.unknown(f"undefined {op.name}", Origin.UNINITIALISED)
        if isinstance(op, SpecialReg):
            return self.special(op)
        if isinstance(op, Imm):
            return S.const(op.value) if isinstance(op.value, int) else S.unknown("float", Origin.FLOAT)
        if isinstance(op, Sym):
            return self.symbol(op)
        if isinstance(op, Not):
            v = self.integer(self.operand(op.operand, env))
            return S.logical_not(v)
        return S.unknown(type(op).__name__, Origin.UNMODELLED)

    def integer(self, v: Value) -> S.Expr:
        """A value as an integer: a kernel parameter loaded as a pointer is its symbol."""
        if isinstance(v, S.Expr):
            return v
        if isinstance(v, Ptr) and v.region.startswith("param:"):
            return S.sym(v.region[6:]) + v.offset
        return S.unknown("pointer as integer", Origin.UNMODELLED)

    def address(self, addr: Addr, env: dict[str, Value]) -> Value:
        base = self.operand(Reg(addr.base), env) if addr.is_reg else self.symbol(Sym(addr.base))
        if isinstance(base, Ptr):
            return Ptr(base.region, base.space, base.offset + addr.offset, base.align)
        return None

    def param(self, addr: Addr, ins: PtxInstruction, k: int) -> Value:
        """The `k`-th element of `ld.param` from a kernel parameter."""
        offset = addr.offset + k * (TYPE_BYTES.get(type_of(ins) or "", 4))
        name = self.naming.name(self.fn, addr.base, offset)
        if name in self.params:
            return S.const(self.params[name])
        if is_float(ins):
            return S.unknown(name, Origin.PARAMETER)
        if element_bytes(ins) // max(1, len(operand_registers(ins.operands[0]))) == 8:
            # a 64-bit parameter may be a pointer: a Ptr that turns back into the symbol
            # when used as an integer (`integer`)
            return Ptr(f"param:{name}", Space.GLOBAL, S.const(0), self.arch.global_pointer_alignment)
        return S.sym(name)

    # ------------------------------------------------------------------ arithmetic
    def add(self, a: Value, b: Value) -> Value:
        if isinstance(a, Ptr) and isinstance(b, Ptr):
            if a.region.startswith("param:") and not b.region.startswith("param:"):
                a, b = b, a
            b = self.integer(b)
        if isinstance(b, Ptr):
            a, b = b, a
        if isinstance(a, Ptr):
            if not isinstance(b, S.Expr):
                return S.unknown("pointer sum", Origin.UNMODELLED)
            return Ptr(a.region, a.space, a.offset + b, a.align)
        return a + b

    def sub(self, a: Value, b: Value) -> Value:
        if isinstance(a, Ptr) and isinstance(b, Ptr) and a.region == b.region:
            return a.offset - b.offset
        if isinstance(a, Ptr) and isinstance(b, S.Expr):
            return Ptr(a.region, a.space, a.offset - b, a.align)
        return self.integer(a) - self.integer(b)

    def binary(self, opcode: str, ins: PtxInstruction, a: Value, b: Value) -> Value:
        if opcode == "add":
            return self.add(a, b)
        if opcode == "sub":
            return self.sub(a, b)
        x, y = self.integer(a), self.integer(b)
        if opcode == "mul":
            if "hi" in ins.modifiers:
                return S.unknown("mul.hi", Origin.UNMODELLED)
            return x * y
        if opcode == "div":
            return S.floordiv(x, y)
        if opcode == "rem":
            return S.mod(x, y)
        if opcode == "min":
            return S.minimum(x, y)
        if opcode == "max":
            return S.maximum(x, y)
        if opcode == "shl":
            return S.shl(x, y)
        if opcode == "shr":
            width = 8 * TYPE_BYTES.get(type_of(ins) or "", 4)
            if y.is_const and y.value >= width - 1 and not x.is_const:
                return S.const(0)  # the sign bit of a non-negative index
            return S.shr(x, y)
        if type_of(ins) == "pred":
            return {"and": S.logical_and, "or": S.logical_or, "xor": lambda p, q: S.compare("!=", p, q)}[opcode](x, y)
        return {"and": S.bitand, "or": S.bitor, "xor": S.bitxor}[opcode](x, y)

    def compare(self, ins: PtxInstruction, a: Value, b: Value) -> S.Expr:
        op = next((COMPARE[m] for m in ins.modifiers if m in COMPARE), None)
        if op is None or is_float(ins):
            return S.unknown("float comparison", Origin.FLOAT)
        if isinstance(a, Ptr) and isinstance(b, Ptr) and a.region == b.region:
            return S.compare(op, a.offset, b.offset)
        return S.compare(op, self.integer(a), self.integer(b))

    # ------------------------------------------------------------------ instructions
    def step(self, ins: PtxInstruction, env: dict[str, Value], mask: S.Expr, record: Any) -> None:
        """Apply one instruction to `env`; memory instructions are passed to `record`."""
        opcode = ins.opcode
        ops = ins.operands
        dests = written_registers(ins)
        guard = None
        if ins.predicate is not None:
            g = self.integer(env.get(ins.predicate[0].name, S.unknown("predicate", Origin.UNINITIALISED)))
            guard = S.logical_not(g) if ins.predicate[1] else g
        if opcode == "cp" and "async" in ins.modifiers and "shared" in ins.modifiers and "global" in ins.modifiers:
            self.async_copy(ins, env, mask, guard, record)
            return
        if opcode in MEMORY_OPS:
            space = memory_space(ins)
            if space == "param":
                addr = next((o for o in ops if isinstance(o, Addr)), None)
                if opcode == "ld" and addr is not None and addr.base in self.entry_params:
                    self.assign(env, dests, [self.param(addr, ins, k) for k in range(len(dests))], guard)
                    return
                self.assign(env, dests, [S.unknown("param", Origin.PARAMETER) for _ in dests], guard)
                return
            self.memory(ins, env, mask, guard, space, record)
            return
        try:
            value = self.compute(ins, env)
        except (ZeroDivisionError, ValueError, OverflowError, KeyError, TypeError, IndexError):
            value = S.unknown(ins.full_opcode, Origin.UNMODELLED)
        if isinstance(value, list):
            self.assign(env, dests, value, guard)
        elif dests:
            self.assign(env, dests[:1], [value], guard)
            if len(dests) > 1:
                # setp's `%p1|%p2`: the second is the negation; any other second result
                # (shfl's predicate, a texture fetch's other components) is not followed
                rest = [S.logical_not(self.integer(value))] if opcode == "setp" else []
                rest += [S.unknown(ins.full_opcode, Origin.UNMODELLED) for _ in dests[1 + len(rest) :]]
                self.assign(env, dests[1:], rest, guard)

    def assign(self, env: dict[str, Value], dests: list[str], values: list[Value], guard: S.Expr | None) -> None:
        for d, v in zip(dests, values):
            if guard is not None and not (guard.is_const and guard.value):
                old = env.get(d)
                if isinstance(v, S.Expr) and isinstance(old, S.Expr):
                    v = S.select(guard, v, old)
                elif isinstance(v, Ptr) and isinstance(old, Ptr) and v.region == old.region:
                    v = Ptr(v.region, v.space, S.select(guard, v.offset, old.offset), min(v.align, old.align))
                elif old is not None or not (isinstance(v, (S.Expr, Ptr))):
                    v = S.unknown("predicated write", Origin.JOIN)
            env[d] = v

    def compute(self, ins: PtxInstruction, env: dict[str, Value]) -> Value:
        opcode, ops = ins.opcode, ins.operands
        src = [self.operand(o, env) for o in ops[1:]] if ops else []
        if opcode in ("mov", "cvt", "cvta"):
            if isinstance(ops[0], Vec) or (ops[1:] and isinstance(ops[1], Vec)):
                return [S.unknown("packed value", Origin.UNMODELLED) for _ in operand_registers(ops[0])]
            if opcode == "cvt" and is_float(ins):
                return S.unknown("float conversion", Origin.FLOAT)
            if opcode == "mov" and is_float(ins):
                return S.unknown("float", Origin.FLOAT)
            v = src[0]
            if opcode == "cvta" and isinstance(v, Ptr):
                space = next((m for m in ins.modifiers if m in ("global", "shared", "local", "const")), v.space)
                return Ptr(v.region, Space.CONSTANT if space == "const" else Space(space), v.offset, v.align)
            return v
        if is_float(ins) and opcode not in ("selp", "setp", "set"):
            return S.unknown("float", Origin.FLOAT)
        if opcode in ("add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor"):
            return self.binary(opcode, ins, src[0], src[1])
        if opcode == "mad":
            if "hi" in ins.modifiers:
                return S.unknown("mad.hi", Origin.UNMODELLED)
            return self.add(self.integer(src[0]) * self.integer(src[1]), src[2])
        if opcode == "neg":
            return -self.integer(src[0])
        if opcode == "not":
            return S.logical_not(self.integer(src[0])) if type_of(ins) == "pred" else ~self.integer(src[0])
        if opcode == "selp":
            c = self.integer(src[2])
            a, b = src[0], src[1]
            if isinstance(a, Ptr) and isinstance(b, Ptr):
                return select_pointer(c, a, b, self.shared_offsets, self.arch)
            return S.select(c, self.integer(a), self.integer(b))
        if opcode in ("bfi", "bfe"):
            return self.bitfield(opcode, src)
        if opcode == "setp":
            c = self.compare(ins, src[0], src[1])
            if len(src) > 2:  # setp.lt.and.s32 p, a, b, q
                q = self.integer(src[2])
                c = (
                    S.logical_and(c, q)
                    if "and" in ins.modifiers
                    else S.logical_or(c, q)
                    if "or" in ins.modifiers
                    else S.unknown("setp", Origin.UNMODELLED)
                )
            return c
        return S.unknown(ins.full_opcode, Origin.UNMODELLED)

    def bitfield(self, opcode: str, src: list[Value]) -> Value:
        """`bfe d, a, pos, len` = (a >> pos) & (2^len - 1); `bfi d, a, b, pos, len` inserts the
        low `len` bits of a into b at `pos`: b + (a << pos) when b < 2^pos and a < 2^len
        (how nvcc writes `blockIdx.y * 32 + (threadIdx.x & 31)`)."""
        if opcode == "bfe":
            a, pos, length = (self.integer(v) for v in src[:3])
            if not (pos.is_const and length.is_const):
                return S.unknown("bfe", Origin.UNMODELLED)
            return S.bitand(S.shr(a, pos), S.const((1 << length.value) - 1))
        a, b, pos, length = (self.integer(v) for v in src[:4])
        if not (pos.is_const and length.is_const):
            return S.unknown("bfi", Origin.UNMODELLED)
        low, high = S.bounds(b)
        if (
            low is not None
            and low >= 0
            and high is not None
            and high < (1 << pos.value)
            and pos.value + length.value >= 32
        ):
            return b + S.shl(a, pos)
        field = ((1 << length.value) - 1) << pos.value
        return S.bitor(S.bitand(b, S.const(~field)), S.shl(S.bitand(a, S.const((1 << length.value) - 1)), pos))

    def async_copy(
        self, ins: PtxInstruction, env: dict[str, Value], mask: S.Expr, guard: S.Expr | None, record: Any
    ) -> None:
        """`cp.async.cg.shared.global [dst], [src], 16`: a global read and a shared write
        of the copy size by every lane."""
        addrs = [o for o in ins.operands if isinstance(o, Addr)]
        size = next((o.value for o in ins.operands if isinstance(o, Imm) and isinstance(o.value, int)), 0)
        if len(addrs) != 2 or size not in (4, 8, 16):
            return
        m = mask if guard is None else S.logical_and(mask, guard)
        for addr, space, op in ((addrs[1], Space.GLOBAL, AccessOp.LOAD), (addrs[0], Space.SHARED, AccessOp.STORE)):
            ptr = self.address(addr, env)
            if isinstance(ptr, Ptr) and ptr.space != space:
                ptr = Ptr(ptr.region, space, ptr.offset, ptr.align)
            record(ins, space, op, ptr, m, size)

    def memory(
        self,
        ins: PtxInstruction,
        env: dict[str, Value],
        mask: S.Expr,
        guard: S.Expr | None,
        space: str | None,
        record: Any,
    ) -> None:
        addr = next((o for o in ins.operands if isinstance(o, Addr)), None)
        ptr = self.address(addr, env) if addr is not None else None
        op = MEMORY_OPS[ins.opcode]
        dests = written_registers(ins)
        costed = (Space.SHARED, Space.GLOBAL)
        if space in costed or (space is None and ptr is not None and ptr.space in costed):
            resolved = Space(space or ptr.space)  # type: ignore[union-attr]
            if isinstance(ptr, Ptr) and ptr.space != resolved:
                ptr = Ptr(ptr.region, resolved, ptr.offset, ptr.align)
            m = mask if guard is None else S.logical_and(mask, guard)
            record(ins, resolved, op, ptr, m)
        elif space is None:
            m = mask if guard is None else S.logical_and(mask, guard)
            record(ins, Space.UNKNOWN, op, ptr, m)
        varying = not isinstance(ptr, Ptr) or bool(ptr.offset.free_symbols & THREAD_SET) or lane_varying(ptr.offset)
        for d in dests:
            env[d] = S.unknown(f"value of {instruction_text(ins)}", Origin.LOADED, varying)


# ============================================================================ the walk


def _defs_in(cfg: PtxCfg, loop: Loop) -> dict[str, list[tuple[int, PtxInstruction]]]:
    defs: dict[str, list[tuple[int, PtxInstruction]]] = {}
    for b in sorted(loop.body):
        for ins in cfg.blocks[b].instructions:
            for r in written_registers(ins):
                defs.setdefault(r, []).append((b, ins))
    return defs


def _innermost(cfg: PtxCfg, block: int) -> Loop | None:
    loops = cfg.loops_of(block)
    return loops[-1] if loops else None


def evaluate(
    fn: PtxFunction,
    module: PtxModule,
    *,
    launch: LaunchConfig | None = None,
    params: Mapping[str, int] | None = None,
    naming: ParamNaming | None = None,
    cfg: PtxCfg | None = None,
    arch: Architecture | None = None,
) -> Dataflow:
    """Evaluate every register of `fn` symbolically and collect its memory accesses, for
    `arch` (the warp size of `%laneid`, the alignment assumed of arrays; the default one
    when not given)."""
    cfg = cfg or build_cfg(fn)
    ev = _Evaluator(fn, module, launch, params or {}, naming or ParamNaming(), arch or get_arch())
    entry_env: dict[int, dict[str, Value]] = {}
    exit_env: dict[int, dict[str, Value]] = {}
    masks: dict[int, S.Expr] = {}
    edge_masks: dict[tuple[int, int], S.Expr] = {}
    accesses: list[PtxAccess] = []
    loop_by_header = {lp.header: lp for lp in cfg.loops}
    loop_defs = {lp.header: _defs_in(cfg, lp) for lp in cfg.loops}
    loop_ctx_parts: dict[int, LoopParts] = {}
    # the edges a loop's own test takes: they add no condition to the masks inside the loop
    loop_test_edges: set[tuple[int, int]] = set()
    for lp in cfg.loops:
        for b in lp.body:
            for s in cfg.graph.successors(b):
                if s not in lp.body:
                    loop_test_edges.update((b, t) for t in cfg.graph.successors(b))

    for b in cfg.order:
        preds = [p for p in cfg.dag.predecessors(b) if p in exit_env]
        env, mask = _join(cfg, ev, b, preds, exit_env, masks, edge_masks, loop_defs, loop_ctx_parts)
        header = loop_by_header.get(b)
        if header is not None:
            loop_ctx_parts[b] = _enter_loop(cfg, ev, header, env, loop_defs[b])
        entry_env[b] = dict(env)
        masks[b] = mask
        headers = tuple(lp.header for lp in cfg.loops_of(b))

        def record(
            ins: PtxInstruction,
            space: Space,
            op: AccessOp,
            ptr: Ptr | None,
            m: S.Expr,
            size: int | None = None,
            headers: tuple[int, ...] = headers,
        ) -> None:
            accesses.append(PtxAccess(ins, space, op, size or element_bytes(ins), ptr, m, headers))

        for ins in cfg.blocks[b].instructions:
            ev.step(ins, env, mask, record)
        exit_env[b] = env
        for s in cfg.dag.successors(b):
            guard = cfg.graph[b][s].get("guard")
            if guard is None or (b, s) in loop_test_edges:
                edge_masks[(b, s)] = mask
            else:
                edge_masks[(b, s)] = S.logical_and(mask, _guard_value(ev, guard, env))

    loops = {lp.header: _loop_ctx(cfg, ev, lp, loop_ctx_parts.get(lp.header), exit_env) for lp in cfg.loops}
    for acc in accesses:
        acc.loops = tuple(ctx for h in acc.loop_headers if (ctx := loops.get(h)) is not None)
    return Dataflow(fn, cfg, accesses, entry_env, exit_env, masks, loops, ev.notes)


def _guard_value(ev: _Evaluator, guard: EdgeGuard, env: dict[str, Value]) -> S.Expr:
    v = ev.integer(env.get(guard.register, S.unknown(f"undefined {guard.register}", Origin.UNINITIALISED)))
    return S.logical_not(v) if guard.negated else v


def _join(
    cfg: PtxCfg,
    ev: _Evaluator,
    b: int,
    preds: list[int],
    exit_env: dict[int, dict[str, Value]],
    masks: dict[int, S.Expr],
    edge_masks: dict[tuple[int, int], S.Expr],
    loop_defs: dict[int, dict[str, list]],
    loop_parts: dict[int, LoopParts],
) -> tuple[dict[str, Value], S.Expr]:
    if not preds:
        return {}, S.const(1)
    envs = []
    for p in preds:
        env = exit_env[p]
        left = [lp for lp in cfg.loops_of(p) if b not in lp.body]
        if left:  # leaving a loop: what it writes is unknown afterwards
            env = dict(env)
            for lp in left:
                parts = loop_parts.get(lp.header)
                last = _last_iteration(cfg, ev, lp, parts, exit_env) if p in lp.latches else None
                for r in loop_defs[lp.header]:
                    v = env.get(r)
                    if last is not None and parts is not None and r in parts.inductions:
                        # the induction's value at the end of the last iteration
                        env[r] = (
                            v.subs({parts.counter: last})
                            if isinstance(v, S.Expr)
                            else _moved(cast(Ptr, v), parts.counter, last)  # an induction holds a value
                        )
                    else:
                        env[r] = S.unknown("value after a loop", Origin.LOOP_CARRIED)
        envs.append(env)
    conds = [edge_masks.get((p, b), masks.get(p, S.const(1))) for p in preds]
    if len(preds) == 1:
        return dict(envs[0]), conds[0]
    idom = cfg.idom.get(b)
    if idom is not None and idom in masks and cfg.post_dominates(b, idom):
        mask = masks[idom]
    else:
        mask = conds[0]
        for c in conds[1:]:
            mask = S.logical_or(mask, c)
    out: dict[str, Value] = {}
    for r in set().union(*envs):
        values = [e.get(r) for e in envs]
        present = [(v, c) for v, c in zip(values, conds) if v is not None]
        first = present[0][0]
        if all(v is first or (type(v) is type(first) and v == first) for v, _ in present):
            out[r] = first
        elif len(present) == 2:
            first_pred = next(p for p, v in zip(preds, values) if v is not None)
            cond = _branch_condition(cfg, ev, idom, first_pred, b, exit_env)
            cond = present[0][1] if cond is None else cond
            out[r] = _select(cond, present[0][0], present[1][0], ev)
        elif len(present) <= MAX_JOINED_PATHS:
            # an else-if chain joined at once: each path's value under the condition of its edge
            # (a lane takes one path), as srad's `if`s choose which array a load reads
            joined = present[-1][0]
            for v, c in reversed(present[:-1]):
                joined = _select(c, v, joined, ev)
            out[r] = joined
        else:
            out[r] = S.unknown("join", Origin.JOIN)
    return out, mask


def _branch_condition(
    cfg: PtxCfg, ev: _Evaluator, d: int | None, pred: int, b: int, exit_env: dict[int, dict[str, Value]]
) -> S.Expr | None:
    """The condition, at the branch that ends `d` (the join's immediate dominator), under
    which control reaches the join `b` through `pred`: the guard of the edge out of `d`
    that leads there. Relative to `d`, so a value joined after an `if` is
    `select(condition of the if, a, b)`, not a select on the whole mask."""
    if d is None or d not in exit_env:
        return None
    for s in cfg.dag.successors(d):
        if (s == b and pred == d) or (s != b and cfg.dominates(s, pred)):
            guard = cfg.graph[d][s].get("guard")
            return _guard_value(ev, guard, exit_env[d]) if guard is not None else None
    return None


def _select(c: S.Expr, a: Value, b: Value, ev: _Evaluator) -> Value:
    if isinstance(a, S.Expr) and isinstance(b, S.Expr):
        return S.select(c, a, b)
    if isinstance(a, Ptr) and isinstance(b, Ptr):
        chosen = select_pointer(c, a, b, ev.shared_offsets, ev.arch)
        if chosen is not None:
            return chosen
    return S.unknown("join", Origin.JOIN)


def _enter_loop(
    cfg: PtxCfg, ev: _Evaluator, loop: Loop, env: dict[str, Value], defs: dict[str, list[tuple[int, PtxInstruction]]]
) -> LoopParts:
    """Replace, in the header's `env`, what the loop writes: inductions by `init + k*step`,
    the rest by unknowns. Returns what the loop's `LoopCtx` needs."""
    k = S.sym(f"k@{loop.uid}")
    additive: dict[str, tuple[Value, Value]] = {}
    multiplicative: list[tuple[str, str, int, Value]] = []
    steps = _symbolic_steps(cfg, ev, loop, env, defs)
    for r, sites in defs.items():
        init = env.get(r)
        if r in steps and init is not None:
            additive[r] = (init, steps[r])
            continue
        kind = _induction(cfg, loop, r, sites, defs)
        if kind is not None and init is not None:
            op, operand = kind
            step = ev.operand(operand, env)
            if op in ("+", "-") and isinstance(step, S.Expr) and not S.is_unknown(step):
                additive[r] = (init, step if op == "+" else -step)
                continue
            if (
                op in MULTIPLICATIVE.values()
                and isinstance(step, S.Expr)
                and step.is_const
                and isinstance(init, S.Expr)
            ):
                multiplicative.append((r, op, step.value, init))
        env[r] = S.unknown("modified in loop", Origin.LOOP_CARRIED)
    for r, (init, step) in additive.items():
        if isinstance(init, Ptr):
            env[r] = Ptr(init.region, init.space, init.offset + k * step, init.align)
        elif isinstance(init, S.Expr):
            env[r] = init + k * step
    if not additive and len(multiplicative) == 1:
        r, op, step, init = multiplicative[0]
        counter = f"{r}@{loop.uid}"
        env[r] = S.sym(counter)
        return LoopParts(counter, LoopKind.MULTIPLICATIVE, init=init, op=op, step=step)
    return LoopParts(f"k@{loop.uid}", inductions=frozenset(additive))


def _symbolic_steps(
    cfg: PtxCfg, ev: _Evaluator, loop: Loop, env: dict[str, Value], defs: dict[str, list[tuple[int, PtxInstruction]]]
) -> dict[str, S.Expr]:
    """Registers that one iteration moves by an amount that does not depend on the loop:
    the body is run once with every register it writes standing for its value at the top
    (`%rd30@top`), and a register that ends the iteration as `itself + step` is an
    induction with that step, however many adds carry it there (`rd22 = rd30 + s;
    rd23 = rd22 + s; rd30 = rd23 + s` moves by 3*s). Loops with inner loops are left to
    the one-instruction pattern (`_induction`)."""
    if len(loop.latches) != 1 or any(other is not loop and other.header in loop.body for other in cfg.loops):
        return {}
    top: dict[str, str] = {r: f"{r}@top" for r in defs}
    start = dict(env)
    for r, name in top.items():
        init = env.get(r)
        if isinstance(init, Ptr):
            start[r] = Ptr(init.region, init.space, S.sym(name), init.align)
        elif isinstance(init, S.Expr):
            start[r] = S.sym(name)
    order = [b for b in cfg.order if b in loop.body]
    envs: dict[int, dict[str, Value]] = {}

    def ignore(*_: Any) -> None:
        return None

    for b in order:
        preds = [p for p in cfg.dag.predecessors(b) if p in envs]
        if b == loop.header:
            cur = dict(start)
        elif len(preds) == 1:
            cur = dict(envs[preds[0]])
        else:
            return {}  # a branch inside the body: the one-instruction pattern decides
        for ins in cfg.blocks[b].instructions:
            ev.step(ins, cur, S.const(1), ignore)
        envs[b] = cur
    end = envs.get(loop.latches[0])
    if end is None:
        return {}
    names = set(top.values())
    out: dict[str, S.Expr] = {}
    for r, name in top.items():
        v, init = end.get(r), start.get(r)
        if isinstance(v, Ptr) and isinstance(init, Ptr) and v.region == init.region:
            diff = v.offset - S.sym(name)
        elif isinstance(v, S.Expr) and isinstance(init, S.Expr):
            diff = v - S.sym(name)
        else:
            continue
        if not S.is_unknown(diff) and not (diff.free_symbols & names):
            out[r] = diff
    return out


def _induction(
    cfg: PtxCfg, loop: Loop, r: str, sites: list[tuple[int, PtxInstruction]], defs: dict[str, list]
) -> tuple[str, Any] | None:
    """(`+`|`-`|`*`|`/`|`<<`|`>>`, step operand) when `r` is written once per iteration as
    `r = r op invariant`, else None."""
    if len(sites) != 1:
        return None
    block, ins = sites[0]
    if ins.predicate is not None or _innermost(cfg, block) is not loop:
        return None
    if not all(cfg.dominates(block, latch) for latch in loop.latches):
        return None
    ops = ins.operands
    if len(ops) != 3 or is_float(ins):
        return None
    a, b = ops[1], ops[2]

    def invariant(o: Any) -> bool:
        return isinstance(o, (Imm, SpecialReg)) or (isinstance(o, Reg) and o.name not in defs)

    if ins.opcode == "add":
        if isinstance(a, Reg) and a.name == r and invariant(b):
            return "+", b
        if isinstance(b, Reg) and b.name == r and invariant(a):
            return "+", a
    if ins.opcode == "sub" and isinstance(a, Reg) and a.name == r and invariant(b):
        return "-", b
    if ins.opcode in MULTIPLICATIVE and isinstance(a, Reg) and a.name == r and isinstance(b, Imm):
        if ins.opcode == "mul" and ("hi" in ins.modifiers or "wide" in ins.modifiers):
            return None
        return MULTIPLICATIVE[ins.opcode], b
    return None


def _loop_ctx(
    cfg: PtxCfg, ev: _Evaluator, loop: Loop, parts: LoopParts | None, exit_env: dict[int, dict[str, Value]]
) -> LoopCtx | None:
    if parts is None:
        return None
    cond = _loop_condition(cfg, ev, loop, parts, exit_env)
    return LoopCtx(loop.uid, parts.counter, cond, parts.kind, parts.init, parts.op, parts.step)


def _loop_condition(
    cfg: PtxCfg, ev: _Evaluator, loop: Loop, parts: LoopParts, exit_env: dict[int, dict[str, Value]]
) -> S.Expr | None:
    """The condition for iteration k to run, from the loop's only exiting block."""
    exiting = {b for b in loop.body for s in cfg.graph.successors(b) if s not in loop.body}
    if len(exiting) != 1:
        return None
    x = next(iter(exiting))
    if x not in exit_env:
        return None
    stay = [s for s in cfg.graph.successors(x) if s in loop.body]
    if len(stay) != 1:
        return None
    guard = cfg.graph[x][stay[0]].get("guard")
    if guard is None:
        return None
    held = _guard_value(ev, guard, exit_env[x])
    if x not in loop.latches:
        # a test at the top (the header): the condition of iteration k itself
        return held if x == loop.header else None
    if parts.kind == LoopKind.ADDITIVE:
        held = _bounded(held, parts.counter)
        k = S.sym(parts.counter)
        # a test at the bottom: iteration k runs when it is the first, or the test after k-1 held
        return S.logical_or(S.compare("==", k, S.const(0)), held.subs({parts.counter: k - 1}))
    return None


def _last_iteration(
    cfg: PtxCfg, ev: _Evaluator, loop: Loop, parts: LoopParts | None, exit_env: dict[int, dict[str, Value]]
) -> S.Expr | None:
    """The counter of the last iteration of a bottom-tested additive loop whose test is
    `a != b` (exact: the loop leaves when a - b reaches 0) or `a < b` moving by 1, so that
    the registers nvcc carries out of an unrolled loop into its remainder loop are known."""
    if parts is None or parts.kind != LoopKind.ADDITIVE or len(loop.latches) != 1:
        return None
    x = loop.latches[0]
    exiting = {b for b in loop.body for t in cfg.graph.successors(b) if t not in loop.body}
    stay = [t for t in cfg.graph.successors(x) if t in loop.body]
    if exiting != {x} or len(stay) != 1 or x not in exit_env:
        return None
    guard = cfg.graph[x][stay[0]].get("guard")
    if guard is None:
        return None
    atom = S.single_atom(_guard_value(ev, guard, exit_env[x]))
    if not isinstance(atom, S.Term) or atom.op not in ("!=", "<") or len(atom.args) != 2:
        return None
    diff = atom.args[0] - atom.args[1]
    affine = S.affine_in(diff, (parts.counter,))
    if affine is None:
        return None
    c, rest = affine[0][0], affine[1]
    if S.is_unknown(rest):
        return None
    if atom.op == "!=" and c > 0:
        return S.floordiv(-rest, S.const(c))
    if atom.op == "!=" and c < 0:
        return S.floordiv(rest, S.const(-c))
    if atom.op == "<" and c == 1:
        return -rest
    return None


def _bounded(cond: S.Expr, counter: str) -> S.Expr:
    """`a != b` with `a - b` moving towards 0 by a constant step each iteration becomes
    `a - b < 0` (or `> 0`): nvcc writes an exact trip count as `!=`, which never turns
    false for the values of a parameter that the loop's guard excludes (and the cost walk
    samples)."""
    atom = S.single_atom(cond)
    if atom is None or not isinstance(atom, S.Term) or atom.op != "!=" or len(atom.args) != 2:
        return cond
    diff = atom.args[0] - atom.args[1]
    affine = S.affine_in(diff, (counter,))
    if affine is None or affine[0][0] == 0:
        return cond
    return S.compare("<" if affine[0][0] > 0 else ">", diff, S.const(0))


def _moved(p: Ptr, counter: str, last: S.Expr) -> Ptr:
    """A pointer induction's value with the loop counter at `last`."""
    return Ptr(p.region, p.space, p.offset.subs({counter: last}), p.align)
