"""Inline assembly (`asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));`) read with
the PTX grammar, so that its loads and stores are costed like the C accesses they are.

`read_asm(template)` parses each instruction of the template with `grammars/ptx.lark` (its
`instruction` rule) after naming the operands `%0`, `%1` ... as registers, and returns what
lowering needs: for each instruction the operands it writes and, for `ld`/`st`, the memory
space, the bytes moved per lane, and which operand holds the address (plus a constant byte
offset) and which the value. A template it cannot read raises `AsmNotRead` with the reason,
which lowering states in a note when the template holds a load or store.
"""

from __future__ import annotations

import functools
from typing import Any

from analyzer.grammar_files import grammar_path, lark_parser
from analyzer.lazy_pattern import lazy_compile
from analyzer.records import record

__all__ = ["AsmInstruction", "AsmMemoryOp", "AsmNotRead", "read_asm"]

_OPERAND = lazy_compile(r"%(%|\d+)")
_OPERAND_REGISTER = lazy_compile(r"^%_asm(\d+)$")
_TYPE = lazy_compile(r"^[bsuf](8|16|32|64)$")
_SPACES = ("global", "shared", "local", "const", "param")
# `mov.u32 %0, %%laneid;`, `bfind.u32 %0, %1;`: an opcode, an operand it writes, a register
# (the operands named `%_asmN`, the whitespace the grammar ignores): what `_instruction` makes
# of the grammar's parse of it is known (the opcode, the operand written) without lark, whose
# import and parser are a process's first asm's cost: lowering the twenty cuda-samples files
# of `benchmarks/speed.py nvcc` and reduction_kernel.cu (whose one asm is inlinePTX.cu's
# `mov.u32 %0, %%laneid;`) under callgrind, 2026-11-28: 1.405 -> 1.204 G instructions. The
# opcodes `_instruction` reads apart (`ld`, `st` ...) are left to the grammar.
_REGISTER_FROM_REGISTER = lazy_compile(
    r"[ \t\f\r\n]*([A-Za-z_]\w*(?:\.[\w:]+)*)[ \t\f\r\n]+%_asm(\d+)[ \t\f\r\n]*,[ \t\f\r\n]*%[A-Za-z_]\w*[ \t\f\r\n]*\Z"
)
_NOT_PLAIN = ("ld", "st", "red", "bar", "membar")
_MEMORY_OPCODES = ("ld", "st")


class AsmNotRead(Exception):
    """A template the PTX grammar does not read (or that is not one instruction after another)."""


@record
class AsmMemoryOp:
    """An `ld` or `st` of the template: its operands by number, as `%N` names them."""

    kind: str  # "load" or "store"
    space: str | None  # "global", "shared" ... as the opcode says; None for a generic address
    size: int  # bytes per lane
    is_float: bool
    is_signed: bool
    address: int  # the operand holding the address
    offset: int  # bytes added to it (`[%1+4]`)
    value: int | None  # the operand loaded into or stored from; None for a vector or a literal


@record
class AsmInstruction:
    opcode: str
    written: tuple[int, ...]  # the operands it writes
    memory: AsmMemoryOp | None = None


@functools.cache
def _parser() -> Any:
    """lark's LALR parser of ptx.lark, started at its `instruction` rule (built once, cached)."""
    grammar = grammar_path("ptx.lark").read_text(encoding="utf-8")
    options = {"parser": "lalr", "lexer": "contextual", "start": "instruction"}
    return lark_parser(grammar, options, "ptx-instruction")


def read_asm(template: str) -> list[AsmInstruction]:
    """The instructions of an inline-assembly template, in order."""
    text = template.replace("\\n", "\n").replace("\\t", " ")
    text = _OPERAND.sub(lambda m: "%" if m.group(1) == "%" else f"%_asm{m.group(1)}", text)
    out = []
    for piece in text.split(";"):
        if not piece.strip():
            continue
        plain = _REGISTER_FROM_REGISTER.match(piece)
        if plain is not None and plain.group(1).split(".")[0] not in _NOT_PLAIN:
            out.append(AsmInstruction(plain.group(1), (int(plain.group(2)),)))
            continue
        from lark.exceptions import LarkError

        try:
            tree = _parser().parse(piece + ";")
        except LarkError as err:
            raise AsmNotRead(f"the PTX grammar does not read `{' '.join(piece.split())}`") from err
        out.append(_instruction(tree))
    return out


def _operand_number(node: Any) -> int | None:
    """The `%N` an operand names, or None (a literal, a special register ...)."""
    if getattr(node, "data", None) != "reg":
        return None
    m = _OPERAND_REGISTER.match(str(node.children[0]))
    return int(m.group(1)) if m else None


def _instruction(tree: Any) -> AsmInstruction:
    from lark import Token

    opcode = next(str(c) for c in tree.children if isinstance(c, Token) and c.type == "OPCODE")
    operands = [c for c in tree.children if not isinstance(c, Token) and c.data != "guard"]
    parts = opcode.split(".")
    if parts[0] in _MEMORY_OPCODES and len(operands) == 2:
        memory = _memory_op(parts, operands)
        if memory is not None:
            written = (memory.value,) if memory.kind == "load" and memory.value is not None else ()
            return AsmInstruction(opcode, written, memory)
    first = _operand_number(operands[0]) if operands and parts[0] not in ("st", "red", "bar", "membar") else None
    return AsmInstruction(opcode, () if first is None else (first,))


def _memory_op(parts: list[str], operands: list[Any]) -> AsmMemoryOp | None:
    """`ld.global.f32 %0, [%1+4]` / `st.shared.v2.u32 [%0], {%1, %2}`, or None if not that shape."""
    kind = "load" if parts[0] == "ld" else "store"
    address, value = (operands[1], operands[0]) if kind == "load" else (operands[0], operands[1])
    if address.data != "address":
        return None
    base = _OPERAND_REGISTER.match(str(address.children[0]))
    if base is None:
        return None
    offset = sum(int(str(t)) for t in address.children[1:] if str(t).lstrip("-").isdigit())
    if any(str(t) == "-" for t in address.children[1:]):
        offset = -offset
    types = [p for p in parts if _TYPE.match(p)]
    if not types:
        return None
    lanes = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    space = next((s for p in parts for s in _SPACES if p == s or p.startswith(f"{s}::")), None)
    element = types[-1]
    return AsmMemoryOp(
        kind,
        space,
        int(element[1:]) // 8 * lanes,
        element[0] == "f",
        element[0] == "s",
        int(base.group(1)),
        offset,
        _operand_number(value) if lanes == 1 else None,
    )
