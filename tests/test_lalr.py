"""Specification of analyzer.syntax.lalr and analyzer.syntax.tables: warplint's LALR driver
runs the tables lark builds from cuda.lark and must read every text exactly as lark's own
parser (contextual lexer, propagated positions, maybe_placeholders) reads it: the same tree,
the same tokens at the same offsets, the same spans, and errors at the same place."""

from __future__ import annotations

import marshal
import re
import string
from pathlib import Path
from typing import Any

import pytest
from lark import Token as LarkToken
from lark import Tree
from lark.exceptions import UnexpectedInput

from analyzer.syntax import tables as T
from analyzer.syntax.build import OPERATOR_CHAINS, ast_methods
from analyzer.syntax.lalr import Inlined, Meta, ParseError, Parser, Token
from analyzer.syntax.parse import cuda_parser, cuda_tables
from analyzer.syntax.postlex import CudaPostLexer, TypeTable
from analyzer.syntax.recovery import fix_misspelled_align

ROBUSTNESS = Path(__file__).parent / "fixtures" / "robustness"
SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.cu"))

# texts where the contextual lexer's choice matters, or positions are easy to get wrong
TRICKY = [
    "template <class T, int N> __global__ void k(T *p) { p[threadIdx.x >> 1] = (T)N; }",
    "__global__ void k(float *a) { if (a[0] < 1 && a[1] > 2) a[2] = a[3] >> 2; }",
    "template <typename T> struct S { T v; }; __global__ void k(S<S<int>> *p) { p->v.v = 1; }",
    "void h() { k<float, 4><<<dim3(2, 2), 64, 0, 0>>>(0); }",
    "__global__ void k(int *a) { int x = ((a[1])) * (2 + a[0]) % 3, y; y = x ? x : -x; a[y] = sizeof(int); }",
    "typedef struct { float x, y, z; } __align__(16) vec3; __shared__ vec3 s[32];",
    "__global__ void k(float *o) { for (int i = 0, j; i < 4; ++i) { if (i) continue; else break; } do {} while (0); }",
    'enum E { A = 1, B, C = A << 3 }; static_assert(sizeof(E) == 4, "e");',
    "__global__ void __launch_bounds__(256, 2) k(const float *__restrict__ a) { extern __shared__ float s[]; s[0] = a[0]; }",
    "__device__ int f(int a, int b = 2) { return a + b; }",
]


def _lark_tree(text: str) -> Any:
    parser = cuda_parser()
    postlex = parser.options.postlex
    postlex.table = TypeTable()
    postlex.text = text
    return _plain_lark(parser.parse(text))


def _plain_lark(node: Any) -> Any:
    if isinstance(node, Tree):
        meta = node.meta
        span = (None, None) if meta.empty else (meta.start_pos, meta.end_pos)
        return (str(node.data), tuple(_plain_lark(c) for c in node.children), span)
    if isinstance(node, LarkToken):
        return (node.type, str(node), node.start_pos, node.end_pos)
    return node


def _driver_tree(text: str) -> Any:
    postlex = CudaPostLexer()
    postlex.text = text

    def build(rule: T.RuleSpec, children: list[Any], meta: Meta, extents: Any) -> Any:
        span = (None, None) if meta.empty else (meta.start_pos, meta.end_pos)
        return (rule.name, tuple(_plain_driver(c) for c in children), span)

    return Parser(cuda_tables()).parse(text, build, postlex.process)


def _plain_driver(node: Any) -> Any:
    if isinstance(node, Token):
        return (node.type, str(node), node.start_pos, node.end_pos)
    return node


@pytest.mark.parametrize("text", TRICKY)
def test_the_driver_builds_the_tree_lark_builds_with_the_same_spans(text):
    assert _driver_tree(text) == _lark_tree(text)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_reads_the_same_through_the_driver_and_through_lark(path):
    from analyzer.source.preprocess import preprocess

    text = preprocess(path.read_text(), str(path)).text
    text = fix_misspelled_align(text, [])  # as `parse` does before parsing
    assert _driver_tree(text) == _lark_tree(text)


def test_a_keyword_is_a_name_where_the_state_does_not_accept_the_keyword():
    # `final` is a keyword after a member function's parameters (read as IDENTIFIER there, the
    # suffix would not parse) and a plain name as an operand
    text = "struct B { __device__ int g() const final { return 0; } }; __device__ int f(int a) { return a + final; }"
    tree = _driver_tree(text)
    operand = text.rindex("final")
    assert [t for t in _tokens_of(tree) if t[1] == "final"] == [("IDENTIFIER", "final", operand, operand + 5)]
    assert tree == _lark_tree(text)


def _tokens_of(node: Any) -> list[tuple]:
    if isinstance(node, tuple) and len(node) == 4 and isinstance(node[1], str) and isinstance(node[2], int):
        return [node]
    if isinstance(node, tuple):
        return [t for child in node[1] for t in _tokens_of(child)] if len(node) == 3 else []
    return []


def test_an_unexpected_token_is_reported_where_lark_reports_it():
    text = "__global__ void k(float *a) { a[0] = = 1; }"
    with pytest.raises(ParseError) as mine:
        _driver_tree(text)
    with pytest.raises(UnexpectedInput) as larks:
        _lark_tree(text)
    assert mine.value.pos_in_stream == larks.value.pos_in_stream == text.index("= 1")
    assert (mine.value.token.type, mine.value.token.value) == ("EQUAL", "=")
    assert {"IDENTIFIER", "INTEGER", "LPAR"} <= mine.value.expected  # an operand was expected
    assert "SEMICOLON" not in mine.value.expected


def test_a_declaration_cut_short_fails_at_its_last_token_with_end():
    text = "__global__ void k(float *a) { a[0] = 1;"
    with pytest.raises(ParseError) as err:
        _driver_tree(text)
    assert err.value.token.type == "$END"
    assert err.value.pos_in_stream == text.index(";")


def test_a_character_no_terminal_matches_fails_with_no_token():
    text = "__global__ void k() { @ }"
    with pytest.raises(ParseError) as err:
        _driver_tree(text)
    assert err.value.token is None
    assert err.value.pos_in_stream == text.index("@")


def test_every_rule_that_builds_a_node_has_a_builder_method():
    methods = ast_methods()
    missing = {
        r.name
        for r in cuda_tables().rules
        if r.kind == T.CALL and not (r.expand1 and len(r.keep) == 1) and r.name not in methods
    }
    assert missing == set()
    assert set(methods) >= OPERATOR_CHAINS


def test_a_rule_spec_keeps_what_lark_keeps():
    rules = {r.name: r for r in cuda_tables().rules if r.name == "conditional"}
    cond = rules["conditional"]  # binary_expression "?" expression ":" conditional_expression
    assert cond.kind == T.CALL and cond.size == 5
    assert [i for i, _, _ in cond.keep] == [0, 2, 4]  # "?" and ":" are dropped


def test_an_inlined_rule_carries_its_childrens_extents():
    inl = Inlined((["a", "b"], [(0, 1), (2, 3)]))
    assert inl.children == ["a", "b"] and inl.extents == [(0, 1), (2, 3)]


def test_a_meta_is_the_pair_of_its_start_and_end():
    meta = Meta((3, 9))
    assert meta == (3, 9) and isinstance(meta, tuple)
    assert (meta.start_pos, meta.end_pos, meta.empty) == (3, 9, False)
    assert Meta((None, None)).empty


def test_direct_calls_are_given_the_plain_pair_and_the_builder_a_meta():
    """`Parser.parse`'s `direct` node functions get `(start, end)` as a plain tuple (no `Meta`
    made), and `build` a `Meta` with the same positions."""
    seen: dict[str, set[tuple[type, Any]]] = {"direct": set(), "build": set()}

    def build(rule, children, meta, extents):
        seen["build"].add((type(meta), tuple(meta)))
        return (rule.name, meta.start_pos, meta.end_pos)

    def node(builder, meta, *kept):
        seen["direct"].add((type(meta), tuple(meta)))
        return ("node", meta[0], meta[1])

    tables = cuda_tables()
    methods = [node if r.kind == T.CALL else None for r in tables.rules]
    text = "int f(int a) { return a + 1; }"
    for direct in (None, (None, methods)):
        postlex = CudaPostLexer()
        postlex.text = text
        Parser(tables).parse(text, build, postlex.process, direct)
    assert {kind for kind, _ in seen["direct"]} == {tuple} and {kind for kind, _ in seen["build"]} == {Meta}
    assert {pair for _, pair in seen["direct"]} == {pair for _, pair in seen["build"]}
    pairs = {pair for _, pair in seen["direct"]}
    assert (0, 30) in pairs and (15, 28) in pairs and (22, 27) in pairs  # the function, `return a + 1;`, `a + 1`


def test_a_rule_whose_children_are_only_picked_by_index_has_a_picker():
    from analyzer.syntax.lalr import _picker

    def rule(keep, nones_after=0, plain=False):
        return T.RuleSpec("r", 4, T.CALL, "r", keep, nones_after, False, plain)

    children = ["a", ".", "b", ";"]
    assert _picker(rule(((0, False, 0), (2, False, 0))))(children) == ("a", "b")
    assert _picker(rule(((3, False, 0),)))(children) == (";",)
    assert _picker(rule(()))(children) == ()
    assert _picker(rule(((0, False, 0), (2, False, 0)), plain=True)) is None  # the children as they are
    assert _picker(rule(((0, True, 0), (2, False, 0)))) is None  # a `_rule` spliced
    assert _picker(rule(((0, False, 1),))) is None  # a None placed before
    assert _picker(rule(((0, False, 0),), nones_after=1)) is None
    parser = Parser(cuda_tables(), with_extents=OPERATOR_CHAINS)
    picked = {r.name for r, pick in zip(cuda_tables().rules, parser._picks, strict=True) if pick is not None}
    assert {"member", "expression_statement", "call"} <= picked
    assert not picked & (OPERATOR_CHAINS | {"declaration_specifiers"})  # extents wanted; a `_rule` spliced


# ----------------------------------------------------------------------------- the table cache


def _same_parser(tables: T.Tables) -> bool:
    """The same grammar's tables (lark numbers states differently from one build to the next,
    so they are compared by what they parse)."""
    text = SAMPLES[0].read_text()
    postlex = CudaPostLexer()
    postlex.text = text

    def build(rule, children, meta, extents):
        return (rule.name, tuple(children), meta.start_pos, meta.end_pos)

    theirs = CudaPostLexer()
    theirs.text = text
    return len(tables.actions) == len(cuda_tables().actions) and Parser(tables).parse(
        text, build, postlex.process
    ) == Parser(cuda_tables()).parse(text, build, theirs.process)


@pytest.mark.slow
def test_tables_are_cached_per_grammar_text_and_python_and_reloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = T.load("cuda.lark", ("IDENTIFIER",))
    files = list((tmp_path / "warplint").glob("cuda-*-tables*.marshal"))
    assert len(files) == 1
    again = T.load("cuda.lark", ("IDENTIFIER",))
    assert again == first  # read back from the file: the same numbering, unlike a rebuild
    assert _same_parser(again)


@pytest.mark.slow
def test_a_damaged_cache_file_is_rebuilt_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    T.load("cuda.lark", ("IDENTIFIER",))
    (cache,) = (tmp_path / "warplint").glob("cuda-*-tables*.marshal")
    cache.write_bytes(b"\x00garbage")
    assert _same_parser(T.load("cuda.lark", ("IDENTIFIER",)))
    assert T.decode_tables(cache.read_bytes())["format"] == T.FORMAT


@pytest.mark.slow
def test_tables_of_another_format_are_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    T.load("cuda.lark", ("IDENTIFIER",))
    (cache,) = (tmp_path / "warplint").glob("cuda-*-tables*.marshal")
    data = T.decode_tables(cache.read_bytes())
    data["format"] = T.FORMAT + 1
    cache.write_bytes(T.encode_tables(data))
    assert _same_parser(T.load("cuda.lark", ("IDENTIFIER",)))
    assert T.decode_tables(cache.read_bytes())["format"] == T.FORMAT


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["the reproducer's bytes", "one byte flipped", "cut short", "old layout"])
def test_a_corrupted_cache_is_rebuilt_and_replaced(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    T.load("cuda.lark", ("IDENTIFIER",))
    (cache,) = (tmp_path / "warplint").glob("cuda-*-tables*.marshal")
    good = cache.read_bytes()
    bad = {
        "the reproducer's bytes": (ROBUSTNESS / "corrupt_cache" / "bad.marshal").read_bytes(),
        "one byte flipped": good[:200] + bytes([good[200] ^ 0x55]) + good[201:],
        "cut short": good[: len(good) // 2],
        "old layout": marshal.dumps(T.decode_tables(good)),
    }[damage]
    cache.write_bytes(bad)
    assert T.decode_tables(bad) is None
    assert _same_parser(T.load("cuda.lark", ("IDENTIFIER",)))
    assert T.decode_tables(cache.read_bytes()) is not None  # replaced by a whole one


@pytest.mark.slow
def test_an_unwritable_cache_folder_still_parses(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert _same_parser(T.load("cuda.lark", ("IDENTIFIER",)))


def test_the_lexers_fast_path_over_white_space_is_exactly_the_ws_terminal():
    """`Lexer.tokens` skips white space without the scanner: the characters it skips must be
    those of cuda.lark's ignored WS terminal, and no other terminal may start with one."""
    import re

    from analyzer.syntax import lalr

    tables = cuda_tables()
    ws = re.compile(tables.patterns["WS"])
    every_char = [chr(c) for c in range(0x3000)]
    assert {c for c in every_char if ws.fullmatch(c)} == lalr._SPACE_CHARS
    for name, pattern in tables.patterns.items():
        if name != "WS":
            starts = re.compile(pattern)
            assert not any(starts.match(c + "x1 ") for c in lalr._SPACE_CHARS), name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int a = b;", [("int", 0), ("a", 4), ("=", 6), ("b", 8), (";", 9)]),
        ("int  a=\tb ;\n", [("int", 0), ("a", 5), ("=", 6), ("b", 8), (";", 10)]),
        (" int a; ", [("int", 1), ("a", 5), (";", 6)]),
        ("\n\nint\n a ;\t", [("int", 2), ("a", 7), (";", 9)]),
        ("int a;\n \t\n", [("int", 0), ("a", 4), (";", 5)]),
    ],
)
def test_the_lexer_reads_one_blank_and_runs_of_blanks_alike(text, expected):
    """`Lexer.tokens` steps over one blank without the WS match, and over a run with it."""
    seen: list[tuple[str, int]] = []

    def watch(stream):
        for tok in stream:
            seen.append((tok.value, tok.start_pos))
            yield tok

    Parser(cuda_tables()).parse(text, lambda rule, children, meta, extents: None, watch)
    assert seen == expected


def test_the_first_character_scanners_match_as_the_whole_scanner_at_every_offset():
    from analyzer.syntax.lalr import Lexer

    lexer = Lexer(cuda_tables())
    texts = [*TRICKY, "a <<= b >>= c <<< d >>> e && f || g -> h ... 1.5e3f 0x1p3 'c' \"s\" // c\n/* c */ #x\n"]
    texts += ["u'c' U\"s\" L'x' u8\"t\" uint ::x::y :: : $ @ \\ \u00e9t\u00e9"]
    texts += [p.read_text() for p in SAMPLES[:10]]
    checked = 0
    for text in texts:
        for pos in range(len(text)):
            whole = lexer._all(text, pos)
            single = lexer._single.get(text[pos])
            if single is not None:  # read without a scanner: the whole scanner agrees
                assert whole is not None and (whole.lastgroup, whole.end()) == (single, pos + 1), text[pos:]
            fast = lexer._first_char_scanner(text[pos])(text, pos)
            assert (fast and (fast.lastgroup, fast.end())) == (whole and (whole.lastgroup, whole.end())), text[pos:]
            checked += 1
    assert checked > 10_000


def test_each_first_character_has_the_scanner_of_the_terminals_that_can_start_with_it():
    from analyzer.syntax.lalr import Lexer

    lexer = Lexer(cuda_tables())
    assert lexer._terminals_from("a") == ("IDENTIFIER",)
    assert lexer._terminals_from("u") == ("IDENTIFIER", "CHARACTER", "STRING")
    assert lexer._terminals_from("7") == ("FLOATING", "INTEGER")
    assert lexer._terminals_from(".") == ("FLOATING", "ELLIPSIS", "DOT")
    assert lexer._terminals_from("@") == ()
    assert lexer._terminals_from("\u00e9") == ()
    # characters with the same terminals share one scanner
    assert lexer._first_char_scanner("a") is lexer._first_char_scanner("Z") is not lexer._first_char_scanner("u")
    assert lexer._first_char_scanner("@")("@", 0) is None
    assert lexer._single == {
        "(": "LPAR",
        ")": "RPAR",
        ",": "COMMA",
        ";": "SEMICOLON",
        "?": "QMARK",
        "[": "LSQB",
        "]": "RSQB",
        "{": "LBRACE",
        "}": "RBRACE",
        "~": "TILDE",
    }


def test_the_first_characters_of_a_pattern():
    from analyzer.syntax.lalr import first_chars

    assert first_chars(r"(::)?[A-Za-z_]\w*") == frozenset(":_" + string.ascii_letters)
    assert first_chars(r"(u8|u|U|L)?'([^'\\\n]|\\.)+'") == frozenset("uUL'")
    assert first_chars(r"\&=") == frozenset("&")
    assert first_chars(r"a*?b|(?:c{0,2}d)+") == frozenset("abcd")
    assert first_chars(r"^(?=x)\b#") == frozenset("#")  # what reads no character is passed over
    # not known (any character): a category, a negated class, any, an empty match, case ignored
    for pattern in (r"\w+", "[^x]y", ".x", "x?", "(?i:a)", "(?i)a", "(a)?\\1b", "(", "[\x00-\uffff]"):
        assert first_chars(pattern) is None, pattern


def test_no_terminal_matches_from_a_character_outside_its_first_characters():
    from analyzer.syntax.lalr import first_chars

    tables = cuda_tables()
    tails = ("", "x", "1", "8'a'", "'", '"', "=", "*/", ".5", ":x", "\n")
    for name, pattern in tables.patterns.items():
        firsts = first_chars(pattern)
        assert firsts is not None, name  # every cuda.lark terminal's first characters are known
        match = re.compile(pattern).match
        for code in range(0x400):
            if chr(code) not in firsts:
                assert not any(match(chr(code) + tail) for tail in tails), (name, chr(code))


def test_a_literal_terminal_is_told_from_a_pattern():
    from analyzer.syntax.lalr import _literal

    assert [_literal(p) for p in ("<<=", r"\->", r"\.\.\.", r"\&\&", ";")] == ["<<=", "->", "...", "&&", ";"]
    assert [_literal(p) for p in ("#[^\n]*", r"(::)?[A-Za-z_]\w*", "", r"\d")] == [None, None, None, None]


def _plain_pass_chain(tables: T.Tables, below: int, top: int, kind: str) -> tuple[int, int]:
    """The `?rule` reductions `kind` makes from `top` over `below`, one step at a time, as the
    driver made them before `lalr._passed`: the state on top at the end, and the steps."""
    steps = 0
    while True:
        action = tables.actions[top].get(kind)
        if action is None or action >= 0 or tables.rules[~action].kind != T.PASS:
            return top, steps
        top = tables.actions[below][tables.rules[~action].origin]
        steps += 1


def test_a_chain_of_pass_reductions_ends_where_the_reductions_one_at_a_time_end():
    # an operand is reduced through every precedence level of C's operators: long chains
    text = "__global__ void k(int *a, int n) { int x = a[0]; x = n ? x + 1 : -x; a[n] = x << 2 | 1; }"
    parser = Parser(cuda_tables())
    postlex = CudaPostLexer()
    postlex.text = text
    parser.parse(text, lambda rule, children, meta, extents: rule.name, postlex.process)
    chains = {key: _plain_pass_chain(parser.tables, *key) for key in parser._passed}
    assert {key: end for key, (end, _) in chains.items()} == parser._passed
    assert all(steps >= 1 for _, steps in chains.values())
    assert max(steps for _, steps in chains.values()) == 8  # an operand read up through the precedence levels


@pytest.mark.parametrize("text", TRICKY)
def test_a_node_of_one_child_built_in_place_is_the_node_built_through_the_stacks(text):
    tables = cuda_tables()
    shortcut = Parser(tables, with_extents=OPERATOR_CHAINS)
    plain = Parser(tables, with_extents=OPERATOR_CHAINS)
    plain._one_child = (False,) * len(tables.rules)

    def tree(parser: Parser) -> Any:
        postlex = CudaPostLexer()
        postlex.text = text

        def build(rule: T.RuleSpec, children: list[Any], meta: Meta, extents: Any) -> Any:
            return (rule.name, tuple(_plain_driver(c) for c in children), meta.start_pos, meta.end_pos, extents)

        return parser.parse(text, build, postlex.process)

    assert tree(shortcut) == tree(plain)
    one_child = [r.name for r, one in zip(tables.rules, shortcut._one_child) if one]
    assert "identifier" in one_child and not set(one_child) & OPERATOR_CHAINS
    assert all(r.size == 1 and r.plain and r.kind == T.CALL for r, one in zip(tables.rules, shortcut._one_child) if one)


def test_tokens_made_without_the_class_equal_those_the_class_makes() -> None:
    """The lexer's tokens (`lalr._token`) and the postlexer's retyped ones (`new_borrow_pos`)
    are the tokens `Token(...)` makes: class, text, attributes, equality, hash and pickling."""
    import pickle

    from analyzer.syntax.lalr import _token

    made = _token("IDENTIFIER", "tid", 4, 7)
    plain = Token("IDENTIFIER", "tid", 4, 7)
    assert type(made) is Token
    assert (made.type, made.value, made.start_pos, made.end_pos) == ("IDENTIFIER", "tid", 4, 7)
    assert made.__dict__ == plain.__dict__ == {"type": "IDENTIFIER", "value": "tid", "start_pos": 4, "end_pos": 7}
    assert made == plain == "tid" and hash(made) == hash("tid") and str(made) == "tid"
    assert repr(made) == "Token('IDENTIFIER', 'tid')"
    again = pickle.loads(pickle.dumps(made))
    assert type(again) is Token and again.__dict__ == plain.__dict__
    retyped = Token.new_borrow_pos("TYPE_NAME", "tid", made)
    assert type(retyped) is Token
    assert retyped.__dict__ == {"type": "TYPE_NAME", "value": "tid", "start_pos": 4, "end_pos": 7}

    class Sub(Token):  # another token class still goes through its class
        pass

    assert type(Sub.new_borrow_pos("TYPE_NAME", "tid", made)) is Sub
    # a text's tokens as the driver's lexer gives them
    postlex = CudaPostLexer()
    text = "typedef int T; __global__ void k(T *p) { p[threadIdx.x] = 1; }"
    seen: list[Token] = []
    postlex.text = text

    def build(rule: T.RuleSpec, children: list[Any], meta: Meta, extents: Any) -> Any:
        seen.extend(c for c in children if isinstance(c, Token))
        return None

    Parser(cuda_tables()).parse(text, build, postlex.process)
    assert all(type(t) is Token and t.value == text[t.start_pos : t.end_pos] == t for t in seen)
    assert [t.type for t in seen if t.value == "T"] == ["IDENTIFIER", "TYPE_NAME"]


def test_nodes_built_directly_equal_those_built_through_the_builder() -> None:
    """`Parser.parse`'s `direct` (the node's function called without `ToAst.reduce`) gives the
    same tree, spans included, as `build` alone, on the tricky texts and the samples; every
    rule that builds a node has its function (`ToAst.reduce`'s)."""
    from analyzer.syntax.build import ToAst
    from analyzer.syntax.parse import rule_methods

    tables = cuda_tables()
    methods = rule_methods()
    assert len(methods) == len(tables.rules)
    assert all(methods[i] is ast_methods().get(r.name) for i, r in enumerate(tables.rules))
    # (`?member_name`, `?primary_expression` keep one child: no node of their own)
    assert {r.name for i, r in enumerate(tables.rules) if r.kind == T.CALL and methods[i] is None} == {
        "member_name",
        "primary_expression",
    }
    parser = Parser(tables, with_extents=OPERATOR_CHAINS)
    texts = [*TRICKY, *(p.read_text() for p in SAMPLES[:12])]
    for text in texts:
        trees = []
        for direct in (False, True):
            to_ast = ToAst(7)
            postlex = CudaPostLexer()
            postlex.text = text
            try:
                tree = parser.parse(text, to_ast.reduce, postlex.process, (to_ast, methods) if direct else None)
            except ParseError as err:
                tree = ("error", err.pos_in_stream)
            trees.append(tree)
        assert trees[0] == trees[1], text[:80]
    assert parser.parse(TRICKY[0], ToAst(0).reduce, CudaPostLexer().process).decls[0].span.start == 0


def test_without_re_s_parser_every_first_character_has_the_whole_scanner(monkeypatch):
    # a Python that renames `re._parser`: no first characters known, the same matches
    from analyzer.syntax import lalr

    monkeypatch.setattr(lalr, "_sre_parser", None)
    assert lalr.first_chars(r"\&=") is None
    lexer = lalr.Lexer(cuda_tables())
    assert lexer._terminals_from("a") == lexer._terminals_from("@") == tuple(lexer.tables.order)
    text = "__global__ void k(int *a) { a[threadIdx.x] += 0x1fu << 2; } // done\n"
    for pos in range(len(text)):
        whole = lexer._all(text, pos)
        fast = lexer._first_char_scanner(text[pos])(text, pos)
        assert (fast and (fast.lastgroup, fast.end())) == (whole and (whole.lastgroup, whole.end()))
