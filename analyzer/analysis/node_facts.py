"""What the interpreter asks of an IR node alone, worked out once per node.

The interpreter reaches the same statements and expressions many times (the body of an
unrolled loop once per trip, an inlined function once per call), and asks each time about
what depends on the node alone: these answers are remembered by the node's id
(`memo.per_node`). None spends budget steps.
"""

from __future__ import annotations

from analyzer.analysis.ifconvert import if_converted_loads
from analyzer.analysis.indexing import struct_of_address
from analyzer.analysis.memo import per_node
from analyzer.ir import nodes as N
from analyzer.ir import types as T

__all__ = ["REEVALUATED_DEPTH", "deeply_nested", "if_converted", "struct_of"]

#: A load's address is evaluated a second time for its value where it holds loads nested at
#: most this deep (what the reports have always shown: the inner loads again, as reuses); an
#: address with deeper nested loads is evaluated once, so that `p[q[q[...]]]` takes linear time
REEVALUATED_DEPTH = 2


#: `if_converted`'s answers, by the branch's id (kept with them, so that the id stays its):
#: interval.cu reached its branches 10,610 times in inlined calls (0.26 s of 14 profiled).
_CONVERTED: dict[int, tuple[N.If, list[tuple[list[N.Access], set[int]]]]] = {}


def if_converted(s: N.If) -> list[tuple[list[N.Access], set[int]]]:
    """The loads of `s` nvcc may merge into one (`ifconvert.if_converted_loads`), each group
    with its accesses' uids."""
    return per_node(_CONVERTED, s, lambda s: [(a, {x.uid for x in a}) for a in if_converted_loads(s).values()])


#: `struct_of`'s answers, by the access's id (kept with them, so that the id stays its): the
#: accesses in unrolled loops are reached once per trip (tf32TensorCoreGemm.cu: 18,662 records
#: of 64 accesses, each a walk of the address's offsets).
_STRUCTS: dict[int, tuple[N.Access, T.StructType | None]] = {}


def struct_of(access: N.Access) -> T.StructType | None:
    """The struct whose field (or whole element) `access` reaches (`struct_of_address`)."""
    return per_node(_STRUCTS, access, lambda access: struct_of_address(access.address))


#: `deeply_nested`'s answers, by the load's id (the load kept with it, so that the id stays its):
#: tf32TensorCoreGemm.cu asked 12,419 times about its loads in unrolled loops (0.3 s of 4.1 s).
_DEEP: dict[int, tuple[N.Load, bool]] = {}


def deeply_nested(load: N.Load) -> bool:
    """Whether the address of `load` holds loads nested more than `REEVALUATED_DEPTH` deep."""
    return per_node(_DEEP, load, lambda load: _loads_nested(load.access.address, REEVALUATED_DEPTH))


def _loads_nested(e: N.Expr, depth: int) -> bool:
    """Whether `e` holds loads nested more than `depth` deep (`q[q[q[i]]]` holds 3)."""
    stack: list[tuple[N.Expr, int]] = [(e, 0)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, N.Load):
            d += 1
            if d > depth:
                return True
            stack.append((x.access.address, d))
        stack.extend((sub, d) for sub in N.sub_expressions(x))
    return False
