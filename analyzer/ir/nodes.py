"""The intermediate representation: functions of resolved, typed statements and expressions.

Lowering (`lower.py`) resolves names to `Variable`s, types every expression, turns indexing,
member access and dereference into explicit byte addresses, and makes every memory access an
`Access` node with its space, op, element type and source span. Analyses and the simulator
read only this IR, never the AST.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any

from analyzer.diagnostics import Diagnostic, Span
from analyzer.ir.types import CType
from analyzer.records import field, record


class Space(StrEnum):
    """The memory space an access reads or writes (its value is the name reports print)."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    CONSTANT = "constant"
    UNKNOWN = "unknown"  # not known where lowered: decided per call site by the analysis


class AccessOp(StrEnum):
    """What an access does to memory."""

    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"


@record(frozen=False, eq=False)
class Variable:
    """A named value: a parameter, a local, a `__shared__`/`__constant__` array, a file-scope global."""

    name: str
    type: CType
    kind: str  # param local shared constant global
    span: Span
    space: Space = Space.LOCAL  # where the variable itself lives (an array's elements)
    points_to: Space = Space.UNKNOWN  # for pointers: the space of what they point to, when known
    uid: int = 0
    extern: bool = False  # `extern __shared__ float s[]`
    const_value: int | None = None  # a `const`/`constexpr` integer with a known value
    is_reference: bool = False  # a C++ reference: the variable holds the referenced address
    volatile: bool = False  # declared `volatile` (for a pointer: what it points to)

    def __repr__(self) -> str:
        return f"Variable({self.name}:{self.type}@{self.kind})"


# ----------------------------------------------------------------------------- expressions
class Expr:
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Const(Expr):
    value: Any  # int, float or bool
    type: CType
    span: Span


@record(frozen=False, eq=False)
class VarRef(Expr):
    """The value of a scalar/pointer variable (for arrays: the address of element 0)."""

    var: Variable
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Builtin(Expr):
    """A built-in variable: threadIdx.x, blockIdx.y, blockDim.x, gridDim.z, warpSize
    (`analyzer.ir.builtins` says what each is)."""

    name: str  # "threadIdx.x", a key of `builtins.BUILTINS`
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Binary(Expr):
    op: str  # + - * / % << >> & | ^ && || < <= > >= == !=
    left: Expr
    right: Expr
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Unary(Expr):
    op: str  # - ! ~
    operand: Expr
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Select(Expr):
    cond: Expr
    then: Expr
    otherwise: Expr
    type: CType
    span: Span


@record(frozen=False, eq=False)
class PtrAdd(Expr):
    """A pointer plus a byte offset (`&a[i]`, `a + i`, a field of a struct in memory)."""

    base: Expr
    offset: Expr  # in bytes
    type: CType  # the resulting pointer type
    span: Span


@record(frozen=False, eq=False)
class Cast(Expr):
    operand: Expr
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Load(Expr):
    access: Access
    type: CType
    span: Span


@record(frozen=False, eq=False)
class Call(Expr):
    """A call: a device function to inline, or a known built-in (min, max, __shfl_sync ...)."""

    name: str
    args: tuple[Expr, ...]
    type: CType
    span: Span
    atomic: Access | None = None  # atomicAdd(&a[i], v): the memory access it makes


class OpaqueKind(StrEnum):
    """What an `Opaque` value is, for the passes that treat some of them apart."""

    CALL = "call"  # a call of a function warplint does not follow or model: `callee` names it
    METHOD_CALL = "method call"  # a method of an object (`tile.thread_rank()`): may differ between lanes
    INDIRECT_CALL = "indirect call"  # a call through a pointer
    BARRIER = "barrier"  # `__syncthreads_count(p)` and the like, used as a value
    LOCAL_ADDRESS = "local address"  # `&n` of a local or parameter: `variable` names it
    FUNCTION = "function address"  # `&copy` or `copy` of a function: `callee` names it (a function pointer's value)
    UNKNOWN_NAME = "unknown name"  # a name nothing defines (a macro of a header not read): its type names it
    VALUE = "value"  # any other value not modelled: a string literal, a local's address, a PTX address ...


@record(frozen=False, eq=False)
class Opaque(Expr):
    """A value warplint does not model (a float computation, a call it cannot see)."""

    kind: OpaqueKind
    reason: str  # what it is, in words ("call to sqrtf", "address of local 'x'"): for messages only
    type: CType
    span: Span
    operands: tuple[Expr, ...] = ()
    callee: str | None = None  # CALL: the name called as written (`helper`, `std::sqrt`); FUNCTION: the function
    variable: Variable | None = None  # LOCAL_ADDRESS: the local whose address is taken


@record(frozen=False, eq=False)
class FieldRef(Expr):
    """A field of a struct value held in registers: `A.width` for a by-value parameter `Matrix A`."""

    base: Expr
    name: str
    type: CType
    span: Span


@record(frozen=False, eq=False)
class StructValue(Expr):
    """A struct value held in registers (a by-value kernel parameter, a local struct)."""

    fields: dict[str, Expr]
    type: CType
    span: Span


# ----------------------------------------------------------------------------- accesses
@record(frozen=False, eq=False)
class Access:
    """One memory access as written in the source."""

    uid: int
    space: Space  # UNKNOWN: decided per call site
    op: AccessOp
    element: CType  # the type moved: float, float3, a struct
    address: Expr  # a pointer-typed IR expression
    span: Span
    text: str  # the access as written, e.g. "tile[ty][tx]"
    array: str  # the variable the address derives from ("tile", "A.elements")
    statement: int = 0  # accesses lowered from one statement share this number
    merged_with: int | None = None  # uid of the access whose wide load also moved this one
    merged_bytes: int | None = None  # the width of that merged load
    volatile: bool = False  # through a `volatile` variable: never merged with another access

    @property
    def bytes(self) -> int:
        return self.element.size or 0


# ----------------------------------------------------------------------------- statements
class Stmt:
    span: Span


@record(frozen=False, eq=False)
class Assign(Stmt):
    var: Variable
    value: Expr
    span: Span
    field: tuple[str, ...] = ()  # `m.width = 3` assigns field ("width",) of a local struct


@record(frozen=False, eq=False)
class LaunchStmt(Stmt):
    """`kernel<<<grid, block, smem, stream>>>(args)` in host code."""

    kernel: str
    template_args: tuple[Any, ...]
    config: tuple[Expr, ...]
    args: tuple[Expr, ...]
    span: Span
    config_text: tuple[str, ...] = ()
    # the variable launched through (`kernel<<<g, b>>>()` with `void (*kernel)(...)`), whose
    # value host code follows to the kernels it may hold; None for a kernel launched by name
    pointer: Expr | None = None


@record(frozen=False, eq=False)
class Store(Stmt):
    access: Access
    value: Expr
    span: Span


@record(frozen=False, eq=False)
class Eval(Stmt):
    expr: Expr
    span: Span


@record(frozen=False, eq=False)
class If(Stmt):
    cond: Expr
    then: list[Stmt]
    otherwise: list[Stmt]
    span: Span


@record(frozen=False, eq=False)
class Loop(Stmt):
    """for / while / do. `init` runs once; `cond` is tested before each iteration (after the
    first when `test_first` is False); `step` runs after each iteration."""

    init: list[Stmt]
    cond: Expr | None
    step: list[Stmt]
    body: list[Stmt]
    span: Span
    test_first: bool = True
    var: Variable | None = None  # the loop variable of a `for`, when there is one


@record(frozen=False, eq=False)
class Return(Stmt):
    value: Expr | None
    span: Span


@record(frozen=False, eq=False)
class Break(Stmt):
    span: Span


@record(frozen=False, eq=False)
class Continue(Stmt):
    span: Span


@record(frozen=False, eq=False)
class Sync(Stmt):
    span: Span


@record(frozen=False, eq=False)
class Skipped(Stmt):
    """A statement warplint could not lower; the variables it writes become unknown."""

    what: str
    writes: tuple[Variable, ...]
    span: Span


# ----------------------------------------------------------------------------- functions
@record(frozen=False, eq=False)
class Function:
    name: str
    kind: str  # global device host
    params: list[Variable]
    body: list[Stmt]
    returns: CType
    span: Span
    name_span: Span
    launch_bounds: tuple[int, ...] = ()
    template_params: tuple[str, ...] = ()
    template_args: tuple[Any, ...] = ()  # the instantiation this copy was lowered for
    accesses: list[Access] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    @property
    def display_name(self) -> str:
        if not self.template_args or "<" in self.name:  # instantiations are named `k<16>` already
            return self.name
        return f"{self.name}<{', '.join(str(a) for a in self.template_args)}>"


@record(frozen=False, eq=False)
class LaunchSite:
    """`kernel<<<grid, block, smem, stream>>>(args)` in host code, with what it evaluates to."""

    kernel: str
    template_args: tuple[Any, ...]
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    origin: str  # e.g. "launch at line 42" (resolved by the caller) or the variable names
    span: Span
    grid_text: str = ""
    block_text: str = ""
    args: tuple[Any, ...] = ()  # known integer values of scalar arguments, else None


@record(frozen=False, eq=False)
class Module:
    path: str
    functions: dict[str, Function]
    kernels: list[Function]
    launches: list[LaunchSite]
    globals: list[Variable]
    diagnostics: list[Diagnostic]
    host: list[Function] = field(default_factory=list)  # host functions (their launches give configurations)
    call_graph: Any = None  # ir.call_graph.CallGraph of function names, built only when a cycle is possible
    templates: list[str] = field(default_factory=list)  # names of the template kernels defined


_NOT_CHILDREN = frozenset({"type", "span", "var", "access"})


def sub_expressions(e: Expr) -> list[Expr]:
    """The expressions directly inside `e` (operands, arguments, fields), not the access
    of a `Load` (its address is `e.access.address`) nor variables' declarations."""
    out: list[Expr] = []
    add_sub_expressions(e, out)
    return out


def add_sub_expressions(e: Expr, out: list[Any]) -> None:
    """Append `sub_expressions(e)` to `out` (a walk's stack), in the same order, the slots of
    `e`'s class looked up once (`_EXPRESSION_SLOTS`). Why: the lowering's walk of each address
    (`_through_volatile`) made a generator per expression; lowering the twenty cuda-samples
    files of `benchmarks/speed.py nvcc` and reduction_kernel.cu under callgrind, 2026-11-28,
    1.495 -> 1.464 G instructions."""
    kind = e.__class__
    slots = _EXPRESSION_SLOTS.get(kind)
    if slots is None:
        slots = _EXPRESSION_SLOTS[kind] = tuple(s for s in getattr(kind, "__slots__", ()) if s not in _NOT_CHILDREN)
    for slot in slots:
        val = getattr(e, slot, None)
        if isinstance(val, Expr):
            out.append(val)
        elif isinstance(val, tuple):
            out.extend(v for v in val if isinstance(v, Expr))
        elif isinstance(val, dict):
            out.extend(v for v in val.values() if isinstance(v, Expr))


_EXPRESSION_SLOTS: dict[
    type, tuple[str, ...]
] = {}  # class -> the slots `sub_expressions` looks in (the classes are few)


def walk_nodes(root: Any) -> Iterator[Any]:
    """Every statement, expression and access in `root` (a node, or a list of them), at any
    depth: branches, loop bodies, operands, the address of each access.

    Each class is looked at once (`_walk_plan`): what its objects are to the walk, and for a
    node, its child slots read by one `attrgetter`, not a generator of `getattr`s. Measured
    2026-11-28 on reduction_kernel.cu (cuda-samples; 222 functions, 43,101 nodes), walking
    every function's body: 0.105 -> 0.035 s CPU, the same nodes in the same order. `check` and
    the language server walk each kernel for its dimensions (`launch.uses_dimensions`) and its
    undefined names (`missing.undefined_names`) at every analysis."""
    stack: list[Any] = [root]
    pop, extend, append = stack.pop, stack.extend, stack.append
    plans = _WALK_PLANS
    while stack:
        x = pop()
        plan = plans.get(x.__class__)
        if plan is None:
            plan = _walk_plan(x.__class__)
        if plan is _SKIP:
            continue
        if plan is _ITEMS:
            extend(x)
        elif plan is _VALUES:
            extend(x.values())
        else:
            yield x
            children, many = plan
            if children is None:
                continue
            try:
                if many:
                    extend(children(x))
                else:
                    append(children(x))
            except AttributeError:  # a slot never set: None, as getattr's default would give
                extend(getattr(x, slot, None) for slot in _child_slots(x.__class__))


_SKIP, _ITEMS, _VALUES = object(), object(), object()
_WALK_PLANS: dict[type, Any] = {}  # class -> _SKIP, _ITEMS, _VALUES or (getter of its child slots, several?)


def _child_slots(kind: type) -> tuple[str, ...]:
    return tuple(slot for slot in getattr(kind, "__slots__", ()) if slot not in ("type", "span", "var"))


def _walk_plan(kind: type) -> Any:
    """What `walk_nodes` does with an object of class `kind` (classes are few: kept for good)."""
    plan: Any
    if issubclass(kind, (list, tuple)):
        plan = _ITEMS
    elif issubclass(kind, dict):
        plan = _VALUES
    elif issubclass(kind, (Expr, Stmt, Access)):
        slots = _child_slots(kind)
        plan = (operator.attrgetter(*slots) if slots else None, len(slots) > 1)
    else:
        plan = _SKIP
    _WALK_PLANS[kind] = plan
    return plan


def walk_statements(stmts: Iterable[Stmt]) -> Iterator[Stmt]:
    """Every statement in `stmts` and in the branches and loops below them, in source order."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk_statements(s.then)
            yield from walk_statements(s.otherwise)
        elif isinstance(s, Loop):
            yield from walk_statements(s.init)
            yield from walk_statements(s.body)
            yield from walk_statements(s.step)
