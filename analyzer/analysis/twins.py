"""Walk keys up to the unknowns' identities: the key under which two instances of one template
share their warps' walks.

An unknown (`symbolic.Unknown`) is equal only to itself, so the walk key (`walk_keys.WalkKey`)
of an access whose mask or address reads one differs from the key of the same access in the
next instance of the template, or the next launch of the kernel, which interprets the same
load again and makes a new unknown: `if (amLast && tid == 0)` in threadFenceReduction.cu's 40
instances. A walk reads an unknown only as an atom it cannot put a number in: what it does with
one depends on its text, origin and whether it may differ between lanes (`lane_varying`), and
on its place in the order of atoms (`Unknown.key`: the text, then the number it was made with),
never on that number itself. So two keys whose expressions are the same but for unknowns that
correspond one to one, with the same text, origin and lane dependence, in the same order, have
the same walks: the twin key (`twin_key`) says so, and `costing.walk_warp` takes a walk made
for a twin, spending the steps making it took (as for a walk first met in another file).

Measured (2026-11-29, the walk counted at each `scenarios.plan_warp`): threadFenceReduction.cu
850 walks made -> 137; the twenty cuda-samples files of `benchmarks/speed.py nvcc` 2,687 -> 1,926.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node
from analyzer.analysis.values import LoopCtx

__all__ = ["twin_key"]

#: Each walk key's twin key, by the key's identity (`walk_keys.walk_key` makes each key once).
_TWINS: dict = {}


def twin_key(key: Hashable, fields: tuple, reads: Iterable[S.Expr]) -> Hashable | None:
    """The twin of `key`, whose `fields` are its values (`Expr`s, `LoopCtx`s, and tuples and
    frozensets of them or of terms among them) and `reads` the expressions their unknowns come
    from: the fields with each unknown written as its text, origin, lane dependence and rank
    among them by the order they were made in. None where they read no unknown: the key is
    its own twin, and no other key shares its walks."""
    return per_node(_TWINS, key, lambda _: _twin(fields, tuple(reads)))


def _twin(fields: tuple, reads: tuple[S.Expr, ...]) -> Hashable | None:
    made = {u.uid for e in reads for u in S.unknowns(e)}
    if not made:
        return None
    ranks = {uid: rank for rank, uid in enumerate(sorted(made))}
    return tuple(_written(value, ranks) for value in fields)


def _written(value: object, ranks: dict[int, int]) -> Hashable:
    """`value` with its unknowns written by `ranks` (`twin_key`)."""
    cls = value.__class__
    if cls is S.Expr:
        return _terms(value._p.items(), ranks)  # type: ignore[attr-defined]  # an Expr's terms
    if cls is LoopCtx:
        lp: LoopCtx = value  # type: ignore[assignment]
        return (lp.uid, lp.counter, _written(lp.cond, ranks), lp.kind, _written(lp.init, ranks), lp.op, lp.step)
    if cls is tuple:
        return tuple(_written(v, ranks) for v in value)  # type: ignore[attr-defined]  # a tuple
    if cls is frozenset:  # `walk_keys.moved_offset`'s terms
        return _terms(value, ranks)  # type: ignore[arg-type]
    return value  # a number, a name, None, a record without unknowns


def _terms(items: Iterable[tuple[tuple[S.Atom, ...], int]], ranks: dict[int, int]) -> frozenset:
    return frozenset((tuple(_atom(a, ranks) for a in monomial), c) for monomial, c in items)


def _atom(a: S.Atom, ranks: dict[int, int]) -> Hashable:
    if a.__class__ is S.Symbol:
        return a.name
    if a.__class__ is S.Unknown:
        return ("?", a.tag, a.origin, a.lane_varying, ranks[a.uid])
    return (a.op, tuple(_terms(arg._p.items(), ranks) for arg in a.args))  # type: ignore[attr-defined]  # a Term
