"""The symbolic engine's budget steps and results where its hot paths are written out by hand
(`new_expr` and `Expr.subs` spending a step without `budget.spend`, `Expr.subs` handing a term
to `RememberedSubs.term` itself, a substitution's dict wrapped as it is when nothing cancels):
the exact steps the plain `budget.spend` path spent, and the same values and memo entries.
The step counts below are those of the engine before these paths were written out (checked
against main 8c14170)."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic.expressions import atom_expr, new_expr

x, y, z = S.sym("x"), S.sym("y"), S.sym("z")


def _steps(make, limit: int = 10**6, warm: bool = True):
    """What `make()` returns, and the steps it spent. Run once unmetered first: a constant met
    for the first time spends a step that later ones do not (`const`), and the tests of one
    process share the constants."""
    if warm:
        make()
    meter = budget.Meter("analysis", limit)
    with budget.metered(meter):
        done = make()
    return done, limit - meter.left


def test_new_expr_spends_one_step_and_runs_out_as_spend_does() -> None:
    assert _steps(lambda: new_expr({(): 7}))[1] == 1
    # three expressions built: the third runs a budget of two out, as `budget.spend` would
    meter = budget.Meter("analysis", 2)
    with budget.metered(meter), pytest.raises(budget.BudgetExceeded):
        for _ in range(3):
            new_expr({(): 7})
    assert meter.left == -1
    assert new_expr({(): 7}).value == 7  # unmetered: no meter, no step, no error


CASES = [
    (lambda: x + 2 * y, {"x": 3}, 2, "y*2 + 3"),  # the substitution's step and its result
    (lambda: x + 2 * y, {"z": 3}, 0, "x + y*2"),  # reads none of the names: itself, no step
    (lambda: x * y + z, {"x": 4, "y": 5}, 2, "z + 20"),
    (lambda: x - y, {"y": x}, 2, "0"),  # cancels: the zero coefficient dropped
    (lambda: S.floordiv(x, y + 1), {"x": 9, "y": 2}, 6, "3"),
    # the comparison's two sides are told apart without building their difference (`queries.constant_difference`)
    (lambda: S.select(S.compare("<", x, y), x, y), {"x": 1}, 10, "(1 < y) ? 1 : y"),
]


@pytest.mark.parametrize(("make", "mapping", "steps", "text"), CASES)
def test_subs_steps_and_values(make, mapping, steps: int, text: str) -> None:
    e = make()
    done, spent = _steps(lambda: e.subs(mapping))
    assert (str(done), spent) == (text, steps)


def test_subs_runs_out_where_it_ran_out() -> None:
    e = S.floordiv(x, y + 1) + S.minimum(x, z)
    whole = _steps(lambda: e.subs({"x": 9, "y": 2}))[1]
    assert whole == 9
    for limit in range(whole):
        with pytest.raises(budget.BudgetExceeded):
            _steps(lambda: e.subs({"x": 9, "y": 2}), limit)
    assert str(_steps(lambda: e.subs({"x": 9, "y": 2}), whole)[0]) == "min(9, z) + 3"


def test_a_cancelled_sum_is_the_constant_zero() -> None:
    done = (x + y - z).subs({"z": x + y})
    assert done.is_const and done.value == 0 and done._p == {}
    kept = (x + y).subs({"y": 3})  # nothing cancels: the substitution's dict kept as it is
    assert kept._p == {(S.Symbol("x"),): 1, (): 3}


def test_remembered_terms_same_values_as_plain_and_the_memo() -> None:
    """`RememberedSubs` gives what a plain substitution gives; a term that reads only the names
    it binds is evaluated (`Term.evaluate`), not rebuilt: a number, in no step of its own."""
    n = S.sym("n")  # bound by no lane: the terms that read it are substituted
    masks = [
        S.logical_and(S.compare("==", x + 32 * y, S.const(0)), S.compare("<", z, n)),
        S.floordiv(x, S.const(4)) + S.mod(y, S.const(3)) * 2,
        S.select(S.compare("<", x, S.const(16)), S.minimum(x, y), n),
    ]
    memo: dict = {}
    steps, plain_steps, texts = [], [], []
    for lane in range(40):
        env = {"x": lane % 32, "y": lane // 32, "z": 7}
        for e in masks:
            plain, spent_plain = _steps(lambda e=e, env=env: e.subs(env))
            e.subs(S.RememberedSubs(env, {}))  # the constants it makes (see `_steps`)
            done, spent = _steps(lambda e=e, env=env: e.subs(S.RememberedSubs(env, memo)), warm=False)
            assert done == plain
            steps.append(spent)
            plain_steps.append(spent_plain)
            texts.append(str(done))
    assert sum(steps) == 680 and steps[:6] == [9, 2, 6, 9, 2, 6]
    assert sum(plain_steps) == 1160 and plain_steps[:6] == [11, 6, 12, 11, 6, 12]
    assert texts[:3] == ["7 < n", "0", "0"] and texts[-3:] == ["0", "3", "1"]
    # the memo is keyed by the term and the values of the names it reads, in the mapping's order
    t = S.single_atom(S.floordiv(x, S.const(4)))
    assert memo[(t, 5, None, None)] == (S.const(1), 0)
    assert len(memo) == 227


def test_a_term_whose_arguments_do_not_change_is_itself_with_its_slots() -> None:
    t = S.single_atom(S.floordiv(x, y + 1))
    done = t.subs_args({"z": 1})
    assert S.single_atom(done) is t
    plain = new_expr({(t,): 1})
    assert (done.free_symbols, done.depth, done.skey) == (plain.free_symbols, plain.depth, plain.skey)
    assert _steps(lambda: t.subs_args({"z": 1}))[1] == 1
    assert atom_expr(t) == plain


def test_a_term_holding_an_unknown_is_substituted_not_evaluated() -> None:
    """A term whose every symbol is bound but that holds an `Unknown` cannot be evaluated: it is
    substituted (its terms of bound names alone still evaluated), once, as a plain `subs` does."""
    loaded = S.unknown("a[x]", S.Origin.LOADED)
    e = S.select(S.compare("<", x + loaded, S.const(8)), S.floordiv(x, S.const(2)), y)
    env = {"x": 5, "y": 1}
    done = e.subs(S.RememberedSubs(env, {}))
    assert done == e.subs(env)
    assert str(done) == "((a[x] + 5) < 8) ? 2 : 1"
