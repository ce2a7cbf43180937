"""A comparison whose one side reads the lane's thread indices only as plain terms, and whose
other side reads none, is rebuilt at a lane from its side's terms sorted once
(`symbolic.shifted.rebuilt`): the same expression as the general substitution
(`Term.subs_args`), its monomials in the same order, the same fields worked out, and the same
budget steps; the comparisons of other shapes are left to the general way. Small programs
written for the test give the same report, byte for byte, and the same steps per kernel,
with the short way and without it, also under a budget that runs out."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import remembered, shifted
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

TX, TY = S.sym("threadIdx.x"), S.sym("threadIdx.y")
N, BX, K = S.sym("n"), S.sym("blockIdx.x"), S.sym("k@1")
LANES = [{"threadIdx.x": x, "threadIdx.y": y, "threadIdx.z": 0} for y in (0, 1) for x in (0, 1, 5, 31)]


def _shape(e: S.Expr) -> list:
    """`e`'s monomials in their dict order, terms written out with their arguments'."""
    return [
        (tuple((a.op, tuple(_shape(x) for x in a.args)) if a.__class__ is S.Term else a for a in m), c)
        for m, c in e._p.items()
    ]


def _term_at(t: S.Term, env: dict[str, int]) -> tuple[S.Expr, int]:
    """`RememberedSubs.term(t)` at `env` with an empty memo, and the steps it spent."""
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        done = S.RememberedSubs(env, {}).term(t)
    return done, 10**9 - meter.left


CASES = [
    S.compare("<", TX + BX * 128 + N * K * 128 + 64, N),  # a loop's bound on the lane's index
    S.compare("<=", TX, S.select(S.compare("<", N, 7), N, K)),  # the index against a choice
    S.compare("<", N, TX * 2 + TY * 32 - 5),  # the index on the right; a lane whose constant is 0
    S.compare("<=", TX + N - 1, K),  # the constant at the end of the side's monomials
]


@pytest.mark.parametrize("e", CASES, ids=range(len(CASES)))
def test_a_shifted_comparison_is_rebuilt_as_the_substitution_builds_it(monkeypatch, e):
    t = S.single_atom(e)
    assert t is not None and shifted.shifted_template(t, frozenset(LANES[0])) is not None
    for env in LANES:
        taken = shifted.TAKEN[0]
        fast, fast_steps = _term_at(t, env)
        assert shifted.TAKEN[0] == taken + 1
        with monkeypatch.context() as m:
            m.setattr(remembered, "shifted_template", lambda t, names: None)
            plain, plain_steps = _term_at(t, env)
        assert shifted.TAKEN[0] == taken + 1
        assert fast == plain and _shape(fast) == _shape(plain)
        assert (fast._free, fast._depth, hash(fast)) == (plain._free, plain._depth, hash(plain))
        assert fast_steps == plain_steps == 3


def test_the_other_comparisons_are_left_to_the_general_way():
    names = frozenset(LANES[0])
    for e in (
        S.compare("==", TX + N, K),  # `compare` orders the sides of `==` by key
        S.compare("<", TX * N, K),  # the index in a product
        S.compare("<", TX + N, TY + K),  # both sides read an index
        S.compare("<", S.mod(TX, 4) + N, K),  # the index in a term
        S.compare("<", TX + N, N + 7),  # folds to a number at every lane
    ):
        t = S.single_atom(e)
        assert t is not None and shifted.shifted_template(t, names) is None, e


PROGRAM = """\
__global__ void strided(float *a, const float *b, int n) {
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += gridDim.x * 64)
        a[i] = b[i];
}

__global__ void tail(float *a, int n, int m) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i + 3 < n && m > 2)
        a[i * 2] = 1.0f;
    if (n <= threadIdx.x * 2 - 1)
        a[threadIdx.x] += 2.0f;
}
"""

LAUNCHES = [("--block", "64", "--grid", "4"), ("--block", "32,2")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short way switched off)."""
    forget_walk_tables()
    shifted._TEMPLATES.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(remembered, "shifted_template", lambda t, names: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_comparisons_rebuilt_give_the_general_ways_report_and_steps(tmp_path, monkeypatch, launch):
    taken = shifted.TAKEN[0]
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)
    assert shifted.TAKEN[0] - taken >= 64  # the lanes of the two checks with the short way


@pytest.mark.parametrize("analysis", [1_500, 2_500, 4_000])  # cut in the first kernel, and in the second
def test_a_small_budget_runs_out_where_the_general_way_ran_out(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, LAUNCHES[0], forget)
    assert fast == plain
