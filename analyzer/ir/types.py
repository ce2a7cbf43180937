"""C and CUDA types with their size, alignment and field offsets (the layout calculator).

The numbers follow the CUDA ABI on 64-bit Linux (LP64): what `nvcc` gives for `sizeof`,
`alignof` and `offsetof`. `tests/test_types_nvcc.py` checks them against the real compiler.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.records import field, record


class CType:
    """Base of every type. `size` and `align` are in bytes; None when unknown (a template parameter)."""

    name: str
    size: int | None
    align: int | None

    @property
    def is_known(self) -> bool:
        return self.size is not None and self.align is not None

    def __str__(self) -> str:
        return self.name


@record
class ScalarType(CType):
    name: str
    size: int
    align: int
    is_float: bool = False
    is_signed: bool = True
    is_bool: bool = False


@record
class VoidType(CType):
    name: str = "void"
    size: int | None = None
    align: int | None = None


@record
class UnknownType(CType):
    """A type whose layout warplint cannot know: a template parameter, an unseen class."""

    name: str
    size: int | None = None
    align: int | None = None


@record
class Field:
    name: str
    type: CType
    offset: int | None


@record
class StructType(CType):
    """A struct, union, class, or CUDA vector type (float3 has fields x, y, z)."""

    name: str
    fields: tuple[Field, ...]
    size: int | None
    align: int | None
    is_union: bool = False
    is_vector: bool = False
    explicit_align: int | None = None  # from __align__(n), alignas(n), aligned(n)

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@record
class PointerType(CType):
    pointee: CType
    name: str = ""
    size: int = 8
    align: int = 8

    def __str__(self) -> str:
        return f"{self.pointee}*"


@record
class ArrayType(CType):
    element: CType
    length: int | None  # None for `extern __shared__ float s[]` and unknown bounds
    name: str = ""

    @property
    def size(self) -> int | None:  # type: ignore[override]
        if self.length is None or self.element.size is None:
            return None
        return self.length * self.element.size

    @property
    def align(self) -> int | None:  # type: ignore[override]
        return self.element.align

    def __str__(self) -> str:  # C order: the outermost dimension first, `float[32][33]`
        dims: list[str] = []
        inner: CType = self
        while isinstance(inner, ArrayType):
            dims.append(f"[{'' if inner.length is None else inner.length}]")
            inner = inner.element
        return f"{inner}{''.join(dims)}"


@record
class FunctionType(CType):
    returns: CType
    params: tuple[CType, ...] = field(default_factory=tuple)
    name: str = "function"
    size: int | None = None
    align: int | None = None


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def layout_struct(
    name: str,
    members: Sequence[tuple[str, CType]],
    *,
    is_union: bool = False,
    explicit_align: int | None = None,
    is_vector: bool = False,
) -> StructType:
    """Lay out `members` with C's rules: each at the next multiple of its alignment,
    the whole padded to a multiple of the largest alignment (or `explicit_align`)."""
    offset = 0
    align = 1
    size = 0
    fields: list[Field] = []
    known = True
    for member_name, member_type in members:
        if not member_type.is_known or not known:
            known = False
            fields.append(Field(member_name, member_type, None))
            continue
        m_align = member_type.align or 1
        align = max(align, m_align)
        if is_union:
            fields.append(Field(member_name, member_type, 0))
            size = max(size, member_type.size or 0)
        else:
            offset = _align_up(offset, m_align)
            fields.append(Field(member_name, member_type, offset))
            offset += member_type.size or 0
            size = offset
    if not known:
        return StructType(name, tuple(fields), None, None, is_union, is_vector, explicit_align)
    if explicit_align:
        align = max(align, explicit_align)
    size = _align_up(max(size, 0), align) if size else (0 if not members else align)
    if not members:
        size = 1  # an empty struct has size 1 in C++
    return StructType(name, tuple(fields), size, align, is_union, is_vector, explicit_align)


def with_alignment(t: CType, align: int) -> CType:
    """The same type with a stronger alignment (`__align__`/`alignas` on a typedef or struct)."""
    if isinstance(t, StructType):
        members = [(f.name, f.type) for f in t.fields]
        return layout_struct(
            t.name,
            members,
            is_union=t.is_union,
            explicit_align=max(align, t.explicit_align or 1),
            is_vector=t.is_vector,
        )
    if isinstance(t, ScalarType) and align > t.align:
        # only the alignment grows: `struct { alignas(16) float f; char c; }` has c at offset 4
        return ScalarType(t.name, t.size, align, t.is_float, t.is_signed, t.is_bool)
    return t


def _scalar(name: str, size: int, *, is_float: bool = False, signed: bool = True) -> ScalarType:
    return ScalarType(name, size, size, is_float, signed)


BOOL = ScalarType("bool", 1, 1, False, False, True)
CHAR = _scalar("char", 1)
SCHAR = _scalar("signed char", 1)
UCHAR = _scalar("unsigned char", 1, signed=False)
SHORT = _scalar("short", 2)
USHORT = _scalar("unsigned short", 2, signed=False)
INT = _scalar("int", 4)
UINT = _scalar("unsigned int", 4, signed=False)
LONG = _scalar("long", 8)
ULONG = _scalar("unsigned long", 8, signed=False)
LONGLONG = _scalar("long long", 8)
ULONGLONG = _scalar("unsigned long long", 8, signed=False)
HALF = ScalarType("__half", 2, 2, True, True)
BF16 = ScalarType("__nv_bfloat16", 2, 2, True, True)
FLOAT = _scalar("float", 4, is_float=True)
DOUBLE = _scalar("double", 8, is_float=True)
LONGDOUBLE = ScalarType("long double", 16, 16, True, True)
VOID = VoidType()

_SCALARS: dict[str, CType] = {
    "bool": BOOL,
    "_Bool": BOOL,
    "char": CHAR,
    "signed char": SCHAR,
    "unsigned char": UCHAR,
    "short": SHORT,
    "short int": SHORT,
    "signed short": SHORT,
    "signed short int": SHORT,
    "unsigned short": USHORT,
    "unsigned short int": USHORT,
    "int": INT,
    "signed": INT,
    "signed int": INT,
    "unsigned": UINT,
    "unsigned int": UINT,
    "long": LONG,
    "long int": LONG,
    "signed long": LONG,
    "signed long int": LONG,
    "unsigned long": ULONG,
    "unsigned long int": ULONG,
    "long long": LONGLONG,
    "long long int": LONGLONG,
    "signed long long": LONGLONG,
    "signed long long int": LONGLONG,
    "unsigned long long": ULONGLONG,
    "unsigned long long int": ULONGLONG,
    "float": FLOAT,
    "double": DOUBLE,
    "long double": LONGDOUBLE,
    "void": VOID,
    # fixed-width and CUDA/C library typedefs
    "size_t": ULONG,
    "ssize_t": LONG,
    "ptrdiff_t": LONG,
    "intptr_t": LONG,
    "uintptr_t": ULONG,
    "int8_t": SCHAR,
    "uint8_t": UCHAR,
    "int16_t": SHORT,
    "uint16_t": USHORT,
    "int32_t": INT,
    "uint32_t": UINT,
    "int64_t": LONG,
    "uint64_t": ULONG,
    "uint": UINT,
    "ushort": USHORT,
    "uchar": UCHAR,
    "ulong": ULONG,
    "__half": HALF,
    "half": HALF,
    "__nv_bfloat16": BF16,
    "nv_bfloat16": BF16,
    "clock_t": LONG,  # <time.h> on Linux x86-64, as nvcc's host compiler defines it
    "time_t": LONG,
    "wchar_t": INT,
    "char16_t": USHORT,
    "char32_t": UINT,
    "cudaTextureObject_t": ULONGLONG,
    "cudaSurfaceObject_t": ULONGLONG,
    "cudaError_t": INT,
    "cufftReal": FLOAT,  # cufft.h
    "cufftDoubleReal": DOUBLE,
    "cudaStream_t": PointerType(VOID),
    "cudaEvent_t": PointerType(VOID),
}

# CUDA vector types: (base scalar, count, alignment) from vector_types.h.
_VECTOR_SPECS: dict[str, tuple[ScalarType, int, int]] = {}


def _add_vectors(prefix: str, base: ScalarType, aligns: dict[int, int]) -> None:
    for count, align in aligns.items():
        _VECTOR_SPECS[f"{prefix}{count}"] = (base, count, align)


_add_vectors("char", CHAR, {1: 1, 2: 2, 3: 1, 4: 4})
_add_vectors("uchar", UCHAR, {1: 1, 2: 2, 3: 1, 4: 4})
_add_vectors("short", SHORT, {1: 2, 2: 4, 3: 2, 4: 8})
_add_vectors("ushort", USHORT, {1: 2, 2: 4, 3: 2, 4: 8})
_add_vectors("int", INT, {1: 4, 2: 8, 3: 4, 4: 16})
_add_vectors("uint", UINT, {1: 4, 2: 8, 3: 4, 4: 16})
_add_vectors("long", LONG, {1: 8, 2: 16, 3: 8, 4: 16})
_add_vectors("ulong", ULONG, {1: 8, 2: 16, 3: 8, 4: 16})
_add_vectors("longlong", LONGLONG, {1: 8, 2: 16, 3: 8, 4: 16})
_add_vectors("ulonglong", ULONGLONG, {1: 8, 2: 16, 3: 8, 4: 16})
_add_vectors("float", FLOAT, {1: 4, 2: 8, 3: 4, 4: 16})
_add_vectors("double", DOUBLE, {1: 8, 2: 16, 3: 8, 4: 16})
_VECTOR_SPECS["__half2"] = (HALF, 2, 4)
_VECTOR_SPECS["half2"] = (HALF, 2, 4)
_VECTOR_SPECS["__nv_bfloat162"] = (BF16, 2, 4)
_VECTOR_SPECS["nv_bfloat162"] = (BF16, 2, 4)
_VECTOR_SPECS["cuFloatComplex"] = _VECTOR_SPECS["cuComplex"] = (FLOAT, 2, 8)  # cuComplex.h: float2
_VECTOR_SPECS["cuDoubleComplex"] = (DOUBLE, 2, 16)  # double2
_VECTOR_SPECS["cufftComplex"] = (FLOAT, 2, 8)  # cufft.h: cuComplex, a float2
_VECTOR_SPECS["cufftDoubleComplex"] = (DOUBLE, 2, 16)  # cuDoubleComplex, a double2
_VECTOR_SPECS["dim3"] = (UINT, 3, 4)
_VECTOR_SPECS["uint3"] = (UINT, 3, 4)

_VECTOR_FIELDS = ("x", "y", "z", "w")
_cache: dict[str, CType] = {}


def vector_type(name: str) -> StructType | None:
    spec = _VECTOR_SPECS.get(name)
    if spec is None:
        return None
    base, count, align = spec
    members = [(_VECTOR_FIELDS[i], base) for i in range(count)]
    return layout_struct(name, members, explicit_align=align, is_vector=True)


# The generator states of cuRAND (curand_kernel.h), and other library types whose header warplint
# does not read: the members as declared there, so that an array of states (`curandState *s;
# s[tid]`) has its size.
_BOXMULLER = [("boxmuller_flag", INT), ("boxmuller_flag_double", INT), ("boxmuller_extra", FLOAT)]
_BOXMULLER_DOUBLE = [("boxmuller_extra_double", DOUBLE)]
_LIBRARY_STRUCTS: dict[str, list[tuple[str, CType]]] = {
    "curandStateXORWOW": [("d", UINT), ("v", ArrayType(UINT, 5)), *_BOXMULLER, *_BOXMULLER_DOUBLE],
    "curandStateMRG32k3a": [("s1", ArrayType(UINT, 3)), ("s2", ArrayType(UINT, 3)), *_BOXMULLER, *_BOXMULLER_DOUBLE],
    # the quasi-random generators: three counters and the direction vectors
    "curandStateSobol32": [("i", UINT), ("x", UINT), ("c", UINT), ("direction_vectors", ArrayType(UINT, 32))],
    "curandStateScrambledSobol32": [("i", UINT), ("x", UINT), ("c", UINT), ("direction_vectors", ArrayType(UINT, 32))],
    "curandStateSobol64": [
        ("i", ULONGLONG),
        ("x", ULONGLONG),
        ("c", ULONGLONG),
        ("direction_vectors", ArrayType(ULONGLONG, 64)),
    ],
    "curandStateScrambledSobol64": [
        ("i", ULONGLONG),
        ("x", ULONGLONG),
        ("c", ULONGLONG),
        ("direction_vectors", ArrayType(ULONGLONG, 64)),
    ],
}
# DirectXMath's vectors (a Direct3D interop sample's vertex holds them): plain floats, align 4
_LIBRARY_STRUCTS.update({f"XMFLOAT{n}": [(_VECTOR_FIELDS[i], FLOAT) for i in range(n)] for n in (2, 3, 4)})
_LIBRARY_ALIASES = {
    "curandState": "curandStateXORWOW",
    "curandState_t": "curandStateXORWOW",
    "curandStateXORWOW_t": "curandStateXORWOW",
    "curandStateMRG32k3a_t": "curandStateMRG32k3a",
    "curandStateSobol32_t": "curandStateSobol32",
    "curandStateScrambledSobol32_t": "curandStateScrambledSobol32",
    "curandStateSobol64_t": "curandStateSobol64",
    "curandStateScrambledSobol64_t": "curandStateScrambledSobol64",
}
# curand.h's array types: a Sobol generator's direction vectors
_LIBRARY_ARRAYS: dict[str, CType] = {
    "curandDirectionVectors32_t": ArrayType(UINT, 32),
    "curandDirectionVectors64_t": ArrayType(ULONGLONG, 64),
}


def library_struct(name: str) -> StructType | None:
    """A struct of a CUDA library header that is never read (`curandState`), laid out, or None."""
    members = _LIBRARY_STRUCTS.get(_LIBRARY_ALIASES.get(name, name))
    if members is None:
        return None
    return layout_struct(_LIBRARY_ALIASES.get(name, name), members)


def builtin_type(name: str) -> CType | None:
    """The type a built-in name denotes (`"unsigned int"`, `"float3"`, `"size_t"`), or None."""
    name = " ".join(name.split())
    hit = _cache.get(name)
    if hit is not None:
        return hit
    found: CType | None = _SCALARS.get(name) or vector_type(name) or library_struct(name) or _LIBRARY_ARRAYS.get(name)
    if found is not None:
        _cache[name] = found
    return found


BUILTIN_TYPE_NAMES: frozenset[str] = frozenset(
    n for n in [*_SCALARS, *_VECTOR_SPECS, *_LIBRARY_STRUCTS, *_LIBRARY_ALIASES, *_LIBRARY_ARRAYS] if " " not in n
)


def element_type(t: CType) -> CType | None:
    """What indexing or dereferencing `t` yields."""
    if isinstance(t, PointerType):
        return t.pointee
    if isinstance(t, ArrayType):
        return t.element
    return None


def is_natural_access(t: CType) -> bool:
    """True when one aligned load/store of 1, 2, 4, 8 or 16 bytes moves the whole value."""
    return t.size in (1, 2, 4, 8, 16) and t.align is not None and t.align >= t.size


def arithmetic_result_type(a: CType, b: CType, op: str) -> CType:
    """The type of `a op b` for two arithmetic operands, by C's usual arithmetic conversions
    as the analyses need them: a shift has its left operand's type; a floating
    operand makes the result `float`, or `double` when either is 8 bytes; else an 8-byte
    operand makes it `long`, an `unsigned int` operand `unsigned int`, and all else `int`
    (narrower integers are promoted to `int`). Lowering and the simulator both use it."""
    # (written out for the two operands, no loop, list or generator: lowering the twenty
    # cuda-samples files of `benchmarks/speed.py nvcc` and reduction_kernel.cu, 8,886 calls,
    # under callgrind 2026-11-28: 1.445 -> 1.405 G instructions)
    if op in ("<<", ">>"):
        return a if isinstance(a, ScalarType) else INT
    sa = a if isinstance(a, ScalarType) else None
    sb = b if isinstance(b, ScalarType) else None
    b_double = sb is not None and sb.is_float and sb.size == 8
    if sa is not None and sa.is_float:
        return DOUBLE if (sa.size == 8 or b_double) else FLOAT
    if sb is not None and sb.is_float:
        return DOUBLE if b_double else FLOAT
    if sa is not None:
        widest: int | None = max(sa.size, sb.size) if sb is not None else sa.size
    else:
        widest = sb.size if sb is not None else None
    if widest == 8:
        return LONG
    if (sa is not None and not sa.is_signed and sa.size == 4) or (sb is not None and not sb.is_signed and sb.size == 4):
        return UINT
    return INT
