"""A lane expression put in once for the lanes of every warp that agree on the thread
indices it reads (`scenarios._READ_LANES`) gives what putting it in at each lane gives, and
spends the same budget steps: the warps of a block of 32 x 4 share threadIdx.x. Small
programs written for the test (masks on threadIdx.x with a parameter, a loop counter, a grid
size and loaded values; a mask on threadIdx.x alone) give the same report, byte for byte, and
the same steps per kernel, with the table and with it switched off; a small budget runs out
where it did; and the table is emptied with the opaque terms' table it stands on."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import scenarios
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import ClearCounted
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void guarded(float *a, const float *b, int n) {
    __shared__ float s[128];
    for (int i = 16; i > 0; i >>= 1)
        if ((threadIdx.x % 32) < i && n > 1)
            s[threadIdx.x] += s[threadIdx.x + i];
    if (threadIdx.x + blockIdx.x * 64 + gridDim.x * n < 4096)
        a[threadIdx.x + threadIdx.y * 64] = b[threadIdx.x];
    if (threadIdx.x == 0 && n > 2)
        a[blockIdx.x] = s[0];
}

__global__ void loaded(unsigned *data, int n) {
    __shared__ unsigned buf[256];
    buf[threadIdx.x] = data[threadIdx.x];
    for (unsigned j = 16; j > 0; j >>= 1) {
        unsigned mine = buf[threadIdx.x];
        unsigned theirs = buf[threadIdx.x ^ j];
        if (((threadIdx.x / 32) % 2) == ((threadIdx.x & j) != 0) && mine > theirs)
            buf[threadIdx.x ^ j] = mine;
    }
    if ((threadIdx.x & 3) == 1)
        data[threadIdx.x + n] = buf[threadIdx.x];
}
"""

LAUNCHES = [
    ("--block", "32,4", "--grid", "3"),
    ("--block", "64,2"),
    ("--block", "16,8", "--grid", "5"),
]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the table switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(scenarios, "_read_table", lambda e, reads, block: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_lanes_put_in_once_for_the_warps_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)


@pytest.mark.parametrize("analysis", [4_000, 5_000, 5_100])
def test_a_small_budget_runs_out_where_the_lanes_put_in_one_by_one_ran_out(tmp_path, monkeypatch, analysis):
    launch = ("--block", "32,4", "--grid", "3")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain
    assert "WL940" in fast


def lanes_put_in(e: S.Expr, warp: int) -> tuple[tuple[S.Expr | None, ...], int]:
    """`e` at each lane of one warp of a 32 x 4 block (`scenarios.per_lane`), and the steps it spent."""
    meter = budget.Meter("analysis", 10**9)
    lanes = scenarios.warp_lanes((32, 4, 1), 32)[warp]
    with budget.metered(meter):
        done = scenarios.per_lane(e, lanes, ((32, 4, 1), 32, warp))
    return done, 10**9 - meter.left


def test_the_second_warp_takes_the_first_warps_lanes_with_their_steps():
    forget()
    tx, n = S.sym("threadIdx.x"), S.sym("n")
    loaded = S.unknown("buf[threadIdx.x]", S.Origin.LOADED, lane_varying=True)
    mask = S.logical_and(S.compare("<", S.mod(tx, S.const(8)), n), S.compare("<", loaded, n))
    first, first_steps = lanes_put_in(mask, 0)
    assert len(scenarios._READ_LANES) == 32
    second, second_steps = lanes_put_in(mask, 1)
    assert len(scenarios._READ_LANES) == 32  # nothing new worked out
    assert first == second == tuple(mask.subs(lane) for lane in scenarios.warp_lanes((32, 4, 1), 32)[0])
    assert first_steps == second_steps > 32
    assert str(first[3]) == "(3 < n) && (per-lane buf[threadIdx.x] < n)"


def test_a_number_evaluated_is_made_again_and_a_thread_free_condition_is_itself():
    forget()
    tx, k = S.sym("threadIdx.x"), S.sym("k@1")
    numbers, _ = lanes_put_in(S.compare("<", tx, S.const(5)), 2)
    assert [m.value for m in numbers if m is not None] == [1] * 5 + [0] * 27
    assert lanes_put_in(S.compare("<", tx, S.const(5)), 3)[0] == numbers
    loop = S.compare("<", k, S.const(7))
    same, steps = lanes_put_in(loop, 0)
    assert all(m is loop for m in same) and steps == 0


def test_the_table_is_emptied_with_the_opaque_terms_it_stands_on():
    forget()
    mask = S.compare("<", S.mod(S.sym("threadIdx.x"), S.const(8)), S.sym("n"))
    lanes_put_in(mask, 0)
    assert scenarios._READ_LANES
    assert isinstance(scenarios._LANE_TERMS, ClearCounted)
    clears = scenarios._LANE_TERMS.clears
    scenarios._LANE_TERMS.clear()
    assert scenarios._LANE_TERMS.clears == clears + 1
    scenarios._WARP_MEMO.clear()
    scenarios._LANE_MEMO.clear()
    lanes_put_in(mask, 1)
    assert len(scenarios._READ_LANES) == 32  # emptied, then filled again by the lanes worked out


def test_a_row_of_lanes_is_not_remembered_where_no_other_warp_meets_it_again():
    forget()
    mask = S.compare("<", S.mod(S.sym("threadIdx.x"), S.const(8)), S.sym("n"))
    lanes = scenarios.warp_lanes((256, 1, 1), 32)[1]
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        done = scenarios.per_lane(mask, lanes, ((256, 1, 1), 32, 1))
    assert not scenarios._READ_LANES
    assert done == tuple(mask.subs(lane) for lane in lanes)
    assert str(done[0]) == "0 < n"


def test_a_lane_has_one_substitution():
    """`lane_subs_of` makes a lane's `RememberedSubs` once and gives it again for that lane (the
    lanes are remembered, and a warp's expressions are put in at the same lanes); an equal lane
    that is another object gets one of its own, with the same values and the same memo."""
    lane = {"threadIdx.x": 5, "threadIdx.y": 1, "threadIdx.z": 0}
    first = scenarios.lane_subs_of(lane)
    assert isinstance(first, S.RememberedSubs) and dict(first) == lane
    assert first.memo is scenarios._LANE_TERMS
    assert scenarios.lane_subs_of(lane) is first
    other = scenarios.lane_subs_of(dict(lane))
    assert other is not first and dict(other) == lane and other.memo is first.memo
    x, y = S.sym("threadIdx.x"), S.sym("threadIdx.y")
    mask = S.compare("<", x + y * 32, S.sym("n"))
    assert mask.subs(first) == mask.subs(S.RememberedSubs(lane, {})) == S.compare("<", S.const(37), S.sym("n"))


def test_an_expression_of_no_thread_index_is_itself_at_every_lane():
    """`per_lane` of an expression that reads symbols but no thread index gives it at each lane
    the warp has (None at the others) and spends no step, as putting the lanes in one by one
    (`_each_lane`) does."""
    forget_walk_tables()
    cond = S.compare("<", S.sym("k@1") * 4, S.sym("n"))
    lanes = scenarios.warp_lanes((48, 1, 1), 32)[1]  # lanes 32..47 of the block, then 16 absent
    meter = budget.Meter("analysis", 10**6)
    with budget.metered(meter):
        fast = scenarios.per_lane(cond, lanes, ((48, 1, 1), 32, 1))
    assert meter.left == 10**6
    assert fast == (cond,) * 16 + (None,) * 16 and all(e is cond for e in fast[:16])
    forget_walk_tables()
    with budget.metered(meter):
        plain = scenarios._each_lane(cond, lanes, (48, 1, 1))
    assert plain == fast and meter.left == 10**6
