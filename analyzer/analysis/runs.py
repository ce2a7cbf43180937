"""The moved groups of a walk charged as a run, remembered by what decides them.

Where every group of a warp's walk (`groups.py`) keeps the same values of the symbols that do
not only move the warp, the groups after the first are its lanes moved (`costing.charge_moved`):
what they charge depends on the first group's lanes (their distances, the first lane's start
modulo the address period, whether a mask stayed undecided), on the groups and on what the
access's requests cost (`costing.shared_outcomes`). Nothing else: without sampled symbols every
scenario is typical and counted, and a summary counts the charges alike by their outcomes'
values, their active lanes and the undecided mask (`costing.counted_alike`). So the run's
effect on the walk's charges (which charges its groups add to, which they add) is remembered
by those, and a run met again is counted from it, spending the steps the plain run spends: a
step a group, a step a lane for each request new to the access (the requests the run met are
put in the access's table as the plain run puts them, and a summary that has them all spends
no more), and its groups' steps again for each scenario they stand for. C++AMP
BinomialOptions/kernel.cu walks its uniform loads over 512 blocks, 32 groups a walk, 10,408
times (326,916 groups moved one by one).
"""

from __future__ import annotations

from analyzer import budget
from analyzer.analysis import costing
from analyzer.analysis.groups import Group
from analyzer.analysis.memo import remember
from analyzer.analysis.scenarios import Site, WarpPlan
from analyzer.arch import Architecture

__all__ = ["moved_run", "one_class"]


class Run:
    """What a run of moved groups did: the steps it spent but for its requests, the requests
    it met (key and outcome, in order), what it added to the charges before it (by place) and
    the charges it added (combo, outcome, times), and its groups' steps again."""

    __slots__ = ("added", "again", "groups", "met", "new", "shared", "steps")

    def __init__(self, groups: tuple[Group, ...], shared: dict) -> None:
        self.groups = groups  # kept, so that the key's `id` stays theirs
        self.shared = shared
        self.steps = 0
        self.met: tuple[tuple[tuple, costing.Outcome], ...] = ()
        self.added: tuple[int, ...] = ()
        self.new: tuple[tuple[tuple[int, ...], costing.Outcome | None, int], ...] = ()
        self.again = 0


#: Each run, by (its groups, the first group's lanes, the first lane's start modulo the period,
#: its undecided mask, the access's table of requests, whether steps are counted, and the
#: functions a test may replace).
_RUNS: dict[tuple, Run] = {}
#: Whether every group of a walk keeps the same values (`one_class`), by the groups' identity.
_ONE_CLASS: dict[int, tuple[tuple[Group, ...], bool]] = {}


def one_class(groups: tuple[Group, ...]) -> bool:
    """Every group keeps the values of the first (`Group.kept`): the others are its lanes moved."""
    seen = _ONE_CLASS.get(id(groups))
    if seen is None or seen[0] is not groups:
        first = groups[0].kept
        seen = (groups, all(g.kept == first for g in groups))
        remember(_ONE_CLASS, id(groups), seen)
    return seen[1]


def moved_run(
    site: Site,
    plan: WarpPlan,
    groups: tuple[Group, ...],
    first: costing.ScenarioCharge,
    summary: costing.Summary,
    arch: Architecture,
    at: dict[tuple, costing.ScenarioCharge],
    charged: list[costing.ScenarioCharge],
) -> int:
    """Charge `groups[1:]`, the lanes of `first` (the charge of `groups[0]`) moved, into
    `charged` as `costing.charge_scenarios` does one by one; the steps their scenarios but the
    first of each spend again. Remembered (see the module) where nothing is sampled."""
    lanes = first.lanes
    assert lanes is not None and lanes.rel is not None and lanes.ref_value is not None
    meter = budget.current()
    key = (
        id(groups),
        lanes.rel,
        lanes.ref_value % site.address_period,
        lanes.undecided_mask,
        id(summary.shared),
        meter is None,
        costing.counted_alike,
    )
    run = _RUNS.get(key)
    if run is not None and run.groups is groups and run.shared is summary.shared:
        return _replayed(run, first, summary, charged, meter)
    if plan.sampled:
        return _one_by_one(site, plan, groups, first, summary, arch, at, charged)[0]
    run = Run(groups, summary.shared)
    before = [c.times for c in charged]
    left = 0 if meter is None else meter.left
    known = len(summary.outcomes)
    again, moved = _one_by_one(site, plan, groups, first, summary, arch, at, charged)
    met = []
    for charge in moved:
        assert charge.lanes is not None and charge.lanes.ref_value is not None and charge.outcome is not None
        residues = (charge.lanes.ref_value % site.address_period,)
        met.append(((lanes.rel, residues, residues), charge.outcome))
    new_steps = sum(len(k[0]) for k in list(summary.outcomes)[known:])
    run.steps = 0 if meter is None else left - meter.left - new_steps
    run.met = tuple(met)
    run.added = tuple(c.times - t for c, t in zip(charged, before))
    run.new = tuple((c.combo, c.outcome, c.times) for c in charged[len(before) :])
    run.again = again
    remember(_RUNS, key, run)
    return again


def _one_by_one(
    site: Site,
    plan: WarpPlan,
    groups: tuple[Group, ...],
    first: costing.ScenarioCharge,
    summary: costing.Summary,
    arch: Architecture,
    at: dict[tuple, costing.ScenarioCharge],
    charged: list[costing.ScenarioCharge],
) -> tuple[int, list[costing.ScenarioCharge]]:
    """`moved_run` worked out: each group charged moved (`costing.charge_moved`) and counted;
    the steps again, and the groups' charges."""
    seen = (first, groups[0].move)
    again = 0
    moved = []
    for group in groups[1:]:
        charge = costing.charge_moved(site, plan, group.combo, seen, group.move, summary, arch)
        moved.append(charge)
        again += charge.steps * (group.times - 1)
        costing.count_alike(charge, group.times, plan, at, charged)
    return again, moved


def _replayed(
    run: Run,
    first: costing.ScenarioCharge,
    summary: costing.Summary,
    charged: list[costing.ScenarioCharge],
    meter: budget.Meter | None,
) -> int:
    """A remembered run counted into `charged`, spending the steps the plain run spends."""
    if meter is not None:
        meter.spend(run.steps)
        if run not in summary.runs:
            outcomes = summary.outcomes
            for key, outcome in run.met:
                if key not in outcomes:
                    meter.spend(len(key[0]))
                    outcomes[key] = outcome
            summary.runs.add(run)
    else:
        for key, outcome in run.met:
            summary.outcomes.setdefault(key, outcome)
    for c, times in zip(charged, run.added):
        c.times += times
    steps = 0 if meter is None else 1
    for combo, charge, times in run.new:
        charged.append(
            costing.ScenarioCharge(combo, first.undecided_mask, charge, first.active, times=times, steps=steps)
        )
    return run.again
