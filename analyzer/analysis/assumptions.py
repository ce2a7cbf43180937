"""What the analysis assumed about an access, as data, and the one place that words it.

The analysis cannot always decide an access's cost: the block may be unknown, the index may
come from memory, a parameter may have no value. It then says what it took instead, as an
`Assumption` record in `AccessCost.assumptions`: a kind (`AssumptionKind`) and the typed
values the sentence needs. Code asks the kind (`a.kind is AssumptionKind.BLOCK_ASSUMED`);
only `words` (and `str()`, which calls it) turns a record into the sentence that reports
print, as pyflakes keeps all of its wording in `messages.py`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from analyzer.ir import builtins
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.nodes import AccessOp, Space
from analyzer.records import record

__all__ = [
    "AccessesMerged",
    "AddressNotFollowed",
    "AlignmentUnknown",
    "ArchitectureNote",
    "Assumption",
    "AssumptionKind",
    "BlockAssumed",
    "BlockUnknown",
    "ConditionAssumedTrue",
    "CostBounded",
    "CostDependsOn",
    "FieldsLoadedTogether",
    "IndexFromCall",
    "IndexLoaded",
    "IndexLoopCarried",
    "MayBeIfConverted",
    "MayVectorize",
    "MovedByWideAccess",
    "MovedByWideLoad",
    "NoActiveLane",
    "RequestsNotCounted",
    "SpaceNotCosted",
    "SpaceUnknown",
    "ValueReused",
    "words",
]


class AssumptionKind(StrEnum):
    """What an assumption is about."""

    BLOCK_ASSUMED = "block-assumed"  # no block was known: warplint chose one
    BLOCK_UNKNOWN = "block-unknown"  # no block at all: nothing costed
    SPACE_NOT_COSTED = "space-not-costed"  # local or constant memory
    SPACE_UNKNOWN = "space-unknown"  # a pointer whose space is not known
    ADDRESS_NOT_FOLLOWED = "address-not-followed"
    INDEX_LOOP_CARRIED = "index-loop-carried"  # the index is changed by a loop in a way not followed
    INDEX_LOADED = "index-loaded"  # the index is read from memory
    NO_ACTIVE_LANE = "no-active-lane"
    CONDITION_ASSUMED_TRUE = "condition-assumed-true"  # an undecided mask taken as true
    ALIGNMENT_UNKNOWN = "alignment-unknown"  # the first address's alignment changes the cost
    COST_DEPENDS_ON = "cost-depends-on"  # unknown parameters or launch values were sampled
    MAY_VECTORIZE = "may-vectorize"  # nvcc may merge iterations' loads into one wide load
    VALUE_REUSED = "value-reused"  # the thread holds the value: no request
    FIELDS_LOADED_TOGETHER = "fields-loaded-together"  # one wide load moves several fields
    MOVED_BY_WIDE_LOAD = "moved-by-wide-load"  # another access's wide load moves this field
    REQUESTS_NOT_COUNTED = "requests-not-counted"  # why `requests` and `total` are null
    INDEX_FROM_CALL = "index-from-call"  # the index is what a call warplint does not follow returns
    COST_BOUNDED = "cost-bounded"  # per_request is a bound from the array's extent, not a figure
    ACCESSES_MERGED = "accesses-merged"  # nvcc merges adjacent accesses into one wide access here
    MOVED_BY_WIDE_ACCESS = "moved-by-wide-access"  # another access's wide access moves this one
    MAY_BE_IF_CONVERTED = "may-be-if-converted"  # nvcc may merge branch loads into one (if-conversion)
    ARCHITECTURE_NOTE = "architecture-note"  # what the architecture's table does not express


@record
class Assumption:
    """Something the analysis could not decide about an access, and what it took instead.

    Each kind is a subclass with the values its sentence needs; `str()` is the sentence."""

    kind: ClassVar[AssumptionKind]

    def __str__(self) -> str:
        return words(self)


@record
class BlockAssumed(Assumption):
    kind = AssumptionKind.BLOCK_ASSUMED
    origin: str  # why and which block was assumed (`LaunchConfig.origin`)


@record
class BlockUnknown(Assumption):
    kind = AssumptionKind.BLOCK_UNKNOWN


@record
class SpaceNotCosted(Assumption):
    kind = AssumptionKind.SPACE_NOT_COSTED
    space: Space


@record
class SpaceUnknown(Assumption):
    kind = AssumptionKind.SPACE_UNKNOWN


@record
class AddressNotFollowed(Assumption):
    kind = AssumptionKind.ADDRESS_NOT_FOLLOWED


@record
class IndexLoopCarried(Assumption):
    kind = AssumptionKind.INDEX_LOOP_CARRIED


@record
class IndexLoaded(Assumption):
    kind = AssumptionKind.INDEX_LOADED


@record
class NoActiveLane(Assumption):
    kind = AssumptionKind.NO_ACTIVE_LANE


@record
class ConditionAssumedTrue(Assumption):
    kind = AssumptionKind.CONDITION_ASSUMED_TRUE


@record
class AlignmentUnknown(Assumption):
    kind = AssumptionKind.ALIGNMENT_UNKNOWN


@record
class CostDependsOn(Assumption):
    kind = AssumptionKind.COST_DEPENDS_ON
    unknowns: tuple[str, ...]  # the symbols sampled, sorted: parameters, block indices, sizes
    # where the host code got the values of those it leaves unknown: (name, "returned by `atoi` at k.cu:7")
    origins: tuple[tuple[str, str], ...] = ()


@record
class MayVectorize(Assumption):
    kind = AssumptionKind.MAY_VECTORIZE
    iterations: int  # consecutive iterations whose elements one load may move
    bytes: int  # the width of that load


@record
class ValueReused(Assumption):
    kind = AssumptionKind.VALUE_REUSED
    holder_op: AccessOp  # the holder loaded or stored the value
    holder: str | None  # the holder's text; None when it is the same access


@record
class FieldsLoadedTogether(Assumption):
    kind = AssumptionKind.FIELDS_LOADED_TOGETHER
    fields: tuple[str, ...]  # sorted
    struct: str  # the struct's name
    bytes: int  # the width of the wide load


@record
class MovedByWideLoad(Assumption):
    kind = AssumptionKind.MOVED_BY_WIDE_LOAD
    bytes: int
    load: str  # the text of the access whose wide load moves this field


@record
class RequestsNotCounted(Assumption):
    kind = AssumptionKind.REQUESTS_NOT_COUNTED
    reasons: tuple[str, ...]  # sorted: "grid", "loop", "walk"


_NOT_COUNTED = {
    "grid": "the grid is not known (pass --grid)",
    "loop": "how often a loop around it runs is not known",
    "walk": "the loop iterations that change its cost were sampled, not walked",
}


@record
class IndexFromCall(Assumption):
    kind = AssumptionKind.INDEX_FROM_CALL
    call: str  # "call to f": the call whose result the index depends on


@record
class CostBounded(Assumption):
    kind = AssumptionKind.COST_BOUNDED
    space: Space
    lanes: int  # the most lanes one request has
    words_per_bank: int | None  # shared: the words of the array in one bank, where its size is known


@record
class AccessesMerged(Assumption):
    kind = AssumptionKind.ACCESSES_MERGED
    texts: tuple[str, ...]  # the accesses merged, in program order
    bytes: int  # what each lane moves in the merged access


@record
class MovedByWideAccess(Assumption):
    kind = AssumptionKind.MOVED_BY_WIDE_ACCESS
    bytes: int
    carrier: str  # the text of the access that carries the merged request


@record
class MayBeIfConverted(Assumption):
    kind = AssumptionKind.MAY_BE_IF_CONVERTED
    others: tuple[str, ...]  # the loads of the other branches


@record
class ArchitectureNote(Assumption):
    kind = AssumptionKind.ARCHITECTURE_NOTE
    arch: str  # the architecture's name
    note: str  # one of `Architecture.notes`


def words(a: Assumption) -> str:
    """The sentence that reports print for `a`."""
    match a:
        case BlockAssumed(origin=origin):
            return f"block size unknown: {origin}"
        case BlockUnknown():
            return "block size unknown"
        case SpaceNotCosted(space=space):
            return f"{space} memory is not costed"
        case SpaceUnknown():
            return (
                "the memory space of this pointer is unknown (a pointer loaded from memory or "
                "computed in a way warplint does not follow)"
            )
        case AddressNotFollowed():
            return "the address could not be followed"
        case IndexLoopCarried():
            return (
                "the index depends on a variable that a loop updates in a way warplint does not "
                "follow (not by a constant step) and that differs between lanes: cost unknown"
            )
        case IndexLoaded():
            return "the index depends on data loaded from memory: cost unknown"
        case NoActiveLane():
            return "no lane of any warp executes this access"
        case ConditionAssumedTrue():
            return "a condition on values warplint does not know was assumed true for every lane (the worst case)"
        case AlignmentUnknown():
            return (
                "the alignment of the warp's first address is not known and changes the cost: "
                "per_request is the worst case over its possible alignments, best_per_request the best"
            )
        case CostDependsOn(unknowns=unknowns, origins=origins) if origins:
            return _depends_on_words(unknowns) + "".join(f"; `{name}`: {where}" for name, where in origins)
        case CostDependsOn(unknowns=unknowns):
            return _depends_on_words(unknowns)
        case MayVectorize(iterations=iterations, bytes=nbytes):
            return (
                f"nvcc may unroll the loop and load {iterations} consecutive iterations' elements "
                f"with one {nbytes}-byte load (fewer requests, more wavefronts each); the figure "
                "is for the access as written"
            )
        case ValueReused(holder_op=op, holder=holder):
            verb = "loaded" if op == AccessOp.LOAD else "stored"
            by = "the same access" if holder is None else f"`{holder}`"
            return (
                f"no request of its own: nvcc reuses the value {verb} by {by} "
                "(same address, nothing in between can change it)"
            )
        case FieldsLoadedTogether(fields=fields, struct=struct, bytes=nbytes):
            return f"fields {', '.join(fields)} of one `{struct}` element are loaded with one {nbytes}-byte access"
        case MovedByWideLoad(bytes=nbytes, load=load):
            return f"moved by the {nbytes}-byte load of `{load}`"
        case RequestsNotCounted(reasons=reasons):
            return "requests and total are not counted: " + "; ".join(_NOT_COUNTED[r] for r in reasons)
        case IndexFromCall(call=call):
            return (
                f"the index depends on what a {call} returns, which warplint does not work out (a function "
                "whose body is not in the file, or a builtin it does not model): it may differ between lanes"
            )
        case CostBounded(space=space, lanes=lanes, words_per_bank=per_bank):
            return _bound_words(space, lanes, per_bank)
        case AccessesMerged(texts=texts, bytes=nbytes):
            merged = ", ".join(f"`{t}`" for t in texts)
            return f"nvcc merges {merged} into one {nbytes * 8}-bit access: the figure is for that access"
        case MayBeIfConverted(others=others):
            merged = ", ".join(f"`{t}`" for t in others)
            return (
                f"nvcc may merge this load with {merged} of the other branches into one load whose lanes "
                "read either address (if-conversion): the figure is for the load as written"
            )
        case MovedByWideAccess(bytes=nbytes, carrier=carrier):
            return f"no request of its own: moved by the {nbytes * 8}-bit access nvcc makes at `{carrier}`"
        case ArchitectureNote(arch=arch, note=note):
            return f"{arch}: {note}"
    raise TypeError(f"no wording for {a!r}")


def _bound_words(space: Space, lanes: int, per_bank: int | None) -> str:
    """Why a data-dependent access's `per_request` is a bound, not a figure."""
    if space == Space.SHARED and per_bank is not None:
        why = f"the array holds at most {per_bank} words in one bank and a phase has at most {lanes} lanes"
    elif space == Space.SHARED:
        why = f"a phase has at most {lanes} lanes, each at one word of a bank"
    else:
        why = f"each of at most {lanes} lanes touches one 32-byte sector"
    return f"per_request is a bound, not a figure: {why}"


def _depends_on_words(unknowns: tuple[str, ...]) -> str:
    """`the cost depends on n (not known) and on the block (blockIdx.x): worst case over ...`."""
    tried = "values 1..64" if len(unknowns) == 1 else "sampled values from 1 to 64 of each"
    kinds = {d: _variable_kind(d) for d in unknowns}
    indices = [d for d in unknowns if kinds[d] is BuiltinKind.BLOCK_INDEX]
    sizes = [d for d in unknowns if kinds[d] in _LAUNCH_SIZES]
    params = [d for d in unknowns if d not in indices and d not in sizes]
    what = []
    if params:
        what.append(f"{', '.join(params)} (not known)")
    if indices:
        what.append(f"the block ({', '.join(indices)})")
    if sizes:
        what.append(f"the launch ({', '.join(sizes)}, not known)")
    how = []
    if params:
        how.append(" ".join(f"--param {p}=VALUE" for p in params))
    if sizes:
        how.append("--grid/--block")
    hint = f" (pass {' and '.join(how)})" if how else ""
    return f"the cost depends on {' and on '.join(what)}: worst case over {tried}{hint}"


_LAUNCH_SIZES = (BuiltinKind.GRID_SIZE, BuiltinKind.BLOCK_SIZE)


def _variable_kind(name: str) -> BuiltinKind | None:
    """What built-in variable a symbol is (`blockIdx.x`), None for a parameter (`n`, `A.width`)."""
    spec = builtins.variable(name)
    return spec.kind if spec is not None else None
