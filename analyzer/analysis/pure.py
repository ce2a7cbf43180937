"""The interpreter's memo of pure expressions' values.

An expression built of arithmetic, casts and pointer offsets over variables, constants and
built-in variables (`a + b * threadIdx.x`, `p + 4 * i`) records no access and changes nothing:
its value depends only on the values its variables hold. The interpreter reaches the same
expressions with the same values again and again (the loops nested in an unrolled loop, once
per trip): tf32TensorCoreGemm.cu evaluated 714,691 expressions in 4,096 copies of one loop body.
`ValueMemo` remembers each value by the expression and the values of the variables it reads.

What a remembered value must keep as it was without the memo:
- the budget: a value given again spends the steps working it out spent (`analyzer.budget`),
  less the constants and symbols built the first time, which are remembered (`S.const`,
  `S.sym`) and so cost nothing when built again;
- every unknown: an evaluation that made one (a float, an uninitialised variable, a division
  by zero) is not remembered, since working it out again makes a fresh one, different from
  every other (`S.unknown`), and a memo would give the old one back;
- the kernel's own tables: a pure expression writes only the size of an array it names
  (`Interpreter.region_bytes`), the same each time, so a memo lives as long as one interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node, remember
from analyzer.analysis.values import Ptr, Value
from analyzer.ir import nodes as N

__all__ = ["PURE_NODES", "ValueMemo", "pure_reads"]

#: The expressions whose value is remembered, when every expression below them is pure too. A
#: select is not (its branches run under masks the context gives), nor a field, nor a struct.
PURE_NODES = frozenset({N.Binary, N.Unary, N.PtrAdd, N.Cast})
_PURE_LEAVES = (N.Const, N.Builtin)

#: `pure_reads`' answers, by the expression's id (kept with it, so that the id stays its).
_READS: dict[int, tuple[N.Expr, tuple[int, ...] | None]] = {}


def pure_reads(e: N.Expr) -> tuple[int, ...] | None:
    """The variables (by uid, each once) that the value of `e` depends on, if `e` is pure:
    made of `PURE_NODES` over variables, constants and built-in variables. None otherwise."""
    return per_node(_READS, e, _reads_of)


def _reads_of(e: N.Expr) -> tuple[int, ...] | None:
    if isinstance(e, N.VarRef):
        return (e.var.uid,)
    if isinstance(e, _PURE_LEAVES):
        return ()
    if e.__class__ not in PURE_NODES:
        return None
    uids: list[int] = []
    for sub in N.sub_expressions(e):
        reads = pure_reads(sub)
        if reads is None:
            return None
        uids.extend(reads)
    return tuple(dict.fromkeys(uids))


_ABSENT = object()  # a variable the environment does not hold yet


class ValueMemo:
    """The values of the pure expressions one interpreter evaluated, with the budget steps that
    working each out again would spend."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[tuple, tuple[Value, int]] = {}

    def value(self, e: N.Expr, reads: tuple[int, ...], env: dict[int, Value], work: Callable[[], Value]) -> Value:
        """The value of the pure expression `e` (reading `reads`) in `env`: remembered, or
        `work()` (which evaluates it) and remembered when it made no unknown."""
        key: tuple[Any, ...] = (id(e), *[env.get(uid, _ABSENT) for uid in reads])
        try:
            seen = self.values.get(key)
        except TypeError:  # a struct's fields (a dict) among the values: not remembered
            return work()
        if seen is not None:
            budget.spend(seen[1])
            return seen[0]
        meter = budget.current()
        before = 0 if meter is None else meter.left
        made, kept = S.fresh_values()
        value = work()
        made_after, kept_after = S.fresh_values()
        if made_after == made and (value is None or isinstance(value, (S.Expr, Ptr))):
            steps = 0 if meter is None else before - meter.left - (kept_after - kept)
            remember(self.values, key, (value, steps))
        return value
