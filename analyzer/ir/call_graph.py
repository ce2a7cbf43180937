"""The call graph of device code, built only when it can hold a cycle: recursion (WL905).

The analyses inline a `__device__` function at each call site; a call on a cycle cannot be
inlined, so `lower` reports the cycle. The graph is built only when some function that is
called also calls another (`may_recurse`), and networkx, which names the cycles, is imported
only when the graph has a cycle through two functions or more (`has_cycle`, `self_calls`):
its import took 50 to 80 ms of a run's start-up (measured 2026-11-25, `python -X importtime`),
and recursion is rare in device code, mostly a function calling itself.
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
    them (its graph built in the module's order of functions and calls, as it always was); where
    every cycle is a function calling itself, without networkx (`self_calls`)."""
    out = []
    for cycle in _cycles(module):
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


def _cycles(module: N.Module) -> list[list[str]]:
    """The cycles of the call graph as networkx's `simple_cycles` gives them."""
    mine = self_calls(module)
    if mine is not None:
        return mine
    import networkx as nx

    graph = nx.DiGraph()
    for name, fn in module.functions.items():
        graph.add_node(name)
        for callee in fn.calls:
            graph.add_edge(name, callee)
    return list(nx.simple_cycles(graph))


def self_calls(module: N.Module) -> list[list[str]] | None:
    """The cycles of the call graph where each is one function calling itself, as networkx's
    `simple_cycles` gives them: the self-loops first, `[name]` in the order its graph holds the
    nodes (each name where it first appears, as a function or as a callee of one), and no
    other cycle; None where the graph without its self-loops still has a cycle (networkx
    names those). Why: importing networkx took 0.18 s of CPU (cuda-samples interval.cu, whose
    `newton_interval_rec` calls itself: its check under callgrind, 2026-11-29, 5.28 G -> 4.89 G instructions)."""
    order: dict[str, None] = {}
    calls: dict[str, list[str]] = {}
    for name, fn in module.functions.items():
        order.setdefault(name)
        calls.setdefault(name, [])
        for callee in fn.calls:
            order.setdefault(callee)
            calls.setdefault(callee, [])
            if callee != name and callee not in calls[name]:
                calls[name].append(callee)
    if CallGraph(calls).has_cycle():
        return None
    return [[name] for name in order if name in module.functions and name in module.functions[name].calls]


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
