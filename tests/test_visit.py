"""The IR visitor (`analyzer.ir.visit`): every pass over IR nodes handles every node class, or
says it never meets it, and a node class it does not handle raises instead of falling into a
default."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from analyzer.analysis import symbolic as S
from analyzer.analysis.interpret import Ctx, Interpreter
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.diagnostics import Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.visit import NODE_CLASSES, UnhandledNode, Visitor

PACKAGE = Path(__file__).resolve().parents[1] / "analyzer"
SPAN = Span(0, 1)


def concrete_node_classes() -> set[type]:
    """Every class of `analyzer.ir.nodes` that is an `Expr` or a `Stmt` (the bases excluded)."""
    return {
        cls
        for _, cls in inspect.getmembers(N, inspect.isclass)
        if issubclass(cls, (N.Expr, N.Stmt)) and cls not in (N.Expr, N.Stmt)
    }


def modules_with_visitors() -> list[str]:
    """The modules of `analyzer/` that define a class deriving from `Visitor` (read with `ast`,
    so that a new visitor is held to the test without being listed here)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "Visitor" for b in node.bases)
            for node in ast.walk(tree)
        ):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.append(".".join(parts))
    return found


def all_visitors() -> list[type]:
    for module in modules_with_visitors():
        importlib.import_module(module)
    out, stack = [], list(Visitor.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("analyzer."):
            out.append(cls)
        stack.extend(cls.__subclasses__())
    return sorted(out, key=lambda c: (c.__module__, c.__name__))


def test_the_visitor_knows_every_concrete_node_class_of_the_ir():
    assert set(NODE_CLASSES.values()) == concrete_node_classes()


def test_the_passes_over_the_ir_are_visitors():
    names = {f"{c.__module__}.{c.__name__}" for c in all_visitors()}
    assert {
        "analyzer.analysis.interpret.Interpreter",
        "analyzer.sim.warp.BlockInterpreter",
        "analyzer.analysis.host.HostInterpreter",
    } <= names


@pytest.mark.parametrize("visitor", all_visitors(), ids=lambda c: c.__name__)
def test_every_visitor_handles_every_node_class_or_says_it_never_meets_it(visitor):
    missing = concrete_node_classes() - set(visitor.visits) - visitor.unvisited
    assert not missing, (
        f"{visitor.__name__} has no visit_ method for {sorted(c.__name__ for c in missing)}: "
        "add one, or list the class in its `unvisited`"
    )


class Mystery(N.Expr):
    """A node class lowering might add one day, which no visitor knows."""

    type = T.INT
    span = SPAN


def test_an_unknown_node_raises_instead_of_falling_into_a_default():
    interp = Interpreter(
        N.Module("k.cu", {}, [], [], [], []),
        LaunchConfig((32, 1, 1), (1, 1, 1), "test", False, ()),
        {},
        get_arch("sm_90"),
    )
    with pytest.raises(UnhandledNode, match="Interpreter has no visit_Mystery"):
        interp.eval(Mystery(), {}, Ctx(S.const(1), (), None, True))


def test_visit_calls_the_method_named_after_the_node_class_with_its_arguments():
    class Constants(Visitor):
        def visit_Const(self, e: N.Const, scale: int) -> int:
            return e.value * scale

    assert Constants().visit(N.Const(7, T.INT, SPAN), 3) == 21
    with pytest.raises(UnhandledNode):
        Constants().visit(N.Break(SPAN))


def test_a_method_that_names_no_node_class_fails_when_the_visitor_is_made():
    with pytest.raises(TypeError, match="visit_Bianry names no IR node class"):

        class Typo(Visitor):
            def visit_Bianry(self, e: N.Binary) -> None: ...


def test_a_class_cannot_be_both_visited_and_unvisited():
    with pytest.raises(TypeError, match="both visits and lists as unvisited"):

        class Both(Visitor):
            unvisited = frozenset({N.Const})

            def visit_Const(self, e: N.Const) -> None: ...
