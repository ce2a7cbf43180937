"""What several costs of one kernel make together: call sites, wide struct loads, reused values.

An access in a device function is costed once per call site (`merge_costs` keeps one entry per
access); nvcc loads several fields of one naturally aligned struct element in one statement
with one wide load (`merge_struct_fields`); and a load whose value the thread already holds
makes no request (`mark_reused`). The simulator applies the same two rules to what it
measures, so that both count the requests nvcc makes.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.analysis.assumptions import (
    FieldsLoadedTogether,
    MovedByWideLoad,
    ValueReused,
)
from analyzer.analysis.cost import global_cost
from analyzer.analysis.indexing import element_field, expression_key
from analyzer.analysis.results import AccessCost
from analyzer.arch import Architecture
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import AccessOp, Space

__all__ = ["WIDE_LOAD_BYTES", "mark_reused", "merge_costs", "merge_struct_fields"]

#: The struct sizes nvcc moves several fields of with one load (LDG.64, LDG.128).
WIDE_LOAD_BYTES = (8, 16)


def merge_costs(costs: list[AccessCost]) -> list[AccessCost]:
    """One entry per access site: occurrences from several call sites are combined."""
    by_uid: dict[int, AccessCost] = {}
    order: list[int] = []
    for c in costs:
        prev = by_uid.get(c.access.uid)
        if prev is None:
            by_uid[c.access.uid] = c
            order.append(c.access.uid)
            continue
        if c.per_request is not None and (prev.per_request is None or c.per_request > prev.per_request):
            keep, other = c, prev
        else:
            keep, other = prev, c
        keep.exact = keep.exact and other.exact
        if other.reuses is None:  # reached once without the value at hand: a real request
            keep.reuses = None
        if keep.requests is not None and other.requests is not None:
            keep.requests += other.requests
            keep.total = (keep.total or 0) + (other.total or 0)
        else:
            keep.requests = keep.total = None
        for a in other.assumptions:
            if a not in keep.assumptions:
                keep.assumptions.append(a)
        by_uid[c.access.uid] = keep
    return [by_uid[u] for u in order]


def merge_struct_fields(costs: Sequence[AccessCost], arch: Architecture | None = None) -> None:
    """Loads of several fields of one naturally aligned struct element in one statement are
    one wide load (what nvcc emits): charge the first as the whole element, mark the others.
    Fields are grouped by the element they read (`indexing.element_field`), read from the IR.
    `arch`: where it charges transactions (a seed generation), the wide load is charged again."""
    groups: dict[tuple, list[AccessCost]] = {}
    for c in costs:
        st = c.struct_type
        if st is None or c.op != AccessOp.LOAD or c.space != Space.GLOBAL or not T.is_natural_access(st):
            continue
        if st.size not in WIDE_LOAD_BYTES or c.access.element is st or not c.field_path:
            continue
        found = element_field(c.access.address)
        assert found is not None  # a field path comes from one
        key = (c.access.array, expression_key(found.element), c.access.statement)
        groups.setdefault(key, []).append(c)
    for group in groups.values():
        fields = {c.field_path[-1] for c in group}
        if len(fields) >= 2:
            _one_wide_load(group, tuple(sorted(fields)), arch)


def _one_wide_load(group: list[AccessCost], fields: tuple[str, ...], arch: Architecture | None = None) -> None:
    """Charge the first access of `group` as the wide load of the whole element; the others
    make no request of their own."""
    first = group[0]
    struct = first.struct_type
    assert struct is not None and struct.size is not None
    # the wide load moves the whole element: its ideal is the element's sectors, not one field's
    scale = (first.access.element.size and (struct.size // first.access.element.size)) or 1
    for c in group:
        c.merged_into = first.access.uid if c is not first else None
    first.bytes = struct.size
    if arch is not None and not arch.charges_sectors:
        _charge_wide_load(first, struct.size, arch)
    elif first.per_request is not None and first.ideal_per_request is not None:
        first.ideal_per_request *= scale
    first.assumptions.append(FieldsLoadedTogether(fields, struct.name, first.bytes))
    for c in group[1:]:
        # no request of its own: the wide load of `first` moved this field too
        c.assumptions.append(MovedByWideLoad(first.bytes, first.text))
        c.bytes = first.bytes
        c.per_request, c.ideal_per_request, c.best_per_request = (
            first.per_request,
            first.ideal_per_request,
            first.best_per_request,
        )
        c.requests = 0 if c.requests is not None else None
        c.total = 0 if c.total is not None else None


def _charge_wide_load(first: AccessCost, size: int, arch: Architecture) -> None:
    """Charge the wide load of `first`'s worst request again, each lane at its element's start.
    A field at a stride of the element touches the sectors the element does (what the scaled
    ideal above relies on), but not the transactions of a seed generation (compute capability
    1.0 coalesces 16-byte words read in sequence, and never 4-byte ones 16 bytes apart)."""
    if first.per_request is None or not any(a is not None for a in first.lane_addresses):
        return
    starts = [None if a is None else a - a % size for a in first.lane_addresses]
    wide = global_cost(starts, size, arch)
    first.per_request, first.ideal_per_request = wide.sectors, wide.ideal
    first.best_per_request = None
    if first.requests is not None:
        first.total = wide.sectors * first.requests


def mark_reused(cost: AccessCost, holder: N.Access) -> None:
    """A load whose value the thread already holds (loaded or stored by `holder`): no request
    of its own."""
    cost.reuses = holder.uid
    same = holder.text == cost.access.text
    cost.assumptions.append(ValueReused(AccessOp(holder.op), None if same else holder.text))
    if cost.requests is not None:
        cost.requests = 0
        cost.total = 0
