"""A warp's lanes put into a mask the short ways give what the long ways give: an expression of
one term takes its term's result as it is (`expressions._one_term`), and the lanes of a warp
share what `lane_subs` looks up by the mask alone (`lane_groups.WarpSubs`, through
`scenarios._lanes_at`): the same results, the same steps lane by lane, the same tallies. A small
program written for the test (a 2-D block whose masks compare positions made of a grid-stride
counter with sizes that are parameters, and choose between them) gives the same report, byte
for byte, and the same steps per kernel with them and without; a small budget runs out where
it did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import lane_groups, scenarios
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import expressions
from analyzer.analysis.values import THREAD_SYMBOLS
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

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


def lanes_by_warp(e: S.Expr, warp: bool) -> tuple[list[S.Expr], list[int], list[int]]:
    """`e` at each lane of a 32 x 4 block with a memo of its terms, by `WarpSubs` (one a warp)
    or by `lane_subs` at each lane: the results, the steps of each, the slots' tally left."""
    for table in (lane_groups._BY_VALUES, lane_groups._SLOTS, lane_groups._TALLY, lane_groups._GROUP_TALLY):
        table.clear()
    memo: dict = {}
    results, steps = [], []
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        for lanes in scenarios.warp_lanes((32, 4, 1), 32):
            lane_subs = lane_groups.WarpSubs(e) if warp else (lambda subs: lane_groups.lane_subs(e, subs))
            for env in lanes:
                assert env is not None
                before = meter.left
                results.append(lane_subs(S.RememberedSubs(env, memo)))
                steps.append(before - meter.left)
    slots = lane_groups._slots(e, S.RememberedSubs(dict.fromkeys(THREAD_SYMBOLS, 0), {}))
    return results, steps, lane_groups._TALLY[slots]


TID = TX + TY * 32
LOADED = S.unknown("a[tid]", S.Origin.LOADED, lane_varying=True), S.unknown("a[tid ^ 4]", S.Origin.LOADED, True)
#: Lanes that agree on a slot (`by_values`), lanes that never do (given up after the trial,
#: then substituted), a mask of the grouped shape (`grouped_subs`, once given up), and one
#: given up whose result reads both thread indices.
MASKS = [
    S.compare("!=", S.select(S.compare("<", S.mod(TID, 64), 32), S.compare("<", *LOADED), N), 0),
    S.mod(TID, 128) * 3 + N,
    S.logical_and(S.compare("!=", LOADED[0], 0), S.compare("<", S.mod(TID * 7, 1000), N)),
    S.select(S.compare("<", TX + N, M), TY, N),
]


@pytest.mark.parametrize("index", range(len(MASKS)))
def test_a_warps_lanes_give_what_each_lane_gave_looking_up_the_mask_once(monkeypatch, index):
    e = MASKS[index]
    lanes_by_warp(e, False)  # the numbers both meet made
    plain, plain_steps, plain_tally = lanes_by_warp(e, False)
    looked_up = []
    slots_of = lane_groups._slots
    monkeypatch.setattr(lane_groups, "_slots", lambda e, subs: looked_up.append(e) or slots_of(e, subs))
    fast, fast_steps, fast_tally = lanes_by_warp(e, True)
    assert fast == plain and fast_steps == plain_steps and fast_tally == plain_tally
    assert len(looked_up) == 4 + 1  # once a warp (and once by `lanes_by_warp` for the tally)
    assert lane_groups._GROUP_TALLY.get(e) == [[2, 0], None, [64, 0], None][index]  # the two lanes worked out
    assert [plain_tally, sum(plain_steps)] == [
        [[128, 126], 896],
        [[64, 0], 256],  # given up after `TRIAL_LANES`
        [[64, 0], 1024],  # and its groups too, after as many
        [[64, 0], 1280],
    ][index]


PROGRAM = """\
__global__ void shade(float *dst, const float *src, int imageW, int imageH, int gridWidth, int frame) {
    for (int b = blockIdx.x; b < 64; b += gridDim.x) {
        int x = threadIdx.x + (b % gridWidth) * 16;
        int y = threadIdx.y + (b / gridWidth) * 16;
        if (x < imageW && y < imageH) {
            int edge = (x + 1 < imageW) ? ((x > 0) ? 1 : 2) : 3;
            int near = (y + 1 < imageH) ? ((y > 0) ? edge + 1 : edge) : 0;
            if (near != 0) dst[y * imageW + x] = src[y * imageW + x];
            if (frame == 0) dst[x] = 0.0f;
        }
        if (threadIdx.x + b < imageW) dst[b * imageW + threadIdx.x] = 1.0f;
    }
}

void run(float *dst, const float *src, int w, int h, int gw, int frame) {
    shade<<<8, dim3(16, 16)>>>(dst, src, w, h, gw, frame);
}
"""


class EachLane:
    """`lane_subs` at each lane (what `WarpSubs` stands for)."""

    def __init__(self, e: S.Expr) -> None:
        self.e = e

    def __call__(self, subs: S.RememberedSubs) -> S.Expr:
        return lane_groups.lane_subs(self.e, subs)


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short ways switched off:
    each lane put in on its own, an expression of one term built)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(expressions, "ONE_TERM_AS_IS", False)
        monkeypatch.setattr(scenarios, "WarpSubs", EachLane)
        monkeypatch.setattr(
            scenarios,
            "_lanes_at",
            lambda e, lanes: tuple(None if v is None else scenarios._at_lane(e, v) for v in lanes),
        )


@pytest.mark.parametrize("launch", [(), ("--block", "32,8")])
def test_a_program_gives_the_report_and_steps_it_gave_lane_by_lane(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


@pytest.mark.parametrize("analysis", [2_000, 6_000, 12_000])
def test_a_small_budget_runs_out_where_it_ran_out_lane_by_lane(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, (), forget)
    assert fast == plain
    assert "WL940" in fast


def test_a_lane_taken_by_its_slots_runs_the_budget_out_as_spending_its_steps_would():
    """A lane taken from a lane before (`by_values`) spends that lane's steps, and where fewer
    are left it stops there, leaving the meter where `budget.spend` would leave it."""
    e = MASKS[0]
    lanes = scenarios.warp_lanes((32, 4, 1), 32)[0]
    for table in (lane_groups._BY_VALUES, lane_groups._SLOTS, lane_groups._TALLY):
        table.clear()
    memo: dict = {}
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        warp = lane_groups.WarpSubs(e)
        for env in lanes[:2]:
            warp(S.RememberedSubs(env, memo))  # worked out, then taken
        before = meter.left
        warp(S.RememberedSubs(lanes[2], memo))
        steps = before - meter.left
        meter.left = steps - 1
        with pytest.raises(budget.BudgetExceeded):
            warp(S.RememberedSubs(lanes[3], memo))
    assert steps == 7 and meter.left == -1
    assert lane_groups._TALLY[lane_groups._slots(e, S.RememberedSubs(lanes[0], {}))] == [4, 3]
