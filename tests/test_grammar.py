"""Specification of grammars/cuda.lark as a grammar: it builds as LALR(1) with the contextual
lexer under lark's strict mode, so a new shift/reduce conflict or a terminal collision fails
here first, before any test of what it parses."""

from __future__ import annotations

import re

import pytest
from lark import Lark, Token

from analyzer.grammar_files import grammar_path
from analyzer.syntax.parse import cuda_parser
from analyzer.syntax.postlex import CudaPostLexer


@pytest.fixture(scope="module")
def strict_parser() -> Lark:
    return cuda_parser(strict=True)


def test_the_grammar_builds_in_strict_mode_with_no_conflict_and_no_terminal_collision(strict_parser):
    # strict=True makes lark raise GrammarError on a shift/reduce conflict and on two
    # terminals that can match the same text; building is the whole assertion
    assert strict_parser.options.strict is True


def test_the_parser_is_lalr_with_the_contextual_lexer_and_positions(strict_parser):
    assert strict_parser.options.parser == "lalr"
    assert strict_parser.options.lexer == "contextual"
    assert strict_parser.options.propagate_positions is True
    assert isinstance(strict_parser.options.postlex, CudaPostLexer)


def test_the_strict_grammar_is_the_one_in_the_source_tree():
    path = grammar_path("cuda.lark")
    assert path.name == "cuda.lark" and path.parent.name == "grammars"
    assert path.is_file()


def test_the_strict_parser_is_built_from_the_grammar_text_not_from_the_table_cache(strict_parser):
    assert strict_parser.options.cache is False


def test_the_everyday_parser_is_built_once_and_cached():
    assert cuda_parser() is cuda_parser()
    assert cuda_parser(strict=True) is cuda_parser(strict=True)


def test_the_dangling_else_is_resolved_by_the_grammar_not_by_a_conflict_rule():
    text = grammar_path("cuda.lark").read_text()
    assert "open_statement" in text and "closed_statement" in text
    # no priority or %override hacks on the if statement
    assert not re.search(r"if_statement\.\d", text)


@pytest.mark.parametrize(
    "word",
    [
        "__global__",
        "__device__",
        "__host__",
        "__forceinline__",
        "__noinline__",
        "__shared__",
        "__constant__",
        "__restrict__",
        "__launch_bounds__",
        "__align__",
        "alignas",
        "__attribute__",
        "const",
        "volatile",
        "static",
        "inline",
        "extern",
        "typedef",
        "struct",
        "union",
        "enum",
        "template",
        "typename",
        "sizeof",
        "static_assert",
        "using",
        "namespace",
    ],
)
def test_keywords_are_not_lexed_as_identifiers(strict_parser, word):
    tokens = list(strict_parser.lex(word))
    assert len(tokens) == 1
    assert tokens[0].type != "IDENTIFIER"
    assert tokens[0].value == word


@pytest.mark.parametrize(
    "text, kind",
    [
        ("0x1Fu", "INTEGER"),
        ("1ULL", "INTEGER"),
        ("0b1010", "INTEGER"),
        ("1'000'000", "INTEGER"),
        ("1.5f", "FLOATING"),
        ("1e-3", "FLOATING"),
        (".5", "FLOATING"),
        ("0x1p-2", "FLOATING"),
        ("'a'", "CHARACTER"),
        ("'\\n'", "CHARACTER"),
        ('"a\\"b"', "STRING"),
        ("threadIdx", "IDENTIFIER"),
        ("cg::this_thread_block", "IDENTIFIER"),
        ("::min", "IDENTIFIER"),
        ("__shared_mem", "IDENTIFIER"),
        ("constant", "IDENTIFIER"),
    ],
)
def test_literals_and_names_lex_as_one_token(strict_parser, text, kind):
    tokens = [t for t in strict_parser.lex(text) if isinstance(t, Token)]
    assert [(t.type, t.value) for t in tokens] == [(kind, text)]


def test_comments_and_directive_lines_are_ignored_by_the_lexer(strict_parser):
    tokens = list(strict_parser.lex("#pragma unroll\n/* a { */ x // b ;\n"))
    assert [(t.type, t.value) for t in tokens] == [("IDENTIFIER", "x")]
