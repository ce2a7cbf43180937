"""Each warp's lanes, and the scenarios in which a warp's request is charged.

`warp_lanes` places a block's threads in warps with the hardware model's linearisation (x
fastest). For one access (a `Site`) and one warp, `plan_warp` puts each lane's thread indices
into the address, the mask and the loop conditions, and decides what must be walked: the
loops whose counters change the warp's addresses or mask, and samples of the symbols no
launch fixes (a parameter, a block index). One assignment of those is a *scenario*;
`scenario_lanes` gives the lanes' addresses in one. A warp walked over many scenarios has
its lane expressions compiled to Python once (`symbolic.compile_values`), and a generated
function picks the active lanes' addresses (`lane_picker`). What is worked out per lane or
per warp is remembered (`memo.py`): the accesses under one condition share its mask, and
warps share loop bounds.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.lane_groups import WarpSubs, lane_subs
from analyzer.analysis.loops import iterations
from analyzer.analysis.memo import MEMO_LIMIT, BuiltOn, ClearCounted, per_node, remember
from analyzer.analysis.pickers import lane_picker, lane_slots
from analyzer.analysis.results import LaunchConfig
from analyzer.analysis.symbolic.families import family_maker, family_values
from analyzer.analysis.values import (
    THREAD_SET,
    THREAD_SYMBOLS,
    LoopCtx,
    is_loop_counter,
)
from analyzer.analysis.verdict import Assume, SymbolFacts, sample_values
from analyzer.analysis.walked import (
    MAX_SCENARIOS,
    Lane,
    axis,
    blocks_to_walk,
    decide_mask_at_corners,
    decides_no_lane,
    few_iterations,
    walked_values,
    warp_lanes,
)
from analyzer.analysis.warp_differences import remembered_differences
from analyzer.ir.nodes import AccessOp, Space
from analyzer.records import record, replace

__all__ = [
    "MAX_SCENARIOS",
    "ScenarioLanes",
    "Site",
    "WarpPlan",
    "evaluated",
    "forget_lanes",
    "plan_warp",
    "scenario_lanes",
    "warp_lanes",
]

COMPILE_SCENARIOS = 2  # lane expressions are compiled to Python when walked more often than this
#: Where a warp is, for the memo tables: (block, warp size, warp index).
Where = tuple[tuple[int, int, int], int, int]
#: How a warp's lane expressions were made (`_shifted_lanes`): the bases, and for each lane
#: (None where it has none) its base's index and the number it was moved by.
Moves = tuple[tuple["S.Expr", ...], tuple[tuple[int, int] | None, ...]]


@record(slots=False)
class Site:
    """An access ready for the walk over warps: its address and mask with the launch's known
    values put in, the loops around it, and where it is charged."""

    offset: S.Expr  # bytes from the start of the access's region
    affine: tuple[tuple[int, ...], S.Expr] | None  # offset = coefficients . threadIdx + rest
    mask: S.Expr  # the condition under which a lane makes the access
    loops: tuple[LoopCtx, ...]
    launch: LaunchConfig
    block: tuple[int, int, int]
    known: dict[str, int]  # the symbols the launch (and --param) fix
    space: Space
    pieces: tuple[tuple[int, int], ...]  # (byte offset, bytes) of each hardware access of an element
    address_period: int  # the shift under which a request's cost is invariant (`Architecture`)
    facts: SymbolFacts | None = None  # what the code says about the symbols (restricts the values tried)
    op: AccessOp = AccessOp.LOAD  # a seed generation may charge loads and stores differently


@record(frozen=False)
class WarpPlan:
    """How one warp's request is walked: its lanes' expressions, what each scenario assigns,
    and (for many scenarios) the compiled evaluation of the lane expressions."""

    ref: S.Expr  # the first lane's address
    diffs: tuple[S.Expr | None, ...]  # each lane's address minus the first's; None: no such lane
    walked: tuple[LoopCtx, ...]  # the loops whose counters a scenario assigns
    factor: int | None  # executions of each scenario by the loops not walked; None: not known
    sampled: tuple[str, ...]  # the other symbols a scenario assigns (sampled), sorted
    names: tuple[str, ...]  # what a scenario assigns: the walked counters, then `sampled`
    values: tuple[Sequence[int], ...]  # the values each of `names` takes
    count: int  # scenarios before `MAX_SCENARIOS` cuts them
    exact_walk: bool  # every counter's values are its real ones, and none was cut
    lane_exprs: tuple[S.Expr | None, ...]  # diffs, then masks, then walked conditions, then ref
    mask_at: tuple[int, ...]  # where in `lane_exprs` each lane's mask is; -1: none (`lane_slots`)
    conds_at: tuple[tuple[int, ...], ...]  # where each lane's walked loop conditions are
    present: list[int]  # the lanes the warp has
    one_unknown_at: int  # where a scenario holds the one sampled symbol's value; -1 unless one
    # the values of each of `names` that a typical verdict considers (`verdict.py`); None: all
    typical: tuple[frozenset[int] | None, ...] = ()
    block_weight: int | None = None  # blocks each scenario stands for; None: the grid is not known
    representative: tuple[int, ...] = ()  # the sampled symbols' values whose scenarios are counted
    masks_vary: bool = False  # a sampled symbol decides which lanes are active (requests vary)
    evaluate: Callable[..., tuple] | None = None  # compiled `lane_exprs` (see `plan_warp`)
    pick: tuple[Callable[[tuple], tuple], bool] | None = None  # see `lane_picker`
    # `ref` split as the starts read it (`starts.split_ref`), kept with the plan: asked for in
    # every scenario, it was a look-up by the expression and names each time
    split: Any = None

    def is_typical(self, combo: tuple[int, ...]) -> bool:
        """The scenario assigns every sampled symbol a value a typical verdict considers."""
        return not self.sampled or all(t is None or v in t for v, t in zip(combo, self.typical))

    def counted(self, combo: tuple[int, ...]) -> bool:
        """The scenario is counted in the request counts: the sampled symbols change only the
        addresses, so one value of each (`representative`) stands for every value."""
        return not self.sampled or combo[len(combo) - len(self.sampled) :] == self.representative

    def scenarios(self) -> Iterator[tuple[int, ...]]:
        """Each scenario's values of `names`, the first `MAX_SCENARIOS` of them."""
        return itertools.islice(itertools.product(*self.values), MAX_SCENARIOS)


@record(frozen=False)
class ScenarioLanes:
    """The lanes of one warp in one scenario."""

    rel: tuple[int | None, ...] | None  # active lanes' addresses minus the first lane's; None: undecided
    ref_value: int | None  # the first lane's address, where the compiled evaluation gave it
    assign: dict[str, int] | None  # the scenario's values, where they were substituted
    undecided_mask: bool  # some lane's mask was not decided (and taken as true)


# ----------------------------------------------------------------------------- one warp's plan
def plan_warp(site: Site, lanes: tuple[Lane, ...], where: Where) -> WarpPlan | None:
    """How the warp at `where` is walked for `site`; None when the warp has no lane."""
    loop_conds = [per_lane(lp.cond, lanes, where) for lp in site.loops]
    free: set[str] = set()
    lane_offsets: tuple[S.Expr | None, ...] | None = None
    if site.affine is not None:  # the lanes differ by plain numbers
        coeffs, rest = site.affine
        first, diffs = _affine_lanes(coeffs, lanes, where)
        if first is None:
            return None
        ref = rest + first
    else:
        lane_offsets = per_lane(site.offset, lanes, where)
        found = next((o for o in lane_offsets if o is not None), None)
        if found is None:
            return None
        ref = found
        offsets, moves = lane_offsets, _MOVES.get((site.offset, where))
        diffs, symbolic = remembered_differences(offsets, ref, lambda: lane_differences(offsets, ref, moves))
        if symbolic:
            for d in diffs:
                if d is not None:
                    free |= d.free_symbols if d._free is None else d._free  # the set where it is stored
    lane_masks = decided_masks(site.mask, lanes, where, site.launch)
    masks_free, masks_counters = _masks_symbols(site.mask, lane_masks, where, site.launch)
    free |= masks_counters
    # a counter that moves the warp's start within `address_period` changes the cost: walked
    moving = {
        a.name
        for m, c in ref.terms()
        if len(m) == 1 and c % site.address_period
        for a in m
        if isinstance(a, S.Symbol) and is_loop_counter(a.name)
    }
    # walked only where its iterations are few enough; else its starts are enumerated
    moving = {lp.counter for lp in site.loops if lp.counter in moving and few_iterations(lp, site.known)}
    walk, factor = _loops_to_walk(site, loop_conds, free | moving)
    walked = tuple(site.loops[i] for i in walk)
    counters = {lp.counter for lp in walked}
    sampled = tuple(sorted(s for s in free if s not in counters and not is_loop_counter(s)))
    counter_values, exact_walk = walked_values(walked, [loop_conds[i] for i in walk], site.known)
    tried = tuple(sample_values(s, Assume.WORST, site.facts, len(sampled)) for s in sampled)
    blocks = blocks_to_walk(
        site.launch.grid,
        site.address_period,
        ref,
        lane_masks,
        sampled,
        math.prod(len(v) for v in (*counter_values, *tried)),
    )
    if blocks:
        tried = tuple(v for s, v in zip(sampled, tried) if s not in blocks)
        sampled = tuple(s for s in sampled if s not in blocks)
    assert site.launch.grid is not None or not blocks
    block_values = [range(site.launch.grid[axis(b)]) for b in blocks]  # type: ignore[index]
    typical = tuple(frozenset(sample_values(s, Assume.TYPICAL, site.facts, len(sampled))) for s in sampled)
    values = (*counter_values, *block_values, *tried)
    count = math.prod(len(v) for v in values)
    n_lanes = len(diffs)
    lane_exprs = (*diffs, *lane_masks, *(loop_conds[i][j] for i in walk for j in range(n_lanes)), ref)
    grid = site.launch.grid
    varying = frozenset(sampled)
    # none varies where none is sampled (threadFenceReduction.cu, Mandelbrot_cuda.cu, scan.cu,
    # cdpBitonicSort.cu: 90,894 generator steps -> 96)
    masks_vary = bool(varying) and (
        not masks_free.isdisjoint(varying)
        or any(e is not None and not e.free_symbols.isdisjoint(varying) for e in lane_exprs[2 * n_lanes : -1])
    )
    mask_at, conds_at = lane_slots(tuple([m is not None for m in lane_masks]), len(walk))
    plan = WarpPlan(
        ref,
        diffs,
        walked,
        factor,
        sampled,
        tuple(lp.counter for lp in walked) + blocks + sampled,
        values,
        count,
        exact_walk and count <= MAX_SCENARIOS,
        lane_exprs,
        mask_at,
        conds_at,
        present=[j for j, d in enumerate(diffs) if d is not None],
        one_unknown_at=len(walk) + len(blocks) if len(sampled) == 1 else -1,
        typical=(None,) * (len(walk) + len(blocks)) + typical,
        block_weight=None if grid is None else math.prod(grid) // math.prod(len(v) for v in block_values),
        representative=tuple(v[0] for v in tried),
        masks_vary=masks_vary,
    )
    # compiling costs about a millisecond: worth it only for many scenarios
    return _compiled(plan, lane_offsets, site, lanes) if count > COMPILE_SCENARIOS else plan


def _loops_to_walk(
    site: Site, loop_conds: list[tuple[S.Expr | None, ...]], free: set[str]
) -> tuple[list[int], int | None]:
    """The loops whose counters change this warp's cost or mask (they must be walked), and how
    many times the others together run each scenario (None when that is not known)."""
    walk: list[int] = []
    factor: int | None = 1
    for i, lp in enumerate(site.loops):
        conds = [c for c in loop_conds[i] if c is not None]
        if lp.counter in free or _differ(conds):  # the lanes' conditions differ
            walk.append(i)
            continue
        cond = conds[0] if conds else None
        # the loop itself where its lanes' condition is its own (the same object: nothing to replace)
        its = iterations(lp if cond is lp.cond else replace(lp, cond=cond), site.known)
        if its is None:
            factor = None
        elif factor is not None:
            factor *= len(its)
    return walk, factor


def _differ(conds: list[S.Expr]) -> bool:
    """Some two of `conds` are not equal; the same object throughout (a condition no thread
    index decides, put in once) is told without hashing each."""
    if not conds:
        return False
    first = conds[0]
    for c in conds:
        if c is not first:
            return len(set(conds)) > 1
    return False


#: Scenarios a plan evaluates, past which its expressions are compiled as one function, not
#: part by part (`_compiled`). A part's call and its tables cost about 2 us a scenario more
#: (hotspot.cu: 48,928 evaluations of 80 plans, 6.07 G -> 6.43 G instructions with parts
#: throughout); writing a plan's 97 expressions costs about 400 us (binomialOptions.cu: 1,845
#: plans, 10,548 evaluations in all). Past some 200 evaluations, the one function pays.
WHOLE_AFTER = 256


def _compiled(
    plan: WarpPlan, lane_offsets: tuple[S.Expr | None, ...] | None, site: Site, lanes: tuple[Lane, ...]
) -> WarpPlan:
    """`plan` with its lane expressions compiled. Where every lane's address is a number in
    each scenario, the addresses are compiled and subtracted, not their differences: half
    the source and the work. Where the plan evaluates few scenarios (its groups, `groups.py`,
    or all of them, no more than `WHOLE_AFTER`), its addresses, masks, each walked loop's
    conditions and the first lane's address are compiled each on its own (`S.compile_parts`):
    the other accesses of the warp share the masks and conditions, and their source is
    written once. Else as one function: a call a scenario."""
    from analyzer.analysis.groups import groups_of  # (groups.py reads this module)

    bound = frozenset(plan.names)
    absolute = lane_offsets is not None and all(
        lane_offsets[j].free_symbols <= bound  # type: ignore[union-attr]
        for j in plan.present
    )
    n_lanes = len(plan.diffs)
    first = lane_offsets if absolute and lane_offsets is not None else plan.diffs
    exprs = plan.lane_exprs
    few = plan.count <= WHOLE_AFTER
    if not few:
        groups = groups_of(plan, site.address_period, site.facts)
        few = groups is not None and len(groups) <= WHOLE_AFTER
    if few:
        parts = [first, *(exprs[at : at + n_lanes] for at in range(n_lanes, len(exprs) - 1, n_lanes)), exprs[-1:]]
        evaluate = S.compile_parts(parts, plan.names, _families(plan, site, lanes))
    else:
        evaluate = S.compile_values([*first, *exprs[n_lanes:]], list(plan.names))
    plan.evaluate = evaluate
    plan.pick = lane_picker(evaluate.compiled, plan.present, plan.mask_at, plan.conds_at, absolute)  # type: ignore[attr-defined]
    return plan


def _families(plan: WarpPlan, site: Site, lanes: tuple[Lane, ...]) -> list[Callable[..., tuple] | None]:
    """The functions of the parts of `plan`'s lane expressions (as `_compiled` splits them) that
    are one expression put in at each lane, made from that expression (`families.family_values`):
    the masks (`decided_masks` of `site.mask`) and each walked loop's conditions. None for the
    others, and where it is not made so."""
    n = len(plan.diffs)
    exprs = plan.lane_exprs
    made: list[Callable[..., tuple] | None] = [None]
    at = None  # the lanes' thread indices, read where some part is made so
    for i, e in enumerate([site.mask, *(lp.cond for lp in plan.walked)]):
        function = None
        if e is not None and family_maker(e, plan.names, THREAD_SYMBOLS) is not None:
            if at is None:
                at = [
                    None if env is None else (env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"])
                    for env in lanes
                ]
            function = family_values(e, at, exprs[n + i * n : 2 * n + i * n], plan.names, THREAD_SYMBOLS)
        made.append(function)
    return made


# ----------------------------------------------------------------------------- one scenario
def scenario_lanes(plan: WarpPlan, combo: tuple[int, ...]) -> ScenarioLanes:
    """The lanes' addresses in one scenario: compiled and picked in one call where the plan
    has a picker, else lane by lane (also when a lane divides by zero: the slow way)."""
    lane_rel = ref_value = assign = None
    undecided = False
    evaluate = plan.evaluate
    values: tuple | None = None
    if evaluate is not None:
        try:
            values = evaluate(*combo)
            pick = plan.pick
            if pick is not None:
                lane_rel = pick[0](values)
                undecided = pick[1]
                ref_value = values[-1]
        except (ZeroDivisionError, ValueError):
            values = None
    if values is None:
        if plan.names:
            assign = dict(zip(plan.names, combo))
            bound = frozenset(plan.names)
            values = tuple([_substituted_value(e, assign, bound) for e in plan.lane_exprs])
        else:
            values = _constant_values(plan.lane_exprs)
    if lane_rel is None:
        lane_rel, undecided_here = _lanes_one_by_one(plan, values)
        undecided = undecided or undecided_here
    return ScenarioLanes(lane_rel, ref_value, assign, undecided)


def _constant_values(exprs: tuple[S.Expr | None, ...]) -> tuple[int | None, ...]:
    """The value of each lane expression where it is a number, else None (a scenario that
    assigns nothing). Read from the expression's constant slot (`Expr.value` where `is_const`):
    a lane of a warp with one scenario reads each of its expressions once."""
    return tuple([None if e is None else e._c for e in exprs])


def _lanes_one_by_one(plan: WarpPlan, values: tuple) -> tuple[tuple[int | None, ...] | None, bool]:
    """Each active lane's address relative to the first lane from the values of the lane
    expressions, and whether some lane's mask stayed undecided. An entry that is None in
    `values` mentions a symbol the scenario does not assign (a parameter that is not known,
    a value loaded from memory): a mask or condition stays undecided (on), an address makes
    the whole request undecided (None)."""
    rel: list[int | None] = [None] * len(plan.diffs)
    undecided = False
    # the slots read once, no loop over conditions where none is walked (`()`: `pickers.lane_slots`):
    # 32 masked lanes, timeit 15 -> 8 us a call (110,778 calls over the five corpora)
    mask_at, conds_at = plan.mask_at, (plan.conds_at if plan.walked else None)
    for j in plan.present:
        on = True
        at = mask_at[j]
        if at >= 0:
            mv = values[at]
            if mv is not None:
                on = bool(mv)
            else:
                undecided = True
        if conds_at is not None:
            for at in conds_at[j]:
                cv = values[at]
                if cv is not None:
                    on = on and bool(cv)
        dv = values[j]
        if dv is None:
            return None, undecided
        if on:
            rel[j] = dv
    return tuple(rel), undecided


# ----------------------------------------------------------------------------- lane expressions
_LANE_MEMO: dict[tuple, S.Expr] = {}
_WARP_MEMO: dict[tuple, tuple] = {}
_DECIDED: dict[tuple, S.Expr] = {}
#: How `_shifted_lanes` made each lane's expression of a warp, by the expression and the warp
#: (as `_WARP_MEMO`): `lane_differences` reads the lanes' differences from it.
_MOVES: dict[tuple, Moves] = {}
#: The constant expressions `lane_differences` made, by value.
_DIFFERENCES: dict[int, S.Expr] = {}
_UNSET: Any = object()
#: The opaque terms of lane expressions with one lane's thread indices put in, shared between
#: the lanes and the masks that have them (`S.RememberedSubs`): a sorting network's masks on
#: loop counters repeat most of their terms (cdpBitonicSort.cu: a third as many worked out).
_LANE_TERMS: ClearCounted = ClearCounted()
#: A lane expression with a lane's thread indices put in, and the steps that took, by the
#: expression and the values of the thread indices it reads (as `S.RememberedSubs` keys a
#: term): the warps of a block share threadIdx.x (threadFenceReduction.cu, 32 x 4 x 4: 13,184 of
#: 57,344 lanes worked out, 1.89 -> 1.59 s). Built on `_LANE_TERMS`: emptied with it (`_read_table`).
_READ_LANES: BuiltOn = BuiltOn()


#: A number for each lane expression, by the expression (equal expressions, one number):
#: `_LANE_MEMO` is keyed by it and a lane's thread indices, not by the expression, whose hash
#: is a Python call (`Expr.__hash__`) at each of the two look-ups a lane makes, where a tuple
#: of numbers hashes in C (convolution_simple/kernel.cu: 61,440 lanes; its check under
#: callgrind, 2026-11-29, 3.66 G -> 3.53 G instructions). Never renumbered while `_LANE_MEMO`
#: holds entries: emptied only with it, in `forget_lanes`.
_LANE_IDS: dict[S.Expr, int] = {}


def lane_id(e: S.Expr) -> int:
    """The number of the lane expression `e` (`_LANE_IDS`)."""
    eid = _LANE_IDS.get(e)
    if eid is None:
        eid = _LANE_IDS[e] = len(_LANE_IDS)
    return eid


def forget_lanes() -> None:
    """Empty the memos whose hits cost no budget step (a file's analysis begins, `costing.new_file`:
    another file's lanes must not make it cheaper than it is alone)."""
    for table in (_LANE_MEMO, _WARP_MEMO, _DECIDED, _MOVES, _LANE_IDS):
        table.clear()


def _affine_lanes(
    coeffs: tuple[int, ...], lanes: tuple[Lane, ...], where: Where
) -> tuple[int | None, tuple[S.Expr | None, ...]]:
    """For an address whose threadIdx part is `coeffs` (x, y, z), the first lane's threadIdx
    part and each lane's distance from it (None for a lane the warp does not have)."""
    key = ("affine", coeffs, where)
    done = _WARP_MEMO.get(key)
    if done is None:
        moved = [None if env is None else sum(c * env[n] for c, n in zip(coeffs, THREAD_SYMBOLS)) for env in lanes]
        first = next((m for m in moved if m is not None), None)
        diffs = tuple(None if m is None or first is None else S.const(m - first) for m in moved)
        done = (first, diffs)
        remember(_WARP_MEMO, key, done)
    return done


def per_lane(e: S.Expr | None, lanes: tuple[Lane, ...], where: Where) -> tuple[S.Expr | None, ...]:
    """`e` at each lane of the warp at `where` (None for a lane the warp does not have, and
    for every lane when `e` is None). Remembered per warp as well as per lane."""
    if e is None:
        return (None,) * len(lanes)
    key = (e, where)
    done = _WARP_MEMO.get(key)
    if done is None:
        free = e.free_symbols
        if free and free.isdisjoint(THREAD_SET):  # no thread index to put in: `e` at every lane
            # (what `_at_lane` gives, in no step: `Expr.subs` finds nothing to replace; a loop's
            # condition on its counter: reduction_kernel.cu under callgrind 8.38 G -> 8.34 G)
            done = tuple([None if env is None else e for env in lanes])
            remember(_WARP_MEMO, key, done)
            return done
        shifts = _lane_shifts(e)
        if shifts is None:
            done = _each_lane(e, lanes, where[0])
        else:
            done, moves = _shifted_lanes(e, lanes, *shifts)
            remember(_MOVES, key, moves)
        remember(_WARP_MEMO, key, done)
    return done


# ----------------------------------------------------------------------------- lanes moved
#: Per expression, its thread indices that appear only as plain terms (`_lane_shifts`).
_SHIFTS: dict[S.Expr, tuple | None] = {}


def _lane_shifts(e: S.Expr) -> tuple[dict[str, int], tuple[str, ...]] | None:
    """The thread indices of `e` that appear only as plain terms, `coefficient * threadIdx.x`,
    with their coefficients, and the other thread indices it reads; None where there is none
    such, or where `e` reads nothing but thread indices (it is evaluated, not substituted).
    Two lanes that agree on the others get `e` at values that differ by a number."""
    if e.is_const:
        return None
    if e in _SHIFTS:
        return _SHIFTS[e]
    plain: dict[str, int] = {}
    read: set[str] = set()
    for monomial, coefficient in e.terms():
        atom = monomial[0] if len(monomial) == 1 else None
        if atom is not None and atom.__class__ is S.Symbol and atom.name in THREAD_SET:
            plain[atom.name] = coefficient
        else:
            read |= {n for a in monomial for n in a.free if n in THREAD_SET}
    shifts = {n: c for n, c in plain.items() if n not in read}
    done = None
    if shifts and not e.free_symbols <= THREAD_SET:
        done = (shifts, tuple(n for n in THREAD_SYMBOLS if n in read))
    remember(_SHIFTS, e, done)
    return done


def _shifted_lanes(
    e: S.Expr, lanes: tuple[Lane, ...], shifts: dict[str, int], read: tuple[str, ...]
) -> tuple[tuple[S.Expr | None, ...], Moves]:
    """`e` at each lane (as `_at_lane`), substituted once for the lanes that agree on the
    thread indices `read` and moved by a number for the others (`shifts`), where that spends
    the steps the substitution would have (`_moved_steps`): Convolution's clamped rows, one
    substitution a warp instead of 32. With it, how each lane's expression was made (`Moves`)."""
    out: list[S.Expr | None] = []
    bases: list[S.Expr] = []
    made: list[tuple[int, int] | None] = []
    firsts: dict[Any, tuple[S.Expr, int, int, int] | tuple[()] | None] = {}
    # a lane's look-ups written out (a warp's 32 lanes each called a generator or two and
    # `remember`: convolution_simple/kernel.cu, 245,760 lanes)
    memo = _LANE_MEMO
    memo_get = memo.get
    at_of = operator.itemgetter(*read) if read else None
    shift_of = tuple(shifts.items())
    spend, plus_constant = budget.spend, S.plus_constant
    warp = WarpSubs(e)
    eid = lane_id(e)
    for env in lanes:
        if env is None:
            out.append(None)
            made.append(None)
            continue
        key = (eid, env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"])
        done = memo_get(key)
        if done is None:
            at = () if at_of is None else at_of(env)
            shift = 0
            for n, c in shift_of:
                shift += c * env[n]
            first = firsts.get(at, ())
            if not first:  # the first lane of these (), or moving them may spend other steps (None)
                done, steps = _substituted_at_lane(e, env, warp)
                bases.append(done)
                made.append((len(bases) - 1, 0))
                if first == ():
                    firsts[at] = (done, shift, steps, len(bases) - 1) if _moved_steps(e, env) else None
            else:  # the base moved by `by`, spending the steps of the substitution it stands
                # for, the step of building it included (`S.plus_constant` builds one expression)
                base, base_shift, steps, index = first
                by = shift - base_shift
                if by:
                    spend(steps - 1)
                    done = plus_constant(base, by)
                else:
                    spend(steps)
                    done = base
                made.append((index, by))
            if len(memo) >= MEMO_LIMIT:  # `remember`
                memo.clear()
            memo[key] = done
        else:
            bases.append(done)
            made.append((len(bases) - 1, 0))
        out.append(done)
    return tuple(out), (tuple(bases), tuple(made))


def lane_differences(
    offsets: tuple[S.Expr | None, ...], ref: S.Expr, moves: Moves | None
) -> tuple[tuple[S.Expr | None, ...], bool]:
    """`lane_difference(o, ref)` of each lane's offset `o` (None where the lane is None), and
    whether some difference is no number. Where `moves` says how the offsets were made
    (`_shifted_lanes`: most lanes a base moved by a number), a difference is worked out as a
    number from its base's difference with the first lane's base, spending the two steps
    `lane_difference` spends (negating, the sum), lane by lane as it does; a number met before
    is the expression made for it then (`_DIFFERENCES`). convolution_simple/kernel.cu: 245,760
    lane differences, each compared term by term and built, in 7,680 warps of 32 lanes 4 bytes
    apart; with `_shifted_lanes`' look-ups written out, the check's Python calls (cProfile)
    16,278,756 -> 9,869,338, CPU 4.6-5.4 -> 3.7-4.0 s (three pairs back to back, loaded machine)."""
    if moves is None:
        diffs = tuple([None if o is None else lane_difference(o, ref) for o in offsets])
        return diffs, any(d is not None and not d.is_const for d in diffs)
    bases, made = moves
    ref_base, ref_delta = next(m for m in made if m is not None)  # `ref` is its base moved by its delta
    first = bases[ref_base]
    apart: dict[int, int | None] = {}
    meter = budget.current()
    out: list[S.Expr | None] = []
    symbolic = False
    for o, m in zip(offsets, made):
        if o is None or m is None:
            out.append(None)
            continue
        index, delta = m
        base_apart = apart.get(index, _UNSET)
        if base_apart is _UNSET:
            base = bases[index]
            base_apart = apart[index] = None if base.is_const or first.is_const else S.constant_difference(base, first)
        if base_apart is None:  # `lane_difference` subtracts
            d = lane_difference(o, ref)
            symbolic = symbolic or not d.is_const
            out.append(d)
            continue
        value = base_apart + delta - ref_delta
        made_before = _DIFFERENCES.get(value)
        if made_before is None:  # as `lane_difference` makes it
            budget.spend()
            made_before = S.plus_constant(S.const(0), value)
            remember(_DIFFERENCES, value, made_before)
        elif meter is not None:
            meter.spend(2)
        out.append(made_before)
    return tuple(out), symbolic


def lane_difference(e: S.Expr, ref: S.Expr) -> S.Expr:
    """`e - ref`, with its steps: worked out as a number where the two differ only in their
    constants (lanes moved from one substitution, `_shifted_lanes`), as subtracting would
    give it (negating `ref` and adding, a step each)."""
    if e.is_const or ref.is_const:
        return e - ref
    difference = S.constant_difference(e, ref)
    if difference is None:
        return e - ref
    budget.spend()  # negating `ref`
    return S.plus_constant(S.const(0), difference)  # and the sum (`const(0)` is built at import)


def _substituted_at_lane(e: S.Expr, env: dict[str, int], warp: WarpSubs | None = None) -> tuple[S.Expr, int]:
    """`_at_lane(e, env)` worked out (not remembered), and the steps it spent; by `warp` (the
    warp's `lane_subs` of `e`) where given."""
    meter = budget.current()
    before = meter.left if meter is not None else 0
    done = lane_subs(e, lane_subs_of(env)) if warp is None else warp(lane_subs_of(env))
    return done, 0 if meter is None else before - meter.left


def _moved_steps(e: S.Expr, env: dict[str, int]) -> bool:
    """`e.subs` at a lane moved only in the plain terms (`_lane_shifts`) spends the same
    steps as at `env`: every opaque term gives what it gave (remembered in `_LANE_TERMS`), and
    the sum is built the same way. It may not where a term's result is a sum (`Expr.subs`
    multiplies it out and adds it to the rest: adding to a zero rest is free) unless there is
    one such and the rest is certainly no number."""
    sums = 0
    rest: dict[tuple, int] = {}
    for monomial, coefficient in e.terms():
        kept: list[S.Atom] = []
        multiplied = False
        for atom in monomial:
            if atom.__class__ is S.Symbol:
                value = env.get(atom.name)
                if value is None:
                    kept.append(atom)
                    continue
            elif atom.free.isdisjoint(env):
                kept.append(atom)
                continue
            else:
                result = _remembered_term(atom, env)
                if result is None:
                    return False
                if not result.is_const:
                    ((_, _), *more) = result.terms()
                    if more:
                        multiplied = True
                    else:
                        ((vm, vk),) = result.terms()
                        coefficient *= vk
                        kept.extend(vm)
                    continue
                value = result.value
            coefficient *= value
            if not coefficient:
                break
        if not coefficient:
            continue
        if multiplied:
            sums += 1
            continue
        key = tuple(sorted(kept, key=lambda a: a.key))
        rest[key] = rest.get(key, 0) + coefficient
    return sums == 0 or (sums == 1 and any(m and c for m, c in rest.items()))


def _remembered_term(atom: S.Atom, env: dict[str, int]) -> S.Expr | None:
    """What `S.RememberedSubs` remembers for `atom` at `env`, None where it holds nothing
    (a term too deep to be remembered, or a table emptied)."""
    if atom.depth > S.MAX_DEPTH // 2:
        return None
    free = atom.free
    seen = _LANE_TERMS.get((atom, *[v if n in free else None for n, v in env.items()]))
    return None if seen is None else seen[0]


def _each_lane(e: S.Expr, lanes: tuple[Lane, ...], block: tuple[int, int, int]) -> tuple[S.Expr | None, ...]:
    """`_at_lane` at each lane, its look-ups written out for the warp; a lane whose thread
    indices `e` reads were put in before (`_READ_LANES`) spends the steps they took again."""
    free = e.free_symbols
    rx, ry, rz = reads = [n in free for n in THREAD_SYMBOLS]
    table = None if e.is_const else _read_table(e, reads, block)
    if table is None:
        return _lanes_at(e, lanes)
    evaluable = free <= THREAD_SET
    meter = budget.current()
    memo_get, seen_get = _LANE_MEMO.get, table.get
    warp = WarpSubs(e)
    eid = lane_id(e)
    out: list[S.Expr | None] = []
    for env in lanes:
        if env is None:
            out.append(None)
            continue
        x, y, z = env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"]
        key = (eid, x, y, z)
        done = memo_get(key)
        if done is None:
            read_key = (e, x if rx else None, y if ry else None, z if rz else None)
            seen = seen_get(read_key)
            if seen is not None and seen[1] is not None and meter is not None:  # `_read_lane`'s first case
                meter.spend(seen[1])
                done = seen[0]
            else:
                done = _read_lane(e, env, read_key, evaluable, table, warp)
            remember(_LANE_MEMO, key, done)
        out.append(done)
    return tuple(out)


def _lanes_at(e: S.Expr, lanes: tuple[Lane, ...]) -> tuple[S.Expr | None, ...]:
    """`_at_lane(e, env)` at each lane `env` (None where there is none), in the lanes' order:
    what `_at_lane` and `lane_subs` decide by `e` alone decided once for the warp
    (`WarpSubs`, whose figures are in its docstring)."""
    if e.is_const:
        return tuple([None if env is None else e for env in lanes])
    free = e._free  # the stored set where it is worked out (`Expr.free_symbols`)
    evaluable = (e.free_symbols if free is None else free) <= THREAD_SET
    memo = _LANE_MEMO
    memo_get = memo.get
    warp_subs = WarpSubs(e)
    subs_get = _SUBS_OF.get
    eid = lane_id(e)
    out: list[S.Expr | None] = []
    for env in lanes:
        if env is None:
            out.append(None)
            continue
        key = (eid, env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"])
        done = memo_get(key)
        if done is None:
            made = subs_get(id(env))  # `lane_subs_of(env)` written out (`per_node`)
            shared = made[1] if made is not None and made[0] is env else lane_subs_of(env)
            done = _lane_evaluated(e, shared) if evaluable else warp_subs(shared)
            if len(memo) >= MEMO_LIMIT:  # `remember`
                memo.clear()
            memo[key] = done
        out.append(done)
    return tuple(out)


def _read_table(
    e: S.Expr, reads: list[bool], block: tuple[int, int, int]
) -> dict[tuple, tuple[Any, int | None]] | None:
    """`_READ_LANES`, where a remembered substitution of `e` spends what working it out would:
    every opaque term of `e` is remembered in `_LANE_TERMS` (not too deep), whose entries the
    table's stand on (it is emptied with them), and the steps are counted; and where it may
    be met again: the block has warps that differ in a thread index `e` does not read (`reads`).
    Else None (a table that is only filled costs its memory and the collector's scans of it:
    cdpBitonicSort.cu, 12,800 lanes of one row, 0.2 s more in the collector)."""
    if all(r or extent == 1 for r, extent in zip(reads, block)):
        return None
    if e.depth > S.MAX_DEPTH // 2 or _LANE_TERMS.__class__ is not ClearCounted or budget.current() is None:
        return None
    return _READ_LANES.since(_LANE_TERMS.clears)


def _read_lane(
    e: S.Expr,
    env: dict[str, int],
    read_key: tuple,
    evaluable: bool,
    table: dict[tuple, tuple[Any, int | None]],
    warp: WarpSubs | None = None,
) -> S.Expr:
    """`_at_lane(e, env)` worked out, or taken from `table` (`read_key`: `e` and the values of
    the thread indices it reads): a number evaluated (`evaluable`: `e` reads nothing else) is
    made again (`S.const`, as `evaluated` makes it), a substitution spends its steps again."""
    if not evaluable and read_key.count(None) == 3:  # nothing to put in: `subs` gives `e`, stepless
        return e
    seen = table.get(read_key)
    if seen is not None:
        done, steps = seen
        if steps is None:
            return S.const(done)
        budget.spend(steps)
        return done
    if evaluable:
        try:
            value = e.evaluate(env)
        except (ArithmeticError, ValueError, LookupError):  # as `evaluated`: substitute instead
            pass
        else:
            remember(table, read_key, (value, None))
            return S.const(value)
    clears = _LANE_TERMS.clears
    done, steps = _substituted_at_lane(e, env, warp)
    if _LANE_TERMS.clears == clears:
        remember(table, read_key, (done, steps))
    return done


def _at_lane(e: S.Expr, env: dict[str, int]) -> S.Expr:
    """`e` with one lane's threadIdx put in; evaluated directly when nothing else is free.
    Remembered: the accesses under one condition share its mask, warps share loop bounds."""
    if e.is_const:
        return e
    key = (lane_id(e), env["threadIdx.x"], env["threadIdx.y"], env["threadIdx.z"])
    done = _LANE_MEMO.get(key)
    if done is not None:
        return done
    shared = lane_subs_of(env)
    free = e._free  # the stored set where it is worked out (`Expr.free_symbols`)
    done = (
        _lane_evaluated(e, shared) if (e.free_symbols if free is None else free) <= THREAD_SET else lane_subs(e, shared)
    )
    remember(_LANE_MEMO, key, done)
    return done


#: Each lane's substitution (`S.RememberedSubs` on `_LANE_TERMS`), by the lane's identity, with
#: the lane (which keeps its identity its own): the lanes are remembered (`warp_lanes`), and a
#: warp's offset, masks and loop conditions are put in at the same lanes. A substitution made
#: anew copied the lane, its items and its names each time (588,426 over the five corpora).
_SUBS_OF: dict[int, tuple[dict[str, int], S.RememberedSubs]] = {}


def lane_subs_of(env: dict[str, int]) -> S.RememberedSubs:
    """`S.RememberedSubs(env, _LANE_TERMS)`, made once per lane."""
    return per_node(_SUBS_OF, env, _new_lane_subs)


def _new_lane_subs(env: dict[str, int]) -> S.RememberedSubs:
    return S.RememberedSubs(env, _LANE_TERMS)


#: How many lanes each expression that reads only thread indices was evaluated at, up to
#: `COMPILE_AT` (`_lane_evaluated`).
_EVALUATED_AT: dict[S.Expr, int] = {}
#: The lanes an expression is evaluated at by walking it before it is compiled (`S.strict_values`).
#: Measured 2026-11-28 (timeit) on a sorting network's mask of two loaded keys: a walk 6.7 us,
#: a call of the compiled function 0.9 us; writing and compiling it 216 us where its source is
#: new, 34 us where a mask of the same shape was compiled before (other numbers): a block's
#: masks are of a few shapes, and an expression met at 8 lanes is met at most of the warp's.
COMPILE_AT = 8


def _lane_evaluated(e: S.Expr, lane: S.RememberedSubs) -> S.Expr:
    """`evaluated(e, lane)` for an `e` that reads only thread indices, by the function that
    `S.strict_values` compiles of it once it has been met at `COMPILE_AT` lanes: the same
    number, or where evaluating raises (an unknown, a division by zero), the substitution."""
    met = _EVALUATED_AT.get(e, 0)
    if met < COMPILE_AT:
        remember(_EVALUATED_AT, e, met + 1)
        return evaluated(e, lane)
    function = S.strict_values((e,), THREAD_SYMBOLS)
    if function is None:
        return evaluated(e, lane)
    try:
        (value,) = function(lane["threadIdx.x"], lane["threadIdx.y"], lane["threadIdx.z"])
    except (ArithmeticError, ValueError, LookupError):
        return lane_subs(e, lane)
    return S.const(value)


def _substituted_value(e: S.Expr | None, assign: dict[str, int], bound: frozenset[str]) -> int | None:
    """The value of a lane expression in one scenario, None when it is not a number (as
    `compile_values` gives it: a symbol other than those `bound` leaves it undecided)."""
    if e is None:
        return None
    if e.is_const:
        return e.value
    if not e.free_symbols <= bound:
        return None
    try:
        return e.evaluate(assign)
    except (ArithmeticError, ValueError, LookupError):  # as `evaluated`: substitute instead
        v = e.subs(assign)
        return v.value if v.is_const else None


def evaluated(e: S.Expr, env: dict[str, int]) -> S.Expr:
    """`e` with `env` put in: a constant computed straight away, without building the
    substituted expression; as `subs` leaves it where `env` does not bind every symbol, or
    where evaluating divides by zero or shifts out of range."""
    try:
        return S.const(e.evaluate(env))
    except (ArithmeticError, ValueError, LookupError):
        return lane_subs(e, env) if env.__class__ is S.RememberedSubs else e.subs(env)


# ----------------------------------------------------------------------------- masks
def decided_masks(
    mask: S.Expr, lanes: tuple[Lane, ...], where: Where, launch: LaunchConfig
) -> tuple[S.Expr | None, ...]:
    """Each lane's mask in the warp at `where`, decided where it depends only on block
    indices of a known grid (see `_decide_mask`). Remembered per warp: the accesses under
    one condition share it."""
    key = (mask, where, launch.grid)
    done = _WARP_MEMO.get(key)
    if done is None:
        lane_masks = per_lane(mask, lanes, where)
        done = lane_masks if decides_no_lane(mask, launch) else tuple(_decide_mask(m, launch) for m in lane_masks)
        remember(_WARP_MEMO, key, done)
    return done


def _masks_symbols(
    mask: S.Expr, lane_masks: tuple[S.Expr | None, ...], where: Where, launch: LaunchConfig
) -> tuple[frozenset[str], frozenset[str]]:
    """The symbols the lanes' masks (`decided_masks` of `mask`) read, and the loop counters
    among them. Remembered per warp with the masks: a plan asks for them once, and a warp's
    32 masks each gave a set."""
    key = ("symbols", mask, where, launch.grid)
    done = _WARP_MEMO.get(key)
    if done is None:
        read: frozenset[str] = frozenset().union(*(m.free_symbols for m in lane_masks if m is not None))
        done = (read, frozenset(x for x in read if is_loop_counter(x)))
        remember(_WARP_MEMO, key, done)
    return done


def _decide_mask(m: S.Expr | None, launch: LaunchConfig) -> S.Expr | None:
    """Decide a lane's mask when it depends only on block indices of a known grid: the
    condition must hold (or fail) at every corner of the grid, as bounds checks do."""
    if m is None or m.is_const:
        return m
    key = (m, launch.grid)
    done = _DECIDED.get(key)
    if done is None:
        done = decide_mask_at_corners(m, launch)
        remember(_DECIDED, key, done)
    return done
