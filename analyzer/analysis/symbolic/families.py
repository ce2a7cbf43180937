"""A warp's lane expressions compiled from the one expression they were substituted from.

A warp's masks and loop conditions are one expression `e` with each lane's thread indices put
in (`scenarios.per_lane`): 32 expressions that `compile_values` wrote one by one, each new to
it (a lane's comparison against a counter's bound is a new term at every lane and warp), though
they differ only in the numbers put in. `family_values` writes `e` itself once, over the
scenario's names and the lane's indices, and evaluates it at each lane's indices: a generated
function of the scenario's names giving the 32 values, made for a warp from a maker remembered
by `e` and the names (its numbers, the lanes' indices, are arguments of the maker).

The same values as the lane expressions' own: `e` at a lane's indices is what the substitution
`e.subs(lane)` rebuilt from `e`, and the rebuilding folds exactly (polynomials, comparisons,
min, max, selects and logical operators fold on numbers or on differences that are numbers,
as evaluating does); a division, remainder, shift or bitwise term that reads a lane's index is
rebuilt with the package's assumption that operands are non-negative (`division.py`), so an
`e` holding one is not evaluated so (None: the lane expressions are compiled themselves). A
lane expression that is a number (a mask decided at the grid's corners, one that reads only
thread indices) is that number. Where evaluating `e` raises, the function gives what the
lane expressions' own function gives (compiled then, once), raising where it raises.

Why: binomialOptions.cu (a pyramid whose guards compare the thread index with a bound that
moves with the counters of 64 unrolled copies of a loop) compiled 1,338 parts of 32 masks or
loop conditions, each written anew, a third of its check. Under callgrind (`check --no-cache
-j 1`, measured 2026-11-29): 9.79 G -> 7.12 G instructions; mergeSort.cu 4.466 G -> 4.472 G
and cdpBitonicSort.cu 4.071 G -> 4.078 G, whose masks read loaded values or divide the
thread index (the look-up that says so is what they spend).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from analyzer.analysis.symbolic import compiled as C
from analyzer.analysis.symbolic.expressions import Expr, Symbol, Term
from analyzer.analysis.symbolic.remembered import evaluable

__all__ = ["family_maker", "family_values"]

#: The operations whose rebuilding may fold by the assumption that operands are non-negative.
_ASSUMING = frozenset({"/", "%", "<<", ">>", "&", "|", "^"})
_GLOBALS = {**C.CC_GLOBALS, "tuple": tuple, "ZeroDivisionError": ZeroDivisionError, "ValueError": ValueError}
#: By (e, names, lane names): the maker of the lanes' function and its numbers, or None where `e`
#: cannot be evaluated so.
_MAKERS: dict[tuple, tuple[Callable[..., Callable[..., tuple]], tuple[int, ...]] | None] = {}
_MAKERS_LIMIT = 10_000
#: Each maker by its source (the expressions of a warp's masks differ in their numbers alone).
_BY_SOURCE: dict[str, Callable[..., Callable[..., tuple]] | None] = {}


class _LaneHoist(C.Hoist):
    """What `C.write_expr` takes out of `e`'s source: its terms that read none of the lanes'
    names and cannot raise, worked out once a call (``w0`` ...) before the lanes' loop."""

    def __init__(self, names: Sequence[str], lane_names: frozenset[str]) -> None:
        super().__init__(names)
        self.lane_names = lane_names
        self.lines: list[str] = []
        self.outside: dict[Expr, bool] = {}

    def hoisted(self, t: Term) -> tuple[int, ...] | None:
        free = t.free
        if free and free.isdisjoint(self.lane_names) and self.can_not_raise(t):
            return ()
        return None

    def takes_out(self, e: Expr) -> bool:
        known = self.outside.get(e)
        if known is None:
            known = any(
                isinstance(a, Term) and (self.hoisted(a) is not None or any(self.takes_out(x) for x in a.args))
                for m in e._p
                for a in m
            )
            self.outside[e] = known
        return known

    def ref(self, t: Term, read: tuple[int, ...], write: Callable[[list[int]], str]) -> str:
        at = self.taken.get(t)
        if at is None:
            numbers: list[int] = []
            source = self.named(write(numbers), numbers)
            at = self.taken[t] = f"w{len(self.lines)}"
            self.lines.append(f"   {at} = {source}")
        return at


def _assumes(e: Expr, lane_names: frozenset[str]) -> bool:
    """`e` holds a term of `_ASSUMING` that reads one of `lane_names`."""
    for m in e._p:
        for a in m:
            if (
                a.__class__ is Term
                and not a.free.isdisjoint(lane_names)
                and (a.op in _ASSUMING or any(_assumes(x, lane_names) for x in a.args))
            ):
                return True
    return False


def family_maker(e: Expr, names: tuple[str, ...], lane_names: tuple[str, ...]) -> Any:
    """The maker of `e`'s lanes' function and its numbers (`family_values`), or None where `e`
    is not evaluated so. Remembered by `e` and the names."""
    key = (e, names, lane_names)
    if key in _MAKERS:
        return _MAKERS[key]
    made = None
    lanes = frozenset(lane_names)
    # one that reads no lane name is the same expression at every lane, written once by
    # `compile_values` and worked out once a call (`compiled._again`), not once a lane
    if not e.free_symbols.isdisjoint(lanes) and not _assumes(e, lanes):
        args = (*names, *lane_names)
        hoist = _LaneHoist(args, lanes)
        consts: list[int] = []
        try:
            item = C.write_expr(e, args, consts, hoist)
        except C.NotCompilable:
            item = None
        if item is not None:
            params = ", ".join(f"a{i}" for i in range(len(names)))
            at = ", ".join(f"a{i}" for i in range(len(names), len(args)))
            fields = C.field_names(len(consts))
            numbers = [*fields, *(f"h{i}" for i in range(len(hoist.numbers)))]
            source = "\n".join(
                [
                    f"def _maker({', '.join([*numbers, '_lanes', '_slow'])}):",
                    f" def _f({params}):",
                    "  try:",
                    *hoist.lines,
                    f"   return tuple([_c if {at.split(',')[0]} is None else {item.format(*fields)}"
                    f" for _c, {at} in _lanes])",
                    "  except (ZeroDivisionError, ValueError):",
                    f"   return _slow()({params})",
                    " return _f",
                ]
            )
            maker: Any = _BY_SOURCE.get(source)
            if maker is None:
                try:
                    space: dict[str, Any] = {}
                    exec(source, _GLOBALS, space)  # noqa: S102 - source built from our own expression trees
                    maker = space["_maker"]
                except (SyntaxError, RecursionError, MemoryError):  # nested past what Python compiles
                    maker = None
                if len(_BY_SOURCE) >= 1000:
                    _BY_SOURCE.clear()
                _BY_SOURCE[source] = maker
            if maker is not None:
                made = (maker, (*consts, *hoist.numbers))
    if len(_MAKERS) >= _MAKERS_LIMIT:
        _MAKERS.clear()
    _MAKERS[key] = made
    return made


def _no_unknown(x: Expr) -> bool:
    """`x` holds no unknown: `evaluable` of each of its terms, without remembering its own
    (a lane's comparison is a new term at each lane; its arguments' terms are remembered)."""
    for m in x._p:
        for a in m:
            if a.__class__ is Symbol:
                continue
            if a.__class__ is not Term:
                return False
            for arg in a.args:
                for n in arg._p:
                    for b in n:
                        if b.__class__ is not Symbol and not evaluable(b):  # type: ignore[arg-type]
                            return False
    return True


def family_values(
    e: Expr,
    lanes: Sequence[tuple[int, ...] | None],
    exprs: Sequence[Expr | None],
    names: Sequence[str],
    lane_names: tuple[str, ...],
) -> Callable[..., tuple] | None:
    """`compile_values(exprs, names)`'s function, where `exprs[j]` is `e` with the lane
    names put in at `lanes[j]` (their values; None where there is no lane, and then `exprs[j]`
    is None), made from `e` (the module's docstring): the same values, and the same raise.
    None where `e` or a lane's expression is not evaluated so. Its ``compiled`` flags say
    which lanes there are."""
    made = family_maker(e, tuple(names), lane_names)
    if made is None:
        return None
    # a lane's entry: (its number, no indices) where its expression is a number, (None, its
    # indices) where it is `e` at them, all None where there is no lane. The lanes' expressions
    # read no name but `names` (`e` reads no other: the maker writes it over them alone); one
    # holding an unknown (made putting a lane in) is not written by `compile_values`.
    nothing = (None,) * (len(lane_names) + 1)
    table: list[tuple] = []
    for x, at in zip(exprs, lanes):
        if x is None:
            table.append(nothing)
        elif at is None:
            return None
        elif x._c is not None:
            table.append((x._c, *nothing[1:]))
        elif _no_unknown(x):
            table.append((None, *at))
        else:
            return None
    maker, numbers = made
    slow: list[Callable[..., tuple]] = []
    part = tuple(exprs)
    frozen_names = list(names)

    def _slow() -> Callable[..., tuple]:
        if not slow:
            slow.append(C.compile_values(part, frozen_names))
        return slow[0]

    function: Any = maker(*numbers, tuple(table), _slow)
    function.compiled = tuple(x is not None for x in exprs)
    return function
