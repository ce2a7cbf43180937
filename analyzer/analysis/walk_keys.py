"""What decides a warp's walk (`costing.walk_warp`), and no more: the key its walk is remembered by.

Two warps, or two accesses, whose walks have the same key charge the same requests in every
scenario, so the second takes the first's walk (a step a scenario) instead of planning and
charging its own. The key holds the access's address up to a move by a multiple of the
address period (`moved_offset`), its mask and loops, the facts that restrict the values
tried, the grid where a block index is read, and each thread index as the walk reads it
(`index_reads`, `thread_indices`): not at all, as it is, or only as a move of the warp.

Why a move by a multiple of the address period changes no charge: a request is charged from
the first lane's start modulo the period and the other lanes' distances from it
(`costing.outcome_of`; the starts of a symbolic address, `starts.starts_from`, read its
constant modulo gcds that divide the period), and after the walk its plan is read only for
what it counts (`Summary.add`, `Summary.begin_warp`), which reads no address.

Measured on the five public corpora (`benchmarks/compare_reports.py`: 704 reports, the same
byte for byte with every walk made): threadFenceReduction.cu 4,624 plans -> 860 (warps that
differ in indices not read), myocyte/main.cu 26,753 -> 1,780 (a struct's fields),
convolution_simple/kernel.cu 8,207 -> 1,936 (warps moved by whole rows of banks).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable
from typing import Any

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node, remember
from analyzer.analysis.scenarios import Site
from analyzer.analysis.twins import twin_key
from analyzer.analysis.values import THREAD_SYMBOLS, is_loop_counter
from analyzer.analysis.verdict import BLOCK_INDICES, is_block_index
from analyzer.arch import Architecture
from analyzer.records import field, record

__all__ = [
    "IndexRead",
    "Rows",
    "WalkKey",
    "index_reads",
    "made_walk_key",
    "moved_offset",
    "read_indices",
    "thread_indices",
    "twin",
    "walk_key",
]

#: How an access reads a thread index (`index_reads`): not at all, as it is, or (a tuple of
#: one number m) only as a move of the warp's addresses, a multiple of the address period
#: for a move of the index by a multiple of m.
IndexRead = bool | tuple[int]


@record
class WalkKey:
    """What decides the walks of a site's warps (`walk_key`): its fields are hashed and compared
    as one, and `costing.walk_warp` reads two of them by name. (A record: a `typing.NamedTuple`
    added 2.6 ms to the start-up, `python -X importtime`.)"""

    grid: tuple[int, int, int] | bool | None  # the grid where a block index is read, else whether it is known
    offset: tuple  # the address up to a move by a multiple of the period (`moved_offset`)
    mask: S.Expr
    loops: tuple
    loop_known: tuple[tuple[str, int], ...]  # the known values the loops' conditions read
    facts: Any  # those that restrict the values tried (hashable: `walk_key` checks)
    space: Any  # ir.nodes.Space
    op: Any  # ir.nodes.AccessOp: a seed generation may charge a load and a store differently
    pieces: tuple[tuple[int, int], ...]  # (byte offset, bytes) of each hardware access of an element
    address_period: int
    arch: Architecture
    cost_models: tuple[Callable, ...]
    index_reads: tuple[IndexRead, ...]  # how each thread index (x, y, z) is read (`index_reads`)
    # the hash of the fields above, worked out once (`walk_key`): a warp's walk is looked up by
    # the key, and hashing its fields each time (the architecture's table, the loops, the facts)
    # was 1% of the five corpora's CPU (py-spy, 2026-11-28)
    digest: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:  # the fields' hash, as a record's (0: a key not made by `walk_key`)
        return self.digest or hash(self._record_values(self))  # type: ignore[attr-defined]  # set by @record


#: The comparisons whose folding `never_folded` reasons about (`logic.compare` folds one
#: where its two sides differ by a number).
_COMPARISONS = frozenset({"<", "<=", "==", "!="})


#: Each site's walk key (`walk_key`) by what it is worked out from, the facts and architecture
#: by identity (kept with the key, so that their ids stay theirs: hashing an `Architecture`
#: takes a microsecond).
_BY_SITE: dict[tuple, tuple[Any, Architecture, WalkKey | None]] = {}


def walk_key(site: Site, arch: Architecture, cost_models: tuple[Callable, ...]) -> WalkKey | None:
    """`made_walk_key`, remembered by what it reads of the site (`_BY_SITE`): it builds no
    expression and spends no step. Why: Rodinia myocyte/main.cu asks for the keys of 3,864
    accesses, most of them met before (an inlined device function's), and making one was a
    fifth of costing an access whose walks are remembered (its check under callgrind,
    2026-11-29: 7.83 G -> 7.75 G instructions; the twenty cuda-samples files 13.21 G -> 13.18 G)."""
    known = site.known
    facts = site.facts
    by = (
        site.offset,
        site.mask,
        site.loops,
        site.launch.grid,
        id(facts),
        site.space,
        site.op,
        site.pieces,
        site.address_period,
        id(arch),
        cost_models,
        tuple(known.items()) if known else (),
    )
    seen = _BY_SITE.get(by)
    if seen is not None and seen[0] is facts and seen[1] is arch:
        return seen[2]
    key = made_walk_key(site, arch, cost_models)
    remember(_BY_SITE, by, (facts, arch, key))
    return key


def made_walk_key(site: Site, arch: Architecture, cost_models: tuple[Callable, ...]) -> WalkKey | None:
    """What decides the plans and charges of the site's warps apart from the block and grid
    sizes and their lanes (`costing.walk_warp` adds those): the address up to a move by a
    multiple of the address period (`moved_offset`), the mask and loops with the launch's
    values put in, the values the loops' conditions read, the space, operation and pieces,
    the architecture and its `cost_models`; the grid itself where a block index is read
    (blocks may be walked one by one, or decide lanes), else only whether it is known (it
    says how many blocks a request stands for); the facts that restrict the values tried;
    and how the thread indices are read (`index_reads`). None (not remembered) where the
    facts are not a value (hashable). Worked out once per access, not per warp: the five
    corpora asked for it for each of 211,861 warps of 53,408 accesses (3.8 s of 404
    profiled); myocyte/main.cu 26,902 -> 3,550 asks."""
    try:
        hash(site.facts)  # `Facts` records are; another `SymbolFacts` need not be
    except TypeError:
        return None
    exprs = [site.offset, site.mask, *(e for lp in site.loops for e in (lp.cond, lp.init) if e is not None)]
    symbols = set().union(*(e.free_symbols for e in exprs))
    loop_known = tuple(sorted((name, site.known[name]) for name in symbols if name in site.known))
    grid = site.launch.grid
    grid_known = grid if not BLOCK_INDICES.isdisjoint(symbols) else grid is not None
    values = (
        grid_known,
        moved_offset(site),
        site.mask,
        site.loops,
        loop_known,
        site.facts,
        site.space,
        site.op,
        site.pieces,
        site.address_period,
        arch,
        cost_models,
        _remembered_reads(site, symbols),
    )
    key = WalkKey(*values, digest=hash(values))
    same = _KEYS.get(key)
    if same is not None:
        return same
    remember(_KEYS, key, key)
    return key


def twin(key: WalkKey, site: Site) -> Hashable | None:
    """`key` (the site's) up to the identities of the unknowns its address, mask and loops
    read (`twins.twin_key`): None where they read none."""
    reads = [site.offset, site.mask, *(e for lp in site.loops for e in (lp.cond, lp.init) if e is not None)]
    return twin_key(key, key._record_values(key), reads)  # type: ignore[attr-defined]  # set by @record


#: Each walk key made, by itself: an access's key is the one made before for an equal key, so
#: that `costing.walk_warp`'s look-up of each of its warps finds its own key by identity instead
#: of comparing the thirteen fields again (C++AMP BinomialOptions/kernel.cu: 3% of its check).
_KEYS: dict[WalkKey, WalkKey] = {}
#: `index_reads` by what it reads of the site: its address, mask, loops and address period
#: (C++AMP BinomialOptions/kernel.cu asks 4,556 times for 1,081 of them, myocyte/main.cu 3,864
#: for 1,553; a tenth of a walk key's making).
_READS: dict[tuple, tuple[IndexRead, ...]] = {}


def _remembered_reads(site: Site, symbols: set[str]) -> tuple[IndexRead, ...]:
    """`index_reads(site, symbols)`, remembered in `_READS` (`symbols` are those the address,
    mask and loops read)."""
    key = (site.offset, site.mask, site.loops, site.address_period)
    reads = _READS.get(key)
    if reads is None:
        reads = index_reads(site, symbols)
        remember(_READS, key, reads)
    return reads


def moved_offset(site: Site) -> tuple:
    """What decides the walks of the site's address up to a move by a multiple of its
    `address_period`: its terms but the constant, the constant modulo the period, and the
    thread indices' coefficients (`Site.affine` is worked out from the address): the
    accesses of an unrolled loop or of a struct's fields share their walks (myocyte/main.cu's
    `threadIdx.x*364 + blockIdx.x*11648 + 248` and its 1,411 others)."""
    terms = site.offset._p
    constant = terms.get((), 0)
    rest = frozenset(item for item in terms.items() if item[0])
    return (rest, constant % site.address_period, None if site.affine is None else site.affine[0])


def index_reads(site: Site, symbols: set[str]) -> tuple[IndexRead, ...]:
    """How the site reads each thread index (x, y, z), for the key of its warps' walks
    (`thread_indices`):
    - False where nothing reads it, or only parts of the mask that no lane decides
      (`never_folded`): warps that differ only there walk alike;
    - `(m,)` where the address reads it only in terms of degree one, `c * threadIdx.x * w`
      with numbers c (`moved_modulus`), and the loops do not, nor the mask but where no lane
      decides it: a warp whose lanes' values of it are another's moved by a multiple of m has
      every lane's address moved by a multiple of the address period in every scenario, every
      request at the same cost: it walks alike (convolution_simple/kernel.cu, 128 x 128
      blocks: the four warps of a row);
    - else True."""
    loops: set[str] = set().union(*(e.free_symbols for lp in site.loops for e in (lp.cond, lp.init) if e is not None))
    never = frozenset(
        name
        for name in symbols
        if name not in site.offset.free_symbols
        and name not in THREAD_SYMBOLS
        and not is_loop_counter(name)
        and not is_block_index(name)
    )
    reads: list[IndexRead] = []
    for name in THREAD_SYMBOLS:
        if name not in symbols:
            reads.append(False)
            continue
        moved = None if name in loops or not never_folded(site.mask, name, never) else moved_modulus(site, name)
        reads.append(True if moved is None else moved)
    return tuple(reads)


def moved_modulus(site: Site, name: str) -> IndexRead | None:
    """How the address reads the thread index `name` where it is only a move of the warp:
    False where it does not read it; (m,) where every term that reads it is of degree one in
    it and reads it as a symbol, not inside another atom, its other factors symbols that are
    no thread index (`c * name * w`: the same in every lane, so that every lane moves alike),
    m the least move of it by which each such term moves by a multiple of the address period
    whatever the values of `w`; else None."""
    g = 0
    for monomial, coefficient in site.offset.terms():
        if not any(name in atom.free for atom in monomial):
            continue
        names = [atom.name if atom.__class__ is S.Symbol else None for atom in monomial]
        if names.count(name) != 1 or any(n is None or n in THREAD_SYMBOLS for n in names if n != name):
            return None
        g = math.gcd(g, coefficient)
    if not g:
        return False
    period = site.address_period
    return (period // math.gcd(period, g),)


def never_folded(mask: S.Expr, name: str, never: frozenset[str]) -> bool:
    """Whether no lane's value of the thread index `name` decides `mask` or any part of it that
    reads it: the mask is one atom (a term of coefficient one, nothing added: two parts that
    differ at most lanes may be equal at one, and their difference vanish there), and that
    atom, where it reads `name`, either joins such parts with `&&` or `||`, or compares two
    sides whose difference reads `name` only in terms of degree one outside other atoms and
    has a term that is one symbol of `never` (no scenario assigns it: not read by the address,
    not a loop counter, not a block index), in no other term. Put in at any lane and scenario,
    that difference keeps the term, so the comparison is no number (`logic.compare` folds
    only a number), and `&&`, `||` of such parts are none either (`logic.logical_and`): the
    lanes' masks are undecided alike."""
    if name not in mask.free_symbols:
        return True
    terms = mask.terms()
    if len(terms) != 1 or terms[0][1] != 1 or len(terms[0][0]) != 1 or terms[0][0][0].__class__ is not S.Term:
        return False
    atom = terms[0][0][0]
    if atom.op in ("&&", "||"):
        return all(never_folded(arg, name, never) for arg in atom.args)
    return atom.op in _COMPARISONS and _kept_apart(atom.args, name, never)


def _kept_apart(sides: tuple[S.Expr, ...], name: str, never: frozenset[str]) -> bool:
    """Whether each of a comparison's two `sides` reads `name` only in plain terms (`c * name`,
    so that a lane changes only its constant) and their difference keeps a term that is one
    symbol of `never`, in no other term of it (`never_folded`)."""
    difference: dict[tuple, int] = {}
    for side, sign in zip(sides, (1, -1)):
        for monomial, coefficient in side.terms():
            plain = len(monomial) == 1 and monomial[0].__class__ is S.Symbol
            if not plain and any(name in atom.free for atom in monomial):
                return False
            difference[monomial] = difference.get(monomial, 0) + sign * coefficient
    alone = {m[0].name for m, c in difference.items() if c and len(m) == 1 and m[0].__class__ is S.Symbol}
    elsewhere = {
        free
        for m, c in difference.items()
        if c and (len(m) != 1 or m[0].__class__ is not S.Symbol)
        for atom in m
        for free in atom.free
    }
    return any(symbol in never and symbol not in elsewhere for symbol in alone)


#: Each warp's thread indices as a site reads them (`thread_indices`), by how they are read,
#: then by its lanes (`memo.per_node`: `scenarios.warp_lanes` keeps them): BinomialOptions/
#: kernel.cu built them for each of 36,448 walks of 8 warps (0.67 s of 9.6 profiled in
#: `walk_key`, 0.38 after). The ways of reading are few (m a power of two up to the period).
_THREADS: dict[tuple[IndexRead, ...], dict] = {}


def thread_indices(lanes: tuple, reads: tuple[IndexRead, ...]) -> tuple:
    """The thread indices of each lane of a warp as `reads` reads them (`index_reads`: x, y,
    z): None for one not read and for a lane the warp does not have; one read only as a
    move, less its value at the warp's first lane, and that value modulo its m after the
    lanes (where some index is read so). Made index by index, a column of the lanes' values
    each, then put together lane by lane: convolution_simple/kernel.cu makes 1,536 of them
    (512 warps, three ways of reading), and a generator a lane and one an index in it were
    6% of its check (py-spy); under callgrind, 2026-11-29, 4.13 G -> 3.76 G instructions."""
    live = [lane for lane in lanes if lane is not None]
    columns: list[list] = []
    firsts: list[int] = []
    for name, read in zip(THREAD_SYMBOLS, reads):
        if not read:
            columns.append([None] * len(live))
            continue
        values = [lane[name] for lane in live]
        if read.__class__ is tuple:  # read only as a move: less the first lane's value
            first = values[0]  # (a warp has a first lane)
            values = [v - first for v in values]
            firsts.append(first % read[0])
        columns.append(values)
    made = iter(zip(*columns))
    rows = tuple([None if lane is None else next(made) for lane in lanes])
    return (*rows, tuple(firsts)) if firsts else rows


class Rows:
    """A warp's thread indices as a site reads them (`thread_indices`), with their hash worked
    out once: `costing.walk_warp` looks each warp's walk up by them, and hashing the 33 tuples
    again at each look-up was 2% of myocyte/main.cu's check (29,414 look-ups; under callgrind,
    2026-11-29, with `_WALKS`' scenarios summed once: 8.53 G -> 8.33 G instructions). Equal where
    the rows are equal."""

    __slots__ = ("hash", "rows")

    def __init__(self, rows: tuple) -> None:
        self.rows = rows
        self.hash = hash(rows)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return self is other or (other.__class__ is Rows and self.rows == other.rows)


def _rows(lanes: tuple, reads: tuple[IndexRead, ...]) -> Rows:
    return Rows(thread_indices(lanes, reads))


def read_indices(lanes: tuple, reads: tuple[IndexRead, ...]) -> Rows:
    """`thread_indices(lanes, reads)` (as `Rows`), remembered by `reads` and the lanes' identity."""
    table = _THREADS.get(reads)
    if table is None:
        table = _THREADS[reads] = {}
    return per_node(table, lanes, functools.partial(_rows, reads=reads))
