"""The typed syntax tree that `parse` builds from cuda.lark.

Every node is a small frozen record (`analyzer.records`) with a mandatory `span` (offsets into the
preprocessed text). Fields marked with `child()` hold sub-nodes; the others are attributes.
`children()` and `dump()` are derived from that marking (pycparser's `_c_ast.cfg` idea).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from analyzer.diagnostics import Span
from analyzer.records import field, fields, record, replace

_CHILD = {"child": True}


def child(default: Any = ...) -> Any:
    if default is ...:
        return field(metadata=_CHILD)
    return field(default=default, metadata=_CHILD)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of a node class marked `child()`, in order (worked out once per
    class: `walk` asks for every node it passes)."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.metadata.get("child"))
    return names


class Node:
    span: Span

    def children(self) -> Iterator[tuple[str, Node]]:
        for name in _child_fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, Node):
                yield name, value
            elif isinstance(value, (tuple, list)):
                for i, item in enumerate(value):
                    if isinstance(item, Node):
                        yield f"{name}[{i}]", item

    def walk(self) -> Iterator[Node]:
        """This node and every node below it, depth first, in source order."""
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            below: list[Node] = []
            for name in _child_fields(type(node)):
                value = getattr(node, name)
                if isinstance(value, Node):
                    below.append(value)
                elif isinstance(value, (tuple, list)):
                    below.extend(item for item in value if isinstance(item, Node))
            below.reverse()
            stack.extend(below)

    def dump(self, indent: int = 0) -> str:
        attrs = []
        for f in fields(self):
            if f.metadata.get("child") or f.name == "span":
                continue
            attrs.append(f"{f.name}={getattr(self, f.name)!r}")
        line = "  " * indent + f"{type(self).__name__}({', '.join(attrs)})"
        out = [line]
        for name, c in self.children():
            out.append("  " * (indent + 1) + f"{name}:")
            out.append(c.dump(indent + 2))
        return "\n".join(out)


# ----------------------------------------------------------------------------- types
@record
class Alignment(Node):
    value: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class TypeSpec(Node):
    """The type part of declaration specifiers: `unsigned int`, `float3`, `struct vec3d`, `Tile<T, 32>`."""

    names: tuple[str, ...]  # keywords or a type name, e.g. ("unsigned", "int") or ("float3",)
    span: Span
    struct: StructDef | None = child(None)
    enum: EnumDef | None = child(None)
    template_args: tuple[Node, ...] = child(())

    @property
    def text(self) -> str:
        return " ".join(self.names)


@record
class DeclSpecs(Node):
    storage: tuple[str, ...]  # typedef extern static __shared__ __global__ __device__ ...
    qualifiers: tuple[str, ...]  # const volatile __restrict__
    type: TypeSpec = child()
    span: Span = field(default=Span(0, 0))
    alignments: tuple[Alignment, ...] = child(())
    launch_bounds: tuple[Expr, ...] = child(())


@record
class Declarator(Node):
    """A name with the derivations that apply to it, innermost first.

    `float *a[10]` gives name "a" and derivations (("array", 10), ("pointer", ())): an
    array of 10 pointers; apply them in order to the base type.
    """

    name: str | None
    derivations: tuple[
        tuple[str, Any], ...
    ]  # ("pointer", quals) ("reference", ()) ("array", Expr|None) ("function", params)
    span: Span
    alignments: tuple[Alignment, ...] = child(())
    constructor_args: tuple[Expr, ...] = child(())
    array_sizes: tuple[Expr | None, ...] = ()

    @property
    def params(self) -> tuple[Param, ...] | None:
        """The parameters of a function declarator; None for anything else, a pointer to a
        function (`void (*f)(int)`, derivations pointer then function) included."""
        if self.derivations and self.derivations[0][0] == "function":
            return self.derivations[0][1]
        return None


@record
class TypeName(Node):
    """A type written in a cast, sizeof or template argument: specifiers plus an abstract declarator."""

    specs: DeclSpecs = child()
    derivations: tuple[tuple[str, Any], ...] = ()
    span: Span = field(default=Span(0, 0))


@record
class Param(Node):
    specs: DeclSpecs = child()
    declarator: Declarator | None = child(None)
    span: Span = field(default=Span(0, 0))

    @property
    def name(self) -> str | None:
        return self.declarator.name if self.declarator else None


@record
class InitDeclarator(Node):
    declarator: Declarator = child()
    init: Expr | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class Declaration(Node):
    specs: DeclSpecs = child()
    declarators: tuple[InitDeclarator, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class StructDef(Node):
    kind: str  # struct union class
    name: str | None
    members: tuple[Node, ...] | None = child(None)  # Declaration / FunctionDef; None for a reference
    span: Span = field(default=Span(0, 0))
    alignments: tuple[Alignment, ...] = child(())


@record
class Enumerator(Node):
    name: str
    value: Expr | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class EnumDef(Node):
    name: str | None
    enumerators: tuple[Enumerator, ...] | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class TemplateParam(Node):
    kind: str  # "type" or "value"
    name: str | None
    span: Span
    default: Node | None = child(None)
    specs: DeclSpecs | None = child(None)


@record
class FunctionDef(Node):
    specs: DeclSpecs = child()
    declarator: Declarator = child()
    body: Compound = child()
    span: Span = field(default=Span(0, 0))
    template_params: tuple[TemplateParam, ...] = child(())

    @property
    def name(self) -> str:
        return self.declarator.name or "<anonymous>"

    @property
    def params(self) -> tuple[Param, ...]:
        return self.declarator.params or ()


@record
class TemplateDecl(Node):
    params: tuple[TemplateParam, ...] = child(())
    decl: Node = child(None)
    span: Span = field(default=Span(0, 0))


@record
class ExplicitInstantiation(Node):
    """`template void reduce<int>(int n, int *d);`: the host (or device) function template
    `name` is instantiated with `template_args`."""

    name: str = ""
    template_args: tuple[Node, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class StaticAssert(Node):
    condition: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Unsupported(Node):
    """A construct the grammar does not cover; it was skipped with a diagnostic."""

    what: str
    text: str
    span: Span


@record
class TranslationUnit(Node):
    decls: tuple[Node, ...] = child(())
    span: Span = field(default=Span(0, 0))


# ----------------------------------------------------------------------------- statements
class Stmt(Node):
    pass


@record
class Compound(Stmt):
    items: tuple[Node, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class ExprStmt(Stmt):
    expr: Expr | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class DeclStmt(Stmt):
    decl: Declaration = child()
    span: Span = field(default=Span(0, 0))


@record
class If(Stmt):
    cond: Expr = child()
    then: Stmt = child()
    otherwise: Stmt | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class For(Stmt):
    init: Stmt | None = child(None)
    cond: Expr | None = child(None)
    step: Expr | None = child(None)
    body: Stmt = child(None)
    span: Span = field(default=Span(0, 0))


@record
class While(Stmt):
    cond: Expr = child()
    body: Stmt = child()
    span: Span = field(default=Span(0, 0))


@record
class DoWhile(Stmt):
    body: Stmt = child()
    cond: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Switch(Stmt):
    expr: Expr = child()
    body: Compound = child()
    span: Span = field(default=Span(0, 0))


@record
class CaseLabel(Stmt):
    value: Expr | None = child(None)  # None for default
    span: Span = field(default=Span(0, 0))


@record
class Return(Stmt):
    value: Expr | None = child(None)
    span: Span = field(default=Span(0, 0))


@record
class Break(Stmt):
    span: Span = field(default=Span(0, 0))


@record
class Continue(Stmt):
    span: Span = field(default=Span(0, 0))


@record
class Goto(Stmt):
    label: str
    span: Span = field(default=Span(0, 0))


@record
class Label(Stmt):
    """`name:` before a statement, a target of `goto`."""

    name: str
    span: Span = field(default=Span(0, 0))


@record
class AsmOperand(Node):
    """`"=r"(v)`: an operand of inline assembly, its constraint and the C expression bound to it."""

    constraint: str
    expr: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Asm(Stmt):
    """`asm volatile("..." : outputs : inputs : clobbers);`: the template is the strings joined,
    as C reads them (escapes left as written); operands are numbered outputs first, `%0`, `%1` ..."""

    template: str
    outputs: tuple[AsmOperand, ...] = child(())
    inputs: tuple[AsmOperand, ...] = child(())
    span: Span = field(default=Span(0, 0))


# ----------------------------------------------------------------------------- expressions
class Expr(Node):
    pass


@record
class Identifier(Expr):
    name: str
    span: Span


@record
class Constant(Expr):
    kind: str  # int float char string bool null
    value: Any
    text: str
    span: Span


@record
class BinaryOp(Expr):
    op: str
    left: Expr = child()
    right: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Assign(Expr):
    op: str  # "=", "+=", ...
    target: Expr = child()
    value: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class UnaryOp(Expr):
    op: str  # - + ! ~ * & ++ -- (prefix) ; p++ p-- (postfix)
    operand: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Ternary(Expr):
    cond: Expr = child()
    then: Expr = child()
    otherwise: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Call(Expr):
    func: Expr = child()
    args: tuple[Expr, ...] = child(())
    span: Span = field(default=Span(0, 0))
    template_args: tuple[Node, ...] = child(())


@record
class Launch(Expr):
    """`kernel<<<grid, block, smem, stream>>>(args)`."""

    func: Expr = child()
    config: tuple[Expr, ...] = child(())
    args: tuple[Expr, ...] = child(())
    span: Span = field(default=Span(0, 0))
    template_args: tuple[Node, ...] = child(())


@record
class Index(Expr):
    base: Expr = child()
    index: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class Member(Expr):
    base: Expr = child()
    name: str = ""
    arrow: bool = False
    span: Span = field(default=Span(0, 0))


@record
class Cast(Expr):
    to: TypeName = child()
    expr: Expr = child()
    kind: str = "c"  # c static reinterpret const dynamic functional
    span: Span = field(default=Span(0, 0))


@record
class SizeOf(Expr):
    op: str  # sizeof alignof
    operand: Node = child()  # TypeName or Expr
    span: Span = field(default=Span(0, 0))


@record
class Comma(Expr):
    exprs: tuple[Expr, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class InitList(Expr):
    items: tuple[Expr, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class TemplateId(Expr):
    """`name<args>` used as a value (a function template) or as a type."""

    name: str
    args: tuple[Node, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class New(Expr):
    """`new T`, `new T[n]`, `new T(args)`, `new (place) T(args)`: an allocation on the device heap."""

    type: TypeName = child()
    counts: tuple[Expr, ...] = child(())  # `new T[n][4]`: n, 4
    args: tuple[Expr, ...] = child(())
    placement: tuple[Expr, ...] = child(())
    span: Span = field(default=Span(0, 0))


@record
class Delete(Expr):
    operand: Expr = child()
    span: Span = field(default=Span(0, 0))


@record
class TypeId(Expr):
    """`typeid(T)` or `typeid(expr)`."""

    operand: Node = child()  # TypeName or Expr
    span: Span = field(default=Span(0, 0))


def substitute(node: Node, name: str, replacement: Node) -> Node:
    """`node` with every `Identifier` named `name` replaced by `replacement` (a parameter of an
    inlined operator by its argument); the nodes on no path to one are shared, not copied."""
    if isinstance(node, Identifier):
        return replacement if node.name == name else node
    changes: dict[str, Any] = {}
    for f in fields(node):
        if not f.metadata.get("child"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, Node):
            new = substitute(value, name, replacement)
            if new is not value:
                changes[f.name] = new
        elif isinstance(value, (tuple, list)):
            items = [substitute(v, name, replacement) if isinstance(v, Node) else v for v in value]
            if any(a is not b for a, b in zip(items, value)):
                changes[f.name] = type(value)(items)
    return replace(node, **changes) if changes else node
