"""Lowering, part 4: statements and local declarations.

`StatementLowering` turns a function body into IR statements: blocks with their scopes,
`if`, the three loops (`Loop`), `switch` as an if-chain, `return`/`break`/`continue`,
local declarations (`__shared__` arrays, references bound to an lvalue's address, `auto`
typed from the initializer), assignments (to a register variable, a field of a local
struct, or a `Store` to memory), barriers, kernel launches and inline assembly (`inline_asm`). A statement that cannot be
lowered becomes `Skipped`, naming the variables it writes, and a WL903 warning.

A layer of `analyzer.ir.lower.Lowerer` over `CallLowering` (see `lower_scopes` for why).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from analyzer.diagnostics import Severity, Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.inline_asm import AsmInstruction, AsmMemoryOp, AsmNotRead, read_asm
from analyzer.ir.lower_calls import CallLowering, callee_name
from analyzer.ir.lower_expressions import SideEffects
from analyzer.ir.lower_scopes import LoweringError, Scope
from analyzer.ir.nodes import OpaqueKind, Space
from analyzer.syntax import ast as A


class ForwardJumps:
    """Where a block's statements go while forward gotos may have jumped past them: into an
    `if (!flag)` per flag set, nested, until the label of each is reached."""

    def __init__(self, out: list[N.Stmt]) -> None:
        self.current = out
        self.opened: list[tuple[N.Variable, list[N.Stmt]]] = []  # flag, the list its guard went into

    def skip_rest(self, flag: N.Variable) -> None:
        if any(f is flag for f, _ in self.opened):
            return
        guarded: list[N.Stmt] = []
        span = flag.span
        stay = N.Binary("==", N.VarRef(flag, T.INT, span), N.Const(0, T.INT, span), T.BOOL, span)
        self.current.append(N.If(stay, guarded, [], span))
        self.opened.append((flag, self.current))
        self.current = guarded

    def land(self, flag: N.Variable, clear: N.Stmt) -> None:
        """At the flag's label: close its guard (and those opened inside it, opened again after)."""
        at = next((i for i, (f, _) in enumerate(self.opened) if f is flag), None)
        if at is None:
            self.current.append(clear)
            return
        later = [f for f, _ in self.opened[at + 1 :]]
        self.current = self.opened[at][1]
        del self.opened[at:]
        self.current.append(clear)
        for f in later:
            self.skip_rest(f)


class StatementLowering(CallLowering):
    """Statements and local declarations to IR statements."""

    goto_flags: dict[str, N.Variable]  # label -> its flag, for labels a forward goto may jump to

    if TYPE_CHECKING:  # from the top level above

        def lower_global_declaration(self, decl: A.Declaration) -> None: ...

    def lower_block(self, items: Iterable[A.Node]) -> list[N.Stmt]:
        self.scopes.append(Scope())
        items = list(items)
        out: list[N.Stmt] = []
        jumps = ForwardJumps(out)
        try:
            out.extend(self.goto_targets(items))
            for item in items:
                if isinstance(item, A.Label):
                    self.reach_label(item, jumps)
                    continue
                try:
                    jumps.current.extend(self.lower_stmt(item))
                except LoweringError as err:
                    self.warn(f"{err}; statement skipped", err.span)
                    jumps.current.append(N.Skipped(str(err), self.written_vars(item), item.span))
                    self.declare_skipped(item)
                for flag in self.pending_jumps(item):
                    jumps.skip_rest(flag)
        finally:
            self.scopes.pop()
        return out

    # ------------------------------------------------------------------ goto
    # A forward `goto L` sets a flag of L's; every statement between the goto and `L:` runs only
    # where no flag is set (the rest of each block on the way out, and a loop on the way out
    # stops), and `L:` clears the flag: the lanes that jumped run on from there. Nothing is
    # guessed, so every access keeps its exact cost for the lanes that run it.
    def goto_targets(self, items: list[A.Node]) -> list[N.Stmt]:
        """A cleared flag for each label of this block that a goto before it jumps to."""
        out: list[N.Stmt] = []
        for at, item in enumerate(items):
            if isinstance(item, A.Label) and any(g.label == item.name for it in items[:at] for g in _gotos(it)):
                flag = N.Variable(f"goto {item.name}", T.INT, "local", item.span, uid=self.new_uid())
                self.goto_flags[item.name] = flag
                out.append(N.Assign(flag, N.Const(0, T.INT, item.span), item.span))
        return out

    def pending_jumps(self, item: A.Node) -> list[N.Variable]:
        """The flags of the labels not reached yet that `item` may jump to."""
        if not self.goto_flags:  # no label waits (nearly always): no need to walk `item`
            return []
        return [self.goto_flags[g.label] for g in _gotos(item) if g.label in self.goto_flags]

    def reach_label(self, label: A.Label, jumps: ForwardJumps) -> None:
        flag = self.goto_flags.pop(label.name, None)
        if flag is not None:
            jumps.land(flag, N.Assign(flag, N.Const(0, T.INT, label.span), label.span))

    def lower_goto(self, s: A.Goto) -> list[N.Stmt]:
        flag = self.goto_flags.get(s.label)
        if flag is None:
            raise LoweringError(
                f"'goto {s.label}' jumps backwards or into a block: a loop whose trips are not known, not modelled",
                s.span,
            )
        return [N.Assign(flag, N.Const(1, T.INT, s.span), s.span)]

    def leave_on_jump(self, loop: N.Loop, s: A.Node) -> N.Loop:
        """A loop that a goto leaves stops where the flag is set (its trips then are not known)."""
        for flag in self.pending_jumps(s):
            stay = N.Binary("==", N.VarRef(flag, T.INT, s.span), N.Const(0, T.INT, s.span), T.BOOL, s.span)
            loop.cond = stay if loop.cond is None else N.Binary("&&", stay, loop.cond, T.BOOL, s.span)
        return loop

    def declare_skipped(self, item: A.Node) -> None:
        """The names a skipped declaration declares, declared with no value: a later use reads an
        unknown local, not a name nothing defines."""
        decl = item.decl if isinstance(item, A.DeclStmt) else item
        if not isinstance(decl, A.Declaration):
            return
        for d in decl.declarators:
            dec = d.declarator
            if dec.name and self.lookup(dec.name) is None:
                var = N.Variable(
                    dec.name, T.UnknownType(dec.name), "local", dec.span, space=Space.LOCAL, uid=self.new_uid()
                )
                self.declare(var, dec.name)

    def written_vars(self, node: A.Node) -> tuple[N.Variable, ...]:
        out = []
        for n in node.walk():
            if isinstance(n, A.Assign) and isinstance(n.target, A.Identifier):
                v = self.lookup(n.target.name)
                if isinstance(v, N.Variable):
                    out.append(v)
        return tuple(out)

    def lower_stmt(self, s: A.Node) -> list[N.Stmt]:
        """One statement, with the assignments and increments inside its expressions sequenced
        as C sequences them: before it, or after it (`SideEffects`)."""
        outer = self.side_effects
        self.side_effects = effects = SideEffects()
        try:
            out = self._lower_stmt(s)
        finally:
            self.side_effects = outer
        if effects.before or effects.after:
            return effects.before + out + effects.after
        return out

    def sequenced(self, lower: Callable[[], list[N.Stmt]]) -> list[N.Stmt]:
        """What `lower` makes, with its own side effects around it (a `for` step)."""
        outer = self.side_effects
        self.side_effects = effects = SideEffects()
        try:
            out = lower()
        finally:
            self.side_effects = outer
        return effects.before + out + effects.after

    def condition(self, e: A.Expr) -> tuple[list[N.Stmt], N.Expr, list[N.Stmt]]:
        """A loop condition, with the statements its assignments and increments make before and
        after it is tested: they run each time round, so they go inside the loop (`loop_test`)."""
        outer = self.side_effects
        self.side_effects = effects = SideEffects()
        try:
            cond = self.rvalue(e)
        finally:
            self.side_effects = outer
        return effects.before, cond, effects.after

    def loop_test(self, e: A.Expr) -> tuple[N.Expr | None, list[N.Stmt]]:
        """The loop's condition, or, where it has side effects (`while ((x = next()) != 0)`,
        `i++ < n`), no condition and the statements that test it at the top of the body:
        `before; if (!cond) { after; break; } after;`. The loop then has a `break`: its trips
        are not counted exactly, but each access in it is costed."""
        before, cond, after = self.condition(e)
        if not before and not after:
            return cond, []
        leave = N.If(N.Unary("!", cond, T.BOOL, e.span), [*after, N.Break(e.span)], [], e.span)
        return None, [*before, leave, *after]

    def _lower_stmt(self, s: A.Node) -> list[N.Stmt]:
        self.statement += 1
        if isinstance(s, A.Compound):
            return self.lower_block(s.items)
        if isinstance(s, A.DeclStmt):
            return self.lower_local_declaration(s.decl)
        if isinstance(s, A.Declaration):
            return self.lower_local_declaration(s)
        if isinstance(s, A.Asm):
            return self.lower_asm(s)
        if isinstance(s, A.ExprStmt):
            if s.expr is None:
                return []
            return self.lower_expr_stmt(s.expr)
        if isinstance(s, A.If):
            cond = self.rvalue(s.cond)
            after, self.side_effects.after = self.side_effects.after, []  # type: ignore[union-attr]
            # `if (a[i++] > 0)`: the step is done before either branch runs
            then = after + self.lower_block([s.then])
            other = self.lower_block([s.otherwise]) if s.otherwise is not None else []
            return [N.If(cond, then, after + other if after else other, s.span)]
        if isinstance(s, A.For):
            self.scopes.append(Scope())
            try:
                init = self.lower_stmt(s.init) if s.init is not None else []
                test, top = self.loop_test(s.cond) if s.cond is not None else (None, [])
                step_expr = s.step
                step = self.sequenced(lambda: self.lower_expr_stmt(step_expr)) if step_expr is not None else []
                body = top + self.lower_block([s.body])
                var = next((st.var for st in init if isinstance(st, N.Assign)), None)
                if var is None and step and isinstance(step[-1], N.Assign):
                    var = step[-1].var
            finally:
                self.scopes.pop()
            return [self.leave_on_jump(N.Loop(init, test, step, body, s.span, True, var), s)]
        if isinstance(s, A.While):
            test, top = self.loop_test(s.cond)
            return [self.leave_on_jump(N.Loop([], test, [], top + self.lower_block([s.body]), s.span, True), s)]
        if isinstance(s, A.DoWhile):
            body = self.lower_block([s.body])
            test, bottom = self.loop_test(s.cond)
            if bottom and any(isinstance(n, A.Continue) for n in s.body.walk()):
                # the test at the end of the body would be skipped by `continue`
                raise LoweringError("an assignment or increment in the condition of a do loop with continue", s.span)
            return [self.leave_on_jump(N.Loop([], test, [], body + bottom, s.span, False), s)]
        if isinstance(s, A.Switch):
            return self.lower_switch(s)
        if isinstance(s, A.Return):
            return [N.Return(self.rvalue(s.value) if s.value is not None else None, s.span)]
        if isinstance(s, A.Break):
            return [N.Break(s.span)]
        if isinstance(s, A.Continue):
            return [N.Continue(s.span)]
        if isinstance(s, A.Goto):
            return self.lower_goto(s)
        if isinstance(s, A.CaseLabel):
            return []
        if isinstance(s, A.StaticAssert):
            return []
        if isinstance(s, A.Unsupported):
            return [N.Skipped(s.what, (), s.span)]
        raise LoweringError(f"unsupported statement {type(s).__name__}", s.span)

    def lower_switch(self, s: A.Switch) -> list[N.Stmt]:
        # A switch becomes an if-chain over its cases; fall-through is approximated by taking
        # each case's statements up to the next label.
        value = self.rvalue(s.expr)
        groups: list[tuple[list[A.Expr | None], list[A.Node]]] = []
        for item in s.body.items:
            if isinstance(item, A.CaseLabel):
                if groups and not groups[-1][1]:
                    groups[-1][0].append(item.value)
                else:
                    groups.append(([item.value], []))
            elif groups:
                groups[-1][1].append(item)
        out: list[N.Stmt] = []
        default: list[N.Stmt] = []
        chain: N.If | None = None
        for labels, body in groups:
            stmts = [st for st in self.lower_block(body) if not isinstance(st, N.Break)]
            if None in labels:
                default = stmts
                continue
            conds = [N.Binary("==", value, self.rvalue(lab), T.BOOL, lab.span) for lab in labels if lab is not None]
            cond = conds[0]
            for c in conds[1:]:
                cond = N.Binary("||", cond, c, T.BOOL, s.span)
            node = N.If(cond, stmts, [], s.span)
            if chain is None:
                out.append(node)
            else:
                chain.otherwise = [node]
            chain = node
        if chain is None:
            return default
        chain.otherwise = default
        return out

    def lower_local_declaration(self, decl: A.Declaration) -> list[N.Stmt]:
        self.declaring_volatile = "volatile" in decl.specs.qualifiers
        try:
            return self._lower_local_declaration(decl)
        finally:
            self.declaring_volatile = False

    def _lower_local_declaration(self, decl: A.Declaration) -> list[N.Stmt]:
        specs = decl.specs
        if "typedef" in specs.storage:
            self.lower_global_declaration(decl)
            return []
        out: list[N.Stmt] = []
        base = self.declared_type(specs, None)
        for d in decl.declarators:
            dec = d.declarator
            if not dec.name:
                continue
            t = self.apply_derivations(base, dec.derivations)
            if isinstance(t, T.FunctionType):
                continue
            if "__shared__" in specs.storage:
                t = self.padded(dec.name, t)
                var = N.Variable(
                    dec.name,
                    t,
                    "shared",
                    dec.span,
                    space=Space.SHARED,
                    uid=self.new_uid(),
                    extern="extern" in specs.storage,
                )
                self.declare(var, dec.name)
                continue
            if isinstance(t, T.PointerType) and t.name == "&" and isinstance(d.init, A.Call):
                # `const Box &b = node.bounding_box()`: bound to what the call returns, which
                # warplint holds as a value: a copy reads the same
                t = t.pointee
            if isinstance(t, T.PointerType) and t.name == "&" and d.init is not None:
                # a reference is an alias: bind the name to the referenced lvalue's address
                target = self.address_of(d.init)
                var = N.Variable(dec.name, T.PointerType(t.pointee), "local", dec.span, uid=self.new_uid())
                var.points_to = self.static_space(target)
                var.is_reference = True
                self.declare(var, dec.name)
                out.append(N.Assign(var, target, dec.span))
                continue
            if dec.constructor_args and dec.name.startswith("::"):
                # `FDWT53<64, 8>::run(in, out, n);` reads as a declaration of `::run`, a variable
                # nothing can declare: it is a call of a static member function, not followed
                operands = tuple(self.rvalue(a) for a in dec.constructor_args)
                what = f"call to {t}{dec.name}"
                call = N.Opaque(OpaqueKind.CALL, what, T.UnknownType("?"), d.span, operands, callee=what[8:])
                out.append(N.Eval(call, d.span))
                continue
            init_expr: N.Expr | None = None
            if d.init is not None:
                init_expr = self.rvalue(d.init, expected=t)
                if isinstance(t, T.UnknownType) and t.name == "auto":
                    t = init_expr.type
            elif dec.constructor_args:
                args = [self.rvalue(a) for a in dec.constructor_args]
                init_expr = self.construct(t, args, dec.span)
            var = N.Variable(dec.name, t, "local", dec.span, space=Space.LOCAL, uid=self.new_uid())
            if isinstance(t, T.PointerType) and init_expr is not None:
                var.points_to = self.static_space(init_expr)
            if (
                isinstance(t, T.ScalarType)
                and ("const" in specs.qualifiers or "constexpr" in specs.storage)
                and d.init is not None
            ):
                var.const_value = self.const_int(d.init)
            self.declare(var, dec.name)
            if init_expr is not None:
                out.append(N.Assign(var, init_expr, d.span))
        return out

    def lower_expr_stmt(self, e: A.Expr) -> list[N.Stmt]:
        if isinstance(e, A.Comma):
            out: list[N.Stmt] = []
            for x in e.exprs:
                out.extend(self.lower_expr_stmt(x))
            return out
        if isinstance(e, A.Assign):
            return self.lower_assign(e)
        if isinstance(e, A.UnaryOp) and e.op in ("++", "--", "p++", "p--"):
            one = A.Constant("int", 1, "1", e.span)
            return self.lower_assign(A.Assign("+=" if "+" in e.op else "-=", e.operand, one, e.span))
        if isinstance(e, A.Call):
            name = callee_name(e.func)
            if name is not None and builtins.is_barrier_statement(name):
                return [N.Sync(e.span)]
        if isinstance(e, A.Launch):
            return [self.lower_launch(e)]
        return [N.Eval(self.rvalue(e), e.span)]

    def lower_asm(self, s: A.Asm) -> list[N.Stmt]:
        """Inline assembly: each `ld`/`st` the PTX grammar reads is a load or store of the C
        pointer bound to its address operand (costed as one); every other output becomes a value
        warplint does not know. A template holding `ld`/`st` that cannot be read gets a note
        (WL908) saying why its accesses are not costed."""
        operands = s.outputs + s.inputs
        try:
            instructions = read_asm(s.template)
        except AsmNotRead as err:
            if re.search(r"(^|[;\s])(ld|st)\.", s.template):
                message = f"the loads and stores of this inline assembly are not costed: {err}"
                self.warn(message, s.span, "WL908", Severity.NOTE)
            instructions = [AsmInstruction("?", tuple(range(len(s.outputs))))]
        # each input's value once, before the assembly runs (the loads in `"r"(p[i])` are costed)
        values = {n: self.rvalue(op.expr) for n, op in enumerate(operands) if n >= len(s.outputs)}
        used = {n for ins in instructions if ins.memory for n in (ins.memory.address, ins.memory.value)}
        out: list[N.Stmt] = [N.Eval(v, operands[n].span) for n, v in values.items() if n not in used]
        loaded: dict[int, N.Expr] = {}
        for ins in instructions:
            mem = ins.memory
            if mem is not None and mem.address in values:
                out += self.asm_memory(ins.opcode, mem, operands, values, s.span, loaded)
            for n in ins.written:
                if n < len(s.outputs) and n not in loaded:
                    loaded[n] = N.Opaque(OpaqueKind.VALUE, f"result of `{ins.opcode}`", T.UnknownType("?"), s.span)
        for n, op in enumerate(s.outputs):
            value = loaded.get(n) or N.Opaque(OpaqueKind.VALUE, "result of inline assembly", T.UnknownType("?"), s.span)
            out += self.asm_output(op, value)
        return out

    def asm_memory(
        self,
        opcode: str,
        mem: AsmMemoryOp,
        operands: tuple[A.AsmOperand, ...],
        values: dict[int, N.Expr],
        span: Span,
        loaded: dict[int, N.Expr],
    ) -> list[N.Stmt]:
        """One `ld`/`st` of inline assembly as the access it makes, at the `asm` statement."""
        pointer = operands[mem.address].expr
        base = values[mem.address]
        elem = _asm_element(mem)
        addr: N.Expr = N.Cast(base, T.PointerType(elem), span)
        if mem.offset:
            addr = N.PtrAdd(addr, N.Const(mem.offset, T.LONG, span), T.PointerType(elem), span)
        acc = self.make_access(mem.kind, addr, elem, span, self.source(pointer.span))
        offset = f" + {mem.offset}" if mem.offset > 0 else f" - {-mem.offset}" if mem.offset else ""
        acc.text = f"{opcode} [{self.source(pointer.span)}{offset}]"  # what the message quotes
        if mem.space in ("global", "shared"):
            acc.space = Space(mem.space)
        if mem.kind == "load":
            if mem.value is not None:
                loaded[mem.value] = N.Load(acc, elem, span)
            return [N.Eval(N.Load(acc, elem, span), span)] if mem.value is None else []
        value = values.get(mem.value) if mem.value is not None else None
        return [N.Store(acc, value or N.Const(0, elem, span), span)]

    def asm_output(self, op: A.AsmOperand, value: N.Expr) -> list[N.Stmt]:
        """An output operand given `value`: a register variable assigned, else a store to memory."""
        target = op.expr
        if isinstance(target, A.Identifier):
            var = self.lookup(target.name)
            if isinstance(var, N.Variable) and not var.is_reference and var.kind in ("local", "param"):
                return [N.Assign(var, value, op.span)]
        addr, elem, array = self.address(target)
        return [N.Store(self.make_access("store", addr, elem, target.span, array), value, op.span)]

    def lower_launch(self, e: A.Launch) -> N.LaunchStmt:
        name = callee_name(e.func) or "?"
        targs = tuple(self.template_arg_value(a) for a in e.template_args)
        config = tuple(self.rvalue(c) for c in e.config)
        args = tuple(self.rvalue(a) for a in e.args)
        texts = tuple(self.source(c.span) for c in e.config)
        held = self.lookup(e.func.name) if isinstance(e.func, A.Identifier) else None
        pointer = self.rvalue(e.func) if isinstance(held, N.Variable) and held.kind in ("local", "param") else None
        return N.LaunchStmt(name, targs, config, args, e.span, texts, pointer)

    def lower_assign(self, e: A.Assign) -> list[N.Stmt]:
        if isinstance(e.value, A.Assign):  # a = b = c: assign b, then a from b
            inner = self.lower_assign(e.value)
            return inner + self.lower_assign(A.Assign(e.op, e.target, e.value.target, e.span))
        target = e.target
        if isinstance(target, A.Identifier):
            var = self.lookup(target.name)
            if isinstance(var, N.Variable) and not var.is_reference and var.kind in ("local", "param"):
                value = self.rvalue(e.value, expected=var.type)
                if e.op != "=":
                    value = self.arith(e.op[:-1], N.VarRef(var, var.type, target.span), value, e.span)
                if isinstance(var.type, T.PointerType):
                    space = self.static_space(value)
                    var.points_to = space if var.points_to in (Space.UNKNOWN, space) else Space.UNKNOWN
                return [N.Assign(var, value, e.span)]
        if isinstance(target, A.Member) and not target.arrow:
            path = _field_path(target)
            if path is not None:
                var = self.lookup(path[0])
                if (
                    isinstance(var, N.Variable)
                    and var.kind in ("local", "param")
                    and isinstance(var.type, T.StructType)
                ):
                    value = self.rvalue(e.value)
                    if e.op != "=":
                        value = self.arith(e.op[:-1], self.rvalue(target), value, e.span)
                    return [N.Assign(var, value, e.span, tuple(path[1:]))]
        if isinstance(target, A.Index) and self.indexes_register_array(target):
            # a store into an array member of a struct in registers: no memory, and its value is
            # not followed (a later read of it is a value warplint does not know)
            index, value = self.rvalue(target.index), self.rvalue(e.value)
            return [N.Eval(index, target.index.span), N.Eval(value, e.value.span)]
        # a store to memory
        addr, elem, array = self.address(target)
        if isinstance(elem, T.ArrayType):  # C has no array assignment (`a[i] = 1` for a row of `a[4][N]`)
            raise LoweringError(f"'{self.source(target.span)}' is an array, which cannot be assigned to", target.span)
        value = self.rvalue(e.value)
        out: list[N.Stmt] = []
        if e.op != "=":
            load = self.make_access("load", addr, elem, target.span, array)
            value = self.arith(e.op[:-1], N.Load(load, elem, target.span), value, e.span)
        store = self.make_access("store", addr, elem, target.span, array)
        out.append(N.Store(store, value, e.span))
        return out


def _field_path(e: A.Expr) -> list[str] | None:
    """`s.a.b` as `["s", "a", "b"]`: a variable and the fields chosen in it, or None."""
    path: list[str] = []
    while isinstance(e, A.Member) and not e.arrow:
        path.append(e.name)
        e = e.base
    if isinstance(e, A.Identifier):
        return [e.name, *reversed(path)]
    return None


def _gotos(node: A.Node) -> list[A.Goto]:
    return [n for n in node.walk() if isinstance(n, A.Goto)]


def _asm_element(mem: AsmMemoryOp) -> T.CType:
    """What one lane moves: a scalar of the instruction's type, or raw bytes for a vector."""
    if mem.size in (1, 2, 4, 8) and not mem.is_float:
        return T.ScalarType(
            f"asm.{'s' if mem.is_signed else 'u'}{8 * mem.size}", mem.size, mem.size, False, mem.is_signed
        )
    if mem.size in (4, 8) and mem.is_float:
        return T.FLOAT if mem.size == 4 else T.DOUBLE
    return T.ScalarType(f"asm.b{8 * mem.size}", mem.size, mem.size, False, False)
