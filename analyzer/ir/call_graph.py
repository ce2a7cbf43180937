"""The call graph of device code, built only when it can hold a cycle: recursion (WL905).

The analyses inline a `__device__` function at each call site; a call on a cycle cannot be
inlined, so `lower` reports the cycle. The graph is built only when some function that is
called also calls another (`may_recurse`), and networkx, which names the cycles, is imported
only when the graph has one (`has_cycle`): its import took 50 to 80 ms of a run's start-up
(measured 2026-11-25, `python -X importtime`), and recursion is rare in device code.
"""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import nodes as N


class CallGraph:
    """Function name -> the names it calls (those called but not defined included, as nodes)."""

    __slots__ = ("calls",)

    def __init__(self, calls: dict[str, list[str]]) -> None:
        self.calls = calls

    def has_edge(self, caller: str, callee: str) -> bool:
        return callee in self.calls.get(caller, ())

    def has_cycle(self) -> bool:
        """Whether some function reaches itself through calls (a depth-first search, no recursion)."""
        done: set[str] = set()
        for root in self.calls:
            if root in done:
                continue
            on_path = {root}
            stack = [(root, iter(self.calls[root]))]
            while stack:
                name, callees = stack[-1]
                callee = next(callees, None)
                if callee is None:
                    stack.pop()
                    on_path.discard(name)
                    done.add(name)
                elif callee in on_path:
                    return True
                elif callee not in done:
                    on_path.add(callee)
                    stack.append((callee, iter(self.calls.get(callee, ()))))
        return False


def build_call_graph(module: N.Module) -> CallGraph:
    """The call graph of device code; recursion becomes a diagnostic (one per cycle)."""
    calls: dict[str, list[str]] = {}
    for name, fn in module.functions.items():
        calls.setdefault(name, [])
        for callee in fn.calls:
            calls.setdefault(callee, [])
            if callee not in calls[name]:
                calls[name].append(callee)
    graph = CallGraph(calls)
    if graph.has_cycle():
        module.diagnostics.extend(_recursion(module))
    return graph


def _recursion(module: N.Module) -> list[Diagnostic]:
    """WL905 for each cycle, in the order and from the function networkx's `simple_cycles` names
    them (its graph built in the module's order of functions and calls, as it always was)."""
    import networkx as nx

    graph = nx.DiGraph()
    for name, fn in module.functions.items():
        graph.add_node(name)
        for callee in fn.calls:
            graph.add_edge(name, callee)
    out = []
    for cycle in nx.simple_cycles(graph):
        first = module.functions.get(cycle[0])
        span = first.name_span if first else Span(0, 0)
        out.append(
            Diagnostic(
                Severity.WARNING,
                f"recursion through {' -> '.join([*cycle, cycle[0]])}: calls on the cycle are not inlined",
                "WL905",
                span,
            )
        )
    return out


def may_recurse(module: N.Module) -> bool:
    """Whether the call graph can hold a cycle: only if a function that is called also calls.
    Kernels calling leaf device functions, the common case, need no graph."""
    called = {callee for fn in module.functions.values() for callee in fn.calls}
    return any(fn.calls and name in called for name, fn in module.functions.items())


def device_functions(kernel: N.Function, module: N.Module) -> Iterator[N.Function]:
    """The kernel and the device functions it calls, transitively, each once (depth first)."""
    seen: set[str] = set()
    todo = [kernel]
    while todo:
        fn = todo.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        yield fn
        todo.extend(module.functions[c] for c in fn.calls if c in module.functions)
