"""The call graph's cycles named without networkx where each is a function calling itself
(`call_graph.self_calls`): the same cycles, in the same order, as networkx's `simple_cycles`."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx

from analyzer.ir import nodes as N
from analyzer.ir.call_graph import self_calls
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse


class _Fn:
    """A function of the module as `self_calls` reads it: its calls."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls


def _module(calls: dict[str, list[str]]) -> N.Module:
    module = N.Module.__new__(N.Module)
    module.functions = {name: _Fn(callees) for name, callees in calls.items()}  # type: ignore[assignment]
    return module


def _networkx_cycles(calls: dict[str, list[str]]) -> list[list[str]]:
    graph = nx.DiGraph()
    for name, callees in calls.items():
        graph.add_node(name)
        for callee in callees:
            graph.add_edge(name, callee)
    return list(nx.simple_cycles(graph))


GRAPHS = [
    {"k": ["a"], "a": ["a"]},
    # `b` first met as a callee of `k`, before `a` is: networkx's nodes are in that order
    {"k": ["b", "a"], "a": ["a", "x"], "b": ["b"], "x": []},
    {"a": ["a", "a"], "k": ["a", "undefined"]},
    {"k": ["a", "b"], "a": ["b"], "b": ["c"], "c": ["c"]},
]


def test_self_calls_are_networkx_cycles_in_its_order() -> None:
    for calls in GRAPHS:
        assert self_calls(_module(calls)) == _networkx_cycles(calls), calls


def test_a_cycle_through_two_functions_is_left_to_networkx() -> None:
    for calls in (
        {"k": ["a"], "a": ["b"], "b": ["a"]},
        {"k": ["a"], "a": ["a", "b"], "b": ["a"]},
    ):
        assert self_calls(_module(calls)) is None
        assert _networkx_cycles(calls)  # (there is one for networkx to name)


def test_a_function_calling_itself_is_reported_without_importing_networkx() -> None:
    text = (
        "__device__ int down(int n) { return n > 0 ? down(n - 1) : 0; }\n"
        "__global__ void k(int *p) { p[threadIdx.x] = down(p[threadIdx.x]); }\n"
    )
    module = lower(parse(text).unit, text, "k.cu")
    found = [d.message for d in module.diagnostics if d.code == "WL905"]
    assert found == ["recursion through down -> down: calls on the cycle are not inlined"]
    script = (
        "import sys\n"
        "from analyzer.ir.lower import lower\n"
        "from analyzer.syntax.parse import parse\n"
        f"text = {text!r}\n"
        "m = lower(parse(text).unit, text, 'k.cu')\n"
        "print([d.code for d in m.diagnostics].count('WL905'), 'networkx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "False"]
