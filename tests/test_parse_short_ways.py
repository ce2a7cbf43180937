"""The builder's and the post-lexer's short ways (2026-11-29) give what the general ways give."""

from __future__ import annotations

from analyzer.syntax import ast as A
from analyzer.syntax.build import ToAst
from analyzer.syntax.lalr import Token
from analyzer.syntax.parse import parse

PROGRAM = """
typedef void (*callback_t)(int);
typedef struct { int a, b; } pair_t;
template <class T> struct Box { T v; };
__global__ void k(float *out, callback_t cb, pair_t p, Box<float> b) {
    float (*rows)[4] = (float (*)[4])out;
    int i = threadIdx.x, j = (i + 1) * 2;
    if (i < 4) { rows[i][0] = b.v + p.a; }
    out[j] += i << 1;
}
"""


def test_a_declarator_of_a_name_alone_is_what_the_general_way_makes():
    """`ToAst.declarator` of a direct declarator alone (the short way) equals the general way's,
    which an item it passes over (neither a tuple nor a dict) sends it through."""
    builder = ToAst(10)
    direct = {"name": "x", "derivations": [("array", None)], "sizes": [4], "span": None, "ctor": (1,)}
    short = builder.declarator((0, 5), direct)
    general = builder.declarator((0, 5), direct, "passed over")
    assert short == general
    assert short == A.Declarator("x", (("array", None),), short.span, (), (1,), (4,))
    assert builder.declarator((0, 5), {"name": "y", "derivations": [], "sizes": []}).constructor_args == ()


def test_an_operator_of_one_token_is_its_text():
    builder = ToAst(0)
    assert builder._op((0, 1), Token("PLUS", "+", 0, 1)) == "+"
    assert type(builder._op((0, 1), Token("PLUS", "+", 0, 1))) is str
    assert builder._op((0, 2), Token("GT", ">", 0, 1), Token("GT", ">", 1, 2)) == ">>"


def test_typedefs_parenthesised_declarators_and_scopes_through_the_post_lexer():
    """The tracked punctuators tested first (`(`, `)`, `;`, `,`, `{`, `}`) still declare the
    typedefs' names, open parenthesised declarators and scopes: the kernel parses whole."""
    result = parse(PROGRAM)
    assert result.diagnostics == [] and result.skipped == []
    kernel = result.unit.decls[-1]
    assert isinstance(kernel, A.FunctionDef)
    params = kernel.declarator.derivations[0][1]
    assert [p.specs.type.names for p in params] == [("float",), ("callback_t",), ("pair_t",), ("Box",)]
    rows = kernel.body.items[0].decl.declarators[0].declarator
    assert rows.name == "rows" and [k for k, _ in rows.derivations] == ["pointer", "array"]
