"""The lowering's shortcuts give what the plain ways gave: `_through_volatile` with each class's
slots looked up once, `arithmetic_result_type` written out for two operands, and the returns
of a struct's operator looked for once a body (`returns_in`)."""

from __future__ import annotations

import itertools

from analyzer.diagnostics import Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.lower import Lowerer, lower
from analyzer.ir.lower_expressions import _through_volatile
from analyzer.syntax import ast as A
from analyzer.syntax.parse import parse

SPAN = Span(0, 1)


def _plain_result_type(a: T.CType, b: T.CType, op: str) -> T.CType:
    """`arithmetic_result_type` as it was written before (a loop over the operands)."""
    if op in ("<<", ">>"):
        return a if isinstance(a, T.ScalarType) else T.INT
    for t in (a, b):
        if isinstance(t, T.ScalarType) and t.is_float:
            return (
                T.DOUBLE if (t.size == 8 or (isinstance(b, T.ScalarType) and b.is_float and b.size == 8)) else T.FLOAT
            )
    sizes = [t.size for t in (a, b) if isinstance(t, T.ScalarType)]
    if sizes and max(sizes) == 8:
        return T.LONG
    unsigned = any(isinstance(t, T.ScalarType) and not t.is_signed and t.size == 4 for t in (a, b))
    return T.UINT if unsigned else T.INT


def test_arithmetic_result_type_is_the_plain_one_for_every_pair_of_types():
    scalars = [
        T.builtin_type(n)
        for n in (
            "char",
            "unsigned char",
            "short",
            "int",
            "unsigned int",
            "long",
            "unsigned long",
            "long long",
            "bool",
            "float",
            "double",
            "__half",
        )
    ]
    types = [t for t in scalars if t is not None] + [T.PointerType(T.FLOAT), T.UnknownType("X"), T.VOID]
    assert len(types) >= 14
    pairs = 0
    for a, b in itertools.product(types, repeat=2):
        for op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "<"):
            assert T.arithmetic_result_type(a, b, op) is _plain_result_type(a, b, op), (a, b, op)
            pairs += 1
    assert pairs == len(types) ** 2 * 9


def test_arithmetic_result_type_exact_values():
    assert T.arithmetic_result_type(T.INT, T.DOUBLE, "+") is T.DOUBLE
    assert T.arithmetic_result_type(T.FLOAT, T.INT, "*") is T.FLOAT
    assert T.arithmetic_result_type(T.UINT, T.INT, "+") is T.UINT
    assert T.arithmetic_result_type(T.UINT, T.LONG, "+") is T.LONG
    assert T.arithmetic_result_type(T.PointerType(T.INT), T.UnknownType("X"), "-") is T.INT
    assert T.arithmetic_result_type(T.CHAR, T.INT, "<<") is T.CHAR


def _var(name: str, volatile: bool) -> N.Variable:
    return N.Variable(name, T.PointerType(T.FLOAT), "local", SPAN, volatile=volatile)


def test_through_volatile_finds_a_volatile_variable_at_any_depth_and_not_behind_a_load():
    plain, vol = _var("p", False), _var("v", True)
    four = N.Const(4, T.LONG, SPAN)

    def ref(v: N.Variable) -> N.VarRef:
        return N.VarRef(v, v.type, SPAN)

    assert _through_volatile(ref(vol)) is True
    assert _through_volatile(ref(plain)) is False
    assert _through_volatile(N.PtrAdd(ref(plain), four, plain.type, SPAN)) is False
    deep = N.PtrAdd(ref(plain), N.Binary("*", N.Cast(ref(vol), T.LONG, SPAN), four, T.LONG, SPAN), plain.type, SPAN)
    assert _through_volatile(deep) is True
    in_call = N.Call("min", (four, ref(vol)), T.LONG, SPAN)
    assert _through_volatile(in_call) is True
    in_opaque = N.Opaque(N.OpaqueKind.VALUE, "x", T.LONG, SPAN, operands=(ref(vol),))
    assert _through_volatile(in_opaque) is True
    in_struct = N.StructValue({"a": four, "b": ref(vol)}, T.LONG, SPAN)
    assert _through_volatile(in_struct) is True
    assert N._EXPRESSION_SLOTS[N.PtrAdd] == ("base", "offset")
    assert N._EXPRESSION_SLOTS[N.VarRef] == ()
    assert N._EXPRESSION_SLOTS[N.Call] == ("name", "args", "atomic")


def test_returns_in_looks_at_a_body_once_and_gives_its_returns_with_a_value():
    text = "int f(int x) { if (x) return 1; if (x > 2) { return x; } return; }"
    unit = parse(text).unit
    fd = next(d for d in unit.decls if isinstance(d, A.FunctionDef))
    lowerer = Lowerer(text, "test.cu")
    found = lowerer.returns_in(fd.body)
    assert [text[r.span.start : r.span.end] for r in found] == ["return 1;", "return x;"]
    assert lowerer.returns_in(fd.body) is found
    assert list(lowerer.returns_memo) == [id(fd.body)]


SHARED_MEMORY = """
template <class T> struct SharedMemory {
  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
};
__global__ void k(float *out) {
  float *a = SharedMemory<float>();
  float *b = SharedMemory<float>();
  a[threadIdx.x] = 1.0f;
  out[threadIdx.x] = b[threadIdx.x + 1];
}
"""


def test_a_struct_operator_used_twice_is_lowered_twice_the_same_way():
    result = parse(SHARED_MEMORY)
    module = lower(result.unit, SHARED_MEMORY, "test.cu")
    k = module.kernels[0]
    spaces = [(a.op, a.space) for a in N.walk_nodes(k.body) if isinstance(a, N.Access)]
    assert spaces == [("load", "shared"), ("store", "global"), ("store", "shared")]  # (walked last first)
