"""Bounded memo tables for the per-warp work of the cost walk.

The accesses of a kernel share masks, loop bounds and lane expressions between warps, and
the warps of a block share them between accesses; remembering them is what keeps the walk
over every warp fast (README, "Speed"). The tables live at module level, shared by every
analysis in a process, and are emptied when they reach `MEMO_LIMIT` entries, so that
checking many files does not grow them without bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from analyzer import budget

__all__ = ["MEMO_LIMIT", "BuiltOn", "ClearCounted", "per_node", "remember", "replayed"]

T = TypeVar("T")
Node = TypeVar("Node")

MEMO_LIMIT = 200_000


def remember(memo: dict, key: Any, value: Any, limit: int = MEMO_LIMIT) -> None:
    """Put `value` under `key`, emptying `memo` first when it is full (`limit` entries)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value


def replayed(memo: dict, key: Any, compute: Callable[[], T], limit: int = MEMO_LIMIT) -> T:
    """`compute()`, remembered under `key` with the budget steps it spent; a remembered value
    spends those steps again, so that a budget runs out where it did without the memo (a
    result never depends on what was remembered). `limit`: `memo`'s size (`remember`)."""
    seen = memo.get(key)
    if seen is not None:
        budget.spend(seen[1])
        return seen[0]
    meter = budget.current()
    before = meter.left if meter is not None else 0
    value = compute()
    remember(memo, key, (value, 0 if meter is None else before - meter.left), limit)
    return value


def per_node(memo: dict, node: Node, compute: Callable[[Node], T]) -> T:
    """`compute(node)`, remembered by the node's identity, for what depends on an IR node (or
    another object kept unchanged: a warp's lanes, one lane) alone and spends no budget steps;
    the node is kept with its answer, so that its id stays its own."""
    seen = memo.get(id(node))
    if seen is not None and seen[0] is node:
        return seen[1]
    value = compute(node)
    remember(memo, id(node), (node, value))
    return value


class ClearCounted(dict):
    """A memo table that counts how often it was emptied (`clears`), so that a table built on
    its entries can tell that they are gone (`BuiltOn`)."""

    __slots__ = ("clears",)

    def __init__(self) -> None:
        super().__init__()
        self.clears = 0

    def clear(self) -> None:
        self.clears += 1
        super().clear()


class BuiltOn(dict):
    """A memo table whose entries stand on those of a `ClearCounted` one (the steps they keep
    assume its entries are there: `scenarios._READ_LANES`, `lane_groups._BY_VALUES`):
    `since(clears)` empties it where that one was emptied since it last asked."""

    __slots__ = ("_clears",)

    def __init__(self) -> None:
        super().__init__()
        self._clears: int | None = 0

    def since(self, clears: int | None) -> BuiltOn:
        """Itself, emptied first where `clears` (the other table's count) is not what it was."""
        if clears != self._clears:
            self.clear()
            self._clears = clears
        return self
