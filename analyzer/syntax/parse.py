"""Parse preprocessed CUDA text into the AST of analyzer.syntax.ast.

The text is first cut into top-level declarations (namespaces and `extern "C"` blocks are
opened, not parsed), and each is parsed on its own with the LALR parser of cuda.lark, so
one construct the subset does not cover costs one declaration, never the file. Inside a
function body, a statement that does not parse is blanked out, reported once under the
name of the construct it holds (a lambda, a range-based for ...), and the body is parsed
again: the rest of the kernel is still analysed.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Iterator

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.gc_pause import gc_paused
from analyzer.grammar_files import cache_file, grammar_path
from analyzer.records import field, record
from analyzer.syntax import ast as A
from analyzer.syntax import tables as parse_tables
from analyzer.syntax.lalr import Meta, ParseError, Parser, Token

if TYPE_CHECKING:
    from lark import Lark

MAX_RETRIES_PER_DECLARATION = 64
MAX_NESTING = 256  # braces/parens deeper than this are refused before the LALR parser sees them
# Lark reads about 60 kB of CUDA a second: a declaration with more than this many non-blank
# characters (over ten times the largest in NVIDIA's cuda-samples) is refused with WL901, and
# the inside of a large initializer (a generated lookup table) is not parsed at all.
MAX_DECLARATION_CHARS = 256_000
LARGE_INITIALIZER_CHARS = 64_000

# ----------------------------------------------------------------------------- grammar loading


@functools.lru_cache(maxsize=None)
def cuda_tables() -> parse_tables.Tables:
    """The LALR tables of cuda.lark: loaded from the cache, or built with lark once and cached."""
    return parse_tables.load("cuda.lark", CudaPostLexer.always_accept)


@functools.lru_cache(maxsize=None)
def _driver() -> Parser:
    return Parser(cuda_tables(), with_extents=_OPERATOR_CHAINS)


@functools.lru_cache(maxsize=None)
def cuda_parser(strict: bool = False) -> "Lark":
    """lark's own LALR parser for cuda.lark, with positions and the postlexer: what the tests
    check the grammar with (strict mode) and compare the table driver with. `parse` does not
    use it; `analyzer.syntax.tables` builds its tables with lark on its own."""
    from lark import Lark
    from lark import Token as LarkToken

    text = grammar_path("cuda.lark").read_text()
    options: dict[str, Any] = dict(
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        postlex=CudaPostLexer(LarkToken),
        strict=strict,
    )
    if not strict:
        cache = cache_file("cuda", text)
        if cache is not None:
            options["cache"] = cache
    try:
        return Lark(text, **options)
    except (OSError, EOFError, ValueError):  # an unwritable or damaged cache: build without it
        options.pop("cache", None)
        return Lark(text, **options)


# ----------------------------------------------------------------------------- type-name table

_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while bool true false class public private protected template typename
    namespace using new delete this operator virtual friend throw try catch nullptr constexpr
    static_cast reinterpret_cast const_cast dynamic_cast alignas alignof decltype explicit mutable
    noexcept override final static_assert __global__ __device__ __host__ __shared__ __constant__
    __managed__ __forceinline__ __noinline__ __restrict__ __restrict __inline__ __align__
    __launch_bounds__ __attribute__ __alignof__ _Bool""".split()
)

_BUILTIN_TYPES = frozenset(
    """size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t uint8_t int16_t uint16_t int32_t uint32_t
    int64_t uint64_t uint ushort uchar ulong dim3 cudaError_t cudaStream_t cudaEvent_t __half half
    __half2 half2 __nv_bfloat16 __nv_bfloat162 nv_bfloat16 cudaDeviceProp cudaEvent cudaArray
    cudaTextureObject_t cudaSurfaceObject_t cudaChannelFormatDesc cudaExtent cudaPitchedPtr
    cudaMemcpy3DParms FILE clock_t time_t va_list""".split()
)
_VECTOR_BASES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                 "ulonglong", "float", "double")
_BUILTIN_TYPES |= frozenset(f"{b}{n}" for b in _VECTOR_BASES for n in (1, 2, 3, 4))


@record(frozen=False, slots=False)
class TypeTable:
    """Names that denote types or templates, in nested scopes (pushed at `{`, popped at `}`)."""

    scopes: list[set[str]] = field(default_factory=lambda: [set(_BUILTIN_TYPES)])
    templates: set[str] = field(default_factory=set)

    def is_type(self, name: str) -> bool:
        short = name.rsplit("::", 1)[-1]
        return any(name in s or short in s for s in self.scopes)

    def add(self, name: str) -> None:
        self.scopes[-1].add(name)


_IDENT_START = re.compile(r"\s*([A-Za-z_:])")
_NEXT_CHAR = re.compile(r"\s*(\S)(\S?)")
_TEMPLATE_USE = re.compile(r"\s*<[\w\s,*:]*>\s*(\(|::|<<<|[A-Za-z_]|[*&]+\s*[A-Za-z_])")
_WORD = re.compile(r"\s*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)")


class CudaPostLexer:
    """Turns IDENTIFIER into TYPE_NAME / TEMPLATE_NAME from a scoped table.

    It looks ahead in the raw text instead of buffering tokens, so the contextual lexer
    stays in step with the parser.
    """

    always_accept = ("IDENTIFIER",)

    def __init__(self, token_class: type = Token) -> None:
        self.table = TypeTable()
        self.text = ""
        self.token_class = token_class  # lark's Token when lark's own parser drives it

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        table = self.table
        text = self.text
        retyped = self.token_class.new_borrow_pos
        local_types: set[str] = set()
        table.scopes.append(local_types)  # template parameters of this declaration
        depth_at_start = len(table.scopes)
        prev: Token | None = None
        in_template_params = 0
        typedef_depth: int | None = None
        typedef_last: str | None = None
        struct_pending = False
        struct_paren = 0
        template_entity_pending = False
        paren_depth = 0
        try:
            for tok in stream:
                value = tok.value
                ttype = tok.type
                if ttype == "IDENTIFIER":
                    if prev is not None and prev.value in ("struct", "class", "union", "enum") and prev.type != "IDENTIFIER" or (
                        struct_pending and paren_depth == struct_paren  # not a name inside `alignas(double2)`
                    ):
                        if value in table.templates and self._followed_by_template_args(tok):
                            # `template <> struct SharedMemory<int> {`: a specialization
                            struct_pending = False
                            tok = retyped("TEMPLATE_NAME", value, tok)
                            prev = tok
                            yield tok
                            continue
                        self._declare(value, depth_at_start)
                        if template_entity_pending:
                            table.templates.add(value)
                            template_entity_pending = False
                        struct_pending = False
                        prev = tok
                        yield tok
                        continue
                    if prev is not None and prev.value == "typename" and in_template_params:
                        local_types.add(value)
                        tok = retyped("TYPE_NAME", value, tok)
                    elif prev is not None and prev.value == "using":
                        nxt = _NEXT_CHAR.match(text, tok.end_pos)
                        if nxt and nxt.group(1) == "=":
                            self._declare(value, depth_at_start)
                    elif self._followed_by_template_args(tok) and (
                        value in table.templates or "::" in value or self._looks_like_template_use(tok)
                    ):
                        tok = retyped("TEMPLATE_NAME", value, tok)
                    elif table.is_type(value) and not self._followed_by_member_access(tok):
                        # (`struct hostData *hostData; hostData->x`: a variable named like its type)
                        tok = retyped("TYPE_NAME", value, tok)
                    elif self._followed_by_identifier(tok) and value not in _KEYWORDS:
                        # two names in a row only start a declaration: `cg::thread_block cta`
                        tok = retyped("TYPE_NAME", value, tok)
                    if typedef_depth is not None and paren_depth == 0:
                        typedef_last = value
                    if template_entity_pending and paren_depth == 0:
                        nxt = _NEXT_CHAR.match(text, tok.end_pos)
                        if nxt and nxt.group(1) == "(":
                            table.templates.add(value)
                            template_entity_pending = False
                else:
                    if value == "template":
                        in_template_params = -1  # waiting for `<`
                    elif value == "<" and in_template_params == -1:
                        in_template_params = 1
                    elif in_template_params > 0 and value == "<":
                        in_template_params += 1
                    elif in_template_params > 0 and value == ">":
                        in_template_params -= 1
                        if in_template_params == 0:
                            template_entity_pending = True
                    elif value == "class" and in_template_params > 0:
                        tok = retyped("TYPENAME", "typename", tok)
                        value = "typename"
                    elif value in ("struct", "class", "union") and tok.type != "IDENTIFIER":
                        nxt = _WORD.match(text, tok.end_pos)
                        if nxt and nxt.group(1) in ("__align__", "alignas", "__attribute__"):
                            struct_pending = True
                            struct_paren = paren_depth
                    elif value == "typedef":
                        typedef_depth = len(table.scopes)
                        typedef_last = None
                    elif value == "(":
                        paren_depth += 1
                    elif value == ")":
                        paren_depth -= 1
                    elif value == "{":
                        table.scopes.append(set())
                        struct_pending = False
                    elif value == "}":
                        if len(table.scopes) > depth_at_start:
                            table.scopes.pop()
                    elif value in (";", ",") and typedef_depth is not None and len(table.scopes) == typedef_depth:
                        if typedef_last:
                            self._declare(typedef_last, depth_at_start)
                        typedef_last = None
                        if value == ";":
                            typedef_depth = None
                    if value == ";" and template_entity_pending and paren_depth == 0:
                        template_entity_pending = False
                prev = tok
                yield tok
        finally:
            while len(table.scopes) > depth_at_start:
                table.scopes.pop()
            if table.scopes and table.scopes[-1] is local_types:
                table.scopes.pop()

    def _declare(self, name: str, depth_at_start: int) -> None:
        """Declare a type name in the innermost real scope (not this declaration's template scope)."""
        scopes = self.table.scopes
        target = scopes[-1] if len(scopes) > depth_at_start else scopes[depth_at_start - 2]
        target.add(name)

    def _looks_like_template_use(self, tok: Token) -> bool:
        # `SharedMemory<T>()`, `Foo<float, 4> x`, `k<T><<<g, b>>>`: a name whose `<...>` closes and
        # is followed by `(`, `::`, `<<<` or a name. Conditions like `x < n && y > m` do not match,
        # because `&`, `|`, `(` and `;` are not allowed between the brackets.
        return bool(_TEMPLATE_USE.match(self.text, tok.end_pos))

    def _followed_by_template_args(self, tok: Token) -> bool:
        m = _NEXT_CHAR.match(self.text, tok.end_pos)
        return bool(m and m.group(1) == "<" and m.group(2) not in ("<", "="))

    def _followed_by_member_access(self, tok: Token) -> bool:
        m = _NEXT_CHAR.match(self.text, tok.end_pos)
        return bool(m and (m.group(1) == "-" and m.group(2) == ">" or m.group(1) == "." and m.group(2) != "."))

    def _followed_by_identifier(self, tok: Token) -> bool:
        m = _WORD.match(self.text, tok.end_pos)
        if not m:
            return False
        word = m.group(1)
        return word not in _KEYWORDS or word in ("const", "volatile", "__restrict__")


# ----------------------------------------------------------------------------- transformer


def _int_value(text: str) -> int:
    t = text.replace("'", "").rstrip("uUlL")
    if t[:2] in ("0x", "0X"):
        return int(t[2:] or "0", 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t, 8)
    return int(t)


def _float_value(text: str) -> float:
    t = text.rstrip("fFlL")
    try:
        if t[:2] in ("0x", "0X"):
            return float.fromhex(t)
        return float(t)
    except ValueError:
        return 0.0


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11}


def _node_text(node: A.Node) -> str:
    """A short spelling of a template argument, for naming a specialization."""
    if isinstance(node, A.TypeName):
        return " ".join(node.specs.type.names) + "*" * sum(1 for k, _ in node.derivations if k == "pointer")
    if isinstance(node, A.Constant):
        return node.text
    if isinstance(node, A.Identifier):
        return node.name
    if isinstance(node, A.UnaryOp) and isinstance(node.operand, A.Constant):
        return node.op + node.operand.text
    return "?"


def _char_value(text: str) -> int:
    body = text[text.index("'") + 1 : -1]
    if body.startswith("\\"):
        return _ESCAPES.get(body[1:2], ord(body[1:2] or "\0"))
    return ord(body[0]) if body else 0


_OPERATOR_CHAINS = frozenset({"binary_expression", "shift_expression"})
# C's binary operators, tightest first; all associate to the left
_PRECEDENCE = {
    **dict.fromkeys(("*", "/", "%"), 10), **dict.fromkeys(("+", "-"), 9), **dict.fromkeys(("<<", ">>"), 8),
    **dict.fromkeys(("<", ">", "<=", ">="), 7), **dict.fromkeys(("==", "!="), 6),
    "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1,
}


class ToAst:
    """Builds AST nodes as the parser reduces rules; spans are shifted by `offset` (the
    chunk's start). A rule's method is called with (meta, *kept children), the operator
    chains with `extents` too."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.methods = _ast_methods()

    def reduce(self, rule: parse_tables.RuleSpec, children: list[Any], meta: Meta,
               extents: list[tuple[int | None, int | None]] | None) -> Any:
        method = self.methods[rule.name]
        if extents is not None:
            offset = self.offset
            return method(self, meta, *children, extents=[(s + offset, e + offset) for s, e in extents])
        return method(self, meta, *children)

    def _span(self, meta: Meta) -> Span:
        if meta.empty:
            return Span(self.offset, self.offset)
        return Span(meta.start_pos + self.offset, meta.end_pos + self.offset)

    def _tok_span(self, tok: Token) -> Span:
        return Span(tok.start_pos + self.offset, tok.end_pos + self.offset)

    # ---- top level
    def start(self, meta, *decls):
        return A.TranslationUnit(tuple(d for d in decls if d is not None), self._span(meta))

    def empty_declaration(self, meta, *_):
        return None

    def access_label(self, meta, *_):
        return None

    def template_declaration(self, meta, *children):
        params = tuple(c for c in children[:-1] if isinstance(c, A.TemplateParam))
        decl = children[-1]
        if isinstance(decl, A.FunctionDef):
            # the definition spans its `template <...>` head too, so it holds its parameters
            return A.FunctionDef(decl.specs, decl.declarator, decl.body, self._span(meta), params)
        return A.TemplateDecl(params, decl, self._span(meta))

    def type_template_parameter(self, meta, name, default):
        return A.TemplateParam("type", str(name) if name is not None else None, self._span(meta), default)

    def value_template_parameter(self, meta, specs, declarator, default):
        return A.TemplateParam("value", declarator.name, self._span(meta), default, specs)

    def function_definition(self, meta, specs, declarator, *rest):
        body = rest[-1]
        return A.FunctionDef(specs, declarator, body, self._span(meta))

    def function_suffix(self, meta, *_):
        return None

    # constructors, destructors, `using` and namespace aliases (cuda.lark says which forms)
    def constructor_definition(self, meta, specs, params, *rest):
        name = specs.type.names[-1] if specs.type.names else "<constructor>"
        if specs.type.template_args and len(specs.type.names) > 1:
            # not a constructor: `template <> __device__ float conv<-1>(float x) {...}`, an
            # explicit specialization, named `conv<-1>` so it does not replace the template
            name = f"{name}<{', '.join(_node_text(a) for a in specs.type.template_args)}>"
            ts = specs.type
            specs = A.DeclSpecs(specs.storage, specs.qualifiers, A.TypeSpec(ts.names[:-1], ts.span, ts.struct, ts.enum),
                                specs.span, specs.alignments, specs.launch_bounds)
        declarator = A.Declarator(name, (("function", params or ()),), specs.type.span)
        return A.FunctionDef(specs, declarator, rest[-1], self._span(meta))

    def constructor_declaration(self, meta, *_):
        return None  # declares nothing warplint lays out or calls

    def explicit_instantiation(self, meta, specs, params=None):
        """`template void reduce<int>(...);` (its return type and name are the specifiers)."""
        ts = specs.type
        if not ts.template_args or not ts.names:
            return None
        return A.ExplicitInstantiation(ts.names[-1], tuple(ts.template_args), self._span(meta))

    destructor_definition = destructor_declaration = constructor_declaration
    ctor_initializer = member_initializer = special_body = constructor_declaration
    using_namespace = using_name = namespace_alias = constructor_declaration

    def using_alias(self, meta, name, type_name):
        """`using real = float;` is `typedef float real;`."""
        ts = type_name.specs
        specs = A.DeclSpecs(("typedef",), ts.qualifiers, ts.type, ts.span, ts.alignments)
        declarator = A.Declarator(str(name), type_name.derivations, self._tok_span(name))
        return A.Declaration(specs, (A.InitDeclarator(declarator, None, declarator.span),), self._span(meta))

    # ---- declarations
    def declaration(self, meta, specs, *inits):
        return A.Declaration(specs, tuple(i for i in inits if i is not None), self._span(meta))

    def static_assert(self, meta, cond, *_):
        return A.StaticAssert(cond, self._span(meta))

    def declaration_specifiers(self, meta, *items):
        storage: list[str] = []
        quals: list[str] = []
        names: list[str] = []
        aligns: list[A.Alignment] = []
        bounds: tuple = ()
        struct = enum = None
        targs: tuple = ()
        type_span: Span | None = None
        for kind, value, span in items:
            if kind == "storage":
                storage.append(value)
            elif kind == "qual":
                quals.append(value)
            elif kind == "align":
                aligns.append(value)
            elif kind == "bounds":
                storage.append("__launch_bounds__")
                bounds = value
            else:
                type_span = span if type_span is None else type_span.cover(span)
                if kind == "basic":
                    names.append(value)
                elif kind == "named":
                    names.append(value)
                elif kind == "template":
                    names.append(value.name)
                    targs = value.args
                elif kind == "struct":
                    struct = value
                    names.append(f"{value.kind} {value.name}" if value.name else value.kind)
                elif kind == "enum":
                    enum = value
                    names.append(f"enum {value.name}" if value.name else "enum")
        span = self._span(meta)
        tspec = A.TypeSpec(tuple(names) or ("int",), type_span or span, struct, enum, targs)
        return A.DeclSpecs(tuple(storage), tuple(quals), tspec, span, tuple(aligns), bounds)

    def storage_class(self, meta, tok):
        return ("storage", str(tok), self._span(meta))

    def linkage(self, meta, _extern, language):
        return ("storage", f"extern {language}", self._span(meta))  # `extern "C"`: linkage, not storage

    def launch_bounds(self, meta, *children):
        args = next((c for c in children if isinstance(c, tuple) and c and isinstance(c[0], A.Node)), ())
        return ("bounds", args, self._span(meta))

    def type_qualifier(self, meta, tok):
        return ("qual", str(tok), self._span(meta))

    def basic_type(self, meta, tok):
        return ("basic", str(tok), self._span(meta))

    def named_type(self, meta, tok):
        if isinstance(tok, A.TemplateId):
            return ("template", tok, self._span(meta))
        return ("named", str(tok), self._span(meta))

    def template_type(self, meta, tid):
        return ("template", tid, self._span(meta))

    def alignment(self, meta, value):
        if isinstance(value, A.TypeName):
            value = A.SizeOf("alignof", value, value.span)
        return ("align", A.Alignment(value, self._span(meta)), self._span(meta))

    def gnu_attributes(self, meta, *attrs):
        for attr in attrs:
            if attr is not None and attr[0] == "aligned" and attr[1]:
                return ("align", A.Alignment(attr[1][0], self._span(meta)), self._span(meta))
        return ("qual", "__attribute__", self._span(meta))

    def attribute(self, meta, name, args):
        return (str(name), args or ())

    def template_id(self, meta, name, *args):
        return A.TemplateId(str(name), tuple(a for a in args if a is not None), self._span(meta))

    def struct_kind(self, meta, tok):
        return str(tok)

    def struct_definition(self, meta, kind, *rest):
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        members = tuple(r for r in rest if isinstance(r, A.Node))
        sd = A.StructDef(kind, name, members, self._span(meta), tuple(aligns))
        return ("struct", sd, self._span(meta))

    def struct_specialization(self, meta, kind, *rest):
        """`template <> struct SharedMemory<int> { ... }`: named `SharedMemory<int>`."""
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        tid = next(r for r in rest if isinstance(r, A.TemplateId))
        members = tuple(r for r in rest if isinstance(r, A.Node) and r is not tid)
        name = f"{tid.name}<{', '.join(_node_text(a) for a in tid.args)}>"
        return ("struct", A.StructDef(kind, name, members, self._span(meta), tuple(aligns)), self._span(meta))

    def struct_reference(self, meta, kind, *rest):
        aligns = [r[1] for r in rest if isinstance(r, tuple) and r and r[0] == "align"]
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        return ("struct", A.StructDef(kind, name, None, self._span(meta), tuple(aligns)), self._span(meta))

    def base_clause(self, meta, *_):
        return None

    def base_specifier(self, meta, *_):
        return None

    def access(self, meta, tok):
        return None

    def enum_definition(self, meta, *rest):
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        enumerators = tuple(r for r in rest if isinstance(r, A.Enumerator))
        return ("enum", A.EnumDef(name, enumerators, self._span(meta)), self._span(meta))

    def enum_reference(self, meta, *rest):
        name = next((str(r) for r in rest if isinstance(r, Token)), None)
        return ("enum", A.EnumDef(name, None, self._span(meta)), self._span(meta))

    def enumerator(self, meta, name, value):
        return A.Enumerator(str(name), value, self._span(meta))

    def init_declarator(self, meta, declarator, init):
        return A.InitDeclarator(declarator, init, self._span(meta))

    def declarator(self, meta, *items):
        pointers = [i for i in items if isinstance(i, tuple) and i and i[0] in ("pointer", "reference", "rvalue_reference")]
        aligns = tuple(i[1] for i in items if isinstance(i, tuple) and i and i[0] == "align")
        direct = next(i for i in items if isinstance(i, dict))
        derivations = tuple(direct["derivations"]) + tuple(reversed([(p[0], p[1]) for p in pointers]))
        return A.Declarator(direct["name"], derivations, self._span(meta), aligns,
                            direct.get("ctor", ()), tuple(direct["sizes"]))

    def pointer(self, meta, *quals):
        return ("pointer", tuple(q[1] for q in quals if q))

    def reference(self, meta, *_):
        return ("reference", ())

    def rvalue_reference(self, meta, *_):
        return ("reference", ())

    def name_declarator(self, meta, name):
        return {"name": name, "derivations": [], "sizes": [], "span": self._span(meta)}

    def declarator_name(self, meta, tok):
        return str(tok)

    def operator_name(self, meta, what):
        return f"operator {what}"

    def conversion_type(self, meta, *parts):
        return " ".join(p[1] if isinstance(p, tuple) else str(p) for p in parts if p is not None)

    def conversion_pointer(self, meta, tok):
        return str(tok)

    def overloadable_operator(self, meta, *toks):
        return "".join(str(t) for t in toks)

    def destructor_name(self, meta, tok):
        return f"~{tok}"

    def array_declarator(self, meta, direct, size):
        direct["derivations"].append(("array", size))
        direct["sizes"].append(size)
        return direct

    def function_declarator(self, meta, direct, params):
        direct["derivations"].append(("function", params or ()))
        return direct

    def constructor_declarator(self, meta, direct, args):
        direct["ctor"] = args
        return direct

    def parameter_list(self, meta, *params):
        return tuple(p for p in params if isinstance(p, A.Param))

    def parameter(self, meta, specs, declarator, default):
        if isinstance(declarator, tuple):  # abstract declarator: derivations only
            declarator = A.Declarator(None, declarator, self._span(meta))
        return A.Param(specs, declarator, self._span(meta))

    def type_name(self, meta, specs, abstract):
        return A.TypeName(specs, abstract or (), self._span(meta))

    def abstract_declarator(self, meta, *items):
        arrays = [i for i in items if isinstance(i, tuple) and i and i[0] == "array"]
        pointers = [i for i in items if isinstance(i, tuple) and i and i[0] in ("pointer", "reference")]
        return tuple(arrays) + tuple(reversed(pointers))

    def abstract_array(self, meta, size):
        return ("array", size)

    def initializer_list(self, meta, *items):
        return A.InitList(tuple(i for i in items if i is not None), self._span(meta))

    # ---- statements
    def compound_statement(self, meta, *items):
        out = []
        for i in items:
            if isinstance(i, A.Declaration):
                i = A.DeclStmt(i, i.span)
            if i is not None:
                out.append(i)
        return A.Compound(tuple(out), self._span(meta))

    def expression_statement(self, meta, expr):
        return A.ExprStmt(expr, self._span(meta))

    def if_statement(self, meta, cond, then, otherwise=None):
        return A.If(cond, then, otherwise, self._span(meta))

    def open_statement(self, meta, *children):  # pragma: no cover - aliases cover every form
        raise AssertionError(children)

    def while_statement(self, meta, cond, body):
        return A.While(cond, body, self._span(meta))

    def for_head(self, meta, init, cond, step):
        if isinstance(init, A.Declaration):
            init = A.DeclStmt(init, init.span)
        return (init, cond, step)

    def for_statement(self, meta, head, body):
        init, cond, step = head
        return A.For(init, cond, step, body, self._span(meta))

    def do_statement(self, meta, body, cond):
        return A.DoWhile(body, cond, self._span(meta))

    def switch_statement(self, meta, expr, body):
        return A.Switch(expr, body, self._span(meta))

    def return_statement(self, meta, value):
        return A.Return(value, self._span(meta))

    def break_statement(self, meta, *_):
        return A.Break(self._span(meta))

    def continue_statement(self, meta, *_):
        return A.Continue(self._span(meta))

    def case_label(self, meta, value):
        return A.CaseLabel(value, self._span(meta))

    def default_label(self, meta, *_):
        return A.CaseLabel(None, self._span(meta))

    # ---- expressions
    def comma(self, meta, left, right):
        items = left.exprs if isinstance(left, A.Comma) else (left,)
        return A.Comma(items + (right,), self._span(meta))

    def assignment(self, meta, target, op, value):
        return A.Assign(op, target, value, self._span(meta))

    def conditional(self, meta, cond, then, otherwise):
        return A.Ternary(cond, then, otherwise, self._span(meta))

    def binary(self, meta, left, op, right):
        return A.BinaryOp(op, left, right, self._span(meta))

    def binary_expression(self, meta, *items, extents=()):
        """`a op b op c ...` grouped by C's precedence, every operator left-associative; each
        node spans its operands with their parentheses (`extents`, from `build`), as the
        positions of nested grammar rules did."""
        operands: list[tuple[Any, int, int]] = [(items[0], *extents[0])]
        pending: list[str] = []

        def fold() -> None:
            op = pending.pop()
            right, _, end = operands.pop()
            left, start, _ = operands.pop()
            operands.append((A.BinaryOp(op, left, right, Span(start, end)), start, end))

        for i in range(1, len(items), 2):
            op = items[i]
            level = _PRECEDENCE[op]
            while pending and _PRECEDENCE[pending[-1]] >= level:
                fold()
            pending.append(op)
            operands.append((items[i + 1], *extents[i + 1]))
        while pending:
            fold()
        return operands[0][0]

    shift_expression = binary_expression

    def cast(self, meta, type_name, expr):
        return A.Cast(type_name, expr, "c", self._span(meta))

    def prefix(self, meta, op, operand):
        return A.UnaryOp(op, operand, self._span(meta))

    def unary(self, meta, op, operand):
        return A.UnaryOp(op, operand, self._span(meta))

    def sizeof_expression(self, meta, operand):
        return A.SizeOf("sizeof", operand, self._span(meta))

    def sizeof_type(self, meta, tn):
        return A.SizeOf("sizeof", tn, self._span(meta))

    def alignof_type(self, meta, _kw, tn):
        return A.SizeOf("alignof", tn, self._span(meta))

    def index(self, meta, base, idx):
        return A.Index(base, idx, self._span(meta))

    def call(self, meta, func, args):
        return A.Call(func, args or (), self._span(meta))

    def member(self, meta, base, name):
        return A.Member(base, str(name), False, self._span(meta))

    def arrow(self, meta, base, name):
        return A.Member(base, str(name), True, self._span(meta))

    def postfix(self, meta, operand, op):
        return A.UnaryOp("p" + op, operand, self._span(meta))

    def launch(self, meta, func, config, args):
        targs: tuple = ()
        if isinstance(func, A.TemplateId):
            targs = func.args
            func = A.Identifier(func.name, func.span)
        return A.Launch(func, config or (), args or (), self._span(meta), targs)

    def cxx_cast(self, meta, kind, tn, expr):
        return A.Cast(tn, expr, kind.replace("_cast", ""), self._span(meta))

    def cxx_cast_kind(self, meta, tok):
        return str(tok)

    def functional_cast(self, meta, type_tok, args):
        span = self._span(meta)
        if isinstance(type_tok, tuple):  # basic_type
            tname = type_tok[1]
            tspan = type_tok[2]
        else:
            tname = str(type_tok)
            tspan = self._tok_span(type_tok)
        specs = A.DeclSpecs((), (), A.TypeSpec((tname,), tspan), tspan)
        args = args or ()
        if len(args) == 1:
            return A.Cast(A.TypeName(specs, (), tspan), args[0], "functional", span)
        return A.Call(A.Identifier(tname, tspan), tuple(args), span)

    def template_call(self, meta, tid, args):
        return A.Call(A.Identifier(tid.name, tid.span), args or (), self._span(meta), tid.args)

    def argument_expression_list(self, meta, *args):
        return tuple(args)

    call_arguments = argument_expression_list

    def identifier(self, meta, tok):
        return A.Identifier(str(tok), self._span(meta))

    def integer(self, meta, tok):
        return A.Constant("int", _int_value(str(tok)), str(tok), self._span(meta))

    def floating(self, meta, tok):
        return A.Constant("float", _float_value(str(tok)), str(tok), self._span(meta))

    def character(self, meta, tok):
        return A.Constant("char", _char_value(str(tok)), str(tok), self._span(meta))

    def string(self, meta, *toks):
        return A.Constant("string", "".join(str(t) for t in toks), " ".join(str(t) for t in toks), self._span(meta))

    def boolean_literal(self, meta, tok):
        return A.Constant("bool", str(tok) == "true", str(tok), self._span(meta))

    def null_pointer(self, meta, *_):
        return A.Constant("null", 0, "nullptr", self._span(meta))

    def this(self, meta, *_):
        return A.Identifier("this", self._span(meta))

    # the operator rules keep their single token
    def _op(self, meta, *toks):
        return "".join(str(t) for t in toks)

    amp = add_op = mul_op = binary_op = shift_level_op = _op
    inc_op = unary_op = assign_op = alignof = _op


# ----------------------------------------------------------------------------- chunking

_SIGNIFICANT = re.compile(
    # comments and directive lines come first and are skipped (group "skip"): parse() also
    # reads text that was not preprocessed, and a `{` or `;` in a comment is not code
    r'(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|^[ \t]*#[^\n]*)|(?P<open_comment>/\*)|'
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|[{}();]|\S',
    re.MULTILINE,
)
# inside braces only these matter to the chunker (a 10 MB lookup table is not tokenised)
_BODY_TOKENS = re.compile(
    r'(?P<skip>//[^\n]*|/\*[\s\S]*?\*/|^[ \t]*#[^\n]*)|(?P<open_comment>/\*)|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}();]',
    re.MULTILINE,
)
MAX_PAREN_NESTING = 2048  # parentheses deeper than this end the file, like braces past MAX_NESTING


@record(slots=False)
class Chunk:
    start: int
    end: int
    is_function: bool


def split_top_level(text: str) -> tuple[list[Chunk], list[Diagnostic]]:
    """Cut `text` into top-level declarations; namespace and extern "C" bodies are opened."""
    chunks: list[Chunk] = []
    diags: list[Diagnostic] = []
    depth = 0
    paren = 0
    open_scopes: list[int] = []  # brace depths of namespaces / extern "C" blocks we descended into
    base = 0
    chunk_start: int | None = None
    head: list[str] = []  # significant tokens of the current chunk before its first `{` at base depth
    body_is_function = False
    body_open_depth: int | None = None
    prev = ""
    head_assigns = False
    too_deep = False  # the current declaration nests braces past MAX_NESTING
    pos = 0
    while True:
        m = (_SIGNIFICANT if depth == base else _BODY_TOKENS).search(text, pos)
        if m is None:
            break
        pos = m.end()
        if m.lastgroup == "skip":
            continue
        if m.lastgroup == "open_comment":
            # a `/*` that never closes: for a compiler the rest of the file is a comment
            diags.append(Diagnostic(Severity.ERROR, "unterminated comment: '/*' without '*/'", "WL901", Span(m.start(), m.end())))
            return chunks, diags  # a declaration it cuts short is not parsed: this diagnostic says why
        tok = m.group(0)
        if chunk_start is None:
            if tok == "}" and open_scopes and depth == base:
                depth -= 1
                open_scopes.pop()
                base = open_scopes[-1] if open_scopes else 0
                prev = tok
                continue
            if tok == ";":
                continue
            chunk_start = m.start()
            head = []
            head_assigns = False  # an `=` outside parentheses: `int a[] = {...}`, not a default argument
            body_open_depth = None
        if tok == "(":
            paren += 1
            if paren > MAX_PAREN_NESTING:
                diags.append(Diagnostic(Severity.ERROR, f"parentheses nested deeper than {MAX_PAREN_NESTING} levels; the rest of the file is skipped", "WL901", Span(m.start(), m.end())))
                return chunks, diags
        elif tok == ")":
            paren = max(0, paren - 1)
        elif tok == "{":
            if depth == base and body_open_depth is None:
                if head and (head[0] == "namespace" or (head[0] == "extern" and len(head) == 2 and head[1].startswith('"'))):
                    depth += 1
                    open_scopes.append(depth)
                    base = depth
                    chunk_start = None
                    prev = tok
                    continue
                body_open_depth = depth
                # `) {` opens a body; so does junk such as `) @ {` (one syntax error, not a
                # declaration that swallows the rest of the file); a name before `{` does not
                # (`struct __align__(16) V {`)
                ends_head = prev in (")", "const", "override", "noexcept", "final") or not (prev[:1].isalnum() or prev[:1] in "_:>]\"'")
                body_is_function = ends_head and "(" in head and head[0] not in ("typedef", "struct", "class", "union", "enum") and not head_assigns
            depth += 1
            if depth > MAX_NESTING and not too_deep:
                # the declaration is skipped; the chunker reads on to its end, and the next one is parsed
                diags.append(Diagnostic(Severity.ERROR, f"braces nested deeper than {MAX_NESTING} levels; this declaration is skipped", "WL901", Span(m.start(), m.end())))
                too_deep = True
        elif tok == "}":
            depth -= 1
            if depth < base:  # stray closing brace
                depth = base
                chunk_start = None
                continue
            if depth == base and body_open_depth is not None and body_is_function and paren == 0:
                if not too_deep:
                    chunks.append(Chunk(chunk_start, m.end(), True))
                too_deep = False
                chunk_start = None
                prev = tok
                continue
        elif tok == ";" and depth == base and paren == 0:
            if not too_deep:
                chunks.append(Chunk(chunk_start, m.end(), False))
            too_deep = False
            chunk_start = None
            prev = tok
            continue
        if depth == base and body_open_depth is None:
            head.append(tok)
            if tok == "=" and paren == 0:
                head_assigns = True
        prev = tok
    if chunk_start is not None and text[chunk_start:].strip() and not too_deep:
        chunks.append(Chunk(chunk_start, len(text), False))
    return chunks, diags


# ----------------------------------------------------------------------------- construct names

_CONSTRUCTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[[&=]?[\w\s,&=]*\]\s*(\([^)]*\))?\s*(mutable\s*)?(->\s*[\w:<>*&\s]+)?\{"), "lambda expression"),
    (re.compile(r"\bfor\s*\([^;()]*\b\w+\s*:[^:]"), "range-based for loop"),
    (re.compile(r"\bstatic_assert\b"), "static_assert"),
    (re.compile(r"^\s*using\b"), "using declaration"),
    (re.compile(r"^\s*namespace\b"), "namespace alias"),
    (re.compile(r"\bnew\b"), "new expression"),
    (re.compile(r"\bdelete\b"), "delete expression"),
    (re.compile(r"\b(try|catch|throw)\b"), "exception handling"),
    (re.compile(r"\bdecltype\b"), "decltype"),
    (re.compile(r"\btemplate\b"), "template declaration"),
    (re.compile(r"\boperator\b"), "operator overload"),
    (re.compile(r"\bgoto\b|^\s*\w+\s*:(?!:)"), "goto/label"),
    (re.compile(r"\basm\b|\b__asm__\b"), "inline assembly"),
    (re.compile(r"\b(?:struct|union|class)\b[^;]*\{[^}]*\b\w+\s*:\s*\d+\s*[;,]"), "bit-field"),
    (re.compile(r"\b(class|struct)\b[^;{]*\{"), "class definition"),
    (re.compile(r"\b\w+(::\w+)+\s*<"), "C++ template use"),
    (re.compile(r"::"), "qualified name"),
    # `= {1, 2}`, `f({1, 2})`, `return {a, b}`, `float3{x, y, z}` -- not any block `) {`
    (re.compile(r"(?:[=(,]|\breturn)\s*\{\s*[\w.\-+]|\b[A-Za-z_]\w*(?:<[^<>;{}]*>)?\{\s*[\w.\-+]"), "brace initialiser"),
)


def name_construct(text: str) -> str | None:
    for pattern, what in _CONSTRUCTS:
        if pattern.search(text):
            return what
    return None


# ----------------------------------------------------------------------------- driver


@record(frozen=False, slots=False)
class ParseResult:
    unit: A.TranslationUnit
    diagnostics: list[Diagnostic]
    skipped: list[A.Unsupported]  # constructs blanked out so the rest could be parsed


def _statement_bounds(text: str, body_start: int, pos: int) -> tuple[int, int]:
    """The statement around `pos` inside a function body starting at `body_start` (its `{`)."""
    boundaries = [body_start + 1]
    paren = 0
    for m in _SIGNIFICANT.finditer(text, body_start + 1, pos):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren = max(0, paren - 1)
        elif paren == 0 and tok in (";", "{", "}"):
            boundaries.append(m.end())
    start = boundaries[-1]
    # from start, find the end: `;` at relative depth 0, or a `}` closing a block opened here
    paren = 0
    brace = 0
    end = len(text)
    for m in _SIGNIFICANT.finditer(text, start):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren -= 1
        elif tok == "{":
            brace += 1
        elif tok == "}":
            brace -= 1
            if brace < 0:
                end = m.start()
                break
            if brace == 0 and paren <= 0:
                nxt = _NEXT_CHAR.match(text, m.end())
                if not nxt or nxt.group(1) not in (";", ",", ")", "(", "."):
                    end = m.end()
                    break
        elif tok == ";" and brace == 0 and paren <= 0:
            end = m.end()
            break
    if m_first := re.compile(r"\S").search(text, start, end):
        start = m_first.start()
    return start, max(end, start)


def _blank(text: str, start: int, end: int) -> str:
    """Replace text[start:end] by spaces (newlines kept) ending in `;`, so offsets stay valid."""
    piece = re.sub(r"[^\n]", " ", text[start:end])
    if end > start:
        last = piece.rfind(" ")
        if last >= 0:
            piece = piece[:last] + ";" + piece[last + 1 :]
    return text[:start] + piece + text[end:]


_MISSPELLED_ALIGN = re.compile(r"__align\(\s*(\d+)\s*\)__")


def _fix_misspelled_align(text: str, diagnostics: list[Diagnostic]) -> str:
    """`__align(8)__` (as an old tutorial spells it) is not CUDA: report it, then read it as
    `__align__(8)`, which has the same length, so every offset stays valid."""

    def replace(m: re.Match[str]) -> str:
        n = m.group(1)
        diagnostics.append(Diagnostic(
            Severity.ERROR,
            f"'{m.group(0)}' is not a CUDA attribute: the spelling is '__align__({n})' "
            f"(nvcc reads '{m.group(0)}' as an unknown name); read as '__align__({n})'",
            "WL906", Span(m.start(), m.end())))
        fixed = f"__align__({n})"
        return fixed + " " * (len(m.group(0)) - len(fixed))

    return _MISSPELLED_ALIGN.sub(replace, text)


_SPLIT_LAUNCH = re.compile(r"<<(\s+)<([^;{}]*?)>>(\s+)>")


def _join_launch_brackets(text: str) -> str:
    """`k<< <grid, block>> >(...)` -- how a preprocessor may print `<<<`/`>>>` that came through
    a macro argument -- is read as `k<<<grid, block>>>(...)`; every offset stays valid."""

    def join(m: re.Match[str]) -> str:
        return f"<<<{m.group(1)}{m.group(2)}>>>{m.group(3)}"

    return _SPLIT_LAUNCH.sub(join, text)


@functools.lru_cache(maxsize=None)
def _ast_methods() -> dict[str, Any]:
    """Rule name -> the plain function of `ToAst` that builds its node."""
    methods = {}
    for name in dir(ToAst):
        if name.startswith("_"):
            continue
        attr = ToAst.__dict__.get(name)
        if attr is None:
            continue
        methods[name] = attr
    return methods


@gc_paused
def parse(text: str) -> ParseResult:
    """Parse preprocessed CUDA text. Never raises for bad input: problems become diagnostics."""
    parser = _driver()
    postlex = CudaPostLexer()
    diagnostics: list[Diagnostic] = []
    skipped: list[A.Unsupported] = []
    decls: list[A.Node] = []
    if "__align(" in text:
        text = _fix_misspelled_align(text, diagnostics)
    if "<< <" in text:
        text = _join_launch_brackets(text)
    chunks, chunk_diags = split_top_level(text)
    diagnostics.extend(chunk_diags)
    working = text
    tried_names: set[str] = set()
    for chunk in chunks:
        tries = 0
        learned: tuple[str, int] | None = None
        if chunk.end - chunk.start > LARGE_INITIALIZER_CHARS:
            if not chunk.is_function:
                working = _blank_initializers(working, chunk.start, chunk.end)
            size = len("".join(working[chunk.start : chunk.end].split()))
            if size > MAX_DECLARATION_CHARS:
                diagnostics.append(Diagnostic(
                    Severity.ERROR, f"declaration too large to analyse ({size} characters, the limit is "
                    f"{MAX_DECLARATION_CHARS}); skipped", "WL901", Span(chunk.start, chunk.start + 1)))
                skipped.append(A.Unsupported("declaration too large", text[chunk.start : chunk.start + 200], Span(chunk.start, chunk.end)))
                continue
        while True:
            piece = working[chunk.start : chunk.end]
            postlex.text = piece  # the postlexer peeks at the text after a token
            try:
                unit = parser.parse(piece, ToAst(chunk.start).reduce, postlex.process)
                decls.extend(unit.decls)
                break
            except ParseError as err:
                pos = chunk.start + (err.pos_in_stream if err.pos_in_stream is not None else 0)
                tries += 1
                # A type from a header that is never read (`curandState *s`, `(cufftComplex *)p`):
                # learn the name as a type for the rest of the file and parse again, keeping it
                # only if that gets past the error.
                if learned is not None and pos <= learned[1]:
                    # no better: forget the name and parse again, to get the first error back
                    postlex.table.scopes[0].discard(learned[0])
                    learned = None
                    continue
                learned = None
                name = _unknown_type_name(err, working, pos, postlex.table, tried_names)
                if name is not None and tries <= MAX_RETRIES_PER_DECLARATION:
                    tried_names.add(name)
                    postlex.table.scopes[0].add(name)
                    learned = (name, pos)
                    continue
                body = working.find("{", chunk.start, chunk.end)
                inside_body = chunk.is_function and body != -1 and body < pos < chunk.end - 1
                if inside_body and tries <= MAX_RETRIES_PER_DECLARATION:
                    s, e = _statement_bounds(working, body, pos)
                    if e <= s or not working[s:e].strip() or working[s:e].strip() == ";":
                        s, e = chunk.start, chunk.end
                        inside_body = False
                    else:
                        stext = text[s:e]
                        what = name_construct(stext)
                        skipped.append(A.Unsupported(what or "syntax error", stext, Span(s, e)))
                        diagnostics.append(_diagnostic_for(err, what, pos, stext, working))
                        working = _blank(working, s, e)
                        continue
                stext = text[chunk.start : chunk.end]
                # name the construct from the text up to the error's line, not from all of a
                # body that may hold any construct at all
                line_end = text.find("\n", pos)
                what = name_construct(text[chunk.start : line_end if chunk.start <= line_end < chunk.end else chunk.end])
                skipped.append(A.Unsupported(what or "syntax error", stext, Span(chunk.start, chunk.end)))
                diagnostics.append(_diagnostic_for(err, what, pos, stext, working))
                break
            except RecursionError:
                message = "declaration nested too deeply to analyse; skipped"
                diagnostics.append(Diagnostic(Severity.ERROR, message, "WL901", Span(chunk.start, chunk.start + 1)))
                skipped.append(A.Unsupported("nested too deeply", text[chunk.start : chunk.start + 200], Span(chunk.start, chunk.end)))
                break
    return ParseResult(A.TranslationUnit(tuple(decls), Span(0, len(text))), diagnostics, skipped)


_NAME_BEFORE = re.compile(r"((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*$")
_DECLARATOR_AFTER = re.compile(r"\s*(?:[*&]+\s*)*(?:const\b|volatile\b|__restrict__\b|[A-Za-z_])|\s*[*&]+\s*[,)>]")
_POINTER_DECL_BEFORE = re.compile(
    r"(?:^|[;{}(,])\s*(?:(?:const|volatile|static|struct|class)\s+)*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"
    r"\s*[*&]+\s*(?:const\s+)?(?:[A-Za-z_]\w*\s*)?$")


_PARENTHESISED_NAME_BEFORE = re.compile(r"\(\s*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\)\s*$")
_PARAM_WITH_POINTER = re.compile(
    r"\s*(?:(?:const|volatile|struct|class)\s+)*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"
    r"\s*[*&]+\s*(?:(?:const|__restrict__|__restrict)\b\s*)*(?:[A-Za-z_]\w*)?\s*(?:=.*)?$", re.S)


def _unknown_type_name(err: ParseError, text: str, pos: int, table: TypeTable, tried: set[str]) -> str | None:
    """A name that, read as a type, may get the parser past `err`, if the text says so.

    The shapes: an unexpected name followed by a declarator (`(curandState *s` in a
    parameter list); `*` or `&` right after a name taken as a declarator
    (`const cg::thread_block &cta`); an error right after `Name *x` or `(Name *` (a
    declaration or a cast: `StopWatchInterface *timer = 0;`, `(cufftComplex *)p`); an item
    `Name *x` earlier in the parenthesised list that holds the error (a parameter list read
    as constructor arguments). The caller keeps the name only if the parse gets further.
    """
    token = getattr(err, "token", None)
    if token is None or token.type == "$END":
        return None
    candidates: list[str] = []
    value = str(token.value)
    if token.type == "IDENTIFIER" and _DECLARATOR_AFTER.match(text, pos + len(value)):
        candidates.append(value)
    if value in ("*", "&", "&&"):
        m = _NAME_BEFORE.search(text, max(0, pos - 200), pos)
        if m:
            candidates.append(m.group(1))
    m = _POINTER_DECL_BEFORE.search(text, max(0, pos - 200), pos)
    if m:
        candidates.append(m.group(1))
    m = _PARENTHESISED_NAME_BEFORE.search(text, max(0, pos - 200), pos)
    if m:  # `(GLuint)0`, `(cufftComplex)f(x)`: a name in parentheses followed by an operand
        candidates.append(m.group(1))
    # the items of the innermost open parenthesis before the error
    depth = 0
    i = pos - 1
    lo = max(0, pos - 2000)
    while i >= lo:
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            if depth == 0:
                break
            depth -= 1
        elif c in ";{}":
            i = lo - 1
            break
        i -= 1
    if i >= lo:
        for item in text[i + 1 : pos].split(","):
            m = _PARAM_WITH_POINTER.match(item)
            if m:
                candidates.append(m.group(1))
    for name in candidates:
        if name in _KEYWORDS or name in tried or table.is_type(name) or name in table.templates:
            continue
        return name
    return None


_INITIALIZER_TOKENS = re.compile(_BODY_TOKENS.pattern.replace("[{}();]", "[{}();=]"), re.MULTILINE)


def _blank_initializers(text: str, start: int, end: int) -> str:
    """Blank the inside of every top-level `= { ... }` in text[start:end], keeping offsets:
    a generated lookup table need not be parsed to analyse the kernels that read it."""
    depth = paren = 0
    after_assign = False
    open_at: int | None = None
    spans: list[tuple[int, int]] = []
    for m in _INITIALIZER_TOKENS.finditer(text, start, end):
        if m.lastgroup == "skip":
            continue
        tok = m.group(0)
        if tok == "(":
            paren += 1
        elif tok == ")":
            paren -= 1
        elif tok == "{":
            if depth == 0 and paren == 0 and after_assign:
                open_at = m.end()
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0 and open_at is not None:
                spans.append((open_at, m.start()))
                open_at = None
        after_assign = tok == "=" and depth == 0 and paren == 0
    for s, e in reversed(spans):
        text = text[:s] + re.sub(r"[^\n]", " ", text[s:e]) + text[e:]
    return text


def _diagnostic_for(err: ParseError, what: str | None, pos: int, stext: str, text: str) -> Diagnostic:
    if text.startswith("/*", pos) and "*/" not in text[pos:]:
        return Diagnostic(Severity.ERROR, "unterminated comment: '/*' without '*/'", "WL901", Span(pos, pos + 2))
    if text[pos : pos + 1] in ('"', "'") or text[pos : pos + 3] in ('u8"', "u8'") or text[pos : pos + 2] in ('L"', 'u"', 'U"'):
        quote = '"' if '"' in text[pos : pos + 3] else "'"
        line_end = text.find("\n", pos)
        line = text[pos : line_end if line_end != -1 else len(text)]
        if line.count(quote) == 1:
            return Diagnostic(Severity.ERROR, f"unterminated {'string' if quote == chr(34) else 'character'} literal",
                              "WL901", Span(pos, pos + len(line)))
    end = pos + 1
    token = getattr(err, "token", None)
    if token is not None and getattr(token, "value", None):
        shown = str(token.value)
        end = pos + max(1, len(shown))
    else:
        shown = text[pos : pos + 1]
    if getattr(token, "type", "") == "$END":  # a declaration cut short: no construct to name
        return Diagnostic(Severity.ERROR, "syntax error: unexpected end of declaration", "WL901", Span(pos, end))
    if what:
        return Diagnostic(Severity.WARNING, f"unsupported C++ construct ({what}) skipped", "WL902", Span(pos, end))
    if shown.strip() == "":
        return Diagnostic(Severity.ERROR, "syntax error: unexpected end of declaration", "WL901", Span(pos, end))
    return Diagnostic(Severity.ERROR, f"syntax error: unexpected '{shown}'", "WL901", Span(pos, end))
