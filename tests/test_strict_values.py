"""`S.strict_values`: expressions of thread indices compiled into one function that gives what
`evaluate` gives, numbers and failures alike (an unknown on the path taken, a division by
zero), and the walk's use of it for the masks and slots it evaluates at each lane
(`scenarios._lane_evaluated`, `lane_groups._slot_values`): the same results and the same steps
as walking each expression. Small expressions written for the test, shaped as a sorting
network's masks (cdpBitonicSort.cu)."""

from __future__ import annotations

import itertools

import pytest

from analyzer import budget
from analyzer.analysis import scenarios
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import compiled
from analyzer.analysis.values import THREAD_SYMBOLS
from walk_checks import forget_walk_tables

X, Y, Z = (S.sym(n) for n in THREAD_SYMBOLS)
TID = X + Y * 32
UP = S.compare("==", S.mod(S.floordiv(TID, 64), 2) * 64, S.compare("<", TID, TID ^ 4) * 64)
LOADED = S.unknown("a[tid]", S.Origin.LOADED, lane_varying=True), S.unknown("a[tid ^ 4]", S.Origin.LOADED, True)
#: Whether the pair sorts up, read before the loaded values: no unknown is met where it is false.
GUARDED = S.select(UP, S.compare("<", *LOADED), S.const(0))
MIXED = S.logical_or(S.compare("<", S.floordiv(X * 7, Y + 1), Z << 2), S.compare("!=", X & 3, S.minimum(Y, 2)))
BLOCK = list(itertools.product(range(64), range(3), range(2)))


def outcome(f, *args):
    """What calling `f` gives: its value, or the class of what it raised."""
    try:
        return f(*args)
    except (ArithmeticError, ValueError, LookupError) as err:
        return type(err)


def test_the_values_and_the_failures_are_those_of_evaluate():
    items = (GUARDED, MIXED, S.floordiv(X * 3, Y - 1), X * 4 - Z)
    function = S.strict_values(items, THREAD_SYMBOLS)
    assert function is not None
    for x, y, z in BLOCK:
        env = dict(zip(THREAD_SYMBOLS, (x, y, z)))
        for item in items:
            single = S.strict_values((item,), THREAD_SYMBOLS)
            assert outcome(single, x, y, z) == outcome(lambda item, env: (item.evaluate(env),), item, env)
    raised = {outcome(S.strict_values((GUARDED,), THREAD_SYMBOLS), x, 0, 0) for x in range(64)}
    assert raised == {(0,), S.UnknownValue}  # the lanes that sort down read no loaded value
    assert function(5, 2, 1) == (0, 1, 15, 19)
    assert outcome(function, 1, 1, 1) is ZeroDivisionError  # y - 1 == 0 (and the pair sorts down)


def test_a_term_is_written_as_an_item_and_an_unnamed_symbol_is_not_written():
    slot = S.single_atom(UP)
    assert isinstance(slot, S.Term)
    function = S.strict_values((slot,), THREAD_SYMBOLS)
    assert function is not None and [function(x, 0, 0)[0] for x in (0, 4, 64, 68)] == [0, 1, 1, 0]
    assert S.strict_values((X + S.sym("n"),), THREAD_SYMBOLS) is None


def test_a_source_python_does_not_compile_gives_no_function(monkeypatch):
    def refused(source):
        raise SyntaxError("too many nested parentheses")

    monkeypatch.setattr(compiled, "_STRICT_FUNCTIONS", {})
    monkeypatch.setattr(compiled, "_COMPILED", {})
    monkeypatch.setattr(compiled, "_made", refused)
    assert S.strict_values((MIXED,), THREAD_SYMBOLS) is None


def lanes_at(e: S.Expr, compile_at: int, monkeypatch) -> tuple[list[S.Expr], list[int]]:
    """`e` at each lane of a 64 x 3 x 2 block as the walk puts lanes in (`scenarios._at_lane`),
    compiled after `compile_at` lanes: the results and the steps of each."""
    forget_walk_tables()
    monkeypatch.setattr(scenarios, "COMPILE_AT", compile_at)
    monkeypatch.setattr(scenarios, "_EVALUATED_AT", {})
    results, steps = [], []
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        for warp in scenarios.warp_lanes((64, 3, 2), 32):
            for env in warp:
                assert env is not None
                before = meter.left
                results.append(scenarios._at_lane(e, env))
                steps.append(before - meter.left)
    return results, steps


@pytest.mark.parametrize("e", [S.compare("!=", GUARDED, 0), MIXED, S.floordiv(X * 3, Y - 1)], ids=str)
def test_the_walk_gives_the_same_lanes_and_steps_compiled_as_walked(monkeypatch, e):
    lanes_at(e, 10**9, monkeypatch)  # the numbers both meet made (`S.const`)
    walked = lanes_at(e, 10**9, monkeypatch)
    calls = 0
    strict = S.strict_values

    def counted(items, names):
        nonlocal calls
        calls += items == (e,)  # (not the slots of a lane substituted, `lane_groups._slot_values`)
        return strict(items, names)

    monkeypatch.setattr(S, "strict_values", counted)
    compiled_lanes = lanes_at(e, 0, monkeypatch)
    assert compiled_lanes == walked
    assert calls == len(BLOCK)  # every lane by the compiled function
