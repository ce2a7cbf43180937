"""Parse PTX text into `analyzer.ptx.nodes`.

    parse_ptx(text, path) -> PtxModule

The LALR parser of `grammars/ptx.lark` runs with `_Builder` (a lark
`Transformer`) passed into `Lark(...)`, so nodes are built while parsing and no
parse tree is made; every position comes from a token's `line`.

The whole file is parsed at once. If that fails and `recover=True`, the file is
cut into top-level items (a function, a declaration, a directive line) by a
small scanner that only counts braces outside comments and strings, and each
item is parsed on its own: one unsupported construct then loses one function,
not the file, and is reported in `PtxModule.diagnostics`. An item is parsed
with as many newlines and spaces in front of it as it had in the file, so line
and column numbers stay exact.
"""

from __future__ import annotations

import re
import struct
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.grammar_files import grammar_path, lark_parser
from analyzer.ptx.nodes import (
    Addr,
    AddrList,
    Imm,
    Not,
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
from analyzer.ptx.scan import FUNCTION_NAME, debug_strings, function_at, split_items

__all__ = ["SPECIAL_REGISTERS", "PtxSyntaxError", "grammar_path", "parse_ptx", "ptx_parser"]

GRAMMAR = "ptx.lark"
SYNTAX_ERROR_CODE = "WL901"


class PtxSyntaxError(Exception):
    """PTX that the grammar does not accept; `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int, path: str | None = None, function: str | None = None):
        super().__init__(message, line, column)
        self.message = message
        self.line = line
        self.column = column
        self.path = path
        self.function = function  # the function holding the error, if any

    def __str__(self) -> str:
        where = f"{self.path}:" if self.path else ""
        inside = f" (in function `{self.function}`)" if self.function else ""
        return f"{where}{self.line}:{self.column}: {self.message}{inside}"

    def to_diagnostic(self) -> Diagnostic:
        loc = Location(self.path or "<ptx>", self.line, self.column, self.line, self.column + 1)
        notes = (f"function `{self.function}` was skipped",) if self.function else ()
        return Diagnostic(Severity.ERROR, self.message, SYNTAX_ERROR_CODE, location=loc, notes=notes)


# ---------------------------------------------------------------- the parser


@cache
def ptx_parser(strict: bool = False, tree: bool = False) -> Lark:
    """The LALR parser for PTX, built once per process and cached on disk by the grammar's hash.

    It builds nodes while parsing (`parse` returns a list of top-level items); with
    `tree=True` it returns lark `Tree`s instead. `strict=True` (the tests) makes a
    shift/reduce conflict or a terminal collision an error.
    """
    grammar = grammar_path(GRAMMAR).read_text(encoding="utf-8")
    options: dict = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False}
    if strict:
        options["strict"] = True
    if not tree:
        options["transformer"] = _Builder()
    return lark_parser(grammar, options, None if strict else "ptx")


# ---------------------------------------------------------------- the builder

SPECIAL_REGISTERS = (
    frozenset(
        """%tid %ntid %laneid %warpid %nwarpid %ctaid %nctaid %smid %nsmid %gridid
        %clusterid %nclusterid %cluster_ctaid %cluster_nctaid %cluster_ctarank %cluster_nctarank
        %is_explicit_cluster %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt
        %clock %clock_hi %clock64 %globaltimer %globaltimer_lo %globaltimer_hi
        %total_smem_size %aggr_smem_size %dynamic_smem_size %current_graph_exec
        %reserved_smem_offset_begin %reserved_smem_offset_end %reserved_smem_offset_cap
        %reserved_smem_offset_0 %reserved_smem_offset_1""".split()  # noqa: SIM905 - a word list reads best as one string
    )
    | frozenset(f"%pm{i}" for i in range(8))
    | frozenset(f"%pm{i}_64" for i in range(8))
    | frozenset(f"%envreg{i}" for i in range(32))
)

_SINK = Sink()
_NANS: dict[str, float] = {}


def _number(s: str) -> int | float:
    """A PTX numeric literal: 0f3F800000, 0d..., 0x1F, 0b101, 017 (octal), 1.5e3, -4, 7U."""
    neg = s[0] == "-"
    body = s[1:] if neg else s
    if body[-1] in "uU":
        body = body[:-1]
    if len(body) == 1:
        v: int | float = int(body)
    else:
        p = body[:2].lower()
        if p == "0f" and len(body) == 10:
            v = struct.unpack(">f", bytes.fromhex(body[2:]))[0]
        elif p == "0d" and len(body) == 18:
            v = struct.unpack(">d", bytes.fromhex(body[2:]))[0]
        elif p == "0x":
            v = int(body[2:], 16)
        elif p == "0b":
            v = int(body[2:], 2)
        elif "." in body or "e" in body or "E" in body:
            v = float(body)
        elif body[0] == "0" and body.isdigit() and "8" not in body and "9" not in body:
            v = int(body, 8)  # PTX octal: 017
        else:
            v = int(body)
    if neg:
        v = -v
    if v != v:  # one object per NaN literal, so that equal literals give equal nodes
        v = _NANS.setdefault(s.lower(), v)
    return v


def _reg(tok: str) -> Reg | SpecialReg:
    if tok.partition(".")[0] in SPECIAL_REGISTERS:
        return SpecialReg(str(tok))
    return Reg(str(tok))


def _value(tok: Token) -> Reg | SpecialReg | Sym | Sink:
    if tok.type == "REG":
        return _reg(tok)
    return _SINK if tok == "_" else Sym(str(tok))


def _label_name(tok: Token) -> str:
    return tok[:-1].rstrip()


def _unquote(tok) -> str:
    s = str(tok)[1:-1]
    return re.sub(r"\\(.)", r"\1", s) if "\\" in s else s


def _array_size(dims: tuple) -> int | None:
    if not dims:
        return None
    size = 1
    for d in dims:
        if d is None:
            return 0
        size *= d
    return size


class _Insn:
    """An instruction before its function knows which `.loc` is in effect."""

    __slots__ = ("line", "opcode", "operands", "predicate")

    def __init__(self, opcode, predicate, operands, line):
        self.opcode = opcode
        self.predicate = predicate
        self.operands = operands
        self.line = line


class _Loc:
    __slots__ = ("function_name", "inlined_at", "loc")

    def __init__(self, loc, inlined_at, function_name):
        self.loc = loc
        self.inlined_at = inlined_at
        self.function_name = function_name


class _Block(tuple):
    """The statements of a `{ }` block inside a body."""


class _Tagged(tuple):
    """(tag, value), made by a rule whose parent must tell its children apart."""


def _tag(tag: str, value) -> _Tagged:
    return _Tagged((tag, value))


def _attrs(children) -> tuple[dict, list]:
    """Split the `_var_attr*` tokens of a param or declaration from what follows them."""
    out: dict = {"spaces": [], "attributes": ()}
    rest = []
    it = iter(children)
    for c in it:
        t = getattr(c, "type", None)
        if t == "ALIGN":
            out["align"] = _number(next(it))
        elif t == "TYPE":
            out["type"] = c[1:]
        elif t == "VECTOR":
            out["vector"] = int(c[2:])
        elif t == "PTR":
            out["ptr"] = True
        elif t == "SPACE":
            out["spaces"].append(c[1:])
        elif type(c) is _Tagged and c[0] == "attribute":
            out["attributes"] = c[1]
        else:
            rest.append(c)
    return out, rest


@v_args(inline=True)
class _Builder(Transformer):
    """Builds nodes for the rules of ptx.lark; stateless, so one instance serves every parse.

    A function comes out as ("function", parts): `_assemble` makes the
    `PtxFunction` once the `.debug_str` names are known.
    """

    # -- module-level items
    def start(self, *items):
        return list(items)

    def version(self, _kw, v):
        return _tag("version", str(v))

    def target(self, _kw, *names):
        return _tag("target", tuple(str(n) for n in names))

    def address_size(self, _kw, n):
        return _tag("address_size", _number(n))

    def file(self, _kw, index, path, *_stamps):
        return _tag("file", (_number(index), _unquote(path)))

    def pragma(self, _kw, *strings):
        return _tag("pragma", "; ".join(_unquote(s) for s in strings))

    def alias(self, _kw, name, aliasee):
        return _tag("alias", (str(name), str(aliasee)))

    def linkage(self, *toks):
        return tuple(t[1:] for t in toks)

    # -- declarations
    def attribute(self, _kw, *items):
        return _tag("attribute", items)

    def attribute_item(self, name, *_numbers):
        return str(name)[1:]

    def reg_range(self, n):
        return _tag("count", _number(n))

    def dim(self, n=None):
        return _tag("dim", None if n is None else _number(n))

    def init_list(self, *items):
        return tuple(items)

    def init_number(self, n):
        return _number(n)

    def init_symbol(self, name, offset=None):
        return f"{name}+{_number(offset)}" if offset is not None else str(name)

    def init_generic(self, fn, name, offset=None):
        s = f"{fn}({name})"
        return f"{s}+{_number(offset)}" if offset is not None else s

    def declarator(self, name, *rest):
        count = None
        dims = []
        init = None
        for r in rest:
            if type(r) is _Tagged and r[0] == "count":
                count = r[1]
            elif type(r) is _Tagged and r[0] == "dim":
                dims.append(r[1])
            else:
                init = r
        return (str(name), name.line, count, tuple(dims), init)

    def var_decl(self, linkage, space, *children):
        attrs, declarators = _attrs(children)
        return _tag(
            "decls",
            [
                PtxVariable(
                    space=space[1:],
                    name=name,
                    type=attrs.get("type"),
                    align=attrs.get("align"),
                    array_size=_array_size(dims),
                    line=line,
                    dims=dims,
                    vector=attrs.get("vector"),
                    count=count,
                    linkage=linkage,
                    attributes=attrs["attributes"],
                    init=init,
                )
                for name, line, count, dims, init in declarators
            ],
        )

    def param(self, *children):
        while children[0].type == "LINKAGE":  # `.hidden .param ...`
            children = children[1:]
        space, *children = children
        attrs, rest = _attrs(children)
        name = rest[0]
        dims = tuple(r[1] for r in rest[1:])
        spaces = attrs["spaces"]
        return PtxParam(
            name=str(name),
            type=attrs.get("type"),
            align=attrs.get("align"),
            space=space[1:],
            line=name.line,
            array_size=_array_size(dims),
            vector=attrs.get("vector"),
            ptr_space=spaces[0] if spaces else ("generic" if attrs.get("ptr") else None),
        )

    def returns(self, *params):
        return _tag("returns", params)

    def params(self, *params):
        return _tag("params", params)

    def perf(self, tok, *numbers):
        return _tag("perf", (str(tok)[1:], tuple(_number(n) for n in numbers)))

    # -- functions
    def function(self, linkage, kind, *rest):
        returns = params = ()
        name = None
        perf = []
        body = None
        for r in rest:
            if type(r) is Token:
                name = r
            else:
                tag, value = r
                if tag == "returns":
                    returns = value
                elif tag == "params":
                    params = value
                elif tag == "perf":
                    perf.append(value)
                elif tag == "body":
                    body = value
        directives = dict(perf)
        fields = {
            "name": str(name),
            "is_entry": kind.type == "ENTRY",
            "params": params,
            "line": kind.line,
            "returns": returns,
            "linkage": linkage,
            "maxntid": directives.get("maxntid"),
            "reqntid": directives.get("reqntid"),
            "minnctapersm": _first(directives.get("minnctapersm")),
            "maxnreg": _first(directives.get("maxnreg")),
            "directives": tuple(perf),
        }
        return _tag("function", (fields, body))

    def body(self, *stmts):
        *stmts, rbrace = stmts
        return _tag("body", (stmts, rbrace.line))

    def block(self, *stmts):
        return _Block(stmts)

    def label(self, tok):
        return PtxLabel(_label_name(tok), tok.line)

    def callprototype(self, label, _kw, *rest):
        returns = params = ()
        seen_name = False
        for r in rest:
            if type(r) is Token:
                seen_name = seen_name or r.type == "NAME"
            elif seen_name:
                params = r[1]
            else:
                returns = r[1]
        return _tag("prototype", PtxCallPrototype(_label_name(label), returns, params, label.line))

    def branchtargets(self, label, _kw, *names):
        return _tag("targets", (_label_name(label), tuple(str(n) for n in names)))

    calltargets = branchtargets

    def loc(self, _kw, file, line, column, *attrs):
        inlined_at = function_name = None
        for key, value in attrs:
            if key == "inlined_at" and len(value) == 3:
                inlined_at = PtxLoc(*value)
            elif key == "function_name":
                function_name = value
        return _Loc(PtxLoc(_number(file), _number(line), _number(column)), inlined_at, function_name)

    def loc_name(self, key, value):
        return (str(key), str(value))

    def loc_numbers(self, key, *numbers):
        return (str(key), tuple(_number(n) for n in numbers))

    # -- instructions
    def instruction(self, first, *rest):
        if type(first) is Token:
            return _Insn(first, None, rest, first.line)
        return _Insn(rest[0], first, rest[1:], rest[0].line)

    def guard(self, tok):
        return (Reg(str(tok)), False)

    def negated_guard(self, tok):
        return (Reg(str(tok)), True)

    def reg(self, tok):
        return _reg(tok)

    def sym(self, tok, offset=None):
        if offset is not None:
            return Sym(str(tok), _number(offset))
        return _SINK if tok == "_" else Sym(str(tok))

    def imm(self, tok):
        return Imm(_number(tok))

    def reg_pair(self, a, b):
        return RegPair(_value(a), _value(b))

    def negated(self, tok):
        return Not(_value(tok))

    def address(self, base, *offset):
        if not offset:
            return Addr(str(base), 0)
        if len(offset) == 2:  # MINUS NUMBER
            return Addr(str(base), -_number(offset[1]))
        return Addr(str(base), _number(offset[0]))

    def addr_list(self, *items):
        return AddrList(items)

    def vec(self, *items):
        return Vec(items)

    def param_list(self, *items):
        return ParamList(items)


def _first(values):
    return values[0] if values else None


def _assemble(fields: dict, body, debug_strings: dict[str, str]) -> PtxFunction:
    """A function's parts -> `PtxFunction`: flatten `{ }` blocks, attach `.loc`, collect declarations."""
    if body is None:
        return PtxFunction(body=(), end_line=fields["line"], defined=False, **fields)
    stmts, end_line = body
    out: list[Statement] = []
    decls: list[PtxVariable] = []
    pragmas: list[str] = []
    prototypes: list[PtxCallPrototype] = []
    targets: list = []
    loc = inlined_at = inlined_from = None
    stack = [iter(stmts)]
    while stack:
        for s in stack[-1]:
            t = type(s)
            if t is _Insn:
                opcode, *mods = s.opcode.split(".")
                out.append(
                    PtxInstruction(opcode, tuple(mods), s.predicate, s.operands, s.line, loc, inlined_at, inlined_from)
                )
            elif t is PtxLabel:
                out.append(s)
            elif t is _Loc:
                loc, inlined_at = s.loc, s.inlined_at
                inlined_from = debug_strings.get(s.function_name, s.function_name)
            elif t is _Block:
                stack.append(iter(s))
                break
            else:
                tag, value = s
                if tag == "decls":
                    decls.extend(value)
                elif tag == "pragma":
                    pragmas.append(value)
                elif tag == "prototype":
                    prototypes.append(value)
                elif tag == "targets":
                    targets.append(value)
        else:
            stack.pop()
    named_regs = {d.name for d in decls if d.space == "reg" and not d.name.startswith("%")}
    if named_regs:  # inline asm: `.reg .pred p; @p add ...`: `p` is a register, not a symbol
        out = [_rename(s, named_regs) for s in out]
    return PtxFunction(
        body=tuple(out),
        end_line=end_line,
        decls=tuple(decls),
        pragmas=tuple(pragmas),
        prototypes=tuple(prototypes),
        branch_targets=tuple(targets),
        **fields,
    )


def _rename(stmt: Statement, names: set[str]) -> Statement:
    """Turn the symbols in `names` (registers declared without `%`) into `Reg`s."""
    if not isinstance(stmt, PtxInstruction):
        return stmt

    def fix(op):
        t = type(op)
        if t is Sym and op.name in names:
            return Reg(op.name)
        if t is Vec or t is AddrList or t is ParamList:
            return t(tuple(fix(i) for i in op.items))
        if t is RegPair:
            return RegPair(fix(op.first), fix(op.second))
        if t is Not:
            return Not(fix(op.operand))
        return op

    operands = tuple(fix(o) for o in stmt.operands)
    if operands == stmt.operands:
        return stmt
    return PtxInstruction(
        stmt.opcode, stmt.modifiers, stmt.predicate, operands, stmt.line, stmt.loc, stmt.inlined_at, stmt.inlined_from
    )


# ---------------------------------------------------------------- parse_ptx


def parse_ptx(text: str, path: str = "<ptx>", *, recover: bool = False) -> PtxModule:
    """Parse the PTX `text` read from `path`.

    Raises `PtxSyntaxError` at the first construct the grammar does not accept,
    with its exact line and column. With `recover=True`, skips the top-level item
    (usually a function) that holds each error instead, and lists the errors in
    `PtxModule.diagnostics` and the functions lost in `PtxModule.failed_functions`.
    """
    parser = ptx_parser()
    try:
        items = _parse(parser, text, path)
    except PtxSyntaxError as first:
        spans = split_items(text)
        first.function = function_at(text, spans, first.line)
        if not recover:
            raise first from None
        return _module(*_parse_items(parser, text, path, spans), text, path)
    return _module(items, [], [], text, path)


def _parse_items(
    parser: Lark, text: str, path: str, spans: list[tuple[int, int]]
) -> tuple[list, list[Diagnostic], list[str]]:
    """Parse each top-level item on its own; -> (items, diagnostics, failed functions)."""
    items: list = []
    diagnostics: list[Diagnostic] = []
    failed: list[str] = []
    line = 1
    last = 0
    for start, end in spans:
        line += text.count("\n", last, start)
        last = start
        column = start - text.rfind("\n", 0, start) - 1
        try:
            # the item keeps its line and column: newlines and spaces stand in for what precedes it
            items.extend(_parse(parser, "\n" * (line - 1) + " " * column + text[start:end], path, line))
        except PtxSyntaxError as e:
            m = FUNCTION_NAME.search(text, start, min(end, start + 300))
            e.function = m.group(1) if m else None
            diagnostics.append(e.to_diagnostic())
            if e.function:
                failed.append(e.function)
    return items, diagnostics, failed


def _parse(parser: Lark, text: str, path: str, first_line: int = 1) -> Any:
    try:
        return parser.parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, path) from None
    except (VisitError, ValueError, TypeError, IndexError, KeyError) as e:  # pragma: no cover - a builder bug
        raise PtxSyntaxError(f"cannot build the nodes: {e!r}", first_line, 1, path) from None


def _module(items: list, diagnostics: list, failed: list, text: str, path: str) -> PtxModule:
    header: dict = {}
    files: dict[int, str] = {}
    globals_: list[PtxVariable] = []
    functions: list[PtxFunction] = []
    declarations: list[PtxFunction] = []
    aliases: list[tuple[str, str]] = []
    names = debug_strings(text) if "function_name" in text else {}
    for tag, value in items:
        if tag == "function":
            fields, body = value
            fn = _assemble(fields, body, names)
            (functions if fn.defined else declarations).append(fn)
        elif tag == "decls":
            globals_.extend(value)
        elif tag == "file":
            files[value[0]] = value[1]
        elif tag == "alias":
            aliases.append(value)
        elif tag in ("version", "target", "address_size"):
            header[tag] = value
    target = header.get("target", ())
    return PtxModule(
        path=path,
        version=header.get("version"),
        target=target[0] if target else None,
        address_size=header.get("address_size"),
        files=files,
        globals=tuple(globals_),
        functions=tuple(functions),
        declarations=tuple(declarations),
        target_options=tuple(target[1:]),
        diagnostics=tuple(diagnostics),
        failed_functions=tuple(failed),
        aliases=tuple(aliases),
    )


def _syntax_error(e: UnexpectedInput, text: str, path: str) -> PtxSyntaxError:
    at_end = isinstance(e, UnexpectedToken) and e.token.type == "$END"
    if at_end or isinstance(e, UnexpectedEOF) or getattr(e, "line", -1) in (-1, None):
        return PtxSyntaxError(
            "unexpected end of input (missing `;` or `}`?)",
            text.count("\n") + 1,
            len(text) - text.rfind("\n"),
            path,
        )
    if isinstance(e, UnexpectedCharacters):
        message = f"unexpected character {text[e.pos_in_stream or 0]!r}"
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        message = f"unexpected {_describe(tok.type)} {str(tok)!r}"
    else:  # pragma: no cover - other UnexpectedInput kinds
        message = "syntax error"
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    if expected:
        shown = ", ".join(_describe(t) for t in expected[:8])
        message += f"; expected {shown}" + (", ..." if len(expected) > 8 else "")
    return PtxSyntaxError(message, e.line, e.column, path)


_PUNCT = {
    "SEMICOLON": "';'",
    "COMMA": "','",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LPAR": "'('",
    "RPAR": "')'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "VBAR": "'|'",
    "AT": "'@'",
    "BANG": "'!'",
    "EQUAL": "'='",
    "LESSTHAN": "'<'",
    "MORETHAN": "'>'",
}


def _describe(terminal: str) -> str:
    return _PUNCT.get(terminal, terminal)
