"""The JSON Lines report: one JSON object a finding or diagnostic, one per line.

    {"path": "k.cu", "line": 23, "column": 18, "end_line": 23, "end_column": 38,
     "code": "WL101", "rule": "bank-conflict", "severity": "warning",
     "message": "...", "fix": "...", "kernel": "bank_stride4",
     "args": {"ways": 4, ...}, "detail": ["lanes 0, 8, 16 and 24 hit bank 0 ..."],
     "related": [{"path": "k.cu", "line": 13, ..., "message": "`data` declared here"}],
     "fingerprint": "3f0c..."}

(shown wrapped; each object is on one line). Every field of a JSON report's finding is
there, with `path` always given (in `related` too): lines and columns are 1-based and
`end_column` is one past the last character, `args` keeps the typed values, `detail` the
further lines (a diagnostic's notes), and `fingerprint` is the SARIF report's
`partialFingerprints["warplintAccess/v1"]`; `instances` and `edits` are there when the JSON
report has them. Diagnostics (WL9xx) have `kernel` and `fix`
null and `args` empty. Nothing is printed for a clean run, so `wc -l` counts the findings
and `jq -c` streams them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from analyzer.report import Record, display_path, records, repository_root
from analyzer.report.json import args_json, finding_extras
from analyzer.report.sarif import fingerprints

__all__ = ["obj", "render"]


def render(reports: Sequence[Any]) -> str:
    every = records(reports)
    prints = fingerprints(every, repository_root())
    return "".join(json.dumps(obj(r, fp), ensure_ascii=False) + "\n" for r, fp in zip(every, prints))


def _position(loc: Any) -> dict[str, Any]:
    return {
        "path": display_path(loc.path),
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.end_line,
        "end_column": loc.end_column,
    }


def obj(record: Record, fingerprint: str | None = None) -> dict[str, Any]:
    """One line's object; `fingerprint` as `sarif.fingerprints` gives it for the record."""
    out = _position(record.location)
    out.update(
        code=record.code,
        rule=record.rule,
        severity=record.severity,
        message=record.message,
        fix=record.fix,
        kernel=record.kernel,
        args=args_json(record.args),
        detail=list(record.notes),
        related=[{**_position(loc), "message": message} for loc, message in record.related],
    )
    out.update(finding_extras(out["args"], fingerprint, getattr(record.source, "text_edits", ())))
    return out
