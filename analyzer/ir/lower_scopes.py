"""Lowering, part 1: scopes, types and templates, and constant folding.

`ScopesAndTypes` is the base of `analyzer.ir.lower.Lowerer` and holds the state of one
lowering (the scopes, the types and templates met so far, the function being lowered).
It resolves names to bindings (a variable, an enumerator's constant, a typedef), type
specifiers and declarators to `CType`s (structs laid out, enums counted, `__align__`
applied, template parameters bound), and evaluates constant expressions
(`const_int`, with `fold_binary` for C's arithmetic on two constants).

Lowering is one object split into layers, each a class in its own module extending the one
before: scopes and types (here), expressions (`lower_expressions`), calls (`lower_calls`),
statements (`lower_statements`), and the top level (`lower.Lowerer`). They share all the
state and call each other (an expression's type needs the scopes; a call inlines a struct's
conversion operator, which declares shared arrays; a statement lowers expressions), so
helper objects would hand each other everything; a layer that calls one above it says so
in an `if TYPE_CHECKING:` block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir import wmma
from analyzer.ir.specializations import specialization_for
from analyzer.launch_limits import alignment_problem
from analyzer.records import field, record
from analyzer.syntax import ast as A


class LoweringError(Exception):
    """A construct lowering cannot follow: the statement (or declaration) holding it is skipped."""

    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.span = span


@record(frozen=False, slots=False)
class Scope:
    """The names declared in one block (or at file scope)."""

    names: dict[str, Any] = field(default_factory=dict)  # Variable | N.Const (enumerators) | CType (typedef)


@record(frozen=False, slots=False)
class Templates:
    """Struct templates by name, laid out when instantiated (function templates are found in
    `function_defs` and lowered per instantiation)."""

    structs: dict[str, A.StructDef] = field(default_factory=dict)
    struct_params: dict[str, tuple[A.TemplateParam, ...]] = field(default_factory=dict)


class ScopesAndTypes:
    """The state of one lowering; names, types, templates and constants (the base layer)."""

    def __init__(self, text: str, path: str, padding: dict[str, int] | None = None) -> None:
        self.text = text
        self.path = path
        self.declaring_volatile = False  # the declaration being lowered says `volatile`
        self.goto_flags: dict[str, Any] = {}  # label -> the flag of a forward goto to it (lower_statements)
        # explicit instantiations of function templates: name -> template argument values
        self.explicit: dict[str, list[tuple[Any, ...]]] = {}
        # template arguments, as spelled, that other files of the program launch kernels with
        self.elsewhere: dict[str, list[tuple[str, ...]]] = {}
        # host function templates called from host code: instance name -> (template, arguments)
        self.host_instances: dict[str, tuple[str, tuple[Any, ...]]] = {}
        # `__shared__` arrays whose last dimension is widened, to check a padding fix
        self.padding = dict(padding or {})
        self.diagnostics: list[Diagnostic] = []
        self.types: dict[str, T.CType] = {}  # typedefs and struct names
        self.struct_defs: dict[str, A.StructDef] = {}
        self.globals = Scope()
        self.function_defs: dict[str, A.FunctionDef] = {}
        self.templates = Templates()
        self.functions: dict[str, N.Function] = {}
        self.kernels: list[N.Function] = []
        self.scopes: list[Scope] = [self.globals]
        self.type_bindings: list[dict[str, Any]] = [{}]  # template parameter -> CType | int
        self.uid = 0
        self.current: N.Function | None = None
        self.host = False
        self.reported: set[tuple[str, int]] = set()
        self.instantiating: set[str] = set()
        self.statement = 0  # a counter: accesses of one statement share it
        self.returns_memo: dict[int, tuple[A.Compound, tuple[A.Return, ...]]] = {}  # `returns_in`

    # ------------------------------------------------------------------ helpers
    def new_uid(self) -> int:
        self.uid += 1
        return self.uid

    def returns_in(self, body: A.Compound) -> tuple[A.Return, ...]:
        """The `return`s with a value in `body` (an operator of a struct: `conversion_operator`,
        `subscript_operator`), in source order; looked for once a body (by identity: the body
        is kept with them), not at each use (cuda-samples' `SharedMemory<T>()`: 2,982 uses in
        reduction_kernel.cu's instances). Lowering the twenty cuda-samples files of
        `benchmarks/speed.py nvcc` and reduction_kernel.cu under callgrind, 2026-11-28:
        1.464 -> 1.445 G instructions."""
        hit = self.returns_memo.get(id(body))
        if hit is not None and hit[0] is body:
            return hit[1]
        found = tuple(s for s in body.walk() if isinstance(s, A.Return) and s.value is not None)
        self.returns_memo[id(body)] = (body, found)
        return found

    def source(self, span: Span) -> str:
        return " ".join(self.text[span.start : span.end].split())

    def warn(self, message: str, span: Span, code: str = "WL903", severity: Severity = Severity.WARNING) -> None:
        key = (message, span.start)
        if key in self.reported:
            return
        self.reported.add(key)
        self.diagnostics.append(Diagnostic(severity, message, code, span))

    def lookup(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope.names:
                return scope.names[name]
        short = name.rsplit("::", 1)[-1]
        if short != name:
            return self.lookup(short)
        return None

    def declare(self, var: Any, name: str) -> None:
        if self.declaring_volatile and isinstance(var, N.Variable):
            var.volatile = True
        self.scopes[-1].names[name] = var

    def binding(self, name: str) -> Any:
        for b in reversed(self.type_bindings):
            if name in b:
                return b[name]
        return None

    def padded(self, name: str, t: T.CType) -> T.CType:
        """A shared array's type with `self.padding[name]` more elements in its last dimension."""
        extra = self.padding.get(name)
        if not extra or not isinstance(t, T.ArrayType):
            return t

        def widen(a: T.CType) -> T.CType:
            if isinstance(a, T.ArrayType) and isinstance(a.element, T.ArrayType):
                return T.ArrayType(widen(a.element), a.length)
            if isinstance(a, T.ArrayType) and a.length is not None:
                return T.ArrayType(a.element, a.length + extra)
            return a

        return widen(t)

    # ------------------------------------------------------------------ types and templates
    def resolve_typespec(self, spec: A.TypeSpec) -> T.CType:
        if spec.struct is not None:
            return self.define_struct(spec.struct)
        if spec.enum is not None:
            self.define_enum(spec.enum)
            return T.INT
        text = spec.text
        if len(spec.names) == 2 and spec.names[1].startswith("::") and spec.template_args:
            member = self.member_type(spec.names[0], spec.template_args, spec.names[1][2:])
            if member is not None:
                return member
        if len(spec.names) == 1:
            name = spec.names[0]
            bound = self.binding(name)
            if isinstance(bound, T.CType):
                return bound
            if spec.template_args and wmma.is_warp_matrix_name(name, wmma.FRAGMENT_TYPE):
                return self.fragment(spec.template_args)
            if spec.template_args and name in self.templates.structs:
                return self.instantiate_struct(name, spec.template_args)
            if name in self.types:
                return self.types[name]
            short = name.rsplit("::", 1)[-1]
            if short in self.types:
                return self.types[short]
            found = T.builtin_type(name) or T.builtin_type(short)
            if found is not None:
                return found
            return T.UnknownType(name)  # `auto` too: the initializer's type replaces it
        found = T.builtin_type(text)
        if found is not None:
            return found
        # `unsigned` + typedef etc.: fall back to the last word
        return T.builtin_type(spec.names[-1]) or T.UnknownType(text)

    def apply_derivations(self, base: T.CType, derivations: Iterable[tuple[str, Any]]) -> T.CType:
        t = base
        for kind, value in reversed(tuple(derivations)):
            if kind == "pointer":
                t = T.PointerType(t)
            elif kind == "reference":
                t = T.PointerType(t, name="&")
            elif kind == "array":
                t = T.ArrayType(t, self.const_int(value) if value is not None else None)
            elif kind == "function":
                t = T.FunctionType(t)
        return t

    def declared_type(self, specs: A.DeclSpecs, declarator: A.Declarator | None) -> T.CType:
        base = self.resolve_typespec(specs.type)
        for al in specs.alignments:
            n = self.alignment(al)
            if n:
                base = T.with_alignment(base, n)
        if declarator is None:
            return base
        return self.apply_derivations(base, declarator.derivations)

    def type_of_typename(self, tn: A.TypeName) -> T.CType:
        return self.apply_derivations(self.declared_type(tn.specs, None), tn.derivations)

    def define_struct(self, sd: A.StructDef) -> T.CType:
        if sd.members is None:
            if sd.name and sd.name in self.types:
                return self.types[sd.name]
            return T.UnknownType(f"{sd.kind} {sd.name}")
        members: list[tuple[str, T.CType]] = []
        for m in sd.members:
            if isinstance(m, A.Declaration) and not m.declarators and m.specs.type.enum is not None:
                # `struct AsianOption { enum CallPut {Call, Put}; CallPut type; }`: a member's type
                # and the constants `AsianOption<Real>::Put` names
                self.define_enum(m.specs.type.enum)
            if isinstance(m, A.Declaration) and "typedef" not in m.specs.storage and "static" not in m.specs.storage:
                for d in m.declarators:
                    if d.declarator.params is not None:
                        continue
                    members.append((d.declarator.name or "", self.declared_type(m.specs, d.declarator)))
                inner = m.specs.type.struct
                if not m.declarators and inner is not None and inner.name is None and inner.members is not None:
                    # an anonymous struct or union member (`union { struct { char b, g, r, a; }; unsigned u; }`):
                    # laid out as one member, its fields are then the outer struct's fields
                    members.append(("", self.declared_type(m.specs, None)))
        explicit = None
        for al in sd.alignments:
            explicit = self.alignment(al) or explicit
        name = sd.name or f"<anonymous {sd.kind}>"
        t = T.layout_struct(name, members, is_union=sd.kind == "union", explicit_align=explicit)
        if isinstance(t, T.StructType) and any(f.name == "" and isinstance(f.type, T.StructType) for f in t.fields):
            fields: list[T.Field] = []
            for f in t.fields:
                if f.name == "" and isinstance(f.type, T.StructType):
                    fields.extend(
                        T.Field(g.name, g.type, None if f.offset is None or g.offset is None else f.offset + g.offset)
                        for g in f.type.fields
                    )
                else:
                    fields.append(f)
            t = T.StructType(t.name, tuple(fields), t.size, t.align, t.is_union, t.is_vector, t.explicit_align)
        if sd.name:
            self.types[sd.name] = t
            self.struct_defs[sd.name] = sd
        return t

    def define_enum(self, ed: A.EnumDef) -> None:
        if ed.enumerators is None:
            return
        if ed.name:
            self.types[ed.name] = T.INT  # C++ names an enum without `enum`: `Color c;`
        value = 0
        for e in ed.enumerators:
            if e.value is not None:
                value = self.const_int(e.value) or 0
            self.globals.names[e.name] = N.Const(value, T.INT, e.span)
            value += 1

    def instantiate_struct(self, name: str, args: tuple[A.Node, ...]) -> T.CType:
        values = tuple(self.template_arg_value(a) for a in args)
        special = f"{name}<{', '.join(str(v) for v in values)}>"
        if special in self.templates.structs and _has_subscript_operator(self.templates.structs[special]):
            # `SharedMemory<float>` whose `operator[]` is the specialization's: named so, so that
            # indexing it finds that operator (`ExpressionLowering.subscript_operator`)
            sd = self.templates.structs[special]
            t = self.define_struct(A.StructDef(sd.kind, None, sd.members, sd.span, sd.alignments))
            return T.StructType(special, t.fields, t.size, t.align, t.is_union) if isinstance(t, T.StructType) else t
        sd = self.templates.structs[name]
        params = self.templates.struct_params.get(name, ())
        self.type_bindings.append(self.bind_template(params, args))
        try:
            t = self.define_struct(A.StructDef(sd.kind, None, sd.members, sd.span, sd.alignments))
        finally:
            self.type_bindings.pop()
        return T.StructType(f"{name}<...>", t.fields, t.size, t.align, t.is_union) if isinstance(t, T.StructType) else t

    def member_type(self, name: str, args: tuple[A.Node, ...], member: str) -> T.CType | None:
        """A member type of a class template's instantiation, `typename vec4<T>::Type` (cuda-samples
        nbody): the typedef in the explicit specialization for those arguments (`template <> struct
        vec4<float> { typedef float4 Type; }`), else in the primary template with its parameters
        bound; None when neither declares it."""
        sd, bindings = self.specialized(name, tuple(self.template_arg_value(a) for a in args))
        if sd is None or sd.members is None:
            return None
        for m in sd.members:
            if not isinstance(m, A.Declaration) or "typedef" not in m.specs.storage:
                continue
            for d in m.declarators:
                if d.declarator.name == member:
                    self.type_bindings.append(bindings)
                    try:
                        return self.declared_type(m.specs, d.declarator)
                    finally:
                        self.type_bindings.pop()
        return None

    def static_member(self, name: str, args: tuple[A.Node, ...], member: str) -> int | None:
        """The value of a static constant member of a class template's instance,
        `TYPE_IS<Real, double>::test` (`static const bool test = true;` in the specialization
        the instance uses), or None."""
        sd, bindings = self.specialized(name, tuple(self.template_arg_value(a) for a in args))
        for m in sd.members or () if sd is not None else ():
            if not isinstance(m, A.Declaration) or "static" not in m.specs.storage:
                continue
            for d in m.declarators:
                if d.declarator.name == member and d.init is not None:
                    self.type_bindings.append(bindings)
                    try:
                        return self.const_int(d.init)
                    finally:
                        self.type_bindings.pop()
        return None

    def specialized(self, name: str, values: tuple[Any, ...]) -> tuple[A.StructDef | None, dict[str, Any]]:
        """The definition an instance of the class template `name` with template arguments
        `values` uses, and its parameters' binding: the explicit specialization for those
        arguments (`template <> struct vec4<float>`), else a partial one whose pattern they match
        (`template <class L, class R> struct IF<true, L, R>`, `analyzer.ir.specializations`),
        else the primary template."""
        explicit = self.templates.structs.get(f"{name}<{', '.join(str(v) for v in values)}>")
        if explicit is not None:
            return explicit, {}
        patterns = {
            key: tuple(p.name for p in self.templates.struct_params.get(key, ()) if p.name)
            for key in self.templates.structs
            if key.startswith(name + "<")
        }
        found = specialization_for(name, values, patterns)
        if found is not None:
            return self.templates.structs[found[0]], found[1]
        return self.templates.structs.get(name), self.bind_template(self.templates.struct_params.get(name, ()), values)

    def fragment(self, args: tuple[A.Node, ...]) -> T.CType:
        """`wmma::fragment<use, m, n, k, T, layout>`: registers (see `analyzer.ir.wmma`)."""
        use = self.source(args[0].span) if args else "accumulator"
        m, n, k = (
            self.const_int(args[i]) if i < len(args) and isinstance(args[i], A.Expr) else None for i in (1, 2, 3)
        )
        element = self.template_arg_value(args[4]) if len(args) > 4 else T.FLOAT
        return wmma.fragment_type(use, m, n, k, element if isinstance(element, T.CType) else T.FLOAT)

    def bind_template(self, params: tuple[A.TemplateParam, ...], args: Iterable[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, a in zip(params, args):
            if p.name is None:
                continue
            if isinstance(a, (T.CType, int)):
                out[p.name] = a
            elif p.kind == "type":
                if isinstance(a, A.TypeName):
                    out[p.name] = self.type_of_typename(a)
                elif isinstance(a, A.Identifier):
                    out[p.name] = self.resolve_typespec(A.TypeSpec((a.name,), a.span))
            else:
                v = self.const_int(a) if isinstance(a, A.Expr) else None
                if isinstance(a, A.TypeName) and a.specs.type.names and not a.derivations:
                    v = self.const_int(A.Identifier(a.specs.type.names[0], a.span))
                if v is not None:
                    out[p.name] = v
        return out

    def template_arg_value(self, a: A.Node) -> Any:
        if isinstance(a, A.TypeName):
            names = a.specs.type.names
            if len(names) == 2 and names[1].startswith("::") and a.specs.type.template_args:
                # `TYPE_IS<Real, double>::test`: a static constant of the instance, when it has one
                v = self.static_member(names[0], a.specs.type.template_args, names[1][2:])
                if v is not None:
                    return v
            if not a.derivations and len(a.specs.type.names) == 1:
                v = self.const_int(A.Identifier(a.specs.type.names[0], a.span))
                if v is not None:
                    return v
            return self.type_of_typename(a)
        v = self.const_int(a)
        if v is not None:
            return v
        if isinstance(a, A.Identifier):
            return self.resolve_typespec(A.TypeSpec((a.name,), a.span))
        return T.UnknownType(self.source(a.span))

    # ------------------------------------------------------------------ constant evaluation
    def alignment(self, al: A.Alignment) -> int | None:
        """The value of `__align__(n)` / `alignas(n)`, or None when it is not known (a template
        parameter) or CUDA refuses it (WL907 at the attribute; the alignment is ignored)."""
        n = self.const_int(al.value)
        if n is None:
            return None
        problem = alignment_problem(n)
        if problem is not None:
            self.warn(f"{problem}; the alignment is ignored", al.span, "WL907", Severity.ERROR)
            return None
        return n

    def const_int(self, e: A.Node | None) -> int | None:
        """The integer value of a constant expression (macros are already expanded), or None."""
        try:
            v = self._const(e)
        except (ZeroDivisionError, TypeError, ValueError, OverflowError, RecursionError):
            return None
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float):
            return int(v) if v.is_integer() else None
        return v

    def _const(self, e: Any) -> Any:
        if e is None:
            return None
        if isinstance(e, A.Constant):
            return e.value if e.kind in ("int", "char", "bool", "float") else None
        if isinstance(e, A.Identifier):
            bound = self.binding(e.name)
            if isinstance(bound, int):
                return bound
            v = self.lookup(e.name)
            if isinstance(v, N.Const):
                return v.value
            if isinstance(v, N.Variable) and v.const_value is not None:
                return v.const_value
            return None
        if isinstance(e, A.BinaryOp):
            a, b = self._const(e.left), self._const(e.right)
            if a is None or b is None:
                return None
            return fold_binary(e.op, a, b)
        if isinstance(e, A.UnaryOp):
            a = self._const(e.operand)
            if a is None:
                return None
            return {"-": lambda x: -x, "+": lambda x: x, "!": lambda x: int(not x), "~": lambda x: ~int(x)}.get(
                e.op, lambda x: None
            )(a)
        if isinstance(e, A.Ternary):
            c = self._const(e.cond)
            if c is None:
                return None
            return self._const(e.then if c else e.otherwise)
        if isinstance(e, A.Cast):
            v = self._const(e.expr)
            t: T.CType | None = self.type_of_typename(e.to)
            if v is not None and isinstance(t, T.ScalarType) and not t.is_float:
                return int(v)
            return v
        if isinstance(e, A.SizeOf):
            t = self.type_of_typename(e.operand) if isinstance(e.operand, A.TypeName) else None
            if t is None:  # `sizeof expr`: not folded here
                return None
            return t.size if e.op == "sizeof" else t.align
        return None


#: `fold_binary`'s operators other than `/` and `%`, as functions of the two constants: made
#: once, not a table of closures at each call (threadFenceReduction.cu, 8,545 calls from the
#: host interpreter's loop tests: fold_binary 7% of the file under py-spy, 2026-11-28).
_FOLDED: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<<": lambda a, b: int(a) << int(b),
    ">>": lambda a, b: int(a) >> int(b),
    "&": lambda a, b: int(a) & int(b),
    "|": lambda a, b: int(a) | int(b),
    "^": lambda a, b: int(a) ^ int(b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&&": lambda a, b: int(bool(a) and bool(b)),
    "||": lambda a, b: int(bool(a) or bool(b)),
}


def fold_binary(op: str, a: Any, b: Any) -> Any:
    """`a op b` for two constants with C's semantics: integer division truncates toward
    zero and `%` takes the dividend's sign; comparisons and logical operators give 0 or 1.
    Raises ValueError or OverflowError where C is undefined or 64 bits overflow (a shift by a
    negative count or by 64 or more, `1 << 62 << 4`): the callers take the value as unknown.
    Used by lowering (constant folding) and by the host-code interpreter (launch sizes)."""
    if op == "/":
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if op == "%":
        a, b = int(a), int(b)
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    if op in ("<<", ">>") and not 0 <= int(b) < 64:
        raise ValueError("shift count out of range")  # undefined in C; a huge one would fill memory
    result = _FOLDED[op](a, b)
    if isinstance(result, int) and not -(2**63) <= result < 2**64:
        raise OverflowError("outside 64 bits")  # (so that constants stay small whatever the source says)
    return result


def subscript_operator(sd: A.StructDef) -> A.FunctionDef | None:
    """The `operator[]` a struct defines (with a body), or None."""
    for m in sd.members or ():
        if isinstance(m, A.FunctionDef) and m.name.replace(" ", "") == "operator[]" and m.body is not None:
            return m
    return None


def _has_subscript_operator(sd: A.StructDef) -> bool:
    return subscript_operator(sd) is not None
