"""Macros and their expansion: `#define`/`#undef`, and Prosser's hide-set algorithm.

A `Macro` is one definition. `MacroExpander` is the part of the preprocessor that defines
macros and expands them: a token whose hide set holds its own name is "painted blue" and
never expands again, so `#define X X` terminates; argument pre-expansion runs on an
explicit stack of jobs rather than by recursion, so `F(F(F(...)))` 1000 deep is fine; and
every expansion has a budget of MAX_EXPANSION_STEPS tokens moved, past which it stops with
`ExpansionTooLarge`. Inside `#if` it also answers `defined` and `__has_include`.

It is a mixin of `analyzer.source.preprocess.Preprocessor` (see `PreprocessorState` for why).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from analyzer import budget
from analyzer.diagnostics import Severity
from analyzer.source.cuda_macros import HEADERS_ORIGIN
from analyzer.source.files import FileContext, SplicedFile
from analyzer.source.state import PreprocessorState
from analyzer.source.tokens import (
    CHR,
    DIRECTIVE,
    ID,
    KIND_OF_GROUP,
    LITERAL_SUFFIX,
    NUM,
    PLACEMARKER,
    PUNCT,
    SPACES_AT,
    STR,
    TOKEN,
    TOKEN_AT,
    PPToken,
    is_punct,
    join_tokens,
    stringize,
)

if TYPE_CHECKING:
    from analyzer.source.preprocess import Preprocessor

MAX_EXPANSION_STEPS = 5_000_000  # tokens one macro use (or #if line) may move: pushed or collected

_ERROR, _WARNING = Severity.ERROR, Severity.WARNING

_HAS_FUNCTIONS = frozenset(
    {
        "__has_include", "__has_include_next", "__has_attribute", "__has_cpp_attribute",
        "__has_builtin", "__has_feature", "__has_extension", "__has_declspec_attribute",
        "__has_warning",
    }
)  # fmt: skip
_RESERVED = frozenset({"defined", "_Pragma"}) | _HAS_FUNCTIONS
DYNAMIC_MACROS = ("__FILE__", "__LINE__", "__COUNTER__", "__BASE_FILE__", "__INCLUDE_LEVEL__", "__DATE__", "__TIME__")


OBJECT, FUNCTION, DYNAMIC, OPERATOR = "object", "function", "dynamic", "operator"


class Macro:
    """A macro definition. `body` holds (kind, text, ws, parameter index or -1)."""

    __slots__ = ("_text", "body", "expand", "kind", "name", "origin", "params", "plain", "variadic")

    def __init__(self, name, kind, params=(), variadic=False, body=(), origin=None):
        self.name = name
        self.kind = kind
        self.params: tuple[str, ...] = params
        self.variadic = variadic
        self.body: tuple[tuple[str, str, bool, int], ...] = body
        self.origin: tuple[SplicedFile, int, int] | None = origin  # where it was defined
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
            self._text = join_tokens([PPToken(k, t, ws and i > 0) for i, (k, t, ws, _) in enumerate(self.body)])
        return self._text

    def where(self) -> str:
        if self.origin is None:
            return ""
        location = self.origin[0].location(self.origin[1], self.origin[2])
        return f"{location.path}:{location.line}:{location.column}"

    def same_as(self, other: Macro) -> bool:
        def shape(m: Macro):
            return (m.kind, m.params, m.variadic, [(k, t, ws and i > 0) for i, (k, t, ws, _) in enumerate(m.body)])

        return shape(self) == shape(other)


class _Absent(list):
    """The variable arguments of a use that left them out, as in `LOG("x")` for LOG(fmt, ...)."""


_ABSENT = _Absent()


class ExpansionTooLarge(Exception):
    """A macro expansion took more than MAX_EXPANSION_STEPS steps."""


class _Job:
    """One expansion in progress: the top-level one, or the pre-expansion of an argument."""

    __slots__ = ("out", "reader", "stack", "wait")

    def __init__(self, stack: list[PPToken], reader: ArgumentReader | None) -> None:
        self.stack = stack  # pending tokens, next one last
        self.out: list[PPToken] = []
        self.reader = reader
        self.wait: _Wait | None = None


class _Wait:
    """A function-like macro invocation waiting for its arguments' pre-expansion."""

    __slots__ = ("args", "hide", "k", "macro", "needed", "results", "ws")

    def __init__(self, macro, args, needed, hide, ws):
        self.macro, self.args, self.needed, self.hide, self.ws = macro, args, needed, hide, ws
        self.k = 0
        self.results: dict[int, list[PPToken]] = {}


class ArgumentReader:
    """Tokens read on from a file's text while collecting a macro use's arguments."""

    __slots__ = ("context", "last_end", "pos", "pp")

    def __init__(self, pp: Preprocessor, context: FileContext, pos: int) -> None:
        self.pp = pp
        self.context = context
        self.pos = pos
        self.last_end = pos  # one past the last token taken: the end of the macro use

    def lparen_follows(self) -> bool:
        text = self.context.file.text
        p = SPACES_AT(text, self.pos).end()
        return p < len(text) and text[p] == "("

    def next(self) -> PPToken | None:
        file = self.context.file
        text = file.text
        n = len(text)
        pos = self.pos
        ws = False
        while pos < n:
            m = TOKEN_AT(text, pos)
            kind = m.lastgroup
            end = m.end()
            if kind == "nl":
                ws = True
                pos = end
                while pos < n and (d := DIRECTIVE.match(text, pos)) is not None:
                    pos = self.pp.run_directive(self.context, pos, d.end(), emit=False)
                continue
            if kind == "ws":
                ws = True
            elif kind == "bc" or kind == "lc":
                self.pp.record_comment(file, pos, end)
                ws = True
            else:
                self.pos = self.last_end = end
                return PPToken(KIND_OF_GROUP[kind], m.group(), ws)
            pos = end
        self.pos = pos
        return None


class MacroExpander(PreprocessorState):
    """Defines macros and expands them (a part of the preprocessor)."""

    if TYPE_CHECKING:  # what this part uses of the directives part

        def _resolve(self, name: str, context: FileContext) -> SplicedFile | None: ...

        def _extra(self, file: SplicedFile, name: str, extra: list[PPToken]) -> None: ...

    # ------------------------------------------------------------------ expansion

    def _expand(self, tokens: list[PPToken], reader: ArgumentReader | None, if_mode: bool) -> list[PPToken]:
        """Macro-expand tokens, reading on from `reader` if needed: at most MAX_EXPANSION_STEPS
        tokens moved, and no more than half of what the file's preprocessing budget has left
        (the tokens moved are charged to it; `analyzer.budget`)."""
        meter = budget.current()
        # one use may take half of what is left: past that it is left unexpanded (WL901), and
        # the file goes on; only a file whose budget is spent stops (WL940)
        allowance = MAX_EXPANSION_STEPS if meter is None else min(MAX_EXPANSION_STEPS, max(meter.left, 0) // 2)
        self.budget = allowance
        try:
            return self._expand_tokens(tokens, reader, if_mode)
        except ExpansionTooLarge:
            if meter is not None and allowance == 0:
                spent = budget.BudgetExceeded(meter.stage, meter.limit)
                spent.location = self._site_location()  # the macro use, or the directive's line
                raise spent from None
            raise
        finally:
            if meter is not None:
                meter.left -= allowance - max(self.budget, 0)

    def _expand_tokens(self, tokens: list[PPToken], reader: ArgumentReader | None, if_mode: bool) -> list[PPToken]:
        """Macro-expand tokens (Prosser's algorithm) within `self.budget` steps."""
        macros = self.macros
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
                wait = cast(_Wait, parent.wait)  # a parent pushes a job only while it waits for it
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

    def _expand_line(self, context: FileContext, tokens: list[PPToken], if_mode: bool) -> list[PPToken]:
        """Expand a directive's tokens; it may run while a macro use's arguments are read."""
        saved = self.site, self.budget, self.volatile
        self.site = (context, tokens[0].pos, tokens[-1].end)
        try:
            return self._expand(tokens, None, if_mode)
        finally:
            self.site, self.budget = saved[0], saved[1]
            self.volatile = saved[2] or self.volatile

    def _push(self, job: _Job, tokens: list[PPToken]) -> None:
        self.budget -= len(tokens) + 1
        if self.budget < 0:
            raise ExpansionTooLarge
        job.stack.extend(reversed(tokens))

    @staticmethod
    def _lparen_next(job: _Job) -> bool:
        if job.stack:
            return is_punct(job.stack[-1], "(")
        return job.reader is not None and job.reader.lparen_follows()

    @staticmethod
    def _take(job: _Job) -> PPToken | None:
        if job.stack:
            return job.stack.pop()
        if job.reader is not None:
            return job.reader.next()
        return None

    def _collect(self, job: _Job, macro: Macro, nparams: int):
        """Arguments of a use whose '(' is next: (args, ')' token, consumed tokens).

        On an error args is None; ')' is None if the list was unterminated.
        """
        take = self._take
        consumed = [take(job)]
        variadic = macro.variadic
        args: list[list[PPToken]] = [[]]
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
            raise ExpansionTooLarge
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

    def _substitute(self, macro: Macro, args, expanded, hide: frozenset, ws: bool) -> list[PPToken]:
        """The replacement list with arguments substituted, `#` and `##` applied, and every
        token's hide set extended by `hide`; the first token takes the use's whitespace."""
        body = macro.body
        if macro.plain:
            result = [PPToken(kind, text, tws, hide) for kind, text, tws, _ in body]
            if result:
                result[0].ws = ws
            return result
        n = len(body)
        out: list[PPToken] = []
        unions: dict[frozenset, frozenset] = {}  # an argument token's hide set -> it plus `hide`
        placemarkers = False
        last = len(macro.params) - 1

        def add(tokens: Sequence[PPToken], first_ws: bool) -> None:
            first = True
            for t in tokens:
                u = unions.get(t.hide)
                if u is None:
                    u = unions[t.hide] = t.hide | hide
                out.append(PPToken(t.kind, t.text, first_ws if first else t.ws, u))
                first = False

        i = 0
        while i < n:
            kind, text, tws, idx = body[i]
            if kind == PUNCT and text == "#" and i + 1 < n and body[i + 1][3] >= 0:
                out.append(PPToken(STR, stringize(args[body[i + 1][3]]), tws, hide))
                i += 2
                continue
            if kind == PUNCT and text == "##" and i + 1 < n:
                nkind, ntext, nws, nidx = body[i + 1]
                i += 2
                if nidx >= 0:
                    if macro.variadic and nidx == last and out and is_punct(out[-1], ","):
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
                    rhs = [PPToken(STR, stringize(args[body[i][3]]), nws, hide)]
                    i += 1
                else:
                    rhs = [PPToken(nkind, ntext, nws, hide)]
                lhs = out.pop() if out else PPToken(PLACEMARKER, "", False, hide)
                out.extend(self._paste(lhs, rhs[0], hide))
                out.extend(rhs[1:])
                continue
            if idx >= 0:
                if i + 1 < n and body[i + 1][0] == PUNCT and body[i + 1][1] == "##":
                    if not args[idx]:
                        out.append(PPToken(PLACEMARKER, "", tws, hide))
                        placemarkers = True
                    else:
                        add(args[idx], tws)
                else:
                    add(expanded.get(idx, ()), tws)
                i += 1
                continue
            out.append(PPToken(kind, text, tws, hide))
            i += 1
        if placemarkers:
            out = [t for t in out if t.kind != PLACEMARKER]
        if out:
            out[0].ws = ws
        return out

    def _paste(self, lhs: PPToken, rhs: PPToken, hide: frozenset) -> list[PPToken]:
        if lhs.kind == PLACEMARKER:
            return [PPToken(rhs.kind, rhs.text, lhs.ws, rhs.hide)]
        text = lhs.text + rhs.text
        m = TOKEN.match(text)
        if m is not None and m.end() == len(text) and m.lastgroup in KIND_OF_GROUP and m.lastgroup != "other":
            return [PPToken(KIND_OF_GROUP[m.lastgroup], text, lhs.ws, hide)]
        if lhs.kind in (STR, CHR) and rhs.kind == ID and LITERAL_SUFFIX.fullmatch(text):
            return [PPToken(lhs.kind, text, lhs.ws, hide)]  # a C++11 user-defined literal
        self._diag(
            _ERROR,
            f"pasting '{lhs.text}' and '{rhs.text}' does not give a valid preprocessing token",
            self._site_location(),
        )
        self.volatile = True
        return [lhs, PPToken(rhs.kind, rhs.text, False, rhs.hide)]

    def _dynamic(self, name: str, tok: PPToken) -> PPToken:
        self.volatile = True
        context = self.site[0] if self.site else None
        if name == "__LINE__":
            line = 1
            if self.site is not None and context is not None:
                line = context.file.location(self.site[1], self.site[1]).line
            return PPToken(NUM, str(line), tok.ws)
        if name == "__COUNTER__":
            self.counter += 1
            return PPToken(NUM, str(self.counter - 1), tok.ws)
        if name == "__INCLUDE_LEVEL__":
            return PPToken(NUM, str(max(len(self.stack) - 1, 0)), tok.ws)
        if name in ("__FILE__", "__BASE_FILE__"):
            path = self.stack[0].file.path if name == "__BASE_FILE__" or context is None else context.file.path
            return PPToken(STR, '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"', tok.ws)
        if name == "__DATE__":
            return PPToken(STR, '"Jan  1 1970"', tok.ws)
        return PPToken(STR, '"00:00:00"', tok.ws)

    def _defined(self, job: _Job, tok: PPToken) -> PPToken:
        stack = job.stack
        name = stack.pop() if stack else None
        paren = is_punct(name, "(")
        if paren:
            name = stack.pop() if stack else None
        if name is None or name.kind != ID:
            if name is not None:
                stack.append(name)
            self._diag(_ERROR, "operator 'defined' requires an identifier", self._site_location())
            return PPToken(NUM, "0", tok.ws)
        if paren:
            close = stack.pop() if stack else None
            if not is_punct(close, ")"):
                if close is not None:
                    stack.append(close)
                self._diag(_ERROR, "missing ')' after 'defined'", self._site_location())
        return PPToken(NUM, "1" if self._is_defined(name.text) else "0", tok.ws)

    def _has(self, job: _Job, tok: PPToken) -> PPToken:
        """`__has_include("x.h")` and friends inside #if."""
        stack = job.stack
        zero = PPToken(NUM, "0", tok.ws)
        if not (stack and is_punct(stack[-1], "(")):
            self._diag(_ERROR, f"missing '(' after '{tok.text}'", self._site_location())
            return zero
        stack.pop()
        inner: list[PPToken] = []
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
            return PPToken(NUM, "1" if found else "0", tok.ws)
        if len(inner) >= 2 and is_punct(inner[0], "<") and is_punct(inner[-1], ">"):
            return PPToken(NUM, "1", tok.ws)  # system headers are assumed to exist
        self._diag(_ERROR, f"operator '{tok.text}' requires a header name", self._site_location())
        return zero

    def _is_defined(self, name: str) -> bool:
        macro = self.macros.get(name)
        return (macro is not None and macro.kind != OPERATOR) or name in _HAS_FUNCTIONS

    # ------------------------------------------------------------------ definitions

    def _define(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> None:
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
        if rest and is_punct(rest[0], "(") and not rest[0].ws:
            parsed = _parameter_list(rest)
            if isinstance(parsed, str):
                fail(parsed)
                return
            params, variadic, body_start = parsed
            body_tokens = rest[body_start:]
            kind = FUNCTION
        else:
            body_tokens = rest
            kind = OBJECT
        index = {p: k for k, p in enumerate(params)}
        body = tuple((t.kind, t.text, t.ws, index.get(t.text, -1) if t.kind == ID else -1) for t in body_tokens)
        problem = _replacement_list_error(kind, body)
        if problem is not None:
            fail(problem)
            return
        macro = Macro(name, kind, tuple(params), variadic, body, (file, start, stop))
        old = self.macros.get(name)
        if old is not None:
            if old.same_as(macro):
                return  # an identical redefinition changes nothing
            if not self.quiet and not old.where().startswith(HEADERS_ORIGIN):  # a header's value is silently replaced
                previous = old.where()
                fail(f"'{name}' redefined", (f"previous definition at {previous}",) if previous else (), _WARNING)
        self.macros[name] = macro
        self.version += 1

    def _undef(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> None:
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


def _parameter_list(rest: list[PPToken]) -> tuple[list[str], bool, int] | str:
    """The parameters of a function-like macro, `rest` being its tokens from `(` on:
    (names, variadic, index of the replacement list in `rest`), or what is wrong."""
    params: list[str] = []
    variadic = False
    i = 1
    while True:
        tok = rest[i] if i < len(rest) else None
        if tok is None:
            return "missing ')' in macro parameter list"
        if is_punct(tok, ")") and not params:
            return params, variadic, i + 1
        if is_punct(tok, "..."):
            params.append("__VA_ARGS__")
            variadic = True
            i += 1
        elif tok.kind == ID and tok.text != "__VA_ARGS__":
            if tok.text in params:
                return f"duplicate macro parameter '{tok.text}'"
            params.append(tok.text)
            i += 1
            if i < len(rest) and is_punct(rest[i], "..."):  # GNU named variadic: args...
                variadic = True
                i += 1
        else:
            return f"expected parameter name, found '{tok.text}'"
        sep = rest[i] if i < len(rest) else None
        if is_punct(sep, ")"):
            return params, variadic, i + 1
        if sep is None:
            return "missing ')' in macro parameter list"
        if not is_punct(sep, ",") or variadic:
            return f"expected ',' or ')' in macro parameter list, found '{sep.text}'"
        i += 1


def _replacement_list_error(kind: str, body: tuple[tuple[str, str, bool, int], ...]) -> str | None:
    """What makes a replacement list invalid: `##` at either end, `#` before a non-parameter."""
    if body and ((body[0][0] == PUNCT and body[0][1] == "##") or (body[-1][0] == PUNCT and body[-1][1] == "##")):
        return "'##' cannot appear at either end of a macro expansion"
    if kind == FUNCTION:
        for k, (tkind, ttext, _, _) in enumerate(body):
            if tkind == PUNCT and ttext == "#" and (k + 1 >= len(body) or body[k + 1][3] < 0):
                return "'#' is not followed by a macro parameter"
    return None
