"""Loops reached again alike: the interpreter does again what a loop's earlier run did.

A loop nested in an unrolled one is reached once per trip of it, and most such loops read
nothing the trips change: the inner loops of a tiled matrix product compute the same tile
addresses at every step of the outer one. A run of a loop is a function of the values it
reads from before it (`LoopReads`), of the context (the lanes' mask, the loops around it,
the call it was inlined through) and of a few of the interpreter's tables (the facts stated,
the depth of inlining); the held values and the runs of mergeable accesses begin afresh at
every loop (`Interpreter.visit_Loop`). A run met again with all of those the same
(`LoopMemo.key`, then `Recording.checks`) makes the same accesses, assignments and steps but
for names: its inner loops are numbered on from where the interpreter stands, its unknowns
too, and its runs of mergeable accesses. `LoopMemo` remembers the second run of each (a loop
met once is not worth a record) and replays the rest (`symbolic.renaming`). Measured on
tiled matrix products: tf32TensorCoreGemm.cu, whose loops were reached 9,530 times (602 now,
416 runs replayed), under callgrind (`check --no-cache -j 1`, 2026-11-29): 8.81 G -> 5.86 G
instructions, the same accesses, reports and steps (the five corpora: 704 reports, none differs).

What a replay must keep as a real run would have it:
- the budget: it spends the steps the recorded run spent, less the constants and symbols
  first made in it (remembered, they cost nothing again), and makes the counters' symbols as
  the run would (a step each where new); where the budget could run out in the run, the run
  is interpreted instead, so that it stops where it would;
- every unknown and loop number: the unknowns the run made are counted as made (`skip_unknowns`),
  the ones it kept renamed, and the loop numbers passed over;
- the interpreter's state after it: the variables it assigned, its accesses (`Occurrence`s
  with their runs of mergeable accesses renumbered), the statements inlined (`work`).
A run that changed the facts, the notes or the inlining limit is not recorded.
"""

from __future__ import annotations

from typing import Any

from analyzer import budget
from analyzer.analysis import loops as L
from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node
from analyzer.analysis.pure import ABSENT
from analyzer.analysis.symbolic.expressions import unknowns_made
from analyzer.analysis.symbolic.renaming import Renaming, next_unknown_uid, restore_unknowns, skip_unknowns
from analyzer.analysis.values import LoopCtx, LoopKind, Occurrence, Ptr, StructParam, Value, lane_dependent
from analyzer.ir import nodes as N
from analyzer.records import record

__all__ = ["REPLAYED_LOOPS", "LoopMemo", "LoopReads", "loop_reads", "replayed_loop"]


# ----------------------------------------------------------------------------- what a loop reads
@record
class LoopReads:
    """What a run of a loop may read of the variables as they were before it: `values`, read
    as they are; `lanes`, only whether each may differ between lanes (a loop interpreted once
    asks it of the variables it writes, `loops.lane_dependent_in_loop`); `joins`, those an
    if/else in it reads where it joins its branches (one that assigns a variable the other
    does not), by the statement's id, where its condition is no number; and `writes`, the
    variables the loop assigns at any depth."""

    values: tuple[int, ...]
    lanes: tuple[int, ...]
    joins: dict[int, frozenset[int]]
    writes: tuple[int, ...]


class _Unread(Exception):
    """A statement the reads of which `loop_reads` does not know."""


_READS: dict[int, tuple[N.Loop, LoopReads | None]] = {}


def loop_reads(loop: N.Loop) -> LoopReads | None:
    """The `LoopReads` of `loop`, worked out once; None where it holds a statement of a kind
    this module does not know (never replayed)."""
    return per_node(_READS, loop, _loop_reads)


def _loop_reads(loop: N.Loop) -> LoopReads | None:
    values: set[int] = set()
    lanes: set[int] = set()
    joins: dict[int, frozenset[int]] = {}
    try:
        _scan_loop(loop, set(), values, lanes, joins)
    except _Unread:
        return None
    writes = L.written(loop.init + loop.body + loop.step)
    return LoopReads(tuple(sorted(values)), tuple(sorted(lanes - values)), joins, tuple(writes))


#: The variables an expression reads, and those an if/else assigns, by the node's id (`per_node`):
#: a loop's statements are scanned again for each loop around it.
_VARS_READ: dict[int, tuple[N.Expr, frozenset[int]]] = {}
_BRANCHES_WRITE: dict[int, tuple[N.If, frozenset[int]]] = {}


def _read(e: N.Expr | None, defined: set[int], values: set[int]) -> None:
    if e is not None:
        values.update(per_node(_VARS_READ, e, _vars_read) - defined)


def _vars_read(e: N.Expr) -> frozenset[int]:
    return frozenset(x.var.uid for x in N.walk_nodes(e) if isinstance(x, N.VarRef))


def _branches_write(st: N.If) -> frozenset[int]:
    return frozenset(L.written(st.then + st.otherwise))


def _scan(stmts: list[N.Stmt], defined: set[int], values: set[int], lanes: set[int], joins: dict) -> bool:
    """Add what `stmts` read before assigning to `values` (and `lanes`, `joins`), adding what
    they surely assign to `defined`; whether they may end the block early (a `return`, a
    `break`, an `if` holding one: what follows may not run, so assigns nothing surely)."""
    live = True
    for st in stmts:
        cls = st.__class__
        if cls is N.Assign:
            _read(st.value, defined, values)  # type: ignore[attr-defined]
            uid = st.var.uid  # type: ignore[attr-defined]
            if st.field and uid not in defined:  # type: ignore[attr-defined]
                values.add(uid)  # a field assigned: the rest of the struct read
            if live:
                defined.add(uid)
        elif cls is N.Store:
            _read(st.value, defined, values)  # type: ignore[attr-defined]
            _read(st.access.address, defined, values)  # type: ignore[attr-defined]
        elif cls is N.Eval:
            _read(st.expr, defined, values)  # type: ignore[attr-defined]
        elif cls is N.Return:
            _read(st.value, defined, values)  # type: ignore[attr-defined]
            live = False
        elif cls is N.Break or cls is N.Continue:
            live = False
        elif cls is N.Sync or cls is N.LaunchStmt:
            pass
        elif cls is N.Skipped:
            if live:
                defined.update(v.uid for v in st.writes)  # type: ignore[attr-defined]
        elif cls is N.If:
            live = _scan_if(st, defined, values, lanes, joins, live)  # type: ignore[arg-type]
        elif cls is N.Loop:
            _scan_loop(st, defined if live else set(defined), values, lanes, joins)  # type: ignore[arg-type]
        else:
            raise _Unread
    return not live


def _scan_if(st: N.If, defined: set[int], values: set[int], lanes: set[int], joins: dict, live: bool) -> bool:
    _read(st.cond, defined, values)
    then_defined, else_defined = set(defined), set(defined)
    stops = _scan(st.then, then_defined, values, lanes, joins)
    stops = _scan(st.otherwise, else_defined, values, lanes, joins) or stops
    both = then_defined & else_defined
    joined = per_node(_BRANCHES_WRITE, st, _branches_write) - both - defined
    if joined:
        joins[id(st)] = joined
    if live:
        defined |= both
    return live and not stops


def _scan_loop(loop: N.Loop, defined: set[int], values: set[int], lanes: set[int], joins: dict) -> None:
    _scan(loop.init, defined, values, lanes, joins)
    _read(loop.cond, defined, values)
    shape = L.shape(loop)
    for var in shape.inductions:  # their values at the loop (`bind_inductions`, `trip_count`)
        if var.uid not in defined:
            values.add(var.uid)
    lanes.update(uid for uid in shape.writes if uid not in defined)
    inside = set(defined)
    _scan(loop.body, inside, values, lanes, joins)
    _scan(loop.step, inside, values, lanes, joins)


# ----------------------------------------------------------------------------- records and replays
#: The loops of the runs recorded and replayed, and of the first runs of those recorded, by identity (with the loop, so that its id stays
#: its own): the cost walk shares the walks of their accesses (`alike.alike_key`), and looks
#: no other access's walk up so (emptied with the walks kept, `alike.forget_alike`).
REPLAYED_LOOPS: dict[int, LoopCtx] = {}


def replayed_loop(loop: LoopCtx) -> bool:
    """Whether `loop` was numbered in a run recorded or replayed (`REPLAYED_LOOPS`)."""
    return REPLAYED_LOOPS.get(id(loop)) is loop


#: The runs of one loop from one key recorded at most: runs whose `Recording.checks` differ each
#: time (a variable the loop may leave as it was) are not worth recording on and on (a recording
#: is tried at each visit: dmmaTensorCoreGemm.cu tried 1,953 that failed for 62 replays).
RECORDINGS = 4


@record(frozen=False)
class Recording:
    """A run of a loop as `LoopMemo` replays it. `checks`: variables the run left as they were
    (or whose values an if/else joined), with those values, which a replay requires; `outputs`:
    the values it assigned, each with whether it holds a renamed name; `occurrences`: the
    accesses it reached, their loops given without the `outer` ones; `loops`: the loops it
    numbered (`loops_from` + 1 on), in order; the unknowns it made (`made`, uids from
    `unknowns[0]` to before `unknowns[1]`); the runs of mergeable accesses from `windows[0]` to
    `windows[1]`; the statements inlined (`work`); the steps spent but the constants and
    symbols first made (`steps`)."""

    checks: tuple[tuple[int, Value], ...]
    outputs: tuple[tuple[int, Value, bool], ...]
    occurrences: tuple[tuple, ...]
    outer: int
    loops: tuple[tuple[LoopCtx, bool], ...]
    loops_from: int
    made: int
    unknowns: tuple[int, int]
    windows: tuple[int, int]
    work: int
    steps: int
    names: int  # the counters' symbols the run makes (`_counter_names`)


def _counter_names(lp: LoopCtx, uid: int) -> list[str]:
    """The symbols `Interpreter.bind_inductions` makes for the loop numbered `uid`."""
    return [f"k@{uid}", lp.counter] if lp.kind is LoopKind.MULTIPLICATIVE else [f"k@{uid}"]


def _same(a: Value, b: Value) -> bool:
    return a is b or (a.__class__ is b.__class__ and a == b)


def _value_touches(r: Renaming, v: Value) -> bool:
    if isinstance(v, S.Expr):
        return r.touches(v)
    if isinstance(v, Ptr):
        return r.touches(v.offset)
    if isinstance(v, dict):
        return any(_value_touches(r, x) for x in v.values())
    if isinstance(v, StructParam):
        return _value_touches(r, v.fields)
    return False


def _renamed(r: Renaming, v: Value) -> Value:
    if isinstance(v, S.Expr):
        return r.expr(v)
    if isinstance(v, Ptr):
        return Ptr(v.region, v.space, r.expr(v.offset), v.align)
    if isinstance(v, dict):
        return {k: _renamed(r, x) for k, x in v.items()}
    if isinstance(v, StructParam):
        return StructParam(v.name, v.kernel, _renamed(r, v.fields))
    return v


#: What `LoopMemo.recordings` holds for a run that was not recorded (one that changed what a
#: replay does not redo): the loop is interpreted from there on, and not recorded again.
_REFUSED: Any = object()


class Replay:
    """A recording made ready to be done again where the interpreter stands (`LoopMemo.prepare`)."""

    __slots__ = ("loops", "names", "occurrences", "outputs", "recording", "unknown_base", "windows_base")

    def __init__(
        self, recording: Recording, loops: list[LoopCtx], occurrences: list[Occurrence], outputs: list
    ) -> None:
        self.recording = recording
        self.loops = loops
        self.occurrences = occurrences
        self.outputs = outputs
        self.names = [name for lp in loops for name in _counter_names(lp, lp.uid)]
        self.unknown_base = 0
        self.windows_base = 0


class LoopMemo:
    """The runs of loops one interpreter recorded (`Recording`), by `key`; the keys met once."""

    __slots__ = ("first_runs", "made", "met", "recordings", "replayed")

    def __init__(self) -> None:
        self.met: set[tuple] = set()
        #: the accesses the first run of each key met once made (`interp.occurrences`, from, to)
        self.first_runs: dict[tuple, tuple[int, int]] = {}
        self.recordings: dict[tuple, list[Recording]] = {}  # (or `_REFUSED`)
        self.replayed = 0  # how many runs were replayed (tests count them)
        #: the loops the interpreter numbered, in order (`Interpreter.loop_once` adds each)
        self.made: list[LoopCtx] = []

    @staticmethod
    def key(interp: Any, s: N.Loop, reads: LoopReads, env: dict[int, Value], ctx: Any) -> tuple | None:
        """What a run of `s` from here depends on, but the `Recording.checks`: None where it is
        not a value (a struct's fields read)."""
        mask = ctx._mask
        if not isinstance(mask, S.Expr):  # a condition not built yet: whether the run builds it
            mask = (mask, mask.built is not None)
        key = (
            id(s),
            mask,
            ctx.loops,
            ctx.via,
            ctx.kernel_level,
            interp.facts,
            interp.depth,
            interp.stopped_inlining,
            *[env.get(uid, ABSENT) for uid in reads.values],
            *[lane_dependent(env.get(uid)) for uid in reads.lanes],
        )
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def visit(self, interp: Any, s: N.Loop, env: dict[int, Value], ctx: Any) -> None:
        """Run the loop `s` (`Interpreter.run_loop`), or replay a recorded run of it."""
        reads = loop_reads(s)
        key = None if reads is None else self.key(interp, s, reads, env, ctx)
        if key is None or reads is None:
            interp.run_loop(s, env, ctx)
            return
        recordings = self.recordings.get(key)
        if recordings is not None:
            for rec in recordings:
                if rec is _REFUSED:  # not to be replayed: run it, and record no more
                    interp.run_loop(s, env, ctx)
                    return
                ready = self.prepare(interp, rec, env, ctx)
                if ready is not None:
                    self.commit(interp, ready, env)
                    return
        if key not in self.met or (recordings is not None and len(recordings) >= RECORDINGS):
            first = key not in self.met
            self.met.add(key)
            start = len(interp.occurrences)
            interp.run_loop(s, env, ctx)
            if first:
                self.first_runs[key] = (start, len(interp.occurrences))
            return
        made = self.record(interp, s, reads, env, ctx)
        span = self.first_runs.pop(key, None)
        if made is not None and span is not None:  # its first run made the accesses its replays make
            for o in interp.occurrences[span[0] : span[1]]:
                for lp in o.loops[len(ctx.loops) :]:
                    REPLAYED_LOOPS[id(lp)] = lp
        self.recordings.setdefault(key, []).append(made if made is not None else _REFUSED)

    def record(self, interp: Any, s: N.Loop, reads: LoopReads, env: dict[int, Value], ctx: Any) -> Recording | None:
        """Run `s` for real and make its `Recording` (None where it cannot be replayed)."""
        before = [env.get(uid, ABSENT) for uid in reads.writes]
        loops0, made0 = interp.loop_uid, len(self.made)
        uid0 = next_unknown_uid()
        unknowns0, kept0 = S.fresh_values()
        windows0, occurrences0, work0 = interp.windows, len(interp.occurrences), interp.work
        notes0, facts0, stopped0 = len(interp.notes), interp.facts, interp.stopped_inlining
        joined0 = len(interp.joined)
        meter = budget.current()
        left0 = 0 if meter is None else meter.left
        interp.recording += 1
        try:
            interp.run_loop(s, env, ctx)
        finally:
            interp.recording -= 1
        joined = set(interp.joined[joined0:])
        loops = self.made[made0:]
        if not interp.recording:
            interp.joined.clear()
            self.made.clear()
        unknowns1, kept1 = S.fresh_values()
        uid1 = next_unknown_uid()
        if (
            interp.facts is not facts0
            or len(interp.notes) != notes0
            or interp.stopped_inlining != stopped0
            or interp.work >= interp.inlined_limit
            or budget.current() is not meter
            or uid1 - uid0 != unknowns1 - unknowns0
            or [lp.uid for lp in loops] != list(range(loops0 + 1, interp.loop_uid + 1))
        ):
            return None
        template = Renaming((loops0, interp.loop_uid), 0, (uid0, uid1), 0)
        joins = set().union(*[reads.joins[i] for i in joined if i in reads.joins])
        checks: list[tuple[int, Value]] = []
        outputs: list[tuple[int, Value, bool]] = []
        for uid, was in zip(reads.writes, before):
            now = env.get(uid, ABSENT)
            if now is was or uid in joins:
                checks.append((uid, was))
            if now is not was:
                outputs.append((uid, now, _value_touches(template, now)))
        outer = len(ctx.loops)
        numbered = {id(lp) for lp in loops}
        occurrences: list[tuple] = []
        for o in interp.occurrences[occurrences0:]:
            if (
                len(o.loops) < outer
                or any(a is not b for a, b in zip(o.loops, ctx.loops))
                or any(id(lp) not in numbered for lp in o.loops[outer:])
            ):
                return None
            occurrences.append(
                (
                    o.access,
                    o.ptr,
                    o.mask,
                    o.loops[outer:],
                    o.via,
                    o.struct_type,
                    o.reuses,
                    o.facts,
                    o.window,
                    o.if_converted,
                    o.ptr is not None and template.touches(o.ptr.offset),
                    template.touches(o.mask),
                )
            )
        loop_templates = tuple(
            (lp, any(e is not None and template.touches(e) for e in (lp.cond, lp.init))) for lp in loops
        )
        spent = 0 if meter is None else left0 - meter.left - (kept1 - kept0)
        for lp in loops:
            REPLAYED_LOOPS[id(lp)] = lp
        return Recording(
            tuple(checks),
            tuple(outputs),
            tuple(occurrences),
            outer,
            loop_templates,
            loops0,
            unknowns1 - unknowns0,
            (uid0, uid1),
            (windows0, interp.windows),
            interp.work - work0,
            spent,
            sum(len(_counter_names(lp, lp.uid)) for lp in loops),
        )

    def prepare(self, interp: Any, rec: Recording, env: dict[int, Value], ctx: Any) -> Replay | None:
        """`rec` renamed for a replay from where the interpreter stands: None where a check
        fails, where the run might exhaust the budget, or where the inlining limit might be met."""
        if not all(_same(env.get(uid, ABSENT), was) for uid, was in rec.checks):
            return None
        meter = budget.current()
        if meter is not None and meter.left < rec.steps + rec.names:
            return None
        if interp.work + rec.work >= interp.inlined_limit:
            return None
        base = next_unknown_uid()
        renaming = Renaming(
            (rec.loops_from, rec.loops_from + len(rec.loops)),
            interp.loop_uid - rec.loops_from,
            rec.unknowns,
            base - rec.unknowns[0],
        )
        made = unknowns_made()
        with budget.metered(None):
            loops: list[LoopCtx] = []
            by_old: dict[int, LoopCtx] = {}
            for lp, touched in rec.loops:
                new = LoopCtx(
                    lp.uid + renaming.loop_shift,
                    renaming.counter(lp.counter),
                    renaming.expr(lp.cond) if touched and lp.cond is not None else lp.cond,
                    lp.kind,
                    renaming.expr(lp.init) if touched and lp.init is not None else lp.init,
                    lp.op,
                    lp.step,
                )
                loops.append(new)
                by_old[id(lp)] = new
            occurrences: list[Occurrence] = []
            shift = interp.windows - rec.windows[0]
            regions = interp.region_bytes
            for (
                access,
                ptr,
                mask,
                inner,
                via,
                struct,
                reuses,
                facts,
                window,
                converted,
                t_ptr,
                t_mask,
            ) in rec.occurrences:
                if t_ptr:
                    ptr = Ptr(ptr.region, ptr.space, renaming.expr(ptr.offset), ptr.align)
                o = Occurrence(
                    access,
                    ptr,
                    renaming.expr(mask) if t_mask else mask,
                    (*ctx.loops, *[by_old[id(lp)] for lp in inner]),
                    via,
                    struct,
                    reuses,
                    facts,
                    regions.get(ptr.region) if ptr is not None else None,
                    None,
                    None if window is None else window + shift,
                    converted,
                )
                occurrences.append(o)
            outputs = [(uid, _renamed(renaming, v) if touched else v) for uid, v, touched in rec.outputs]
        if unknowns_made() != made:  # a term rebuilt too deep made an unknown: interpret instead
            restore_unknowns(made, base)
            return None
        return Replay(rec, loops, occurrences, outputs)

    def commit(self, interp: Any, ready: Replay, env: dict[int, Value]) -> None:
        """Do what the run did (`prepare` made it ready), spending its steps."""
        rec = ready.recording
        for name in ready.names:  # the counters' symbols, made as the run makes them
            S.sym(name)
        budget.spend(rec.steps)
        interp.loop_uid += len(rec.loops)
        for lp in ready.loops:
            REPLAYED_LOOPS[id(lp)] = lp
        if interp.recording:
            self.made.extend(ready.loops)
        skip_unknowns(rec.made, rec.unknowns[1] - rec.unknowns[0])
        interp.work += rec.work
        interp.occurrences.extend(ready.occurrences)
        for uid, value in ready.outputs:
            env[uid] = value
        interp.held.clear()
        windows = interp.windows + rec.windows[1] - rec.windows[0]
        interp.windows = windows
        interp.load_window, interp.store_window = windows - 1, windows
        interp.store_region = None
        self.replayed += 1
