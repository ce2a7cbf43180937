"""Small hot paths written out by hand, each giving exactly what the plain code gave:
`RememberedSubs.term`'s memo key for a lane's three thread indices (and `lane_groups._key`,
which reads the same entries), and the callers that read an expression's stored free
symbols (`Expr._free`) where it is worked out (`neutral.lanes_read`)."""

from __future__ import annotations

from types import SimpleNamespace

from analyzer.analysis import symbolic as S
from analyzer.analysis.lane_groups import _key
from analyzer.analysis.neutral import lanes_read
from analyzer.analysis.symbolic.expressions import new_expr

x, y, z = S.sym("threadIdx.x"), S.sym("threadIdx.y"), S.sym("threadIdx.z")
n = S.sym("n")


def plain_key(t: S.Term, env: dict[str, int]) -> tuple:
    """The memo key as `RememberedSubs.term` wrote it for every mapping before."""
    return (t, *[v if name in t.free else None for name, v in env.items()])


def test_the_memo_keys_are_those_of_the_plain_comprehension() -> None:
    masks = [
        S.logical_and(S.compare("<", x + 32 * y, n), S.compare("==", z, S.const(0))),
        S.floordiv(x, S.const(4)) + S.mod(y, S.const(3)) * 2,
        S.select(S.compare("<", x, S.const(16)), S.minimum(x, n), z),
    ]
    envs = [
        {"threadIdx.x": 5, "threadIdx.y": 1, "threadIdx.z": 0},  # the usual three names
        {"threadIdx.z": 2, "threadIdx.x": 7, "threadIdx.y": 3},  # in another order
        {"threadIdx.x": 9, "n": 40},  # two names
        {"threadIdx.x": 9, "threadIdx.y": 2, "threadIdx.z": 1, "n": 64},  # four
    ]
    for env in envs:
        memo: dict = {}
        subs = S.RememberedSubs(env, memo)
        for e in masks:
            assert e.subs(subs) == e.subs(env)
        terms = {k[0] for k in memo}
        assert terms and set(memo) == {plain_key(t, env) for t in terms}
        for t in terms:
            assert _key(t, subs) == plain_key(t, env)
    # the usual lanes: the term and its thread indices' values, None where it reads none
    t = S.single_atom(S.floordiv(x, S.const(4)))
    subs = S.RememberedSubs({"threadIdx.x": 5, "threadIdx.y": 1, "threadIdx.z": 0}, {})
    assert _key(t, subs) == (t, 5, None, None)
    u = S.single_atom(S.mod(y + z, S.const(3)))
    assert _key(u, subs) == (u, None, 1, 0)


def test_lanes_read_with_and_without_the_stored_set() -> None:
    fresh = [new_expr({(S.Symbol("n"),): 4, (S.Symbol("m"),): 1}), None, new_expr({(S.Symbol("k"),): 2})]
    assert all(e is None or e._free is None for e in fresh)  # not worked out yet
    plan = SimpleNamespace(names=("n", "m", "k"), lane_exprs=(*fresh, S.const(0)))
    assert lanes_read(plan) == frozenset({"n", "m", "k"})  # type: ignore[arg-type]
    assert fresh[0] is not None and fresh[0]._free == frozenset({"n", "m"})  # stored now
    assert lanes_read(plan) == frozenset({"n", "m", "k"})  # type: ignore[arg-type]
    plan.names = ("n", "k")  # `m` is not assigned: the first expression reads what is not
    assert lanes_read(plan) == frozenset({"k"})  # type: ignore[arg-type]
