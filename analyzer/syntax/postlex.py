"""The post-lexer: which identifiers are type names and which are template names.

C's grammar cannot be parsed without knowing which names denote types (`a * b;` declares
`b` if `a` is a type); cuda.lark has separate terminals TYPE_NAME and TEMPLATE_NAME for
them. `CudaPostLexer` sits between the lexer and the parser and retypes IDENTIFIER tokens
from a scoped `TypeTable` that it fills as declarations go by (`struct S`, `typedef`,
`using X =`, template parameters). A name from a header that is never read is guessed
from the text after it (`Name *x`, `Name<...>(`), looking ahead in the raw text rather than
buffering tokens, so the contextual lexer stays in step with the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from analyzer.lazy_pattern import lazy_compile
from analyzer.records import field, record
from analyzer.syntax.lalr import Token

KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while bool true false class public private protected template typename
    namespace using new delete this operator virtual friend throw try catch nullptr constexpr
    static_cast reinterpret_cast const_cast dynamic_cast alignas alignof decltype explicit mutable
    noexcept override final static_assert __global__ __device__ __host__ __shared__ __constant__
    __managed__ __forceinline__ __noinline__ __restrict__ __restrict __inline__ __align__
    __launch_bounds__ __attribute__ __alignof__ _Bool""".split()  # noqa: SIM905 - a word list reads best as one string
)

_BUILTIN_TYPES = frozenset(
    """size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t uint8_t int16_t uint16_t int32_t uint32_t
    int64_t uint64_t uint ushort uchar ulong dim3 cudaError_t cudaStream_t cudaEvent_t __half half
    __half2 half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 cudaDeviceProp cudaEvent cudaArray
    cudaTextureObject_t cudaSurfaceObject_t cudaChannelFormatDesc cudaExtent cudaPitchedPtr
    cudaMemcpy3DParms FILE clock_t time_t va_list curandState curandState_t curandStateXORWOW
    curandStateXORWOW_t curandStateMRG32k3a curandStateMRG32k3a_t cufftComplex cufftDoubleComplex cufftReal
    cufftDoubleReal curandStateSobol32 curandStateSobol32_t curandStateScrambledSobol32
    curandStateScrambledSobol32_t curandStateSobol64 curandStateSobol64_t curandStateScrambledSobol64
    curandStateScrambledSobol64_t curandDirectionVectors32_t curandDirectionVectors64_t""".split()  # noqa: SIM905 - a word list reads best as one string
)
_VECTOR_BASES = (
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "longlong",
    "ulonglong",
    "float",
    "double",
)
_BUILTIN_TYPES |= frozenset(f"{b}{n}" for b in _VECTOR_BASES for n in (1, 2, 3, 4))


@record(frozen=False, slots=False)
class TypeTable:
    """Names that denote types or templates, in nested scopes (pushed at `{`, popped at `}`)."""

    scopes: list[set[str]] = field(default_factory=lambda: [set(_BUILTIN_TYPES)])
    templates: set[str] = field(default_factory=set)

    hidden: set[str] = field(default_factory=set)  # names a variable hid in some scope (`hide`)

    def is_type(self, name: str) -> bool:
        short = name.rsplit("::", 1)[-1] if "::" in name else name
        if name not in self.hidden:
            # a loop, not any() over a generator: 300,000 calls over the five corpora
            for s in self.scopes:  # noqa: SIM110
                if name in s or short in s:
                    return True
            return False
        mark = "!" + name
        for s in reversed(self.scopes):
            if mark in s:  # a variable of that name declared in a scope nearer than the type
                return False
            if name in s or short in s:
                return True
        return False

    def hide(self, name: str) -> None:
        """A variable named like a type (`LatLong *latLong`) hides the type in this scope."""
        self.scopes[-1].add("!" + name)
        self.hidden.add(name)

    def add(self, name: str) -> None:
        self.scopes[-1].add(name)


NEXT_CHAR = re.compile(r"\s*(\S)(\S?)")
_TEMPLATE_USE = lazy_compile(r"\s*<[\w\s,*:]*>\s*(\(|::|<<<|[A-Za-z_]|[*&]+\s*[A-Za-z_])")
_WORD = re.compile(r"\s*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)")
# what follows the `(` of a parenthesised declarator: `*` or `&`, qualifiers, an optional name
# with array sizes, `)`, then the `[` or `(` that makes the parentheses necessary
_PAREN_DECLARATOR = lazy_compile(
    r"\s*[*&]\s*(?:(?:const|volatile|__restrict__|__restrict)\b\s*)*(?:[A-Za-z_]\w*\s*(?:\[[^\[\]]*\]\s*)*)?\)\s*[\[(]"
)
# the tokens a parenthesised declarator may follow: a type (`float (*p)[4]`, `T (*f)(int)`)
_BASIC_TYPES = frozenset(("void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool"))

# what may follow the name of a simple declarator (`=` but not `==`)
_AFTER_DECLARATOR_NAME = frozenset("=;,[)")
# a word, then only `*`, `&`, qualifiers and white space up to the end of the text searched:
# the type a declarator's name follows (`LatLong *const latLong`)
_TYPE_BEFORE = lazy_compile(
    r"((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)(?:\s*(?:[*&]|\b(?:const|volatile|__restrict__|__restrict)\b))*\s*\Z"
)


# the keywords and punctuators `_punctuation` acts on; every other token passes as it is
_TRACKED = frozenset(
    ("template", "<", ">", "class", "struct", "union", "typedef", "(", ")", "{", "}", ";", ",", "=", "return")
)


class _Declaration:
    """What the post-lexer remembers while one top-level declaration goes by."""

    __slots__ = (
        "after_assign",
        "declarator_parens",
        "depth_at_start",
        "in_template_params",
        "local_types",
        "paren_depth",
        "prev",
        "struct_paren",
        "struct_pending",
        "template_entity_pending",
        "typedef_depth",
        "typedef_last",
        "typename_template",
    )

    def __init__(self, local_types: set[str], depth_at_start: int) -> None:
        self.local_types = local_types  # the declaration's template parameters
        self.depth_at_start = depth_at_start  # scopes open when it started (its template scope included)
        self.prev: Token | None = None  # the token before
        self.in_template_params = 0  # `<` depth inside `template <...>`; -1: waiting for the `<`
        self.typedef_depth: int | None = None  # scope depth of an open `typedef`
        self.typedef_last: str | None = None  # the last name of the typedef's current declarator
        self.struct_pending = False  # `struct __align__(8)`: the tag name is still to come
        self.struct_paren = 0  # parenthesis depth of that `struct`
        self.template_entity_pending = False  # after `template <...>`: the name declared is a template
        self.paren_depth = 0
        self.declarator_parens: set[int] = set()  # depths of parenthesised declarators: `typedef void (*fp)(int)`
        self.after_assign = False  # after `=` or `return` outside parentheses, until `;`, `,`, `{` or `}`
        self.typename_template = False  # the last template name followed `typename`: its `::X` is a type


#: the post-lexer's state inside a declaration (`CudaPostLexer.saved`)
SavedState = tuple[tuple[set[str], ...], _Declaration, int]


class CudaPostLexer:
    """Turns IDENTIFIER into TYPE_NAME / TEMPLATE_NAME from a scoped table.

    It looks ahead in the raw text instead of buffering tokens, so the contextual lexer
    stays in step with the parser.
    """

    always_accept = ("IDENTIFIER",)

    def __init__(self, token_class: Any = Token) -> None:
        self.table = TypeTable()
        self.text = ""
        # `syntax.resume`: the declaration going by, where the next `process` goes on from
        # (None: the start), and past which offset no look-ahead of a `(` read (`_opens_declarator`;
        # the other look-aheads stop at a `;` or `}`)
        self.current: _Declaration | None = None
        self.resume: SavedState | None = None
        self.far = 0
        # (terminal, value, token) -> the token retyped, at its position; `token_class` is
        # lark's Token when lark's own parser drives the post-lexer
        self._retype: Callable[[str, str, Token], Token] = token_class.new_borrow_pos

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """The tokens of one declaration (`self.text`), identifiers retyped."""
        table = self.table
        resume, self.resume = self.resume, None
        if resume is None:
            local_types: set[str] = set()
            table.scopes.append(local_types)  # template parameters of this declaration
            state = _Declaration(local_types, len(table.scopes))
            self.far = 0
        else:  # (`syntax.resume`: the scopes of the declaration as they were there)
            tail, state, self.far = resume
            table.scopes.extend(tail)
            local_types = state.local_types
        self.current = state
        identifier = self._identifier
        punctuation = self._punctuation
        try:
            for tok in stream:
                if tok.type == "IDENTIFIER":
                    tok = identifier(tok, state)
                elif tok.value in _TRACKED:
                    tok = punctuation(tok, state)
                state.prev = tok
                yield tok
        finally:
            while len(table.scopes) > state.depth_at_start:
                table.scopes.pop()
            if table.scopes and table.scopes[-1] is local_types:
                table.scopes.pop()

    def saved(self) -> SavedState:
        """Its state at this point of the declaration going by, for a later `process` of the
        same text to go on from (`go_on_from`): the declaration's scopes (copied: they grow),
        what it remembers of the declaration, and the reach of its look-aheads (`far`)."""
        state = self.current
        assert state is not None
        tail = tuple(set(s) for s in self.table.scopes[state.depth_at_start - 1 :])
        return tail, _declaration_copy(state, tail), self.far

    def go_on_from(self, saved: SavedState) -> None:
        """The next `process` goes on from `saved` (copied again: it may be gone on from twice)."""
        tail, state, far = saved
        fresh = tuple(set(s) for s in tail)
        self.resume = (fresh, _declaration_copy(state, fresh), far)

    def _identifier(self, tok: Token, state: _Declaration) -> Token:
        """An identifier: TYPE_NAME, TEMPLATE_NAME, or left as it is; a name declared as a type
        (`struct S`, `using S =`, a typedef's name) is added to the table."""
        prev = state.prev
        if (prev is not None and prev.value in ("struct", "class", "union", "enum") and prev.type != "IDENTIFIER") or (
            state.struct_pending and state.paren_depth == state.struct_paren  # not a name inside `alignas(double2)`
        ):
            return self._tag_name(tok, state)
        value = tok.value
        table = self.table
        # the two characters after the name that are not blanks: read once for the tests below
        # (one regular expression match a name, not two to four; and `_WORD` only where a name
        # can follow). The twenty cuda-samples files' parse under callgrind, 2026-11-28: 2.804 G
        # -> 2.773 G instructions.
        nxt = NEXT_CHAR.match(self.text, tok.end_pos)
        if (
            value.startswith("::")
            and prev is not None
            and prev.value == ">"
            and (state.paren_depth > 0 or state.after_assign)
            and not state.typename_template
            and not _declarator_follows(nxt)
        ):
            # `AsianOption<Real>::Put`, `Info<T>::convert(x)` in an expression: a member of a class
            # template's instance (at the start of a statement, `X<T>::run(...)` stays a declarator,
            # and `typename vec4<T>::Type *p`, `traits<float>::pointer out` stay types)
            return self._retype("SCOPED_NAME", value, tok)
        if prev is not None and prev.value == "typename" and state.in_template_params:
            state.local_types.add(value)
            tok = self._retype("TYPE_NAME", value, tok)
        elif prev is not None and prev.value == "using":
            if nxt and nxt.group(1) == "=":
                self._declare(value, state.depth_at_start)
        elif _template_args_follow(nxt) and (
            value in table.templates or "::" in value or self._looks_like_template_use(tok)
        ):
            tok = self._retype("TEMPLATE_NAME", value, tok)
            state.typename_template = prev is not None and prev.value == "typename"
        elif table.is_type(value) and not _member_access_follows(nxt):
            if state.typedef_depth is None and self._names_a_declarator(tok, nxt):
                # `LatLong *latLong = ...` after `typedef struct latLong {...} LatLong`: a name
                # right after a type is the declarator's, and hides the type in its scope
                table.hide(value)
            else:
                # (`struct hostData *hostData; hostData->x`: a variable named like its type)
                tok = self._retype("TYPE_NAME", value, tok)
        elif self._followed_by_identifier(tok, nxt) and value not in KEYWORDS:
            # two names in a row only start a declaration: `cg::thread_block cta`
            tok = self._retype("TYPE_NAME", value, tok)
        if state.typedef_depth is not None and (state.paren_depth == 0 or state.paren_depth in state.declarator_parens):
            state.typedef_last = value
        if state.template_entity_pending and state.paren_depth == 0 and nxt and nxt.group(1) == "(":
            # (`nxt` read after the name: a retyped `tok` keeps its end)
            table.templates.add(value)
            state.template_entity_pending = False
        return tok

    def _tag_name(self, tok: Token, state: _Declaration) -> Token:
        """The name after `struct`/`class`/`union`/`enum`: declared as a type."""
        value = tok.value
        if value in self.table.templates and _template_args_follow(NEXT_CHAR.match(self.text, tok.end_pos)):
            # `template <> struct SharedMemory<int> {`: a specialization
            state.struct_pending = False
            return self._retype("TEMPLATE_NAME", value, tok)
        self._declare(value, state.depth_at_start)
        if state.template_entity_pending:
            self.table.templates.add(value)
            state.template_entity_pending = False
        state.struct_pending = False
        return tok

    def _punctuation(self, tok: Token, state: _Declaration) -> Token:
        """A keyword or punctuator: follows templates, tag names, typedefs, scopes, parentheses."""
        value = tok.value
        table = self.table
        if value in ("=", "return") and state.paren_depth == 0:
            state.after_assign = True
        elif value in (";", ",", "{", "}"):
            state.after_assign = False
        # `(`, `)`, `;`, `,`, `{` and `}` (most of the tracked tokens) only match their own
        # branch of the chain, tested first; the others go through it in its order. The
        # twenty cuda-samples files' parse under callgrind, 2026-11-29: 2.782 G -> 2.759 G
        if value == "(":
            state.paren_depth += 1
            if self._opens_declarator(tok, state.prev):
                tok = self._retype("DECL_LPAREN", value, tok)
                state.declarator_parens.add(state.paren_depth)
        elif value == ")":
            state.declarator_parens.discard(state.paren_depth)
            state.paren_depth -= 1
        elif value == ";" or value == ",":
            if state.typedef_depth is not None and len(table.scopes) == state.typedef_depth:
                if state.typedef_last:
                    self._declare(state.typedef_last, state.depth_at_start)
                state.typedef_last = None
                if value == ";":
                    state.typedef_depth = None
        elif value == "{":
            table.scopes.append(set())
            state.struct_pending = False
        elif value == "}":
            if len(table.scopes) > state.depth_at_start:
                table.scopes.pop()
        elif value == "template":
            state.in_template_params = -1  # waiting for `<`
        elif value == "<" and state.in_template_params == -1:
            state.in_template_params = 1
        elif state.in_template_params > 0 and value == "<":
            state.in_template_params += 1
        elif state.in_template_params > 0 and value == ">":
            state.in_template_params -= 1
            if state.in_template_params == 0:
                state.template_entity_pending = True
        elif value == "class" and state.in_template_params > 0:
            tok = self._retype("TYPENAME", "typename", tok)
            value = "typename"
        elif value in ("struct", "class", "union") and tok.type != "IDENTIFIER":
            nxt = _WORD.match(self.text, tok.end_pos)
            if nxt and nxt.group(1) in ("__align__", "alignas", "__attribute__"):
                state.struct_pending = True
                state.struct_paren = state.paren_depth
        elif value == "typedef":
            state.typedef_depth = len(table.scopes)
            state.typedef_last = None
        if value == ";" and state.template_entity_pending and state.paren_depth == 0:
            state.template_entity_pending = False
        return tok

    def _opens_declarator(self, tok: Token, prev: Token | None) -> bool:
        """`(` of `float (*p)[4]`, `void (*f)(void *)`, `unsigned (&freq)[N]`, `(T(*)[N])p`: it follows
        a type, and `*` or `&`, a name (or none) and `)` then `[` or `(` follow it."""
        if prev is None or not (prev.type == "TYPE_NAME" or (prev.value in _BASIC_TYPES and prev.type != "IDENTIFIER")):
            return False
        self.far = max(self.far, _declarator_reach(self.text, tok.end_pos))
        return bool(_PAREN_DECLARATOR.match(self.text, tok.end_pos))

    def _declare(self, name: str, depth_at_start: int) -> None:
        """Declare a type name in the innermost real scope (not this declaration's template scope)."""
        scopes = self.table.scopes
        target = scopes[-1] if len(scopes) > depth_at_start else scopes[depth_at_start - 2]
        target.add(name)

    def _looks_like_template_use(self, tok: Token) -> bool:
        # `SharedMemory<T>()`, `Foo<float, 4> x`, `k<T><<<g, b>>>`: a name whose `<...>` closes and
        # is followed by `(`, `::`, `<<<` or a name. Conditions like `x < n && y > m` do not match,
        # because `&`, `|`, `(` and `;` are not allowed between the brackets.
        return bool(_TEMPLATE_USE.match(self.text, tok.end_pos))

    def _names_a_declarator(self, tok: Token, nxt: re.Match[str] | None) -> bool:
        """Whether `tok` is a declarator's name: `=`, `;`, `,`, `[` or `)` follows it, and a type, then
        only `*`, `&` and qualifiers, come right before it in the text (read backwards only for a
        name that is a type and ends a declarator, which is rare). `nxt`: NEXT_CHAR after it."""
        if not (nxt and nxt.group(1) in _AFTER_DECLARATOR_NAME and nxt.group(2) != "="):
            return False
        start = tok.start_pos
        m = _TYPE_BEFORE.search(self.text[max(0, start - 160) : start])
        if m is None:
            return False
        word = m.group(1)
        return word in _BASIC_TYPES or (word not in KEYWORDS and self.table.is_type(word))

    def _followed_by_identifier(self, tok: Token, nxt: re.Match[str] | None) -> bool:
        """A name after `tok` (`nxt`: NEXT_CHAR after it, which tells most tokens from it at once)."""
        if nxt is None or nxt.group(1) not in _WORD_STARTS:  # `_WORD` cannot match
            return False
        m = _WORD.match(self.text, tok.end_pos)
        if not m:
            return False
        word = m.group(1)
        return word not in KEYWORDS or word in ("const", "volatile", "__restrict__")


def _declaration_copy(state: _Declaration, tail: tuple[set[str], ...]) -> _Declaration:
    """A copy of what the post-lexer remembers of a declaration, its template scope `tail[0]`."""
    out = _Declaration(tail[0], state.depth_at_start)
    for name in _Declaration.__slots__:
        setattr(out, name, getattr(state, name))
    out.local_types = tail[0]
    out.declarator_parens = set(state.declarator_parens)
    return out


def _declarator_reach(text: str, at: int) -> int:
    """An offset before which `_PAREN_DECLARATOR` matched at `at` reads all it reads: past the
    first `)` only through `[...]`, so, without a `[` before that `)`, up to the `[` or `(` after
    it and its blanks; else (a `[...]` may hold anything but brackets) the end of the text."""
    close = text.find(")", at)
    bracket = text.find("[", at, close)
    if close == -1 or bracket != -1:
        return len(text)
    return _BLANKS.match(text, close + 1).end() + 1  # type: ignore[union-attr]  # matches: `*`


_BLANKS = re.compile(r"\s*")


# what `_WORD` can match after its blanks: a name, or `::` before one
_WORD_STARTS = frozenset("_:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _template_args_follow(nxt: re.Match[str] | None) -> bool:
    """`<` follows (not `<<` or `<=`); `nxt`: NEXT_CHAR after the token."""
    return bool(nxt and nxt.group(1) == "<" and nxt.group(2) not in ("<", "="))


def _declarator_follows(nxt: re.Match[str] | None) -> bool:
    """A name, `*` or `&` follows: the token names a type (`traits<float>::pointer out`); `nxt`:
    NEXT_CHAR after it."""
    if nxt is None:
        return False
    first = nxt.group(1)
    return first == "*" or (first == "&" and nxt.group(2) != "&") or first.isalpha() or first == "_"


def _member_access_follows(nxt: re.Match[str] | None) -> bool:
    """`->` or `.` (not `..`) follows; `nxt`: NEXT_CHAR after the token."""
    return bool(
        nxt and ((nxt.group(1) == "-" and nxt.group(2) == ">") or (nxt.group(1) == "." and nxt.group(2) != "."))
    )
