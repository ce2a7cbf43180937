"""The top-level splitter: preprocessed text cut into declarations, each parsed on its own.

`split_top_level` finds where each top-level declaration (a function definition, a
struct, a variable, a typedef ...) starts and ends by counting braces and parentheses,
with no grammar: namespaces and `extern "C"` blocks are opened, not kept, so what they
hold is split too. Parsing declaration by declaration is what lets one construct the
grammar does not cover cost one declaration rather than the file. Nesting past
MAX_NESTING braces or MAX_PAREN_NESTING parentheses, and a `/*` that never closes, are
reported here, before the LALR parser (which would recurse) sees them.
"""

from __future__ import annotations

import re
from re import Match

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.records import record

MAX_NESTING = 256  # braces/parens deeper than this are refused before the LALR parser sees them

SIGNIFICANT = re.compile(
    # comments and directive lines come first and are skipped (group "skip"): parse() also
    # reads text that was not preprocessed, and a `{` or `;` in a comment is not code
    r"(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|^[ \t]*#[^\n]*)|(?P<open_comment>/\*)|"
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|[{}();]|\S',
    re.MULTILINE,
)
# inside braces only these matter to the chunker (a 10 MB lookup table is not tokenised)
BODY_TOKENS = re.compile(
    r'(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|^[ \t]*#[^\n]*)|(?P<open_comment>/\*)|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}();]',
    re.MULTILINE,
)
# What the splitter searches a body with: BODY_TOKENS, each alternative starting with one
# character, so that `re` skips to the next of those characters without trying the pattern at
# each offset (its "charset prefix"; BODY_TOKENS' `^` alternative and its leading groups keep
# it from having one). A `#` is a directive's only where nothing but blanks precede it on its
# line, from where the search started (`_a_directive`): BODY_TOKENS' `^[ \t]*#`.
# Why: searching BODY_TOKENS took about 800 instructions a character of the bodies; the
# twenty cuda-samples files' parse under callgrind (2026-11-28) went from 2.907 G to 2.845 G.
_BODY_SCAN = re.compile(
    r"/(?:(?P<skip>/[^\n]*|\*[\s\S]*?\*/)|(?P<open_comment>\*))|#(?P<directive>[^\n]*)|"
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|\{|\}|\(|\)|;'
)
MAX_PAREN_NESTING = 2048  # parentheses deeper than this end the file, like braces past MAX_NESTING


@record(slots=False)
class Chunk:
    start: int
    end: int
    is_function: bool
    # why the splitter refused it, said in its diagnostics ("" where it is to be parsed): a
    # declaration nested too deeply, or cut short by the end of what is read; kept, not
    # parsed, so that what it hides, a kernel, is told from host code (`ir.host_code`)
    refused: str = ""


def split_top_level(text: str) -> tuple[list[Chunk], list[Diagnostic]]:
    """Cut `text` into top-level declarations; namespace and extern "C" bodies are opened."""
    return _Splitter(text).split()


_STOP = -1  # `_Splitter._read_body`: the text is read no further
_NESTED = "nested too deeply"  # why a declaration is refused (`Chunk.refused`) where it nests too deeply


def _a_directive(text: str, at: int, searched_from: int) -> bool:
    """Whether the `#` at `at` starts a directive line for BODY_TOKENS searched from
    `searched_from`: blanks alone precede it on its line, and the line starts there or after."""
    line_start = text.rfind("\n", 0, at) + 1
    return line_start >= searched_from and not text[line_start:at].strip(" \t")


_HEAD_ENDS = (")", "const", "override", "noexcept", "final")  # what may come last before a function's body
_NOT_FUNCTIONS = ("typedef", "struct", "class", "union", "enum")


class _Splitter:
    """One pass of `split_top_level` over a text: brace and parenthesis depths, and the head
    (the significant tokens before its first `{`) of the declaration being read."""

    __slots__ = (
        "base",
        "body_is_function",
        "body_open_depth",
        "chunk_start",
        "chunks",
        "depth",
        "diags",
        "head",
        "head_assigns",
        "open_scopes",
        "paren",
        "prev",
        "text",
        "too_deep",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.chunks: list[Chunk] = []
        self.diags: list[Diagnostic] = []
        self.depth = 0
        self.paren = 0
        self.open_scopes: list[int] = []  # brace depths of namespaces / extern "C" blocks we descended into
        self.base = 0  # the brace depth of top level: inside the innermost open namespace
        self.chunk_start: int | None = None
        self.head: list[str] = []  # significant tokens of the current chunk before its first `{` at base depth
        self.body_is_function = False
        self.body_open_depth: int | None = None  # the depth of the chunk's first `{` at base depth
        self.prev = ""
        self.head_assigns = False  # an `=` outside parentheses: `int a[] = {...}`, not a default argument
        self.too_deep = False  # the current declaration nests braces past MAX_NESTING

    def split(self) -> tuple[list[Chunk], list[Diagnostic]]:
        text = self.text
        pos = 0
        while True:
            if self.depth != self.base:  # inside braces
                after = self._read_body(pos)
                if after is None:
                    break
                if after == _STOP:
                    return self.chunks, self.diags
                pos = after
                continue
            m = SIGNIFICANT.search(text, pos)
            if m is None:
                break
            pos = m.end()
            if m.lastgroup == "skip":
                continue
            if m.lastgroup == "open_comment":
                self._comment_never_closed(m)
                return self.chunks, self.diags
            if not self._token(m.group(0), m):
                return self.chunks, self.diags
        if self.chunk_start is not None and text[self.chunk_start :].strip():
            self.chunks.append(Chunk(self.chunk_start, len(text), False, self._refused()))
        return self.chunks, self.diags

    def _read_body(self, pos: int) -> int | None:
        """Read on from `pos` inside braces (the depth above `base`) to the `}` that brings the
        depth back to `base`: what `_token` does with a body's tokens (parentheses and braces
        counted, the declaration ended at a function body's `}`), in one loop over `_BODY_SCAN`
        and local variables. Returns where to read on at `base`, None where the text ends
        first, `_STOP` where it is read no further (a diagnostic says why).

        Why: bodies hold most of a file's tokens that matter here, and `_token`'s call and
        tests for each took more than the search. The twenty cuda-samples files' parse under
        callgrind, 2026-11-28: 2.743 G -> 2.707 G instructions."""
        text = self.text
        search = _BODY_SCAN.search
        base = self.base
        depth = self.depth
        paren = self.paren
        try:
            while True:
                m = search(text, pos)
                if m is None:
                    return None
                kind = m.lastgroup
                if kind is not None:  # a comment, a `#` or an unterminated `/*`
                    if kind == "directive" and not _a_directive(text, m.start(), pos):
                        pos = m.start() + 1  # a `#` BODY_TOKENS passes over
                        continue
                    pos = m.end()
                    if kind == "open_comment":
                        self._comment_never_closed(m)
                        return _STOP
                    continue
                pos = m.end()
                tok = m.group()
                if tok == "(":
                    paren += 1
                    if paren > MAX_PAREN_NESTING:
                        self._parens_too_deep(m)
                        return _STOP
                elif tok == ")":
                    paren = max(0, paren - 1)
                elif tok == "{":
                    depth += 1
                    if depth > MAX_NESTING:
                        self._braces_too_deep(m)
                elif tok == "}":
                    depth -= 1
                    if depth == base:
                        self.depth, self.paren = depth, paren
                        if self.body_open_depth is not None and self.body_is_function and paren == 0:
                            self._end_chunk(pos, True)
                        self.prev = "}"
                        return pos
        finally:
            self.depth, self.paren = depth, paren

    def _token(self, tok: str, m: Match[str]) -> bool:
        """Take one significant token; False when the rest of the text is not read."""
        if self.chunk_start is None:
            if tok == "}" and self.open_scopes and self.depth == self.base:
                self._close_namespace()
                return True
            if tok == ";":
                return True
            self._start_chunk(m.start())
        if tok == "(":
            self.paren += 1
            if self.paren > MAX_PAREN_NESTING:
                self._parens_too_deep(m)
                return False
        elif tok == ")":
            self.paren = max(0, self.paren - 1)
        elif tok == "{":
            if self._open_brace(m):
                return True
        elif tok == "}":
            if self._close_brace(m):
                return True
        elif tok == ";" and self.depth == self.base and self.paren == 0:
            self._end_chunk(m.end(), False)
            return True
        if self.depth == self.base and self.body_open_depth is None:
            self.head.append(tok)
            if tok == "=" and self.paren == 0:
                self.head_assigns = True
        self.prev = tok
        return True

    def _start_chunk(self, start: int) -> None:
        self.chunk_start = start
        self.head = []
        self.head_assigns = False
        self.body_open_depth = None

    def _end_chunk(self, end: int, is_function: bool) -> None:
        """The declaration ends at `end` (its `;` or `}`); one nested too deeply is marked so."""
        self.chunks.append(Chunk(self.chunk_start, end, is_function, self._refused()))  # type: ignore[arg-type]
        self.too_deep = False
        self.chunk_start = None
        self.prev = "}" if is_function else ";"

    def _close_namespace(self) -> None:
        self.depth -= 1
        self.open_scopes.pop()
        self.base = self.open_scopes[-1] if self.open_scopes else 0
        self.prev = "}"

    def _open_brace(self, m: Match[str]) -> bool:
        """A `{`: True when it opens a namespace or `extern "C"` block (nothing more to do), else
        it opens the chunk's body (a function's, when the head says so) or a nested block."""
        if self.depth == self.base and self.body_open_depth is None:
            head = self.head
            if head and (
                head[0] == "namespace" or (head[0] == "extern" and len(head) == 2 and head[1].startswith('"'))
            ):
                self.depth += 1
                self.open_scopes.append(self.depth)
                self.base = self.depth
                self.chunk_start = None
                self.prev = "{"
                return True
            self.body_open_depth = self.depth
            # `) {` opens a body; so does junk such as `) @ {` (one syntax error, not a
            # declaration that swallows the rest of the file); a name before `{` does not
            # (`struct __align__(16) V {`)
            prev = self.prev
            ends_head = prev in _HEAD_ENDS or not (prev[:1].isalnum() or prev[:1] in "_:>]\"'")
            self.body_is_function = (
                ends_head and "(" in head and head[0] not in _NOT_FUNCTIONS and not self.head_assigns
            )
        self.depth += 1
        if self.depth > MAX_NESTING:
            self._braces_too_deep(m)
        return False

    def _braces_too_deep(self, m: Match[str]) -> None:
        """A `{` past `MAX_NESTING`: the declaration is skipped (said once); the chunker reads on
        to its end, and the next one is parsed."""
        if not self.too_deep:
            self._error(f"braces nested deeper than {MAX_NESTING} levels; this declaration is skipped", m)
            self.too_deep = True

    def _parens_too_deep(self, m: Match[str]) -> None:
        """A `(` past `MAX_PAREN_NESTING`: the rest of the file is not read (the caller stops)."""
        self._error(f"parentheses nested deeper than {MAX_PAREN_NESTING} levels; the rest of the file is skipped", m)
        self._cut_short(m.start(), _NESTED)

    def _comment_never_closed(self, m: Match[str]) -> None:
        """A `/*` that never closes: for a compiler the rest of the file is a comment, so the text
        is read no further (the caller stops); what it cuts short is not parsed, and this says why."""
        self._error("unterminated comment: '/*' without '*/'", m)
        self._cut_short(m.start(), "unterminated comment")

    def _refused(self) -> str:
        """Why the declaration that ends now is refused (`Chunk.refused`): "" where it is parsed."""
        return _NESTED if self.too_deep else ""

    def _cut_short(self, at: int, why: str) -> None:
        """The text is read no further than `at`: the declaration it stops in (else what follows
        `at`: a comment that never closes may hide kernels) runs to the end, refused for `why`,
        so that what it hides, a kernel, is told from host code (`ir.host_code`)."""
        start = self.chunk_start if self.chunk_start is not None else at
        self.chunks.append(Chunk(start, len(self.text), False, why))
        self.chunk_start = None

    def _close_brace(self, m: Match[str]) -> bool:
        """A `}`: True when it ends the chunk (a function body) or is a stray one."""
        self.depth -= 1
        if self.depth < self.base:  # stray closing brace
            self.depth = self.base
            self.chunk_start = None
            return True
        if self.depth == self.base and self.body_open_depth is not None and self.body_is_function and self.paren == 0:
            self._end_chunk(m.end(), True)
            return True
        return False

    def _error(self, message: str, m: Match[str]) -> None:
        self.diags.append(Diagnostic(Severity.ERROR, message, "WL901", Span(m.start(), m.end())))
