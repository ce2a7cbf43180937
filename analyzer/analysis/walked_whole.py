"""An access's walk over its warps, remembered whole where every warp's walk was met again.

`costing.cost_occurrence` walks each warp of an access (`costing.walk_warp`): a warp whose
walk is remembered (`costing._WALKS`, made in this file) spends a step per lane and a step per
scenario its walk stands for, and its plan and charges are counted in the access's `Summary`.
An access whose walk key (`walk_keys.walk_key`), block, warp size and grid are those of an
access walked before in the file, when each of that access's warps' walks is still remembered
as made in this file, meets the same walks: it spends the same steps and counts the same
charges. So the summary's counts and the steps are remembered by that key, and given again
(`restored`) without looking up each warp, the steps spent in one sum (a budget runs out on a
sum where it runs out on its parts: every part is positive).

Why: Rodinia myocyte/main.cu's `solver_2` inlines the same device functions again and again,
and 1,866 of its 3,650 accesses repeat an earlier one whole. Under callgrind (`check --no-cache
-j 1`, 2026-11-29): myocyte/main.cu 8.33 G -> 7.83 G instructions, the twenty cuda-samples files
13.41 G -> 13.21 G; the same analysis steps (`benchmarks/analysis_steps.py`: 3,429,075 for
myocyte/main.cu either way).
"""

from __future__ import annotations

from collections.abc import Hashable

from analyzer import budget
from analyzer.analysis.memo import ClearCounted, remember
from analyzer.records import record

__all__ = ["RESULT_FIELDS", "WalkedWhole", "kept", "restored", "walked_whole"]

#: What a `costing.Summary` counts of the walks (the rest are its tables, filled while charging).
RESULT_FIELDS = (
    "worst",
    "best",
    "typical_worst",
    "requests",
    "total_lo",
    "total_hi",
    "ideal_total",
    "lanes_total",
    "totals_known",
    "uncounted",
    "masks_vary",
    "exact",
    "undecided_mask",
    "unaligned",
    "ideal_if_aligned",
    "per_value",
    "depends",
)
_COPIED = frozenset({"uncounted", "per_value", "depends"})  # a set or dict: copied each way


@record
class WalkedWhole:
    """An access's walk over its warps: the file it was made in, the count of times the table
    of warps' walks had been emptied then, the steps meeting each warp's walk again spends,
    and the summary's counts (`RESULT_FIELDS`)."""

    file: int
    clears: int
    steps: int
    counts: tuple


#: Each access's walk by (walk key, block, warp size, grid).
_WHOLE: dict[Hashable, WalkedWhole] = {}
#: How often an access's walk was given again (`restored`), for tests.
RESTORED = [0]


def walked_whole(key: Hashable, file: int, walks: ClearCounted) -> WalkedWhole | None:
    """The walk remembered under `key`, where it was made in `file` and `walks` (the table of
    warps' walks it stands on) was not emptied since."""
    whole = _WHOLE.get(key)
    if whole is None or whole.file != file or whole.clears != walks.clears:
        return None
    return whole


def restored(whole: WalkedWhole, summary: object) -> None:
    """Spend `whole`'s steps and put its counts in `summary` (a fresh `costing.Summary`)."""
    budget.spend(whole.steps)
    RESTORED[0] += 1
    for name, value in zip(RESULT_FIELDS, whole.counts):
        setattr(summary, name, value.copy() if name in _COPIED else value)


def kept(key: Hashable, steps: int, summary: object, file: int, clears: int) -> None:
    """Remember the walk just made under `key`, each of whose warps' walks is remembered as
    made in `file` (`costing.walk_warp` stores each so, and `clears` says that the table was
    not emptied meanwhile): meeting them again spends `steps`, a step a lane and a step a
    scenario their charges stand for (`costing.walk_warp`)."""
    counts = tuple(
        value.copy() if name in _COPIED else value
        for name, value in ((name, getattr(summary, name)) for name in RESULT_FIELDS)
    )
    remember(_WHOLE, key, WalkedWhole(file, clears, steps, counts))
