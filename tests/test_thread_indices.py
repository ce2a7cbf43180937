"""`walk_keys.thread_indices`, made index by index (a column of the lanes' values each): the
same rows as the lane-by-lane way it replaced, for every way of reading the indices."""

from __future__ import annotations

import itertools

from analyzer.analysis.values import THREAD_SYMBOLS
from analyzer.analysis.walk_keys import thread_indices
from analyzer.analysis.walked import warp_lanes


def _lane_by_lane(lanes: tuple, reads: tuple) -> tuple:
    """The former `thread_indices`, a generator a lane and one an index in it."""
    names = [name if read else None for name, read in zip(THREAD_SYMBOLS, reads)]
    rows = tuple(None if lane is None else tuple(n and lane[n] for n in names) for lane in lanes)
    moved = [axis for axis, read in enumerate(reads) if read.__class__ is tuple]
    if not moved:
        return rows
    first = next(row for row in rows if row is not None)
    rows = tuple(
        None if row is None else tuple(v - first[axis] if axis in moved else v for axis, v in enumerate(row))
        for row in rows
    )
    return (*rows, tuple(first[axis] % reads[axis][0] for axis in moved))


WAYS = (False, True, (1,), (4,), (32,))


def test_each_warp_read_each_way_gives_the_rows_lane_by_lane() -> None:
    checked = 0
    for block in ((128, 128, 1), (24, 5, 3), (7, 1, 1), (16, 4, 2)):
        for lanes in warp_lanes(block, 32)[:6]:
            for reads in itertools.product(WAYS, repeat=3):
                assert thread_indices(lanes, reads) == _lane_by_lane(lanes, reads), (block, reads)
                checked += 1
    assert checked == (6 + 6 + 1 + 4) * 125  # (7, 1, 1) has one warp, (16, 4, 2) four


def test_a_warp_past_the_block_end_has_none_for_its_missing_lanes() -> None:
    (lanes,) = warp_lanes((7, 1, 1), 32)
    rows = thread_indices(lanes, ((4,), False, True))
    assert rows[:7] == tuple((x, None, 0) for x in range(7))
    assert rows[7:32] == (None,) * 25
    assert rows[32] == (0,)  # the first lane's x modulo 4
