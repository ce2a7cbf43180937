"""A declaration parsed again after a statement was blanked out, from the last `;` or `}` before it.

Why: where a statement of a function body does not parse, `parse._ParseRun.parse_chunk` blanks
it out and parses the declaration again, from its start; a body with n such statements (each
`throw` of a host function) is parsed n + 1 times. Measured 2026-11-29 on the twenty
cuda-samples files of issue 16 (`check -I cuda-samples/Common`): piestimator.cu's 6,609
characters of declarations took 55,293 characters of parsing (12 statements blanked in one
function), 48,700 of the 70,000 characters parsed again in the twenty files. Its parse under
callgrind: 288 M -> 146 M instructions; `check` of the twenty files 13.415 G -> 13.28-13.30 G.

How: once a statement was blanked in a declaration, each parse of it keeps a checkpoint after
each `;` or `}` it shifts (`Parser.parse`'s `keep`): the parser's four stacks, the offset, and the
post-lexer's state there. The next parse, where a statement from offset `s` on was blanked,
goes on from the last checkpoint before `s` instead of the start.

Never different: the parse is a function of the text read and of the post-lexer's type table.
The text before `s` is the same as before; a checkpoint at offset `q < s` stands for the parse of
that text up to `q` where (1) what the post-lexer keeps across declarations (its scopes below the
declaration's, its template names, the names hidden) is what it was when that parse started --
those sets only grow, so their sizes tell (`_fingerprint`); (2) nothing read before `q` looked at
the text from `s` on: the lexer and the post-lexer's look-aheads stop at a `;` or `}` (one
character after it at most: `q < s`), except the `(` of a declarator, whose reach the post-lexer
keeps (`CudaPostLexer.far`). A checkpoint is a copy: the nodes the builder made are frozen, the lists of
an `Inlined` only grow (kept with their lengths), and a direct declarator's dict is copied on
the way in and on the way out. A checkpoint where (1) or (2) fails is not used: the declaration
is parsed from its start, as before. Each attempt charges the budget as before (the steps of
the whole declaration's text).
"""

from __future__ import annotations

from typing import Any

from analyzer.syntax.lalr import Inlined, Resumed, Token
from analyzer.syntax.postlex import CudaPostLexer, SavedState

__all__ = ["Checkpoints"]


class Checkpoints:
    """The checkpoints of the parses of one declaration, since a statement of it was blanked."""

    def __init__(self, postlex: CudaPostLexer) -> None:
        self.postlex = postlex
        # (offset, stacks, post-lexer's state) of each checkpoint, in the order of the text
        self.kept: list[tuple[int, Resumed, SavedState]] = []
        self.since = _fingerprint(postlex)  # the post-lexer's lasting state when the last parse started

    def keep(
        self, token: Token, states: list[int], values: list[Any], starts: list[int | None], ends: list[int | None]
    ) -> None:
        """`Parser.parse`'s `keep`: a checkpoint after `token` (a `;` or `}`) was shifted."""
        stacks = (list(states), [_held(v) for v in values], list(starts), list(ends), token.end_pos, token)
        self.kept.append((token.end_pos, stacks, self.postlex.saved()))

    def before(self, blanked: int) -> Resumed | None:
        """Where the next parse goes on from, a statement from offset `blanked` on (of the
        declaration's text) being blanked: the stacks of the last checkpoint that stands for
        its text up to there, set in the post-lexer too; None: from the start. The checkpoints
        after it no longer hold and are dropped."""
        if _fingerprint(self.postlex) != self.since:  # (its scopes not put back too: not the same)
            self.kept.clear()
        kept = self.kept
        while kept and not (kept[-1][0] < blanked and kept[-1][2][2] <= blanked):
            kept.pop()
        if not kept:
            return None
        _, (states, values, starts, ends, at, last), saved = kept[-1]
        self.postlex.go_on_from(saved)
        return (list(states), [_thawed(v) for v in values], list(starts), list(ends), at, last)

    def started(self) -> None:
        """A parse of the declaration starts (from its start or a checkpoint)."""
        self.since = _fingerprint(self.postlex)


def _fingerprint(postlex: CudaPostLexer) -> tuple[int, ...]:
    """The sizes of what the post-lexer keeps across declarations (which only grow)."""
    table = postlex.table
    return (len(table.templates), len(table.hidden), len(table.scopes), *map(len, table.scopes))


class _Grown(tuple):
    """An `Inlined` on the stack at a checkpoint, with the lengths its two lists had there:
    they only grow (`lalr._kept` extends them), so their first items are what they held."""

    __slots__ = ()


def _held(value: Any) -> Any:
    """A value of the parser's stack as a checkpoint keeps it: an `Inlined` by its lengths (a
    list of every statement of the body so far is not copied at each `;`), a direct
    declarator's dict copied (its lists grow in place); the builder's nodes are frozen."""
    if type(value) is Inlined:
        return _Grown((value, len(value[0]), len(value[1])))
    return _copied(value)


def _thawed(value: Any) -> Any:
    """A value of a checkpoint's stack for a parse to go on with: copies of what may grow."""
    if type(value) is _Grown:
        inlined, children, extents = value
        return Inlined((inlined[0][:children], inlined[1][:extents]))
    return _copied(value)


def _copied(value: Any) -> Any:
    """A stack value that may grow in place copied (a direct declarator's dict, its lists too;
    a list); any other value is frozen, itself."""
    kind = type(value)
    if kind is dict:
        return {k: list(v) if type(v) is list else v for k, v in value.items()}
    if kind is list:
        return list(value)
    return value
