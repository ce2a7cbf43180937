"""What every rule is: a class with a code, a name, a message template and a `check` method.

A rule reads the `AccessCost`s of one `KernelAnalysis` and yields `Finding`s; it never
prints and never touches a reporter. Its docstring is its documentation, in ruff's
shape (see `SECTIONS`); `warplint explain WL101` prints it.

The helpers below are shared by the rules: the context lines every finding carries
(assumptions, the call it was inlined through), the struct an access reads a field of,
and a small def-use walk over the IR to see which thread index an address derives from.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import ClassVar

from analyzer.analysis.results import AccessCost, Collision, KernelAnalysis
from analyzer.arch import Architecture
from analyzer.diagnostics import Severity, Span
from analyzer.findings import Finding, Related
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.records import field, record

__all__ = [
    "SECTIONS",
    "CheckContext",
    "Reanalyze",
    "Rule",
]

#: The sections of a rule's docstring, in order (ruff's shape, house style section 6).
SECTIONS = (
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Known problems",
    "## Options",
    "## References",
)

#: Re-runs the analysis of the same kernel with `padding[array]` extra elements
#: appended to the array's last dimension; None when that is not possible.
Reanalyze = Callable[[dict[str, int]], "KernelAnalysis | None"]


@record(frozen=False, slots=False)
class CheckContext:
    """What a rule may use besides the analysis of the kernel it checks."""

    arch: Architecture
    reanalyze: Reanalyze | None = None
    _padded: dict[tuple[str, int], KernelAnalysis | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    def padded(self, array: str, padding: int) -> KernelAnalysis | None:
        """The kernel re-analysed with `padding` elements added to `array`'s last dimension.

        Memoised, so several accesses to one array share the re-analyses; None when
        there is no `reanalyze` or it cannot re-run the kernel.
        """
        key = (array, padding)
        if key not in self._padded:
            self._padded[key] = None if self.reanalyze is None else self.reanalyze({array: padding})
        return self._padded[key]


class Rule:
    """Base of every rule; see the subclasses' docstrings for the documentation shape."""

    code: ClassVar[str]  # "WL101"
    name: ClassVar[str]  # "bank-conflict" (kebab-case, names the problem)
    summary: ClassVar[str]  # one line, for `warplint rules` and SARIF shortDescription
    message: ClassVar[str]  # a str.format template over the finding's args
    severity: ClassVar[str] = Severity.WARNING.value

    def check(self, analysis: KernelAnalysis, ctx: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError

    # ------------------------------------------------------------------ documentation
    @classmethod
    def documentation(cls) -> str:
        """The docstring, dedented (what `warplint explain` prints under the header line)."""
        import inspect  # (here: `check` does without its 8 ms of imports)

        return inspect.cleandoc(cls.__doc__ or "")

    # ------------------------------------------------------------------ building findings
    def finding(
        self,
        *,
        span: Span,
        kernel: str,
        args: Mapping[str, object],
        fix: str | None = None,
        detail: Iterable[str] = (),
        related: Iterable[Related] = (),
    ) -> Finding:
        return Finding(
            code=self.code,
            rule=self.name,
            severity=self.severity,
            span=span,
            kernel=kernel,
            message=self.message.format(**args),
            fix=fix,
            args=types.MappingProxyType(dict(args)),
            detail=tuple(_unique(detail)),
            related=tuple(related),
        )


# ----------------------------------------------------------------------------- costs
def known_excess(cost: AccessCost) -> bool:
    """The access costs more than ideal, both known, it is not moved by a merged wide load and
    it makes a request of its own (a reused value makes none)."""
    return cost.merged_into is None and cost.reuses is None and cost.excess


def kernel_name(cost: AccessCost, analysis: KernelAnalysis) -> str:
    return cost.kernel or analysis.kernel.display_name


def context_lines(cost: AccessCost, analysis: KernelAnalysis) -> list[str]:
    """Detail lines shared by every rule: the inlined call, the cases, and what was assumed."""
    lines: list[str] = []
    if cost.via:
        lines.append(cost.via)
    if cost.cases:
        lines.append(cost.cases)
    if not cost.exact:
        best, worst = cost.best_per_request, cost.per_request
        if best is not None and worst is not None and best != worst:
            lines.append(
                f"worst case shown: the cost varies from {best} to {worst} {cost.unit} per request"
            )
        for a in cost.assumptions:
            lines.append(a if a.lower().startswith("assum") else f"assumed: {a}")
    launch = analysis.launch
    if launch.assumed and launch.block is not None and not any(
        launch.origin in line or "block" in line for line in lines
    ):
        lines.append(f"assumed: block {format_dim(launch.block)} ({launch.origin})")
    return lines


def format_dim(dim: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in dim) + ")"


def neighbour_stride(cost: AccessCost) -> int | None:
    """Bytes between lanes 0 and 1: `stride_bytes`, or else from the lane addresses."""
    if cost.stride_bytes is not None:
        return cost.stride_bytes
    a = cost.lane_addresses
    if len(a) >= 2 and a[0] is not None and a[1] is not None:
        return a[1] - a[0]
    return None


def first_address(cost: AccessCost) -> int | None:
    return next((a for a in cost.lane_addresses if a is not None), None)


# ----------------------------------------------------------------------------- words
def join_and(items: Iterable[object]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    parts = [str(i) for i in items]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def number_list(values: tuple[int, ...] | list[int], limit: int = 6) -> str:
    """`0, 8, 16 and 24`; long lists keep their first three and last: `0, 2, 4, …, 30`."""
    values = list(values)
    if len(values) <= limit:
        return join_and(values)
    return ", ".join(str(v) for v in values[:3]) + ", …, " + str(values[-1])


def count_word(n: int) -> str:
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    return words.get(n, str(n))


def collision_line(c: Collision) -> str:
    """`lanes 0, 8, 16 and 24 hit bank 0 at 4 different words (0, 32, 64 and 96)`."""
    if len(c.lanes) == 1:
        lanes = f"lane {c.lanes[0]}"
    else:
        lanes = f"lanes {number_list(c.lanes)}"
    if len(c.lanes) > 6:
        lanes += f" ({len(c.lanes)} lanes)"
    return (
        f"{lanes} hit bank {c.bank} at {len(c.words)} different words "
        f"({number_list(c.words)})"
    )


# ----------------------------------------------------------------------------- types
def type_name(t: T.CType) -> str:
    """`struct vec3d`, `union u`, `float3`, `float`."""
    if isinstance(t, T.StructType) and not t.is_vector:
        keyword = "union" if t.is_union else "struct"
        if not t.name:
            return f"anonymous {keyword}"
        return t.name if t.name.startswith(keyword + " ") else f"{keyword} {t.name}"
    return str(t)


def struct_of(cost: AccessCost) -> T.StructType | None:
    """The struct (or vector type) whose array the access reads, whole or one field of.

    `AccessCost.struct_type` when the analysis fills it; otherwise worked out from the
    IR: the access's element itself, or the struct a constant field offset is added to
    (`data[tid].x` is `PtrAdd(PtrAdd(data, tid * 12), 0)`; the innermost such struct,
    the array's element, wins for nested fields).
    """
    explicit = getattr(cost, "struct_type", None)
    if isinstance(explicit, T.StructType):
        return explicit
    element = cost.access.element
    if isinstance(element, T.StructType):
        return element
    found: T.StructType | None = None
    e: N.Expr = cost.access.address
    while isinstance(e, N.PtrAdd) and isinstance(e.offset, N.Const):
        pointee = T.element_type(e.base.type)
        if isinstance(pointee, T.StructType):
            found = pointee
        e = e.base
    return found


def aligned_size(size: int, arch: Architecture) -> tuple[int, int]:
    """The `(alignment, size)` that lets `size` bytes move in the widest natural accesses."""
    fitting = [s for s in arch.access_sizes if s >= size]
    align = min(fitting) if fitting else arch.max_access_bytes
    return align, -(-size // align) * align


def wider_vector(t: T.StructType) -> T.StructType | None:
    """`float4` for `float3`: the 4-wide vector type of a 3-wide one, when it exists."""
    if not t.is_vector or not t.name.endswith("3"):
        return None
    wider = T.vector_type(t.name[:-1] + "4")
    return wider if wider is not None and T.is_natural_access(wider) else None


def loads_text(size: int, align: int) -> str:
    n = max(1, size // align)
    return f"{count_word(n)} {align}-byte load{'s' if n > 1 else ''} per element"


def soa_text(t: T.StructType) -> str:
    names = [f.name + "[]" for f in t.fields if f.name]
    if len(names) > 4:
        names = names[:3] + ["…"]
    return f"a structure of arrays ({', '.join(names)})" if names else "a structure of arrays"


def layout_fix(t: T.StructType, arch: Architecture) -> str:
    """`declare it `struct __align__(16) vec3d` (16 bytes: one 16-byte load per element)
    or use a structure of arrays (x[], y[], z[])`, `use `float4` ...` for a vector type."""
    wider = wider_vector(t)
    if wider is not None and wider.size is not None and wider.align is not None:
        return (
            f"use `{wider.name}` ({wider.size} bytes, align {wider.align}: "
            f"{loads_text(wider.size, wider.align)}) or {soa_text(t)}"
        )
    align, size = aligned_size(t.size or 0, arch)
    if t.is_vector or not t.name:
        declare = f"give it `__align__({align})`"
    else:
        keyword = "union" if t.is_union else "struct"
        declare = f"declare it `{keyword} __align__({align}) {t.name.removeprefix(keyword + ' ')}`"
    return f"{declare} ({size} bytes: {loads_text(size, align)}) or use {soa_text(t)}"


# ----------------------------------------------------------------------------- IR walks
def _statement_exprs(s: N.Stmt) -> Iterator[N.Expr]:
    if isinstance(s, N.Assign):
        yield s.value
    elif isinstance(s, N.Store):
        yield s.access.address
        yield s.value
    elif isinstance(s, N.Eval):
        yield s.expr
    elif isinstance(s, N.If):
        yield s.cond
    elif isinstance(s, N.Loop) and s.cond is not None:
        yield s.cond
    elif isinstance(s, N.Return) and s.value is not None:
        yield s.value


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
                for e in _statement_exprs(s):
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


def _const(e: N.Expr) -> int | None:
    if isinstance(e, N.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, N.VarRef) and e.var.const_value is not None:
        return e.var.const_value
    if isinstance(e, N.Cast):
        return _const(e.operand)
    return None


def _terms(e: N.Expr) -> list[N.Expr]:
    if isinstance(e, N.Binary) and e.op == "+":
        return _terms(e.left) + _terms(e.right)
    if isinstance(e, N.Cast):
        return _terms(e.operand)
    return [e]


def row_stride(access: N.Access, uses: ThreadIndexUse) -> int | None:
    """C in a 1-D index `s[r * C + c]` (or `(r << k) + c`) where `c` varies with the thread.

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
            c = _const(t.right) if _const(t.right) is not None else _const(t.left)
        elif isinstance(t, N.Binary) and t.op == "<<":
            k = _const(t.right)
            c = 1 << k if k is not None and 0 <= k < 31 else None
        if c is not None and c >= 2 and stride is None:
            stride = c
        else:
            others.append(t)
    if stride is None:
        return None
    if not any(any(b.startswith("threadIdx.") for b in uses.builtins(t)) for t in others):
        return None
    return stride


def _unique(lines: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            yield line
