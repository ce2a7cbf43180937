"""C division and remainder: `floordiv` and `mod`, folded where non-negative operands allow.

``(64*bx + tx) / 16`` becomes ``4*bx + tx / 16`` by writing the dividend as ``k*Q + R`` with
every coefficient of R in [0, k); ``(X / k1) / k`` and ``(X % (k*j)) / k`` are merged into
one term; a remainder whose dividend is known to lie in [0, k) disappears. What cannot be
split stays an opaque ``/`` or ``%`` term. The package's assumption (its docstring): the
operands are non-negative.
"""

from __future__ import annotations

from analyzer.analysis.symbolic.c_ints import c_div, c_mod
from analyzer.analysis.symbolic.expressions import (
    REBUILD,
    ZERO,
    Expr,
    Term,
    add,
    as_expr,
    const,
    new_expr,
    scale,
    term,
)
from analyzer.analysis.symbolic.queries import bounds, nonconstant_gcd


def floordiv(a, b) -> Expr:
    """C division ``a / b`` (truncation toward zero)."""
    a, b = as_expr(a), as_expr(b)
    k = b._c
    if k is not None:
        if k == 0:
            return term("/", (a, b))
        if a._c is not None:
            return const(c_div(a._c, k))
        if k == 1:
            return a
        if k == -1:
            return scale(a, -1)
        if k < 0:
            return scale(_divmod_const(a, -k, True), -1)
        return _divmod_const(a, k, True)
    return _divmod_symbolic(a, b, True)


def mod(a, b) -> Expr:
    """C remainder ``a % b`` (sign of the dividend)."""
    a, b = as_expr(a), as_expr(b)
    k = b._c
    if k is not None:
        if k == 0:
            return term("%", (a, b))
        if a._c is not None:
            return const(c_mod(a._c, k))
        if k < 0:
            k = -k
        if k == 1:
            return ZERO
        return _divmod_const(a, k, False)
    return _divmod_symbolic(a, b, False)


def _divmod_const(a: Expr, k: int, want_div: bool) -> Expr:
    """``a / k`` or ``a % k`` for a non-constant ``a`` and a constant ``k >= 2``.

    Write a = k*Q + R with every coefficient of R in [0, k); then a/k = Q + R/k and
    a%k = R%k (exact for non-negative operands)."""
    q: dict = {}
    r: dict = {}
    for m, c in a._p.items():
        qq, rr = divmod(c, k)
        if qq:
            q[m] = qq
        if rr:
            r[m] = rr
    r0 = r.pop((), 0)
    if not r:  # R is a constant in [0, k)
        return new_expr(q) if want_div else const(r0)
    # Divide R and k by g = gcd(k, coefficients of R):  R = g*R' + rho, with rho < g.
    g = nonconstant_gcd(r, k)
    rho = 0
    if g > 1:
        r = {m: c // g for m, c in r.items()}
        rho = r0 % g
        r0 //= g
        k //= g
    if r0:
        r[()] = r0
    rest = new_expr(r)
    if want_div:
        t = _div_reduced(rest, k, r0)
        return add(new_expr(q), t) if q else t
    t = _mod_reduced(rest, k, r0)
    if g > 1:
        t = add(scale(t, g), const(rho))
    return t


def _div_reduced(rest: Expr, k: int, r0: int) -> Expr:
    """``rest / k`` where rest's coefficients lie in [0, k) and share no factor with k."""
    lo, hi = bounds(rest)
    if lo is not None and lo >= 0 and hi is not None and hi < k:
        return ZERO
    p = rest._p
    if len(p) == 1 or (len(p) == 2 and () in p):  # rest == t + r0 for one atom t
        for m, c in p.items():
            if m and c == 1 and len(m) == 1 and m[0].__class__ is Term:
                t = m[0]
                k1 = t.args[1]._c if t.op in ("/", "%") else None
                if k1 is not None and k1 > 0:
                    if t.op == "/":  # (X/k1 + r0)/k = (X + k1*r0)/(k1*k)
                        return floordiv(add(t.args[0], const(k1 * r0)), k1 * k)
                    if r0 == 0 and k1 % k == 0:  # (X % (k*j)) / k = (X / k) % j
                        return mod(floordiv(t.args[0], k), k1 // k)
    return term("/", (rest, const(k)))


def _mod_reduced(rest: Expr, k: int, r0: int) -> Expr:
    """``rest % k`` where rest's coefficients lie in [0, k) and share no factor with k."""
    lo, hi = bounds(rest)
    if lo is not None and lo >= 0 and hi is not None and hi < k:
        return rest
    # (c*(X % m) + ...) % k == (c*X + ...) % k when k divides m.
    acc = None
    for m, c in rest._p.items():
        if len(m) == 1 and m[0].__class__ is Term and m[0].op == "%":
            t = m[0]
            k1 = t.args[1]._c
            if k1 is not None and k1 > 0 and k1 % k == 0:
                acc = add(rest if acc is None else acc, new_expr({m: -c}))
                acc = add(acc, scale(t.args[0], c))
    if acc is not None:
        return mod(acc, k)
    return term("%", (rest, const(k)))


def _mono_div(m: tuple, d: tuple):
    """``m / d`` if the monomial d divides m, else None."""
    if len(d) > len(m):
        return None
    rest = list(m)
    for a in d:
        try:
            rest.remove(a)
        except ValueError:
            return None
    return tuple(rest)


def _divmod_symbolic(a: Expr, b: Expr, want_div: bool) -> Expr:
    """``a / b`` or ``a % b`` for a non-constant divisor."""
    if a._c == 0:
        return ZERO
    pb = b._p
    if len(pb) == 1:
        ((mb, cb),) = pb.items()
        if cb < 0:
            nb = scale(b, -1)
            return scale(_divmod_symbolic(a, nb, True), -1) if want_div else _divmod_symbolic(a, nb, False)
        # a = b*Q + R with R >= 0 (every coefficient of R non-negative): a/b = Q + R/b, a%b = R%b
        q: dict = {}
        r: dict = {}
        for m, c in a._p.items():
            rest = _mono_div(m, mb)
            if rest is None:
                if c < 0:  # R would have a negative coefficient: no split
                    q = {}
                    break
                r[m] = c
            else:
                qq, rr = divmod(c, cb)
                if qq:
                    q[rest] = qq
                if rr:
                    r[m] = rr
        if q:
            if not r:
                return new_expr(q) if want_div else ZERO
            rest_e = new_expr(r)
            if want_div:
                return add(new_expr(q), term("/", (rest_e, b)))
            return term("%", (rest_e, b))
    return term("/" if want_div else "%", (a, b))


REBUILD.update({"/": floordiv, "%": mod})
