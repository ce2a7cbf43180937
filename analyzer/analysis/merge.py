"""What several costs of one kernel make together: call sites, wide accesses, reused values.

An access in a device function is costed once per call site (`merge_costs` keeps one entry per
access); nvcc loads several fields of one naturally aligned struct element in one statement
with one wide load (`merge_struct_fields`); ptxas merges adjacent shared accesses into one 64-
or 128-bit access (`merge_adjacent`: `temp[2*t]`, `temp[2*t+1]` become one STS.64); and a load
whose value the thread already holds makes no request (`mark_reused`). The simulator applies
the same rules to what it measures, so that both count the requests nvcc makes.

The rules of `merge_adjacent` are those observed of nvcc 13.0 at -O3 for sm_90 (rule P of the
study in research/merge/RULES.md): shared accesses of 4- or 8-byte elements of one array, in
one run that no barrier, call, branch or blocking shared access interrupts (the interpreter's
`window_of`), under the same condition, whose offsets differ by constants, are merged into
naturally aligned 8- or 16-byte accesses where the alignment holds for every lane: 4 words (or
2 doubles) of a 16-byte chunk, or 3 of its 4 words for loads (the 4th is read too), else 2
words of an 8-byte pair. A merged load issues at its first load, a merged store at its last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import cast

from analyzer.analysis import symbolic as S
from analyzer.analysis.assumptions import (
    AccessesMerged,
    FieldsLoadedTogether,
    MovedByWideAccess,
    MovedByWideLoad,
    ValueReused,
)
from analyzer.analysis.cost import global_cost
from analyzer.analysis.indexing import element_field, expression_key
from analyzer.analysis.results import AccessCost
from analyzer.analysis.values import Occurrence, Ptr, WideAccess
from analyzer.arch import Architecture
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import AccessOp, Space
from analyzer.records import replace

__all__ = [
    "MERGED_ELEMENT_BYTES",
    "WIDE_LOAD_BYTES",
    "carried_cost",
    "consistent_wide",
    "mark_moved",
    "mark_reused",
    "merge_adjacent",
    "merge_costs",
    "merge_struct_fields",
    "shared_base_alignments",
    "widened",
]

#: The struct sizes nvcc moves several fields of with one load (LDG.64, LDG.128).
WIDE_LOAD_BYTES = (8, 16)

#: The element sizes ptxas merges adjacent shared accesses of (1- and 2-byte ones never).
MERGED_ELEMENT_BYTES = (4, 8)

#: A type of each width a merged access moves, to cost it with (naturally aligned).
_WIDE_TYPES = {8: "uint2", 16: "uint4"}


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


# ----------------------------------------------------------------------------- adjacent shared accesses
def shared_base_alignments(arrays: Iterable[N.Variable], arch: Architecture) -> dict[str, int]:
    """The alignment (up to `arch.max_access_bytes`) of where each `__shared__` array starts, by
    its `Ptr` region: ptxas places a kernel's static arrays in declaration order from a
    1024-aligned start, each at the next multiple of its own alignment (`float a[3]; float b[]`
    puts b at +12: nothing in b is merged); a dynamic (`extern`) array is 16-aligned."""
    aligned: dict[str, int] = {}
    offset = 0
    for var in sorted(arrays, key=lambda v: v.uid):
        region = f"{Space.SHARED}:{var.name}#{var.uid}"
        if not var.type.size:
            aligned[region] = arch.max_access_bytes
            continue
        step = var.type.align or 1
        offset = -(-offset // step) * step
        aligned[region] = min(arch.max_access_bytes, offset & -offset) if offset else arch.max_access_bytes
        offset += var.type.size
    return aligned


def merge_adjacent(
    occurrences: list[Occurrence],
    known_of: Callable[[Occurrence], dict[str, int]],
    base_alignment: dict[str, int],
    arch: Architecture,
) -> None:
    """Set `wide` on the occurrences that nvcc merges into one wide shared access (see the module
    docstring). `known_of` gives the values an occurrence is costed with (an alignment may
    depend on blockDim), `base_alignment` where each shared array starts (`shared_base_alignments`)."""
    runs: dict[tuple, list[tuple[int, Occurrence]]] = {}
    for order, occ in enumerate(occurrences):
        ptr, access = occ.ptr, occ.access
        if occ.window is None or ptr is None or occ.reuses is not None or ptr.region not in base_alignment:
            continue
        if access.element.size not in MERGED_ELEMENT_BYTES or access.op not in (AccessOp.LOAD, AccessOp.STORE):
            continue
        key = (occ.window, access.op, ptr.region, access.element.size, occ.mask, occ.loops)
        runs.setdefault(key, []).append((order, occ))
    for key, run in runs.items():
        if len(run) < 2:
            continue
        region = key[2]
        for ref, members in _constant_apart(run):
            frame = _aligned_frame(ref, known_of(members[0][2]), base_alignment[region], arch)
            if frame is not None:
                _merge_run(members, frame, arch)


def _constant_apart(run: list[tuple[int, Occurrence]]) -> list[tuple[S.Expr, list[tuple[int, int, Occurrence]]]]:
    """The run's occurrences in classes whose offsets differ by constants from the class's first:
    (that offset, [(bytes from it, program order, occurrence)])."""
    classes: list[tuple[S.Expr, list[tuple[int, int, Occurrence]]]] = []
    for order, occ in run:
        assert occ.ptr is not None
        for ref, members in classes:
            delta = occ.ptr.offset - ref
            if delta.is_const:
                members.append((delta.value, order, occ))
                break
        else:
            classes.append((occ.ptr.offset, [(0, order, occ)]))
    return classes


def _aligned_frame(ref: S.Expr, known: dict[str, int], base: int, arch: Architecture) -> tuple[int, int] | None:
    """(width, residue): the widest of 16 and 8 bytes modulo which `ref`, the offset of a class
    of accesses, has the same residue for every lane and every value of the unknowns, with that
    residue; None when neither (a runtime term not multiplied, `2*t + k`: no merge)."""
    value = ref.subs(known) if known else ref
    for width in (arch.max_access_bytes, arch.max_access_bytes // 2):
        if width > base:
            continue
        found = S.residues(value, width)
        if len(found) == 1:
            return width, next(iter(found))
    return None


def _merge_run(members: list[tuple[int, int, Occurrence]], frame: tuple[int, int], arch: Architecture) -> None:
    """Group the members of one class into the wide accesses nvcc makes of them, in chunks of
    the frame's width, and set `wide` on each member of a wide access of two or more."""
    width, residue = frame
    size = cast(int, members[0][2].access.element.size)  # one of MERGED_ELEMENT_BYTES (filtered above)
    op = members[0][2].access.op
    by_position = {rel + residue: (order, occ) for rel, order, occ in members}
    if len(by_position) != len(members) or len({occ.access.uid for _, _, occ in members}) != len(members):
        return  # two accesses at one address, or one access twice: left as written
    if any(p % size for p in by_position):
        return
    chunks: dict[int, list[int]] = {}
    for p in by_position:
        chunks.setdefault(p // width, []).append(p)
    for chunk, positions in chunks.items():
        start = chunk * width
        slots = width // size
        whole = len(positions) == slots
        # ptxas loads three words of a 16-byte chunk with one LDS.128 (the fourth is read too)
        three_words_loaded = op == AccessOp.LOAD and slots == 4 and len(positions) == 3
        if width == arch.max_access_bytes and (whole or three_words_loaded):
            _make_wide([by_position[p] for p in sorted(positions)], start, width, by_position)
            continue
        if size != 4:
            continue
        for half in range(start, start + width, 8):
            if half in by_position and half + 4 in by_position:
                _make_wide([by_position[half], by_position[half + 4]], half, 8, by_position)


def _make_wide(
    parts: list[tuple[int, Occurrence]], start: int, nbytes: int, by_position: dict[int, tuple[int, Occurrence]]
) -> None:
    """One wide access of `nbytes` at `start` moving `parts` (program order, occurrence): issued
    at the first load, or at the last store."""
    position = {id(occ): p for p, (_, occ) in by_position.items()}
    ordered = sorted(parts, key=lambda part: part[0])
    carrier = ordered[0][1] if ordered[0][1].access.op == AccessOp.LOAD else ordered[-1][1]
    wide = WideAccess(carrier.access, nbytes, tuple((occ.access, position[id(occ)] - start) for _, occ in ordered))
    for _, occ in ordered:
        occ.wide = wide


def consistent_wide(occurrences: list[Occurrence]) -> dict[int, WideAccess]:
    """Keep `wide` only where every occurrence of an access (an access of a device function is
    reached once per call) is merged the same way, so that a site has one cost and the
    simulator, which charges by site, can apply the same rule; returns them by access uid."""
    while True:
        seen: dict[int, set[tuple | None]] = {}
        for occ in occurrences:
            w = occ.wide
            shape = None if w is None else (w.carrier.uid, w.bytes, w.offset_of(occ.access))
            seen.setdefault(occ.access.uid, set()).add(shape)
        mixed = {uid for uid, shapes in seen.items() if len(shapes) > 1}
        broken = {
            id(o.wide) for o in occurrences if o.wide is not None and any(a.uid in mixed for a, _ in o.wide.members)
        }
        if not broken:
            return {o.access.uid: o.wide for o in occurrences if o.wide is not None}
        for occ in occurrences:
            if occ.wide is not None and id(occ.wide) in broken:
                occ.wide = None


def widened(occ: Occurrence) -> Occurrence:
    """The carrier of a wide access as the access nvcc makes: each lane moves the wide access's
    bytes, from where its first member's element starts."""
    wide, ptr = occ.wide, occ.ptr
    assert wide is not None and ptr is not None
    shift = wide.offset_of(occ.access)
    element = T.builtin_type(_WIDE_TYPES[wide.bytes])
    access = replace(occ.access, element=element)
    moved = Ptr(ptr.region, ptr.space, ptr.offset - shift, ptr.align)
    out = Occurrence(access, moved, occ.mask, occ.loops, occ.via)
    out.facts, out.reuses = occ.facts, occ.reuses
    return out


def carried_cost(cost: AccessCost, occ: Occurrence) -> AccessCost:
    """The cost of a wide access's carrier, costed as `widened(occ)`, given back its own access
    and saying what was merged."""
    wide = occ.wide
    assert wide is not None
    cost.access = occ.access
    cost.element_bytes = occ.access.element.size or 0
    cost.struct_type = occ.struct_type
    cost.assumptions.append(AccessesMerged(tuple(a.text for a, _ in wide.members), wide.bytes))
    return cost


def mark_moved(cost: AccessCost, carrier: AccessCost) -> None:
    """A member of a wide access other than its carrier: no request of its own, the carrier's
    figures per request (for the reader; rules skip it: `merged_into`)."""
    cost.merged_into = carrier.access.uid
    cost.bytes = carrier.bytes
    cost.per_request, cost.ideal_per_request, cost.best_per_request = (
        carrier.per_request,
        carrier.ideal_per_request,
        carrier.best_per_request,
    )
    cost.exact = cost.exact and carrier.exact
    cost.requests = 0 if cost.requests is not None else None
    cost.total = 0 if cost.total is not None else None
    cost.assumptions.append(MovedByWideAccess(carrier.bytes, carrier.text))
