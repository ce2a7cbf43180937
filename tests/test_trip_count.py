"""`loops.trip_count`, which walks a loop's lanes' conditions at each value of its counter:
compiled where they read nothing else, else substituted trip by trip, giving up at the first
lane whose condition is no number. (Not in `test_lanes.py`, whose every test the simulator
checks again on the kernel it analyses.)"""

from __future__ import annotations

from analyzer import budget
from analyzer.analysis import loops
from analyzer.analysis import symbolic as S


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
