"""The C++ of real CUDA code, part 5 (issue 15): the constants of headers warplint does not
read, and the constructs of device code still not read after part 4; each in a small kernel,
costed exactly.
"""

from __future__ import annotations

import pytest

from analyzer.api import Options, check_source
from analyzer.source.cuda_macros import HEADER_CONSTANTS
from analyzer.source.preprocess import preprocess
from test_cxx_constructs import costs, diagnostics  # the same helpers as part 1

# ----------------------------------------------------------------------------- header constants

# an integer constant of each header, used where the access's cost depends on it: the index is
# the thread's own when the constant compares as the header says, else 0 (a broadcast)
HEADER_CONSTANT_USE = """\
__global__ void k(float *x)
{
    int i = threadIdx.x;
    x[(CONDITION) ? i : 0] = 1.0f;
}
int main() { float *x; k<<<1, 32>>>(x); }
"""


@pytest.mark.parametrize(
    ("condition", "expanded"),
    [
        (
            "INT_MAX == 2147483647 && INT_MIN < -2147483647",
            "2147483647 == 2147483647 && (-2147483647 - 1) < -2147483647",
        ),
        ("UINT_MAX == 4294967295u && CHAR_BIT == 8", "4294967295U == 4294967295u && 8 == 8"),  # <limits.h>
        ("UINT32_MAX == 4294967295u && INT32_MAX == INT_MAX", "4294967295U == 4294967295u && 2147483647 == 2147483647"),
        ("LLONG_MAX > 0 && SHRT_MAX == 32767", "9223372036854775807LL > 0 && 32767 == 32767"),
    ],
)
def test_an_integer_header_constant_has_its_header_s_value(condition, expanded):
    text = HEADER_CONSTANT_USE.replace("CONDITION", condition)
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == [(4, 5, f"x[({expanded}) ? i : 0]", 4, 4)]


# a floating-point constant of each header, in a kernel that is clean and costed: float values
# are not followed, so what matters is that the name is known
HEADER_FLOAT_USE = """\
__global__ void k(float *x)
{
    int i = threadIdx.x;
    float best = NAME;
    if (x[i] < best) x[i] = best;
}
int main() { float *x; k<<<1, 32>>>(x); }
"""


@pytest.mark.parametrize(
    "name", ["FLT_MAX", "FLT_EPSILON", "DBL_MAX", "M_PI", "M_SQRT2", "CUDART_PI_F", "CUDART_INF_F"]
)
def test_a_floating_point_header_constant_is_known(name):
    text = HEADER_FLOAT_USE.replace("NAME", name)
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == [(5, 9, "x[i]", 4, 4), (5, 22, "x[i]", 4, None)]  # the store: data-dependent lanes


def test_every_header_constant_reads_as_a_value():
    text = "\n".join(f"v = {name};" for name in HEADER_CONSTANTS)
    pre = preprocess(text, "k.cu")
    assert pre.diagnostics == ()
    assert pre.text.split("\n") == [f"v = {value};" for value in HEADER_CONSTANTS.values()]


def test_a_file_s_own_definition_replaces_a_header_constant_silently():
    # trimmed benchmark kernels define what <math.h> would: no redefinition warning
    pre = preprocess("#define M_PI 3.14f\n#ifndef FLT_MAX\n#define FLT_MAX 1\n#endif\nv = M_PI + FLT_MAX;\n", "k.cu")
    assert pre.diagnostics == ()
    assert pre.text.split("\n")[4] == "v = 3.14f + 3.40282347e+38F;"


def test_a_device_constant_of_the_runtime_is_known():
    # a surface store's boundary mode (surface_types.h): the kernel is clean, its load costed
    text = """\
__global__ void k(float *in, cudaSurfaceObject_t out)
{
    int x = threadIdx.x;
    surf2Dwrite(in[x], out, x * 4, 0, cudaBoundaryModeTrap);
}
int main() { float *in; cudaSurfaceObject_t s; k<<<1, 32>>>(in, s); }
"""
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == [(4, 17, "in[x]", 4, 4)]


# ----------------------------------------------------------------------------- library types

DIRECTX_VERTEX = """\
#include <DirectXMath.h>
using namespace DirectX;
struct Vertex { XMFLOAT3 position; XMFLOAT4 color; };
__global__ void k(Vertex *v, float time)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    v[i].position.y = time;
    v[i].color = XMFLOAT4(1.0f, 0.0f, 0.0f, 0.0f);
}
int main() { Vertex *v; k<<<1, 32>>>(v, 0.0f); }
"""


def test_directxmath_s_vectors_are_plain_floats():
    # Vertex is 12 + 16 = 28 bytes, align 4: each 4-byte field a request of 28 sectors
    assert diagnostics(DIRECTX_VERTEX, show_host=True) == []
    assert costs(DIRECTX_VERTEX) == [(7, 5, "v[i].position.y", 28, 28), (8, 5, "v[i].color", 28, 112)]


# ----------------------------------------------------------------------------- overloads of builtins

BUILTIN_OVERLOADED_FOR_VECTORS = """\
inline __host__ __device__ float3 floorf(float3 v) { return make_float3(floorf(v.x), floorf(v.y), floorf(v.z)); }
inline __host__ __device__ float4 floorf(float4 v) { return make_float4(floorf(v.x), floorf(v.y), floorf(v.z), floorf(v.w)); }
__device__ int cell(float x) { return floorf(x / 2.0f); }
__global__ void k(float *in, int *out)
{
    unsigned i = threadIdx.x;
    out[i] = cell(in[i]);
}
int main() { float *a; int *b; k<<<1, 32>>>(a, b); }
"""


def test_a_scalar_call_of_a_builtin_overloaded_for_vectors_is_the_builtin():
    # helper_math.h's floorf(float3) calls floorf(v.x): the builtin, not itself (cuda-samples
    # particles: a recursion, then 50,000 statements of inlining, where nothing recurses)
    assert diagnostics(BUILTIN_OVERLOADED_FOR_VECTORS, show_host=True) == []
    assert costs(BUILTIN_OVERLOADED_FOR_VECTORS) == [(7, 19, "in[i]", 4, 4), (7, 5, "out[i]", 4, 4)]


# ----------------------------------------------------------------------------- reasons (WL908)

STATIC_MEMBER_CALL = """\
template <int N> struct Engine {
    __device__ static void run(const int *in, int *out, int n);
};
template <int N>
__global__ void k(const int *in, int *out, int n)
{
    Engine<N>::run(in, out, n);
}
int main() { int *a, *b; k<64><<<1, 64>>>(a, b, 4); }
"""


def test_a_kernel_that_hands_its_pointers_to_a_static_member_call_says_why_nothing_is_costed():
    # Rodinia dwt2d: the kernel's own text indexes nothing, its memory is reached in `run`
    report = check_source("k.cu", STATIC_MEMBER_CALL, Options(show_host=True))
    assert [(d.location.line, d.location.column, d.code, d.message) for d in report.diagnostics] == [
        (
            5,
            17,
            "WL908",
            "no memory access of kernel `k<64>` was costed: memory is reached only through what warplint does not "
            "model (call to Engine<...>::run)",
        )
    ]
    assert costs(STATIC_MEMBER_CALL) == []


# ----------------------------------------------------------------------------- library enumerators

PIPELINE_ROLE = """\
#include <cuda/pipeline>
__global__ void k(float *x)
{
    int role = (threadIdx.y < 1) ? cuda::pipeline_role::consumer : cuda::pipeline_role::producer;
    x[threadIdx.x * (1 + role)] = 1.0f;
}
int main() { float *x; k<<<1, 32>>>(x); }
"""


def test_a_pipeline_role_has_its_value():
    # globalToShmemAsyncCopy: consumer is 1, so the stride is 2 floats: 8 sectors
    assert diagnostics(PIPELINE_ROLE, show_host=True) == []
    assert costs(PIPELINE_ROLE) == [(5, 5, "x[threadIdx.x * (1 + role)]", 8, 8)]


# ----------------------------------------------------------------------------- values built with braces

BRACE_BUILT_VALUES = """\
__global__ void k(float3 *out, const float *in)
{
    unsigned i = threadIdx.x;
    float3 v = float3{in[i], 0.0f, 1.0f};
    out[i] = v;
    out[i + int{32}].x = in[unsigned{2} * i];
    cuda::memcpy_async(out, in, cuda::aligned_size_t<alignof(double2)>{32 * sizeof(double2)});
}
int main() { float3 *a; float *b; k<<<1, 32>>>(a, b); }
"""


def test_a_value_built_with_braces_is_read():
    # `T{...}` as `T(...)`: a float3 of 12 bytes stored as three 4-byte fields (12 sectors
    # each), `int{32}` and `unsigned{2}` their values; dmmaTensorCoreGemm's aligned_size_t
    assert diagnostics(BRACE_BUILT_VALUES, show_host=True) == []
    assert costs(BRACE_BUILT_VALUES) == [
        (4, 23, "in[i]", 4, 4),
        (5, 5, "out[i]", 12, 36),
        (6, 26, "in[unsigned{2} * i]", 8, 8),
        (6, 5, "out[i + int{32}].x", 12, 12),
    ]


# ----------------------------------------------------------------------------- operator[] of a class

SUBSCRIPT_OPERATOR = """\
template <typename T> struct SharedMemory
{
    virtual __device__ T &operator*() = 0;
    virtual __device__ T &operator[](int i) = 0;
};
template <> struct SharedMemory<float>
{
    __device__ float &operator*() { extern __shared__ float s_float[]; return *s_float; }
    __device__ float &operator[](int i) { extern __shared__ float s_float[]; return s_float[i]; }
};
template <typename Real>
__global__ void k(Real *out)
{
    SharedMemory<Real> sdata;
    unsigned t = threadIdx.x;
    sdata[4 * t] = out[t];
    __syncthreads();
    out[t] = sdata[t];
}
int main() { float *x; k<float><<<1, 32, 32 * 16>>>(x); }
"""


def test_operator_subscript_of_a_specialization_is_inlined():
    # cuda-samples' SharedMemory<T> (MC_SingleAsianOptionP): `sdata[i]` is the specialization's
    # `s_float[i]`, an access of the extern shared array at the caller's place; the stride of 4
    # words is a 4-way conflict, the plain index 1 wavefront
    assert diagnostics(SUBSCRIPT_OPERATOR, show_host=True) == []
    assert costs(SUBSCRIPT_OPERATOR) == [
        (16, 20, "out[t]", 4, 4),
        (16, 5, "sdata[4 * t]", 4, 4),
        (18, 14, "sdata[t]", 1, 1),
        (18, 5, "out[t]", 4, 4),
    ]


# ----------------------------------------------------------------------------- members of a class template's instance

SCOPED_MEMBERS = """\
template <typename Real> struct AsianOption { enum CallPut { Call, Put }; Real strike; CallPut type; };
template <typename T> struct Info { __device__ static T convert(float x) { return x; } };
template <typename Real>
__global__ void k(Real *out, const AsianOption<Real> *option)
{
    unsigned i = threadIdx.x;
    Real v = Info<Real>::convert(1.0f);
    if (option->type == AsianOption<Real>::Put)
        out[i * (1 + AsianOption<Real>::Put)] = v;
}
int main() { float *x; AsianOption<float> *o; k<float><<<1, 32>>>(x, o); }
"""


def test_a_member_of_a_class_template_s_instance_in_an_expression():
    # GPUVerify's MC_SingleAsianOptionP (`AsianOption<Real>::Put`, an enumerator of the class:
    # 1, so the stride is 2 floats) and cuda-samples volumeFiltering (`Info<T>::convert(x)`,
    # a static member called, not followed); the field of the member enum's type is laid out
    assert diagnostics(SCOPED_MEMBERS, show_host=True) == []
    assert costs(SCOPED_MEMBERS) == [
        (8, 9, "option->type", 1, 1),
        (9, 9, "out[i * (1 + AsianOption<Real>::Put)]", 8, None),
    ]


def test_a_kernel_that_only_prints_gets_no_note():
    # a format string is a pointer handed to printf, but not the kernel's memory: no WL908
    text = """\
__global__ void k(int n)
{
    printf("thread %d of %d\\n", threadIdx.x, n);
}
int main() { k<<<1, 32>>>(4); }
"""
    assert diagnostics(text, show_host=True) == []
    assert costs(text) == []
