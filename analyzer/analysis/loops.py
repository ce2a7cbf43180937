"""Loop algebra: what a loop changes, how many times it runs, and what nvcc may make of it.

The interpreter (`interpret.py`) runs a loop's body once for all iterations, with each
induction variable (`v = v op invariant`, once per iteration) written as a function of a
counter symbol (`init + k*step`, or a symbol walked value by value for `s *= 2`); what else
the loop writes becomes unknown. This module finds the inductions and the variables a loop
writes (`inductions`, `written`), whether such a variable may differ between lanes
(`lane_dependent_in_loop`), a short loop worth unrolling (`unroll_inductions`), the counter
values a uniform loop runs through (`iterations`, `trip_count`), and whether nvcc may merge
consecutive iterations' shared loads into one wide load (`vectorized_iterations`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from analyzer import budget
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node, remember, replayed
from analyzer.analysis.values import LoopCtx, LoopKind, Value, lane_dependent
from analyzer.arch import Architecture
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.records import record

__all__ = [
    "MAX_TRIP",
    "MAX_UNROLL",
    "Assignment",
    "Inductions",
    "LoopShape",
    "accesses_in",
    "assignments",
    "inductions",
    "iterations",
    "lane_dependent_in_loop",
    "mentions",
    "next_value",
    "shape",
    "step",
    "trip_count",
    "unroll_inductions",
    "vectorized_iterations",
    "written",
]

MAX_TRIP = 100_000
MAX_SUBSTITUTED_TRIPS = 4096  # trips counted by substitution when a bound is not compiled
MAX_MULTIPLICATIVE = 64
MAX_UNROLL = 64  # counted loops up to this many trips are unrolled when an address needs it

#: A loop's induction variables: each with the operator and the invariant operand of its update.
Inductions = dict[N.Variable, tuple[str, N.Expr]]


# ----------------------------------------------------------------------------- what a loop writes
@record
class LoopShape:
    """What the interpreter asks of a loop's statements each time it reaches the loop: the
    variables its body and step write, its inductions, and the inductions it is unrolled by
    (`unroll_inductions`). They depend on the statements alone."""

    writes: dict[int, N.Variable]
    inductions: Inductions
    unroll: Inductions | None
    assigned: tuple[Assignment, ...]  # its body's and step's `assignments`


#: `shape`'s answers, by the loop's id (the loop kept with its shape, so that the id stays its).
#: The loops nested in an unrolled one are reached once per trip: tf32TensorCoreGemm.cu reached
#: loops 9,530 times and took 2.1 s of its 4.1 s in working out their shapes again.
_SHAPES: dict[int, tuple[N.Loop, LoopShape]] = {}


def shape(loop: N.Loop) -> LoopShape:
    """The `LoopShape` of `loop`, worked out once (it spends no budget steps)."""
    return per_node(_SHAPES, loop, _shape)


def _shape(loop: N.Loop) -> LoopShape:
    stmts = loop.body + loop.step
    writes = written(stmts)
    return LoopShape(writes, inductions(loop.step + loop.body, writes), unroll_inductions(loop), assignments(stmts))


def written(stmts: list[N.Stmt]) -> dict[int, N.Variable]:
    """The variables that statements assign (or that a skipped statement may), by uid."""
    out: dict[int, N.Variable] = {}
    for s in N.walk_statements(stmts):
        if isinstance(s, N.Assign):
            out[s.var.uid] = s.var
        elif isinstance(s, N.Skipped):
            for v in s.writes:
                out[v.uid] = v
    return out


def step(op: str, value: S.Expr, by: S.Expr) -> S.Expr:
    """`value op by` for an induction variable's update."""
    return {
        "+": lambda: value + by,
        "-": lambda: value - by,
        "*": lambda: value * by,
        "/": lambda: S.floordiv(value, by),
        "<<": lambda: S.shl(value, by),
        ">>": lambda: S.shr(value, by),
    }[op]()


def accesses_in(stmts: list[N.Stmt]) -> Iterable[N.Access]:
    """The memory accesses of statements (stores, loads and atomics, at any depth)."""
    return (x for x in N.walk_nodes(stmts) if isinstance(x, N.Access))


def inductions(stmts: list[N.Stmt], writes: dict[int, N.Variable]) -> Inductions:
    """Variables updated once per iteration as `v = v op invariant` at the top level of the loop."""
    found: Inductions = {}
    counts: dict[int, int] = {}
    for s in N.walk_statements(stmts):
        if isinstance(s, N.Assign) and not s.field:
            counts[s.var.uid] = counts.get(s.var.uid, 0) + 1
    for s in stmts:
        if not isinstance(s, N.Assign) or s.field or counts.get(s.var.uid) != 1:
            continue
        v = s.value
        if isinstance(v, N.PtrAdd) and isinstance(v.base, N.VarRef) and v.base.var is s.var:
            off = v.offset
            if (
                isinstance(off, N.Binary)
                and off.op == "*"
                and isinstance(off.right, N.Const)
                and not mentions(off.left, writes)
            ):
                found[s.var] = ("+", off.left)
            continue
        if (
            isinstance(v, N.Binary)
            and isinstance(v.left, N.VarRef)
            and v.left.var is s.var
            and v.op in ("+", "-", "*", "/", "<<", ">>")
            and not mentions(v.right, writes)
        ):
            found[s.var] = (v.op, v.right)
    return found


def mentions(e: N.Expr, writes: dict[int, N.Variable]) -> bool:
    """Whether `e` reads one of `writes`, memory or a call (anything a loop may change)."""
    stack: list[Any] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.VarRef):
            if x.var.uid in writes:
                return True
        elif isinstance(x, (N.Load, N.Call)):
            return True
        stack.extend(N.sub_expressions(x))
    return False


@record
class Assignment:
    """An assignment in a loop as `lane_dependent_in_loop` reads it: the variable it writes,
    whether its value may differ between lanes whatever the variables hold (it reads threadIdx
    or an atomic's old value, or a skipped statement writes it), and the variables it reads
    (in the addresses of its loads too), by uid."""

    uid: int
    varying: bool
    reads: tuple[int, ...]


def assignments(stmts: list[N.Stmt]) -> tuple[Assignment, ...]:
    """The assignments of `stmts`, at any depth, in order (a skipped statement's writes too)."""
    out: list[Assignment] = []
    for st in N.walk_statements(stmts):
        if isinstance(st, N.Assign):
            out.append(_assignment(st.var.uid, st.value))
        elif isinstance(st, N.Skipped):
            out.extend(Assignment(v.uid, True, ()) for v in st.writes)
    return tuple(out)


def _assignment(uid: int, value: N.Expr) -> Assignment:
    varying = False
    reads: list[int] = []
    stack: list[Any] = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, N.Builtin):
            varying = varying or builtins.BUILTINS[x.name].lane_varying  # threadIdx
        elif isinstance(x, N.VarRef):
            reads.append(x.var.uid)
        elif isinstance(x, N.Load):
            stack.append(x.access.address)
        elif isinstance(x, N.Call) and builtins.call_result_varies(x.name):  # an atomic's old value
            varying = True
        stack.extend(N.sub_expressions(x))
    return Assignment(uid, varying, tuple(dict.fromkeys(reads)))


def lane_dependent_in_loop(
    assigned: tuple[Assignment, ...], writes: dict[int, N.Variable], env: dict[int, Value]
) -> set[int]:
    """The variables written in a loop whose values may differ between lanes: lane-dependent
    before the loop, or assigned from something lane-dependent in it (to a fixed point), of
    the loop's `assignments`. A statement that was skipped counts as lane-dependent for what
    it writes."""
    dependent = {uid for uid in writes if lane_dependent(env.get(uid))}

    def depends(a: Assignment) -> bool:
        return a.varying or any(
            uid in dependent or (uid not in writes and lane_dependent(env.get(uid))) for uid in a.reads
        )

    changed = True
    while changed:
        changed = False
        budget.spend(len(assigned))  # a round over the loop's assignments (analyzer.budget)
        for a in assigned:
            if a.uid not in dependent and depends(a):
                dependent.add(a.uid)
                changed = True
    return dependent


def unroll_inductions(s: N.Loop) -> Inductions | None:
    """The inductions of a counted loop worth running iteration by iteration: an address in it
    depends on a value the loop carries other than by a constant step (histogram64's
    `pos = (pos + 4) & 63`), while its condition and initialisation do not. None for any
    other loop (the trip count, from the inductions alone, is for the interpreter to find)."""
    if not s.test_first or s.cond is None:
        return None
    if any(isinstance(x, (N.Break, N.Continue, N.Return, N.Skipped)) for x in N.walk_statements(s.body + s.step)):
        return None
    writes = written(s.body + s.step)
    found = inductions(s.step + s.body, writes)
    carried = {uid: v for uid, v in writes.items() if v not in found}
    for uid in reinitialised(s.body, {**carried, **{var.uid: var for var in found}}):
        carried.pop(uid, None)
    if not carried or mentions(s.cond, carried):
        return None
    if not any(mentions(acc.address, carried) for acc in accesses_in(s.body)):
        return None
    if any(not isinstance(st, N.Assign) or st.field or mentions(st.value, {}) for st in s.init):
        return None
    return found


def reinitialised(body: list[N.Stmt], carried: dict[int, N.Variable]) -> set[int]:
    """The variables of `carried` that every iteration of a loop with this body assigns afresh
    before it reads them: the counters of the loops nested in it, initialised from values the
    loop does not carry. No value of theirs passes from one iteration to the next, so they are
    no reason to run the enclosing loop iteration by iteration (which made 4 nested loops of 12
    trips 1,728 bodies interpreted and costed, and 16 nested loops of 2 trips 32,768). A nested
    loop's counter read before that loop, or a variable of a loop deeper in read outside it (the
    loop may run no trip), is still carried."""
    fresh: set[int] = set()
    for i, st in enumerate(body):
        if not isinstance(st, N.Loop) or not _runs_alike(st, carried):
            continue
        before = _reads(body[:i])
        for init in st.init:
            if (
                isinstance(init, N.Assign)
                and not init.field
                and init.var.uid in carried
                and init.var.uid not in before
                and not mentions(init.value, carried)
            ):
                fresh.add(init.var.uid)
        outside = _reads([*body[:i], *body[i + 1 :], *st.init, *st.step]) | _reads(st.cond)
        fresh |= reinitialised(st.body, carried) - outside
    return fresh


def _runs_alike(loop: N.Loop, carried: dict[int, N.Variable]) -> bool:
    """Whether `loop` starts, steps and ends alike in every iteration around it: its condition,
    initial values and steps read nothing the enclosing loop changes but its own variables (a
    triangular nest, `for (j = 0; j < i; j++)`, is still run iteration by iteration: its exact
    request counts come from there)."""
    own = written(loop.init + loop.body + loop.step)
    changed = {uid: v for uid, v in carried.items() if uid not in own}
    parts = [loop.cond, *(st.value for st in loop.init + loop.step if isinstance(st, N.Assign))]
    return not any(e is not None and mentions(e, changed) for e in parts)


def _reads(root: object) -> set[int]:
    """The variables read anywhere in `root` (statements or an expression), by uid."""
    return {x.var.uid for x in N.walk_nodes(root) if isinstance(x, N.VarRef)}


# ----------------------------------------------------------------------------- iterations
_TRIPS: dict[tuple, int | None] = {}


def iterations(loop: LoopCtx, known: dict[str, int]) -> list[int] | None:
    """The counter values of a loop whose condition is uniform and decidable, else None."""
    if loop.kind == LoopKind.MULTIPLICATIVE:
        return _multiplicative_iterations(loop, known)
    if loop.cond is None:
        return None
    cond = loop.cond.subs(known) if known else loop.cond
    trip = remembered_trips(cond, loop.counter)
    return None if trip is None else list(range(trip))


#: The look-ups of `_TRIPS` made while a walk is made, where one is being listed
#: (`costing.walk_warp`, for `alike.keep_alike`): each the condition, the counter, and the
#: steps its trip count took where it was not remembered (None where it was).
TRIP_LOOKUPS: list[list[tuple[S.Expr, str, int | None]]] = []


def remembered_trips(cond: S.Expr, counter: str) -> int | None:
    """`trip_count([cond], counter)`, remembered in `_TRIPS` (a remembered one spends no step)."""
    key = (cond, counter)
    if key in _TRIPS:
        if TRIP_LOOKUPS:
            TRIP_LOOKUPS[-1].append((cond, counter, None))
        return _TRIPS[key]
    meter = budget.current()
    before = 0 if meter is None else meter.left
    trip = trip_count([cond], counter)
    remember(_TRIPS, key, trip)
    if TRIP_LOOKUPS:
        TRIP_LOOKUPS[-1].append((cond, counter, 0 if meter is None else before - meter.left))
    return trip


#: `_multiplicative_iterations` by the loop's init, condition, counter, update and the values
#: `known` gives the symbols they read (`replayed`: with its steps). The warps of an access ask
#: it again with the same: scan.cu's `offset <<= 1` loop, 8 warps at each of 12 values of
#: `size` for 12 accesses (`costing.describe_cases`): 11% of that description's walks.
_MULTIPLICATIVE: dict[tuple, Any] = {}


def _multiplicative_iterations(loop: LoopCtx, known: dict[str, int]) -> list[int] | None:
    """The values `s` takes in `for (s = init; cond; s op= step)`, at most `MAX_MULTIPLICATIVE`
    (a list of its own for each caller)."""
    if loop.init is None:
        return None
    read = loop.init.free_symbols if loop.cond is None else loop.init.free_symbols | loop.cond.free_symbols
    values = tuple(sorted((name, known[name]) for name in read if name in known))
    key = (loop.init, loop.cond, loop.counter, loop.op, loop.step, values)
    found = replayed(_MULTIPLICATIVE, key, lambda: _walked_multiplicative(loop, known))
    return None if found is None else list(found)


def _walked_multiplicative(loop: LoopCtx, known: dict[str, int]) -> tuple[int, ...] | None:
    """`_multiplicative_iterations`, worked out value by value."""
    assert loop.init is not None
    v = loop.init.subs(known)
    if not v.is_const:
        return None
    values: list[int] = []
    value = v.value
    for _ in range(MAX_MULTIPLICATIVE):
        if loop.cond is not None:
            c = loop.cond.subs({**known, loop.counter: value})
            if not c.is_const:
                return None
            if not c.value:
                break
        values.append(value)
        nxt = next_value(loop.op, value, loop.step)
        if nxt is None:
            return None  # C leaves the next value undefined: the iterations are not known
        if nxt == value:
            break
        value = nxt
    return tuple(values)


def next_value(op: str, value: int, step: int) -> int | None:
    """`value op step` as a loop's update computes it on a 64-bit integer, or None where C
    leaves it undefined: a division by 0, a shift by a negative count or by 64 or more, a
    result outside 64 bits (`d <<= 100`, `d *= 1000000007` run on)."""
    if op == "*":
        result = value * step
    elif op == "/":
        if step == 0:
            return None
        result = abs(value) // abs(step) * (1 if (value < 0) == (step < 0) else -1)  # C truncates
    elif op in ("<<", ">>"):
        if not 0 <= step < 64:
            return None
        result = value << step if op == "<<" else value >> step
    else:
        return value
    return result if -(2**63) <= result < 2**63 else None


#: `trip_count`'s answers: the warps of a block, and the instances of a template, ask again.
_TRIP_COUNTS: dict[tuple, Any] = {}


def trip_count(conds: list[S.Expr], counter: str, limit: int = MAX_TRIP) -> int | None:
    """How many iterations k = 0, 1, ... run while any of `conds` (one per lane) holds; None
    when a condition is not a number or the loop runs `limit` times or more. The conditions
    are compiled, so a loop of 100,000 trips costs milliseconds, not seconds. Remembered
    (`memo.replayed`): reduction_kernel.cu asked 2,600 times."""
    return replayed(_TRIP_COUNTS, (tuple(conds), counter, limit), lambda: _trip_count(conds, counter, limit))


def _trip_count(conds: list[S.Expr], counter: str, limit: int) -> int | None:
    solved = _linear_trip_count(conds, counter)
    if solved is not None:
        return int(solved) if solved < limit else None
    if any(c.free_symbols - {counter} for c in conds):
        # other symbols may cancel once the counter is known (`aBegin + 32 k <= aBegin + wA - 1`
        # with aBegin = wA * 32 * blockIdx.y): substitute, slowly, and only so far
        for k in range(min(limit, MAX_SUBSTITUTED_TRIPS)):
            at = {counter: k}
            values = []
            for c in conds:  # the lanes up to the first whose condition is no number: None
                v = c.subs(at)  # (reduction_kernel.cu's `i < n`: 32 substitutions a call, 4% of its check)
                if not v.is_const:
                    return None
                values.append(v)
            if not any(v.value for v in values):
                return k
        return None
    evaluate = S.compile_values(conds, [counter])
    try:
        for k in range(limit):
            compiled = evaluate(k)
            if any(v is None for v in compiled):
                return None
            if not any(compiled):
                return k
    except (ZeroDivisionError, ValueError):
        return None
    return None


def _linear_trip_count(conds: list[S.Expr], counter: str) -> int | float | None:
    """The trips of a loop whose lanes' conditions are each ``d0 + d1*k < 0`` (or ``<= 0``)
    with ``d1 > 0`` or ``d1 == 0`` (`S.linear_comparison`): a lane's holds up to a trip and
    never after, so the loop ends at the last lane's; `math.inf` where some lane's holds at
    every trip. None where a condition is of another form (`_trip_count` evaluates those).
    The same count as evaluating the conditions trip by trip, without writing and compiling
    them: a warp's 32 conditions (`pos < 2048` with `pos = threadIdx.x + k*blockDim.x`) are
    new expressions at each warp (fwtBatch1Kernel.cu: compiling them 17% of the check)."""
    most: int | float = 0
    for c in conds:
        linear = S.linear_comparison(c, counter)
        if linear is None:
            return None
        op, d0, d1 = linear
        if d1 < 0:
            return None  # holds from some trip on: not of this form
        if d1 == 0:
            holds = d0 < 0 if op == "<" else d0 <= 0
            trips: int | float = math.inf if holds else 0
        elif op == "<":  # d1*k < -d0
            trips = max(0, -(d0 // d1))  # the k in 0 .. ceil(-d0 / d1) - 1
        else:  # d1*k <= -d0
            trips = max(0, -d0 // d1 + 1)  # the k in 0 .. floor(-d0 / d1)
        most = max(most, trips)
    return most


# ----------------------------------------------------------------------------- what nvcc may do
def vectorized_iterations(
    offset: S.Expr, loops: tuple[LoopCtx, ...], known: dict[str, int], size: int, arch: Architecture
) -> int | None:
    """How many consecutive iterations' elements nvcc may load with one widest (16-byte) load
    when it unrolls a loop around this shared load (`As[ty][e]`, e = 0, 1, 2, 3 -> one
    LDS.128, measured on an H200), or None: consecutive elements per iteration, a trip count
    that is a multiple of that many and a start aligned to the wide load in every lane."""
    widest = arch.max_access_bytes
    if size not in arch.access_sizes or size < arch.bank_bytes or size >= widest:
        return None
    group = widest // size
    for lp in reversed(loops):
        if lp.kind != LoopKind.ADDITIVE:
            continue
        affine = S.affine_in(offset, [lp.counter])
        if affine is None or affine[0][0] != size:
            continue
        trips = iterations(lp, known)
        if trips is None or len(trips) < group or len(trips) % group:
            continue
        if any(r % widest for r in S.residues(affine[1], widest)):
            continue
        return group
    return None
