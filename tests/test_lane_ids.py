"""`scenarios._LANE_MEMO` keyed by a number for the lane expression (`scenarios.lane_id`) and a
lane's thread indices: equal expressions share the number, so a lane worked out for one is
found for an equal one as before; and the interpreter's builtins looked up by name once
(`interpret._builtin`)."""

from __future__ import annotations

from analyzer import budget
from analyzer.analysis import interpret, scenarios
from analyzer.analysis import symbolic as S
from analyzer.ir import builtins


def _offset() -> S.Expr:
    x, y = S.sym("threadIdx.x"), S.sym("threadIdx.y")
    return S.select(S.compare("<", y, S.sym("n")), x * 4 + y * 512, S.sym("n") * 512)


def test_equal_expressions_share_a_number_and_their_lanes():
    scenarios.forget_lanes()
    a, b = _offset(), _offset()
    assert a is not b and a == b
    assert scenarios.lane_id(a) == scenarios.lane_id(b) != scenarios.lane_id(a + 1)
    lanes = scenarios.warp_lanes((32, 4, 1), 32)[1]
    meter = budget.Meter("analysis", 10**6)
    with budget.metered(meter):
        first = [scenarios._at_lane(a, env) for env in lanes]
        spent = 10**6 - meter.left
        again = [scenarios._at_lane(b, env) for env in lanes]  # found, in no step
    assert spent > 0 and 10**6 - meter.left == spent
    assert all(x is y for x, y in zip(first, again))
    assert first[3] == _offset().subs({"threadIdx.x": 3, "threadIdx.y": 1})
    scenarios.forget_lanes()
    assert not scenarios._LANE_IDS and not scenarios._LANE_MEMO


def test_a_builtin_is_looked_up_once_by_name(monkeypatch):
    interpret._BUILTIN_OF.clear()
    asked: list[str] = []
    lookup = builtins.lookup
    monkeypatch.setattr(builtins, "lookup", lambda name: asked.append(name) or lookup(name))
    names = ["__fadd_rd", "std::min", "min", "not_a_builtin", "__shfl_sync"]
    for _ in range(3):
        assert [interpret._builtin(n) for n in names] == [lookup(n) for n in names]
    assert asked == names
    assert interpret._builtin("std::min") is lookup("min") is not None
