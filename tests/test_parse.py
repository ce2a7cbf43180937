"""Specification of analyzer.syntax.parse: CUDA text -> typed AST with exact positions.

Spans are offsets into the (preprocessed) text: most tests parse a literal and locate the
expected text with `str.index`; the tests at the end go through the preprocessor and check
1-based line and column in the original file. A construct the subset does not cover is
reported once (WL902, naming it) and the rest of the kernel is still parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from analyzer import records
from analyzer.diagnostics import Span
from analyzer.syntax import ast as A
from analyzer.syntax.lalr import Inlined, Meta, Token
from analyzer.syntax.parse import ParseResult, parse

# ----------------------------------------------------------------------------- helpers


def parse_clean(text: str) -> A.TranslationUnit:
    """Parse `text`; fail, printing the source and every diagnostic, unless it is clean."""
    result = parse(text)
    if result.diagnostics:
        shown = "\n".join(f"  {d.code} {d.message} at {text[d.span.start : d.span.end]!r}" for d in result.diagnostics)
        pytest.fail(f"unexpected diagnostics for\n{text}\n{shown}")
    return result.unit


def span_of(text: str, needle: str, nth: int = 0) -> Span:
    """The span of the `nth` occurrence of `needle` in `text`."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    return Span(start, start + len(needle))


def source(text: str, node: A.Node) -> str:
    return text[node.span.start : node.span.end]


def deep_nodes(value: Any) -> Iterator[Any]:
    """Every node and value below `value`, through every field (children *and* attributes such
    as a declarator's parameters), so nothing the transformer left behind can hide."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        if isinstance(v, A.Node):
            stack.extend(getattr(v, f.name) for f in records.fields(v))
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())


def nodes(unit: A.Node, cls: type) -> list:
    """Nodes of class `cls`, in source order, reached through children and attributes."""
    found = [n for n in deep_nodes(unit) if isinstance(n, cls)]
    return sorted(found, key=lambda n: (n.span.start, -n.span.end))


def function(unit: A.TranslationUnit, name: str) -> A.FunctionDef:
    return next(d for d in unit.decls if isinstance(d, A.FunctionDef) and d.name == name)


def type_text(t: A.Node) -> str:
    if isinstance(t, A.TypeName):
        out = " ".join(t.specs.type.names)
        for kind, value in reversed(t.derivations):
            out += "*" if kind == "pointer" else "&" if kind == "reference" else f"[{sx(value) if value else ''}]"
        return out
    return str(sx(t))


def sx(n: Any) -> Any:
    """A compact shape of an expression: operators as tuples, names as str, constants as values."""
    if isinstance(n, A.Identifier):
        return n.name
    if isinstance(n, A.Constant):
        return n.value
    if isinstance(n, A.BinaryOp):
        return (n.op, sx(n.left), sx(n.right))
    if isinstance(n, A.UnaryOp):
        return (n.op, sx(n.operand))
    if isinstance(n, A.Assign):
        return (n.op, sx(n.target), sx(n.value))
    if isinstance(n, A.Ternary):
        return ("?:", sx(n.cond), sx(n.then), sx(n.otherwise))
    if isinstance(n, A.Cast):
        return (f"cast-{n.kind}", type_text(n.to), sx(n.expr))
    if isinstance(n, A.SizeOf):
        return (n.op, type_text(n.operand) if isinstance(n.operand, A.TypeName) else sx(n.operand))
    if isinstance(n, A.Index):
        return ("[]", sx(n.base), sx(n.index))
    if isinstance(n, A.Call):
        return ("call", sx(n.func), *(sx(a) for a in n.args))
    if isinstance(n, A.Member):
        return ("->" if n.arrow else ".", sx(n.base), n.name)
    if isinstance(n, A.Comma):
        return (",", *(sx(e) for e in n.exprs))
    if isinstance(n, A.InitList):
        return ("{}", *(sx(e) for e in n.items))
    if isinstance(n, A.TypeName):
        return type_text(n)
    if n is None:
        return None
    raise AssertionError(f"no shape for {type(n).__name__}")


def body_of(text: str, name: str = "f") -> tuple[A.Node, ...]:
    return function(parse_clean(text), name).body.items


def expression(code: str) -> tuple[str, A.Expr]:
    """Parse `code;` as the only statement of a device function; return (text, expression)."""
    text = f"__device__ void f(int a, int b, int c, int d, int e, int* p, float* q) {{ {code}; }}"
    (stmt,) = body_of(text)
    assert isinstance(stmt, A.ExprStmt)
    return text, stmt.expr


def declaration(code: str) -> tuple[str, A.Declaration]:
    """Parse `code` as the only top-level declaration."""
    unit = parse_clean(code)
    (decl,) = unit.decls
    assert isinstance(decl, A.Declaration)
    return code, decl


# ----------------------------------------------------------------------------- the tree is typed


ALL_CONSTRUCTS = """
#define N 4
struct __align__(16) Vec3 { float x, y, z; };
typedef struct { int a; char b; } Pair;
union Bits { int i; float f; };
enum Color { RED, GREEN = 5, BLUE };
__constant__ float weights[N];
namespace cg = cooperative_groups;
namespace util { __device__ int twice(int x) { return 2 * x; } }
template <typename T> struct SharedMemory {
    __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
};
template <typename T, int M>
__global__ void __launch_bounds__(256, 2) kern(T *__restrict__ out, const T *in, int n) {
    __shared__ float tile[32][33];
    T *sdata = SharedMemory<T>();
    auto cta = cg::this_thread_block();
    int tx = threadIdx.x, ty = threadIdx.y;
    float *row = tile[ty];
    if (tx < n) if (ty) out[tx] = in[tx]; else out[tx] = 0;
    for (int i = 0; i < M; ++i) { sdata[i] += in[i]; }
    while (tx > 0) { tx--; if (tx == 3) break; else continue; }
    do { ty++; } while (ty < 4);
    switch (tx) { case 0: out[0] = 1; break; default: break; }
    atomicAdd(&out[0], (T)1);
    cta.sync();
    row[tx] = sizeof(float3) + ((float3 *)tile)[tx].x;
    static_assert(sizeof(int) == 4, "int");
}
int main() {
    dim3 block(32, 8), grid = dim3(4, 4);
    float *o, *i;
    cudaStream_t s;
    kern<float, 4><<<grid, block, 1024, s>>>(o, i, 10);
    return 0;
}
"""


def test_a_file_with_every_construct_parses_clean():
    parse_clean(ALL_CONSTRUCTS)


def test_no_token_or_parser_object_is_left_in_the_ast():
    unit = parse_clean(ALL_CONSTRUCTS)
    leaked = [v for v in deep_nodes(unit) if isinstance(v, (Token, Inlined, Meta))]
    assert leaked == []


def test_every_node_has_a_span_inside_the_text():
    unit = parse_clean(ALL_CONSTRUCTS)
    for n in deep_nodes(unit):
        if isinstance(n, A.Node):
            assert isinstance(n.span, Span)
            assert 0 <= n.span.start <= n.span.end <= len(ALL_CONSTRUCTS), n


def test_child_spans_lie_inside_their_parents():
    unit = parse_clean(ALL_CONSTRUCTS)
    for parent in unit.walk():
        for _, c in parent.children():
            if c.span.end > c.span.start:  # zero-width spans are placeholders
                assert parent.span.start <= c.span.start and c.span.end <= parent.span.end, (parent, c)


# ----------------------------------------------------------------------------- qualifiers


@pytest.mark.parametrize(
    "code, storage, qualifiers",
    [
        ("__global__ void k() {}", ("__global__",), ()),
        ("__device__ int f() { return 0; }", ("__device__",), ()),
        ("__host__ __device__ int f() { return 0; }", ("__host__", "__device__"), ()),
        ("__device__ __forceinline__ int f() { return 0; }", ("__device__", "__forceinline__"), ()),
        ("__device__ __noinline__ int f() { return 0; }", ("__device__", "__noinline__"), ()),
        ("static inline __device__ int f() { return 0; }", ("static", "inline", "__device__"), ()),
        ("__shared__ float s[32];", ("__shared__",), ()),
        ("extern __shared__ float s[];", ("extern", "__shared__"), ()),
        ("__constant__ float c[16];", ("__constant__",), ()),
        ("const volatile int v = 1;", (), ("const", "volatile")),
        ("static const int k = 3;", ("static",), ("const",)),
        ('extern "C" __global__ void k() {}', ('extern "C"', "__global__"), ()),
    ],
)
def test_every_storage_class_and_qualifier_is_kept_in_order_with_the_specifiers_span(code, storage, qualifiers):
    unit = parse_clean(code)
    (decl,) = unit.decls
    assert decl.specs.storage == storage
    assert decl.specs.qualifiers == qualifiers
    # the specifiers span from the first specifier to the type
    type_word = decl.specs.type.names[0]
    assert decl.specs.span == Span(0, code.index(type_word) + len(type_word))
    assert decl.specs.type.span == span_of(code, type_word)


def test_restrict_const_and_volatile_on_pointers_belong_to_the_pointer_or_the_pointee():
    code = "__global__ void k(float *__restrict__ out, const float *__restrict__ in, volatile int *flag) {}"
    out, in_, flag = function(parse_clean(code), "k").params
    assert out.declarator.derivations == (("pointer", ("__restrict__",)),)
    assert out.specs.qualifiers == ()
    assert in_.specs.qualifiers == ("const",)
    assert in_.declarator.derivations == (("pointer", ("__restrict__",)),)
    assert flag.specs.qualifiers == ("volatile",)
    assert [p.span for p in (out, in_, flag)] == [
        span_of(code, "float *__restrict__ out"),
        span_of(code, "const float *__restrict__ in"),
        span_of(code, "volatile int *flag"),
    ]
    assert out.declarator.span == span_of(code, "*__restrict__ out")


def test_launch_bounds_keep_both_arguments_with_their_spans():
    code = "__global__ void __launch_bounds__(256, 2) k(float *p) { p[0] = 0; }"
    fd = function(parse_clean(code), "k")
    assert "__global__" in fd.specs.storage and "__launch_bounds__" in fd.specs.storage
    assert [sx(b) for b in fd.specs.launch_bounds] == [256, 2]
    assert [b.span for b in fd.specs.launch_bounds] == [span_of(code, "256"), span_of(code, "2", 1)]
    assert fd.declarator.span == span_of(code, "k(float *p)")
    assert fd.span == Span(0, len(code))


# ----------------------------------------------------------------------------- types


@pytest.mark.parametrize(
    "type_words",
    [
        "unsigned",
        "unsigned int",
        "signed char",
        "unsigned char",
        "short",
        "unsigned short int",
        "long",
        "long long",
        "unsigned long long",
        "long double",
        "size_t",
        "bool",
        "double",
        "char",
        "float3",
        "float4",
        "double2",
        "int2",
        "char4",
        "short3",
        "uchar3",
        "uint4",
        "longlong2",
        "__half",
        "__half2",
        "__nv_bfloat16",
        "int8_t",
        "uint64_t",
    ],
)
def test_scalar_and_vector_type_words_are_kept_with_their_span(type_words):
    code = f"__device__ {type_words} value;"
    _, decl = declaration(code)
    assert decl.specs.type.names == tuple(type_words.split())
    assert decl.specs.type.span == span_of(code, type_words)
    assert decl.declarators[0].declarator.name == "value"
    assert decl.declarators[0].declarator.span == span_of(code, "value")


def test_pointer_derivations_are_innermost_first():
    code = "float * const * volatile p;"
    _, decl = declaration(code)
    d = decl.declarators[0].declarator
    # p is a volatile pointer to a const pointer to float
    assert d.derivations == (("pointer", ("volatile",)), ("pointer", ("const",)))
    assert d.span == span_of(code, "* const * volatile p")


def test_a_multi_dimensional_array_keeps_its_sizes_in_source_order():
    code = "__shared__ float tile[32][33];"
    _, decl = declaration(code)
    d = decl.declarators[0].declarator
    assert [kind for kind, _ in d.derivations] == ["array", "array"]
    assert [sx(size) for size in d.array_sizes] == [32, 33]
    assert [size.span for size in d.array_sizes] == [span_of(code, "32"), span_of(code, "33")]
    assert d.span == span_of(code, "tile[32][33]")


def test_an_array_of_pointers_applies_the_array_first():
    _, decl = declaration("float *a[10];")
    d = decl.declarators[0].declarator
    assert [kind for kind, _ in d.derivations] == ["array", "pointer"]


def test_an_extern_shared_array_has_no_size():
    _, decl = declaration("extern __shared__ float4 s[];")
    assert decl.declarators[0].declarator.derivations == (("array", None),)


def test_a_struct_definition_keeps_members_in_order_with_spans():
    code = "struct Particle { float3 pos; float mass; int id[2]; };"
    _, decl = declaration(code)
    sd = decl.specs.type.struct
    assert (sd.kind, sd.name) == ("struct", "Particle")
    assert sd.span == span_of(code, code[: code.rindex("}") + 1])
    members = [(m.declarators[0].declarator.name, m.specs.type.names) for m in sd.members]
    assert members == [("pos", ("float3",)), ("mass", ("float",)), ("id", ("int",))]
    assert [m.span for m in sd.members] == [
        span_of(code, "float3 pos;"),
        span_of(code, "float mass;"),
        span_of(code, "int id[2];"),
    ]


def test_a_union_and_a_nested_struct_are_struct_definitions_of_their_kind():
    code = "union U { int i; struct Inner { short a, b; } s; };"
    _, decl = declaration(code)
    sd = decl.specs.type.struct
    assert (sd.kind, sd.name) == ("union", "U")
    inner = sd.members[1].specs.type.struct
    assert (inner.kind, inner.name) == ("struct", "Inner")
    assert [d.declarator.name for d in inner.members[0].declarators] == ["a", "b"]
    assert inner.span == span_of(code, "struct Inner { short a, b; }")


def test_an_enum_numbers_its_enumerators_and_keeps_the_values_written():
    code = "enum Color { RED, GREEN = 5, BLUE };"
    _, decl = declaration(code)
    ed = decl.specs.type.enum
    assert ed.name == "Color"
    assert [(e.name, sx(e.value)) for e in ed.enumerators] == [("RED", None), ("GREEN", 5), ("BLUE", None)]
    assert [e.span for e in ed.enumerators] == [span_of(code, "RED"), span_of(code, "GREEN = 5"), span_of(code, "BLUE")]


def test_a_typedef_makes_the_name_a_type_for_the_rest_of_the_file():
    code = "typedef struct { int a; char b; } Pair;\n__device__ Pair *first;\n__device__ void f(Pair p) { Pair *q = &p; q->a = 1; }"
    unit = parse_clean(code)
    assert unit.decls[0].specs.storage == ("typedef",)
    assert unit.decls[0].declarators[0].declarator.name == "Pair"
    assert unit.decls[1].specs.type.names == ("Pair",)
    (param,) = function(unit, "f").params
    assert param.specs.type.names == ("Pair",)


@pytest.mark.parametrize(
    "code, value",
    [
        ("struct __align__(16) V { float x, y, z; };", 16),
        ("struct alignas(8) V { int a; };", 8),
        ("struct __attribute__((aligned(16))) V { int a; };", 16),
    ],
)
def test_alignment_on_a_struct_is_kept_with_its_span(code, value):
    _, decl = declaration(code)
    (al,) = decl.specs.type.struct.alignments
    assert sx(al.value) == value
    assert al.value.span == span_of(code, str(value))
    start = (
        code.index("__align__")
        if "__align__" in code
        else code.index("alignas")
        if "alignas" in code
        else code.index("__attribute__")
    )
    assert al.span == Span(
        start, code.index(")" * (3 if "__attribute__" in code else 1), start) + (3 if "__attribute__" in code else 1)
    )


def test_alignment_after_a_typedef_or_in_the_specifiers():
    code = "typedef float4 __align__(16) F4;\n__shared__ __align__(8) float q[4];\nstruct S { int a; } __attribute__((aligned(32)));"
    unit = parse_clean(code)
    assert [sx(a.value) for a in unit.decls[0].specs.alignments] == [16]
    assert [sx(a.value) for a in unit.decls[1].specs.alignments] == [8]
    assert [sx(a.value) for a in unit.decls[2].specs.alignments] == [32]


def test_alignas_of_a_type_is_alignof_that_type():
    _, decl = declaration("struct alignas(double2) V { float x; };")
    (al,) = decl.specs.type.struct.alignments
    assert sx(al.value) == ("alignof", "double2")


# ----------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    "code, shape",
    [
        ("a + b * c << 2 & d", ("&", ("<<", ("+", "a", ("*", "b", "c")), 2), "d")),
        ("a | b ^ c & d", ("|", "a", ("^", "b", ("&", "c", "d")))),
        ("a || b && c", ("||", "a", ("&&", "b", "c"))),
        ("a == b < c", ("==", "a", ("<", "b", "c"))),
        ("a - b - c", ("-", ("-", "a", "b"), "c")),
        ("a >> 1 >> b", (">>", (">>", "a", 1), "b")),
        ("a << b + 1", ("<<", "a", ("+", "b", 1))),
        ("a % b * c / d", ("/", ("*", ("%", "a", "b"), "c"), "d")),
        ("a ? b : c ? d : e", ("?:", "a", "b", ("?:", "c", "d", "e"))),
        ("a ? b = c : d", ("?:", "a", ("=", "b", "c"), "d")),
        ("a = b += c", ("=", "a", ("+=", "b", "c"))),
        ("a <<= b >>= 2", ("<<=", "a", (">>=", "b", 2))),
        ("a &= b |= c ^= d", ("&=", "a", ("|=", "b", ("^=", "c", "d")))),
        ("a *= b /= c %= d -= e", ("*=", "a", ("/=", "b", ("%=", "c", ("-=", "d", "e"))))),
        ("sizeof(float) * 2", ("*", ("sizeof", "float"), 2)),
        ("sizeof a + 1", ("+", ("sizeof", "a"), 1)),
        ("sizeof(float3*)", ("sizeof", "float3*")),
        ("alignof(double2)", ("alignof", "double2")),
        ("*p++", ("*", ("p++", "p"))),
        ("++*p", ("++", ("*", "p"))),
        ("-a * b", ("*", ("-", "a"), "b")),
        ("!a && ~b", ("&&", ("!", "a"), ("~", "b"))),
        ("&p[a]", ("&", ("[]", "p", "a"))),
        ("(int)a + b", ("+", ("cast-c", "int", "a"), "b")),
        ("(float3*)q", ("cast-c", "float3*", "q")),
        ("((float3*)q)[a].x", (".", ("[]", ("cast-c", "float3*", "q"), "a"), "x")),
        ("static_cast<int>(a) + 1", ("+", ("cast-static", "int", "a"), 1)),
        ("reinterpret_cast<float4*>(q)[a]", ("[]", ("cast-reinterpret", "float4*", "q"), "a")),
        ("float(a)", ("cast-functional", "float", "a")),
        ("a = (b, c)", ("=", "a", (",", "b", "c"))),
        ("a = 1, b = 2", (",", ("=", "a", 1), ("=", "b", 2))),
        ("p[a] += 1", ("+=", ("[]", "p", "a"), 1)),
        ("f(a, b + 1)", ("call", "f", "a", ("+", "b", 1))),
        ("min(a, b) * 2", ("*", ("call", "min", "a", "b"), 2)),
        (
            "threadIdx.x + blockIdx.x * blockDim.x",
            ("+", (".", "threadIdx", "x"), ("*", (".", "blockIdx", "x"), (".", "blockDim", "x"))),
        ),
        ("p->x", ("->", "p", "x")),
        ("a < b == c > d", ("==", ("<", "a", "b"), (">", "c", "d"))),
        ("0x1F & 017 | 0b11", ("|", ("&", 31, 15), 3)),
        ("'a' + 1.5f", ("+", 97, 1.5)),
    ],
)
def test_operator_precedence_and_associativity(code, shape):
    text, expr = expression(code)
    assert sx(expr) == shape
    assert expr.span == span_of(text, code)


def test_every_sub_expression_spans_exactly_its_own_text():
    text, expr = expression("a + b * c << 2 & d")
    got = [(type(n).__name__, source(text, n)) for n in expr.walk()]
    assert got == [
        ("BinaryOp", "a + b * c << 2 & d"),
        ("BinaryOp", "a + b * c << 2"),
        ("BinaryOp", "a + b * c"),
        ("Identifier", "a"),
        ("BinaryOp", "b * c"),
        ("Identifier", "b"),
        ("Identifier", "c"),
        ("Constant", "2"),
        ("Identifier", "d"),
    ]


def test_spans_of_a_ternary_a_cast_and_an_index():
    text, expr = expression("a ? ((float3*)q)[b].y : (float)c")
    got = [
        (type(n).__name__, source(text, n))
        for n in expr.walk()
        if not isinstance(n, (A.TypeName, A.DeclSpecs, A.TypeSpec))
    ]
    assert got == [
        ("Ternary", "a ? ((float3*)q)[b].y : (float)c"),
        ("Identifier", "a"),
        ("Member", "((float3*)q)[b].y"),
        ("Index", "((float3*)q)[b]"),
        ("Cast", "(float3*)q"),
        ("Identifier", "q"),
        ("Identifier", "b"),
        ("Cast", "(float)c"),
        ("Identifier", "c"),
    ]


def test_integer_and_floating_literals_keep_their_text_and_value():
    _text, expr = expression("f(1u, 1ULL, 0x10, 010, 1'000, 2.5f, 1e3, 'x', true, nullptr, \"s\")")
    values = [(a.kind, a.value, a.text) for a in expr.args]
    assert values == [
        ("int", 1, "1u"),
        ("int", 1, "1ULL"),
        ("int", 16, "0x10"),
        ("int", 8, "010"),
        ("int", 1000, "1'000"),
        ("float", 2.5, "2.5f"),
        ("float", 1000.0, "1e3"),
        ("char", ord("x"), "'x'"),
        ("bool", True, "true"),
        ("null", 0, "nullptr"),
        ("string", '"s"', '"s"'),
    ]


# ----------------------------------------------------------------------------- declarations


def test_a_declaration_with_several_declarators_and_initialisers():
    code = "__device__ void f() { int a = 1, *b = &a, c[4] = {1, 2}; }"
    (stmt,) = body_of(code)
    assert isinstance(stmt, A.DeclStmt)
    decl = stmt.decl
    got = [(d.declarator.name, [k for k, _ in d.declarator.derivations], sx(d.init)) for d in decl.declarators]
    assert got == [("a", [], 1), ("b", ["pointer"], ("&", "a")), ("c", ["array"], ("{}", 1, 2))]
    assert [d.span for d in decl.declarators] == [
        span_of(code, "a = 1"),
        span_of(code, "*b = &a"),
        span_of(code, "c[4] = {1, 2}"),
    ]
    assert decl.span == span_of(code, "int a = 1, *b = &a, c[4] = {1, 2};")
    assert stmt.span == decl.span


def test_dim3_with_constructor_arguments_and_with_a_functional_cast():
    code = "void h() { dim3 b(32, 8); dim3 g = dim3(4, 4); dim3 one(1); }"
    b, g, one = body_of(code, "h")
    d = b.decl.declarators[0].declarator
    assert (d.name, [sx(a) for a in d.constructor_args]) == ("b", [32, 8])
    assert [a.span for a in d.constructor_args] == [span_of(code, "32"), span_of(code, "8")]
    assert sx(g.decl.declarators[0].init) == ("call", "dim3", 4, 4)
    assert [sx(a) for a in one.decl.declarators[0].declarator.constructor_args] == [1]


def test_auto_references_and_using_aliases():
    code = "__device__ void f(float *p) { auto x = p[0]; float &r = p[1]; const float &c = r; using real = float; real y = x; }"
    x, r, c, alias, y = body_of(code)
    assert x.decl.specs.type.names == ("auto",)
    assert r.decl.declarators[0].declarator.derivations == (("reference", ()),)
    assert c.decl.specs.qualifiers == ("const",)
    assert alias.decl.specs.storage == ("typedef",)
    assert alias.decl.declarators[0].declarator.name == "real"
    assert alias.decl.declarators[0].declarator.span == span_of(code, "real", 0)
    assert y.decl.specs.type.names == ("real",)


def test_a_static_assert_is_a_node_with_its_condition():
    code = '__device__ void f() { static_assert(sizeof(float4) == 16, "float4"); }'
    (sa,) = body_of(code)
    assert isinstance(sa, A.StaticAssert)
    assert sx(sa.condition) == ("==", ("sizeof", "float4"), 16)
    assert sa.span == span_of(code, 'static_assert(sizeof(float4) == 16, "float4");')


def test_a_top_level_static_assert():
    unit = parse_clean('static_assert(sizeof(int) == 4, "int");')
    assert isinstance(unit.decls[0], A.StaticAssert)


# ----------------------------------------------------------------------------- statements


def test_a_dangling_else_binds_to_the_inner_if():
    code = "__device__ void f(int a, int b, int *p) { if (a) if (b) p[0] = 1; else p[0] = 2; }"
    (outer,) = body_of(code)
    assert isinstance(outer, A.If) and outer.otherwise is None
    inner = outer.then
    assert isinstance(inner, A.If)
    assert sx(inner.otherwise.expr) == ("=", ("[]", "p", 0), 2)
    assert outer.span == span_of(code, "if (a) if (b) p[0] = 1; else p[0] = 2;")
    assert inner.span == span_of(code, "if (b) p[0] = 1; else p[0] = 2;")


def test_an_else_after_a_braced_inner_if_binds_to_the_outer_if():
    code = "__device__ void f(int a, int b, int *p) { if (a) { if (b) p[0] = 1; } else p[0] = 2; }"
    (outer,) = body_of(code)
    assert outer.otherwise is not None
    assert outer.then.items[0].otherwise is None


def test_else_if_chains():
    code = "__device__ void f(int a, int *p) { if (a == 0) p[0] = 0; else if (a == 1) p[0] = 1; else p[0] = 2; }"
    (s,) = body_of(code)
    assert sx(s.cond) == ("==", "a", 0)
    assert sx(s.otherwise.cond) == ("==", "a", 1)
    assert sx(s.otherwise.otherwise.expr) == ("=", ("[]", "p", 0), 2)


def test_for_while_and_do_loops_with_their_parts_and_spans():
    code = (
        "__device__ void f(int n, int *p) {"
        " for (int i = 0; i < n; i += 2) p[i] = i;"
        " for (;;) break;"
        " while (n > 0) { n--; continue; }"
        " do n++; while (n < 4);"
        " }"
    )
    f1, f2, w, d = body_of(code)
    assert isinstance(f1, A.For)
    assert f1.init.decl.declarators[0].declarator.name == "i"
    assert sx(f1.cond) == ("<", "i", "n") and sx(f1.step) == ("+=", "i", 2)
    assert sx(f1.body.expr) == ("=", ("[]", "p", "i"), "i")
    assert f1.span == span_of(code, "for (int i = 0; i < n; i += 2) p[i] = i;")
    assert isinstance(f2, A.For) and f2.cond is None and f2.step is None and isinstance(f2.body, A.Break)
    assert isinstance(w, A.While) and sx(w.cond) == (">", "n", 0)
    assert isinstance(w.body.items[1], A.Continue)
    assert w.span == span_of(code, "while (n > 0) { n--; continue; }")
    assert isinstance(d, A.DoWhile) and sx(d.cond) == ("<", "n", 4)
    assert d.span == span_of(code, "do n++; while (n < 4);")


def test_switch_with_case_and_default_labels():
    code = "__device__ int f(int a) { switch (a) { case 0: case 1: return 1; default: break; } return 0; }"
    sw, ret = body_of(code)
    assert isinstance(sw, A.Switch) and sx(sw.expr) == "a"
    kinds = [(type(i).__name__, sx(getattr(i, "value", None))) for i in sw.body.items]
    assert kinds == [("CaseLabel", 0), ("CaseLabel", 1), ("Return", 1), ("CaseLabel", None), ("Break", None)]
    assert [i.span for i in sw.body.items][:2] == [span_of(code, "case 0:"), span_of(code, "case 1:")]
    assert isinstance(ret, A.Return) and ret.span == span_of(code, "return 0;")


def test_return_without_a_value():
    code = "__device__ void f(int a) { if (a) return; }"
    (s,) = body_of(code)
    assert isinstance(s.then, A.Return) and s.then.value is None
    assert s.then.span == span_of(code, "return;")


# ----------------------------------------------------------------------------- launches and templates


def test_a_launch_keeps_all_four_configuration_arguments():
    code = "void h(float *p, cudaStream_t s) { k<<<grid, block, smem, s>>>(p, 3); }"
    (stmt,) = body_of(code, "h")
    launch = stmt.expr
    assert isinstance(launch, A.Launch)
    assert sx(launch.func) == "k"
    assert [sx(c) for c in launch.config] == ["grid", "block", "smem", "s"]
    assert [sx(a) for a in launch.args] == ["p", 3]
    assert launch.span == span_of(code, "k<<<grid, block, smem, s>>>(p, 3)")
    stream = code.index("s>>>")
    assert [c.span for c in launch.config] == [
        span_of(code, "grid"),
        span_of(code, "block"),
        span_of(code, "smem"),
        Span(stream, stream + 1),
    ]


def test_a_launch_with_expressions_in_the_configuration():
    code = "void h(float *p, int n) { k<<<(n + 255) / 256, 256>>>(p); }"
    (stmt,) = body_of(code, "h")
    assert [sx(c) for c in stmt.expr.config] == [("/", ("+", "n", 255), 256), 256]


def test_a_template_kernel_has_its_parameters_and_its_launch_its_arguments():
    code = (
        "template <typename T, int N>\n__global__ void k(T *p) { p[threadIdx.x] = N; }\n"
        "void h(float *p) { k<float, 4><<<1, 32>>>(p); }"
    )
    unit = parse_clean(code)
    fd = function(unit, "k")
    assert [(tp.kind, tp.name) for tp in fd.template_params] == [("type", "T"), ("value", "N")]
    assert [tp.span for tp in fd.template_params] == [span_of(code, "typename T"), span_of(code, "int N")]
    assert fd.params[0].specs.type.names == ("T",)
    (stmt,) = function(unit, "h").body.items
    launch = stmt.expr
    assert sx(launch.func) == "k"
    assert [sx(a) for a in launch.template_args] == ["float", 4]
    assert launch.span == span_of(code, "k<float, 4><<<1, 32>>>(p)")


def test_a_template_device_function_call_with_explicit_arguments():
    code = "template <class T> __device__ T twice(T x) { return x + x; }\n__device__ float g(float y) { return twice<float>(y); }"
    unit = parse_clean(code)
    ret = function(unit, "g").body.items[0]
    assert isinstance(ret.value, A.Call)
    assert sx(ret.value.func) == "twice"
    assert [sx(a) for a in ret.value.template_args] == ["float"]


def test_shared_memory_struct_in_the_cuda_samples_style():
    code = (
        "template <class T> struct SharedMemory {\n"
        "  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }\n"
        "  __device__ inline operator const T *() const { extern __shared__ int __smem[]; return (T *)__smem; }\n"
        "};\n"
        "template <> struct SharedMemory<double> {\n"
        "  __device__ inline operator double *() { extern __shared__ double __smem_d[]; return (double *)__smem_d; }\n"
        "};\n"
        "template <class T> __global__ void reduce(T *g) { T *sdata = SharedMemory<T>(); sdata[0] = g[0]; }\n"
    )
    unit = parse_clean(code)
    tmpl = unit.decls[0]
    assert isinstance(tmpl, A.TemplateDecl)
    sd = tmpl.decl.specs.type.struct
    assert sd.name == "SharedMemory"
    ops = [m.name for m in sd.members if isinstance(m, A.FunctionDef)]
    assert ops == ["operator T *", "operator const T *"]
    assert unit.decls[1].decl.specs.type.struct.name == "SharedMemory<double>"
    init = function(unit, "reduce").body.items[0].decl.declarators[0].init
    assert isinstance(init, A.Call) and sx(init.func) == "SharedMemory"
    assert [sx(a) for a in init.template_args] == ["T"]


# ----------------------------------------------------------------------------- C++ that is understood


def test_kernels_inside_namespaces_and_extern_c_blocks_are_top_level_functions():
    code = 'namespace a { namespace b { __global__ void k1(float *p) { p[0] = 0; } } }\nextern "C" { __global__ void k2(int *p) { p[0] = 0; } }'
    unit = parse_clean(code)
    assert [d.name for d in unit.decls] == ["k1", "k2"]
    assert function(unit, "k1").span == span_of(code, "__global__ void k1(float *p) { p[0] = 0; }")


def test_namespace_aliases_and_using_directives_are_accepted():
    unit = parse_clean(
        "namespace cg = cooperative_groups;\nusing namespace std;\nusing std::vector;\n__global__ void k() {}"
    )
    assert [d.name for d in unit.decls if isinstance(d, A.FunctionDef)] == ["k"]


def test_cooperative_groups_calls_and_methods():
    code = (
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(float *p) {\n"
        "  cg::thread_block cta = cg::this_thread_block();\n"
        "  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);\n"
        "  cta.sync();\n"
        "  cg::sync(cta);\n"
        "  p[tile.thread_rank()] = 0;\n"
        "}"
    )
    items = function(parse_clean(code), "k").body.items
    assert items[0].decl.specs.type.names == ("cg::thread_block",)
    assert sx(items[0].decl.declarators[0].init) == ("call", "cg::this_thread_block")
    assert items[1].decl.specs.type.names == ("cg::thread_block_tile",)
    assert sx(items[2].expr) == ("call", (".", "cta", "sync"))
    assert items[2].expr.span == span_of(code, "cta.sync()")
    assert sx(items[3].expr) == ("call", "cg::sync", "cta")


def test_a_class_with_fields_methods_constructors_and_a_destructor():
    code = (
        "class Acc {\n public:\n  __device__ Acc() : sum(0) {}\n  __device__ explicit Acc(float s) : sum(s) {}\n"
        "  __device__ ~Acc() {}\n  __device__ void add(float x) { sum += x; }\n  float sum;\n private:\n  int n;\n};\n"
        "__global__ void k(float *p) { Acc a(1.0f); a.add(p[0]); }"
    )
    unit = parse_clean(code)
    sd = unit.decls[0].specs.type.struct
    assert (sd.kind, sd.name) == ("class", "Acc")
    fields = [d.declarators[0].declarator.name for d in sd.members if isinstance(d, A.Declaration)]
    methods = [m.name for m in sd.members if isinstance(m, A.FunctionDef)]
    assert fields == ["sum", "n"]
    assert methods == ["Acc", "Acc", "add"]
    assert function(unit, "k").body.items[1].expr.span == span_of(code, "a.add(p[0])")


def test_kernel_prototypes_and_definitions():
    unit = parse_clean("__global__ void k(float *p, int n);\n__global__ void k(float *p, int n) { p[n] = 0; }")
    assert isinstance(unit.decls[0], A.Declaration)
    assert isinstance(unit.decls[1], A.FunctionDef)


def test_a_default_argument_does_not_end_the_function_early():
    code = "__device__ void d(float *p, float w = 0.0f) { p[0] = w; }\n__global__ void k(float *p) { d(p); }"
    unit = parse_clean(code)
    assert [d.name for d in unit.decls] == ["d", "k"]


@pytest.mark.parametrize(
    "header",
    [
        "__global__ void init(curandState *const states, unsigned seed)",
        "__global__ void init(const cg::thread_block &cta, curandState *states, unsigned seed)",
    ],
)
def test_a_type_from_a_header_that_is_never_read_is_learned_from_its_use(header):
    code = header + " { curandState local = states[threadIdx.x]; states[threadIdx.x] = local; }"
    unit = parse_clean(code)
    fd = function(unit, "init")
    names = [p.specs.type.names for p in fd.params]
    assert ("curandState",) in names


def test_a_cast_to_an_unknown_pointer_type_is_learned():
    code = "void h(char *shm) { f((cudaIpcMemHandle_t *)&shm[3]); }"
    (stmt,) = body_of(code, "h")
    assert sx(stmt.expr) == ("call", "f", ("cast-c", "cudaIpcMemHandle_t*", ("&", ("[]", "shm", 3))))


# ----------------------------------------------------------------------------- C++ that is not understood


UNSUPPORTED = [
    ("auto inc = [&](int v) { return v + 1; };", "lambda expression"),
    ("for (int v : values) p[0] += v;", "range-based for loop"),
    ("throw 1;", "exception handling"),
    ("decltype(p) r = p;", "decltype"),
]


@pytest.mark.parametrize("code, what", UNSUPPORTED, ids=[w for _, w in UNSUPPORTED])
def test_an_unsupported_construct_is_reported_once_by_name_and_the_rest_of_the_kernel_is_parsed(code, what):
    text = f"__global__ void k(float *p, int lane) {{\n  p[0] = 1;\n  {code}\n  p[1] = 2;\n}}\n__global__ void k2(float *p) {{ p[0] = 3; }}"
    result = parse(text)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("WL902", f"unsupported C++ construct ({what}) skipped")
    ]
    (d,) = result.diagnostics
    line = span_of(text, code)
    assert line.start <= d.span.start < line.end
    # the statements around it survive, and so does the next kernel
    items = function(result.unit, "k").body.items
    stores = [sx(i.expr) for i in items if isinstance(i, A.ExprStmt) and i.expr is not None]
    assert stores == [("=", ("[]", "p", 0), 1), ("=", ("[]", "p", 1), 2)]
    assert [s.what for s in result.skipped] == [what]
    assert result.skipped[0].span == line
    assert function(result.unit, "k2") is not None


def test_a_top_level_construct_that_cannot_be_parsed_costs_only_that_declaration():
    text = "__device__ int x = sizeof...(T);\n__global__ void k(float *p) { p[0] = 0; }"
    result = parse(text)
    assert [d.code for d in result.diagnostics] == ["WL901"]
    assert result.diagnostics[0].span == span_of(text, "...")
    assert [s.span for s in result.skipped] == [span_of(text, "__device__ int x = sizeof...(T);")]
    assert [d.name for d in result.unit.decls if isinstance(d, A.FunctionDef)] == ["k"]


def test_two_different_constructs_in_one_kernel_are_two_diagnostics():
    text = "__global__ void k(float *p) { auto f = [](int x) { return x; }; decltype(p) r = p; p[0] = 1; }"
    result = parse(text)
    assert [d.message for d in result.diagnostics] == [
        "unsupported C++ construct (lambda expression) skipped",
        "unsupported C++ construct (decltype) skipped",
    ]
    (stmt,) = [i for i in function(result.unit, "k").body.items if isinstance(i, A.ExprStmt) and i.expr]
    assert sx(stmt.expr) == ("=", ("[]", "p", 0), 1)


# ----------------------------------------------------------------------------- syntax errors


def test_a_syntax_error_is_wl901_at_the_offending_token_and_the_next_kernel_still_parses():
    text = "__global__ void bad(int *p) {\n  int x;\n  x = = 3;\n  p[0] = x;\n}\n__global__ void good(int *p) { p[0] = 1; }\n"
    result = parse(text)
    (d,) = result.diagnostics
    assert d.code == "WL901"
    assert d.message == "syntax error: unexpected '='"
    assert d.span == span_of(text, "=", 1)
    assert function(result.unit, "good").body.items[0].span == span_of(text, "p[0] = 1;")
    # the statements of the bad kernel around the error are kept too
    bad = function(result.unit, "bad")
    kept = [source(text, i) for i in bad.body.items if not (isinstance(i, A.ExprStmt) and i.expr is None)]
    assert kept == ["int x;", "p[0] = x;"]
    assert [s.span for s in result.skipped] == [span_of(text, "x = = 3;")]


def test_a_missing_semicolon_at_the_end_of_a_file():
    text = "__device__ int x = 3"
    result = parse(text)
    (d,) = result.diagnostics
    assert d.code == "WL901"
    assert "end of declaration" in d.message


def test_parse_results_are_independent_between_calls():
    first = parse("typedef int Handle;\n__device__ Handle h;")
    assert not first.diagnostics
    # `Handle` is not a type in a new file: `Handle * h` is an expression statement here
    second = parse("__device__ void f(int Handle, int h) { Handle * h; }")
    assert not second.diagnostics
    assert isinstance(second, ParseResult)


# ----------------------------------------------------------------------------- line and column (preprocessor)


def preprocessed(text: str, tmp_path, name: str = "k.cu"):
    pre = pytest.importorskip("analyzer.source.preprocess")
    path = tmp_path / name
    path.write_text(text)
    return pre.preprocess_file(str(path))


def loc(pp, span: Span) -> tuple[int, int, int, int]:
    where = pp.linemap.resolve_span(span)
    return where.line, where.column, where.end_line, where.end_column


POSITIONS = """\
#include <cuda_runtime.h>
#define TILE 32
/* a comment
   over two lines */
__global__ void transpose(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;   // column
    tile[threadIdx.y][threadIdx.x] = in[x];
    __syncthreads();
    out[x] = tile[threadIdx.x][threadIdx.y];
}
"""


def test_positions_resolve_to_line_and_column_in_the_original_file(tmp_path):
    pp = preprocessed(POSITIONS, tmp_path)
    unit = parse_clean(pp.text)
    fd = function(unit, "transpose")
    assert loc(pp, fd.span) == (5, 1, 12, 2)
    assert loc(pp, fd.declarator.span) == (5, 17, 5, 62)
    store = fd.body.items[2].expr
    assert loc(pp, store.target.span) == (9, 5, 9, 35)
    assert loc(pp, store.value.span) == (9, 38, 9, 43)
    last = fd.body.items[4].expr
    assert loc(pp, last.value.span) == (11, 14, 11, 44)


def test_a_span_over_a_macro_use_ends_after_the_macro(tmp_path):
    pp = preprocessed(POSITIONS, tmp_path)
    fd = function(parse_clean(pp.text), "transpose")
    tile = fd.body.items[0].decl.declarators[0].declarator
    assert loc(pp, tile.span) == (7, 22, 7, 42)
    x_init = fd.body.items[1].decl.declarators[0].init
    assert loc(pp, x_init.span) == (8, 13, 8, 44)


def test_a_syntax_error_resolves_to_its_line_and_column(tmp_path):
    text = "__global__ void bad(int *p) {\n  int x;\n  x = = 3;\n}\n"
    pp = preprocessed(text, tmp_path)
    (d,) = parse(pp.text).diagnostics
    assert loc(pp, d.span) == (3, 7, 3, 8)


def test_an_unsupported_construct_resolves_to_its_line(tmp_path):
    text = "__global__ void k(float *p) {\n  p[0] = 1;\n  auto f = [](int v) { return v; };\n  p[1] = 2;\n}\n"
    pp = preprocessed(text, tmp_path)
    (d,) = parse(pp.text).diagnostics
    assert d.code == "WL902"
    assert loc(pp, d.span)[0] == 3


# ----------------------------------------------------------------------------- fixture files

FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures" / "frontend"


def test_positions_in_an_included_header_resolve_to_the_header(tmp_path):
    pre = pytest.importorskip("analyzer.source.preprocess")
    pp = pre.preprocess_file(str(FIXTURES / "transpose.cu"))
    unit = parse_clean(pp.text)
    flat = function(unit, "flat")
    where = pp.linemap.resolve_span(flat.declarator.span)
    assert where.path.endswith("tile.cuh")
    assert (where.line, where.column) == (6, 23)
    kernel = function(unit, "transposeCoalesced")
    where = pp.linemap.resolve_span(kernel.declarator.span)
    assert where.path.endswith("transpose.cu") and (where.line, where.column) == (5, 17)


def test_the_reduction_fixture_reports_only_its_host_lambda(tmp_path):
    pre = pytest.importorskip("analyzer.source.preprocess")
    pp = pre.preprocess_file(str(FIXTURES / "reduction.cu"))
    result = parse(pp.text)
    (d,) = result.diagnostics
    assert d.message == "unsupported C++ construct (lambda expression) skipped"
    assert loc(pp, d.span)[0] == 72
    names = [x.name for x in result.unit.decls if isinstance(x, A.FunctionDef)]
    assert names == ["reduce1", "histogram", "reduce"]


# ----------------------------------------------------------------------------- host-code forms


def test_a_function_template_named_as_a_call_argument():
    code = (
        "template <typename T> __global__ void k(T *p) { p[0] = 0; }\n"
        "void h(cudaFuncAttributes *a) { cudaFuncGetAttributes(a, k<float>); }"
    )
    (stmt,) = body_of(code, "h")
    arg = stmt.expr.args[1]
    assert isinstance(arg, A.TemplateId) and arg.name == "k"
    assert [sx(a) for a in arg.args] == ["float"]
    assert arg.span == span_of(code, "k<float>")


def test_a_variable_named_like_its_struct_tag_is_a_variable_before_an_arrow():
    code = "struct Data { int latch; };\nvoid h(Data *d) { Data *copy = d; copy->latch = 1; d->latch = sizeof(Data); }"
    unit = parse_clean(code)
    assert len(function(unit, "h").body.items) == 3


def test_a_launch_printed_with_split_brackets_by_a_preprocessor_is_a_launch():
    code = "void h(float *p) { do { (k<< <4, 32>> >(p)); } while (0); }"
    (loop,) = body_of(code, "h")
    launch = loop.body.items[0].expr
    assert isinstance(launch, A.Launch)
    assert [sx(c) for c in launch.config] == [4, 32]
    assert launch.span == span_of(code, "k<< <4, 32>> >(p)")
