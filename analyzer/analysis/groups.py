"""Scenarios of a warp's walk that charge the same, grouped so that each group is charged once.

A scenario (`scenarios.py`) assigns values to the walked loop counters, the block indices
walked block by block and the sampled unknowns. Some of those symbols are read by the first
lane's address alone, as a whole number of bytes per unit (`blockIdx.x*8256`, `k*4`): they
move the whole warp and change nothing else, so what a scenario charges depends on them
only through that move modulo the address period, under which the cost is invariant
(`Architecture.address_period`). `scenario_groups` projects the scenarios onto the other
symbols and that residue (and the facts the summary counts by: whether the values are
typical, whether they are the representative ones), and gives each group its first
scenario in the walk's order and how many scenarios it stands for. Charged once and counted
that many times, a group gives the summary what its scenarios one by one gave: totals add
up, and the worst, best and typical charges are the same, met first at the same place
(binomialOptions.cu walks 512 blocks of which two residues differ; myocyte's 91 iterations
of a counter moving by 4 bytes, 32 residues).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import remember
from analyzer.analysis.neutral import lanes_read, names_read, neutral
from analyzer.analysis.scenarios import MAX_SCENARIOS, WarpPlan
from analyzer.analysis.verdict import SymbolFacts
from analyzer.records import record

__all__ = ["Group", "scenario_groups"]


@record
class Group:
    """Scenarios that charge the same: the first of them in the walk's order, and how many."""

    combo: tuple[int, ...]
    times: int
    # the values of the symbols that do not only move the warp (by their place), and how far
    # the others move it, in bytes: groups with the same `kept` differ only in the first
    # lane's address, by the difference of their `move`s
    kept: tuple[int, ...] = ()
    move: int = 0


#: What one value of a symbol that only moves the warp brings to a group: the move modulo
#: the period, the value is typical, the value is the representative one.
Share = tuple[int, bool, bool]


def scenario_groups(plan: WarpPlan, period: int, facts: SymbolFacts | None = None) -> tuple[Group, ...] | None:
    """The groups of the plan's scenarios in the order the walk meets them (`scenarios`),
    where some symbol only moves the warp (see the module); None where none does, or the
    scenarios are cut short (`MAX_SCENARIOS`) other than at whole values of the first symbol."""
    if plan.evaluate is None:  # few scenarios: not worth it
        return None
    return groups_of(plan, period, facts)


def groups_of(plan: WarpPlan, period: int, facts: SymbolFacts | None = None) -> tuple[Group, ...] | None:
    """`scenario_groups`, whether or not the plan is compiled (`scenarios._compiled` asks how
    many scenarios a plan will evaluate before it compiles it). Remembered."""
    values = _walked_values(plan.values)
    if values is None:
        return None
    moves = _moving_coefficients(plan, values, facts)
    if not moves:
        return None
    key = (
        tuple(tuple(v) if v.__class__ is list else v for v in values),
        tuple(moves.items()),
        period,
        plan.typical,
        plan.representative,
        len(plan.sampled),
    )
    done = _GROUPS.get(key)
    if done is None:
        done = _grouped(plan, values, moves, period)
        remember(_GROUPS, key, done)
    return done


#: The groups of a walk, by what decides them (`scenario_groups`): the values walked, the
#: symbols that only move the warp and their coefficients, the period and the typical and
#: representative values. The warps and accesses of a kernel share them (BinomialOptions'
#: 15,600 walks over 512 blocks had one grouping).
_GROUPS: dict[tuple, tuple[Group, ...]] = {}


def _grouped(plan: WarpPlan, values: list[Sequence[int]], moves: dict[int, int], period: int) -> tuple[Group, ...]:
    """`scenario_groups` worked out (see there)."""
    kept = [i for i in range(len(values)) if i not in moves]
    shares = {i: _shares(plan, i, values[i], moves[i], period) for i in moves}
    classes = _combined(shares, sorted(moves), period)
    groups: list[tuple[tuple[int, ...], int]] = []
    for kept_at in itertools.product(*(range(len(values[i])) for i in kept)):
        for first_moved, times in classes.values():
            at = [0] * len(values)
            for i, j in zip(kept, kept_at):
                at[i] = j
            for i, j in zip(sorted(moves), first_moved):
                at[i] = j
            groups.append((tuple(at), times))
    groups.sort()  # the order of the first scenario of each: the walk's (product) order
    return tuple(
        Group(
            tuple(values[i][j] for i, j in enumerate(at)),
            times,
            tuple(at[i] for i in kept),
            sum(coefficient * values[i][at[i]] for i, coefficient in moves.items()),
        )
        for at, times in groups
    )


def _walked_values(values: tuple[Sequence[int], ...]) -> list[Sequence[int]] | None:
    """The values of each symbol the walk meets (`WarpPlan.scenarios` takes the first
    `MAX_SCENARIOS` of the product): all of them, or the first symbol's cut where the cut
    falls between two of its values; None where it falls elsewhere."""
    count = math.prod(len(v) for v in values)
    if count <= MAX_SCENARIOS:
        return list(values)
    inner = math.prod(len(v) for v in values[1:])
    if not values or MAX_SCENARIOS % inner:
        return None
    return [values[0][: MAX_SCENARIOS // inner], *values[1:]]


def _moving_coefficients(plan: WarpPlan, values: list[Sequence[int]], facts: SymbolFacts | None) -> dict[int, int]:
    """The symbols of the scenario (by their place in `names`) that only move the warp: no
    lane expression that a scenario makes a number but the first lane's address reads them
    (`_lanes_read`), and there each is a plain term, `coefficient * name`; with that
    coefficient. And those that do not move it (coefficient 0, `neutral`). Not the one
    sampled unknown whose cost per value the summary keeps (`one_unknown_at`)."""
    read = _lanes_read(plan, values)
    linear: dict[str, int] = {}
    in_terms: set[str] = set()  # read by the address other than as a plain term
    for monomial, coefficient in plan.ref.terms():
        if len(monomial) == 1 and isinstance(monomial[0], S.Symbol):
            linear[monomial[0].name] = coefficient
        else:
            in_terms.update(n for atom in monomial for n in atom.free)
    moves: dict[int, int] = {}
    for i, name in enumerate(plan.names):
        if name in read or i == plan.one_unknown_at:
            continue
        if name in linear and name not in in_terms:
            moves[i] = linear[name]
        elif name not in linear and neutral(plan, i, values[i], facts):
            moves[i] = 0
    return moves


def _lanes_read(plan: WarpPlan, values: list[Sequence[int]]) -> frozenset[str]:
    """`lanes_read`, but for the walked loop conditions that hold at every value walked of the
    one symbol they read (`_holds_throughout`): such a condition leaves every lane as it is.
    A counter walked because it moves the warp's start (`blockIdx.x*151424 + k*4`, under
    `k < 91`) is read by its own loop's condition in each lane, which the walk's values (its
    trips) all satisfy. myocyte/main.cu (check): scenarios charged one by one 300,865 -> 27,180,
    Python calls 22.00 M -> 21.56 M. A condition is asked once per object (the lanes share
    one) and only of a symbol nothing else reads: binomialOptions.cu asked each lane's, 58,624
    asks (12.38 M -> 12.74 M calls), 226 now (12.39 M)."""
    if not plan.walked:
        return lanes_read(plan)
    names = frozenset(plan.names)
    exprs = plan.lane_exprs
    conditions = 2 * len(plan.diffs)  # where the walked conditions begin in `lane_exprs`
    read = names_read(exprs[:conditions], names)  # the lanes' distances and masks
    alone: dict[int, S.Expr] = {}  # the conditions that read one symbol, by id (lanes share them)
    for e in exprs[conditions:-1]:
        if e is not None:
            free = e.free_symbols
            if free <= names:  # (else no number in any scenario: `lanes_read`)
                if len(free) == 1:
                    alone[id(e)] = e
                else:
                    read |= free
    for e in alone.values():  # asked only of a symbol nothing else reads
        (name,) = e.free_symbols
        if name not in read and not _holds_throughout(e, name, tuple(values[plan.names.index(name)])):
            read.add(name)
    return frozenset(read)


#: Whether a loop condition holds at each of a counter's values (`_holds_throughout`), by the
#: condition, the counter and its values: the lanes and warps of an access share conditions.
_HOLDS: dict[tuple, bool] = {}


def _holds_throughout(cond: S.Expr, name: str, values: tuple[int, ...]) -> bool:
    """`cond`, which reads `name` alone, is true at each of `values` (C semantics, as the
    compiled evaluation of a scenario gives it: a division by zero or the like is not)."""
    key = (cond, name, values)
    done = _HOLDS.get(key)
    if done is None:
        try:
            done = all(cond.evaluate({name: v}) for v in values)
        except (ArithmeticError, ValueError, LookupError):
            done = False
        remember(_HOLDS, key, done)
    return done


def _shares(plan: WarpPlan, i: int, values: Sequence[int], coefficient: int, period: int) -> list[Share]:
    """What each value of the `i`-th symbol of the scenario brings to its group."""
    typical = plan.typical[i] if i < len(plan.typical) else None
    first_sampled = len(plan.names) - len(plan.sampled)
    representative = plan.representative[i - first_sampled] if i >= first_sampled else None
    return [
        ((coefficient * v) % period, typical is None or v in typical, representative is None or v == representative)
        for v in values
    ]


def _combined(
    shares: dict[int, list[Share]], order: list[int], period: int
) -> dict[Share, tuple[tuple[int, ...], int]]:
    """The symbols that only move the warp, together: for each combined share (the move
    modulo the period, all typical, all representative), the first values (by index, in the
    walk's order) that give it, and how many combinations do."""
    combined: dict[Share, tuple[tuple[int, ...], int]] = {(0, True, True): ((), 1)}
    for i in order:
        nxt: dict[Share, tuple[tuple[int, ...], int]] = {}
        for (move, typical, rep), (first, times) in combined.items():
            for j, (m, t, r) in enumerate(shares[i]):
                key = ((move + m) % period, typical and t, rep and r)
                at = (*first, j)
                seen = nxt.get(key)
                if seen is None:
                    nxt[key] = (at, times)
                else:
                    nxt[key] = (min(seen[0], at), seen[1] + times)
        combined = nxt
    return combined
