"""One finding per source place and rule (`places`): the stage between `check` and `render`.

The rules report an access once per kernel instantiation, launch configuration and operation
(the load and the store of `a[i].x += v`), and a header's access once through every file of
the run that includes it. A user reads one place: `merge_reports` makes every group of
findings of one rule at one place (path, line, column) one finding, carrying the worst cost
(its message, arguments and detail are those of the worst member), with what it covers in
`args` (`instances`: kernel, operation and cost of each member) and in one more `detail`
line. A finding at a header's place is kept once per run, in the header's own report when the
run checks the header, else in the first report that holds it.

A finding inside a device function the analysis inlined ("inlined from Comparator") gets the
kernel lines that call that function as `related` places, as clang's "called from" notes do.

Nothing is analysed again: the stage reads the findings and the kernels' IR the reports hold.
It runs in `cli` after the files are checked and before the report is rendered, so the exit
status (1 when any finding is left) does not change: a group keeps at least one finding.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from analyzer.findings import Finding, Related
from analyzer.ir import nodes as N
from analyzer.lazy_pattern import lazy_compile
from analyzer.records import replace

__all__ = ["COST_ARGS", "finding_cost", "merge_reports"]

#: The argument that holds a finding's cost, per request, by rule family (WL301 has none).
COST_ARGS = ("wavefronts", "sectors")
_INLINED = lazy_compile(r"^inlined from (\S+)$")


def finding_cost(finding: Any) -> float | None:
    """The cost a finding reports per request (wavefronts or sectors), None when it has none."""
    args = getattr(finding, "args", None) or {}
    for name in COST_ARGS:
        value = args.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    return None


def merge_reports(reports: Sequence[Any]) -> list[Any]:
    """`reports` with one finding per (place, rule) across the run (see the module)."""
    groups: dict[tuple[str, int, int, str], list[tuple[int, int]]] = {}
    for r, report in enumerate(reports):
        for f, finding in enumerate(report.findings):
            groups.setdefault(_place(report, finding), []).append((r, f))
    keep: dict[tuple[int, int], Finding] = {}
    calls: dict[int, dict[str, list[Any]]] = {}  # each kernel's calls (`_calls_by_name`), by its identity
    for key, members in groups.items():
        home = _home(reports, key[0], members)
        first = next(m for m in members if m[0] == home)
        keep[first] = _merged(reports, home, [reports[r].findings[f] for r, f in members], calls)
    return [
        replace(report, findings=[keep[(r, f)] for f in range(len(report.findings)) if (r, f) in keep])
        for r, report in enumerate(reports)
    ]


def _place(report: Any, finding: Any) -> tuple[str, int, int, str]:
    loc = report.locate(getattr(finding, "span", None))
    return (_same_file(loc.path), loc.line, loc.column, str(finding.code))


def _same_file(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _home(reports: Sequence[Any], path: str, members: list[tuple[int, int]]) -> int:
    """The report a group's finding stays in: the file's own report, else the first."""
    holders = [r for r, _ in members]
    return next((r for r in holders if _same_file(reports[r].path) == path), holders[0])


def _merged(
    reports: Sequence[Any], home: int, members: list[Finding], calls: dict[int, dict[str, list[Any]]]
) -> Finding:
    """One finding for `members` (findings of one rule at one place), kept in report `home`
    (`calls`: the kernels' calls found so far, `_call_sites`)."""
    own = [m for m in members if any(m is f for f in reports[home].findings)]
    worst = max(enumerate(members), key=lambda item: (_cost_order(item[1]), -item[0]))[1]
    base = worst if any(worst is m for m in own) else replace(worst, span=own[0].span, related=own[0].related)
    sites = _call_sites(reports[home], own, base.related, calls)
    if len(members) == 1:
        return replace(base, related=(*base.related, *sites)) if sites else base
    instances = [_instance(m) for m in members]
    args = {**dict(base.args), "instances": instances}
    return replace(
        base,
        args=args,
        detail=(*base.detail, _covers(instances, worst)),
        related=(*base.related, *sites),
    )


def _cost_order(finding: Finding) -> float:
    cost = finding_cost(finding)
    return float("-inf") if cost is None else float(cost)


def _instance(finding: Finding) -> dict[str, object]:
    """What one merged finding stood for: its kernel (instantiation), operation and cost."""
    out: dict[str, object] = {"kernel": str(finding.kernel)}
    op = (finding.args or {}).get("op")
    if op is not None:
        out["op"] = str(getattr(op, "value", op))
    cost = finding_cost(finding)
    if cost is not None:
        out["cost"] = cost
    return out


def _covers(instances: list[dict[str, object]], worst: Finding) -> str:
    """The detail line of a merged finding: the kernels (with the number of launch
    configurations where a kernel was analysed for several), the operations and the costs."""
    counts: dict[str, int] = {}  # kernel -> findings of one operation: its launch configurations
    for instance in instances:
        kernel = str(instance["kernel"])
        counts[kernel] = counts.get(kernel, 0) + 1
    for kernel in counts:
        counts[kernel] //= len({str(i.get("op")) for i in instances if i["kernel"] == kernel})
    kernels = ", ".join(f"`{k}`" + (f" ({n} launch configurations)" if n > 1 else "") for k, n in counts.items())
    text = f"one finding for {len(instances)} instances at this place: {kernels}"
    ops = list(dict.fromkeys(str(i["op"]) for i in instances if "op" in i))
    if len(ops) > 1:
        text += f"; operations: {' and '.join(ops)}"
    costs = sorted({float(c) for i in instances if isinstance(c := i.get("cost"), (int, float))}, reverse=True)
    if len(costs) > 1:
        shown = ", ".join(f"{c:g}" for c in costs)
        text += f"; the worst shown (`{worst.kernel}`), costs per request {shown}"
    return text


def _call_sites(
    report: Any, own: list[Finding], known: tuple[Related, ...], calls: dict[int, dict[str, list[Any]]]
) -> tuple[Related, ...]:
    """The kernel lines that call the device function a finding was inlined from, as related
    places ("`Comparator` called from kernel `k` here"), each once. `calls` holds each
    kernel's calls by name once they are found (`_calls_by_name`)."""
    found: list[Related] = []
    seen = {r.span for r in known}
    for finding in own:
        helper = _inlined_from(finding)
        if helper is None:
            continue
        for analysis in getattr(report, "kernels", ()) or ():
            kernel = analysis.kernel
            if _display(kernel) != str(finding.kernel):
                continue
            by_name = calls.get(id(kernel))
            if by_name is None:
                by_name = calls[id(kernel)] = _calls_by_name(kernel)
            for span in by_name.get(helper, ()):
                if span not in seen:
                    seen.add(span)
                    found.append(Related(span, f"`{helper}` called from kernel `{_display(kernel)}` here"))
    return tuple(sorted(found, key=lambda r: (r.span.start, r.span.end)))


def _calls_by_name(kernel: Any) -> dict[str, list[Any]]:
    """The spans of the calls in a kernel's body, by the called function's last name, in the
    body's order. Found once a kernel, not once a finding: myocyte/main.cu's 284 findings
    inlined from helpers walked the body of `solver_2` each, 4% of its check (py-spy,
    2026-11-28)."""
    out: dict[str, list[Any]] = {}
    for node in N.walk_nodes(kernel.body):
        if isinstance(node, N.Call):
            out.setdefault(node.name.split("::")[-1], []).append(node.span)
    return out


def _inlined_from(finding: Finding) -> str | None:
    for line in finding.detail:
        match = _INLINED.match(str(line))
        if match:
            return match.group(1)
    return None


def _display(kernel: Any) -> str:
    return str(getattr(kernel, "display_name", None) or getattr(kernel, "name", kernel))
