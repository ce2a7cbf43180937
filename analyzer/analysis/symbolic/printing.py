"""How an expression prints: C syntax with C's precedence, constant last, no redundant parentheses.

``str(e)`` is the text warplint's messages and assumptions quote (``4*threadIdx.x + 1``,
``(i + 1) % 32``), so it is deterministic: monomials in the order of their atoms' keys.
"""

from __future__ import annotations

from typing import cast

from analyzer.analysis.symbolic.expressions import Atom, Expr, Symbol, Term, Unknown, single_atom

_PREC = {  # C precedence level: lower binds tighter
    "*": 3,
    "/": 3,
    "%": 3,
    "<<": 5,
    ">>": 5,
    "<": 6,
    "<=": 6,
    "==": 7,
    "!=": 7,
    "&": 8,
    "^": 9,
    "|": 10,
    "&&": 11,
    "||": 12,
    "select": 13,
}
_FUNCTION_LIKE = frozenset({"min", "max", "unknown"})


def print_order(mc):
    """The sort key of a ``(monomial, coefficient)`` pair: by the atoms' keys, constant last."""
    m = mc[0]
    return (not m, tuple([a.key for a in m]))


def _is_primary(e: Expr) -> bool:
    c = e._c
    if c is not None:
        return c >= 0
    a = single_atom(e)
    return a is not None and (a.__class__ is Symbol or cast(Term, a).op in _FUNCTION_LIKE)


def _fmt_arg(e: Expr) -> str:
    s = str(e)
    return s if _is_primary(e) else f"({s})"


def format_atom(a: Atom) -> str:
    if a.__class__ is Symbol:
        return a.name
    if a.__class__ is Unknown:
        return a.tag
    op, args = cast(Term, a).op, cast(Term, a).args
    if op in ("min", "max"):
        return f"{op}({args[0]}, {args[1]})"
    if op == "select":
        return f"{_fmt_arg(args[0])} ? {_fmt_arg(args[1])} : {_fmt_arg(args[2])}"
    if op == "*":
        return f"{_fmt_arg(args[0])}*{_fmt_arg(args[1])}"
    return f"{_fmt_arg(args[0])} {op} {_fmt_arg(args[1])}"


def _fmt_atom(a: Atom, bare: bool) -> str:
    s = format_atom(a)
    if bare or a.__class__ is Symbol or cast(Term, a).op in _FUNCTION_LIKE:
        return s
    return f"({s})"


def format_expr(e: Expr) -> str:
    p = e._p
    if not p:
        return "0"
    items = sorted(p.items(), key=print_order)
    single = len(items) == 1
    parts: list[str] = []
    for i, (m, c) in enumerate(items):
        neg = c < 0
        mag = -c if neg else c
        if not m:
            body = str(mag)
        elif len(m) == 1 and mag == 1:
            a = m[0]
            # one atom alone: bare if it is the whole expression, or a / % term in a sum
            bare = (single and not neg) or (a.__class__ is Term and _PREC.get(a.op, 99) <= 3 and not (neg and i == 0))
            body = _fmt_atom(a, bare)
        else:
            body = "*".join(_fmt_atom(a, False) for a in m)
            if mag != 1:
                body = f"{body}*{mag}"
        if i == 0:
            parts.append(f"-{body}" if neg else body)
        else:
            parts.append(f" - {body}" if neg else f" + {body}")
    return "".join(parts)
