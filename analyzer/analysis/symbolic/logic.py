"""Choices and conditions: `minimum`, `maximum`, `select`, `compare` and the logical operators.

Each folds when its outcome is known (``min(a, b)`` when ``a - b`` is a constant, a comparison
likewise) and is 0 or 1 otherwise as in C; ``a > b`` is kept as ``b < a`` so that equal
conditions are equal expressions, which masks and `conjuncts` rely on. ``a - b`` is read off
the two sides (`queries.constant_difference`), not built: a warp's masks make a comparison at
every lane, mostly of a number against a side that is no number (five corpora, one process:
500,425 comparisons, two expressions and two budget steps each; cdpBitonicSort.cu under
callgrind 9.15 G -> 8.93 G instructions).
"""

from __future__ import annotations

import operator

from analyzer.analysis.symbolic.expressions import (
    BOOLEAN_OPS,
    ONE,
    REBUILD,
    ZERO,
    Expr,
    Term,
    as_expr,
    single_atom,
    term,
)
from analyzer.analysis.symbolic.queries import constant_difference


def minimum(a, b) -> Expr:
    """``min(a, b)``."""
    a, b = as_expr(a), as_expr(b)
    d = constant_difference(a, b)
    if d is not None:
        return a if d <= 0 else b
    return term("min", (a, b))


def maximum(a, b) -> Expr:
    """``max(a, b)``."""
    a, b = as_expr(a), as_expr(b)
    d = constant_difference(a, b)
    if d is not None:
        return a if d >= 0 else b
    return term("max", (a, b))


def select(cond, a, b) -> Expr:
    """``cond ? a : b``."""
    cond, a, b = as_expr(cond), as_expr(a), as_expr(b)
    c = cond._c
    if c is not None:
        return a if c else b
    if a == b:
        return a
    return term("select", (cond, a, b))


_SWAPPED = {">": "<", ">=": "<="}
_COMPARE_FOLD = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


def compare(op: str, a, b) -> Expr:
    """``a op b`` for op in ``< <= > >= == !=``: 1 or 0 (folds when ``a - b`` is constant)."""
    a, b = as_expr(a), as_expr(b)
    if op in _SWAPPED:
        op = _SWAPPED[op]
        a, b = b, a
    elif op not in _COMPARE_FOLD:
        raise ValueError(f"unknown comparison operator {op!r}")
    d = constant_difference(a, b)
    if d is not None:
        return ONE if _COMPARE_FOLD[op](d, 0) else ZERO
    return term(op, (a, b))


def _is_boolean(e: Expr) -> bool:
    if e._c is not None:
        return e._c in (0, 1)
    t = single_atom(e)
    return t is not None and t.__class__ is Term and t.op in BOOLEAN_OPS


def _truth(e: Expr) -> Expr:
    return e if _is_boolean(e) else compare("!=", e, 0)


def logical_and(a, b) -> Expr:
    """``a && b`` (0 or 1)."""
    a, b = as_expr(a), as_expr(b)
    if a._c is not None:
        return _truth(b) if a._c else ZERO
    if b._c is not None:
        return _truth(a) if b._c else ZERO
    a, b = _truth(a), _truth(b)
    if a == b:
        return a
    return term("&&", (a, b))


def logical_or(a, b) -> Expr:
    """``a || b`` (0 or 1)."""
    a, b = as_expr(a), as_expr(b)
    if a._c is not None:
        return ONE if a._c else _truth(b)
    if b._c is not None:
        return ONE if b._c else _truth(a)
    a, b = _truth(a), _truth(b)
    if a == b:
        return a
    return term("||", (a, b))


_NEGATED = {"==": "!=", "!=": "=="}


def logical_not(a) -> Expr:
    """``!a`` (0 or 1)."""
    a = as_expr(a)
    if a._c is not None:
        return ZERO if a._c else ONE
    t = single_atom(a)
    if t is not None and t.__class__ is Term:
        x, y = t.args[0], t.args[1] if len(t.args) > 1 else None
        if t.op == "<":  # !(x < y) == y <= x
            return compare("<=", y, x)
        if t.op == "<=":
            return compare("<", y, x)
        if t.op in _NEGATED:
            return compare(_NEGATED[t.op], x, y)
    return compare("==", a, 0)


REBUILD.update(
    {
        "min": minimum,
        "max": maximum,
        "select": select,
        "<": lambda a, b: compare("<", a, b),
        "<=": lambda a, b: compare("<=", a, b),
        "==": lambda a, b: compare("==", a, b),
        "!=": lambda a, b: compare("!=", a, b),
        "&&": logical_and,
        "||": logical_or,
    }
)
