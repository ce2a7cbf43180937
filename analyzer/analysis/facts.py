"""Facts the code states about a kernel's values: `__assume(c)`, `__builtin_assume(c)`, `assert(c)`.

nvcc takes the condition of these as true where they are reached, and so does warplint: an
equality gives a value (`__assume(n == 2)`: n is 2), `n % 32 == 0` and `(n & 31) == 0` give a
divisor, `n >= 1` and `n < 64` give a range. Only facts about one symbol that is the same for
every lane of a warp (a parameter, a field of one, the launch's sizes) are kept, and only those
reached by every thread before an access hold for it (the interpreter decides that: see
`Interpreter.assume`). A `Facts` record (`analysis.results`, the one record of facts the host states too) travels with each `Occurrence`: its values join the
known values an access is costed with, and the divisors and ranges are what a sampler of unknown
values restricts its values to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from analyzer.analysis import symbolic as S
from analyzer.analysis.results import NO_FACTS, Facts
from analyzer.ir import nodes as N

__all__ = ["NO_FACTS", "Facts", "stated"]

#: Comparisons with the symbol on the left, and the same with the operands swapped.
_SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def stated(cond: N.Expr, value_of: Callable[[N.Expr], object]) -> Facts:
    """The facts that `cond` states (its `&&`-joined parts, each a comparison of one uniform
    symbol with a constant); `value_of` gives an IR expression's symbolic value. Parts that read
    memory or call functions are not evaluated again (their accesses are already recorded)."""
    facts = NO_FACTS
    for part in _conjuncts(cond):
        if isinstance(part, N.Binary) and part.op in _SWAPPED and _pure(part):
            facts = facts.merged(_comparison(part, value_of))
    return facts


def _conjuncts(e: N.Expr) -> Iterator[N.Expr]:
    if isinstance(e, N.Binary) and e.op == "&&":
        yield from _conjuncts(e.left)
        yield from _conjuncts(e.right)
    else:
        yield e


def _pure(e: N.Expr) -> bool:
    """Whether evaluating `e` reads no memory and calls nothing."""
    stack: list[object] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (N.Load, N.Call, N.Opaque)):
            return False
        stack.extend(N.sub_expressions(x))  # type: ignore[arg-type]
    return True


def _comparison(e: N.Binary, value_of: Callable[[N.Expr], object]) -> Facts:
    """The fact one comparison states: `n == 2`, `2 == n`, `n % 32 == 0`, `(n & 31) == 0`, `n < 64`."""
    left, right = value_of(e.left), value_of(e.right)
    op, left_ir = e.op, e.left
    if isinstance(left, S.Expr) and left.is_const:
        left, right, op, left_ir = right, left, _SWAPPED[op], e.right
    if not (isinstance(right, S.Expr) and right.is_const and isinstance(left, S.Expr)):
        return NO_FACTS
    c = right.value
    name = _uniform_symbol(left)
    if name is not None:
        if op == "==":
            return Facts(value_of=((name, c),))
        low = {">": c + 1, ">=": c}.get(op)
        high = {"<": c - 1, "<=": c}.get(op)
        return Facts(range_of=((name, low, high),))
    if op == "==" and c == 0:
        divided = _divisor_of(left_ir, value_of)
        if divided is not None:
            return Facts(divisor_of=(divided,))
    return NO_FACTS


def _divisor_of(e: N.Expr, value_of: Callable[[N.Expr], object]) -> tuple[str, int] | None:
    """`n % 32` and `n & 31` (a power of two less one): (n, 32), where `n` is a uniform symbol."""
    if not (isinstance(e, N.Binary) and e.op in ("%", "&")):
        return None
    x, m = value_of(e.left), value_of(e.right)
    if e.op == "&" and isinstance(x, S.Expr) and x.is_const:
        x, m = m, x  # `31 & n`
    if not (isinstance(x, S.Expr) and isinstance(m, S.Expr) and m.is_const and m.value > 0):
        return None
    name = _uniform_symbol(x)
    divisor = m.value if e.op == "%" else m.value + 1
    if name is None or (e.op == "&" and divisor & (divisor - 1)):
        return None
    return (name, divisor)


def _uniform_symbol(e: S.Expr) -> str | None:
    """The name of `e` when it is one symbol whose value every lane shares (not threadIdx, not a
    loop's counter), else None."""
    names = e.free_symbols
    if len(names) != 1:
        return None
    (name,) = names
    if name.startswith("threadIdx.") or "@" in name or e != S.sym(name):
        return None
    return name
