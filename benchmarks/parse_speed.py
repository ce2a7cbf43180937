"""How fast the front end is: lines per second, and the wall time of one `check`.

    python benchmarks/parse_speed.py [--lines N] [--repeat R] [--check-lines M]
                                     [--warplint PATH] [--check-file FILE ...]

1. Generates a big .cu file (about N lines, default 20,000) of realistic kernels -- shared
   tiles, reductions through a `SharedMemory<T>` struct, float3 structs, template kernels,
   host code with launches -- and times preprocess, parse and lower on it, best of R runs
   (the parser tables are built before timing). Prints lines per second for each stage and
   for parse + lower together.
2. Generates a file of about M lines (default 200) and times `python -m analyzer check FILE`
   in a fresh interpreter (start-up included), with the parser-table cache cold (an empty
   cache directory) and warm; best and median of R runs. With `--warplint PATH`, the
   installed console script at PATH is timed instead (what a user runs after `pip install .`
   in a virtual environment); `--check-file` times `check` on real files as well.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.ir.lower import lower  # noqa: E402
from analyzer.source.preprocess import preprocess  # noqa: E402
from analyzer.syntax.parse import cuda_tables, parse  # noqa: E402

PRELUDE = """\
#include <cuda_runtime.h>
#include <cstdio>
#define TILE 32
#define BLOCK_ROWS 8
#define IDX(r, c, w) ((r) * (w) + (c))

template <class T> struct SharedMemory {
    __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
    __device__ inline operator const T *() const { extern __shared__ int __smem[]; return (T *)__smem; }
};

struct Particle { float3 pos; float3 vel; float mass; int id; };
typedef struct { int width; int height; int stride; float *elements; } Matrix;
"""

UNIT = """\
// ---- unit {i}
__device__ float weight_{i}(float x, float y) {{ return x * 0.5f + y * {i}.0f; }}

__global__ void transpose_{i}(float *odata, const float *idata, int width, int height) {{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[IDX(y + j, x, width)];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        odata[IDX(y + j, x, height)] = tile[threadIdx.x][threadIdx.y + j];
}}

template <class T, unsigned int blockSize>
__global__ void reduce_{i}(const T *g_idata, T *g_odata, unsigned int n) {{
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    T sum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) sum += g_idata[i + blockSize];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {{
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }}
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}}

__global__ void particles_{i}(Particle *p, Matrix m, float dt, int n) {{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float3 v = p[k].vel;
    p[k].pos.x += v.x * dt;
    p[k].pos.y += v.y * dt;
    p[k].pos.z += v.z * dt;
    m.elements[k % m.width] = weight_{i}(p[k].mass, dt);
    atomicAdd(&m.elements[0], 1.0f);
}}

void run_{i}(float *d_out, float *d_in, Particle *d_p, Matrix m, int n) {{
    dim3 block(TILE, BLOCK_ROWS);
    dim3 grid(n / TILE, n / TILE);
    transpose_{i}<<<grid, block>>>(d_out, d_in, n, n);
    reduce_{i}<float, 256><<<n / 512, 256, 256 * sizeof(float)>>>(d_in, d_out, n);
    particles_{i}<<<(n + 127) / 128, 128>>>(d_p, m, 0.01f, n);
    cudaDeviceSynchronize();
}}
"""

UNIT_LINES = UNIT.count("\n")


def generate(lines: int) -> str:
    units = max(1, -(-(lines - PRELUDE.count("\n")) // UNIT_LINES))  # rounded up
    return PRELUDE + "".join(UNIT.format(i=i) for i in range(units))


def best_of(repeat: int, fn):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def throughput(lines: int, repeat: int) -> None:
    text = generate(lines)
    n = text.count("\n")
    cuda_tables()  # tables built (or loaded) outside the timing
    t_pp, pp = best_of(repeat, lambda: preprocess(text, "big.cu"))
    t_parse, result = best_of(repeat, lambda: parse(pp.text))
    t_lower, module = best_of(repeat, lambda: lower(result.unit, pp.text, "big.cu"))
    errors = [d for d in list(pp.diagnostics) + result.diagnostics if d.code in ("WL900", "WL901")]
    print(
        f"generated file    {n:,} lines, {len(text) / 1e6:.2f} MB, {len(module.kernels)} kernels lowered, "
        f"{len(errors)} errors"
    )
    print(f"preprocess        {t_pp:6.2f} s  {n / t_pp:10,.0f} lines/s")
    print(f"parse             {t_parse:6.2f} s  {n / t_parse:10,.0f} lines/s")
    print(f"lower             {t_lower:6.2f} s  {n / t_lower:10,.0f} lines/s")
    print(f"parse + lower     {t_parse + t_lower:6.2f} s  {n / (t_parse + t_lower):10,.0f} lines/s")
    print(f"all three         {t_pp + t_parse + t_lower:6.2f} s  {n / (t_pp + t_parse + t_lower):10,.0f} lines/s")


def check_wall_time(lines: int, repeat: int, warplint: str | None, files: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.cu"
        path.write_text(generate(lines))
        n = path.read_text().count("\n")
        # `--warplint` times an installed console script (as a user runs it after `pip install .`,
        # in its own environment); by default this tree, run by this interpreter
        prefix = [warplint] if warplint else [sys.executable, "-m", "analyzer"]
        cmd = [*prefix, "check", "--no-cache", str(path)]  # the analysis timed, not the results cache

        def run(cache: str, command: list[str] = cmd) -> float:
            # as after `pip install .`: bytecode compiled (pip compiles it at install time; a
            # PYTHONDONTWRITEBYTECODE left in the environment would recompile every module)
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            if not warplint:
                env["PYTHONPATH"] = str(ROOT)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            t = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - t
            if done.returncode not in (0, 1):
                raise SystemExit(f"check failed ({done.returncode}):\n{done.stderr[-2000:]}")
            return elapsed

        with tempfile.TemporaryDirectory() as cache:
            run(cache)  # writes the bytecode of warplint, lark and networkx once, untimed
        cold = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(run(cache))
        warm_cache = str(Path(tmp) / "cache")
        run(warm_cache)  # fill the cache
        warm = [run(warm_cache) for _ in range(repeat)]
        t = time.perf_counter()
        # the script's own interpreter (its first line names it) for an installed script
        python = Path(warplint).read_text().splitlines()[0][2:].strip() if warplint else sys.executable
        subprocess.run(
            [python, "-c", "pass"],
            check=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        )
        bare = time.perf_counter() - t

        def front_end():
            pp = preprocess(path.read_text(), str(path))
            return lower(parse(pp.text).unit, pp.text, str(path))

        front, _ = best_of(repeat, front_end)
        print(
            f"check, {n} lines   cold cache: best {min(cold):.2f} s, median {statistics.median(cold):.2f} s; "
            f"warm cache: best {min(warm):.2f} s, median {statistics.median(warm):.2f} s"
        )
        print(
            f"                  of which preprocess + parse + lower in-process: {front:.2f} s; "
            f"a bare `python -c pass`: {bare:.2f} s"
        )
        for other in files:  # real files, for comparison with the generated one (warm cache)
            times = [run(warm_cache, [*prefix, "check", "--no-cache", other]) for _ in range(repeat)]
            size = Path(other).read_text(errors="replace").count("\n")
            print(f"check, {size} lines   {other}: best {min(times):.2f} s, median {statistics.median(times):.2f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20_000, help="size of the generated file for lines/s")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best and median are shown)")
    ap.add_argument("--check-lines", type=int, default=200, help="size of the file given to `check`")
    ap.add_argument(
        "--warplint",
        metavar="PATH",
        help="time this installed `warplint` script instead of `python -m analyzer` run from this tree",
    )
    ap.add_argument(
        "--check-file", action="append", default=[], metavar="FILE", help="also time `check` on this file (repeatable)"
    )
    args = ap.parse_args(argv)
    throughput(args.lines, args.repeat)
    check_wall_time(args.check_lines, args.repeat, args.warplint, args.check_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
