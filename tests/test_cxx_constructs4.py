"""The C++ of real CUDA code, part 4 (issue 15): types, templates, warp-matrix fragments,
inline assembly, and the reason a kernel has nothing costed; each construct in a small kernel,
costed exactly.
"""

from __future__ import annotations

from analyzer.api import Options, check_source
from test_cxx_constructs import costs, diagnostics  # the same helpers as part 1

DEPENDENT_MEMBER_TYPE = """\
template <typename T> struct vec4 { typedef float Type; };
template <> struct vec4<float> { typedef float4 Type; };
template <> struct vec4<double> { typedef double2 Type; };
template <typename T>
__global__ void k(typename vec4<T>::Type *out, typename vec4<T>::Type *in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    typename vec4<T>::Type v = in[i];
    v.x += 1.0f;
    out[i] = v;
}
int main() { float4 *a, *b; double2 *c, *d; k<float><<<1, 64>>>(a, b); k<double><<<1, 64>>>(c, d); }
"""


def test_a_dependent_member_type_is_the_specialization_s_typedef():
    # cuda-samples nbody: float4 (16 bytes) and double2 (16 bytes): 16 sectors a request, 2 warps
    assert diagnostics(DEPENDENT_MEMBER_TYPE, show_host=True) == []
    assert sorted(costs(DEPENDENT_MEMBER_TYPE)) == [
        (8, 32, "in[i]", 16, 32),
        (8, 32, "in[i]", 16, 32),
        (10, 5, "out[i]", 16, 32),
        (10, 5, "out[i]", 16, 32),
    ]


PRIMARY_MEMBER_TYPE = """\
template <typename T> struct traits { typedef T *pointer; typedef T value; };
__global__ void k(traits<float>::pointer out, traits<double>::value *in)
{
    out[threadIdx.x] = in[2 * threadIdx.x];
}
int main() { float *a; double *b; k<<<1, 32>>>(a, b); }
"""


def test_a_member_type_of_the_primary_template_binds_its_parameters():
    # no specialization: the primary template's typedef with T bound (float *, double)
    assert diagnostics(PRIMARY_MEMBER_TYPE, show_host=True) == []
    assert sorted(costs(PRIMARY_MEMBER_TYPE)) == [
        (4, 5, "out[threadIdx.x]", 4, 4),
        (4, 24, "in[2 * threadIdx.x]", 16, 16),
    ]


WARP_MATRIX = """\
#include <mma.h>
using namespace nvcuda;
__global__ void k(half *a, float *d, const int *ld)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::load_matrix_sync(a_frag, a + 16 * blockIdx.x, ld[threadIdx.x]);
    wmma::mma_sync(acc[0], a_frag, a_frag, acc[0]);
    for (int i = 0; i < acc[0].num_elements; i++) acc[0].x[i] = 2.0f * acc[0].x[i];
    wmma::store_matrix_sync(d + 16 * blockIdx.x, acc[0], 16, wmma::mem_row_major);
}
int main() { half *a; float *d; int *l; k<<<1, 32>>>(a, d, l); }
"""


def test_warp_matrix_loads_and_stores_are_not_costed_and_say_why():
    # fragments are registers (`acc[0].x[i]`: local, no cost); the leading dimension's load is
    # costed; the tile's load and store get a note each
    assert diagnostics(WARP_MATRIX, show_host=True) == [
        (8, 5, "WL908", "note"),
        (11, 5, "WL908", "note"),
    ]
    assert [c for c in sorted(costs(WARP_MATRIX)) if c[3] is not None] == [(8, 57, "ld[threadIdx.x]", 4, 4)]


def test_a_kernel_whose_only_accesses_are_warp_matrix_ones_says_so():
    only_tiles = WARP_MATRIX.replace("ld[threadIdx.x]", "16")
    assert (3, 17, "WL908", "note") in diagnostics(only_tiles)
    report = check_source("k.cu", only_tiles, Options())
    (note,) = [d for d in report.diagnostics if d.location.line == 3]
    assert note.message.endswith("warp-matrix loads and stores, which are not costed (the note at each says why)")


INLINE_ASM = """\
__global__ void k(unsigned char *flag, int *out, float *x)
{
    unsigned int r, lane;
    float v;
    asm volatile("ld.acquire.sys.global.u8 %0, [%1];" : "=r"(r) : "l"(flag + threadIdx.x) : "memory");
    asm volatile("st.release.sys.global.u8 [%1], %0;" ::"r"(r) "l"(flag + 4 * threadIdx.x) : "memory");
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("ld.global.f32 %0, [%1+4];" : "=f"(v) : "l"(x + 2 * threadIdx.x));
    out[threadIdx.x] = lane + r;
}
int main() { unsigned char *f; int *o; float *x; k<<<1, 32>>>(f, o, x); }
"""


def test_inline_assembly_loads_and_stores_are_costed_as_the_ptx_says():
    # bytes 1 apart: 1 sector; bytes 4 apart: 4 sectors; floats 8 bytes apart from x + 4: 8 sectors
    assert diagnostics(INLINE_ASM, show_host=True) == []
    assert sorted(costs(INLINE_ASM)) == [
        (5, 5, "ld.acquire.sys.global.u8 [flag + threadIdx.x]", 1, 1),
        (6, 5, "st.release.sys.global.u8 [flag + 4 * threadIdx.x]", 4, 4),
        (8, 5, "ld.global.f32 [x + 2 * threadIdx.x + 4]", 8, 8),
        (9, 5, "out[threadIdx.x]", 4, 4),
    ]


def test_a_loaded_register_carries_the_value_into_an_address():
    text = """\
__global__ void k(const int *idx, float *y)
{
    int i;
    asm("ld.global.s32 %0, [%1];" : "=r"(i) : "l"(idx));
    y[threadIdx.x] = 0.0f;
    y[i + threadIdx.x] = 1.0f;
}
int main() { int *i; float *y; k<<<1, 32>>>(i, y); }
"""
    # every lane loads idx[0] (one sector); y[i + threadIdx.x] depends on data loaded: bounded
    found = sorted(costs(text))
    assert found[0] == (4, 5, "ld.global.s32 [idx]", 1, 1)
    assert found[1] == (5, 5, "y[threadIdx.x]", 4, 4)
    assert found[2][:3] == (6, 5, "y[i + threadIdx.x]")


def test_inline_assembly_the_ptx_grammar_does_not_read_says_so_when_it_holds_a_load():
    text = """\
__global__ void k(unsigned *p, unsigned *out)
{
    unsigned a, b;
    asm("vabsdiff.u32.u32.u32.add %0, %1.b0, %2.b0, %0;" : "=r"(a) : "r"(p[threadIdx.x]), "r"(b));
    asm("{ .reg .u32 t; ld.global.u32 t, [%1]; mov.u32 %0, t; }" : "=r"(b) : "l"(p));
    out[threadIdx.x] = a + b;
}
int main() { unsigned *p, *o; k<<<1, 32>>>(p, o); }
"""
    # the first holds no load or store: its output is simply not known; the second gets a note
    assert diagnostics(text, show_host=True) == [(5, 5, "WL908", "note")]
    assert sorted(costs(text)) == [(4, 74, "p[threadIdx.x]", 4, 4), (6, 5, "out[threadIdx.x]", 4, 4)]


def test_a_texture_and_surface_kernel_says_why_nothing_is_costed():
    text = """\
__global__ void k(cudaSurfaceObject_t out, cudaTextureObject_t in, unsigned w)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    float4 c = tex2D<float4>(in, x * 0.5f, 0.0f);
    surf2Dwrite(c, out, x * sizeof(float4), 0);
}
int main() { cudaSurfaceObject_t o; cudaTextureObject_t i; k<<<1, 32>>>(o, i, 32); }
"""
    assert costs(text) == []
    report = check_source("k.cu", text, Options())
    (note,) = report.diagnostics
    assert (note.code, note.location.line, note.location.column) == ("WL908", 1, 17)
    assert "only through textures and surfaces (`tex2D`)" in note.message


MEMBER_OF_CLASS_TEMPLATE = """\
template <typename Real> struct Opt { Real r; Real s; };
template <typename Real> class Engine
{
public:
    void run(Real *p);
};
template <typename Real>
__global__ void k(Real *const paths, const Opt<Real> *const option)
{
    paths[threadIdx.x] = option->s;
}
template <typename Real> void Engine<Real>::run(Real *p)
{
    Opt<Real> *o;
    k<Real><<<2, 32>>>(p, o);
}
template class Engine<float>;
template class Engine<double>;
"""


def test_a_member_of_a_class_template_defined_outside_it_is_instantiated_with_the_class():
    # cuda-samples MC_SingleAsianOptionP: `template class Engine<float>;` instantiates Engine<Real>::run,
    # whose launch makes k<float> and k<double>: all lanes read one field (1 sector), 4- and 8-byte stores
    assert diagnostics(MEMBER_OF_CLASS_TEMPLATE, show_host=True) == []
    assert sorted(costs(MEMBER_OF_CLASS_TEMPLATE)) == [
        (10, 5, "paths[threadIdx.x]", 4, 8),
        (10, 5, "paths[threadIdx.x]", 8, 16),
        (10, 26, "option->s", 1, 2),
        (10, 26, "option->s", 1, 2),
    ]


LIBRARY_TYPES = """\
#include <curand_kernel.h>
#include <cufft.h>
__global__ void k(curandState *states, cufftComplex *c, cufftReal *out)
{
    curandState local = states[threadIdx.x];
    out[threadIdx.x] = curand_uniform(&local) * c[threadIdx.x].x;
}
int main() { curandState *s; cufftComplex *c; float *o; k<<<1, 32>>>(s, c, o); }
"""


def test_curand_states_and_cufft_complex_numbers_have_their_headers_layout():
    # curandState (XORWOW) is 48 bytes, align 8: 6 pieces (d, v[5] and the Box-Muller fields), each
    # of 32 lanes 48 bytes apart (32 sectors); cufftComplex is a float2: .x of 8-byte elements
    assert diagnostics(LIBRARY_TYPES, show_host=True) == []
    assert sorted(costs(LIBRARY_TYPES)) == [
        (5, 25, "states[threadIdx.x]", 32, 192),
        (6, 5, "out[threadIdx.x]", 4, 4),
        (6, 49, "c[threadIdx.x].x", 8, 8),
    ]


def test_inline_assembly_is_parsed_with_its_operands():
    from analyzer.syntax import ast as A
    from analyzer.syntax.parse import parse

    text = '__global__ void k(int *p) { int lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane) :: "memory"); }'
    result = parse(text)
    assert result.diagnostics == []
    (asm,) = [n for n in result.unit.walk() if isinstance(n, A.Asm)]
    assert asm.template == "mov.u32 %0, %%laneid;"
    assert [(o.constraint, o.expr.name) for o in asm.outputs] == [("=r", "lane")]
    assert asm.inputs == ()
