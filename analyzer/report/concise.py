"""The concise report: one line a finding, in ruff's `--output-format concise` shape.

    path:line:col: CODE message

Input diagnostics (WL9xx) come out the same way, so a syntax error is never silent.
Paths are those of the text report (relative to the current folder when below it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.report import Record, display_path, records

__all__ = ["line", "render"]


def render(reports: Sequence[Any]) -> str:
    return "".join(line(record) + "\n" for record in records(reports))


def line(record: Record) -> str:
    loc = record.location
    # one line, whatever the message holds: grep and problem matchers read lines
    message = " ".join(record.message.split())
    return f"{display_path(loc.path)}:{loc.line}:{loc.column}: {record.code} {message}"
