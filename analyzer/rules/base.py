"""What every rule is: a class with a code, a name, a message template and a `check` method.

A rule reads the `AccessCost`s of one `KernelAnalysis` and yields `Finding`s; it never
prints and never touches a reporter. Its docstring is its documentation, in ruff's
shape (see `SECTIONS`); `warplint explain WL101` prints it.

The helpers below are shared by the rules: the context lines every finding carries
(assumptions, the call it was inlined through), the struct an access reads a field of, and
the wording of lanes, banks, types and layout fixes. What an address is made of (which
thread index it derives from, its row stride) is read from the IR by `analysis.indexing`.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import ClassVar

from analyzer.analysis.assumptions import AssumptionKind
from analyzer.analysis.indexing import element_struct
from analyzer.analysis.results import AccessCost, Collision, KernelAnalysis
from analyzer.analysis.verdict import Assume
from analyzer.arch import Architecture
from analyzer.diagnostics import Severity, Span
from analyzer.findings import Finding, Related
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
    assume: Assume = Assume.TYPICAL  # the values of unknowns a finding may rest on (`verdict.py`)
    _padded: dict[tuple[str, int], KernelAnalysis | None] = field(default_factory=dict, repr=False, compare=False)

    def verdict(self, cost: AccessCost) -> AccessCost:
        """The cost a finding on `cost` rests on under the verdict policy: at the typical values
        of its unknowns, or (`--assume worst`) the worst over every value tried."""
        return cost.at_values(self.assume is Assume.TYPICAL)

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
        message: str | None = None,
    ) -> Finding:
        """A finding of this rule; `message` is a template of its own where the class's does not
        fit (a cost in another unit)."""
        return Finding(
            code=self.code,
            rule=self.name,
            severity=self.severity,
            span=span,
            kernel=kernel,
            message=(message or self.message).format(**args),
            fix=fix,
            args=types.MappingProxyType(dict(args)),
            detail=tuple(_unique(detail)),
            related=tuple(related),
        )


# ----------------------------------------------------------------------------- costs
def known_excess(cost: AccessCost) -> bool:
    """The access costs more than ideal, both known (not a bound on a data-dependent index, and
    not a branch load nvcc may merge with another's), it is not moved by a merged wide load and
    it makes a request of its own (a reused value makes none)."""
    if cost.bounded or cost.may_be_if_converted:  # a bound, or not the load nvcc may issue
        return False
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
            lines.append(f"worst case shown: the cost varies from {best} to {worst} {cost.unit} per request")
        lines.extend(f"assumed: {a}" for a in cost.assumptions)
    launch = analysis.launch
    if launch.assumed and launch.block is not None and not _states_the_block(cost):
        lines.append(f"assumed: block {format_dim(launch.block)} ({launch.origin})")
    return lines


def _states_the_block(cost: AccessCost) -> bool:
    """Whether the assumptions listed for `cost` already say which block was assumed."""
    return not cost.exact and any(a.kind is AssumptionKind.BLOCK_ASSUMED for a in cost.assumptions)


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
    return f"{lanes} hit bank {c.bank} at {len(c.words)} different words ({number_list(c.words)})"


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
    """The struct (or vector type) whose array the access reads, whole or one field of:
    `AccessCost.struct_type` when the analysis fills it, else `indexing.element_struct`."""
    if cost.struct_type is not None:
        return cost.struct_type
    return element_struct(cost.access)


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
        names = [*names[:3], "…"]
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


def _unique(lines: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            yield line
