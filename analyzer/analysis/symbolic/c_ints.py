"""C's integer operations on Python ints, as `Expr.evaluate` and compiled lane expressions do them:
division truncating toward zero, the remainder with the dividend's sign, shifts bounded, and
the other binary operations an opaque term holds; and the errors of `Expr.evaluate` (here to
keep expressions.py under 800 lines; re-exported there)."""

from __future__ import annotations

import operator
from collections.abc import Callable

__all__ = ["EVAL_BINARY", "MAX_SHIFT", "UnboundSymbol", "UnknownValue", "c_div", "c_mod"]

#: ``x << n`` with a constant n outside [0, MAX_SHIFT] (undefined in C) is not folded, and
#: `evaluate` refuses it rather than building a huge integer.
MAX_SHIFT = 64


def c_div(a: int, b: int) -> int:
    """C division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: int, b: int) -> int:
    """C remainder: the sign follows the dividend."""
    return a - b * c_div(a, b)


#: The value of each binary operation of an opaque term that is not division, remainder or shift.
EVAL_BINARY: dict[str, Callable[[int, int], int]] = {
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "min": min,
    "max": max,
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "*": operator.mul,
}


class UnboundSymbol(KeyError):
    """`Expr.evaluate` met a symbol that the environment does not bind."""

    def __str__(self) -> str:  # KeyError's str() would quote the name
        return f"unbound symbol {self.args[0]!r}" if self.args else "unbound symbol"


class UnknownValue(UnboundSymbol):
    """`Expr.evaluate` met an `Unknown` (a data-dependent value): it has no concrete value."""

    def __str__(self) -> str:
        return f"data-dependent value {self.args[0]!r} cannot be evaluated" if self.args else "unknown value"
