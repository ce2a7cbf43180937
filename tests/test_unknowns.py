"""Honest unknowns: calls warplint does not follow, data-dependent indices bounded by the array's
extent, and the facts the code states with `__assume`, `__builtin_assume` and `assert`."""

from __future__ import annotations

import pytest

from analyzer.analysis.assumptions import AssumptionKind
from analyzer.analysis.facts import Facts
from analyzer.analysis.interpret import Interpreter
from analyzer.analysis.kernel import analyze_kernel
from analyzer.analysis.launch import launch_configs
from analyzer.api import Options, check_source
from analyzer.arch import get_arch
from analyzer.ir.lower import lower
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

ARCH = get_arch("sm_90")


def analyse(source: str, block=None, params=None):
    pp = preprocess(source, "test.cu")
    module = lower(parse(pp.text).unit, pp.text, "test.cu")
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=block, params=params)[0]
    return analyze_kernel(module, kernel, launch, ARCH, params)


def cost_of(source: str, text: str, op: str | None = None, **kw):
    hits = [c for c in analyse(source, **kw).costs if c.text == text and (op is None or c.op == op)]
    assert hits, text
    return hits[0]


def kinds(cost) -> list[AssumptionKind]:
    return [a.kind for a in cost.assumptions]


def findings(source: str) -> list[str]:
    report = check_source("k.cu", source, Options(block=(32, 1, 1)))
    return [f.code for f in report.findings]


# ----------------------------------------------------------------------------- unknown callees
UNSEEN = """
__device__ int f(int x);
__global__ void k(float *y) { y[f(threadIdx.x)] = 1.0f; }
"""


def test_an_index_from_a_callee_not_in_the_file_is_not_exact_and_says_which_call():
    c = cost_of(UNSEEN, "y[f(threadIdx.x)]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact, c.data_dependent) == (32, 4, False, True)
    assert kinds(c) == [AssumptionKind.INDEX_FROM_CALL, AssumptionKind.COST_BOUNDED]
    assert "call to f" in str(c.assumptions[0])


def test_a_callee_not_in_the_file_differs_between_lanes_even_with_uniform_arguments():
    # its body may read threadIdx itself (a `laneId()` takes no argument)
    src = "__device__ int lane();\n__global__ void k(float *y) { y[lane()] = 1.0f; }\n"
    c = cost_of(src, "y[lane()]", block=(32, 1, 1))
    assert (c.per_request, c.exact, c.bounded) == (32, False, True)


def test_a_builtin_of_uniform_arguments_stays_uniform():
    # a broadcast shuffle from lane 0: every lane holds the same value
    src = "__global__ void k(float *y) { y[__shfl_sync(0xffffffff, threadIdx.x, 0)] = 1.0f; }\n"
    c = cost_of(src, "y[__shfl_sync(0xffffffff, threadIdx.x, 0)]", block=(32, 1, 1))
    assert (c.per_request, c.bounded) == (1, False)


def test_a_bound_gives_no_finding():
    assert findings(UNSEEN) == []


# ----------------------------------------------------------------------------- data-dependent bounds
HISTOGRAM = """
__global__ void k(const int *data, int *out) {
    __shared__ int hist[SIZE];
    hist[data[threadIdx.x]] += 1;
    out[threadIdx.x] = hist[threadIdx.x];
}
"""


@pytest.mark.parametrize(("size", "bound"), [(256, 8), (64, 2), (32, 1), (4096, 32), (100, 4)])
def test_a_data_dependent_shared_index_is_bounded_by_the_words_of_the_array_in_one_bank(size, bound):
    c = cost_of(HISTOGRAM.replace("SIZE", str(size)), "hist[data[threadIdx.x]]", op="load", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact, c.bounded) == (bound, 1, False, True)
    assert c.assumptions[-1].kind is AssumptionKind.COST_BOUNDED
    assert str(c.assumptions[-1]).startswith("per_request is a bound, not a figure")


def test_the_histogram_bound_of_8_gives_no_finding():
    assert findings(HISTOGRAM.replace("SIZE", "256")) == []


def test_a_data_dependent_global_index_is_bounded_by_its_active_lanes_sectors():
    src = "__global__ void k(const int *idx, float *y) { y[idx[threadIdx.x]] = 1.0f; }\n"
    assert cost_of(src, "y[idx[threadIdx.x]]", block=(32, 1, 1)).per_request == 32
    assert cost_of(src, "y[idx[threadIdx.x]]", block=(8, 1, 1)).per_request == 8  # a warp of 8 lanes


def test_a_data_dependent_8_byte_shared_index_is_bounded_per_half_warp():
    src = "__global__ void k(const int *d, double *o) {\n  __shared__ double s[1024];\n  o[threadIdx.x] = s[d[threadIdx.x]];\n}\n"
    c = cost_of(src, "s[d[threadIdx.x]]", block=(32, 1, 1))
    # 1024 doubles = 2048 words, 64 in a bank; two phases of 16 lanes: at most 16 each
    assert (c.per_request, c.ideal_per_request, c.bounded) == (32, 2, True)


# ----------------------------------------------------------------------------- facts
def test_an_assumed_value_is_used_exact():
    src = "__global__ void k(int n) {\n  __shared__ float y[4096];\n  __assume(n == 2);\n  y[n * threadIdx.x] = 0;\n}\n"
    c = cost_of(src, "y[n * threadIdx.x]", block=(32, 1, 1))
    assert (c.per_request, c.ideal_per_request, c.exact, c.depends_on) == (2, 1, True, ())


@pytest.mark.parametrize("spelling", ["__assume(n == 4)", "__builtin_assume(4 == n)", "assert(n == 4 && n >= 1)"])
def test_each_spelling_of_a_fact_gives_the_value(spelling):
    src = f"__global__ void k(int n) {{\n  __shared__ float y[4096];\n  {spelling};\n  y[n * threadIdx.x] = 0;\n}}\n"
    c = cost_of(src, "y[n * threadIdx.x]", block=(32, 1, 1))
    assert (c.per_request, c.exact) == (4, True)


def test_a_value_given_on_the_command_line_wins_over_a_stated_one():
    src = "__global__ void k(int n) {\n  __shared__ float y[4096];\n  __assume(n == 2);\n  y[n * threadIdx.x] = 0;\n}\n"
    c = cost_of(src, "y[n * threadIdx.x]", block=(32, 1, 1), params={"n": 8})
    assert c.per_request == 8


@pytest.mark.parametrize(
    "placement",
    [
        "if (threadIdx.x == 0) __assume(n == 2);",  # not reached by every thread
        "for (int i = 0; i < n; i++) __assume(n == 2);",  # in a loop
        "",
    ],
)
def test_a_fact_not_reached_unconditionally_before_the_access_is_not_used(placement):
    src = f"__global__ void k(int n) {{\n  __shared__ float y[4096];\n  {placement}\n  y[n * threadIdx.x] = 0;\n}}\n"
    c = cost_of(src, "y[n * threadIdx.x]", block=(32, 1, 1))
    assert (c.exact, c.depends_on) == (False, ("n",))


def test_a_fact_after_the_access_is_not_used():
    src = "__global__ void k(int n) {\n  __shared__ float y[4096];\n  y[n * threadIdx.x] = 0;\n  __assume(n == 2);\n}\n"
    assert cost_of(src, "y[n * threadIdx.x]", block=(32, 1, 1)).exact is False


def occurrence_facts(source: str) -> Facts:
    pp = preprocess(source, "t.cu")
    module = lower(parse(pp.text).unit, pp.text, "t.cu")
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=(32, 1, 1))[0]
    interp = Interpreter(module, launch, {}, ARCH)
    interp.run_kernel(kernel)
    return interp.occurrences[-1].facts


def test_divisors_and_ranges_are_stated_facts_for_the_sampler():
    src = """
__global__ void k(float *y, int n, int m, int w) {
    __assume(n % 32 == 0);
    __builtin_assume((m & 15) == 0 && m >= 16);
    assert(w < 64);
    assert(1 <= w);
    assert(threadIdx.x < 64);   // a lane's value: not a fact of the kernel
    y[threadIdx.x] = 0;
}
"""
    facts = occurrence_facts(src)
    assert facts.values == {}
    assert facts.divisors == {"n": 32, "m": 16}
    assert facts.ranges == {"m": (16, None), "w": (1, 63)}


def test_several_facts_about_one_name_are_one_the_lcm_of_divisors_and_the_tightest_range():
    from analyzer.analysis.results import Facts

    host = Facts(divisor_of=(("n", 4),), range_of=(("n", 1, None), ("w", None, 100)))
    device = Facts(divisor_of=(("n", 6),), range_of=(("n", None, 64), ("w", None, 50), ("w", 2, None)))
    both = host.merged(device)
    assert both.divisors == {"n": 12}
    assert both.ranges == {"n": (1, 64), "w": (2, 50)}
    assert (host.merged(Facts()), Facts().merged(device), bool(Facts())) == (host, device, False)


def test_the_simulator_runs_a_fact_as_nothing():
    from analyzer.sim.run import simulate_kernel

    src = "__global__ void k(float *y, int n) {\n  __assume(n == 2);\n  y[threadIdx.x] = 0;\n}\n"
    pp = preprocess(src, "t.cu")
    module = lower(parse(pp.text).unit, pp.text, "t.cu")
    launch = launch_configs(module, module.kernels[0], block=(32, 1, 1), grid=(1, 1, 1))[0]
    sim = simulate_kernel(module, module.kernels[0], launch, ARCH, {"n": 2})
    assert [(c.per_request, c.requests) for c in sim.costs] == [(4, 1)]
    assert not any("not simulated" in n for n in sim.notes)
