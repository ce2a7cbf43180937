"""Reporters: turn `FileReport`s into text for people or into data for tools.

Reporters format; they never analyse. `render(reports, format, ...)` picks one; the
helpers here are shared by every format so that all of them say the same thing:
`records(reports)` flattens diagnostics and findings into one sorted list of `Record`s.

    text        gcc-shaped lines with notes (the default)       report/text.py
    full        text, with the source line and carets           report/text.py (full.py)
    grouped     findings under their file's name (ruff's)       report/grouped.py
    concise     one line a finding: path:line:col: CODE message  report/concise.py
    json        the whole analysis, version 1                    report/json.py
    json-lines  one JSON object a finding                        report/json_lines.py
    sarif       SARIF 2.1.0, for GitHub code scanning            report/sarif.py
    github      GitHub Actions workflow commands (annotations)   report/github.py
    html        one self-contained page, source annotated        report/html.py

Two more reporters serve other commands: `show.py` draws `warplint show`'s pictures and
`simulation.py` prints `warplint simulate`'s tables.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

from analyzer.arch import DEFAULT_ARCH, AssumedRules, assumption
from analyzer.records import record

__all__ = [
    "FORMATS",
    "Record",
    "arch_notes",
    "display_path",
    "finding_detail",
    "kernel_name",
    "records",
    "render",
    "repository_root",
    "rule_name",
    "severity_name",
    "source_path",
]

#: format name -> module in this package that has `render(reports, **options)`
_MODULES = {
    "text": "text",
    "concise": "concise",
    "json": "json",
    "json-lines": "json_lines",
    "sarif": "sarif",
    "github": "github",
    "html": "html",  # one self-contained page: the source annotated with costs and findings
    "full": "full",  # text with the source line and carets under the access
    "grouped": "grouped",  # findings under their file's name
}
FORMATS = tuple(_MODULES)


def render(reports: Sequence[Any], format: str = "text", *, arch: str = DEFAULT_ARCH, color: bool = False) -> str:
    """The whole report in one of `FORMATS`, ending in a newline when not empty."""
    if format not in _MODULES:
        raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    # imported on use: `warplint --help` must not pay for json or hashlib
    module = importlib.import_module(f"analyzer.report.{_MODULES[format]}")
    if format in ("text", "full", "grouped"):
        return module.render(reports, color=color, arch=arch)
    if format in ("json", "html"):
        return module.render(reports, arch=arch)
    return module.render(reports)


def arch_notes(arch: str) -> list[AssumedRules]:
    """What a report says about the architecture itself: that its rules are assumed, for a
    generation costed by another's measured table (Blackwell by Hopper's)."""
    note = assumption(arch)
    return [note] if note is not None else []


@record
class Record:
    """One diagnostic or finding, resolved to its place in the original file.

    `location.path` is the file as warplint opened it (an #include'd file for a finding
    inside one); reporters choose how to show it (`display_path`, `source_path`).
    """

    location: Any  # analyzer.diagnostics.Location
    code: str  # "WL101", "WL901"
    rule: str  # "bank-conflict", "syntax-error"
    severity: str  # "error", "warning" or "note"
    message: str
    fix: str | None = None
    kernel: str | None = None
    notes: tuple[str, ...] = ()  # a diagnostic's notes, a finding's detail lines
    related: tuple[tuple[Any, str], ...] = ()  # (Location, message): "`tile` declared here"
    args: Any = None  # a finding's typed values (None for a diagnostic)
    is_diagnostic: bool = False  # a problem with the input (WL9xx) rather than a rule's finding
    source: Any = None  # the Diagnostic or Finding it was made from (JSON keys its fingerprints by it)

    @property
    def path(self) -> str:
        return self.location.path


def records(reports: Sequence[Any]) -> list[Record]:
    """Every diagnostic and finding of `reports`, file by file, in source order (as the
    text report orders them: the file's own lines first, then those of included files)."""
    out: list[Record] = []
    for report in reports:
        entries = [_diagnostic_record(report, d) for d in report.diagnostics]
        entries += [_finding_record(report, f) for f in report.findings]
        entries.sort(key=lambda record: _source_order(record, report.path))
        out.extend(entries)
    return out


def _source_order(record: Record, own_path: str) -> tuple[bool, str, int, int]:
    loc = record.location
    return (loc.path != own_path, loc.path, loc.line, loc.column)


def _diagnostic_record(report: Any, d: Any) -> Record:
    location = d.location if d.location is not None else report.locate(d.span)
    return Record(
        location=location,
        code=str(d.code),
        rule=rule_name(str(d.code)),
        severity=severity_name(d.severity),
        message=str(d.message),
        notes=tuple(str(n) for n in d.notes),
        is_diagnostic=True,
        source=d,
    )


def _finding_record(report: Any, f: Any) -> Record:
    fix = getattr(f, "fix", None)
    code = str(f.code)
    return Record(
        location=report.locate(getattr(f, "span", None)),
        code=code,
        rule=str(getattr(f, "rule", "") or "") or rule_name(code),
        severity=severity_name(getattr(f, "severity", "warning")),
        message=str(f.message),
        fix=str(fix) if fix else None,
        kernel=kernel_name(getattr(f, "kernel", None)),
        notes=tuple(finding_detail(getattr(f, "detail", None))),
        related=tuple((report.locate(r.span), str(r.message)) for r in getattr(f, "related", ()) or ()),
        args=getattr(f, "args", None),
        source=f,
    )


def rule_name(code: str) -> str:
    """The kebab-case name of a rule or diagnostic code ("" when the registry does not know it)."""
    try:
        from analyzer.rules import registry
    except Exception:  # noqa: BLE001 - a report must still come out without the registry
        return ""
    if code in registry.RULES:
        return str(registry.RULES[code].name)
    return registry.DIAGNOSTIC_CODES.get(code, ("", ""))[0]


def repository_root(cwd: str | None = None) -> str:
    """The folder that tool paths are relative to: the git work tree holding the current
    folder (what GitHub resolves annotation and SARIF paths against), else the current folder."""
    here = os.path.abspath(cwd or os.getcwd())
    folder = here
    while True:
        if os.path.exists(os.path.join(folder, ".git")):  # a folder, or a file in a worktree/submodule
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


def source_path(path: str, root: str) -> str | None:
    """`path` relative to `root` with forward slashes, or None when it lies outside `root`."""
    if not path or path.startswith("<"):
        return None
    full = os.path.abspath(path)
    try:
        if os.path.commonpath([root, full]) != root:
            return None
    except ValueError:  # another drive (Windows)
        return None
    return os.path.relpath(full, root).replace(os.sep, "/")


def display_path(path: str, cwd: str | None = None) -> str:
    """`path` relative to the current folder when it lies below it, else absolute."""
    if not path or path.startswith("<"):
        return path
    cwd = os.path.abspath(cwd or os.getcwd())
    full = os.path.abspath(path)
    try:
        inside = os.path.commonpath([cwd, full]) == cwd
    except ValueError:  # another drive (Windows)
        inside = False
    if inside:
        rel = os.path.relpath(full, cwd)
        return rel.replace(os.sep, "/") if os.sep != "/" else rel
    return full


def severity_name(severity: Any) -> str:
    """ "error", "warning" or "note" for a `Severity` or a plain string."""
    return str(getattr(severity, "value", severity) or "warning").lower()


def kernel_name(kernel: Any) -> str | None:
    """The name shown for a kernel: a `Function` (with template arguments) or a string."""
    if kernel is None:
        return None
    return str(getattr(kernel, "display_name", None) or getattr(kernel, "name", None) or kernel)


def finding_detail(detail: Any) -> list[str]:
    """A finding's `detail` as a list of notes (a string is one note, possibly multi-line)."""
    if detail is None or detail == "":
        return []
    if isinstance(detail, str):
        return [detail.rstrip()]
    if isinstance(detail, Iterable):
        return [str(item).rstrip() for item in detail if item is not None and str(item).strip()]
    return [str(detail)]
