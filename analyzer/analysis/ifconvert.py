"""Branch loads nvcc may merge into one load: its if-conversion, read from the IR.

`if (c) v = A[i] - x; else v = B[j] - x;` (also an else-if chain) is compiled by NVVM into
`v = *(c ? &A[i] : &B[j]) - x`: one load, made by every lane that reaches the join, each lane at
its own branch's address (research/merge/RULES.md, rule I; Rodinia srad_v2 line 122 measures 2
wavefronts where the branch loads as written cost 1). It happens when every branch ends by
assigning the variable a load, alone or under the same operation with the same other operand,
of elements of one size. Whether nvcc does it also depends on things the source does not show
(srad's chain is merged only in part), so warplint does not cost the merged load: the loads
that match are marked (`Occurrence.if_converted`), not exact, and no finding rests on them.
"""

from __future__ import annotations

from analyzer.ir import nodes as N

__all__ = ["if_converted_loads"]

#: A load at the end of a branch and the shape of the value it gives the variable: () for the
#: load itself, else (operator, side of the load, the other operand).
EndLoad = tuple[N.Access, tuple]


def if_converted_loads(s: N.If) -> dict[int, list[N.Access]]:
    """The loads of each variable (by uid) that every branch of `s` ends by assigning, in the
    same shape, with elements of one size: those nvcc may merge into one load."""
    return {uid: [access for access, _ in ends] for uid, ends in _joined_ends(s).items()}


def _joined_ends(s: N.If) -> dict[int, list[EndLoad]]:
    then, otherwise = _branch_ends(s.then), _branch_ends(s.otherwise)
    joined: dict[int, list[EndLoad]] = {}
    for uid in then.keys() & otherwise.keys():
        ends = then[uid] + otherwise[uid]
        shapes = {shape for _, shape in ends}
        sizes = {access.element.size for access, _ in ends}
        spaces = {access.space for access, _ in ends}
        if len(shapes) == 1 and len(sizes) == 1 and len(spaces) == 1:
            joined[uid] = ends
    return joined


def _branch_ends(stmts: list[N.Stmt]) -> dict[int, list[EndLoad]]:
    """The variables a branch ends by assigning a load: its last assignment of each, after
    which only assignments, stores and expressions follow (an else-if chain's trailing `if`
    counts where all its branches do)."""
    ends: dict[int, list[EndLoad]] = {}
    seen: set[int] = set()
    for i in range(len(stmts) - 1, -1, -1):
        st = stmts[i]
        if isinstance(st, N.If) and i == len(stmts) - 1 and st.otherwise:
            for uid, inner in _joined_ends(st).items():
                ends[uid] = inner
                seen.add(uid)
            continue
        if isinstance(st, N.Assign) and not st.field:
            if st.var.uid not in seen:
                end = _end_load(st.value)
                if end is not None:
                    ends[st.var.uid] = [end]
            seen.add(st.var.uid)
            continue
        if not isinstance(st, (N.Store, N.Eval)):
            break  # a loop, a nested branch, a return: what the variable holds at the join is not this
    return ends


def _end_load(value: N.Expr) -> EndLoad | None:
    if isinstance(value, N.Load):
        return value.access, ()
    if isinstance(value, N.Binary):
        for side, load, other in (("left", value.left, value.right), ("right", value.right, value.left)):
            key = _operand_key(other)
            if isinstance(load, N.Load) and key is not None:
                return load.access, (value.op, side, key)
    return None


def _operand_key(e: N.Expr) -> tuple | None:
    """What identifies the other operand of the operation: a variable or a constant."""
    if isinstance(e, N.VarRef):
        return ("var", e.var.uid)
    if isinstance(e, N.Const):
        return ("const", e.value)
    return None
