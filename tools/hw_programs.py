"""Generate the complete CUDA programs that tools/validate_hw.py measures on a GPU.

Two kinds of program go into the build folder (default `build/hw/`, ignored by git):

* every `samples/*.cu` that compiles, copied line for line; where a sample's problem
  size would make a profiled run take minutes, the size is reduced on the same line
  (SIZE_SUBSTITUTIONS), so line numbers stay those of the sample;
* one program per kernel of `tests/test_lanes.py` listed in CASES: the kernel as the test
  writes it, then a `main` that allocates every pointer parameter with `cudaMalloc`,
  launches with the test's block and grid (grid 1 where the test gives none) and syncs.

Both `measure` (on the GPU machine) and `compare` (here) read the same files, so the
static analysis sees exactly the source that was compiled. Stdlib only: this runs on the
GPU machine too.

    python tools/hw_programs.py [OUTDIR]
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Bytes given to every pointer parameter: the largest test index, x[1000 * tid] over
# 512 threads of floats, needs 2 MB.
BUFFER_BYTES = 8 << 20

# (sample, old text, new text): the same line, smaller problem. 4096^3 naive matmuls
# would run for minutes under Nsight Compute's source counters; per-request costs do
# not depend on the size while it stays a multiple of 32.
SIZE_SUBSTITUTIONS: tuple[tuple[str, str, str], ...] = (
    ("001_matmul_v1_naive.cu", "M = 4096, N = 4096, P = 4096", "M = 512, N = 512, P = 512"),
    ("001_matmul_v2_coalesced.cu", "M = 4096, N = 4096, P = 4096", "M = 512, N = 512, P = 512"),
)

# Samples that must not compile (the misspelled __align(n)__ is the point of the file).
SKIPPED_SAMPLES = frozenset({"000_vec3d_misspelled_align.cu"})


@dataclass(frozen=True)
class Case:
    """One kernel of tests/test_lanes.py and the launch its test analyses it with."""

    name: str  # file stem: hw_<name>.cu
    test: str  # the test (and parameters) the kernel comes from
    kernel: str  # kernel source as the test writes it (one __global__ `k`/`reduce`/...)
    block: tuple[int, int, int]
    grid: tuple[int, int, int] = (1, 1, 1)
    params: dict[str, int] = field(default_factory=dict)


def _shared_kernel(index: str, elem: str = "float", size: int = 4096) -> str:
    # Same text as test_lanes.shared_kernel.
    return f"""
__global__ void k(float* out) {{
    __shared__ {elem} s[{size}];
    int tid = threadIdx.x;
    out[tid] = s[{index}];
}}
"""


def _column_read(width: int, pad: int) -> str:
    return f"""
__global__ void k(float* out) {{
    __shared__ float tile[{width}][{width + pad}];
    out[threadIdx.y * {width} + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}}
"""


def _shared_elem(elem: str, index: str) -> str:
    return f"""
__global__ void k({elem}* out) {{
    __shared__ {elem} s[1024];
    int tid = threadIdx.x;
    out[tid] = s[{index}];
}}
"""


def _global_float(index: str) -> str:
    return f"""
__global__ void k(float* x, float* y) {{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    y[tid] = x[{index}];
}}
"""


def _global_elem(elem: str) -> str:
    return f"""
__global__ void k({elem}* x, {elem}* y) {{
    y[threadIdx.x] = x[threadIdx.x];
}}
"""


_XOR = """
__global__ void k(float* out) {
    __shared__ float tile[32][32];
    int x = threadIdx.x, y = threadIdx.y;
    out[y * 32 + x] = tile[x][x ^ y];
}
"""

# The reductions write sdata[0] back (one added line) so that no compiler pass can treat
# the shared-memory work as dead; the test's kernel has no global store.
_INTERLEAVED = """
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
    if (tid == 0) g[blockIdx.x] = sdata[0];
}
"""

_SEQUENTIAL = """
__global__ void reduce(float* g) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g[tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g[blockIdx.x] = sdata[0];
}
"""

CASES: tuple[Case, ...] = (
    *(
        Case(
            f"shared_stride{s}",
            f"test_float_shared_stride_costs_gcd_with_32_wavefronts[{s}]",
            _shared_kernel(f"{s} * tid"),
            (32, 1, 1),
        )
        for s in (1, 2, 3, 4, 8, 16, 17, 32, 33)
    ),
    # The test's kernel reads s[3] without writing s first; nvcc folds that read of
    # uninitialised shared memory (and the store of its value) away, so nothing is left to
    # measure. One added store and barrier keep the read.
    Case(
        "shared_broadcast",
        "test_broadcast_of_one_word_is_one_wavefront",
        """
__global__ void k(float* out) {
    __shared__ float s[4096];
    int tid = threadIdx.x;
    s[tid] = out[tid];
    __syncthreads();
    out[tid] = s[3];
}
""",
        (32, 1, 1),
    ),
    Case(
        "shared_four_lanes_one_word",
        "test_several_lanes_on_one_word_do_not_conflict",
        _shared_kernel("tid / 4"),
        (32, 1, 1),
    ),
    Case("xor_swizzle", "test_xor_swizzled_column_read_is_conflict_free", _XOR, (32, 8, 1)),
    Case("xor_unswizzled", "test_xor_swizzled_column_read_is_conflict_free", _XOR.replace("x ^ y", "y"), (32, 8, 1)),
    *(
        Case(f"tile{w}_pad{p}", f"test_column_read_of_a_tile[{w}-{p}]", _column_read(w, p), (w, w, 1))
        for w, p in ((32, 0), (32, 1), (16, 0), (16, 1))
    ),
    Case(
        "tile16_rows",
        "test_block_16_wide_puts_two_rows_in_a_warp",
        """
__global__ void k(float* out) {
    __shared__ float tile[16][16];
    out[0] = tile[threadIdx.y][threadIdx.x];
}
""",
        (16, 16, 1),
    ),
    *(
        Case(
            f"shared_{e}_{i.replace(' * ', 'x')}",
            f"test_element_sizes_in_shared_memory[{e}-{i}]",
            _shared_elem(e, i),
            (32, 1, 1),
        )
        for e, i in (
            ("double", "tid"),
            ("double", "2 * tid"),
            ("float4", "tid"),
            ("float2", "tid"),
            ("char", "tid"),
            ("short", "tid"),
            ("char", "4 * tid"),
        )
    ),
    *(
        Case(f"global_float_{n}", f"test_global_float_sectors[{i}]", _global_float(i), (128, 1, 1), (4, 1, 1))
        for n, i in (
            ("tid", "tid"),
            ("tid_plus_1", "tid + 1"),
            ("2tid", "2 * tid"),
            ("1000tid", "1000 * tid"),
            ("zero", "0"),
        )
    ),
    *(
        Case(f"global_{e}", f"test_global_element_sizes_are_ideal_when_contiguous[{e}]", _global_elem(e), (32, 1, 1))
        for e in ("char", "short", "double", "float4")
    ),
    Case(
        "float3_field",
        "test_float3_field_is_strided_by_12_bytes",
        "\n__global__ void k(float3* in, float* out) { out[threadIdx.x] = in[threadIdx.x].y; }\n",
        (32, 1, 1),
    ),
    Case(
        "float3_copy",
        "test_whole_float3_copy_is_three_requests_of_12_sectors",
        "\n__global__ void k(float3* in, float3* out) { out[threadIdx.x] = in[threadIdx.x]; }\n",
        (32, 1, 1),
    ),
    Case(
        "aligned_struct",
        "test_aligned_struct_fields_read_together_are_one_16_byte_load",
        """
struct __align__(16) vec3d { float x, y, z; };
__global__ void k(vec3d* d, float* out) {
    int tid = threadIdx.x;
    out[tid] = d[tid].x * d[tid].x + d[tid].y * d[tid].y + d[tid].z * d[tid].z;
}
""",
        (32, 1, 1),
    ),
    Case(
        "masked_lanes",
        "test_masked_lane_takes_no_part",
        """
__global__ void k(float* x, float* y) {
    int tid = threadIdx.x;
    if (tid != 3) y[tid] = x[tid];
    if (tid < 8) y[tid + 64] = x[tid];
}
""",
        (32, 1, 1),
    ),
    Case(
        "thread_strided_loop",
        "test_thread_strided_loop_is_coalesced_every_iteration",
        """
__global__ void k(float* x, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = 0.0f;
}
""",
        (256, 1, 1),
        params={"n": 1024},
    ),
    Case(
        "uniform_loop",
        "test_uniform_loop_costs_the_same_each_iteration",
        """
__global__ void k(float* out) {
    __shared__ float s[32][33];
    float acc = 0;
    for (int e = 0; e < 32; ++e) acc += s[threadIdx.x][e];
    out[threadIdx.x] = acc;
}
""",
        (32, 1, 1),
    ),
    Case(
        "reduce_interleaved", "test_interleaved_reduction_is_charged_iteration_by_iteration", _INTERLEAVED, (256, 1, 1)
    ),
    Case("reduce_sequential", "test_sequential_reduction_is_conflict_free", _SEQUENTIAL, (256, 1, 1)),
    Case(
        "stride_param3",
        "test_stride_parameter_gives_cost_as_cases (stride=3)",
        """
__global__ void k(float* out, int stride) {
    __shared__ float s[4096];
    out[threadIdx.x] = s[threadIdx.x * stride];
}
""",
        (32, 1, 1),
        params={"stride": 3},
    ),
    Case(
        "data_dependent_atomic",
        "test_data_dependent_index_is_unknown",
        """
__global__ void hist(int* data, int* bins) {
    int v = data[threadIdx.x];
    atomicAdd(&bins[v], 1);
}
""",
        (32, 1, 1),
    ),
    Case(
        "device_function",
        "test_device_function_is_inlined_with_the_callers_pointer",
        """
__device__ float get(const float* p, int i) { return p[i]; }
__global__ void k(float* x, float* y) { y[threadIdx.x] = get(x, 2 * threadIdx.x); }
""",
        (32, 1, 1),
    ),
    Case(
        "host_launch_16x16",
        "test_launch_configuration_comes_from_host_code",
        """
#define BLOCK 16
__global__ void k(float* x, int w) { x[threadIdx.y * w + threadIdx.x] = 0; }
""",
        (16, 16, 1),
        (64, 64, 1),
        params={"w": 1024},
    ),
)

_KERNEL_SIGNATURE = re.compile(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)")


def kernel_signature(source: str) -> tuple[str, list[tuple[str, str]]]:
    """The kernel's name and its parameters as (type, name) pairs."""
    m = _KERNEL_SIGNATURE.search(source)
    if m is None:
        raise ValueError("no __global__ kernel in the case's source")
    params = []
    for p in filter(None, (s.strip() for s in m.group(2).split(","))):
        pm = re.match(r"(.*?)(\w+)$", p)
        if pm is None:
            raise ValueError(f"cannot read parameter {p!r}")
        params.append((pm.group(1).strip(), pm.group(2)))
    return m.group(1), params


def render_program(case: Case) -> str:
    """The case's kernel followed by a main that allocates, launches once and syncs."""
    name, params = kernel_signature(case.kernel)
    lines = [
        f"// Generated by tools/hw_programs.py from tests/test_lanes.py::{case.test}",
        "#include <cuda_runtime.h>",
        "#include <stdio.h>",
    ]
    lines += case.kernel.strip("\n").splitlines()
    lines += ["", "int main()", "{"]
    args = []
    for i, (ctype, pname) in enumerate(params):
        if "*" in ctype:
            var = f"d{i}"
            lines.append(f"    {ctype} {var};")
            lines.append(f"    cudaMalloc((void**)&{var}, {BUFFER_BYTES});")
            lines.append(f"    cudaMemset((void*){var}, 0, {BUFFER_BYTES});")
            args.append(var)
        else:
            # Scalars take the test's --param value; 0 where the test gives none.
            args.append(str(case.params.get(pname, 0)))
    lines.append("    dim3 grid({}, {}, {});".format(*case.grid))
    lines.append("    dim3 block({}, {}, {});".format(*case.block))
    lines.append(f"    {name}<<<grid, block>>>({', '.join(args)});")
    lines.append("    cudaError_t err = cudaDeviceSynchronize();")
    lines.append('    if (err != cudaSuccess) { printf("%s\\n", cudaGetErrorString(err)); return 1; }')
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def sized_sample(name: str, text: str) -> str:
    """The sample's text with its problem size reduced on the same line, where listed."""
    for sample, old, new in SIZE_SUBSTITUTIONS:
        if sample == name:
            if old not in text:
                raise ValueError(f"{name}: expected {old!r} to reduce the problem size")
            text = text.replace(old, new)
    return text


def write_all(outdir: Path, samples_dir: Path = ROOT / "samples") -> list[Path]:
    """Write every program to measure; returns their paths, samples first."""
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for sample in sorted(samples_dir.glob("*.cu")):
        if sample.name in SKIPPED_SAMPLES:
            continue
        target = outdir / sample.name
        target.write_text(sized_sample(sample.name, sample.read_text(encoding="utf-8")), encoding="utf-8")
        written.append(target)
    for case in CASES:
        target = outdir / f"hw_{case.name}.cu"
        target.write_text(render_program(case), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "hw"
    for path in write_all(out):
        print(path)
