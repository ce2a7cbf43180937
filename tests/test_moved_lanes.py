"""The cost walk's work shared between lanes and scenarios that differ only by a move gives
what the plain walk gives, and spends the same budget steps: a lane expression substituted
once for the lanes that agree on the thread indices it reads other than as plain terms, and
moved by a number for the others (`scenarios._shifted_lanes`, `lane_difference`); the groups
of a walk remembered by what decides them (`groups._GROUPS`); and a group's lanes moved from
an earlier group's instead of evaluated (`costing.moved_lanes`); scenarios counted alike
given as one (`costing.charged_one_by_one`). Small programs written for
the test (clamped rows as Convolution's, a term whose substitution is a sum, unknowns in
masks and starts, loops, totals, the cost per value of one unknown) give the same report,
byte for byte, and the same steps per kernel, with the short cuts and without them."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, groups, runs, scenarios
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void clamped_rows(float *a, const float *b, int n) {
    int row = threadIdx.y + blockIdx.y * 8 - 3;
    int r = row < 0 ? 0 : (row > 63 ? 63 : row);
    a[r * 64 + threadIdx.x + blockIdx.x * 32] = b[r * 65 + threadIdx.x * 2];
    a[(threadIdx.y > 1 ? n + threadIdx.y : n) + threadIdx.x - 5] = 0.0f;
    a[(threadIdx.y > 1 ? threadIdx.y + blockIdx.y : 0) * 32 + threadIdx.x] = 1.0f;
}

__global__ void masked(float *a, int n, int m) {
    int row = threadIdx.y * 3 / 2;
    if (threadIdx.x + n < m)
        a[row * m + threadIdx.x + n] = 1.0f;
    for (int k = 0; k < 6; k++)
        if (threadIdx.x > k)
            a[((threadIdx.y + k) % 3) * m + threadIdx.x * 2 + blockIdx.x * 4] += 2.0f;
}

__global__ void moved_by_blocks(float *a, int w) {
    a[blockIdx.x * 4 + threadIdx.x] = 0.0f;
    for (int k = 0; k < 3; k++)
        a[blockIdx.x * 12 + k * 3 + threadIdx.y * 33 + threadIdx.x] = 0.0f;
    a[w * (threadIdx.y / 2) + threadIdx.x] = 0.0f;
}
"""

LAUNCHES = [
    ("--block", "32,4", "--grid", "6,3"),
    ("--block", "16,8", "--grid", "5,2"),
    ("--block", "8,8"),
    ("--block", "64,2", "--grid", "33"),
]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short cuts switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(scenarios, "_lane_shifts", lambda e: None)
        monkeypatch.setattr(scenarios, "lane_difference", lambda e, ref: e - ref)
        monkeypatch.setattr(costing, "moved_lanes", lambda lanes, move, to: None)
        monkeypatch.setattr(runs, "one_class", lambda groups: False)  # no run of moved groups either
        monkeypatch.setattr(groups, "_GROUPS", {})
        monkeypatch.setattr(costing, "counted_alike", lambda scenario, plan: object())  # none alike


@pytest.mark.parametrize("launch", LAUNCHES)
def test_lanes_and_scenarios_moved_give_the_plain_walks_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=3)


def test_lanes_that_agree_on_the_rows_are_substituted_once(monkeypatch):
    forget()
    worked_out = []
    substituted = scenarios._substituted_at_lane
    monkeypatch.setattr(
        scenarios, "_substituted_at_lane", lambda e, env, *warp: worked_out.append(env) or substituted(e, env, *warp)
    )
    from analyzer.analysis import symbolic as S

    tx, ty = S.sym("threadIdx.x"), S.sym("threadIdx.y")
    clamp = S.minimum(S.maximum(ty + S.sym("blockIdx.y") * 8 - 3, S.const(0)), S.const(63))
    e = clamp * 64 + tx * 4
    lanes = scenarios.warp_lanes((16, 8, 1), 32)[0]  # two rows of 16 lanes
    moved = scenarios.per_lane(e, lanes, ((16, 8, 1), 32, 0))
    assert len(worked_out) == 2
    assert moved == tuple(e.subs(lane) for lane in lanes)


@pytest.mark.parametrize("analysis", [20_000, 60_000, 150_000])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis):
    launch = ("--block", "16,8", "--grid", "5,2")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain
