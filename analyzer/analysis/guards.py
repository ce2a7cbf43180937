"""Facts that code states about values it does not fix: host guards, `assert`, `__requires`, and
GPUVerify's launch header.

A host program that reads its sizes at run time still states what it relies on:
`if (w % 32) exit(1);` and `assert(w % 32 == 0)` say that past that line `w` is a multiple of
32; `if (n < 64) return 1;` says that `n` is at least 64. The host interpreter
(`analysis.host.HostInterpreter`) keeps such facts per variable and hands a launch's
`Facts` to the kernel it launches, by parameter, where the verdict policy
(`analysis.verdict`) tries only the values they allow. A GPUVerify kernel states its facts
itself: `__requires(width == 1024)` is a value, `__requires(w % 32 == 0)` a divisor, and the
file's first comment `//--blockDim=[32,8] --gridDim=[64,64]` its launch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator

from analyzer.analysis.results import Facts
from analyzer.ir import nodes as N
from analyzer.ir.nodes import OpaqueKind

__all__ = [
    "Fact",
    "counter_facts",
    "facts_of_condition",
    "gpuverify_header",
    "is_exit",
    "required_facts",
    "scaled_facts",
    "stated",
    "telling",
]

#: One fact about one variable: (kind, number): ("divisor", 32), ("min", 1), ("max", 1024), ("value", 8).
#: The host interpreter also keeps ("power of two", 1) for a loop counter that doubles or halves
#: from a power of two: with a lower bound it is a divisor (`stated`), and only that is handed on.
Fact = tuple[str, int]
POWER_OF_TWO: Fact = ("power of two", 1)

#: The calls after which host code does not go on (the branch that makes them ends the program).
_EXITS = frozenset({"exit", "abort", "_exit", "quick_exit", "std::exit", "std::abort"})

#: A comparison `x OP c` with the constant on the right, as the fact it states when true.
_BOUND_OF = {
    "==": lambda c: [("value", c)],
    ">=": lambda c: [("min", c)],
    ">": lambda c: [("min", c + 1)],
    "<=": lambda c: [("max", c)],
    "<": lambda c: [("max", c - 1)],
}
#: The comparison that holds when `x OP c` does not.
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
#: The same comparison with its operands swapped (`32 <= w` is `w >= 32`).
_SWAPPED = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def is_exit(stmts: list[N.Stmt]) -> bool:
    """Whether a branch ends the function or the program: its last statement is a `return` or
    a call of `exit`/`abort`."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, N.Return):
        return True
    return (
        isinstance(last, N.Eval)
        and isinstance(last.expr, N.Opaque)
        and last.expr.kind is OpaqueKind.CALL
        and last.expr.callee in _EXITS
    )


def facts_of_condition(
    cond: N.Expr, holds: bool, constant: Callable[[N.Expr], object]
) -> Iterator[tuple[N.Variable, Fact]]:
    """The facts about variables that `cond` states when it is `holds` (true after an `assert`,
    false past an `if (...) exit(1)`): each part of a conjunction that holds (a disjunction that
    fails), compared with a constant (`constant(e)` is its value, None if not known)."""
    op = cond.op if isinstance(cond, N.Binary) else None
    if (op == "&&" and holds) or (op == "||" and not holds):
        assert isinstance(cond, N.Binary)
        yield from facts_of_condition(cond.left, holds, constant)
        yield from facts_of_condition(cond.right, holds, constant)
        return
    if isinstance(cond, N.Unary) and cond.op == "!":
        yield from facts_of_condition(cond.operand, not holds, constant)
        return
    if not isinstance(cond, N.Binary) or cond.op not in _NEGATED:
        # a bare value: `if (w % 32) exit(1)` states `w % 32 == 0` when it fails
        yield from _comparison(cond, "!=" if holds else "==", 0, constant)
        return
    left, right, op = cond.left, cond.right, cond.op if holds else _NEGATED[cond.op]
    c = constant(right)
    if not isinstance(c, int):
        left, right, op, c = right, left, _SWAPPED[op], constant(left)
    if isinstance(c, int) and not isinstance(c, bool):
        yield from _comparison(left, op, c, constant)


def _comparison(e: N.Expr, op: str, c: int, constant: Callable[[N.Expr], object]) -> Iterator[tuple[N.Variable, Fact]]:
    """The fact `e OP c` states: `x % d == 0` a divisor of `x`, `x OP c` a bound or a value."""
    if isinstance(e, N.Binary) and e.op == "%" and op == "==" and c == 0 and isinstance(e.left, N.VarRef):
        d = constant(e.right)
        if isinstance(d, int) and not isinstance(d, bool) and d > 1:
            yield e.left.var, ("divisor", d)
    elif isinstance(e, N.Binary) and e.op == "&" and op == "==" and c == 0 and isinstance(e.left, N.VarRef):
        mask = constant(e.right)  # `(w & 31) == 0`: a multiple of 32
        if isinstance(mask, int) and not isinstance(mask, bool) and mask > 0 and (mask + 1) & mask == 0:
            yield e.left.var, ("divisor", mask + 1)
    elif isinstance(e, N.VarRef) and op in _BOUND_OF:
        for fact in _BOUND_OF[op](c):
            yield e.var, fact


def launch_facts(by_param: Iterable[tuple[str, Fact]]) -> Facts | None:
    """The record of the facts stated about a launch's parameters (by name), or None for none."""
    divisors: dict[str, int] = {}
    lows: dict[str, int] = {}
    highs: dict[str, int] = {}
    values: dict[str, int] = {}
    for name, (kind, n) in by_param:
        if kind == "divisor":
            divisors[name] = max(divisors.get(name, 1), n)
        elif kind == "min":
            lows[name] = max(lows.get(name, n), n)
        elif kind == "max":
            highs[name] = min(highs.get(name, n), n)
        else:
            values[name] = n
    if not (divisors or lows or highs or values):
        return None
    names = sorted(set(lows) | set(highs))
    return Facts(
        tuple(sorted(values.items())),
        tuple(sorted(divisors.items())),
        tuple((n, lows.get(n), highs.get(n)) for n in names),
    )


def required_facts(kernel: N.Function, constant: Callable[[N.Expr], object]) -> list[tuple[str, Fact]]:
    """The facts a kernel's `__requires(...)` statements state about its parameters (GPUVerify's
    preconditions: every launch satisfies them), by parameter name."""
    params = {p.uid for p in kernel.params}
    out: list[tuple[str, Fact]] = []
    for st in kernel.body:
        call = st.expr if isinstance(st, N.Eval) else None
        if isinstance(call, N.Opaque) and call.callee == "__requires" and len(call.operands) == 1:
            out.extend(
                (var.name, fact)
                for var, fact in facts_of_condition(call.operands[0], True, constant)
                if var.uid in params
            )
    return out


_HEADER = re.compile(r"--(blockDim|gridDim)=(\[[\d,\s]+\]|\d+)")


def gpuverify_header(comments: Iterable[object]) -> tuple[tuple[int, int, int], tuple[int, int, int], int] | None:
    """GPUVerify's launch header, a comment among the file's first lines (`//pass` then
    `//--blockDim=[32,8] --gridDim=64`): (block, grid, its line), or None when the file has
    none (both sizes are required)."""
    first = next((c for c in comments if getattr(c, "text", "").startswith("//--") and _line(c) <= 5), None)
    if first is None:
        return None
    text = first.text  # type: ignore[attr-defined]
    found = {}
    for what, value in _HEADER.findall(text):
        numbers = [int(x) for x in re.findall(r"\d+", value)]
        if not 1 <= len(numbers) <= 3 or any(n <= 0 for n in numbers):
            return None
        found[what] = (*numbers, *(1,) * (3 - len(numbers)))
    if set(found) != {"blockDim", "gridDim"}:
        return None
    return found["blockDim"], found["gridDim"], _line(first)  # type: ignore[return-value]


def _line(comment: object) -> int:
    return int(getattr(getattr(comment, "location", None), "line", 1))


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def stated(facts: Iterable[Fact]) -> list[Fact]:
    """The facts a launch hands a kernel: a power of two at least `m` is a multiple of the least
    power of two not below `m` (`stride >= 1024` of a halving power of two: a multiple of 1024)."""
    facts = list(facts)
    out = [f for f in facts if f != POWER_OF_TWO]
    lows = [n for kind, n in facts if kind == "min"]
    if POWER_OF_TWO in facts and lows and max(lows) > 1:
        divisor = 1 << (max(lows) - 1).bit_length()
        if ("divisor", divisor) not in out:
            out.append(("divisor", divisor))
    return out


def scaled_facts(facts: Iterable[Fact], op: str, c: int) -> list[Fact]:
    """What holds of `x OP c` (`c` a positive constant; `*`, `/`, `<<`, `>>`) where `facts` hold
    of `x`: `size / 2` of a multiple of 2048 that is at least 2048 is a multiple of 1024, at
    least 1024, and a power of two where `size` is one."""
    if c <= 0 or op not in ("*", "/", "<<", ">>"):
        return []
    factor = 1 << c if op in ("<<", ">>") else c
    grows = op in ("*", "<<")
    out: list[Fact] = []
    for kind, n in facts:
        if kind in ("min", "max", "value") or (kind == "divisor" and (grows or n % factor == 0)):
            out.append((kind, n * factor if grows else n // factor))
        elif (kind, n) == POWER_OF_TWO and _is_power_of_two(factor):
            low = max((m for k, m in facts if k in ("min", "value")), default=0)
            if grows or low >= factor:  # halving stays a power of two while it stays at least 1
                out.append(POWER_OF_TWO)
    return [f for f in out if f[0] != "divisor" or f[1] > 1]


def counter_facts(start: Iterable[Fact], op: str, c: int) -> list[Fact]:
    """What holds of a loop counter at every iteration, from what holds of its first value
    (`start`; ("value", v) where it is known) and its step `x = x OP c` (a positive constant):
    doubling keeps the first value's divisors and lower bound, and a power of two; halving
    keeps the upper bound and a power of two; adding `c` keeps the lower bound and the divisors
    that `c` shares."""
    start = list(start)
    if c <= 0:
        return []
    value = next((n for kind, n in start if kind == "value"), None)
    if value is not None:
        start = [("min", value), ("max", value), ("divisor", value)]
        start += [POWER_OF_TWO] if _is_power_of_two(value) else []
    doubles = op in ("*", "<<") and (op == "<<" or _is_power_of_two(c))
    halves = op in ("/", ">>") and (op == ">>" or _is_power_of_two(c))
    if op in ("*", "<<"):
        kept = [f for f in start if f[0] in ("min", "divisor") and f[1] > 0]
        return kept + ([POWER_OF_TWO] if POWER_OF_TWO in start and doubles else [])
    if op in ("/", ">>"):
        kept = [f for f in start if f[0] == "max"]
        return kept + ([POWER_OF_TWO] if POWER_OF_TWO in start and halves else [])
    if op == "+":
        kept = [f for f in start if f[0] == "min"]
        return kept + [("divisor", math.gcd(n, c)) for kind, n in start if kind == "divisor" and math.gcd(n, c) > 1]
    if op == "-":
        return [f for f in start if f[0] == "max"]
    return []


def telling(facts: Iterable[Fact]) -> list[Fact]:
    """`facts` less those that say nothing of a size (a divisor of 1, a lower bound of 1 or
    less: the values tried are positive anyway)."""
    return [(kind, n) for kind, n in facts if not (kind == "divisor" and n <= 1) and not (kind == "min" and n <= 1)]
