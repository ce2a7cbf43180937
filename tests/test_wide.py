"""Adjacent shared accesses as nvcc merges them (`analysis.merge.merge_adjacent`): one 64- or
128-bit access, costed once at the access that carries it, and the simulator applying the same
rule. The expected merges are nvcc 13.0's at -O3 for sm_90 (research/merge/RULES.md, rule P);
`test_nvcc_merges_what_warplint_merges` holds the rule to nvcc's PTX where nvcc is on PATH."""

from __future__ import annotations

import shutil

import pytest

from analyzer.analysis.assumptions import AssumptionKind
from analyzer.analysis.kernel import analyze_kernel
from analyzer.analysis.launch import launch_configs
from analyzer.api import Options, check_file, check_source
from analyzer.arch import get_arch
from analyzer.ir.lower import lower
from analyzer.sim.run import simulate_kernel
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

ARCH = get_arch("sm_90")

SCAN = """
__global__ void scan(float *g_odata, float *g_idata) {
    __shared__ float temp[64];
    int thid = threadIdx.x;
    temp[2*thid] = g_idata[2*thid];
    temp[2*thid+1] = g_idata[2*thid+1];
    __syncthreads();
    g_odata[2*thid] = temp[2*thid];
    g_odata[2*thid+1] = temp[2*thid+1];
}
"""


def module_of(source: str):
    pp = preprocess(source, "t.cu")
    return lower(parse(pp.text).unit, pp.text, "t.cu")


def shared_costs(source: str, block=(32, 1, 1)) -> dict[tuple[str, str], tuple]:
    """(text, op) -> (bytes, per_request, ideal, requests, merged into another) of each shared access."""
    module = module_of(source)
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, grid=(1, 1, 1))[0]
    analysis = analyze_kernel(module, kernel, launch, ARCH)
    return {
        (c.text, str(c.op)): (c.bytes, c.per_request, c.ideal_per_request, c.requests, c.merged_into is not None)
        for c in analysis.costs
        if c.space == "shared"
    }


def simulated(source: str, block=(32, 1, 1)) -> dict[tuple[str, str], tuple]:
    module = module_of(source)
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, grid=(1, 1, 1))[0]
    sim = simulate_kernel(module, kernel, launch, ARCH)
    return {
        (c.text, str(c.op)): (c.bytes, c.per_request, c.ideal_per_request, c.requests, c.merged_into is not None)
        for c in sim.costs
        if c.space == "shared"
    }


def test_the_work_efficient_scans_pair_is_one_64_bit_access_with_no_finding():
    costs = shared_costs(SCAN)
    # the stores issue at the last store (line 38 in GPUVerify's kernel), the loads at the first
    assert costs == {
        ("temp[2*thid]", "store"): (8, 2, 2, 0, True),
        ("temp[2*thid+1]", "store"): (8, 2, 2, 1, False),
        ("temp[2*thid]", "load"): (8, 2, 2, 1, False),
        ("temp[2*thid+1]", "load"): (8, 2, 2, 0, True),
    }
    report = check_source("scan.cu", SCAN, Options(block=(32, 1, 1)))
    assert [f.code for f in report.findings if f.code == "WL101"] == []


def test_the_simulator_charges_the_scans_pair_as_check_does():
    assert simulated(SCAN) == shared_costs(SCAN)


def test_the_merged_access_says_what_it_merged():
    module = module_of(SCAN)
    launch = launch_configs(module, module.kernels[0], block=(32, 1, 1))[0]
    costs = analyze_kernel(module, module.kernels[0], launch, ARCH).costs
    carrier = next(c for c in costs if c.text == "temp[2*thid+1]" and c.op == "store")
    moved = next(c for c in costs if c.text == "temp[2*thid]" and c.op == "store")
    assert carrier.assumptions[-1].kind is AssumptionKind.ACCESSES_MERGED
    assert str(carrier.assumptions[-1]) == (
        "nvcc merges `temp[2*thid]`, `temp[2*thid+1]` into one 64-bit access: the figure is for that access"
    )
    assert moved.assumptions[-1].kind is AssumptionKind.MOVED_BY_WIDE_ACCESS


def loads(body: str, decl: str = "__shared__ float s[1024];", elem: str = "float") -> str:
    return f"__global__ void k({elem} *o) {{\n    {decl}\n    int t = threadIdx.x;\n    {body}\n}}\n"


def widths(source: str) -> dict[str, int]:
    """text -> bytes of each shared access that carries a request."""
    return {t: v[0] for (t, _), v in shared_costs(source).items() if not v[4]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # a 16-byte chunk of 4 words: one 128-bit load (4 wavefronts for a full warp, ideal 4)
        ("o[t] = s[4*t] + s[4*t+1] + s[4*t+2] + s[4*t+3];", {"s[4*t]": 16}),
        # 3 of a chunk's 4 words: still LDS.128 (the 4th word is read too)
        ("o[t] = s[4*t] + s[4*t+1] + s[4*t+2];", {"s[4*t]": 16}),
        # the order of the source does not matter
        ("o[t] = s[2*t+1] + s[2*t];", {"s[2*t+1]": 8}),
        # not aligned for every lane: no merge
        ("o[t] = s[3*t] + s[3*t+1];", {"s[3*t]": 4, "s[3*t+1]": 4}),
        ("o[t] = s[2*t+1] + s[2*t+2];", {"s[2*t+1]": 4, "s[2*t+2]": 4}),
        # a gap between the words
        ("o[t] = s[4*t] + s[4*t+2];", {"s[4*t]": 4, "s[4*t+2]": 4}),
        # two words at 4t+2, 4t+3: an aligned 8-byte pair
        ("o[t] = s[4*t+2] + s[4*t+3];", {"s[4*t+2]": 8}),
        # a barrier or a shared store between them
        ("float a = s[2*t]; __syncthreads(); o[t] = a + s[2*t+1];", {"s[2*t]": 4, "s[2*t+1]": 4}),
        ("float a = s[2*t]; s[t + 512] = 0; o[t] = a + s[2*t+1];", {"s[2*t]": 4, "s[2*t+1]": 4, "s[t + 512]": 4}),
        # a global store between them does not block
        ("float a = s[2*t]; o[t] = 0; o[t + 32] = a + s[2*t+1];", {"s[2*t]": 8}),
    ],
)
def test_which_shared_loads_nvcc_merges(body, expected):
    assert widths(loads(body)) == expected


def test_doubles_pair_into_a_128_bit_load():
    assert widths(loads("o[t] = s[2*t] + s[2*t+1];", "__shared__ double s[512];", "double")) == {"s[2*t]": 16}


def test_a_second_array_placed_at_12_bytes_is_not_merged():
    # ptxas places `a` first: `b` starts 12 bytes in, and no pair of it is 8-aligned
    src = loads("o[t] = a[t] + b[2*t] + b[2*t+1];", "__shared__ float a[3]; __shared__ float b[1024];")
    assert widths(src) == {"a[t]": 4, "b[2*t]": 4, "b[2*t+1]": 4}


def test_three_stores_of_a_chunk_are_a_64_bit_pair_and_a_single_store():
    src = loads("s[4*t] = 1; s[4*t+1] = 2; s[4*t+2] = 3; o[t] = 0;")
    assert widths(src) == {"s[4*t+1]": 8, "s[4*t+2]": 4}


def test_stores_in_different_branches_are_not_merged():
    src = loads("if (t & 1) s[2*t] = 1; else s[2*t+1] = 2; o[t] = 0;")
    assert widths(src) == {"s[2*t]": 4, "s[2*t+1]": 4}


def test_the_simulator_agrees_on_a_128_bit_load_with_a_partial_warp():
    src = loads("if (t < 20) o[t] = s[4*t] + s[4*t+1] + s[4*t+2] + s[4*t+3];")
    assert simulated(src) == shared_costs(src)
    assert shared_costs(src)[("s[4*t]", "load")][:3] == (16, 3, 3)  # 20 lanes: 5 + 5 + 5 + 5 words, three phases


# ----------------------------------------------------------------------------- nvcc as the oracle
# Where nvcc's merge shows in its PTX (an `extern __shared__` array is 16-byte aligned, so NVVM
# already writes `ld.shared.v2`/`.v4`), the PTX path costs what nvcc made: the CUDA-C path's
# merged accesses must cost the same, line by line. (ptxas's merges of static arrays show only
# in SASS; those were measured on a GPU: docs/hardware-validation.md, "Wide accesses".)
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

EXTERN_BODIES = [
    "o[t] = e[2 * t] + e[2 * t + 1];",  # ld.shared.v2.f32
    "o[t] = e[4 * t] + e[4 * t + 1] + e[4 * t + 2] + e[4 * t + 3];",  # ld.shared.v4.f32
    "o[t] = e[2 * t + 1] + e[2 * t + 2];",  # not aligned: two ld.shared.f32
    "o[t] = e[3 * t] + e[3 * t + 1];",  # not aligned
    "e[2 * t] = o[t];\n    e[2 * t + 1] = o[t + 32];",  # st.shared.v2.f32, on the second line
    "o[t] = e[4 * t + 2] + e[4 * t + 3];",  # ld.shared.v2.f32 at +8
]


def requests_by_line(report) -> list[tuple[int, str, int, int | None]]:
    """(line, op, bytes, per request) of each shared access that makes a request."""
    out = []
    for analysis in report.kernels:
        for c in analysis.costs:
            if c.space == "shared" and c.merged_into is None:
                out.append((report.locate(c.span).line, str(c.op), c.bytes, c.per_request))
    return sorted(out)


@pytest.mark.parametrize("body", EXTERN_BODIES)
@needs_nvcc
@pytest.mark.slow
def test_nvcc_merges_what_warplint_merges(tmp_path, body):
    path = tmp_path / "k.cu"
    path.write_text(
        f"__global__ void k(float *o) {{\n    extern __shared__ float e[];\n    int t = threadIdx.x;\n    {body}\n}}\n"
    )
    cuda = check_file(str(path), Options(block=(32, 1, 1)))
    ptx = check_file(str(path), Options(block=(32, 1, 1), via_ptx=True))
    assert requests_by_line(ptx) == requests_by_line(cuda)
    assert requests_by_line(ptx)  # something was costed


@needs_nvcc
@pytest.mark.slow
def test_the_ptx_path_costs_a_load_nvcc_selects_between_two_shared_arrays(tmp_path):
    # srad's if-converted loads (Rodinia srad_v2 line 122): one load whose lanes read `east` or
    # `temp`; lanes t and t + 16 on one bank at different words (the arrays are 1024 bytes
    # apart): 2 wavefronts
    path = tmp_path / "k.cu"
    path.write_text(
        "__global__ void k(float *o) {\n"
        "    __shared__ float east[16][16];\n    __shared__ float temp[16][16];\n"
        "    int t = threadIdx.x, ty = threadIdx.y;\n"
        "    east[ty][t % 16] = o[t];\n    temp[ty][t % 16] = o[t + 32];\n    __syncthreads();\n"
        "    float v;\n"
        "    if (t < 16) v = east[0][t]; else v = temp[0][t - 16];\n"
        "    o[t] = v;\n}\n"
    )
    ptx = check_file(str(path), Options(block=(32, 1, 1), via_ptx=True))
    loads = [c for a in ptx.kernels for c in a.costs if c.space == "shared" and c.op == "load"]
    assert [(c.per_request, c.ideal_per_request, c.exact) for c in loads] == [(2, 1, True)]
    assert loads[0].access.array == "east|temp"


# ----------------------------------------------------------------------------- if-conversion
def branch_loads(body: str) -> dict[str, tuple]:
    src = (
        "__global__ void k(float *o, float x) {\n    __shared__ float a[32][32];\n    __shared__ float b[32][32];\n"
        f"    int t = threadIdx.x;\n    float v = 0;\n    {body}\n    o[t] = v;\n}}\n"
    )
    module = module_of(src)
    launch = launch_configs(module, module.kernels[0], block=(32, 1, 1))[0]
    costs = analyze_kernel(module, module.kernels[0], launch, ARCH).costs
    return {c.text: (c.per_request, c.exact, c.may_be_if_converted) for c in costs if c.space == "shared"}


def test_loads_that_end_both_branches_may_be_if_converted_and_give_no_finding():
    # a[t][0] by the 16 odd lanes alone is a 16-way conflict; nvcc may issue one load for all lanes
    costs = branch_loads("if (t & 1) v = a[t][0] - x; else v = b[0][t] - x;")
    assert costs == {"a[t][0]": (16, False, True), "b[0][t]": (1, False, True)}
    src = (
        "__global__ void k(float *o, float x) {\n  __shared__ float a[32][32];\n  __shared__ float b[32][32];\n"
        "  int t = threadIdx.x;\n  float v;\n  if (t & 1) v = a[t][0] - x; else v = b[0][t] - x;\n  o[t] = v;\n}\n"
    )
    assert [f.code for f in check_source("k.cu", src, Options(block=(32, 1, 1))).findings] == []


@pytest.mark.parametrize(
    "body",
    [
        "if (t & 1) v = a[t][0] - x; else v = b[0][t] + x;",  # different operations
        "if (t & 1) v = a[t][0]; else v = 1.0f;",  # a constant on one path
        "if (t & 1) v = a[t][0];",  # no else
    ],
)
def test_branch_loads_nvcc_keeps_apart_are_costed_as_written(body):
    assert branch_loads(body)["a[t][0]"] == (16, True, False)


def test_an_else_if_chain_of_loads_may_be_if_converted():
    costs = branch_loads("if (t == 0) v = a[0][t]; else if (t == 1) v = b[1][t]; else v = a[t][0];")
    assert all(converted for _, _, converted in costs.values()) and len(costs) == 3
