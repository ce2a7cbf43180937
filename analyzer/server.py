"""`warplint server`: a Language Server (LSP) over stdio, built on pygls (`warplint[lsp]`).

On didOpen, didChange and didSave the document's text (unsaved edits included) runs
through the whole pipeline (`api.check_source`), and its findings and diagnostics are
published with exact ranges. Findings whose fix is a known text change (`Finding.edits`:
the padding of WL101, the `__align__` of WL301) are offered as quick-fix code actions.

The conversion from reports to LSP data is plain functions over dicts in the protocol's
JSON shape (`document_diagnostics`, `code_actions`), so that it is tested without a
client; only `serve` imports pygls. LSP positions are 0-based, and their characters count
UTF-16 code units, whereas warplint's columns are 1-based and count code points.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzer.api import FileReport, Options

__all__ = ["FixedDiagnostic", "code_actions", "code_description", "document_diagnostics", "serve", "utf16_position"]

SOURCE = "warplint"
_SEVERITY = {"error": 1, "warning": 2, "note": 3}  # LSP DiagnosticSeverity


@dataclass
class FixedDiagnostic:
    """A published diagnostic and, when the finding has one, the text edits of its fix."""

    diagnostic: dict[str, Any]
    edits: list[dict[str, Any]] = field(default_factory=list)  # LSP TextEdits in the document
    title: str = ""


# ----------------------------------------------------------------------------- positions


def utf16_position(lines: Sequence[str], line: int, column: int) -> dict[str, int]:
    """The LSP position of 1-based `line`:`column` (code points), clamped to the text."""
    row = min(max(line - 1, 0), max(len(lines) - 1, 0))
    text = lines[row] if lines else ""
    prefix = text[: max(column - 1, 0)]
    return {"line": row, "character": len(prefix.encode("utf-16-le")) // 2}


def _range(lines: Sequence[str], loc: Any) -> dict[str, Any]:
    return {
        "start": utf16_position(lines, loc.line, loc.column),
        "end": utf16_position(lines, loc.end_line, loc.end_column),
    }


def _text_at(lines: Sequence[str], loc: Any) -> str | None:
    """The document's text at a location (lines joined by "\\n"), None when out of range."""
    if not 1 <= loc.line <= loc.end_line <= len(lines):
        return None
    if loc.line == loc.end_line:
        return lines[loc.line - 1][loc.column - 1 : loc.end_column - 1]
    parts = [lines[loc.line - 1][loc.column - 1 :]]
    parts += lines[loc.line : loc.end_line - 1]
    parts.append(lines[loc.end_line - 1][: loc.end_column - 1])
    return "\n".join(parts)


def _same_file(a: str, b: str) -> bool:
    import os

    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


# ----------------------------------------------------------------------------- diagnostics


def document_diagnostics(report: FileReport, text: str, uri: str) -> list[FixedDiagnostic]:
    """The LSP diagnostics of one document (`text` is its content, `uri` its address).

    A problem located in another file (an included header) is shown on the document's
    first line with its place in the message, so that it is not lost.
    """
    lines = text.split("\n")
    out: list[FixedDiagnostic] = []
    seen: set[tuple] = set()

    def add(fixed: FixedDiagnostic) -> None:
        d = fixed.diagnostic
        key = (
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["range"]["end"]["line"],
            d["range"]["end"]["character"],
            d["code"],
            d["message"],
        )
        if key not in seen:  # a kernel analysed for several launches repeats its findings
            seen.add(key)
            out.append(fixed)

    def place(loc: Any, message: str) -> tuple[dict[str, Any], str]:
        if _same_file(loc.path, report.path):
            return _range(lines, loc), message
        top = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        return top, f"{loc.path}:{loc.line}:{loc.column}: {message}"

    for d in report.diagnostics:
        loc = d.location or report.locate(d.span)
        where, message = place(loc, d.message)
        diagnostic = {
            "range": where,
            "severity": _SEVERITY.get(_severity(d.severity), 2),
            "code": d.code,
            "source": SOURCE,
            "message": message,
        }
        if d.notes:
            diagnostic["relatedInformation"] = [
                {"location": {"uri": uri, "range": where}, "message": note} for note in d.notes
            ]
        add(FixedDiagnostic(diagnostic))

    for f in report.findings:
        loc = report.locate(f.span)
        where, message = place(loc, str(f.message))
        related = []
        notes = [f"in kernel `{f.kernel}`", *f.detail] + ([f"fix: {f.fix}"] if f.fix else [])
        for note in notes:
            related.append({"location": {"uri": uri, "range": where}, "message": str(note)})
        for r in f.related:
            rloc = report.locate(r.span)
            if _same_file(rloc.path, report.path):
                related.append({"location": {"uri": uri, "range": _range(lines, rloc)}, "message": r.message})
        diagnostic = {
            "range": where,
            "severity": _SEVERITY.get(_severity(f.severity), 2),
            "code": str(f.code),
            "source": SOURCE,
            "message": message,
            "relatedInformation": related,
        }
        href = code_description(str(f.code))
        if href:
            diagnostic["codeDescription"] = {"href": href}
        edits = _text_edits(report, f, lines)
        title = _title(f, edits) if edits else ""
        for edit in edits:  # where the quick fix would change the text
            related.append({"location": {"uri": uri, "range": edit["range"]}, "message": title})
        add(FixedDiagnostic(diagnostic, edits, title))
    return out


@functools.cache
def code_description(code: str) -> str | None:
    """The first reference of a rule's documentation (its `## References` section: the
    CUDA guide section that explains the cost), for LSP's codeDescription link."""
    try:
        from analyzer.rules.registry import RULES
    except ImportError:
        return None
    rule = RULES.get(code)
    if rule is None:
        return None
    _, _, references = rule.documentation().partition("## References")
    found = re.search(r"<(https://[^>\s]+)>", references)
    return found.group(1) if found else None


def _severity(severity: Any) -> str:
    return str(getattr(severity, "value", severity)).lower()


def _text_edits(report: FileReport, finding: Any, lines: Sequence[str]) -> list[dict[str, Any]]:
    """The finding's edits as LSP TextEdits, or none at all when any of them does not land
    exactly in this document (a macro expansion or an included file in between)."""
    edits = []
    for edit in getattr(finding, "edits", ()) or ():
        loc = report.locate(edit.span)
        if not _same_file(loc.path, report.path) or _text_at(lines, loc) != edit.old:
            return []
        edits.append({"range": _range(lines, loc), "newText": edit.text})
    return edits


def _title(finding: Any, edits: list[dict[str, Any]]) -> str:
    """`warplint: pad `tile` (32 -> 33)`, `warplint: insert `__align__(16)``."""
    changes = []
    for edit, lsp_edit in zip(finding.edits, edits):
        if edit.old:
            changes.append(f"`{edit.old}` -> `{lsp_edit['newText']}`")
        else:
            changes.append(f"insert `{lsp_edit['newText'].strip()}`")
    what = {"WL101": f"pad `{finding.args.get('array', '')}`", "WL301": f"align `{finding.args.get('type', '')}`"}.get(
        str(finding.code), "apply the fix"
    )
    return f"warplint: {what} ({', '.join(changes)}) [{finding.code}]"


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def key(p: dict[str, int]) -> tuple[int, int]:
        return p["line"], p["character"]

    return key(a["start"]) <= key(b["end"]) and key(b["start"]) <= key(a["end"])


def code_actions(fixed: Sequence[FixedDiagnostic], uri: str, where: dict[str, Any]) -> list[dict[str, Any]]:
    """Quick fixes (LSP CodeActions) for the diagnostics that overlap the range `where`."""
    actions = []
    for item in fixed:
        if item.edits and _overlaps(item.diagnostic["range"], where):
            actions.append(
                {
                    "title": item.title,
                    "kind": "quickfix",
                    "diagnostics": [item.diagnostic],
                    "isPreferred": True,
                    "edit": {"changes": {uri: item.edits}},
                }
            )
    return actions


# ----------------------------------------------------------------------------- the server


def serve(options: Options | None = None) -> int:
    """Run the language server on stdin/stdout until the client says exit. Needs pygls."""
    from lsprotocol import types
    from lsprotocol.converters import get_converter

    try:
        from pygls.lsp.server import LanguageServer  # pygls 2

        publish_v2 = True
    except ImportError:  # pygls 1.x
        from pygls.server import LanguageServer  # type: ignore[attr-defined, no-redef, unused-ignore]

        publish_v2 = False
    from pygls.uris import to_fs_path

    from analyzer import __version__
    from analyzer.api import check_source

    options = options or Options()
    converter = get_converter()
    server = LanguageServer("warplint", __version__)
    fixes: dict[str, list[FixedDiagnostic]] = {}  # uri -> what was last published
    latest: dict[str, int] = {}  # uri -> number of the newest analysis asked for

    def publish(uri: str, diagnostics: list[Any]) -> None:
        if publish_v2:
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        else:
            server.publish_diagnostics(uri, diagnostics)  # type: ignore[attr-defined]

    async def analyse(uri: str) -> None:
        # The analysis runs in a thread so that the server keeps reading messages; a
        # result that a newer edit has made stale is dropped, not published.
        ticket = latest[uri] = latest.get(uri, 0) + 1
        document = server.workspace.get_text_document(uri)
        text = document.source
        path = to_fs_path(uri) or uri
        report = await asyncio.get_running_loop().run_in_executor(None, check_source, path, text, options)
        if latest.get(uri) != ticket:
            return
        fixed = document_diagnostics(report, text, uri)
        fixes[uri] = fixed
        publish(uri, [converter.structure(f.diagnostic, types.Diagnostic) for f in fixed])

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: Any, params: types.DidOpenTextDocumentParams) -> None:
        await analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: Any, params: types.DidChangeTextDocumentParams) -> None:
        await analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: Any, params: types.DidSaveTextDocumentParams) -> None:
        await analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        fixes.pop(uri, None)
        latest[uri] = latest.get(uri, 0) + 1  # an analysis still running is not published
        publish(uri, [])

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_action(ls: Any, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        where = converter.unstructure(params.range)
        return [converter.structure(a, types.CodeAction) for a in code_actions(fixes.get(uri, []), uri, where)]

    server.start_io()
    return 0
