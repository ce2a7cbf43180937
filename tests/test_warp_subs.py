"""A warp's lanes put into a mask the short way give what the long way gives: an expression of
one term takes its term's result as it is (`expressions._one_term`): the same results, the
same steps lane by lane."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import expressions

TX, TY = S.sym("threadIdx.x"), S.sym("threadIdx.y")
N, M = S.sym("n"), S.sym("m")
#: One term each, whose results at lanes are a term, a sum, a monomial of two atoms, a number
#: and zero.
ONE_TERMS = [
    S.compare("<", TX + N, M),
    S.select(S.compare("<", TX, 2), N + M + TX, M),
    S.select(S.compare("<", TX, 2), N * M, M + TX),
    S.select(S.compare("<", TX, 2), TX + 3, TX * 0),
    S.logical_and(S.compare("<", TX + TY * 16, N), S.compare("!=", S.select(S.compare("<", TY, 1), TX, N), 0)),
]
LANES = [{"threadIdx.x": x, "threadIdx.y": y, "threadIdx.z": 0} for y in range(2) for x in range(4)]


def each_lane(exprs: list[S.Expr], remembered: bool) -> tuple[list[S.Expr], list[int]]:
    """Each expression at each of `LANES` (a memo of its terms shared, or a plain dict): the
    results and the steps of each."""
    memo: dict = {}
    results, steps = [], []
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        for e in exprs:
            for env in LANES:
                before = meter.left
                results.append(e.subs(S.RememberedSubs(env, memo) if remembered else env))
                steps.append(before - meter.left)
    return results, steps


@pytest.mark.parametrize("remembered", [True, False])
def test_an_expression_of_one_term_gives_the_result_and_steps_it_gave_built(monkeypatch, remembered):
    each_lane(ONE_TERMS, remembered)  # the numbers both meet made
    fast, fast_steps = each_lane(ONE_TERMS, remembered)
    monkeypatch.setattr(expressions, "ONE_TERM_AS_IS", False)
    plain, plain_steps = each_lane(ONE_TERMS, remembered)
    assert fast == plain and fast_steps == plain_steps
    assert [str(e) for e in fast[8:10]] == ["m + n", "m + n + 1"]  # a sum: two steps more than a term
    assert fast_steps[8:12] == ([7, 7, 6, 6] if remembered else [9, 9, 8, 8])
    assert str(fast[16]) == "m*n" and fast[26] == S.const(0) and fast[24] == S.const(3)
    assert sum(fast_steps) == (288 if remembered else 384)


def test_the_result_is_the_terms_own_where_no_monomial_needs_ordering():
    memo: dict = {}
    subs = S.RememberedSubs(LANES[5], memo)
    (t,) = ONE_TERMS[0]._p  # its one monomial, of the term
    done = ONE_TERMS[0].subs(subs)
    assert done is memo[(t[0], 1, None, None)][0]
