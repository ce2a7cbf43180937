"""The SARIF 2.1.0 report, shaped for GitHub code scanning (`github/codeql-action/upload-sarif`).

One run. `tool.driver.rules` lists every rule and every input-diagnostic code (WL9xx)
from `analyzer.rules.registry`: `shortDescription` is the rule's summary,
`fullDescription` its docstring's "What it does", `help` the whole docstring (what
`warplint explain` prints) as text and Markdown. Each finding and each diagnostic is a
result with `ruleId`, `ruleIndex`, `level`, `message.text` and one location: a path
relative to `%SRCROOT%` (the git work tree holding the current folder, else the current
folder; forward slashes) and a region. Columns count Unicode code points, and
`endColumn` is one past the last character, as SARIF defines it.

`partialFingerprints["warplintAccess/v1"]` hashes the rule, the path, the kernel and the
access as written (whitespace collapsed), plus a counter for repeats of the same access,
but not the line: a finding keeps its fingerprint when code above it moves, so code
scanning does not close and reopen the alert. Tool errors (WL900 internal error, WL910
unreadable input) are also `toolExecutionNotifications` of the invocation.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import analyzer
from analyzer.report import Record, records, repository_root, source_path

__all__ = ["FINGERPRINT", "INFORMATION_URI", "SCHEMA_URI", "document", "fingerprint", "fingerprints", "render"]

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/warplint/"  # the project has no web site of its own yet
FINGERPRINT = "warplintAccess/v1"
SRCROOT = "%SRCROOT%"

# Codes whose results mean warplint could not do its job (exit status 2).
_TOOL_ERRORS = frozenset({"WL900", "WL910"})
# The level each WL9xx code is emitted with by the stage that reports it (the rules carry
# their own `severity`); SARIF wants a default per rule, the result says the actual one.
_DIAGNOSTIC_LEVEL = {"WL902": "warning", "WL903": "warning", "WL904": "note", "WL905": "warning"}
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def render(reports: Sequence[Any]) -> str:
    return json.dumps(document(reports), indent=2, ensure_ascii=False) + "\n"


def document(reports: Sequence[Any], cwd: str | None = None) -> dict[str, Any]:
    """The SARIF log as JSON-ready data; paths relative to the repository holding `cwd`."""
    root = repository_root(cwd)
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    all_records = records(reports)
    results = [_result(r, index, root, fp) for r, fp in zip(all_records, fingerprints(all_records, root))]
    tool_errors = [r for r in all_records if r.code in _TOOL_ERRORS]
    invocation: dict[str, Any] = {"executionSuccessful": not tool_errors}
    if tool_errors:
        invocation["toolExecutionNotifications"] = [_notification(r, root) for r in tool_errors]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "warplint",
                        "version": analyzer.__version__,
                        "semanticVersion": analyzer.__version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


# ----------------------------------------------------------------------------- rules


def _rules() -> list[dict[str, Any]]:
    """`reportingDescriptor`s for every rule, then every WL9xx code, in code order."""
    from analyzer.rules import registry

    out = []
    for code, rule in sorted(registry.RULES.items()):
        full = _section(rule.documentation(), "What it does") or rule.summary
        out.append(
            _descriptor(
                code,
                rule.name,
                rule.summary,
                full,
                registry.rule_documentation(code),
                _LEVEL.get(rule.severity, "warning"),
                ("cuda", "performance"),
            )
        )
    for code, (name, summary) in sorted(registry.DIAGNOSTIC_CODES.items()):
        out.append(
            _descriptor(
                code,
                name,
                summary,
                summary,
                registry.rule_documentation(code),
                _DIAGNOSTIC_LEVEL.get(code, "error"),
                ("cuda", "input"),
            )
        )
    return out


def _descriptor(
    code: str, name: str, summary: str, full: str, help_text: str, level: str, tags: tuple[str, ...]
) -> dict[str, Any]:
    # help is what `warplint explain CODE` prints; the descriptions are sentences
    summary, full, help_text = _sentence(summary), _sentence(full), help_text.rstrip("\n")
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": full},
        "help": {"text": help_text, "markdown": help_text},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": list(tags)},
    }


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _section(doc: str, title: str) -> str:
    """The text of a docstring's "## title" section, joined into one paragraph."""
    lines = doc.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == f"## {title}") + 1
    except StopIteration:
        return ""
    body = []
    for line in lines[start:]:
        if line.startswith("## "):
            break
        body.append(line.strip())
    return " ".join(" ".join(body).split())


# ----------------------------------------------------------------------------- results


def _artifact(path: str, root: str) -> dict[str, Any]:
    # a path's bytes are what a URI encodes: a file name that is not UTF-8 (held by Python with
    # surrogate escapes) is percent-encoded byte for byte
    if path.startswith("<"):  # no file: "<command-line>" for a -D macro, "<built-in>"
        return {"uri": quote(os.fsencode(path), safe="")}
    relative = source_path(path, root)
    if relative is None:  # outside the repository: an absolute file URI
        return {"uri": "file://" + quote(os.fsencode(Path(os.path.abspath(path)).as_posix()), safe="/")}
    return {"uri": quote(os.fsencode(relative), safe="/"), "uriBaseId": SRCROOT}


def _region(loc: Any) -> dict[str, int]:
    return {"startLine": loc.line, "startColumn": loc.column, "endLine": loc.end_line, "endColumn": loc.end_column}


def _physical(loc: Any, root: str) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": _artifact(loc.path, root), "region": _region(loc)}}


def _result(record: Record, index: dict[str, int], root: str, fingerprint_: str) -> dict[str, Any]:
    text = record.message + (f"\nFix: {record.fix}" if record.fix else "")
    result: dict[str, Any] = {"ruleId": record.code}
    if record.code in index:
        result["ruleIndex"] = index[record.code]
    result.update(
        level=_LEVEL.get(record.severity, "warning"),
        message={"text": text},
        locations=[_physical(record.location, root)],
        partialFingerprints={FINGERPRINT: fingerprint_},
    )
    text_edits = getattr(record.source, "text_edits", ())
    if text_edits:
        result["fixes"] = [_fix(record, text_edits, root)]
    if record.related:
        result["relatedLocations"] = [
            {"id": i, **_physical(loc, root), "message": {"text": message}}
            for i, (loc, message) in enumerate(record.related, start=1)
        ]
    properties: dict[str, Any] = {}
    if record.kernel:
        properties["kernel"] = record.kernel
    if record.notes:
        properties["notes"] = list(record.notes)
    if record.args:
        properties["args"] = {str(k): _plain(v) for k, v in dict(record.args).items()}
    if properties:
        result["properties"] = properties
    return result


def _fix(record: Record, text_edits: Sequence[Any], root: str) -> dict[str, Any]:
    """SARIF's `fix`: the verified edits of a finding's fix (`analyzer.fixes`), file by file."""
    changes: dict[str, list[dict[str, Any]]] = {}
    for edit in text_edits:
        region = {
            "startLine": edit.line,
            "startColumn": edit.column,
            "endLine": edit.end_line,
            "endColumn": edit.end_column,
        }
        changes.setdefault(edit.path, []).append({"deletedRegion": region, "insertedContent": {"text": edit.text}})
    return {
        "description": {"text": record.fix or "apply the fix"},
        "artifactChanges": [
            {"artifactLocation": _artifact(path, root), "replacements": replacements}
            for path, replacements in changes.items()
        ],
    }


def _notification(record: Record, root: str) -> dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": record.message},
        "descriptor": {"id": record.code},
        "locations": [_physical(record.location, root)],
    }


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(getattr(value, "value", value))


# ----------------------------------------------------------------------------- fingerprints


def fingerprint(code: str, path: str, kernel: str | None, text: str, occurrence: int = 0) -> str:
    """A stable hash of what a finding is about, not where it is: rule, repository path,
    kernel, the access with whitespace collapsed, and which repeat of that access it is."""
    key = "\0".join((code, path, kernel or "", " ".join(text.split()), str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]  # (a path's own bytes)


def fingerprints(all_records: Iterable[Record], root: str) -> list[str]:
    """The fingerprint of each record, in order: the repeat counter runs over `all_records`,
    so pass every record of the run (`records(reports)`), as SARIF and JSON both do."""
    sources = _SourceCache()
    seen: dict[tuple[str, str, str, str], int] = {}
    out = []
    for record in all_records:
        path = source_path(record.path, root) or os.path.abspath(record.path)
        text = sources.text(record.location) or record.message
        key = (record.code, path, record.kernel or "", " ".join(text.split()))
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        out.append(fingerprint(record.code, path, record.kernel, text, occurrence))
    return out


class _SourceCache:
    """The original text of a region (`data[base + 4 * tid]`), each file read once."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}

    def text(self, loc: Any) -> str:
        lines = self._file(loc.path)
        if not lines or not 1 <= loc.line <= loc.end_line <= len(lines):
            return ""
        if loc.line == loc.end_line:
            return lines[loc.line - 1][loc.column - 1 : loc.end_column - 1]
        first = lines[loc.line - 1][loc.column - 1 :]
        middle = lines[loc.line : loc.end_line - 1]
        last = lines[loc.end_line - 1][: loc.end_column - 1]
        return "\n".join([first, *middle, last])

    def _file(self, path: str) -> list[str] | None:
        if path not in self._lines:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    self._lines[path] = handle.read().splitlines()
            except OSError:
                self._lines[path] = None
        return self._lines[path]
