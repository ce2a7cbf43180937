"""Renaming the loop counters and unknowns an expression holds: what a loop run again alike
(`analysis.replay`) makes of the expressions its first run made.

The interpreter names the counter of the n-th loop it runs `k@n` (or `s@n`, a multiplicative
one) and numbers each unknown it makes (`Unknown.uid`). A run of a loop that reads the same
values as an earlier one makes the same expressions but for those names and numbers: its
loops are numbered on from where the interpreter stands, its unknowns too. `Renaming` maps
the first run's into the second's, counters and unknowns made in the first run being shifted
by how far the interpreter has come since; the rest of an expression is kept as it is.
Apart from expressions.py to keep that module under 800 lines.
"""

from __future__ import annotations

import itertools
import operator

from analyzer.analysis.symbolic.expressions import (
    REBUILD,
    Atom,
    Expr,
    Symbol,
    Term,
    Unknown,
    add,
    mul,
    new_expr,
    raw_unknown,
    set_unknowns_made,
    unknowns_made,
)

_KEY = operator.attrgetter("key")  # an atom's order, as `Expr` sorts a monomial's atoms

__all__ = ["Renaming", "counter_uid", "next_unknown_uid", "restore_unknowns", "skip_unknowns"]


def next_unknown_uid() -> int:
    """The uid the next `unknown()` will give, without making one."""
    n = next(Unknown._ids)
    Unknown._ids = itertools.count(n)
    return n


def skip_unknowns(made: int, uids: int) -> None:
    """Count `made` unknowns as made and pass `uids` uids over, as making them would (a run
    replayed makes its unknowns only where they are kept: `Renaming`)."""
    set_unknowns_made(unknowns_made() + made)
    Unknown._ids = itertools.count(next_unknown_uid() + uids)


def restore_unknowns(made: int, next_uid: int) -> None:
    """Put the count of unknowns made and the next uid back as they were (`next_unknown_uid`)."""
    set_unknowns_made(made)
    Unknown._ids = itertools.count(next_uid)


def counter_uid(name: str) -> int | None:
    """The loop number of a counter's name (`k@12` -> 12), None for another symbol."""
    _, at, tail = name.rpartition("@")
    return int(tail) if at and tail.isdigit() else None


class Renaming:
    """The counters of loops numbered in (`loops_from`, `loops_to`] moved by `loop_shift`, and
    the unknowns with uids in [`unknowns_from`, `unknowns_to`) moved by `unknown_shift`: each
    renamed atom made once (`atoms`), so that what the first run shared stays shared."""

    __slots__ = (
        "atoms",
        "exprs",
        "loop_shift",
        "loops_from",
        "loops_to",
        "names",
        "unknown_shift",
        "unknowns_from",
        "unknowns_to",
    )

    def __init__(self, loops: tuple[int, int], loop_shift: int, unknowns: tuple[int, int], unknown_shift: int) -> None:
        self.loops_from, self.loops_to = loops
        self.unknowns_from, self.unknowns_to = unknowns
        self.loop_shift, self.unknown_shift = loop_shift, unknown_shift
        self.atoms: dict[int, tuple[Atom, Atom | Expr]] = {}
        self.exprs: dict[int, tuple[Expr, Expr]] = {}
        self.names: dict[str, str] = {}  # each symbol's name renamed (`counter`)

    def renames(self, name: str) -> bool:
        """Whether the symbol `name` is a counter of one of the loops renamed."""
        uid = counter_uid(name)
        return uid is not None and self.loops_from < uid <= self.loops_to

    def counter(self, name: str) -> str:
        """`name` renamed where it is a counter of one of the loops renamed."""
        new = self.names.get(name)
        if new is None:
            if self.renames(name):
                head, _, tail = name.rpartition("@")
                new = f"{head}@{int(tail) + self.loop_shift}"
            else:
                new = name
            self.names[name] = new
        return new

    def touches(self, e: Expr) -> bool:
        """Whether `e` holds a counter or an unknown that is renamed."""
        if e._c is not None:
            return False
        if any(self.renames(name) for name in e.free_symbols):
            return True
        stack = [e]
        while stack:
            x = stack.pop()
            for mono in x._p:
                for a in mono:
                    if a.__class__ is Unknown:
                        if self.unknowns_from <= a.uid < self.unknowns_to:
                            return True
                    elif a.__class__ is Term:
                        stack.extend(a.args)
        return False

    def expr(self, e: Expr) -> Expr:
        """`e` with its counters and unknowns renamed; `e` itself where none is. Each made
        once: the accesses of a loop share their mask, a loop's counter is in each address."""
        if e._c is not None:
            return e
        seen = self.exprs.get(id(e))
        if seen is not None and seen[0] is e:
            return seen[1]
        new = self._expr(e)
        self.exprs[id(e)] = (e, new)  # (`e` kept, so that its id stays its own)
        return new

    def _expr(self, e: Expr) -> Expr:
        out: dict = {}
        parts: list[Expr] | None = None
        changed = False
        for mono, coef in e._p.items():
            atoms: list[Atom] = []
            factors: list[Expr] | None = None
            for a in mono:
                new = self.atom(a)
                if new is a:
                    atoms.append(a)
                    continue
                changed = True
                single = _single_atom(new)
                if single is not None:
                    atoms.append(single)
                elif factors is None:
                    factors = [new]  # type: ignore[list-item]  # (not an atom: an expression)
                else:
                    factors.append(new)  # type: ignore[arg-type]
            key = tuple(sorted(atoms, key=_KEY)) if changed and len(atoms) > 1 else tuple(atoms)
            if factors is None:
                out[key] = coef
                continue
            product = new_expr({key: coef})
            for f in factors:
                product = mul(product, f)
            if parts is None:
                parts = [product]
            else:
                parts.append(product)
        if not changed:
            return e
        result = new_expr(out) if out else new_expr({})
        for p in parts or ():
            result = add(result, p)
        return result

    def atom(self, a: Atom) -> Atom | Expr:
        """The atom `a` renamed: itself where nothing in it is; an expression where a term
        rebuilt from renamed arguments is no longer one atom."""
        cls = a.__class__
        if cls is Symbol:
            name = self.counter(a.name)  # type: ignore[attr-defined]
            return a if name == a.name else _symbol(name)  # type: ignore[attr-defined]
        seen = self.atoms.get(id(a))
        if seen is not None and seen[0] is a:
            return seen[1]
        new: Atom | Expr
        if cls is Unknown:
            u: Unknown = a  # type: ignore[assignment]
            if not self.unknowns_from <= u.uid < self.unknowns_to:
                return a
            new = raw_unknown(u.tag, u.uid + self.unknown_shift, u.origin, u.lane_varying)
        else:
            t: Term = a  # type: ignore[assignment]
            args = [self.expr(x) for x in t.args]
            if all(x is y for x, y in zip(args, t.args)):
                return a
            rebuilt = REBUILD[t.op](*args)
            single = _single_atom(rebuilt)
            new = single if single is not None else rebuilt
        self.atoms[id(a)] = (a, new)  # (`a` kept, so that its id stays its own)
        return new


def _symbol(name: str) -> Atom:
    """The symbol `name` as an atom, not through `sym`: the replay makes the counters' symbols
    itself, where the loops were run, with the steps that costs (`analysis.replay`)."""
    return Symbol(name)


def _single_atom(e: Expr | Atom) -> Atom | None:
    """The atom `e` is (an atom, or one atom with coefficient 1), else None."""
    if not isinstance(e, Expr):
        return e
    p = e._p
    if len(p) != 1:
        return None
    ((mono, coef),) = p.items()
    return mono[0] if coef == 1 and len(mono) == 1 else None
