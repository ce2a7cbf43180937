"""The PTX path against the CUDA-C path on every sample: `warplint check --via-ptx` compiles
the sample with `nvcc -ptx -lineinfo -arch=sm_90`, and every access the compiler keeps as
written must cost the same `per_request` at the same CUDA line, space and op.

What the compiler changes is compared by the set of distinct costs at a line (an unrolled
loop repeats one access with the same cost; a `float3` moves in three 4-byte loads), and
the places where the compiler does not keep the access as written are stated and checked
one by one below.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from analyzer.analysis.assumptions import NoActiveLane
from analyzer.api import FileReport, Options, check_file

pytestmark = [pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"), pytest.mark.slow]

SAMPLES = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "samples").glob("*.cu"))
Key = tuple[int, str, str]  # (CUDA line, space, op)

# Lines where the CUDA-C path has an access that the PTX does not: the compiler did not keep
# it as written. Each reason is checked by a test below.
NOT_KEPT: dict[str, set[Key]] = {
    # `struct __align__(16) vec3d`: one ld.global.v4.f32 at line 15 reads x, y and z
    "000_vec3d_aligned16.cu": {(16, "global", "load"), (17, "global", "load")},
    # `__align(8)__` is not C++: nvcc rejects the file, so there is no PTX at all
    "000_vec3d_misspelled_align.cu": {
        (25, "global", "load"),
        (26, "global", "load"),
        (27, "global", "load"),
        (25, "global", "store"),
    },
    # `out[idx] = in[idx]` after `in[idx].x += value; ...`: the values stored at lines
    # 15-17 are still in registers, so `in[idx]` is not loaded again (loaded once, not twice)
    "004_noncoalesced_float3.cu": {(19, "global", "load")},
}


@functools.cache
def reports(sample: str) -> tuple[FileReport, FileReport]:
    path = str(Path(__file__).resolve().parents[1] / "samples" / sample)
    return check_file(path, Options()), check_file(path, Options(via_ptx=True))


NEVER_RUNS = NoActiveLane()


def costs_by_line(report: FileReport, skip_never_run: bool = False) -> dict[Key, list[int | None]]:
    out: dict[Key, list[int | None]] = {}
    for analysis in report.kernels:
        for cost in analysis.costs:
            if skip_never_run and NEVER_RUNS in cost.assumptions:
                continue
            loc = report.locate(cost.span)
            out.setdefault((loc.line, cost.space, cost.op), []).append(cost.per_request)
    return out


def describe(report: FileReport) -> str:
    lines = [f"{report.path}:"]
    for analysis in report.kernels:
        for c in analysis.costs:
            loc = report.locate(c.span)
            lines.append(f"  {loc.line}:{loc.column} {c.space} {c.op} {c.text}: {c.per_request}")
    return "\n".join(lines)


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_access_kept_as_written_costs_the_same_per_request_at_its_line(sample):
    cuda, ptx = reports(sample)
    # accesses that no lane executes for the launch are the compiler's (the remainder loop
    # of an unrolled loop whose trip count is a multiple of 4): see the test below
    want, got = costs_by_line(cuda), costs_by_line(ptx, skip_never_run=True)
    not_kept = NOT_KEPT.get(sample, set())
    assert set(want) - set(got) == not_kept, describe(cuda) + "\n" + describe(ptx)
    assert set(got) <= set(want), describe(ptx)  # nothing at a line without a CUDA access
    for key, values in got.items():
        assert set(values) == set(want[key]), f"{sample} line {key}: PTX {values}, CUDA {want[key]}\n" + describe(ptx)


def test_every_sample_compiles_and_every_kernel_is_analysed_except_the_misspelled_align():
    for sample in SAMPLES:
        cuda, ptx = reports(sample)
        if sample == "000_vec3d_misspelled_align.cu":
            assert {d.code for d in ptx.diagnostics} == {"WL901"} and ptx.kernels == []
            assert not ptx.has_tool_error  # the file's error, exit status 1
            continue
        assert ptx.diagnostics == [], sample
        assert {k.kernel.display_name for k in ptx.kernels} == {k.kernel.display_name for k in cuda.kernels}, sample
        assert [k.launch.block for k in ptx.kernels] == [k.launch.block for k in cuda.kernels], sample


def test_aligned_vec3d_is_read_with_one_16_byte_load_instead_of_three():
    cuda, ptx = reports("000_vec3d_aligned16.cu")
    loads = [c for k in ptx.kernels for c in k.costs if c.op == "load"]
    assert [(c.text, c.bytes, c.per_request, c.ideal_per_request) for c in loads] == [
        ("ld.global.v4.f32 [%rd6]", 16, 16, 16)
    ]
    # the CUDA-C path sees the three field reads and charges them as one merged wide load
    fields = [c for k in cuda.kernels for c in k.costs if c.op == "load"]
    assert [(cuda.locate(c.span).line, c.bytes, c.per_request) for c in fields] == [
        (15, 16, 16),
        (15, 16, 16),
        (16, 16, 16),
        (16, 16, 16),
        (17, 16, 16),
        (17, 16, 16),
    ]


def test_field_read_twice_in_an_expression_is_loaded_once():
    # `a.x * a.x + ...`: the CUDA-C path has two reads of each field, nvcc one load
    cuda, ptx = reports("000_vec3d_plain.cu")
    want, got = costs_by_line(cuda), costs_by_line(ptx)
    for line in (14, 15, 16):
        assert want[(line, "global", "load")] == [12, 12]
        assert got[(line, "global", "load")] == [12]


def test_out_of_in_is_stored_from_registers_in_three_4_byte_stores():
    cuda, ptx = reports("004_noncoalesced_float3.cu")
    assert costs_by_line(cuda)[(19, "global", "store")] == [12]  # one float3, 3 pieces
    stores = [c for k in ptx.kernels for c in k.costs if ptx.locate(c.span).line == 19]
    assert [(c.text, c.bytes, c.per_request) for c in stores] == [
        ("st.global.f32 [%rd7]", 4, 12),
        ("st.global.f32 [%rd7+4]", 4, 12),
        ("st.global.f32 [%rd7+8]", 4, 12),
    ]


def test_unrolled_tile_loop_repeats_each_shared_read_sixteen_times():
    cuda, ptx = reports("003_matmul_shared_tiles.cu")
    assert costs_by_line(cuda)[(136, "shared", "load")] == [1, 1]
    assert costs_by_line(ptx)[(136, "shared", "load")] == [1] * 32


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s not in NOT_KEPT])
def test_findings_are_the_same_codes_at_the_same_lines(sample):
    # compared as sets: the CUDA-C path has one finding per read as written (`a.x * a.x`
    # twice), the PTX path one per array and instruction group (the device function of
    # line 27 of the tiled matmul is inlined for A and for B). WL301 reads struct types,
    # which PTX does not have (see below).
    cuda, ptx = reports(sample)
    want = {(f.code, cuda.locate(f.span).line) for f in cuda.findings if f.code != "WL301"}
    got = {(f.code, ptx.locate(f.span).line) for f in ptx.findings}
    assert got == want


def test_struct_layout_rule_needs_the_c_types_that_ptx_does_not_have():
    cuda, ptx = reports("000_vec3d_plain.cu")
    assert "WL301" in {f.code for f in cuda.findings}
    assert "WL301" not in {f.code for f in ptx.findings}
    # the cost of the 12-byte struct's field reads is there all the same: 12 sectors, ideal 4
    assert {(c.per_request, c.ideal_per_request) for k in ptx.kernels for c in k.costs if c.op == "load"} == {(12, 4)}


def test_unrolled_copies_of_one_access_are_one_finding():
    # `a[x * N + k]` in the k loop, which nvcc unrolls 4 times: 32 sectors, ideal 4
    cuda, ptx = reports("001_matmul_v1_naive.cu")
    (load,) = [f for f in ptx.findings if ptx.locate(f.span).line == 21]
    (want,) = [f for f in cuda.findings if cuda.locate(f.span).line == 21]
    assert (
        (load.code, load.args["array"], load.args["sectors"])
        == (want.code, "a", want.args["sectors"])
        == ("WL201", "a", 32)
    )
    assert load.detail[-1].startswith("nvcc emits 4 instructions for this access")


@pytest.mark.parametrize(
    "sample, line", [("001_matmul_v1_naive.cu", 21), ("001_matmul_v2_coalesced.cu", 28), ("003_matmul_global.cu", 73)]
)
def test_remainder_loop_of_a_loop_unrolled_four_times_runs_no_iteration_for_a_multiple_of_4(sample, line):
    # nvcc unrolls `for (k = 0; k < N; k++)` 4 times and adds a loop for the N % 4 last
    # iterations; with the launch's N a multiple of 4 no lane runs it, so its two loads cost
    # nothing. The CUDA-C path has no such loop.
    _, ptx = reports(sample)
    at_line = [c for k in ptx.kernels for c in k.costs if ptx.locate(c.span).line == line]
    never = [c for c in at_line if NEVER_RUNS in c.assumptions]
    assert len(at_line) == 10 and len(never) == 2
    assert [(c.per_request, c.ideal_per_request) for c in never] == [(0, 0), (0, 0)]
    assert [c.text for c in at_line[-2:]] == [c.text for c in never]  # the last loop in the PTX
