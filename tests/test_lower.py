"""Specification of analyzer.ir.lower: AST -> IR, with every memory access an `Access`.

Each access has its memory space (global, shared, constant, local, unknown), its op (load,
store, atomic), the element type moved, its size, and the span of the access as written.
Spans are offsets into the text, located here with `str.index`.
"""

from __future__ import annotations

import pytest

from analyzer.diagnostics import Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.lower import lower
from analyzer.ir.nodes import walk_statements
from analyzer.syntax.parse import parse

# ----------------------------------------------------------------------------- helpers


def lowered(text: str, *, parse_codes: tuple[str, ...] = ()) -> N.Module:
    """Parse and lower `text`; the parser may report only the codes in `parse_codes`."""
    result = parse(text)
    codes = tuple(d.code for d in result.diagnostics)
    if codes != parse_codes:
        shown = "\n".join(f"  {d.code} {d.message} at {text[d.span.start : d.span.end]!r}" for d in result.diagnostics)
        pytest.fail(f"parse diagnostics {codes}, expected {parse_codes}, for\n{text}\n{shown}")
    return lower(result.unit, text, "test.cu")


def span_of(text: str, needle: str, nth: int = 0) -> Span:
    start = -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    return Span(start, start + len(needle))


def kernel(module: N.Module, name: str) -> N.Function:
    found = [k for k in module.kernels if k.name == name]
    assert len(found) == 1, [k.name for k in module.kernels]
    return found[0]


_OP_ORDER = {"load": 0, "atomic": 1, "store": 2}


def in_source_order(fn: N.Function) -> list[N.Access]:
    """The accesses by where they start in the source; a load before a store at one place."""
    return sorted(fn.accesses, key=lambda a: (a.span.start, _OP_ORDER[a.op]))


def accesses(fn: N.Function) -> list[tuple[str, str, str, int, str]]:
    """(space, op, element, bytes, text) of every access, in the order they were lowered
    (C's evaluation order: the value stored before the store, the operands of `+=` first)."""
    return [(a.space, a.op, str(a.element), a.bytes, a.text) for a in fn.accesses]


def assert_spans_match_text(text: str, fn: N.Function) -> None:
    for a in fn.accesses:
        assert " ".join(text[a.span.start : a.span.end].split()) == a.text, a


def lowering_warnings(module: N.Module) -> list[str]:
    return [d.message for d in module.diagnostics if d.code == "WL903"]


# ----------------------------------------------------------------------------- global memory


def test_kernel_pointer_parameters_point_to_global_memory():
    text = (
        "__global__ void copy(const float *in, float *out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) out[i] = in[i];\n"
        "}\n"
    )
    k = kernel(lowered(text), "copy")
    assert [(p.name, p.points_to) for p in k.params] == [("in", "global"), ("out", "global"), ("n", "unknown")]
    assert accesses(k) == [("global", "load", "float", 4, "in[i]"), ("global", "store", "float", 4, "out[i]")]
    assert [a.span for a in k.accesses] == [span_of(text, "in[i]"), span_of(text, "out[i]")]
    assert [a.array for a in k.accesses] == ["in", "out"]


def test_the_address_is_base_plus_index_times_element_size():
    text = "__global__ void k(double *d) { d[threadIdx.x + 1] = 0.0; }"
    (store,) = kernel(lowered(text), "k").accesses
    addr = store.address
    assert isinstance(addr, N.PtrAdd)
    assert isinstance(addr.base, N.VarRef) and addr.base.var.name == "d"
    assert isinstance(addr.offset, N.Binary) and addr.offset.op == "*"
    assert isinstance(addr.offset.right, N.Const) and addr.offset.right.value == 8
    assert addr.offset.left.span == span_of(text, "threadIdx.x + 1")


def test_a_compound_assignment_is_a_load_then_a_store_of_the_same_element():
    text = "__global__ void k(int *a, int i) { a[i] += 1; a[i + 1] <<= 2; a[0]++; }"
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "int", 4, "a[i]"),
        ("global", "store", "int", 4, "a[i]"),
        ("global", "load", "int", 4, "a[i + 1]"),
        ("global", "store", "int", 4, "a[i + 1]"),
        ("global", "load", "int", 4, "a[0]"),
        ("global", "store", "int", 4, "a[0]"),
    ]
    load, store = k.accesses[:2]
    assert load.span == store.span == span_of(text, "a[i]")
    (stmt,) = [s for s in k.body if isinstance(s, N.Store)][:1]
    assert stmt.access is store
    assert isinstance(stmt.value, N.Binary) and isinstance(stmt.value.left, N.Load) and stmt.value.left.access is load


def test_atomics_are_one_access_with_op_atomic_spanning_the_call():
    text = (
        "__global__ void hist(const unsigned char *in, unsigned int *h, int n) {\n"
        "  __shared__ unsigned int local[256];\n"
        "  __shared__ int count;\n"
        "  int i = threadIdx.x;\n"
        "  atomicAdd(&local[in[i]], 1);\n"
        "  atomicAdd(&h[i], local[i]);\n"
        "  atomicAdd(&count, 1);\n"
        "  atomicCAS(h + i, 0u, 1u);\n"
        "}\n"
    )
    k = kernel(lowered(text), "hist")
    assert [(a.space, a.op, str(a.element), a.bytes, a.text) for a in in_source_order(k)] == [
        ("shared", "atomic", "unsigned int", 4, "atomicAdd(&local[in[i]], 1)"),
        ("global", "load", "unsigned char", 1, "in[i]"),
        ("global", "atomic", "unsigned int", 4, "atomicAdd(&h[i], local[i])"),
        ("shared", "load", "unsigned int", 4, "local[i]"),
        ("shared", "atomic", "int", 4, "atomicAdd(&count, 1)"),
        ("global", "atomic", "unsigned int", 4, "atomicCAS(h + i, 0u, 1u)"),
    ]
    assert in_source_order(k)[0].span == span_of(text, "atomicAdd(&local[in[i]], 1)")
    calls = [s.expr for s in k.body if isinstance(s, N.Eval)]
    assert [c.name for c in calls] == ["atomicAdd", "atomicAdd", "atomicAdd", "atomicCAS"]
    assert all(isinstance(c, N.Call) and c.atomic is not None for c in calls)


def test_ldg_is_a_global_load():
    text = (
        "__global__ void k(const float4 *__restrict__ in, float4 *out) { out[threadIdx.x] = __ldg(&in[threadIdx.x]); }"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float4", 16, "__ldg(&in[threadIdx.x])"),
        ("global", "store", "float4", 16, "out[threadIdx.x]"),
    ]


def test_a_device_variable_and_a_constant_array():
    text = (
        "__device__ int counter;\n__constant__ float weights[16];\n"
        "__global__ void k(float *out) { out[threadIdx.x] = weights[threadIdx.x % 16]; counter = 1; }"
    )
    m = lowered(text)
    k = kernel(m, "k")
    assert accesses(k) == [
        ("constant", "load", "float", 4, "weights[threadIdx.x % 16]"),
        ("global", "store", "float", 4, "out[threadIdx.x]"),
        ("global", "store", "int", 4, "counter"),
    ]
    assert {(v.name, v.space) for v in m.globals} == {("counter", "global"), ("weights", "constant")}


# ----------------------------------------------------------------------------- shared memory


def test_a_shared_tile_and_a_row_pointer_into_it_are_shared():
    text = (
        "__global__ void k(const float *in, float *out) {\n"
        "  __shared__ float tile[32][33];\n"
        "  int tx = threadIdx.x, ty = threadIdx.y;\n"
        "  float *row = tile[ty];\n"
        "  row[tx] = in[tx];\n"
        "  __syncthreads();\n"
        "  out[tx] = tile[tx][ty];\n"
        "}\n"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "in[tx]"),
        ("shared", "store", "float", 4, "row[tx]"),
        ("shared", "load", "float", 4, "tile[tx][ty]"),
        ("global", "store", "float", 4, "out[tx]"),
    ]
    assert [a.span for a in k.accesses] == [
        span_of(text, "in[tx]"),
        span_of(text, "row[tx]"),
        span_of(text, "tile[tx][ty]"),
        span_of(text, "out[tx]"),
    ]
    assert [a.array for a in k.accesses] == ["in", "row", "tile", "out"]
    row = next(s.var for s in k.body if isinstance(s, N.Assign) and s.var.name == "row")
    assert row.points_to == "shared"
    assert any(isinstance(s, N.Sync) for s in k.body)


def test_a_pointer_assigned_from_shared_memory_plus_an_offset_is_shared():
    text = (
        "__global__ void k(float *out) {\n"
        "  extern __shared__ float sdata[];\n"
        "  float *s;\n"
        "  s = sdata + 32;\n"
        "  s[threadIdx.x] = 0.0f;\n"
        "  out[0] = *(sdata + 1);\n"
        "}\n"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("shared", "store", "float", 4, "s[threadIdx.x]"),
        ("shared", "load", "float", 4, "*(sdata + 1)"),
        ("global", "store", "float", 4, "out[0]"),
    ]
    store = k.accesses[0].address
    # s[threadIdx.x] is at s + 4 * threadIdx.x, and s is sdata + 32 * 4
    assert isinstance(store, N.PtrAdd) and store.base.var.name == "s"


def test_a_cast_of_shared_floats_to_float3_is_a_12_byte_shared_access():
    text = (
        "__global__ void k(float *out, float *in) {\n"
        "  extern __shared__ float s_data[];\n"
        "  int tid = threadIdx.x;\n"
        "  s_data[tid] = in[tid];\n"
        "  float3 v = ((float3*)s_data)[tid];\n"
        "  ((float3*)s_data)[tid] = v;\n"
        "  out[tid] = s_data[tid];\n"
        "}\n"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "in[tid]"),
        ("shared", "store", "float", 4, "s_data[tid]"),
        ("shared", "load", "float3", 12, "((float3*)s_data)[tid]"),
        ("shared", "store", "float3", 12, "((float3*)s_data)[tid]"),
        ("shared", "load", "float", 4, "s_data[tid]"),
        ("global", "store", "float", 4, "out[tid]"),
    ]
    assert k.accesses[2].span == span_of(text, "((float3*)s_data)[tid]")
    assert k.accesses[3].span == span_of(text, "((float3*)s_data)[tid]", 1)
    assert k.accesses[2].array == "s_data"
    elem = k.accesses[2].element
    assert isinstance(elem, T.StructType) and (elem.size, elem.align) == (12, 4)


def test_an_extern_shared_array_is_an_extern_shared_variable_of_unknown_length():
    text = "__global__ void k(float *o) { extern __shared__ float4 buf[]; buf[threadIdx.x] = o[0]; o[1] = buf[0].y; }"
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "o[0]"),
        ("shared", "store", "float4", 16, "buf[threadIdx.x]"),
        ("shared", "load", "float", 4, "buf[0].y"),
        ("global", "store", "float", 4, "o[1]"),
    ]
    var = k.accesses[1].address.base.var
    assert (var.name, var.kind, var.space, var.extern) == ("buf", "shared", "shared", True)
    assert isinstance(var.type, T.ArrayType) and var.type.length is None


def test_a_multi_dimensional_shared_array_has_its_full_type():
    text = "__global__ void k(float *o) { __shared__ float tile[32][33]; o[0] = tile[1][2]; }"
    k = kernel(lowered(text), "k")
    var = k.accesses[0].address.base
    while isinstance(var, (N.PtrAdd, N.Cast)):
        var = var.base if isinstance(var, N.PtrAdd) else var.operand
    t = var.var.type
    assert isinstance(t, T.ArrayType) and t.length == 32
    assert isinstance(t.element, T.ArrayType) and t.element.length == 33
    assert t.size == 32 * 33 * 4


SHARED_MEMORY = """\
template <class T> struct SharedMemory {
  __device__ inline operator T *() {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
  __device__ inline operator const T *() const {
    extern __shared__ int __smem[];
    return (T *)__smem;
  }
};
template <> struct SharedMemory<double> {
  __device__ inline operator double *() {
    extern __shared__ double __smem_d[];
    return (double *)__smem_d;
  }
};
template <class T>
__global__ void reduce0(T *g_idata, T *g_odata, unsigned int n) {
  T *sdata = SharedMemory<T>();
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_idata[i] : 0;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if ((tid % (2 * s)) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
void run(float *in, float *out, int n) {
  reduce0<float><<<n / 256, 256, 256 * sizeof(float)>>>(in, out, n);
}
"""


def test_shared_memory_from_the_cuda_samples_shared_memory_struct_is_shared():
    k = kernel(lowered(SHARED_MEMORY), "reduce0<float>")
    assert accesses(k) == [
        ("global", "load", "float", 4, "g_idata[i]"),
        ("shared", "store", "float", 4, "sdata[tid]"),
        ("shared", "load", "float", 4, "sdata[tid + s]"),
        ("shared", "load", "float", 4, "sdata[tid]"),
        ("shared", "store", "float", 4, "sdata[tid]"),
        ("shared", "load", "float", 4, "sdata[0]"),
        ("global", "store", "float", 4, "g_odata[blockIdx.x]"),
    ]
    assert_spans_match_text(SHARED_MEMORY, k)
    sdata = next(s.var for s in k.body if isinstance(s, N.Assign) and s.var.name == "sdata")
    assert sdata.points_to == "shared"


def test_a_reference_to_a_shared_element_stores_to_shared_memory():
    text = "__global__ void k(float *o) { __shared__ float t[64]; float &r = t[threadIdx.x]; r = o[0]; o[1] = r; }"
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "o[0]"),
        ("shared", "store", "float", 4, "r"),
        ("shared", "load", "float", 4, "r"),
        ("global", "store", "float", 4, "o[1]"),
    ]


# ----------------------------------------------------------------------------- structs


def test_fields_of_structs_in_memory_are_accesses_of_the_field_type_at_its_offset():
    text = (
        "struct Particle { float3 pos; float mass; };\n"
        "__global__ void k(Particle *ps) { int i = threadIdx.x; float m = ps[i].mass; ps[i].pos.y = m; ps[i].pos = make_float3(0, 0, 0); }"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "ps[i].mass"),
        ("global", "store", "float", 4, "ps[i].pos.y"),
        ("global", "store", "float3", 12, "ps[i].pos"),
    ]
    mass = k.accesses[0].address
    assert isinstance(mass, N.PtrAdd) and isinstance(mass.offset, N.Const) and mass.offset.value == 12
    y = k.accesses[1].address
    assert isinstance(y.offset, N.Const) and y.offset.value == 4


def test_a_struct_passed_by_value_holds_global_pointers():
    text = (
        "typedef struct { int width; int height; float *elements; } Matrix;\n"
        "__global__ void k(Matrix A, Matrix C) {\n"
        "  int row = threadIdx.y, col = threadIdx.x;\n"
        "  C.elements[row * C.width + col] = A.elements[row * A.width + col];\n"
        "}\n"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float", 4, "A.elements[row * A.width + col]"),
        ("global", "store", "float", 4, "C.elements[row * C.width + col]"),
    ]
    assert k.accesses[0].array == "A.elements"


def test_vector_components_of_a_loaded_float4():
    text = (
        "__global__ void k(const float4 *in, float *out) { float4 v = in[threadIdx.x]; out[threadIdx.x] = v.x + v.w; }"
    )
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float4", 16, "in[threadIdx.x]"),
        ("global", "store", "float", 4, "out[threadIdx.x]"),
    ]
    assert lowering_warnings(lowered(text)) == []


# ----------------------------------------------------------------------------- functions and calls


def test_device_functions_stay_calls_and_are_lowered_once():
    text = (
        "__device__ float sq(float v) { return v * v; }\n"
        "__device__ void put(float *p, int i, float v) { p[i] = v; }\n"
        "__global__ void k(float *out) {\n"
        "  float a = sq(out[0]);\n"
        "  put(out, threadIdx.x, sq(a));\n"
        "}\n"
    )
    m = lowered(text)
    k = kernel(m, "k")
    assert k.calls == ["sq", "put"]
    assert accesses(k) == [("global", "load", "float", 4, "out[0]")]
    put = m.functions["put"]
    assert put.kind == "device"
    # inside the callee the space is decided per call site
    assert accesses(put) == [("unknown", "store", "float", 4, "p[i]")]
    (ev,) = [s for s in k.body if isinstance(s, N.Eval)]
    assert (
        isinstance(ev.expr, N.Call)
        and ev.expr.name == "put"
        and ev.expr.span == span_of(text, "put(out, threadIdx.x, sq(a))")
    )
    assert isinstance(ev.expr.args[2], N.Call) and ev.expr.args[2].name == "sq"


def test_recursion_between_two_device_functions_is_reported_once():
    text = (
        "__device__ int odd(int n);\n"
        "__device__ int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
        "__device__ int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n"
        "__global__ void k(int *out) { out[0] = even(threadIdx.x); }\n"
    )
    m = lowered(text)
    wl905 = [d for d in m.diagnostics if d.code == "WL905"]
    assert len(wl905) == 1
    assert "even" in wl905[0].message and "odd" in wl905[0].message
    assert wl905[0].span in (span_of(text, "even(int n)"), span_of(text, "odd(int n)", 1))
    assert kernel(m, "k").calls == ["even"]
    assert m.call_graph.has_edge("even", "odd") and m.call_graph.has_edge("odd", "even")


def test_self_recursion_is_reported():
    text = "__device__ int f(int n) { return n ? f(n - 1) : 0; }\n__global__ void k(int *o) { o[0] = f(3); }"
    m = lowered(text)
    assert [d.code for d in m.diagnostics] == ["WL905"]


def test_a_compile_time_recursion_ends_at_its_explicit_specialization():
    text = (
        "__constant__ float c_k[8];\n"
        "template <int i> __device__ float row(float x) { return c_k[i] * x + row<i - 1>(x); }\n"
        "template <> __device__ float row<-1>(float x) { return 0; }\n"
        "__global__ void k(float *d) { d[threadIdx.x] = row<2>(d[0]); }\n"
    )
    m = lowered(text)
    assert sorted(m.functions) == ["k", "row<-1>", "row<0>", "row<1>", "row<2>"]
    assert m.functions["row<-1>"].calls == []
    assert accesses(m.functions["row<2>"]) == [("constant", "load", "float", 4, "c_k[i]")]
    assert [d.code for d in m.diagnostics] == []


def test_an_unbounded_compile_time_recursion_stops_without_crashing():
    text = "template <int i> __device__ int up(int x) { return up<i + 1>(x); }\n__global__ void k(int *d) { d[0] = up<0>(1); }"
    m = lowered(text)
    assert kernel(m, "k").calls == ["up<0>"]
    assert len(m.functions) < 100


def test_launch_bounds_are_on_the_function():
    text = "__global__ void __launch_bounds__(256, 2) k(float *p) { p[threadIdx.x] = 0; }"
    k = kernel(lowered(text), "k")
    assert k.launch_bounds == (256, 2)
    assert k.kind == "global"
    assert k.name_span == span_of(text, "k(float *p)")
    assert k.span == Span(0, len(text))


# ----------------------------------------------------------------------------- templates


TEMPLATE_KERNEL = """\
template <typename T, int N>
__global__ void scale(T *data, T factor) {
  int i = blockIdx.x * N + threadIdx.x;
  data[i] = data[i] * factor;
}
void host(float *f, double *d) {
  scale<float, 4><<<1, 32>>>(f, 2.0f);
  scale<float, 4><<<2, 64>>>(f, 3.0f);
  scale<double, 8><<<1, 32>>>(d, 2.0);
}
"""


def test_a_template_kernel_is_lowered_once_per_instantiation_launched():
    m = lowered(TEMPLATE_KERNEL)
    assert [k.name for k in m.kernels] == ["scale<float, 4>", "scale<double, 8>"]
    f4, d8 = m.kernels
    assert f4.template_params == ("T", "N") and f4.template_args == (T.FLOAT, 4)
    assert d8.template_args == (T.DOUBLE, 8)
    assert accesses(f4) == [("global", "load", "float", 4, "data[i]"), ("global", "store", "float", 4, "data[i]")]
    assert accesses(d8) == [("global", "load", "double", 8, "data[i]"), ("global", "store", "double", 8, "data[i]")]
    # the same source spans in both copies
    assert (
        [a.span for a in f4.accesses]
        == [a.span for a in d8.accesses]
        == [span_of(TEMPLATE_KERNEL, "data[i]", 1), span_of(TEMPLATE_KERNEL, "data[i]")]
    )
    # N is a constant in each copy
    (assign_i,) = [s for s in f4.body if isinstance(s, N.Assign) and s.var.name == "i"]
    consts = [e.value for e in _walk_expr(assign_i.value) if isinstance(e, N.Const)]
    assert 4 in consts


def _walk_expr(e):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        for name in ("left", "right", "operand", "base", "offset", "cond", "then", "otherwise"):
            v = getattr(x, name, None)
            if isinstance(v, N.Expr):
                stack.append(v)


def test_a_launch_in_host_code_is_a_launch_statement_with_its_configuration():
    m = lowered(TEMPLATE_KERNEL)
    (host,) = m.host
    launches = [s for s in walk_statements(host.body) if isinstance(s, N.LaunchStmt)]
    assert [(s.kernel, s.config_text) for s in launches] == [
        ("scale", ("1", "32")),
        ("scale", ("2", "64")),
        ("scale", ("1", "32")),
    ]
    assert launches[0].template_args == (T.FLOAT, 4)
    assert launches[0].span == span_of(TEMPLATE_KERNEL, "scale<float, 4><<<1, 32>>>(f, 2.0f)")


def test_a_template_kernel_never_launched_is_a_note_and_not_lowered():
    text = "template <typename T> __global__ void k(T *p) { p[0] = 0; }"
    m = lowered(text)
    assert m.kernels == []
    (d,) = m.diagnostics
    assert d.code == "WL904" and "'k'" in d.message
    assert d.span == span_of(text, "k(T *p)")


def test_dim3_variables_in_host_code_are_struct_values():
    text = (
        "__global__ void k(float *p) { p[0] = 0; }\n"
        "int main() { dim3 b(32, 8); dim3 g = dim3(4, 4); float *p; k<<<g, b, 0>>>(p); return 0; }"
    )
    m = lowered(text)
    (host,) = m.host
    b, g = [s for s in host.body if isinstance(s, N.Assign)][:2]
    assert isinstance(b.value, N.StructValue) and [f.value for f in b.value.fields.values()] == [32, 8, 1]
    assert isinstance(g.value, N.StructValue) and [f.value for f in g.value.fields.values()] == [4, 4, 1]
    (launch,) = [s for s in host.body if isinstance(s, N.LaunchStmt)]
    assert launch.config_text == ("g", "b", "0")


# ----------------------------------------------------------------------------- statements


def test_control_flow_becomes_if_and_loop_statements():
    text = (
        "__global__ void k(int *p, int n) {\n"
        "  for (int j = 0; j < n; j++) p[j] = j;\n"
        "  int t = n;\n"
        "  while (t > 1) t /= 2;\n"
        "  do { t++; } while (t < 3);\n"
        "  if (n > 2) p[0] = 1; else p[1] = 2;\n"
        "  switch (n) { case 0: p[2] = 0; break; default: p[3] = 3; }\n"
        "}\n"
    )
    k = kernel(lowered(text), "k")
    kinds = [type(s).__name__ for s in k.body]
    assert kinds == ["Loop", "Assign", "Loop", "Loop", "If", "If"]
    loop = k.body[0]
    assert loop.var is not None and loop.var.name == "j" and loop.test_first
    assert loop.span == span_of(text, "for (int j = 0; j < n; j++) p[j] = j;")
    assert k.body[3].test_first is False
    sw = k.body[5]
    assert isinstance(sw.cond, N.Binary) and sw.cond.op == "=="
    assert [a.text for a in k.accesses] == ["p[j]", "p[0]", "p[1]", "p[2]", "p[3]"]


def test_barriers_are_sync_statements():
    text = (
        "namespace cg = cooperative_groups;\n"
        "__global__ void k(float *p) {\n"
        "  cg::thread_block cta = cg::this_thread_block();\n"
        "  __syncthreads();\n"
        "  cta.sync();\n"
        "  cg::sync(cta);\n"
        "  p[0] = 1;\n"
        "}\n"
    )
    m = lowered(text)
    k = kernel(m, "k")
    syncs = [s for s in k.body if isinstance(s, N.Sync)]
    assert [s.span for s in syncs] == [
        span_of(text, "__syncthreads()"),
        span_of(text, "cta.sync()"),
        span_of(text, "cg::sync(cta)"),
    ]
    assert lowering_warnings(m) == []


def test_auto_takes_the_type_of_its_initialiser():
    text = "__global__ void k(const double2 *in, double *out) { auto v = in[threadIdx.x]; out[0] = v.y; }"
    k = kernel(lowered(text), "k")
    v = next(s.var for s in k.body if isinstance(s, N.Assign) and s.var.name == "v")
    assert str(v.type) == "double2"


def test_using_an_alias_for_a_type_inside_a_kernel():
    text = "__global__ void k(float *p) { using vec = float4; vec *q = (vec *)p; q[threadIdx.x] = q[0]; }"
    k = kernel(lowered(text), "k")
    assert accesses(k) == [
        ("global", "load", "float4", 16, "q[0]"),
        ("global", "store", "float4", 16, "q[threadIdx.x]"),
    ]


# ----------------------------------------------------------------------------- what cannot be understood


def test_an_unsupported_construct_is_reported_once_and_the_rest_of_the_kernel_is_lowered():
    text = (
        "__global__ void k(float *out, const float *in) {\n"
        "  int i = threadIdx.x;\n"
        "  auto add = [](float a, float b) { return a + b; };\n"
        "  out[i] = in[i];\n"
        "}\n"
        "__global__ void k2(float *out) { out[0] = 1; }\n"
    )
    m = lowered(text, parse_codes=("WL902",))
    assert accesses(kernel(m, "k")) == [
        ("global", "load", "float", 4, "in[i]"),
        ("global", "store", "float", 4, "out[i]"),
    ]
    assert accesses(kernel(m, "k2")) == [("global", "store", "float", 4, "out[0]")]
    result = parse(text)
    (d,) = result.diagnostics
    assert d.message == "unsupported C++ construct (lambda expression) skipped"
    assert span_of(text, "auto add").start <= d.span.start < span_of(text, "out[i]").start


def test_a_statement_lowering_cannot_follow_is_one_warning_and_the_kernel_goes_on():
    # a goto to no label of a block around it (backwards, or nowhere): not modelled
    text = "__global__ void k(int *p) { int i = threadIdx.x; goto nowhere; p[i] = 2; }"
    m = lowered(text)
    k = kernel(m, "k")
    assert [a.text for a in k.accesses] == ["p[i]"]
    assert any(isinstance(s, N.Skipped) and s.span == span_of(text, "goto nowhere;") for s in k.body)
    assert len(lowering_warnings(m)) == 1


def test_a_syntax_error_in_one_kernel_leaves_the_next_kernel_lowered():
    text = (
        "__global__ void bad(int *p) {\n  int x;\n  x = = 3;\n  p[0] = x;\n}\n"
        "__global__ void good(int *p) { p[threadIdx.x] = 1; }\n"
    )
    result = parse(text)
    (d,) = result.diagnostics
    assert (d.code, d.span) == ("WL901", span_of(text, "=", 1))
    m = lower(result.unit, text, "test.cu")
    assert accesses(kernel(m, "good")) == [("global", "store", "int", 4, "p[threadIdx.x]")]
    assert accesses(kernel(m, "bad")) == [("global", "store", "int", 4, "p[0]")]


def test_access_uids_are_unique_and_spans_quote_the_source():
    m = lowered(SHARED_MEMORY)
    uids = [a.uid for fn in m.functions.values() for a in fn.accesses]
    assert len(uids) == len(set(uids))
    for fn in m.functions.values():
        assert_spans_match_text(SHARED_MEMORY, fn)


# ----------------------------------------------------------------------------- fixture files

FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures" / "frontend"


def lowered_file(name: str):
    pre = pytest.importorskip("analyzer.source.preprocess")
    pp = pre.preprocess_file(str(FIXTURES / name))
    result = parse(pp.text)
    return pp, lower(result.unit, pp.text, str(FIXTURES / name))


def where(pp, access: N.Access) -> tuple[int, int, int]:
    loc = pp.linemap.resolve_span(access.span)
    return loc.line, loc.column, loc.end_column


def test_the_transpose_fixture_resolves_every_access_to_its_line_and_column():
    pp, m = lowered_file("transpose.cu")
    k = kernel(m, "transposeCoalesced")
    got = [(a.space, a.op, a.text, where(pp, a)) for a in k.accesses]
    assert got == [
        ("global", "load", "idata[flat(y + j, x, width)]", (13, 46, 74)),
        ("shared", "store", "tile[threadIdx.y + j][threadIdx.x]", (13, 9, 43)),
        ("shared", "load", "tile[threadIdx.x][threadIdx.y + j]", (21, 41, 75)),
        ("global", "store", "odata[flat(y + j, x, height)]", (21, 9, 38)),
    ]
    assert k.calls == ["flat"]
    assert pp.linemap.resolve_span(m.functions["flat"].name_span).path.endswith("tile.cuh")


def test_the_reduction_fixture_lowers_both_instantiations_and_the_histogram():
    pp, m = lowered_file("reduction.cu")
    assert [k.name for k in m.kernels] == ["reduce1<float>", "reduce1<double>", "histogram"]
    for k, elem, size in ((m.kernels[0], "float", 4), (m.kernels[1], "double", 8)):
        spaces = sorted({(a.space, a.text) for a in k.accesses})
        assert spaces == [
            ("global", "g_idata[i]"),
            ("global", "g_odata[blockIdx.x]"),
            ("shared", "sdata[0]"),
            ("shared", "sdata[index + s]"),
            ("shared", "sdata[index]"),
            ("shared", "sdata[tid]"),
        ]
        assert {(str(a.element), a.bytes) for a in k.accesses} == {(elem, size)}
    hist = kernel(m, "histogram")
    atomics = [(a.space, a.text, where(pp, a)) for a in hist.accesses if a.op == "atomic"]
    assert atomics == [
        ("shared", "atomicAdd(&local[in[i]], 1)", (60, 9, 36)),
        ("global", "atomicAdd(&bins[threadIdx.x], local[threadIdx.x])", (62, 5, 54)),
    ]
    assert [d.code for d in m.diagnostics] == []


EXPLICIT_INSTANTIATION = """
template <class T> __global__ void reduce0(T *in, T *out) {
    extern __shared__ int raw[];
    T *s = (T *)raw;
    s[threadIdx.x] = in[threadIdx.x];
}
template <class T> void reduce(int threads, T *in, T *out) {
    reduce0<T><<<1, threads, threads * sizeof(T)>>>(in, out);
}
template void reduce<int>(int threads, int *in, int *out);
template void reduce<double>(int threads, double *in, double *out);
"""


def test_an_explicitly_instantiated_host_template_launches_its_kernels_with_real_types():
    # cuda-samples' reduction: the kernels are launched only from a host template that
    # `template void reduce<int>(...);` instantiates
    module = lowered(EXPLICIT_INSTANTIATION)
    assert [k.display_name for k in module.kernels] == ["reduce0<int>", "reduce0<double>"]
    sizes = [[a.element.size for a in k.accesses] for k in module.kernels]
    assert sizes == [[4, 4], [8, 8]]
    assert not lowering_warnings(module)


def test_no_call_graph_is_built_when_no_called_function_calls_another():
    # kernels calling leaf device functions cannot recurse: networkx is not even imported
    module = lowered("""
__device__ float twice(float x) { return 2.0f * x; }
__global__ void k(float *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }
""")
    assert module.call_graph is None and not [d for d in module.diagnostics if d.code == "WL905"]
    chain = lowered("""
__device__ float leaf(float x) { return x; }
__device__ float mid(float x) { return leaf(x); }
__global__ void k(float *p) { p[threadIdx.x] = mid(p[threadIdx.x]); }
""")
    assert chain.call_graph is not None and chain.call_graph.has_edge("mid", "leaf")
    assert not [d for d in chain.diagnostics if d.code == "WL905"]


def test_the_call_graph_finds_a_cycle_where_networkx_finds_one():
    import networkx as nx

    from analyzer.ir.call_graph import CallGraph

    graphs = [
        {"k": ["a", "b"], "a": ["b"], "b": ["c"], "c": []},
        {"k": ["a"], "a": ["a"]},
        {"k": ["a"], "a": ["b"], "b": ["c"], "c": ["a"]},
        {"k": ["a", "b"], "a": ["x"], "b": ["a"], "x": []},
        {"a": ["b"], "b": ["a"], "k": ["c"], "c": []},
    ]
    for calls in graphs:
        reference = nx.DiGraph([(f, c) for f, cs in calls.items() for c in cs])
        assert CallGraph(calls).has_cycle() == bool(list(nx.simple_cycles(reference))), calls


def test_a_call_chain_without_a_cycle_does_not_import_networkx():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from analyzer.ir.lower import lower\n"
        "from analyzer.syntax.parse import parse\n"
        "text = '__device__ float leaf(float x) { return x; }\\n"
        "__device__ float mid(float x) { return leaf(x); }\\n"
        "__global__ void k(float *p) { p[threadIdx.x] = mid(p[threadIdx.x]); }\\n'\n"
        "m = lower(parse(text).unit, text, 'k.cu')\n"
        "assert m.call_graph.has_edge('mid', 'leaf')\n"
        "print('networkx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
