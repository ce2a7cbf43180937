"""A lane's substitution of a mask taken from a lane before it: one whose parts of thread indices
alone had the same values (`by_values`), or, for a mask built from one opaque term, whose
arguments' terms gave the same results (`grouped_subs`).

`by_values` is the general way: the substitution reads the lane only through the values of
the mask's slots (the thread indices it reads bare, and its largest terms that read nothing
else and hold no unknown, which `RememberedSubs` evaluates), so lanes whose slots agree get
the same result in the same steps. Its figures are in its docstring and `TRIAL_LANES`'s; what
follows is the older way, which `by_values` calls for the first lane of each value.

The cost walk puts each lane's thread indices into a warp's masks (`scenarios._at_lane`:
`e.subs(S.RememberedSubs(env, memo))`). A mask such as `amLast && (tid == 0)` is one opaque
term `t` whose arguments either read no thread index or are one opaque term `u` each
(`tid == 0`); `RememberedSubs` remembers `u` at each lane, but `t` reads an unknown of its own
in every template instance, so that every lane of every instance built `t` again from the
same few results of its `u`s. What that builds, and the steps it spends but for the `u`s'
steps, depend on those results alone: it is remembered by them (`_GROUPS`) and a lane whose
`u`s are remembered takes it from there, spending the steps the substitution would, its own
`u`s' included, and storing `t`'s result in the memo as the substitution would.

threadFenceReduction.cu (32 x 4 x 4 blocks, 20 instances of its single-pass kernel): 10,240
lanes of `amLast && (0 == threadIdx.x + threadIdx.y*32 + threadIdx.z*128)`, each substituted
(about 15 us each); now those of the 19 instances after the first are taken from two groups:
10,976 lanes of its masks from 686 groups, 6,911,685 Python calls -> 6,694,199, callgrind
7.94 G -> 7.75 G instructions (the file alone, `check --no-cache -j 1`).

A group is recorded only where the substitution made no constant, symbol or unknown that
the tables of `symbolic` did not hold (`S.fresh_values`): a constant met for the first time
spends a step that a second time does not, and a fresh unknown must stay distinct. Nothing
is grouped without a meter (the steps are what a group keeps).
"""

from __future__ import annotations

from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import BuiltOn, remember
from analyzer.analysis.symbolic.expressions import REMEMBERED_TERMS
from analyzer.analysis.symbolic.remembered import evaluable
from analyzer.analysis.values import THREAD_SET, THREAD_SYMBOLS

__all__ = ["WarpSubs", "by_values", "grouped_subs", "lane_subs", "terms_grouped"]

_UNSET: Any = object()
#: Per mask and names substituted: its term `t`, and the arguments of `t` that read the names,
#: as the one term each is (index, term); None where the mask is not of that shape.
_SHAPES: dict[tuple, tuple[S.Term, tuple[S.Term, ...]] | None] = {}
#: By (mask, the results of its arguments' terms): `t`'s result, the steps `t` took but for
#: its arguments' terms', the mask's result, and the steps of the substitution outside `t`.
_GROUPS: dict[tuple, tuple[S.Expr, int, S.Expr, int]] = {}
#: Per mask of that shape: the lanes `grouped_subs` looked it up at, and those taken from a
#: group; after `TRIAL_LANES` of them with fewer than a quarter taken, it is substituted
#: without looking. Five corpora in one process: of 356,030 masks asked for, 71,411 recorded a
#: group and at most 4,006 were taken from one.
_GROUP_TALLY: dict[S.Expr, list[int]] = {}


def _shape(e: S.Expr, names: frozenset[str]) -> tuple[S.Term, tuple[S.Term, ...]] | None:
    """The term of `e` and the terms of its arguments that read `names`, where `e` is one term
    (coefficient 1) remembered by `RememberedSubs` and each of its arguments either reads none
    of `names` or is one term (coefficient 1); else None."""
    t = S.single_atom(e)
    if t is None or t.__class__ is not S.Term or t.depth > S.MAX_DEPTH // 2:
        return None
    reading: list[S.Term] = []
    for a in t.args:
        if a.free_symbols.isdisjoint(names):
            continue
        u = S.single_atom(a)
        if u is None or u.__class__ is not S.Term:
            return None
        reading.append(u)
    return (t, tuple(reading)) if reading else None


def lane_subs(e: S.Expr, subs: S.RememberedSubs) -> S.Expr:
    """`e.subs(subs)`, taken from a lane whose parts of thread indices alone had the same values
    (`by_values`), or whose terms gave the same (`grouped_subs`), where it can."""
    slots = _slots(e, subs)
    if slots is None or budget.current() is None:
        return terms_grouped(e, subs)
    tally = _on_trial(_TALLY, slots)
    if tally is None:  # lanes seldom agree on these slots: looking costs more than it saves
        return terms_grouped(e, subs)
    return by_values(e, subs, slots, tally)


class WarpSubs:
    """`lane_subs(e, subs)` at the lanes of one warp, one call a lane in the lanes' order: what
    `lane_subs` and `grouped_subs` look up by `e` and the names put in alone (its slots, their
    tally, whether `e` is of a grouped shape, the slots' compiled function) is looked up at the
    first lane that asks and kept for the others, which bind the same names under the same
    meter. The tally is the same list at every lane (nothing else of the warp adds to
    `_TALLY`) and is read at each, as `_on_trial` reads it. Mandelbrot_cuda.cu under callgrind
    (`check --no-cache -j 1`, measured 2026-11-28, with `scenarios._lanes_at`): 3.386 G ->
    3.373 G instructions (2,560 lanes of its masks, in 80 warps); the 20 files of the speed
    figure in one process, 14.988 G -> 14.588 G."""

    __slots__ = ("_e", "_grouped", "_slots", "_tally", "_values")

    def __init__(self, e: S.Expr) -> None:
        self._e = e
        self._slots: tuple | bool | None = False  # False: not looked up yet

    def __call__(self, subs: S.RememberedSubs) -> S.Expr:
        slots = self._slots
        if slots is False:
            slots = self._first(subs)
        if slots is None:
            return self._grouped_or_plain(subs)
        tally = self._tally
        if tally[0] >= TRIAL_LANES and tally[1] * 4 < tally[0]:  # given up (`_on_trial`)
            return self._grouped_or_plain(subs)
        return by_values(self._e, subs, slots, tally, self._values)  # type: ignore[arg-type]

    def _first(self, subs: S.RememberedSubs) -> tuple | None:
        """What `lane_subs` looks up at each lane, looked up at the first (in its order)."""
        e = self._e
        slots = _slots(e, subs)
        metered = budget.current() is not None
        if slots is not None and metered:
            self._tally = _on_trial(_TALLY, slots) or _TALLY[slots]
            terms = slots[1]
            self._values = None
            if terms and subs._names == THREAD_SET:
                self._values = S.strict_values(terms, THREAD_SYMBOLS)
        else:
            slots = None
        self._slots = slots
        # `grouped_subs` gives None at once (nothing grouped) without a meter, for a number,
        # or where `e` is of no grouped shape: the substitution itself
        self._grouped = metered and not e.is_const and _shape_of(e, subs._names) is not None
        return slots

    def _grouped_or_plain(self, subs: S.RememberedSubs) -> S.Expr:
        return terms_grouped(self._e, subs) if self._grouped else self._e.subs(subs)


def _on_trial(tallies: dict, key: Any) -> list[int] | None:
    """The tally under `key` (the lanes looked up, those taken from a lane before), made where
    there is none; None where it is given up: `TRIAL_LANES` looked up, fewer than a quarter taken."""
    tally = tallies.get(key)
    if tally is None:
        tally = [0, 0]
        remember(tallies, key, tally)
    elif tally[0] >= TRIAL_LANES and tally[1] * 4 < tally[0]:
        return None
    return tally


def terms_grouped(e: S.Expr, subs: S.RememberedSubs) -> S.Expr:
    """`e.subs(subs)`, taken from a lane whose terms gave the same where it can (`grouped_subs`)."""
    done = grouped_subs(e, subs)
    return e.subs(subs) if done is None else done


# ----------------------------------------------------------------------------- by the values of its parts
#: Per expression and names substituted: the names read bare and the terms that read nothing
#: but those names (`_slots`); None where it reads none of them.
_SLOTS: dict[tuple, tuple[tuple[str, ...], tuple[S.Term, ...]] | None] = {}
#: Per slots (`_slots`): the lanes `by_values` was asked for, and those it took from a lane
#: before. Whether lanes agree depends on the slots alone, which the unrolled copies of a loop
#: share even where each has a counter of its own.
_TALLY: dict[tuple, list[int]] = {}
#: The lanes slots are tried by `by_values` before they are given up where fewer than a
#: quarter of them were taken from a lane before (a miss costs evaluating the slots and
#: remembering the lane, about half a substitution). tf32TensorCoreGemm.cu's addresses, whose
#: lanes differ in `threadIdx.x % 16`, each of an unrolled copy with a counter of its own:
#: 10.80 G instructions before `by_values`, 11.90 G with it tried at every lane, 11.01 G with
#: the tally by expression, 10.86 G by slots.
TRIAL_LANES = 64
#: By (expression, its slots, their values at a lane): the lane's substitution and its steps.
_BY_VALUES: BuiltOn = BuiltOn()  # on `subs.memo` (`ClearCounted`): the steps kept stand on its entries


def _slots(e: S.Expr, subs: S.RememberedSubs) -> tuple[tuple[str, ...], tuple[S.Term, ...]] | None:
    """Where `e` reads the names of `subs`: the names read as factors of its monomials or of its
    terms' arguments, and its largest terms that read nothing but those names, hold no unknown
    and are shallow enough for `RememberedSubs.term` to evaluate (`evaluable`); None where `e`
    reads none of the names (or is too deep to be remembered)."""
    bound = subs._names  # (a frozenset, whose hash is kept: no tuple of the names at each lane)
    key = (e, bound)
    if key in _SLOTS:
        return _SLOTS[key]
    if e.depth > S.MAX_DEPTH // 2:
        found = None
    else:
        names: set[str] = set()
        terms: dict[S.Term, None] = {}
        _find_slots(e, bound, names, terms)
        found = (tuple(sorted(names)), tuple(terms)) if names or terms else None
    remember(_SLOTS, key, found)
    return found


def _find_slots(e: S.Expr, bound: frozenset[str], names: set[str], terms: dict[S.Term, None]) -> None:
    for monomial in e._p:
        for atom in monomial:
            free = atom.free
            if free.isdisjoint(bound):
                continue
            if atom.__class__ is S.Symbol:
                names.add(atom.name)
            elif free <= bound and atom.depth <= S.MAX_DEPTH // 2 and evaluable(atom):  # type: ignore[arg-type]
                terms[atom] = None  # type: ignore[index]
            else:
                for a in atom.args:  # type: ignore[attr-defined]
                    _find_slots(a, bound, names, terms)


def by_values(
    e: S.Expr,
    subs: S.RememberedSubs,
    slots: tuple[tuple[str, ...], tuple[S.Term, ...]],
    tally: list[int],
    function: Any = _UNSET,
) -> S.Expr:
    """`e.subs(subs)` where `e` reads the names of `subs` only at `slots` (`_slots`): a function of
    the slots' values at this lane, so taken from a lane before whose slots had the same
    values, spending the steps that lane's substitution spent. Worked out (and remembered)
    where none had, and worked out without remembering where a slot does not evaluate here
    (it divides by zero: `RememberedSubs.term` rebuilds it instead) or where the substitution
    made a constant, symbol or unknown the tables of `symbolic` did not hold (a first meeting
    spends a step that later ones do not; a fresh unknown must stay distinct).

    cdpBitonicSort.cu checked with the file that launches it (1,024-thread blocks): each of
    its sorting network's masks, `(threadIdx.x / 1024) % 2 == (threadIdx.x < (256 ^
    threadIdx.x))` choosing between comparisons of loaded values, was substituted at every
    lane, 5.8 of the file's 7.1 s; the lanes of a warp give one of a few values of its two
    slots. `tally` counts the lanes asked for and those taken (`_TALLY`); `function`, where
    given, is the slots' compiled function (`_slot_values`), looked up once for a warp."""
    tally[0] += 1
    names, terms = slots
    # the lane's values without a list comprehension's frame, the compiled function called
    # here where the warp gave it, and the steps of a lane taken spent as `budget.spend` spends
    # them, without a call each: the 20 files of the speed figure in one process under
    # callgrind (measured 2026-11-28) 14.588 G -> 14.560 G instructions
    values: list[int] = [*map(subs.__getitem__, names)]
    if terms:
        try:
            if function is None or function is _UNSET:
                values.extend(_slot_values(terms, subs, function))
            else:
                values.extend(function(subs["threadIdx.x"], subs["threadIdx.y"], subs["threadIdx.z"]))
        except (ArithmeticError, ValueError, LookupError):
            return terms_grouped(e, subs)
    memo = subs.memo
    clears = getattr(memo, "clears", None)
    table = _BY_VALUES.since(clears)
    key = (e, slots, *values)
    seen = table.get(key)
    meter = budget.current()
    assert meter is not None
    if seen is not None:
        tally[1] += 1
        meter.left -= seen[1]
        if meter.left < 0:
            raise budget.BudgetExceeded(meter.stage, meter.limit)
        return seen[0]
    before, fresh = meter.left, S.fresh_values()
    done = terms_grouped(e, subs)
    if S.fresh_values() == fresh and getattr(memo, "clears", None) == clears:
        remember(table, key, (done, before - meter.left))
    return done


def _slot_values(
    terms: tuple[S.Term, ...], subs: S.RememberedSubs, function: Any = _UNSET
) -> tuple[int, ...] | list[int]:
    """Each slot term's value at the lane `subs` (raising where `evaluate` does): by the function
    `S.strict_values` compiles of them (remembered by the terms), else each walked. A mask's
    slots are asked for at every lane `by_values` is tried at (`_TALLY`): cdpBitonicSort.cu's
    sorting network, 112,704 slot values of 56,448 lanes."""
    if function is _UNSET:
        function = S.strict_values(terms, THREAD_SYMBOLS) if subs._names == THREAD_SET else None
    if function is None:
        return [t.evaluate(subs) for t in terms]
    return function(subs["threadIdx.x"], subs["threadIdx.y"], subs["threadIdx.z"])


def _key(t: S.Term, subs: S.RememberedSubs) -> tuple:
    """The key under which `RememberedSubs.term` remembers `t` (the term and the values of
    the names it reads)."""
    free = t.free
    items = subs._items
    if len(items) == 3:  # a lane's thread indices: written out as `RememberedSubs.term` writes it
        (n0, v0), (n1, v1), (n2, v2) = items
        return (t, v0 if n0 in free else None, v1 if n1 in free else None, v2 if n2 in free else None)
    return (t, *[v if n in free else None for n, v in items])


def grouped_subs(e: S.Expr, subs: S.RememberedSubs) -> S.Expr | None:
    """`e.subs(subs)` with its steps and what it leaves in `subs.memo`, where `e` is of the
    shape above, its arguments' terms are remembered at these values and `e`'s term is not,
    and a lane before gave those terms the same results: then taken from that lane, else
    worked out (and remembered for the next lane where it may be). None: not of this case,
    nothing done (the caller substitutes)."""
    meter = budget.current()
    if meter is None or e.is_const:
        return None
    shape = _shape_of(e, subs._names)
    if shape is None:
        return None
    tally = _on_trial(_GROUP_TALLY, e)
    if tally is None:  # its lanes seldom share a group: looking costs more than it saves
        return None
    tally[0] += 1
    t, reading = shape
    memo = subs.memo
    t_key = _key(t, subs)
    if t_key in memo:
        return None  # a plain look-up of `t`
    seen = [memo.get(_key(u, subs)) for u in reading]
    if None in seen:
        return None  # an argument's term worked out here: its steps are its own
    args_steps = sum(s[1] for s in seen)  # type: ignore[index]
    group_key = (e, *[s[0] for s in seen])  # type: ignore[index]
    group = _GROUPS.get(group_key)
    if group is None:
        return _recorded(e, subs, t_key, group_key, args_steps)
    tally[1] += 1
    t_result, t_own, result, outside = group
    meter.spend(1 + t_own + args_steps)  # the substitution's step and `t` with its arguments
    if len(memo) >= REMEMBERED_TERMS:  # as `RememberedSubs.term` stores `t`
        memo.clear()
    memo[t_key] = (t_result, t_own + args_steps)
    budget.spend(outside - 1)  # building `e`'s result from `t`'s
    return result


def _shape_of(e: S.Expr, names: frozenset[str]) -> tuple[S.Term, tuple[S.Term, ...]] | None:
    """`_shape(e, names)`, remembered (`_SHAPES`)."""
    shape_key = (e, names)  # (a frozenset, whose hash is kept: no tuple of the names at each lane)
    if shape_key in _SHAPES:
        return _SHAPES[shape_key]
    shape = _shape(e, names)
    remember(_SHAPES, shape_key, shape)
    return shape


def _recorded(e: S.Expr, subs: S.RememberedSubs, t_key: tuple, group_key: tuple, args_steps: int) -> S.Expr:
    """`e.subs(subs)` worked out, and its group remembered where that made nothing new."""
    meter = budget.current()
    assert meter is not None
    before, fresh = meter.left, S.fresh_values()
    result = e.subs(subs)
    stored = subs.memo.get(t_key)
    if stored is not None and S.fresh_values() == fresh:
        t_result, t_steps = stored
        remember(_GROUPS, group_key, (t_result, t_steps - args_steps, result, before - meter.left - t_steps))
    return result
