"""The C++ of real CUDA code, part 2 (issue 15): each construct in a small kernel, costed exactly.

Kernel templates explicitly instantiated, array members of structs held in registers, a
variable named like a type.
"""

from __future__ import annotations

from test_cxx_constructs import costs, diagnostics  # the same helpers as part 1

EXPLICIT_INSTANTIATION = """\
template <class T> __global__ void k(T *x, T *y);
template __global__ void k<double>(double *x, double *y);
template <class T>
__global__ void k(T *x, T *y)
{
    y[threadIdx.x] = x[2 * threadIdx.x];
}
"""


def test_an_explicitly_instantiated_kernel_template_is_analysed_for_its_arguments():
    # never launched: the 256-thread block assumed; doubles 16 bytes apart touch 16 sectors, ideal 8
    assert diagnostics(EXPLICIT_INSTANTIATION) == []
    assert sorted(costs(EXPLICIT_INSTANTIATION)) == [
        (6, 5, "y[threadIdx.x]", 8, None),
        (6, 22, "x[2 * threadIdx.x]", 16, None),
    ]


REGISTER_ARRAY_MEMBERS = """\
typedef struct { float4 m[3]; } float3x4;
struct Params { int param[4]; float *data; };
__constant__ float3x4 view;
__global__ void k(float *out, const float *in, Params p)
{
    float3x4 M(view);
    M.m[1] = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
    float w = M.m[0].w + M.m[2].x;
    out[threadIdx.x] = w * in[p.param[1] + threadIdx.x];
    p.data[threadIdx.x] = w;
}
int main() { float *a, *b; Params p; k<<<1, 64>>>(a, b, p); }
"""


def test_array_members_of_structs_in_registers_are_values_not_memory():
    # M is a local copy (one load of the __constant__ `view`, not costed) and p a by-value
    # parameter: indexing their arrays reads no memory; in[...] is at an offset not known, so
    # 5 sectors (misaligned by it) and no total
    assert diagnostics(REGISTER_ARRAY_MEMBERS, show_host=True) == []
    assert sorted(costs(REGISTER_ARRAY_MEMBERS)) == [
        (6, 16, "view", None, None),
        (9, 5, "out[threadIdx.x]", 4, 8),
        (9, 28, "in[p.param[1] + threadIdx.x]", 5, None),
        (10, 5, "p.data[threadIdx.x]", 4, 8),  # a pointer member points into memory
    ]


VARIABLE_NAMED_LIKE_A_TAG = """\
typedef struct latLong { float lat, lng; } LatLong;
__global__ void k(LatLong *d, float *out)
{
    LatLong *latLong = d + threadIdx.x;
    LatLong *const latLong2 = latLong;
    out[threadIdx.x] = latLong->lat + latLong2->lng;
}
int main() { LatLong *d; float *o; k<<<1, 32>>>(d, o); }
"""


def test_a_variable_named_like_a_struct_tag_is_a_variable():
    # Rodinia nn: the name right after a type is the declarator's; 8-byte structs, one field each
    assert diagnostics(VARIABLE_NAMED_LIKE_A_TAG, show_host=True) == []
    assert sorted(costs(VARIABLE_NAMED_LIKE_A_TAG)) == [
        (6, 5, "out[threadIdx.x]", 4, 4),
        (6, 24, "latLong->lat", 8, 8),
        (6, 39, "latLong2->lng", 8, 8),
    ]
