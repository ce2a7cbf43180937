"""PTX front end: `parse_ptx(text, path) -> PtxModule` (see `nodes` for the node classes)."""

from analyzer.ptx.nodes import (
    Addr,
    AddrList,
    Imm,
    Not,
    Operand,
    ParamList,
    PtxCallPrototype,
    PtxFunction,
    PtxInstruction,
    PtxLabel,
    PtxLoc,
    PtxModule,
    PtxParam,
    PtxVariable,
    Reg,
    RegPair,
    Sink,
    SpecialReg,
    Statement,
    Sym,
    Vec,
)
from analyzer.ptx.parse import PtxSyntaxError, grammar_path, parse_ptx, ptx_parser

__all__ = [
    "Addr", "AddrList", "Imm", "Not", "Operand", "ParamList", "PtxCallPrototype", "PtxFunction",
    "PtxInstruction", "PtxLabel", "PtxLoc", "PtxModule", "PtxParam", "PtxSyntaxError", "PtxVariable",
    "Reg", "RegPair", "Sink", "SpecialReg", "Statement", "Sym", "Vec", "grammar_path", "parse_ptx",
    "ptx_parser",
]
