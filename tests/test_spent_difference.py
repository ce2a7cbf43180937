"""`S.spent_difference(a, b)` gives the number `a - b` is, or None, and spends the budget
steps, and remembers the constants, that building `a - b` does: the interpreter asks it of
the values a thread holds (`Interpreter.holder`, `_disjoint`) instead of building each
difference, and a budget must run out where it did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import expressions

x, y = S.sym("x"), S.sym("y")
u = S.unknown("loaded", S.Origin.LOADED)

PAIRS = [
    (x + 4, x),  # 4
    (x, x + 4),  # -4
    (x * 2 + y, y + x * 2),  # 0
    (x + 1, y),  # not a number
    (x, S.const(0)),  # `a - 0`: a itself
    (S.const(0), x),  # `0 - b`: -b
    (S.const(0), S.const(7)),  # -7
    (S.const(9), S.const(2)),  # 7
    (S.const(5), S.const(0)),  # 5
    (u + 8, u),  # 8
    (u, x),  # not a number
]


def _spent(work) -> tuple[object, int]:
    meter = budget.Meter("analysis", 1_000)
    with budget.metered(meter):
        value = work()
    return value, 1_000 - meter.left


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_the_difference_and_its_steps_are_those_of_building_it(a, b):
    a - b  # the constants it needs met once (`S.const` remembers them)
    built, built_steps = _spent(lambda: a - b)
    number, steps = _spent(lambda: S.spent_difference(a, b))
    assert number == (built.value if built.is_const else None)
    assert steps == built_steps


def test_the_expected_numbers_and_steps():
    for a, b in PAIRS:
        a - b  # the constants met once
    answers = [_spent(lambda a=a, b=b: S.spent_difference(a, b)) for a, b in PAIRS]
    numbers = [4, -4, 0, None, None, None, -7, 7, 5, 8, None]
    steps = [2, 2, 2, 2, 0, 1, 0, 1, 0, 2, 2]
    assert answers == list(zip(numbers, steps))


def test_a_constant_the_difference_would_remember_is_remembered(monkeypatch):
    # the constants `S.const` keeps, emptied for the test: which a process met before depends on
    # the tests it ran before this one
    monkeypatch.setattr(expressions, "_CONSTS", {})
    fresh = 1000
    b = S.const(fresh)  # (remembered now: `fresh` is in the range `S.const` keeps)
    assert -fresh not in expressions._CONSTS
    number, steps = _spent(lambda: S.spent_difference(x, b))
    assert (number, steps) == (None, 2)  # `const(-fresh)` was built (a step) and remembered
    assert -fresh in expressions._CONSTS
    _, again = _spent(lambda: x - b)
    assert again == 1  # building it now finds the constant remembered, as after `x - b`
