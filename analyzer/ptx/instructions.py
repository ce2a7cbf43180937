"""What one PTX instruction moves, reads and writes: the facts the dataflow needs of it.

`memory_space` and `element_bytes` say where and how much a memory instruction moves,
`written_registers` what an instruction writes, `instruction_text` how messages quote it, and
`demangle_variable` the source name of a function-local `static __shared__` array.
"""

from __future__ import annotations

from typing import Any

from analyzer.ir.nodes import AccessOp
from analyzer.ptx.nodes import Addr, PtxInstruction, Reg, RegPair, Vec

__all__ = [
    "FLOAT_TYPES",
    "MEMORY_OPS",
    "TYPE_BYTES",
    "demangle_variable",
    "element_bytes",
    "instruction_text",
    "is_float",
    "memory_space",
    "operand_registers",
    "type_of",
    "written_registers",
]

TYPE_BYTES = {
    "b8": 1,
    "u8": 1,
    "s8": 1,
    "b16": 2,
    "u16": 2,
    "s16": 2,
    "f16": 2,
    "bf16": 2,
    "b32": 4,
    "u32": 4,
    "s32": 4,
    "f32": 4,
    "f16x2": 4,
    "bf16x2": 4,
    "tf32": 4,
    "b64": 8,
    "u64": 8,
    "s64": 8,
    "f64": 8,
    "b128": 16,
}
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64", "f16x2", "bf16x2", "tf32"})
MEMORY_OPS = {
    "ld": AccessOp.LOAD,
    "ldu": AccessOp.LOAD,
    "st": AccessOp.STORE,
    "atom": AccessOp.ATOMIC,
    "red": AccessOp.ATOMIC,
}
SPACES = ("shared", "global", "local", "const", "param")


def memory_space(ins: PtxInstruction) -> str | None:
    """`shared`, `global`, `local`, `const`, `param`, or None for a generic address."""
    for m in ins.modifiers:
        base = m.split("::", 1)[0]
        if base in SPACES:
            return base
    return None


def element_bytes(ins: PtxInstruction) -> int:
    """Bytes one lane moves: the type's size times the `.v2`/`.v4`/`.v8` width."""
    size = next((TYPE_BYTES[m] for m in reversed(ins.modifiers) if m in TYPE_BYTES), 0)
    vec = next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), 1)
    return size * vec


def instruction_text(ins: PtxInstruction) -> str:
    """`ld.global.u32 [%rd6+128]`: the opcode and the address, as messages quote them."""
    addrs = [op for op in ins.operands if isinstance(op, Addr)]
    if not addrs:
        return ins.full_opcode

    def show(a: Addr) -> str:
        off = f"+{a.offset}" if a.offset > 0 else (str(a.offset) if a.offset < 0 else "")
        return f"[{a.base}{off}]"

    return f"{ins.full_opcode} " + ", ".join(show(a) for a in addrs)


def type_of(ins: PtxInstruction) -> str | None:
    """The type modifier of an instruction (`u32`, `pred`), None when it has none."""
    return next((m for m in reversed(ins.modifiers) if m in TYPE_BYTES or m == "pred"), None)


def is_float(ins: PtxInstruction) -> bool:
    """Whether an instruction works on floating-point values."""
    return any(m in FLOAT_TYPES for m in ins.modifiers)


def operand_registers(op: Any) -> list[str]:
    """The registers an operand names: one, a vector's, or both of a pair's."""
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Vec):
        return [x.name for x in op.items if isinstance(x, Reg)]
    if isinstance(op, RegPair):
        return operand_registers(op.first) + operand_registers(op.second)
    return []


def written_registers(ins: PtxInstruction) -> list[str]:
    """The registers an instruction writes (its first operand, except for stores)."""
    if not ins.operands or ins.opcode in ("st", "red", "bra", "brx", "bar", "ret", "exit", "membar", "fence"):
        return []
    if ins.opcode == "call":
        return []
    return operand_registers(ins.operands[0])


def demangle_variable(name: str) -> str:
    """`data` for a function-local static `_ZZ12bank_stride4PKiPiiE4data`; the name itself
    for anything else."""
    if not name.startswith("_ZZ"):
        return name
    body = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() and "E" in name else name
    i = body.rfind("E")
    while i > 0:
        j = i + 1
        digits = ""
        while j < len(body) and body[j].isdigit():
            digits += body[j]
            j += 1
        if digits and j + int(digits) == len(body):
            return body[j:]
        i = body.rfind("E", 0, i)
    return name
