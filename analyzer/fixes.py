"""Fixes: the rules' edits spelt in the user's own text, verified, and applied.

The stage after `check` and before `render`. A rule proposes a fix as `Edit`s of the
preprocessed text (`Finding.edits`: the padded last dimension of a `__shared__` array, the
`__align__(n)` of a struct). Here each becomes a `TextEdit` of the original file in the
user's own words, and is offered (`Finding.text_edits`) only when re-analysing the edited
text shows that it works:

- an expression that the rule says grows by some amount (`Edit.added`: an array's length) is
  respelt from the file's own text there, a macro or not (`tile[TILE_DIM][TILE_DIM]`: the
  preprocessed `32` is `TILE_DIM` in the file): a literal becomes the sum (`32` -> `33`), an
  expression ending in `+ k` gets `k` increased (`BLOCK_DIM+1` -> `BLOCK_DIM+2`), any other
  gets `+ n` (`TILE_DIM` -> `TILE_DIM + 1`, parenthesised when it holds an operator that binds
  less than `+`). Never a number where the file says a name;
- any other edit applies only where the file reads exactly what the rule expected there;
- an edit that would land in another file (a header), or where the file reads otherwise than
  the rule expected, is not offered.

Verification (`offer_fixes`): the edits of one fix applied to the file's text, the text is
analysed again (by the `recheck` the caller passes: this stage runs no pipeline itself), and
the fix is offered only when every finding it claims to fix is gone and no finding or
diagnostic appears that was not there before. Findings and diagnostics are matched by code,
kernel, line and column (a fix adds no lines).

`apply_edits` and `unified_diff` serve `check --fix` and `--diff`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from analyzer import records
from analyzer.diagnostics import Location
from analyzer.findings import Edit, Finding, TextEdit

__all__ = [
    "apply_edits",
    "grown_expression",
    "non_overlapping",
    "offer_fixes",
    "places",
    "respell_fix_texts",
    "respelt_fix",
    "spelt_edits",
    "unified_diff",
]

# operators that bind less tightly than `+`: an expression holding one is parenthesised
# before `+ n` is appended, and its trailing `+ k` is not the last thing evaluated
_LOOSER_THAN_PLUS = re.compile(r"<<|>>|[<>=!&|^?:,]")
_LITERAL = re.compile(r"(0|[1-9][0-9]*)([uUlL]*)")
_TRAILING_ADDEND = re.compile(r"(?s)(.*?\S)(\s*\+\s*)(0|[1-9][0-9]*)([uUlL]*)")


# ----------------------------------------------------------------------------- spelling


def grown_expression(original: str, added: int) -> str:
    """`original` (the file's text of an array length) made larger by `added`, in its own words:
    `32` -> `33`, `BLOCK_DIM+1` -> `BLOCK_DIM+2`, `TILE_DIM` -> `TILE_DIM + 1`, `N << 1` ->
    `(N << 1) + 1`."""
    literal = _LITERAL.fullmatch(original)
    if literal:
        return f"{int(literal.group(1)) + added}{literal.group(2)}"
    trailing = _TRAILING_ADDEND.fullmatch(original)
    if trailing and _balanced(trailing.group(1)) and not _LOOSER_THAN_PLUS.search(trailing.group(1)):
        prefix, plus, number, suffix = trailing.groups()
        return f"{prefix}{plus}{int(number) + added}{suffix}"
    if _LOOSER_THAN_PLUS.search(original):
        return f"({original}) + {added}"
    return f"{original} + {added}"


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _offset(lines: Sequence[str], line: int, column: int) -> int | None:
    """The offset in the text of 1-based `line`:`column`, None when outside it."""
    if not 1 <= line <= len(lines) or not 1 <= column <= len(lines[line - 1]) + 1:
        return None
    return sum(len(row) + 1 for row in lines[: line - 1]) + column - 1


def _spelt(edit: Edit, location: Location, original: str, lines: Sequence[str]) -> TextEdit | None:
    """One rule `Edit` as an edit of the original text at `location`, or None (see the module)."""
    start = _offset(lines, location.line, location.column)
    end = _offset(lines, location.end_line, location.end_column)
    if start is None or end is None or end < start:
        return None
    written = original[start:end]
    if edit.added is not None:  # spelt from the file's words, whether a macro stands there or not
        if not written or written.strip() != written:
            return None
        if original[:start].rstrip()[-1:] != "[" or original[end:].lstrip()[:1] != "]":
            return None  # the macro stands for more than the length: `tile DIMS`
        text = grown_expression(written, edit.added)
    elif written == edit.old:
        text = edit.text
    else:
        return None
    return TextEdit(location.path, location.line, location.column, location.end_line, location.end_column, text)


def spelt_edits(finding: Finding, locate: Callable[[Any], Location], path: str, original: str) -> tuple[TextEdit, ...]:
    """A finding's edits as `TextEdit`s of the file `path` (whose text is `original`); none at
    all when any of them cannot be spelt there (see the module)."""
    lines = original.split("\n")
    out = []
    for edit in finding.edits:
        location = locate(edit.span)
        if location.path != path:
            return ()
        spelt = _spelt(edit, location, original, lines)
        if spelt is None:
            return ()
        out.append(spelt)
    return tuple(out)


def respell_fix_texts(report: Any, original: str) -> None:
    """Write the declarators that each finding's fix text shows after its edit in the words of
    the file `original` (see `respelt_fix`), without verifying the edits: what a fix text says
    is the rule's suggestion in any case, only `text_edits` (`offer_fixes`) promise a change."""
    for index, finding in enumerate(report.findings):
        if any(edit.shown for edit in finding.edits):
            spelt = spelt_edits(finding, report.locate, report.path, original)
            if spelt:
                report.findings[index] = records.replace(finding, fix=respelt_fix(finding, spelt, original))


def respelt_fix(finding: Finding, edits: tuple[TextEdit, ...], original: str) -> str | None:
    """The finding's fix text with each declarator it shows after an edit (`Edit.shown`,
    `tile[32][32 + 1]`) written as the edited file will read (`tile[TILE_DIM][TILE_DIM + 1]`);
    `edits` are `spelt_edits(finding, ...)`, in the order of `finding.edits`."""
    fix = finding.fix
    lines = original.split("\n")
    for edit, spelt in zip(finding.edits, edits):
        if not fix or not edit.shown or edit.shown not in fix:
            continue
        start = _offset(lines, spelt.line, spelt.column)
        end = _offset(lines, spelt.end_line, spelt.end_column)
        written = _declarator_around(original, start, end, edit.shown.split("[", 1)[0])
        if written is None:
            continue
        before, after = written
        as_shown = edit.shown.rsplit(" + ", 1)[0] + "]"  # `tile[32][32]`: the rule's words before padding
        if "".join((before + original[start:end] + after).split()) != as_shown:  # (literal sizes read as shown)
            fix = fix.replace(edit.shown, before + spelt.text + after)
    return fix


def _declarator_around(original: str, start: int | None, end: int | None, name: str) -> tuple[str, str] | None:
    """The text of `name[...]...[` before `start` and of `]` after `end` on their line: the
    declarator whose last length the edit replaces; None when it is not written there."""
    if start is None or end is None:
        return None
    line_start = original.rfind("\n", 0, start) + 1
    head = re.search(rf"\b{re.escape(name)}\s*(\[[^\n]*)?\[\s*$", original[line_start:start])
    close = original.find("]", end)
    if head is None or close < 0 or original[end:close].strip():
        return None
    return original[line_start + head.start() : start], original[end : close + 1]


# ----------------------------------------------------------------------------- verification


def places(report: Any) -> set[tuple[str, str, int, int]]:
    """What a report says, by place: (code, kernel, line, column) of each finding and
    (code, "", line, column) of each diagnostic."""
    found = set()
    for finding in report.findings:
        where = report.locate(finding.span)
        found.add((str(finding.code), str(finding.kernel), where.line, where.column))
    for diagnostic in report.diagnostics:
        where = diagnostic.location or report.locate(diagnostic.span)
        found.add((str(diagnostic.code), "", where.line, where.column))
    return found


def offer_fixes(report: Any, original: str, recheck: Callable[[str], Any]) -> None:
    """Set `text_edits` on each finding of `report` whose fix is spelt in the file `original`
    and passes re-analysis (`recheck(edited text)` -> a report of the same file). Findings that
    share one fix are verified together, once."""
    path = report.path
    before = places(report)
    groups: dict[tuple[TextEdit, ...], list[int]] = {}
    for index, finding in enumerate(report.findings):
        if finding.edits:
            spelt = spelt_edits(finding, report.locate, path, original)
            if spelt:
                groups.setdefault(spelt, []).append(index)
    for edits, members in groups.items():
        fixed = {_place(report, report.findings[i]) for i in members}
        if not _verified(edits, original, before, fixed, recheck):
            continue
        for i in members:
            finding = report.findings[i]
            fix = respelt_fix(finding, edits, original)
            report.findings[i] = records.replace(finding, text_edits=edits, fix=fix)


def _place(report: Any, finding: Finding) -> tuple[str, str, int, int]:
    where = report.locate(finding.span)
    return (str(finding.code), str(finding.kernel), where.line, where.column)


def _verified(
    edits: tuple[TextEdit, ...],
    original: str,
    before: set[tuple[str, str, int, int]],
    fixed: set[tuple[str, str, int, int]],
    recheck: Callable[[str], Any],
) -> bool:
    """Whether the text with `edits` applied no longer has the findings `fixed` and has
    nothing new; False when it cannot be re-analysed."""
    edited = apply_edits(original, edits)
    if edited is None:
        return False
    try:
        after = places(recheck(edited))
    except Exception:  # noqa: BLE001 - a fix that cannot be verified is not offered
        return False
    return not (after & fixed) and after <= before


# ----------------------------------------------------------------------------- applying


def _ordered(edit: TextEdit) -> tuple[int, int, int, int]:
    return (edit.line, edit.column, edit.end_line, edit.end_column)


def _clash(a: TextEdit, b: TextEdit) -> bool:
    """Whether two edits touch the same text (or insert at the same place)."""
    a_start, a_end, b_start, b_end = _ordered(a)[:2], _ordered(a)[2:], _ordered(b)[:2], _ordered(b)[2:]
    return a_start == b_start or (a_start < b_end and b_start < a_end)


def non_overlapping(edits: Iterable[tuple[TextEdit, ...]]) -> list[TextEdit]:
    """The edits of several fixes that can be applied together: a fix whose edits overlap one
    taken already is left for the next pass (as ruff does), a repeated edit is taken once."""
    taken: list[TextEdit] = []
    for fix in edits:
        if all(edit in taken for edit in fix):
            continue
        if not any(_clash(mine, other) for mine in fix for other in taken if mine != other):
            taken.extend(edit for edit in fix if edit not in taken)
    return sorted(taken, key=_ordered)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str | None:
    """`text` with `edits` applied (positions are those of `text`), None when one lies outside
    it or two overlap."""
    lines = text.split("\n")
    spans = []
    for edit in edits:
        start, end = _offset(lines, edit.line, edit.column), _offset(lines, edit.end_line, edit.end_column)
        if start is None or end is None or end < start:
            return None
        spans.append((start, end, edit.text))
    spans.sort()
    out, at = [], 0
    for start, end, replacement in spans:
        if start < at:
            return None
        out += [text[at:start], replacement]
        at = end
    out.append(text[at:])
    return "".join(out)


def unified_diff(path: str, old: str, new: str) -> str:
    """`--diff`'s unified diff of one file (`a/` and `b/` as git and ruff write them)."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
