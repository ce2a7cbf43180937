"""The text report of `warplint simulate`: a table of access sites per kernel and launch.

Formatting only: every figure comes from the `Simulation` records (analyzer.sim.run). It
lives with the other reporters, not in `analyzer/sim/`, because the simulator is a stage
before the reporters and never imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.report import display_path, kernel_name

__all__ = ["render"]

_HEADER = ("line:col", "access", "space", "op", "requests", "total", "worst", "mean", "ideal")


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def render(reports: Sequence[Any]) -> str:
    """One table a kernel and launch, after the file's diagnostics, for every report."""
    lines: list[str] = []
    for report in reports:
        path = display_path(report.path)
        for d in report.diagnostics:
            loc = d.location if d.location is not None else report.locate(d.span)
            lines.append(
                f"{display_path(loc.path)}:{loc.line}:{loc.column}: {d.severity.value}: {d.message} [{d.code}]"
            )
        for sim in report.kernels:
            lines.extend(_kernel(report, sim, path))
    return "".join(line + "\n" for line in lines)


def _kernel(report: Any, sim: Any, path: str) -> list[str]:
    launch = sim.launch
    loc = report.locate(sim.kernel.name_span)
    blocks = sim.simulated_blocks
    shown = ", ".join(f"({x},{y},{z})" for x, y, z in blocks[:8]) + (" ..." if len(blocks) > 8 else "")
    out = [
        f"{path}:{loc.line}: kernel `{kernel_name(sim.kernel)}` block {launch.block} grid {launch.grid} ({launch.origin})",
        f"  simulated {len(blocks)} of {sim.total_blocks} blocks: {shown}",
    ]
    rows = [_HEADER]
    for c in sorted(sim.costs, key=lambda c: (c.span.start, c.span.end)):
        at = report.locate(c.span)
        unit = "wf" if c.unit == "wavefronts" else "sec"
        rows.append(
            (
                f"{at.line}:{at.column}",
                c.text,
                c.space,
                c.op,
                _fmt(c.requests),
                f"{_fmt(c.total)} {unit}" if c.total is not None else "-",
                _fmt(c.per_request),
                _fmt(getattr(c, "mean_per_request", None)),
                _fmt(c.ideal_per_request),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADER))]
    for r in rows:
        out.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    if sim.stopped:
        at = report.locate(sim.stopped_span)
        out.append(f"  stopped at line {at.line}: {sim.stopped}")
    for b in sim.barriers:
        at = report.locate(b.span)
        out.append(
            f"  divergent __syncthreads() at line {at.line}: {b.waiting} threads reach it, "
            f"{b.missing} live threads of the block do not"
        )
    for note in sim.notes:
        out.append(f"  note: {note}")
    out.append(f"  {sim.lane_accesses:,} lane accesses, {sim.steps:,} thread-statements")
    return out
