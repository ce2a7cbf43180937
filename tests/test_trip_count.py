"""`loops.trip_count`, which walks a loop's lanes' conditions at each value of its counter:
compiled where they read nothing else, else substituted trip by trip, giving up at the first
lane whose condition is no number. (Not in `test_lanes.py`, whose every test the simulator
checks again on the kernel it analyses.)"""

from __future__ import annotations

from analyzer import budget
from analyzer.analysis import loops
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic.expressions import term


def test_a_trip_count_substitutes_the_lanes_up_to_the_first_that_is_no_number():
    """`loops.trip_count` of lanes' conditions that read another symbol than the counter
    substitutes lane by lane and gives up at the first lane whose condition is no number
    (`c + 4 k < n`: the first): one substitution, not one per lane; where the other symbol
    cancels (`a + 32 k <= a + 95`) every lane is substituted, trip by trip."""
    k, n, a = S.sym("k@1"), S.sym("n"), S.sym("a")
    loops._TRIP_COUNTS.clear()
    lanes = [S.compare("<", k * 4 + c, n) for c in range(32)]
    meter = budget.Meter("analysis", 10**6)
    with budget.metered(meter):
        assert loops.trip_count(lanes, "k@1") is None
    one = budget.Meter("analysis", 10**6)
    with budget.metered(one):
        lanes[0].subs({"k@1": 0})
    assert 10**6 - meter.left == 10**6 - one.left > 0
    cancels = [S.compare("<=", a + k * 32 + c, a + 95) for c in range(4)]
    assert loops.trip_count(cancels, "k@1") == 3  # k = 0, 1, 2 hold at lane 0 (lane 3: k = 0, 1, 2 too)


def _walked(conds: list[S.Expr], counter: str, limit: int) -> int | None:
    """The trip count by definition: the first k at which no lane's condition holds."""
    for k in range(limit):
        if not any(c.subs({counter: k}).value for c in conds):
            return k
    return None


def test_linear_comparisons_are_read_as_a_number_plus_a_multiple_of_the_counter():
    k, n = S.sym("k@1"), S.sym("n")
    assert S.linear_comparison(S.compare("<", k * 256 + 5, 2048), "k@1") == ("<", -2043, 256)
    assert S.linear_comparison(S.compare(">=", 100, k * 3 - 2), "k@1") == ("<=", -102, 3)
    assert S.linear_comparison(S.compare(">", k, 7), "k@1") == ("<", 7, -1)  # `7 < k`
    assert S.linear_comparison(S.compare("<", k, n), "k@1") is None  # another symbol
    assert S.linear_comparison(S.compare("<", k * k, 9), "k@1") is None  # not linear
    assert S.linear_comparison(S.compare("==", k, 9), "k@1") is None
    assert S.linear_comparison(S.logical_and(S.compare("<", k, 9), S.compare("<", k, 5)), "k@1") is None
    assert S.linear_comparison(S.const(1), "k@1") is None


def test_a_loop_of_linear_lane_conditions_is_counted_as_walking_it_counts():
    """Lanes `pos < N` with `pos = lane + k*stride` (and `<=`, a lane that never or always
    holds, lanes that start past the end): the count solved from each lane's line is the
    count of the trips walked, limit included; no budget step either way."""
    k = S.sym("k@1")
    cases = [
        ([S.compare("<", k * 256 + lane, 2048) for lane in range(32)], 100_001),
        ([S.compare("<=", k * 96 + 3 * lane, 1000) for lane in range(32)], 100_001),
        ([S.compare("<", k * 7 + lane, 3) for lane in range(32)], 100_001),  # lanes 3.. never
        ([S.compare("<", k * 0 + lane, 3) for lane in range(4)], 50),  # lanes 0..2 always: limit
        ([S.compare("<", k * 5 + lane, 50) for lane in range(32)], 10),  # 10 trips: the limit
        ([S.compare("<", k * 5 + lane, 50) for lane in range(32)], 11),
        ([S.compare("<", lane - k, 3) for lane in range(32)], 100),  # holds from some trip on
    ]
    for conds, limit in cases:
        loops._TRIP_COUNTS.clear()
        meter = budget.Meter("analysis", 10**6)
        with budget.metered(meter):
            got = loops.trip_count(conds, "k@1", limit)
        assert got == _walked(conds, "k@1", limit)
        assert meter.left == 10**6
    assert loops._linear_trip_count(cases[0][0], "k@1") == 8
    assert loops._linear_trip_count(cases[3][0], "k@1") is None  # numbers: evaluated
    always = [term("<", (k, k + 1)), S.compare("<", k * 5, 50)]  # `term`: `k < k + 1` not folded
    assert loops._linear_trip_count(always, "k@1") == float("inf")
    assert loops.trip_count(always, "k@1", 64) is None and _walked(always, "k@1", 64) is None
    never = [term("<=", (k + 1, k)), S.compare("<", k * 5, 50)]
    assert loops._linear_trip_count(never, "k@1") == 10 == _walked(never, "k@1", 64)
    assert loops._linear_trip_count(cases[6][0], "k@1") is None  # evaluated, not solved


def test_a_multiplicative_loop_s_values_are_remembered_by_what_they_read():
    """`for (s = 1; s < size; s <<= 1)`: the values at `size` = 20, worked out once and given
    again with the steps they took, a list of its own each time; another `size` or another
    loop is worked out anew, and what `known` gives other symbols does not matter."""
    from analyzer.analysis.values import LoopCtx, LoopKind

    s, size = S.sym("s@3"), S.sym("size")
    loop = LoopCtx(3, "s@3", S.compare("<", s, size), LoopKind.MULTIPLICATIVE, S.const(1), "<<", 1)
    loops._MULTIPLICATIVE.clear()
    spent = []
    got = []
    for known in ({"size": 20}, {"size": 20, "n": 7}, {"size": 5}):
        meter = budget.Meter("analysis", 10**6)
        with budget.metered(meter):
            got.append(loops.iterations(loop, known))
        spent.append(10**6 - meter.left)
    assert got == [[1, 2, 4, 8, 16], [1, 2, 4, 8, 16], [1, 2, 4]]
    assert got[0] is not got[1]
    assert spent[0] == spent[1] > 0
    assert len(loops._MULTIPLICATIVE) == 2
    other = LoopCtx(4, "s@4", S.compare("<", S.sym("s@4"), size), LoopKind.MULTIPLICATIVE, S.const(1), "<<", 2)
    assert loops.iterations(other, {"size": 20}) == [1, 4, 16]
    assert loops.iterations(loop, {}) is None  # the condition is no number
