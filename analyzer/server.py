"""`warplint server`: a Language Server (LSP) over stdio, built on pygls (`warplint[lsp]`).

What an editor gets, at par with the command line:

- diagnostics for the latest text of a document (unsaved edits included), analysed with the
  configuration `check` would use for that file (`pyproject.toml` / `warplint.toml` found from
  the document's folder upward, merged with the server's command line); a broken configuration
  is one error diagnostic. Published diagnostics carry the document's version;
- hover on an access: its cost per request against the ideal and the lanes picture that
  `warplint show` draws, as Markdown;
- code actions: each finding's verified fix (`Finding.text_edits`, made by `analyzer.fixes`,
  in the user's own spelling, macro sizes included), and a `warplint: ignore[CODE]` comment
  for every diagnostic. The diagnostics are published first, then the fixes are verified (each
  a re-analysis of the edited text) and the diagnostics published again with them.

Only the latest text is analysed (`Scheduler`): edits are debounced (`DEBOUNCE_SECONDS`, or the
client's `initializationOptions.debounceMs`), an analysis of an older version still running is
cancelled, and a stale result is dropped. What the previous text's analysis found of each
kernel is re-used where nothing it read has changed (`analyzer.server_memo.KernelMemo`).

The conversion from reports to LSP data is plain functions over dicts in the protocol's JSON
shape (`document_diagnostics`, `code_actions`, `hover_markdown`), so that it is tested without a
client; only `serve` imports pygls. LSP positions are 0-based, and their characters count
UTF-16 code units, whereas warplint's columns are 1-based and count code points.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from analyzer import records
from analyzer.api import FileReport, Options
from analyzer.server_memo import KernelMemo

__all__ = [
    "DEBOUNCE_SECONDS",
    "Cancelled",
    "FixedDiagnostic",
    "Scheduler",
    "code_actions",
    "code_description",
    "code_points",
    "configuration_diagnostic",
    "document_diagnostics",
    "hover_markdown",
    "serve",
    "suppression_edit",
    "utf16_position",
]

SOURCE = "warplint"
DEBOUNCE_SECONDS = 0.15  # an edit waits this long for the next; `initializationOptions.debounceMs` changes it
MAX_HOVERED = 3  # accesses drawn in one hover
UNSUPPRESSIBLE = frozenset({"WL900", "WL910", "WL920", "WL921", "config"})  # what no comment silences
_IGNORE_LIST = re.compile(r"warplint:\s*ignore\[([^\]]*)\]")
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
        title = _title(f, edits, lines) if edits else ""
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
    """The finding's verified fix (`Finding.text_edits`, in the user's own spelling: a macro
    stays a macro) as LSP TextEdits, or none when any of them lies in another file."""
    edits = []
    for edit in getattr(finding, "text_edits", ()) or ():
        if not _same_file(edit.path, report.path):
            return []
        edits.append({"range": _range(lines, edit), "newText": edit.text})
    return edits


def _title(finding: Any, edits: list[dict[str, Any]], lines: Sequence[str]) -> str:
    """`warplint: pad `tile` (`TILE_DIM` -> `TILE_DIM + 1`) [WL101]`."""
    changes = []
    for edit in finding.text_edits:
        old = _text_at(lines, edit) or ""
        changes.append(f"`{old}` -> `{edit.text}`" if old else f"insert `{edit.text.strip()}`")
    what = {"WL101": f"pad `{finding.args.get('array', '')}`", "WL301": f"align `{finding.args.get('type', '')}`"}.get(
        str(finding.code), "apply the fix"
    )
    return f"warplint: {what} ({', '.join(changes)}) [{finding.code}]"


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def key(p: dict[str, int]) -> tuple[int, int]:
        return p["line"], p["character"]

    return key(a["start"]) <= key(b["end"]) and key(b["start"]) <= key(a["end"])


def code_actions(
    fixed: Sequence[FixedDiagnostic], uri: str, where: dict[str, Any], lines: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Code actions for the diagnostics that overlap the range `where`: each verified fix
    (preferred), then, given the document's `lines`, a suppression comment for each code."""
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
    offered: set[tuple[int, str]] = set()
    for item in fixed:
        d = item.diagnostic
        row, code = d["range"]["start"]["line"], str(d["code"])
        if (row, code) in offered or not _overlaps(d["range"], where) or code in UNSUPPRESSIBLE:
            continue
        edit = suppression_edit(lines, row, code)
        if edit is not None:
            offered.add((row, code))
            actions.append(
                {
                    "title": f"warplint: suppress {code} on this line (`warplint: ignore[{code}]`)",
                    "kind": "quickfix",
                    "diagnostics": [d],
                    "edit": {"changes": {uri: [edit]}},
                }
            )
    return actions


def suppression_edit(lines: Sequence[str], row: int, code: str) -> dict[str, Any] | None:
    """The LSP TextEdit that silences `code` on 0-based line `row`: the code added to a
    `warplint: ignore[...]` comment already there, else ` // warplint: ignore[CODE]` at the end
    of the line. None for a line that does not exist or goes on after a backslash (a comment
    there would swallow the next line)."""
    if not 0 <= row < len(lines):
        return None
    text = lines[row].rstrip("\r")
    if text.rstrip().endswith("\\"):
        return None
    existing = _IGNORE_LIST.search(text)
    if existing is not None:
        codes = [c.strip() for c in existing.group(1).split(",")]
        if code in codes:
            return None
        at = utf16_position(lines, row + 1, existing.end(1) + 1)
        return {"range": {"start": at, "end": at}, "newText": f",{code}"}
    end = utf16_position(lines, row + 1, len(text.rstrip()) + 1)
    return {"range": {"start": end, "end": end}, "newText": f"  // warplint: ignore[{code}]"}


# ----------------------------------------------------------------------------- hover


def hover_markdown(report: FileReport, line: int, column: int) -> str | None:
    """What a hover at 1-based `line`:`column` shows: for each access analysed there, its cost
    per request against the ideal and the lanes picture of `warplint show`, as Markdown; None
    when no access covers the place."""
    from analyzer.report.show import accesses_at, render_show

    shown = accesses_at(report, line, column)
    if not shown:
        return None
    parts = []
    for item in shown[:MAX_HOVERED]:
        cost = item.cost
        unit = cost.unit
        verdict = ""
        if cost.per_request is not None and cost.ideal_per_request:
            times = cost.per_request / cost.ideal_per_request
            verdict = " (ideal)" if times <= 1 else f" ({times:g}x the ideal)"
        parts.append(
            f"**warplint**: {cost.space} {cost.op} `{cost.text}` in kernel `{cost.kernel}`: "
            f"{_count(cost.per_request)} {unit} per request, ideal {_count(cost.ideal_per_request)}{verdict}\n\n"
            f"```text\n{render_show(report, [item]).rstrip()}\n```"
        )
    if len(shown) > MAX_HOVERED:
        parts.append(f"and {len(shown) - MAX_HOVERED} more (`warplint show` draws every one)")
    return "\n\n---\n\n".join(parts)


def _count(value: Any) -> str:
    return "unknown" if value is None else str(value)


def code_points(lines: Sequence[str], row: int, character: int) -> int:
    """The 1-based column (code points) of a 0-based LSP position (UTF-16 code units)."""
    if not 0 <= row < len(lines):
        return character + 1
    units = 0
    for index, char in enumerate(lines[row]):
        if units >= character:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(lines[row]) + 1


# ----------------------------------------------------------------------------- the latest text only


class Cancelled(BaseException):
    """Raised inside an analysis that a newer version of its document made useless. A
    BaseException, so that the pipeline's `except Exception` (an internal error, then the next
    kernel) does not catch it."""


class Job:
    """One analysis running in the analysis thread, and how to stop it there."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.thread = threading.get_ident()
        self.active = True

    def cancel(self, lock: threading.Lock) -> None:
        """Raise `Cancelled` in the analysis thread (at its next Python instruction)."""
        with lock:
            if self.active:
                self.active = False
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread), ctypes.py_object(Cancelled))


class Scheduler:
    """Which analyses run, so that only the latest text of a document is analysed.

    An edit waits `debounce` seconds for the next one (each edit restarts the wait), then its
    text is analysed in the one analysis thread; an analysis still running for an older version
    of the same document is cancelled (`Cancelled`, raised in its thread), and a result that a
    newer version has made stale is dropped, never published. `analyse(uri, text)` runs in the
    analysis thread, then `publish(uri, version, result)` in the event loop; then, when given,
    `refine(uri, text, result)` in the thread (the fixes verified: slower, and not needed for the
    diagnostics), whose result, when not None, is published again, under the same rules.
    """

    def __init__(
        self,
        analyse: Callable[[str, str], Any],
        publish: Callable[[str, int, Any], None],
        debounce: float = DEBOUNCE_SECONDS,
        refine: Callable[[str, str, Any], Any] | None = None,
    ) -> None:
        self.analyse, self.publish, self.debounce, self.refine = analyse, publish, debounce, refine
        self.latest: dict[str, int] = {}  # uri -> the newest version seen
        self.waiting: dict[str, asyncio.Task[None]] = {}  # uri -> its debounce
        self.running: dict[str, Job] = {}  # uri -> the analysis in the thread
        self.lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warplint-analysis")

    def changed(self, uri: str, text: str, version: int, wait: bool = True) -> None:
        """A new version of a document (call in the event loop): analyse it after the debounce
        (at once with `wait=False`: an opened document), dropping what older versions started."""
        self.latest[uri] = version
        self._stop(uri, version)
        self.waiting[uri] = asyncio.ensure_future(self._later(uri, text, version, self.debounce if wait else 0.0))

    def closed(self, uri: str) -> None:
        self.latest[uri] = self.latest.get(uri, 0) + 1  # nothing older is published
        self._stop(uri, self.latest[uri])

    def _stop(self, uri: str, version: int) -> None:
        earlier = self.waiting.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
        running = self.running.get(uri)
        if running is not None and running.version != version:
            running.cancel(self.lock)

    async def _later(self, uri: str, text: str, version: int, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if self.waiting.get(uri) is asyncio.current_task():
            del self.waiting[uri]
        result = await self._in_thread(uri, version, lambda: self.analyse(uri, text))
        if result is None:
            return
        self.publish(uri, version, result)
        if self.refine is not None:
            refine = self.refine
            better = await self._in_thread(uri, version, lambda: refine(uri, text, result))
            if better is not None:
                self.publish(uri, version, better)

    async def _in_thread(self, uri: str, version: int, work: Callable[[], Any]) -> Any:
        """`work()` in the analysis thread for `version`; None when it was cancelled or is stale."""
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self.executor, self._run, uri, version, work)
        except Cancelled:
            return None
        return result if self.latest.get(uri) == version else None

    def _run(self, uri: str, version: int, work: Callable[[], Any]) -> Any:
        """In the analysis thread: `work()` for one version, None when it is stale."""
        if self.latest.get(uri) != version:
            return None  # a newer version came while this one waited for the thread
        job = self.running[uri] = Job(version)
        try:
            return work()
        except Cancelled:
            return None
        finally:
            with self.lock:
                job.active = False
                if self.running.get(uri) is job:
                    del self.running[uri]


# ----------------------------------------------------------------------------- the server


@dataclass
class Analysed:
    """The latest analysis published for a document: what hover and code actions read."""

    report: FileReport
    text: str
    fixed: list[FixedDiagnostic]
    options: Options | None = None  # what it was analysed with (the fixes are verified with the same)


def configuration_diagnostic(message: str) -> dict[str, Any]:
    """A broken configuration file, shown on the document's first line (nothing is analysed)."""
    top = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    return {"range": top, "severity": 1, "code": "config", "source": SOURCE, "message": message}


def analyse_document(
    uri: str, path: str, text: str, options_for: Callable[[str], Options], memo: KernelMemo | None = None
) -> Analysed | str:
    """The analysis of a document's text, without its fixes (`with_fixes` verifies them), or
    the error of a broken configuration file. With `memo` (the document's), the kernels whose
    analysis the previous text already has are not analysed again."""
    from analyzer.api import check_source
    from analyzer.config import ConfigError
    from analyzer.gc_pause import gc_paused_here
    from analyzer.places import merge_reports

    try:
        options = options_for(path)
    except ConfigError as err:
        return str(err)
    if memo is None or options.verify:  # --verify runs the simulator on the analyses: left as it is
        report = check_source(path, text, records.replace(options, fixes=False))
    else:
        with memo.analysing(), gc_paused_here():
            report = check_source(path, text, records.replace(options, fixes=False))
    report = merge_reports([report])[0]  # one diagnostic per place and rule, as `check` prints
    return Analysed(report, text, document_diagnostics(report, text, uri), options)


def with_fixes(uri: str, text: str, result: Analysed | str) -> Analysed | None:
    """`result` with its findings' fixes verified (a re-analysis each), or None when there is
    nothing to verify."""
    from analyzer.api import verify_fixes

    if isinstance(result, str) or result.options is None or not any(f.edits for f in result.report.findings):
        return None
    verify_fixes(result.report, result.options, text)
    return Analysed(result.report, text, document_diagnostics(result.report, text, uri), result.options)


def _add_requests(server: Any, types: Any, converter: Any, analysed: dict[str, Analysed]) -> None:
    """The requests that read the latest analysis published: code actions and hover."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_action(ls: Any, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        done = analysed.get(uri)
        if done is None:
            return []
        where = converter.unstructure(params.range)
        actions = code_actions(done.fixed, uri, where, done.text.split("\n"))
        return [converter.structure(a, types.CodeAction) for a in actions]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: Any, params: types.HoverParams) -> types.Hover | None:
        done = analysed.get(params.text_document.uri)
        if done is None:
            return None
        lines = done.text.split("\n")
        row = params.position.line
        text = hover_markdown(done.report, row + 1, code_points(lines, row, params.position.character))
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def _language_server_class() -> tuple[Any, bool]:
    """pygls' LanguageServer, and whether it is pygls 2's (which publishes diagnostics by its
    protocol method's name)."""
    try:
        from pygls.lsp.server import LanguageServer  # pygls 2

        return LanguageServer, True
    except ImportError:  # pygls 1.x
        from pygls.server import LanguageServer  # type: ignore[attr-defined, no-redef, unused-ignore]

        return LanguageServer, False


def serve(options_for: Callable[[str], Options] | None = None) -> int:
    """Run the language server on stdin/stdout until the client says exit. Needs pygls.

    `options_for(path)` gives a document's options: the command line's merged with the
    configuration file found from the document's folder upward, as `check` does (read again for
    each analysis, so an edited configuration applies at the next edit); it may raise
    `analyzer.config.ConfigError`, shown as a diagnostic."""
    from lsprotocol import types
    from lsprotocol.converters import get_converter
    from pygls.uris import to_fs_path

    LanguageServer, publish_v2 = _language_server_class()

    from analyzer import __version__

    options_for = options_for or (lambda path: Options())
    converter = get_converter()
    server = LanguageServer("warplint", __version__)
    analysed: dict[str, Analysed] = {}  # uri -> what was last published
    memos: dict[str, KernelMemo] = {}  # uri -> its kernel analyses, for the next edit

    def analyse(uri: str, text: str) -> Analysed | str:
        memo = memos.setdefault(uri, KernelMemo())
        return analyse_document(uri, to_fs_path(uri) or uri, text, options_for, memo)

    def publish(uri: str, version: int, result: Analysed | str) -> None:
        if isinstance(result, str):
            analysed.pop(uri, None)
            send(uri, version, [configuration_diagnostic(result)])
        else:
            analysed[uri] = result
            send(uri, version, [f.diagnostic for f in result.fixed])

    def send(uri: str, version: int, diagnostics: list[dict[str, Any]]) -> None:
        structured = [converter.structure(d, types.Diagnostic) for d in diagnostics]
        if publish_v2:
            server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=structured, version=version)
            )
        else:
            server.publish_diagnostics(uri, structured, version=version)  # pygls 1

    scheduler = Scheduler(analyse, publish, refine=with_fixes)
    _add_requests(server, types, converter, analysed)

    @server.feature(types.INITIALIZE)
    def initialize(ls: Any, params: types.InitializeParams) -> None:
        settings = params.initialization_options
        if isinstance(settings, dict) and isinstance(settings.get("debounceMs"), (int, float)):
            scheduler.debounce = max(0.0, settings["debounceMs"] / 1000)

    def changed(uri: str, wait: bool) -> None:
        document = server.workspace.get_text_document(uri)
        scheduler.changed(uri, document.source, document.version or 0, wait)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: types.DidOpenTextDocumentParams) -> None:
        changed(params.text_document.uri, wait=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: types.DidChangeTextDocumentParams) -> None:
        changed(params.text_document.uri, wait=True)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: types.DidSaveTextDocumentParams) -> None:
        changed(params.text_document.uri, wait=True)  # the configuration may have changed

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        analysed.pop(uri, None)
        memos.pop(uri, None)
        scheduler.closed(uri)
        send(uri, scheduler.latest[uri], [])

    server.start_io()
    return 0
