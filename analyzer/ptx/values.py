"""What the PTX dataflow (`ptx.dataflow`) works with and makes: how parameters are named, the
accesses it evaluates, what entering a loop found, the dataflow of one entry; and where static
`.shared` arrays lie, for a pointer selected between two of them (nvcc's if-conversion).
Its values are the CUDA-C path's (`analysis.values`): an `S.Expr` or a `Ptr`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from analyzer.analysis import symbolic as S
from analyzer.analysis.values import LoopCtx, LoopKind, Ptr
from analyzer.arch import Architecture
from analyzer.ir.nodes import AccessOp, Space
from analyzer.ptx.cfg import PtxCfg
from analyzer.ptx.instructions import TYPE_BYTES, demangle_variable, instruction_text
from analyzer.ptx.nodes import PtxFunction, PtxInstruction, PtxVariable

__all__ = [
    "Dataflow",
    "LoopParts",
    "ParamNaming",
    "PtxAccess",
    "Value",
    "select_pointer",
    "static_shared_offsets",
]

Value = Any  # S.Expr | Ptr


@dataclass(frozen=True)
class ParamNaming:
    """How kernel parameters are named: PTX param -> CUDA name, and (param, byte offset) ->
    `A.width` for a field of a struct passed by value. A param not listed is named by its
    PTX name without the kernel's prefix (`param_2`)."""

    names: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[tuple[str, int], str] = field(default_factory=dict)

    def name(self, fn: PtxFunction, param: str, offset: int) -> str:
        if (param, offset) in self.fields:
            return self.fields[(param, offset)]
        base = self.names.get(param)
        if base is None:
            base = param[len(fn.name) + 1 :] if param.startswith(fn.name + "_") else param
        return base if offset == 0 else f"{base}.field{offset}"


@dataclass
class PtxAccess:
    """One `ld`/`st`/`atom`/`red` on shared, global or generic memory, as evaluated."""

    instruction: PtxInstruction
    space: Space  # SHARED, GLOBAL or UNKNOWN (generic memory whose pointer was not traced)
    op: AccessOp
    bytes: int  # bytes per lane: element size times vector width
    ptr: Ptr | None
    mask: S.Expr
    loop_headers: tuple[int, ...]  # blocks of the enclosing loops' headers, outermost first
    loops: tuple[LoopCtx, ...] = ()  # filled once every loop's condition is known

    @property
    def text(self) -> str:
        return instruction_text(self.instruction)


@dataclass(frozen=True)
class LoopParts:
    """What entering a loop found: its counter and kind, the registers that are additive
    inductions, and a multiplicative counter's start, operator and step (for its `LoopCtx`)."""

    counter: str  # `k@<loop>`, or `<register>@<loop>` for a multiplicative counter
    kind: LoopKind = LoopKind.ADDITIVE
    inductions: frozenset[str] = frozenset()
    init: S.Expr | None = None
    op: str = ""
    step: int = 0


@dataclass
class Dataflow:
    function: PtxFunction
    cfg: PtxCfg
    accesses: list[PtxAccess]
    entry_env: dict[int, dict[str, Value]]  # registers at each block's start
    exit_env: dict[int, dict[str, Value]]  # registers at each block's end
    masks: dict[int, S.Expr]  # the condition under which a lane runs each block
    loops: dict[int, LoopCtx | None]  # by header block (None: a loop whose counter is not known)
    notes: list[str] = field(default_factory=list)


def static_shared_offsets(variables: Iterable[PtxVariable]) -> dict[str, int]:
    """Where each static `.shared` array starts in the block's shared memory, by its `Ptr`
    region: ptxas places them in declaration order, each at the next multiple of its `.align`
    (research/merge/RULES.md); the block's start is 1024-aligned."""
    offsets: dict[str, int] = {}
    offset = 0
    for v in variables:
        if v.space != "shared" or not v.array_size:
            continue
        align = v.align or 1
        offset = -(-offset // align) * align
        offsets[f"{Space.SHARED}:{demangle_variable(v.name)}"] = offset
        offset += v.array_size * TYPE_BYTES.get(v.type or "", 1)
    return offsets


def select_pointer(c: S.Expr, a: Ptr, b: Ptr, shared_offsets: dict[str, int], arch: Architecture) -> Ptr | None:
    """`selp` of two pointers (nvcc's if-conversion of branch loads: srad's `c ? &east[ty][15] :
    &temp[ty][15]`): one region, or two static shared arrays, then a region naming both whose
    offsets count from the start of the block's shared memory, so that their banks are right."""
    if a.region == b.region:
        return Ptr(a.region, a.space, S.select(c, a.offset, b.offset), min(a.align, b.align))
    # a region that names two arrays already counts from the start of the block's shared memory
    base_a = 0 if "|" in a.region else shared_offsets.get(a.region)
    base_b = 0 if "|" in b.region else shared_offsets.get(b.region)
    if a.space != Space.SHARED or b.space != Space.SHARED or base_a is None or base_b is None:
        return None
    names = sorted({*a.region.split(":", 1)[1].split("|"), *b.region.split(":", 1)[1].split("|")})
    offset = S.select(c, a.offset + base_a, b.offset + base_b)
    return Ptr(f"{Space.SHARED}:{'|'.join(names)}", Space.SHARED, offset, arch.address_period)
