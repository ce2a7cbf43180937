"""The function that picks a warp's active lanes' addresses from the values of its lane
expressions (`lane_picker`), generated once per shape of the warp's plan.

A warp walked over many scenarios has its lane expressions compiled (`scenarios._compiled`);
what is left per scenario is to drop the lanes whose mask or loop condition is off and to
give the others' addresses relative to the first lane's. Written as one generated lambda per
shape (which lanes are present, where their masks and conditions are), shared by the warps
and accesses that have that shape.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from analyzer.analysis.memo import remember

__all__ = ["lane_picker", "lane_slots"]

_PICKERS: dict[tuple, tuple] = {}


#: (where each lane's mask is, -1: none; where each lane's walked loop conditions are)
Slots = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]


@functools.lru_cache(maxsize=1024)
def lane_slots(masked: tuple[bool, ...], walked: int) -> Slots:
    """Where each lane's mask and walked loop conditions are in a warp's lane expressions
    (`WarpPlan.lane_exprs`: the lanes' distances, then their masks, then each walked loop's
    conditions lane by lane), for lanes with a mask where `masked` says so. Remembered by the
    shape and shared by the plans that have it (read only): a plan wrote 32 tuples of
    positions, and the picker's key hashed them (reduction_kernel.cu: 8,374 plans, a few shapes)."""
    n_lanes = len(masked)
    mask_at = tuple([n_lanes + j if m else -1 for j, m in enumerate(masked)])
    if not walked:
        return mask_at, ((),) * n_lanes
    conds_at = tuple([tuple([2 * n_lanes + i * n_lanes + j for i in range(walked)]) for j in range(n_lanes)])
    return mask_at, conds_at


def lane_picker(
    compiled: tuple[bool, ...],
    present: Sequence[int],
    mask_at: Sequence[int],
    conds_at: Sequence[tuple[int, ...]],
    absolute: bool,
) -> tuple[Callable[[tuple], tuple], bool] | None:
    """From the values of a warp's lane expressions (`WarpPlan.lane_exprs`), the function
    giving each lane's address relative to the first lane, None for a lane that is off; and
    whether some lane's mask stays undecided. The values hold the lanes' addresses where
    `absolute` (the last value is the first lane's), else their distances from the first.
    None where some lane's address is not compiled: the lanes are then picked one by one.
    Remembered: warps and accesses share the shape."""
    key = (compiled, tuple(present), tuple(mask_at), tuple(conds_at), absolute)
    done = _PICKERS.get(key)
    if done is None:
        if not all(compiled[j] for j in present) or (absolute and not compiled[-1]):
            return None
        undecided = False
        items = ["None"] * len(mask_at)
        for j in present:
            tests = []
            at = mask_at[j]
            if at >= 0:
                if compiled[at]:
                    tests.append(f"v[{at}]")
                else:
                    undecided = True
            tests += [f"v[{at}]" for at in conds_at[j] if compiled[at]]
            value = f"v[{j}] - v[-1]" if absolute else f"v[{j}]"
            items[j] = f"({value} if {' and '.join(tests)} else None)" if tests else f"({value})"
        source = f"lambda v: ({', '.join(items)},)"
        done = (eval(source, {"__builtins__": {}}), undecided)  # noqa: S307 - our own source
        remember(_PICKERS, key, done)
    return done
