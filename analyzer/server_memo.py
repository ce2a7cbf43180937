"""The language server's memo of kernel analyses: after an edit, only what the edit can change is
analysed again (issue 16: an editor that keeps up).

`KernelMemo` stands in for `analysis.kernel.analyze_kernel` (through `api.KERNEL_ANALYSER`) while
the server analyses a document, and keeps each kernel instance's analysis for each launch
configuration from one text of the document to the next. An analysis is re-used when everything
it reads is the same; its key is made of `shape`s: the IR of the kernel and of the device
functions it calls, the launch configuration, the parameters and the architecture.

Positions: spans, and the lowering's module-wide counts (uids, statement numbers), are left out
of the shapes, so that a kernel an edit above it only moved keeps its key; its analysis is then
re-located (`relocated`): every span and count it holds is replaced by that of the same place in
the new text, and every IR node by the new module's node, paired in the order the two shapes met
them. An analysis that holds what cannot be re-located so (a resolved `Location`, a span of no
function of the key, places that no longer map one to one and in order) is made again. `check`
never uses the memo.

The document's front end is kept too (`api_front.LastFront`): where the new text lowers as the
previous one did (an edit in a comment, or below the code), its module is taken, and with it
the shapes of its functions.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from analyzer import records
from analyzer.api_front import LastFront
from analyzer.diagnostics import Location, Span
from analyzer.gc_pause import gc_paused

__all__ = ["KernelMemo", "Met", "Reusable", "relocated", "shape"]

_ATOMS = (str, int, float, bool, bytes, type(None))  # enums of the IR are str or int subclasses
# the fields that hold the lowering's module-wide counts, which a declaration, access or statement
# added above moves as a line added moves offsets: the uids (`Variable`, `Access`, and the costs'
# references to accesses) and `Access.statement`; each is kept below every offset as `base - value`
_UIDS, _STATEMENTS = -1, -(1 << 48) - 1
UID_FIELDS = {"uid": _UIDS, "merged_with": _UIDS, "merged_into": _UIDS, "reuses": _UIDS, "statement": _STATEMENTS}


@gc_paused  # a large acyclic tuple: the collector would only scan it
def shape(
    root: Any, calls: set[str] | None = None, found: list[Any] | None = None, offsets: list[int] | None = None
) -> tuple[Any, ...]:
    """Everything `root` holds, as one flat tuple that two objects share exactly when they hold
    the same values: each record's class and fields (spans and uids included), a list's length
    and items, an object met again as a reference to its first place (the IR shares `Variable`s
    and types; cycles end there). What is not a record, a container or a plain value counts by
    its class and `repr`. With `offsets`, spans and the lowering's uids count as such only, and
    their values are added to `offsets` instead, in order (start, end; a uid as `UID_FIELDS`
    says). The names of the IR's `Call`s met are added to
    `calls`; the records met, in order, to `found`."""
    from analyzer.ir.nodes import Call

    out: list[Any] = []
    seen: dict[int, int] = {}
    stack: list[Any] = [root]
    pop, push, add = stack.pop, stack.extend, out.append
    note = found.append if found is not None else None
    numbered = _uid_places() if offsets is not None else {}
    while stack:
        x = pop()
        kind = x.__class__
        if kind is Span:  # the most frequent record, and a value
            if offsets is None:
                out += (Span, x.start, x.end)
            else:
                add(Span)
                offsets += (x.start, x.end)
        elif isinstance(x, _ATOMS):
            out += (kind, x)
        elif kind is list or kind is tuple:
            add((kind, len(x)))
            push(reversed(x))
        elif kind is dict:
            add((kind, len(x)))
            for key, value in reversed(x.items()):
                stack += (value, key)
        elif not hasattr(kind, "__record_fields__"):
            add((kind, repr(x)))
        elif id(x) in seen:
            add(("again", seen[id(x)]))
        else:
            seen[id(x)] = len(seen)
            add(kind)
            values = kind._record_state(x)
            places = numbered.get(kind)
            if places and offsets is not None:  # a uid counts as a place, as a span does
                values = list(values)
                for i, below in places:
                    if values[i] is not None:
                        offsets.append(below - values[i])  # below every offset: the two never meet
                        values[i] = "uid"
            push(reversed(values))
            if note is not None:
                note(x)
            if calls is not None and kind is Call:
                calls.add(x.name)
    return tuple(out)


@functools.cache
def _uid_places() -> dict[type, tuple[tuple[int, int], ...]]:
    """The places of `UID_FIELDS` in the IR's records that have them, each with its base."""
    from analyzer.ir import nodes

    return {
        kind: tuple((i, UID_FIELDS[f.name]) for i, f in enumerate(records.fields(kind)) if f.name in UID_FIELDS)
        for kind in (nodes.Variable, nodes.Access)
    }


@dataclass
class Met:
    """What the shape of one function met: its records in order, and the offsets of its spans."""

    found: list[Any]
    offsets: list[int]


@dataclass
class Reusable:
    """One kernel analysis kept for the next text: the budget steps it spent; what it holds of
    the place of its launch (`LaunchConfig.span` and `origin`, "launch at line 42 ..."), which the
    key leaves out so that an edit above a launch does not cost its kernel's analysis: "" nothing,
    "origin" the origin as it is (re-located with the launch), "place" more (not re-located);
    and what the shapes of the functions of its key met, to re-locate it."""

    analysis: Any  # KernelAnalysis
    steps: int
    placed: str
    closure: list[Met]


class KernelMemo:
    """A document's kernel analyses (`analyze_kernel`'s, one per kernel instance and launch
    configuration) kept from one analysis of its text to the next (see the module).

    The key of an analysis is everything it reads: the IR of the kernel and of every device
    function it calls, at any depth (which holds the macros, constants, types and
    `__constant__`/`__shared__` variables they use, as lowered, and the lowering's uids), the
    launch configuration without its place (made from the host code, the command line and the
    configuration), the known parameter values and the architecture. A result re-used spends
    again the budget steps it took (`analysis.memo.replayed`'s rule), so that a budget runs out
    where it did without the memo. Only what the latest complete analysis used is kept.
    """

    def __init__(self) -> None:
        self.kept: dict[tuple, Reusable] = {}  # key -> an analysis
        self.used: dict[tuple, Reusable] = {}  # what the analysis running now read or made
        # id -> (function, its shape's number, the names it calls, what its shape met, the shape):
        # once per analysis, or taken from the previous analysis where its module was kept
        # (`api_front.LastFront`): reduction_kernel.cu, a comment typed below the code, the keys
        # of its 213 kernel instances 0.18-0.29 s -> 0.02 s CPU
        self.functions: dict[int, tuple[Any, int, frozenset[str], Met, tuple]] = {}
        self.earlier: dict[int, tuple[Any, int, frozenset[str], Met, tuple]] = {}  # the previous analysis'
        self.front = LastFront()  # the document's front end, taken where the lowering is the same
        # a number for each shape, so that a key holds small numbers (hashed at each look-up)
        # rather than the shapes; kept while a kept analysis reads the shape
        self.numbers: dict[tuple, int] = {}
        self.numbered: dict[tuple, int] = {}  # the shapes the analysis running now met
        self.counted = 0  # numbers given so far (a number is never given twice)
        # over the analysis running now (tests and measurements read them)
        self.hits = self.misses = self.moved = 0

    @contextmanager
    def analysing(self) -> Iterator[None]:
        """Use the memo for the kernels analysed in the block (in this thread). When the block
        completes, only what it used is kept; a block cancelled or failed keeps everything."""
        from analyzer.api import KERNEL_ANALYSER

        self.used, self.functions, self.numbered = {}, {}, {}
        self.hits = self.misses = self.moved = 0
        token = KERNEL_ANALYSER.set(self.analyse)
        try:
            with self.front.kept():
                yield
        finally:
            KERNEL_ANALYSER.reset(token)
            functions, self.functions = self.functions, {}
        self.kept, self.numbers, self.earlier = self.used, self.numbered, functions

    def analyse(self, module: Any, kernel: Any, launch: Any, arch: Any, params: dict[str, int] | None = None) -> Any:
        """`analyze_kernel(module, kernel, launch, arch, params)`, re-used when the key is known."""
        from analyzer import budget
        from analyzer.analysis.kernel import analyze_kernel

        key, closure = self.key(module, kernel, records.replace(launch, span=None, origin=""), arch, params)
        known = self.reusable(self.kept.get(key) or self.used.get(key), closure, launch)
        if known is not None:
            budget.spend(known.steps)
            self.hits += 1
        else:
            meter = budget.current()
            before = meter.left if meter is not None else 0
            analysis = analyze_kernel(module, kernel, launch, arch, params=params)
            steps = 0 if meter is None else before - meter.left
            rest = [getattr(analysis, f.name) for f in records.fields(analysis) if f.name != "launch"]
            known = Reusable(analysis, steps, _mentions(rest, launch), closure)
            self.misses += 1
        self.used[key] = known
        return _fresh(known.analysis, launch)

    def reusable(self, known: Reusable | None, closure: list[Met], launch: Any) -> Reusable | None:
        """`known` as the new text places it (re-located where its functions moved), or None when
        it must be made again."""
        if known is None:
            return None
        origin = known.analysis.launch.origin
        launch_moved = known.placed and (known.analysis.launch.span, origin) != (launch.span, launch.origin)
        if launch_moved and known.placed == "place":
            return None  # the analysis holds where the launch was, and it has moved
        if not launch_moved and all(old.offsets == new.offsets for old, new in zip(known.closure, closure)):
            return known  # nothing moved: every span it holds is where it was
        moved = relocated(known, closure, launch, {origin: launch.origin} if launch_moved else {})
        self.moved += moved is not None
        return moved

    def key(
        self, module: Any, kernel: Any, launch: Any, arch: Any, params: dict[str, int] | None
    ) -> tuple[tuple, list[Met]]:
        """What the analysis of `kernel` for `launch` reads (see the class), and the functions of
        the key with what their shapes met."""
        numbers: list[Any] = []
        closure: list[Met] = []
        reached, todo = {kernel.name}, [kernel]
        while todo:
            fn = todo.pop()
            number, calls, met = self.function(fn)
            numbers.append(number)
            closure.append(met)
            for name in sorted(calls - reached):
                reached.add(name)
                callee = module.functions.get(name)
                if callee is None:
                    numbers.append(("missing", name))
                else:
                    todo.append(callee)
        return (tuple(numbers), shape(launch), self.number(shape(arch)), shape(params)), closure

    def function(self, fn: Any) -> tuple[int, frozenset[str], Met]:
        """The number of a function's shape (without the positions of its spans), the names it
        calls and what its shape met, worked out once per analysis."""
        known = self.functions.get(id(fn))
        if known is None or known[0] is not fn:
            known = self.earlier.get(id(fn))
            if known is not None and known[0] is fn:  # the same module (`LastFront`): the same shape
                self.numbered[known[4]] = known[1]
                self.functions[id(fn)] = known
            else:
                calls: set[str] = set()
                met = Met([], [])
                fn_shape = shape(fn, calls, met.found, met.offsets)
                number = self.number(fn_shape)
                known = self.functions[id(fn)] = (fn, number, frozenset(calls | set(fn.calls)), met, fn_shape)
        return known[1], known[2], known[3]

    def number(self, of: tuple) -> int:
        """The number of a shape: the same in every analysis that meets it while the memo keeps it."""
        found = self.numbered.get(of)
        if found is None:
            found = self.numbers.get(of)
            if found is None:
                found, self.counted = self.counted, self.counted + 1
            self.numbered[of] = found
        return found


# ----------------------------------------------------------------------------- re-location


class _Unplaced(Exception):
    """What an analysis holds cannot be re-located: it is made again."""


def relocated(known: Reusable, closure: list[Met], launch: Any, texts: dict[str, str]) -> Reusable | None:
    """`known`'s analysis for the functions of `closure` (equal in shape to `known.closure`'s,
    their spans elsewhere) and for `launch`: each span and IR node it holds replaced by its counterpart, met at
    the same place of the same shape, and each string of `texts` by its value. None when an offset it holds is not one of the functions',
    or when the offsets do not map one to one and in the same order (a function cut and pasted
    elsewhere): an analysis may compare places, never measure them."""
    moves: dict[int, int] = {}
    nodes: dict[int, Any] = {}
    for old, new in zip(known.closure, closure):
        if len(old.found) != len(new.found) or len(old.offsets) != len(new.offsets):
            return None
        for a, b in zip(old.offsets, new.offsets):
            if moves.setdefault(a, b) != b:
                return None
        nodes.update(zip(map(id, old.found), new.found))
    after = [moves[a] for a in sorted(moves)]
    if any(b <= a for a, b in itertools.pairwise(after)):
        return None
    try:
        analysis = _rewritten(records.replace(known.analysis, launch=None), nodes, moves, texts)
    except (_Unplaced, RecursionError):
        return None
    return Reusable(records.replace(analysis, launch=launch), known.steps, known.placed, closure)


def _rewritten(root: Any, nodes: dict[int, Any], moves: dict[int, int], texts: dict[str, str]) -> Any:
    """A copy of `root` with each object of `nodes` (by id) and each string of `texts` replaced,
    and each span's offsets moved by `moves`; raises `_Unplaced` on an offset not in `moves`, a resolved `Location`, or
    an object that is not a record, a container or a plain value."""
    done: dict[int, Any] = {}

    def moved(name: str, value: Any) -> Any:
        below = UID_FIELDS.get(name)
        if below is None or value is None:
            return again(value)
        if not isinstance(value, int) or below - value not in moves:
            raise _Unplaced
        return below - moves[below - value]

    def again(x: Any) -> Any:
        kind = x.__class__
        if kind is Span:
            if x.start not in moves or x.end not in moves:
                raise _Unplaced
            return Span(moves[x.start], moves[x.end])
        if kind is str:
            return texts.get(x, x)
        if isinstance(x, _ATOMS):
            return x
        mapped = nodes.get(id(x), done.get(id(x)))
        if mapped is not None:
            return mapped
        if kind is list:
            out: Any = [again(v) for v in x]
        elif kind in (tuple, set, frozenset):
            out = kind(again(v) for v in x)
        elif kind is dict:
            out = {again(k): again(v) for k, v in x.items()}
        elif kind is Location or not hasattr(kind, "__record_fields__"):
            raise _Unplaced
        else:
            fields = kind.__record_fields__
            if set(getattr(x, "__dict__", ())) - {f.name for f in fields}:
                raise _Unplaced  # an attribute set outside the record's fields
            out = kind(**{f.name: moved(f.name, getattr(x, f.name)) for f in fields})
        done[id(x)] = out
        return out

    return again(root)


def _mentions(root: Any, launch: Any) -> str:
    """What `root` holds of the place of `launch` (the IR it points to left out: the key holds
    that): "place" its span or a string that quotes its origin, else "origin" the origin itself,
    else ""."""
    held = ""
    stack, seen = [root], set()
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if launch.origin and x == launch.origin:
                held = "origin"
            elif launch.origin and launch.origin in x:
                return "place"
        elif isinstance(x, Span):
            if x == launch.span:
                return "place"
        elif isinstance(x, _ATOMS):
            continue
        elif isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.items())
        elif id(x) not in seen and x.__class__.__module__ != "analyzer.ir.nodes":
            seen.add(id(x))
            state = getattr(x, "__dict__", None)
            stack.extend(state.values() if state is not None else ())
            stack.extend(getattr(x, name, None) for name in _slot_names(x.__class__))
    return held


def _slot_names(kind: type) -> list[str]:
    return [name for base in kind.__mro__ for name in base.__dict__.get("__slots__", ())]


def _fresh(analysis: Any, launch: Any) -> Any:
    """A re-used analysis as the pipeline may change it (its `source` is set, its lists read),
    for the launch as the text has it now: the record and its lists copied, the costs and the
    IR shared (nothing after the analysis changes them)."""
    return records.replace(
        analysis,
        launch=launch,
        costs=list(analysis.costs),
        diagnostics=list(analysis.diagnostics),
        notes=list(analysis.notes),
        shared_arrays=dict(analysis.shared_arrays),
    )
