"""The reference simulator (analyzer.sim): held to `check`, and to hand-computed figures.

The runtime check runs every sample and every kernel of tests/test_lanes.py (its own
cases, recorded by running its tests with `analyse` wrapped) through both the static
analysis and the simulator, and requires: for every access `check` marks exact, the same
worst cost per request and (when the grid is known) the same requests and total; for the
others a simulated worst within check's [best_per_request, per_request].
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pytest

import test_lanes
from analyzer.analysis.kernel import analyze_kernel
from analyzer.analysis.launch import launch_configs
from analyzer.api import Options, check_file, simulate_file
from analyzer.arch import get_arch
from analyzer.cli import main
from analyzer.ir import types as T
from analyzer.ir.lower import lower
from analyzer.sim.run import SimOptions, sample_blocks, simulate_kernel
from analyzer.sim.verify import compare
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

ARCH = get_arch("sm_90")
REPO = Path(__file__).resolve().parents[1]
SAMPLES = sorted(p for p in (REPO / "samples").glob("*.cu"))


def build(source: str):
    pp = preprocess(source, "test.cu")
    parsed = parse(pp.text)
    module = lower(parsed.unit, pp.text, "test.cu")
    assert module.kernels, [d.message for d in parsed.diagnostics + module.diagnostics]
    return module


def check_and_simulate(source: str, block=None, grid=None, params=None, **sim):
    """check's analysis and the simulation of the first kernel, for the same launch."""
    module = build(source)
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, grid=grid, params=params)[0]
    static = analyze_kernel(module, kernel, launch, ARCH, params)
    simulated = simulate_kernel(module, kernel, launch, ARCH, params, SimOptions(**{"max_blocks": 0, **sim}))
    return static, simulated


def simulate(source: str, block=None, grid=None, params=None, **sim):
    return check_and_simulate(source, block, grid, params, **sim)[1]


def site(simulation, text: str, op: str | None = None):
    hits = [c for c in simulation.costs if c.text == text and (op is None or c.op == op)]
    assert hits, f"no access {text!r} in {[c.text for c in simulation.costs]}"
    return hits[0]


def explain(source: str, static, simulated) -> str:
    rows = [
        f"{c.text} {c.space} check={c.per_request} best={c.best_per_request} req={c.requests} "
        f"total={c.total} exact={c.exact}"
        for c in static.costs
    ]
    rows += [f"sim {c.text} {c.space} worst={c.per_request} req={c.requests} total={c.total}" for c in simulated.costs]
    return source + "\n" + "\n".join(rows)


# ----------------------------------------------------------------------------- the runtime check


def _lanes_cases() -> list[tuple[str, dict]]:
    """(test name, keyword arguments) of every test in test_lanes, parametrized ones expanded."""
    cases = []
    for name, fn in inspect.getmembers(test_lanes, inspect.isfunction):
        if not name.startswith("test_") or fn.__module__ != test_lanes.__name__:
            continue
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            cases.append((name, {}))
            continue
        names, values = marks[0].args[0], marks[0].args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        for v in values:
            v = v if len(names) > 1 else (v,)
            cases.append((f"{name}[{'-'.join(map(str, v))}]", dict(zip(names, v))))
    return cases


LANES_CASES = _lanes_cases()


def test_every_test_lanes_case_is_collected():
    functions = {
        n
        for n, f in inspect.getmembers(test_lanes, inspect.isfunction)
        if n.startswith("test_") and f.__module__ == test_lanes.__name__
    }
    assert {n.split("[")[0] for n, _ in LANES_CASES} == functions
    strides = [kw for n, kw in LANES_CASES if n.startswith("test_float_shared_stride_costs_gcd_with_32_wavefronts[")]
    assert [kw["stride"] for kw in strides] == list(range(1, 34))


@pytest.mark.parametrize("name, kwargs", LANES_CASES, ids=[n for n, _ in LANES_CASES])
@pytest.mark.slow
def test_simulator_agrees_with_check_on_test_lanes_kernels(name, kwargs, monkeypatch):
    recorded: list[tuple] = []
    real = test_lanes.analyse

    def recording(source, block=None, grid=None, params=None):
        recorded.append((source, block, grid, params))
        return real(source, block, grid, params)

    monkeypatch.setattr(test_lanes, "analyse", recording)
    getattr(test_lanes, name.split("[")[0])(**kwargs)
    assert recorded, f"{name} analysed no kernel"
    compared = 0
    for source, block, grid, params in recorded:
        static, simulated = check_and_simulate(source, block, grid, params)
        assert simulated.stopped is None
        mismatches = compare(static, simulated)
        assert not mismatches, (
            explain(source, static, simulated)
            + "\n"
            + "\n".join(f"{m.cost.text}: {m.what} check {m.static} sim {m.simulated}" for m in mismatches)
        )
        compared += sum(1 for c in static.costs if c.per_request is not None)
    assert compared or name.startswith("test_data_dependent")


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
@pytest.mark.slow
def test_simulator_agrees_with_check_on_samples(path):
    static = check_file(str(path), Options())
    simulated = simulate_file(str(path), Options(), SimOptions(max_blocks=4))
    assert len(static.kernels) == len(simulated.kernels) >= 1
    exact = 0
    for a, s in zip(static.kernels, simulated.kernels):
        assert (a.kernel.display_name, a.launch) == (s.kernel.display_name, s.launch)
        assert s.stopped is None
        # every block of a sample costs the same: scaled totals must match check's exactly
        mismatches = compare(a, s, scaled_totals=True)
        assert not mismatches, "\n".join(
            f"{m.cost.text}: {m.what} check {m.static} sim {m.simulated}" for m in mismatches
        )
        exact += sum(1 for c in a.costs if c.exact)
    assert exact or path.name.startswith("001") or path.name.startswith("003_matmul")


# ----------------------------------------------------------------------------- exact figures

REDUCE = """
__global__ void reduce(float* g, float* out) {
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = g[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    LOOP
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"""
INTERLEAVED = """for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }"""
SEQUENTIAL = """for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }"""


def _shared_wavefronts(simulation) -> int:
    return sum(c.total for c in simulation.costs if c.space == "shared")


def test_interleaved_reduction_total_wavefronts():
    sim = simulate(REDUCE.replace("LOOP", INTERLEAVED), block=(256, 1, 1), grid=(4, 1, 1))
    # per block: 8 for the first store; each of the three loop accesses (load sdata[index],
    # load sdata[index + s], store sdata[index]) costs s=1: 4 warps x 2-way = 8, s=2: 2 x 4 = 8,
    # s=4: 8, s=8: 8, s=16: 8, s=32: 4, s=64: 2, s=128: 1 -> 47 in 12 requests; sdata[0]: 1
    for text, op in (("sdata[index]", "load"), ("sdata[index + s]", "load"), ("sdata[index]", "store")):
        c = site(sim, text, op)
        assert (c.per_request, c.requests, c.total) == (8, 4 * 12, 4 * 47)
    assert _shared_wavefronts(sim) == 4 * (8 + 3 * 47 + 1)


def test_sequential_reduction_total_wavefronts():
    sim = simulate(REDUCE.replace("LOOP", SEQUENTIAL), block=(256, 1, 1), grid=(4, 1, 1))
    # s = 128, 64, 32: 4, 2, 1 warps; s = 16 .. 1: one warp each; never a conflict
    for text, op in (("sdata[tid]", "load"), ("sdata[tid + s]", "load")):
        c = site(sim, text, op)
        assert (c.per_request, c.requests, c.total) == (1, 4 * 12, 4 * 12)
    assert _shared_wavefronts(sim) == 4 * (8 + 3 * 12 + 1)


def test_reduction_computes_the_sum():
    sim = simulate(REDUCE.replace("LOOP", SEQUENTIAL), block=(256, 1, 1), grid=(2, 1, 1), fill="iota")
    out = sim.memory.buffer("out", T.FLOAT)
    assert out.tolist() == [sum(range(256)), sum(range(256, 512))]


HISTOGRAM = """
__global__ void hist(const unsigned char* data, int* bins) {
    __shared__ int h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&h[data[blockIdx.x * blockDim.x + threadIdx.x]], 1);
    __syncthreads();
    atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}
"""


def _random_contents(seed: int, window: int, dtype: type, count: int) -> np.ndarray:
    # the documented contents of the buffer in memory window `window` (1 for the first
    # parameter) under --fill random: integers in [0, 256), generated per 64 KiB chunk
    per_chunk = (1 << 16) // np.dtype(dtype).itemsize
    rng = np.random.default_rng([seed, window, 0])
    return rng.integers(0, 256, per_chunk).astype(dtype)[:count]


def test_data_dependent_histogram_is_costed_from_the_seeded_data():
    static, sim = check_and_simulate(HISTOGRAM, block=(256, 1, 1), grid=(2, 1, 1), seed=7)
    data = _random_contents(7, 1, np.uint8, 512)
    # independent oracle: per warp, the most distinct bins (words) that share one bank
    per_warp = []
    for w in range(16):
        values = set(data[32 * w : 32 * w + 32].tolist())
        per_bank = [sum(1 for v in values if v % 32 == b) for b in range(32)]
        per_warp.append(max(per_bank))
    c = site(sim, "atomicAdd(&h[data[blockIdx.x * blockDim.x + threadIdx.x]], 1)", "atomic")
    assert (c.per_request, c.requests, c.total) == (max(per_warp), 16, sum(per_warp))
    assert (c.per_request, c.total) == (4, 54)  # the figures for seed 7, pinned
    before = _random_contents(7, 2, np.int32, 256)  # `bins` starts with random contents too
    after = before + np.bincount(data, minlength=256)
    assert sim.memory.buffer("bins", T.INT).tolist() == after.tolist()
    s = next(x for x in static.costs if x.op == "atomic" and x.space == "shared")
    # check cannot know the figure, only its bound (256 words: 8 in a bank); the simulator can
    assert (s.per_request, s.exact, s.data_dependent, s.bounded) == (8, False, True, True)


def test_another_seed_gives_other_data():
    a = site(
        simulate(HISTOGRAM, block=(256, 1, 1), grid=(1, 1, 1), seed=1),
        "atomicAdd(&h[data[blockIdx.x * blockDim.x + threadIdx.x]], 1)",
    )
    b = site(
        simulate(HISTOGRAM, block=(256, 1, 1), grid=(1, 1, 1), seed=1),
        "atomicAdd(&h[data[blockIdx.x * blockDim.x + threadIdx.x]], 1)",
    )
    c = site(
        simulate(HISTOGRAM, block=(256, 1, 1), grid=(1, 1, 1), seed=2),
        "atomicAdd(&h[data[blockIdx.x * blockDim.x + threadIdx.x]], 1)",
    )
    assert a.total == b.total and a.lane_addresses == b.lane_addresses
    assert a.lane_addresses != c.lane_addresses


def test_c_integer_division_truncates_toward_zero():
    src = """
__global__ void k(int* out) {
    int t = threadIdx.x;
    out[t] = (t - 16) / 5 + 100 * ((t - 16) % 5);
}
"""
    out = simulate(src, block=(32, 1, 1), grid=(1, 1, 1)).memory.buffer("out", T.INT)
    assert out.tolist() == [int((t - 16) / 5) + 100 * int(np_fmod(t - 16, 5)) for t in range(32)]
    assert out[0] == -3 - 100  # -16 / 5 == -3 and -16 % 5 == -1 in C


def np_fmod(a: int, b: int) -> int:
    return a - b * int(a / b)


def test_unsigned_arithmetic_wraps():
    src = """
__global__ void k(unsigned int* out) { unsigned int z = 0; out[threadIdx.x] = z - threadIdx.x; }
"""
    out = simulate(src, block=(4, 1, 1), grid=(1, 1, 1)).memory.buffer("out", T.UINT)
    assert out.tolist() == [0, 2**32 - 1, 2**32 - 2, 2**32 - 3]


def test_divergent_branch_masks_lanes_and_loops_exit_per_thread():
    src = """
__global__ void k(float* x, int* out) {
    int n = 0;
    for (int i = 0; i < threadIdx.x; ++i) {
        if (i == 5) break;
        if (i % 2) continue;
        n += 1;
    }
    if (threadIdx.x != 3) x[threadIdx.x] = 1.0f;
    out[threadIdx.x] = n;
}
"""
    sim = simulate(src, block=(32, 1, 1), grid=(1, 1, 1))
    expected = [len([i for i in range(min(t, 5)) if i % 2 == 0]) for t in range(32)]
    assert sim.memory.buffer("out", T.INT).tolist() == expected
    x = site(sim, "x[threadIdx.x]")
    assert (x.per_request, x.requests) == (4, 1)
    assert x.lane_addresses[3] is None and x.lane_addresses[4] == 16


def test_shuffle_reduction_within_a_warp():
    src = """
__global__ void k(int* out) {
    int v = threadIdx.x;
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    out[threadIdx.x] = v;
}
"""
    out = simulate(src, block=(64, 1, 1), grid=(1, 1, 1)).memory.buffer("out", T.INT)
    assert (out[0], out[32]) == (sum(range(32)), sum(range(32, 64)))


def test_float3_and_struct_fields_are_read_and_written():
    src = """
struct P { int a; float b; };
__global__ void k(float3* v, P* p, float* out) {
    float3 q = v[threadIdx.x];
    P s = p[threadIdx.x];
    out[threadIdx.x] = q.x + q.y + q.z + s.a + min(s.b, 2.0f);
}
"""
    sim = simulate(src, block=(32, 1, 1), grid=(1, 1, 1), fill="iota")
    out = sim.memory.buffer("out", T.FLOAT)
    # iota fills a float3 buffer float by float (element i of lane t is 3t+i) and a P buffer
    # by its first field's type: P {a = 2t (int), b = bits of the int 2t+1 as a float: tiny}
    assert out[:4].tolist() == pytest.approx([3 * 3 * t + 3 + 2 * t for t in range(4)], abs=1e-3)
    assert site(sim, "v[threadIdx.x]").per_request == 12


# ----------------------------------------------------------------------------- bounded work


@pytest.mark.slow
def test_endless_loop_is_stopped_with_its_line():
    src = """
__global__ void spin(int* x) {
    while (x[0] == 0) {
        x[1 + threadIdx.x] += 1;
    }
}
"""
    sim = simulate(src, block=(32, 1, 1), grid=(1, 1, 1), fill="zeros", budget=100_000)
    assert sim.stopped is not None and "step budget of 100,000" in sim.stopped
    assert sim.stopped_span.start == src.index("while")
    assert all(c.requests is None and not c.exact for c in sim.costs)


def test_huge_grid_is_sampled_and_totals_scaled():
    src = "__global__ void k(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 0; }"
    sim = simulate(src, block=(128, 1, 1), grid=(100000, 1, 1), max_blocks=3)
    assert sim.simulated_blocks == [(0, 0, 0), (50000, 0, 0), (99999, 0, 0)]
    assert sim.scaled and any("3 of 100000 blocks simulated" in n for n in sim.notes)
    c = sim.costs[0]
    assert (c.per_request, c.requests, c.total, c.exact) == (4, 400000, 1600000, False)


def test_blocks_are_sampled_first_last_and_between():
    assert sample_blocks((100, 1, 1), 4) == [(0, 0, 0), (33, 0, 0), (66, 0, 0), (99, 0, 0)]
    assert sample_blocks((4, 2, 1), 0) == [(x, y, 0) for y in range(2) for x in range(4)]
    assert sample_blocks((10, 10, 1), 2) == [(0, 0, 0), (9, 9, 0)]


def test_divergent_barrier_is_reported():
    src = """
__global__ void k(float* x) {
    if (threadIdx.x < 16) __syncthreads();
    x[threadIdx.x] = 0;
}
"""
    sim = simulate(src, block=(64, 1, 1), grid=(1, 1, 1))
    assert [(b.waiting, b.missing) for b in sim.barriers] == [(16, 48)]


def test_out_of_bounds_reads_are_counted_not_fatal():
    src = "__global__ void k(float* x, float* y) { y[threadIdx.x] = x[(int)threadIdx.x - 2]; }"
    sim = simulate(src, block=(32, 1, 1), grid=(1, 1, 1))
    assert sim.out_of_bounds == 2
    assert any("2 lane accesses fell outside every buffer" in n for n in sim.notes)


# ----------------------------------------------------------------------------- the command


def test_simulate_command_prints_a_table(capsys):
    path = str(REPO / "samples" / "000_bank_stride16.cu")
    assert main(["simulate", path]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "data[16 * tid]" in line)
    assert row.split()[1:] == ["data[16", "*", "tid]", "shared", "load", "1", "16", "wf", "16", "16", "1"]


def test_simulate_json_has_mean_per_request_and_blocks(capsys):
    path = str(REPO / "samples" / "003_kernel_2_stride1000.cu")
    assert main(["simulate", path, "--format", "json", "--blocks", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    kernel = doc["files"][0]["kernels"][0]
    assert kernel["simulated_blocks"] == [[0, 0, 0], [3, 0, 0]]
    access = kernel["accesses"][0]
    assert (
        access["text"],
        access["per_request"],
        access["mean_per_request"],
        access["requests"],
        access["total"],
        access["exact"],
    ) == ("x[1000*tid]", 32, 32.0, 32, 1024, False)


def test_simulate_bad_input_exits_2(tmp_path, capsys):
    assert main(["simulate", str(tmp_path / "missing.cu")]) == 2
    path = str(REPO / "samples" / "003_kernel_1_coalesced.cu")
    assert main(["simulate", path, "--kernel", "nope"]) == 2
    assert "no kernel named `nope`" in capsys.readouterr().out
    assert main(["simulate", path, "--fill", "ones"]) == 2


def test_atomics_return_the_value_before_each_lane_in_lane_order():
    src = """
__global__ void k(int* c, int* got, int* mx) {
    got[threadIdx.x] = atomicAdd(&c[threadIdx.x % 2], 1);
    atomicMax(&mx[0], (int)threadIdx.x * 3);
    atomicSub(&c[2], 2);
}
"""
    sim = simulate(src, block=(8, 1, 1), grid=(1, 1, 1), fill="zeros")
    assert sim.memory.buffer("got", T.INT).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert sim.memory.buffer("c", T.INT).tolist() == [4, 4, -16]
    assert sim.memory.buffer("mx", T.INT).tolist() == [21]


def test_simulate_a_file_without_kernels_says_so_and_exits_0(tmp_path, capsys):
    source = tmp_path / "host.cu"
    source.write_text("int answer() { return 42; }\n")
    assert main(["simulate", str(source)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == f"warplint: no kernel to simulate in {source}\n"


def test_a_host_variable_named_in_device_code_is_costed_by_neither_check_nor_simulate(capsys, tmp_path):
    """nvcc refuses it; warplint leaves it uncosted in both (the simulator once charged it as global memory)."""
    path = tmp_path / "k.cu"
    path.write_text("float h[64];\n__global__ void k(float *p) { p[threadIdx.x] = h[threadIdx.x]; }\n")
    spaces = {}
    for command in ("check", "simulate"):
        main([command, str(path), "--format", "json", *(["--exit-zero"] if command == "check" else [])])
        accesses = json.loads(capsys.readouterr().out)["files"][0]["kernels"][0]["accesses"]
        spaces[command] = [(a["text"], a["space"], a["per_request"]) for a in accesses]
    assert spaces["check"] == spaces["simulate"] == [("p[threadIdx.x]", "global", 4), ("h[threadIdx.x]", "local", None)]


@pytest.mark.parametrize("name", ["002_transpose_naive.cu", "003_matmul_shared_tiles.cu", "000_global_masked_read.cu"])
def test_requests_of_whole_warps_take_the_short_way_and_are_charged_the_same(name, capsys, monkeypatch):
    from analyzer.sim.run import SiteRecorder

    def report() -> str:
        assert main(["simulate", "--format", "json", str(REPO / "samples" / name)]) in (0, 1)
        return capsys.readouterr().out

    short = report()
    monkeypatch.setattr(
        SiteRecorder, "_whole_warps", lambda self, addrs, warp: self._some_lanes(addrs, np.ones(len(addrs), bool), warp)
    )
    assert report() == short


def test_whole_warps_give_the_rows_and_warps_the_general_way_gives():
    from analyzer.sim.memory import Memory
    from analyzer.sim.run import SiteRecorder

    recorder = SiteRecorder(Memory(), ARCH)
    addrs = (1 << 40) + np.random.default_rng(3).integers(0, 1 << 20, 256).astype(np.int64)
    rel, warps = recorder._whole_warps(addrs, 32)
    want_rel, want_warps = recorder._some_lanes(addrs, np.ones(256, bool), 32)
    assert rel.tobytes() == want_rel.tobytes() and rel.dtype == want_rel.dtype
    assert warps.tolist() == want_warps.tolist() == list(range(8))


def test_a_request_moved_by_a_multiple_of_the_period_takes_the_last_rows_and_patterns():
    from analyzer.sim.memory import Memory
    from analyzer.sim.run import SiteRecorder, _patterns, _Site

    recorder = SiteRecorder(Memory(), ARCH)
    site = _Site(access=None, pieces=())
    addrs = (1 << 40) + np.random.default_rng(5).integers(0, 1 << 12, 256).astype(np.int64)
    assert recorder._moved_alike(site, addrs) is None  # no request before
    rel, warps = recorder._whole_warps(addrs, 32)
    site.last_whole = (addrs, rel, warps, _patterns(rel, warps))
    for shift, taken in [(ARCH.address_period * 3, True), (-ARCH.address_period, True), (4, False), (0, True)]:
        moved = addrs + shift
        got = recorder._moved_alike(site, moved)
        assert (got is not None) == taken, shift
        want_rel, want_warps = recorder._whole_warps(moved, 32)
        if got is not None:  # what working it out gives
            assert got[0].tobytes() == want_rel.tobytes()
            assert list(got[1].items()) == list(_patterns(want_rel, want_warps).items())
            addrs = moved
        else:
            site.last_whole = (moved, want_rel, want_warps, _patterns(want_rel, want_warps))
            addrs = moved
    uneven = addrs + np.where(np.arange(256) == 7, 2 * ARCH.address_period, ARCH.address_period)
    assert recorder._moved_alike(site, uneven) is None  # one lane moved further
    assert recorder._moved_alike(site, addrs[:128]) is None  # fewer lanes


def test_a_loop_walking_a_column_is_charged_the_same_with_the_moved_requests_taken(capsys, monkeypatch):
    from analyzer.sim.run import SiteRecorder

    def report() -> str:
        assert main(["simulate", "--format", "json", str(REPO / "samples" / "001_matmul_v1_naive.cu")]) in (0, 1)
        return capsys.readouterr().out

    taken: list[int] = []
    moved_alike = SiteRecorder._moved_alike

    def counting(self, site, addrs):
        got = moved_alike(self, site, addrs)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(SiteRecorder, "_moved_alike", counting)
    short = report()
    assert sum(taken) > 1000  # `b[k * P + y]`: P * 4 bytes further at each iteration
    monkeypatch.setattr(SiteRecorder, "_moved_alike", lambda self, site, addrs: None)
    assert report() == short


def test_a_site_repeating_its_request_gets_the_patterns_grouping_again_would_give():
    from analyzer.sim.run import _patterns, _Site, _site_patterns

    site = _Site(access=None, pieces=())
    rows = np.repeat(4 * np.arange(8, dtype=np.int64)[:, None], 32, axis=1)  # eight warps, each its own word
    warps = np.arange(8)
    other = rows[::-1].copy()
    for rel, some in [(rows, warps), (rows.copy(), warps), (other, warps), (other, warps[2:]), (rows, warps)]:
        got = _site_patterns(site, rel, some)
        assert list(got.items()) == list(_patterns(rel, some).items())


@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("4", "4")])
def test_the_simulator_keeps_openblas_to_one_thread_unless_told(given, kept):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = "import os, analyzer.sim.run, numpy; print(os.environ['OPENBLAS_NUM_THREADS'])"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == kept
