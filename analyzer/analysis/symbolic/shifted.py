"""A comparison with numbers put in for the plain terms of one side: `rebuilt`, what
`Term.subs_args` gives for `a < b` or `a <= b` where one side reads the names put in only as
plain terms (``threadIdx.x``, ``2*threadIdx.x``) and the other reads none of them, built
without the general substitution's walk: the side's terms sorted once per comparison
(`_template`), then at each lane only its constant worked out.

The cost walk puts each lane's thread indices into a warp's masks (`scenarios._lanes_at`,
`RememberedSubs.term`), and a mask such as ``tid + blockIdx.x*256 + k*gridDim.x*256 < n``
or ``tid <= select(...)`` is rebuilt at every lane: `Expr.subs` of the side, `compare`
(its `constant_difference`, `term`). What that builds depends on the side's constant
alone: the other terms are kept as they are, the other side is the same object, and whether
`compare` folds the comparison to a number depends on the terms that are not constants,
the same at every lane (so it is decided once, and a comparison that folds is left to the
general way). `rebuilt` builds the same expression through the same constructors
(`new_expr`, `_raw_term`, `atom_expr`: the same fields worked out, the same dict order) and
spends the steps the substitution spends (analyzer.budget): the side's substitution and
the expression it builds, and the comparison's term; nothing it makes is remembered in
`symbolic`'s tables (no constant, no symbol, no unknown), as in the general way.

The measurement that justifies it is in `rebuilt`'s docstring.
"""

from __future__ import annotations

from typing import Any

from analyzer.analysis.memo import remember
from analyzer.analysis.symbolic.expressions import MAX_DEPTH, Expr, Symbol, Term, atom_expr, new_expr, raw_term
from analyzer.budget import BudgetExceeded
from analyzer.budget import current_meter as _meter_now

__all__ = ["rebuilt", "shifted_template"]

#: The comparisons whose order `compare` keeps (`==` and `!=` order their sides by key,
#: which may depend on the constant).
_KEPT_ORDER = frozenset({"<", "<="})

#: One side's monomials in their order: (monomial, coefficient, the name put in where the
#: monomial is that name alone, else None: kept as it is, or the constant).
Entries = tuple[tuple[tuple, int, str | None], ...]
#: What `rebuilt` needs of a comparison: its op, the side that reads the names (0 or 1), that
#: side's entries, the other side, and the names it was made for.
Template = tuple[str, int, Entries, Expr, frozenset[str]]

#: Per comparison term (of `_KEPT_ORDER`): its template, None where it is not of this shape.
_TEMPLATES: dict[Term, Template | None] = {}
_UNSET: Any = object()
#: How many comparisons `rebuilt` built by a template (a test reads it).
TAKEN = [0]


def shifted_template(t: Term, names: frozenset[str]) -> Template | None:
    """The template of `t` for substitutions of `names` (remembered per term, for the names
    it was first asked with), None where `t` is not of the shape `rebuilt` builds."""
    done = _TEMPLATES.get(t, _UNSET)
    if done is _UNSET:
        done = _template(t, names)
        remember(_TEMPLATES, t, done)
    if done is not None and done[4] != names:
        return None
    return done


def _template(t: Term, names: frozenset[str]) -> Template | None:
    if t.op not in _KEPT_ORDER or len(t.args) != 2 or t.depth > MAX_DEPTH // 2:
        return None
    a, b = t.args
    reads_a, reads_b = not a.free_symbols.isdisjoint(names), not b.free_symbols.isdisjoint(names)
    if reads_a == reads_b:
        return None
    side, moving, other = (0, a, b) if reads_a else (1, b, a)
    entries: list[tuple[tuple, int, str | None]] = []
    kept: dict[tuple, int] = {}
    for mono, coef in moving._p.items():
        if len(mono) == 1 and mono[0].__class__ is Symbol and mono[0].name in names:
            entries.append((mono, coef, mono[0].name))
            continue
        if any(not atom.free.isdisjoint(names) for atom in mono):
            return None  # a name in a product or a term: the general way
        entries.append((mono, coef, None))
        if mono:
            kept[mono] = coef
    # `compare` folds where the sides differ by a number: their terms that are not constants
    # (the kept ones, at every lane) all equal
    po = other._p
    if len(kept) == len(po) - (() in po) and all(po.get(m) == c for m, c in kept.items()):
        return None
    return (t.op, side, tuple(entries), other, names)


def rebuilt(t: Term, subs: Any, template: Template) -> Expr | None:
    """`t.subs_args(subs)` for a comparison of `template`'s shape, with the steps it spends;
    None (nothing done) where a value put in is not an int (the general way).

    Measured 2026-11-29 under callgrind (`check --no-cache -j 1`, against main 32bcbcc):
    reduction_kernel.cu (213 template instances, 9,888 comparisons rebuilt so) 6.715 G ->
    6.605 G instructions; binomialOptions.cu (GPUVerify, 33,024 lanes of `tid <= select(...)`)
    7.234 G -> 6.894 G. What is left of a lane is building the comparison itself."""
    op, side, entries, other, _ = template
    out: dict[tuple, int] = {}
    for mono, coef, name in entries:  # as `Expr.subs` adds them up, in its order
        if name is None:
            if mono:
                out[mono] = coef
            else:
                out[()] = out.get((), 0) + coef
            continue
        v = subs[name]
        if v.__class__ is not int:
            return None
        if v:
            out[()] = out.get((), 0) + coef * v
    if out.get((), 1) == 0:
        del out[()]  # (as `Expr.subs` leaves out a zero coefficient; the others are not zero)
    meter = _meter_now()
    if meter is not None:  # the side's substitution: its step (then `new_expr` spends its own)
        meter.left -= 1
        if meter.left < 0:
            raise BudgetExceeded(meter.stage, meter.limit)
    moved = new_expr(out)
    TAKEN[0] += 1
    return atom_expr(raw_term(op, (moved, other) if side == 0 else (other, moved)))
