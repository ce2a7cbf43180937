"""The call graph of device code, built only when it can hold a cycle: recursion (WL905).

The analyses inline a `__device__` function at each call site; a call on a cycle cannot be
inlined, so `lower` reports the cycle. networkx is imported only when some function that
is called also calls another (`may_recurse`): kernels calling leaf device functions, the
common case, spare its import, a third of warplint's start-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import nodes as N


def build_call_graph(module: N.Module) -> Any:
    """The call graph of device code (networkx DiGraph); recursion becomes a diagnostic."""
    import networkx as nx

    graph = nx.DiGraph()
    for name, fn in module.functions.items():
        graph.add_node(name)
        for callee in fn.calls:
            graph.add_edge(name, callee)
    for cycle in nx.simple_cycles(graph):
        first = module.functions.get(cycle[0])
        span = first.name_span if first else Span(0, 0)
        module.diagnostics.append(
            Diagnostic(
                Severity.WARNING,
                f"recursion through {' -> '.join([*cycle, cycle[0]])}: calls on the cycle are not inlined",
                "WL905",
                span,
            )
        )
    return graph


def may_recurse(module: N.Module) -> bool:
    """Whether the call graph can hold a cycle: only if a function that is called also calls.
    Kernels calling leaf device functions, the common case, need no graph (and so spare the
    import of networkx, a third of warplint's start-up)."""
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
