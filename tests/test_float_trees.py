"""A float operation whose operands are only float operations, float casts, float constants
and variables held has them evaluated in effect without walking them (`float_trees`): the
same report byte for byte, the same steps per kernel, the same unknowns counted as made and
the same uid for the next, and a budget cut where it was cut. A program written for the test."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import float_trees, interpret
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic.expressions import unknowns_made
from analyzer.analysis.symbolic.renaming import next_unknown_uid
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from walk_checks import budget_cut_alike, checked, forget_interpreter_tables

PROGRAM = """\
__global__ void f(float *y, const float *x, float a, float b, int n) {
    float c = a * b + a * 2.0f;
    float d = (c - a) / (b + 1.0f) * c;
    y[threadIdx.x] = d + x[threadIdx.x];
    y[threadIdx.x + 1] = d * (float)threadIdx.x + (float)n;
    for (int k = 0; k < 4; k++)
        y[threadIdx.x * 4 + k] = c * d - (a + b) * c;
    y[threadIdx.x + 2] = x[threadIdx.x + 2];
    y[threadIdx.x + 3] = expf(c * 0.5f) + 2 * c + 5000 * d;
    y[threadIdx.x + 4] = x[threadIdx.x + 2];
}
"""
LAUNCH = ("--block", "128")


def forget(monkeypatch=None) -> None:
    """The interpreter's tables emptied (and, with `monkeypatch`, no operands skipped)."""
    forget_interpreter_tables()
    float_trees._TREES.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(interpret, "skipped_operands", lambda interpreter, e, env: False)


def _run(tmp_path, monkeypatch, name: str) -> tuple[str, list[int], int, int, int]:
    """Report, steps per kernel, unknowns made, uids given and operations skipped by a check."""
    made, uid, skipped = unknowns_made(), next_unknown_uid(), float_trees.times_skipped()
    report, steps = checked(tmp_path, monkeypatch, name, *LAUNCH, "k.cu")
    return (
        report,
        steps,
        unknowns_made() - made,
        next_unknown_uid() - uid,
        float_trees.times_skipped() - skipped,
    )


def test_skipped_operands_give_the_report_steps_and_unknowns_of_walking_them(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    _run(tmp_path, monkeypatch, "warm.json")
    forget()
    fast = _run(tmp_path, monkeypatch, "fast.json")
    forget(monkeypatch)
    plain = _run(tmp_path, monkeypatch, "plain.json")
    assert fast[:4] == plain[:4]
    assert '"accesses"' in fast[0] and fast[1] and fast[2] > 0
    # lines 2, 3, the loop's and the call's: not the one reading a load, nor the one casting
    # threadIdx.x; the call ends the run of loads (the last load is not a reuse of the one before)
    assert (fast[4], plain[4]) == (4, 0)


@pytest.mark.parametrize("analysis", [40, 60, 90, 150])
def test_a_small_budget_runs_out_where_walking_the_operands_ran_out(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, LAUNCH, forget)
    assert fast == plain


def _formula() -> tuple[N.Binary, dict]:
    """``(a * b) + (a * 2.0f)`` of floats, and an environment holding `a` and `b`."""
    a = N.Variable("a", T.FLOAT, "local", None, uid=1)  # type: ignore[arg-type]
    b = N.Variable("b", T.FLOAT, "local", None, uid=2)  # type: ignore[arg-type]
    ra, rb = N.VarRef(a, T.FLOAT, None), N.VarRef(b, T.FLOAT, None)  # type: ignore[arg-type]
    two = N.Const(2.0, T.FLOAT, None)  # type: ignore[arg-type]
    left = N.Binary("*", ra, rb, T.FLOAT, None)  # type: ignore[arg-type]
    right = N.Binary("*", ra, two, T.FLOAT, None)  # type: ignore[arg-type]
    env = {1: S.unknown("a", S.Origin.PARAMETER), 2: S.unknown("b", S.Origin.PARAMETER)}
    return N.Binary("+", left, right, T.FLOAT, None), env  # type: ignore[arg-type]


def test_a_tree_spends_a_step_an_expression_and_an_unknown():
    e, env = _formula()
    # a*b, a, b, a*2.0f, a, 2.0f evaluated; a*b, a*2.0f and 2.0f made unknowns
    assert float_trees.float_tree(e) == (6, 3, (1, 2), (), 0)
    made, uid = unknowns_made(), next_unknown_uid()
    with budget.metered(budget.Meter("analysis", 100, left=8)) as meter:
        assert not float_trees.skipped_operands(_NO_CALLS, e, env)  # walked instead: it runs out on the way
        assert meter is not None and meter.left == 8
    assert (unknowns_made(), next_unknown_uid()) == (made, uid)
    with budget.metered(budget.Meter("analysis", 100, left=9)) as meter:
        assert float_trees.skipped_operands(_NO_CALLS, e, env)
        assert meter is not None and meter.left == 0
    assert (unknowns_made(), next_unknown_uid()) == (made + 3, uid + 3)
    assert not float_trees.skipped_operands(_NO_CALLS, e, {1: env[1]})  # `b` not held


def test_a_tree_with_a_load_is_walked():
    e, _ = _formula()
    e.right.right = N.Load(None, T.FLOAT, None)  # type: ignore[attr-defined,arg-type,call-arg]
    float_trees._TREES.clear()
    assert float_trees.float_tree(e) is None


def _call(callee: str, operand: N.Expr) -> N.Opaque:
    return N.Opaque(N.OpaqueKind.CALL, f"call to {callee}", T.FLOAT, None, (operand,), callee)  # type: ignore[arg-type]


def test_a_call_in_a_tree_ends_the_runs_of_accesses_and_forgets_what_is_held():
    e, env = _formula()
    e.right = _call("expf", e.right)
    float_trees._TREES.clear()
    assert float_trees.float_tree(e) == (7, 4, (1, 2), (), 1)
    interpreter = _Interpreter()
    assert float_trees.skipped_operands(interpreter, e, env)
    assert (interpreter.held, interpreter.breaks) == ({}, 1)
    e.right = _call("__builtin_assume", e.right.operands[0])  # stated, not a value: walked
    float_trees._TREES.clear()
    assert float_trees.float_tree(e) is None


class _Interpreter:
    """What `skipped_operands` touches of an interpreter."""

    def __init__(self) -> None:
        self.held: dict = {"x": 1}
        self.breaks = 0

    def break_windows(self) -> None:
        self.breaks += 1


_NO_CALLS = _Interpreter()
