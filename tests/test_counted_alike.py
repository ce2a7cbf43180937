"""Charges counted alike by value (`costing.counted_alike`): the groups of a walk that each
start at another residue (`groups.py`) have an outcome each, and those whose outcomes a
summary reads alike are counted as one standing for all of them, where the first was met.
Small programs written for the test give the same report, byte for byte, and the same steps
per kernel as when each group is counted by itself, and fewer groups are counted."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, scenarios, walk_keys
from walk_checks import checked, forget_walk_tables, same_with_and_without

#: Loop counters and block indices that only move the warp, by 4, 8 and 12 bytes a step (a
#: residue each, most of them charging alike), a sampled unknown in the start, a typical
#: value of it, and a shared array whose rows move by a bank.
PROGRAM = """\
__global__ void moved(float *a, int n) {
    for (int k = 0; k < 40; k++)
        a[blockIdx.x * 8 + k * 4 + threadIdx.y * 64 + threadIdx.x] += 1.0f;
    for (int k = 0; k < 9; k++)
        a[n + k * 12 + threadIdx.x * 2] = 0.0f;
}

__global__ void rows(int w) {
    __shared__ float s[64 * 33];
    for (int j = 0; j < 20; j++)
        s[j * 33 + threadIdx.y * 33 + threadIdx.x] = 0.0f;
    for (int j = 0; j < 5; j++)
        s[w + j + threadIdx.x * 2] = 1.0f;
}
"""

LAUNCHES = [("--block", "32,4", "--grid", "8"), ("--block", "16,8", "--grid", "5,2"), ("--block", "64,2")]


def by_object(alike):
    """`alike` (`counted_alike`) as it was: by the outcome object, one count each."""
    return lambda scenario, plan: (
        None if scenario.outcome is None else id(scenario.outcome),
        *alike(scenario, plan)[1:],
    )


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, outcomes counted by object)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "counted_alike", by_object(costing.counted_alike))


def counted(tmp_path, monkeypatch, launch) -> int:
    """How many charges the summaries counted (`count_scenario`) checking the program."""
    calls = []
    count = costing.count_scenario
    monkeypatch.setattr(costing, "count_scenario", lambda *args: calls.append(1) or count(*args))
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "counted.json", *launch, "k.cu")
    return len(calls)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_counted_by_value_gives_the_report_and_steps_of_counting_by_object(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)


def test_fewer_charges_are_counted(tmp_path, monkeypatch):
    """The charges alike are counted once (and counted by object, each group's)."""
    assert counted(tmp_path, monkeypatch, LAUNCHES[0]) == 32
    forget(monkeypatch)
    assert counted(tmp_path, monkeypatch, LAUNCHES[0]) == 156


def test_a_warps_thread_indices_are_remembered_by_its_lanes():
    """`walk_warp` reads the thread indices of a warp's lanes that the access reads from
    `walk_keys._THREADS`: the same as working them out, and worked out once per lanes object
    and indices read."""
    lanes = scenarios.warp_lanes((16, 8, 1), 32)[1]
    walk_keys._THREADS.clear()
    first = walk_keys.read_indices(lanes, (True, True, True))
    assert first.rows == tuple((x, y, 0) for y in (2, 3) for x in range(16))
    assert walk_keys.read_indices(lanes, (True, True, True)) is first
    only_x = walk_keys.read_indices(lanes, (True, False, False))
    assert only_x.rows == tuple((x, None, None) for _ in (2, 3) for x in range(16))
    # warp 0 of a (16, 8) block has the same x values: its walk is the same for an access of x alone
    other = walk_keys.read_indices(scenarios.warp_lanes((16, 8, 1), 32)[0], (True, False, False))
    assert other == only_x and hash(other) == hash(only_x) and other is not only_x
    assert walk_keys.read_indices(lanes, (False, True, False)).rows == tuple(
        (None, y, None) for y in (2, 3) for _ in range(16)
    )
    assert walk_keys.read_indices(lanes, (False, True, False)) != first  # (other rows: another walk)
    # a lane the warp does not have stays None
    assert (
        walk_keys.read_indices(scenarios.warp_lanes((40, 1, 1), 32)[1], (True, False, False)).rows[8:] == (None,) * 24
    )
