"""Compiled evaluation: the lane expressions of a warp turned into one Python function.

The scenarios evaluate the same few expressions for every lane of every warp; `compile_values`
writes them as the source of one lambda over the symbols that vary (``threadIdx.x`` ...), with
C's division, remainder and shifts, and remembers it by its source, so that evaluating an
address costs a call instead of a walk over the expression. The numbers in the expressions
are parameters of the source, not part of it: expressions that differ only in their numbers
share one compilation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from analyzer.analysis.symbolic.c_ints import MAX_SHIFT, UnknownValue, c_div, c_mod
from analyzer.analysis.symbolic.expressions import Atom, Expr, Symbol, Term, Unknown


def _cc_div(a: int, b: int) -> int:
    if b > 0 and a >= 0:  # the common case, where C and Python agree
        return a // b
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return c_div(a, b)


def _cc_mod(a: int, b: int) -> int:
    if b > 0 and a >= 0:
        return a % b
    if b == 0:
        raise ZeroDivisionError("modulo by zero")
    return c_mod(a, b)


def _cc_shl(a: int, b: int) -> int:
    if b < 0 or b > MAX_SHIFT:
        raise ValueError(f"undefined shift count {b}")
    return a << b


def _cc_shr(a: int, b: int) -> int:
    if b < 0:
        raise ValueError(f"undefined shift count {b}")
    return a >> b


def _cc_unknown() -> int:
    raise UnknownValue("unknown")


_CC_GLOBALS = {
    "_unk": _cc_unknown,
    "_div": _cc_div,
    "_mod": _cc_mod,
    "_shl": _cc_shl,
    "_shr": _cc_shr,
    "min": min,
    "max": max,
    "len": len,  # (a remembered group's table, `_source`)
    "__builtins__": {},
}
_CC_INFIX = {"&": "&", "|": "|", "^": "^", "*": "*"}
_CC_COMPARE = {"<": "<", "<=": "<=", "==": "==", "!=": "!="}
_CC_CALL = {"/": "_div", "%": "_mod", "<<": "_shl", ">>": "_shr", "min": "min", "max": "max"}


class _NotCompilable(Exception):
    pass


def _cc_expr(e: Expr, args: tuple[str, ...], consts: list[int], hoist: _Hoist | None = None) -> str:
    """The source of `e` over the symbols `args` (the `n`-th is written ``a{n}``), its numbers
    left as ``{}`` fields and appended to `consts` in the order the fields stand in the text (see
    `compile_values`). Each occurrence of a number is a field of its own, equal numbers too: the
    source then depends on the expressions' shapes alone, and a number that happens to equal
    another in one warp and not in the next makes no new source to compile (binomialOptions.cu:
    125 sources compiled for 16 shapes, 0.25 s of compiling; 16 now, 0.03 s). Remembered by
    the expression and `args` (`_WRITTEN`)."""
    c = e._c
    if c is not None:
        consts.append(c)
        return "({})"
    if hoist is not None and hoist.takes_out(e):  # written anew: what is taken out depends on the others
        return _cc_sum(e, args, consts, hoist)
    key = (e, args)
    seen = _WRITTEN.get(key)
    if seen is None:
        mine: list[int] = []
        try:
            seen = (_cc_sum(e, args, mine), tuple(mine))
        except _NotCompilable as not_compilable:
            seen = (None, not_compilable.args)
        if len(_WRITTEN) >= _WRITTEN_LIMIT:
            _WRITTEN.clear()
        _WRITTEN[key] = seen
    source, numbers = seen
    if source is None:
        raise _NotCompilable(*numbers)
    consts.extend(numbers)
    return source


def _cc_sum(e: Expr, args: tuple[str, ...], consts: list[int], hoist: _Hoist | None = None) -> str:
    """`_cc_expr` of a non-constant `e` worked out: its monomials, each coefficient a field."""
    parts = []
    for mono, coef in e._p.items():
        consts.append(coef)
        parts.append("*".join(["{}"] + [_cc_atom(a, args, consts, hoist) for a in mono]))
    return "(" + "+".join(parts) + ")"


#: Each expression's source with its numbers as fields, and the numbers, by (expression, the
#: symbols of the source): the lanes' masks of the warps of a block and the accesses under one
#: condition are written again and again (binomialOptions.cu: 120,399 lane expressions written
#: in 1,975 sources, 40,810 of them different, and their terms shared more).
_WRITTEN: dict[tuple, tuple[str | None, tuple]] = {}
_WRITTEN_LIMIT = 50_000
#: Whether writing an expression over some names takes a term out (`_Hoist.takes_out`).
_TAKES_OUT: dict[tuple, bool] = {}


def _cc_atom(a: Atom, args: tuple[str, ...], consts: list[int], hoist: _Hoist | None = None) -> str:
    if a.__class__ is Symbol:
        try:
            return f"a{args.index(a.name)}"
        except ValueError:
            raise _NotCompilable(a.name) from None
    if a.__class__ is not Term:  # an Unknown has no value
        if a.__class__ is Unknown and args[-1] == _STRICT:  # (`strict_values`)
            return "_unk()"
        raise _NotCompilable(repr(a))
    assert isinstance(a, Term)
    if hoist is not None:
        read = hoist.hoisted(a)
        if read is not None:
            return hoist.ref(a, read, lambda numbers: _cc_atom(a, args, numbers))
    op = a.op
    if op == "select":  # written in the order of its fields: the value, the condition, the other value
        cond, yes, no = a.args
        then = _cc_expr(yes, args, consts, hoist)
        return f"({then} if {_cc_expr(cond, args, consts, hoist)} else {_cc_expr(no, args, consts, hoist)})"
    xs = [_cc_expr(x, args, consts, hoist) for x in a.args]
    if op == "&&":
        return f"(1 if ({xs[0]} and {xs[1]}) else 0)"
    if op == "||":
        return f"(1 if ({xs[0]} or {xs[1]}) else 0)"
    if op in _CC_COMPARE:
        return f"(1 if {xs[0]} {_CC_COMPARE[op]} {xs[1]} else 0)"
    if op in _CC_INFIX:
        return f"({xs[0]} {_CC_INFIX[op]} {xs[1]})"
    if op in _CC_CALL:
        return f"{_CC_CALL[op]}({xs[0]}, {xs[1]})"
    raise _NotCompilable(op)


_RAISING = frozenset({"/", "%", "<<", ">>"})  # what may raise where `evaluate` would (C's undefined cases)


class _Hoist:
    """The groups of a function's remembered values (`_source`): for each set of the names
    that some but not all read (their positions), the items and terms worked out once per
    values of those names. A term is taken out of an item that reads every name where it
    reads some of them but not all, and nothing in it can raise: taken out, it is worked out
    even where a condition around it would have skipped it (hotspot.cu, pathfinder.cu: a
    lane's mask is a loop counter's bounds and the block's, the latter read 4 of 5 names)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._reads: dict[frozenset[str], tuple[int, ...]] = {}
        self.groups: dict[tuple[int, ...], list[str]] = {}
        # the numbers of what is taken out, named ``h{i}`` (the others' are ``k{i}``, in the
        # order their fields stand in the items: `compile_values`)
        self.numbers: list[int] = []
        self.taken: dict[Term, str] = {}  # each term taken out, and where its value is
        self.safe: dict[Term, bool] = {}

    def reads(self, free: frozenset[str]) -> tuple[int, ...]:
        """The positions of the names in `free` (remembered: binomialOptions.cu asks 206,013
        times for a few hundred sets)."""
        read = self._reads.get(free)
        if read is None:
            read = self._reads[free] = tuple(i for i, n in enumerate(self.names) if n in free)
        return read

    def hoisted(self, t: Term) -> tuple[int, ...] | None:
        """What `t` reads where it is taken out of its item, else None."""
        read = self.reads(t.free)
        if not read or len(read) == len(self.names) or not self.can_not_raise(t):
            return None
        return read

    def takes_out(self, e: Expr) -> bool:
        """Whether writing `e` takes a term out; remembered by `e` and the names (`_TAKES_OUT`):
        where it takes none, `e` is written as without taking out, from `_WRITTEN`
        (binomialOptions.cu: written anew, 610,431 writings of a sub-expression, 15.6 M calls
        in all; 9.9 M with `_WRITTEN` and no group)."""
        key = (e, self.names)
        known = _TAKES_OUT.get(key)
        if known is None:
            known = any(
                a.__class__ is Term and (self.hoisted(a) is not None or any(self.takes_out(x) for x in a.args))
                for m in e._p
                for a in m
            )
            if len(_TAKES_OUT) >= _WRITTEN_LIMIT:
                _TAKES_OUT.clear()
            _TAKES_OUT[key] = known
        return known

    def can_not_raise(self, t: Term) -> bool:
        known = self.safe.get(t)
        if known is None:
            known = t.op not in _RAISING and all(
                a.__class__ is not Term or self.can_not_raise(a) for x in t.args for m in x._p for a in m
            )
            self.safe[t] = known
        return known

    def ref(self, t: Term, read: tuple[int, ...], write: Callable[[list[int]], str]) -> str:
        """Where the value of `t` is, in the group of what it reads; `write(numbers)` writes its
        source with its numbers as fields, appending them to `numbers` (where not taken yet)."""
        at = self.taken.get(t)
        if at is None:
            numbers: list[int] = []
            at = self.add(read, self.named(write(numbers), numbers))
            self.taken[t] = at
        return at

    def named(self, source: str, numbers: list[int]) -> str:
        """`source` with its fields named after `numbers`, kept with what is taken out."""
        start = len(self.numbers)
        self.numbers.extend(numbers)
        return source.format(*(f"h{i}" for i in range(start, len(self.numbers))))

    def add(self, read: tuple[int, ...], source: str) -> str:
        """Put `source` in the group of `read`; where its value is."""
        group = self.groups.setdefault(read, [])
        group.append(source)
        return f"g{list(self.groups).index(read)}[{len(group) - 1}]"


class _Common(_Hoist):
    """The terms that the items of one group (`_Hoist.add`) hold more than once, worked out
    once a call of the group's function (``c0`` ..., its `lines`) before its items, which read
    them by name: a term that cannot raise, taken out of the conditions around it, is worked
    out where they would have skipped it, to the same value, and raises nowhere. Its numbers
    are named by the function's `hoist` (``h{i}``), as the group's items' are.

    Why: a clamped index (`S = S > m ? m : S`, `m` itself a select on the block's bounds) is
    one term that each of a warp's 32 lane addresses holds twice: Rodinia hotspot.cu's groups
    worked it out 64 times a call, to one value (its check under callgrind, 2026-11-29: 5.99 G
    -> 3.89 G instructions; the twenty cuda-samples files 13.410 G -> 13.413 G)."""

    def __init__(self, hoist: _Hoist, common: frozenset[Term]) -> None:
        super().__init__(hoist.names)
        self.hoist = hoist
        self.common = common
        self.args: tuple[str, ...] = ()
        self.lines: list[str] = []
        self.writing: Term | None = None  # the term whose own source is being written
        self.holds: dict[Expr, bool] = {}

    def hoisted(self, t: Term) -> tuple[int, ...] | None:
        return () if t in self.common and t is not self.writing else None

    def takes_out(self, e: Expr) -> bool:
        known = self.holds.get(e)
        if known is None:
            known = self.holds[e] = any(
                a.__class__ is Term and (a in self.common or any(self.takes_out(x) for x in a.args))
                for m in e._p
                for a in m
            )
        return known

    def ref(self, t: Term, read: tuple[int, ...], write: Callable[[list[int]], str]) -> str:
        at = self.taken.get(t)
        if at is None:
            numbers: list[int] = []
            outer, self.writing = self.writing, t
            try:  # its own source, the common terms it holds read by name (written before it)
                source = _cc_atom(t, self.args, numbers, self)
            finally:
                self.writing = outer
            at = self.taken[t] = f"c{len(self.lines)}"
            self.lines.append(f"{at} = {self.hoist.named(source, numbers)}")
        return at


def _common_terms(exprs: Sequence[Expr], can_not_raise: Callable[[Term], bool]) -> frozenset[Term]:
    """The terms that `exprs` hold more than once (a term's own arguments counted once, where
    it is first met) and that cannot raise."""
    counts: dict[Term, int] = {}
    todo = list(exprs)
    while todo:
        e = todo.pop()
        for mono in e._p:
            for a in mono:
                if a.__class__ is Term:
                    seen = counts.get(a, 0)
                    counts[a] = seen + 1
                    if not seen:
                        todo.extend(a.args)
    return frozenset(t for t, n in counts.items() if n > 1 and can_not_raise(t))


def _shared_in_groups(
    exprs: Sequence[Expr | None], bound: frozenset[str], hoist: _Hoist
) -> dict[tuple[int, ...], _Common]:
    """For each group of `_compiled_source`'s items (the names they read, some but not all)
    whose items hold a term more than once, what takes it out (`_Common`)."""
    groups: dict[tuple[int, ...], list[Expr]] = {}
    seen: set[Expr] = set()
    for e in exprs:
        if e is None or e._c is not None or e in seen:
            continue
        seen.add(e)
        free = e._free
        if free is None:
            free = e.free_symbols
        if free <= bound:
            read = hoist.reads(free)
            if read and len(read) < len(hoist.names):
                groups.setdefault(read, []).append(e)
    shared = {}
    for read, group in groups.items():
        common = _common_terms(group, hoist.can_not_raise)
        if common:
            shared[read] = _Common(hoist, common)
    return shared


def compile_values(exprs: Sequence[Expr | None], names: Sequence[str]) -> Callable[..., tuple]:
    """A function of ``names`` (positional ints) returning the value of every expression
    in ``exprs`` with C semantics, as `evaluate` would, but without building expressions:
    for the inner loops that evaluate the same lane expressions for many values of a few
    symbols.  An entry that is None, or cannot be evaluated from ``names`` alone (another
    symbol, an `Unknown`), is returned as None; the caller substitutes it the slow way.
    The function raises ZeroDivisionError or ValueError where `evaluate` would. Its attribute
    ``compiled`` says, for each entry, whether it was compiled (False: always None).
    Remembered by the expressions and names as well as by the source: the warps of a block
    and the accesses under one condition ask for the same lane expressions again, and writing
    the source cost more than the rest of the walk (oddEvenMergeSort.cu: 30%)."""
    key = (tuple(exprs), tuple(names))
    function = _BY_EXPRS.get(key)
    if function is None:
        function = _compiled_source(exprs, names)
        if len(_BY_EXPRS) >= 1000:
            _BY_EXPRS.clear()
        _BY_EXPRS[key] = function
    return function


def compile_parts(
    parts: Sequence[Sequence[Expr | None]],
    names: Sequence[str],
    made: Sequence[Callable[..., tuple] | None] = (),
) -> Callable[..., tuple]:
    """`compile_values` of the expressions of `parts`, one part after another, with each part
    compiled (and remembered) on its own: the same values, in the same order, and the same
    first raise (a part is worked out after those before it). Why: a warp's plan is its
    lanes' addresses, masks and loop conditions, and the accesses under one condition and in
    one loop share the masks and conditions, but not the addresses: the whole was written
    anew for each (binomialOptions.cu: 1,845 plans, of whose addresses 1,765 and of whose
    loop conditions 1,746 had been written before, and 594 of the masks). `made[i]`, where
    given and not None, is part i's function made otherwise (`families.family_values`)."""
    functions: list[Callable[..., tuple]] = []
    for i, part in enumerate(parts):
        if len(part):
            function = made[i] if i < len(made) else None
            functions.append(compile_values(part, names) if function is None else function)
    if len(functions) <= 1:
        return functions[0] if functions else compile_values((), names)
    joined: Any = _JOINED[len(functions)](*functions) if len(functions) in _JOINED else _joined_all(functions)
    joined.compiled = tuple(flag for f in functions for flag in f.compiled)  # type: ignore[attr-defined]
    return joined


def _joined_all(functions: list[Callable[..., tuple]]) -> Callable[..., tuple]:
    def joined(*values: int) -> tuple:
        return tuple(v for f in functions for v in f(*values))

    return joined


#: The function of 2, 3, 4 or 5 parts' functions: their values one after another (a call
#: each, written out; `_joined_all` for more).
_JOINED: dict[int, Callable[..., Callable[..., tuple]]] = {
    2: lambda f, g: lambda *a: f(*a) + g(*a),
    3: lambda f, g, h: lambda *a: f(*a) + g(*a) + h(*a),
    4: lambda f, g, h, i: lambda *a: f(*a) + g(*a) + h(*a) + i(*a),
    5: lambda f, g, h, i, j: lambda *a: f(*a) + g(*a) + h(*a) + i(*a) + j(*a),
}


def _compiled_source(exprs: Sequence[Expr | None], names: Sequence[str]) -> Callable[..., tuple]:
    """`compile_values`, worked out: the source written, and compiled unless seen before."""
    args = tuple(names)
    bound = frozenset(names)
    consts: list[int] = []
    items: list[str] = []
    hoist = _Hoist(names)
    written_at: dict[Expr, int] = {}  # each expression written, and where
    shared: dict[tuple[int, ...], _Common] | None = None  # asked for at the first group's item
    for e in exprs:
        if e is None:
            items.append("None")
            continue
        if e._c is not None:  # a number: its field, as `_cc_expr` writes it, without asking what it
            # reads (binomialOptions.cu: 60,128 of the 180,527 expressions written; the check's
            # Python calls 12,370,534 -> 11,882,775)
            consts.append(e._c)
            items.append("({})")
            continue
        first = written_at.get(e)
        if first is not None:
            items.append(_again(items, first))
            continue
        written_at[e] = len(items)
        item = "None"
        free = e._free  # the stored set where it is worked out, without the property's call (as
        # `Expr.subs` reads it; see `neutral.lanes_read`)
        if free is None:
            free = e.free_symbols
        # one that reads another symbol is not written up to where it fails (a warp's masks on
        # unknown bounds: Mandelbrot_cuda.cu's 360 plans wrote 97 expressions each)
        if free <= bound:
            read = hoist.reads(free)
            written = len(consts)
            try:
                if read and len(read) < len(names):  # worked out once per values of what it reads
                    own: list[int] = []
                    if shared is None:
                        shared = _shared_in_groups(exprs, bound, hoist)
                    common = shared.get(read)
                    if common is not None:
                        common.args = args
                    item = hoist.add(read, hoist.named(_cc_expr(e, args, own, common), own))
                else:
                    item = _cc_expr(e, args, consts, hoist if read else None)
            except _NotCompilable:  # (what it took out is kept, unused: its numbers are its own)
                del consts[written:]
        items.append(item)
    params = ", ".join(f"a{i}" for i in range(len(args)))
    # the numbers are parameters of a maker: the warps of a block and the unrolled copies of
    # a loop differ in them alone (binomialOptions.cu: 2,000 sources, a few dozen shapes)
    fields = _field_names(len(consts))
    numbers = ", ".join([*fields, *(f"h{i}" for i in range(len(hoist.numbers)))])
    values = ", ".join(items).format(*fields)  # (what is taken out is named already)
    preludes = {read: common.lines for read, common in (shared or {}).items() if common.lines}
    source = _source(values, len(items), hoist.groups, params, numbers, preludes)
    maker = _maker_of(source)
    function: Any = maker(*consts, *hoist.numbers, *[{} for _ in hoist.groups])
    function.compiled = tuple(item != "None" for item in items)
    return function


def _again(items: list[str], first: int) -> str:
    """The item of an expression written before, at `first`: its value named there (``v{first}``,
    with `:=`) and read again here, neither written nor worked out twice; a group's entry or
    None as it is. The same value, and where working it out raises, the same first raise.
    Why: a walked loop's condition reads no thread index, and each lane's copy of it is one
    expression: binomialOptions.cu's plans hold 97 lane expressions, 31 of them written before."""
    item = items[first]
    if not item.startswith("("):  # None, or a group's entry (`_Hoist.add`): read as it is
        return item
    name = f"v{first}"
    if not item.startswith(f"({name} :="):
        items[first] = f"({name} := {item})"
    return name


def _field_names(count: int) -> list[str]:
    """The names of the first `count` numbers' fields, ``k0`` ... (`_NAMES`, written once:
    binomialOptions.cu, writing its sources: 1.14 -> 0.83 s)."""
    if count > len(_NAMES):
        _NAMES.extend(f"k{i}" for i in range(len(_NAMES), 2 * count))
    return _NAMES[:count]


def _maker_of(source: str) -> Callable[..., Callable[..., tuple]]:
    """The maker `source` writes, compiled once (`_COMPILED`: the same kernel under several
    launches, template instances). Raises what compiling it raises."""
    maker = _COMPILED.get(source)
    if maker is None:
        maker = _made(source)
        if len(_COMPILED) >= 1000:
            _COMPILED.clear()
        _COMPILED[source] = maker
    return maker


def _made(source: str) -> Callable[..., Callable[..., tuple]]:
    """The maker that `source` (`_source`) writes: a lambda, or a function named `_maker`."""
    if source.startswith("lambda"):
        return eval(source, _CC_GLOBALS)  # noqa: S307 - source built from our own expression trees
    space: dict[str, Any] = {}
    exec(source, _CC_GLOBALS, space)  # noqa: S102 - source built from our own expression trees
    return space["_maker"]


#: The values a remembered group (`_source`) keeps, at most, before it starts afresh.
GROUP_VALUES = 4096


def _source(
    joined: str,
    count: int,
    groups: dict[tuple[int, ...], list[str]],
    params: str,
    numbers: str,
    preludes: dict[tuple[int, ...], list[str]] | None = None,
) -> str:
    """The maker's source of the function returning the `count` items `joined`, taking a table of remembered
    values for each of `groups` after the numbers (`_Hoist`). A walk assigns every combination
    of the names, so the value of what reads some of them but not all comes again for every
    value of the others (hotspot.cu: a warp's 33 address expressions read 4 of the 5 names,
    worked out for each of 8 values of the fifth, a loop's counter; with the terms taken out
    of the masks, `_Hoist`, the whole check under callgrind: 15.12 G instructions before,
    9.95 G after; analysis of hotspot.cu and pathfinder.cu 1.98 -> 1.42 s and 2.25 -> 1.51 s
    of CPU, `benchmarks/analysis_steps.py`). Without groups, the plain lambda."""
    values = joined + ("," if count == 1 else "")
    if not groups:
        return f"lambda {numbers}: lambda {params}: ({values})"
    # each group worked out by a function of its own: a call copies the numbers the function
    # reads into its frame, and the group's are read only where the table misses (pathfinder.cu:
    # a warp's 33 addresses read about 1,000 numbers, copied at each of 2,048 scenarios)
    makers = []
    body = []
    for g, (read, group) in enumerate(groups.items()):
        key = "(" + ", ".join(f"a{i}" for i in read) + ",)"
        prelude = "".join(f"  {line}\n" for line in (preludes or {}).get(read, ()))
        makers.append(f" def _g{g}({params}):\n{prelude}  return ({', '.join(group)},)")
        body += [
            f"  g{g} = t{g}.get({key})",
            f"  if g{g} is None:",
            f"   if len(t{g}) >= {GROUP_VALUES}: t{g}.clear()",
            f"   g{g} = t{g}[{key}] = _g{g}({params})",
        ]
    tables = ", ".join(f"t{g}" for g in range(len(groups)))
    head = f"def _maker({numbers}{', ' if numbers else ''}{tables}):\n"
    return (
        head + "\n".join(makers) + f"\n def _f({params}):\n" + "\n".join(body) + f"\n  return ({values})\n return _f\n"
    )


_NAMES: list[str] = []  # k0, k1, ...


#: Each source's maker, which given the numbers makes the function (`compile_values`).
_COMPILED: dict[str, Callable[..., Callable[..., tuple]]] = {}
_BY_EXPRS: dict[tuple, Callable[..., tuple]] = {}  # by (expressions, names)


#: The writer's pieces that `families.py` writes a warp's lanes' function with.
CC_GLOBALS = _CC_GLOBALS
Hoist = _Hoist
NotCompilable = _NotCompilable
write_expr = _cc_expr
field_names = _field_names


# ----------------------------------------------------------------------------- strict
#: The last of the names of a writing for `strict_values`, where an unknown is written as a
#: call that raises (no symbol is named so: `_cc_atom` never writes it).
_STRICT = "\0strict"
_STRICT_FUNCTIONS: dict[tuple, Callable[..., tuple] | None] = {}
#: The most functions `_STRICT_FUNCTIONS` holds before it is emptied (each keeps its numbers:
#: about a kilobyte for a mask of ten).
STRICT_LIMIT = 10_000


def strict_values(items: tuple[Expr | Term, ...], names: tuple[str, ...]) -> Callable[..., tuple] | None:
    """A function of `names` (positional ints) giving each item's `evaluate` at those values,
    where every symbol the items read is one of `names`: the same numbers, and raising where
    `evaluate` raises one of ArithmeticError, ValueError, LookupError (an unknown on the path
    it takes raises `UnknownValue`; `&&`, `||` and selects skip what they skip). None where an
    item cannot be written (an operation `_cc_atom` does not write) or compiled (nested too
    deep for Python's compiler). Remembered by the items and names.

    Why: a lane's mask that reads only thread indices is evaluated at each lane before it is
    substituted (`scenarios._at_lane`), and the slots of `lane_groups.by_values` at each lane,
    each a walk over the expression's tree; a mask holding a value loaded from memory walks up
    to it and raises. Measured 2026-11-28 over the five corpora in one process: 238,906 such
    evaluations of masks, 56,320 of them cdpBitonicSort.cu's sorting network, whose failing
    attempts cost 0.23 s of its 1.3 s of lane substitution, and 134,142 slot evaluations."""
    key = (items, names)
    if key in _STRICT_FUNCTIONS:
        return _STRICT_FUNCTIONS[key]
    args = (*names, _STRICT)
    consts: list[int] = []
    function: Callable[..., tuple] | None = None
    try:
        written = [_cc_expr(i, args, consts) if i.__class__ is Expr else _cc_atom(i, args, consts) for i in items]  # type: ignore[arg-type]
    except _NotCompilable:
        written = None
    if written is not None:
        fields = _field_names(len(consts))
        params = ", ".join(f"a{i}" for i in range(len(names)))
        source = _source(", ".join(written).format(*fields), len(written), {}, params, ", ".join(fields))
        try:
            function = _maker_of(source)(*consts)
        except (SyntaxError, RecursionError, MemoryError):  # nested past what Python compiles
            function = None
    if len(_STRICT_FUNCTIONS) >= STRICT_LIMIT:
        _STRICT_FUNCTIONS.clear()
    _STRICT_FUNCTIONS[key] = function
    return function
