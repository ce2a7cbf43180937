"""Small hot paths written out by hand, each giving exactly what the plain code gave:
`RememberedSubs.term`'s memo key for a lane's three thread indices (and `lane_groups._key`,
which reads the same entries), the callers that read an expression's stored free symbols
(`Expr._free`) where it is worked out (`neutral.lanes_read`), and `scenarios._lanes_one_by_one`
with no loop over conditions where no loop is walked."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from analyzer.analysis import symbolic as S
from analyzer.analysis.lane_groups import _key
from analyzer.analysis.neutral import lanes_read
from analyzer.analysis.pickers import lane_slots
from analyzer.analysis.scenarios import _lanes_one_by_one
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


def old_lanes_one_by_one(plan, values: tuple) -> tuple:
    """`_lanes_one_by_one` as it was, looping over every lane's conditions."""
    rel: list[int | None] = [None] * len(plan.diffs)
    undecided = False
    for j in plan.present:
        on = True
        at = plan.mask_at[j]
        if at >= 0:
            mv = values[at]
            if mv is not None:
                on = bool(mv)
            else:
                undecided = True
        for at in plan.conds_at[j]:
            cv = values[at]
            if cv is not None:
                on = on and bool(cv)
        dv = values[j]
        if dv is None:
            return None, undecided
        if on:
            rel[j] = dv
    return tuple(rel), undecided


def _plan(masked: tuple[bool, ...], walked: int, present: list[int]) -> SimpleNamespace:
    mask_at, conds_at = lane_slots(masked, walked)
    return SimpleNamespace(
        diffs=(None,) * len(masked), present=present, mask_at=mask_at, conds_at=conds_at, walked=(None,) * walked
    )


def test_lanes_one_by_one_without_walked_loops() -> None:
    plan = _plan((True, False, True), 0, [0, 1, 2])
    # distances, then masks (lane 1 has none): lane 2's mask is off, lane 0's undecided
    assert _lanes_one_by_one(plan, (0, 4, 8, None, 99, 0, 7)) == ((0, 4, None), True)
    assert _lanes_one_by_one(plan, (0, 4, 8, 1, 99, 1, 7)) == ((0, 4, 8), False)
    assert _lanes_one_by_one(plan, (0, None, 8, 1, 99, 1, 7)) == (None, False)


def test_lanes_one_by_one_with_a_walked_loop() -> None:
    plan = _plan((True, True), 1, [0, 1])
    # distances, masks, then the loop's condition per lane: lane 1's condition fails
    assert _lanes_one_by_one(plan, (0, 4, 1, 1, 1, 0, 9)) == ((0, None), False)
    assert _lanes_one_by_one(plan, (0, 4, 1, 1, None, 1, 9)) == ((0, 4), False)


def test_lanes_one_by_one_as_before_on_every_value() -> None:
    choices = (None, 0, 1, 3)
    for masked, walked, present in [
        ((True, False, True), 0, [0, 1, 2]),
        ((True, True, False), 1, [0, 2]),
        ((False, True), 2, [0, 1]),
    ]:
        plan = _plan(masked, walked, present)
        width = 2 * len(masked) + walked * len(masked) + 1
        for values in itertools.product(choices, repeat=width - 1):
            row = (*values, 5)
            assert _lanes_one_by_one(plan, row) == old_lanes_one_by_one(plan, row)


def test_lanes_read_with_and_without_the_stored_set() -> None:
    fresh = [new_expr({(S.Symbol("n"),): 4, (S.Symbol("m"),): 1}), None, new_expr({(S.Symbol("k"),): 2})]
    assert all(e is None or e._free is None for e in fresh)  # not worked out yet
    plan = SimpleNamespace(names=("n", "m", "k"), lane_exprs=(*fresh, S.const(0)))
    assert lanes_read(plan) == frozenset({"n", "m", "k"})  # type: ignore[arg-type]
    assert fresh[0] is not None and fresh[0]._free == frozenset({"n", "m"})  # stored now
    assert lanes_read(plan) == frozenset({"n", "m", "k"})  # type: ignore[arg-type]
    plan.names = ("n", "k")  # `m` is not assigned: the first expression reads what is not
    assert lanes_read(plan) == frozenset({"k"})  # type: ignore[arg-type]
