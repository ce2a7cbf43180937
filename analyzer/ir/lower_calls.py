"""Lowering, part 3: calls: builtins, intrinsics, device functions, constructors.

`CallLowering.lower_call` decides what a call is: a barrier, an atomic (an access of its
first argument), a load intrinsic (`__ldg`), `min`/`max`, `__mul24`, a vector built by
`make_float4` or `dim3(...)`, a struct's conversion operator inlined (`SharedMemory<T>()`),
a cooperative-groups `thread_block` method, or a call of a `__device__` function, lowered
on first use and kept as a `Call` for the analyses to inline. A mutable reference
parameter (`T &x`) gets the address of the caller's lvalue.

A layer of `analyzer.ir.lower.Lowerer` over `ExpressionLowering` (see `lower_scopes` for why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.diagnostics import Severity, Span
from analyzer.ir import builtins, wmma
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind, MemoryEffect
from analyzer.ir.lower_expressions import ExpressionLowering
from analyzer.ir.lower_scopes import LoweringError, Scope
from analyzer.ir.nodes import OpaqueKind
from analyzer.syntax import ast as A

MAKE_VECTOR_PREFIX = "make_"


class CallLowering(ExpressionLowering):
    """Calls to IR: builtins and intrinsics by name, device functions as `Call` nodes."""

    if TYPE_CHECKING:  # from the layers above

        def lower_local_declaration(self, decl: A.Declaration) -> list[N.Stmt]: ...

        def device_function(self, name: str, targs: tuple[Any, ...], args: list[N.Expr], span: Span) -> str | None: ...
        def deduce(self, fd: A.FunctionDef, args: list[N.Expr]) -> tuple[Any, ...]: ...

    def lower_call(self, e: A.Call) -> N.Expr:
        name = callee_name(e.func)
        if name is None:
            # a method call on an object: cta.sync(), tile.thread_rank(), ...
            if isinstance(e.func, A.Member):
                if e.func.name in _BLOCK_METHODS and not e.args and self.is_thread_block(e.func.base):
                    return _block_method(e.func.name, e.span)
                return N.Opaque(OpaqueKind.METHOD_CALL, f"method call .{e.func.name}()", T.UnknownType("?"), e.span)
            return N.Opaque(OpaqueKind.INDIRECT_CALL, "indirect call", T.UnknownType("?"), e.span)
        short = name.rsplit("::", 1)[-1]
        if short in wmma.MEMORY_CALLS | wmma.REGISTER_CALLS and wmma.is_warp_matrix_name(name, short):
            return self.warp_matrix_call(short, e)
        spec = builtins.lookup(name)
        if spec is not None and spec.memory in _ACCESS_OF and e.args:
            return self.builtin_access(spec, e)
        by_reference = self.reference_params(name)
        args = [self.argument(a, i in by_reference) for i, a in enumerate(e.args)]
        kind = spec.kind if spec is not None else None
        if kind is BuiltinKind.MIN_MAX and len(args) == 2:
            return N.Call(spec.operation, tuple(args), args[0].type, e.span)  # type: ignore[union-attr]
        if kind is BuiltinKind.MUL24 and len(args) == 2:
            return N.Binary("*", args[0], args[1], T.INT, e.span)
        if short.startswith(MAKE_VECTOR_PREFIX):
            vt = T.builtin_type(short[len(MAKE_VECTOR_PREFIX) :])
            if isinstance(vt, T.StructType):
                return self.construct(vt, args, e.span)
        vt = T.builtin_type(name)  # `dim3(4, 4)`, `float2(a, b)`: a vector built from its fields
        if isinstance(vt, T.StructType) and vt.is_vector and name not in self.types:
            return self.construct(vt, args, e.span)
        if kind is BuiltinKind.BARRIER:
            return N.Opaque(OpaqueKind.BARRIER, "barrier", T.INT, e.span)
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
        returns = T.UnknownType("?") if name in self.function_defs and self.host else _known_return(spec, short)
        return N.Opaque(
            OpaqueKind.CALL, f"call to {name}", returns, e.span, tuple(args), callee=self.host_callee(name, targs, args)
        )

    def warp_matrix_call(self, short: str, e: A.Call) -> N.Expr:
        """`wmma::load_matrix_sync(frag, p, ld)`, `store_matrix_sync(p, frag, ld, layout)`,
        `mma_sync`, `fill_fragment`: the fragments are registers and are not lowered; the pointer,
        the leading dimension and a fill value are (their loads are costed), and a load or store
        gets a note (WL908) saying why it is not costed (see `analyzer.ir.wmma`)."""
        positions = {"load_matrix_sync": (1, 2), "store_matrix_sync": (0, 2), "fill_fragment": (1,)}.get(short, ())
        args = tuple(self.rvalue(e.args[i]) for i in positions if i < len(e.args))
        if short in wmma.MEMORY_CALLS and len(e.args) > positions[0]:
            pointer = self.source(e.args[positions[0]].span)
            self.warn(wmma.not_costed_message(short, pointer), e.span, "WL908", Severity.NOTE)
        return N.Opaque(OpaqueKind.CALL, f"warp-matrix {short}", T.VOID, e.span, args, callee=short)

    def builtin_access(self, spec: builtins.BuiltinSpec, e: A.Call) -> N.Expr:
        """An atomic (`atomicAdd(&a[i], v)`: a `Call` with the access it makes) or a load
        intrinsic (`__ldg(&a[i])`: a `Load`) of what the first argument points to."""
        addr, elem, array = self.address_target(e.args[0])
        acc = self.make_access(_ACCESS_OF[spec.memory], addr, elem, e.span, array)
        if spec.memory is MemoryEffect.UPDATES:
            args = tuple(self.rvalue(a) for a in e.args[1:])
            return N.Call(spec.name, args, elem, e.span, acc)
        return N.Load(acc, elem, e.span)

    def argument(self, a: A.Expr, by_reference: bool) -> N.Expr:
        """An argument's value, or for a `T &` parameter the address of the caller's lvalue."""
        if by_reference:
            try:
                return self.address_of(a)
            except LoweringError:
                pass  # not an lvalue warplint follows: passed as a value
        return self.rvalue(a)

    def host_callee(self, name: str, targs: tuple[Any, ...], args: list[N.Expr]) -> str:
        """The name a call in host code is made to: for a host function template, its
        instantiation (`runTest<float>`, the template arguments written or deduced from the
        arguments), which `lower_functions` lowers once for each such name it finds."""
        fd = self.function_defs.get(name)
        if not self.host or fd is None or not fd.template_params or "__global__" in fd.specs.storage:
            return name
        if not targs:
            targs = self.deduce(fd, args)
        if len(targs) != len(fd.template_params) or any(isinstance(t, T.UnknownType) for t in targs):
            return name
        callee = f"{name}<{', '.join(str(a) for a in targs)}>"
        self.host_instances.setdefault(callee, (name, tuple(targs)))
        return callee

    def reference_params(self, name: str) -> set[int]:
        """The positions of the mutable reference parameters (`T &x`) of a device function."""
        fd = self.function_defs.get(name)
        if fd is None:
            return set()
        return {
            i
            for i, p in enumerate(getattr(fd, "params", ()))
            if p.declarator is not None and is_mutable_reference(p, None)
        }

    def is_thread_block(self, e: A.Expr) -> bool:
        """`cta` declared `cg::thread_block cta = ...`, or `cg::this_thread_block()` itself."""
        if isinstance(e, A.Call):
            callee = callee_name(e.func)
            return callee is not None and callee.rsplit("::", 1)[-1] == "this_thread_block"
        if isinstance(e, A.Identifier):
            var = self.lookup(e.name)
            t = getattr(var, "type", None)
            return str(getattr(t, "name", "") or t or "").rsplit("::", 1)[-1] == "thread_block"
        return False

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
                returns = self.returns_in(m.body)
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


def callee_name(f: A.Expr) -> str | None:
    """The name a call or launch calls (`f`, `f<T>`, `grid.sync`), or None for a method call."""
    if isinstance(f, A.Identifier):
        return f.name
    if isinstance(f, A.TemplateId):
        return f.name
    if isinstance(f, A.Member) and isinstance(f.base, A.Identifier):
        return f"{f.base.name}.{f.name}" if f.name == "sync" else None
    return None


def is_mutable_reference(param: Any, lowered: T.CType | None) -> bool:
    """`T &x` and not `const T &x` (a const reference is read like a value)."""
    if lowered is not None and not (isinstance(lowered, T.PointerType) and lowered.name == "&"):
        return False
    derivations = tuple(getattr(param.declarator, "derivations", ()) or ())
    if not derivations or derivations[-1][0] != "reference":
        return False
    return "const" not in param.specs.qualifiers


def _known_return(spec: builtins.BuiltinSpec | None, name: str) -> T.CType:
    """The type of what a call warplint does not follow returns: a math function's fixed type
    (`float` for `sqrtf`), else the unknown type `name()`."""
    fixed = builtins.fixed_type(spec) if spec is not None and spec.kind is BuiltinKind.MATH else None
    return fixed if fixed is not None else T.UnknownType(f"{name}()")


#: What access lowering makes of a builtin that reads or updates memory.
_ACCESS_OF = {MemoryEffect.READS: "load", MemoryEffect.UPDATES: "atomic"}


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
        return add(
            b("threadIdx.x"), mul(b("blockDim.x"), add(b("threadIdx.y"), mul(b("blockDim.y"), b("threadIdx.z"))))
        )
    return mul(b("blockDim.x"), mul(b("blockDim.y"), b("blockDim.z")))
