"""What the analyses produce: launch configurations and per-access costs (plain data)."""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from analyzer.analysis.assumptions import Assumption, AssumptionKind
from analyzer.analysis.indexing import element_field
from analyzer.arch import Architecture
from analyzer.diagnostics import Diagnostic, Span
from analyzer.ir.nodes import Access, AccessOp, Function, Space
from analyzer.ir.types import StructType
from analyzer.records import field, record, replace


class Unit(StrEnum):
    """What a request costs in: shared memory in wavefronts, global memory in sectors (Volta
    onward) or in transactions (the seed generations, `Architecture.charges_sectors` false)."""

    WAVEFRONTS = "wavefronts"
    SECTORS = "sectors"
    TRANSACTIONS = "transactions"


def unit_of(space: Space, arch: Architecture | None = None) -> Unit:
    """The unit a request to `space` is charged in on `arch` (sectors when no arch is given)."""
    if space == Space.SHARED:
        return Unit.WAVEFRONTS
    return Unit.SECTORS if arch is None or arch.charges_sectors else Unit.TRANSACTIONS


@record
class Facts:
    """What the code states of values it does not fix, by name, sorted: values, divisors (the
    symbol is a multiple of it) and inclusive ranges (None: no bound). The host's (a guard
    `if (w % 32) exit(1)`, `assert`, `__requires`, the configuration's `facts`: `analysis.guards`)
    are about a launch's parameters; the kernel's (`__assume`, `assert`: `analysis.facts`) about
    its uniform symbols (`n`, `A.width`, `blockDim.x`). Read through `values`, `divisors` and
    `ranges`, the verdict policy's `SymbolFacts`, where several facts about one name are one."""

    value_of: tuple[tuple[str, int], ...] = ()
    divisor_of: tuple[tuple[str, int], ...] = ()
    range_of: tuple[tuple[str, int | None, int | None], ...] = ()

    @property
    def values(self) -> dict[str, int]:
        return dict(self.value_of)

    @property
    def divisors(self) -> dict[str, int]:
        """Each name's divisor: the lcm of those stated (a multiple of 4 and of 6 is one of 12)."""
        out: dict[str, int] = {}
        for name, d in self.divisor_of:
            out[name] = math.lcm(out.get(name, 1), d)
        return out

    @property
    def ranges(self) -> dict[str, tuple[int | None, int | None]]:
        """Each name's tightest range: the highest lower bound and the lowest upper bound stated."""
        out: dict[str, tuple[int | None, int | None]] = {}
        for name, lo, hi in self.range_of:
            was_lo, was_hi = out.get(name, (None, None))
            out[name] = (_tighter(was_lo, lo, max), _tighter(was_hi, hi, min))
        return out

    def merged(self, other: Facts) -> Facts:
        """Both sets of facts."""
        if not other:
            return self
        if not self:
            return other
        return Facts(
            tuple(sorted(set(self.value_of) | set(other.value_of))),
            tuple(sorted(set(self.divisor_of) | set(other.divisor_of))),
            tuple(sorted(set(self.range_of) | set(other.range_of), key=repr)),
        )

    def __bool__(self) -> bool:
        """Whether anything is stated."""
        return bool(self.value_of or self.divisor_of or self.range_of)


def _tighter(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
    """The tighter of two bounds (`pick`: max for lower bounds, min for upper ones), None only
    when neither bounds."""
    return b if a is None else a if b is None else pick(a, b)


NO_FACTS = Facts()


@record(slots=False)
class LaunchConfig:
    block: tuple[int, int, int] | None
    grid: tuple[int, int, int] | None
    origin: str  # "launch at line 42", "--block", "__launch_bounds__(256)", "assumed default"
    assumed: bool = False  # True when warplint chose the block because none was known
    params: tuple[tuple[str, int], ...] = ()  # kernel scalar parameters with known values
    span: Span | None = None  # the launch in host code, when there is one
    facts: Facts | None = None  # what the code states of the parameters it leaves unknown
    # where host code got the values of parameters it leaves unknown: (name, "returned by `atoi` at k.cu:7")
    unknowns: tuple[tuple[str, str], ...] = ()


@record(frozen=False, slots=False)
class Collision:
    """Lanes of one warp that hit distinct words of one bank (shared) in one phase."""

    bank: int
    lanes: tuple[int, ...]
    words: tuple[int, ...]


@record(slots=False)
class TypicalCost:
    """The worst request at the values of the unknowns that programs use (`verdict.py`), where
    it differs from the worst over every value tried: what a finding rests on by default."""

    per_request: int
    ideal_per_request: int
    lane_addresses: tuple[int | None, ...]
    stride_bytes: int | None
    collisions: tuple[Collision, ...]


def stride(addresses: tuple[int | None, ...]) -> int | None:
    """The address difference between neighbouring lanes, when it is the same for all."""
    pts = [(i, a) for i, a in enumerate(addresses) if a is not None]
    if len(pts) < 2:
        return None
    (i0, a0), (i1, a1) = pts[0], pts[1]
    if (a1 - a0) % (i1 - i0):
        return None
    step = (a1 - a0) // (i1 - i0)
    if all(a == a0 + (i - i0) * step for i, a in pts):
        return step
    return None


@record(frozen=False, slots=False)
class AccessCost:
    """The cost of one access site for one launch configuration."""

    access: Access
    kernel: str
    space: Space  # resolved: UNKNOWN only where no call site tells
    op: AccessOp
    bytes: int  # bytes per lane of one hardware access (a piece of a split element)
    element_bytes: int  # size of the element as written (12 for float3)
    pieces: int  # hardware accesses per lane and execution (3 for a float3)
    unit: Unit
    per_request: int | None  # worst over warps, executions and unknowns; None = unknown
    ideal_per_request: int | None
    best_per_request: int | None = None  # smallest seen, when the cost varies
    requests: int | None = None  # warp-level requests over the whole launch; None: not known exactly
    total: int | None = None  # wavefronts or sectors over the whole launch; None: not known exactly
    # bounds of `requests` and `total` where they are None because of unknowns (README: JSON)
    requests_min: int | None = None
    requests_max: int | None = None
    total_min: int | None = None
    total_max: int | None = None
    exact: bool = True
    assumptions: list[Assumption] = field(default_factory=list)  # `str()` of each is its sentence
    # detail of the worst request, for messages, fixes and pictures
    lane_addresses: tuple[int | None, ...] = ()  # byte addresses of the worst request (relative)
    stride_bytes: int | None = None  # address difference between neighbouring lanes, when uniform
    collisions: tuple[Collision, ...] = ()
    depends_on: tuple[str, ...] = ()  # parameters the cost depends on
    cases: str | None = None  # e.g. "conflict-free exactly when stride is odd"
    data_dependent: bool = False
    # the excess over the ideal comes only from not knowing where the warp's range starts:
    # some alignment of the start makes every request ideal (a row length not known, say)
    only_alignment: bool = False
    merged_into: int | None = None  # uid of a wide load that also moves this field
    reuses: int | None = None  # uid of the access whose value this load reuses: no request
    via: str | None = None  # "inlined from GetElement" when reached through a call
    # the struct the access reads a field of (or whole): `vec3d` for `data[tid].x`
    struct_type: StructType | None = None
    typical: TypicalCost | None = None  # the worst at typical values, where it is not `per_request`

    @property
    def text(self) -> str:
        return self.access.text

    @property
    def field_path(self) -> tuple[str, ...]:
        """The fields of the `struct_type` element the access reads: `("x",)` for `data[i].x`,
        `()` for the whole element or no struct (from the access's address)."""
        found = element_field(self.access.address)
        return found.path if found is not None else ()

    @property
    def span(self) -> Span:
        return self.access.span

    def at_values(self, typical: bool) -> AccessCost:
        """The cost a verdict rests on: at the typical values of the unknowns (`typical`), or
        the worst over every value tried (`--assume worst`). The detail (addresses, stride,
        collisions) is that of the same request."""
        if not typical or self.typical is None:
            return self
        t = self.typical
        return replace(
            self,
            per_request=t.per_request,
            ideal_per_request=t.ideal_per_request,
            lane_addresses=t.lane_addresses,
            stride_bytes=t.stride_bytes,
            collisions=t.collisions,
        )

    @property
    def bounded(self) -> bool:
        """Whether `per_request` is a bound (a data-dependent index), not a figure."""
        return any(a.kind is AssumptionKind.COST_BOUNDED for a in self.assumptions)

    @property
    def may_be_if_converted(self) -> bool:
        """Whether nvcc may issue this load merged with other branches' (not as costed)."""
        return any(a.kind is AssumptionKind.MAY_BE_IF_CONVERTED for a in self.assumptions)

    @property
    def excess(self) -> bool:
        return (
            self.per_request is not None
            and self.ideal_per_request is not None
            and self.per_request > self.ideal_per_request
        )


@record(frozen=False, slots=False)
class KernelAnalysis:
    kernel: Function
    launch: LaunchConfig
    costs: list[AccessCost]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    shared_arrays: dict[str, Any] = field(default_factory=dict)  # name -> Variable (for padding fixes)
    # the preprocessed text that the spans index into, set by the driver (api.py), so that
    # rules can turn a fix into exact edits (Finding.edits); None when not known
    source: str | None = None
