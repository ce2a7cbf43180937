"""The analysis stage's entry point: `analyze_kernel` costs every access of one kernel.

    analyze_kernel(module, kernel, launch, arch) -> KernelAnalysis

Two steps: the symbolic interpreter (`interpret.py`) runs the kernel's IR once and records
every access it reaches; `costing.cost_occurrence` charges each one for every warp of the
launch; `merge.py` then combines what belongs together (call sites, wide struct loads).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analyzer.analysis.costing import cost_occurrence
from analyzer.analysis.interpret import Interpreter
from analyzer.analysis.merge import merge_costs, merge_struct_fields
from analyzer.analysis.results import KernelAnalysis, LaunchConfig
from analyzer.arch import Architecture, get_arch
from analyzer.diagnostics import Diagnostic, Severity
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import Space

__all__ = ["analyze_kernel", "launch_values", "reused_loads"]


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
    costs = [
        cost_occurrence(o, kernel.display_name, launch, arch, known, facts=launch.facts)
        for o in interp.occurrences
        if wanted is None or o.access.array in wanted
    ]
    merged = merge_costs(costs)
    merge_struct_fields(merged)
    # a limit the analysis hit is said where every report format shows it
    diagnostics = [
        Diagnostic(Severity.WARNING, f"in kernel `{kernel.display_name}`: {note}", "WL903", kernel.name_span)
        for note in interp.notes
    ]
    return KernelAnalysis(
        kernel, launch, merged, diagnostics, interp.notes, shared_arrays=_shared_arrays(module, kernel)
    )


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
