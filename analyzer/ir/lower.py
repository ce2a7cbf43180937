"""Lower the AST to IR: resolve names and types, make addresses explicit, mark every access.

`lower(unit, text, path)` returns a `Module`. Kernels are the `__global__` functions;
template kernels are lowered once for each instantiation that the file launches. Calls to
`__device__` functions stay `Call` nodes, inlined by the analyses at each call site; the call
graph (networkx) finds recursion, which is reported.

This module is the top level: `lower`, and `Lowerer`'s last layer (the translation unit,
global declarations, functions and template instantiation). The layers below it, each in
its module: `lower_statements`, `lower_calls`, `lower_expressions`, `lower_scopes` (see
there for why one class is split so); the call graph is in `call_graph`.
"""

from __future__ import annotations

import re
from typing import Any

from analyzer import budget, records
from analyzer.diagnostics import Severity, Span
from analyzer.gc_pause import gc_paused
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.call_graph import build_call_graph, may_recurse
from analyzer.ir.lower_calls import is_mutable_reference
from analyzer.ir.lower_scopes import LoweringError, Scope
from analyzer.ir.lower_statements import StatementLowering
from analyzer.ir.nodes import Space
from analyzer.syntax import ast as A

MAX_INSTANTIATION_DEPTH = 64  # nested device-function instantiations lowered at once
MAX_HOST_INSTANCES = 64  # implicit instantiations of host function templates lowered in one file


class Lowerer(StatementLowering):
    """One translation unit lowered: the top layer (see `lower_scopes` for the layers)."""

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
        try:
            self.lower_functions(host_functions, kernel_defs, launches)
        except budget.BudgetExceeded as err:  # what was lowered before is kept
            what = "lowering stopped at this function; it and the functions after it are not analysed"
            self.diagnostics.append(budget.exceeded(err, what, err.span))
        globals_ = [v for v in self.globals.names.values() if isinstance(v, N.Variable)]
        module = N.Module(self.path, self.functions, self.kernels, [], globals_, self.diagnostics, launches)
        module.templates = [fd.name for fd in kernel_defs if fd.template_params]
        return module

    def lower_functions(
        self, host_functions: list[A.FunctionDef], kernel_defs: list[A.FunctionDef], launches: list[N.Function]
    ) -> None:
        """The host functions (into `launches`), then the kernels, each template kernel once per
        instantiation the host code launches or the file instantiates explicitly."""
        self.lower_host_functions(host_functions, launches)
        instantiations = self.collect_instantiations(launches)
        for fd in kernel_defs:
            # an explicit instantiation (`template __global__ void reduce0<int>(int *, ...);`)
            # makes the kernel as real as a launch does: it is compiled for those arguments
            for targs in self.explicit.get(fd.name, []) if fd.template_params else []:
                if targs not in instantiations.setdefault(fd.name, []):
                    instantiations[fd.name].append(targs)
            # a launch in another file of the program (`k<float><<<...>>>` in b.cu) too
            for targs in self.launched_elsewhere(fd) if fd.template_params else []:
                if targs not in instantiations.setdefault(fd.name, []):
                    instantiations[fd.name].append(targs)
            if fd.template_params:
                wanted = list(instantiations.get(fd.name, []))
                wanted += [t for t in self.explicit.get(fd.name, []) if t not in wanted]
                if not wanted:
                    self.warn(
                        f"template kernel '{fd.name}' is never launched in this file, so it is not analysed; "
                        "launch it or analyse the PTX of an instantiation",
                        fd.declarator.span,
                        "WL904",
                        Severity.NOTE,
                    )
                for targs in wanted:
                    fn = self.lower_function(fd, "global", targs)
                    if fn is not None:
                        self.kernels.append(fn)
            else:
                fn = self.lower_function(fd, "global")
                if fn is not None:
                    self.kernels.append(fn)

    def launched_elsewhere(self, fd: A.FunctionDef) -> list[tuple[Any, ...]]:
        """The template arguments other files of the program launch the template kernel `fd`
        with (`self.elsewhere`, as spelled there: "float", "16", "RGBA8"), each that names
        values and types this file knows."""
        out = []
        for spelled in self.elsewhere.get(fd.name, ()):
            targs = tuple(self.spelled_argument(a) for a in spelled)
            if len(targs) == len(fd.template_params) and not any(a is None for a in targs):
                out.append(targs)
        return out

    def spelled_argument(self, text: str) -> Any:
        """A template argument spelled as in an instance's name: an integer, a type name."""
        if re.fullmatch(r"-?\d+", text.strip()):
            return int(text)
        found = self.types.get(text.strip()) or T.builtin_type(text.strip())
        return found

    def lower_host_functions(self, host_functions: list[A.FunctionDef], launches: list[N.Function]) -> None:
        """The host functions into `launches`: a function template once per explicit
        instantiation (`template void reduce<int>(...);`) or, without one, once per
        instantiation that host code calls (`runTest<float>(...)`, also one called from another
        instantiation), so the kernels it launches get real types; a template nothing
        instantiates is lowered once with its parameters unknown, as before."""
        instances: list[tuple[A.FunctionDef, tuple[Any, ...]]] = []
        for fd in host_functions:
            if not fd.template_params:
                instances.append((fd, ()))
            elif fd.name in self.explicit:
                instances.extend((fd, targs) for targs in self.explicit[fd.name])
            elif (cls := _member_of(fd)) is not None and cls in self.explicit:
                # `template <typename Real> void Engine<Real>::run(...)` and `template class Engine<float>;`
                instances.extend((fd, targs) for targs in self.explicit[cls])
        implicit = {
            fd.name
            for fd in host_functions
            if fd.template_params and fd.name not in self.explicit and _member_of(fd) not in self.explicit
        }
        done: set[str] = set()
        while instances:
            fd, targs = instances.pop(0)
            fn = self.lower_function(fd, "host", targs)
            if fn is not None:
                launches.append(fn)
            for callee, (name, called_targs) in list(self.host_instances.items()):
                if name in implicit and callee not in done and len(done) < MAX_HOST_INSTANCES:
                    done.add(callee)
                    instances.append((self.function_defs[name], called_targs))
        for fd in host_functions:
            if fd.name in implicit and not any(name == fd.name for name, _ in self.host_instances.values()):
                fn = self.lower_function(fd, "host")
                if fn is not None:
                    launches.append(fn)

    def lower_top(self, decl: A.Node, hosts: list[A.FunctionDef], kernels: list[A.FunctionDef]) -> None:
        if isinstance(decl, A.FunctionDef):
            self.function_defs[decl.name] = decl
            storage = decl.specs.storage
            if "__global__" in storage:
                kernels.append(decl)
            elif "__device__" not in storage:
                hosts.append(decl)  # device functions are lowered when called (`device_function`)
            return
        if isinstance(decl, A.ExplicitInstantiation):
            targs = tuple(self.template_arg_value(a) for a in decl.template_args)
            wanted = self.explicit.setdefault(decl.name, [])
            if targs not in wanted:
                wanted.append(targs)
            return
        if isinstance(decl, A.TemplateDecl):
            inner = decl.decl
            if (
                isinstance(inner, A.Declaration)
                and inner.specs.type.struct is not None
                and inner.specs.type.struct.members is not None
            ):
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
            base = _named_by_typedef(base, decl)
            for d in decl.declarators:
                if d.declarator.name:
                    t = self.apply_derivations(base, d.declarator.derivations)
                    for al in d.declarator.alignments:
                        n = self.alignment(al)
                        if n:
                            t = T.with_alignment(t, n)
                    self.types[d.declarator.name] = t
            return
        for d in decl.declarators:
            if not d.declarator.name or d.declarator.params is not None:
                continue
            t = self.apply_derivations(base, d.declarator.derivations)
            if (
                isinstance(t, T.ScalarType)
                and ("const" in specs.qualifiers or "constexpr" in specs.storage)
                and d.init is not None
            ):
                value = self.const_int(d.init)
                if value is not None and "__device__" not in specs.storage and "__constant__" not in specs.storage:
                    self.globals.names[d.declarator.name] = N.Const(value, t, d.declarator.span)
                    continue
            where = (
                "shared"
                if "__shared__" in specs.storage
                else "constant"
                if "__constant__" in specs.storage
                else "global"
                if ("__device__" in specs.storage or "__managed__" in specs.storage)
                else "host"
            )
            # a host variable named in device code is no device memory: not costed, as a local
            space = Space.LOCAL if where == "host" else Space(where)
            if space == Space.SHARED:
                t = self.padded(d.declarator.name, t)
            var = N.Variable(
                d.declarator.name,
                t,
                "global" if where == "host" else where,
                d.declarator.span,
                space=space,
                uid=self.new_uid(),
                extern="extern" in specs.storage,
            )
            var.volatile = "volatile" in specs.qualifiers
            if (
                isinstance(t, T.ScalarType)
                and ("const" in specs.qualifiers or "constexpr" in specs.storage)
                and d.init is not None
            ):
                var.const_value = self.const_int(d.init)
            self.globals.names[var.name] = var

    def collect_instantiations(self, hosts: list[N.Function]) -> dict[str, list[tuple[Any, ...]]]:
        """The template arguments of each kernel's launches: as written (`k<float><<<...>>>`) or
        deduced from the arguments' types (`k<<<g, b>>>(d)` with `d` a `float *`), the first ones
        written and the rest deduced (`k<float><<<g, b>>>(d, states)`); the launch statement is
        given the arguments, so it matches the instantiation."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        for fn in hosts:
            for st in N.walk_statements(fn.body):
                if isinstance(st, N.LaunchStmt):
                    st.template_args = self.deduced_launch(st) or st.template_args
                if isinstance(st, N.LaunchStmt) and st.template_args:
                    lst = out.setdefault(st.kernel, [])
                    if st.template_args not in lst:
                        lst.append(st.template_args)
        return out

    def deduced_launch(self, st: N.LaunchStmt) -> tuple[Any, ...]:
        """The template arguments of a launch of a template kernel that writes fewer of them
        than it has (none, or the first ones), the rest deduced from the launch's arguments;
        () when it is no template, writes them all, or they cannot all be deduced."""
        fd = self.function_defs.get(st.kernel) or self.function_defs.get(st.kernel.rsplit("::", 1)[-1])
        if fd is None or not fd.template_params or "__global__" not in fd.specs.storage:
            return ()
        if len(st.template_args) >= len(fd.template_params):
            return ()
        targs = self.deduce(fd, list(st.args), st.template_args)
        return () if any(isinstance(t, T.UnknownType) for t in targs) else targs

    # ------------------------------------------------------------------ functions
    def lower_function(
        self, fd: A.FunctionDef, kind: str, template_args: tuple[Any, ...] = (), name: str | None = None
    ) -> N.Function | None:
        try:
            budget.spend(budget.steps_of(fd.span.end - fd.span.start))
        except budget.BudgetExceeded as err:
            err.span = fd.declarator.span
            raise
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
                mutable_reference = is_mutable_reference(p, pt)
                if mutable_reference:
                    pt = T.PointerType(pt.pointee)  # type: ignore[attr-defined]
                var = N.Variable(
                    name_, pt, "param", p.span, uid=self.new_uid(), volatile="volatile" in p.specs.qualifiers
                )
                # `T &x`: the caller passes the address of its lvalue (`put(s[2 * tid], v)`),
                # so reads and writes of `x` are accesses to the caller's memory
                var.is_reference = mutable_reference
                if kind == "global" and isinstance(pt, T.PointerType):
                    var.points_to = Space.GLOBAL
                params.append(var)
                self.declare(var, name_)
            bounds = tuple(b for b in (self.const_int(x) for x in fd.specs.launch_bounds) if b is not None)
            fname = name or (fd.name if not template_args else f"{fd.name}<{_arguments_text(template_args)}>")
            fn = N.Function(
                fname,
                kind,
                params,
                [],
                ret,
                fd.span,
                fd.declarator.span,
                bounds,
                tuple(p.name or "" for p in fd.template_params),
                tuple(template_args),
            )
            self.current = fn
            fn.body = self.lower_block(fd.body.items)
            if kind != "host":
                self.functions[fname] = fn
            return fn
        except LoweringError as err:
            self.warn(f"cannot lower function '{fd.name}': {err}", err.span)
            return None
        except RecursionError:
            self.warn(
                f"cannot lower function '{fd.name}': statements or expressions nested too deeply", fd.declarator.span
            )
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
        if not fd.template_params and builtins.lookup(name) is not None and not _may_take(fd, args):
            # the file overloads a builtin for vectors (helper_math.h's `floorf(float3 v)`, which
            # calls `floorf(v.x)`): a call the overload cannot take is the builtin's
            return None
        if fd.template_params and not targs:
            targs = self.deduce(fd, args)
        key = fd.name if not fd.template_params else f"{fd.name}<{_arguments_text(targs)}>"
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

    def deduce(self, fd: A.FunctionDef, args: list[N.Expr], given: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        """The template arguments of a call of `fd` with `args`: the `given` ones first (written
        in the call), the others deduced from the arguments' types (an UnknownType where not)."""
        found: dict[str, Any] = {tp.name: a for tp, a in zip(fd.template_params, given) if tp.name}
        written = set(found)
        for p, a in zip(fd.params, args):
            names = p.specs.type.names
            if len(names) == 1 and names[0] not in written and any(tp.name == names[0] for tp in fd.template_params):
                t = a.type
                depth = sum(1 for k, _ in (p.declarator.derivations if p.declarator else ()) if k == "pointer")
                for _ in range(depth):
                    t = T.element_type(t) or T.UnknownType("?")
                found[names[0]] = t
        return tuple(found.get(tp.name or "", T.UnknownType(tp.name or "?")) for tp in fd.template_params)


def _may_take(fd: A.FunctionDef, args: list[N.Expr]) -> bool:
    """Whether `fd` may be the function a call with `args` calls: not when it has fewer
    parameters, or a vector parameter (by value) gets a scalar."""
    if len(args) > len(fd.params):
        return False
    for p, a in zip(fd.params, args):
        names = p.specs.type.names
        wanted = (
            T.builtin_type(names[0]) if len(names) == 1 and not (p.declarator and p.declarator.derivations) else None
        )
        if isinstance(wanted, T.StructType) and wanted.is_vector and isinstance(a.type, T.ScalarType):
            return False
    return True


def _member_of(fd: A.FunctionDef) -> str | None:
    """The class template whose member `fd` defines outside the class (`Engine<Real>::run`:
    `Engine`), or None: the parser reads `Engine<Real>` as a type and `::run` as the name."""
    ts = fd.specs.type
    if fd.name.startswith("::") and ts.template_args and ts.names:
        return ts.names[-1]
    return None


def _arguments_text(template_args: tuple[Any, ...]) -> str:
    """`float, 4`: how an instantiation's template arguments are spelled in its name."""
    return ", ".join(str(a) for a in template_args)


@gc_paused
def lower(
    unit: A.TranslationUnit,
    text: str,
    path: str,
    padding: dict[str, int] | None = None,
    elsewhere: dict[str, list[tuple[str, ...]]] | None = None,
) -> N.Module:
    """The IR of a translation unit. `padding` widens the last dimension of the named
    `__shared__` arrays (array name -> extra elements), to check a padding fix: lowering
    again is how every index computed from the array's type gets the new row length.
    `elsewhere` are the template arguments (as spelled) that other files of the program launch
    this file's template kernels with, by name: those instances are lowered too."""
    lowerer = Lowerer(text, path, padding)
    lowerer.elsewhere = elsewhere or {}
    module = lowerer.lower_unit(unit)
    if may_recurse(module):
        module.call_graph = build_call_graph(module)
    return module


def _named_by_typedef(base: T.CType, decl: A.Declaration) -> T.CType:
    """An unnamed struct that a typedef names takes that name (C++'s typedef name for linkage
    purposes): `typedef struct {...} RGBA8;` is `RGBA8`, so `testKernel<RGBA8>` and
    `testKernel<LA32>` are two instances, not one `testKernel<<anonymous struct>>`."""
    first = decl.declarators[0].declarator if decl.declarators else None
    if not isinstance(base, T.StructType) or not base.name.startswith("<anonymous") or first is None:
        return base
    if not first.name or first.derivations:
        return base
    return records.replace(base, name=first.name)
