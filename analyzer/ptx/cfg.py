"""The control-flow graph of one PTX function: basic blocks, edges with their branch
conditions, back edges and natural loops (networkx).

    build_cfg(fn) -> PtxCfg

A block ends at a branch, a `ret`/`exit`, or before a label. An edge carries the
predicate that takes it: `@%p1 bra L` gives the edge to `L` the guard `(%p1, False)` and
the fall-through edge `(%p1, True)` (negated); an unconditional edge has none.
Back edges are the retreating edges of a depth-first search from the entry, so a
reducible graph gets exactly its natural loops; the graph without them (`dag`) is what
the symbolic evaluation walks in topological order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.ptx.nodes import PtxFunction, PtxInstruction, PtxLabel, Sym

__all__ = ["BasicBlock", "EdgeGuard", "Loop", "PtxCfg", "build_cfg"]

BRANCHES = frozenset({"bra", "brx"})
ENDS = frozenset({"ret", "exit", "trap"})


@dataclass(frozen=True, slots=True)
class EdgeGuard:
    """The predicate register that takes an edge, and whether it is negated."""

    register: str
    negated: bool


@dataclass
class BasicBlock:
    index: int
    label: str | None
    instructions: list[PtxInstruction] = field(default_factory=list)


@dataclass
class Loop:
    """A natural loop: its header, the blocks of its body (header included), the sources
    of its back edges (latches) and its depth (1 for an outermost loop)."""

    uid: int
    header: int
    body: frozenset[int]
    latches: tuple[int, ...]
    depth: int = 1


@dataclass
class PtxCfg:
    blocks: list[BasicBlock]
    graph: Any  # networkx.DiGraph over block indices; edge attribute "guard": EdgeGuard | None
    dag: Any  # graph without back edges
    back_edges: frozenset[tuple[int, int]]
    loops: list[Loop]  # outermost first
    order: list[int]  # topological order of `dag` (blocks reachable from the entry)
    idom: dict[int, int]  # immediate dominators in `dag`
    ipdom: dict[int, Any]  # immediate post-dominators in `dag` ("exit" for the virtual exit)

    def loops_of(self, block: int) -> tuple[Loop, ...]:
        """The loops containing `block`, outermost first."""
        return tuple(lp for lp in self.loops if block in lp.body)

    def dominates(self, a: int, b: int) -> bool:
        while True:
            if a == b:
                return True
            nxt = self.idom.get(b)
            if nxt is None or nxt == b:
                return False
            b = nxt

    def post_dominates(self, a: int, b: int) -> bool:
        """True when every path from `b` to the exit passes through `a`."""
        seen = set()
        while b not in seen:
            if a == b:
                return True
            seen.add(b)
            nxt = self.ipdom.get(b)
            if nxt is None or nxt == "exit":
                return False
            b = nxt
        return False


def _split_blocks(fn: PtxFunction) -> list[BasicBlock]:
    blocks: list[BasicBlock] = [BasicBlock(0, None)]
    for stmt in fn.body:
        current = blocks[-1]
        if isinstance(stmt, PtxLabel):
            if current.instructions or current.label is not None:
                blocks.append(BasicBlock(len(blocks), stmt.name))
            else:
                current.label = stmt.name
            continue
        current.instructions.append(stmt)
        if stmt.opcode in BRANCHES or stmt.opcode in ENDS:
            blocks.append(BasicBlock(len(blocks), None))
    if not blocks[-1].instructions and blocks[-1].label is None and len(blocks) > 1:
        blocks.pop()
    return blocks


def _targets(ins: PtxInstruction, brx_targets: dict[str, tuple[str, ...]]) -> list[str]:
    if ins.opcode == "bra":
        return [op.name for op in ins.operands if isinstance(op, Sym)][:1]
    names = [op.name for op in ins.operands if isinstance(op, Sym)]
    out: list[str] = []
    for n in names:
        out.extend(brx_targets.get(n, ()))
    return out


def build_cfg(fn: PtxFunction) -> PtxCfg:
    import networkx as nx

    blocks = _split_blocks(fn)
    labels = {b.label: b.index for b in blocks if b.label is not None}
    brx = dict(fn.branch_targets)
    g = nx.DiGraph()
    g.add_nodes_from(range(len(blocks)))

    def edge(a: int, b: int, guard: EdgeGuard | None) -> None:
        if g.has_edge(a, b):  # both ways lead there: no condition
            g[a][b]["guard"] = None
        else:
            g.add_edge(a, b, guard=guard)

    for b in blocks:
        last = b.instructions[-1] if b.instructions else None
        nxt = b.index + 1 if b.index + 1 < len(blocks) else None
        if last is None or (last.opcode not in BRANCHES and last.opcode not in ENDS):
            if nxt is not None:
                edge(b.index, nxt, None)
            continue
        pred = last.predicate
        if last.opcode in ENDS:
            if pred is not None and nxt is not None:
                edge(b.index, nxt, EdgeGuard(pred[0].name, not pred[1]))
            continue
        targets = [labels[t] for t in _targets(last, brx) if t in labels]
        guard = EdgeGuard(pred[0].name, pred[1]) if pred is not None and last.opcode == "bra" else None
        for t in targets:
            edge(b.index, t, guard)
        if pred is not None and nxt is not None:
            edge(b.index, nxt, EdgeGuard(pred[0].name, not pred[1]))
    return _analyse(blocks, g)


def _analyse(blocks: list[BasicBlock], g: Any) -> PtxCfg:
    import networkx as nx

    back = _retreating_edges(g) if blocks else set()
    dag = g.copy()
    dag.remove_edges_from(back)
    reachable = nx.descendants(dag, 0) | {0} if blocks else set()
    order = [n for n in nx.topological_sort(dag) if n in reachable]
    idom = nx.immediate_dominators(dag, 0) if blocks else {}
    rev = dag.subgraph(reachable).reverse(copy=True)
    rev.add_node("exit")
    for n in reachable:
        if dag.out_degree(n) == 0:
            rev.add_edge("exit", n)
    ipdom = nx.immediate_dominators(rev, "exit") if reachable else {}
    loops: list[Loop] = []
    by_header: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for u, h in sorted(back):
        body = {h}
        stack = [u]
        while stack:
            x = stack.pop()
            if x in body:
                continue
            body.add(x)
            stack.extend(p for p in g.predecessors(x) if p not in body)
        by_header.setdefault(h, set()).update(body)
        latches.setdefault(h, []).append(u)
    for i, h in enumerate(sorted(by_header, key=lambda h: (-len(by_header[h]), h))):
        loops.append(Loop(i + 1, h, frozenset(by_header[h]), tuple(latches[h])))
    for lp in loops:
        lp.depth = sum(1 for other in loops if lp.header in other.body)
    loops.sort(key=lambda lp: (lp.depth, lp.header))
    return PtxCfg(blocks, g, dag, frozenset(back), loops, order, idom, ipdom)


def _retreating_edges(g: Any) -> set[tuple[int, int]]:
    """Edges to a block still on the depth-first search stack (iterative, from block 0)."""
    back: set[tuple[int, int]] = set()
    on_stack: set[int] = {0}
    seen: set[int] = {0}
    stack = [(0, iter(sorted(g.successors(0))))]
    while stack:
        node, succs = stack[-1]
        nxt = next(succs, None)
        if nxt is None:
            stack.pop()
            on_stack.discard(node)
            continue
        if nxt in on_stack:
            back.add((node, nxt))
        elif nxt not in seen:
            seen.add(nxt)
            on_stack.add(nxt)
            stack.append((nxt, iter(sorted(g.successors(nxt)))))
    return back
