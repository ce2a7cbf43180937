"""The host interpreter carries values and facts into launches (issue 14 items 3 and 4): each
construct on a small program written for the test, with the exact cost warplint must give."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.analysis.host import launching_functions
from analyzer.analysis.launch import host_launches
from analyzer.budget import Meter, metered
from analyzer.cli import main
from analyzer.ir.lower import lower
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse


def kernels(tmp_path: Path, capsys, source: str, name: str = "k.cu") -> list[tuple[str, dict, list[tuple[int, int]]]]:
    """`warplint check --format json` of one file: (kernel, launch, [(line, per request)]) of each analysis."""
    (tmp_path / name).write_text(source)
    status = main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", str(tmp_path / name)])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    (entry,) = out["files"]
    return [(k["name"], k["launch"], [(a["line"], a["per_request"]) for a in k["accesses"]]) for k in entry["kernels"]]


STRIDED = "__global__ void k(float *a, int w)\n{\n    a[threadIdx.x * w] = 0;\n}\n"


def test_a_launch_through_a_const_dim3_reference_parameter_takes_its_fields(tmp_path, capsys):
    source = STRIDED + (
        "void run(float *d, const dim3 &dims, int w)\n{\n    dim3 block(dims.x, 1);\n    k<<<1, block>>>(d, w);\n}\n"
        "int main()\n{\n    dim3 dims(32, 4);\n    float *d;\n    run(d, dims, 2);\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["block"] == [32, 1, 1] and launch["params"] == {"w": 2}
    assert costs == [(3, 8)]  # 32 lanes 8 bytes apart: 8 sectors


def test_a_host_loop_launches_once_for_each_value_of_its_counter(tmp_path, capsys):
    source = (
        STRIDED + "int main()\n{\n    float *d;\n    for (int w = 1; w <= 4; w *= 2)\n        k<<<1, 32>>>(d, w);\n}\n"
    )
    got = kernels(tmp_path, capsys, source)
    assert [(launch["params"], costs) for _, launch, costs in got] == [
        ({"w": 1}, [(3, 4)]),
        ({"w": 2}, [(3, 8)]),
        ({"w": 4}, [(3, 16)]),
    ]


def test_a_host_loop_whose_condition_is_not_known_launches_with_what_is_known(tmp_path, capsys):
    source = (
        STRIDED
        + "int main(int n)\n{\n    float *d;\n    for (int w = 1; w <= n; w *= 2)\n        k<<<1, 32>>>(d, 4);\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["params"] == {"w": 4} and costs == [(3, 16)]


def test_an_implicit_instantiation_of_a_host_template_gives_the_kernel_its_type(tmp_path, capsys):
    source = (
        "template <class T> __global__ void k(T *a, int w)\n{\n    a[threadIdx.x * w] = 0;\n}\n"
        "template <class T> int runTest(int w)\n{\n    T *d;\n    k<T><<<1, 32>>>(d, w);\n    return 0;\n}\n"
        "int main()\n{\n    runTest<float>(2);\n    runTest<char>(4);\n}\n"
    )
    got = sorted((name, launch["params"], costs) for name, launch, costs in kernels(tmp_path, capsys, source))
    # char, 4 bytes apart: 4 sectors (ideal 1); float, 8 bytes apart: 8 sectors (ideal 4)
    assert got == [("k<char>", {"w": 4}, [(3, 4)]), ("k<float>", {"w": 2}, [(3, 8)])]


def test_an_explicit_template_global_instantiation_is_analysed(tmp_path, capsys):
    source = (
        "template <class T> __global__ void k(T *a)\n{\n    a[threadIdx.x * 2] = 0;\n}\n"
        "template __global__ void k<double>(double *);\n"
    )
    ((name, launch, costs),) = kernels(tmp_path, capsys, source)
    assert name == "k<double>" and launch["assumed"] and costs == [(3, 16)]  # 16 bytes apart: 16 sectors


def test_a_launch_in_a_host_template_deduces_the_kernels_template_arguments(tmp_path, capsys):
    source = (
        "template <class T> __global__ void k(T *a, int w)\n{\n    a[threadIdx.x * w] = 0;\n}\n"
        "template <class T> void host(T *d)\n{\n    k<<<1, 32>>>(d, 2);\n}\n"
        "int main()\n{\n    double *d;\n    host(d);\n}\n"
    )
    ((name, launch, costs),) = kernels(tmp_path, capsys, source)
    assert name == "k<double>" and launch["block"] == [32, 1, 1] and costs == [(3, 16)]


GUARDED = (
    "__global__ void k(float *a, int w)\n{\n    a[threadIdx.x + blockIdx.x * w] = 0;\n}\n"
    "int main(int argc, char **argv)\n{\n    int w = atoi(argv[1]);\n    GUARD\n    float *d;\n    k<<<4, 32>>>(d, w);\n}\n"
)


def test_a_guard_that_exits_states_a_divisor_and_the_access_is_exact(tmp_path, capsys):
    ((_, launch, costs),) = kernels(tmp_path, capsys, GUARDED.replace("GUARD", "if (w % 32) exit(1);"))
    assert "w" not in launch["params"] and costs == [(3, 4)]  # every block starts on a sector


def test_without_the_guard_the_worst_alignment_is_reported(tmp_path, capsys):
    ((_, _, costs),) = kernels(tmp_path, capsys, GUARDED.replace("GUARD", ""))
    assert costs == [(3, 5)]


def test_an_assert_and_a_guard_that_returns_state_the_same_fact(tmp_path, capsys):
    for guard in ("assert(w % 32 == 0);", "if (w % 32 != 0) { return 1; }", "if ((w & 31) != 0) exit(1);"):
        ((_, _, costs),) = kernels(tmp_path, capsys, GUARDED.replace("GUARD", guard))
        assert costs == [(3, 4)], guard


def test_requires_gives_a_kernel_parameter_its_value(tmp_path, capsys):
    source = (
        "__global__ void k(float *a, int width)\n{\n    __requires(width == 3);\n    a[threadIdx.x * width] = 0;\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["params"] == {"width": 3} and costs == [(4, 12)]  # 12 bytes apart: 12 sectors


def test_a_gpuverify_header_is_the_launch_of_the_files_kernel(tmp_path, capsys):
    source = (
        "//pass\n//--blockDim=[16,8] --gridDim=[64,64]\n"
        "__global__ void k(float *a, int width)\n{\n    __requires(width == 1024);\n"
        "    a[threadIdx.y * width + threadIdx.x] = 0;\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["block"] == [16, 8, 1] and launch["grid"] == [64, 64, 1] and not launch["assumed"]
    assert launch["origin"] == "GPUVerify header at line 2 (--blockDim, --gridDim)"
    assert costs == [(6, 4)]  # two rows of 16 floats: 2 sectors each


def test_a_kernel_using_a_name_nothing_defines_says_which(tmp_path, capsys):
    (tmp_path / "k.cu").write_text("__global__ void k(float *a)\n{\n    a[threadIdx.x * STRIDE] = 0;\n}\n")
    main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", str(tmp_path / "k.cu")])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    (note,) = [d for d in entry["errors"] if "STRIDE" in d["message"]]
    assert (note["code"], note["severity"], note["line"], note["column"]) == ("WL903", "note", 3, 21)
    assert note["message"].startswith("in kernel `k`: `STRIDE` is not defined")


def test_a_parameter_left_unknown_says_where_host_code_got_it(tmp_path, capsys):
    source = STRIDED + (
        "void run(float *d, int w)\n{\n    k<<<1, 32>>>(d, w);\n}\n"
        "int main(int argc, char **argv)\n{\n    int size_x = atoi(argv[1]);\n    float *d;\n    run(d, size_x);\n}\n"
    )
    (tmp_path / "k.cu").write_text(source)
    main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", str(tmp_path / "k.cu")])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    (access,) = entry["kernels"][0]["accesses"]
    assert access["assumptions"][-1].endswith("(pass --param w=VALUE); `w`: returned by `atoi` at k.cu:11")


def test_a_host_loop_that_launches_nothing_is_not_run(tmp_path, capsys):
    # a reference computation of 128^4 steps on the host: not run, the kernel still analysed
    source = STRIDED + (
        "int main()\n{\n    float *d, s = 0;\n    for (int a = 0; a < 128; a++)\n"
        "        for (int b = 0; b < 128; b++)\n            for (int c = 0; c < 128; c++)\n"
        "                for (int e = 0; e < 128; e++)\n                    s += 1;\n    k<<<1, 32>>>(d, 2);\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["params"] == {"w": 2} and costs == [(3, 8)]


POINTED = (
    "__global__ void copy(float *a, int w)\n{\n    a[threadIdx.x + blockIdx.x * w] = 0;\n}\n"
    "__global__ void spread(float *a, int w)\n{\n    a[threadIdx.x * 2] = 0;\n}\n"
)


def test_a_launch_through_a_function_pointer_launches_the_kernel_it_holds(tmp_path, capsys):
    source = POINTED + (
        "int main(int argc, char **argv)\n{\n    int w = atoi(argv[1]);\n    if (w % 32) exit(1);\n"
        "    void (*kernel)(float *, int);\n    float *d;\n    for (int i = 0; i < 2; i++) {\n"
        "        switch (i) {\n        case 0: kernel = &copy; break;\n        case 1: kernel = spread; break;\n"
        "        }\n        kernel<<<4, dim3(32, 2)>>>(d, w);\n    }\n}\n"
    )
    got = kernels(tmp_path, capsys, source)
    # the guard's divisor reaches both: copy's rows start on a sector (4), spread's lanes are 8 bytes apart (8)
    assert [(name, launch["block"], launch["origin"], costs) for name, launch, costs in got] == [
        ("copy", [32, 2, 1], "launch at line 20", [(3, 4)]),
        ("spread", [32, 2, 1], "launch at line 20", [(7, 8)]),
    ]


def test_a_pointer_whose_value_at_the_launch_is_not_known_launches_every_kernel_assigned_to_it(tmp_path, capsys):
    source = POINTED + (
        "void pick(int n, float *d)\n{\n    void (*kernel)(float *, int) = &copy;\n"
        "    if (n > 3)\n        kernel = &spread;\n    kernel<<<1, 64>>>(d, 32);\n}\n"
        "int main(int argc, char **argv)\n{\n    float *d;\n    pick(atoi(argv[1]), d);\n}\n"
    )
    got = kernels(tmp_path, capsys, source)
    assert [(name, launch["block"], launch["origin"], costs) for name, launch, costs in got] == [
        ("copy", [64, 1, 1], "launch at line 14", [(3, 4)]),
        ("spread", [64, 1, 1], "launch at line 14", [(7, 8)]),
    ]


def test_unnamed_structs_named_by_typedefs_are_two_template_instances(tmp_path, capsys):
    source = (
        "typedef struct { float x, y, z; } Packed;\ntypedef struct __align__(16) { float x, y, z; } Aligned;\n"
        "template <class T> __global__ void k(T *a, T *b)\n{\n    a[threadIdx.x] = b[threadIdx.x];\n}\n"
        "template <class T> void run(T *d)\n{\n    k<T><<<1, 32>>>(d, d);\n}\n"
        "int main()\n{\n    Packed *p;\n    Aligned *q;\n    run<Packed>(p);\n    run<Aligned>(q);\n}\n"
    )
    got = sorted((name, costs) for name, _, costs in kernels(tmp_path, capsys, source))
    # 12-byte elements moved as three 4-byte accesses (12 sectors a request); 16-byte ones as one (16)
    assert got == [("k<Aligned>", [(5, 16), (5, 16)]), ("k<Packed>", [(5, 12), (5, 12)])]


MERGE = (
    "__global__ void merge(float *a, unsigned stride)\n{\n    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    a[2 * g - (g & (stride - 1)) + stride] = 0;\n}\n"
)


def test_a_host_loop_not_run_gives_its_counters_values_as_facts(tmp_path, capsys):
    source = MERGE + (
        "void sort(float *d, unsigned n)\n{\n    for (unsigned size = 2048; size <= n; size <<= 1)\n"
        "        for (unsigned stride = size / 2; stride > 0; stride >>= 1)\n            GUARD\n"
        "                merge<<<n / 512, 256>>>(d, stride);\n}\n"
        "int main(int argc, char **argv)\n{\n    float *d;\n    sort(d, atoi(argv[1]));\n}\n"
    )
    # a power of two halved from size / 2 and at least 1024 is a multiple of 1024: 32 lanes in a row
    ((_, launch, costs),) = kernels(tmp_path, capsys, source.replace("GUARD", "if (stride >= 1024)"))
    assert launch["origin"] == "launch at line 11" and costs == [(4, 4)]
    # halved down to 1, the pairs of lanes are `stride` apart: the worst of them is charged
    ((_, _, costs),) = kernels(tmp_path, capsys, source.replace("GUARD", ""))
    assert costs == [(4, 8)]


def test_a_doubling_host_loop_keeps_its_first_values_divisor(tmp_path, capsys):
    source = GUARDED.replace("GUARD\n", "").replace(
        "k<<<4, 32>>>(d, w);", "for (int v = 32; v <= w; v *= 2)\n        k<<<4, 32>>>(d, v);"
    )
    ((_, _, costs),) = kernels(tmp_path, capsys, source)
    assert costs == [(3, 4)]  # every v is a multiple of 32: each block starts on a sector


def test_a_branch_states_its_condition_for_the_launches_inside_it(tmp_path, capsys):
    ((_, _, inside),) = kernels(
        tmp_path, capsys, GUARDED.replace("GUARD\n", "").replace("k<<<", "if (w % 32 == 0)\n        k<<<")
    )
    ((_, _, other),) = kernels(
        tmp_path, capsys, GUARDED.replace("GUARD\n", "").replace("k<<<", "if (w % 32 == 0) {} else\n        k<<<")
    )
    assert inside == [(3, 4)] and other == [(3, 5)]


def host_steps(source: str) -> int:
    """The host statements run to find the launches of `source` (budget steps: never seconds)."""
    pp = preprocess(source, "k.cu")
    module = lower(parse(pp.text).unit, pp.text, "k.cu")
    meter = Meter("analysis", 10**9)
    with metered(meter):
        host_launches(module)
    return meter.limit - meter.left


# a CPU reference nest that calls a host function launching nothing (polybench's compareResults)
CHECKED_NEST = (
    "int differs(float a, float b)\n{\n    return a - b > 0.5f || b - a > 0.5f;\n}\n"
    "int compare(float *x, float *y)\n{\n    int fail = 0;\n    for (int i = 0; i < 128; i++)\n"
    "        for (int j = 0; j < 128; j++)\n            for (int l = 0; l < 128; l++)\n"
    "                if (differs(x[i], y[j * l]))\n                    fail++;\n    return fail;\n}\n"
)


def test_a_launch_after_a_long_loop_nest_that_calls_only_non_launching_functions_keeps_its_configuration(
    tmp_path, capsys
):
    source = (
        STRIDED
        + CHECKED_NEST
        + (
            "int main()\n{\n    float *d, *x, *y;\n    dim3 block(32, 4);\n    int w = 2;\n"
            "    for (int i = 0; i < 100; i++)\n        for (int j = 0; j < 100; j++)\n"
            "            x[i * 100 + j] = differs(x[i], y[j]);\n"
            "    compare(x, y);\n    k<<<8, block>>>(d, w);\n}\n"
        )
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert (launch["block"], launch["grid"], launch["params"]) == ([32, 4, 1], [8, 1, 1], {"w": 2})
    assert costs == [(3, 8)]
    # neither nest is walked iteration by iteration, nor `compare` run: a few dozen statements
    assert host_steps(source) < 40


def test_a_variable_assigned_in_a_loop_that_reaches_no_launch_is_unknown_at_the_launch(tmp_path, capsys):
    # the loop calls `differs`, which launches nothing: it is not iterated (as a loop that calls
    # nothing), so `w` is not known after it and the launch is costed over the values of `w`
    source = (
        STRIDED
        + CHECKED_NEST
        + (
            "int main()\n{\n    float *d, *x;\n    int w = 1, fail = 0;\n    for (int i = 0; i < 3; i++) {\n"
            "        w = w * 2;\n        fail += differs(x[i], x[i + 1]);\n    }\n    k<<<1, 32>>>(d, w);\n}\n"
        )
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["params"] == {} and costs == [(3, 32)]  # the worst of w = 1..64: 32 sectors


def test_a_loop_that_launches_and_calls_a_non_launching_function_is_run_per_counter_value(tmp_path, capsys):
    source = (
        STRIDED
        + CHECKED_NEST
        + (
            "int main()\n{\n    float *d, *x;\n    for (int w = 1; w <= 4; w *= 2) {\n"
            "        k<<<1, 32>>>(d, w);\n        compare(x, d);\n    }\n}\n"
        )
    )
    got = kernels(tmp_path, capsys, source)
    assert [(launch["params"], costs) for _, launch, costs in got] == [
        ({"w": 1}, [(3, 4)]),
        ({"w": 2}, [(3, 8)]),
        ({"w": 4}, [(3, 16)]),
    ]


def test_a_loop_calling_a_function_that_launches_through_another_is_run_per_counter_value(tmp_path, capsys):
    source = STRIDED + (
        "void launch(float *d, int w)\n{\n    k<<<1, 32>>>(d, w);\n}\n"
        "void run(float *d, int w)\n{\n    launch(d, w);\n}\n"
        "int main()\n{\n    float *d;\n    for (int w = 1; w <= 4; w *= 2)\n        run(d, w);\n}\n"
    )
    got = kernels(tmp_path, capsys, source)
    assert [(launch["params"], costs) for _, launch, costs in got] == [
        ({"w": 1}, [(3, 4)]),
        ({"w": 2}, [(3, 8)]),
        ({"w": 4}, [(3, 16)]),
    ]


def test_the_functions_that_reach_a_launch_are_found_through_calls_at_any_depth():
    source = STRIDED + (
        "void launch(float *d)\n{\n    k<<<1, 32>>>(d, 1);\n}\n"
        "void middle(float *d)\n{\n    if (d) launch(d);\n}\n"
        "void top(float *d)\n{\n    for (int i = 0; i < 2; i++) middle(d);\n}\n"
        "int helper(int x)\n{\n    return x + 1;\n}\n"
        "int main()\n{\n    float *d;\n    helper(2);\n    top(d);\n}\n"
    )
    pp = preprocess(source, "k.cu")
    module = lower(parse(pp.text).unit, pp.text, "k.cu")
    assert launching_functions({fn.name: fn for fn in module.host}) == {"launch", "middle", "top", "main"}


def test_a_loop_that_surely_runs_past_the_limit_is_given_up_before_its_first_iteration(tmp_path, capsys):
    # 100 iterations, each calling a launching function: more than MAX_HOST_LOOP, so the loop is
    # run once with its writes unknown, as after 64 iterations before, without running the 64
    source = STRIDED + (
        "void run(float *d, int w)\n{\n    if (w > 0)\n        k<<<1, 32>>>(d, w);\n}\n"
        "int main()\n{\n    float *d;\n    int iterations = 100;\n"
        "    for (int i = 0; i < iterations; ++i)\n        run(d, 2);\n}\n"
    )
    ((_, launch, costs),) = kernels(tmp_path, capsys, source)
    assert launch["params"] == {"w": 2} and costs == [(3, 8)]
    assert host_steps(source) < 20


def test_a_loop_asked_again_at_the_same_values_is_told_past_the_limit_from_the_memo(tmp_path, capsys, monkeypatch):
    # `run(d, 100)` twice: its loop's tests are run once; `run(d, 2)` (another bound) runs them
    # again and iterates: w = 1 and 2. The first two give one launch with w unknown (worst case)
    import analyzer.analysis.host as host

    counted: list[int] = []
    count = host.HostInterpreter._counted_past_limit

    def counting(self, s, step, counter, first):
        counted.append(first)
        return count(self, s, step, counter, first)

    monkeypatch.setattr(host.HostInterpreter, "_counted_past_limit", counting)
    monkeypatch.setattr(host, "_PAST_LIMIT", {})
    source = STRIDED + (
        "void run(float *d, int n)\n{\n    for (int i = 0; i < n; ++i)\n        k<<<1, 32>>>(d, i + 1);\n}\n"
        "int main()\n{\n    float *d;\n    run(d, 100);\n    run(d, 100);\n    run(d, 2);\n}\n"
    )
    got = kernels(tmp_path, capsys, source)
    assert [(launch["params"], costs) for _, launch, costs in got] == [
        ({}, [(3, 32)]),
        ({"w": 1}, [(3, 4)]),
        ({"w": 2}, [(3, 8)]),
    ]
    assert counted == [0, 0]  # n = 100 once, n = 2 once


ESCAPING = "void input(int *n);\nint input2(int *n);\n"


def test_a_launch_from_a_local_whose_address_was_passed_on_is_not_held_to_cuda_limits(tmp_path):
    # `input(&n)` may have changed n: the 2048 is a guess, so no WL907; without it, WL907
    launching = "int main()\n{\n    float *d;\n    int n = 2048;\n    INPUT\n    k<<<1, n>>>(d, 1);\n}\n"
    (tmp_path / "k.cu").write_text(STRIDED + ESCAPING + launching.replace("INPUT", "input(&n);"))
    assert main(["check", "--isolated", "-q", str(tmp_path / "k.cu")]) == 0
    (tmp_path / "k.cu").write_text(STRIDED + ESCAPING + launching.replace("INPUT", ";"))
    assert main(["check", "--isolated", "-q", str(tmp_path / "k.cu")]) == 1


def test_a_read_before_the_address_is_passed_in_the_same_expression_is_not_a_guess():
    # a walk of `n + input2(&n)` meets `&n` first (the right operand is taken first), of
    # `input2(&n) + n` the read first: only the first makes `m` a guess
    from analyzer.analysis.host import HostInterpreter

    def guessed(expression: str) -> tuple[bool, set[str], bool]:
        source = ESCAPING + f"int main()\n{{\n    int n = 4;\n    int m = {expression};\n}}\n"
        pp = preprocess(source, "k.cu")
        module = lower(parse(pp.text).unit, pp.text, "k.cu")
        (fn,) = [f for f in module.host if f.name == "main"]
        assign = fn.body[1]
        interp = HostInterpreter({f.name: f for f in module.host})
        first = interp._guessed(assign.value)
        return first, interp.escaped, interp._guessed(assign.value)

    assert guessed("n + input2(&n)") == (True, {"n"}, True)
    assert guessed("input2(&n) + n") == (False, {"n"}, True)  # the second time, n had escaped
