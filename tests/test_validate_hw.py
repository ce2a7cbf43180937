"""The pure parts of tools/validate_hw.py and tools/hw_programs.py: parsing Nsight Compute and
nvdisasm output captured on an H200 (tests/data/hw_*), joining it with warplint's figures,
and the programs generated for the GPU. Nothing here needs a GPU."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


vh = _load("validate_hw")
hp = _load("hw_programs")

REDUCE = "hw_reduce_interleaved.cu"
ATOMIC = "hw_data_dependent_atomic.cu"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _reduce_accesses():
    rows = vh.parse_source_csv(_read("hw_reduce_interleaved.src_sass.csv"))
    return vh.attach_lines(rows, vh.parse_line_table(_read("hw_reduce_interleaved.lines.txt")), REDUCE)


# ---------------------------------------------------------------- Nsight Compute's SASS view


def test_source_csv_rows_carry_the_counters_of_each_instruction():
    rows = vh.parse_source_csv(_read("hw_reduce_interleaved.src_sass.csv"))
    assert rows[0].kernel == "_Z6reducePf" and rows[0].offset == 0
    memory = [r for r in rows if r.space]
    assert [(r.opcode, r.space, r.op) for r in memory] == [
        ("LDG", "global", "load"),
        ("STS", "shared", "store"),
        ("LDS", "shared", "load"),
        ("LDS", "shared", "load"),
        ("STS", "shared", "store"),
        ("LDS", "shared", "load"),
        ("STG", "global", "store"),
    ]
    lds = memory[2]
    assert lds.source == "@!P1  LDS R3, [R2]"
    # 8 warps x 8 iterations executed it; 12 of those requests had active lanes.
    assert (lds.executed, lds.wavefronts, lds.wavefronts_ideal, lds.size_bits) == (64, 47, 12, 32)
    assert memory[0].sectors == 32 and memory[0].sectors_ideal == 32


def test_atomic_without_access_operation_is_read_from_its_opcode():
    rows = vh.parse_source_csv(_read("hw_data_dependent_atomic.src_sass.csv"))
    red = next(r for r in rows if r.opcode == "REDG")
    assert (red.space, red.op, red.offset, red.sectors) == ("global", "atomic", 0x90, 1)


# ---------------------------------------------------------------- nvdisasm's line table


def test_line_table_keeps_only_code_and_its_source_lines():
    table = vh.parse_line_table(_read("hw_reduce_interleaved.lines.txt"))
    assert list(table) == ["_Z6reducePf"]
    listing = table["_Z6reducePf"]
    assert listing[0].offset == 0 and listing[0].opcode == "LDC"
    assert listing[0].locations == (("build/hw/hw_reduce_interleaved.cu", 4),)
    lds = [s for s in listing if s.opcode == "LDS"]
    assert [vh.source_line(listing, listing.index(s), REDUCE) for s in lds] == [(11, False), (11, False), (14, False)]


def test_inlined_header_code_takes_its_call_site_with_gi():
    listing = vh.parse_line_table(_read("hw_data_dependent_atomic.lines_gi.txt"))["_Z4histPiS_"]
    i = [s.opcode for s in listing].index("REDG")
    hdr = "/usr/local/cuda/bin/../targets/x86_64-linux/include/device_atomic_functions.hpp"
    prog = "build/hw/hw_data_dependent_atomic.cu"
    assert listing[i].locations == ((hdr, 107), (prog, 6), (prog, 6))
    assert vh.source_line(listing, i, ATOMIC) == (6, False)


def test_inlined_header_code_without_call_site_gets_the_line_before_and_says_so():
    listing = vh.parse_line_table(_read("hw_data_dependent_atomic.lines_g.txt"))["_Z4histPiS_"]
    i = [s.opcode for s in listing].index("REDG")
    assert listing[i].locations[0][1] == 107
    assert vh.source_line(listing, i, ATOMIC) == (6, True)
    rows = vh.parse_source_csv(_read("hw_data_dependent_atomic.src_sass.csv"))
    accesses, problems = vh.attach_lines(rows, {"_Z4histPiS_": listing}, ATOMIC)
    assert [(a.line, a.row.opcode) for a in accesses] == [(5, "LDG"), (6, "REDG")]
    assert problems == [
        "hw_data_dependent_atomic.cu:6: 'REDG.E.ADD.STRONG.GPU desc[UR4][R4.64], R7' comes from "
        "device_atomic_functions.hpp:107; given the program line before it"
    ]


def test_a_listing_of_another_kernel_is_not_used():
    rows = vh.parse_source_csv(_read("hw_reduce_interleaved.src_sass.csv"))
    other = vh.parse_line_table(_read("hw_data_dependent_atomic.lines_gi.txt"))
    accesses, problems = vh.attach_lines(rows, other, REDUCE)
    assert accesses == [] and problems == ["no nvdisasm listing matches kernel '_Z6reducePf'"]


# ---------------------------------------------------------------- grouping and joining


def test_measured_groups_of_the_interleaved_reduction():
    accesses, problems = _reduce_accesses()
    assert problems == []
    groups = vh.measured_groups(accesses, REDUCE)
    # requests: those with an active lane (ideal wavefronts of 4-byte LDS/STS), not the 64 executed
    assert {k: (g.requests, g.cost, g.executed) for k, g in groups.items()} == {
        (7, "global", "load"): (8, 32, 8),
        (7, "shared", "store"): (8, 8, 8),
        (11, "shared", "load"): (24, 94, 128),
        (11, "shared", "store"): (12, 47, 64),
        (14, "shared", "load"): (1, 1, 1),
        (14, "global", "store"): (1, 1, 1),
    }


def test_ncu_correlated_view_gives_the_same_groups_as_nvdisasm():
    accesses, _ = _reduce_accesses()
    primary = vh.measured_groups(accesses, REDUCE)
    other = vh.measured_groups(vh.parse_cuda_sass_csv(_read("hw_reduce_interleaved.src_cuda_sass.csv")), REDUCE)
    assert vh.cross_check(primary, other, REDUCE) == []
    other[(11, "shared", "load")].cost += 1
    assert vh.cross_check(primary, other, REDUCE) == [
        "hw_reduce_interleaved.cu:11 shared load: nvdisasm gives (24, 94), ncu's cuda,sass view (24, 95)"
    ]


def test_predicted_groups_sum_the_accesses_of_one_line():
    report = json.loads(_read("hw_reduce_interleaved.check.json"))
    groups = vh.predicted_groups(report, REDUCE)
    load = groups[(11, "shared", "load")]
    assert (load.texts, load.per_request, load.requests, load.total, load.exact) == (
        ["sdata[index]", "sdata[index + s]"],
        8,
        24,
        94,
        True,
    )
    assert load.mean == pytest.approx(94 / 24)
    assert groups[(7, "global", "load")].total == 32


def test_reduction_rows_agree_with_the_hardware():
    accesses, _ = _reduce_accesses()
    report = json.loads(_read("hw_reduce_interleaved.check.json"))
    rows = vh.join(REDUCE, vh.predicted_groups(report, REDUCE), None, vh.measured_groups(accesses, REDUCE))
    assert [(r.line, r.space, r.op, r.agree) for r in rows] == [
        (7, "global", "load", "yes"),
        (7, "shared", "store", "yes"),
        (11, "shared", "load", "yes"),
        (11, "shared", "store", "yes"),
        (14, "global", "store", "yes"),
        (14, "shared", "load", "yes"),
    ]
    table = vh.render_markdown(rows)
    assert (
        "| hw_reduce_interleaved.cu | 11 | `sdata[index]`, `sdata[index + s]` | shared load (wf) "
        "| 8 (mean 3.92) / 94 | — | 3.92 / 94 (24; LDS) | yes |"
    ) in table


def _static(per_requests, requests, total, exact=True):
    return vh.Predicted(texts=["a"], per_requests=per_requests, requests=requests, total=total, exact=exact)


@pytest.mark.parametrize(
    "static, measured, verdict",
    [
        (_static([4], 8, 32), vh.Measured(requests=8, cost=32), "yes"),
        # the compiler loaded d[tid].x once for `d[tid].x * d[tid].x`: half the requests, same cost each
        (_static([12, 12], 16, 192), vh.Measured(requests=8, cost=96), "per request"),
        # unknown launch: the mean of the line's accesses (a strided 32, b broadcast 1)
        (_static([32, 1], None, None, exact=False), vh.Measured(requests=2, cost=33), "per request"),
        (_static([5], None, None, exact=False), vh.Measured(requests=1, cost=4), "bound"),
        (_static([5], None, None, exact=True), vh.Measured(requests=1, cost=4), "no"),
        (_static([12], 16, 576), None, "no"),  # charged, never emitted
        (_static([16], 0, 0), None, "yes"),  # merged into a wider load: 0 both ways
        (_static([None], None, None, exact=False), vh.Measured(requests=1, cost=1), "unknown"),
    ],
)
def test_agreement(static, measured, verdict):
    assert vh.agreement(static, measured) == verdict


# ---------------------------------------------------------------- generated programs


def test_generated_program_launches_as_the_test_does():
    case = next(c for c in hp.CASES if c.name == "thread_strided_loop")
    text = hp.render_program(case)
    assert "cudaMalloc((void**)&d0, 8388608);" in text
    assert "dim3 block(256, 1, 1);" in text and "dim3 grid(1, 1, 1);" in text
    assert "k<<<grid, block>>>(d0, 1024);" in text
    assert hp.kernel_signature(case.kernel) == ("k", [("float*", "x"), ("int", "n")])


def test_cases_cover_at_least_twenty_test_kernels_with_distinct_names():
    names = [c.name for c in hp.CASES]
    assert len(names) == len(set(names)) and len(names) >= 20
    assert {"reduce_interleaved", "reduce_sequential", "xor_swizzle", "float3_field", "masked_lanes"} <= set(names)


def test_sample_sizes_are_reduced_on_the_same_line():
    text = "a\n    const uint32_t M = 4096, N = 4096, P = 4096;\nb\n"
    reduced = hp.sized_sample("001_matmul_v1_naive.cu", text)
    assert reduced.splitlines() == ["a", "    const uint32_t M = 512, N = 512, P = 512;", "b"]
    with pytest.raises(ValueError):
        hp.sized_sample("001_matmul_v1_naive.cu", "no size here")


def test_warplint_reads_the_generated_launch(tmp_path):
    case = next(c for c in hp.CASES if c.name == "thread_strided_loop")
    path = tmp_path / "prog.cu"
    path.write_text(hp.render_program(case))
    done = subprocess.run(
        [sys.executable, "-m", "analyzer", "check", "--format", "json", "-q", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    kernel = json.loads(done.stdout)["files"][0]["kernels"][0]
    assert (kernel["launch"]["block"], kernel["launch"]["grid"], kernel["launch"]["params"]) == (
        [256, 1, 1],
        [1, 1, 1],
        {"n": 1024},
    )
    access = kernel["accesses"][0]
    assert (access["text"], access["per_request"], access["requests"], access["total"]) == ("x[i]", 4, 32, 128)


def test_kernel_metrics_equal_the_sum_of_the_instructions():
    rows = vh.parse_source_csv(_read("hw_reduce_interleaved.src_sass.csv"))
    metrics = vh.parse_details_csv(_read("hw_reduce_interleaved.details.csv"))
    assert metrics == {
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 95,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 55,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 32,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 1,
    }
    assert vh.check_kernel_totals(rows, metrics, REDUCE) == []
    metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 97
    assert vh.check_kernel_totals(rows, metrics, REDUCE) == [
        "hw_reduce_interleaved.cu: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum = 97, "
        "its instructions add up to 95"
    ]


def test_compare_joins_a_raw_folder_with_warplints_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(vh, "_has_simulate", lambda: False)  # simulate is held to the GPU elsewhere
    raw = tmp_path / "raw"
    raw.mkdir()
    for suffix in ("src_sass.csv", "lines.txt", "src_cuda_sass.csv", "details.csv"):
        (raw / f"hw_reduce_interleaved.{suffix}").write_text(_read(f"hw_reduce_interleaved.{suffix}"))
    program = tmp_path / REDUCE
    program.write_text(hp.render_program(next(c for c in hp.CASES if c.name == "reduce_interleaved")))
    monkeypatch.chdir(ROOT)
    assert vh.main(["compare", str(raw), str(program), "--markdown", str(tmp_path / "t.md")]) == 0
    out, err = capsys.readouterr()
    assert (
        "| hw_reduce_interleaved.cu | 11 | `sdata[index]` | shared store (wf) | 8 (mean 3.92) / 47 | — "
        "| 3.92 / 47 (12; STS) | yes |" in out
    )
    assert err.strip() == "6 groups: 6 yes"
    assert (tmp_path / "t.md").read_text().count("| yes |") == 6
    # a program with no raw counters is reported, not a traceback
    assert vh.main(["compare", str(tmp_path / "empty"), str(program)]) == 0
    assert "hw_reduce_interleaved.cu: not measured" in capsys.readouterr().err
