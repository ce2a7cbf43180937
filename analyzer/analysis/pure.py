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

import itertools
from collections.abc import Callable
from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import remember
from analyzer.analysis.values import Ptr, Value
from analyzer.ir import nodes as N
from analyzer.ir import types as T

__all__ = ["ABSENT", "ABSENTS", "PURE_NODES", "READS", "TRIP_READS", "ValueMemo", "pure_reads", "trip_reads"]

#: The expressions whose value is remembered, when every expression below them is pure too. A
#: select is not (its branches run under masks the context gives), nor a field, nor a struct.
PURE_NODES = frozenset({N.Binary, N.Unary, N.PtrAdd, N.Cast})
_PURE_LEAVES = (N.Const, N.Builtin)

#: `pure_reads`' answers, by the expression's id (kept with it, so that the id stays its).
READS: dict[int, tuple[N.Expr, tuple[int, ...] | None]] = {}


def pure_reads(e: N.Expr) -> tuple[int, ...] | None:
    """The variables (by uid, each once) that the value of `e` depends on, if `e` is pure:
    made of `PURE_NODES` over variables, constants and built-in variables. None otherwise."""
    seen = READS.get(id(e))
    if seen is not None and seen[0] is e:
        return seen[1]
    return _worked_out(e)


def _worked_out(e: N.Expr) -> tuple[int, ...] | None:
    """`pure_reads(e)` for an expression not remembered, and for each expression below it,
    worked out from the leaves up without recursion: an expression nested thousands deep
    (`i + 1 + 1 + ...`, which the interpreter evaluates) must not overflow Python's stack."""
    done: dict[int, tuple[int, ...] | None] = {}
    todo = [e]
    while todo:
        node = todo[-1]
        if id(node) in done:
            todo.pop()
            continue
        seen = READS.get(id(node))
        if seen is not None and seen[0] is node:
            done[id(node)] = seen[1]
            todo.pop()
            continue
        below = [sub for sub in N.sub_expressions(node) if id(sub) not in done] if node.__class__ in PURE_NODES else []
        if below:
            todo.extend(below)
            continue
        todo.pop()
        reads = done[id(node)] = _reads_of(node, done)
        remember(READS, id(node), (node, reads))
    return done[id(e)]


def _reads_of(e: N.Expr, done: dict[int, tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """`pure_reads(e)`, those of the expressions below it being in `done`."""
    if isinstance(e, N.VarRef):
        return (e.var.uid,)
    if _makes_an_unknown(e):
        return None
    if isinstance(e, _PURE_LEAVES):
        return ()
    if e.__class__ not in PURE_NODES:
        return None
    uids: list[int] = []
    for sub in N.sub_expressions(e):
        reads = done[id(sub)]
        if reads is None:
            return None
        uids.extend(reads)
    return tuple(dict.fromkeys(uids))


#: `trip_reads`' answers, by the loop's id (the loop kept with them, so that the id stays its).
TRIP_READS: dict[int, tuple[N.Loop, tuple[int, ...] | None]] = {}


def trip_reads(loop: N.Loop, inductions: dict[N.Variable, tuple[str, N.Expr]]) -> tuple[int, ...] | None:
    """The variables (by uid, each once) whose values before `loop` decide its trip count as
    `Interpreter.trip_count` works it out (its initialisation, condition and the steps of
    `inductions`), when all of those are pure; None otherwise. A variable the initialisation
    assigns before it is read is not among them (its value is worked out from the others),
    an induction it does not assign is (the walk starts from its value)."""
    seen = TRIP_READS.get(id(loop))
    if seen is not None and seen[0] is loop:
        return seen[1]
    answer = _trip_reads(loop, inductions)
    remember(TRIP_READS, id(loop), (loop, answer))
    return answer


def _trip_reads(loop: N.Loop, inductions: dict[N.Variable, tuple[str, N.Expr]]) -> tuple[int, ...] | None:
    assigned: set[int] = set()
    uids: list[int] = []
    for st in loop.init:
        if not isinstance(st, N.Assign) or st.field:
            return None
        reads = pure_reads(st.value)
        if reads is None:
            return None
        uids.extend(uid for uid in reads if uid not in assigned)
        assigned.add(st.var.uid)
    walked = [loop.cond] if loop.cond is not None else []
    for var, (_, step) in inductions.items():
        walked.append(step)
        uids.extend([var.uid] if var.uid not in assigned else [])
    for e in walked:
        reads = pure_reads(e)
        if reads is None:
            return None
        uids.extend(uid for uid in reads if uid not in assigned)
    return tuple(dict.fromkeys(uids))


def _makes_an_unknown(e: N.Expr) -> bool:
    """Whether evaluating `e` makes a fresh unknown, whatever its variables hold: a float
    constant, and arithmetic or a cast whose result is a float (`Interpreter.visit_Const`,
    `binary`, `visit_Cast`). Its value, and that of every expression above it, is never
    remembered (`ValueMemo.keep`), so none is looked for: the look-up, the marks and the
    keeping were spent in vain on every float expression of myocyte/main.cu's kernels (its
    check under callgrind, 2026-11-28, with `S.varies_between_lanes` and `eval`'s step written
    out: 12.78 G -> 12.46 G instructions)."""
    t = e.type
    if isinstance(e, N.Const):
        return isinstance(e.value, float) or (isinstance(t, T.ScalarType) and t.is_float)
    return isinstance(e, (N.Binary, N.Cast)) and isinstance(t, T.ScalarType) and t.is_float


ABSENT = object()  # a variable the environment does not hold yet
ABSENTS = itertools.repeat(ABSENT)  # `env.get`'s default, for `map(env.get, reads, ABSENTS)`


class ValueMemo:
    """The values of the pure expressions one interpreter evaluated, with the budget steps that
    working each out again would spend."""

    __slots__ = ("trips", "values")

    def __init__(self) -> None:
        self.values: dict[tuple, tuple[Value, int]] = {}
        #: the trip counts of unrolled loops (`Interpreter.trip_count`), by the loop and the
        #: values of its `trip_reads`, with the steps working each out spent
        self.trips: dict[tuple, tuple[int | None, int]] = {}

    def value(self, e: N.Expr, reads: tuple[int, ...], env: dict[int, Value], work: Callable[[], Value]) -> Value:
        """The value of the pure expression `e` (reading `reads`) in `env`: remembered, or
        `work()` (which evaluates it) and remembered when it made no unknown. (The interpreter
        writes these steps out in its `eval`, which recurses: a frame less a level.)"""
        key = self.key(e, reads, env)
        if key is None:
            return work()
        seen = self.values.get(key)
        if seen is not None:
            budget.spend(seen[1])
            return seen[0]
        mark = self.mark()
        value = work()
        self.keep(key, value, mark)
        return value

    @staticmethod
    def key(e: N.Expr | N.Loop, reads: tuple[int, ...], env: dict[int, Value]) -> tuple | None:
        """What `e`'s value in `env` (an expression's, a loop's trip count) is remembered by;
        None where it cannot be (a struct's fields, a dict, among the values read)."""
        key: tuple[Any, ...] = (id(e), *map(env.get, reads, ABSENTS))
        try:
            hash(key)
        except TypeError:
            return None
        return key

    @staticmethod
    def mark() -> tuple[budget.Meter | None, int, int, int]:
        """Where the budget and the symbolic layer's counts stand before an evaluation (`keep`)."""
        meter = budget.current()
        made, kept = S.fresh_values()
        return meter, 0 if meter is None else meter.left, made, kept

    def keep(self, key: tuple, value: Value, mark: tuple[budget.Meter | None, int, int, int]) -> None:
        """Remember `value`, worked out since `mark`, with the steps it spent less the constants
        and symbols it first remembered (`S.fresh_values`), unless it made an unknown."""
        steps = _steps_since(mark)
        if steps is not None and (value is None or isinstance(value, (S.Expr, Ptr))):
            remember(self.values, key, (value, steps))

    def keep_trips(self, key: tuple, trips: int | None, mark: tuple[budget.Meter | None, int, int, int]) -> None:
        """Remember a loop's trip count `trips`, worked out since `mark`, as `keep` does a value."""
        steps = _steps_since(mark)
        if steps is not None:
            remember(self.trips, key, (trips, steps))


def _steps_since(mark: tuple[budget.Meter | None, int, int, int]) -> int | None:
    """The steps spent since `mark` (`ValueMemo.mark`) less the constants and symbols first
    remembered meanwhile, which cost nothing when made again; None where an unknown was made
    (working it out again makes a fresh one: nothing is remembered)."""
    meter, before, made, kept = mark
    made_after, kept_after = S.fresh_values()
    if made_after != made:
        return None
    return 0 if meter is None else before - meter.left - (kept_after - kept)
