"""What a warp's plan walks (`scenarios.plan_warp`): each warp's lanes, the values of the loop
counters walked, the block indices walked block by block, and lanes' masks decided at the
corners of the grid. Apart from `scenarios.py` to keep it under 800 lines; re-exported there."""

from __future__ import annotations

import functools
import itertools
import math

from analyzer.analysis import symbolic as S
from analyzer.analysis.loops import iterations, trip_count
from analyzer.analysis.results import LaunchConfig
from analyzer.analysis.values import LoopCtx, LoopKind, is_loop_counter
from analyzer.analysis.verdict import BLOCK_INDICES, is_block_index, mask_blocks
from analyzer.ir import builtins
from analyzer.ir.builtins import BuiltinKind

__all__ = [
    "MAX_SCENARIOS",
    "Lane",
    "axis",
    "blocks_to_walk",
    "decide_mask_at_corners",
    "decides_no_lane",
    "few_iterations",
    "walked_values",
    "warp_lanes",
]

MAX_SCENARIOS = 2048  # iterations walked per warp and access before sampling instead
#: One lane's thread indices ({"threadIdx.x": 3, ...}), None for a lane past the block's end.
Lane = dict[str, int] | None


@functools.lru_cache(maxsize=64)
def warp_lanes(block: tuple[int, int, int], warp_size: int) -> tuple[tuple[Lane, ...], ...]:
    """Each warp's lanes as threadIdx values (x fastest), None for lanes past the block's end.
    Shared between callers (remembered): not to be changed."""
    bx, by, bz = block
    n = bx * by * bz
    warps = []
    for w in range((n + warp_size - 1) // warp_size):
        lanes: list[Lane] = []
        for lane in range(warp_size):
            linear = w * warp_size + lane
            if linear >= n:
                lanes.append(None)
                continue
            lanes.append(
                {"threadIdx.x": linear % bx, "threadIdx.y": (linear // bx) % by, "threadIdx.z": linear // (bx * by)}
            )
        warps.append(tuple(lanes))
    return tuple(warps)


def few_iterations(loop: LoopCtx, known: dict[str, int]) -> bool:
    """The loop's iterations are known and few enough to walk each (`MAX_SCENARIOS`)."""
    its = iterations(loop, known)
    return its is not None and len(its) <= MAX_SCENARIOS


def axis(name: str) -> int:
    """The axis of a built-in index variable (`blockIdx.y`: 1)."""
    spec = builtins.variable(name)
    assert spec is not None and spec.axis is not None
    return spec.axis


def blocks_to_walk(
    grid: tuple[int, int, int] | None,
    address_period: int,
    ref: S.Expr,
    lane_masks: tuple[S.Expr | None, ...],
    sampled: tuple[str, ...],
    others: int,
) -> tuple[str, ...]:
    """The block indices to walk block by block, each over its real values (the grid is known):
    those that change which lanes are active (a bounds check that cuts the last block), the
    lanes' distances, or where the warp's range starts within `address_period`. Walked only
    while the scenarios stay within `MAX_SCENARIOS` (`others`: the scenarios without them);
    else they are sampled, or their starts enumerated, as before."""
    if grid is None:
        return ()
    names = {s for s in sampled if is_block_index(s)} | mask_blocks(lane_masks)
    for monomial, coefficient in ref.terms():
        atoms = [a for a in monomial if isinstance(a, S.Symbol)]
        if len(atoms) == len(monomial) == 1 and is_block_index(atoms[0].name) and coefficient % address_period:
            names.add(atoms[0].name)
    chosen = tuple(sorted(names))
    if not chosen or others * math.prod(grid[axis(b)] for b in chosen) > MAX_SCENARIOS:
        return ()
    return chosen


def walked_values(
    walked: tuple[LoopCtx, ...], conds: list[tuple[S.Expr | None, ...]], known: dict[str, int]
) -> tuple[list[list[int]], bool]:
    """The values each walked counter takes, and whether they are its real ones (else a
    sample: the first 8 iterations, or powers of two for a multiplicative counter)."""
    counter_values: list[list[int]] = []
    exact = True
    for lp, lane_conds in zip(walked, conds):
        its: list[int] | None
        if lp.kind == LoopKind.MULTIPLICATIVE:
            its = iterations(lp, known)
            if its is None:
                its = [1 << j for j in range(10)]
                exact = False
        else:
            its = None
            cond_lanes = [c for c in lane_conds if c is not None]
            if cond_lanes:
                trips = trip_count(cond_lanes, lp.counter, MAX_SCENARIOS + 1)
                its = None if trips is None else list(range(trips))
            if its is None:
                its = list(range(8))
                exact = False
        counter_values.append(its)
    return counter_values, exact


def decides_no_lane(mask: S.Expr, launch: LaunchConfig) -> bool:
    """Whether `decide_mask_at_corners` gives each lane's mask of `mask` (its thread indices
    put in) as it is: the grid is not known, or `mask` reads no block index (a lane's mask reads
    no symbol `mask` does not, and one that reads another symbol than a block index and loop
    counters, or none, is given as it is). Asked once for a warp's masks, not at each lane:
    binomialOptions.cu (GPUVerify) asked `_decide_mask` for 33,280 lanes, whose masks, each new,
    were hashed to be looked up (6.7% of its profiled check)."""
    return launch.grid is None or BLOCK_INDICES.isdisjoint(mask.free_symbols)


def decide_mask_at_corners(m: S.Expr, launch: LaunchConfig) -> S.Expr:
    """A lane's mask decided where it depends only on block indices of a known grid: it holds
    (or fails) at every corner of the grid, as bounds checks do; else `m` itself."""
    free = m.free_symbols
    names = [n for n in free if not is_loop_counter(n)]
    specs = [builtins.variable(n) for n in names]
    if not names or any(s is None or s.kind is not BuiltinKind.BLOCK_INDEX for s in specs) or launch.grid is None:
        return m
    axes = {s.name: launch.grid[s.axis] - 1 for s in specs}  # type: ignore[union-attr, index]
    values = set()
    # a mask of block indices alone is evaluated at each corner, not substituted (the five
    # corpora: 69,099 corner substitutions, 8.2 s of 332 profiled)
    evaluable = len(names) == len(free)
    for corner in itertools.product(*[(0, hi) for hi in axes.values()]):
        env = dict(zip(axes, corner))
        if evaluable:
            try:
                values.add(bool(m.evaluate(env)))
                continue
            except (ArithmeticError, ValueError, LookupError):  # as `scenarios.evaluated`: substitute
                pass
        v = m.subs(env)
        if not v.is_const:
            return m
        values.add(bool(v.value))
    return S.const(1) if values == {True} else S.const(0) if values == {False} else m
