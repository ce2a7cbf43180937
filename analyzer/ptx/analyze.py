"""PTX kernels costed by the CUDA-C path's model and rules.

    analyze_ptx(module, text, arch, ...) -> PtxAnalysis (KernelAnalysis per entry and launch)

Each memory instruction the dataflow (ptx.dataflow) reached becomes an `ir.nodes.Access`
and an `analysis.values.Occurrence`, costed by `analysis.costing.cost_occurrence` exactly as
a CUDA-C access is.
Spans are offsets into the PTX text; `PtxLineMap` resolves them to the CUDA file and line
of the instruction's `.loc` (with `-lineinfo`), or else to the PTX line.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from analyzer.analysis.results import KernelAnalysis, LaunchConfig
from analyzer.arch import Architecture
from analyzer.diagnostics import Location, Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import AccessOp, OpaqueKind
from analyzer.ptx.dataflow import ParamNaming, PtxAccess, evaluate
from analyzer.ptx.nodes import PtxFunction, PtxModule

__all__ = [
    "PtxKernel",
    "PtxLineMap",
    "analyze_entry",
    "demangle",
    "kernel_for",
    "param_naming",
    "ptx_kernel",
    "relative_to",
    "source_locations",
]


# ============================================================================ positions


class PtxLineMap:
    """Resolves spans of a PTX text: to the CUDA `(file, line, column)` of the `.loc` in
    effect at a PTX line when there is one (line > 0), else to the PTX line itself.
    Duck-types `analyzer.source.linemap.LineMap` for reporters (`resolve_span`, `resolve`)."""

    def __init__(self, text: str, path: str, locations: Mapping[int, tuple[str, int, int]]) -> None:
        self._path = path
        self._text = text
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._locations = dict(locations)

    @property
    def path(self) -> str:
        return self._path

    def __len__(self) -> int:
        return len(self._text)

    def line_span(self, line: int) -> Span:
        """The span of PTX line `line` (1-based) without its indentation."""
        start = self._starts[min(max(line, 1), len(self._starts)) - 1]
        end = self._text.find("\n", start)
        end = len(self._text) if end < 0 else end
        stripped = len(self._text[start:end]) - len(self._text[start:end].lstrip())
        return Span(start + stripped, max(end, start + stripped))

    def resolve_span(self, span: Span) -> Location:
        row = bisect_right(self._starts, max(span.start, 0))
        mapped = self._locations.get(row)
        if mapped is not None:
            path, line, column = mapped
            column = max(column, 1)
            return Location(path, line, column, line, column + 1)
        col = span.start - self._starts[row - 1] + 1
        end = max(span.end - self._starts[row - 1] + 1, col)
        return Location(self._path, row, col, row, end)

    def resolve(self, offset: int) -> tuple[str, int, int]:
        loc = self.resolve_span(Span(offset, offset + 1))
        return loc.path, loc.line, loc.column


def source_locations(module: PtxModule, rename: Callable[[str], str] = lambda p: p) -> dict[int, tuple[str, int, int]]:
    """PTX line -> CUDA (path, line, column) of every instruction with a `.loc` whose line is
    not 0 (a `.loc` at line 0 marks compiler-made code: the latest real one stays in effect),
    and each function's `.entry` line -> its first `.loc`."""
    out: dict[int, tuple[str, int, int]] = {}
    for fn in module.functions:
        last = None
        for ins in fn.instructions:
            loc = ins.loc
            if loc is not None and loc.line > 0 and loc.file in module.files:
                last = (rename(module.files[loc.file]), loc.line, loc.column)
            if last is not None:
                out[ins.line] = last
        first = next((out[i.line] for i in fn.instructions if i.line in out), None)
        if first is not None:
            out[fn.line] = first
    return out


# ============================================================================ names

_BUILTIN_CODES = {
    "v": "void",
    "b": "bool",
    "c": "char",
    "a": "signed char",
    "h": "unsigned char",
    "s": "short",
    "t": "unsigned short",
    "i": "int",
    "j": "unsigned int",
    "l": "long",
    "m": "unsigned long",
    "x": "long long",
    "y": "unsigned long long",
    "f": "float",
    "d": "double",
}


@dataclass(frozen=True)
class Demangled:
    name: str  # "transpose", "ns::kernel"
    template_args: tuple[Any, ...] = ()

    @property
    def display(self) -> str:
        if not self.template_args:
            return self.name
        return f"{self.name}<{', '.join(str(a) for a in self.template_args)}>"


def demangle(mangled: str) -> Demangled:
    """The name (and integer or builtin-type template arguments) of an Itanium-mangled
    function: `_Z12bank_stride4PKiPii` -> bank_stride4, `_Z9transposeILi32EEvPfS0_` ->
    transpose<32>. A name that is not mangled is returned as it is."""
    if not mangled.startswith("_Z"):
        return Demangled(mangled)
    s, i = mangled, 2
    parts: list[str] = []

    def source_name(i: int) -> tuple[str | None, int]:
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        if j == i:
            return None, i
        n = int(s[i:j])
        return s[j : j + n], j + n

    if s.startswith("N", i):
        i += 1
        while i < len(s) and s[i] in "KVr":
            i += 1
        while i < len(s) and s[i] != "E" and s[i] != "I":
            name, i2 = source_name(i)
            if name is None:
                break
            parts.append(name)
            i = i2
    else:
        name, i = source_name(i)
        if name is None:
            return Demangled(mangled)
        parts.append(name)
    args: list[Any] = []
    if i < len(s) and s[i] == "I":
        i += 1
        while i < len(s) and s[i] != "E":
            if s[i] == "L":
                m = re.match(r"L([a-z])(n?)(\d+)E", s[i:])
                if m is None:
                    args.append("?")
                    break
                value = int(m.group(3)) * (-1 if m.group(2) else 1)
                args.append(value != 0 if m.group(1) == "b" else value)
                i += m.end()
            elif s[i] in _BUILTIN_CODES:
                args.append(_BUILTIN_CODES[s[i]])
                i += 1
            else:
                args.append("?")
                break
    return Demangled("::".join(parts) if parts else mangled, tuple(args))


def param_naming(fn: PtxFunction, kernel: N.Function | None) -> ParamNaming:
    """Name PTX params after the CUDA kernel's parameters (by position) and the fields of a
    struct passed by value (by byte offset), when the CUDA kernel is known."""
    if kernel is None:
        return ParamNaming()
    names: dict[str, str] = {}
    fields: dict[tuple[str, int], str] = {}
    for p, var in zip(fn.params, kernel.params):
        names[p.name] = var.name
        t = var.type
        if isinstance(t, T.StructType) and not t.is_vector:
            for f in t.fields:
                if f.offset is not None and f.name:
                    fields[(p.name, f.offset)] = f"{var.name}.{f.name}"
    return ParamNaming(names, fields)


def kernel_for(fn: PtxFunction, kernels: list[N.Function]) -> N.Function | None:
    """The CUDA-C kernel an `.entry` was compiled from: same name, same template arguments."""
    d = demangle(fn.name)
    base = d.name.rsplit("::", 1)[-1]
    for k in kernels:
        if k.name.rsplit("::", 1)[-1] != base:
            continue
        if tuple(str(a) for a in k.template_args) == tuple(str(a) for a in d.template_args):
            return k
    same = [k for k in kernels if k.name.rsplit("::", 1)[-1] == base]
    return same[0] if len(same) == 1 and not d.template_args else None


# ============================================================================ kernels


@dataclass
class PtxKernel:
    """An `.entry` dressed as an IR function, so that launch.py and the rules can read it."""

    entry: PtxFunction
    function: N.Function
    naming: ParamNaming
    cuda: N.Function | None = None  # the CUDA-C kernel, with --via-ptx
    accesses: dict[int, N.Access] = field(default_factory=dict)  # by uid: PTX line * 4 + op


def _special_builtins(fn: PtxFunction) -> list[str]:
    names = {"%tid": "threadIdx", "%ntid": "blockDim", "%ctaid": "blockIdx", "%nctaid": "gridDim"}
    found: set[str] = set()
    for ins in fn.instructions:
        for op in ins.operands:
            base = getattr(op, "base", None)
            comp = getattr(op, "component", None) if hasattr(op, "component") else None
            if isinstance(base, str) and base in names and comp in ("x", "y", "z"):
                found.add(f"{names[base]}.{comp}")
    return sorted(found)


def ptx_kernel(fn: PtxFunction, linemap: PtxLineMap, cuda: N.Function | None = None) -> PtxKernel:
    span = linemap.line_span(fn.line)
    builtins = tuple(N.Builtin(b, T.UINT, span) for b in _special_builtins(fn))
    body: list[N.Stmt] = (
        [N.Eval(N.Opaque(OpaqueKind.VALUE, "special registers", T.VOID, span, builtins), span)] if builtins else []
    )
    d = demangle(fn.name)
    bounds = fn.reqntid or fn.maxntid or ()
    params = [N.Variable(p.name, T.UINT, "param", span, uid=-(i + 1)) for i, p in enumerate(fn.params)]
    function = N.Function(
        d.name,
        "global",
        cuda.params if cuda is not None else params,
        body,
        T.VOID,
        span,
        span,
        launch_bounds=tuple(int(x) for x in bounds[:1]) if bounds else (),
        template_args=d.template_args,
    )
    return PtxKernel(fn, function, param_naming(fn, cuda), cuda)


def _access(kernel: PtxKernel, acc: PtxAccess, linemap: PtxLineMap) -> N.Access:
    ins = acc.instruction
    # one instruction may make two accesses (cp.async reads global and writes shared)
    uid = ins.line * 4 + list(AccessOp).index(acc.op)
    found = kernel.accesses.get(uid)
    if found is not None:
        return found
    span = linemap.line_span(ins.line)
    size = acc.bytes or 0
    element = T.ScalarType(f"{size}-byte", size, size) if size else T.UnknownType("?")
    ptr = acc.ptr
    array = ptr.region.split(":", 1)[1] if ptr is not None else "?"
    # the address as an IR expression that names the thread indices it depends on, so the
    # rules' fix texts (which look for threadIdx.x) see them
    uses = (
        tuple(N.Builtin(n, T.UINT, span) for n in sorted(ptr.offset.free_symbols) if "Idx." in n or "Dim." in n)
        if ptr
        else ()
    )
    var = N.Variable(array, T.PointerType(element), "param", span, uid=-1000 - ins.line)
    address: N.Expr = N.PtrAdd(
        N.VarRef(var, T.PointerType(element), span),
        N.Opaque(OpaqueKind.VALUE, "ptx address", T.ULONG, span, uses),
        T.PointerType(element),
        span,
    )
    access = N.Access(
        uid,
        acc.space,
        acc.op,
        element,
        address,
        span,
        acc.text,
        array,
        statement=ins.loc.line if ins.loc is not None else ins.line,
    )
    kernel.accesses[uid] = access
    return access


def analyze_entry(
    kernel: PtxKernel,
    module: PtxModule,
    linemap: PtxLineMap,
    launch: LaunchConfig,
    arch: Architecture,
    params: Mapping[str, int] | None = None,
) -> KernelAnalysis:
    """Cost every shared and global access of one `.entry` for one launch configuration."""
    from analyzer.analysis.costing import cost_occurrence
    from analyzer.analysis.kernel import launch_values
    from analyzer.analysis.merge import merge_costs
    from analyzer.analysis.values import Occurrence

    known_params = dict(launch.params)
    known_params.update(params or {})
    flow = evaluate(kernel.entry, module, launch=launch, params=known_params, naming=kernel.naming, arch=arch)
    known = launch_values(launch, known_params)
    costs = []
    name = kernel.function.display_name
    for acc in flow.accesses:
        access = _access(kernel, acc, linemap)
        via = acc.instruction.inlined_from
        occ = Occurrence(access, acc.ptr, acc.mask, acc.loops, f"inlined from {demangle(via).display}" if via else None)
        costs.append(cost_occurrence(occ, name, launch, arch, known))
    return KernelAnalysis(kernel.function, launch, merge_costs(costs), [], flow.notes)


def relative_to(path: str, origin: str) -> str:
    """`path` as the user named `origin` when both are the same file."""
    try:
        if os.path.realpath(path) == os.path.realpath(origin):
            return origin
    except OSError:
        pass
    return path
