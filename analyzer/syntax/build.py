"""The AST builder: `ToAst` makes the nodes of analyzer.syntax.ast as the parser reduces rules.

The LALR driver (analyzer.syntax.lalr) calls `ToAst.reduce` with each rule's kept children;
the method named like the rule (or its `-> alias` in cuda.lark) builds the node, with a
`Span` shifted by the offset of the declaration being parsed. `ast_methods` is the table
from rule name to method, and `OPERATOR_CHAINS` the rules whose children are a flat
`a op b op c` chain that `binary_expression` groups by C's precedence.
"""

from __future__ import annotations

import functools
from typing import Any

from analyzer.diagnostics import Span
from analyzer.syntax import ast as A
from analyzer.syntax import tables as parse_tables
from analyzer.syntax.lalr import Meta, Token
from analyzer.syntax.literals import char_value, float_value, int_value


def _node_text(node: A.Node) -> str:
    """A short spelling of a template argument, for naming a specialization."""
    if isinstance(node, A.TypeName):
        return " ".join(node.specs.type.names) + "*" * sum(1 for k, _ in node.derivations if k == "pointer")
    if isinstance(node, A.Constant):
        return node.text
    if isinstance(node, A.Identifier):
        return node.name
    if isinstance(node, A.UnaryOp) and isinstance(node.operand, A.Constant):
        return node.op + node.operand.text
    return "?"


OPERATOR_CHAINS = frozenset({"binary_expression", "shift_expression"})
# C's binary operators, tightest first; all associate to the left
_PRECEDENCE = {
    **dict.fromkeys(("*", "/", "%"), 10),
    **dict.fromkeys(("+", "-"), 9),
    **dict.fromkeys(("<<", ">>"), 8),
    **dict.fromkeys(("<", ">", "<=", ">="), 7),
    **dict.fromkeys(("==", "!="), 6),
    "&": 5,
    "^": 4,
    "|": 3,
    "&&": 2,
    "||": 1,
}


class ToAst:
    """Builds AST nodes as the parser reduces rules; spans are shifted by `offset` (the
    chunk's start). A rule's method is called with (meta, *kept children), the operator
    chains with `extents` too."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.methods = ast_methods()

    def reduce(
        self,
        rule: parse_tables.RuleSpec,
        children: list[Any],
        meta: Meta,
        extents: list[tuple[int | None, int | None]] | None,
    ) -> Any:
        method = self.methods[rule.name]
        if extents is not None:
            offset = self.offset
            return method(self, meta, *children, extents=[_shifted(s, e, offset) for s, e in extents])
        return method(self, meta, *children)

    def _span(self, meta: tuple[int | None, int | None]) -> Span:
        """The span of a reduction's `(start, end)` (a `Meta`, or the plain pair `Parser.parse`'s
        direct calls give), shifted by `offset`."""
        # (no typing.cast on this path: a call of a Python function, 840,000 spans over the corpora)
        start = meta[0]
        if start is None:  # empty
            return Span(self.offset, self.offset)
        return Span(start + self.offset, meta[1] + self.offset)  # type: ignore[operator]  # not empty

    def _tok_span(self, tok: Token) -> Span:
        return Span(tok.start_pos + self.offset, tok.end_pos + self.offset)

    # ---- top level
    def start(self, meta, *decls):
        return A.TranslationUnit(tuple(d for d in decls if d is not None), self._span(meta))

    def empty_declaration(self, meta, *_):
        return None

    def access_label(self, meta, *_):
        return None

    def template_declaration(self, meta, *children):
        params = tuple(c for c in children[:-1] if isinstance(c, A.TemplateParam))
        decl = children[-1]
        if isinstance(decl, A.FunctionDef):
            # the definition spans its `template <...>` head too, so it holds its parameters
            return A.FunctionDef(decl.specs, decl.declarator, decl.body, self._span(meta), params)
        return A.TemplateDecl(params, decl, self._span(meta))

    def type_template_parameter(self, meta, name, default):
        return A.TemplateParam("type", str(name) if name is not None else None, self._span(meta), default)

    def value_template_parameter(self, meta, specs, declarator, default):
        return A.TemplateParam("value", declarator.name, self._span(meta), default, specs)

    def unnamed_template_parameter(self, meta, *rest):
        # `template <bool, class L, class R>`: a value parameter only a specialization names
        return A.TemplateParam("value", None, self._span(meta), rest[-1])

    def scoped_template_argument(self, meta, tid, member):
        """`TYPE_IS<T, double>::test` as a template argument: the type-name of names
        (`TYPE_IS`, `::test`), as `typename vec4<T>::Type` is read."""
        span = self._span(meta)
        spec = A.TypeSpec((tid.name, str(member)), span, template_args=tid.args)
        return A.TypeName(A.DeclSpecs((), (), spec, span), (), span)

    def function_definition(self, meta, specs, declarator, *rest):
        body = rest[-1]
        return A.FunctionDef(specs, declarator, body, self._span(meta))

    def function_suffix(self, meta, *_):
        return None

    # constructors, destructors, `using` and namespace aliases (cuda.lark says which forms)
    def constructor_definition(self, meta, specs, params, *rest):
        name = specs.type.names[-1] if specs.type.names else "<constructor>"
        if specs.type.template_args and len(specs.type.names) > 1:
            # not a constructor: `template <> __device__ float conv<-1>(float x) {...}`, an
            # explicit specialization, named `conv<-1>` so it does not replace the template
            name = f"{name}<{', '.join(_node_text(a) for a in specs.type.template_args)}>"
            ts = specs.type
            specs = A.DeclSpecs(
                specs.storage,
                specs.qualifiers,
                A.TypeSpec(ts.names[:-1], ts.span, ts.struct, ts.enum),
                specs.span,
                specs.alignments,
                specs.launch_bounds,
            )
        declarator = A.Declarator(name, (("function", params or ()),), specs.type.span)
        return A.FunctionDef(specs, declarator, rest[-1], self._span(meta))

    def constructor_declaration(self, meta, *_):
        return None  # declares nothing warplint lays out or calls

    def explicit_instantiation(self, meta, specs, params=None):
        """`template void reduce<int>(...);` (its return type and name are the specifiers)."""
        ts = specs.type
        if not ts.template_args or not ts.names:
            return None
        return A.ExplicitInstantiation(ts.names[-1], tuple(ts.template_args), self._span(meta))

    def explicit_class_instantiation(self, meta, _kind, tid):
        """`template class PricingEngine<float>;`: every member of the class template defined
        outside it is instantiated with these arguments (lowering finds them by the class's name)."""
        return A.ExplicitInstantiation(tid.name, tid.args, self._span(meta))

    destructor_definition = destructor_declaration = constructor_declaration
    ctor_initializer = member_initializer = special_body = constructor_declaration
    using_namespace = using_name = namespace_alias = constructor_declaration

    def using_alias(self, meta, name, type_name):
        """`using real = float;` is `typedef float real;`."""
        ts = type_name.specs
        specs = A.DeclSpecs(("typedef",), ts.qualifiers, ts.type, ts.span, ts.alignments)
        declarator = A.Declarator(str(name), type_name.derivations, self._tok_span(name))
        return A.Declaration(specs, (A.InitDeclarator(declarator, None, declarator.span),), self._span(meta))

    # ---- declarations
    def declaration(self, meta, specs, *inits):
        return A.Declaration(specs, tuple(i for i in inits if i is not None), self._span(meta))

    def static_assert(self, meta, cond, *_):
        return A.StaticAssert(cond, self._span(meta))

    def declaration_specifiers(self, meta, *items):
        storage: list[str] = []
        quals: list[str] = []
        names: list[str] = []
        aligns: list[A.Alignment] = []
        bounds: tuple = ()
        struct = enum = None
        targs: tuple = ()
        type_span: Span | None = None
        for kind, value, span in items:
            if kind == "storage":
                storage.append(value)
            elif kind == "qual":
                quals.append(value)
            elif kind == "align":
                aligns.append(value)
            elif kind == "bounds":
                storage.append("__launch_bounds__")
                bounds = value
            else:
                type_span = span if type_span is None else type_span.cover(span)
                if kind == "basic" or kind == "named":
                    names.append(value)
                elif kind == "template":
                    names.append(value.name)
                    targs = value.args
                elif kind == "struct":
                    struct = value
                    names.append(f"{value.kind} {value.name}" if value.name else value.kind)
                elif kind == "enum":
                    enum = value
                    names.append(f"enum {value.name}" if value.name else "enum")
        span = self._span(meta)
        tspec = A.TypeSpec(tuple(names) or ("int",), type_span or span, struct, enum, targs)
        return A.DeclSpecs(tuple(storage), tuple(quals), tspec, span, tuple(aligns), bounds)

    def storage_class(self, meta, tok):
        return ("storage", str(tok), self._span(meta))

    def linkage(self, meta, _extern, language):
        return ("storage", f"extern {language}", self._span(meta))  # `extern "C"`: linkage, not storage

    def launch_bounds(self, meta, *children):
        args = next((c for c in children if isinstance(c, tuple) and c and isinstance(c[0], A.Node)), ())
        return ("bounds", args, self._span(meta))

    def type_qualifier(self, meta, tok):
        return ("qual", str(tok), self._span(meta))

    def basic_type(self, meta, tok):
        return ("basic", str(tok), self._span(meta))

    def named_type(self, meta, tok):
        if isinstance(tok, A.TemplateId):
            return ("template", tok, self._span(meta))
        return ("named", str(tok), self._span(meta))

    def template_type(self, meta, tid):
        return ("template", tid, self._span(meta))

    def alignment(self, meta, value):
        if isinstance(value, A.TypeName):
            value = A.SizeOf("alignof", value, value.span)
        return ("align", A.Alignment(value, self._span(meta)), self._span(meta))

    def gnu_attributes(self, meta, *attrs):
        for attr in attrs:
            if attr is not None and attr[0] == "aligned" and attr[1]:
                return ("align", A.Alignment(attr[1][0], self._span(meta)), self._span(meta))
        return ("qual", "__attribute__", self._span(meta))

    def attribute(self, meta, name, args):
        return (str(name), args or ())

    def template_id(self, meta, name, *args):
        return A.TemplateId(str(name), tuple(a for a in args if a is not None), self._span(meta))

    def struct_kind(self, meta, tok):
        return str(tok)

    def struct_definition(self, meta, kind, *rest):
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        members = tuple(r for r in rest if isinstance(r, A.Node))
        sd = A.StructDef(kind, name, members, self._span(meta), tuple(aligns))
        return ("struct", sd, self._span(meta))

    def struct_specialization(self, meta, kind, *rest):
        """`template <> struct SharedMemory<int> { ... }`: named `SharedMemory<int>`."""
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        tid = next(r for r in rest if isinstance(r, A.TemplateId))
        members = tuple(r for r in rest if isinstance(r, A.Node) and r is not tid)
        name = f"{tid.name}<{', '.join(_node_text(a) for a in tid.args)}>"
        return ("struct", A.StructDef(kind, name, members, self._span(meta), tuple(aligns)), self._span(meta))

    def struct_reference(self, meta, kind, *rest):
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        return ("struct", A.StructDef(kind, name, None, self._span(meta), tuple(aligns)), self._span(meta))

    def base_clause(self, meta, *_):
        return None

    def base_specifier(self, meta, *_):
        return None

    def access(self, meta, tok):
        return None

    def enum_definition(self, meta, *rest):
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        enumerators = tuple(r for r in rest if isinstance(r, A.Enumerator))
        return ("enum", A.EnumDef(name, enumerators, self._span(meta)), self._span(meta))

    def enum_reference(self, meta, *rest):
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        return ("enum", A.EnumDef(name, None, self._span(meta)), self._span(meta))

    def enumerator(self, meta, name, value):
        return A.Enumerator(str(name), value, self._span(meta))

    def init_declarator(self, meta, declarator, init):
        return A.InitDeclarator(declarator, init, self._span(meta))

    def declarator(self, meta, *items):
        if len(items) == 1 and type(direct := items[0]) is dict:  # a name alone: no pointer, no alignment
            # (what the general way below gives it, without its three scans of `items`: 3,244
            # declarators of the twenty cuda-samples files; with `_op`'s one token, their parse
            # under callgrind 2.759 G -> 2.715 G, 2026-11-29)
            return A.Declarator(
                direct["name"],
                tuple(direct["derivations"]),
                self._span(meta),
                (),
                direct.get("ctor", ()),
                tuple(direct["sizes"]),
            )
        pointers = [
            i for i in items if isinstance(i, tuple) and i and i[0] in ("pointer", "reference", "rvalue_reference")
        ]
        aligns = tuple(i[1] for i in items if isinstance(i, tuple) and i and i[0] == "align")
        direct = next(i for i in items if isinstance(i, dict))
        derivations = tuple(direct["derivations"]) + tuple(reversed([(p[0], p[1]) for p in pointers]))
        return A.Declarator(
            direct["name"], derivations, self._span(meta), aligns, direct.get("ctor", ()), tuple(direct["sizes"])
        )

    def pointer(self, meta, *quals):
        return ("pointer", tuple(q[1] for q in quals if q))

    def reference(self, meta, *_):
        return ("reference", ())

    def rvalue_reference(self, meta, *_):
        return ("reference", ())

    def name_declarator(self, meta, name):
        return {"name": name, "derivations": [], "sizes": [], "span": self._span(meta)}

    def paren_declarator(self, meta, _lparen, inner):
        # `(*p)[N]`: the name binds to the inner derivations first, then to the suffixes after `)`
        return {"name": inner.name, "derivations": list(inner.derivations), "sizes": [], "span": self._span(meta)}

    def declarator_name(self, meta, tok):
        return str(tok)

    def operator_name(self, meta, what):
        return f"operator {what}"

    def conversion_type(self, meta, *parts):
        return " ".join(p[1] if isinstance(p, tuple) else str(p) for p in parts if p is not None)

    def conversion_pointer(self, meta, tok):
        return str(tok)

    def overloadable_operator(self, meta, *toks):
        return "".join(str(t) for t in toks)

    def destructor_name(self, meta, tok):
        return f"~{tok}"

    def array_declarator(self, meta, direct, size):
        direct["derivations"].append(("array", size))
        direct["sizes"].append(size)
        return direct

    def function_declarator(self, meta, direct, params):
        direct["derivations"].append(("function", params or ()))
        return direct

    def constructor_declarator(self, meta, direct, args):
        direct["ctor"] = args
        return direct

    def parameter_list(self, meta, *params):
        return tuple(p for p in params if isinstance(p, A.Param))

    def parameter(self, meta, specs, declarator, default):
        if isinstance(declarator, tuple):  # abstract declarator: derivations only
            declarator = A.Declarator(None, declarator, self._span(meta))
        return A.Param(specs, declarator, self._span(meta))

    def type_name(self, meta, specs, abstract):
        return A.TypeName(specs, abstract or (), self._span(meta))

    def abstract_declarator(self, meta, *items):
        arrays = [i for i in items if isinstance(i, tuple) and i and i[0] == "array"]
        pointers = [i for i in items if isinstance(i, tuple) and i and i[0] in ("pointer", "reference")]
        return tuple(arrays) + tuple(reversed(pointers))

    def abstract_array(self, meta, size):
        return ("array", size)

    def paren_abstract_declarator(self, meta, _lparen, *items):
        # `(*)[N][M]`: a pointer (the innermost derivation) to what the suffixes make
        pointers = [i for i in items if isinstance(i, tuple) and i and i[0] in ("pointer", "reference")]
        suffixes = [i for i in items if isinstance(i, tuple) and i and i[0] in ("array", "function")]
        return tuple(reversed(pointers)) + tuple(suffixes)

    def abstract_function(self, meta, params):
        return ("function", params or ())

    def initializer_list(self, meta, *items):
        return A.InitList(tuple(i for i in items if i is not None), self._span(meta))

    # ---- statements
    def compound_statement(self, meta, *items):
        out = []
        for i in items:
            if isinstance(i, A.Declaration):
                i = A.DeclStmt(i, i.span)
            if i is not None:
                out.append(i)
        return A.Compound(tuple(out), self._span(meta))

    def expression_statement(self, meta, expr):
        return A.ExprStmt(expr, self._span(meta))

    def condition_declaration(self, meta, specs, declarator, init):
        span = self._span(meta)
        return A.Declaration(specs, (A.InitDeclarator(declarator, init, span),), span)

    def if_statement(self, meta, cond, then, otherwise=None):
        span = self._span(meta)
        if isinstance(cond, A.Declaration):  # `if (T x = e) S`: `{ T x = e; if (x) S }`
            return A.Compound((A.DeclStmt(cond, cond.span), A.If(_declared(cond), then, otherwise, span)), span)
        return A.If(cond, then, otherwise, span)

    def while_statement(self, meta, cond, body):
        span = self._span(meta)
        if isinstance(cond, A.Declaration):
            # `while (T x = e) S`: `for (;;) { T x = e; if (!x) break; S }`, declared afresh each time round
            leave = A.If(A.UnaryOp("!", _declared(cond), cond.span), A.Break(cond.span), None, cond.span)
            return A.For(None, None, None, A.Compound((A.DeclStmt(cond, cond.span), leave, body), body.span), span)
        return A.While(cond, body, span)

    def goto_statement(self, meta, name):
        return A.Goto(str(name), self._span(meta))

    def label(self, meta, name):
        return A.Label(str(name), self._span(meta))

    def for_head(self, meta, init, cond, step):
        if isinstance(init, A.Declaration):
            init = A.DeclStmt(init, init.span)
        return (init, cond, step)

    def for_statement(self, meta, head, body):
        init, cond, step = head
        return A.For(init, cond, step, body, self._span(meta))

    def do_statement(self, meta, body, cond):
        return A.DoWhile(body, cond, self._span(meta))

    def switch_statement(self, meta, expr, body):
        span = self._span(meta)
        if isinstance(expr, A.Declaration):
            return A.Compound((A.DeclStmt(expr, expr.span), A.Switch(_declared(expr), body, span)), span)
        return A.Switch(expr, body, span)

    def asm_statement(self, meta, *children):
        """The template (the strings before the first `:`) and the output and input operands;
        the clobbers are left out."""
        rest = [c for c in children if c not in ("asm", "qualifier")]
        strings = 0
        while strings < len(rest) and isinstance(rest[strings], Token):
            strings += 1
        template = "".join(str(t)[1:-1] for t in rest[:strings])
        outputs = rest[strings] if len(rest) > strings and rest[strings] else ()
        inputs = rest[strings + 1] if len(rest) > strings + 1 and isinstance(rest[strings + 1], tuple) else ()
        return A.Asm(template, outputs, inputs, self._span(meta))

    def asm_keyword(self, meta, *_):
        return "asm"

    def asm_qualifier(self, meta, *_):
        return "qualifier"

    def asm_operands(self, meta, *operands):
        return tuple(operands)

    def asm_operand(self, meta, constraint, expr):
        return A.AsmOperand(str(constraint)[1:-1], expr, self._span(meta))

    def return_statement(self, meta, value):
        return A.Return(value, self._span(meta))

    def break_statement(self, meta, *_):
        return A.Break(self._span(meta))

    def continue_statement(self, meta, *_):
        return A.Continue(self._span(meta))

    def case_label(self, meta, value):
        return A.CaseLabel(value, self._span(meta))

    def default_label(self, meta, *_):
        return A.CaseLabel(None, self._span(meta))

    # ---- expressions
    def comma(self, meta, left, right):
        items = left.exprs if isinstance(left, A.Comma) else (left,)
        return A.Comma((*items, right), self._span(meta))

    def assignment(self, meta, target, op, value):
        return A.Assign(op, target, value, self._span(meta))

    def conditional(self, meta, cond, then, otherwise):
        return A.Ternary(cond, then, otherwise, self._span(meta))

    def binary_expression(self, meta, *items, extents=()):
        """`a op b op c ...` grouped by C's precedence, every operator left-associative; each
        node spans its operands with their parentheses (`extents`, from `build`), as the
        positions of nested grammar rules did."""
        operands: list[tuple[Any, int, int]] = [(items[0], *extents[0])]
        pending: list[str] = []

        def fold() -> None:
            op = pending.pop()
            right, _, end = operands.pop()
            left, start, _ = operands.pop()
            operands.append((A.BinaryOp(op, left, right, Span(start, end)), start, end))

        for i in range(1, len(items), 2):
            op = items[i]
            level = _PRECEDENCE[op]
            while pending and _PRECEDENCE[pending[-1]] >= level:
                fold()
            pending.append(op)
            operands.append((items[i + 1], *extents[i + 1]))
        while pending:
            fold()
        return operands[0][0]

    shift_expression = binary_expression

    def cast(self, meta, type_name, expr):
        return A.Cast(type_name, expr, "c", self._span(meta))

    def prefix(self, meta, op, operand):
        return A.UnaryOp(op, operand, self._span(meta))

    def unary(self, meta, op, operand):
        return A.UnaryOp(op, operand, self._span(meta))

    def sizeof_expression(self, meta, operand):
        return A.SizeOf("sizeof", operand, self._span(meta))

    def sizeof_type(self, meta, tn):
        return A.SizeOf("sizeof", tn, self._span(meta))

    def alignof_type(self, meta, _kw, tn):
        return A.SizeOf("alignof", tn, self._span(meta))

    def index(self, meta, base, idx):
        return A.Index(base, idx, self._span(meta))

    def call(self, meta, func, args):
        return A.Call(func, args or (), self._span(meta))

    def member(self, meta, base, name):
        return A.Member(base, str(name), False, self._span(meta))

    def arrow(self, meta, base, name):
        return A.Member(base, str(name), True, self._span(meta))

    def postfix(self, meta, operand, op):
        return A.UnaryOp("p" + op, operand, self._span(meta))

    def launch(self, meta, func, config, args):
        targs: tuple = ()
        if isinstance(func, A.TemplateId):
            targs = func.args
            func = A.Identifier(func.name, func.span)
        return A.Launch(func, config or (), args or (), self._span(meta), targs)

    def cxx_cast(self, meta, kind, tn, expr):
        return A.Cast(tn, expr, kind.replace("_cast", ""), self._span(meta))

    def cxx_cast_kind(self, meta, tok):
        return str(tok)

    def functional_cast(self, meta, type_tok, args):
        span = self._span(meta)
        if isinstance(type_tok, tuple):  # basic_type
            tname = type_tok[1]
            tspan = type_tok[2]
        else:
            tname = str(type_tok)
            tspan = self._tok_span(type_tok)
        specs = A.DeclSpecs((), (), A.TypeSpec((tname,), tspan), tspan)
        args = args or ()
        if len(args) == 1:
            return A.Cast(A.TypeName(specs, (), tspan), args[0], "functional", span)
        return A.Call(A.Identifier(tname, tspan), tuple(args), span)

    def new_expression(self, meta, placement, type_name, *rest):
        counts = tuple(r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "new_array")
        args = next((r for r in rest if isinstance(r, tuple) and not (r and r[0] == "new_array")), ())
        return A.New(type_name, counts, args, placement or (), self._span(meta))

    def new_type(self, meta, *items):
        specs = []
        for item in items:
            if isinstance(item, tuple):
                specs.append(item)  # a basic type
            elif isinstance(item, A.TemplateId):
                specs.append(("template", item, item.span))
            else:
                specs.append(("named", str(item), self._tok_span(item)))
        return A.TypeName(self.declaration_specifiers(meta, *specs), (), self._span(meta))

    def new_array(self, meta, count):
        return ("new_array", count)

    def delete_expression(self, meta, operand):
        return A.Delete(operand, self._span(meta))

    def typeid_expression(self, meta, operand):
        return A.TypeId(operand, self._span(meta))

    def template_call(self, meta, tid, args):
        return A.Call(A.Identifier(tid.name, tid.span), args or (), self._span(meta), tid.args)

    def scoped_member(self, meta, tid, name):
        # `AsianOption<Real>::Put` names `AsianOption::Put`: lowering finds the member by its
        # short name (an enumerator), or calls it as a function it does not follow
        return A.Identifier(f"{tid.name}{name}", self._span(meta))

    def argument_expression_list(self, meta, *args):
        return tuple(args)

    call_arguments = argument_expression_list

    def identifier(self, meta, tok):
        return A.Identifier(str(tok), self._span(meta))

    def integer(self, meta, tok):
        return A.Constant("int", int_value(str(tok)), str(tok), self._span(meta))

    def floating(self, meta, tok):
        return A.Constant("float", float_value(str(tok)), str(tok), self._span(meta))

    def character(self, meta, tok):
        return A.Constant("char", char_value(str(tok)), str(tok), self._span(meta))

    def string(self, meta, *toks):
        return A.Constant("string", "".join(str(t) for t in toks), " ".join(str(t) for t in toks), self._span(meta))

    def boolean_literal(self, meta, tok):
        return A.Constant("bool", str(tok) == "true", str(tok), self._span(meta))

    def null_pointer(self, meta, *_):
        return A.Constant("null", 0, "nullptr", self._span(meta))

    def this(self, meta, *_):
        return A.Identifier("this", self._span(meta))

    # the operator rules keep their single token
    def _op(self, meta, *toks):
        if len(toks) == 1:  # (4,200 of the twenty cuda-samples files' operators: no generator)
            return str(toks[0])
        return "".join(str(t) for t in toks)

    amp = add_op = mul_op = binary_op = shift_level_op = _op
    inc_op = unary_op = assign_op = alignof = _op


@functools.cache
def _declared(decl: A.Declaration) -> A.Identifier:
    """The variable a condition's declaration declares, as an expression (`if (T x = e)`: `x`)."""
    declarator = decl.declarators[0].declarator
    return A.Identifier(declarator.name or "?", declarator.span)


@functools.cache
def ast_methods() -> dict[str, Any]:
    """Rule name -> the plain function of `ToAst` that builds its node (worked out once: each
    declaration parsed makes a `ToAst`)."""
    methods = {}
    for name in dir(ToAst):
        if name.startswith("_"):
            continue
        attr = ToAst.__dict__.get(name)
        if attr is None:
            continue
        methods[name] = attr
    return methods


def _shifted(start: int | None, end: int | None, offset: int) -> tuple[int, int]:
    """A child's extent moved by `offset` (a child always has one when extents are asked for)."""
    return start + offset, end + offset  # type: ignore[operator]  # (typing.cast is a call: a hot path)
