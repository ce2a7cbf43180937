"""Hold `check`'s static costs to the simulator's: the runtime check of `check --verify`.

For an access `check` marks exact, the simulator's worst cost per request must be the same
and, when the grid is known and every block was simulated, so must the requests and the
total. For the others the simulated worst must lie within what `check` states: at most its
`per_request` (a worst case) and at least its `best_per_request`. Each disagreement is one
`Mismatch`; `analyzer.api` turns them into WL930 findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.analysis.results import AccessCost

COSTED = ("shared", "global")

__all__ = ["Mismatch", "compare"]


@dataclass(frozen=True)
class Mismatch:
    cost: AccessCost  # check's figure for the access
    what: str  # per_request, requests, total, above_worst, below_best
    static: int | None
    simulated: int | None

    @property
    def description(self) -> str:
        text = {
            "per_request": "worst {unit} per request",
            "requests": "requests over the launch",
            "total": "total {unit} over the launch",
            "above_worst": "worst {unit} per request (check's worst case is lower)",
            "below_best": "worst {unit} per request (check's best case is higher)",
        }[self.what]
        return text.format(unit=self.cost.unit)


def compare(static: Any, simulated: Any, scaled_totals: bool = False) -> list[Mismatch]:
    """Disagreements between `static` (a KernelAnalysis from `check`) and `simulated`
    (an analyzer.sim.run.Simulation of the same kernel and launch). Totals are compared
    when every block was simulated, or with `scaled_totals` also when they were scaled from
    a sample (right for kernels whose blocks all cost the same)."""
    if getattr(simulated, "stopped", None):
        return []  # an unfinished run proves nothing
    by_uid = {c.access.uid: c for c in simulated.costs}
    complete = (scaled_totals or not simulated.scaled) and static.launch.grid is not None
    out: list[Mismatch] = []
    for c in static.costs:
        s = by_uid.get(c.access.uid)
        if s is None or c.space not in COSTED or s.space != c.space or s.per_request is None:
            continue
        if c.exact and c.per_request is not None:
            # an access the run never reached (a branch its data did not take) says nothing
            # about the cost per request; the totals below still catch a wrong request count
            if s.per_request != c.per_request and (s.requests or not c.per_request):
                out.append(Mismatch(c, "per_request", c.per_request, s.per_request))
                continue
            if complete and c.requests is not None and s.requests is not None and c.requests != s.requests:
                out.append(Mismatch(c, "requests", c.requests, s.requests))
            elif complete and c.total is not None and s.total is not None and c.total != s.total:
                out.append(Mismatch(c, "total", c.total, s.total))
            continue
        if not s.requests:
            continue  # never executed in this run: nothing to hold check to
        if c.per_request is not None and s.per_request > c.per_request:
            out.append(Mismatch(c, "above_worst", c.per_request, s.per_request))
        elif c.best_per_request is not None and s.per_request < c.best_per_request:
            out.append(Mismatch(c, "below_best", c.best_per_request, s.per_request))
    return out
