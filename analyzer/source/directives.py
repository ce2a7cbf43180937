"""Directive lines: files (`#include`, `#pragma once`, include guards), conditional groups
(`#if` ... `#endif`), and the dispatch of every directive to its handler.

`DirectiveRunner` is the part of the preprocessor that runs directives; `#define` and
`#undef` are handled by `analyzer.source.macros`, and `#if` expressions are evaluated by
`analyzer.source.if_expression` once the macros in them are expanded. It is a mixin of
`analyzer.source.preprocess.Preprocessor` (see `PreprocessorState` for why).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from analyzer import budget
from analyzer.diagnostics import Location, Severity
from analyzer.source.files import FileContext, FileRefused, OpenConditional, SplicedFile, file_key
from analyzer.source.if_expression import ExpressionError, evaluate
from analyzer.source.macros import ExpansionTooLarge
from analyzer.source.state import PreprocessorState
from analyzer.source.system_headers import is_system_header
from analyzer.source.tokens import (
    BLOCK_COMMENT,
    DIRECTIVE_NAME_AT,
    EMPTY_HIDE_SET,
    HEADER_NAME,
    ID,
    KIND_OF_GROUP,
    NUM,
    SKIPPED_SCAN,
    SPACES_AT,
    STR,
    TOKEN,
    TOKEN_AT,
    PPToken,
    is_punct,
    join_tokens,
)

MAX_INCLUDE_DEPTH = 200  # nested #include levels below the main file
MAX_INCLUDES = 20_000  # #include directives entered in one run

_ERROR, _WARNING = Severity.ERROR, Severity.WARNING
_CONDITIONALS = frozenset({"if", "ifdef", "ifndef"})
_ALTERNATES = frozenset({"elif", "else", "elifdef", "elifndef"})


class DirectiveRunner(PreprocessorState):
    """Runs directive lines and skips the groups they exclude (a part of the preprocessor)."""

    if TYPE_CHECKING:  # what this part uses of the macro part

        def _expand_line(self, context: FileContext, tokens: list[PPToken], if_mode: bool) -> list[PPToken]: ...

        def _is_defined(self, name: str) -> bool: ...

        def _define(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> None: ...

        def _undef(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> None: ...

    def _lex_line(self, file: SplicedFile, pos: int) -> tuple[list[PPToken], int]:
        """Tokens of a directive from pos to its end of line; comments are recorded."""
        text = file.text
        n = len(text)
        tokens: list[PPToken] = []
        ws = False
        eol = text.find("\n", pos)
        if eol < 0:
            eol = n
        if text.find("/*", pos, eol) < 0 and text.find('R"', pos, eol) < 0:
            # the usual case: nothing can run past the end of the line
            for m in TOKEN.finditer(text, pos, eol):
                kind = m.lastgroup
                if kind == "ws":
                    ws = True
                elif kind == "lc":
                    self.record_comment(file, *m.span())
                    ws = True
                else:
                    tokens.append(PPToken(KIND_OF_GROUP[kind], m.group(), ws, EMPTY_HIDE_SET, m.start()))
                    ws = False
            return tokens, eol
        match = TOKEN_AT
        while pos < n:
            m = match(text, pos)
            kind = m.lastgroup
            if kind == "nl":
                return tokens, pos
            end = m.end()
            if kind == "ws":
                ws = True
            elif kind == "bc" or kind == "lc":
                self.record_comment(file, pos, end)
                ws = True
            else:
                tokens.append(PPToken(KIND_OF_GROUP[kind], m.group(), ws, EMPTY_HIDE_SET, pos))
                ws = False
            pos = end
        return tokens, n

    def run_directive(self, context: FileContext, start: int, hash_end: int, emit: bool) -> int:
        """Run the directive whose line starts at `start`; return where reading goes on.
        (Public: the macro argument reader runs the directives among a use's arguments.)

        The result is the start of a line (or the end of the file). With emit, the
        directive's lines (and any group it skips) leave empty lines in the output.
        """
        file = context.file
        self.hash_pos = hash_end - 1  # directives never nest, so one slot is enough
        if hash_end - start > 1 and file.text.find("/*", start, hash_end) >= 0:
            for m in BLOCK_COMMENT.finditer(file.text, start, hash_end):
                self.record_comment(file, *m.span())
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
            self._diag(
                _WARNING, f"unknown preprocessing directive '#{name}' ignored", file.location(self.hash_pos, head.end)
            )
        return nxt

    def _extra(self, file: SplicedFile, name: str, extra: list[PPToken]) -> None:
        """Warn about tokens after a directive that takes no more."""
        if extra:
            self._diag(
                _WARNING, f"extra tokens at end of #{name} directive", file.location(extra[0].pos, extra[-1].end)
            )

    def _if(self, context: FileContext, head: PPToken, args: list[PPToken], start: int, nxt: int, emit: bool) -> int:
        file = context.file
        name = head.text
        if name == "if":
            taken = self._condition(context, head, args)
        else:
            taken = self._ifdef(file, head, args)
        cond = OpenConditional(taken, self.hash_pos, head.end, name)
        context.conds.append(cond)
        guard = include_guard_name(name, args)
        if guard and context.guard is None and SPACES_AT(file.text, 0, start).end() == start:
            context.guard = cond  # only blanks and comments before it: maybe an include guard
            context.guard_name = guard
        if taken:
            return nxt
        return self._skip(context, nxt, emit)

    def _ifdef(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> bool:
        if not args or args[0].kind != ID:
            self._diag(_ERROR, f"no macro name given in #{head.text} directive", file.location(self.hash_pos, head.end))
            return False
        self._extra(file, head.text, args[1:])
        defined = self._is_defined(args[0].text)
        return defined if head.text in ("ifdef", "elifdef") else not defined

    def _condition(self, context: FileContext, head: PPToken, args: list[PPToken]) -> bool:
        file = context.file
        if not args:
            self._diag(_ERROR, f"#{head.text} with no expression", file.location(self.hash_pos, head.end))
            return False
        where = file.location(args[0].pos, args[-1].end)  # the expression
        try:
            tokens = self._expand_line(context, args, if_mode=True)
            return evaluate(tokens) != 0
        except ExpansionTooLarge:
            self._diag(_ERROR, f"#{head.text} expression is too large or too deeply nested to expand", where)
        except ExpressionError as err:
            self._diag(_ERROR, f"invalid #{head.text} expression: {err}", where)
        return False

    def _else(self, context: FileContext, head: PPToken, args: list[PPToken], nxt: int, emit: bool) -> int:
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

    def _skip(self, context: FileContext, pos: int, emit: bool) -> int:
        """Skip a group from pos to the start of the #elif/#else/#endif line that ends it."""
        file = context.file
        text = file.text
        depth = 0
        stop = len(text)
        for m in SKIPPED_SCAN.finditer(text, pos - 1 if pos and text[pos - 1] == "\n" else pos):
            kind = m.lastgroup
            if kind == "dir":
                name = DIRECTIVE_NAME_AT(text, m.end()).group(1)
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
                self.record_comment(file, *m.span(kind))
        if emit:
            self._newlines(file, pos, stop)
        return stop

    def _pragma(self, file: SplicedFile, head: PPToken, args: list[PPToken]) -> None:
        if not args:
            return
        word = args[0].text
        if word == "once":
            self.once.add(file.key)
        elif word in ("push_macro", "pop_macro"):
            if (
                len(args) != 4
                or not is_punct(args[1], "(")
                or args[2].kind != STR
                or not args[2].text.startswith('"')
                or not is_punct(args[3], ")")
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

    def _include(self, context: FileContext, head: PPToken, args: list[PPToken], eol: int, nxt: int, emit: bool) -> int:
        file = context.file
        if not emit:
            self._diag(
                _ERROR, "#include inside macro arguments is not supported", file.location(self.hash_pos, head.end)
            )
            return nxt
        header = self._header_name(context, head, args, eol)
        if header is None:
            return nxt
        angle, name, where = header
        if angle:
            self.system_includes[name] = None
            return nxt
        if not name:
            self._diag(_ERROR, f"empty filename in #{head.text}", where)
            return nxt
        target = self._resolve(name, context)
        if target is None:
            refused = self._refused(name, context)
            if refused is not None:  # there, but too large or binary: said once, not as a syntax error
                self._diag(_ERROR, f'include file "{name}" not read: {refused}', where)
                return nxt
            if is_system_header(name):  # the compiler falls back to the system headers, which are never read
                self.system_includes[name] = None
                return nxt
            searched = self._search_dirs(name, context)
            notes = (f"searched: {', '.join(searched)}",) if searched else ()
            self._diag(_ERROR, f'include file "{name}" not found', where, notes)
            return nxt
        if not self._may_enter(target, name, where, head.text == "import"):
            return nxt
        try:
            budget.spend(budget.steps_of(len(target.text)))
        except budget.BudgetExceeded as err:
            err.location = where
            raise
        self._register(target)
        self.stack.append(FileContext(target))
        return nxt

    def _header_name(
        self, context: FileContext, head: PPToken, args: list[PPToken], eol: int
    ) -> tuple[bool, str, Location] | None:
        """(angle brackets?, name, where) of an #include's header, written or macro-expanded;
        None after a diagnostic when there is none."""
        file = context.file
        m = HEADER_NAME.match(file.text, head.end, eol)
        if m is not None:
            angle = m.group(1) is None
            group = 2 if angle else 1
            return angle, m.group(group), file.location(m.start(group) - 1, m.end(group) + 1)
        if not args:
            self._diag(_ERROR, f'#{head.text} expects "FILENAME" or <FILENAME>', file.location(self.hash_pos, head.end))
            return None
        where = file.location(args[0].pos, args[-1].end)
        try:
            tokens = self._expand_line(context, args, if_mode=False)
        except ExpansionTooLarge:
            tokens = []
        if tokens and tokens[0].kind == STR and tokens[0].text.startswith('"') and tokens[0].text.endswith('"'):
            return False, tokens[0].text[1:-1], where
        if len(tokens) >= 2 and is_punct(tokens[0], "<") and is_punct(tokens[-1], ">"):
            return True, join_tokens(tokens[1:-1]), where
        self._diag(_ERROR, f'#{head.text} expects "FILENAME" or <FILENAME>', where)
        return None

    def _may_enter(self, target: SplicedFile, name: str, where: Location, once: bool) -> bool:
        """Whether an #include of `target` is entered: not after `#pragma once`/`#import` or its
        guard, not into itself, not past the depth and count limits (each said once)."""
        if target.key in self.once:
            return False
        guard = self.guards.get(target.key)
        if guard is not None and guard in self.macros:
            return False
        if self._includes_itself(target):
            if target.key not in self.self_included:
                self.self_included.add(target.key)
                self._diag(
                    _ERROR,
                    f'#include "{name}" includes a file into itself (it is being read already, '
                    "with no include guard); not included again",
                    where,
                )
            return False
        if once:
            self.once.add(target.key)
        if len(self.stack) > MAX_INCLUDE_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                message = f'#include nested more than {MAX_INCLUDE_DEPTH} levels deep; "{name}" not included'
                self._diag(_ERROR, message, where)
            return False
        if self.too_deep and any(c.file.key == target.key for c in self.stack):
            return False  # recursion that already hit the limit: don't hit it again per level
        self.includes += 1
        if self.includes > MAX_INCLUDES:
            if self.includes == MAX_INCLUDES + 1:
                self._diag(_ERROR, f"more than {MAX_INCLUDES} #include directives entered; the rest are ignored", where)
            return False
        return True

    def _includes_itself(self, target: SplicedFile) -> bool:
        """Whether including `target` now would read it inside itself with nothing to stop the
        recursion: it is on the include stack, and no include guard of it is open and defined
        (a guarded file included into itself reads as nothing, and is let be)."""
        open_copies = [c for c in self.stack if c.file.key == target.key]
        if not open_copies:
            return False
        outer = open_copies[0]
        return outer.guard is None or outer.guard_name not in self.macros

    def _refused(self, name: str, context: FileContext) -> str | None:
        """Why the file `#include "name"` finds was not read (too large, binary), or None."""
        for directory in self._search_dirs(name, context) if not os.path.isabs(name) else [""]:
            reason = self.refused.get(file_key(os.path.normpath(os.path.join(directory, name))))
            if reason is not None:
                return reason
        return None

    def _search_dirs(self, name: str, context: FileContext) -> list[str]:
        if os.path.isabs(name):
            return []
        path = context.file.path
        own = "" if path.startswith("<") and path.endswith(">") else os.path.dirname(path)
        return [own or ".", *self.include_paths]

    def _resolve(self, name: str, context: FileContext) -> SplicedFile | None:
        if os.path.isabs(name):
            candidates = [name]
        else:
            candidates = [os.path.join(d, name) for d in self._search_dirs(name, context)]
        for candidate in candidates:
            found = self._load(os.path.normpath(candidate))
            if found is not None:
                return found
        return None

    def _load(self, path: str) -> SplicedFile | None:
        key = file_key(path)
        if key in self.loaded:
            return self.loaded[key]
        try:
            text = self.read(path)
        except FileRefused as refused:  # there, but not text warplint reads
            self.refused[key] = str(refused)
            text = None
        except Exception:  # noqa: BLE001 - a reader that fails means "not there"
            text = None
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", errors="replace")
        file = SplicedFile(path, key, text) if isinstance(text, str) else None
        if file is None:  # nothing there, or a file not read (too large, binary): see `LineMap.absent`
            self.absent[path] = None
        self.loaded[key] = file
        return file


def include_guard_name(directive: str, args: list[PPToken]) -> str:
    """The guard macro of `#ifndef G` or `#if !defined(G)` / `#if !defined G`, else ''."""
    if directive == "ifndef":
        return args[0].text if len(args) == 1 and args[0].kind == ID else ""
    if directive != "if" or len(args) < 3 or not is_punct(args[0], "!") or args[1].text != "defined":
        return ""
    rest = args[2:]
    if len(rest) == 1 and rest[0].kind == ID:
        return rest[0].text
    if len(rest) == 3 and is_punct(rest[0], "(") and rest[1].kind == ID and is_punct(rest[2], ")"):
        return rest[1].text
    return ""
