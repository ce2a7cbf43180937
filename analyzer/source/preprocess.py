"""The C preprocessor stage: original text -> `Preprocessed(text, LineMap, ...)`.

Pure Python, no cpp/nvcc at run time. What it does, in the order a compiler would:

* splices lines ending in a backslash, replaces every comment by a space (keeping its
  newlines) and records it as a `Comment`;
* runs `#define`/`#undef` (object-like and function-like macros with `#`, `##`,
  `__VA_ARGS__`, GNU `, ## __VA_ARGS__`), `#if/#ifdef/#ifndef/#elif/#else/#endif` with full
  integer constant expressions, `#include "..."` (spliced in; `<...>` is only recorded),
  `#pragma once`/`push_macro`/`pop_macro`, `#error`/`#warning`; `#line` is ignored;
* expands macros with Prosser's hide-set algorithm ("painted blue" tokens never expand
  again, so `#define X X` terminates). Argument pre-expansion runs on an explicit job
  stack, not by recursion, so `F(F(F(...)))` 1000 deep is fine.

Every character of the output maps back to its original file, line and column through
the `LineMap`: copied text keeps its exact columns, a macro expansion maps to the start
of the macro name at its use (and a span ending in it ends after the use), and consumed
lines (directives, skipped groups, multi-line macro uses) stay as empty lines, so the
output of the main file keeps its line structure apart from `#include`d text and
backslash-continued code lines.

It never raises on bad input: problems become `Diagnostic`s with code WL901.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.records import record
from analyzer.source.linemap import EXPANSION, NEWLINES, VERBATIM, LineMap, SourceFile

__all__ = ["Comment", "Preprocessed", "preprocess", "preprocess_file", "PREDEFINED_MACROS"]

CODE = "WL901"
MAX_INCLUDE_DEPTH = 200  # nested #include levels below the main file
MAX_INCLUDES = 20_000  # #include directives entered in one run
MAX_EXPANSION_STEPS = 5_000_000  # tokens one macro use (or #if line) may move: pushed or collected

#: Object-like macros defined before the first line (nvcc's device pass for sm_90).
PREDEFINED_MACROS: Mapping[str, str] = MappingProxyType(
    {
        "__CUDACC__": "1",
        "__NVCC__": "1",
        "__CUDA_ARCH__": "900",
        "__CUDACC_VER_MAJOR__": "12",
        "__CUDACC_VER_MINOR__": "0",
        "__CUDACC_VER_BUILD__": "0",
        "__cplusplus": "201703L",
    }
)

_NO_DEFINES: Mapping[str, str | None] = MappingProxyType({})
_ERROR, _WARNING = Severity.ERROR, Severity.WARNING


@record
class Comment:
    """A `//` or `/* */` comment, delimiters included, at its original position."""

    text: str
    location: Location


@record
class Preprocessed:
    """The product of the preprocessor: what the parser reads, and how to map it back."""

    path: str
    text: str  # the preprocessed text that the parser reads
    linemap: LineMap
    comments: tuple[Comment, ...]
    diagnostics: tuple[Diagnostic, ...]
    macros: Mapping[str, str]  # final object-like macros: name -> replacement text
    system_includes: tuple[str, ...]  # `#include <...>` names, recorded, never read


# ============================================================================ lexical layer

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
_SCAN = re.compile(
    rf"{_GAP}(?:(?P<id>{_IDENT})(?![\w$\"'])|(?P<num>{_NUMBER})|(?P<dir>\n{_DIRECTIVE_START})"
    rf"|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})|(?P<str>{_STRING})|(?P<chr>{_CHAR})|(?P<idq>{_IDENT})"
    rf"|(?P<other>[\s\S])|(?P<eof>\Z))"
)
# Skipped groups: directives, and what could hide a `#` line (comments, literals).
_SKIP_GAP = rf"(?:[^/\"'\nR]+|/(?![/*])|\n(?!{_DIRECTIVE_START}))*"
_SKIP = re.compile(
    rf"{_SKIP_GAP}(?:(?P<dir>\n{_DIRECTIVE_START})|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})|(?P<str>{_STRING})"
    rf"|(?P<chr>{_CHAR})|(?P<other>[\s\S])|(?P<eof>\Z))"
)
# Every token, for directive lines and macro arguments.
_TOKEN = re.compile(
    rf"(?P<nl>\n)|(?P<ws>{_HWS}+)|(?P<bc>{_BLOCK})|(?P<lc>{_LINE})|(?P<raw>{_RAW})"
    rf"|(?P<str>{_STRING})|(?P<chr>{_CHAR})|(?P<num>{_NUMBER})|(?P<id>{_IDENT})"
    rf"|(?P<punct>{_PUNCT})|(?P<other>[\s\S])"
)
_SPACES = re.compile(rf"(?:[ \t\f\v\r\n]+|{_BLOCK}|{_LINE})*")  # always matches, never backtracks
_DIRECTIVE = re.compile(_DIRECTIVE_START)
_BLOCK_RE = re.compile(_BLOCK)
_DIRECTIVE_NAME = re.compile(rf"{_HWS}*(?:/\*[^*]*\*+(?:[^/*][^*]*\*+)*/{_HWS}*)*([A-Za-z_]\w*)?")
_LITERAL_SUFFIX = re.compile(rf"(?:{_STRING}|{_CHAR}){_IDENT}")
_HEADER = re.compile(rf'{_HWS}*(?:"([^"\n]*)"|<([^>\n]*)>)')
_SPLICE = re.compile(r"\\[ \t\f\v]*\r?\n")
_INTEGER = re.compile(
    r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)((?:[uU](?:ll|LL|[lLzZ])?|(?:ll|LL|[lLzZ])[uU]?)?)"
)

# Token kinds.
ID, NUM, STR, CHR, PUNCT, OTHER, PLACEMARKER = "id", "num", "str", "chr", "punct", "other", "pm"
_KIND = {"id": ID, "num": NUM, "str": STR, "raw": STR, "chr": CHR, "punct": PUNCT, "other": OTHER}

_PASTES = frozenset(
    "++ -- += -= *= /= %= &= |= ^= -> << >> <= >= == != && || :: ## .. // /* .* %: <: :> <% %>".split()
)


_NEUTRAL = frozenset(" \t\n\r\f\v()[]{},;~?")


def _needs_space(a: str, b: str) -> bool:
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


class _Tok:
    """A preprocessing token. `ws`: whitespace before it; `hide`: its hide set."""

    __slots__ = ("kind", "text", "ws", "hide", "pos")

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
        return f"_Tok({self.kind}, {self.text!r}{', ws' if self.ws else ''})"


_EMPTY: frozenset = frozenset()


def _is_punct(tok: _Tok | None, text: str) -> bool:
    return tok is not None and tok.kind == PUNCT and tok.text == text


def _join(tokens: Sequence[_Tok]) -> str:
    """Spell tokens as text: one space where there was whitespace or tokens would fuse."""
    parts: list[str] = []
    prev = ""
    for tok in tokens:
        text = tok.text
        if parts and (tok.ws or _needs_space(prev[-1], text[0])):
            parts.append(" ")
        parts.append(text)
        prev = text
    return "".join(parts)


# ============================================================================ files


class _File:
    """One original file: its text with line splices removed, and how to map back."""

    __slots__ = ("path", "key", "index", "original", "text", "splices", "removed", "source")

    def __init__(self, path: str, key: str, text: str) -> None:
        if text.startswith("\ufeff"):
            text = " " + text[1:]
        self.path = path
        self.key = key
        self.index = -1  # position in the LineMap's file table, once output comes from it
        self.original = text
        self.source = SourceFile.from_text(path, text)
        self.splices: list[int] = []  # offsets in `text` where a backslash-newline was removed
        self.removed: list[int] = []  # characters removed up to and including each splice
        if "\\" in text and _SPLICE.search(text):
            pieces = []
            last = 0
            total = 0
            for m in _SPLICE.finditer(text):
                pieces.append(text[last : m.start()])
                total += m.end() - m.start()
                self.splices.append(m.end() - total)
                self.removed.append(total)
                last = m.end()
            pieces.append(text[last:])
            text = "".join(pieces)
        self.text = text

    def orig(self, offset: int) -> int:
        """Offset in the original text of an offset in the spliced text."""
        if not self.splices:
            return offset
        i = bisect_right(self.splices, offset)
        return offset + (self.removed[i - 1] if i else 0)

    def location(self, start: int, end: int) -> Location:
        """Location of the spliced-text range [start, end)."""
        a = self.orig(start)
        b = self.orig(end - 1) + 1 if end > start else a
        line, column = self.source.position(a)
        end_line, end_column = self.source.position(b)
        return Location(self.path, line, column, end_line, end_column)


class _Cond:
    """One open `#if` group."""

    __slots__ = ("taken", "else_seen", "start", "end", "name")

    def __init__(self, taken: bool, start: int, end: int, name: str) -> None:
        self.taken = taken  # some branch of the group has been (or is being) taken
        self.else_seen = False
        self.start, self.end, self.name = start, end, name


class _Context:
    """A file being read: position, open conditionals, include-guard detection."""

    __slots__ = ("file", "pos", "conds", "guard", "guard_name", "guard_end")

    def __init__(self, file: _File) -> None:
        self.file = file
        self.pos = 0
        self.conds: list[_Cond] = []
        self.guard: _Cond | None = None
        self.guard_name = ""
        self.guard_end = -1


# ============================================================================ macros

OBJECT, FUNCTION, DYNAMIC, OPERATOR = "object", "function", "dynamic", "operator"


class _Macro:
    """A macro definition. `body` holds (kind, text, ws, parameter index or -1)."""

    __slots__ = ("name", "kind", "params", "variadic", "body", "expand", "plain", "origin", "_text")

    def __init__(self, name, kind, params=(), variadic=False, body=(), origin=None):
        self.name = name
        self.kind = kind
        self.params: tuple[str, ...] = params
        self.variadic = variadic
        self.body: tuple[tuple[str, str, bool, int], ...] = body
        self.origin: tuple[_File, int, int] | None = origin  # where it was defined
        self._text: str | None = None
        # parameters that appear at least once outside `#`/`##`: their arguments are expanded
        expand = []
        for i, (_, _, _, idx) in enumerate(body):
            if idx < 0 or idx in expand:
                continue
            before = body[i - 1] if i else None
            after = body[i + 1] if i + 1 < len(body) else None
            if before is not None and before[0] == PUNCT and before[1] in ("#", "##"):
                continue
            if after is not None and after[0] == PUNCT and after[1] == "##":
                continue
            expand.append(idx)
        self.expand = tuple(expand)
        # no parameter, `#` or `##` to handle: substitution is a plain copy
        self.plain = all(idx < 0 and not (k == PUNCT and t in ("#", "##")) for k, t, _, idx in body)

    @property
    def text(self) -> str:
        """The replacement list as text (whitespace normalized to single spaces)."""
        if self._text is None:
            self._text = _join([_Tok(k, t, ws and i > 0) for i, (k, t, ws, _) in enumerate(self.body)])
        return self._text

    def where(self) -> str:
        if self.origin is None:
            return ""
        location = self.origin[0].location(self.origin[1], self.origin[2])
        return f"{location.path}:{location.line}:{location.column}"

    def same_as(self, other: "_Macro") -> bool:
        def shape(m: _Macro):
            return (m.kind, m.params, m.variadic, [(k, t, ws and i > 0) for i, (k, t, ws, _) in enumerate(m.body)])

        return shape(self) == shape(other)


class _Absent(list):
    """The variable arguments of a use that left them out, as in `LOG("x")` for LOG(fmt, ...)."""


_ABSENT = _Absent()


class _TooBig(Exception):
    """A macro expansion took more than MAX_EXPANSION_STEPS steps."""


class _Job:
    """One expansion in progress: the top-level one, or the pre-expansion of an argument."""

    __slots__ = ("stack", "out", "reader", "wait")

    def __init__(self, stack: list[_Tok], reader: "_Reader | None") -> None:
        self.stack = stack  # pending tokens, next one last
        self.out: list[_Tok] = []
        self.reader = reader
        self.wait: _Wait | None = None


class _Wait:
    """A function-like macro invocation waiting for its arguments' pre-expansion."""

    __slots__ = ("macro", "args", "needed", "k", "results", "hide", "ws")

    def __init__(self, macro, args, needed, hide, ws):
        self.macro, self.args, self.needed, self.hide, self.ws = macro, args, needed, hide, ws
        self.k = 0
        self.results: dict[int, list[_Tok]] = {}


class _Reader:
    """Tokens read on from a file's text while collecting a macro use's arguments."""

    __slots__ = ("pp", "context", "pos", "last_end")

    def __init__(self, pp: "_Preprocessor", context: _Context, pos: int) -> None:
        self.pp = pp
        self.context = context
        self.pos = pos
        self.last_end = pos  # one past the last token taken: the end of the macro use

    def lparen_follows(self) -> bool:
        text = self.context.file.text
        p = _SPACES.match(text, self.pos).end()
        return p < len(text) and text[p] == "("

    def next(self) -> _Tok | None:
        file = self.context.file
        text = file.text
        n = len(text)
        pos = self.pos
        ws = False
        while pos < n:
            m = _TOKEN.match(text, pos)
            kind = m.lastgroup
            end = m.end()
            if kind == "nl":
                ws = True
                pos = end
                while pos < n and (d := _DIRECTIVE.match(text, pos)) is not None:
                    pos = self.pp._directive(self.context, pos, d.end(), emit=False)
                continue
            if kind == "ws":
                ws = True
            elif kind == "bc" or kind == "lc":
                self.pp._comment(file, pos, end)
                ws = True
            else:
                self.pos = self.last_end = end
                return _Tok(_KIND[kind], m.group(), ws)
            pos = end
        self.pos = pos
        return None


# ============================================================================ #if expressions

_M64 = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_BINARY = {
    "*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11,
    "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9,
    "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4, ",": 1,
}  # fmt: skip
_ALTERNATIVE = {
    "and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|",
    "xor": "^", "compl": "~", "not_eq": "!=",
}  # fmt: skip
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27, "\\": 92, "'": 39, '"': 34, "?": 63}


class _ExprError(Exception):
    pass


def _wrap(value: int, unsigned: bool) -> tuple[int, bool]:
    if unsigned:
        return value & _M64, True
    return ((value + (1 << 63)) & _M64) - (1 << 63), False


def _parse_integer(text: str) -> tuple[int, bool]:
    spelling = text.replace("'", "")
    m = _INTEGER.fullmatch(spelling)
    if m is None:
        lower = spelling.lower()
        if "." in spelling or (not lower.startswith("0x") and "e" in lower) or "p" in lower:
            raise _ExprError("floating constant in preprocessor expression")
        raise _ExprError(f"invalid integer constant '{text}' in preprocessor expression")
    digits, suffix = m.group(1), m.group(2)
    lower = digits.lower()
    if lower.startswith("0x"):
        value = int(digits[2:], 16)
    elif lower.startswith("0b"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        if "8" in digits or "9" in digits:
            raise _ExprError(f"invalid digit in octal constant '{text}'")
        value = int(digits, 8)
    else:
        value = int(digits)
    if value > _M64:
        raise _ExprError(f"integer constant '{text}' is too large")
    return value, "u" in suffix.lower() or value > _INT64_MAX


def _parse_char(text: str) -> tuple[int, bool]:
    quote = text.index("'")
    prefix, body = text[:quote], text[quote + 1 :]
    if not body.endswith("'") or len(body) < 2:
        raise _ExprError("missing terminating ' character" if not body.endswith("'") else "empty character constant")
    body = body[:-1]
    values = []
    i = 0
    while i < len(body):
        c = body[i]
        i += 1
        if c != "\\":
            values.append(ord(c))
            continue
        e = body[i] if i < len(body) else ""
        i += 1
        if e in _ESCAPES:
            values.append(_ESCAPES[e])
        elif e == "x":
            j = i
            while j < len(body) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            values.append(int(body[i:j], 16) if j > i else 0)
            i = j
        elif e in "01234567" and e:
            j = i
            while j < len(body) and j < i + 2 and body[j] in "01234567":
                j += 1
            values.append(int(body[i - 1 : j], 8))
            i = j
        elif e in ("u", "U"):
            width = 4 if e == "u" else 8
            digits = body[i : i + width]
            values.append(int(digits, 16) if digits and all(d in "0123456789abcdefABCDEF" for d in digits) else 0)
            i += width
        else:
            values.append(ord(e) if e else 0)
    if prefix:  # L'x', u'x', U'x', u8'x': the value of the (last) character
        return values[-1], False
    value = 0
    for v in values:
        value = (value << 8) | (v & 0xFF)
    if len(values) == 1:
        value = values[0]
        if 128 <= value < 256:  # plain char is signed
            value -= 256
    else:
        value &= 0xFFFFFFFF
        if value >= 1 << 31:
            value -= 1 << 32
    return value, False


def _evaluate(tokens: Sequence[_Tok]) -> int:
    """Value of a fully expanded `#if` expression (C semantics on 64-bit intmax_t/uintmax_t).

    Shunting-yard to RPN, then a stack machine: no recursion, so nesting depth is free.
    Division by zero poisons only the branches that are evaluated (`0 && 1/0` is fine).
    """
    rpn: list[tuple] = []
    ops: list[tuple[str, int, str]] = []  # (operator, precedence, role: u b ( ? t)
    expect = True  # an operand comes next
    for tok in tokens:
        kind, text = tok.kind, tok.text
        if kind == ID and text in _ALTERNATIVE:
            kind, text = PUNCT, _ALTERNATIVE[text]
        if kind in (ID, NUM, CHR):
            if not expect:
                raise _ExprError(f"missing binary operator before token '{text}'")
            if kind == ID:
                rpn.append(("v", 1 if text == "true" else 0, False))
            elif kind == NUM:
                rpn.append(("v", *_parse_integer(text)))
            else:
                rpn.append(("v", *_parse_char(text)))
            expect = False
            continue
        if kind != PUNCT:
            raise _ExprError(f"token '{text}' is not valid in preprocessor expressions")
        if expect:
            if text == "(":
                ops.append(("(", 0, "("))
            elif text in ("+", "-", "!", "~"):
                ops.append((text, 14, "u"))
            elif text in _BINARY or text in ("?", ":", ")"):
                raise _ExprError(f"missing expression before '{text}'")
            else:
                raise _ExprError(f"token '{text}' is not valid in preprocessor expressions")
            continue
        if text == ")":
            while ops and ops[-1][2] not in ("(", "?"):
                rpn.append(ops.pop())
            if not ops or ops[-1][2] != "(":
                raise _ExprError("missing '(' in expression" if not ops else "'?' without following ':'")
            ops.pop()
        elif text == "?":
            while ops and ops[-1][2] in ("u", "b") and ops[-1][1] > 3:
                rpn.append(ops.pop())
            ops.append(("?", 3, "?"))
            expect = True
        elif text == ":":
            while ops and ops[-1][2] not in ("(", "?"):
                rpn.append(ops.pop())
            if not ops or ops[-1][2] != "?":
                raise _ExprError("':' without preceding '?'")
            ops[-1] = (":", 3, "t")
            expect = True
        elif text in _BINARY:
            prec = _BINARY[text]
            while ops and ops[-1][2] in ("u", "b", "t") and ops[-1][1] >= prec:
                rpn.append(ops.pop())
            ops.append((text, prec, "b"))
            expect = True
        elif text == "(":
            raise _ExprError("missing binary operator before token '('")
        else:
            raise _ExprError(f"token '{text}' is not valid in preprocessor expressions")
    if expect:
        raise _ExprError("missing expression" if tokens else "#if with no expression")
    while ops:
        op = ops.pop()
        if op[2] == "(":
            raise _ExprError("missing ')' in expression")
        if op[2] == "?":
            raise _ExprError("'?' without following ':'")
        rpn.append(op)

    stack: list[tuple[int, bool] | None] = []  # None: poisoned by a division by zero
    for item in rpn:
        role = item[2] if item[0] != "v" else "v"
        if role == "v":
            stack.append((item[1], item[2]))
        elif role == "u":
            a = stack.pop()
            if a is not None:
                v, unsigned = a
                op = item[0]
                if op == "!":
                    a = (int(v == 0), False)
                elif op == "-":
                    a = _wrap(-v, unsigned)
                elif op == "~":
                    a = _wrap(~v, unsigned)
            stack.append(a)
        elif role == "t":
            else_ = stack.pop()
            then = stack.pop()
            cond = stack.pop()
            if cond is None:
                stack.append(None)
                continue
            pick = then if cond[0] else else_
            unsigned = any(x is not None and x[1] for x in (then, else_))
            stack.append(None if pick is None else _wrap(pick[0], unsigned))
        else:
            b = stack.pop()
            a = stack.pop()
            stack.append(_binary(item[0], a, b))
    result = stack.pop()
    if result is None:
        raise _ExprError("division by zero in #if")
    return result[0]


def _binary(op: str, a, b):
    if op == "&&":
        if a is None or not a[0]:
            return a if a is None else (0, False)
        return None if b is None else (int(b[0] != 0), False)
    if op == "||":
        if a is None or a[0]:
            return a if a is None else (1, False)
        return None if b is None else (int(b[0] != 0), False)
    if a is None or b is None:
        return None
    if op == ",":
        return b
    av, au = a
    bv, bu = b
    if op in ("<<", ">>"):
        count = bv if op == "<<" else -bv
        if au:
            av &= _M64
        if count >= 0:
            return _wrap(av << count if count < 64 else 0, au)
        count = -count
        return _wrap(av >> count if count < 64 else (-1 if av < 0 else 0), au)
    unsigned = au or bu
    if unsigned:
        av &= _M64
        bv &= _M64
    if op == "*":
        r = av * bv
    elif op in ("/", "%"):
        if bv == 0:
            return None
        q = abs(av) // abs(bv)
        if (av < 0) != (bv < 0):
            q = -q
        r = q if op == "/" else av - bv * q
    elif op == "+":
        r = av + bv
    elif op == "-":
        r = av - bv
    elif op == "<":
        return int(av < bv), False
    elif op == "<=":
        return int(av <= bv), False
    elif op == ">":
        return int(av > bv), False
    elif op == ">=":
        return int(av >= bv), False
    elif op == "==":
        return int(av == bv), False
    elif op == "!=":
        return int(av != bv), False
    elif op == "&":
        r = av & bv
    elif op == "^":
        r = av ^ bv
    else:  # "|"
        r = av | bv
    return _wrap(r, unsigned)


# ============================================================================ the preprocessor

_HAS_FUNCTIONS = frozenset(
    {
        "__has_include", "__has_include_next", "__has_attribute", "__has_cpp_attribute",
        "__has_builtin", "__has_feature", "__has_extension", "__has_declspec_attribute",
        "__has_warning",
    }
)  # fmt: skip
_RESERVED = frozenset({"defined", "_Pragma"}) | _HAS_FUNCTIONS
_DYNAMIC = ("__FILE__", "__LINE__", "__COUNTER__", "__BASE_FILE__", "__INCLUDE_LEVEL__", "__DATE__", "__TIME__")
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef"})
_ALTERNATES = frozenset({"elif", "else", "elifdef", "elifndef"})


def _default_read(path: str) -> str | None:
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        return f.read()


class _Preprocessor:
    def __init__(self, defines, include_paths, read_file) -> None:
        self.include_paths = [str(p) for p in include_paths or ()]
        self.read = read_file or _default_read
        self.macros: dict[str, _Macro] = {}
        self.version = 0  # bumped on every (re)definition: invalidates the expansion cache
        self.cache: dict[str, tuple[int, str]] = {}
        self.pushed: dict[str, list[_Macro | None]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.comments: list[Comment] = []
        self.comment_keys: set[tuple[str, int]] = set()
        self.files: list[SourceFile] = []
        self.loaded: dict[str, _File | None] = {}
        self.once: set[str] = set()
        self.guards: dict[str, str] = {}
        self.system_includes: dict[str, None] = {}
        self.stack: list[_Context] = []
        self.includes = 0
        self.too_deep = False
        self.counter = 0
        self.quiet = False  # no redefinition warnings (predefined and command-line macros)
        # expansion state
        self.budget = 0
        self.volatile = False  # the current expansion must not be cached
        self.site: tuple[_Context, int, int] | None = None  # where the current expansion is used
        self.hash_pos = 0  # offset of the '#' of the directive being run
        # output
        self.parts: list[str] = []
        self.length = 0
        self.seg_start: list[int] = []
        self.seg_file: list[int] = []
        self.seg_orig: list[int] = []
        self.seg_kind: list[int] = []
        self.seg_end: list[int] = []
        self._predefine(defines)

    # ------------------------------------------------------------------ set-up

    def _predefine(self, defines: Mapping[str, str | None]) -> None:
        for name in _DYNAMIC:
            self.macros[name] = _Macro(name, DYNAMIC)
        self.macros["_Pragma"] = _Macro("_Pragma", OPERATOR)
        lines = [f"#define {name} {value}" for name, value in PREDEFINED_MACROS.items()]
        self.quiet = True
        self._run_directives("<built-in>", "\n".join(lines))
        lines = []
        for name, value in (defines or {}).items():
            name = str(name)
            if value is None:
                name, eq, value = name.partition("=")
                value = value if eq else "1"
            lines.append(f"#define {name.strip()} {str(value)}".replace("\n", " ").replace("\r", " "))
        self._run_directives("<command-line>", "\n".join(lines))
        self.quiet = False

    def _run_directives(self, path: str, text: str) -> None:
        context = _Context(_File(path, path, text))
        pos = 0
        n = len(context.file.text)
        while pos < n:
            d = _DIRECTIVE.match(context.file.text, pos)
            if d is None:
                nl = context.file.text.find("\n", pos)
                pos = n if nl < 0 else nl + 1
            else:
                pos = self._directive(context, pos, d.end(), emit=False)

    # ------------------------------------------------------------------ driver

    def run(self, text: str, path: str) -> Preprocessed:
        main = _File(path, self._key(path), text)
        self._register(main)
        self.loaded[main.key] = main
        self.stack.append(_Context(main))
        while self.stack:
            context = self.stack[-1]
            self._scan(context)
            if self.stack[-1] is context:
                self._finish(context)
                self.stack.pop()
        out = "".join(self.parts)
        linemap = LineMap(
            self.files, self.seg_start, self.seg_file, self.seg_orig, self.seg_kind, self.seg_end, len(out)
        )
        macros = {name: m.text for name, m in self.macros.items() if m.kind == OBJECT}
        return Preprocessed(
            path=path,
            text=out,
            linemap=linemap,
            comments=tuple(self.comments),
            diagnostics=tuple(self.diagnostics),
            macros=MappingProxyType(macros),
            system_includes=tuple(self.system_includes),
        )

    def _finish(self, context: _Context) -> None:
        file = context.file
        for cond in context.conds:
            self._diag(_ERROR, f"unterminated #{cond.name}", file.location(cond.start, cond.end))
        if (
            context.guard is not None
            and context.guard_end >= 0
            and _SPACES.match(file.text, context.guard_end).end() == len(file.text)
        ):
            self.guards[file.key] = context.guard_name
        if len(self.stack) > 1 and self.parts and not self.parts[-1].endswith("\n"):
            end = len(file.original)
            self._segment("\n", file.index, end, EXPANSION, end)

    @staticmethod
    def _key(path: str) -> str:
        if path.startswith("<") and path.endswith(">"):
            return path
        return os.path.normcase(os.path.abspath(path))

    def _register(self, file: _File) -> None:
        if file.index < 0:
            file.index = len(self.files)
            self.files.append(file.source)

    def _diag(self, severity: Severity, message: str, location: Location, notes: tuple[str, ...] = ()) -> None:
        self.diagnostics.append(Diagnostic(severity, message, code=CODE, location=location, notes=notes))

    def _site_location(self) -> Location:
        if self.site is None:
            return Location("<built-in>", 1, 1, 1, 1)
        context, start, end = self.site
        return context.file.location(start, end)

    # ------------------------------------------------------------------ output

    def _segment(self, text: str, file: int, orig: int, kind: int, end: int = -1) -> None:
        if not text:
            return
        if (
            kind != EXPANSION
            and self.seg_kind
            and self.seg_kind[-1] == kind
            and self.seg_file[-1] == file
            and self.seg_orig[-1] + (self.length - self.seg_start[-1]) == orig
        ):  # continues the previous segment
            self.parts.append(text)
            self.length += len(text)
            return
        self.seg_start.append(self.length)
        self.seg_file.append(file)
        self.seg_orig.append(orig)
        self.seg_kind.append(kind)
        self.seg_end.append(end)
        self.parts.append(text)
        self.length += len(text)

    def _verbatim(self, file: _File, start: int, end: int) -> None:
        if end <= start:
            return
        text = file.text
        if not file.splices:
            self._segment(text[start:end], file.index, start, VERBATIM)
            return
        splices = file.splices
        i = bisect_right(splices, start)
        while i < len(splices) and splices[i] < end:
            p = splices[i]
            self._segment(text[start:p], file.index, file.orig(start), VERBATIM)
            start = p
            while i < len(splices) and splices[i] == p:
                i += 1
        self._segment(text[start:end], file.index, file.orig(start), VERBATIM)

    def _newlines(self, file: _File, start: int, end: int) -> None:
        """Emit one newline per original line break inside the spliced range [start, end)."""
        if end <= start or (not file.splices and file.text.find("\n", start, end) < 0):
            return
        a = file.orig(start)
        b = file.orig(end - 1) + 1
        original = file.original
        count = original.count("\n", a, b)
        if count:
            first = original.find("\n", a, b)
            row = bisect_right(file.source.line_starts, first) - 1
            self._segment("\n" * count, file.index, row, NEWLINES)

    def _comment(self, file: _File, start: int, end: int) -> None:
        """Record a comment (once, however often its file is read)."""
        key = (file.key, start)
        if key in self.comment_keys:
            return
        self.comment_keys.add(key)
        text = file.text[start:end]
        self.comments.append(Comment(text, file.location(start, end)))
        if text.startswith("/*") and (len(text) < 4 or not text.endswith("*/")):
            self._diag(_ERROR, "unterminated comment", file.location(start, start + 2))

    def _emit_comment(self, file: _File, start: int, end: int) -> None:
        self._comment(file, start, end)
        self._segment(" ", file.index, file.orig(start), EXPANSION, file.orig(end - 1) + 1)
        self._newlines(file, start, end)

    # ------------------------------------------------------------------ text lines

    def _scan(self, context: _Context) -> None:
        """Copy text from context.pos on, acting on directives, comments and macro uses.

        Returns at the end of the file, or after an #include pushed a new context.
        """
        file = context.file
        text = file.text
        n = len(text)
        macros = self.macros
        pos = run = context.pos
        while True:
            if pos == 0 and (d := _DIRECTIVE.match(text)) is not None:
                pos = run = self._directive(context, 0, d.end(), emit=True)
                if self.stack[-1] is not context:
                    context.pos = pos
                    return
                continue
            # a directive is matched from the newline before it: start there at a line start
            for m in _SCAN.finditer(text, pos - 1 if pos and text[pos - 1] == "\n" else pos):
                kind = m.lastgroup
                if kind == "id" or kind == "idq":
                    macro = macros.get(m.group(kind))
                    if macro is None:
                        continue
                    start, end = m.span(kind)
                    if macro.kind in (FUNCTION, OPERATOR):
                        p = _SPACES.match(text, end).end()
                        if p >= n or text[p] != "(":
                            continue
                    self._verbatim(file, run, start)
                    pos = run = self._expand_use(context, start, end, macro)
                    break
                if kind == "dir":
                    start = m.start(kind) + 1
                    self._verbatim(file, run, start)
                    pos = run = self._directive(context, start, m.end(), emit=True)
                    if self.stack[-1] is not context:
                        context.pos = pos
                        return
                    break
                if kind == "bc" or kind == "lc":
                    start, end = m.span(kind)
                    self._verbatim(file, run, start)
                    self._emit_comment(file, start, end)
                    run = end
            else:
                self._verbatim(file, run, n)
                context.pos = n
                return

    def _expand_use(self, context: _Context, start: int, end: int, macro: _Macro) -> int:
        """Expand the macro use whose name is at [start, end); emit it; return where it ends."""
        file = context.file
        text = file.text
        hit = self.cache.get(macro.name) if macro.kind == OBJECT else None
        if hit is not None and hit[0] == self.version:
            out = hit[1]
            stop = end
        else:
            reader = _Reader(self, context, end)
            self.site = (context, start, end)
            self.volatile = False
            try:
                tokens = self._expand([_Tok(ID, macro.name)], reader, if_mode=False)
            except _TooBig:
                message = f"expansion of macro '{macro.name}' is too large or too deeply nested; left unexpanded"
                self._diag(_ERROR, message, file.location(start, end))
                self._verbatim(file, start, reader.last_end)
                return reader.last_end
            stop = reader.last_end
            out = _join(tokens)
            if macro.kind == OBJECT and stop == end and not self.volatile:
                last = tokens[-1] if tokens else None
                if last is None or last.kind != ID or getattr(self.macros.get(last.text), "kind", None) != FUNCTION:
                    self.cache[macro.name] = (self.version, out)
        if not out:
            out = " "
        if self.parts and _needs_space(self.parts[-1][-1], out[0]):
            out = " " + out
        if stop < len(text) and _needs_space(out[-1], text[stop]):
            out += " "
        self._segment(out, file.index, file.orig(start), EXPANSION, file.orig(stop - 1) + 1)
        self._newlines(file, start, stop)
        return stop

    # ------------------------------------------------------------------ expansion

    def _expand(self, tokens: list[_Tok], reader: _Reader | None, if_mode: bool) -> list[_Tok]:
        """Macro-expand tokens (Prosser's algorithm), reading on from `reader` if needed."""
        macros = self.macros
        self.budget = MAX_EXPANSION_STEPS
        jobs = [_Job(tokens[::-1], reader)]
        painted: dict[tuple[frozenset, str], frozenset] = {}  # (hide set, name) -> hide set | {name}
        while True:
            job = jobs[-1]
            stack = job.stack
            if not stack:
                if len(jobs) == 1:
                    return job.out
                jobs.pop()
                parent = jobs[-1]
                wait = parent.wait
                wait.results[wait.needed[wait.k]] = job.out
                wait.k += 1
                if wait.k < len(wait.needed):
                    jobs.append(_Job(wait.args[wait.needed[wait.k]][::-1], None))
                else:
                    parent.wait = None
                    self._push(parent, self._substitute(wait.macro, wait.args, wait.results, wait.hide, wait.ws))
                continue
            tok = stack.pop()
            if tok.kind != ID:
                job.out.append(tok)
                continue
            name = tok.text
            macro = macros.get(name)
            if macro is None or name in tok.hide:
                if if_mode and macro is None:
                    if name == "defined":
                        tok = self._defined(job, tok)
                    elif name in _HAS_FUNCTIONS:
                        tok = self._has(job, tok)
                job.out.append(tok)
                continue
            kind = macro.kind
            if kind == OBJECT:
                hide = painted.get((tok.hide, name))
                if hide is None:
                    hide = painted[tok.hide, name] = tok.hide | {name}
                self._push(job, self._substitute(macro, [], {}, hide, tok.ws))
            elif kind == DYNAMIC:
                job.out.append(self._dynamic(name, tok))
            elif kind == OPERATOR:  # _Pragma("...") vanishes
                if not self._lparen_next(job):
                    job.out.append(tok)
                    continue
                args, _, consumed = self._collect(job, macro, 1)
                if args is None:
                    job.out.append(tok)
                    job.out.extend(consumed)
                self.volatile = True
            else:
                if not self._lparen_next(job):
                    job.out.append(tok)
                    continue
                args, rparen, consumed = self._collect(job, macro, len(macro.params))
                if args is None:  # an error was reported: leave the use as it is
                    job.out.append(tok)
                    if rparen is None:
                        job.out.extend(consumed)
                    else:
                        self._push(job, consumed)
                    continue
                hide = (tok.hide & rparen.hide) | {name}
                needed = [i for i in macro.expand if args[i]]
                if needed:
                    job.wait = _Wait(macro, args, needed, hide, tok.ws)
                    jobs.append(_Job(args[needed[0]][::-1], None))
                else:
                    self._push(job, self._substitute(macro, args, {}, hide, tok.ws))

    def _expand_line(self, context: _Context, tokens: list[_Tok], if_mode: bool) -> list[_Tok]:
        """Expand a directive's tokens; it may run while a macro use's arguments are read."""
        saved = self.site, self.budget, self.volatile
        self.site = (context, tokens[0].pos, tokens[-1].end)
        try:
            return self._expand(tokens, None, if_mode)
        finally:
            self.site, self.budget = saved[0], saved[1]
            self.volatile = saved[2] or self.volatile

    def _push(self, job: _Job, tokens: list[_Tok]) -> None:
        self.budget -= len(tokens) + 1
        if self.budget < 0:
            raise _TooBig
        job.stack.extend(reversed(tokens))

    @staticmethod
    def _lparen_next(job: _Job) -> bool:
        if job.stack:
            return _is_punct(job.stack[-1], "(")
        return job.reader is not None and job.reader.lparen_follows()

    @staticmethod
    def _take(job: _Job) -> _Tok | None:
        if job.stack:
            return job.stack.pop()
        if job.reader is not None:
            return job.reader.next()
        return None

    def _collect(self, job: _Job, macro: _Macro, nparams: int):
        """Arguments of a use whose '(' is next: (args, ')' token, consumed tokens).

        On an error args is None; ')' is None if the list was unterminated.
        """
        take = self._take
        consumed = [take(job)]
        variadic = macro.variadic
        args: list[list[_Tok]] = [[]]
        depth = 0
        while True:
            tok = take(job)
            if tok is None:
                self._diag(_ERROR, f"unterminated argument list invoking macro '{macro.name}'", self._site_location())
                return None, None, consumed
            consumed.append(tok)
            if tok.kind == PUNCT:
                text = tok.text
                if text == "(":
                    depth += 1
                elif text == ")":
                    if depth == 0:
                        rparen = tok
                        break
                    depth -= 1
                elif text == "," and depth == 0 and (not variadic or len(args) < nparams):
                    args.append([])
                    continue
            args[-1].append(tok)
        self.budget -= len(consumed)
        if self.budget < 0:
            raise _TooBig
        if macro.kind == OPERATOR:
            return args, rparen, consumed
        given = len(args)
        if nparams == 0:
            if given == 1 and not args[0]:
                return [], rparen, consumed
            message = f"macro '{macro.name}' passed {given} arguments, but takes just 0"
        elif given == nparams or (variadic and given == nparams - 1):
            if given < nparams:
                args.append(_ABSENT)
            return args, rparen, consumed
        elif given < nparams:
            message = f"macro '{macro.name}' requires {nparams} arguments, but only {given} given"
        else:
            message = f"macro '{macro.name}' passed {given} arguments, but takes just {nparams}"
        self._diag(_ERROR, message, self._site_location())
        self.volatile = True
        return None, rparen, consumed

    def _substitute(self, macro: _Macro, args, expanded, hide: frozenset, ws: bool) -> list[_Tok]:
        """The replacement list with arguments substituted, `#` and `##` applied, and every
        token's hide set extended by `hide`; the first token takes the use's whitespace."""
        body = macro.body
        if macro.plain:
            result = [_Tok(kind, text, tws, hide) for kind, text, tws, _ in body]
            if result:
                result[0].ws = ws
            return result
        n = len(body)
        out: list[_Tok] = []
        unions: dict[frozenset, frozenset] = {}  # an argument token's hide set -> it plus `hide`
        placemarkers = False
        last = len(macro.params) - 1

        def add(tokens: Sequence[_Tok], first_ws: bool) -> None:
            first = True
            for t in tokens:
                u = unions.get(t.hide)
                if u is None:
                    u = unions[t.hide] = t.hide | hide
                out.append(_Tok(t.kind, t.text, first_ws if first else t.ws, u))
                first = False

        i = 0
        while i < n:
            kind, text, tws, idx = body[i]
            if kind == PUNCT and text == "#" and i + 1 < n and body[i + 1][3] >= 0:
                out.append(_Tok(STR, _stringize(args[body[i + 1][3]]), tws, hide))
                i += 2
                continue
            if kind == PUNCT and text == "##" and i + 1 < n:
                nkind, ntext, nws, nidx = body[i + 1]
                i += 2
                if nidx >= 0:
                    if macro.variadic and nidx == last and out and _is_punct(out[-1], ","):
                        # GNU `, ## __VA_ARGS__`: the comma goes when the variable arguments were
                        # left out, or are empty and the only parameter (as gcc -std=gnu++17)
                        if args[nidx]:
                            add(args[nidx], nws)
                        elif args[nidx] is _ABSENT or last == 0:
                            out.pop()
                        continue
                    if not args[nidx]:
                        continue  # pasting a placemarker leaves the left side as it is
                    mark = len(out)
                    add(args[nidx], nws)
                    rhs = out[mark:]
                    del out[mark:]
                elif nkind == PUNCT and ntext == "#" and i < n and body[i][3] >= 0:
                    rhs = [_Tok(STR, _stringize(args[body[i][3]]), nws, hide)]
                    i += 1
                else:
                    rhs = [_Tok(nkind, ntext, nws, hide)]
                lhs = out.pop() if out else _Tok(PLACEMARKER, "", False, hide)
                out.extend(self._paste(lhs, rhs[0], hide))
                out.extend(rhs[1:])
                continue
            if idx >= 0:
                if i + 1 < n and body[i + 1][0] == PUNCT and body[i + 1][1] == "##":
                    if not args[idx]:
                        out.append(_Tok(PLACEMARKER, "", tws, hide))
                        placemarkers = True
                    else:
                        add(args[idx], tws)
                else:
                    add(expanded.get(idx, ()), tws)
                i += 1
                continue
            out.append(_Tok(kind, text, tws, hide))
            i += 1
        if placemarkers:
            out = [t for t in out if t.kind != PLACEMARKER]
        if out:
            out[0].ws = ws
        return out

    def _paste(self, lhs: _Tok, rhs: _Tok, hide: frozenset) -> list[_Tok]:
        if lhs.kind == PLACEMARKER:
            return [_Tok(rhs.kind, rhs.text, lhs.ws, rhs.hide)]
        text = lhs.text + rhs.text
        m = _TOKEN.match(text)
        if m is not None and m.end() == len(text) and m.lastgroup in _KIND and m.lastgroup != "other":
            return [_Tok(_KIND[m.lastgroup], text, lhs.ws, hide)]
        if lhs.kind in (STR, CHR) and rhs.kind == ID and _LITERAL_SUFFIX.fullmatch(text):
            return [_Tok(lhs.kind, text, lhs.ws, hide)]  # a C++11 user-defined literal
        self._diag(
            _ERROR,
            f"pasting '{lhs.text}' and '{rhs.text}' does not give a valid preprocessing token",
            self._site_location(),
        )
        self.volatile = True
        return [lhs, _Tok(rhs.kind, rhs.text, False, rhs.hide)]

    def _dynamic(self, name: str, tok: _Tok) -> _Tok:
        self.volatile = True
        context = self.site[0] if self.site else None
        if name == "__LINE__":
            line = 1
            if self.site is not None:
                line = context.file.location(self.site[1], self.site[1]).line
            return _Tok(NUM, str(line), tok.ws)
        if name == "__COUNTER__":
            self.counter += 1
            return _Tok(NUM, str(self.counter - 1), tok.ws)
        if name == "__INCLUDE_LEVEL__":
            return _Tok(NUM, str(max(len(self.stack) - 1, 0)), tok.ws)
        if name in ("__FILE__", "__BASE_FILE__"):
            path = self.stack[0].file.path if name == "__BASE_FILE__" or context is None else context.file.path
            return _Tok(STR, '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"', tok.ws)
        if name == "__DATE__":
            return _Tok(STR, '"Jan  1 1970"', tok.ws)
        return _Tok(STR, '"00:00:00"', tok.ws)

    def _defined(self, job: _Job, tok: _Tok) -> _Tok:
        stack = job.stack
        name = stack.pop() if stack else None
        paren = _is_punct(name, "(")
        if paren:
            name = stack.pop() if stack else None
        if name is None or name.kind != ID:
            if name is not None:
                stack.append(name)
            self._diag(_ERROR, "operator 'defined' requires an identifier", self._site_location())
            return _Tok(NUM, "0", tok.ws)
        if paren:
            close = stack.pop() if stack else None
            if not _is_punct(close, ")"):
                if close is not None:
                    stack.append(close)
                self._diag(_ERROR, "missing ')' after 'defined'", self._site_location())
        return _Tok(NUM, "1" if self._is_defined(name.text) else "0", tok.ws)

    def _has(self, job: _Job, tok: _Tok) -> _Tok:
        """`__has_include("x.h")` and friends inside #if."""
        stack = job.stack
        zero = _Tok(NUM, "0", tok.ws)
        if not (stack and _is_punct(stack[-1], "(")):
            self._diag(_ERROR, f"missing '(' after '{tok.text}'", self._site_location())
            return zero
        stack.pop()
        inner: list[_Tok] = []
        depth = 0
        while True:
            t = stack.pop() if stack else None
            if t is None:
                self._diag(_ERROR, f"missing ')' after '{tok.text}' operand", self._site_location())
                return zero
            if t.kind == PUNCT and t.text == "(":
                depth += 1
            elif t.kind == PUNCT and t.text == ")":
                if depth == 0:
                    break
                depth -= 1
            inner.append(t)
        if tok.text not in ("__has_include", "__has_include_next"):
            return zero
        if len(inner) == 1 and inner[0].kind == STR and inner[0].text.startswith('"'):
            name = inner[0].text[1:-1]
            context = self.site[0] if self.site else self.stack[-1]
            found = bool(name) and self._resolve(name, context) is not None
            return _Tok(NUM, "1" if found else "0", tok.ws)
        if len(inner) >= 2 and _is_punct(inner[0], "<") and _is_punct(inner[-1], ">"):
            return _Tok(NUM, "1", tok.ws)  # system headers are assumed to exist
        self._diag(_ERROR, f"operator '{tok.text}' requires a header name", self._site_location())
        return zero

    def _is_defined(self, name: str) -> bool:
        macro = self.macros.get(name)
        return (macro is not None and macro.kind != OPERATOR) or name in _HAS_FUNCTIONS

    # ------------------------------------------------------------------ directives

    def _lex_line(self, file: _File, pos: int) -> tuple[list[_Tok], int]:
        """Tokens of a directive from pos to its end of line; comments are recorded."""
        text = file.text
        n = len(text)
        tokens: list[_Tok] = []
        ws = False
        eol = text.find("\n", pos)
        if eol < 0:
            eol = n
        if text.find("/*", pos, eol) < 0 and text.find('R"', pos, eol) < 0:
            # the usual case: nothing can run past the end of the line
            for m in _TOKEN.finditer(text, pos, eol):
                kind = m.lastgroup
                if kind == "ws":
                    ws = True
                elif kind == "lc":
                    self._comment(file, *m.span())
                    ws = True
                else:
                    tokens.append(_Tok(_KIND[kind], m.group(), ws, _EMPTY, m.start()))
                    ws = False
            return tokens, eol
        match = _TOKEN.match
        while pos < n:
            m = match(text, pos)
            kind = m.lastgroup
            if kind == "nl":
                return tokens, pos
            end = m.end()
            if kind == "ws":
                ws = True
            elif kind == "bc" or kind == "lc":
                self._comment(file, pos, end)
                ws = True
            else:
                tokens.append(_Tok(_KIND[kind], m.group(), ws, _EMPTY, pos))
                ws = False
            pos = end
        return tokens, n

    def _directive(self, context: _Context, start: int, hash_end: int, emit: bool) -> int:
        """Run the directive whose line starts at `start`; return where reading goes on.

        The result is the start of a line (or the end of the file). With emit, the
        directive's lines (and any group it skips) leave empty lines in the output.
        """
        file = context.file
        self.hash_pos = hash_end - 1  # directives never nest, so one slot is enough
        if hash_end - start > 1 and file.text.find("/*", start, hash_end) >= 0:
            for m in _BLOCK_RE.finditer(file.text, start, hash_end):
                self._comment(file, *m.span())
        tokens, eol = self._lex_line(file, hash_end)
        nxt = eol + 1 if eol < len(file.text) else eol
        if emit:
            self._newlines(file, start, nxt)
        if not tokens:
            return nxt  # the null directive
        head = tokens[0]
        args = tokens[1:]
        if head.kind != ID:
            if head.kind != NUM:  # `# 12 "file"` line markers are ignored like #line
                self._diag(_ERROR, f"invalid preprocessing directive '#{head.text}'", file.location(head.pos, head.end))
            return nxt
        name = head.text
        if name in _CONDITIONALS:
            return self._if(context, head, args, start, nxt, emit)
        if name in _ALTERNATES:
            return self._else(context, head, args, nxt, emit)
        if name == "endif":
            if not context.conds:
                self._diag(_ERROR, "#endif without #if", file.location(self.hash_pos, head.end))
                return nxt
            cond = context.conds.pop()
            if cond is context.guard:
                context.guard_end = nxt
            self._extra(file, "endif", args)
            return nxt
        if name == "define":
            self._define(file, head, args)
        elif name == "undef":
            self._undef(file, head, args)
        elif name in ("include", "include_next", "import"):
            return self._include(context, head, args, eol, nxt, emit)
        elif name == "pragma":
            self._pragma(file, head, args)
        elif name in ("error", "warning"):
            message = file.text[head.end : eol].strip()
            severity = _ERROR if name == "error" else _WARNING
            self._diag(severity, f"#{name} {message}".rstrip(), file.location(self.hash_pos, eol))
        elif name not in ("line", "ident", "sccs", "assert", "unassert"):
            self._diag(_WARNING, f"unknown preprocessing directive '#{name}' ignored", file.location(self.hash_pos, head.end))
        return nxt

    def _extra(self, file: _File, name: str, extra: list[_Tok]) -> None:
        if extra:
            self._diag(_WARNING, f"extra tokens at end of #{name} directive", file.location(extra[0].pos, extra[-1].end))

    def _if(self, context: _Context, head: _Tok, args: list[_Tok], start: int, nxt: int, emit: bool) -> int:
        file = context.file
        name = head.text
        if name == "if":
            taken = self._condition(context, head, args)
        else:
            taken = self._ifdef(file, head, args)
        cond = _Cond(taken, self.hash_pos, head.end, name)
        context.conds.append(cond)
        guard = _guard_name(name, args)
        if guard and context.guard is None and _SPACES.match(file.text, 0, start).end() == start:
            context.guard = cond  # only blanks and comments before it: maybe an include guard
            context.guard_name = guard
        if taken:
            return nxt
        return self._skip(context, nxt, emit)

    def _ifdef(self, file: _File, head: _Tok, args: list[_Tok]) -> bool:
        if not args or args[0].kind != ID:
            self._diag(_ERROR, f"no macro name given in #{head.text} directive", file.location(self.hash_pos, head.end))
            return False
        self._extra(file, head.text, args[1:])
        defined = self._is_defined(args[0].text)
        return defined if head.text in ("ifdef", "elifdef") else not defined

    def _condition(self, context: _Context, head: _Tok, args: list[_Tok]) -> bool:
        file = context.file
        if not args:
            self._diag(_ERROR, f"#{head.text} with no expression", file.location(self.hash_pos, head.end))
            return False
        where = file.location(args[0].pos, args[-1].end)  # the expression
        try:
            tokens = self._expand_line(context, args, if_mode=True)
            return _evaluate(tokens) != 0
        except _TooBig:
            self._diag(_ERROR, f"#{head.text} expression is too large or too deeply nested to expand", where)
        except _ExprError as err:
            self._diag(_ERROR, f"invalid #{head.text} expression: {err}", where)
        return False

    def _else(self, context: _Context, head: _Tok, args: list[_Tok], nxt: int, emit: bool) -> int:
        file = context.file
        name = head.text
        if not context.conds:
            self._diag(_ERROR, f"#{name} without #if", file.location(self.hash_pos, head.end))
            return nxt
        cond = context.conds[-1]
        if cond is context.guard:
            context.guard = None
        if cond.else_seen:
            self._diag(_ERROR, f"#{name} after #else", file.location(self.hash_pos, head.end))
            return self._skip(context, nxt, emit)
        if name == "else":
            cond.else_seen = True
            self._extra(file, name, args)
            if cond.taken:
                return self._skip(context, nxt, emit)
            cond.taken = True
            return nxt
        if cond.taken:
            return self._skip(context, nxt, emit)
        if name == "elif":
            taken = self._condition(context, head, args)
        else:
            taken = self._ifdef(file, head, args)
        if taken:
            cond.taken = True
            return nxt
        return self._skip(context, nxt, emit)

    def _skip(self, context: _Context, pos: int, emit: bool) -> int:
        """Skip a group from pos to the start of the #elif/#else/#endif line that ends it."""
        file = context.file
        text = file.text
        depth = 0
        stop = len(text)
        for m in _SKIP.finditer(text, pos - 1 if pos and text[pos - 1] == "\n" else pos):
            kind = m.lastgroup
            if kind == "dir":
                name = _DIRECTIVE_NAME.match(text, m.end()).group(1)
                if name in _CONDITIONALS:
                    depth += 1
                elif name == "endif":
                    if depth == 0:
                        stop = m.start(kind) + 1
                        break
                    depth -= 1
                elif name in _ALTERNATES and depth == 0:
                    stop = m.start(kind) + 1
                    break
            elif kind == "bc" or kind == "lc":
                self._comment(file, *m.span(kind))
        if emit:
            self._newlines(file, pos, stop)
        return stop

    def _define(self, file: _File, head: _Tok, args: list[_Tok]) -> None:
        start, stop = self.hash_pos, args[-1].end if args else head.end

        def fail(message: str, notes: tuple[str, ...] = (), severity: Severity = _ERROR) -> None:
            self._diag(severity, message, file.location(start, stop), notes)

        if not args or args[0].kind != ID:
            fail("macro names must be identifiers" if args else "no macro name given in #define directive")
            return
        name = args[0].text
        if name in _RESERVED:
            fail(f"'{name}' cannot be used as a macro name")
            return
        rest = args[1:]
        params: list[str] = []
        variadic = False
        if rest and _is_punct(rest[0], "(") and not rest[0].ws:
            i = 1
            while True:
                tok = rest[i] if i < len(rest) else None
                if tok is None:
                    fail("missing ')' in macro parameter list")
                    return
                if _is_punct(tok, ")") and not params:
                    i += 1
                    break
                if _is_punct(tok, "..."):
                    params.append("__VA_ARGS__")
                    variadic = True
                    i += 1
                elif tok.kind == ID and tok.text != "__VA_ARGS__":
                    if tok.text in params:
                        fail(f"duplicate macro parameter '{tok.text}'")
                        return
                    params.append(tok.text)
                    i += 1
                    if i < len(rest) and _is_punct(rest[i], "..."):  # GNU named variadic: args...
                        variadic = True
                        i += 1
                else:
                    fail(f"expected parameter name, found '{tok.text}'")
                    return
                sep = rest[i] if i < len(rest) else None
                if _is_punct(sep, ")"):
                    i += 1
                    break
                if sep is None:
                    fail("missing ')' in macro parameter list")
                    return
                if not _is_punct(sep, ",") or variadic:
                    fail(f"expected ',' or ')' in macro parameter list, found '{sep.text}'")
                    return
                i += 1
            body_tokens = rest[i:]
            kind = FUNCTION
        else:
            body_tokens = rest
            kind = OBJECT
        index = {p: k for k, p in enumerate(params)}
        body = tuple(
            (t.kind, t.text, t.ws, index.get(t.text, -1) if t.kind == ID else -1) for t in body_tokens
        )
        if body and ((body[0][0] == PUNCT and body[0][1] == "##") or (body[-1][0] == PUNCT and body[-1][1] == "##")):
            fail("'##' cannot appear at either end of a macro expansion")
            return
        if kind == FUNCTION:
            for k, (tkind, ttext, _, _) in enumerate(body):
                if tkind == PUNCT and ttext == "#" and (k + 1 >= len(body) or body[k + 1][3] < 0):
                    fail("'#' is not followed by a macro parameter")
                    return
        macro = _Macro(name, kind, tuple(params), variadic, body, (file, start, stop))
        old = self.macros.get(name)
        if old is not None:
            if old.same_as(macro):
                return  # an identical redefinition changes nothing
            if not self.quiet:
                previous = old.where()
                fail(f"'{name}' redefined", (f"previous definition at {previous}",) if previous else (), _WARNING)
        self.macros[name] = macro
        self.version += 1

    def _undef(self, file: _File, head: _Tok, args: list[_Tok]) -> None:
        if not args or args[0].kind != ID:
            self._diag(_ERROR, "no macro name given in #undef directive", file.location(self.hash_pos, head.end))
            return
        name = args[0].text
        if name in _RESERVED:
            self._diag(_ERROR, f"'{name}' cannot be used as a macro name", file.location(args[0].pos, args[0].end))
            return
        self._extra(file, "undef", args[1:])
        self.macros.pop(name, None)
        self.version += 1

    def _pragma(self, file: _File, head: _Tok, args: list[_Tok]) -> None:
        if not args:
            return
        word = args[0].text
        if word == "once":
            self.once.add(file.key)
        elif word in ("push_macro", "pop_macro"):
            if (
                len(args) != 4
                or not _is_punct(args[1], "(")
                or args[2].kind != STR
                or not args[2].text.startswith('"')
                or not _is_punct(args[3], ")")
            ):
                message = f'invalid #pragma {word}: expected {word}("NAME")'
                self._diag(_WARNING, message, file.location(self.hash_pos, args[-1].end))
                return
            name = args[2].text[1:-1]
            if word == "push_macro":
                self.pushed.setdefault(name, []).append(self.macros.get(name))
            elif self.pushed.get(name):
                saved = self.pushed[name].pop()
                if saved is None:
                    self.macros.pop(name, None)
                else:
                    self.macros[name] = saved
                self.version += 1

    def _include(self, context: _Context, head: _Tok, args: list[_Tok], eol: int, nxt: int, emit: bool) -> int:
        file = context.file
        if not emit:
            self._diag(_ERROR, "#include inside macro arguments is not supported", file.location(self.hash_pos, head.end))
            return nxt
        m = _HEADER.match(file.text, head.end, eol)
        if m is not None:
            angle = m.group(1) is None
            name = m.group(2) if angle else m.group(1)
            where = file.location(m.start(2 if angle else 1) - 1, m.end(2 if angle else 1) + 1)
        else:
            if not args:
                self._diag(_ERROR, f'#{head.text} expects "FILENAME" or <FILENAME>', file.location(self.hash_pos, head.end))
                return nxt
            where = file.location(args[0].pos, args[-1].end)
            try:
                tokens = self._expand_line(context, args, if_mode=False)
            except _TooBig:
                tokens = []
            if tokens and tokens[0].kind == STR and tokens[0].text.startswith('"') and tokens[0].text.endswith('"'):
                angle, name = False, tokens[0].text[1:-1]
            elif len(tokens) >= 2 and _is_punct(tokens[0], "<") and _is_punct(tokens[-1], ">"):
                angle, name = True, _join(tokens[1:-1])
            else:
                self._diag(_ERROR, f'#{head.text} expects "FILENAME" or <FILENAME>', where)
                return nxt
        if angle:
            self.system_includes[name] = None
            return nxt
        if not name:
            self._diag(_ERROR, f"empty filename in #{head.text}", where)
            return nxt
        target = self._resolve(name, context)
        if target is None:
            searched = self._search_dirs(name, context)
            notes = (f"searched: {', '.join(searched)}",) if searched else ()
            self._diag(_ERROR, f'include file "{name}" not found', where, notes)
            return nxt
        if target.key in self.once:
            return nxt
        guard = self.guards.get(target.key)
        if guard is not None and guard in self.macros:
            return nxt
        if head.text == "import":
            self.once.add(target.key)
        if len(self.stack) > MAX_INCLUDE_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                message = f'#include nested more than {MAX_INCLUDE_DEPTH} levels deep; "{name}" not included'
                self._diag(_ERROR, message, where)
            return nxt
        if self.too_deep and any(c.file.key == target.key for c in self.stack):
            return nxt  # recursion that already hit the limit: don't hit it again per level
        self.includes += 1
        if self.includes > MAX_INCLUDES:
            if self.includes == MAX_INCLUDES + 1:
                self._diag(_ERROR, f"more than {MAX_INCLUDES} #include directives entered; the rest are ignored", where)
            return nxt
        self._register(target)
        self.stack.append(_Context(target))
        return nxt

    def _search_dirs(self, name: str, context: _Context) -> list[str]:
        if os.path.isabs(name):
            return []
        path = context.file.path
        own = "" if path.startswith("<") and path.endswith(">") else os.path.dirname(path)
        return [own or ".", *self.include_paths]

    def _resolve(self, name: str, context: _Context) -> _File | None:
        if os.path.isabs(name):
            candidates = [name]
        else:
            candidates = [os.path.join(d, name) for d in self._search_dirs(name, context)]
        for candidate in candidates:
            found = self._load(os.path.normpath(candidate))
            if found is not None:
                return found
        return None

    def _load(self, path: str) -> _File | None:
        key = self._key(path)
        if key in self.loaded:
            return self.loaded[key]
        try:
            text = self.read(path)
        except Exception:  # noqa: BLE001 - a reader that fails means "not there"
            text = None
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", errors="replace")
        file = _File(path, key, text) if isinstance(text, str) else None
        self.loaded[key] = file
        return file


def _stringize(tokens: Sequence[_Tok]) -> str:
    parts = []
    for i, tok in enumerate(tokens):
        if i and tok.ws:
            parts.append(" ")
        text = tok.text
        if tok.kind in (STR, CHR):
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(text)
    return '"' + "".join(parts) + '"'


def _guard_name(directive: str, args: list[_Tok]) -> str:
    """The guard macro of `#ifndef G` or `#if !defined(G)` / `#if !defined G`, else ''."""
    if directive == "ifndef":
        return args[0].text if len(args) == 1 and args[0].kind == ID else ""
    if directive != "if" or len(args) < 3 or not _is_punct(args[0], "!") or args[1].text != "defined":
        return ""
    rest = args[2:]
    if len(rest) == 1 and rest[0].kind == ID:
        return rest[0].text
    if len(rest) == 3 and _is_punct(rest[0], "(") and rest[1].kind == ID and _is_punct(rest[2], ")"):
        return rest[1].text
    return ""


# ============================================================================ entry points


def preprocess(
    text: str,
    path: str = "<input>",
    *,
    defines: Mapping[str, str | None] = _NO_DEFINES,
    include_paths: Sequence[str] = (),
    read_file: Callable[[str], str | None] | None = None,
) -> Preprocessed:
    """Preprocess CUDA source text. Never raises: problems become WL901 diagnostics.

    `defines` are `-D` options (a value of None means "1"); `include_paths` are searched for
    `#include "..."` after the including file's folder; `read_file(path)` returns a file's
    text, or None (or raises OSError) when there is none (default: read from disk).
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    try:
        return _Preprocessor(defines, include_paths, read_file).run(text, path)
    except Exception as exc:  # noqa: BLE001 - a bug must not take the whole analysis down
        message = f"internal preprocessor error ({type(exc).__name__}: {exc}); the file is read unpreprocessed"
        diagnostic = Diagnostic(_ERROR, message, code=CODE, location=Location(path, 1, 1, 1, 1))
        return Preprocessed(path, text, LineMap.identity(text, path), (), (diagnostic,), MappingProxyType({}), ())


def preprocess_file(
    path: str,
    *,
    defines: Mapping[str, str | None] = _NO_DEFINES,
    include_paths: Sequence[str] = (),
    read_file: Callable[[str], str | None] | None = None,
) -> Preprocessed:
    """Read `path` (UTF-8, undecodable bytes replaced) and preprocess it."""
    path = os.fspath(path)
    text: str | None
    error = ""
    try:
        text = (read_file or _default_read)(path)
    except Exception as exc:  # noqa: BLE001 - unreadable is a diagnostic, not a crash
        text, error = None, str(exc)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        result = preprocess("", path, defines=defines, include_paths=include_paths, read_file=read_file)
        message = f"cannot read {path}" + (f": {error}" if error else "")
        diagnostic = Diagnostic(_ERROR, message, code=CODE, location=Location(path, 1, 1, 1, 1))
        return Preprocessed(
            result.path,
            result.text,
            result.linemap,
            result.comments,
            (diagnostic, *result.diagnostics),
            result.macros,
            result.system_includes,
        )
    return preprocess(text, path, defines=defines, include_paths=include_paths, read_file=read_file)
