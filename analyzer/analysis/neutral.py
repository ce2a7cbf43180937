"""Scenario symbols that change nothing a scenario charges, found ahead of the walk.

A scenario (`scenarios.py`) assigns values to walked loop counters, block indices and sampled
unknowns. One that no lane expression made a number reads (`lanes_read`: the lanes'
distances, masks and conditions that still hold another symbol stay undecided whatever it
is) and that the first lane's address reads only inside opaque terms that stay opaque
(`(blockIdx.x + gridDim.x*k) / gridWidth` at each value of `k`) changes neither the lanes
nor where the warp may start: the address's `starts.Shape` reads the coefficients of its
monomials and their typical and stated steps, not which opaque terms they are. Such a symbol
is `neutral`: `groups.py` groups its values as those of a symbol that moves the warp by 0
bytes, and the group is charged once, each other scenario spending the steps the first took
(the check asks that each value's substitution takes as many). Mandelbrot_cuda.cu's
grid-stride loop counter: 512 scenarios a warp, 64 charged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import remember
from analyzer.analysis.scenarios import WarpPlan
from analyzer.analysis.starts import atom_key, evaluates, substituted_alone
from analyzer.analysis.symbolic.expressions import Symbol
from analyzer.analysis.verdict import Monomial, SymbolFacts, stated_gcd, typical_gcd

__all__ = ["lanes_read", "names_read", "neutral"]


def lanes_read(plan: WarpPlan) -> frozenset[str]:
    """The scenario's symbols that the lanes' distances, masks and walked conditions read,
    of those a scenario can make a number (every symbol of which it assigns). The others
    are no number in any scenario, compiled or substituted (`scenarios.scenario_lanes`),
    whatever the values. (The first lane's address is left to the caller.)"""
    return frozenset(names_read(plan.lane_exprs[:-1], frozenset(plan.names)))


def names_read(exprs: Iterable[S.Expr | None], names: frozenset[str]) -> set[str]:
    """The symbols read by those of `exprs` (None skipped) that read nothing but `names`."""
    read: set[str] = set()
    for e in exprs:
        if e is not None:
            # the stored set where it is worked out, without `Expr.free_symbols`'s call: with
            # `compiled._compiled_source`, `plan_warp` and `_at_lane`, threadFenceReduction.cu,
            # Mandelbrot_cuda.cu, scan.cu, cdpBitonicSort.cu: 850,042 calls -> 491,677; Mandelbrot_cuda.cu
            # under callgrind 5.049 G -> 5.014 G instructions
            free = e._free
            if free is None:
                free = e.free_symbols
            if free <= names:
                read |= free
    return read


#: Whether a symbol is neutral in a first lane's address, by (address, names, the symbol's
#: place, its values): the template instances of a kernel share their addresses
#: (Mandelbrot_cuda.cu: 360 plans asked, 49 worked out).
_NEUTRAL: dict[tuple, bool] = {}


def neutral(plan: WarpPlan, i: int, values: Sequence[int], facts: SymbolFacts | None) -> bool:
    """The `i`-th symbol of the plan's scenarios, taking `values`, changes nothing its
    scenarios charge, nor the steps they spend (see the module); the caller has checked
    that no lane expression a scenario makes a number reads it (`lanes_read`)."""
    if facts is not None:  # not remembered (facts are not hashed); rare
        return _neutral_in(plan.ref, plan.names, i, values, facts)
    key = (plan.ref, plan.names, i, tuple(values))
    done = _NEUTRAL.get(key)
    if done is None:
        done = _neutral_in(plan.ref, plan.names, i, values, None)
        remember(_NEUTRAL, key, done)
    return done


def _neutral_in(ref: S.Expr, names: tuple[str, ...], i: int, values: Sequence[int], facts: SymbolFacts | None) -> bool:
    """`neutral`, worked out on the first lane's address `ref`: every opaque term of it that
    reads an assigned symbol reads this one alone, and at each value stays one monomial of
    the same coefficient that reads no other, whose address is no number (`starts.evaluates`), in
    as many steps; the monomials stay apart, and their typical and stated steps stay."""
    name = names[i]
    bound = frozenset(names)
    atoms: list[S.Atom] = []
    for monomial, _ in ref.terms():
        for atom in monomial:
            if atom.__class__ is Symbol:
                if atom.name == name:  # a plain term: it moves the warp (`groups.py`)
                    return False
            elif not atom.free.isdisjoint(bound):
                if atom.free & bound != {name} or atom.free <= bound:  # it must stay a term
                    return False
                atoms.append(atom)
    if not atoms:  # the address does not read it
        return True
    first = None
    for v in values:
        seen = _signature(ref, bound, name, v, facts)
        if seen is None or (first is not None and seen != first):
            return False
        first = seen
    return True


def _signature(ref: S.Expr, bound: frozenset[str], name: str, value: int, facts: SymbolFacts | None) -> tuple | None:
    """What the starts and steps of a scenario read of `ref` at `name` = `value`: for each
    monomial that is no number in a scenario (`starts.split_ref`), the factor its opaque
    terms bring, its typical and stated steps, and the steps of each term's substitution.
    None where a term becomes a number or a sum, may evaluate, or two monomials meet."""
    env = {name: value}
    kept: list[tuple[S.Atom, ...]] = []
    shares: list[tuple] = []
    for monomial, _ in ref.terms():
        free = frozenset().union(*(atom.free for atom in monomial))
        if not monomial or (free and free <= bound):  # the constant, or a number in every scenario
            continue
        atoms: list[S.Atom] = []
        factor = 1
        steps: list[int] = []
        for atom in monomial:
            if atom.free.isdisjoint(bound):
                atoms.append(atom)
            elif atom.__class__ is not Symbol:  # a term that reads `name` (`_neutral_in`)
                if evaluates(atom, env):  # the address may be a number (`starts.substituted_shape`)
                    return None
                e, spent = substituted_alone(atom, env)
                if e.is_const or len(e.terms()) != 1:
                    return None
                ((vm, vk),) = e.terms()
                factor *= vk
                atoms.extend(vm)
                steps.append(spent)
        skeleton = tuple(sorted(atoms, key=atom_key))
        kept.append(skeleton)
        shares.append((factor, _steps_of(skeleton, facts), tuple(steps)))
    if len(set(kept)) != len(kept):
        return None
    return tuple(shares)


def _steps_of(monomial: tuple[S.Atom, ...], facts: SymbolFacts | None) -> tuple[int, int | None]:
    """The typical and stated multiples of a monomial (`verdict.typical_gcd`, `stated_gcd`, of
    the monomial alone with coefficient 1: modulo 0, the gcd is the multiple itself)."""
    term: tuple[Monomial, ...] = ((monomial, 1),)
    return typical_gcd(term, 0, facts), stated_gcd(term, 0, facts)
