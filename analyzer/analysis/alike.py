"""Walks alike but for their loops' numbers: the accesses of a loop replayed (`analysis.replay`).

A loop nested in an unrolled one is reached once per trip of it, and the replayed runs make
the same accesses as the recorded one but for the names of their loops' counters (`k@12`
becomes `k@31`). A warp's walk (`costing.walk_warp`) reads a counter only as the values its
loop takes (`scenarios.plan_warp`: walked, enumerated or counted, by the loop's place around
the access), and what a walk gives back is read only for what it counts (`Summary.add`),
which reads no name: the walk made for one access is the other's. So the walk key
(`walk_keys.WalkKey`) is looked up once more with the counters named by their places
(`alike_key`: `@0`, `@1`, which no counter the interpreter makes is).

What must stay as it was is the budget: a walk taken so spends what making it took
(`spend_alike`), as a walk first met in another file does, and the tables a made walk leaves
behind must not be missed by a later walk whose steps read them:
- the trip counts it looked up (`loops.iterations`, remembered by the counter's name, a hit
  spending no step): looked up again for the access's own counters;
- what the access's earlier warps left in its `Summary` (lanes charged) and in the lane
  tables (`scenarios.per_lane`, by the expression and the warp; `_LANE_MEMO`, by the
  expression and a lane): an access takes its warps' walks alike all or none
  (`alike_walks`), each kept with the indices of the warps made before it in its access
  (`Summary.chain`), so that none is walked after others were taken alike;
- the values sampled for a symbol, remembered across accesses: only where the walk samples
  none (each symbol the address, mask or loops read is a counter of its loops, a thread or
  block index, or a value known), and reads no unknown;
- a walk kept is what making it took in its own file (`forget_alike`).
Checked with every access's steps compared, the walks taken alike and not: the five corpora's
370 programs in one process (PYTHONHASHSEED=0), the same report and the same steps at each
`cost_occurrence` of each.

Measured under callgrind (`check --no-cache -j 1`, 2026-11-29): tf32TensorCoreGemm.cu
5.84 G -> 3.78 G instructions (560 walks made -> 56, 504 taken alike), dmmaTensorCoreGemm.cu
3.62 G -> 1.72 G (576 -> 72), bf16TensorCoreGemm.cu 3.58 G -> 1.54 G (560 -> 56).
"""

from __future__ import annotations

from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.loops import remembered_trips
from analyzer.analysis.memo import per_node, remember
from analyzer.analysis.replay import REPLAYED_LOOPS, replayed_loop
from analyzer.analysis.scenarios import Site
from analyzer.analysis.values import THREAD_SYMBOLS, LoopCtx
from analyzer.analysis.verdict import is_block_index
from analyzer.analysis.walk_keys import WalkKey, read_indices
from analyzer.records import record

__all__ = [
    "COUNTS",
    "ENABLED",
    "AlikeAccess",
    "AlikeWalk",
    "alike_access",
    "alike_key",
    "alike_walks",
    "forget_alike",
    "keep_alike",
    "spend_alike",
]

#: Whether walks are taken alike (tests and the step oracle turn it off to compare).
ENABLED = True
#: How many walks were taken alike (`spend_alike`), and how many kept (`keep_alike`): tests count them.
COUNTS = {"taken": 0, "kept": 0}

#: The walks made, by the site's key with its loops' counters named by their places
#: (`alike_key`) and the warp's thread indices as read.
_ALIKE: dict[tuple, AlikeWalk] = {}
#: A counter's name by its loop's place around the access (`alike_key`).
_PLACES: dict[int, S.Expr] = {}
#: Each walk key's alike key (None: none), by the key's identity (`memo.per_node`): made for
#: each access costed, and the same for all the accesses with one walk key (the key holds what
#: it reads of the site: its address, mask, loops and the known values they read).
_KEYS: dict[int, tuple[Any, Any]] = {}


@record(eq=False)
class AlikeWalk:
    """A walk made (`walk`: the plan and the scenarios' charges): the steps making it took less
    those of the trip counts it looked up that were not remembered (`steps`), the counters of
    the loops it was made for, and those look-ups (`loops.remembered_trips`: the condition, the
    counter, the steps where it was not remembered)."""

    walk: Any
    steps: int
    unremembered: int  # the steps of those look-ups
    counters: tuple[str, ...]
    lookups: tuple[tuple[S.Expr, str, int | None], ...]


def forget_alike() -> None:
    """Forget the walks kept (a file's analysis begins, `costing.new_file`): what making one took
    is what it took in its own file, whose tables the next file does not find as they were."""
    _ALIKE.clear()
    REPLAYED_LOOPS.clear()


def alike_key(key: Any, site: Site) -> Any:
    """`key` (the site's walk key) with the counters of the site's loops named by their places
    around the access; None where none of its loops was numbered in a run of a loop recorded
    or replayed (`replay.replayed_loop`: no other access has a copy to share its walks with,
    and making the key is no work for nothing: the twenty files of `benchmarks/speed.py nvcc`
    under callgrind, 2026-11-29, 13.54 G -> 13.44 G instructions, against 13.42 G without
    walks alike; tf32TensorCoreGemm.cu 3.79 G -> 3.78 G, the first runs of loops recorded
    among them, `LoopMemo.first_runs`),
    or where the walk samples a symbol."""
    if not ENABLED or not REPLAYED_LOOPS or not any(replayed_loop(lp) for lp in site.loops):
        return None
    return per_node(_KEYS, key, lambda _: _alike_key(key, site))


def _alike_key(key: Any, site: Site) -> Any:
    counters = {lp.counter for lp in site.loops}
    exprs = [site.offset, site.mask, *(e for lp in site.loops for e in (lp.cond, lp.init) if e is not None)]
    for e in exprs:
        for name in e.free_symbols:
            if not (name in counters or name in site.known or name in THREAD_SYMBOLS or is_block_index(name)):
                return None  # a symbol sampled (see the module's docstring)
        if next(S.unknowns(e), None) is not None:
            return None
    with budget.metered(None):  # a renaming for a key only: it spends no step (`Expr.subs` counts one)
        names: dict[str, S.Expr] = {}
        for i, lp in enumerate(site.loops):
            place = _PLACES.get(i)
            if place is None:
                place = _PLACES[i] = S.sym(f"@{i}")
            names[lp.counter] = place
        offset = site.offset.subs(names)
        loops = tuple(
            LoopCtx(
                i,
                f"@{i}",
                None if lp.cond is None else lp.cond.subs(names),
                lp.kind,
                None if lp.init is None else lp.init.subs(names),
                lp.op,
                lp.step,
            )
            for i, lp in enumerate(site.loops)
        )
        mask = site.mask.subs(names)
    terms = offset._p
    moved = (
        frozenset(item for item in terms.items() if item[0]),
        terms.get((), 0) % site.address_period,
        None if site.affine is None else site.affine[0],
    )
    values = (
        key.grid,
        moved,
        mask,
        loops,
        key.loop_known,
        key.facts,
        key.space,
        key.op,
        key.pieces,
        key.address_period,
        key.arch,
        key.cost_models,
        key.index_reads,
    )
    return WalkKey(*values, digest=hash(values))  # (its hash worked out once)


class AlikeAccess:
    """An access's `alike_key` (`key`) and, where its warps are taken alike (`alike_access`),
    the walk each warp takes (None: a warp whose walk is met, `costing._WALKS`); `walks` None:
    each warp is walked (and its walk kept for `alike_walks`)."""

    __slots__ = ("key", "walks")

    def __init__(self, key: Any, walks: list[AlikeWalk | None] | None) -> None:
        self.key = key
        self.walks = walks


def alike_access(decided: Any, site: Site, warps: tuple, walks: dict) -> AlikeAccess | None:
    """The walks of the site's `warps` taken alike: None where the site has no `alike_key`;
    else `alike_walks` with the walks met so far (`walks`, by the walk key and the indices)."""
    alike = alike_key(decided, site)
    if alike is None:
        return None
    return AlikeAccess(alike, alike_walks(alike, decided, warps, walks))


def alike_walks(alike: Any, decided: Any, warps: tuple, walks: dict) -> list[AlikeWalk | None] | None:
    """The walk each warp takes alike, None for each one met (in `walks`, or as a warp before
    it); None where some warp would be made (then every one is: a warp walked after others
    taken alike would not find what their walks would have left in the access's `Summary`),
    where none is taken alike, or where the budget might run out in the walks (it runs out
    where making them would)."""
    chain: tuple = ()
    met: set = set()
    taken: list[AlikeWalk | None] = []
    steps = 0
    for lanes in warps:
        indices = read_indices(lanes, decided.index_reads)
        key = (decided, indices)
        if key in met or key in walks:
            taken.append(None)
            continue
        walk = _ALIKE.get((alike, chain, indices))
        if walk is None:
            return None
        taken.append(walk)
        met.add(key)
        chain = (*chain, indices)
        steps += walk.steps + walk.unremembered
    meter = budget.current()
    if not chain or (meter is not None and meter.left <= steps):
        return None
    return taken


def keep_alike(alike: Any, chain: tuple, indices: Any, walk: Any, steps: int, site: Site, lookups: list) -> None:
    """Remember a walk made for `site` after those of the warps with `chain`'s indices, the
    steps making it took and the trip counts it looked up (`loops.TRIP_LOOKUPS`)."""
    counters = tuple(lp.counter for lp in site.loops)
    if any(counter not in counters for _, counter, _ in lookups):
        return  # a trip count of another loop: not renamed
    unremembered = sum(spent for _, _, spent in lookups if spent is not None)
    made = AlikeWalk(walk, steps - unremembered, unremembered, counters, tuple(lookups))
    remember(_ALIKE, (alike, chain, indices), made)
    COUNTS["kept"] += 1


def spend_alike(twin: AlikeWalk, site: Site) -> int:
    """Spend what making the walk `twin` stands for would take for `site`: its steps, and its
    trip counts looked up for the site's counters (spending where not remembered, as making
    it would); the steps spent."""
    COUNTS["taken"] += 1
    meter = budget.current()
    before = 0 if meter is None else meter.left
    budget.spend(twin.steps)
    if twin.lookups:
        with budget.metered(None):
            new = {old: lp.counter for old, lp in zip(twin.counters, site.loops)}
            names = {old: S.sym(name) for old, name in new.items()}
            renamed = [(cond.subs(names), new[counter]) for cond, counter, _ in twin.lookups]
        for cond, counter in renamed:
            remembered_trips(cond, counter)
    return 0 if meter is None else before - meter.left
