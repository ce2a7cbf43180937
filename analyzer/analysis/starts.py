"""Where a warp's first address may lie: the starts of a request, for the cost walk.

A request costs the same when every lane moves by `Architecture.address_period` bytes, so
what the first lane's address brings to a charge is the set of residues it can take modulo
that period (`starts_of`), and those of them a typical verdict considers (`verdict.py`).
Both sets depend on the address only through a few numbers, its `Shape` (the gcds of its
coefficients with the period: plain, at typical values, at the values the code states) and
its constant. The walk asks for them in every scenario (`remembered_starts`): the
substitution of a scenario's values into the address is remembered per access, and the
residue sets per shape and constant, so that the 184,000 scenarios of Mandelbrot_cuda.cu
work out a few dozen sets instead of one each.
"""

from __future__ import annotations

import itertools
import math

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import remember, replayed
from analyzer.analysis.scenarios import ScenarioLanes, Site, WarpPlan, evaluated
from analyzer.analysis.symbolic.expressions import Symbol
from analyzer.analysis.verdict import Monomial, SymbolFacts, stated_gcd, typical_gcd
from analyzer.arch import Architecture
from analyzer.ir.nodes import Space
from analyzer.records import record

__all__ = [
    "KeptStarts",
    "Shape",
    "Starts",
    "Template",
    "atom_key",
    "evaluates",
    "kept_by_moves",
    "remembered_starts",
    "shape_of",
    "start_residues",
    "starts_of",
    "substituted_alone",
]

#: The first lane's possible starts within the address period, and those a typical verdict considers.
Starts = tuple[tuple[int, ...], tuple[int, ...]]
#: `Starts`, and the moves of the first lane's address that keep them and the steps finding them
#: took (`kept_by_moves`): a multiple of that number; 0 where no move is known to.
KeptStarts = tuple[tuple[int, ...], tuple[int, ...], int]


@record
class Shape:
    """What the residues of an address modulo the period depend on, apart from its constant."""

    constant: bool  # the address is a number
    gcd: int  # the step between its residues (`symbolic.residues`)
    typical_gcd: int  # the same at typical values (`verdict.typical_residues`)
    stated_gcd: int | None  # the same at the values the code states (`verdict.stated_residues`); None: unstated


def shape_of(e: S.Expr, period: int, facts: SymbolFacts | None) -> Shape:
    """The `Shape` of the address `e` modulo `period`."""
    return terms_shape(e.terms(), period, facts)


def terms_shape(terms: tuple[Monomial, ...], period: int, facts: SymbolFacts | None) -> Shape:
    """The `Shape` modulo `period` of the address whose monomials and coefficients are `terms`."""
    varying = tuple((m, c) for m, c in terms if m)
    if not varying:
        return Shape(True, period, period, None)
    g = 0
    for _, c in varying:
        g = math.gcd(g, c)
    return Shape(False, math.gcd(g, period), typical_gcd(varying, period, facts), stated_gcd(varying, period, facts))


def constant_of(e: S.Expr) -> int:
    """The constant term of `e`."""
    return e.value if e.is_const else next((c for m, c in e.terms() if not m), 0)


def starts_of(site: Site, ref_v: S.Expr, arch: Architecture) -> Starts:
    """Where the first lane's address `ref_v` may lie within `arch.address_period` (`starts_from`)."""
    return starts_from(site, shape_of(ref_v, arch.address_period, site.facts), constant_of(ref_v), arch)


def starts_from(site: Site, shape: Shape, c0: int, arch: Architecture) -> Starts:
    """Where a first lane's address of `shape` and constant `c0` may lie within
    `arch.address_period` (under which both costs are invariant): one residue where the
    address is a number, else every residue the expression can take (for shared accesses of
    whole words, any: moving every lane by the same number of words rotates the banks, at the
    same cost); and those of them a typical verdict considers (`verdict.typical_residues`)."""
    period = arch.address_period
    if shape.constant:
        return (c0 % period,), (c0 % period,)
    if site.space == Space.SHARED and site.pieces[0][1] >= arch.bank_bytes:
        return (0,), (0,)
    residues = tuple(range(c0 % shape.gcd, period, shape.gcd))
    if shape.stated_gcd is not None:  # what the code states holds in the worst case too
        g = shape.stated_gcd
        residues = tuple(r for r in residues if r % g == c0 % g) or residues
    g = shape.typical_gcd
    typical = frozenset(r for r in range(c0 % g, period, g))
    if site.space == Space.GLOBAL:
        residues = one_per_sector_shift(residues, arch.global_period)
        kept = {r % arch.global_period: r for r in residues}
        typical = frozenset(kept[r % arch.global_period] for r in typical)
    return residues, tuple(r for r in residues if r in typical)


def kept_by_moves(site: Site, shape: Shape, arch: Architecture) -> int:
    """The moves of a first lane's address of `shape` that leave its starts (`starts_from`) as
    they are: the multiples of this number. `starts_from` reads the constant only modulo the
    shape's gcds (the period where the address is a number), and not at all for the shared
    accesses of whole words."""
    if shape.constant:
        return arch.address_period
    if site.space == Space.SHARED and site.pieces[0][1] >= arch.bank_bytes:
        return 1
    kept = math.lcm(shape.gcd, shape.typical_gcd)
    return kept if shape.stated_gcd is None else math.lcm(kept, shape.stated_gcd)


def one_per_sector_shift(residues: tuple[int, ...], sector_bytes: int) -> tuple[int, ...]:
    """The first of the sorted `residues` in each class modulo the sector size: moving every
    lane by whole sectors moves the sectors, so a global request costs the same (and the
    smallest start of each class, the one that would be reported, is kept)."""
    kept: dict[int, int] = {}
    for r in residues:
        kept.setdefault(r % sector_bytes, r)
    return tuple(sorted(kept.values()))


def start_residues(
    site: Site, plan: WarpPlan, combo: tuple[int, ...], lanes: ScenarioLanes, arch: Architecture
) -> Starts:
    """Where the first lane's address may lie within `arch.address_period` (`starts_of`), with
    the scenario's values put in."""
    ref_value = lanes.ref_value
    if ref_value is None and plan.ref.is_const:
        ref_value = plan.ref.value
    if ref_value is not None:
        return (ref_value % arch.address_period,), (ref_value % arch.address_period,)
    assign = lanes.assign if lanes.assign is not None else dict(zip(plan.names, combo))
    return starts_of(site, evaluated(plan.ref, assign) if assign else plan.ref, arch)


# ----------------------------------------------------------------------------- remembered
@record
class SplitRef:
    """A warp's first-lane address as the starts see it (`remembered_starts`)."""

    assigned: tuple[Monomial, ...]  # the monomials every symbol of which a scenario assigns
    others: tuple[Monomial, ...]  # the rest but the constant
    constant: int
    mixed: bool  # some monomial of `others` holds a symbol a scenario assigns
    token: int  # stands for (`others`, the names) in memo keys: one number for each, never reused
    # `assigned` as (coefficient, where in a scenario's values each of its symbols is), where
    # every atom of it is a plain symbol: summed from the values without a dict; None: not so
    indexed: tuple[tuple[int, tuple[int, ...]], ...] | None = None


#: Each warp's first-lane address split (`split_ref`).
_SPLITS: dict[tuple, SplitRef] = {}


def split_ref(ref: S.Expr, names: tuple[str, ...]) -> SplitRef:
    """`ref` split into the monomials a scenario's values (`names`) make numbers, the others,
    and the constant. Kept as monomials, not built into expressions: building spends budget
    steps the walk did not. Remembered per warp plan."""
    key = (ref, names)
    done = _SPLITS.get(key)
    if done is not None:
        return done
    bound = frozenset(names)
    assigned: list[Monomial] = []
    others: list[Monomial] = []
    constant, mixed = 0, False
    for monomial, coefficient in ref.terms():
        free = frozenset().union(*(atom.free for atom in monomial))
        if not monomial:
            constant = coefficient
        elif free and free <= bound:
            assigned.append((monomial, coefficient))
        else:
            others.append((monomial, coefficient))
            mixed = mixed or not free.isdisjoint(bound)
    token = _TOKENS.get((tuple(others), names))
    if token is None:
        token = next(_NEXT_TOKEN)
        remember(_TOKENS, (tuple(others), names), token)
    done = SplitRef(tuple(assigned), tuple(others), constant, mixed, token, indexed_monomials(assigned, names))
    remember(_SPLITS, key, done)
    return done


def indexed_monomials(
    monomials: list[Monomial], names: tuple[str, ...]
) -> tuple[tuple[int, tuple[int, ...]], ...] | None:
    """`monomials` as (coefficient, the places in `names` of its symbols), None where some
    atom is not a plain symbol (an opaque term is evaluated from the values by name)."""
    place = {name: i for i, name in enumerate(names)}
    out = []
    for monomial, coefficient in monomials:
        if any(atom.__class__ is not Symbol for atom in monomial):
            return None
        out.append((coefficient, tuple(place[atom.name] for atom in monomial)))  # type: ignore[attr-defined]
    return tuple(out)


def indexed_value(indexed: tuple[tuple[int, tuple[int, ...]], ...], values: tuple[int, ...]) -> int:
    """The sum of monomials given by `indexed_monomials`, at a scenario's `values` (as
    `monomials_value` with the values by name)."""
    total = 0
    for coefficient, places in indexed:
        for i in places:
            coefficient *= values[i]
        total += coefficient
    return total


#: A number for each (monomials not assigned, names) met (`SplitRef.token`): hashing the
#: monomials in every scenario's memo key took a fifth of Mandelbrot_cuda.cu's walk. Numbers
#: are never given twice, so a table emptied (`remember`) makes no two splits share one.
_TOKENS: dict[tuple, int] = {}
_NEXT_TOKEN = itertools.count()


def monomials_value(monomials: tuple[Monomial, ...], env: dict[str, int]) -> int:
    """The sum of `monomials` with `env` put in (as `Expr.evaluate`)."""
    total = 0
    for monomial, coefficient in monomials:
        v = coefficient
        for atom in monomial:
            v *= env[atom.name] if isinstance(atom, S.Symbol) else atom.evaluate(env)  # type: ignore[attr-defined]
        total += v
    return total


def remembered_starts(
    site: Site, plan: WarpPlan, combo: tuple[int, ...], lanes: ScenarioLanes, arch: Architecture, memo: dict
) -> KeptStarts:
    """`start_residues`, remembered in `memo` (one access's). The starts depend on the first
    lane's address only through its `Shape` and its constant modulo `address_period`. The
    warps of a block differ in the monomials a scenario's values make numbers
    (`imageW*8*threadIdx.y`), so those are summed as numbers with the constant, and the
    substitution into the others is done once per scenario that assigns their symbols, not
    once per scenario and warp (Mandelbrot_cuda.cu: 184,000 substitutions); what is kept of it
    is its shape and constant, and the residue sets are worked out once per shape and
    constant. A remembered substitution spends again the steps it took (analyzer.budget), so
    budgets run out where they did.

    With the starts: the moves of the address by a plain term (`k*4`) that keep them and the
    steps they took (`kept_by_moves`), where those steps do not depend on the values of such
    terms' symbols (the substitution is the one of the scenarios that agree on the other
    symbols, or it was worked out from a `Template`, which reads only the symbols of the other
    monomials); else 0."""
    split = plan.split  # kept only where the address is no number (asked first: one look-up)
    if split is None or lanes.ref_value is not None:
        if lanes.ref_value is not None or plan.ref.is_const:
            return (*start_residues(site, plan, combo, lanes, arch), 0)
        split = plan.split = split_ref(plan.ref, plan.names)
    env = None
    indexed = split.indexed
    if indexed is not None:  # the scenario's values are `combo`, by place (`lanes.assign` too)
        shift = split.constant  # `indexed_value` written out: asked in every scenario (1.16 M calls, five corpora)
        for coefficient, places in indexed:
            for i in places:
                coefficient *= combo[i]
            shift += coefficient
    else:
        env = lanes.assign if lanes.assign is not None else dict(zip(plan.names, combo))
        try:
            shift = split.constant + monomials_value(split.assigned, env)
        except (ArithmeticError, ValueError, LookupError):  # as `evaluated`: the slow way
            return (*start_residues(site, plan, combo, lanes, arch), 0)
    period = site.address_period
    assigned = combo if split.mixed else ()
    # what the scenario's starts are, with the steps the substitution took, in one look-up
    done = memo.get((split.token, assigned, shift % period))
    if done is not None:
        if done[1]:  # (no step: nothing to spend; a meter that ran out raised before, and stopped the walk)
            budget.spend(done[1])
        return done[0]
    if env is None:
        env = lanes.assign if lanes.assign is not None else dict(zip(plan.names, combo))
    key = ("substituted", split.token, assigned)
    seen = memo.get(key)
    if seen is None:
        found_shape = numeric_shape(split, plan.names, combo, period, site.facts, memo)
        # the steps are the same at every value of a plain term's symbol where the substitution
        # is shared by all of them (`assigned` is `()`) or read from a template
        steady = found_shape is not None or not split.mixed
        if found_shape is None:
            found_shape = substituted_shape(plan.ref, env, shift, period, site.facts)
        seen = memo[key] = (*found_shape, steady)
    else:
        budget.spend(seen[2])
    shape, rest, steps, steady = seen
    starts_key = ("starts", shape, (rest + shift) % period)
    found = memo.get(starts_key)
    if found is None:
        found = memo[starts_key] = starts_from(site, shape, rest + shift, arch)
    kept = (*found, kept_by_moves(site, shape, arch) if steady else 0)
    memo[(split.token, assigned, shift % period)] = (kept, steps)
    return kept


def substituted_shape(
    ref: S.Expr, env: dict[str, int], shift: int, period: int, facts: SymbolFacts | None
) -> tuple[Shape, int, int]:
    """What the starts read of `ref` with `env` put in: its `Shape`, its constant less `shift`
    (the value of its monomials `env` makes numbers), and the steps the substitution took
    (spent). Worked out from the monomials (`substituted_terms`) where each opaque term
    substituted into is one monomial; else, or where `ref` evaluates to a number, by
    `evaluated`, as the walk did."""
    meter = budget.current()
    before = meter.left if meter is not None else 0
    terms = None
    if env and not evaluates(ref, env):
        terms = substituted_terms(ref, env)
    if terms is None:
        ref_v = evaluated(ref, env) if env else ref
        steps = 0 if meter is None else before - meter.left
        return shape_of(ref_v, period, facts), constant_of(ref_v) - shift, steps
    steps = 0 if meter is None else before - meter.left
    constant = next((c for m, c in terms if not m), 0)
    return terms_shape(terms, period, facts), constant - shift, steps


def evaluates(e: S.Expr | S.Atom, env: dict[str, int]) -> bool:
    """`e`, an expression or one of its terms, has a value under `env` (`evaluated` would give
    a number: a condition may leave a symbol it does not bind unread)."""
    try:
        e.evaluate(env)  # type: ignore[union-attr]
    except (ArithmeticError, ValueError, LookupError):
        return False
    return True


def substituted_terms(ref: S.Expr, env: dict[str, int]) -> tuple[Monomial, ...] | None:
    """The monomials and coefficients of ``ref.subs(env)``, without building it: the same
    canonical monomials, each opaque term substituted once per value of the symbols it reads
    (`substituted_atom`), and the same budget steps spent (a step for the substitution, those
    of each term, one for the result). None where a term substituted into is not one
    monomial (`Expr.subs` would build the product)."""
    budget.spend()  # the substitution does work (as `Expr.subs`)
    out: dict[tuple[S.Atom, ...], int] = {}
    for monomial, coefficient in ref.terms():
        kept: list[S.Atom] = []
        resort = False
        for atom in monomial:
            if atom.__class__ is Symbol:
                v = env.get(atom.name)
                if v is None:
                    kept.append(atom)
                    continue
                coefficient *= v
            elif atom.free.isdisjoint(env):
                kept.append(atom)
                continue
            else:
                e = substituted_atom(atom, env)
                if e.is_const:
                    coefficient *= e.value
                elif len(e.terms()) == 1:
                    ((vm, vk),) = e.terms()
                    coefficient *= vk
                    kept.extend(vm)
                    resort = True
                    continue
                else:
                    return None
            if not coefficient:
                break
        if not coefficient:
            continue
        if resort and len(kept) > 1:
            kept.sort(key=atom_key)
        key = tuple(kept)
        out[key] = out.get(key, 0) + coefficient
    budget.spend()  # the result built (as `Expr.subs`)
    return tuple((m, c) for m, c in out.items() if c)


def atom_key(atom: S.Atom) -> tuple:
    return atom.key


#: Each opaque term with the values of the symbols it reads put in, and the steps that took.
_ATOMS: dict[tuple, tuple[S.Expr, int]] = {}


def substituted_atom(atom: S.Atom, env: dict[str, int]) -> S.Expr:
    """`atom.subs(env)`, remembered by the atom and the values of the symbols it reads; a
    remembered one spends again the steps it took (analyzer.budget)."""
    key = (atom, tuple(sorted((n, v) for n, v in env.items() if n in atom.free)))
    return replayed(_ATOMS, key, lambda: atom.subs(env))  # type: ignore[attr-defined]


#: The steps a check may take without counting them (`substituted_alone`): more than any one
#: substitution takes.
_UNCOUNTED = 1 << 60


def substituted_alone(atom: S.Atom, env: dict[str, int]) -> tuple[S.Expr, int]:
    """`substituted_atom(atom, env)` and the steps it takes, without spending them (worked
    out ahead of the walk): remembered where the walk will ask for it, with those steps."""
    meter = budget.Meter("analysis", _UNCOUNTED)
    with budget.metered(meter):
        done = substituted_atom(atom, env)
    return done, _UNCOUNTED - meter.left


# ----------------------------------------------------------------------------- in numbers
_VALUE, _NUMBER = 0, 1  # a factor: a scenario's value (by its place), or a term's number


@record
class Template:
    """The monomials of a first-lane address that are no number in a scenario
    (`SplitRef.others`) with the values of the symbols their opaque terms read put in: what
    `substituted_terms` works out, left as numbers to multiply by the scenario's other values.
    Each monomial is (coefficient, factors, skeleton): a factor (`_VALUE`, place, 0)
    multiplies by a scenario's value, (`_NUMBER`, number, steps) by what a term became, whose
    substitution took `steps`; the skeleton numbers what is left of the monomial but numbers
    (monomials of one skeleton add up)."""

    monomials: tuple[tuple[int, tuple[tuple[int, int, int], ...], int], ...]
    typical: tuple[int, ...]  # each skeleton's typical multiple (`verdict.typical_gcd`)
    stated: tuple[int, ...] | None  # its stated multiple (`verdict.stated_gcd`); None: no divisors stated
    constant: int  # the skeleton that is no monomial, -1 where none is


def numeric_shape(
    split: SplitRef, names: tuple[str, ...], combo: tuple[int, ...], period: int, facts: SymbolFacts | None, memo: dict
) -> tuple[Shape, int, int] | None:
    """`substituted_shape` for a scenario, from the `Template` of the scenarios that agree on
    the symbols the opaque terms of `split.others` read (remembered in `memo`, one access's),
    spending the steps the substitution takes; None where no template holds: the assigned
    monomials are not plain (`SplitRef.indexed`), a term becomes a sum, or the address may
    evaluate to a number (`substituted_shape` then decides). Mandelbrot_cuda.cu: 2,880
    substitutions, 45 templates."""
    if split.indexed is None or not names:
        return None
    places = memo.get(("places", split.token))
    if places is None:
        places = memo["places", split.token] = _term_places(split.others, names)
    key = ("template", split.token, tuple([combo[i] for i in places]))
    template: Template | bool | None = memo.get(key)
    if template is None:  # (False: none holds)
        template = memo[key] = _template(split.others, names, {names[i]: combo[i] for i in places}, facts) or False
    if not isinstance(template, Template):
        return None
    shape, rest, steps = template_shape(template, combo, period)
    budget.spend(steps)
    return shape, rest, steps


def _term_places(monomials: tuple[Monomial, ...], names: tuple[str, ...]) -> tuple[int, ...]:
    """Where in `names` the symbols that the opaque terms of `monomials` read are."""
    read = {n for monomial, _ in monomials for atom in monomial if atom.__class__ is not Symbol for n in atom.free}
    return tuple(i for i, name in enumerate(names) if name in read)


def _template(
    monomials: tuple[Monomial, ...], names: tuple[str, ...], env: dict[str, int], facts: SymbolFacts | None
) -> Template | None:
    """The `Template` of `monomials` at `env` (the values of the symbols their opaque terms
    read); None where a term becomes a sum, or no term certainly fails to evaluate."""
    place = {name: i for i, name in enumerate(names)}
    skeletons: dict[tuple[S.Atom, ...], int] = {}
    out = []
    fails = False  # some atom has no value in any scenario: the address is never a number
    for monomial, coefficient in monomials:
        factors: list[tuple[int, int, int]] = []
        kept: list[S.Atom] = []
        for atom in monomial:
            if atom.__class__ is Symbol:
                at = place.get(atom.name)
                if at is None:
                    kept.append(atom)
                    fails = True
                else:
                    factors.append((_VALUE, at, 0))
                continue
            fails = fails or not evaluates(atom, env)
            if atom.free.isdisjoint(env):
                kept.append(atom)
                continue
            e, steps = substituted_alone(atom, env)
            if not e.is_const and len(e.terms()) != 1:
                return None
            ((vm, vk),) = e.terms() if not e.is_const else (((), e.value),)
            factors.append((_NUMBER, vk, steps))
            kept.extend(vm)
        skeleton = tuple(sorted(kept, key=atom_key))
        out.append((coefficient, tuple(factors), skeletons.setdefault(skeleton, len(skeletons))))
    if not fails:
        return None
    found = tuple(skeletons)
    stated = None
    if facts is not None and facts.divisors:
        stated = tuple(stated_gcd(((m, 1),), 0, facts) or 1 for m in found)  # modulo 0: the multiple itself
    return Template(tuple(out), tuple(typical_gcd(((m, 1),), 0, facts) for m in found), stated, skeletons.get((), -1))


def template_shape(template: Template, combo: tuple[int, ...], period: int) -> tuple[Shape, int, int]:
    """What `substituted_shape` gives for the scenario `combo` from its `Template`: the
    monomials multiplied out in numbers (a monomial stops at a zero factor, its later terms
    not substituted, as `substituted_terms` does), added by skeleton, and the shape of the sum."""
    steps = 2  # the substitution and its result (`substituted_terms`)
    sums = [0] * len(template.typical)
    for coefficient, factors, skeleton in template.monomials:
        c = coefficient
        for kind, a, spent in factors:
            if kind == _VALUE:
                c *= combo[a]
            else:
                steps += spent
                c *= a
            if not c:
                break
        if c:
            sums[skeleton] += c
    rest = sums[template.constant] if template.constant >= 0 else 0
    g = typical = stated = 0
    constrained = False
    for i, c in enumerate(sums):
        if c and i != template.constant:
            g = math.gcd(g, c)
            typical = math.gcd(typical, abs(c) * template.typical[i])
            if template.stated is not None:
                constrained = constrained or template.stated[i] > 1
                stated = math.gcd(stated, abs(c) * template.stated[i])
    if not g:
        return Shape(True, period, period, None), rest, steps
    shape = Shape(
        False, math.gcd(g, period), math.gcd(typical, period), math.gcd(stated, period) if constrained else None
    )
    return shape, rest, steps
