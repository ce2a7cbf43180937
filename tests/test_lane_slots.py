"""Where each lane's mask and walked loop conditions sit in a warp's lane expressions
(`pickers.lane_slots`), remembered per shape: the same positions `plan_warp` wrote out per
plan (the lanes' distances, then their masks, then each walked loop's conditions lane by
lane)."""

from __future__ import annotations

from analyzer.analysis.pickers import lane_slots


def written_out(masked: tuple[bool, ...], walked: int) -> tuple[list[int], list[tuple[int, ...]]]:
    """The positions as each plan wrote them before they were remembered per shape."""
    n = len(masked)
    mask_at = [n + j if masked[j] else -1 for j in range(n)]
    conds_at = [tuple([2 * n + i * n + j for i in range(walked)]) for j in range(n)] if walked else [()] * n
    return mask_at, conds_at


def test_three_lanes_two_loops() -> None:
    assert lane_slots((True, False, True), 2) == ((3, -1, 5), ((6, 9), (7, 10), (8, 11)))


def test_no_walked_loop() -> None:
    assert lane_slots((False, True), 0) == ((-1, 3), ((), ()))


def test_as_written_out_per_plan() -> None:
    for masked in [(True,) * 32, (False,) * 32, tuple(j % 3 == 0 for j in range(32)), (True, False) * 8]:
        for walked in range(4):
            mask_at, conds_at = lane_slots(masked, walked)
            assert (list(mask_at), list(conds_at)) == written_out(masked, walked)


def test_shared_between_plans_of_one_shape() -> None:
    assert lane_slots((True,) * 4, 1) is lane_slots((True,) * 4, 1)
