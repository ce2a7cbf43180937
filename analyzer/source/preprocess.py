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

This module is the driver and the entry points; the rest of the stage lives beside it:
`tokens` (the lexical layer), `files` (files being read), `directives` (directive lines,
`#include`, conditional groups), `macros` (definitions and expansion), `if_expression`
(`#if` arithmetic), `state` (the shared state and the output), and `linemap`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from analyzer import budget
from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.records import record
from analyzer.source.cuda_macros import HEADER_CONSTANTS, HEADERS_ORIGIN, cuda_macros
from analyzer.source.directives import DirectiveRunner
from analyzer.source.files import FileContext, SplicedFile, file_key, read_text_file
from analyzer.source.linemap import EXPANSION, LineMap
from analyzer.source.macros import (
    DYNAMIC,
    DYNAMIC_MACROS,
    FUNCTION,
    OBJECT,
    OPERATOR,
    ArgumentReader,
    ExpansionTooLarge,
    Macro,
    MacroExpander,
)
from analyzer.source.state import CODE
from analyzer.source.tokens import (
    DIRECTIVE,
    ID,
    SPACES_AT,
    TEXT_SCAN,
    PPToken,
    join_tokens,
    needs_space,
)

__all__ = ["PREDEFINED_MACROS", "Comment", "Preprocessed", "preprocess", "preprocess_file"]

#: Object-like macros defined before the first line (nvcc's device pass for sm_90 and the
#: default toolkit; `cuda_macros(arch, toolkit)` gives them for others).
PREDEFINED_MACROS: Mapping[str, str] = cuda_macros()

_NO_DEFINES: Mapping[str, str | None] = MappingProxyType({})
_ERROR = Severity.ERROR


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


#: The macro table every file starts from (the dynamic macros, `_Pragma`, the headers' constants,
#: the predefined macros) and the definitions it counts (`version`), by the predefined macros:
#: running their `#define` lines again for each file was 1.9% of the five corpora's check (py-spy,
#: 2026-11-28). Macros are not changed once defined; a file's table is a copy.
_PREDEFINED: dict[tuple[tuple[str, str], ...], tuple[dict[str, Macro], int]] = {}


class Preprocessor(DirectiveRunner, MacroExpander):
    """One run of the preprocessor over a main file: copies text lines, expanding the macro
    uses in them and running the directives between them (the parts: `DirectiveRunner`,
    `MacroExpander`, over `PreprocessorState`)."""

    def __init__(
        self,
        defines: Mapping[str, str | None],
        include_paths: Sequence[str],
        read_file: Callable[[str], str | None] | None,
        predefined: Mapping[str, str] = PREDEFINED_MACROS,
        undefines: Sequence[str] = (),
    ) -> None:
        super().__init__(include_paths, read_file)
        self._predefine(defines, predefined, undefines)

    # ------------------------------------------------------------------ set-up

    def _predefine(
        self, defines: Mapping[str, str | None], predefined: Mapping[str, str], undefines: Sequence[str]
    ) -> None:
        """The dynamic macros (`__LINE__` ...), `_Pragma`, the predefined macros, then the `-D`
        options and the `-U` options (nvcc, like gcc, runs every -D before every -U)."""
        self.quiet = True
        key = tuple(predefined.items())
        base = _PREDEFINED.get(key)
        if base is not None:  # (the table is empty until here: `PreprocessorState`)
            self.macros.update(base[0])
            self.version += base[1]
        else:
            errors = len(self.diagnostics)
            for name in DYNAMIC_MACROS:
                self.macros[name] = Macro(name, DYNAMIC)
            self.macros["_Pragma"] = Macro("_Pragma", OPERATOR)
            # the headers' constants first: what nvcc predefines, then -D, may replace them
            self._run_directives(HEADERS_ORIGIN, "\n".join(f"#define {n} {v}" for n, v in HEADER_CONSTANTS.items()))
            lines = [f"#define {name} {value}" for name, value in predefined.items()]
            self._run_directives("<built-in>", "\n".join(lines))
            if len(self.diagnostics) == errors:
                _PREDEFINED[key] = (dict(self.macros), self.version)
        lines = []
        for name, value in (defines or {}).items():
            name = str(name)
            if value is None:
                name, eq, value = name.partition("=")
                value = value if eq else "1"
            lines.append(f"#define {name.strip()} {value!s}".replace("\n", " ").replace("\r", " "))
        lines.extend(f"#undef {name}" for name in undefines if name.isidentifier())
        self._run_directives("<command-line>", "\n".join(lines))
        self.quiet = False

    def _run_directives(self, path: str, text: str) -> None:
        """Run the directive lines of a text that is not part of the output."""
        context = FileContext(SplicedFile(path, path, text))
        pos = 0
        n = len(context.file.text)
        while pos < n:
            d = DIRECTIVE.match(context.file.text, pos)
            if d is None:
                nl = context.file.text.find("\n", pos)
                pos = n if nl < 0 else nl + 1
            else:
                pos = self.run_directive(context, pos, d.end(), emit=False)

    # ------------------------------------------------------------------ driver

    def run(self, text: str, path: str, forced_includes: Sequence[str] = ()) -> Preprocessed:
        """Preprocess the main file `text` (and what it includes), after the files of
        `forced_includes` (`-include FILE`: read as if included before the first line). When the
        file's budget (`analyzer.budget`) is spent, preprocessing stops where it is, and says so."""
        main = SplicedFile(path, file_key(path), text)
        self._register(main)
        self.loaded[main.key] = main
        self.stack.append(FileContext(main))
        self._force_includes(forced_includes, path)
        try:
            budget.spend(budget.steps_of(len(main.text)))
            while self.stack:
                context = self.stack[-1]
                self._scan(context)
                if self.stack[-1] is context:
                    self._finish(context)
                    self.stack.pop()
        except budget.BudgetExceeded as err:
            where = err.location or self._site_location()
            self.stack.clear()
            self.diagnostics.append(
                budget.exceeded(err, "preprocessing stopped here; the rest of the file is not read", location=where)
            )
        out = "".join(self.parts)
        linemap = LineMap(
            self.files,
            self.seg_start,
            self.seg_file,
            self.seg_orig,
            self.seg_kind,
            self.seg_end,
            len(out),
            absent=tuple(self.absent),
        )
        macros = {name: m.text for name, m in self.macros.items() if m.kind == OBJECT}
        return Preprocessed(
            path=path,
            text=out,
            linemap=linemap,
            comments=tuple(Comment(text, location) for text, location in self.comments),
            diagnostics=tuple(self.diagnostics),
            macros=MappingProxyType(macros),
            system_includes=tuple(self.system_includes),
        )

    def _force_includes(self, names: Sequence[str], path: str) -> None:
        """Stack the `-include` files above the main file, the first on top (read first); one
        that is not found is an error at the main file's first line."""
        found = []
        for name in names:
            target = self._resolve(name, self.stack[-1])
            if target is None:
                self._diag(_ERROR, f'-include file "{name}" not found', Location(path, 1, 1, 1, 1))
            else:
                found.append(target)
        for target in reversed(found):
            self._register(target)
            self.stack.append(FileContext(target))

    def _finish(self, context: FileContext) -> None:
        """At the end of a file: report unclosed `#if`s, note its include guard, end its last line."""
        file = context.file
        for cond in context.conds:
            self._diag(_ERROR, f"unterminated #{cond.name}", file.location(cond.start, cond.end))
        if (
            context.guard is not None
            and context.guard_end >= 0
            and SPACES_AT(file.text, context.guard_end).end() == len(file.text)
        ):
            self.guards[file.key] = context.guard_name
        if len(self.stack) > 1 and self.parts and not self.parts[-1].endswith("\n"):
            end = len(file.original)
            self._segment("\n", file.index, end, EXPANSION, end)

    # ------------------------------------------------------------------ text lines

    def _scan(self, context: FileContext) -> None:
        """Copy text from context.pos on, acting on directives, comments and macro uses.

        Returns at the end of the file, or after an #include pushed a new context.
        """
        file = context.file
        text = file.text
        n = len(text)
        macros = self.macros
        pos = run = context.pos
        while True:
            if pos == 0 and (d := DIRECTIVE.match(text)) is not None:
                pos = run = self.run_directive(context, 0, d.end(), emit=True)
                if self.stack[-1] is not context:
                    context.pos = pos
                    return
                continue
            # a directive is matched from the newline before it: start there at a line start
            for m in TEXT_SCAN.finditer(text, pos - 1 if pos and text[pos - 1] == "\n" else pos):
                kind = m.lastgroup
                if kind == "id" or kind == "idq":
                    macro = macros.get(m.group(kind))
                    if macro is None:
                        continue
                    start, end = m.span(kind)
                    if macro.kind in (FUNCTION, OPERATOR):
                        p = SPACES_AT(text, end).end()
                        if p >= n or text[p] != "(":
                            continue
                    self._verbatim(file, run, start)
                    pos = run = self._expand_use(context, start, end, macro)
                    break
                if kind == "dir":
                    start = m.start(kind) + 1
                    self._verbatim(file, run, start)
                    pos = run = self.run_directive(context, start, m.end(), emit=True)
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

    def _expand_use(self, context: FileContext, start: int, end: int, macro: Macro) -> int:
        """Expand the macro use whose name is at [start, end); emit it; return where it ends."""
        file = context.file
        text = file.text
        hit = self.cache.get(macro.name) if macro.kind == OBJECT else None
        if hit is not None and hit[0] == self.version:
            out = hit[1]
            stop = end
        else:
            reader = ArgumentReader(self, context, end)
            self.site = (context, start, end)
            self.volatile = False
            try:
                tokens = self._expand([PPToken(ID, macro.name)], reader, if_mode=False)
            except ExpansionTooLarge:
                message = f"expansion of macro '{macro.name}' is too large or too deeply nested; left unexpanded"
                self._diag(_ERROR, message, file.location(start, end))
                self._verbatim(file, start, reader.last_end)
                return reader.last_end
            stop = reader.last_end
            out = join_tokens(tokens)
            if macro.kind == OBJECT and stop == end and not self.volatile:
                last = tokens[-1] if tokens else None
                if last is None or last.kind != ID or getattr(self.macros.get(last.text), "kind", None) != FUNCTION:
                    self.cache[macro.name] = (self.version, out)
        if not out:
            out = " "
        if self.parts and needs_space(self.parts[-1][-1], out[0]):
            out = " " + out
        if stop < len(text) and needs_space(out[-1], text[stop]):
            out += " "
        self._segment(out, file.index, file.orig(start), EXPANSION, file.orig(stop - 1) + 1)
        self._newlines(file, start, stop)
        return stop


# ============================================================================ entry points


def preprocess(
    text: str,
    path: str = "<input>",
    *,
    defines: Mapping[str, str | None] = _NO_DEFINES,
    include_paths: Sequence[str] = (),
    read_file: Callable[[str], str | None] | None = None,
    predefined: Mapping[str, str] = PREDEFINED_MACROS,
    undefines: Sequence[str] = (),
    forced_includes: Sequence[str] = (),
) -> Preprocessed:
    """Preprocess CUDA source text. Never raises: problems become WL901 diagnostics.

    `defines` are `-D` options (a value of None means "1"); `include_paths` are searched for
    `#include "..."` after the including file's folder; `read_file(path)` returns a file's
    text, or None (or raises OSError) when there is none (default: read from disk).
    `predefined` are the macros defined before everything (`cuda_macros(arch, toolkit)`),
    `undefines` the `-U` options, `forced_includes` the `-include` files.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    try:
        preprocessor = Preprocessor(defines, include_paths, read_file, predefined, undefines)
        return preprocessor.run(text, path, forced_includes)
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
    **options: Sequence[str] | Mapping[str, str],
) -> Preprocessed:
    """Read `path` (UTF-8, undecodable bytes replaced) and preprocess it; `options` are
    `preprocess`'s `predefined`, `undefines` and `forced_includes`."""
    path = os.fspath(path)
    text: str | None
    error = ""
    try:
        text = (read_file or read_text_file)(path)
    except Exception as exc:  # noqa: BLE001 - unreadable is a diagnostic, not a crash
        text, error = None, str(exc)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        result = preprocess("", path, defines=defines, include_paths=include_paths, read_file=read_file, **options)  # type: ignore[arg-type]
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
    return preprocess(text, path, defines=defines, include_paths=include_paths, read_file=read_file, **options)  # type: ignore[arg-type]
