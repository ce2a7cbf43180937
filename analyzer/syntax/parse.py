"""Parse preprocessed CUDA text into the AST of analyzer.syntax.ast.

The text is first cut into top-level declarations (namespaces and `extern "C"` blocks are
opened, not parsed), and each is parsed on its own with the LALR parser of cuda.lark, so
one construct the subset does not cover costs one declaration, never the file. Inside a
function body, a statement that does not parse is blanked out, reported once under the
name of the construct it holds (a lambda, a range-based for ...), and the body is parsed
again: the rest of the kernel is still analysed.

This module is the driver: the parsers built once (`cuda_tables` for warplint's own LALR
driver, `cuda_parser` for lark's) and `parse`. Beside it: `chunks` (the top-level
splitter), `postlex` (which names are types), `build` (the AST builder, with `literals`),
`recovery` (error recovery and text repairs), `lalr` and `tables` (the LALR machinery).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from analyzer import budget
from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.gc_pause import gc_paused
from analyzer.grammar_files import grammar_path, lark_parser
from analyzer.records import record
from analyzer.syntax import ast as A
from analyzer.syntax import tables as parse_tables
from analyzer.syntax.build import OPERATOR_CHAINS, ToAst, ast_methods
from analyzer.syntax.chunks import Chunk, split_top_level
from analyzer.syntax.lalr import ParseError, Parser, Resumed
from analyzer.syntax.postlex import CudaPostLexer
from analyzer.syntax.recovery import (
    blank_initializers,
    blank_out,
    diagnostic_for,
    fix_misspelled_align,
    join_launch_brackets,
    name_construct,
    statement_bounds,
    unknown_type_name,
)
from analyzer.syntax.resume import Checkpoints

if TYPE_CHECKING:
    from lark import Lark

MAX_RETRIES_PER_DECLARATION = 64
# Lark reads about 60 kB of CUDA a second: a declaration with more than this many non-blank
# characters (over ten times the largest in NVIDIA's cuda-samples) is refused with WL901, and
# the inside of a large initializer (a generated lookup table) is not parsed at all.
MAX_DECLARATION_CHARS = 256_000
LARGE_INITIALIZER_CHARS = 64_000

# ----------------------------------------------------------------------------- grammar loading


@functools.cache
def cuda_tables() -> parse_tables.Tables:
    """The LALR tables of cuda.lark: loaded from the cache, or built with lark once and cached."""
    return parse_tables.load("cuda.lark", CudaPostLexer.always_accept)


@functools.cache
def _driver() -> Parser:
    return Parser(cuda_tables(), with_extents=OPERATOR_CHAINS)


@functools.cache
def rule_methods() -> list[Callable[..., Any] | None]:
    """By rule index of `cuda_tables()`: the function of `ToAst` that builds the rule's node
    (what `ToAst.reduce` calls; `Parser.parse`'s `direct`), None for a rule without one."""
    methods = ast_methods()
    return [methods.get(rule.name) for rule in cuda_tables().rules]


@functools.cache
def cuda_parser(strict: bool = False) -> Lark:
    """lark's own LALR parser for cuda.lark, with positions and the postlexer: what the tests
    check the grammar with (strict mode) and compare the table driver with. `parse` does not
    use it; `analyzer.syntax.tables` builds its tables with lark on its own."""
    from lark import Token as LarkToken

    text = grammar_path("cuda.lark").read_text()
    options: dict[str, Any] = {
        "parser": "lalr",
        "lexer": "contextual",
        "propagate_positions": True,
        "maybe_placeholders": True,
        "postlex": CudaPostLexer(LarkToken),
        "strict": strict,
    }
    return lark_parser(text, options, None if strict else "cuda")


# ----------------------------------------------------------------------------- driver


@record(frozen=False, slots=False)
class ParseResult:
    unit: A.TranslationUnit
    diagnostics: list[Diagnostic]
    skipped: list[A.Unsupported]  # constructs blanked out so the rest could be parsed


def parse(text: str) -> ParseResult:
    """Parse preprocessed CUDA text. Never raises for bad input: problems become diagnostics.

    A text parsed before in this process is not parsed again (`_ParseMemo`): the result is
    the same, and the same steps are charged to the running meter."""
    known = _MEMO.recall(text)
    if known is not None:
        return known
    meter = budget.current()
    if meter is None:  # unmetered: count the steps all the same, to charge them on a later recall
        counting = budget.Meter("parse", _UNMETERED)
        with budget.metered(counting):
            result, whole = _parsed(text)
        steps = _UNMETERED - counting.left
    else:
        before = meter.left
        result, whole = _parsed(text)
        steps = before - meter.left
    if whole:
        _MEMO.remember(text, result, steps)
    return result


_UNMETERED = 1 << 62  # the limit of the meter that counts an unmetered parse's steps


@record(slots=False)
class _Recalled:
    """A parse remembered: its result and the steps it charged."""

    result: ParseResult
    steps: int


class _ParseMemo:
    """The results of the texts parsed last, by text, within `MEMO_CHARS` of text.

    Why: a run of several files reads each file twice, to survey it (the launches it makes,
    `analyzer.program`) and to check it, and both parse the same preprocessed text. Measured
    2026-11-25 on the 18 small cuda-samples files of issue 16 checked in one process: the
    second parse of each file was 0.48 s of 3.7 s CPU. A tree takes about 42 bytes of memory a
    character of text, so `MEMO_CHARS` keeps about 40 MB.

    Never stale: `parse` is a function of the text alone, except for its budget; a result
    that the budget or the interpreter's recursion limit cut short is never remembered, and a
    recall charges the running meter the steps the parse took, so it is a recall only where
    those steps are left (else the text is parsed again, and cut short as before). A recall
    gives new lists, so that a caller who changes them leaves the memo as it was (the trees
    are frozen)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chars = 0
        self.entries: OrderedDict[str, _Recalled] = OrderedDict()

    def recall(self, text: str) -> ParseResult | None:
        known = self.entries.get(text)
        if known is None:
            return None
        meter = budget.current()
        if meter is not None:
            if meter.left < known.steps:
                return None
            meter.spend(known.steps)
        self.entries.move_to_end(text)
        return _copy(known.result)

    def remember(self, text: str, result: ParseResult, steps: int) -> None:
        if len(text) > self.limit:
            return
        if self.entries.pop(text, None) is not None:  # parsed again where a recall lacked the steps
            self.chars -= len(text)
        self.entries[text] = _Recalled(_copy(result), steps)
        self.chars += len(text)
        while self.chars > self.limit:
            oldest, _ = self.entries.popitem(last=False)
            self.chars -= len(oldest)

    def clear(self) -> None:
        self.entries.clear()
        self.chars = 0


MEMO_CHARS = 1_000_000
_MEMO = _ParseMemo(MEMO_CHARS)


def _copy(result: ParseResult) -> ParseResult:
    return ParseResult(result.unit, list(result.diagnostics), list(result.skipped))


@gc_paused
def _parsed(text: str) -> tuple[ParseResult, bool]:
    """`parse` without the memo, and whether the text was parsed whole: neither the budget
    nor the recursion limit cut a declaration short."""
    diagnostics: list[Diagnostic] = []
    if "__align(" in text:
        text = fix_misspelled_align(text, diagnostics)
    if "<< <" in text:
        text = join_launch_brackets(text)
    chunks, chunk_diags = split_top_level(text)
    diagnostics.extend(chunk_diags)
    run = _ParseRun(text, diagnostics)
    whole = True
    for chunk in chunks:
        try:
            run.parse_chunk(chunk)
        except budget.BudgetExceeded as err:  # the declarations parsed so far are kept
            what = "parsing stopped at this declaration; the rest of the file is not read"
            diagnostics.append(budget.exceeded(err, what, Span(chunk.start, chunk.start + 1)))
            whole = False
            break
    result = ParseResult(A.TranslationUnit(tuple(run.decls), Span(0, len(text))), diagnostics, run.skipped)
    return result, whole and not run.too_deep


class _ParseRun:
    """The declarations of one text parsed one after the other, sharing the type-name table
    (a type learned in one declaration is known in the next) and the text as repaired so far."""

    def __init__(self, text: str, diagnostics: list[Diagnostic]) -> None:
        self.parser = _driver()
        self.postlex = CudaPostLexer()
        self.text = text
        self.working = text  # `text` with the statements that did not parse blanked out
        self.diagnostics = diagnostics
        self.skipped: list[A.Unsupported] = []
        self.decls: list[A.Node] = []
        self.tried_names: set[str] = set()
        self.too_deep = False  # a declaration hit the recursion limit (which depends on the caller's depth)
        self.blanked = 0  # where the statement blanked out last starts

    def parse_chunk(self, chunk: Chunk) -> None:
        """Parse one declaration, learning unknown type names and blanking out statements
        that do not parse, until it parses or is given up."""
        if chunk.refused:  # refused by the splitter, which said why
            self._skip(chunk, chunk.refused)
            return
        if chunk.end - chunk.start > LARGE_INITIALIZER_CHARS and self._too_large(chunk):
            return
        postlex = self.postlex
        tries = 0
        learned: tuple[str, int] | None = None
        checkpoints: Checkpoints | None = None  # once a statement was blanked (`syntax.resume`)
        blanked: int | None = None  # where the statement blanked since the last parse starts
        while True:
            piece = self.working[chunk.start : chunk.end]
            budget.spend(budget.steps_of(len(piece)))  # every attempt, retries too
            postlex.text = piece  # the postlexer peeks at the text after a token
            resume: Resumed | None = None
            if checkpoints is not None:  # (here: the last parse's post-lexer has put its scopes back)
                if blanked is not None:
                    resume = checkpoints.before(blanked)
                checkpoints.started()
            blanked = None
            try:
                to_ast = ToAst(chunk.start)
                unit = self.parser.parse(
                    piece,
                    to_ast.reduce,
                    postlex.process,
                    (to_ast, rule_methods()),
                    resume,
                    None if checkpoints is None else checkpoints.keep,
                )
            except ParseError as err:
                pos = chunk.start + (err.pos_in_stream if err.pos_in_stream is not None else 0)
                tries += 1
                if learned is not None and pos <= learned[1]:
                    # no better: forget the name and parse again, to get the first error back
                    postlex.table.scopes[0].discard(learned[0])
                    learned = checkpoints = None
                    continue
                learned = self._learn_type_name(err, pos, tries)
                if learned is not None:
                    checkpoints = None
                    continue
                if tries <= MAX_RETRIES_PER_DECLARATION and self._skip_statement(chunk, err, pos):
                    if checkpoints is None:
                        checkpoints = Checkpoints(postlex)
                    else:
                        blanked = self.blanked - chunk.start
                    continue
                self._skip_declaration(chunk, err, pos)
                return
            except RecursionError:
                self.too_deep = True
                message = "declaration nested too deeply to analyse; skipped"
                self.diagnostics.append(
                    Diagnostic(Severity.ERROR, message, "WL901", Span(chunk.start, chunk.start + 1))
                )
                self._skip(chunk, "nested too deeply")
                return
            self.decls.extend(unit.decls)
            return

    def _too_large(self, chunk: Chunk) -> bool:
        """Blank a large declaration's initializers; True if it is still too large to parse."""
        if not chunk.is_function:
            self.working = blank_initializers(self.working, chunk.start, chunk.end)
        size = len("".join(self.working[chunk.start : chunk.end].split()))
        if size <= MAX_DECLARATION_CHARS:
            return False
        self.diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                f"declaration too large to analyse ({size} characters, the limit is {MAX_DECLARATION_CHARS}); skipped",
                "WL901",
                Span(chunk.start, chunk.start + 1),
            )
        )
        self._skip(chunk, "declaration too large")
        return True

    def _skip(self, chunk: Chunk, what: str) -> None:
        self.skipped.append(
            A.Unsupported(what, self.text[chunk.start : chunk.start + 200], Span(chunk.start, chunk.end))
        )

    def _learn_type_name(self, err: ParseError, pos: int, tries: int) -> tuple[str, int] | None:
        """A type from a header that is never read (`curandState *s`, `(cufftComplex *)p`):
        learn the name as a type for the rest of the file, to parse again; the caller keeps it
        only if that gets past the error. Returns (name, error position), or None."""
        name = unknown_type_name(err, self.working, pos, self.postlex.table, self.tried_names)
        if name is None or tries > MAX_RETRIES_PER_DECLARATION:
            return None
        self.tried_names.add(name)
        self.postlex.table.scopes[0].add(name)
        return name, pos

    def _skip_statement(self, chunk: Chunk, err: ParseError, pos: int) -> bool:
        """An error inside a function body: report and blank out the statement that holds it,
        so the body can be parsed again. False if the error is not in a statement of a body."""
        working = self.working
        body = working.find("{", chunk.start, chunk.end)
        if not (chunk.is_function and body != -1 and body < pos < chunk.end - 1):
            return False
        s, e = statement_bounds(working, body, pos)
        if e <= s or not working[s:e].strip() or working[s:e].strip() == ";":
            return False
        stext = self.text[s:e]
        what = name_construct(stext)
        self.skipped.append(A.Unsupported(what or "syntax error", stext, Span(s, e)))
        self.diagnostics.append(diagnostic_for(err, what, pos, stext, working))
        self.working = blank_out(working, s, e)
        self.blanked = s
        return True

    def _skip_declaration(self, chunk: Chunk, err: ParseError, pos: int) -> None:
        """Give the declaration up: report it, naming the construct from the text up to the
        error's line, not from all of a body that may hold any construct at all."""
        text = self.text
        stext = text[chunk.start : chunk.end]
        line_end = text.find("\n", pos)
        what = name_construct(text[chunk.start : line_end if chunk.start <= line_end < chunk.end else chunk.end])
        self.skipped.append(A.Unsupported(what or "syntax error", stext, Span(chunk.start, chunk.end)))
        self.diagnostics.append(diagnostic_for(err, what, pos, stext, self.working))
