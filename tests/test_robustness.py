"""The robustness reproducers of issue 19, each with the diagnostic it must now give.

Every input in `tests/fixtures/robustness/` once hung warplint, crashed it (WL900), or lost or
silenced a result. Each test runs the command of the reproducer and states what must come
out: the exact code, line and column, and the exit status; and that no file was changed and
no traceback printed. Inputs that cannot be files of the repository (a file name that is not
UTF-8, an unreadable folder, a 21 MB header) are made by the test.

No test here times itself: what ends a heavy input is a budget counted in steps, so the
assertions are on the WL940 it gives; how long inputs take is measured by
`benchmarks/fuzz.py` (README: Robustness).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from analyzer import api
from analyzer.cli import main

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "robustness"
LINE = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<column>\d+): (?P<code>WL\d+) (?P<message>.*)$")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, int, int, str]], str]:
    """`warplint ARGS` in this process: (status, [(path, line, column, code)] of the concise
    report, stderr). Asserts that no traceback was printed."""
    status = main(["check", "--format", "concise", "-q", *args[1:]] if args[0] == "check" else list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    found = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            found.append((m["path"], int(m["line"]), int(m["column"]), m["code"]))
    return status, found, err


def codes(found: list[tuple[str, int, int, str]]) -> list[tuple[int, int, str]]:
    return [(line, column, code) for _, line, column, code in found]


@pytest.fixture
def repro(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the reproducers as the working folder (the test may not change the originals)."""
    folder = tmp_path / "robustness"
    shutil.copytree(FIXTURES, folder)
    monkeypatch.chdir(folder)
    return folder


def unchanged(folder: Path) -> bool:
    return all(
        (folder / p.relative_to(FIXTURES)).read_bytes() == p.read_bytes() for p in FIXTURES.rglob("*") if p.is_file()
    )


# ----------------------------------------------------------------------------- crashes (WL900) no more


@pytest.mark.parametrize(
    "name, expected, status",
    [
        ("bignum_4301_digits.cu", [(2, 31, "WL201")], 1),  # was 1:1 WL900, the whole file lost
        ("bignum_in_if.cu", [(1, 5, "WL901"), (3, 31, "WL201")], 1),  # was read unpreprocessed
        ("loop_step_div_negative.cu", [], 0),  # was WL900 ValueError: negative shift count
        ("loop_step_shift_100.cu", [], 0),  # was WL900 OverflowError
        ("align_ffff/k.cu", [(1, 8, "WL907"), (4, 3, "WL201"), (4, 3, "WL301")], 1),  # was WL900 in WL301
        ("vertical_tab.cu", [(3, 3, "WL201")], 1),  # was WL901 on valid code
        ("slow_array_row_assign.cu", [(4, 3, "WL903")], 0),  # was 52 s, 3.8 GB and a bank conflict
        ("slow_launch_block_8M_threads.cu", [(5, 27, "WL907")], 1),  # was 26 s, 2 GB
        ("slow_align_2pow29.cu", [(4, 3, "WL907")], 1),  # was 36 s, 3.7 GB
        ("slow_self_include.cu", [(1, 10, "WL901")], 1),  # was 200 copies analysed
        ("suppr_ignore_file_unclosed/k.cu", [(1, 4, "WL921"), (5, 3, "WL101"), (5, 24, "WL201")], 1),
    ],
)
def test_each_reproducer_gives_its_diagnostic_and_exit_status(capsys, repro, name, expected, status):
    got_status, found, _ = run(capsys, "check", name, "--report-unused-suppressions")
    assert (got_status, codes(found)) == (status, expected)
    assert unchanged(repro)


def test_an_integer_literal_of_any_length_is_read_in_linear_time(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("k.cu").write_text("int x = " + "9" * 200_000 + ";\n__global__ void k(float *p) { p[threadIdx.x] = 1; }\n")
    assert run(capsys, "check", "k.cu")[:2] == (0, [])


@pytest.mark.parametrize(
    "step", ["d /= -1", "d *= -1", "d >>= -1", "d <<= 100", "d *= 1000000007", "d /= 0", "d >>= 64", "d = d << 63"]
)
def test_loop_steps_are_evaluated_as_c_does_on_64_bits(capsys, tmp_path, monkeypatch, step):
    monkeypatch.chdir(tmp_path)
    Path("k.cu").write_text(
        f"__global__ void k(float *p)\n{{\n  for (int d = 64; d > 0; {step})\n    p[d * threadIdx.x] = 0;\n}}\n"
    )
    status, found, _ = run(capsys, "check", "k.cu")
    assert status == 1 and codes(found) == [(4, 5, "WL201")]


# ----------------------------------------------------------------------------- CUDA's limits


def test_a_grid_of_height_0_is_a_diagnostic_and_the_json_holds_no_0_dimension(capsys, repro):
    jsonschema = pytest.importorskip("jsonschema")
    assert run(capsys, "check", "grid_zero_schema/k.cu")[:2] == (1, [("grid_zero_schema/k.cu", 9, 7, "WL907")])
    assert main(["check", "grid_zero_schema/k.cu", "--format", "json", "-q"]) == 1
    document = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schema-v1.json").read_text())).validate(document)
    assert document["files"][0]["kernels"] == []  # the launch CUDA refuses is not analysed


@pytest.mark.parametrize(
    "launch, at, why",
    [
        ("k<<<grid, 32>>>(p);", "grid", "y is 0.5, not a whole number (dim3 truncates it to 0)"),
        ("k<<<1, dim3(32, 32, 2)>>>(p);", "dim3(32", "2048 threads per block, the limit is 1024"),
        ("k<<<dim3(1, 70000), 32>>>(p);", "dim3(1,", "y is 70000, the limit is 65535"),
        ("k<<<-1, 32>>>(p);", "-1", "x is -1; every dimension must be at least 1"),
    ],
)
def test_a_host_launch_cuda_refuses_is_a_diagnostic_at_the_launch(capsys, tmp_path, monkeypatch, launch, at, why):
    monkeypatch.chdir(tmp_path)
    host = f"void h(float *p) {{ dim3 grid(1, 0.5); {launch} }}\n"
    Path("k.cu").write_text("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n" + host)
    column = host.index(at, host.index("<<<")) + 1
    assert run(capsys, "check", "k.cu")[:2] == (1, [("k.cu", 2, column, "WL907")])
    report = api.check_file("k.cu")
    assert why in report.diagnostics[0].message and report.kernels == []


def test_launch_bounds_over_1024_are_a_diagnostic_and_not_the_assumed_block(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text("__global__ void __launch_bounds__(2048) k(float *p) { p[threadIdx.x] = 1; }\n")
    report = api.check_file(str(path))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("WL907", 1)]
    assert report.kernels[0].launch.block == (256, 1, 1)  # the default, said as an assumption


@pytest.mark.parametrize(
    "align, ok", [(1, True), (16, True), (2**29, True), (0, False), (3, False), (2**30, False), (2**64 - 1, False)]
)
def test_alignments_are_powers_of_two_up_to_what_nvcc_accepts(tmp_path, align, ok):
    path = tmp_path / "k.cu"
    path.write_text(
        f"struct __align__({align}) S {{ float x; }};\n__global__ void k(S *d) {{ d[threadIdx.x].x = 1.0f; }}\n"
    )
    problems = [d for d in api.check_file(str(path)).diagnostics if d.code == "WL907" and d.location.line == 1]
    assert (problems == []) is ok
    if not ok:
        assert (problems[0].location.line, problems[0].location.column) == (1, 8)


def test_a_shared_array_over_48_kib_is_a_diagnostic_and_its_kernel_not_analysed(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(
        "__global__ void k(float *p) {\n  __shared__ float s[12289];\n"
        "  s[threadIdx.x] = p[threadIdx.x];\n  p[threadIdx.x] = s[threadIdx.x + 1];\n}\n"
    )
    report = api.check_file(str(path))
    assert [(d.code, d.location.line, d.location.column) for d in report.diagnostics] == [("WL907", 2, 20)]
    assert "49,156 bytes, more than the 49,152" in report.diagnostics[0].message and report.kernels == []


# ----------------------------------------------------------------------------- budgets


@pytest.mark.slow
def test_the_simulator_stops_an_endless_loop_within_its_budget(capsys, repro):
    status, found, _ = run(capsys, "check", "--verify", "verify_infinite_loop.cu")
    assert (status, codes(found)) == (0, [(3, 3, "WL940")])
    assert main(["simulate", "verify_infinite_loop.cu"]) == 0
    assert "stopped at line 3" in capsys.readouterr().out


@pytest.mark.slow
def test_simulating_every_block_of_a_huge_grid_is_bounded(capsys, repro):
    assert main(["simulate", "simulate_all_blocks_huge_grid.cu", "--all-blocks"]) == 0
    out, err = capsys.readouterr()
    assert "more than the simulation budget allows" in out and "WL940" in out and "Traceback" not in err


def test_an_endless_loop_with_an_empty_body_ends_at_the_simulation_budget(capsys, tmp_path, monkeypatch):
    # its test was never charged: with nothing in the body the run went on for ever (fuzz `loops`)
    monkeypatch.chdir(tmp_path)
    Path("k.cu").write_text(
        "__global__ void k(float *p) {\n  for (int d = 1; d >= -1; )\n    ;\n  p[threadIdx.x] = 0;\n}\n"
        "void h(float *p) { k<<<1, 32>>>(p); }\n"
    )
    Path("warplint.toml").write_text("[budget]\nsimulation = 100000\n")
    main(["simulate", "k.cu"])
    out = capsys.readouterr().out
    assert "stopped at line 2: step budget of 100,000 steps exceeded in a loop after 382 iterations" in out


def test_simulate_refuses_a_negative_seed(capsys, repro):
    assert main(["simulate", "verify_infinite_loop.cu", "--seed", "-1"]) == 2
    assert "argument --seed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, analysis, kernel_line",
    [
        ("slow_nested_loops_4x12.cu", 20000, 1),  # takes 25,042 steps
        ("slow_nested_loops_16x2.cu", 1000, 1),  # takes 2,664
        ("hang_nested_subscripts_13.cu", 200, 1),  # takes 1,766
        ("slow_1000_launch_configs.cu", 20000, 1),  # takes 7.1 million
    ],
)
def test_a_small_analysis_budget_cuts_a_heavy_kernel_short_with_wl940(capsys, repro, name, analysis, kernel_line):
    Path("warplint.toml").write_text(f"[budget]\nanalysis = {analysis}\n")
    status, found, _ = run(capsys, "check", name)
    assert status in (0, 1) and [line for line, _, code in codes(found) if code == "WL940"] == [kernel_line]


def costs_of(name: str) -> tuple[api.FileReport, list[tuple[str, int | None, int | None, bool]]]:
    """The report of `name` at the default budget, and (access, per request, ideal, data-dependent)
    of each access of its kernels."""
    report = api.check_file(name, options_for(name))
    assert [d.code for d in report.diagnostics if d.code in ("WL900", "WL940")] == []
    return report, [
        (c.access.text, c.per_request, c.ideal_per_request, c.data_dependent) for k in report.kernels for c in k.costs
    ]


def test_nested_loops_whose_counters_are_set_afresh_are_analysed_without_walking_each_iteration(repro):
    # were 202 s and 110 s, cut short by the budget (WL940): each enclosing loop was run
    # iteration by iteration because the nested loop's counter looked carried
    report, costs = costs_of("slow_nested_loops_4x12.cu")
    assert costs == [
        ("q[a * 4096 + b * 512 + c * 64 + d * 8 + threadIdx.x]", 4, 4, False),
        ("s[(a * 512 + b * 64 + c * 8 + d + threadIdx.x) % 4096]", 1, 1, False),
        ("s[threadIdx.x]", 1, 1, False),
        ("p[threadIdx.x]", 4, 4, False),
    ]
    assert report.findings == []
    report, costs = costs_of("slow_nested_loops_16x2.cu")
    assert costs == [("p[threadIdx.x + i15]", 5, 4, False)]
    assert [(f.code, f.args["sectors"], f.args["ideal"]) for f in report.findings] == [("WL201", 5, 4)]


def test_nested_data_dependent_subscripts_are_unknown_in_linear_time(repro):
    # was 62 s and a WL940: the address of each load was evaluated twice, doubling per level
    report, costs = costs_of("hang_nested_subscripts_13.cu")
    assert costs[0] == ("q[threadIdx.x]", 4, 4, False)
    # data-dependent: bounded by the active lanes' sectors (32 of 4-byte loads), not a figure
    assert [c[1:] for c in costs[1:]] == [(32, 4, True)] * 13
    assert costs[-1][0] == "p[" + "q[" * 13 + "threadIdx.x" + "]" * 14
    assert report.findings == []


@pytest.mark.slow
def test_launches_of_1900_template_instantiations_are_found_in_linear_time(repro):
    # was 193 s and a WL940 naming the kernels left: the host code was run once per kernel
    report, _ = costs_of("slow_template_1900_instantiations.cu")
    assert len(report.kernels) == 1900
    assert Counter(f.code for f in report.findings) == {"WL101": 948, "WL201": 1898}


def test_a_kernel_launched_with_1000_configurations_is_cut_at_the_launches_budget(capsys, repro):
    # 1,000 configurations took 13 s of CPU even with the shared warps walked once: the first
    # `budget.launches` are analysed, and one WL940 at the kernel says how many of how many
    Path("warplint.toml").write_text("[budget]\nlaunches = 40\n")
    status, found, _ = run(capsys, "check", "slow_1000_launch_configs.cu", "--select", "WL201,WL940")
    assert status == 1 and set(codes(found)) == {(5, 52, "WL201"), (1, 17, "WL940")}
    report = api.check_file("slow_1000_launch_configs.cu", options_for("slow_1000_launch_configs.cu"))
    assert len(report.kernels) == 40
    (cut,) = [d.message for d in report.diagnostics if d.code == "WL940"]
    assert cut == (
        "analysis of kernel `heavy` cut short: 40 of 1000 launch configurations analysed: "
        "the launches budget of 40 launch configurations is spent"
    )
    worst = {k.launch.block[0]: k.costs[1].per_request for k in report.kernels}
    assert (worst[1], worst[32], worst[33], worst[40]) == (1, 32, 32, 32)


@pytest.mark.slow
def test_a_kernel_launched_with_1000_configurations_is_analysed_for_each_when_the_budget_allows(capsys, repro):
    # was 53 s and a WL940: the warps each configuration shares with the others are walked once
    Path("warplint.toml").write_text("[budget]\nlaunches = 1000\n")
    report = api.check_file("slow_1000_launch_configs.cu", options_for("slow_1000_launch_configs.cu"))
    assert len(report.kernels) == 1000 and not [d for d in report.diagnostics if d.code == "WL940"]
    worst = {k.launch.block[0]: k.costs[1].per_request for k in report.kernels}
    assert (worst[1], worst[32], worst[33], worst[1000]) == (1, 32, 32, 32)


def test_a_budget_of_one_step_cuts_the_analysis_short_and_is_no_internal_error(tmp_path):
    # the symbolic expressions' module, first imported inside the metered analysis, spent the
    # budget while being imported and stopped half-way (WL900); a fresh process imports it so
    (tmp_path / "warplint.toml").write_text("[budget]\nanalysis = 1\n")
    shutil.copy(FIXTURES / "slow_nested_loops_16x2.cu", tmp_path / "k.cu")
    done = subprocess.run(
        [sys.executable, "-m", "analyzer", "check", "--format", "concise", "-q", "k.cu"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert (done.returncode, done.stdout.split(": ")[1]) == (0, "WL940 analysis of kernel `k` cut short"), done.stdout


@pytest.mark.slow
def test_a_spent_budget_names_the_kernels_it_leaves(capsys, repro):
    Path("warplint.toml").write_text("[budget]\nanalysis = 5000\n")
    report = api.check_file("slow_template_1900_instantiations.cu", options_for("slow_template_1900_instantiations.cu"))
    cut = [d for d in report.diagnostics if d.code == "WL940"]
    assert cut and "kernels not analysed" in cut[-1].message and "budget.analysis" in cut[-1].notes[0]


EXPONENTIAL = "#define A0 x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 22))


@pytest.mark.slow
def test_an_exponential_macro_is_left_unexpanded_and_the_file_goes_on(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(EXPONENTIAL + "int v = A21;\n__global__ void k(float *p) { p[threadIdx.x * 2] = 1; }\n")
    report = api.check_file(str(path))
    assert [(d.code, d.location.line) for d in report.diagnostics] == [("WL901", 23)]
    assert [(f.code, report.locate(f.span).line) for f in report.findings] == [("WL201", 24)]


@pytest.mark.slow
def test_a_spent_preprocess_budget_stops_the_file_where_it_is(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(EXPONENTIAL + "".join(f"int v{i} = A21;\n" for i in range(40)) + "int last;\n")
    report = api.check_file(str(path))
    (stop,) = [d for d in report.diagnostics if d.code == "WL940"]
    assert "preprocessing stopped here" in stop.message and 22 < stop.location.line < 62
    assert stop.notes == (
        "raise `budget.preprocess` in [tool.warplint] to allow more (README: Configuration and Robustness)",
    )


def options_for(path: str) -> api.Options:
    from analyzer.config import Resolver, Settings

    return Resolver(Settings(), api.Options())(path)


# ----------------------------------------------------------------------------- configuration


def test_a_configuration_nested_500_deep_is_a_configuration_error(capsys, repro):
    os.chdir("cfg_deep_nesting")
    assert main(["check", "k.cu"]) == 2
    assert capsys.readouterr().err.startswith(
        "warplint.toml:1:69: error: invalid TOML: arrays or inline tables nested more than 64 levels deep"
    )


@pytest.mark.parametrize(
    "table, message",
    [
        ("[budget]\nanalysys = 5\n", "unknown stage `analysys` in `budget`; did you mean `analysis`?"),
        ("[budget]\nanalysis = 0\n", "`budget.analysis` must be an integer from 1 to"),
        ('[budget]\nparse = "many"\n', "`budget.parse` must be an integer from 1 to"),
        ("budget = 5\n", "`budget` must be a table of stage = steps"),
    ],
)
def test_a_bad_budget_is_a_configuration_error(capsys, tmp_path, monkeypatch, table, message):
    monkeypatch.chdir(tmp_path)
    Path("warplint.toml").write_text(table)
    Path("k.cu").write_text("__global__ void k(float *p) { p[threadIdx.x] = 1; }\n")
    assert main(["check", "k.cu"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_the_parse_table_cache_is_rebuilt_when_corrupted(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    kernel = FIXTURES / "vertical_tab.cu"
    command = [sys.executable, "-m", "analyzer", "check", str(kernel), "--format", "concise", "-q"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    (cache,) = (tmp_path / "cache" / "warplint").glob("cuda-*-tables*.marshal")
    cache.write_bytes((FIXTURES / "corrupt_cache" / "bad.marshal").read_bytes())
    for _ in range(2):  # rebuilt, then read back
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert (again.returncode, again.stdout) == (first.returncode, first.stdout) == (1, again.stdout)
        assert "WL900" not in again.stdout


# ----------------------------------------------------------------------------- paths and output


def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(capsysbinary, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"\xff.cu")
    Path(name).write_text("__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n")
    for fmt in ("text", "concise", "json", "json-lines", "sarif", "github", "html"):
        assert main(["check", name, "--format", fmt, "-q"]) == 1
        out = capsysbinary.readouterr().out
        assert out and b"Traceback" not in out
        if fmt == "sarif":
            uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
            assert uri["uri"] == "%FF.cu"
        if fmt == "text":
            assert out.startswith(b"\xff.cu:1:31: warning:")
    assert main(["check", name, "-o", "out.txt", "-q"]) == 1
    assert Path("out.txt").read_bytes().startswith(b"\xff.cu:1:31: warning:")


def test_output_refuses_to_overwrite_a_file_it_checks(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("main.cu").write_text("__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n")
    before = Path("main.cu").read_bytes()
    assert main(["check", "main.cu", "-o", "main.cu"]) == 2
    assert main(["check", ".", "-o", "./main.cu"]) == 2
    assert "is one of the files checked" in capsys.readouterr().err
    assert Path("main.cu").read_bytes() == before


def test_output_replaces_the_report_whole_and_keeps_its_permissions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("k.cu").write_text("__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n")
    Path("report.txt").write_text("old\n")
    os.chmod("report.txt", 0o640)
    assert main(["check", "k.cu", "-o", "report.txt", "-q"]) == 1
    assert Path("report.txt").read_text().startswith("k.cu:1:31:")
    assert os.stat("report.txt").st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".warplint-")] == []


def test_double_dash_ends_the_options(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("-x.cu").write_text("__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n")
    assert run(capsys, "check", "--", "-x.cu")[:2] == (1, [("-x.cu", 1, 31, "WL201")])


def test_an_unreadable_folder_is_an_error(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("locked").mkdir()
    real = os.scandir

    def scandir(path: object = ".") -> object:  # (chmod 000 does not stop root, who runs CI here)
        if os.fspath(path).endswith("locked"):  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied", os.fspath(path))  # type: ignore[call-overload]
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["check", "locked"]) == 2
    assert "locked:1:1: error: cannot read this folder: Permission denied [WL910]" in capsys.readouterr().out


def test_a_guarded_file_included_into_itself_is_read_once_without_a_diagnostic():
    from analyzer.source.preprocess import preprocess

    files = {"g.h": '#ifndef G_H\n#define G_H\n#include "g.h"\nint g;\n#endif\n'}
    result = preprocess('#include "g.h"\n', "main.cu", read_file=lambda path: files.get(os.path.basename(path)))
    assert result.diagnostics == ()
    assert result.text.count("int g;") == 1


def test_an_included_binary_file_is_one_diagnostic(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("blob.h").write_bytes(bytes(range(256)) * 40)
    Path("k.cu").write_text('#include "blob.h"\n__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n')
    assert run(capsys, "check", "k.cu")[:2] == (1, [("k.cu", 1, 10, "WL901"), ("k.cu", 2, 31, "WL201")])


def test_the_size_limit_covers_included_files(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open("huge.h", "wb") as handle:  # sparse: 21 MB without writing them
        handle.truncate(api.MAX_FILE_BYTES + 1024 * 1024)
    Path("k.cu").write_text('#include "huge.h"\n__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n')
    status, found, _ = run(capsys, "check", "k.cu")
    assert (status, found) == (1, [("k.cu", 1, 10, "WL901"), ("k.cu", 2, 31, "WL201")])
    assert "file too large" in api.check_file("k.cu").diagnostics[0].message
