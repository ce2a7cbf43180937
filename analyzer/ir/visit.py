"""The one way to dispatch over IR nodes: a `Visitor` calls its `visit_<NodeClass>` method.

A pass over the IR (the symbolic interpreter, the simulator, the host-code interpreter of
launch configurations) subclasses `Visitor` and writes one method per node class it handles,
named after the class: `visit_Binary(self, node, ...)`. When the subclass is created, the
methods are collected into `visits`, a table from node class to function, once per class; a
name that is no IR node class (`visit_Bianry`) fails there. `visit(node, ...)` looks the node's
class up in the table, and a class with no method raises `UnhandledNode`: a node kind added to
`ir/nodes.py` can never fall silently into some default of a pass that does not know it.

A pass that can never meet some node classes (an expression-only walk and the statements)
lists them in `unvisited`; `tests/test_visit.py` holds every visitor to handle every concrete
node class of `ir/nodes.py` or to list it there.

Speed: the interpreter visits every node of a kernel, so the lookup is one subscript of the
class's table (its `__missing__` raises), and hot passes call the table directly with their
own arguments, `self.visits[e.__class__](self, e, env, ctx)`, as fast as the `isinstance`
chains and per-module dicts this replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from analyzer.ir import nodes as N

__all__ = ["NODE_CLASSES", "UnhandledNode", "Visitor"]


def _node_classes() -> dict[str, type]:
    """The concrete IR node classes, by name: every subclass of `Expr` or `Stmt` in `nodes`."""
    return {
        name: cls
        for name, cls in vars(N).items()
        if isinstance(cls, type) and issubclass(cls, (N.Expr, N.Stmt)) and cls not in (N.Expr, N.Stmt)
    }


#: Every concrete IR node class, by name.
NODE_CLASSES: dict[str, type] = _node_classes()

VISIT_PREFIX = "visit_"


class UnhandledNode(Exception):
    """A visitor met a node of a class it has no `visit_<NodeClass>` method for (a bug of the
    visitor, never of the input: no `except TypeError` of a pass may swallow it)."""

    def __init__(self, visitor: type, node_class: type) -> None:
        super().__init__(
            f"{visitor.__name__} has no {VISIT_PREFIX}{node_class.__name__}: it does not handle "
            f"the IR node class {node_class.__name__}"
        )
        self.visitor = visitor
        self.node_class = node_class


class Dispatch(dict):
    """A visitor class's table, node class -> function; a class missing from it raises."""

    def __init__(self, visitor: type, methods: dict[type, Callable[..., Any]]) -> None:
        super().__init__(methods)
        self.visitor = visitor

    def __missing__(self, node_class: type) -> Callable[..., Any]:
        raise UnhandledNode(self.visitor, node_class)


class Visitor:
    """Base of the passes over IR nodes (see the module docstring)."""

    #: node class -> this class's `visit_<NodeClass>` function, built when the class is made.
    visits: ClassVar[Dispatch]
    #: the node classes this pass never meets, stated (it raises `UnhandledNode` if it does).
    unvisited: ClassVar[frozenset[type]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        methods: dict[type, Callable[..., Any]] = {}
        for attribute in dir(cls):
            if not attribute.startswith(VISIT_PREFIX):
                continue
            name = attribute[len(VISIT_PREFIX) :]
            node_class = NODE_CLASSES.get(name)
            if node_class is None:
                raise TypeError(f"{cls.__name__}.{attribute} names no IR node class (analyzer/ir/nodes.py)")
            methods[node_class] = getattr(cls, attribute)
        overlap = cls.unvisited & methods.keys()
        if overlap:
            raise TypeError(f"{cls.__name__} both visits and lists as unvisited {sorted(c.__name__ for c in overlap)}")
        cls.visits = Dispatch(cls, methods)

    def visit(self, node: Any, *args: Any) -> Any:
        """This visitor's `visit_<NodeClass>(node, *args)`; `UnhandledNode` when it has none."""
        return self.visits[node.__class__](self, node, *args)
