"""Positions and diagnostics: plain data shared by every stage.

A `Span` is a pair of offsets into the *preprocessed* text of one file. Only
`LineMap.resolve_span` (analyzer.source.linemap) turns it into a `Location`
(path, 1-based line and column in the original file); rules never compute
line numbers themselves.
"""

from __future__ import annotations

from enum import StrEnum

from analyzer.records import field, record


@record(order=True)
class Span:
    start: int  # offset of the first character in the preprocessed text
    end: int  # offset one past the last character

    def cover(self, other: Span) -> Span:
        return Span(min(self.start, other.start), max(self.end, other.end))


@record(order=True)
class Location:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int  # 1-based, one past the last character


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@record
class Diagnostic:
    """A problem with the input itself: bad syntax, an unsupported construct, a missing include.

    Exactly one of `span` (offsets into the preprocessed text) or `location`
    (already resolved, e.g. for a line the preprocessor consumed) is set.
    """

    severity: Severity
    message: str
    code: str = "WL900"
    span: Span | None = None
    location: Location | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
