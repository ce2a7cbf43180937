"""`analyzer.ir.nodes.walk_nodes`: every node met, in the order of the plain walk it replaced."""

from __future__ import annotations

from pathlib import Path

from analyzer.ir import nodes as N
from tests.test_server_memo import PROGRAM, analysed


def test_walk_nodes_meets_every_node_in_the_order_of_a_plain_walk(tmp_path: Path) -> None:
    """`walk_nodes`, which reads each class's child slots at once, against the walk it replaced."""

    def plain(root: object) -> list[object]:
        out, stack = [], [root]
        while stack:
            x = stack.pop()
            if isinstance(x, (list, tuple)):
                stack.extend(x)
            elif isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, (N.Expr, N.Stmt, N.Access)):
                out.append(x)
                slots = getattr(type(x), "__slots__", ())
                stack.extend(getattr(x, s, None) for s in slots if s not in ("type", "span", "var"))
        return out

    result = analysed(tmp_path / "k.cu", PROGRAM, None)
    kernels = [k.kernel for k in result.report.kernels]
    for fn in kernels:
        walked = list(N.walk_nodes(fn.body))
        assert [id(x) for x in walked] == [id(x) for x in plain(fn.body)]
    names = [type(x).__name__ for x in N.walk_nodes(kernels[1].body)]
    assert names.count("Access") == 2 and names.count("If") == 1 and len(names) == 26
