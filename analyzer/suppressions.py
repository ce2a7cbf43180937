"""Suppression comments: find them among the preprocessor's comments, apply them to
what the rules found, and report the ones that silenced nothing.

    // warplint: ignore                 every code, on this line (after code) or the next
                                        (alone on its line)
    // warplint: ignore[WL101,bank-conflict]
    // warplint: ignore-file            the whole file (the file the comment is in)
    // warplint: ignore-file[WL301]
    // NOLINT  // NOLINT(WL101)         this line (clang-tidy's spelling)
    // NOLINTNEXTLINE(bank-conflict)    the next line
    // NOLINTBEGIN(WL101) ... // NOLINTEND(WL101)   the lines between, both included

`/* */` comments work the same; a comment over several lines covers all of them (and,
for `ignore` and `NOLINTNEXTLINE`, the line after its end). A suppression covers
findings in the file it is written in, so a finding in an `#include`d header is
silenced by a comment in that header.

Codes are rule codes or names (`WL101`, `bank-conflict`), a prefix (`WL1`), or a
clang-tidy glob (`WL1*`, `*`). In `NOLINT(...)` a name that is not warplint's belongs
to another tool (clang-tidy) and is passed over, unless it looks like a warplint code.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.lazy_pattern import lazy_compile
from analyzer.records import record

__all__ = [
    "INVALID_SUPPRESSION",
    "UNUSED_SUPPRESSION",
    "Suppression",
    "Suppressions",
    "line_reader",
    "parse_suppressions",
]

UNUSED_SUPPRESSION = "WL920"
INVALID_SUPPRESSION = "WL921"

# one directive's keyword; `warplint:` directives need the prefix, NOLINT needs a word boundary.
# What follows the keyword is read by `_argument`, strictly: a directive it cannot read whole
# silences nothing (a `[` left open must not make `ignore-file[WL301` silence every rule)
_DIRECTIVE = lazy_compile(
    r"\bwarplint:\s*(?P<warplint>ignore-file|ignore)"
    r"|\b(?P<nolint>NOLINTNEXTLINE|NOLINTBEGIN|NOLINTEND|NOLINT)(?![\w-])"
)
_CODES_WITHOUT_BRACKETS = lazy_compile(r"\s*[(:=]|\s+(?:WL\d|[a-z]+-[a-z]+\b)", re.IGNORECASE)
_OUR_CODE = lazy_compile(r"WL\d+\Z", re.IGNORECASE)


class SourceComment(Protocol):
    """What a suppression is read from: the preprocessor's `Comment` (text, delimiters included)."""

    text: str
    location: Location


@record
class Suppression:
    """One directive in one comment, and the lines it covers.

    `codes` is None for "every code". `first`/`last` are the lines covered (1-based,
    inclusive; `last` None: to the end of the file).
    """

    kind: str  # "ignore", "ignore-file", "NOLINT", "NOLINTNEXTLINE", "NOLINTBEGIN"
    codes: tuple[str, ...] | None
    location: Location  # the directive's own position, for reports
    first: int
    last: int | None

    def covers(self, location: Location) -> bool:
        return (
            location.path == self.location.path
            and location.line >= self.first
            and (self.last is None or location.line <= self.last)
        )

    def matching(self, code: str) -> list[str]:
        """The selectors of this suppression that name `code` (["*"] for a bare one)."""
        if self.codes is None:
            return ["*"]
        return [s for s in self.codes if _names(s, code)]


def _names(selector: str, code: str) -> bool:
    from analyzer.rules.registry import DIAGNOSTIC_CODES, RULES

    name = RULES[code].name if code in RULES else DIAGNOSTIC_CODES.get(code, ("",))[0]
    s = selector.strip()
    if any(ch in s for ch in "*?["):  # a clang-tidy glob
        return fnmatch.fnmatchcase(code, s.upper()) or fnmatch.fnmatchcase(name, s.lower())
    return s.upper() == "ALL" or code.startswith(s.upper()) or s.lower() == name


def _known(selector: str) -> bool:
    from analyzer.rules.registry import DIAGNOSTIC_CODES, RULES

    every = [(code, rule.name) for code, rule in RULES.items()]
    every += [(code, name) for code, (name, _) in DIAGNOSTIC_CODES.items()]
    return any(_names(selector, code) for code, _ in every)


@record(frozen=False, slots=False)
class Suppressions:
    """The suppressions of one checked file (and its headers), and problems with them."""

    items: list[Suppression]
    problems: list[Diagnostic]  # WL921: unknown codes, NOLINTBEGIN without NOLINTEND

    def silencing(self, code: str, location: Location) -> list[tuple[int, str]]:
        """(index, selector) of every suppression that silences `code` at `location`."""
        return [(i, selector) for i, s in enumerate(self.items) if s.covers(location) for selector in s.matching(code)]


def parse_suppressions(
    comments: Iterable[SourceComment], line_text: Callable[[str, int], str] | None = None
) -> Suppressions:
    """Suppressions from the preprocessor's comments (`Comment(text, location)`).

    `line_text(path, line)` gives a line of a source file; with it, a `warplint: ignore`
    that follows code covers only its own line (like ruff's `# noqa`), and one alone on
    its line covers the next. Without it, both lines are covered.
    """
    items: list[Suppression] = []
    problems: list[Diagnostic] = []
    open_blocks: list[tuple[Suppression, str]] = []  # NOLINTBEGIN, its argument text
    ordered = sorted(comments, key=lambda c: (c.location.path, c.location.line, c.location.column))
    for comment in ordered:
        loc: Location = comment.location
        for match in _DIRECTIVE.finditer(comment.text):
            at = _position(comment.text, match.start(), loc)
            kind = match.group("warplint") or match.group("nolint")
            raw, malformed = _argument(comment.text, match.end(), nolint=bool(match.group("nolint")))
            if malformed is not None:
                problems.append(
                    _problem(
                        at, f"malformed suppression `{_excerpt(comment.text, match)}`: {malformed}; it silences nothing"
                    )
                )
                continue
            codes, bad = _codes(raw, nolint=bool(match.group("nolint")))
            for selector in bad:
                problems.append(
                    _problem(
                        at, f"unknown rule `{selector}` in a suppression comment; `warplint rules` lists the codes"
                    )
                )
            if raw is not None and codes == ():
                if not bad and not match.group("nolint"):
                    problems.append(_problem(at, f"`{kind}[]` names no rule; write `{kind}` to silence every rule"))
                if kind not in ("NOLINTBEGIN", "NOLINTEND"):  # (those must still pair up)
                    continue  # names only unknown or other tools' checks: silences nothing of ours
            if kind == "ignore":
                after_code = line_text is not None and line_text(loc.path, loc.line)[: loc.column - 1].strip() != ""
                items.append(Suppression(kind, codes, at, loc.line, loc.end_line + (0 if after_code else 1)))
            elif kind == "ignore-file":
                items.append(Suppression(kind, codes, at, 1, None))
            elif kind == "NOLINT":
                items.append(Suppression(kind, codes, at, loc.line, loc.end_line))
            elif kind == "NOLINTNEXTLINE":
                items.append(Suppression(kind, codes, at, loc.end_line + 1, loc.end_line + 1))
            elif kind == "NOLINTBEGIN":
                open_blocks.append((Suppression(kind, codes, at, loc.line, None), (raw or "").replace(" ", "")))
            else:  # NOLINTEND closes the latest NOLINTBEGIN with the same argument (clang-tidy)
                key = (raw or "").replace(" ", "")
                for k in range(len(open_blocks) - 1, -1, -1):
                    begin, begin_key = open_blocks[k]
                    if begin_key == key and begin.location.path == at.path:
                        if begin.codes != ():  # () names only other tools' checks
                            items.append(
                                Suppression(begin.kind, begin.codes, begin.location, begin.first, loc.end_line)
                            )
                        del open_blocks[k]
                        break
                else:
                    problems.append(_problem(at, "NOLINTEND without a matching NOLINTBEGIN"))
    for begin, _ in open_blocks:
        problems.append(_problem(begin.location, "NOLINTBEGIN without a matching NOLINTEND; it silences nothing"))
    return Suppressions(items, problems)


def _argument(text: str, end: int, nolint: bool) -> tuple[str | None, str | None]:
    """The code list after a directive's keyword ending at `end` (None: there is none), and
    why the directive is malformed (None: it is not). `[`/`(` must be closed; a `warplint:`
    keyword must not run on into a longer word (`ignore-files`), nor be given codes any other
    way than in brackets (`ignore WL101`, `ignore(WL101)`, `ignore: WL101`)."""
    opening, closing = ("(", ")") if nolint else ("[", "]")
    if text.startswith(opening, end):
        close = text.find(closing, end + 1)
        if close < 0:
            return None, f"`{opening}` without `{closing}`"
        return text[end + 1 : close], None
    if nolint:
        return None, None
    if end < len(text) and (text[end].isalnum() or text[end] in "-_"):
        return None, "not a warplint directive (`ignore` or `ignore-file`)"
    if _CODES_WITHOUT_BRACKETS.match(text, end):
        return None, "rule codes go in brackets, as in `warplint: ignore[WL101]`"
    return None, None


def _excerpt(text: str, match: re.Match[str]) -> str:
    """The directive as written, up to the end of its line (at most 60 characters)."""
    line_end = text.find("\n", match.start())
    words = text[match.start() : line_end if line_end >= 0 else len(text)].rstrip()
    words = words.removesuffix("*/").rstrip()
    return words if len(words) <= 60 else words[:57] + "..."


def _codes(raw: str | None, nolint: bool) -> tuple[tuple[str, ...] | None, list[str]]:
    """(the selectors that are ours, the unknown ones that must be reported)."""
    if raw is None:
        return None, []
    ours: list[str] = []
    bad: list[str] = []
    for selector in (s.strip() for s in raw.split(",")):
        if not selector:
            continue
        if _known(selector):
            ours.append(selector)
        elif not nolint or _OUR_CODE.match(selector):
            bad.append(selector)
    return tuple(ours), bad


def _position(text: str, offset: int, loc: Location) -> Location:
    """The location of character `offset` of a comment that starts at `loc`."""
    before = text[:offset]
    newlines = before.count("\n")
    if newlines:
        column = offset - before.rfind("\n")
    else:
        column = loc.column + offset
    return Location(loc.path, loc.line + newlines, column, loc.line + newlines, column)


def _problem(at: Location, message: str) -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, INVALID_SUPPRESSION, location=at)


def unused(suppressions: Suppressions, used: set[tuple[int, str]], reportable: Sequence[str]) -> list[Diagnostic]:
    """WL920 for each suppression (or code in one) that silenced nothing.

    `reportable` are the codes that could have been reported in this file: a code that
    is not selected cannot have fired, so its suppression is not called unused.
    """
    out: list[Diagnostic] = []
    for i, s in enumerate(suppressions.items):
        if s.codes is None:
            if (i, "*") not in used:
                out.append(_unused(s, f"unused suppression `{_spelling(s)}`: it silenced nothing"))
            continue
        idle = [c for c in s.codes if (i, c) not in used and any(_names(c, code) for code in reportable)]
        if len(idle) == len(s.codes):
            out.append(_unused(s, f"unused suppression `{_spelling(s)}`: it silenced nothing"))
        elif idle:
            out.append(
                _unused(
                    s,
                    f"unused {'code' if len(idle) == 1 else 'codes'} {', '.join(idle)} in suppression `{_spelling(s)}`",
                )
            )
    return out


def _spelling(s: Suppression) -> str:
    codes = "" if s.codes is None else ",".join(s.codes)
    if s.kind.startswith("ignore"):
        return f"warplint: {s.kind}" + (f"[{codes}]" if codes else "")
    return s.kind + (f"({codes})" if codes else "")


def _unused(s: Suppression, message: str) -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, UNUSED_SUPPRESSION, location=s.location)


def line_reader(path: str, text: str | None = None) -> Callable[[str, int], str]:
    """`line_text(path, line)` for the suppression comments: lines of the checked file
    (`text` when it is not on disk) and of its headers, each file read once, only when
    a suppression comment asks."""
    lines: dict[str, list[str]] = {}

    def line_text(file: str, line: int) -> str:
        if file not in lines:
            try:
                if file == path and text is not None:
                    content = text
                else:
                    with open(file, encoding="utf-8", errors="replace") as handle:
                        content = handle.read()
            except OSError:
                content = ""
            lines[file] = content.split("\n")
        rows = lines[file]
        return rows[line - 1] if 0 < line <= len(rows) else ""

    return line_text
