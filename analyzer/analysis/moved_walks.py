"""Walk keys that let warps moved by whole address periods share a walk although a loop's
condition reads their thread index: the key under which `costing.walk_warp` takes such a warp's
walk from another's, spending the steps making it took.

`walk_keys.index_reads` reads a thread index only as a move of the warp (`(m,)`) where the loops'
conditions do not read it. A grid-stride loop's condition does: `while (i < n)` with
`i = blockIdx.x * 2 * blockSize + threadIdx.x + k * gridSize` (reduction_kernel.cu's reduce6 and
reduce7, 256 threads a block: the eight warps of its loads walked one by one in each of 60
instances). Where the condition is one comparison (or `&&`, `||` of such) whose two sides differ
by a symbol that no scenario assigns and that the launch does not know (`n`), in no other term,
and read the index only in plain terms (`walk_keys.never_folded`, the test the mask already
passes), no lane's condition is ever a number: in every scenario each lane's condition is
undecided and taken as true, its trip count unknown (the counter's first eight values walked),
whatever the index's value. A warp whose lanes' values of the index are another's moved by a
multiple of m then charges the same requests in every scenario, as `(m,)` already says of the
address and mask.

Such a warp takes the walk of the first warp of the same access (`costing.Summary.moved`) as a
walk made elsewhere (as a twin's, `twins.py`): it spends the steps making that one took but for
the requests new to the access (`costing.outcome_of` spends a step a lane for each), which it
finds charged: the steps of making its own (the same substitutions at lanes moved, the same
requests; `tests/test_moved_walks.py`). It is then remembered under its exact key, as a walk it
made, so that a warp met again by that key spends its scenarios, as before.

Measured 2026-11-29 (`check --no-cache -j 1`): reduction_kernel.cu 1,430 walks made -> 950, the same
steps per kernel and the same report; callgrind figures in the commit message.
"""

from __future__ import annotations

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node
from analyzer.analysis.scenarios import Site
from analyzer.analysis.values import THREAD_SYMBOLS, is_loop_counter
from analyzer.analysis.verdict import is_block_index
from analyzer.analysis.walk_keys import IndexRead, Rows, WalkKey, moved_modulus, never_folded, read_indices

__all__ = ["moved_entry", "moved_met", "moved_reads", "moved_walk_key"]

#: Each walk key's moved key (None: the same reads), by the key's identity (`walk_keys.walk_key`
#: makes each key once).
_MOVED: dict = {}


def moved_walk_key(key: WalkKey, site: Site, lanes: tuple) -> tuple[WalkKey, Rows, tuple[bool, ...]] | None:
    """The key under which the warp of `lanes` shares the walk of the warps moved from it
    (`moved_reads`), with its rows, and whether its first lane and some lane have the value 0
    of each index it reads as a move where `key` does not: where they do, putting the lanes'
    values in builds fewer terms (`x + 0`), and a walk spends fewer steps. None where it reads
    its thread indices as `key` does."""
    if site.affine is None:  # (the lanes' addresses substituted, not numbers: `moved_met`)
        return None
    moved = per_node(_MOVED, key, lambda k: _moved_key(k, site))
    if moved is None:
        return None
    live = [lane for lane in lanes if lane is not None]
    zeros = tuple(
        flag
        for name, was, now in zip(THREAD_SYMBOLS, key.index_reads, moved.index_reads)
        if was is not now
        for flag in (live[0][name] == 0, any(lane[name] == 0 for lane in live))
    )
    return moved, read_indices(lanes, moved.index_reads), zeros


def _moved_key(key: WalkKey, site: Site) -> WalkKey | None:
    reads = moved_reads(site, key.index_reads)
    if reads == key.index_reads:
        return None
    values = (
        key.grid,
        key.offset,
        key.mask,
        key.loops,
        key.loop_known,
        key.facts,
        key.space,
        key.op,
        key.pieces,
        key.address_period,
        key.arch,
        key.cost_models,
        reads,
    )
    return WalkKey(*values, digest=hash(values))


def moved_reads(site: Site, reads: tuple[IndexRead, ...]) -> tuple[IndexRead, ...]:
    """`reads` (the site's `walk_keys.index_reads`) with each thread index read as it is (True)
    read only as a move where the loops read it only in conditions that no lane decides
    (`never_folded`, with a symbol the launch does not know: their conditions are not put in
    with the launch's values) and in no initial value, the mask reads it likewise, and the
    address reads it, only in terms of degree one (`walk_keys.moved_modulus`)."""
    conds = [lp.cond for lp in site.loops if lp.cond is not None]
    inits = [lp.init for lp in site.loops if lp.init is not None]
    symbols: set[str] = set().union(site.offset.free_symbols, site.mask.free_symbols, *(e.free_symbols for e in conds))
    never = frozenset(
        name
        for name in symbols
        if name not in site.offset.free_symbols
        and name not in THREAD_SYMBOLS
        and not is_loop_counter(name)
        and not is_block_index(name)
    )
    unknown_to_launch = frozenset(name for name in never if name not in site.known)
    out: list[IndexRead] = []
    for name, read in zip(THREAD_SYMBOLS, reads):
        moved = None
        if (
            read is True
            and not any(name in e.free_symbols for e in inits)
            and all(never_folded(c, name, unknown_to_launch) and _signed_alike(c, name) for c in conds)
            and never_folded(site.mask, name, never)
            and _signed_alike(site.mask, name)
        ):
            moved = moved_modulus(site, name)
        # only a move: an index the address does not read (False) would let a warp whose lanes
        # share its value (whose loop is not walked, `scenarios._loops_to_walk`) meet one whose
        # lanes do not
        out.append(moved if moved.__class__ is tuple else read)
    return tuple(out)


def moved_entry(made: tuple, outcomes: dict, known: int, fresh: tuple[int, int]) -> tuple | None:
    """What a warp moved from the walk `made` (`costing.walk_warp`'s entry: the walk, the steps
    making it took, the file, the scenarios) in the same access spends and counts, met as a walk
    from elsewhere (file -1): the steps but those of the requests the making charged first in
    the access (`outcomes` past the `known` it held before, each a step a lane) and of the
    numbers and symbols it remembered first (`S.fresh_values`, before the making: `fresh`;
    the number a moved warp makes anew is made by `moved_met`). None where the making made
    an unknown, which must stay its own."""
    made_now, kept_now = S.fresh_values()
    if made_now != fresh[0]:
        return None
    new = sum(len(key[0]) for key in list(outcomes)[known:])
    return (made[0], made[1] - new - (kept_now - fresh[1]), -1, made[3])


def moved_met(entry: tuple, site: Site, lanes: tuple) -> tuple:
    """`entry` (`moved_entry`'s) as the warp of `lanes` takes it, with what making its own walk
    makes that the entry's does not: its first lane's address, the rest of the site's address
    plus the number its thread indices make there (`scenarios.plan_warp`), which remembers that
    number (`S.const`: a step where it is new). The number is made here; its step is added to
    the entry's, which the caller spends (and keeps with the walk, as a making would)."""
    coeffs = site.affine[0]  # type: ignore[index]  # (`moved_walk_key` keys affine sites only)
    first = next(lane for lane in lanes if lane is not None)
    meter = budget.current()
    before = 0 if meter is None else meter.left
    S.const(sum(c * first[n] for c, n in zip(coeffs, THREAD_SYMBOLS)))
    if meter is None:
        return entry
    made = before - meter.left
    meter.left = before  # (spent with the rest by the caller)
    return (entry[0], entry[1] + made, entry[2], entry[3])


def _signed_alike(e: S.Expr, name: str) -> bool:
    """Whether each comparison of `e` (one atom, or `&&`, `||` of such: what `never_folded`
    passes) that reads `name` reads it on one side only, and that side and the two sides'
    difference each have a constant of the sign of `name`'s coefficient, or none: put in at
    lanes of values 0 and up, neither constant is 0 but at 0, so that lanes moved build terms
    of the same shapes, in the same steps, but where one of them has the value 0
    (`moved_walk_key`)."""
    if name not in e.free_symbols:
        return True
    atom = e.terms()[0][0][0]
    if not isinstance(atom, S.Term):  # (`never_folded` passed only a term)
        return False
    if atom.op in ("&&", "||"):
        return all(_signed_alike(arg, name) for arg in atom.args)
    left, right = atom.args
    if name in left.free_symbols and name in right.free_symbols:
        return False
    (side_constant, side_coefficient), (other_constant, _) = (
        _constant_and_coefficient(side, name)
        for side in ((left, right) if name in left.free_symbols else (right, left))
    )
    # the side that reads it, and the two sides' difference, which `logic.compare` folds
    return side_constant * side_coefficient >= 0 and (side_constant - other_constant) * side_coefficient >= 0


def _constant_and_coefficient(e: S.Expr, name: str) -> tuple[int, int]:
    """The constant of `e` and the coefficient of its plain term `name` (0 where it has none)."""
    constant = coefficient = 0
    for monomial, c in e.terms():
        if not monomial:
            constant = c
        elif len(monomial) == 1 and monomial[0].__class__ is S.Symbol and monomial[0].name == name:
            coefficient = c
    return constant, coefficient
