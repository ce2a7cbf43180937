"""The symbolic per-warp analysis, held to exact per-request costs (hardware-model.md rules)."""

from __future__ import annotations

import pytest

from analyzer.analysis.assumptions import AssumptionKind, MayVectorize
from analyzer.analysis.kernel import analyze_kernel
from analyzer.analysis.launch import launch_configs
from analyzer.arch import get_arch
from analyzer.ir.lower import lower
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

ARCH = get_arch("sm_90")


def analyse(source: str, block=None, grid=None, params=None):
    pp = preprocess(source, "test.cu")
    parsed = parse(pp.text)
    module = lower(parsed.unit, pp.text, "test.cu")
    assert module.kernels, [d.message for d in parsed.diagnostics + module.diagnostics]
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, grid=grid, params=params)[0]
    return analyze_kernel(module, kernel, launch, ARCH, params)


def cost_of(source: str, text: str, op: str | None = None, **kw):
    analysis = analyse(source, **kw)
    hits = [c for c in analysis.costs if c.text == text and (op is None or c.op == op)]
    assert hits, f"no access {text!r} in {[c.text for c in analysis.costs]}"
    return hits[0]


def shared_kernel(index: str, elem: str = "float", size: int = 4096) -> str:
    return f"""
__global__ void k(float* out) {{
    __shared__ {elem} s[{size}];
    int tid = threadIdx.x;
    out[tid] = s[{index}];
}}
"""


@pytest.mark.parametrize("stride", list(range(1, 34)))
def test_float_shared_stride_costs_gcd_with_32_wavefronts(stride):
    import math

    c = cost_of(shared_kernel(f"{stride} * tid"), f"s[{stride} * tid]", block=(32, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.ideal_per_request) == (math.gcd(stride, 32), 1)
    assert c.exact


def test_broadcast_of_one_word_is_one_wavefront():
    c = cost_of(shared_kernel("3"), "s[3]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request) == (1, 1)


def test_several_lanes_on_one_word_do_not_conflict():
    c = cost_of(shared_kernel("tid / 4"), "s[tid / 4]", block=(32, 1, 1))
    assert c.per_request == 1


def test_xor_swizzled_column_read_is_conflict_free():
    src = """
__global__ void k(float* out) {
    __shared__ float tile[32][32];
    int x = threadIdx.x, y = threadIdx.y;
    out[y * 32 + x] = tile[x][x ^ y];
}
"""
    unswizzled = src.replace("x ^ y", "y")
    assert cost_of(src, "tile[x][x ^ y]", block=(32, 8, 1)).per_request == 1
    assert cost_of(unswizzled, "tile[x][y]", block=(32, 8, 1)).per_request == 32


@pytest.mark.parametrize("width, pad, expected", [(32, 0, 32), (32, 1, 1), (16, 0, 8), (16, 1, 2)])
def test_column_read_of_a_tile(width, pad, expected):
    src = f"""
__global__ void k(float* out) {{
    __shared__ float tile[{width}][{width + pad}];
    out[threadIdx.y * {width} + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}}
"""
    c = cost_of(src, "tile[threadIdx.x][threadIdx.y]", block=(width, width, 1))
    assert (c.per_request, c.ideal_per_request) == (expected, 1)


def test_block_16_wide_puts_two_rows_in_a_warp():
    src = """
__global__ void k(float* out) {
    __shared__ float tile[16][16];
    out[0] = tile[threadIdx.y][threadIdx.x];
}
"""
    assert cost_of(src, "tile[threadIdx.y][threadIdx.x]", block=(16, 16, 1)).per_request == 1


@pytest.mark.parametrize(
    "elem, index, expected, ideal",
    [
        ("double", "tid", 2, 2),
        ("double", "2 * tid", 4, 2),
        ("float4", "tid", 4, 4),
        ("float2", "tid", 2, 2),
        ("char", "tid", 1, 1),
        ("short", "tid", 1, 1),
        ("char", "4 * tid", 1, 1),
    ],
)
def test_element_sizes_in_shared_memory(elem, index, expected, ideal):
    src = f"""
__global__ void k({elem}* out) {{
    __shared__ {elem} s[1024];
    int tid = threadIdx.x;
    out[tid] = s[{index}];
}}
"""
    c = cost_of(src, f"s[{index}]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request) == (expected, ideal)


@pytest.mark.parametrize("index, sectors", [("tid", 4), ("tid + 1", 5), ("2 * tid", 8), ("1000 * tid", 32), ("0", 1)])
def test_global_float_sectors(index, sectors):
    src = f"""
__global__ void k(float* x, float* y) {{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    y[tid] = x[{index}];
}}
"""
    c = cost_of(src, f"x[{index}]", block=(128, 1, 1), grid=(4, 1, 1))
    assert c.per_request == sectors
    assert c.requests == 16 and c.total == 16 * sectors


@pytest.mark.parametrize("elem, sectors", [("char", 1), ("short", 2), ("double", 8), ("float4", 16)])
def test_global_element_sizes_are_ideal_when_contiguous(elem, sectors):
    src = f"""
__global__ void k({elem}* x, {elem}* y) {{
    y[threadIdx.x] = x[threadIdx.x];
}}
"""
    c = cost_of(src, "x[threadIdx.x]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request) == (sectors, sectors)


def test_float3_field_is_strided_by_12_bytes():
    src = """
__global__ void k(float3* in, float* out) { out[threadIdx.x] = in[threadIdx.x].y; }
"""
    c = cost_of(src, "in[threadIdx.x].y", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.stride_bytes) == (12, 4, 12)


def test_whole_float3_copy_is_three_requests_of_12_sectors():
    src = """
__global__ void k(float3* in, float3* out) { out[threadIdx.x] = in[threadIdx.x]; }
"""
    c = cost_of(src, "in[threadIdx.x]", block=(32, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.pieces, c.requests, c.total) == (12, 3, 3, 36)


def test_aligned_struct_fields_read_together_are_one_16_byte_load():
    src = """
struct __align__(16) vec3d { float x, y, z; };
__global__ void k(vec3d* d, float* out) {
    int tid = threadIdx.x;
    out[tid] = d[tid].x * d[tid].x + d[tid].y * d[tid].y + d[tid].z * d[tid].z;
}
"""
    analysis = analyse(src, block=(32, 1, 1))
    first = analysis.costs[0]
    assert (first.text, first.per_request, first.ideal_per_request, first.bytes) == ("d[tid].x", 16, 16, 16)


def test_masked_lane_takes_no_part():
    src = """
__global__ void k(float* x, float* y) {
    int tid = threadIdx.x;
    if (tid != 3) y[tid] = x[tid];
    if (tid < 8) y[tid + 64] = x[tid];
}
"""
    analysis = analyse(src, block=(32, 1, 1))
    loads = [c for c in analysis.costs if c.text == "x[tid]"]
    assert [c.per_request for c in loads] == [4, 1]
    eight = next(c for c in analysis.costs if c.text == "y[tid + 64]")
    assert (eight.per_request, eight.ideal_per_request) == (1, 1)


def test_thread_strided_loop_is_coalesced_every_iteration():
    src = """
__global__ void k(float* x, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = 0.0f;
}
"""
    c = cost_of(src, "x[i]", block=(256, 1, 1), grid=(1, 1, 1), params={"n": 1024})
    assert (c.per_request, c.requests, c.total) == (4, 32, 128)


def test_uniform_loop_costs_the_same_each_iteration():
    src = """
__global__ void k(float* out) {
    __shared__ float s[32][33];
    float acc = 0;
    for (int e = 0; e < 32; ++e) acc += s[threadIdx.x][e];
    out[threadIdx.x] = acc;
}
"""
    c = cost_of(src, "s[threadIdx.x][e]", block=(32, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.requests, c.total, c.exact) == (1, 32, 32, True)


def test_interleaved_reduction_is_charged_iteration_by_iteration():
    src = """
__global__ void reduce(float* g) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g[tid];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
}
"""
    c = cost_of(src, "sdata[index + s]", block=(256, 1, 1), grid=(1, 1, 1))
    # s=1: lanes of 4 warps, stride 2 words: 2-way (4 requests, 8 wavefronts); s=2: 4-way in 2 warps (8);
    # s=4: 8-way, 1 warp (8); s=8: 16 lanes on 2 banks, 8-way (8); s=16: 8 lanes, one bank (8);
    # s=32: 4 lanes (4); s=64: 2 lanes (2); s=128: 1 lane (1)
    assert (c.per_request, c.ideal_per_request, c.exact) == (8, 1, True)
    assert (c.requests, c.total) == (12, 47)


def test_sequential_reduction_is_conflict_free():
    src = """
__global__ void reduce(float* g) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g[tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
}
"""
    c = cost_of(src, "sdata[tid + s]", block=(256, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.exact) == (1, True)
    # s = 128, 64, 32: 4, 2, 1 warps; s = 16 .. 1: one warp each
    assert c.requests == 4 + 2 + 1 + 5


def test_stride_parameter_gives_cost_as_cases():
    src = """
__global__ void k(float* out, int stride) {
    __shared__ float s[4096];
    out[threadIdx.x] = s[threadIdx.x * stride];
}
"""
    c = cost_of(src, "s[threadIdx.x * stride]", block=(32, 1, 1))
    assert c.per_request == 32 and not c.exact and c.depends_on == ("stride",)
    assert c.cases == "ideal exactly when stride is odd"
    given = cost_of(src, "s[threadIdx.x * stride]", block=(32, 1, 1), params={"stride": 3})
    assert (given.per_request, given.exact) == (1, True)


def test_data_dependent_index_is_bounded_not_known():
    src = """
__global__ void hist(int* data, int* bins) {
    int v = data[threadIdx.x];
    atomicAdd(&bins[v], 1);
}
"""
    c = cost_of(src, "atomicAdd(&bins[v], 1)", op="atomic", block=(32, 1, 1))
    # a bound, not a figure: each of the 32 lanes touches one sector
    assert (c.per_request, c.ideal_per_request, c.exact, c.data_dependent, c.bounded) == (32, 4, False, True, True)


def test_device_function_is_inlined_with_the_callers_pointer():
    src = """
__device__ float get(const float* p, int i) { return p[i]; }
__global__ void k(float* x, float* y) { y[threadIdx.x] = get(x, 2 * threadIdx.x); }
"""
    c = cost_of(src, "p[i]", block=(32, 1, 1))
    assert (c.space, c.per_request) == ("global", 8)


def test_unknown_block_is_stated_not_silent():
    src = "__global__ void k(float* x) { x[threadIdx.x] = 0; }"
    analysis = analyse(src)
    assert analysis.launch.assumed and analysis.launch.block == (256, 1, 1)
    assert any(
        a.kind is AssumptionKind.BLOCK_ASSUMED and str(a).startswith("block size unknown")
        for a in analysis.costs[0].assumptions
    )


def test_launch_configuration_comes_from_host_code():
    src = """
#define BLOCK 16
__global__ void k(float* x, int w) { x[threadIdx.y * w + threadIdx.x] = 0; }
int main() {
    const int width = 1024;
    dim3 block(BLOCK, BLOCK);
    dim3 grid(width / BLOCK, width / BLOCK);
    k<<<grid, block>>>(0, width);
}
"""
    analysis = analyse(src)
    assert (analysis.launch.block, analysis.launch.grid, dict(analysis.launch.params)) == (
        (16, 16, 1),
        (64, 64, 1),
        {"w": 1024},
    )
    c = analysis.costs[0]
    assert (c.per_request, c.requests, c.total, c.exact) == (4, 8 * 64 * 64, 4 * 8 * 64 * 64, True)


LOOP_CARRIED = """
__global__ void k(unsigned int *out, unsigned int start) {
    __shared__ unsigned int s[32 * 32];
    unsigned int pos = START;
    unsigned int sum = 0;
    for (unsigned int i = 0; i < 2; i++) {
        sum += s[32 * threadIdx.x + pos];
        pos = (pos + 1) % 32;
    }
    out[threadIdx.x] = sum;
}
"""


def test_a_short_counted_loop_carrying_a_per_lane_value_is_unrolled_and_exact():
    # pos = tx, then (tx + 1) % 32: each iteration's words are distinct per lane -> 1 wavefront
    # (warplint once took pos as one value for all lanes and reported an exact 32-way conflict)
    c = cost_of(
        LOOP_CARRIED.replace("START", "threadIdx.x"), "s[32 * threadIdx.x + pos]", block=(32, 1, 1), grid=(1, 1, 1)
    )
    assert (c.per_request, c.exact, c.requests, c.total) == (1, True, 2, 2)


def test_data_dependent_cost_when_a_loop_of_unknown_length_carries_a_per_lane_value():
    # the same update in a loop whose trip count is a parameter: not unrolled, so unknown
    src = LOOP_CARRIED.replace("START", "threadIdx.x").replace("i < 2", "i < start")
    c = cost_of(src, "s[32 * threadIdx.x + pos]", block=(32, 1, 1))
    assert (c.per_request, c.exact, c.data_dependent, c.bounded) == (32, False, True, True)
    assert c.assumptions[-2].kind is AssumptionKind.INDEX_LOOP_CARRIED
    assert "a loop updates in a way warplint does not follow" in str(c.assumptions[-2])


def test_histogram64s_rotating_start_is_a_two_way_conflict_on_every_iteration():
    # cuda-samples histogram64.cu:117: pos = 4 * (tx & 15), then (pos + 4) & 63, 16 times;
    # lanes t and t + 16 read the same bank at different words: 2 wavefronts (as simulated)
    src = """
typedef unsigned int uint;
typedef unsigned char uchar;
__global__ void k(uint *d) {
    __shared__ uchar s_Hist[64 * 64];
    uchar *s_HistBase = s_Hist + threadIdx.x * 64;
    uint sum = 0;
    uint pos = 4 * (threadIdx.x & 15);
    for (uint i = 0; i < 16; i++) {
        sum += s_HistBase[pos + 0] + s_HistBase[pos + 1];
        pos = (pos + 4) & 63;
    }
    d[threadIdx.x] = sum;
}
"""
    c = cost_of(src, "s_HistBase[pos + 0]", block=(64, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact, c.requests, c.total) == (2, 1, True, 32, 64)


def test_a_uniform_value_a_loop_updates_by_modulo_keeps_the_exact_cost():
    # pos starts uniform and is updated from itself: the same word offset for every lane,
    # so s[32 * tx + pos] is a 32-way conflict whatever pos is
    c = cost_of(LOOP_CARRIED.replace("START", "start"), "s[32 * threadIdx.x + pos]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request) == (32, 1)


REFERENCES = """
__device__ void put(float &dst, float v) { dst = v; }
__device__ float twice(const float &x) { return 2.0f * x; }
__global__ void k(float *out) {
    __shared__ float s[64];
    put(s[2 * threadIdx.x], 1.0f);
    out[threadIdx.x] = twice(s[threadIdx.x]);
}
"""


def test_a_store_through_a_reference_parameter_is_a_store_to_the_callers_array():
    analysis = analyse(REFERENCES, block=(32, 1, 1))
    store = [c for c in analysis.costs if c.text == "dst"]
    assert [(c.op, c.space, c.per_request, c.ideal_per_request) for c in store] == [("store", "shared", 2, 1)]
    assert store[0].via == "inlined from put"
    # no load of s[2 * threadIdx.x] at the call: the argument is an address, not a value
    assert not [c for c in analysis.costs if c.text == "s[2 * threadIdx.x]"]


def test_a_const_reference_argument_is_read_at_the_call_like_a_value():
    c = cost_of(REFERENCES, "s[threadIdx.x]", block=(32, 1, 1))
    assert (c.op, c.space, c.per_request) == ("load", "shared", 1)


def test_a_load_in_one_side_of_a_conditional_expression_is_made_only_by_the_lanes_that_choose_it():
    src = """
__global__ void k(float *a, float *out) {
    int tid = threadIdx.x;
    out[tid] = (tid < 8) ? a[tid * 32] : 0.0f;
}
"""
    # 8 lanes, 128 bytes apart: 8 sectors for 32 bytes (ideal 1), not the 32 of a full warp
    c = cost_of(src, "a[tid * 32]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact) == (8, 1, True)


def test_sizes_set_in_main_reach_a_launch_inside_a_host_function_it_calls():
    src = """
__global__ void k(float *b, int P) {
    int y = blockIdx.x * blockDim.x + threadIdx.x;
    b[3 * P + y] = 0.0f;
}
void run(float *b, int P) { k<<<P / 256, 256>>>(b, P); }
int main() { float *b; const int P = 4096; run(b, P); }
"""
    analysis = analyse(src)
    assert (analysis.launch.block, analysis.launch.grid, analysis.launch.params) == (
        (256, 1, 1),
        (16, 1, 1),
        (("P", 4096),),
    )
    c = cost_of(src, "b[3 * P + y]")
    assert (c.per_request, c.ideal_per_request, c.exact, c.requests, c.total) == (4, 4, True, 128, 512)


def test_a_value_read_twice_by_a_thread_is_one_request_the_second_read_reuses_it():
    # nvcc loads `x[tid]` once in `x[tid] * x[tid]` (000_vec3d_three_arrays.cu, measured on
    # an H200: 64 sectors, not 128)
    src = """
__global__ void k(const float *x, float *out) {
    int tid = threadIdx.x;
    out[tid] = x[tid] * x[tid];
}
"""
    analysis = analyse(src, block=(256, 1, 1), grid=(1, 1, 1))
    loads = [c for c in analysis.costs if c.text == "x[tid]"]
    assert [(c.per_request, c.requests, c.total, c.reuses is not None) for c in loads] == [
        (4, 8, 32, False),
        (4, 0, 0, True),
    ]


def test_a_value_just_stored_is_read_back_from_the_register_and_a_barrier_forgets_it():
    src = """
__global__ void k(float3 *in, float3 *out) {
    __shared__ float s[256];
    int i = threadIdx.x;
    in[i].x = 1.0f; in[i].y = 2.0f; in[i].z = 3.0f;
    out[i] = in[i];
    s[i] = 1.0f;
    float a = s[i];
    __syncthreads();
    out[i].x = a + s[i];
}
"""
    analysis = analyse(src, block=(32, 1, 1), grid=(1, 1, 1))
    by_text = {}
    for c in analysis.costs:
        by_text.setdefault((c.text, c.op), []).append(c)
    # the three stored fields cover the float3 read back: no request
    (copy,) = by_text[("in[i]", "load")]
    assert (copy.requests, copy.total) == (0, 0) and copy.reuses is not None
    # s[i] right after storing it: reused; after the barrier: loaded again
    s_loads = by_text[("s[i]", "load")]
    assert [c.reuses is not None for c in s_loads] == [True, False]


def test_consecutive_shared_loads_of_an_unrolled_loop_are_not_exact():
    # Cvalue += As[ty][e] * Bs[e][tx] for e = 0..15: nvcc loads As[ty][e..e+3] with one LDS.128
    src = """
__global__ void k(float *out) {
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    float sum = 0.0f;
    for (int e = 0; e < 16; ++e)
        sum += As[threadIdx.y][e] * Bs[e][threadIdx.x];
    out[threadIdx.y * 16 + threadIdx.x] = sum;
}
"""
    a = cost_of(src, "As[threadIdx.y][e]", block=(16, 16, 1), grid=(1, 1, 1))
    b = cost_of(src, "Bs[e][threadIdx.x]", block=(16, 16, 1), grid=(1, 1, 1))
    assert (a.per_request, a.exact) == (1, False) and a.assumptions[-1] == MayVectorize(iterations=4, bytes=16)
    assert "16-byte load" in str(a.assumptions[-1])
    assert (b.per_request, b.exact) == (1, True)


def test_a_value_loaded_before_an_if_is_reused_inside_it():
    # bitonicSort's Comparator: `if ((keyA > keyB) == dir) { t = keyA; ... }` reloads nothing
    src = """
__global__ void k(float *out, int dir) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    float a = s[2 * tid];
    float b = s[2 * tid + 1];
    if ((a > b) == dir) {
        float t = s[2 * tid];
        out[tid] = t;
    }
}
"""
    analysis = analyse(src, block=(32, 1, 1), grid=(1, 1, 1))
    loads = [c for c in analysis.costs if c.text == "s[2 * tid]"]
    assert [c.reuses is not None for c in loads] == [False, True]


def test_a_thread_blocks_thread_rank_is_the_linear_thread_index():
    src = """
namespace cg = cooperative_groups;
__global__ void k(const float *g, float *o) {
    cg::thread_block cta = cg::this_thread_block();
    unsigned int r = cta.thread_rank();
    o[r] = g[r];
}
"""
    c = cost_of(src, "g[r]", block=(16, 16, 1), grid=(1, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact) == (4, 4, True)


def test_data_dependent_cost_for_a_tiles_thread_rank_never_one_value_for_the_warp():
    src = """
namespace cg = cooperative_groups;
__global__ void k(const float *g, float *o) {
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    unsigned int r = tile.thread_rank();
    o[r] = g[r];
}
"""
    c = cost_of(src, "g[r]", block=(32, 1, 1), grid=(1, 1, 1))
    assert (c.per_request, c.data_dependent, c.bounded) == (32, True, True)


def test_a_loop_whose_bounds_share_a_block_dependent_start_has_a_trip_count():
    # matrixMul: for (a = aBegin; a <= aEnd; a += aStep) with aBegin = wA * 32 * blockIdx.y and
    # aEnd = aBegin + wA - 1: the block index cancels, 10 trips for wA = 320
    src = """
__global__ void k(float *A, int wA) {
    __shared__ float As[32][32];
    int aBegin = wA * 32 * blockIdx.y;
    int aEnd = aBegin + wA - 1;
    for (int a = aBegin; a <= aEnd; a += 32) {
        As[threadIdx.y][threadIdx.x] = A[a + wA * threadIdx.y + threadIdx.x];
        __syncthreads();
    }
}
"""
    c = cost_of(src, "A[a + wA * threadIdx.y + threadIdx.x]", block=(32, 32, 1), grid=(10, 20, 1), params={"wA": 320})
    assert (c.per_request, c.requests) == (4, 32 * 10 * 200)


def test_inlining_stops_past_its_budget_and_says_so_at_the_kernel():
    # five levels of helpers each calling the next ten times: 10^5 inlined statements
    levels = ["__device__ int f0(int x) { return x + 1; }"]
    for i in range(1, 6):
        calls = " + ".join(f"f{i - 1}(x + {j})" for j in range(10))
        levels.append(f"__device__ int f{i}(int x) {{ return {calls}; }}")
    src = (
        "\n".join(levels)
        + """
__global__ void k(int *out) { out[threadIdx.x] = f5(threadIdx.x); }
"""
    )
    analysis = analyse(src, block=(32, 1, 1), grid=(1, 1, 1))
    (d,) = analysis.diagnostics
    assert (d.code, d.severity.value) == ("WL903", "warning")
    assert d.message == (
        "in kernel `k`: calls past the first 50,000 statements of inlined code were not "
        "followed: their accesses are not checked and their results are unknown"
    )
    store = cost_of(src, "out[threadIdx.x]", block=(32, 1, 1), grid=(1, 1, 1))
    assert (store.per_request, store.exact) == (4, True)


# ----------------------------------------------------------------------------- struct parameters
MATRIX = """
struct Matrix { int width; int height; float *elements; };
__global__ void k(Matrix A, Matrix B, int pick) {
    int row = threadIdx.x;
    A.elements[row * A.width] = 1.0f;
    Matrix C = A;
    C.width = 1;
    C.elements[row * C.width] = 2.0f;
    Matrix D = pick ? A : B;
    D.elements[row] = 3.0f;
}
"""


def test_a_struct_parameters_fields_are_named_after_it_and_its_pointers_are_global():
    cost = cost_of(MATRIX, "A.elements[row * A.width]", block=(32, 1, 1))
    assert cost.space == "global" and not cost.exact  # A.width is not known: a worst case
    given = cost_of(MATRIX, "A.elements[row * A.width]", block=(32, 1, 1), params={"A.width": 1})
    assert given.exact and given.per_request == 4


def test_a_copy_of_a_struct_parameter_keeps_its_other_fields_and_takes_what_is_assigned():
    cost = cost_of(MATRIX, "C.elements[row * C.width]", block=(32, 1, 1))
    assert cost.space == "global" and cost.exact and cost.per_request == 4  # C.width = 1: consecutive floats


def test_joining_two_different_struct_parameters_knows_only_their_assigned_fields():
    cost = cost_of(MATRIX, "D.elements[row]", block=(32, 1, 1))
    assert cost.space != "global"  # neither A's nor B's elements: where it points is not known
