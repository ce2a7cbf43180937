"""The lanes' distances from the first lane of a warp, remembered by the lanes' addresses.

Warps at different places (another block, another warp of the block) often put in their
thread indices to give the same addresses lane by lane: an address that reads the block
index only through a term the lanes share, or a bank-conflict walk whose `size` stays
unknown. `scenarios.lane_differences` subtracted each lane's address from the first's again
for each such warp (scan.cu, `check -I Common`: 26,880 lane differences in 840 warps, of
which 318 had addresses of their own; the rest, ...). Remembered here by the addresses and the
first lane's address, with the budget steps working them out spent, which a warp met again
spends again (the budget runs out where it did without the table: `analyzer.budget`).
Measured 2026-11-29 under callgrind (`check --no-cache -j 1 -I Common`): scan.cu 3.160 G ->
2.909 G instructions.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import replayed

__all__ = ["remembered_differences"]

Offsets = tuple["S.Expr | None", ...]
Differences = tuple[Offsets, bool]

#: The lanes' distances and whether one is no number, with the steps they took (`memo.replayed`),
#: by the first lane's address and the lanes' addresses.
_DIFFERENCES_OF: dict[tuple, tuple[Differences, int]] = {}
#: Entries past which `_DIFFERENCES_OF` starts afresh: each keeps two tuples of a warp's lane
#: expressions alive, and the warps met again are met soon (an access's load and store, the
#: accesses of one inlined call), so a table of `memo.MEMO_LIMIT` entries would hold memory
#: for nothing.
LIMIT = 20_000


def remembered_differences(
    offsets: Offsets,
    ref: S.Expr,
    compute: Callable[[], Differences],
) -> Differences:
    """`compute()` (the lanes' distances of `offsets` from `ref`, `scenarios.lane_differences`),
    remembered by `offsets` and `ref`; a warp met again spends the steps its first meeting
    spent. Unmetered (no budget) it is worked out each time: the steps are not known."""
    if budget.current() is None:
        return compute()
    return replayed(_DIFFERENCES_OF, (ref, offsets), compute, LIMIT)
