"""The lanes' distances from the first lane read as numbers from how `scenarios._shifted_lanes`
made the lanes (`scenarios.lane_differences`: a base substituted once, the other lanes moved
from it by a number) give what subtracting lane by lane gives (`scenarios.lane_difference`),
and spend the same budget steps; a small program written for the test (a clamped row, as
Convolution's, under three launches) gives the same report, byte for byte, and the same steps
per kernel with the short way and with it switched off, and a small budget runs out where it
did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import scenarios
from analyzer.analysis import symbolic as S
from walk_checks import Forgetful, budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
#define clamp(a, b, c) ((a) < (b) ? (b) : ((a) > (c) ? (c) : (a)))

__global__ void rows(const float *img, float *out, int height) {
    float sum = 0.0f;
    for (int k = -2; k <= 2; k++) {
        int row = clamp((blockDim.y * blockIdx.y + threadIdx.y) + k, 0, height - 1);
        sum += img[row * 512 + blockDim.x * blockIdx.x + threadIdx.x];
    }
    out[(blockDim.y * blockIdx.y + threadIdx.y) * 512 + threadIdx.x * 2] = sum;
}
"""

LAUNCHES = [
    ("--block", "32,4", "--grid", "2,2"),
    ("--block", "16,8"),
    ("--block", "64,2", "--grid", "3"),
]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short way switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(scenarios, "_MOVES", Forgetful())


@pytest.mark.parametrize("launch", LAUNCHES)
def test_distances_read_from_the_moved_lanes_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


@pytest.mark.parametrize("analysis", [1_500, 3_000, 6_000])
def test_a_small_budget_runs_out_where_the_distances_subtracted_ran_out(tmp_path, monkeypatch, analysis):
    launch = ("--block", "32,4", "--grid", "2,2")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain
    assert "WL940" in fast


def _row() -> S.Expr:
    """Convolution's address: a clamped row (reading threadIdx.y) and 4 bytes a lane in x."""
    ty, tx, by, height = (S.sym(n) for n in ("threadIdx.y", "threadIdx.x", "blockIdx.y", "height"))
    row = ty + by * 4
    clamped = S.select(S.compare("<", row, S.const(0)), S.const(0), S.minimum(row, height - 1))
    return clamped * 2048 + tx * 4


def _distances(e: S.Expr, block: tuple[int, int, int], warp: int) -> tuple[tuple, int, tuple, int]:
    """The lanes' distances of `e` in one warp read from how the lanes were made, and subtracted
    lane by lane, each with the steps it spent."""
    lanes = scenarios.warp_lanes(block, 32)[warp]
    where = (block, 32, warp)
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        offsets = scenarios.per_lane(e, lanes, where)
        ref = next(o for o in offsets if o is not None)
        left = meter.left
        read, _ = scenarios.lane_differences(offsets, ref, scenarios._MOVES[(e, where)])
        read_steps = left - meter.left
        left = meter.left
        plain = tuple(None if o is None else scenarios.lane_difference(o, ref) for o in offsets)
        plain_steps = left - meter.left
    return read, read_steps, plain, plain_steps


def test_one_row_of_lanes_gives_numbers_4_bytes_apart_with_the_plain_steps():
    forget()
    read, read_steps, plain, plain_steps = _distances(_row(), (32, 4, 1), 1)
    assert read == plain
    assert [d.value for d in read] == [4 * j for j in range(32)]
    assert read_steps == plain_steps == 64
    assert len(scenarios._MOVES[(_row(), ((32, 4, 1), 32, 1))][0]) == 1  # one base substituted


def test_two_rows_in_a_warp_are_subtracted_where_their_bases_differ_in_more_than_a_number():
    forget()
    read, read_steps, plain, plain_steps = _distances(_row(), (16, 8, 1), 1)  # rows 2 and 3
    assert read == plain and read_steps == plain_steps
    assert [d.value for d in read[:16]] == [4 * j for j in range(16)]
    assert all(not d.is_const for d in read[16:])
    assert str(read[17] - read[16]) == "4"


def test_lanes_remembered_from_another_block_shape_are_each_their_own_base():
    forget()
    _distances(_row(), (32, 4, 1), 1)  # threadIdx.y = 1, x = 0 .. 31: remembered lane by lane
    read, read_steps, plain, plain_steps = _distances(_row(), (64, 2, 1), 2)  # the same lanes
    assert len(scenarios._MOVES[(_row(), ((64, 2, 1), 32, 2))][0]) == 32
    assert read == plain and read_steps == plain_steps
    assert [d.value for d in read] == [4 * j for j in range(32)]


def test_a_difference_made_before_is_the_same_expression_and_spends_its_steps_again():
    forget()
    first, first_steps, _, _ = _distances(_row(), (32, 4, 1), 1)
    again, again_steps, _, _ = _distances(_row(), (32, 4, 1), 2)
    assert all(a is b for a, b in zip(first, again))
    assert first_steps == again_steps == 64
