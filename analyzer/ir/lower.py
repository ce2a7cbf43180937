"""Lower the AST to IR: resolve names and types, make addresses explicit, mark every access.

`lower(unit, text, path)` returns a `Module`. Kernels are the `__global__` functions;
template kernels are lowered once for each instantiation that the file launches. Calls to
`__device__` functions stay `Call` nodes, inlined by the analyses at each call site; the call
graph (networkx) finds recursion, which is reported.
"""

from __future__ import annotations

from typing import Any, Iterable

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.gc_pause import gc_paused
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.records import field, record
from analyzer.syntax import ast as A

BUILTIN_VECTORS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
SYNC_CALLS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "sync", "cg::sync", "grid.sync"}
ATOMICS = {
    "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc", "atomicDec",
    "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "atomicAdd_block", "atomicAdd_system",
}
LOAD_INTRINSICS = {"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"}
MINMAX = {"min": "min", "max": "max", "umin": "min", "umax": "max", "llmin": "min", "llmax": "max",
          "::min": "min", "::max": "max", "std::min": "min", "std::max": "max"}
MULS = {"__mul24", "__umul24", "IMUL"}
MAKE_VECTOR_PREFIX = "make_"
MAX_INSTANTIATION_DEPTH = 64  # nested device-function instantiations lowered at once


class LoweringError(Exception):
    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.span = span


@record(frozen=False, slots=False)
class Scope:
    names: dict[str, Any] = field(default_factory=dict)  # Variable | N.Const (enumerators) | CType (typedef)


@record(frozen=False, slots=False)
class Templates:
    functions: dict[str, A.FunctionDef] = field(default_factory=dict)
    structs: dict[str, A.StructDef] = field(default_factory=dict)
    struct_params: dict[str, tuple[A.TemplateParam, ...]] = field(default_factory=dict)


class Lowerer:
    def __init__(self, text: str, path: str, padding: dict[str, int] | None = None) -> None:
        self.text = text
        self.path = path
        self.declaring_volatile = False  # the declaration being lowered says `volatile`
        # explicit instantiations of function templates: name -> template argument values
        self.explicit: dict[str, list[tuple[Any, ...]]] = {}
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

    # ------------------------------------------------------------------ helpers
    def new_uid(self) -> int:
        self.uid += 1
        return self.uid

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

    # ------------------------------------------------------------------ types
    def resolve_typespec(self, spec: A.TypeSpec) -> T.CType:
        if spec.struct is not None:
            return self.define_struct(spec.struct)
        if spec.enum is not None:
            self.define_enum(spec.enum)
            return T.INT
        text = spec.text
        if len(spec.names) == 1:
            name = spec.names[0]
            bound = self.binding(name)
            if isinstance(bound, T.CType):
                return bound
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
            if name == "auto":
                return T.UnknownType("auto")
            return T.UnknownType(name)
        words = [w for w in spec.names]
        found = T.builtin_type(text)
        if found is not None:
            return found
        # `unsigned` + typedef etc.: fall back to the last word
        return T.builtin_type(words[-1]) or T.UnknownType(text)

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
            n = self.const_int(al.value)
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
        for al in sd.alignments:
            if isinstance(al.value, A.Identifier) and al.value.name == "__align":
                pass
        members: list[tuple[str, T.CType]] = []
        for m in sd.members:
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
            explicit = self.const_int(al.value) or explicit
        name = sd.name or f"<anonymous {sd.kind}>"
        t = T.layout_struct(name, members, is_union=sd.kind == "union", explicit_align=explicit)
        if isinstance(t, T.StructType) and any(f.name == "" and isinstance(f.type, T.StructType) for f in t.fields):
            fields: list[T.Field] = []
            for f in t.fields:
                if f.name == "" and isinstance(f.type, T.StructType):
                    fields.extend(T.Field(g.name, g.type, None if f.offset is None or g.offset is None else f.offset + g.offset)
                                  for g in f.type.fields)
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
        sd = self.templates.structs[name]
        params = self.templates.struct_params.get(name, ())
        self.type_bindings.append(self.bind_template(params, args))
        try:
            t = self.define_struct(A.StructDef(sd.kind, None, sd.members, sd.span, sd.alignments))
        finally:
            self.type_bindings.pop()
        return T.StructType(f"{name}<...>", t.fields, t.size, t.align, t.is_union) if isinstance(t, T.StructType) else t

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

    # ------------------------------------------------------------------ constant evaluation
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
            return {"-": lambda x: -x, "+": lambda x: x, "!": lambda x: int(not x), "~": lambda x: ~int(x)}.get(e.op, lambda x: None)(a)
        if isinstance(e, A.Ternary):
            c = self._const(e.cond)
            if c is None:
                return None
            return self._const(e.then if c else e.otherwise)
        if isinstance(e, A.Cast):
            v = self._const(e.expr)
            t = self.type_of_typename(e.to)
            if v is not None and isinstance(t, T.ScalarType) and not t.is_float:
                return int(v)
            return v
        if isinstance(e, A.SizeOf):
            t = self.type_of_typename(e.operand) if isinstance(e.operand, A.TypeName) else None
            if t is None and isinstance(e.operand, A.Expr):
                return None
            return t.size if e.op == "sizeof" else t.align
        return None

    # ------------------------------------------------------------------ top level
    def lower_unit(self, unit: A.TranslationUnit) -> N.Module:
        host_functions: list[A.FunctionDef] = []
        kernel_defs: list[A.FunctionDef] = []
        for decl in unit.decls:
            try:
                self.lower_top(decl, host_functions, kernel_defs)
            except (LoweringError, RecursionError) as err:
                span = getattr(err, "span", decl.span)
                self.warn(f"cannot lower this declaration: {err}", span, "WL903")
        launches: list[N.Function] = []
        for fd in host_functions:
            # a host function template explicitly instantiated (`template void reduce<int>(...);`)
            # is lowered once per instantiation, so the kernels it launches get real types
            for targs in self.explicit.get(fd.name, [()]) if fd.template_params else [()]:
                fn = self.lower_function(fd, "host", targs)
                if fn is not None:
                    launches.append(fn)
        instantiations = self.collect_instantiations(launches)
        for fd in kernel_defs:
            if fd.template_params:
                wanted = instantiations.get(fd.name, [])
                if not wanted:
                    self.warn(f"template kernel '{fd.name}' is never launched in this file, so it is not analysed; "
                              "launch it or analyse the PTX of an instantiation", fd.declarator.span, "WL904", Severity.NOTE)
                for targs in wanted:
                    fn = self.lower_function(fd, "global", targs)
                    if fn is not None:
                        self.kernels.append(fn)
            else:
                fn = self.lower_function(fd, "global")
                if fn is not None:
                    self.kernels.append(fn)
        globals_ = [v for v in self.globals.names.values() if isinstance(v, N.Variable)]
        return N.Module(self.path, self.functions, self.kernels, [], globals_, self.diagnostics, launches)

    def lower_top(self, decl: A.Node, hosts: list[A.FunctionDef], kernels: list[A.FunctionDef]) -> None:
        if isinstance(decl, A.FunctionDef):
            self.function_defs[decl.name] = decl
            storage = decl.specs.storage
            if "__global__" in storage:
                kernels.append(decl)
            elif "__device__" in storage and "__host__" not in storage:
                if decl.template_params:
                    self.templates.functions[decl.name] = decl
            else:
                if decl.template_params:
                    self.templates.functions[decl.name] = decl
                if "__device__" not in storage:
                    hosts.append(decl)
            return
        if isinstance(decl, A.ExplicitInstantiation):
            targs = tuple(self.template_arg_value(a) for a in decl.template_args)
            wanted = self.explicit.setdefault(decl.name, [])
            if targs not in wanted:
                wanted.append(targs)
            return
        if isinstance(decl, A.TemplateDecl):
            inner = decl.decl
            if isinstance(inner, A.Declaration) and inner.specs.type.struct is not None and inner.specs.type.struct.members is not None:
                sd = inner.specs.type.struct
                if sd.name:
                    self.templates.structs[sd.name] = sd
                    self.templates.struct_params[sd.name] = decl.params
                    self.struct_defs[sd.name] = sd
            return
        if isinstance(decl, A.Declaration):
            self.lower_global_declaration(decl)

    def lower_global_declaration(self, decl: A.Declaration) -> None:
        specs = decl.specs
        base = self.declared_type(specs, None)
        if "typedef" in specs.storage:
            for d in decl.declarators:
                if d.declarator.name:
                    t = self.apply_derivations(base, d.declarator.derivations)
                    for al in d.declarator.alignments:
                        n = self.const_int(al.value)
                        if n:
                            t = T.with_alignment(t, n)
                    self.types[d.declarator.name] = t
            return
        for d in decl.declarators:
            if not d.declarator.name or d.declarator.params is not None:
                continue
            t = self.apply_derivations(base, d.declarator.derivations)
            if isinstance(t, T.ScalarType) and ("const" in specs.qualifiers or "constexpr" in specs.storage) and d.init is not None:
                value = self.const_int(d.init)
                if value is not None and "__device__" not in specs.storage and "__constant__" not in specs.storage:
                    self.globals.names[d.declarator.name] = N.Const(value, t, d.declarator.span)
                    continue
            space = "shared" if "__shared__" in specs.storage else "constant" if "__constant__" in specs.storage else "global" if ("__device__" in specs.storage or "__managed__" in specs.storage) else "host"
            if space == "shared":
                t = self.padded(d.declarator.name, t)
            var = N.Variable(d.declarator.name, t, space if space != "host" else "global", d.declarator.span, space=space, uid=self.new_uid(), extern="extern" in specs.storage)
            var.volatile = "volatile" in specs.qualifiers
            if isinstance(t, T.ScalarType) and ("const" in specs.qualifiers or "constexpr" in specs.storage) and d.init is not None:
                var.const_value = self.const_int(d.init)
            self.globals.names[var.name] = var

    def collect_instantiations(self, hosts: list[N.Function]) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for fn in hosts:
            for st in N.walk_statements(fn.body):
                if isinstance(st, N.LaunchStmt) and st.template_args:
                    lst = out.setdefault(st.kernel, [])
                    if st.template_args not in lst:
                        lst.append(st.template_args)
        return out

    # ------------------------------------------------------------------ functions
    def lower_function(self, fd: A.FunctionDef, kind: str, template_args: tuple[Any, ...] = (), name: str | None = None) -> N.Function | None:
        bindings = self.bind_template(fd.template_params, template_args) if fd.template_params else {}
        self.type_bindings.append(bindings)
        saved = (self.current, self.host, self.scopes)
        self.scopes = [self.globals, Scope()]
        self.host = kind == "host"
        try:
            ret = self.declared_type(fd.specs, None)
            params: list[N.Variable] = []
            for p in fd.params:
                if p.declarator is None or not p.declarator.name:
                    if p.specs.type.names == ("void",):
                        continue
                    name_ = f"<unnamed{len(params)}>"
                    pt = self.declared_type(p.specs, p.declarator)
                else:
                    name_ = p.declarator.name
                    pt = self.declared_type(p.specs, p.declarator)
                if isinstance(pt, T.ArrayType):
                    pt = T.PointerType(pt.element)
                mutable_reference = _is_mutable_reference(p, pt)
                if mutable_reference:
                    pt = T.PointerType(pt.pointee)  # type: ignore[attr-defined]
                var = N.Variable(name_, pt, "param", p.span, uid=self.new_uid(),
                                 volatile="volatile" in p.specs.qualifiers)
                # `T &x`: the caller passes the address of its lvalue (`put(s[2 * tid], v)`),
                # so reads and writes of `x` are accesses to the caller's memory
                var.is_reference = mutable_reference
                if kind == "global" and isinstance(pt, T.PointerType):
                    var.points_to = "global"
                params.append(var)
                self.declare(var, name_)
            bounds = tuple(b for b in (self.const_int(x) for x in fd.specs.launch_bounds) if b is not None)
            fname = name or (fd.name if not template_args else f"{fd.name}<{', '.join(_targ_text(a) for a in template_args)}>")
            fn = N.Function(fname, kind, params, [], ret, fd.span, fd.declarator.span, bounds,
                            tuple(p.name or "" for p in fd.template_params), tuple(template_args))
            self.current = fn
            fn.body = self.lower_block(fd.body.items)
            if kind != "host":
                self.functions[fname] = fn
            return fn
        except LoweringError as err:
            self.warn(f"cannot lower function '{fd.name}': {err}", err.span)
            return None
        except RecursionError:
            self.warn(f"cannot lower function '{fd.name}': statements or expressions nested too deeply",
                      fd.declarator.span)
            return None
        finally:
            self.current, self.host, self.scopes = saved
            self.type_bindings.pop()

    def device_function(self, name: str, targs: tuple[Any, ...], args: list[N.Expr], span: Span) -> str | None:
        """The IR name of a device function called as `name<targs>(args)`, lowering it on first use."""
        short = name.rsplit("::", 1)[-1]
        fd = self.function_defs.get(name) or self.function_defs.get(short)
        if fd is None or ("__device__" not in fd.specs.storage and "__global__" not in fd.specs.storage):
            return None
        if fd.template_params and not targs:
            targs = self.deduce(fd, args)
        key = fd.name if not fd.template_params else f"{fd.name}<{', '.join(_targ_text(a) for a in targs)}>"
        if key in self.functions or key in self.instantiating:
            return key
        # an explicit specialization (`template <> float conv<-1>(...)`, named so by the parser)
        # ends a compile-time recursion such as conv<i> -> conv<i - 1>; without one, stop
        # instantiating after MAX_INSTANTIATION_DEPTH nested levels (the call stays opaque)
        if fd.template_params and key in self.function_defs:
            fd, targs = self.function_defs[key], ()
        if len(self.instantiating) >= MAX_INSTANTIATION_DEPTH:
            return None
        self.instantiating.add(key)
        try:
            self.lower_function(fd, "device", targs, key)
        finally:
            self.instantiating.discard(key)
        return key

    def deduce(self, fd: A.FunctionDef, args: list[N.Expr]) -> tuple[Any, ...]:
        found: dict[str, Any] = {}
        for p, a in zip(fd.params, args):
            names = p.specs.type.names
            if len(names) == 1 and any(tp.name == names[0] for tp in fd.template_params):
                t = a.type
                depth = sum(1 for k, _ in (p.declarator.derivations if p.declarator else ()) if k == "pointer")
                for _ in range(depth):
                    t = T.element_type(t) or T.UnknownType("?")
                found[names[0]] = t
        return tuple(found.get(tp.name or "", T.UnknownType(tp.name or "?")) for tp in fd.template_params)

    # ------------------------------------------------------------------ statements
    def lower_block(self, items: Iterable[A.Node]) -> list[N.Stmt]:
        self.scopes.append(Scope())
        out: list[N.Stmt] = []
        try:
            for item in items:
                try:
                    out.extend(self.lower_stmt(item))
                except LoweringError as err:
                    self.warn(f"{err}; statement skipped", err.span)
                    out.append(N.Skipped(str(err), self.written_vars(item), item.span))
        finally:
            self.scopes.pop()
        return out

    def written_vars(self, node: A.Node) -> tuple[N.Variable, ...]:
        out = []
        for n in node.walk():
            if isinstance(n, A.Assign) and isinstance(n.target, A.Identifier):
                v = self.lookup(n.target.name)
                if isinstance(v, N.Variable):
                    out.append(v)
        return tuple(out)

    def lower_stmt(self, s: A.Node) -> list[N.Stmt]:
        self.statement += 1
        if isinstance(s, A.Compound):
            return self.lower_block(s.items)
        if isinstance(s, A.DeclStmt):
            return self.lower_local_declaration(s.decl)
        if isinstance(s, A.Declaration):
            return self.lower_local_declaration(s)
        if isinstance(s, A.ExprStmt):
            if s.expr is None:
                return []
            return self.lower_expr_stmt(s.expr)
        if isinstance(s, A.If):
            cond = self.rvalue(s.cond)
            then = self.lower_block([s.then])
            other = self.lower_block([s.otherwise]) if s.otherwise is not None else []
            return [N.If(cond, then, other, s.span)]
        if isinstance(s, A.For):
            self.scopes.append(Scope())
            try:
                init = self.lower_stmt(s.init) if s.init is not None else []
                cond = self.rvalue(s.cond) if s.cond is not None else None
                step = self.lower_expr_stmt(s.step) if s.step is not None else []
                body = self.lower_block([s.body])
                var = next((st.var for st in init if isinstance(st, N.Assign)), None)
                if var is None and step and isinstance(step[-1], N.Assign):
                    var = step[-1].var
            finally:
                self.scopes.pop()
            return [N.Loop(init, cond, step, body, s.span, True, var)]
        if isinstance(s, A.While):
            return [N.Loop([], self.rvalue(s.cond), [], self.lower_block([s.body]), s.span, True)]
        if isinstance(s, A.DoWhile):
            body = self.lower_block([s.body])
            return [N.Loop([], self.rvalue(s.cond), [], body, s.span, False)]
        if isinstance(s, A.Switch):
            return self.lower_switch(s)
        if isinstance(s, A.Return):
            return [N.Return(self.rvalue(s.value) if s.value is not None else None, s.span)]
        if isinstance(s, A.Break):
            return [N.Break(s.span)]
        if isinstance(s, A.Continue):
            return [N.Continue(s.span)]
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
                var = N.Variable(dec.name, t, "shared", dec.span, space="shared", uid=self.new_uid(), extern="extern" in specs.storage)
                self.declare(var, dec.name)
                continue
            if isinstance(t, T.PointerType) and t.name == "&" and d.init is not None:
                # a reference is an alias: bind the name to the referenced lvalue's address
                target = self.address_of(d.init)
                var = N.Variable(dec.name, T.PointerType(t.pointee), "local", dec.span, uid=self.new_uid())
                var.points_to = self.static_space(target)
                var.is_reference = True
                self.declare(var, dec.name)
                out.append(N.Assign(var, target, dec.span))
                continue
            init_expr: N.Expr | None = None
            if d.init is not None:
                init_expr = self.rvalue(d.init, expected=t)
                if isinstance(t, T.UnknownType) and t.name == "auto":
                    t = init_expr.type
            elif dec.constructor_args:
                args = [self.rvalue(a) for a in dec.constructor_args]
                init_expr = self.construct(t, args, dec.span)
            var = N.Variable(dec.name, t, "local", dec.span, space="local", uid=self.new_uid())
            if isinstance(t, T.PointerType) and init_expr is not None:
                var.points_to = self.static_space(init_expr)
            if isinstance(t, T.ScalarType) and ("const" in specs.qualifiers or "constexpr" in specs.storage) and d.init is not None:
                var.const_value = self.const_int(d.init)
            self.declare(var, dec.name)
            if init_expr is not None:
                out.append(N.Assign(var, init_expr, d.span))
        return out

    def construct(self, t: T.CType, args: list[N.Expr], span: Span) -> N.Expr:
        if isinstance(t, T.StructType) and t.is_vector:
            fields = {}
            for i, f in enumerate(t.fields):
                fields[f.name] = args[i] if i < len(args) else N.Const(1 if t.name == "dim3" else 0, f.type, span)
            return N.StructValue(fields, t, span)
        if len(args) == 1:
            return N.Cast(args[0], t, span)
        return N.Opaque(f"constructor of {t}", t, span, tuple(args))

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
            name = _callee_name(e.func)
            if name is not None and (name in SYNC_CALLS or name.endswith(".sync") or name.endswith("::sync")):
                return [N.Sync(e.span)]
        if isinstance(e, A.Launch):
            return [self.lower_launch(e)]
        return [N.Eval(self.rvalue(e), e.span)]

    def lower_launch(self, e: A.Launch) -> N.LaunchStmt:
        name = _callee_name(e.func) or "?"
        targs = tuple(self.template_arg_value(a) for a in e.template_args)
        config = tuple(self.rvalue(c) for c in e.config)
        args = tuple(self.rvalue(a) for a in e.args)
        return N.LaunchStmt(name, targs, config, args, e.span, tuple(self.source(c.span) for c in e.config))

    def template_arg_value(self, a: A.Node) -> Any:
        if isinstance(a, A.TypeName):
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
                    var.points_to = space if var.points_to in ("unknown", space) else "unknown"
                return [N.Assign(var, value, e.span)]
        if isinstance(target, A.Member) and not target.arrow:
            path = _field_path(target)
            if path is not None:
                var = self.lookup(path[0])
                if isinstance(var, N.Variable) and var.kind in ("local", "param") and isinstance(var.type, T.StructType):
                    value = self.rvalue(e.value)
                    if e.op != "=":
                        value = self.arith(e.op[:-1], self.rvalue(target), value, e.span)
                    return [N.Assign(var, value, e.span, tuple(path[1:]))]
        # a store to memory
        addr, elem, array = self.address(target)
        value = self.rvalue(e.value)
        out: list[N.Stmt] = []
        if e.op != "=":
            load = self.make_access("load", addr, elem, target.span, array)
            value = self.arith(e.op[:-1], N.Load(load, elem, target.span), value, e.span)
        store = self.make_access("store", addr, elem, target.span, array)
        out.append(N.Store(store, value, e.span))
        return out

    # ------------------------------------------------------------------ memory
    def make_access(self, op: str, addr: N.Expr, elem: T.CType, span: Span, array: str) -> N.Access:
        acc = N.Access(self.new_uid(), self.static_space(addr), op, elem, addr, span, self.source(span), array, statement=self.statement)
        acc.volatile = _through_volatile(addr)
        if self.current is not None and not self.host:
            self.current.accesses.append(acc)
        return acc

    def static_space(self, e: N.Expr) -> str:
        """The memory space a pointer-valued IR expression points into, when lowering can tell."""
        while True:
            if isinstance(e, (N.PtrAdd,)):
                e = e.base
            elif isinstance(e, N.Cast):
                e = e.operand
            elif isinstance(e, N.Select):
                a, b = self.static_space(e.then), self.static_space(e.otherwise)
                return a if a == b else "unknown"
            else:
                break
        if isinstance(e, N.VarRef):
            v = e.var
            if isinstance(v.type, T.ArrayType):
                return v.space
            if v.kind in ("shared", "global", "constant") and isinstance(e.type, T.PointerType) and e.type.pointee == v.type:
                return v.space  # the address of a scalar `__shared__`/`__device__` variable itself
            return v.points_to
        if isinstance(e, N.FieldRef):
            root = e.base
            while isinstance(root, N.FieldRef):
                root = root.base
            if isinstance(root, N.VarRef) and root.var.kind == "param" and self.current is not None and self.current.kind == "global":
                return "global"
            return "unknown"
        if isinstance(e, N.Call) and e.name.startswith("__cvta"):
            return "unknown"
        return "unknown"

    def address(self, e: A.Expr) -> tuple[N.Expr, T.CType, str]:
        """The address of an lvalue in memory, its element type, and the array it derives from."""
        if isinstance(e, A.Index):
            base_t = self.type_of(e.base)
            elem = T.element_type(base_t)
            if elem is None:
                if isinstance(base_t, T.StructType) or isinstance(base_t, T.UnknownType):
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
            return N.PtrAdd(ptr, N.Const(f.offset, T.LONG, e.span), T.PointerType(f.type), e.span), f.type, self.array_name(e.base)
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
            addr, elem, _ = self.address(e)
            return N.Cast(addr, T.PointerType(t.element), e.span)
        return self.rvalue(e)

    def address_of(self, e: A.Expr) -> N.Expr:
        addr, elem, _ = self.address(e)
        return addr

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
            bt = self.type_of(e.base)
            if e.arrow:
                bt = T.element_type(bt) or T.UnknownType("?")
            if isinstance(bt, T.StructType):
                f = bt.field(e.name)
                if f is not None:
                    return f.type
            if isinstance(e.base, A.Identifier) and e.base.name in BUILTIN_VECTORS:
                return T.UINT
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

    # ------------------------------------------------------------------ rvalues
    def arith(self, op: str, a: N.Expr, b: N.Expr, span: Span) -> N.Expr:
        if isinstance(a.type, T.PointerType) and op in ("+", "-") and not isinstance(b.type, T.PointerType):
            size = (a.type.pointee.size or 1)
            off = N.Binary("*", b, N.Const(size, T.LONG, span), T.LONG, span)
            if op == "-":
                off = N.Unary("-", off, T.LONG, span)
            return N.PtrAdd(a, off, a.type, span)
        if isinstance(b.type, T.PointerType) and op == "+":
            return self.arith("+", b, a, span)
        t = _arith_type(a.type, b.type, op)
        return N.Binary(op, a, b, t, span)

    def rvalue(self, e: A.Expr, expected: T.CType | None = None) -> N.Expr:
        if isinstance(e, A.Constant):
            if e.kind == "float":
                return N.Const(e.value, T.FLOAT if e.text[-1:] in "fF" else T.DOUBLE, e.span)
            if e.kind == "string":
                return N.Opaque("string literal", T.PointerType(T.CHAR), e.span)
            return N.Const(int(e.value), T.INT if e.kind != "bool" else T.BOOL, e.span)
        if isinstance(e, A.Identifier):
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
            if e.name == "warpSize":
                return N.Const(32, T.INT, e.span)
            if e.name in ("true", "false"):
                return N.Const(int(e.name == "true"), T.BOOL, e.span)
            if e.name in ("NULL", "nullptr"):
                return N.Const(0, T.PointerType(T.VOID), e.span)
            return N.Opaque(f"unknown name '{e.name}'", T.UnknownType(e.name), e.span)
        if isinstance(e, A.Member):
            if isinstance(e.base, A.Identifier) and e.base.name in BUILTIN_VECTORS and e.name in ("x", "y", "z"):
                return N.Builtin(f"{e.base.name}.{e.name}", T.UINT, e.span)
            # a field of a struct held in registers, or of one in memory
            if not e.arrow:
                base_t = self.type_of(e.base)
                if self.in_registers(e.base):
                    base = self.rvalue(e.base)
                    ft = base_t.field(e.name).type if isinstance(base_t, T.StructType) and base_t.field(e.name) else T.UnknownType(e.name)
                    if isinstance(base, N.StructValue) and e.name in base.fields:
                        return base.fields[e.name]
                    return N.FieldRef(base, e.name, ft, e.span)
            return self.load(e)
        if isinstance(e, A.Index):
            t = self.type_of(e)
            if isinstance(t, T.ArrayType):
                return self.pointer_value(e)
            if self.host:
                return N.Opaque("host memory", t, e.span)
            return self.load(e)
        if isinstance(e, A.UnaryOp):
            if e.op == "*":
                return self.load(e)
            if e.op == "&":
                if isinstance(e.operand, A.Identifier):
                    var = self.lookup(e.operand.name)
                    if isinstance(var, N.Variable) and var.kind in ("local", "param") and not var.is_reference:
                        return N.Opaque(f"address of local '{var.name}'", T.PointerType(var.type), e.span)
                try:
                    return self.address_of(e.operand)
                except LoweringError:
                    return N.Opaque("address", T.PointerType(T.UnknownType("?")), e.span)
            if e.op in ("++", "--", "p++", "p--"):
                raise LoweringError("increment inside an expression is not modelled", e.span)
            a = self.rvalue(e.operand)
            if e.op == "+":
                return a
            t = T.BOOL if e.op == "!" else a.type
            return N.Unary(e.op, a, t, e.span)
        if isinstance(e, A.BinaryOp):
            a = self.rvalue(e.left)
            b = self.rvalue(e.right)
            if e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return N.Binary(e.op, a, b, T.BOOL, e.span)
            if e.op == "-" and isinstance(a.type, T.PointerType) and isinstance(b.type, T.PointerType):
                return N.Opaque("pointer difference", T.LONG, e.span)
            return self.arith(e.op, a, b, e.span)
        if isinstance(e, A.Ternary):
            c = self.rvalue(e.cond)
            a = self.rvalue(e.then)
            b = self.rvalue(e.otherwise)
            return N.Select(c, a, b, a.type, e.span)
        if isinstance(e, A.Cast):
            t = self.type_of_typename(e.to)
            inner = self.rvalue(e.expr)
            if isinstance(t, T.StructType) and t.is_vector and e.kind == "functional":
                return self.construct(t, [inner], e.span)
            return N.Cast(inner, t, e.span)
        if isinstance(e, A.SizeOf):
            if isinstance(e.operand, A.TypeName):
                t = self.type_of_typename(e.operand)
            else:
                t = self.type_of(e.operand)
            v = t.size if e.op == "sizeof" else t.align
            if v is None:
                return N.Opaque(f"{e.op} of {t}", T.ULONG, e.span)
            return N.Const(v, T.ULONG, e.span)
        if isinstance(e, A.Call):
            return self.lower_call(e)
        if isinstance(e, A.Assign):
            raise LoweringError("assignment inside an expression is not modelled", e.span)
        if isinstance(e, A.Comma):
            return self.rvalue(e.exprs[-1])
        if isinstance(e, A.InitList):
            if isinstance(expected, T.StructType):
                vals = [self.rvalue(x) for x in e.items]
                return N.StructValue({f.name: vals[i] for i, f in enumerate(expected.fields) if i < len(vals)}, expected, e.span)
            return N.Opaque("initializer list", expected or T.UnknownType("{}"), e.span)
        if isinstance(e, A.Launch):
            raise LoweringError("kernel launch inside an expression", e.span)
        if isinstance(e, A.TemplateId):
            return N.Opaque(f"template {e.name}", T.UnknownType(e.name), e.span)
        raise LoweringError(f"unsupported expression {type(e).__name__}", e.span)

    def in_registers(self, e: A.Expr) -> bool:
        """True when `e` names a struct value held in registers (a by-value param or a local)."""
        while isinstance(e, A.Member) and not e.arrow:
            e = e.base
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            return isinstance(var, N.Variable) and var.kind in ("local", "param") and not var.is_reference
        if isinstance(e, A.Call):
            return True
        return False

    def load(self, e: A.Expr) -> N.Expr:
        addr, elem, array = self.address(e)
        if self.host:
            return N.Opaque("host memory", elem, e.span)
        acc = self.make_access("load", addr, elem, e.span, array)
        return N.Load(acc, elem, e.span)

    def is_thread_block(self, e: A.Expr) -> bool:
        """`cta` declared `cg::thread_block cta = ...`, or `cg::this_thread_block()` itself."""
        if isinstance(e, A.Call):
            callee = _callee_name(e.func)
            return callee is not None and callee.rsplit("::", 1)[-1] == "this_thread_block"
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            t = getattr(var, "type", None)
            return str(getattr(t, "name", "") or t or "").rsplit("::", 1)[-1] == "thread_block"
        return False

    def reference_params(self, name: str) -> set[int]:
        """The positions of the mutable reference parameters (`T &x`) of a device function."""
        fd = self.function_defs.get(name)
        if fd is None:
            return set()
        return {i for i, p in enumerate(getattr(fd, "params", ()))
                if p.declarator is not None and _is_mutable_reference(p, None)}

    def argument(self, a: A.Expr, by_reference: bool) -> N.Expr:
        """An argument's value, or for a `T &` parameter the address of the caller's lvalue."""
        if by_reference:
            try:
                return self.address_of(a)
            except LoweringError:
                pass  # not an lvalue warplint follows: passed as a value
        return self.rvalue(a)

    def lower_call(self, e: A.Call) -> N.Expr:
        name = _callee_name(e.func)
        if name is None:
            # a method call on an object: cta.sync(), tile.thread_rank(), ...
            if isinstance(e.func, A.Member):
                if e.func.name in _BLOCK_METHODS and not e.args and self.is_thread_block(e.func.base):
                    return _block_method(e.func.name, e.span)
                return N.Opaque(f"method call .{e.func.name}()", T.UnknownType("?"), e.span)
            return N.Opaque("indirect call", T.UnknownType("?"), e.span)
        short = name.rsplit("::", 1)[-1]
        if short in ATOMICS and e.args:
            addr, elem, array = self.address_target(e.args[0])
            acc = self.make_access("atomic", addr, elem, e.span, array)
            args = tuple(self.rvalue(a) for a in e.args[1:])
            return N.Call(short, args, elem, e.span, acc)
        if short in LOAD_INTRINSICS and e.args:
            addr, elem, array = self.address_target(e.args[0])
            acc = self.make_access("load", addr, elem, e.span, array)
            return N.Load(acc, elem, e.span)
        by_reference = self.reference_params(name)
        args = [self.argument(a, i in by_reference) for i, a in enumerate(e.args)]
        if name in MINMAX or short in ("min", "max"):
            op = MINMAX.get(name, short)
            if len(args) == 2:
                return N.Call(op, tuple(args), args[0].type, e.span)
        if short in MULS and len(args) == 2:
            return N.Binary("*", args[0], args[1], T.INT, e.span)
        if short.startswith(MAKE_VECTOR_PREFIX):
            vt = T.builtin_type(short[len(MAKE_VECTOR_PREFIX):])
            if isinstance(vt, T.StructType):
                return self.construct(vt, args, e.span)
        vt = T.builtin_type(name)  # `dim3(4, 4)`, `float2(a, b)`: a vector built from its fields
        if isinstance(vt, T.StructType) and vt.is_vector and name not in self.types:
            return self.construct(vt, args, e.span)
        if short in SYNC_CALLS:
            return N.Opaque("barrier", T.INT, e.span)
        # a struct constructor / conversion (SharedMemory<T>())
        struct_name = name if name in self.struct_defs else short if short in self.struct_defs else None
        if struct_name is not None:
            converted = self.conversion_operator(struct_name, e)
            if converted is not None:
                return converted
        targs = tuple(self.template_arg_value(a) for a in e.template_args)
        callee = self.device_function(name, targs, args, e.span)
        if callee is not None:
            if self.current is not None and callee not in self.current.calls:
                self.current.calls.append(callee)
            fn = self.functions.get(callee)
            rt = fn.returns if fn is not None else T.UnknownType("?")
            return N.Call(callee, tuple(args), rt, e.span)
        if name in self.function_defs and self.host:
            return N.Opaque(f"call to {name}", T.UnknownType("?"), e.span, tuple(args))
        return N.Opaque(f"call to {name}", _known_return(short), e.span, tuple(args))

    def address_target(self, arg: A.Expr) -> tuple[N.Expr, T.CType, str]:
        if isinstance(arg, A.UnaryOp) and arg.op == "&":
            return self.address(arg.operand)
        ptr = self.pointer_value(arg)
        elem = T.element_type(ptr.type) or T.UnknownType("?")
        return ptr, elem, self.array_name(arg)

    def conversion_operator(self, struct_name: str, call: A.Call) -> N.Expr | None:
        """`SharedMemory<T>()` used as a pointer: inline the struct's `operator T*()` body."""
        sd = self.struct_defs[struct_name]
        for m in sd.members or ():
            if isinstance(m, A.FunctionDef) and m.name.startswith("operator") and "*" in m.name:
                returns = [s for s in m.body.walk() if isinstance(s, A.Return) and s.value is not None]
                if not returns:
                    continue
                params = self.templates.struct_params.get(struct_name, ())
                args = tuple(self.template_arg_value(a) for a in call.template_args)
                self.type_bindings.append(self.bind_template(params, args))
                self.scopes.append(Scope())
                try:
                    for item in m.body.items:
                        if isinstance(item, A.DeclStmt) and "__shared__" in item.decl.specs.storage:
                            self.lower_local_declaration(item.decl)
                    value = self.rvalue(returns[0].value)  # type: ignore[arg-type]
                finally:
                    self.scopes.pop()
                    self.type_bindings.pop()
                return value
        return None


# ----------------------------------------------------------------------------- helpers


def fold_binary(op: str, a: Any, b: Any) -> Any:
    """`a op b` for two constants with C's semantics: integer division truncates toward
    zero and `%` takes the dividend's sign; comparisons and logical operators give 0 or 1.
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
    return {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<<": lambda: int(a) << int(b),
        ">>": lambda: int(a) >> int(b), "&": lambda: int(a) & int(b), "|": lambda: int(a) | int(b),
        "^": lambda: int(a) ^ int(b), "<": lambda: int(a < b), "<=": lambda: int(a <= b),
        ">": lambda: int(a > b), ">=": lambda: int(a >= b), "==": lambda: int(a == b),
        "!=": lambda: int(a != b), "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b)),
    }[op]()


def _arith_type(a: T.CType, b: T.CType, op: str) -> T.CType:
    if op in ("<<", ">>"):
        return a if isinstance(a, T.ScalarType) else T.INT
    for t in (a, b):
        if isinstance(t, T.ScalarType) and t.is_float:
            return T.DOUBLE if (t.size == 8 or (isinstance(b, T.ScalarType) and b.is_float and b.size == 8)) else T.FLOAT
    sizes = [t.size for t in (a, b) if isinstance(t, T.ScalarType)]
    if sizes and max(sizes) == 8:
        return T.LONG
    unsigned = any(isinstance(t, T.ScalarType) and not t.is_signed and t.size == 4 for t in (a, b))
    return T.UINT if unsigned else T.INT


def _callee_name(f: A.Expr) -> str | None:
    if isinstance(f, A.Identifier):
        return f.name
    if isinstance(f, A.TemplateId):
        return f.name
    if isinstance(f, A.Member) and isinstance(f.base, A.Identifier):
        return f"{f.base.name}.{f.name}" if f.name == "sync" else None
    return None


def _field_path(e: A.Expr) -> list[str] | None:
    path: list[str] = []
    while isinstance(e, A.Member) and not e.arrow:
        path.append(e.name)
        e = e.base
    if isinstance(e, A.Identifier):
        return [e.name] + list(reversed(path))
    return None


_FLOAT_FUNCS = {"sqrtf", "sqrt", "expf", "exp", "logf", "log", "sinf", "cosf", "powf", "pow", "fabsf",
                "fabs", "rsqrtf", "__expf", "__logf", "__sinf", "__cosf", "__fdividef", "fmaf", "fminf",
                "fmaxf", "floorf", "ceilf", "ceil", "floor", "tanhf", "erff"}


def _known_return(name: str) -> T.CType:
    if name in _FLOAT_FUNCS:
        return T.FLOAT
    return T.UnknownType(f"{name}()")


def _targ_text(a: Any) -> str:
    return str(a)


walk_statements = N.walk_statements  # re-exported: callers import it from here


def build_call_graph(module: N.Module) -> Any:
    """The call graph of device code (networkx DiGraph); recursion becomes a diagnostic."""
    import networkx as nx

    graph = nx.DiGraph()
    for name, fn in module.functions.items():
        graph.add_node(name)
        for callee in fn.calls:
            graph.add_edge(name, callee)
    for cycle in nx.simple_cycles(graph):
        fn = module.functions.get(cycle[0])
        span = fn.name_span if fn else Span(0, 0)
        module.diagnostics.append(Diagnostic(
            Severity.WARNING, f"recursion through {' -> '.join(cycle + [cycle[0]])}: calls on the cycle are not inlined",
            "WL905", span))
    return graph


_BLOCK_METHODS = frozenset({"thread_rank", "size", "num_threads"})


def _block_method(name: str, span: Span) -> N.Expr:
    """A cooperative-groups `thread_block`'s rank of the thread (its linear index in the
    block, x fastest) or its size, in terms of threadIdx and blockDim."""
    def b(n: str) -> N.Expr:
        return N.Builtin(n, T.UINT, span)

    def mul(x: N.Expr, y: N.Expr) -> N.Expr:
        return N.Binary("*", x, y, T.UINT, span)

    def add(x: N.Expr, y: N.Expr) -> N.Expr:
        return N.Binary("+", x, y, T.UINT, span)

    if name == "thread_rank":
        return add(b("threadIdx.x"), mul(b("blockDim.x"), add(b("threadIdx.y"), mul(b("blockDim.y"), b("threadIdx.z")))))
    return mul(b("blockDim.x"), mul(b("blockDim.y"), b("blockDim.z")))


def _through_volatile(addr: N.Expr) -> bool:
    """Whether an address is formed from a `volatile` variable (`volatile float *v = s;`)."""
    stack: list[N.Expr] = [addr]
    while stack:
        e = stack.pop()
        if isinstance(e, N.VarRef) and e.var.volatile:
            return True
        stack.extend(N.sub_expressions(e))
    return False


def _is_mutable_reference(param: Any, lowered: T.CType | None) -> bool:
    """`T &x` and not `const T &x` (a const reference is read like a value)."""
    if lowered is not None and not (isinstance(lowered, T.PointerType) and lowered.name == "&"):
        return False
    derivations = tuple(getattr(param.declarator, "derivations", ()) or ())
    if not derivations or derivations[-1][0] != "reference":
        return False
    return "const" not in param.specs.qualifiers


def _may_recurse(module: N.Module) -> bool:
    """Whether the call graph can hold a cycle: only if a function that is called also calls.
    Kernels calling leaf device functions, the common case, need no graph (and so spare the
    import of networkx, a third of warplint's start-up)."""
    called = {callee for fn in module.functions.values() for callee in fn.calls}
    return any(fn.calls and name in called for name, fn in module.functions.items())


@gc_paused
def lower(unit: A.TranslationUnit, text: str, path: str, padding: dict[str, int] | None = None) -> N.Module:
    """The IR of a translation unit. `padding` widens the last dimension of the named
    `__shared__` arrays (array name -> extra elements), to check a padding fix: lowering
    again is how every index computed from the array's type gets the new row length."""
    lowerer = Lowerer(text, path, padding)
    module = lowerer.lower_unit(unit)
    if _may_recurse(module):
        module.call_graph = build_call_graph(module)
    return module
