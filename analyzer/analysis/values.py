"""The values the symbolic interpreter works with, and what it records for each access.

A value (`Value`) is an `S.Expr` over threadIdx/blockIdx/blockDim/gridDim, parameters and loop
counters; a `Ptr` (a region and a byte offset into it); a struct held in registers (a dict of
its fields' values, or a `StructParam`); or None where nothing is known of a pointer. An `Occurrence` is one access
reached by the interpreter, with its pointer, the condition under which a lane makes it and
the loops around it; `costing.cost_occurrence` charges it. The PTX dataflow
(`ptx.dataflow`) makes the same values and occurrences.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from analyzer.analysis import symbolic as S
from analyzer.analysis.facts import NO_FACTS, Facts
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.records import field, record

__all__ = [
    "THREAD_SYMBOLS",
    "LoopCtx",
    "LoopKind",
    "Occurrence",
    "Ptr",
    "StructParam",
    "Value",
    "WideAccess",
    "is_loop_counter",
    "lane_dependent",
    "lane_varying",
    "struct_fields",
]

THREAD_SYMBOLS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
THREAD_SET = frozenset(THREAD_SYMBOLS)

#: An interpreted value: `S.Expr`, `Ptr`, a struct's fields (`dict[str, Value]`), a
#: `StructParam`, or None.
Value = Any


@record(slots=False)
class Ptr:
    """A pointer: a byte offset into a region (an array, a pointer parameter)."""

    region: str  # "param:a", "shared:tile#12", "field:A.elements", "unknown"
    space: N.Space
    offset: S.Expr  # bytes from the region's start
    align: int  # alignment of the region's start


@record(slots=False)
class StructParam:
    """A struct parameter held in registers (`Matrix A` passed by value), or a copy of one: the
    fields the code assigned, and the parameter the others are read from (named after it,
    `A.width`: a symbol, or the value `--param A.width=64` gives)."""

    name: str  # the parameter's name
    kernel: bool  # a parameter of the kernel itself: its pointer fields point to global memory
    fields: dict[str, Value] = field(default_factory=dict)  # assigned by the code, by name


def struct_fields(value: Value) -> dict[str, Value]:
    """The fields known of a struct value: a dict's, or those a struct parameter was assigned."""
    return value.fields if isinstance(value, StructParam) else value


class LoopKind(StrEnum):
    """How a loop's counter moves: by a constant step (`k`), or multiplied, divided or shifted."""

    ADDITIVE = "additive"
    MULTIPLICATIVE = "multiplicative"


@record(slots=False)
class LoopCtx:
    """A loop around an access: its counter symbol, the condition for an iteration to run,
    and for a multiplicative counter how it moves."""

    uid: int
    counter: str  # the symbol walked: "k@12" (additive) or "s@12" (multiplicative)
    cond: S.Expr | None  # in terms of the counter; None = no condition
    kind: LoopKind
    init: S.Expr | None = None  # multiplicative: first value
    op: str = ""  # multiplicative: the update's operator, * / << >>
    step: int = 0


@record(frozen=False, slots=False)
class Occurrence:
    """One access reached by the interpreter (or the PTX dataflow), once per call site."""

    access: N.Access
    ptr: Ptr | None
    mask: S.Expr
    loops: tuple[LoopCtx, ...]
    via: str | None
    struct_type: T.StructType | None = None
    reuses: N.Access | None = None  # the access whose value this load reuses (no request)
    facts: Facts = NO_FACTS  # what the code stated (`__assume`) before the access, for every thread
    region_bytes: int | None = None  # the size of the array `ptr` points into, where known
    # nvcc merges this access with its neighbours (`merge.merge_adjacent`): the wide access
    # that moves it, and for the access that carries the request its width and offset in it
    wide: WideAccess | None = None
    window: int | None = None  # the run of shared accesses nvcc may merge it with (`Interpreter.window_of`)
    if_converted: tuple[str, ...] = ()  # the other branches' loads nvcc may merge it with (`ifconvert`)


@record(slots=False)
class WideAccess:
    """One wide shared access nvcc makes of several adjacent ones (`s[2*t]`, `s[2*t+1]`: one
    64-bit access): the access that carries the request (the first load, the last store), the
    bytes each lane moves, and the byte offset of each member's element within a lane's bytes."""

    carrier: N.Access
    bytes: int
    members: tuple[tuple[N.Access, int], ...]  # (access, offset within the wide access)

    def offset_of(self, access: N.Access) -> int:
        return next(off for a, off in self.members if a is access)


def is_loop_counter(name: str) -> bool:
    """Whether a symbol is a loop's counter: the interpreter and the PTX dataflow name them
    `k@12` (additive, loop 12) and `s@12` (the variable itself, multiplicative)."""
    return "@" in name


def lane_varying(e: S.Expr) -> bool:
    """Whether `e` holds an unknown value that may differ between the lanes of a warp."""
    return S.varies_between_lanes(e)


def lane_dependent(value: Value) -> bool:
    """Whether an interpreted value may differ between the lanes of a warp."""
    if isinstance(value, Ptr):
        value = value.offset
    if isinstance(value, (dict, StructParam)):
        return any(lane_dependent(v) for v in struct_fields(value).values())
    return isinstance(value, S.Expr) and (bool(value.free_symbols & THREAD_SET) or lane_varying(value))
