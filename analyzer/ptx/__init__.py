"""PTX front end: `parse_ptx(text, path) -> PtxModule` (see `nodes` for the node classes).

After parsing: `cfg.build_cfg` (basic blocks, loops), `dataflow.evaluate` (registers as
symbolic per-lane values, memory accesses), `analyze.analyze_entry` (costs by the CUDA-C
path's model) and `pipeline`'s steps, which `analyzer.api` chains for .ptx files and
`--via-ptx` (`ptx_source`, `parse_source`, `analyze_entries`, `collapse_copies`)."""

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
    "Addr",
    "AddrList",
    "Imm",
    "Not",
    "Operand",
    "ParamList",
    "PtxCallPrototype",
    "PtxFunction",
    "PtxInstruction",
    "PtxLabel",
    "PtxLoc",
    "PtxModule",
    "PtxParam",
    "PtxSyntaxError",
    "PtxVariable",
    "Reg",
    "RegPair",
    "Sink",
    "SpecialReg",
    "Statement",
    "Sym",
    "Vec",
    "grammar_path",
    "parse_ptx",
    "ptx_parser",
]
