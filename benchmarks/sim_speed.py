"""How fast the reference simulator is: lane-accesses simulated per second.

    python benchmarks/sim_speed.py [--repeat R]

Simulates a few typical kernels (a tiled shared-memory matrix multiply, the SDK's padded
transpose, a sequential-addressing reduction, a data-dependent histogram) for a fixed
launch, and prints for each the lane-accesses made (one per active lane per access, the
simulator's unit of work: each is an address computed, a value moved and a lane charged
in its warp's request), the wall time (best of R runs) and lane-accesses per second. The
target (issue 4) is at least 1,000,000 per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.analysis.launch import launch_configs  # noqa: E402
from analyzer.arch import get_arch  # noqa: E402
from analyzer.ir.lower import lower  # noqa: E402
from analyzer.sim.run import SimOptions, simulate_kernel  # noqa: E402
from analyzer.source.preprocess import preprocess  # noqa: E402
from analyzer.syntax.parse import parse  # noqa: E402

KERNELS = {
    "matmul, shared tiles 32x32, n=256": (
        """
#define T 32
__global__ void mm(const float* a, const float* b, float* c, int n) {
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / T; ++t) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t * T + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * T + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
""",
        (32, 32, 1),
        (8, 8, 1),
        {"n": 256},
    ),
    "transpose 16x17 padded, 1024x1024": (
        """
__global__ void transpose(float* odata, const float* idata, int width, int height) {
    __shared__ float block[16][17];
    unsigned int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x < width && y < height) block[threadIdx.y][threadIdx.x] = idata[y * width + x];
    __syncthreads();
    x = blockIdx.y * 16 + threadIdx.x; y = blockIdx.x * 16 + threadIdx.y;
    if (x < height && y < width) odata[y * height + x] = block[threadIdx.x][threadIdx.y];
}
""",
        (16, 16, 1),
        (64, 64, 1),
        {"width": 1024, "height": 1024},
    ),
    "reduction, sequential addressing": (
        """
__global__ void reduce(const float* g, float* out) {
    __shared__ float s[512];
    unsigned int tid = threadIdx.x;
    s[tid] = g[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
""",
        (512, 1, 1),
        (256, 1, 1),
        {},
    ),
    "histogram, random data": (
        """
__global__ void hist(const unsigned char* data, int* bins, int n) {
    __shared__ int h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&h[data[i]], 1);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}
""",
        (256, 1, 1),
        (16, 1, 1),
        {"n": 1 << 18},
    ),
}


def measure(source: str, block, grid, params, repeat: int) -> tuple[int, float]:
    pp = preprocess(source, "bench.cu")
    module = lower(parse(pp.text).unit, pp.text, "bench.cu")
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, grid=grid, params=params)[0]
    best = float("inf")
    lanes = 0
    for _ in range(repeat):
        start = time.perf_counter()
        sim = simulate_kernel(module, kernel, launch, get_arch("sm_90"), params, SimOptions(max_blocks=0))
        best = min(best, time.perf_counter() - start)
        lanes = sim.lane_accesses
        assert sim.stopped is None, sim.stopped
    return lanes, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    total_lanes, total_time = 0, 0.0
    print(f"{'kernel':40} {'lane-accesses':>14} {'seconds':>8} {'per second':>12}")
    for name, (src, block, grid, params) in KERNELS.items():
        lanes, seconds = measure(src, block, grid, params, args.repeat)
        total_lanes += lanes
        total_time += seconds
        print(f"{name:40} {lanes:>14,} {seconds:>8.3f} {lanes / seconds:>12,.0f}")
    print(f"{'all':40} {total_lanes:>14,} {total_time:>8.3f} {total_lanes / total_time:>12,.0f}")


if __name__ == "__main__":
    main()
