"""What an expression says about itself: its bounds, conjunctions, unknowns and residues.

Nothing here builds a new kind of term: the analyses ask these questions of the expressions
the interpreter made (`bounds` also serves division and the bitwise operators, which fold
when an operand is known to be small).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import cast

from analyzer.analysis.symbolic.expressions import (
    BOOLEAN_OPS,
    Atom,
    Expr,
    Symbol,
    Term,
    Unknown,
    as_expr,
    const,
    new_expr,
    single_atom,
)
from analyzer.budget import spend as _spend

# ---------------------------------------------------------------------------- structure


def conjuncts(e: Expr) -> frozenset[Expr]:
    """The conditions ``e`` is the conjunction of: ``a && b && c`` -> {a, b, c}; a constant
    true has none, any other expression is its own single conjunct."""
    e = as_expr(e)
    if e._c is not None and e._c:
        return frozenset()
    out: set[Expr] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        atom = single_atom(x)
        if atom is not None and atom.__class__ is Term and atom.op == "&&":
            stack.extend(atom.args)
        else:
            out.add(x)
    return frozenset(out)


def unknowns(e: Expr) -> Iterator[Unknown]:
    """Every `Unknown` in ``e`` (also inside opaque terms), in the order of a depth-first walk,
    once per place it appears, except that a sub-expression met again as the same object (an
    argument shared by several terms) is read once: the first appearance of each unknown is
    where it was. The offsets of mergeSort.cu's data-dependent accesses share their arguments
    so much that `costing.data_dependence` read 445,510 sub-expressions where 26,012 are
    distinct objects (profiled: 0.82 -> 0.15 s; the same unknowns first met in the same order)."""
    stack = [as_expr(e)]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        for m in x._p:
            for a in m:
                if a.__class__ is Unknown:
                    yield a
                elif a.__class__ is Term:
                    stack.extend(a.args)


def varies_between_lanes(e: Expr) -> bool:
    """Whether an `Unknown` in ``e`` (also inside opaque terms) may differ between the lanes of
    a warp (`Unknown.lane_varying`). The atoms of ``e`` itself are read first, without the
    walk of `unknowns`, which only an opaque term needs: the interpreter asks it of every
    address it loads from, and of every variable a loop writes (tf32TensorCoreGemm.cu: 4% of
    running its kernels, a generator and its set a call; its check under callgrind, 2026-11-28,
    with `eval`'s step written out and float arithmetic not looked up: 9.44 G -> 9.20 G)."""
    for m in e._p:
        for a in m:
            if a.__class__ is Term:
                return any(u.lane_varying for u in unknowns(e))
            if a.__class__ is Unknown and a.lane_varying:
                return True
    return False


def is_unknown(e: Expr) -> bool:
    """True if ``e`` contains an `Unknown` anywhere (also inside opaque terms)."""
    return next(unknowns(e), None) is not None


_NAME_INDEX: dict[tuple[str, ...], dict[str, int]] = {}


def affine_in(e: Expr, names: Sequence[str]) -> tuple[tuple[int, ...], Expr] | None:
    """``((c_0, c_1, ...), rest)`` with ``e == sum(c_i * names[i]) + rest``, every c_i an int and
    ``rest`` free of ``names`` (also inside opaque terms); None if ``e`` is not of that form."""
    e = as_expr(e)
    key = names if names.__class__ is tuple else tuple(names)
    idx = _NAME_INDEX.get(key)
    if idx is None:
        idx = {n: i for i, n in enumerate(key)}
        if len(_NAME_INDEX) < 256:
            _NAME_INDEX[key] = idx
    coeffs = [0] * len(key)
    if e._c is not None:
        return tuple(coeffs), e
    free = e._free
    if free is None:
        free = e.free_symbols
    if free.isdisjoint(idx):
        return tuple(coeffs), e
    rest = None
    for m, c in e._p.items():
        if len(m) == 1:
            a = m[0]
            if a.__class__ is Symbol:
                i = idx.get(a.name)
                if i is None:
                    continue
                coeffs[i] += c
                if rest is None:
                    rest = dict(e._p)
                del rest[m]
                continue
        for a in m:
            if not a.free.isdisjoint(idx):
                return None
    return tuple(coeffs), (e if rest is None else new_expr(rest))


def constant_difference(a: Expr, b: Expr) -> int | None:
    """``a - b`` where it is a number (the two differ only in their constant terms), else None."""
    pa, pb = a._p, b._p
    if len(pa) - (() in pa) != len(pb) - (() in pb):
        return None
    get = pb.get
    for m, c in pa.items():
        if m and get(m) != c:
            return None
    return pa.get((), 0) - pb.get((), 0)


def spent_difference(a: Expr, b: Expr) -> int | None:
    """`constant_difference(a, b)`, spending the budget steps, and remembering the constants,
    that building ``a - b`` (`add(a, scale(b, -1))`) would, step by step (`analyzer.budget`):
    what `Interpreter.holder` asks of each value a thread holds at each load, where only a
    number is wanted. myocyte/main.cu built them there for every value held at every load of
    its unrolled loop (its check under callgrind, 2026-11-28: 13.35 G -> 12.78 G instructions)."""
    c = b._c
    if c == 0:  # `a - 0` is `a` itself: nothing built
        return a._c
    if c is not None:
        const(-c)  # `scale` of a number: a constant, remembered as it is
    else:
        _spend()  # `scale` of anything else: an expression built
    if a._c == 0:  # `0 + (-b)` is `-b`: nothing more built
        return None if c is None else -c
    _spend()  # `add`: an expression built
    return constant_difference(a, b)


def linear_comparison(e: Expr, name: str) -> tuple[str, int, int] | None:
    """``(op, d0, d1)`` where `e` is the comparison ``a op b`` (op ``<`` or ``<=``, as `compare`
    leaves every order) of two expressions of `name` alone, each a number plus a multiple of
    it: ``e`` is ``d0 + d1 * name op 0``. None for any other expression. Nothing is built."""
    if e._c is not None or len(e._p) != 1:
        return None
    ((monomial, coefficient),) = e._p.items()
    if coefficient != 1 or len(monomial) != 1:
        return None
    t = monomial[0]
    if t.__class__ is not Term or t.op not in ("<", "<="):
        return None
    d0 = d1 = 0
    for side, sign in zip(t.args, (1, -1)):
        for m, c in side._p.items():
            if not m:
                d0 += sign * c
            elif len(m) == 1 and m[0].__class__ is Symbol and m[0].name == name:
                d1 += sign * c
            else:
                return None
    return t.op, d0, d1


def plus_constant(e: Expr, k: int) -> Expr:
    """``e + k``, built as one new expression whatever `k` is (`const` would remember a number
    met for the first time, and spend a step for it only then)."""
    d = dict(e._p)
    c = d.pop((), 0) + k
    if c:
        d[()] = c
    return new_expr(d)


def nonconstant_gcd(p: dict, start: int = 0) -> int:
    """The gcd of `start` and the coefficients of the non-constant monomials of the dict `p`."""
    g = start
    for m, c in p.items():
        if m:
            g = math.gcd(g, c)
            if g == 1:
                break
    return g


def coefficient_gcd(e: Expr) -> int:
    """The gcd of the coefficients of all non-constant monomials (0 if ``e`` is constant)."""
    return nonconstant_gcd(as_expr(e)._p)


def residues(e: Expr, modulus: int) -> frozenset[int]:
    """The values ``e mod modulus`` (in [0, modulus)) can take when every symbol and opaque term
    is an arbitrary non-negative integer: all r with r = const (mod gcd(coefficients, modulus))."""
    if modulus <= 0:
        raise ValueError(f"modulus must be positive, got {modulus}")
    e = as_expr(e)
    g = math.gcd(coefficient_gcd(e), modulus)
    c0 = e._p.get((), 0)
    return frozenset(range(c0 % g, modulus, g))


# ---------------------------------------------------------------------------- bounds


def bounds(e: Expr) -> tuple[int | None, int | None]:
    """An interval ``(lo, hi)`` containing every value of ``e`` (None = unbounded), assuming
    symbols and unknowns are non-negative and so are the operands of ``/`` and ``%``."""
    e = as_expr(e)
    b = e._bnd
    if b is None:
        b = e._bnd = _expr_bounds(e)
    return b


def _expr_bounds(e: Expr):
    lo = hi = 0
    for m, c in e._p.items():
        if not m:
            ml = mh = 1
        else:
            ml, mh = _mono_bounds(m)
        if c > 0:
            lo = None if lo is None or ml is None else lo + c * ml
            hi = None if hi is None or mh is None else hi + c * mh
        else:
            lo = None if lo is None or mh is None else lo + c * mh
            hi = None if hi is None or ml is None else hi + c * ml
        if lo is None and hi is None:
            break
    return (lo, hi)


def _mono_bounds(m: tuple):
    lo = 1
    hi: int | None = 1
    for a in m:
        al, ah = _atom_bounds(a)
        if al is None or al < 0:
            return (None, None)
        lo *= al
        if ah == 0:
            return (0, 0)
        hi = None if hi is None or ah is None else hi * ah
    return (lo, hi)


def _atom_bounds(a: Atom):
    if a.__class__ is Symbol:
        return (0, None)
    t = cast(Term, a)  # every other atom is a Term (a test of the class is faster than isinstance)
    b = t._bnd
    if b is None:
        b = t._bnd = _term_bounds(t)
    return b


def _term_bounds(t: Term):
    op, args = t.op, t.args
    if op in BOOLEAN_OPS:
        return (0, 1)
    if op == "select":
        (l1, h1), (l2, h2) = bounds(args[1]), bounds(args[2])
        return (None if l1 is None or l2 is None else min(l1, l2), None if h1 is None or h2 is None else max(h1, h2))
    (la, ha), (lb, hb) = bounds(args[0]), bounds(args[1])
    if op == "/":
        if args[1]._c is not None and args[1]._c > 0:
            k = args[1]._c
            return (max(la or 0, 0) // k, None if ha is None else max(ha, 0) // k)
        return (0, None if ha is None else max(ha, 0))
    if op == "%":
        hi = ha
        if hb is not None:
            hi = max(hb - 1, 0) if hi is None else min(hi, max(hb - 1, 0))
        return (0, None if hi is None else max(hi, 0))
    if op == "&":
        his = [h for (lo, h) in ((la, ha), (lb, hb)) if lo is not None and lo >= 0 and h is not None]
        if his:
            return (0, min(his))
        if la is not None and la >= 0 and lb is not None and lb >= 0:
            return (0, None)
        return (None, None)
    if op in ("|", "^"):
        if la is None or lb is None or la < 0 or lb < 0:
            return (None, None)
        if ha is None or hb is None:
            return (0, None)
        return (0, (1 << max(ha, hb).bit_length()) - 1)
    if op == "<<":
        return (0, None) if la is not None and la >= 0 else (None, None)
    if op == ">>":
        return (0, ha) if la is not None and la >= 0 else (None, None)
    if op == "min":
        return (
            None if la is None or lb is None else min(la, lb),
            hb if ha is None else ha if hb is None else min(ha, hb),
        )
    if op == "max":
        return (
            lb if la is None else la if lb is None else max(la, lb),
            None if ha is None or hb is None else max(ha, hb),
        )
    if op == "*":
        if la is None or lb is None or la < 0 or lb < 0:
            return (None, None)
        if ha == 0 or hb == 0:
            return (0, 0)
        return (la * lb, None if ha is None or hb is None else ha * hb)
    return (None, None)
