"""Float arithmetic evaluated without walking it (`Interpreter.visit_Binary`).

The interpreter gives every float result a fresh unknown (`Interpreter.binary`, `visit_Cast`,
`visit_Const`, and a call it does not follow, `visit_Opaque`): ``a * b + expf(c)`` of floats
makes an unknown for the product, the call and the sum, and only the last is kept. Where both
operands of a float operation are made only of float operations, float casts, constants, calls
not followed and variables the environment holds, nothing their evaluation does is seen but
the budget steps it spends (one an expression evaluated, one an unknown made, one an integer
constant first made), the unknowns it counts as made, the uids it passes over, and for each
call the values held forgotten and the runs of accesses ended: those are done here at once,
and the operation's own unknown made as before. myocyte/main.cu's kernels are long float
formulas: 23,171 float operations, 5,396 of them with operands so skipped (its check under
callgrind, 2026-11-29: 7.61 G -> 7.27 G instructions).
"""

from __future__ import annotations

import collections
import itertools
from typing import Protocol

from analyzer.analysis import symbolic as S
from analyzer.analysis.memo import per_node
from analyzer.analysis.symbolic.expressions import Unknown, set_unknowns_made, unknowns_made
from analyzer.budget import current_meter
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.nodes import OpaqueKind


class Breaks(Protocol):
    """What `skipped_operands` does to the interpreter for a call it does not follow."""

    held: dict

    def break_windows(self) -> None: ...


__all__ = ["FloatTree", "float_tree", "skipped_operands", "times_skipped"]

#: What evaluating a float operation's operands takes: the expressions evaluated, the unknowns
#: made, the variables read (by uid), the integer constants met (in the order evaluated, each
#: `S.const`, which spends a step where it makes one) and the calls not followed (`Opaque`,
#: each ending the runs of accesses nvcc may merge: `Interpreter.break_windows`)
FloatTree = tuple[int, int, tuple[int, ...], tuple[int, ...], int]

#: `float_tree`'s answers, by the operation's id (kept with it, so that the id stays its)
_TREES: dict[int, tuple[N.Binary, FloatTree | None]] = {}

#: How many operations had their operands skipped (read by tests)
_SKIPPED = [0]


def times_skipped() -> int:
    """How many float operations `skipped_operands` answered for, in this process."""
    return _SKIPPED[0]


def _is_float(t: T.CType) -> bool:
    return isinstance(t, T.ScalarType) and t.is_float


def float_tree(e: N.Binary) -> FloatTree | None:
    """What evaluating both operands of `e` takes, where each expression below `e` is a float
    `Binary` or `Cast` (an unknown made, whatever its operands), a float constant (an unknown)
    or a variable (nothing made, where the environment holds it): None where another is met.
    Worked out without recursion (a formula may nest thousands deep), once per expression."""
    return per_node(_TREES, e, _worked_out)


def _worked_out(e: N.Binary) -> FloatTree | None:
    nodes = made = calls = 0
    uids: list[int] = []
    numbers: list[int] = []
    todo: list[N.Expr] = [e.right, e.left]  # popped in the order evaluated: left first
    while todo:
        node = todo.pop()
        nodes += 1
        cls = node.__class__
        if cls is N.VarRef:
            uids.append(node.var.uid)  # type: ignore[attr-defined]
        elif cls is N.Const:
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, float) or _is_float(node.type):
                made += 1
            else:
                numbers.append(int(value))
        elif cls is N.Binary and _is_float(node.type):
            made += 1
            todo.append(node.right)  # type: ignore[attr-defined]
            todo.append(node.left)  # type: ignore[attr-defined]
        elif cls is N.Cast and _is_float(node.type):
            made += 1
            todo.append(node.operand)  # type: ignore[attr-defined]
        elif cls is N.Opaque and _not_followed(node):  # type: ignore[arg-type]
            made += 1
            calls += 1
            todo.extend(reversed(node.operands))  # type: ignore[attr-defined]
        else:
            return None
    return nodes, made, tuple(dict.fromkeys(uids)), tuple(numbers), calls


def _not_followed(e: N.Opaque) -> bool:
    """Whether `Interpreter.visit_Opaque` gives `e` a fresh unknown, having ended the runs of
    accesses and forgotten the values held: anything but an assumption (which it states)."""
    spec = builtins.lookup(e.callee) if e.kind is OpaqueKind.CALL and e.callee else None
    return spec is None or spec.kind is not BuiltinKind.ASSUME


def skipped_operands(interpreter: Breaks, e: N.Binary, env: dict) -> bool:
    """Whether the operands of the float operation `e` were evaluated here in effect, without
    walking them: their steps spent, their constants made, their unknowns counted as made and
    their uids passed over, and each call's runs of accesses ended (the caller makes `e`'s own
    unknown). False, with nothing done, where one is not such a tree (`float_tree`), a
    variable it reads is not a symbolic value in `env` (the interpreter would make or find
    something else), or the budget could run out on the way (then it runs out where and as it
    did, walking them)."""
    tree = float_tree(e)
    if tree is None:
        return False
    nodes, made, uids, numbers, calls = tree
    for uid in uids:
        if not isinstance(env.get(uid), S.Expr):
            return False
    meter = current_meter()
    if meter is not None:
        if meter.left < nodes + made + len(numbers):  # (a constant spends a step at most)
            return False
        meter.left -= nodes + made
    for number in numbers:
        S.const(number)
    if calls:
        interpreter.held.clear()  # a call warplint does not follow (`visit_Opaque`)
        for _ in range(calls):
            interpreter.break_windows()
    if made:
        set_unknowns_made(unknowns_made() + made)
        collections.deque(itertools.islice(Unknown._ids, made), maxlen=0)  # uids passed over
    _SKIPPED[0] += 1
    return True
