"""Error recovery and text repairs around the LALR parser.

Before parsing: `fix_misspelled_align` (`__align(8)__`, reported and read as `__align__(8)`)
and `join_launch_brackets` (`<< <` ... `>> >`). During parsing, when a declaration fails:
`unknown_type_name` guesses a type from a header that is never read (`curandState *s`),
`statement_bounds` finds the statement around an error inside a function body, so that
`blank_out` can replace it by spaces and the body be parsed again, `name_construct` names
the unsupported C++ construct it holds (a lambda, a range-based for ...), and
`diagnostic_for` words the diagnostic. `blank_initializers` empties a huge initializer
(a generated lookup table) that need not be parsed at all. Every repair keeps the length
of the text, so every offset, and so every span, stays valid.
"""

from __future__ import annotations

import re

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.lazy_pattern import lazy_compile
from analyzer.syntax.chunks import BODY_TOKENS, SIGNIFICANT
from analyzer.syntax.lalr import ParseError
from analyzer.syntax.postlex import KEYWORDS, NEXT_CHAR, TypeTable

# ----------------------------------------------------------------------------- text repairs

_MISSPELLED_ALIGN = lazy_compile(r"__align\(\s*(\d+)\s*\)__")


def fix_misspelled_align(text: str, diagnostics: list[Diagnostic]) -> str:
    """`__align(8)__` (as an old tutorial spells it) is not CUDA: report it, then read it as
    `__align__(8)`, which has the same length, so every offset stays valid."""

    def replace(m: re.Match[str]) -> str:
        n = m.group(1)
        diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                f"'{m.group(0)}' is not a CUDA attribute: the spelling is '__align__({n})' "
                f"(nvcc reads '{m.group(0)}' as an unknown name); read as '__align__({n})'",
                "WL906",
                Span(m.start(), m.end()),
            )
        )
        fixed = f"__align__({n})"
        return fixed + " " * (len(m.group(0)) - len(fixed))

    return _MISSPELLED_ALIGN.sub(replace, text)


_SPLIT_LAUNCH = lazy_compile(r"<<(\s+)<([^;{}]*?)>>(\s+)>")


def join_launch_brackets(text: str) -> str:
    """`k<< <grid, block>> >(...)` -- how a preprocessor may print `<<<`/`>>>` that came through
    a macro argument -- is read as `k<<<grid, block>>>(...)`; every offset stays valid."""

    def join(m: re.Match[str]) -> str:
        return f"<<<{m.group(1)}{m.group(2)}>>>{m.group(3)}"

    return _SPLIT_LAUNCH.sub(join, text)


# ----------------------------------------------------------------------------- construct names

_CONSTRUCTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazy_compile(r"\[[&=]?[\w\s,&=]*\]\s*(\([^)]*\))?\s*(mutable\s*)?(->\s*[\w:<>*&\s]+)?\{"), "lambda expression"),
    (lazy_compile(r"\bfor\s*\([^;()]*\b\w+\s*:[^:]"), "range-based for loop"),
    (lazy_compile(r"\bstatic_assert\b"), "static_assert"),
    (lazy_compile(r"^\s*using\b"), "using declaration"),
    (lazy_compile(r"^\s*namespace\b"), "namespace alias"),
    (lazy_compile(r"\bnew\b"), "new expression"),
    (lazy_compile(r"\bdelete\b"), "delete expression"),
    (lazy_compile(r"\b(try|catch|throw)\b"), "exception handling"),
    (lazy_compile(r"\bdecltype\b"), "decltype"),
    (lazy_compile(r"\btemplate\b"), "template declaration"),
    (lazy_compile(r"\boperator\b"), "operator overload"),
    (lazy_compile(r"\bgoto\b|^\s*\w+\s*:(?!:)"), "goto/label"),
    (lazy_compile(r"\basm\b|\b__asm__\b"), "inline assembly"),
    (lazy_compile(r"\b(?:struct|union|class)\b[^;]*\{[^}]*\b\w+\s*:\s*\d+\s*[;,]"), "bit-field"),
    (lazy_compile(r"\b(class|struct)\b[^;{]*\{"), "class definition"),
    (lazy_compile(r"\b\w+(::\w+)+\s*<"), "C++ template use"),
    (lazy_compile(r"::"), "qualified name"),
    # `= {1, 2}`, `f({1, 2})`, `return {a, b}`, `float3{x, y, z}` -- not any block `) {`
    (
        lazy_compile(r"(?:[=(,]|\breturn)\s*\{\s*[\w.\-+]|\b[A-Za-z_]\w*(?:<[^<>;{}]*>)?\{\s*[\w.\-+]"),
        "brace initialiser",
    ),
)


def name_construct(text: str) -> str | None:
    """The unsupported construct that `text` holds, by the first pattern that matches, or None."""
    for pattern, what in _CONSTRUCTS:
        if pattern.search(text):
            return what
    return None


# ----------------------------------------------------------------------------- statements and initializers


_CONTROL_KEYWORDS = frozenset({"if", "while", "for", "switch"})


def statement_bounds(text: str, body_start: int, pos: int) -> tuple[int, int]:
    """The statement around `pos` inside a function body starting at `body_start` (its `{`)."""
    boundaries = [body_start + 1]
    paren = 0
    header = False  # inside the parentheses of `if (...)`, `while (...)`, `for (...)`, `switch (...)`
    previous = ""
    for m in SIGNIFICANT.finditer(text, body_start + 1, pos):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            header = header or (paren == 0 and previous in _CONTROL_KEYWORDS)
            paren += 1
        elif tok == ")":
            paren = max(0, paren - 1)
            if paren == 0 and header:
                # an unbraced statement starts after its header: `if (c) return C<T>::empty(); else`
                # keeps its `if` when the statement is blanked
                header = False
                boundaries.append(m.end())
        elif paren == 0 and (tok in (";", "{", "}") or tok in ("else", "do")):
            boundaries.append(m.end())
        previous = tok
    start = boundaries[-1]
    # from start, find the end: `;` at relative depth 0, or a `}` closing a block opened here
    paren = 0
    brace = 0
    end = len(text)
    for m in SIGNIFICANT.finditer(text, start):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren -= 1
        elif tok == "{":
            brace += 1
        elif tok == "}":
            brace -= 1
            if brace < 0:
                end = m.start()
                break
            if brace == 0 and paren <= 0:
                nxt = NEXT_CHAR.match(text, m.end())
                if not nxt or nxt.group(1) not in (";", ",", ")", "(", "."):
                    end = m.end()
                    break
        elif tok == ";" and brace == 0 and paren <= 0:
            end = m.end()
            break
    if m_first := re.compile(r"\S").search(text, start, end):
        start = m_first.start()
    return start, max(end, start)


def blank_out(text: str, start: int, end: int) -> str:
    """Replace text[start:end] by spaces (newlines kept) ending in `;`, so offsets stay valid."""
    piece = re.sub(r"[^\n]", " ", text[start:end])
    if end > start:
        last = piece.rfind(" ")
        if last >= 0:
            piece = piece[:last] + ";" + piece[last + 1 :]
    return text[:start] + piece + text[end:]


_INITIALIZER_TOKENS = lazy_compile(BODY_TOKENS.pattern.replace("[{}();]", "[{}();=]"), re.MULTILINE)


def blank_initializers(text: str, start: int, end: int) -> str:
    """Blank the inside of every top-level `= { ... }` in text[start:end], keeping offsets:
    a generated lookup table need not be parsed to analyse the kernels that read it."""
    depth = paren = 0
    after_assign = False
    open_at: int | None = None
    spans: list[tuple[int, int]] = []
    for m in _INITIALIZER_TOKENS.finditer(text, start, end):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren -= 1
        elif tok == "{":
            if depth == 0 and paren == 0 and after_assign:
                open_at = m.end()
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0 and open_at is not None:
                spans.append((open_at, m.start()))
                open_at = None
        after_assign = tok == "=" and depth == 0 and paren == 0
    for s, e in reversed(spans):
        text = text[:s] + re.sub(r"[^\n]", " ", text[s:e]) + text[e:]
    return text


def diagnostic_for(err: ParseError, what: str | None, pos: int, stext: str, text: str) -> Diagnostic:
    """The diagnostic for a parse error at `pos`: an unterminated comment or literal, an
    unsupported construct `what` skipped (WL902), or a syntax error (WL901)."""
    if text.startswith("/*", pos) and "*/" not in text[pos:]:
        return Diagnostic(Severity.ERROR, "unterminated comment: '/*' without '*/'", "WL901", Span(pos, pos + 2))
    if (
        text[pos : pos + 1] in ('"', "'")
        or text[pos : pos + 3] in ('u8"', "u8'")
        or text[pos : pos + 2] in ('L"', 'u"', 'U"')
    ):
        quote = '"' if '"' in text[pos : pos + 3] else "'"
        line_end = text.find("\n", pos)
        line = text[pos : line_end if line_end != -1 else len(text)]
        if line.count(quote) == 1:
            return Diagnostic(
                Severity.ERROR,
                f"unterminated {'string' if quote == chr(34) else 'character'} literal",
                "WL901",
                Span(pos, pos + len(line)),
            )
    end = pos + 1
    token = getattr(err, "token", None)
    if token is not None and getattr(token, "value", None):
        shown = str(token.value)
        end = pos + max(1, len(shown))
    else:
        shown = text[pos : pos + 1]
    if getattr(token, "type", "") == "$END":  # a declaration cut short: no construct to name
        return Diagnostic(Severity.ERROR, "syntax error: unexpected end of declaration", "WL901", Span(pos, end))
    if what:
        return Diagnostic(Severity.WARNING, f"unsupported C++ construct ({what}) skipped", "WL902", Span(pos, end))
    if shown.strip() == "":
        return Diagnostic(Severity.ERROR, "syntax error: unexpected end of declaration", "WL901", Span(pos, end))
    return Diagnostic(Severity.ERROR, f"syntax error: unexpected '{shown}'", "WL901", Span(pos, end))


# ----------------------------------------------------------------------------- unknown type names

_NAME_BEFORE = lazy_compile(r"((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*$")
_DECLARATOR_AFTER = lazy_compile(r"\s*(?:[*&]+\s*)*(?:const\b|volatile\b|__restrict__\b|[A-Za-z_])|\s*[*&]+\s*[,)>]")
_POINTER_DECL_BEFORE = lazy_compile(
    r"(?:^|[;{}(,])\s*(?:(?:const|volatile|static|struct|class)\s+)*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"
    r"\s*[*&]+\s*(?:const\s+)?(?:[A-Za-z_]\w*\s*)?$"
)


_PARENTHESISED_NAME_BEFORE = lazy_compile(r"\(\s*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\)\s*$")
_PARAM_WITH_POINTER = lazy_compile(
    r"\s*(?:(?:const|volatile|struct|class)\s+)*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"
    r"\s*[*&]+\s*(?:(?:const|__restrict__|__restrict)\b\s*)*(?:[A-Za-z_]\w*)?\s*(?:=.*)?$",
    re.S,
)


def unknown_type_name(err: ParseError, text: str, pos: int, table: TypeTable, tried: set[str]) -> str | None:
    """A name that, read as a type, may get the parser past `err`, if the text says so.

    The shapes: an unexpected name followed by a declarator (`(curandState *s` in a
    parameter list); `*` or `&` right after a name taken as a declarator
    (`const cg::thread_block &cta`); an error right after `Name *x` or `(Name *` (a
    declaration or a cast: `StopWatchInterface *timer = 0;`, `(cufftComplex *)p`); an item
    `Name *x` earlier in the parenthesised list that holds the error (a parameter list read
    as constructor arguments). The caller keeps the name only if the parse gets further.
    """
    token = getattr(err, "token", None)
    if token is None or token.type == "$END":
        return None
    candidates: list[str] = []
    value = str(token.value)
    if token.type == "IDENTIFIER" and _DECLARATOR_AFTER.match(text, pos + len(value)):
        candidates.append(value)
    if value in ("*", "&", "&&"):
        m = _NAME_BEFORE.search(text, max(0, pos - 200), pos)
        if m:
            candidates.append(m.group(1))
    m = _POINTER_DECL_BEFORE.search(text, max(0, pos - 200), pos)
    if m:
        candidates.append(m.group(1))
    m = _PARENTHESISED_NAME_BEFORE.search(text, max(0, pos - 200), pos)
    if m:  # `(GLuint)0`, `(cufftComplex)f(x)`: a name in parentheses followed by an operand
        candidates.append(m.group(1))
    # the items of the innermost open parenthesis before the error
    depth = 0
    i = pos - 1
    lo = max(0, pos - 2000)
    while i >= lo:
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                break
            depth -= 1
        elif c in ";{}":
            i = lo - 1
            break
        i -= 1
    if i >= lo:
        for item in text[i + 1 : pos].split(","):
            m = _PARAM_WITH_POINTER.match(item)
            if m:
                candidates.append(m.group(1))
    for name in candidates:
        if name in KEYWORDS or name in tried or table.is_type(name) or name in table.templates:
            continue
        return name
    return None
