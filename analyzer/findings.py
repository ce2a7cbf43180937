"""Findings: what the rules report about a kernel (plain data, no formatting logic).

A `Finding` carries its wording already formatted (`message`, from the rule's
template) and the typed values behind it (`args`), so the text reporter prints
`message` and `detail`, and the JSON and SARIF reporters emit `args` as they are.
Positions are `Span`s into the preprocessed text; only reporters resolve them to
lines and columns.
"""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.diagnostics import Span
from analyzer.records import field, record

__all__ = ["Edit", "Finding", "Related", "TextEdit"]


@record
class Related:
    """Another place that explains a finding: the declaration of the array, a launch."""

    span: Span
    message: str  # "`tile` declared here"


@record
class Edit:
    """A machine-applicable fix: replace `span` of the preprocessed text with `text`.

    An empty span (start == end) inserts. `old` is what the span covers in the
    preprocessed text, so that a consumer (the language server) can check that the
    original file reads the same there and refuse the edit when a macro expansion or an
    included file stands in between.
    """

    span: Span
    text: str  # the replacement, e.g. "33" or "struct __align__(16)"
    old: str = ""  # the preprocessed text the span covers ("" for an insertion)
    added: int | None = None  # the span is an expression that grows by this much (a padding): respelt in the
    # user's own words where a macro stands in the original text (`TILE_DIM` -> `TILE_DIM + 1`)
    shown: str = ""  # the declarator after the edit as the finding's fix text writes it (`tile[32][32 + 1]`):
    # `analyzer.fixes` writes it there in the file's words too (`tile[TILE_DIM][TILE_DIM + 1]`)


@record
class TextEdit:
    """An edit of an original file, in its own spelling: replace `line`:`column` up to
    `end_line`:`end_column` (1-based, the end one past the last character, columns in code
    points) with `text`. Made by `analyzer.fixes` from a finding's `Edit`s and verified by
    re-analysing the edited text before it is offered."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@record
class Finding:
    code: str  # "WL101"
    rule: str  # "bank-conflict"
    severity: str  # "warning" (an analyzer.diagnostics.Severity value)
    span: Span
    kernel: str  # the kernel's display name, `transpose<32>` for an instantiation
    message: str  # the rule's template, formatted with `args`
    fix: str | None  # a suggested change, in words
    args: Mapping[str, object] = field(default_factory=dict)  # {"ways": 4, "array": "tile", ...}
    detail: tuple[str, ...] = ()  # extra lines for the text report (lanes, banks, assumptions)
    related: tuple[Related, ...] = ()
    edits: tuple[Edit, ...] = ()  # the `fix` as edits of the preprocessed text, when it is a known text change
    text_edits: tuple[TextEdit, ...] = ()  # the same, in the original file, verified (`analyzer.fixes`)
