"""Lowering, part 2: expressions, addresses and memory accesses.

`ExpressionLowering` turns AST expressions into IR values (`rvalue`, one method per AST
class through the table `_RVALUE_OF`), works out the address of every lvalue in memory
(`address`: indexing, members, dereferences), and makes every load and store of memory an
`Access` with its element type, memory space and source text (`make_access`). It also
knows the C type of an expression without lowering it (`type_of`).

A layer of `analyzer.ir.lower.Lowerer` over `ScopesAndTypes` (see `lower_scopes` for why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from analyzer import records
from analyzer.diagnostics import Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.lower_scopes import LoweringError, Scope, ScopesAndTypes, subscript_operator
from analyzer.ir.nodes import AccessOp, OpaqueKind, Space
from analyzer.syntax import ast as A


class SideEffects:
    """The statements that an expression's assignments and increments make, in C's sequencing:
    `before` runs before the statement that holds the expression (`++i`, `(p = f())`), `after`
    once it is done (`w[idx++] = v` stores to `w[idx]`, then adds 1 to `idx`)."""

    __slots__ = ("after", "before")

    def __init__(self) -> None:
        self.before: list[N.Stmt] = []
        self.after: list[N.Stmt] = []


class ExpressionLowering(ScopesAndTypes):
    """Expressions to IR values, lvalues to addresses, memory reads and writes to accesses."""

    side_effects: SideEffects | None = None  # the statement being lowered's; None outside a statement

    if TYPE_CHECKING:  # from the layers above

        def lower_call(self, e: A.Call) -> N.Expr: ...

        def lower_assign(self, e: A.Assign) -> list[N.Stmt]: ...

        def lower_expr_stmt(self, e: A.Expr) -> list[N.Stmt]: ...

        def lower_local_declaration(self, decl: A.Declaration) -> list[N.Stmt]: ...

    # ------------------------------------------------------------------ memory
    def make_access(self, op: str, addr: N.Expr, elem: T.CType, span: Span, array: str) -> N.Access:
        acc = N.Access(
            self.new_uid(),
            self.static_space(addr),
            AccessOp(op),
            elem,
            addr,
            span,
            self.source(span),
            array,
            statement=self.statement,
        )
        acc.volatile = _through_volatile(addr)
        if self.current is not None and not self.host:
            self.current.accesses.append(acc)
        return acc

    def static_space(self, e: N.Expr) -> Space:
        """The memory space a pointer-valued IR expression points into, when lowering can tell."""
        while True:
            if isinstance(e, (N.PtrAdd,)):
                e = e.base
            elif isinstance(e, N.Cast):
                e = e.operand
            elif isinstance(e, N.Select):
                a, b = self.static_space(e.then), self.static_space(e.otherwise)
                return a if a == b else Space.UNKNOWN
            else:
                break
        if isinstance(e, N.VarRef):
            v = e.var
            if isinstance(v.type, T.ArrayType):
                return v.space
            if (
                v.kind in ("shared", "global", "constant")
                and isinstance(e.type, T.PointerType)
                and e.type.pointee == v.type
            ):
                return v.space  # the address of a scalar `__shared__`/`__device__` variable itself
            return v.points_to
        if isinstance(e, N.FieldRef):
            root = e.base
            while isinstance(root, N.FieldRef):
                root = root.base
            if (
                isinstance(root, N.VarRef)
                and root.var.kind == "param"
                and self.current is not None
                and self.current.kind == "global"
            ):
                return Space.GLOBAL
            return Space.UNKNOWN
        return Space.UNKNOWN

    def address(self, e: A.Expr) -> tuple[N.Expr, T.CType, str]:
        """The address of an lvalue in memory, its element type, and the array it derives from."""
        if isinstance(e, A.Index):
            base_t = self.type_of(e.base)
            elem = T.element_type(base_t)
            if elem is None:
                inlined = self.subscript_operator(e, base_t)
                if inlined is not None:
                    return inlined
                if isinstance(base_t, (T.StructType, T.UnknownType)):
                    raise LoweringError(f"indexing a value of type {base_t} (operator[] is not modelled)", e.span)
                raise LoweringError(f"indexing a value of type {base_t}", e.span)
            base_ptr = self.pointer_value(e.base)
            index = self.rvalue(e.index)
            size = elem.size
            if size is None:
                raise LoweringError(f"element type {elem} has unknown size", e.span)
            offset = self.arith("*", index, N.Const(size, T.LONG, e.span), e.index.span)
            return N.PtrAdd(base_ptr, offset, T.PointerType(elem), e.span), elem, self.array_name(e.base)
        if isinstance(e, A.Member):
            if e.arrow:
                ptr = self.pointer_value(e.base)
                st = T.element_type(ptr.type)
            else:
                ptr, st, _ = self.address(e.base)
            if not isinstance(st, T.StructType):
                raise LoweringError(f"member '{e.name}' of non-struct type {st}", e.span)
            f = st.field(e.name)
            if f is None or f.offset is None:
                raise LoweringError(f"unknown field '{e.name}' of {st}", e.span)
            return (
                N.PtrAdd(ptr, N.Const(f.offset, T.LONG, e.span), T.PointerType(f.type), e.span),
                f.type,
                self.array_name(e.base),
            )
        if isinstance(e, A.UnaryOp) and e.op == "*":
            ptr = self.pointer_value(e.operand)
            elem = T.element_type(ptr.type) or T.UnknownType("?")
            return ptr, elem, self.array_name(e.operand)
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            if isinstance(var, N.Variable):
                if var.is_reference:
                    return N.VarRef(var, var.type, e.span), var.type.pointee, var.name  # type: ignore[attr-defined]
                if var.kind in ("shared", "global", "constant") and not isinstance(var.type, T.ArrayType):
                    return N.VarRef(var, T.PointerType(var.type), e.span), var.type, var.name
        raise LoweringError(f"'{self.source(e.span)}' is not an lvalue warplint can follow", e.span)

    def array_name(self, e: A.Expr) -> str:
        while True:
            if isinstance(e, (A.Index,)):
                e = e.base
            elif isinstance(e, A.Cast):
                e = e.expr
            elif isinstance(e, A.UnaryOp) and e.op in ("*", "&"):
                e = e.operand
            elif isinstance(e, A.BinaryOp) and e.op in ("+", "-"):
                e = e.left
            else:
                break
        return self.source(e.span)

    def pointer_value(self, e: A.Expr) -> N.Expr:
        """The value of a pointer-typed expression; arrays decay to the address of element 0."""
        t = self.type_of(e)
        if isinstance(t, T.ArrayType):
            if isinstance(e, A.Identifier):
                var = self.lookup(e.name)
                if isinstance(var, N.Variable):
                    return N.VarRef(var, T.PointerType(t.element), e.span)
            addr, _elem, _ = self.address(e)
            return N.Cast(addr, T.PointerType(t.element), e.span)
        return self.rvalue(e)

    def address_of(self, e: A.Expr) -> N.Expr:
        return self.address(e)[0]

    # ------------------------------------------------------------------ expression types
    def type_of(self, e: A.Expr) -> T.CType:
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            if isinstance(var, N.Variable):
                return var.type.pointee if var.is_reference else var.type  # type: ignore[attr-defined]
            if isinstance(var, N.Const):
                return var.type
            return T.UnknownType(e.name)
        if isinstance(e, A.Index):
            return T.element_type(self.type_of(e.base)) or T.UnknownType("?")
        if isinstance(e, A.Member):
            bt = _referenced(self.type_of(e.base))
            if e.arrow:
                bt = T.element_type(bt) or T.UnknownType("?")
            if isinstance(bt, T.StructType):
                f = bt.field(e.name)
                if f is not None:
                    return f.type
            spec = builtin_member(e)
            if spec is not None:
                return builtins.fixed_type(spec) or T.UnknownType(e.name)
            return T.UnknownType(e.name)
        if isinstance(e, A.Cast):
            return self.type_of_typename(e.to)
        if isinstance(e, A.UnaryOp):
            if e.op == "*":
                return T.element_type(self.type_of(e.operand)) or T.UnknownType("?")
            if e.op == "&":
                return T.PointerType(self.type_of(e.operand))
            return self.type_of(e.operand)
        if isinstance(e, A.BinaryOp):
            lt, rt = self.type_of(e.left), self.type_of(e.right)
            if isinstance(lt, (T.PointerType, T.ArrayType)) and e.op in "+-":
                if e.op == "-" and isinstance(rt, (T.PointerType, T.ArrayType)):
                    return T.LONG
                return T.PointerType(T.element_type(lt) or T.UnknownType("?"))
            if isinstance(rt, (T.PointerType, T.ArrayType)) and e.op == "+":
                return T.PointerType(T.element_type(rt) or T.UnknownType("?"))
            return T.INT
        if isinstance(e, A.Ternary):
            return self.type_of(e.then)
        return self.rvalue(e).type

    # ------------------------------------------------------------------ values
    def arith(self, op: str, a: N.Expr, b: N.Expr, span: Span) -> N.Expr:
        if isinstance(a.type, T.PointerType) and op in ("+", "-") and not isinstance(b.type, T.PointerType):
            size = a.type.pointee.size or 1
            off: N.Expr = N.Binary("*", b, N.Const(size, T.LONG, span), T.LONG, span)
            if op == "-":
                off = N.Unary("-", off, T.LONG, span)
            return N.PtrAdd(a, off, a.type, span)
        if isinstance(b.type, T.PointerType) and op == "+":
            return self.arith("+", b, a, span)
        t = T.arithmetic_result_type(a.type, b.type, op)
        return N.Binary(op, a, b, t, span)

    def rvalue(self, e: A.Expr, expected: T.CType | None = None) -> N.Expr:
        """The IR value of an expression; `expected` is the type an initializer list initializes."""
        lower = _RVALUE_OF.get(type(e)) or _rvalue_method(type(e))
        if lower is None:
            raise LoweringError(f"unsupported expression {type(e).__name__}", e.span)
        return lower(self, e, expected)

    def _constant(self, e: A.Constant, expected: T.CType | None) -> N.Expr:
        if e.kind == "float":
            return N.Const(e.value, T.FLOAT if e.text[-1:] in "fF" else T.DOUBLE, e.span)
        if e.kind == "string":
            return N.Opaque(OpaqueKind.VALUE, "string literal", T.PointerType(T.CHAR), e.span)
        return N.Const(int(e.value), T.INT if e.kind != "bool" else T.BOOL, e.span)

    def _identifier(self, e: A.Identifier, expected: T.CType | None) -> N.Expr:
        bound = self.binding(e.name)
        if isinstance(bound, int):
            return N.Const(bound, T.INT, e.span)
        var = self.lookup(e.name)
        if isinstance(var, N.Const):
            return N.Const(var.value, var.type, e.span)
        if isinstance(var, N.Variable):
            if var.is_reference:
                return self.load(e)
            if isinstance(var.type, T.ArrayType):
                return N.VarRef(var, T.PointerType(var.type.element), e.span)
            if var.kind in ("shared", "global", "constant"):
                return self.load(e)
            return N.VarRef(var, var.type, e.span)
        spec = builtins.variable(e.name)
        if spec is not None:  # `warpSize`: its value is the architecture's, known to the analysis
            return N.Builtin(spec.name, builtins.fixed_type(spec) or T.INT, e.span)
        if e.name in ("true", "false"):
            return N.Const(int(e.name == "true"), T.BOOL, e.span)
        if e.name in ("NULL", "nullptr"):
            return N.Const(0, T.PointerType(T.VOID), e.span)
        if e.name in self.function_defs:  # a function named as a value: its address (a function pointer)
            return function_address(e.name, e.span)
        if e.name.lstrip(":") in builtins.LIBRARY_ENUMERATORS:  # `cuda::pipeline_role::consumer`
            return N.Const(builtins.LIBRARY_ENUMERATORS[e.name.lstrip(":")], T.INT, e.span)
        return N.Opaque(OpaqueKind.UNKNOWN_NAME, f"unknown name '{e.name}'", T.UnknownType(e.name), e.span)

    def _member(self, e: A.Member, expected: T.CType | None) -> N.Expr:
        spec = builtin_member(e)
        if spec is not None:
            return N.Builtin(spec.name, builtins.fixed_type(spec) or T.UINT, e.span)
        # a field of a struct held in registers, or of one in memory
        if not e.arrow:
            base_t = _referenced(self.type_of(e.base))
            if self.in_registers(e.base):
                base = self.rvalue(e.base)
                member = base_t.field(e.name) if isinstance(base_t, T.StructType) else None
                ft = member.type if member else T.UnknownType(e.name)
                if isinstance(base, N.StructValue) and e.name in base.fields:
                    return base.fields[e.name]
                return N.FieldRef(base, e.name, ft, e.span)
        return self.load(e)

    def _index(self, e: A.Index, expected: T.CType | None) -> N.Expr:
        t = self.type_of(e)
        if isinstance(t, T.ArrayType):
            return self.pointer_value(e)
        if self.host:
            return N.Opaque(OpaqueKind.VALUE, "host memory", t, e.span)
        if self.indexes_register_array(e):
            # `M.m[i]` of a struct held in registers (a local, a by-value parameter in the
            # parameter space): no costed memory, so a value warplint does not follow
            index = self.rvalue(e.index)
            return N.Opaque(OpaqueKind.VALUE, "element of an array member held in registers", t, e.span, (index,))
        return self.load(e)

    def _unary(self, e: A.UnaryOp, expected: T.CType | None) -> N.Expr:
        if e.op == "*":
            return self.load(e)
        if e.op == "&":
            if isinstance(e.operand, A.Identifier):
                var = self.lookup(e.operand.name)
                if isinstance(var, N.Variable) and var.kind in ("local", "param") and not var.is_reference:
                    return N.Opaque(
                        OpaqueKind.LOCAL_ADDRESS,
                        f"address of local '{var.name}'",
                        T.PointerType(var.type),
                        e.span,
                        variable=var,
                    )
            named = e.operand.name if isinstance(e.operand, A.Identifier) else None
            if named in self.function_defs and self.lookup(named) is None:  # `&copy`: a function's address
                return function_address(named, e.span)
            try:
                return self.address_of(e.operand)
            except LoweringError:
                return N.Opaque(OpaqueKind.VALUE, "address", T.PointerType(T.UnknownType("?")), e.span)
        if e.op in ("++", "--", "p++", "p--"):
            return self.increment_in_expression(e)
        a = self.rvalue(e.operand)
        if e.op == "+":
            return a
        t = T.BOOL if e.op == "!" else a.type
        return N.Unary(e.op, a, t, e.span)

    def _binary(self, e: A.BinaryOp, expected: T.CType | None) -> N.Expr:
        if e.op in ("&&", "||") and has_side_effects(e.right):
            return self.short_circuit(e)
        same_type = self.typeid_comparison(e)
        if same_type is not None:
            return same_type
        a = self.rvalue(e.left)
        b = self.rvalue(e.right)
        if e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return N.Binary(e.op, a, b, T.BOOL, e.span)
        if e.op == "-" and isinstance(a.type, T.PointerType) and isinstance(b.type, T.PointerType):
            return N.Opaque(OpaqueKind.VALUE, "pointer difference", T.LONG, e.span)
        return self.arith(e.op, a, b, e.span)

    def _ternary(self, e: A.Ternary, expected: T.CType | None) -> N.Expr:
        if has_side_effects(e.then) or has_side_effects(e.otherwise):
            return self.branching_ternary(e)
        c = self.rvalue(e.cond)
        a = self.rvalue(e.then)
        b = self.rvalue(e.otherwise)
        return N.Select(c, a, b, a.type, e.span)

    # ------------------------------------------------------------------ effects on one path
    # `a && x[i++]`, `c ? q[t++] : 0`: the effects of an operand happen only on the path that
    # evaluates it, so the expression is lowered into the branches C takes, as statements run
    # before the statement that holds it, and its value is a temporary those branches set.
    def evaluated_apart(self, e: A.Expr) -> tuple[list[N.Stmt], N.Expr, list[N.Stmt]]:
        """`e`'s value, and the statements that run its side effects around reading it."""
        outer = self.side_effects
        self.side_effects = effects = SideEffects()
        try:
            value = self.rvalue(e)
        finally:
            self.side_effects = outer
        return effects.before, value, effects.after

    def temporary(self, e: A.Expr, t: T.CType) -> N.Variable:
        return N.Variable(f"({self.source(e.span)})", t, "local", e.span, uid=self.new_uid())

    def path_effects(self, e: A.Expr) -> SideEffects:
        if self.side_effects is None:
            raise LoweringError("an assignment or increment inside an expression outside a statement", e.span)
        return self.side_effects

    def short_circuit(self, e: A.BinaryOp) -> N.Expr:
        """`a && b` / `a || b` whose right operand has side effects: `t = a != 0; if (t) t = b != 0;`
        (`if (!t)` for `||`)."""
        effects = self.path_effects(e)
        result = self.temporary(e, T.BOOL)
        ref = N.VarRef(result, T.BOOL, e.span)
        for operand, guard in ((e.left, None), (e.right, ref if e.op == "&&" else N.Unary("!", ref, T.BOOL, e.span))):
            before, value, after = self.evaluated_apart(operand)
            test = N.Binary("!=", value, N.Const(0, T.INT, operand.span), T.BOOL, operand.span)
            stmts = [*before, N.Assign(result, test, operand.span), *after]
            effects.before.extend(stmts if guard is None else [N.If(guard, stmts, [], operand.span)])
        return ref

    def branching_ternary(self, e: A.Ternary) -> N.Expr:
        """`c ? a : b` with side effects in a branch: `if (c) t = a; else t = b;`."""
        effects = self.path_effects(e)
        c = self.rvalue(e.cond)
        branches = []
        result: N.Variable | None = None
        for operand in (e.then, e.otherwise):
            before, value, after = self.evaluated_apart(operand)
            result = result or self.temporary(e, value.type)
            branches.append([*before, N.Assign(result, value, operand.span), *after])
        assert result is not None
        effects.before.append(N.If(c, branches[0], branches[1], e.span))
        return N.VarRef(result, result.type, e.span)

    def _cast(self, e: A.Cast, expected: T.CType | None) -> N.Expr:
        t = self.type_of_typename(e.to)
        inner = self.rvalue(e.expr)
        if isinstance(t, T.StructType) and t.is_vector and e.kind == "functional":
            return self.construct(t, [inner], e.span)
        return N.Cast(inner, t, e.span)

    def _sizeof(self, e: A.SizeOf, expected: T.CType | None) -> N.Expr:
        if isinstance(e.operand, A.TypeName):
            t = self.type_of_typename(e.operand)
        else:
            t = self.type_of(cast(A.Expr, e.operand))  # the parser's SizeOf holds a TypeName or an Expr
        v = t.size if e.op == "sizeof" else t.align
        if v is None:
            return N.Opaque(OpaqueKind.VALUE, f"{e.op} of {t}", T.ULONG, e.span)
        return N.Const(v, T.ULONG, e.span)

    def _call(self, e: A.Call, expected: T.CType | None) -> N.Expr:
        return self.lower_call(e)

    def _assign(self, e: A.Assign, expected: T.CType | None) -> N.Expr:
        return self.assignment_in_expression(e)

    def register_target(self, target: A.Expr) -> N.Variable | None:
        """The local or parameter held in a register that `target` names, or None."""
        if not isinstance(target, A.Identifier):
            return None
        var = self.lookup(target.name)
        if isinstance(var, N.Variable) and not var.is_reference and var.kind in ("local", "param"):
            return var
        return None

    def effects_for(self, e: A.Expr, what: str) -> tuple[SideEffects, N.Variable]:
        """The statement's side effects and the register variable that `e` writes; a write
        to memory, or one outside a statement, is not modelled (it would count an access twice)."""
        target = e.target if isinstance(e, A.Assign) else e.operand  # type: ignore[attr-defined]
        var = self.register_target(target)
        if self.side_effects is None or var is None:
            raise LoweringError(f"{what} of memory inside an expression is not modelled", e.span)
        return self.side_effects, var

    def write_to_memory_in_expression(self, e: A.Expr, write: A.Assign) -> N.Expr | None:
        """`if (--(*count) == 0)`, `(a[i] = v) > 0`: the load and store of memory happen once,
        before the statement that holds them; the value read back is not followed. None where
        `e` writes a register or is outside a statement."""
        target = write.target
        if self.side_effects is None or self.register_target(target) is not None:
            return None
        if not isinstance(target, (A.Index, A.Member, A.UnaryOp)) or isinstance(self.type_of(target), T.UnknownType):
            return None
        self.side_effects.before.extend(self.lower_assign(write))
        what = self.source(target.span)
        return N.Opaque(OpaqueKind.VALUE, f"value written to {what}", self.type_of(target), e.span)

    def increment_in_expression(self, e: A.UnaryOp) -> N.Expr:
        """`w[idx++]`, `*p++`, `a[++i]`: the variable's value before (postfix) or after
        (prefix) the step, the step a statement after or before the one that holds it."""
        one = A.Constant("int", 1, "1", e.span)
        in_memory = self.write_to_memory_in_expression(
            e, A.Assign("+=" if "+" in e.op else "-=", e.operand, one, e.span)
        )
        if in_memory is not None:
            return in_memory
        effects, var = self.effects_for(e, "increment")
        one = A.Constant("int", 1, "1", e.span)
        step = self.lower_assign(A.Assign("+=" if "+" in e.op else "-=", e.operand, one, e.span))
        (effects.after if e.op.startswith("p") else effects.before).extend(step)
        return N.VarRef(var, var.type, e.span)

    def assignment_in_expression(self, e: A.Assign) -> N.Expr:
        """`if ((p = f()) == NULL)`: the assignment runs first, the expression reads the variable."""
        in_memory = self.write_to_memory_in_expression(e, e)
        if in_memory is not None:
            return in_memory
        effects, var = self.effects_for(e, "assignment")
        effects.before.extend(self.lower_assign(e))
        return N.VarRef(var, var.type, e.span)

    def _comma(self, e: A.Comma, expected: T.CType | None) -> N.Expr:
        if self.side_effects is not None:  # `(a = f(), a)`: the left operands' effects run first, in order
            for left in e.exprs[:-1]:
                if has_side_effects(left):  # a value alone is dropped (GPUVerify's `__invariant(...)`)
                    self.side_effects.before.extend(self.lower_expr_stmt(left))
        return self.rvalue(e.exprs[-1])

    def _init_list(self, e: A.InitList, expected: T.CType | None) -> N.Expr:
        if isinstance(expected, T.StructType):
            vals = [self.rvalue(x) for x in e.items]
            return N.StructValue(
                {f.name: vals[i] for i, f in enumerate(expected.fields) if i < len(vals)}, expected, e.span
            )
        return N.Opaque(OpaqueKind.VALUE, "initializer list", expected or T.UnknownType("{}"), e.span)

    def _new(self, e: A.New, expected: T.CType | None) -> N.Expr:
        """An allocation on the device heap: no memory access warplint costs, an address not known;
        its sizes and arguments are still evaluated (they may load)."""
        operands = tuple(self.rvalue(x) for x in (*e.placement, *e.counts, *e.args))
        t = self.type_of_typename(e.type)
        return N.Opaque(OpaqueKind.VALUE, f"allocation by new {t}", T.PointerType(t), e.span, operands)

    def _delete(self, e: A.Delete, expected: T.CType | None) -> N.Expr:
        return N.Opaque(OpaqueKind.VALUE, "delete", T.VOID, e.span, (self.rvalue(e.operand),))

    def _typeid(self, e: A.TypeId, expected: T.CType | None) -> N.Expr:
        return N.Opaque(OpaqueKind.VALUE, "typeid", T.UnknownType("std::type_info"), e.span)

    def typeid_comparison(self, e: A.BinaryOp) -> N.Expr | None:
        """`typeid(T) == typeid(float)`: a constant where both types are known (a template's
        argument bound), else None."""
        if e.op not in ("==", "!=") or not isinstance(e.left, A.TypeId) or not isinstance(e.right, A.TypeId):
            return None
        left, right = self.typeid_type(e.left), self.typeid_type(e.right)
        if not (left.is_known and right.is_known):
            return None
        same = str(left) == str(right)  # a type's spelling names it: `float`, `int *`, `Vec<float>`
        return N.Const(int(same == (e.op == "==")), T.BOOL, e.span)

    def typeid_type(self, e: A.TypeId) -> T.CType:
        if isinstance(e.operand, A.TypeName):
            return self.type_of_typename(e.operand)
        return self.type_of(cast(A.Expr, e.operand))

    def _launch(self, e: A.Launch, expected: T.CType | None) -> N.Expr:
        raise LoweringError("kernel launch inside an expression", e.span)

    def _template_id(self, e: A.TemplateId, expected: T.CType | None) -> N.Expr:
        return N.Opaque(OpaqueKind.VALUE, f"template {e.name}", T.UnknownType(e.name), e.span)

    def in_registers(self, e: A.Expr) -> bool:
        """True when `e` names a struct value held in registers (a by-value param or a local, or
        an element of an array member of one: `M.m[0]`)."""
        while isinstance(e, A.Member) and not e.arrow:
            e = e.base
        if isinstance(e, A.Index):
            return self.indexes_register_array(e)
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            return isinstance(var, N.Variable) and var.kind in ("local", "param") and not var.is_reference
        return isinstance(e, A.Call)

    def indexes_register_array(self, e: A.Index) -> bool:
        """True when `e` indexes an array member of a struct held in registers (`M.m[0]`,
        `p.param[i][j]` on a by-value parameter): no memory warplint costs is read."""
        base = e.base
        while isinstance(base, A.Index):
            base = base.base
        return (
            isinstance(base, A.Member)
            and not base.arrow
            and isinstance(self.type_of(base), T.ArrayType)  # not a pointer member: `m.elements[i]` is memory
            and self.in_registers(base)
        )

    def subscript_operator(self, e: A.Index, base_t: T.CType) -> tuple[N.Expr, T.CType, str] | None:
        """`sdata[i]` on a struct whose `operator[](int i)` returns an element of memory
        (cuda-samples' `SharedMemory<float>`: `{ extern __shared__ float s[]; return s[i]; }`):
        the address of that element, its body inlined with the index for the parameter; None
        when the struct has no such operator."""
        sd = self.templates.structs.get(base_t.name) if isinstance(base_t, T.StructType) else None
        op = subscript_operator(sd) if sd is not None else None
        returns = self.returns_in(op.body) if op else ()
        if op is None or len(op.params) != 1 or op.params[0].name is None or len(returns) != 1:
            return None
        element = A.substitute(cast(A.Expr, returns[0].value), op.params[0].name, e.index)
        self.type_bindings.append({})
        self.scopes.append(Scope())
        try:
            for item in op.body.items:
                if isinstance(item, A.DeclStmt) and "__shared__" in item.decl.specs.storage:
                    self.lower_local_declaration(item.decl)
            # the access is the caller's `sdata[i]`, where it is written
            return self.address(records.replace(element, span=e.span))
        finally:
            self.scopes.pop()
            self.type_bindings.pop()

    def load(self, e: A.Expr) -> N.Expr:
        addr, elem, array = self.address(e)
        if self.host:
            return N.Opaque(OpaqueKind.VALUE, "host memory", elem, e.span)
        acc = self.make_access("load", addr, elem, e.span, array)
        return N.Load(acc, elem, e.span)

    def construct(self, t: T.CType, args: list[N.Expr], span: Span) -> N.Expr:
        if isinstance(t, T.StructType) and t.is_vector:
            fields = {}
            for i, f in enumerate(t.fields):
                fields[f.name] = args[i] if i < len(args) else N.Const(1 if t.name == "dim3" else 0, f.type, span)
            return N.StructValue(fields, t, span)
        if len(args) == 1:
            return N.Cast(args[0], t, span)
        return N.Opaque(OpaqueKind.VALUE, f"constructor of {t}", t, span, tuple(args))


# AST expression class -> the method of ExpressionLowering that gives its value
_RVALUE_OF: dict[type, Callable[[Any, Any, T.CType | None], N.Expr]] = {
    A.Constant: ExpressionLowering._constant,
    A.Identifier: ExpressionLowering._identifier,
    A.Member: ExpressionLowering._member,
    A.Index: ExpressionLowering._index,
    A.UnaryOp: ExpressionLowering._unary,
    A.BinaryOp: ExpressionLowering._binary,
    A.Ternary: ExpressionLowering._ternary,
    A.Cast: ExpressionLowering._cast,
    A.SizeOf: ExpressionLowering._sizeof,
    A.Call: ExpressionLowering._call,
    A.Assign: ExpressionLowering._assign,
    A.Comma: ExpressionLowering._comma,
    A.InitList: ExpressionLowering._init_list,
    A.Launch: ExpressionLowering._launch,
    A.TemplateId: ExpressionLowering._template_id,
    A.New: ExpressionLowering._new,
    A.Delete: ExpressionLowering._delete,
    A.TypeId: ExpressionLowering._typeid,
}


def _rvalue_method(cls: type) -> Callable[[Any, Any, T.CType | None], N.Expr] | None:
    """The method for a subclass of one of the classes in `_RVALUE_OF` (there are none in
    analyzer.syntax.ast today: this keeps `rvalue` as `isinstance` would decide)."""
    return next((_RVALUE_OF[base] for base in cls.__mro__ if base in _RVALUE_OF), None)


def has_side_effects(e: A.Node) -> bool:
    """Whether `e` holds an assignment or an increment (a call's effects are not looked for)."""
    return any(
        isinstance(n, A.Assign) or (isinstance(n, A.UnaryOp) and n.op in ("++", "--", "p++", "p--")) for n in e.walk()
    )


def _referenced(t: T.CType) -> T.CType:
    """A `const T &` parameter's type is read as `T` (it is passed like a value: `M.m[0]`)."""
    if isinstance(t, T.PointerType) and t.name == "&":
        return t.pointee
    return t


def _through_volatile(addr: N.Expr) -> bool:
    """Whether an address is formed from a `volatile` variable (`volatile float *v = s;`):
    a `VarRef` of one among `addr`'s expressions, as `N.sub_expressions` finds them."""
    stack: list[N.Expr] = [addr]
    while stack:
        e = stack.pop()
        if isinstance(e, N.VarRef) and e.var.volatile:
            return True
        N.add_sub_expressions(e, stack)
    return False


def builtin_member(e: A.Member) -> builtins.BuiltinSpec | None:
    """The built-in variable `threadIdx.x`, `blockDim.y`, ... that a member expression names."""
    if isinstance(e.base, A.Identifier):
        return builtins.variable(f"{e.base.name}.{e.name}")
    return None


def function_address(name: str, span: Span) -> N.Opaque:
    """The address of the function `name` as a value (`kernel = &copy;`): host code follows it
    to the launches made through the pointer that holds it."""
    return N.Opaque(OpaqueKind.FUNCTION, f"address of function '{name}'", T.PointerType(T.VOID), span, callee=name)
