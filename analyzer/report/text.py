"""The text report, in the shape of gcc's diagnostics.

    path:line:col: warning: message [WL101]
        = note: in kernel `transpose`
        = note: a detail line
        = help: the suggested fix
    path:line:col: note: `tile` declared here

The first line is what VS Code's `$gcc` problem matcher and most editors read; the
indented lines below it never start with `path:line:col:`. Places related to a finding
(the declaration of the array) follow as gcc's `note:` lines. Paths are relative to the
current folder when the file lies below it.

`--format full` (`render(..., source=True)`) adds, under each first line, the source line and
carets under the access, as clang and ruff's `full` do:

    path:line:col: warning: message [WL101]
       23 |     out[i] = tile[threadIdx.x][threadIdx.y];
          |              ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        = note: in kernel `transpose`

The excerpt's lines start with a space, so problem matchers still read one finding a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.arch import DEFAULT_ARCH
from analyzer.report import arch_notes, display_path, finding_detail, kernel_name, severity_name

__all__ = ["render", "summary"]

_INDENT = "    "
_RESET = "\x1b[0m"
_STYLE = {
    "error": "\x1b[1;31m",
    "warning": "\x1b[1;35m",
    "note": "\x1b[1;36m",
    "path": "\x1b[1m",
    "code": "\x1b[2m",
    "caret": "\x1b[1;32m",
}


def render(reports: Sequence[Any], *, color: bool = False, arch: str = DEFAULT_ARCH, source: bool = False) -> str:
    """Every diagnostic and finding of `reports`, file by file, in source order, then a
    `warplint: note:` line for an architecture whose rules are assumed; with `source`, each
    first line is followed by the source line and carets under its place."""
    lines: list[str] = []
    excerpts = _Excerpts() if source else None
    for report in reports:
        entries: list[tuple[Any, str, str, str, list[str], Any, tuple[tuple[Any, str], ...]]] = []
        for d in report.diagnostics:
            loc = report.locate(None) if d.location is None else d.location
            notes = list(d.notes)
            entries.append((loc, severity_name(d.severity), d.message, d.code, notes, None, ()))
        for f in report.findings:
            loc = report.locate(getattr(f, "span", None))
            notes = []
            kernel = kernel_name(getattr(f, "kernel", None))
            if kernel:
                notes.append(f"in kernel `{kernel}`")
            notes.extend(finding_detail(getattr(f, "detail", None)))
            related = tuple((report.locate(r.span), str(r.message)) for r in getattr(f, "related", ()) or ())
            entries.append(
                (
                    loc,
                    severity_name(getattr(f, "severity", "warning")),
                    str(f.message),
                    str(f.code),
                    notes,
                    getattr(f, "fix", None),
                    related,
                )
            )
        entries.sort(key=lambda e: (e[0].path != report.path, e[0].path, e[0].line, e[0].column))
        for loc, severity, message, code, notes, fix, related in entries:
            lines.append(_headline(loc, severity, message, code, color))
            if excerpts is not None and code != "WL910":  # an unreadable path has no line to show
                lines.extend(excerpts.lines(loc, color))
            for note in notes:
                lines.extend(_detail("note", note))
            if fix:
                lines.extend(_detail("help", str(fix)))
            for where, message in related:  # gcc's "note: declared here" lines
                lines.append(_headline(where, "note", message, "", color))
    # no `path:line:col:` prefix: a problem matcher takes it for no finding
    lines.extend(f"warplint: note: {note.message}" for note in arch_notes(arch))
    return "".join(line + "\n" for line in lines)


def _headline(loc: Any, severity: str, message: str, code: str, color: bool) -> str:
    # one line: a message that spans lines would hide its tail from problem matchers
    message = " ".join(message.split("\n"))
    where = f"{display_path(loc.path)}:{loc.line}:{loc.column}:"
    tag = f"[{code}]" if code else ""
    if color:
        where = f"{_STYLE['path']}{where}{_RESET}"
        severity_text = f"{_STYLE.get(severity, '')}{severity}:{_RESET}"
        tag = f"{_STYLE['code']}{tag}{_RESET}" if tag else ""
    else:
        severity_text = f"{severity}:"
    return f"{where} {severity_text} {message}" + (f" {tag}" if tag else "")


class _Excerpts:
    """The source line of a place and the carets under it (`^~~~`), each file read once."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def lines(self, loc: Any, color: bool) -> list[str]:
        text = self._file(loc.path)
        if not text or not 1 <= loc.line <= len(text):
            return []
        line = text[loc.line - 1]
        start = min(max(loc.column - 1, 0), len(line))
        end = loc.end_column - 1 if loc.end_line == loc.line else len(line)
        width = max(1, min(end, len(line)) - start)
        # the same tabs as the source line, so that the carets stand under the access
        pad = "".join("\t" if ch == "\t" else " " for ch in line[:start])
        carets = "^" + "~" * (width - 1)
        if color:
            carets = f"{_STYLE['caret']}{carets}{_RESET}"
        number = str(loc.line)
        gutter = " " * max(5, len(number) + 1)
        return [f"{number.rjust(len(gutter))} | {line}", f"{gutter} | {pad}{carets}"]

    def _file(self, path: str) -> list[str] | None:
        if path not in self._files:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    self._files[path] = handle.read().splitlines()
            except (OSError, ValueError):
                self._files[path] = None
        return self._files[path]


def _detail(kind: str, text: str) -> list[str]:
    first, *rest = text.splitlines() or [""]
    head = f"{_INDENT}= {kind}: "
    return [head + first] + [" " * len(head) + line if line else "" for line in rest]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def summary(reports: Sequence[Any]) -> str:
    """One line for stderr: "Found 3 findings in 2 files." (plus errors, when there are;
    "Found 1 error in 1 file." when there are errors and no findings)."""
    findings = sum(len(r.findings) for r in reports)
    with_findings = sum(1 for r in reports if r.findings)
    errors = sum(1 for r in reports for d in r.diagnostics if severity_name(d.severity) == "error")
    checked = len(reports)
    if findings:
        text = f"Found {_plural(findings, 'finding')} in {_plural(with_findings, 'file')}."
    elif not errors:
        return f"No findings in {_plural(checked, 'file')}."
    else:  # errors alone (a path that cannot be read): never "No findings"
        text = "Found"
    with_errors = sum(1 for r in reports if any(severity_name(d.severity) == "error" for d in r.diagnostics))
    if errors:
        text += f" {_plural(errors, 'error')} in {_plural(with_errors, 'file')}."
    return text
