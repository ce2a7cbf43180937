"""Specification of analyzer.ir.types: sizes, alignments and field offsets as nvcc lays them out.

`LAYOUTS` is the expectations table: each type, spelled as in CUDA, with the `sizeof`,
`alignof` and field offsets that nvcc gives on 64-bit Linux. The types are defined in
`DEFINITIONS`, which warplint parses and lowers like any file; `layout_of` reads the type
back. tests/test_types_nvcc.py compiles warplint's numbers for the same table as
`static_assert`s with nvcc, so the table and the compiler cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from analyzer.ir import types as T
from analyzer.ir.lower import Lowerer
from analyzer.syntax.parse import parse

DEFINITIONS = """\
struct A { char c; float f; };
struct B { char c; double d; char e; };
struct C { char a; short b; int c; char d; };
struct Nested { char c; struct B b; };
struct WithArray { int n; float v[3]; char tag[5]; };
union U { int i; double d; char c[3]; };
struct WithUnion { char tag; union U u; short s; };
struct Outer { struct A arr[2]; char c; };
struct __align__(16) V3 { float x, y, z; };
struct __align__(8) F2 { float a; float b; };
struct alignas(8) P2 { float a; };
struct __attribute__((aligned(16))) G { int a; };
struct Mixed { float3 p; float4 q; };
struct CharV4 { char c; float4 v; };
struct Particle { float3 pos; float mass; };
struct D3 { double3 a; char c; };
struct PtrInt { int a; void *p; int b; };
struct BS { bool b; short s; };
struct LLC { long long x; char c; };
struct M1 { char c; alignas(16) float f; };
struct M2 { alignas(16) float f; char c; };
struct M3 { char c; __align__(8) int i; };
struct Empty {};
struct Half2Pair { __half2 a; __half b; };
union Color32 { struct { unsigned char b, g, r, a; }; unsigned int u; };
struct Tagged { int tag; union { float f; double d; }; char c; };
typedef struct { int width; int height; float *elements; } Matrix;
typedef float F3[3];
typedef float4 Quad[2];
enum Color { RED, GREEN, BLUE };
"""


@dataclass(frozen=True)
class Layout:
    type: str  # as spelled in CUDA
    size: int
    align: int
    offsets: dict[str, int] = field(default_factory=dict)


LAYOUTS: list[Layout] = [
    # scalars
    Layout("char", 1, 1),
    Layout("bool", 1, 1),
    Layout("short", 2, 2),
    Layout("int", 4, 4),
    Layout("unsigned", 4, 4),
    Layout("unsigned char", 1, 1),
    Layout("long", 8, 8),
    Layout("long long", 8, 8),
    Layout("unsigned long long", 8, 8),
    Layout("size_t", 8, 8),
    Layout("float", 4, 4),
    Layout("double", 8, 8),
    Layout("__half", 2, 2),
    Layout("float *", 8, 8),
    Layout("void *", 8, 8),
    Layout("Color", 4, 4),
    # CUDA vector types (vector_types.h)
    Layout("char2", 2, 2, {"x": 0, "y": 1}),
    Layout("char4", 4, 4, {"x": 0, "w": 3}),
    Layout("uchar3", 3, 1, {"x": 0, "y": 1, "z": 2}),
    Layout("short3", 6, 2, {"x": 0, "y": 2, "z": 4}),
    Layout("short4", 8, 8, {"w": 6}),
    Layout("int2", 8, 8, {"x": 0, "y": 4}),
    Layout("int3", 12, 4, {"z": 8}),
    Layout("int4", 16, 16, {"w": 12}),
    Layout("uint3", 12, 4, {"z": 8}),
    Layout("float2", 8, 8, {"y": 4}),
    Layout("float3", 12, 4, {"x": 0, "y": 4, "z": 8}),
    Layout("float4", 16, 16, {"x": 0, "y": 4, "z": 8, "w": 12}),
    Layout("double2", 16, 16, {"x": 0, "y": 8}),
    Layout("double3", 24, 8, {"z": 16}),
    Layout("longlong2", 16, 16, {"y": 8}),
    Layout("__half2", 4, 4),
    Layout("dim3", 12, 4, {"x": 0, "y": 4, "z": 8}),
    # arrays
    Layout("F3", 12, 4),
    Layout("Quad", 32, 16),
    # structs with padding
    Layout("A", 8, 4, {"c": 0, "f": 4}),
    Layout("B", 24, 8, {"c": 0, "d": 8, "e": 16}),
    Layout("C", 12, 4, {"a": 0, "b": 2, "c": 4, "d": 8}),
    Layout("BS", 4, 2, {"b": 0, "s": 2}),
    Layout("LLC", 16, 8, {"x": 0, "c": 8}),
    Layout("PtrInt", 24, 8, {"a": 0, "p": 8, "b": 16}),
    Layout("Matrix", 16, 8, {"width": 0, "height": 4, "elements": 8}),
    Layout("Empty", 1, 1),
    # nested structs, arrays in structs, unions
    Layout("Nested", 32, 8, {"c": 0, "b": 8}),
    Layout("WithArray", 24, 4, {"n": 0, "v": 4, "tag": 16}),
    Layout("Outer", 20, 4, {"arr": 0, "c": 16}),
    Layout("U", 8, 8, {"i": 0, "d": 0, "c": 0}),
    Layout("WithUnion", 24, 8, {"tag": 0, "u": 8, "s": 16}),
    # anonymous members: their fields belong to the enclosing struct or union
    Layout("Color32", 4, 4, {"b": 0, "g": 1, "r": 2, "a": 3, "u": 0}),
    Layout("Tagged", 24, 8, {"tag": 0, "f": 8, "d": 8, "c": 16}),
    # vector members
    Layout("Particle", 16, 4, {"pos": 0, "mass": 12}),
    Layout("Mixed", 32, 16, {"p": 0, "q": 16}),
    Layout("CharV4", 32, 16, {"c": 0, "v": 16}),
    Layout("D3", 32, 8, {"a": 0, "c": 24}),
    Layout("Half2Pair", 8, 4, {"a": 0, "b": 4}),
    # explicit alignment: __align__, alignas, __attribute__((aligned)) on a struct or a member
    Layout("V3", 16, 16, {"x": 0, "y": 4, "z": 8}),
    Layout("F2", 8, 8, {"a": 0, "b": 4}),
    Layout("P2", 8, 8, {"a": 0}),
    Layout("G", 16, 16, {"a": 0}),
    Layout("M1", 32, 16, {"c": 0, "f": 16}),
    Layout("M2", 16, 16, {"f": 0, "c": 4}),
    Layout("M3", 16, 8, {"c": 0, "i": 8}),
]


def probe_source(layouts: list[Layout] = LAYOUTS) -> str:
    """DEFINITIONS plus one `typedef T __probe_N;` per entry, to read each type back."""
    lines = [DEFINITIONS]
    lines += [f"typedef {entry.type} __probe_{i};" for i, entry in enumerate(layouts)]
    return "\n".join(lines) + "\n"


def warplint_layouts(layouts: list[Layout] = LAYOUTS) -> list[T.CType]:
    """The type warplint computes for each entry, from parsing and lowering the definitions."""
    text = probe_source(layouts)
    result = parse(text)
    assert result.diagnostics == [], result.diagnostics
    lowerer = Lowerer(text, "layouts.cu")
    lowerer.lower_unit(result.unit)
    assert [d for d in lowerer.diagnostics if d.code != "WL904"] == []
    return [lowerer.types[f"__probe_{i}"] for i in range(len(layouts))]


@pytest.fixture(scope="module")
def computed() -> dict[str, T.CType]:
    return {entry.type: t for entry, t in zip(LAYOUTS, warplint_layouts())}


def test_the_table_has_at_least_thirty_types():
    assert len(LAYOUTS) >= 30
    assert len({e.type for e in LAYOUTS}) == len(LAYOUTS)


@pytest.mark.parametrize("entry", LAYOUTS, ids=[e.type for e in LAYOUTS])
def test_size_alignment_and_offsets_match_nvcc(entry, computed):
    t = computed[entry.type]
    assert (t.size, t.align) == (entry.size, entry.align), str(t)
    if entry.offsets:
        assert isinstance(t, T.StructType)
        got = {f.name: f.offset for f in t.fields if f.name in entry.offsets}
        assert got == entry.offsets


def test_a_struct_lists_every_field_in_declaration_order(computed):
    t = computed["C"]
    assert [(f.name, str(f.type), f.offset) for f in t.fields] == [
        ("a", "char", 0),
        ("b", "short", 2),
        ("c", "int", 4),
        ("d", "char", 8),
    ]


def test_array_fields_keep_their_length(computed):
    v = computed["WithArray"].field("v")
    assert isinstance(v.type, T.ArrayType) and (v.type.length, v.type.size, v.type.align) == (3, 12, 4)


def test_a_nested_struct_field_has_the_nested_layout(computed):
    b = computed["Nested"].field("b").type
    assert isinstance(b, T.StructType) and b.name == "B" and (b.size, b.align) == (24, 8)


def test_explicit_alignment_is_recorded_on_the_struct(computed):
    assert computed["V3"].explicit_align == 16
    assert computed["P2"].explicit_align == 8
    assert computed["G"].explicit_align == 16
    assert computed["A"].explicit_align is None


def test_unions_are_marked_and_vectors_are_marked(computed):
    assert computed["U"].is_union and not computed["A"].is_union
    assert computed["float3"].is_vector and not computed["Particle"].is_vector


# ----------------------------------------------------------------------------- the calculator alone


def test_layout_struct_pads_each_member_to_its_alignment_and_the_end_to_the_largest():
    t = T.layout_struct("S", [("c", T.CHAR), ("d", T.DOUBLE), ("s", T.SHORT)])
    assert [(f.name, f.offset) for f in t.fields] == [("c", 0), ("d", 8), ("s", 16)]
    assert (t.size, t.align) == (24, 8)


def test_layout_struct_with_an_explicit_alignment_rounds_the_size_up():
    t = T.layout_struct("S", [("x", T.FLOAT)] * 3, explicit_align=16)
    assert (t.size, t.align) == (16, 16)


def test_a_union_is_as_large_as_its_largest_member():
    t = T.layout_struct("U", [("c", T.CHAR), ("d", T.DOUBLE), ("i", T.INT)], is_union=True)
    assert [f.offset for f in t.fields] == [0, 0, 0]
    assert (t.size, t.align) == (8, 8)


def test_a_member_of_unknown_layout_makes_the_struct_unknown_from_there():
    t = T.layout_struct("S", [("a", T.INT), ("t", T.UnknownType("T")), ("b", T.INT)])
    assert [f.offset for f in t.fields] == [0, None, None]
    assert (t.size, t.align) == (None, None) and not t.is_known


def test_with_alignment_raises_only_the_alignment_of_a_scalar():
    f = T.with_alignment(T.FLOAT, 16)
    assert (f.size, f.align) == (4, 16)
    assert T.with_alignment(T.DOUBLE, 4) is T.DOUBLE  # never weakens


def test_with_alignment_on_a_struct_relays_it_out():
    v = T.with_alignment(T.builtin_type("float3"), 16)
    assert (v.size, v.align) == (16, 16)
    assert [f.offset for f in v.fields] == [0, 4, 8]


@pytest.mark.parametrize(
    "name, size, align",
    [
        ("unsigned int", 4, 4),
        ("signed char", 1, 1),
        ("unsigned short int", 2, 2),
        ("long long int", 8, 8),
        ("uint64_t", 8, 8),
        ("int8_t", 1, 1),
        ("ptrdiff_t", 8, 8),
        ("  unsigned   long  ", 8, 8),
        ("ushort2", 4, 4),
        ("ulonglong2", 16, 16),
        ("__nv_bfloat16", 2, 2),
        ("cudaStream_t", 8, 8),
    ],
)
def test_builtin_type_names(name, size, align):
    t = T.builtin_type(name)
    assert t is not None and (t.size, t.align) == (size, align)


def test_unknown_names_are_not_builtin():
    assert T.builtin_type("Matrix") is None
    assert T.builtin_type("float5") is None


def test_pointers_arrays_and_element_types():
    p = T.PointerType(T.builtin_type("float4"))
    assert (p.size, p.align) == (8, 8)
    assert str(p) == "float4*"
    a = T.ArrayType(T.builtin_type("float3"), 10)
    assert (a.size, a.align) == (120, 4)
    assert str(a) == "float3[10]"
    assert T.element_type(p) is p.pointee and T.element_type(a) is a.element
    assert T.element_type(T.INT) is None
    assert T.ArrayType(T.FLOAT, None).size is None


@pytest.mark.parametrize(
    "name, natural",
    [
        ("float", True),
        ("float2", True),
        ("float4", True),
        ("double2", True),
        ("float3", False),
        ("short3", False),
        ("uchar3", False),
        ("int3", False),
    ],
)
def test_natural_accesses_are_aligned_power_of_two_sizes(name, natural):
    assert T.is_natural_access(T.builtin_type(name)) is natural
