"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

    ::warning file=samples/k.cu,line=23,col=18,endLine=23,endColumn=38,title=WL101 bank-conflict::4-way ...

Errors (a syntax error, WL901) are `::error`, notes `::notice`. Paths are relative to the
git work tree holding the current folder (what GitHub resolves them against), else to
the current folder. The suggested fix follows the message on a second line.

Escaping is GitHub's (actions/toolkit, `command.ts`): in the message `%`, CR and LF
become `%25`, `%0D` and `%0A`; in a property value `:` and `,` also become `%3A`
and `%2C`, since they separate properties.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.report import Record, display_path, records, repository_root, source_path

__all__ = ["command", "escape_data", "escape_property", "render"]

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def render(reports: Sequence[Any]) -> str:
    root = repository_root()
    return "".join(command(record, root) + "\n" for record in records(reports))


def command(record: Record, root: str) -> str:
    loc = record.location
    path = source_path(loc.path, root) or display_path(loc.path)
    properties = {
        "file": path,
        "line": loc.line,
        "col": loc.column,
        "endLine": loc.end_line,
        "endColumn": loc.end_column,
        "title": f"{record.code} {record.rule}".strip(),
    }
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    message = record.message + (f"\nhelp: {record.fix}" if record.fix else "")
    return f"::{_COMMAND.get(record.severity, 'warning')} {props}::{escape_data(message)}"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
