"""The JSON Lines report: one JSON object a finding or diagnostic, one per line.

    {"path": "k.cu", "line": 23, "column": 18, "end_line": 23, "end_column": 38,
     "code": "WL101", "rule": "bank-conflict", "severity": "warning",
     "message": "...", "fix": "...", "kernel": "bank_stride4"}

(shown wrapped; each object is on one line). Lines and columns are 1-based and
`end_column` is one past the last character, as in the JSON report. Diagnostics
(WL9xx) have `kernel` and `fix` null. Nothing is printed for a clean run, so
`wc -l` counts the findings and `jq -c` streams them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from analyzer.report import Record, display_path, records

__all__ = ["obj", "render"]


def render(reports: Sequence[Any]) -> str:
    return "".join(json.dumps(obj(record), ensure_ascii=False) + "\n" for record in records(reports))


def obj(record: Record) -> dict[str, Any]:
    loc = record.location
    return {
        "path": display_path(loc.path),
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.end_line,
        "end_column": loc.end_column,
        "code": record.code,
        "rule": record.rule,
        "severity": record.severity,
        "message": record.message,
        "fix": record.fix,
        "kernel": record.kernel,
    }
