"""The analysis stage's entry point: `analyze_kernel` costs every access of one kernel.

    analyze_kernel(module, kernel, launch, arch) -> KernelAnalysis

Two steps: the symbolic interpreter (`interpret.py`) runs the kernel's IR once and records
every access it reaches; `costing.cost_occurrence` charges each one for every warp of the
launch; `merge.py` then combines what belongs together (call sites, wide struct loads).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analyzer.analysis.assumptions import MayBeIfConverted
from analyzer.analysis.costing import cost_occurrence
from analyzer.analysis.interpret import Interpreter
from analyzer.analysis.merge import (
    carried_cost,
    consistent_wide,
    mark_moved,
    merge_adjacent,
    merge_costs,
    merge_struct_fields,
    shared_base_alignments,
    widened,
)
from analyzer.analysis.results import NO_FACTS, AccessCost, Facts, KernelAnalysis, LaunchConfig
from analyzer.analysis.values import Occurrence, WideAccess
from analyzer.arch import Architecture, get_arch
from analyzer.diagnostics import Diagnostic, Severity
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import Space

__all__ = ["analyze_kernel", "cost_occurrences", "known_at", "launch_values", "reused_loads", "wide_accesses"]


def analyze_kernel(
    module: N.Module,
    kernel: N.Function,
    launch: LaunchConfig,
    arch: Architecture,
    params: dict[str, int] | None = None,
    arrays: Iterable[str] | None = None,
) -> KernelAnalysis:
    """Cost every shared and global access of `kernel` for one launch configuration; with
    `arrays`, only the accesses to those arrays. (A padding fix is checked by lowering the file
    again with the wider array, `analyzer.ir.lower.lower(..., padding=...)`, and costing the
    accesses to that array.)"""
    known_params = dict(launch.params)
    known_params.update(params or {})
    interp = Interpreter(module, launch, known_params, arch)
    interp.run_kernel(kernel)
    known = launch_values(launch, known_params)
    wanted = None if arrays is None else set(arrays)
    occurrences = [o for o in interp.occurrences if wanted is None or o.access.array in wanted]
    shared_arrays = _shared_arrays(module, kernel)  # (a walk of the kernel's accesses: once, not twice)
    find_wide_accesses(module, kernel, interp.occurrences, known, arch, shared_arrays)
    merged = merge_costs(cost_occurrences(occurrences, kernel.display_name, launch, arch, known))
    merge_struct_fields(merged, arch)
    # a limit the analysis hit is said where every report format shows it
    diagnostics = [
        Diagnostic(Severity.WARNING, f"in kernel `{kernel.display_name}`: {note}", "WL903", kernel.name_span)
        for note in interp.notes
    ]
    return KernelAnalysis(kernel, launch, merged, diagnostics, interp.notes, shared_arrays=shared_arrays)


def cost_occurrences(
    occurrences: list[Occurrence], kernel: str, launch: LaunchConfig, arch: Architecture, known: dict[str, int]
) -> list[AccessCost]:
    """Each occurrence's cost; a wide access nvcc makes of several (`Occurrence.wide`) is costed
    once, at its carrier, and its other members make no request of their own. The values tried
    for what stays unknown are restricted by what the code states: the host's guards of the
    launch (`LaunchConfig.facts`) and the kernel's `__assume`s before the access."""
    costs: list[AccessCost] = []
    carriers: dict[int, AccessCost] = {}
    for o in occurrences:
        facts = stated_facts(launch.facts, o.facts)
        if o.wide is not None and o.wide.carrier is o.access:
            wide = cost_occurrence(widened(o), kernel, launch, arch, known_at(o, known), facts=facts)
            cost = carried_cost(wide, o)
            carriers[id(o.wide)] = cost
        else:
            cost = cost_occurrence(o, kernel, launch, arch, known_at(o, known), facts=facts)
        if o.if_converted:
            cost.exact = False
            cost.assumptions.append(MayBeIfConverted(o.if_converted))
        costs.append(cost)
    for o, cost in zip(occurrences, costs):
        carrier = carriers.get(id(o.wide)) if o.wide is not None else None
        if carrier is not None and carrier is not cost:
            mark_moved(cost, carrier)
    return costs


def find_wide_accesses(
    module: N.Module,
    kernel: N.Function,
    occurrences: list[Occurrence],
    known: dict[str, int],
    arch: Architecture,
    shared_arrays: dict[str, N.Variable] | None = None,
) -> dict[int, WideAccess]:
    """Mark the occurrences nvcc merges into wide shared accesses (`merge.merge_adjacent`) and
    return them by access uid (only accesses merged alike wherever they are reached).
    `shared_arrays`: the kernel's (`_shared_arrays`), where the caller has them."""
    arrays = _shared_arrays(module, kernel) if shared_arrays is None else shared_arrays
    alignments = shared_base_alignments(arrays.values(), arch)
    merge_adjacent(occurrences, lambda o: known_at(o, known), alignments, arch)
    return consistent_wide(occurrences)


def wide_accesses(
    module: N.Module,
    kernel: N.Function,
    launch: LaunchConfig,
    params: dict[str, int] | None = None,
    arch: Architecture | None = None,
) -> dict[int, WideAccess]:
    """The accesses of `kernel` that nvcc merges into wide shared accesses, by uid: the rule
    `analyze_kernel` costs them by, for the simulator to apply to what it measures."""
    known_params = dict(launch.params)
    known_params.update(params or {})
    arch = arch or get_arch()
    interp = Interpreter(module, launch, known_params, arch)
    interp.run_kernel(kernel)
    return find_wide_accesses(module, kernel, interp.occurrences, launch_values(launch, known_params), arch)


def known_at(occ: Occurrence, known: dict[str, int]) -> dict[str, int]:
    """The values an occurrence is costed with: the launch's and the parameters', and those the
    code stated before it (`__assume(n == 2)`); a value given on the command line or by the
    launch wins over a stated one."""
    stated = occ.facts.values
    return {**stated, **known} if stated else known


def launch_values(launch: LaunchConfig, params: dict[str, int]) -> dict[str, int]:
    """The symbols a launch fixes, for costing: blockDim, gridDim (when known) and the
    kernel parameters whose values are known (`params`, which already holds the launch's)."""
    known: dict[str, int] = {}
    if launch.block is not None:
        known.update({f"blockDim.{a}": v for a, v in zip("xyz", launch.block)})
    if launch.grid is not None:
        known.update({f"gridDim.{a}": v for a, v in zip("xyz", launch.grid)})
    known.update(params)
    return known


def reused_loads(
    module: N.Module,
    kernel: N.Function,
    launch: LaunchConfig,
    params: dict[str, int] | None = None,
    arch: Architecture | None = None,
) -> dict[int, N.Access]:
    """The loads of `kernel` whose value a thread already holds every time they run (uid ->
    the access that loaded or stored it): nvcc issues no request for them. The simulator
    applies the same rule, as it applies `merge.merge_struct_fields`. (Which loads are
    reused does not depend on the architecture; `arch` defaults to the default one.)"""
    known = dict(launch.params)
    known.update(params or {})
    interp = Interpreter(module, launch, known, arch or get_arch())
    interp.run_kernel(kernel)
    reused: dict[int, N.Access] = {}
    fresh: set[int] = set()
    for occ in interp.occurrences:
        if occ.reuses is None:
            fresh.add(occ.access.uid)
        else:
            reused.setdefault(occ.access.uid, occ.reuses)
    return {uid: holder for uid, holder in reused.items() if uid not in fresh}


def _shared_arrays(module: N.Module, kernel: N.Function) -> dict[str, N.Variable]:
    """The `__shared__` arrays that the kernel (or a function it calls) accesses, by name."""
    arrays: dict[str, N.Variable] = {}
    reached, todo = {kernel.name}, [kernel]
    while todo:
        fn = todo.pop()
        for name in fn.calls:
            callee = module.functions.get(name)
            if callee is not None and name not in reached:
                reached.add(name)
                todo.append(callee)
        for acc in fn.accesses:
            for v in _vars_in(acc.address):
                if v.space == Space.SHARED and isinstance(v.type, T.ArrayType):
                    arrays.setdefault(v.name, v)
    return arrays


def _vars_in(e: N.Expr) -> Iterable[N.Variable]:
    stack: list[Any] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.VarRef):
            yield x.var
        stack.extend(N.sub_expressions(x))


def stated_facts(host: Facts | None, device: Facts) -> Facts | None:
    """The facts stated by the host's guards of a launch and by the kernel's `__assume`s before
    an access, together; None when neither states any."""
    return (host or NO_FACTS).merged(device) or None
