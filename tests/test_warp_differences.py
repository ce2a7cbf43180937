"""The lanes' distances of a warp remembered by the lanes' addresses
(`warp_differences.remembered_differences`): a shared-memory access read and written in one
statement, whose stride `n` is not known, has its lanes' distances worked out once per warp,
not once per access; the report and the steps each kernel spends are the same with the table
and without it, and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import scenarios, warp_differences
from analyzer.analysis import symbolic as S
from walk_checks import Forgetful, budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void strided(float *out, int n) {
    __shared__ float s[4096];
    s[threadIdx.x * n] += 1.0f;
    s[threadIdx.x * n + 1] = s[threadIdx.x * n] * 2.0f;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
"""

LAUNCHES = [("--block", "64"), ("--block", "32,2", "--grid", "2")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the table switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(warp_differences, "_DIFFERENCES_OF", Forgetful())


@pytest.mark.parametrize("launch", LAUNCHES)
def test_remembered_distances_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


@pytest.mark.parametrize("analysis", [300, 600, 1_200])
def test_a_small_budget_runs_out_where_it_did_without_the_table(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "64"), forget)
    assert fast == plain
    assert "WL940" in fast


def test_the_distances_of_a_warp_met_again_are_taken_from_the_table(tmp_path, monkeypatch):
    calls: list[int] = []
    worked_out = scenarios.lane_differences

    def counted(offsets, ref, moves):
        calls.append(1)
        return worked_out(offsets, ref, moves)

    monkeypatch.setattr(scenarios, "lane_differences", counted)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    from analyzer import cli

    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--block", "64", "-o", "r.txt", "k.cu"])
    worked = len(calls)
    met = len(warp_differences._DIFFERENCES_OF)
    assert 0 < met == worked  # each warp's distances worked out once
    forget(monkeypatch)
    calls.clear()
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--block", "64", "-o", "r2.txt", "k.cu"])
    assert len(calls) > worked  # without the table the accesses of one address work them out again


def test_a_hit_spends_the_steps_of_the_first_meeting_and_gives_the_same_distances():
    forget()
    tx, n = S.sym("threadIdx.x"), S.sym("n")
    offsets = tuple(n * (j + 1) + tx * 0 for j in range(32))  # the first lane at `n`
    ref = offsets[0]
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        left = meter.left
        first = warp_differences.remembered_differences(
            offsets, ref, lambda: scenarios.lane_differences(offsets, ref, None)
        )
        first_steps = left - meter.left
        left = meter.left
        again = warp_differences.remembered_differences(offsets, ref, lambda: pytest.fail("worked out again"))
        again_steps = left - meter.left
    assert first == again
    assert first[1] is True  # the distances are `j * n`: no numbers
    assert first[0][3] == n * 3
    assert first_steps == again_steps > 0


def test_unmetered_distances_are_not_remembered():
    forget()
    offsets = (S.sym("n"), S.sym("n") + 4)
    done = warp_differences.remembered_differences(
        offsets, offsets[0], lambda: scenarios.lane_differences(offsets, offsets[0], None)
    )
    assert [d.value for d in done[0]] == [0, 4] and done[1] is False
    assert not warp_differences._DIFFERENCES_OF
