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

from analyzer.analysis.symbolic.c_ints import MAX_SHIFT, c_div, c_mod
from analyzer.analysis.symbolic.expressions import Atom, Expr, Symbol, Term


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


_CC_GLOBALS = {
    "_div": _cc_div,
    "_mod": _cc_mod,
    "_shl": _cc_shl,
    "_shr": _cc_shr,
    "min": min,
    "max": max,
    "__builtins__": {},
}
_CC_INFIX = {"&": "&", "|": "|", "^": "^", "*": "*"}
_CC_COMPARE = {"<": "<", "<=": "<=", "==": "==", "!=": "!="}
_CC_CALL = {"/": "_div", "%": "_mod", "<<": "_shl", ">>": "_shr", "min": "min", "max": "max"}


class _NotCompilable(Exception):
    pass


def _cc_expr(e: Expr, args: tuple[str, ...], consts: list[int]) -> str:
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
    key = (e, args)
    seen = _WRITTEN.get(key)
    if seen is None:
        mine: list[int] = []
        try:
            parts = []
            for mono, coef in e._p.items():
                mine.append(coef)
                parts.append("*".join(["{}"] + [_cc_atom(a, args, mine) for a in mono]))
            seen = ("(" + "+".join(parts) + ")", tuple(mine))
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


#: Each expression's source with its numbers as fields, and the numbers, by (expression, the
#: symbols of the source): the lanes' masks of the warps of a block and the accesses under one
#: condition are written again and again (binomialOptions.cu: 120,399 lane expressions written
#: in 1,975 sources, 40,810 of them different, and their terms shared more).
_WRITTEN: dict[tuple, tuple[str | None, tuple]] = {}
_WRITTEN_LIMIT = 50_000


def _cc_atom(a: Atom, args: tuple[str, ...], consts: list[int]) -> str:
    if a.__class__ is Symbol:
        try:
            return f"a{args.index(a.name)}"
        except ValueError:
            raise _NotCompilable(a.name) from None
    if a.__class__ is not Term:  # an Unknown has no value
        raise _NotCompilable(repr(a))
    op = a.op
    if op == "select":  # written in the order of its fields: the value, the condition, the other value
        cond, yes, no = a.args
        then = _cc_expr(yes, args, consts)
        return f"({then} if {_cc_expr(cond, args, consts)} else {_cc_expr(no, args, consts)})"
    xs = [_cc_expr(x, args, consts) for x in a.args]
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


def _compiled_source(exprs: Sequence[Expr | None], names: Sequence[str]) -> Callable[..., tuple]:
    """`compile_values`, worked out: the source written, and compiled unless seen before."""
    args = tuple(names)
    bound = frozenset(names)
    consts: list[int] = []
    items = []
    for e in exprs:
        item = "None"
        # one that reads another symbol is not written up to where it fails (a warp's masks on
        # unknown bounds: Mandelbrot_cuda.cu's 360 plans wrote 97 expressions each)
        if e is not None and e.free_symbols <= bound:
            written = len(consts)
            try:
                item = _cc_expr(e, args, consts)
            except _NotCompilable:
                del consts[written:]
        items.append(item)
    params = ", ".join(f"a{i}" for i in range(len(args)))
    # the numbers are parameters of a maker: the warps of a block and the unrolled copies of
    # a loop differ in them alone (binomialOptions.cu: 2,000 sources, a few dozen shapes)
    if len(consts) > len(_NAMES):  # the names written once (binomialOptions.cu, writing its sources: 1.14 -> 0.83 s)
        _NAMES.extend(f"k{i}" for i in range(len(_NAMES), 2 * len(consts)))
    numbers = ", ".join(_NAMES[: len(consts)])
    values = (", ".join(items) + ("," if len(items) == 1 else "")).format(*_NAMES[: len(consts)])
    source = f"lambda {numbers}: lambda {params}: ({values})"
    maker = _COMPILED.get(source)
    if maker is None:  # (the same kernel under several launches, template instances)
        maker = eval(source, _CC_GLOBALS)  # noqa: S307 - source built from our own expression trees
        if len(_COMPILED) >= 1000:
            _COMPILED.clear()
        _COMPILED[source] = maker
    function: Any = maker(*consts)
    function.compiled = tuple(item != "None" for item in items)
    return function


_NAMES: list[str] = []  # k0, k1, ...


#: Each source's maker, which given the numbers makes the function (`compile_values`).
_COMPILED: dict[str, Callable[..., Callable[..., tuple]]] = {}
_BY_EXPRS: dict[tuple, Callable[..., tuple]] = {}  # by (expressions, names)
