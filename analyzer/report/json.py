"""The JSON report, version 1 (schema: docs/schema-v1.json, fields: README.md).

Lines and columns are 1-based; `end_column` is one past the last character. A kernel
analysed for several launch configurations appears once per configuration. Each finding's
`fingerprint` is SARIF's `partialFingerprints["warplintAccess/v1"]`, computed by
`sarif.fingerprints` over the same records.

The schema ships with the package (pyproject maps the package `analyzer.schemas` to `docs/`):
`schema()` reads it, from the source tree or the installed copy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import analyzer
from analyzer.arch import DEFAULT_ARCH
from analyzer.report import (
    arch_notes,
    display_path,
    finding_detail,
    kernel_name,
    records,
    repository_root,
    severity_name,
)

__all__ = ["SCHEMA_FILE", "VERSION", "document", "edit_json", "plain_value", "render", "schema", "schema_text"]

VERSION = 1
SCHEMA_FILE = "schema-v1.json"

# fields of an AccessCost copied when the analysis provides them
_EXTRA_ACCESS_FIELDS = (
    "best_per_request",
    "stride_bytes",
    "cases",
    "depends_on",
    "pieces",
    "element_bytes",
    "mean_per_request",
)  # the last only from `warplint simulate`


def render(reports: Sequence[Any], *, arch: str = DEFAULT_ARCH) -> str:
    return json.dumps(document(reports, arch=arch), indent=2, sort_keys=False, default=_plain) + "\n"


def document(reports: Sequence[Any], *, arch: str = DEFAULT_ARCH) -> dict[str, Any]:
    """The report as plain JSON-ready data."""
    out: dict[str, Any] = {
        "version": VERSION,
        "tool": {"name": "warplint", "version": analyzer.__version__},
        "arch": arch,
    }
    notes = arch_notes(arch)
    if notes:  # only when there is something to say: version 1 grows by optional fields
        out["notes"] = [{"kind": n.kind, "arch": n.arch, "like": n.like, "message": n.message} for n in notes]
    prints = _fingerprints_by_finding(reports)
    out["files"] = [_file(report, prints) for report in reports]
    return out


def schema_text() -> str:
    """The JSON Schema of this format: `docs/schema-v1.json` in a source tree, else the copy
    installed as package data (`analyzer/schemas/schema-v1.json`)."""
    from pathlib import Path

    here = Path(__file__).resolve().parents[1]  # analyzer/
    for candidate in (here.parent / "docs" / SCHEMA_FILE, here / "schemas" / SCHEMA_FILE):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    import importlib.resources  # (a copy inside a zip file)

    return (importlib.resources.files("analyzer.schemas") / SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The JSON Schema of this format, parsed."""
    parsed: dict[str, Any] = json.loads(schema_text())
    return parsed


def _fingerprints_by_finding(reports: Sequence[Any]) -> dict[int, str]:
    """id(finding) -> its fingerprint, the one the SARIF report gives the same finding."""
    from analyzer.report.sarif import fingerprints

    every = records(reports)
    return {id(r.source): fp for r, fp in zip(every, fingerprints(every, repository_root())) if not r.is_diagnostic}


def _file(report: Any, prints: dict[int, str]) -> dict[str, Any]:
    path = display_path(report.path)
    return {
        "path": path,
        "errors": [_error(report, d, path) for d in report.diagnostics],
        "kernels": [_kernel(report, k, path) for k in report.kernels],
        "findings": [_finding(report, f, path, prints.get(id(f))) for f in report.findings],
    }


def _position(loc: Any, file_path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    shown = display_path(loc.path)
    if shown != file_path:  # in an #include'd file
        out["path"] = shown
    out.update(line=loc.line, column=loc.column, end_line=loc.end_line, end_column=loc.end_column)
    return out


def _error(report: Any, d: Any, path: str) -> dict[str, Any]:
    loc = d.location if d.location is not None else report.locate(d.span)
    out = _position(loc, path)
    out.update(message=d.message, code=d.code, severity=severity_name(d.severity))
    if d.notes:
        out["notes"] = list(d.notes)
    return out


def _launch(launch: Any) -> dict[str, Any]:
    return {
        "block": list(launch.block) if launch.block is not None else None,
        "grid": list(launch.grid) if launch.grid is not None else None,
        "origin": launch.origin,
        "assumed": bool(getattr(launch, "assumed", False)),
        "params": dict(getattr(launch, "params", ())),
    }


def _kernel(report: Any, analysis: Any, path: str) -> dict[str, Any]:
    kernel = analysis.kernel
    loc = report.locate(getattr(kernel, "name_span", None) or getattr(kernel, "span", None))
    costs = sorted(analysis.costs, key=lambda c: (c.span.start, c.span.end))
    out: dict[str, Any] = {"name": kernel_name(kernel), "line": loc.line}
    if loc.path != report.path:
        out["path"] = display_path(loc.path)
    out["launch"] = _launch(analysis.launch)
    if hasattr(analysis, "simulated_blocks"):  # `warplint simulate`: which blocks ran
        out["simulated_blocks"] = [list(b) for b in analysis.simulated_blocks]
    by_uid = {c.access.uid: c for c in costs}
    out["accesses"] = [_access(report, c, path, by_uid) for c in costs]
    if getattr(analysis, "notes", None):
        out["notes"] = [str(n) for n in analysis.notes]
    return out


def _access(report: Any, cost: Any, path: str, by_uid: dict[int, Any] | None = None) -> dict[str, Any]:
    out = _position(report.locate(cost.span), path)
    out.update(
        text=cost.text,
        space=cost.space,
        op=cost.op,
        bytes=cost.bytes,
        unit=cost.unit,
        per_request=cost.per_request,
        ideal_per_request=cost.ideal_per_request,
        requests=cost.requests,
        total=cost.total,
        exact=bool(cost.exact),
    )
    for bound in ("requests_min", "requests_max", "total_min", "total_max"):
        if getattr(cost, bound, None) is not None:  # `requests`/`total` is null: what bounds it
            out[bound] = getattr(cost, bound)
    typical = getattr(cost, "typical", None)
    if typical is not None:  # what a finding rests on by default, where not `per_request`
        out["typical_per_request"] = typical.per_request
        out["typical_ideal_per_request"] = typical.ideal_per_request
    out.update(
        assumptions=[str(a) for a in cost.assumptions],
    )
    array = getattr(getattr(cost, "access", None), "array", None)
    if array:
        out["array"] = array
    for name in _EXTRA_ACCESS_FIELDS:
        if hasattr(cost, name):
            value = getattr(cost, name)
            out[name] = list(value) if isinstance(value, (tuple, list)) else value
    via = getattr(cost, "via", None)
    if via:
        out["via"] = via
    reuses = getattr(cost, "reuses", None)
    holder = (by_uid or {}).get(reuses) if reuses is not None else None
    if holder is not None:  # a load whose value the thread holds: no request of its own
        where = report.locate(holder.span)
        out["reuses"] = {"line": where.line, "column": where.column, "text": holder.text}
    return out


def _finding(report: Any, finding: Any, path: str, fingerprint: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "code": str(finding.code),
        "rule": str(getattr(finding, "rule", "") or ""),
        "severity": severity_name(getattr(finding, "severity", "warning")),
    }
    out.update(_position(report.locate(getattr(finding, "span", None)), path))
    fix = getattr(finding, "fix", None)
    out.update(
        kernel=kernel_name(getattr(finding, "kernel", None)),
        message=str(finding.message),
        fix=str(fix) if fix else None,
    )
    out["args"] = args_json(getattr(finding, "args", None))
    out["detail"] = finding_detail(getattr(finding, "detail", None))
    out["related"] = [
        {**_position(report.locate(r.span), path), "message": str(r.message)}
        for r in getattr(finding, "related", ()) or ()
    ]
    out.update(finding_extras(out["args"], fingerprint, getattr(finding, "text_edits", ())))
    return out


def args_json(args: Any) -> dict[str, Any]:
    """A finding's typed arguments as JSON data (`plain_value`)."""
    return {str(k): plain_value(v) for k, v in dict(args or {}).items()}


def finding_extras(args: dict[str, Any], fingerprint: str | None, text_edits: Any) -> dict[str, Any]:
    """The optional fields a finding has in the JSON and JSON Lines reports: its `fingerprint`,
    how many `instances` one merged finding stands for (analyzer/places.py), and the `edits`
    of a verified fix (only when there is one: version 1 grows by optional fields)."""
    extras: dict[str, Any] = {}
    if fingerprint is not None:
        extras["fingerprint"] = fingerprint
    merged = args.get("instances")
    if isinstance(merged, list) and len(merged) > 1:
        extras["instances"] = len(merged)
    if text_edits:
        extras["edits"] = [edit_json(e) for e in text_edits]
    return extras


def edit_json(edit: Any) -> dict[str, Any]:
    """A verified fix's edit of the original file (`analyzer.fixes`): what `--fix` applies."""
    return {
        "path": display_path(edit.path),
        "line": edit.line,
        "column": edit.column,
        "end_line": edit.end_line,
        "end_column": edit.end_column,
        "text": edit.text,
    }


def plain_value(value: Any) -> Any:
    """A typed argument as JSON data: numbers, strings, booleans, null, lists and objects stay;
    anything else (a symbolic expression, an enum) becomes its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN or infinity
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [plain_value(v) for v in items]
    return _plain(value)


def _plain(value: Any) -> Any:
    enum_value = getattr(value, "value", None)
    if isinstance(enum_value, (str, int)):
        return enum_value
    return str(value)
