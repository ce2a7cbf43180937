"""`RememberedSubs`: a substitution of numbers for symbols whose opaque terms' results are
remembered from one substitution to the next (the cost walk's lanes, `scenarios._at_lane`).
`Expr.subs` hands it each term that reads a name it binds (`RememberedSubs.term`). Apart from
expressions.py to keep that module under 800 lines; re-exported there."""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.analysis.memo import remember
from analyzer.analysis.symbolic.expressions import MAX_DEPTH, Expr, Symbol, Term, Unknown, const
from analyzer.analysis.symbolic.shifted import rebuilt, shifted_template
from analyzer.budget import BudgetExceeded
from analyzer.budget import current_meter as _meter_now

__all__ = ["REMEMBERED_TERMS", "RememberedSubs", "evaluable"]

_HALF_DEPTH = MAX_DEPTH // 2
_COMPARISONS = frozenset({"<", "<="})  # those `shifted.rebuilt` may build


class RememberedSubs(dict):
    """Numbers for symbols, to be substituted with `Expr.subs`, whose opaque terms' results are
    remembered in `memo` from one substitution to the next: the masks of a kernel's accesses
    share most of their terms, and a term that does not mention what differs between two lanes
    is substituted once for both. Keyed by the term and the values of the names it mentions
    (a substitution depends on nothing else). A remembered result spends the budget steps it
    cost again (analyzer.budget), so that a budget runs out where it did without the memo.
    Terms nested near `MAX_DEPTH` are always worked out: rebuilding one may make a fresh
    `Unknown` (too deep), which must stay distinct. Not to be changed once made: `term`
    reads the names and values as they were given (`_items`)."""

    __slots__ = ("_items", "_names", "memo")

    def __init__(self, values: Mapping[str, int], memo: dict) -> None:
        super().__init__(values)
        self.memo = memo
        self._items = tuple(self.items())
        self._names = frozenset(self)

    def term(self, t: Term) -> Expr:
        if t.depth > _HALF_DEPTH:
            return t.subs_args(self)
        free = t.free
        items = self._items
        if len(items) == 3:  # a lane's three thread indices: the key written out, the same tuple as
            # below, without a list (timeit 1.0 -> 0.2 us; 146,236 keys on threadFenceReduction.cu,
            # Mandelbrot_cuda.cu, scan.cu, cdpBitonicSort.cu; Mandelbrot_cuda.cu under callgrind,
            # with `lane_groups._key`: 5.103 G -> 5.049 G instructions)
            (n0, v0), (n1, v1), (n2, v2) = items
            key: tuple = (t, v0 if n0 in free else None, v1 if n1 in free else None, v2 if n2 in free else None)
        else:
            key = (t, *[v if n in free else None for n, v in items])
        memo = self.memo
        seen = memo.get(key)
        meter = _meter_now()
        if seen is not None:
            if meter is not None:  # `budget.spend(seen[1])` written out (see `new_expr`)
                meter.left -= seen[1]
                if meter.left < 0:
                    raise BudgetExceeded(meter.stage, meter.limit)
            return seen[0]
        before = 0 if meter is None else meter.left
        done = _number(t, self) if free <= self._names and evaluable(t) else None
        if done is None:
            # a comparison of a side moved by the names against one that reads none: built
            # from the side's terms sorted once (`shifted.py`), else worked out
            template = shifted_template(t, self._names) if t.op in _COMPARISONS else None
            if template is None or (done := rebuilt(t, self, template)) is None:
                done = t.subs_args(self)
        if len(memo) >= REMEMBERED_TERMS:
            memo.clear()
        memo[key] = (done, 0 if meter is None else before - meter.left)
        return done


#: The most entries a `RememberedSubs` memo holds before it is emptied.
REMEMBERED_TERMS = 200_000


#: Whether a term holds no `Unknown` (its value is a function of its symbols), by term.
_EVALUABLE: dict[Term, bool] = {}


def evaluable(t: Term) -> bool:
    """`t` holds no `Unknown`: `evaluate` gives its value once its symbols are bound (else it
    raises at the first unknown it meets, and its terms would be asked again, each in turn)."""
    done = _EVALUABLE.get(t)
    if done is None:
        done = t.__class__ is not Unknown and all(
            atom.__class__ is Symbol or (atom.__class__ is Term and evaluable(atom))
            for a in t.args
            for mono in a._p
            for atom in mono
        )
        remember(_EVALUABLE, t, done)
    return done


def _number(t: Term, env: Mapping[str, int]) -> Expr | None:
    """`t` evaluated at `env` (which binds every symbol it reads), as a constant: what rebuilding
    it from its arguments gives, without the expressions built on the way (cdpBitonicSort.cu,
    whose masks hold terms such as `(threadIdx.x / 1024) % 2`: 8.93 G -> 8.59 G instructions
    under callgrind); None where evaluating divides by zero or shifts out of range (as
    `scenarios.evaluated`: substituted instead)."""
    try:
        return const(t.evaluate(env))
    except (ArithmeticError, ValueError, LookupError):
        return None
