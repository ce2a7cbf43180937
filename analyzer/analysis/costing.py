"""The cost of one access: every warp's request charged with the hardware model.

`cost_occurrence` resolves an `Occurrence` into a `Site` (its space, the pieces an element
moves in, the address and mask with the launch's values put in), then for each warp of the
block and each scenario of it (`scenarios.py`) charges the lanes' addresses with
analysis.cost, and summarises the worst, best and total requests in an `AccessCost`. What it
cannot decide it states as an `Assumption` (`assumptions.py`).
"""

from __future__ import annotations

import math

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis import walk_keys
from analyzer.analysis.alike import AlikeAccess, alike_access, forget_alike, keep_alike, spend_alike
from analyzer.analysis.assumptions import (
    AddressNotFollowed,
    AlignmentUnknown,
    ArchitectureNote,
    Assumption,
    BlockAssumed,
    BlockUnknown,
    ConditionAssumedTrue,
    CostBounded,
    CostDependsOn,
    IndexFromCall,
    IndexLoaded,
    IndexLoopCarried,
    MayVectorize,
    NoActiveLane,
    RequestsNotCounted,
    SpaceNotCosted,
    SpaceUnknown,
)
from analyzer.analysis.bounds import request_bound
from analyzer.analysis.charged_op import op_that_charges
from analyzer.analysis.cost import (
    GlobalCost,
    SharedCost,
    global_cost,
    shared_cost,
    split_access,
)
from analyzer.analysis.groups import scenario_groups
from analyzer.analysis.loops import TRIP_LOOKUPS, vectorized_iterations
from analyzer.analysis.memo import ClearCounted, remember
from analyzer.analysis.merge import mark_reused
from analyzer.analysis.results import AccessCost, Collision, LaunchConfig, TypicalCost, stride, unit_of
from analyzer.analysis.scenarios import (
    ScenarioLanes,
    Site,
    WarpPlan,
    forget_lanes,
    plan_warp,
    scenario_lanes,
    warp_lanes,
)
from analyzer.analysis.starts import remembered_starts
from analyzer.analysis.symbolic import Origin
from analyzer.analysis.symbolic.expressions import LANE_VARYING_PREFIX
from analyzer.analysis.values import THREAD_SYMBOLS, Occurrence, lane_varying
from analyzer.analysis.verdict import SymbolFacts
from analyzer.analysis.walked_whole import kept, restored, walked_whole
from analyzer.arch import Architecture
from analyzer.ir.nodes import AccessOp, Space
from analyzer.records import field, record, replace

__all__ = ["CASE_VALUES", "Charge", "cost_occurrence"]

#: The values of a single unknown at which `AccessCost.cases` describes the cost.
CASE_VALUES = (1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64)


@record(slots=False)
class Charge:
    """What one request (one piece of an element) costs, with the detail of the cost."""

    per_request: int  # wavefronts or sectors
    ideal: int
    detail: SharedCost | GlobalCost
    addresses: tuple[int | None, ...]  # each lane's byte address


@record(slots=False)
class Outcome:
    """What one request costs over the possible starts of its first lane."""

    charges: tuple[Charge, ...]  # of each start and piece, start by start
    some_start_is_ideal: bool  # some start makes every piece cost no more than ideal
    worst: Charge
    lowest: int
    alignment_matters: bool  # the start changes the cost
    typical_worst: Charge  # the worst over the starts a typical verdict considers (`verdict.py`)
    sums: tuple[int, int]  # the fewest and the most the pieces together cost, over the starts
    # what a summary reads of it but which charges are the worst: alike, counted as one (`counted_alike`)
    alike: tuple = ()


@record(frozen=False, slots=False)
class Summary:
    """What the walk over warps and scenarios has found so far for one access."""

    worst: Charge | None = None
    best: int | None = None
    typical_worst: Charge | None = None  # the worst at the values a typical verdict considers
    requests: int = 0  # over the launch, where every scenario's executions are known
    total_lo: int = 0  # the total over the starts enumerated: the fewest, the most
    total_hi: int = 0
    ideal_total: int = 0  # each request at its ideal: a lower bound whatever the unknowns
    lanes_total: int = 0  # each request at one unit per active lane: an upper bound
    totals_known: bool = True
    uncounted: set[str] = field(default_factory=set)  # why the requests are not counted
    masks_vary: bool = False  # a sampled unknown decides which lanes are active
    exact: bool = True
    undecided_mask: bool = False
    unaligned: bool = False  # the unknown alignment of a warp's first address changed a cost
    ideal_if_aligned: bool = True  # False once a request costs more than ideal at every start
    per_value: dict[int, tuple[int, int]] = field(default_factory=dict)  # one unknown's value -> (worst, ideal)
    depends: set[str] = field(default_factory=set)  # the symbols sampled
    # what requests cost, remembered: by (lane addresses, access bytes), and by (the lanes'
    # addresses relative to the first lane's, the first lane's possible starts)
    charges: dict[tuple, Charge] = field(default_factory=dict)
    outcomes: dict[tuple, Outcome] = field(default_factory=dict)
    # the first lane's possible starts by (the part of its address no scenario assigns, the
    # assigned part modulo the period), with the steps working them out took (`start_residues`)
    starts: dict[tuple, tuple] = field(default_factory=dict)
    # what requests cost by the same key as `outcomes`, shared by the accesses charged alike
    # (`shared_outcomes`): an outcome is the same wherever it is met; it spends its steps anew
    shared: dict[tuple, Outcome] = field(default_factory=dict)
    # the lanes of the scenarios of the warps that agree on what decides them (`lanes_token`)
    lanes: dict[tuple, ScenarioLanes] = field(default_factory=dict)
    lane_tokens: dict[tuple, int] = field(default_factory=dict)
    runs: set = field(default_factory=set)  # the remembered runs whose requests it has all (`runs.py`)
    chain: tuple = ()  # the warps' indices whose walks were made for it, in order (`alike.py`)

    def begin_warp(self, plan: WarpPlan) -> None:
        if plan.sampled:
            self.exact = False
            self.depends.update(plan.sampled)
            self.masks_vary = self.masks_vary or plan.masks_vary
        if not plan.exact_walk:
            self.not_counted("walk")
        if plan.factor is None:
            self.not_counted("loop")
        if plan.block_weight is None:
            self.not_counted("grid")

    def not_counted(self, why: str) -> None:
        self.totals_known = False
        self.uncounted.add(why)

    def add(
        self, outcome: Outcome, plan: WarpPlan, combo: tuple[int, ...], pieces: int, active: int, scenarios: int = 1
    ) -> None:
        """Count one scenario's request (`active` lanes take part), or those of so many
        `scenarios` that charge the same (`groups.py`)."""
        self.ideal_if_aligned = self.ideal_if_aligned and outcome.some_start_is_ideal
        if outcome.alignment_matters:
            self.exact = False  # the cost really depends on the unknown alignment
            self.unaligned = True
        worst = outcome.worst
        if self.worst is None or worst.per_request > self.worst.per_request:
            self.worst = worst
        if plan.one_unknown_at >= 0:  # the cost at each value of the one unknown, for `cases`
            value = combo[plan.one_unknown_at]
            seen = self.per_value.get(value)
            if seen is None or worst.per_request > seen[0]:
                self.per_value[value] = (worst.per_request, worst.ideal)
        self.best = outcome.lowest if self.best is None else min(self.best, outcome.lowest)
        if (
            self.typical_worst is None or outcome.typical_worst.per_request > self.typical_worst.per_request
        ) and plan.is_typical(combo):  # (asked only where it would replace the charge)
            self.typical_worst = outcome.typical_worst
        if plan.factor is not None and plan.block_weight is not None and plan.counted(combo):
            times = plan.factor * plan.block_weight * scenarios
            self.requests += times * pieces
            self.total_lo += times * outcome.sums[0]
            self.total_hi += times * outcome.sums[1]
            first = outcome.charges[:pieces]
            self.ideal_total += times * sum(c.ideal for c in first)
            self.lanes_total += times * sum(max(active, c.ideal) for c in first)


def cost_occurrence(
    occ: Occurrence,
    kernel: str,
    launch: LaunchConfig,
    arch: Architecture,
    known: dict[str, int],
    describe: bool = True,
    facts: SymbolFacts | None = None,
) -> AccessCost:
    """What `occ` costs under `launch`: the worst request over every warp and scenario, the
    best, the worst at typical values (`verdict.py`), and the totals over the launch where
    they are known (else bounds). `facts` restrict the values tried for unknowns."""
    cost, site = resolve_site(occ, kernel, launch, arch, known, facts)
    if site is None:
        return cost
    summary = Summary(shared=shared_outcomes(site, arch))
    decided = walk_key(site, arch)
    whole_key = None if decided is None else (decided, site.block, arch.warp_size, site.launch.grid)
    whole = None if whole_key is None else walked_whole(whole_key, _FILE[0], _WALKS)
    if whole is not None:  # every warp's walk met again, as an access before it met them
        restored(whole, summary)
        return summarise(cost, site, summary, occ, arch, describe)
    clears = _WALKS.clears
    again = 0  # the steps of meeting every warp's walk again (`walked_whole.kept`)
    warps = warp_lanes(site.block, arch.warp_size)
    alike = None if decided is None else alike_access(decided, site, warps, _WALKS)
    for warp, lanes in enumerate(warps):
        budget.spend(len(lanes))  # a warp planned: a step a lane, whose address it works out (analyzer.budget)
        again += len(lanes)
        plan, charged = walk_warp(site, lanes, warp, summary, arch, decided, alike)
        if plan is None:
            continue
        summary.begin_warp(plan)
        for scenario in charged:
            count_scenario(scenario, plan, summary, len(site.pieces))
            again += scenario.times
    if whole_key is not None and _WALKS.clears == clears:  # each warp's walk remembered as made here
        kept(whole_key, again, summary, _FILE[0], clears)
    return summarise(cost, site, summary, occ, arch, describe)


@record(frozen=False)  # made per scenario: set without `object.__setattr__`, and never hashed
class ScenarioCharge:
    """What one scenario of a warp's walk found (`charge_scenario`), to be counted in a summary."""

    combo: tuple[int, ...]
    undecided_mask: bool  # some lane's mask was not decided (and taken as true)
    outcome: Outcome | None  # None: a lane's address is not a number, or no lane is active
    active: int  # the lanes that take part
    times: int = 1  # the scenarios it stands for (`groups.py`)
    steps: int = 0  # the budget steps it took but for charging the request (spent again for each of `times`)
    lanes: ScenarioLanes | None = field(default=None, compare=False)  # where the request was charged
    # where the first lane's address is no number: the moves of it that keep its starts and
    # these `steps` (a multiple of this; 0: none known, `starts.remembered_starts`)
    kept_by_moves: int = field(default=0, compare=False)


WarpWalk = tuple[WarpPlan | None, tuple[ScenarioCharge, ...]]

#: Each warp's walk, remembered by what decides it (`walk_key`, the lanes): the launch configurations of
#: one kernel share their full warps (a kernel launched with 1,000 block sizes walked the same
#: warps 16,000 times, 45 million steps; now each distinct warp once and the rest counted again).
#: With the walk: the steps making it took, the file it was last met in (`new_file`), and the
#: scenarios its charges stand for (a walk met again spends a step for each; summed once, not at
#: each of myocyte/main.cu's 29,011 walks met again).
_WALKS: ClearCounted = ClearCounted()  # (whose emptying `walked_whole` reads)
#: Each walk whose key reads an unknown, by the key's twin (`walk_keys.twin`) and the lanes:
#: a twin's walk is taken as one made in another file, for what making it took (`twins.py`).
_TWIN_WALKS: ClearCounted = ClearCounted()  # (whose emptying `walked_whole` reads)
#: The file being analysed, numbered (`new_file`): a walk made or met in another file costs
#: what making it took the first time it is met in this one.
_FILE = [0]


def new_file() -> None:
    """A file's analysis begins (`api._analyze_kernels`): the walks remembered so far were made
    for other files. A walk costs each file what it would cost the file checked alone (the
    five corpora in one process: 29,087 walks met from another file, 142,270 from their own,
    43,016 made), so that a walk met from the files checked before it in the process (which
    `-j` decides) does not make a file cheaper; nor do the lanes put in for them, whose memos
    are emptied (`scenarios.forget_lanes`)."""
    _FILE[0] += 1
    forget_lanes()
    forget_alike()


def walk_key(site: Site, arch: Architecture) -> walk_keys.WalkKey | None:
    """`walk_keys.walk_key` with the cost model's functions this module charges with (a test
    that replaces one must not meet walks charged by the other)."""
    return walk_keys.walk_key(site, arch, (shared_cost, global_cost))


def walk_warp(
    site: Site,
    lanes: tuple,
    warp: int,
    summary: Summary,
    arch: Architecture,
    decided: walk_keys.WalkKey | None,
    alike: AlikeAccess | None = None,
) -> WarpWalk:
    """The plan of one warp's walk and what each of its scenarios charges; remembered by the
    site's `walk_key` (`decided`) and the warp's thread indices that the site reads: a walk
    seen before costs a step a scenario and has its blocks counted anew. The warps of a block
    that differ only in indices the access does not read walk alike (threadFenceReduction.cu's
    32 x 4 x 4 blocks: 4,624 plans -> 860; C++AMP BinomialOptions 2.44 -> 1.24 s of CPU)."""
    key = None if decided is None else (decided, walk_keys.read_indices(lanes, decided.index_reads))
    seen = _WALKS.get(key) if key is not None else None
    twin = None
    if seen is None and decided is not None:  # made for the same access of another instance?
        twin = walk_keys.twin(decided, site)
        if twin is not None:
            seen = _TWIN_WALKS.get((twin, key[1]))  # type: ignore[index]  # key is made with decided
    if seen is None and alike is not None and alike.walks is not None:  # a loop replayed's (`alike.py`)
        taken = alike.walks[warp]
        if taken is not None and key is not None:
            steps = spend_alike(taken, site)
            summary.chain += (key[1],)
            remember(_WALKS, key, (taken.walk, steps, _FILE[0], sum(c.times for c in taken.walk[1])))
            return _for_grid(taken.walk, site, decided)  # type: ignore[arg-type]  # key is made with decided
    if seen is not None and key is not None and decided is not None:
        (plan, charged), steps, made_in, times = seen
        if made_in == _FILE[0]:
            budget.spend(times)  # scenarios counted again (analyzer.budget)
        else:  # first met in this file: what making it took (`new_file`)
            budget.spend(steps)
            _WALKS[key] = ((plan, charged), steps, _FILE[0], times)
        return _for_grid((plan, charged), site, decided)
    meter = budget.current()
    before = 0 if meter is None else meter.left
    listed = alike is not None and alike.walks is None and key is not None
    if listed:
        TRIP_LOOKUPS.append([])  # the trip counts the walk looks up (`alike.keep_alike`)
    try:
        plan = plan_warp(site, lanes, (site.block, arch.warp_size, warp))
        charged = () if plan is None else charge_scenarios(site, plan, summary, arch)
    finally:
        lookups = TRIP_LOOKUPS.pop() if listed else []
    if key is not None:
        made = ((plan, charged), 0 if meter is None else before - meter.left, _FILE[0], sum(c.times for c in charged))
        remember(_WALKS, key, made)
        if twin is not None:  # met from a twin: never "this file"
            remember(_TWIN_WALKS, (twin, key[1]), (made[0], made[1], -1, made[3]))
        if listed:
            keep_alike(alike.key, summary.chain, key[1], made[0], made[1], site, lookups)  # type: ignore[union-attr]
            summary.chain += (key[1],)
    return plan, charged


def _for_grid(walk: WarpWalk, site: Site, decided: walk_keys.WalkKey) -> WarpWalk:
    """A remembered walk for the site's grid: its plan reweighed where it was made for another
    (a block index not read: the key holds only whether the grid is known)."""
    plan, charged = walk
    grid = site.launch.grid
    if plan is None or decided.grid == grid:  # made for this grid (a block index is read)
        return plan, charged
    return reweighed(plan, None if grid is None else math.prod(grid)), charged


#: A remembered walk's plan with another grid's blocks per scenario (`reweighed`), by the plan's
#: identity and the weight, with the plan (which keeps its identity its own).
_REWEIGHED: dict[tuple[int, int | None], tuple[WarpPlan, WarpPlan]] = {}


def reweighed(plan: WarpPlan, weight: int | None) -> WarpPlan:
    """`plan` with `block_weight` set to `weight`, made once per plan and weight: a walk is
    remembered for one grid and met under others, its plan the same but for the blocks each
    scenario stands for. Why: C++AMP BinomialOptions/kernel.cu meets 36,448 walks so, and
    copying the plan's 20 fields at each was 7% of its check (py-spy)."""
    key = (id(plan), weight)
    seen = _REWEIGHED.get(key)
    if seen is not None and seen[0] is plan:
        return seen[1]
    made = replace(plan, block_weight=weight)
    remember(_REWEIGHED, key, (plan, made))
    return made


def charge_scenarios(site: Site, plan: WarpPlan, summary: Summary, arch: Architecture) -> tuple[ScenarioCharge, ...]:
    """What each scenario of the plan charges; scenarios that charge the same (`groups.py`)
    charged once, each of the others spending the steps it would have taken (analyzer.budget);
    the groups that a summary counts alike (`counted_alike`) given as one, where the first of
    them was met (BinomialOptions/kernel.cu: 349,004 groups charged, 36,452 counted instead of
    364,300)."""
    if not plan.names:  # one scenario that assigns nothing: `charged_one_by_one`'s, in a call
        return (charge_scenario(site, plan, (), summary, arch),)  # (myocyte: 26,902 -> 230 loops)
    groups = scenario_groups(plan, site.address_period, site.facts)
    if groups is None:
        return charged_one_by_one(site, plan, summary, arch)
    charged: list[ScenarioCharge] = []
    at: dict[tuple, ScenarioCharge] = {}  # the first charge of the groups counted alike
    # the charge of the first group with the same values of the symbols that do not only move
    # the warp, and its move: the others' lanes are its lanes moved, without evaluating them again
    lanes_by_kept: dict[tuple[int, ...], tuple[ScenarioCharge, int]] = {}
    from analyzer.analysis.runs import moved_run, one_class  # (runs.py reads this module)

    # where the first lane's address is no number: the charge of the first group with the same
    # values of the others, its move, and the moves that keep its starts (`remembered_starts`)
    starts_by_kept: dict[tuple[int, ...], tuple[ScenarioCharge, int, int]] = {}
    shared = lanes_token(plan, summary)
    again = 0  # the steps of the scenarios each group stands for but its first (spent at the end)
    for n, group in enumerate(groups):
        seen = lanes_by_kept.get(group.kept)
        if seen is not None and n == 1 and one_class(groups):  # the rest moved from the first, as a run
            budget.spend(again + moved_run(site, plan, groups, seen[0], summary, arch, at, charged))
            return tuple(charged)
        alike = starts_by_kept.get(group.kept) if seen is None else None
        if seen is not None:
            first = charge_moved(site, plan, group.combo, seen, group.move, summary, arch)
        elif alike is not None and (group.move - alike[1]) % alike[2] == 0:
            if counted_again(alike[0], group.combo, group.times, plan, at):
                budget.spend(alike[0].steps)  # `charged_again`'s, then the others' as below
                again += alike[0].steps * (group.times - 1)
                continue
            first = charged_again(alike[0], group.combo)
        else:
            first = charge_scenario(site, plan, group.combo, summary, arch, shared=shared)
            if first.lanes is not None and first.lanes.ref_value is not None and first.lanes.rel is not None:
                lanes_by_kept[group.kept] = (first, group.move)
            elif first.kept_by_moves:
                starts_by_kept[group.kept] = (first, group.move, first.kept_by_moves)
        again += first.steps * (group.times - 1)
        count_alike(first, group.times, plan, at, charged)
    budget.spend(again)
    return tuple(charged)


def charged_again(first: ScenarioCharge, combo: tuple[int, ...]) -> ScenarioCharge:
    """`charge_scenario` of the scenario `combo`, whose group differs from that of `first` only
    in symbols that move the warp by a move that keeps the starts (`ScenarioCharge.kept_by_moves`),
    where the first lane's address is no number: the same lanes (the groups' lane expressions
    do not read those symbols), the same starts, so the same outcome, found in the steps
    `first` took (the same substitution's, `remembered_starts`), spent here.
    myocyte/main.cu, kernel `solver_2`: 17 walks of 2,048 groups (91 trips of a counter moving
    the address by 4 bytes under an unknown block index, times 64 values of `xmax`) charged 64
    groups each, the others charged again (the check under callgrind, 2026-11-28: 13.36 G ->
    10.44 G instructions)."""
    budget.spend(first.steps)
    return ScenarioCharge(
        combo, first.undecided_mask, first.outcome, first.active, steps=first.steps, kept_by_moves=first.kept_by_moves
    )


def counted_again(
    first: ScenarioCharge, combo: tuple[int, ...], times: int, plan: WarpPlan, at: dict[tuple, ScenarioCharge]
) -> bool:
    """`charged_again(first, combo)` counted by `count_alike` as standing for `times` groups,
    where a charge met before is counted alike with it (in `at`): that charge's `times` grow,
    and no charge is made (the caller spends the steps). False where none is: it is to be
    made. myocyte/main.cu: 33,728 groups charged again, most counted alike with one before
    (its check under callgrind, 2026-11-29, 8.70 G -> 8.53 G instructions)."""
    key: tuple
    if plan.sampled:
        key = (
            None if first.outcome is None else first.outcome.alike,
            first.undecided_mask,
            first.active,
            combo[len(plan.names) - len(plan.sampled) :],
        )
    else:
        key = (None if first.outcome is None else first.outcome.alike, first.undecided_mask, first.active)
    alike = at.get(key)
    if alike is None:
        return False
    alike.times += times
    return True


def count_alike(
    scenario: ScenarioCharge, times: int, plan: WarpPlan, at: dict[tuple, ScenarioCharge], charged: list[ScenarioCharge]
) -> None:
    """Add `scenario`, standing for `times` scenarios, to `charged`; or, where a summary counts
    it alike (`counted_alike`) with a charge met before (in `at`, by that key), to that one's
    `times` (a charge is made per scenario, and only its walk counts it)."""
    key = counted_alike(scenario, plan)
    alike = at.get(key)
    if alike is None:
        scenario.times = times
        at[key] = scenario
        charged.append(scenario)
    else:
        alike.times += times


#: What stands for a lane expression that no scenario makes a number (`lanes_token`).
_UNDECIDED = "undecided"


def lanes_token(plan: WarpPlan, summary: Summary) -> int | None:
    """A number for what decides the plan's lanes in a scenario where its first lane's address
    is no number in any (the lane expressions a scenario can make a number, the others only
    as undecided, and the names): the warps of an access that agree on it have the same lanes
    in each scenario (`remembered_lanes`). None where the first lane's address can be a number."""
    names = frozenset(plan.names)
    if plan.evaluate is None or plan.ref.free_symbols <= names:
        return None
    key = (
        plan.names,
        tuple(e if e is None or e.free_symbols <= names else _UNDECIDED for e in plan.lane_exprs[:-1]),
    )
    return summary.lane_tokens.setdefault(key, len(summary.lane_tokens))


def remembered_lanes(plan: WarpPlan, combo: tuple[int, ...], shared: int, summary: Summary) -> ScenarioLanes:
    """`scenario_lanes(plan, combo)`, remembered for the warps of the access that share the
    token `shared` (`lanes_token`) where working them out took no step. Mandelbrot_cuda.cu:
    23,040 evaluations, 2,880 of them different; myocyte/main.cu: 300,932, 60,506 (7.4 -> 4.4 s
    of CPU with the fast exit)."""
    key = (shared, combo)
    lanes = summary.lanes.get(key)
    if lanes is None:
        meter = budget.current()
        before = 0 if meter is None else meter.left
        lanes = scenario_lanes(plan, combo)
        if meter is None or meter.left == before:
            summary.lanes[key] = lanes
    return lanes


def charged_one_by_one(site: Site, plan: WarpPlan, summary: Summary, arch: Architecture) -> tuple[ScenarioCharge, ...]:
    """What each scenario of the plan charges, scenario by scenario, each spending its steps;
    the scenarios that a summary counts alike (`counted_alike`) given as one, with how many
    they are, where the first of them was met (Mandelbrot_cuda.cu: 512 scenarios a warp, 64
    charges)."""
    at: dict[tuple, ScenarioCharge] = {}  # the first charge of the scenarios counted alike
    charged: list[ScenarioCharge] = []
    shared = lanes_token(plan, summary)
    if shared is None and plan.pick is not None and plan.evaluate is not None:
        return charged_picked(site, plan, summary, arch)
    for combo in plan.scenarios():
        count_alike(charge_scenario(site, plan, combo, summary, arch, shared=shared), 1, plan, at, charged)
    return tuple(charged)


def charged_picked(site: Site, plan: WarpPlan, summary: Summary, arch: Architecture) -> tuple[ScenarioCharge, ...]:
    """`charged_one_by_one` of a plan whose lanes are compiled and picked in one call
    (`scenarios.scenario_lanes`' first way), with `charge_scenario` and `count_alike` written
    out for it: the same charges, times and steps, and a scenario counted alike with one
    before it makes no record. A scenario the compiled call cannot charge (a division by
    zero, a first lane's address that is no number) is charged by `charge_scenario`.
    hotspot.cu (Rodinia): 49,826 scenarios, 48 plans; the scenario took about 18 us in four
    calls, two records and their look-ups."""
    at: dict[tuple, ScenarioCharge] = {}
    charged: list[ScenarioCharge] = []
    evaluate = plan.evaluate
    assert evaluate is not None and plan.pick is not None
    pick, undecided = plan.pick
    period = site.address_period
    outcomes = summary.outcomes
    sampled_from = len(plan.names) - len(plan.sampled) if plan.sampled else -1
    meter = budget.current()
    steps = 0 if meter is None else 1  # a request costed (`charge_scenario`'s first step)
    for combo in plan.scenarios():
        if meter is not None:  # `budget.spend()` written out, as `charge_scenario` does
            before = meter.left
            meter.left = before - 1
            if before < 1:
                raise budget.BudgetExceeded(meter.stage, meter.limit)
        try:
            values = evaluate(*combo)
            rel = pick(values)
            ref_value = values[-1]
        except (ZeroDivisionError, ValueError):
            ref_value = None
        if ref_value is None:  # `charge_scenario` charges it, spending its step itself
            if meter is not None:
                meter.left += 1
            count_alike(charge_scenario(site, plan, combo, summary, arch), 1, plan, at, charged)
            continue
        n_rel = len(rel)
        active = n_rel - rel.count(None)
        if active:
            residues = (ref_value % period,)
            outcome = outcomes.get((rel, residues, residues))
            if outcome is None:
                outcome = outcome_of(rel, residues, residues, site, summary, arch)
            alike = outcome.alike
        else:  # no lane active: nothing charged (`charge_scenario`'s `active` -1)
            outcome, active, alike = None, -1, None
        key = (alike, undecided, active) if sampled_from < 0 else (alike, undecided, active, combo[sampled_from:])
        first = at.get(key)  # `counted_alike`'s key, as `count_alike` looks it up
        if first is not None:
            first.times += 1
            continue
        lanes = None if outcome is None else ScenarioLanes(rel, ref_value, None, undecided)
        scenario = ScenarioCharge(combo, undecided, outcome, active, steps=steps, lanes=lanes)
        at[key] = scenario
        charged.append(scenario)
    return tuple(charged)


def counted_alike(scenario: ScenarioCharge, plan: WarpPlan) -> tuple:
    """What a summary reads of a scenario's charge (`Summary.add`, `count_scenario`), or more:
    two scenarios with the same are counted as one standing for both, met where the first
    was (the second's worst and typical charges, no more than the first's, would replace no
    charge met in between). The sampled symbols' values decide whether a scenario is
    typical, counted, and its value of the one unknown (`WarpPlan.is_typical`, `counted`,
    `one_unknown_at`). By the outcome's values, not the object: BinomialOptions/kernel.cu's
    groups each start at another residue, an outcome each (2.74 -> 2.58 s of CPU, the least
    of three runs, with `thread_indices` remembered)."""
    outcome = scenario.outcome
    if not plan.sampled:  # every scenario typical and counted, and no unknown's value kept
        return (None if outcome is None else outcome.alike, scenario.undecided_mask, scenario.active)
    # whether it is typical is the sampled values' (`WarpPlan.typical` holds None before them):
    # not asked again (five corpora: 525,802 asks, 2.2 s of 404 profiled; myocyte 231,589 -> 3,562)
    return (
        None if outcome is None else outcome.alike,
        scenario.undecided_mask,
        scenario.active,
        scenario.combo[len(plan.names) - len(plan.sampled) :],
    )


def moved_lanes(lanes: ScenarioLanes, move: int, to: int) -> ScenarioLanes | None:
    """The lanes of a scenario whose symbols that only move the warp move it by `to` bytes,
    from `lanes`, those of one moved by `move` with the same values of the others; None: to
    be evaluated (the lanes' distances and masks read no symbol that only moves the warp, and
    the first lane's address reads each as a plain term: only that address changes)."""
    assert lanes.ref_value is not None
    return ScenarioLanes(lanes.rel, lanes.ref_value + to - move, None, lanes.undecided_mask)


def resolve_site(
    occ: Occurrence,
    kernel: str,
    launch: LaunchConfig,
    arch: Architecture,
    known: dict[str, int],
    facts: SymbolFacts | None = None,
) -> tuple[AccessCost, Site | None]:
    """The cost record of `occ`, and the `Site` to walk; no site (and the cost says why) when
    the access is not in a costed space, its address is not followed or depends on data,
    or the block is not known."""
    access = occ.access
    ptr = occ.ptr
    space = Space(ptr.space if ptr is not None and ptr.space != Space.UNKNOWN else access.space)
    size = access.element.size or 0
    cost = AccessCost(
        access,
        kernel,
        space,
        AccessOp(access.op),
        size,
        size,
        1,
        unit_of(space, arch),
        None,
        None,
        via=occ.via,
        struct_type=occ.struct_type,
    )
    if launch.assumed:
        cost.assumptions.append(BlockAssumed(launch.origin))
    if space in (Space.SHARED, Space.GLOBAL):  # what the architecture's table cannot express
        cost.assumptions += [ArchitectureNote(arch.name, note) for note in arch.notes]
    if space not in (Space.SHARED, Space.GLOBAL):
        cost.exact = False
        cost.assumptions.append(SpaceNotCosted(space) if space in (Space.LOCAL, Space.CONSTANT) else SpaceUnknown())
        return cost, None
    if ptr is None or not size:
        cost.exact = False
        cost.assumptions.append(AddressNotFollowed())
        return cost, None
    pieces = split_access(size, access.element.align or 1, arch)
    cost.pieces = len(pieces)
    cost.bytes = pieces[0][1]
    offset = ptr.offset.subs(known) if known else ptr.offset
    affine = S.affine_in(offset, THREAD_SYMBOLS)
    if S.is_unknown(offset) and (affine is None or S.is_unknown(offset - affine[1]) or lane_varying(offset)):
        # an unknown uniform part of the address (a value read once per warp) is harmless;
        # an unknown that differs between lanes is data-dependent
        cost.exact = False
        cost.data_dependent = True
        cost.assumptions.append(data_dependence(offset))
        if launch.block is not None:
            bound_cost(cost, space, occ.region_bytes, launch.block, arch)
        return cost, None
    if launch.block is None:
        cost.exact = False
        cost.assumptions.append(BlockUnknown())
        return cost, None
    mask = occ.mask.subs(known) if known else occ.mask
    site = Site(
        offset, affine, mask, occ.loops, launch, launch.block, known, space, pieces, arch.address_period, facts, cost.op
    )
    return cost, site


def data_dependence(offset: S.Expr) -> Assumption:
    """Why an address is data-dependent: a call not followed, a loop not followed, or a load."""
    varying = [u for u in S.unknowns(offset) if u.lane_varying] or list(S.unknowns(offset))
    call = next((u for u in varying if u.origin == Origin.CALL_RESULT), None)
    if call is not None:
        return IndexFromCall(call.tag.removeprefix(LANE_VARYING_PREFIX))
    loop_carried = any(u.origin == Origin.LOOP_CARRIED for u in S.unknowns(offset))
    return IndexLoopCarried() if loop_carried else IndexLoaded()


def bound_cost(
    cost: AccessCost, space: Space, region_bytes: int | None, block: tuple[int, int, int], arch: Architecture
) -> None:
    """Give a data-dependent access the most one request can cost (`bounds.request_bound`) as its
    `per_request`, marked as a bound."""
    b = request_bound(space, cost.bytes, region_bytes, block, arch)
    cost.per_request, cost.ideal_per_request = b.bound, b.ideal
    cost.assumptions.append(CostBounded(space, b.lanes, b.words_per_bank))


def charge_scenario(
    site: Site,
    plan: WarpPlan,
    combo: tuple[int, ...],
    summary: Summary,
    arch: Architecture,
    lanes: ScenarioLanes | None = None,
    shared: int | None = None,
) -> ScenarioCharge:
    """Charge the warp's request in one scenario (`summary` remembers what requests cost),
    with the steps it took but for charging the request (a scenario that charges the same
    takes as many: `charge_scenarios`). `lanes`: the scenario's lanes where they are known
    (evaluated, they take no step); `shared`: the token of the warps that share them
    (`lanes_token`)."""
    meter = budget.current()
    before = 0
    if meter is not None:  # a request costed: `budget.spend()` written out, as this runs per scenario
        before = meter.left
        meter.left = before - 1
        if before < 1:
            raise budget.BudgetExceeded(meter.stage, meter.limit)
    if lanes is None:
        lanes = scenario_lanes(plan, combo) if shared is None else remembered_lanes(plan, combo, shared, summary)
    rel = lanes.rel
    if rel is None:
        steps = 0 if meter is None else before - meter.left
        return ScenarioCharge(combo, lanes.undecided_mask, None, 0, steps=steps)
    n_rel = len(rel)
    off = rel.count(None)
    if off == n_rel:
        steps = 0 if meter is None else before - meter.left
        return ScenarioCharge(combo, lanes.undecided_mask, None, -1, steps=steps)
    ref_value = lanes.ref_value
    if ref_value is not None:  # the common case, without a call
        residues: tuple[int, ...] = (ref_value % site.address_period,)
        typical = residues
        kept = 0  # (a move of a number's start changes it: `charge_moved` moves such lanes)
    else:
        if meter is not None:  # the first lane's address worked out symbolically (`budget.spend`)
            meter.left -= len(plan.present)
            if meter.left < 0:
                raise budget.BudgetExceeded(meter.stage, meter.limit)
        residues, typical, kept = remembered_starts(site, plan, combo, lanes, arch, summary.starts)
    steps = 0 if meter is None else before - meter.left
    outcome = outcome_of(rel, residues, typical, site, summary, arch)
    return ScenarioCharge(
        combo, lanes.undecided_mask, outcome, n_rel - off, steps=steps, lanes=lanes, kept_by_moves=kept
    )


def outcome_of(
    rel: tuple[int | None, ...],
    residues: tuple[int, ...],
    typical: tuple[int, ...],
    site: Site,
    summary: Summary,
    arch: Architecture,
) -> Outcome:
    """What the request of the lanes `rel` costs from `residues` (`charge_request`), remembered
    in `summary` (a request new to the access spends a step a lane) and in its shared table."""
    key = (rel, residues, typical)
    outcome = summary.outcomes.get(key)
    if outcome is None:
        budget.spend(len(rel))  # a request charged lane by lane (analyzer.budget)
        outcome = summary.shared.get(key)
        if outcome is None:
            outcome = charge_request(rel, residues, typical, site, arch, summary.charges)
            remember(summary.shared, key, outcome)
        summary.outcomes[key] = outcome
    return outcome


def charge_moved(
    site: Site,
    plan: WarpPlan,
    combo: tuple[int, ...],
    seen: tuple[ScenarioCharge, int],
    to: int,
    summary: Summary,
    arch: Architecture,
) -> ScenarioCharge:
    """`charge_scenario` of a scenario whose lanes are those of `seen` (the charge of the first
    group with the same values of the symbols that do not only move the warp, and its move)
    moved by `to` (`moved_lanes`): the same distances and masks, so the same active lanes,
    in a step. BinomialOptions/kernel.cu moves 326,916 groups (2.58 -> 2.32 s of CPU, least of 3)."""
    first, move = seen
    assert first.lanes is not None and first.lanes.rel is not None and first.lanes.ref_value is not None
    lanes = moved_lanes(first.lanes, move, to)
    if lanes is None:  # the short cut switched off (a test)
        return charge_scenario(site, plan, combo, summary, arch)
    budget.spend(1)  # a request costed, as in `charge_scenario`
    steps = 0 if budget.current() is None else 1
    assert lanes.ref_value is not None
    residues = (lanes.ref_value % site.address_period,)
    outcome = outcome_of(first.lanes.rel, residues, residues, site, summary, arch)
    return ScenarioCharge(combo, lanes.undecided_mask, outcome, first.active, steps=steps, lanes=lanes)


#: What requests cost (`charge_request`), by what decides it but the lanes and starts: the
#: pieces of an element, the space, the operation and the architecture. Mandelbrot_cuda.cu's
#: 97 accesses charged 15,480 requests, each access its own, 3,268 of them different (1.5 s
#: of CPU instead of 2.0).
_OUTCOMES: dict[tuple, dict[tuple, Outcome]] = {}


def shared_outcomes(site: Site, arch: Architecture) -> dict[tuple, Outcome]:
    """The table of what requests cost that the accesses charged as `site` share (`_OUTCOMES`)."""
    models = (shared_cost, global_cost)  # a test may replace a cost model
    key = (site.pieces, site.space, op_that_charges(site.space, site.op, arch, models), arch, *models)
    table = _OUTCOMES.get(key)
    if table is None:
        table = {}
        remember(_OUTCOMES, key, table)
    return table


def count_scenario(scenario: ScenarioCharge, plan: WarpPlan, summary: Summary, pieces: int) -> None:
    """Count one scenario's charge in `summary` (an address that is not a number, `active` 0,
    makes the cost inexact; no active lane, `active` -1, costs nothing)."""
    summary.undecided_mask = summary.undecided_mask or scenario.undecided_mask
    if scenario.outcome is None:
        if scenario.active == 0:
            summary.exact = False  # a lane's address is not a number here
        return
    summary.add(scenario.outcome, plan, scenario.combo, pieces, scenario.active, scenario.times)


def charge_request(
    lane_rel: tuple[int | None, ...],
    residues: tuple[int, ...],
    typical: tuple[int, ...],
    site: Site,
    arch: Architecture,
    known: dict[tuple, Charge],
) -> Outcome:
    """What one request costs, given each active lane's address relative to the first lane and
    the possible starts of the first lane (`start_residues`; `typical`: those a typical
    verdict considers): the charges of each start and piece, whether some start costs no more
    than ideal, the worst and the lowest charge, whether the start changes the cost, the worst
    at a typical start, and the fewest and most the pieces cost together. `known` remembers
    each piece's charge."""
    charges = []
    some_start_is_ideal = False
    typical_charges = []
    sums = []
    for r in residues:
        ideal_here = True
        for poff, psize in site.pieces:
            addrs = tuple(None if x is None else r + x + poff for x in lane_rel)
            key = (addrs, psize)
            ch = known.get(key)
            if ch is None:
                ch = known[key] = charge(addrs, psize, site.space, arch, site.op)
            charges.append(ch)
            if r in typical:
                typical_charges.append(ch)
            ideal_here = ideal_here and ch.per_request <= ch.ideal
        some_start_is_ideal = some_start_is_ideal or ideal_here
        sums.append(sum(c.per_request for c in charges[-len(site.pieces) :]))
    alignment_matters = len(residues) > 1 and len({c.per_request for c in charges}) > 1
    worst = max(charges, key=lambda c: c.per_request)
    lowest = min(c.per_request for c in charges)
    typical_worst = max(typical_charges or charges, key=lambda c: c.per_request)
    span = (min(sums), max(sums))
    first_ideals = tuple(c.ideal for c in charges[: len(site.pieces)])
    ends = (worst.per_request, worst.ideal, lowest, typical_worst.per_request, typical_worst.ideal)
    alike = (some_start_is_ideal, alignment_matters, ends, span, first_ideals)
    return Outcome(tuple(charges), some_start_is_ideal, worst, lowest, alignment_matters, typical_worst, span, alike)


def charge(
    addresses: tuple[int | None, ...], size: int, space: Space, arch: Architecture, op: AccessOp = AccessOp.LOAD
) -> Charge:
    """One request of `size`-byte lanes at `addresses`, in wavefronts (shared) or sectors
    (transactions on the seed generations, where a load and a store may differ: `op`)."""
    if space == Space.SHARED:
        c = shared_cost(addresses, size, arch)
        return Charge(c.wavefronts, c.ideal, c, addresses)
    g = global_cost(addresses, size, arch, op)
    return Charge(g.sectors, g.ideal, g, addresses)


# ----------------------------------------------------------------------------- the summary
def summarise(
    cost: AccessCost, site: Site, summary: Summary, occ: Occurrence, arch: Architecture, describe: bool
) -> AccessCost:
    """Fill `cost` from what the walk found, and say what was assumed."""
    launch = site.launch
    worst = summary.worst
    if worst is None:
        cost.exact = summary.exact and not summary.undecided_mask
        cost.assumptions.append(NoActiveLane())
        cost.per_request = 0
        cost.ideal_per_request = 0
        cost.requests = 0 if summary.totals_known else None
        cost.total = cost.requests
        return cost
    if summary.undecided_mask:
        summary.exact = False
        cost.assumptions.append(ConditionAssumedTrue())
    cost.only_alignment = summary.unaligned and summary.ideal_if_aligned and worst.per_request > worst.ideal
    if summary.unaligned:
        cost.assumptions.append(AlignmentUnknown())
    depends = tuple(sorted(summary.depends))
    if depends:
        origins = tuple((name, where) for name, where in launch.unknowns if name in depends)
        cost.assumptions.append(CostDependsOn(depends, origins))
    cost.per_request = worst.per_request
    cost.ideal_per_request = worst.ideal
    cost.best_per_request = summary.best
    cost.exact = summary.exact and not launch.assumed
    cost.lane_addresses = worst.addresses
    cost.stride_bytes = addresses_stride(worst.addresses)
    cost.depends_on = depends
    cost.collisions = collisions(worst)
    cost.typical = typical_cost(summary.typical_worst, worst)
    count_totals(cost, summary, bool(depends))
    if occ.reuses is not None:
        mark_reused(cost, occ.reuses)
    if site.space == Space.SHARED and cost.op == AccessOp.LOAD and cost.exact:
        size = occ.access.element.size or 0
        merged = vectorized_iterations(site.offset, occ.loops, site.known, size, arch)
        if merged is not None:
            cost.exact = False
            cost.assumptions.append(MayVectorize(merged, arch.max_access_bytes))
    if len(depends) == 1 and describe:
        name = depends[0]
        if all(v in summary.per_value for v in CASE_VALUES):  # seen while sampling: no second pass
            cost.cases = cases_text(dict(sorted(summary.per_value.items())), name, str(cost.unit))
        else:
            cost.cases = describe_cases(occ, cost.kernel, launch, arch, site.known, name)
    return cost


#: `results.stride` of a request's lane addresses, by the addresses: the accesses whose worst
#: requests are alike share them (myocyte/main.cu: 3,864 accesses, a generator over 32 lanes
#: each; under callgrind, 2026-11-29, 8.33 G -> 8.14 G instructions).
_STRIDES: dict[tuple[int | None, ...], int | None] = {}


def addresses_stride(addresses: tuple[int | None, ...]) -> int | None:
    """`stride(addresses)`, remembered (`_STRIDES`)."""
    done = _STRIDES.get(addresses, _NO_STRIDE)
    if done is _NO_STRIDE:
        done = stride(addresses)
        remember(_STRIDES, addresses, done)
    return done  # type: ignore[return-value]


_NO_STRIDE = object()


def collisions(charge: Charge) -> tuple[Collision, ...]:
    """The colliding lanes of a shared request (none for a global one)."""
    if isinstance(charge.detail, SharedCost):
        return tuple(Collision(c.bank, c.lanes, c.words) for c in charge.detail.worst)
    return ()


def typical_cost(typical: Charge | None, worst: Charge) -> TypicalCost | None:
    """The worst request at typical values, where it is not `worst` (no typical scenario had
    an active lane: nothing to charge, 0)."""
    if typical is None:
        return TypicalCost(0, 0, (), None, ())
    if typical.per_request == worst.per_request and typical.ideal == worst.ideal:
        return None
    return TypicalCost(
        typical.per_request, typical.ideal, typical.addresses, addresses_stride(typical.addresses), collisions(typical)
    )


def count_totals(cost: AccessCost, summary: Summary, depends: bool) -> None:
    """`requests` and `total` where they are exact; else the bounds that hold, and the reason.
    Starts enumerated (the alignment unknown) are every case: their fewest and most are
    exact bounds. Sampled unknowns are not every value: the bounds are each request at its
    ideal and at one unit per active lane (a sector per lane, or a wavefront per lane). A
    condition not decided (taken as true) bounds the requests by none and by those counted."""
    if not summary.totals_known:
        cost.assumptions.append(RequestsNotCounted(tuple(sorted(summary.uncounted))))
        return
    if depends and summary.masks_vary:
        return  # the reason is stated: an unknown decides which lanes are active
    if summary.undecided_mask:  # the reason is stated: counted with the condition taken as true
        cost.requests_min, cost.requests_max = 0, summary.requests
        cost.total_min, cost.total_max = 0, summary.lanes_total
        return
    cost.requests = summary.requests
    if depends:
        cost.total_min, cost.total_max = summary.ideal_total, summary.lanes_total
    elif summary.total_lo == summary.total_hi:
        cost.total = summary.total_lo
    else:
        cost.total_min, cost.total_max = summary.total_lo, summary.total_hi


def describe_cases(
    occ: Occurrence, kernel: str, launch: LaunchConfig, arch: Architecture, known: dict[str, int], name: str
) -> str | None:
    """How the cost depends on the one unknown `name`, from costing the access again at each
    of `CASE_VALUES`; None when a cost is not known there."""
    costs: dict[int, tuple[int, int]] = {}
    for v in CASE_VALUES:
        c = cost_occurrence(occ, kernel, launch, arch, {**known, name: v}, describe=False)
        if c.per_request is None or c.ideal_per_request is None:
            return None
        costs[v] = (c.per_request, c.ideal_per_request)
    return cases_text(costs, name, str(c.unit))


def cases_text(costs: dict[int, tuple[int, int]], name: str, unit: str = "") -> str | None:
    """How the cost of an access depends on one unknown, from its cost at `CASE_VALUES`: the
    condition under which it is ideal where there is one ("6 sectors per request unless wA
    is a multiple of 8"), and the cost at a few values."""
    ideal_values = {v for v, (p, i) in costs.items() if p <= i}
    odd = {v for v in costs if v % 2}
    if ideal_values == set(costs):
        return None
    if ideal_values == odd:
        return f"ideal exactly when {name} is odd"
    multiple = next((m for m in (2, 4, 8, 16, 32) if all(v in ideal_values for v in costs if v % m == 0)), None)
    shown = ", ".join(f"{name}={v}: {p}" for v, (p, _) in costs.items() if v in (1, 2, 4, 8, 16, 32, 33))
    if multiple is not None and unit:
        worst = max(p for p, _ in costs.values())
        return f"{worst} {unit} per request unless {name} is a multiple of {multiple}; per request: {shown}"
    return f"{'never ideal' if not ideal_values else 'cost depends on ' + name}; per request: {shown}"
