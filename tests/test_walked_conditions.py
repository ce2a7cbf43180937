"""A walked loop's condition that holds at every value the walk gives its counter leaves every
lane as it is, so it does not keep the counter from moving the warp (`groups._lanes_read`): a
counter walked because it moves the warp's start, under a condition of its own, is grouped by
its move modulo the address period (myocyte/main.cu's `k < 91` loops). A small program written
for the test gives the same report, byte for byte, and the same steps per kernel, with the
grouping and without it; the groups are those the moves give; a condition that some lanes
leave before others, or that cannot be evaluated, keeps its counter walked one by one."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, groups, neutral
from analyzer.analysis import symbolic as S
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void rows(float *a, int n) {
    for (int k = 0; k < 40; k++)
        a[blockIdx.x * 37856 + k * 2 + threadIdx.x] = 1.0f;
}

__global__ void lanes_stop_apart(float *a, int n) {
    for (int k = 0; k < threadIdx.x % 4 + 20; k++)
        a[blockIdx.x * 37856 + k * 2 + threadIdx.x] = 1.0f;
}

__global__ void with_an_unknown(float *a, int n, int w) {
    for (int k = 0; k < 24; k++)
        if (threadIdx.x < w)
            a[blockIdx.x * 4096 + k * 3 + threadIdx.x * 2] = 1.0f;
}
"""

LAUNCHES = [("--block", "64"), ("--block", "32,2", "--grid", "5"), ("--block", "16")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the conditions read as before)."""
    forget_walk_tables()
    groups._HOLDS.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(groups, "_lanes_read", lambda plan, values: neutral.lanes_read(plan))


@pytest.mark.parametrize("launch", LAUNCHES)
def test_counters_under_conditions_that_hold_grouped_give_the_plain_walks_report_and_steps(
    tmp_path, monkeypatch, launch
):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=3)


def test_the_groups_are_the_counters_moves_modulo_the_period(tmp_path, monkeypatch):
    found: list[tuple] = []
    grouped = groups.scenario_groups

    def recorded(plan, period, facts=None):
        done = grouped(plan, period, facts)
        found.append((plan.names, len(plan.values[0]), None if done is None else len(done)))
        return done

    monkeypatch.setattr(groups, "scenario_groups", recorded)
    monkeypatch.setattr(costing, "scenario_groups", recorded)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    from analyzer import cli

    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--block", "64", "k.cu"])
    # rows: 40 values of k moving the warp by 8 bytes, 16 residues modulo 128; lanes_stop_apart:
    # each lane's own condition, 23 trips, not grouped; with_an_unknown: 24 values by 12 bytes, 24 residues
    assert sorted(set(found)) == [(("k@1",), 23, None), (("k@1",), 24, 24), (("k@1",), 40, 16)]


def test_a_condition_holds_throughout_where_each_value_makes_it_true():
    k, n = S.sym("k@1"), S.sym("n")
    below = S.compare("<", k, 40)
    assert groups._holds_throughout(below, "k@1", tuple(range(40)))
    assert not groups._holds_throughout(below, "k@1", tuple(range(41)))
    assert groups._holds_throughout(S.compare("<", k * 2, 7), "k@1", (0, 1, 2, 3))
    assert not groups._holds_throughout(S.compare("<", S.floordiv(n, k), 7), "k@1", (0, 1))  # n / 0: not
    assert not groups._holds_throughout(S.compare("<", S.floordiv(8, k), 7), "k@1", (0, 1))  # 8 / 0: not


def test_a_small_budget_runs_out_alike(tmp_path, monkeypatch):
    for analysis in (1_000, 5_000, 8_000, 12_000):  # 3, 3, 2 and no kernels cut short
        fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "64"), forget)
        assert fast == plain
