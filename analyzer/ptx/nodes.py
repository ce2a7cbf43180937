"""PTX nodes: small frozen dataclasses built by `analyzer.ptx.parse.parse_ptx`.

Positions are 1-based line numbers in the PTX file (`line`); `loc` is the
`.loc file line column` in effect for an instruction, i.e. a position in the
CUDA source that nvcc compiled (`PtxModule.files` maps the file index to a path).

Sequences are tuples so that a parsed module cannot be changed in place.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from analyzer.diagnostics import Diagnostic

# ---------------------------------------------------------------- operands


@dataclass(frozen=True, slots=True)
class Reg:
    """A register: `%r12`, `%rd3`, `%f1`, `%p1`, `%SP`; `p` for a `.reg .pred p;` of inline asm."""

    name: str


@dataclass(frozen=True, slots=True)
class SpecialReg:
    """A read-only special register: `%tid.x`, `%ctaid.y`, `%laneid`, `%clock64`, ..."""

    name: str  # with the component: "%tid.x"

    @property
    def base(self) -> str:
        """`%tid` for `%tid.x`."""
        return self.name.split(".", 1)[0]

    @property
    def component(self) -> str | None:
        """`x` for `%tid.x`, None for `%laneid`."""
        _, dot, comp = self.name.partition(".")
        return comp if dot else None


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. `0f3F800000` and `0d3FF0000000000000` become floats, `0x10`/`-4` ints."""

    value: int | float


@dataclass(frozen=True, slots=True)
class Sym:
    """A name: a label (`$L__BB0_2`), a variable (`_ZZ6kernelE4tile`), a function, a param.

    `mov.u64 %rd1, tile+16;` (the address of a variable plus a byte offset) -> Sym("tile", 16).
    """

    name: str
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Sink:
    """`_`: a result that is thrown away (`{%f1, _, %f3, _}`)."""


@dataclass(frozen=True, slots=True)
class Vec:
    """A vector operand: `{%f1, %f2, %f3, %f4}`."""

    items: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Addr:
    """`[%rd4+16]` -> Addr("%rd4", 16); `[name]` -> Addr("name", 0); `[%rd4+-4]` -> offset -4."""

    base: str
    offset: int = 0

    @property
    def is_reg(self) -> bool:
        """True when the base is a `%` register, False for a symbol (a variable or param)."""
        return self.base.startswith("%")


@dataclass(frozen=True, slots=True)
class AddrList:
    """A bracket with several items, as textures and surfaces use: `[%rd1, {%f2, %f4}]`."""

    items: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class RegPair:
    """`%r7|%p1` (shfl.sync) or `%p1|%p2` (setp): a value and a predicate written together."""

    first: Operand
    second: Operand


@dataclass(frozen=True, slots=True)
class Not:
    """A negated predicate source operand: `!%p1`."""

    operand: Operand


@dataclass(frozen=True, slots=True)
class ParamList:
    """A parenthesised list of a `call`: `(retval0)`, `(param0, param1)`."""

    items: tuple[Operand, ...]


Operand = Reg | SpecialReg | Imm | Sym | Sink | Vec | Addr | AddrList | RegPair | Not | ParamList


# ---------------------------------------------------------------- statements


class PtxLoc(NamedTuple):
    """`.loc file line column`: a position in the CUDA source. Compares equal to a plain tuple."""

    file: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class PtxLabel:
    name: str  # "$L__BB0_2", without the colon
    line: int


@dataclass(frozen=True, slots=True)
class PtxInstruction:
    """`@!%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4+16];`

    opcode "ld", modifiers ("global", "nc", "v4", "f32"), predicate (Reg("%p1"), True).
    """

    opcode: str
    modifiers: tuple[str, ...]
    predicate: tuple[Reg, bool] | None  # (register, negated)
    operands: tuple[Operand, ...]
    line: int  # 1-based line in the PTX file
    loc: PtxLoc | None = None  # the latest `.loc` before this instruction in its function
    inlined_at: PtxLoc | None = None  # the call site, when `.loc` has `inlined_at`
    inlined_from: str | None = None  # the inlined function (mangled), from `function_name`

    @property
    def full_opcode(self) -> str:
        """`ld.global.nc.v4.f32`."""
        return ".".join((self.opcode, *self.modifiers))


Statement = PtxLabel | PtxInstruction


# ---------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class PtxVariable:
    """A state-space declaration, at module scope or in a function body.

    `.shared .align 4 .b8 tile[1024];` -> space "shared", type "b8", align 4, array_size 1024.
    `.extern .shared .align 16 .b8 s[];` -> linkage ("extern",), array_size 0 (unsized).
    `.reg .b32 %r<15>;` -> space "reg", name "%r", count 15 (registers %r0 .. %r14).
    """

    space: str  # "global" "shared" "local" "const" "param" "reg" (no dot)
    name: str
    type: str | None  # "b8" "u32" "f32" "pred" ...
    align: int | None
    array_size: int | None  # None: a scalar; 0: `[]`; product of all dimensions otherwise
    line: int
    dims: tuple[int | None, ...] = ()  # every dimension, None for `[]`
    vector: int | None = None  # 4 for `.v4`
    count: int | None = None  # N for `%r<N>`
    linkage: tuple[str, ...] = ()  # ("visible",), ("extern",), ("weak",)
    attributes: tuple[str, ...] = ()  # ("managed",) for `.attribute(.managed)`
    init: tuple | int | float | str | None = None  # initialiser; names are strs, lists tuples


@dataclass(frozen=True, slots=True)
class PtxParam:
    """`.param .u64 .ptr .global .align 16 k_param_0` -> space "param", type "u64",
    ptr_space "global", align 16. `.param .align 4 .b8 k_param_1[8]` -> array_size 8."""

    name: str
    type: str | None
    align: int | None
    space: str  # "param" (or "reg" in old ABIs)
    line: int
    array_size: int | None = None
    vector: int | None = None
    ptr_space: str | None = None  # pointee state space of a `.ptr` param


@dataclass(frozen=True, slots=True)
class PtxCallPrototype:
    """`prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);` for indirect calls."""

    name: str
    returns: tuple[PtxParam, ...]
    params: tuple[PtxParam, ...]
    line: int


@dataclass(frozen=True, slots=True)
class PtxFunction:
    """A `.entry` (kernel) or `.func` (device function), defined or only declared."""

    name: str
    is_entry: bool
    params: tuple[PtxParam, ...]
    body: tuple[Statement, ...]  # labels and instructions, `{ }` blocks flattened, in order
    line: int  # line of `.entry` / `.func`
    end_line: int
    returns: tuple[PtxParam, ...] = ()
    linkage: tuple[str, ...] = ()
    maxntid: tuple[int, ...] | None = None
    reqntid: tuple[int, ...] | None = None
    minnctapersm: int | None = None
    maxnreg: int | None = None
    directives: tuple[tuple[str, tuple[int, ...]], ...] = ()  # every performance directive
    decls: tuple[PtxVariable, ...] = ()  # `.reg`, `.shared`, `.local`, `.param` inside the body
    pragmas: tuple[str, ...] = ()  # "nounroll"
    prototypes: tuple[PtxCallPrototype, ...] = ()
    branch_targets: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (`$L_brx_0`, labels)
    defined: bool = True  # False for a declaration ending in `;`

    @property
    def instructions(self) -> Iterator[PtxInstruction]:
        return (s for s in self.body if isinstance(s, PtxInstruction))

    @property
    def labels(self) -> dict[str, int]:
        """Label name -> index in `body`."""
        return {s.name: i for i, s in enumerate(self.body) if isinstance(s, PtxLabel)}


@dataclass(frozen=True, slots=True)
class PtxModule:
    path: str
    version: str | None  # "9.0"
    target: str | None  # "sm_80"
    address_size: int | None
    files: dict[int, str]  # `.file 1 "/src/k.cu"` -> {1: "/src/k.cu"}
    globals: tuple[PtxVariable, ...]
    functions: tuple[PtxFunction, ...]  # definitions, in file order
    declarations: tuple[PtxFunction, ...] = ()  # prototypes without a body (`.extern .func vprintf`)
    target_options: tuple[str, ...] = ()  # ("debug",) for `.target sm_80, debug`
    # Syntax errors skipped by parse_ptx(recover=True); empty otherwise.
    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)
    failed_functions: tuple[str, ...] = ()  # functions lost to those errors
    aliases: tuple[tuple[str, str], ...] = ()  # `.alias a, b;` -> (("a", "b"),)

    @property
    def entries(self) -> tuple[PtxFunction, ...]:
        return tuple(f for f in self.functions if f.is_entry)

    def function(self, name: str) -> PtxFunction:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)
