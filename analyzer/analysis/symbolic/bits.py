"""Shifts and the bitwise operators: `shl`, `shr`, `bitand`, `bitor`, `bitxor`.

A shift by a constant is a multiplication or a division by a power of two; ``a & m`` with a
contiguous mask is a remainder and a division (``(a >> low) % 2**width << low``); ``a | b``
and ``a ^ b`` are ``a + b`` when the set bits of the two can never overlap (``4*i | 3`` with
``i`` a whole number). Anything else stays an opaque term.
"""

from __future__ import annotations

import math

from analyzer.analysis.symbolic.c_ints import MAX_SHIFT
from analyzer.analysis.symbolic.division import floordiv, mod
from analyzer.analysis.symbolic.expressions import (
    ALL_BITS,
    MINUS_ONE,
    REBUILD,
    ZERO,
    Expr,
    add,
    as_expr,
    const,
    scale,
    term,
)
from analyzer.analysis.symbolic.queries import bounds


def shl(a, b) -> Expr:
    """``a << b``."""
    a, b = as_expr(a), as_expr(b)
    n = b._c
    if n is not None and 0 <= n <= MAX_SHIFT:
        return scale(a, 1 << n)
    if a._c == 0:
        return ZERO
    return term("<<", (a, b))


def shr(a, b) -> Expr:
    """``a >> b`` (arithmetic shift for constants; division by 2**b for non-negative ``a``)."""
    a, b = as_expr(a), as_expr(b)
    n = b._c
    if n is not None and n >= 0:
        if a._c is not None:
            return const(a._c >> n)
        if n <= MAX_SHIFT:
            return floordiv(a, 1 << n)
    if a._c == 0:
        return ZERO
    return term(">>", (a, b))


def _low_zero_bits(e: Expr) -> int:
    """The number of low bits that are zero in every value of ``e`` (e != 0)."""
    g = 0
    for c in e._p.values():
        g = math.gcd(g, c)
        if g & 1:
            return 0
    return (g & -g).bit_length() - 1


def _disjoint_sum(a: Expr, b: Expr):
    """``a + b`` if the set bits of a and b can never overlap, else None."""
    for x, y in ((a, b), (b, a)):
        t = _low_zero_bits(x)
        if t:
            lo, hi = bounds(y)
            if lo is not None and lo >= 0 and hi is not None and hi < (1 << t):
                return add(x, y)
    return None


def bitand(a, b) -> Expr:
    """``a & b``."""
    a, b = as_expr(a), as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c & b._c)
    if a._c is not None:
        a, b = b, a
    m = b._c
    if m is not None:
        if m == 0:
            return ZERO
        if m == ALL_BITS:
            return a
        if m > 0:
            low = (m & -m).bit_length() - 1
            width = (m >> low).bit_length()
            if (m >> low) == (1 << width) - 1:  # contiguous mask: ((a >> low) % 2**width) << low
                return scale(mod(floordiv(a, 1 << low), 1 << width), 1 << low)
        else:
            low = (m & -m).bit_length() - 1
            if m == -(1 << low):  # clears the low bits: a - a % 2**low
                return add(a, scale(mod(a, 1 << low), -1))
    if a == b:
        return a
    return term("&", (a, b))


def bitor(a, b) -> Expr:
    """``a | b``."""
    a, b = as_expr(a), as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c | b._c)
    if a._c == 0:
        return b
    if b._c == 0:
        return a
    if a._c == ALL_BITS or b._c == ALL_BITS:
        return MINUS_ONE
    if a == b:
        return a
    s = _disjoint_sum(a, b)
    if s is not None:
        return s
    return term("|", (a, b))


def bitxor(a, b) -> Expr:
    """``a ^ b``."""
    a, b = as_expr(a), as_expr(b)
    if a._c is not None and b._c is not None:
        return const(a._c ^ b._c)
    if a._c == 0:
        return b
    if b._c == 0:
        return a
    if a._c == ALL_BITS:
        return ~b
    if b._c == ALL_BITS:
        return ~a
    if a == b:
        return ZERO
    s = _disjoint_sum(a, b)
    if s is not None:
        return s
    return term("^", (a, b))


REBUILD.update({"<<": shl, ">>": shr, "&": bitand, "|": bitor, "^": bitxor})
