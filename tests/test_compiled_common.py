"""A term that the items of one compiled group hold more than once is worked out once a call
(`compiled._Common`): the same values as `evaluate`, the term written once, and a term that
may raise left where the conditions around it guard it. Small expressions written for the
test, shaped as a stencil's clamped neighbour index (`s = s > m ? m : s`, `m` a select on the
block's bounds), which each lane's address holds twice."""

from __future__ import annotations

import itertools

import pytest

from analyzer.analysis.symbolic import compare, compile_values, compiled, floordiv, select, sym

k, b, n = sym("k"), sym("b"), sym("n")
NAMES = ["k", "b", "n"]
#: The block's last valid row: a select on the block index and the size (reads b and n, not k).
LAST = select(compare("<", n, b * 16 + 16), n - b * 16 - 1, n * 0 + 15)


def _lane(row: int):
    """A lane's address: its row below, clamped to `LAST`, times the row's bytes, and its column."""
    return select(compare("<", LAST, row + 1), LAST, LAST * 0 + row + 1) * 64 + row * 4


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(compiled, "_COMPILED", {})
    monkeypatch.setattr(compiled, "_BY_EXPRS", {})


def test_a_term_held_by_every_lane_is_worked_out_once_a_call_to_the_same_values():
    lanes = [_lane(row) for row in range(8)]
    function = compile_values([*lanes, k + b], NAMES)
    for ck, cb, cn in itertools.product(range(2), range(4), range(10, 70, 7)):
        env = {"k": ck, "b": cb, "n": cn}
        assert function(ck, cb, cn) == tuple(e.evaluate(env) for e in [*lanes, k + b])
    (source,) = compiled._COMPILED
    group, plain = source.split(" def _f(")
    # `LAST` is written once, as the group function's first line, and read by each lane twice
    assert group.count("c0 = ") == 1 and group.count("c0") == 1 + 2 * 8
    assert group.count(" if ") == 2 + 8 * 2  # its own select and comparison, then each lane's
    assert "c0" not in plain


def test_lanes_that_hold_a_term_once_each_share_it_across_the_group():
    lanes = [LAST * 64 + row * 4 for row in range(4)]
    function = compile_values([*lanes, k], NAMES)
    assert function(0, 2, 60) == (*(15 * 64 + row * 4 for row in range(4)), 0)
    assert function(0, 2, 44) == (*(11 * 64 + row * 4 for row in range(4)), 0)
    (source,) = compiled._COMPILED
    assert source.count("c0 = ") == 1 and source.count("c0") == 5


def test_a_term_that_may_raise_is_left_where_its_condition_guards_it():
    guarded = select(compare("<", b, 1), n, floordiv(n, b))  # n / b only where b >= 1
    function = compile_values([guarded * 4 + 1, guarded * 4 + 2, k], NAMES)
    assert function(0, 0, 7) == (29, 30, 0)  # b = 0: the division is skipped, as `evaluate` skips it
    assert function(0, 2, 7) == (13, 14, 0)
    (source,) = compiled._COMPILED
    assert "c0" not in source and source.count("_div") == 2


def test_a_group_without_a_term_met_twice_is_written_as_before():
    function = compile_values([b * 4 + n, b * 8 + n, k], NAMES)
    assert function(1, 2, 3) == (11, 19, 1)
    (source,) = compiled._COMPILED
    assert " c0" not in source
