"""What an access's address is made of, read from the IR: def-use walks and shapes.

The symbolic interpreter (`interpret.py`) gives each lane's address as a number; the rules
also need to know how the source wrote it, to word a fix: which thread index a variable
carries (`ThreadIndexUse`), the array an address starts from (`array_variable`), the index
of `a[i]` (`index_of`) and the row stride in `s[r * C + c]` (`row_stride`), and which struct
field an access reads (`element_field`). Everything here reads IR only; nothing is costed.
"""

from __future__ import annotations

from typing import Any

from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.visit import NODE_CLASSES, Visitor
from analyzer.records import record

__all__ = [
    "ElementField",
    "ThreadIndexUse",
    "array_variable",
    "element_field",
    "element_struct",
    "expression_key",
    "index_of",
    "row_index_varies",
    "row_stride",
    "struct_of_address",
]


# ----------------------------------------------------------------------------- thread indices
class _StatementExpressions(Visitor):
    """The expressions a statement evaluates itself, not those of the statements inside it."""

    unvisited = frozenset(c for c in NODE_CLASSES.values() if issubclass(c, N.Expr))  # statements only

    def visit_Assign(self, s: N.Assign) -> tuple[N.Expr, ...]:
        return (s.value,)

    def visit_Store(self, s: N.Store) -> tuple[N.Expr, ...]:
        return (s.access.address, s.value)

    def visit_Eval(self, s: N.Eval) -> tuple[N.Expr, ...]:
        return (s.expr,)

    def visit_If(self, s: N.If) -> tuple[N.Expr, ...]:
        return (s.cond,)

    def visit_Loop(self, s: N.Loop) -> tuple[N.Expr, ...]:
        return (s.cond,) if s.cond is not None else ()

    def visit_Return(self, s: N.Return) -> tuple[N.Expr, ...]:
        return (s.value,) if s.value is not None else ()

    def visit_Break(self, s: N.Stmt) -> tuple[N.Expr, ...]:
        return ()  # the others evaluate nothing of their own (a launch: of the grid it starts)

    visit_Continue = visit_Sync = visit_Skipped = visit_LaunchStmt = visit_Break


_STATEMENT_EXPRESSIONS = _StatementExpressions()


class ThreadIndexUse:
    """Which `threadIdx`/`blockIdx`/... built-ins an IR expression derives from.

    Follows local variables to every value assigned to them in the kernel (a
    flow-insensitive def-use walk), and not through values loaded from memory.
    """

    def __init__(self, fn: N.Function) -> None:
        self.fn = fn
        self.defs: dict[int, list[N.Expr]] = {}
        for s in N.walk_statements(fn.body):
            if isinstance(s, N.Assign):
                self.defs.setdefault(id(s.var), []).append(s.value)
        self._memo: dict[int, frozenset[str]] = {}
        self._kernel_builtins: frozenset[str] | None = None

    def builtins(self, e: N.Expr) -> frozenset[str]:
        if isinstance(e, N.VarRef):
            return self.variable_builtins(e.var)
        found: set[str] = set()
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, N.Builtin):
                found.add(x.name)
            elif isinstance(x, N.VarRef):
                found |= self.variable_builtins(x.var)
            else:
                stack.extend(N.sub_expressions(x))
        return frozenset(found)

    def variable_builtins(self, var: N.Variable) -> frozenset[str]:
        """The built-ins any value assigned to `var` derives from (memoised per variable)."""
        key = id(var)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        found: set[str] = set()
        seen = {key}
        stack = list(self.defs.get(key, ()))
        while stack:
            x = stack.pop()
            if isinstance(x, N.Builtin):
                found.add(x.name)
            elif isinstance(x, N.VarRef):
                k = id(x.var)
                if k in self._memo:
                    found |= self._memo[k]
                elif k not in seen:
                    seen.add(k)
                    stack.extend(self.defs.get(k, ()))
            else:
                stack.extend(N.sub_expressions(x))
        result = frozenset(found)
        self._memo[key] = result
        return result

    def carrier(self, e: N.Expr, builtin: str) -> str | None:
        """The variable in `e` whose value comes straight from `builtin` (`xIndex` for
        `xIndex = blockIdx.x * blockDim.x + threadIdx.x`), found left to right and
        through variables with a single definition (`index_out = yIndex + height * xIndex`);
        `builtin` itself when `e` uses it directly; None when `e` does not derive from it."""
        return self._carrier(e, builtin, set())

    def _carrier(self, e: N.Expr, builtin: str, seen: set[int]) -> str | None:
        if isinstance(e, N.Builtin):
            return e.name if e.name == builtin else None
        if isinstance(e, N.VarRef):
            if builtin not in self.builtins(e):
                return None
            defs = self.defs.get(id(e.var), [])
            single = len(defs) == 1 and id(e.var) not in seen
            if single and builtin not in _direct_builtins(defs[0], follow_loads=False):
                seen.add(id(e.var))
                deeper = self._carrier(defs[0], builtin, seen)
                if deeper is not None and deeper != builtin:
                    return deeper
            return e.var.name
        for child in N.sub_expressions(e):
            hit = self._carrier(child, builtin, seen)
            if hit is not None:
                return hit
        return None

    def kernel_builtins(self) -> frozenset[str]:
        """Every built-in the kernel body reads."""
        if self._kernel_builtins is None:
            found: set[str] = set()
            for s in N.walk_statements(self.fn.body):
                for e in _STATEMENT_EXPRESSIONS.visit(s):
                    found |= _direct_builtins(e)
            for acc in self.fn.accesses:
                found |= _direct_builtins(acc.address)
            self._kernel_builtins = frozenset(found)
        return self._kernel_builtins


def _direct_builtins(e: N.Expr, follow_loads: bool = True) -> set[str]:
    """The built-ins `e` itself mentions (not through variables)."""
    found: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.Builtin):
            found.add(x.name)
        elif isinstance(x, N.Load):
            if follow_loads:
                stack.append(x.access.address)
        else:
            stack.extend(N.sub_expressions(x))
    return found


# ----------------------------------------------------------------------------- shapes of an index
def array_variable(access: N.Access) -> N.Variable | None:
    """The variable an address starts from: `tile` in `PtrAdd(PtrAdd(tile, ...), ...)`."""
    e: N.Expr = access.address
    while True:
        if isinstance(e, N.PtrAdd):
            e = e.base
        elif isinstance(e, N.Cast):
            e = e.operand
        else:
            break
    return e.var if isinstance(e, N.VarRef) else None


def index_of(access: N.Access) -> N.Expr | None:
    """The element index of `a[i]`: `i` from the address `PtrAdd(a, i * size)`."""
    e = access.address
    if isinstance(e, N.Cast):
        e = e.operand
    if not isinstance(e, N.PtrAdd):
        return None
    off = e.offset
    size = access.element.size
    if isinstance(off, N.Binary) and off.op == "*":
        if _const(off.right) == size:
            return off.left
        if _const(off.left) == size:
            return off.right
    return None


def _const(e: N.Expr, warp_size: int | None = None) -> int | None:
    """The integer an IR expression is as written: a literal, a constant variable, and with
    `warp_size` given the built-in `warpSize`."""
    if isinstance(e, N.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, N.VarRef) and e.var.const_value is not None:
        return e.var.const_value
    if isinstance(e, N.Cast):
        return _const(e.operand, warp_size)
    if isinstance(e, N.Builtin) and builtins.BUILTINS[e.name].kind is BuiltinKind.WARP_SIZE:
        return warp_size
    return None


def _terms(e: N.Expr) -> list[N.Expr]:
    if isinstance(e, N.Binary) and e.op == "+":
        return _terms(e.left) + _terms(e.right)
    if isinstance(e, N.Cast):
        return _terms(e.operand)
    return [e]


def row_stride(access: N.Access, uses: ThreadIndexUse, warp_size: int) -> int | None:
    """C in a 1-D index `s[r * C + c]` (or `(r << k) + c`) where `c` varies with the thread;
    `warp_size` is the architecture's, for `s[r * warpSize + c]`.

    None when the index has no such shape: `s[4 * tid]` has a stride but no rows.
    """
    index = index_of(access)
    if index is None:
        return None
    terms = _terms(index)
    if len(terms) < 2:
        return None
    stride = None
    others = []
    for t in terms:
        c = None
        if isinstance(t, N.Binary) and t.op == "*":
            c = _const(t.right, warp_size)
            c = c if c is not None else _const(t.left, warp_size)
        elif isinstance(t, N.Binary) and t.op == "<<":
            k = _const(t.right, warp_size)
            c = 1 << k if k is not None and 0 <= k < 31 else None
        if c is not None and c >= 2 and stride is None:
            stride = c
        else:
            others.append(t)
    if stride is None:
        return None
    if not any(any(_is_thread_index(b) for b in uses.builtins(t)) for t in others):
        return None
    return stride


def row_index_varies(access: N.Access, uses: ThreadIndexUse) -> bool:
    """Whether the row index of a 2-D access (`r` in `tile[r][c]`) may differ between the
    lanes of a warp: it derives from a thread index. True when the row is not found."""
    e: N.Expr = access.address
    innermost: N.PtrAdd | None = None
    while True:
        if isinstance(e, N.PtrAdd):
            innermost = e
            e = e.base
        elif isinstance(e, N.Cast):
            e = e.operand
        else:
            break
    if innermost is None or not isinstance(e, N.VarRef):
        return True
    off = innermost.offset
    if not (isinstance(off, N.Binary) and off.op == "*"):
        return True
    row = off.left if isinstance(off.right, N.Const) else off.right
    return any(builtins.BUILTINS[b].lane_varying for b in uses.builtins(row))


def _is_thread_index(name: str) -> bool:
    return builtins.BUILTINS[name].kind is BuiltinKind.THREAD_INDEX


# ----------------------------------------------------------------------------- struct fields
@record
class ElementField:
    """What an access reads of a struct element in memory: `data[tid].x` reads field `x` of
    the `vec3d` element at `data[tid]`."""

    struct: T.StructType  # the struct whose field (or whole value) is read
    path: tuple[str, ...]  # ("x",) for `data[tid].x`; () for the whole element
    element: N.Expr  # the element's address: `data[tid]`


def element_field(address: N.Expr) -> ElementField | None:
    """The struct field an address points at (`PtrAdd(element, field offset)` where the element
    is a struct: the innermost such struct, `a` for `data[i].a.b`), or the whole struct an
    address points to; None for anything else."""
    if isinstance(address, N.PtrAdd) and isinstance(address.offset, N.Const):
        base_t = address.base.type
        if isinstance(base_t, T.PointerType) and isinstance(base_t.pointee, T.StructType):
            struct = base_t.pointee
            return ElementField(struct, _field_at(struct, address.offset.value, address.type), address.base)
    if isinstance(address.type, T.PointerType) and isinstance(address.type.pointee, T.StructType):
        return ElementField(address.type.pointee, (), address)
    return None


def _field_at(struct: T.StructType, offset: Any, pointer: T.CType) -> tuple[str, ...]:
    """The name of `struct`'s field at byte `offset` that `pointer` points to (of a union's
    fields at one offset, the one of the pointer's type, else the first)."""
    at = [f for f in struct.fields if f.offset == offset and f.name]
    pointee = T.element_type(pointer)
    chosen = next((f for f in at if f.type is pointee), None) or next((f for f in at if f.type == pointee), None)
    chosen = chosen or (at[0] if at else None)
    return (chosen.name,) if chosen is not None else ()


def struct_of_address(address: N.Expr) -> T.StructType | None:
    """For `data[tid].x` (a field of an element in memory), the element's struct type; for an
    address of a whole struct, that struct (`element_field`'s struct)."""
    found = element_field(address)
    return found.struct if found is not None else None


def element_struct(access: N.Access) -> T.StructType | None:
    """The struct (or vector type) whose array the access reads, whole or one field of:
    the access's element itself, or the struct a constant field offset is added to
    (`data[tid].x` is `PtrAdd(PtrAdd(data, tid * 12), 0)`; the innermost such struct, the
    array's element, wins for nested fields)."""
    element = access.element
    if isinstance(element, T.StructType):
        return element
    found: T.StructType | None = None
    e: N.Expr = access.address
    while isinstance(e, N.PtrAdd) and isinstance(e.offset, N.Const):
        pointee = T.element_type(e.base.type)
        if isinstance(pointee, T.StructType):
            found = pointee
        e = e.base
    return found


def expression_key(e: N.Expr) -> tuple:
    """The shape of an IR expression without its positions and types: two writings of
    `data[i]` in one statement have the same key (the same variables, operators, constants)."""
    if isinstance(e, N.VarRef):
        return ("var", e.var.uid, id(e.var))
    if isinstance(e, N.Const):
        return ("const", e.value)
    if isinstance(e, N.Load):
        return ("load", expression_key(e.access.address))
    own = tuple(getattr(e, name) for name in ("op", "name", "reason") if isinstance(getattr(e, name, None), str))
    return (type(e).__name__, str(e.type), own, tuple(expression_key(x) for x in N.sub_expressions(e)))
