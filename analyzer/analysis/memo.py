"""Bounded memo tables for the per-warp work of the cost walk.

The accesses of a kernel share masks, loop bounds and lane expressions between warps, and
the warps of a block share them between accesses; remembering them is what keeps the walk
over every warp fast (README, "Speed"). The tables live at module level, shared by every
analysis in a process, and are emptied when they reach `MEMO_LIMIT` entries, so that
checking many files does not grow them without bound.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MEMO_LIMIT", "remember"]

MEMO_LIMIT = 200_000


def remember(memo: dict, key: Any, value: Any) -> None:
    """Put `value` under `key`, emptying `memo` first when it is full."""
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value
