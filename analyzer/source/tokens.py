"""The preprocessor's lexical layer: preprocessing tokens, the scanning regexes, joining.

Everything here is about spelling, not meaning: the regular expressions that find
directives, comments, literals and names in a file's text (`TEXT_SCAN` for text lines,
`SKIPPED_SCAN` for the groups an `#if` skips, `TOKEN` for directive lines and macro
arguments), the `PPToken` they give, and how tokens are spelled back as text
(`join_tokens`, `stringize`) without two of them fusing into one (`needs_space`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import cast

from analyzer.lazy_pattern import lazy_compile

_HWS = r"[ \t\f\v\r]"
_BLOCK = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/|/\*[\s\S]*"  # the second alternative: unterminated
_LINE = r"//[^\n]*"
_RAW = r'(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\([\s\S]*?\)(?P=delim)"'
_STRING = r'(?:u8|[uUL])?"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
_CHAR = r"(?:u8|[uUL])?'[^'\\\n]*(?:\\.[^'\\\n]*)*'?"
_NUMBER = r"\.?[0-9](?:[eEpP][+-]|'[0-9A-Za-z_]|[\w$.])*"
_IDENT = r"(?:[^\W\d]|\$)[\w$]*"
_PUNCT = (
    r"\.\.\.|<<=|>>=|->\*|##|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|="
    r"|\.\*|[-+*/%&|^~!=<>?:;,.()\[\]{}#]"
)

# Text lines. Each match is a run of characters that need no attention (the gap, matched
# in one regex step) followed by one thing that does; a directive is matched from the
# newline before it (a directive at the very start of a scan is checked separately).
# Every character either continues the gap or starts an alternative (`other` takes any
# character, `eof` the end), so a match never fails and the gap is never backtracked into.
_DIRECTIVE_START = rf"{_HWS}*(?:/\*[^*\n]*\*+(?:[^/*\n][^*\n]*\*+)*/{_HWS}*)*#"  # comments may precede '#'
_GAP = rf"(?:[^\w$/\"'\n.]+|/(?![/*])|\.(?![0-9])|\n(?!{_DIRECTIVE_START}))*"
# Identifiers come first (they are most of the matches) unless a quote follows: then they
# may be the prefix of a literal (`L"..."`, `R"(...)"`), and `idq` takes them after those.
TEXT_SCAN = re.compile(
    rf"{_GAP}(?:(?P<id>{_IDENT})(?![\w$\"'])|(?P<num>{_NUMBER})|(?P<dir>\n{_DIRECTIVE_START})"
    rf"|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})|(?P<str>{_STRING})|(?P<chr>{_CHAR})|(?P<idq>{_IDENT})"
    rf"|(?P<other>[\s\S])|(?P<eof>\Z))"
)
# Skipped groups: directives, and what could hide a `#` line (comments, literals).
_SKIP_GAP = rf"(?:[^/\"'\nR]+|/(?![/*])|\n(?!{_DIRECTIVE_START}))*"
SKIPPED_SCAN = lazy_compile(
    rf"{_SKIP_GAP}(?:(?P<dir>\n{_DIRECTIVE_START})|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})|(?P<str>{_STRING})"
    rf"|(?P<chr>{_CHAR})|(?P<other>[\s\S])|(?P<eof>\Z))"
)
# Every token, for directive lines and macro arguments.
TOKEN = re.compile(
    rf"(?P<nl>\n)|(?P<ws>{_HWS}+)|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})"
    rf"|(?P<str>{_STRING})|(?P<chr>{_CHAR})|(?P<num>{_NUMBER})|(?P<id>{_IDENT})"
    rf"|(?P<punct>{_PUNCT})|(?P<other>[\s\S])"
)
SPACES = re.compile(rf"(?:[ \t\f\v\r\n]+|{_BLOCK}|{_LINE})*")  # always matches, never backtracks
DIRECTIVE = re.compile(_DIRECTIVE_START)
BLOCK_COMMENT = lazy_compile(_BLOCK)
DIRECTIVE_NAME = re.compile(rf"{_HWS}*(?:/\*[^*]*\*+(?:[^/*][^*]*\*+)*/{_HWS}*)*([A-Za-z_]\w*)?")
LITERAL_SUFFIX = lazy_compile(rf"(?:{_STRING}|{_CHAR}){_IDENT}")
HEADER_NAME = lazy_compile(rf'{_HWS}*(?:"([^"\n]*)"|<([^>\n]*)>)')
SPLICE = lazy_compile(r"\\[ \t\f\v]*\r?\n")


def _always(pattern: re.Pattern[str]) -> Callable[..., re.Match[str]]:
    """`pattern.match`, typed as never None: for a pattern that matches wherever it is tried
    (every part of it optional, or a catch-all alternative tried before the end of the text)."""
    return cast("Callable[..., re.Match[str]]", pattern.match)


SPACES_AT = _always(SPACES)
TOKEN_AT = _always(TOKEN)  # before the end of the text: `other` takes any character
DIRECTIVE_NAME_AT = _always(DIRECTIVE_NAME)

# Token kinds.
ID, NUM, STR, CHR, PUNCT, OTHER, PLACEMARKER = "id", "num", "str", "chr", "punct", "other", "pm"
KIND_OF_GROUP: dict[str | None, str] = {
    "id": ID,
    "num": NUM,
    "str": STR,
    "raw": STR,
    "chr": CHR,
    "punct": PUNCT,
    "other": OTHER,
}

_PASTES = frozenset("++ -- += -= *= /= %= &= |= ^= -> << >> <= >= == != && || :: ## .. // /* .* %: <: :> <% %>".split())  # noqa: SIM905 - one string of tokens reads best


_NEUTRAL = frozenset(" \t\n\r\f\v()[]{},;~?")


def needs_space(a: str, b: str) -> bool:
    """Whether two adjacent characters from different tokens would fuse into one token."""
    if a in _NEUTRAL or b in _NEUTRAL:
        return False
    if (a.isalnum() or a in "_$") and (b.isalnum() or b in "_$'\"" or ord(b) > 127):
        return True
    if ord(a) > 127 and (b.isalnum() or b in "_$"):
        return True
    if a + b in _PASTES or (a == "." and b.isdigit()) or (a.isdigit() and b == "."):
        return True
    return a in "eEpP" and b in "+-"  # `1e` `+5` must not become the number `1e+5`


class PPToken:
    """A preprocessing token. `ws`: whitespace before it; `hide`: its hide set."""

    __slots__ = ("hide", "kind", "pos", "text", "ws")

    def __init__(self, kind: str, text: str, ws: bool = False, hide: frozenset = frozenset(), pos: int = -1):
        self.kind = kind
        self.text = text
        self.ws = ws
        self.hide = hide
        self.pos = pos  # offset in the (spliced) file text for directive tokens, else -1

    @property
    def end(self) -> int:
        return self.pos + len(self.text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"PPToken({self.kind}, {self.text!r}{', ws' if self.ws else ''})"


EMPTY_HIDE_SET: frozenset = frozenset()  # the hide set of a token read from a file


def is_punct(tok: PPToken | None, text: str) -> bool:
    """Whether `tok` is the punctuator `text`."""
    return tok is not None and tok.kind == PUNCT and tok.text == text


def join_tokens(tokens: Sequence[PPToken]) -> str:
    """Spell tokens as text: one space where there was whitespace or tokens would fuse."""
    parts: list[str] = []
    prev = ""
    for tok in tokens:
        text = tok.text
        if parts and (tok.ws or needs_space(prev[-1], text[0])):
            parts.append(" ")
        parts.append(text)
        prev = text
    return "".join(parts)


def stringize(tokens: Sequence[PPToken]) -> str:
    """`#param`: the argument's tokens as one string literal, quotes and backslashes escaped."""
    parts = []
    for i, tok in enumerate(tokens):
        if i and tok.ws:
            parts.append(" ")
        text = tok.text
        if tok.kind in (STR, CHR):
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(text)
    return '"' + "".join(parts) + '"'
