"""`expressions.atom_expr`: the expression of one atom, with its free symbols, depth and sort key
given from the atom, equal to what the plain expression works out from its dict."""

from __future__ import annotations

from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import Origin
from analyzer.analysis.symbolic.expressions import Symbol, atom_expr, new_expr, single_atom


def _worked_out(e: S.Expr) -> tuple:
    plain = new_expr(dict(e._p))  # the same dict, nothing remembered
    return plain.free_symbols, plain.depth, plain.skey, hash(plain)


def test_a_term_of_a_term_gives_what_the_dict_gives():
    x = S.sym("x")
    inner = S.compare("<", x, S.unknown("a", Origin.LOADED))
    outer = S.logical_and(inner, S.compare("!=", S.sym("y") * 4, 3))
    for e in (inner, outer):
        assert (e.free_symbols, e.depth, e.skey, hash(e)) == _worked_out(e)
    assert outer.free_symbols == frozenset({"x", "y"})
    assert (inner.depth, outer.depth) == (1, 2)


def test_an_unknown_gives_what_the_dict_gives():
    u = S.unknown("v", Origin.FLOAT, lane_varying=True)
    atom = single_atom(u)
    assert (u.free_symbols, u.depth, u.skey) == (frozenset(), 0, (((atom.key,), 1),))
    assert (u.free_symbols, u.depth, u.skey, hash(u)) == _worked_out(u)


def test_a_symbol_made_into_an_expression_equals_sym():
    e = atom_expr(Symbol("z"))
    assert e == S.sym("z")
    assert (e.free_symbols, e.depth, e.skey) == (frozenset({"z"}), 0, (((Symbol("z").key,), 1),))


def test_making_an_unknown_counts_it_without_writing_to_its_class():
    from analyzer.analysis.symbolic.expressions import Unknown, fresh_values, unknown

    before_class = dict(vars(Unknown))
    made, kept = fresh_values()
    u = unknown("float", S.Origin.FLOAT)
    assert fresh_values() == (made + 1, kept)
    unknown("float", S.Origin.FLOAT)
    assert fresh_values() == (made + 2, kept)
    assert dict(vars(Unknown)) == before_class  # (a write there undoes CPython's specialisations)
    assert str(u) == "float"


def test_a_term_reads_its_arguments_stored_sets_or_works_them_out():
    from analyzer.analysis.symbolic.expressions import term

    def fresh(e: S.Expr) -> S.Expr:
        return new_expr(dict(e._p))  # nothing stored: free symbols, depth and key worked out when asked

    x, n = S.sym("threadIdx.x"), S.sym("n")
    left, right = S.compare("<", x * 4 + 1, n), x + n
    for a, b in ((left, right), (fresh(left), fresh(right)), (fresh(left), right)):
        assert a._free is None or a is left
        t = term("min", (a, b))
        (((atom,), _),) = t._p.items()
        assert atom.free == frozenset({"threadIdx.x", "n"})
        assert atom.depth == 2  # (`<` is a term: one level below)
        assert t == term("min", (b, a))  # commutative: the same order of arguments either way
