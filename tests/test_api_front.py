"""The survey's front end handed on to the check (analyzer.api_front): the check of a run gives
what a check of its own gives, whatever changed between the survey and the check."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer import api_front, program
from analyzer.api import FileReport, Options, check_file, lowered
from analyzer.cli import main
from analyzer.report import render

HEADER = "#define STRIDE 4\n"
KERNEL = (
    '#include "k.h"\n__global__ void strided(float *x)\n{\n    x[threadIdx.x * STRIDE] = 0;\n}\n'
    "int main() { float *x; strided<<<1, 32>>>(x); }\n"
)
TEMPLATE = "template <class T> __global__ void scale(T *x, int stride)\n{\n    x[threadIdx.x * stride] = 0;\n}\n"
LAUNCHER = (
    "template <class T> __global__ void scale(T *x, int stride);\n\nint main()\n{\n    double *x;\n"
    "    scale<double><<<1, 64>>>(x, 2);\n    return 0;\n}\n"
)


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def as_json(report: FileReport) -> str:
    return render([report], "json")


def surveyed(path: Path, options: Options) -> None:
    """A survey of `path` that keeps its front end (as a run with `-j 1` makes it)."""
    program.survey(str(path), options, hand_on=True)


def test_the_check_takes_the_surveys_front_end_once(tmp_path):
    write(tmp_path, {"k.h": HEADER, "k.cu": KERNEL})
    options = Options()
    with api_front.handing_on():
        surveyed(tmp_path / "k.cu", options)
        taken = []
        real = api_front.taken
        try:
            api_front.taken = lambda key: taken.append(real(key)) or taken[-1]  # type: ignore[assignment]
            first = check_file(str(tmp_path / "k.cu"), options)
            second = check_file(str(tmp_path / "k.cu"), options)
        finally:
            api_front.taken = real  # type: ignore[assignment]
    assert taken[0] is not None and all(t is None for t in taken[1:])  # handed on once, then forgotten
    assert as_json(first) == as_json(second) == as_json(check_file(str(tmp_path / "k.cu"), options))


def test_nothing_is_kept_outside_a_run():
    assert api_front._kept is None


def test_a_header_changed_after_the_survey_gives_the_fresh_result(tmp_path):
    write(tmp_path, {"k.h": HEADER, "k.cu": KERNEL})
    options = Options()
    with api_front.handing_on():
        surveyed(tmp_path / "k.cu", options)
        (tmp_path / "k.h").write_text("#define STRIDE 1\n")
        after = check_file(str(tmp_path / "k.cu"), options)
    assert as_json(after) == as_json(check_file(str(tmp_path / "k.cu"), options))
    assert not after.findings  # stride 1: coalesced


def test_a_header_put_where_an_include_was_not_found_gives_the_fresh_result(tmp_path):
    (tmp_path / "inc").mkdir()
    write(tmp_path, {"k.cu": '#include "k.h"\n#ifndef STRIDE\n#define STRIDE 4\n#endif\n' + KERNEL.split("\n", 1)[1]})
    options = Options(include_paths=[str(tmp_path / "inc")])
    with api_front.handing_on():
        surveyed(tmp_path / "k.cu", options)
        (tmp_path / "inc" / "k.h").write_text("#define STRIDE 1\n")
        after = check_file(str(tmp_path / "k.cu"), options)
    assert not after.findings


def test_a_changed_file_macro_or_option_gives_the_fresh_result(tmp_path):
    write(tmp_path, {"k.h": "", "k.cu": KERNEL})
    path = str(tmp_path / "k.cu")
    for surveyed_with, checked_with in (
        (Options(defines={"STRIDE": "4"}), Options(defines={"STRIDE": "1"})),
        (Options(defines={"STRIDE": "4"}), Options(defines={"STRIDE": "4"}, arch="sm_70", undefines=["X"])),
    ):
        with api_front.handing_on():
            surveyed(tmp_path / "k.cu", surveyed_with)
            handed = check_file(path, checked_with)
        assert as_json(handed) == as_json(check_file(path, checked_with))
    with api_front.handing_on():
        surveyed(tmp_path / "k.cu", Options(defines={"STRIDE": "4"}))
        (tmp_path / "k.cu").write_text(KERNEL.replace("STRIDE", "1"))
        assert not check_file(path, Options(defines={"STRIDE": "4"})).findings


def test_a_template_instance_launched_elsewhere_is_lowered_for_the_check(tmp_path):
    write(tmp_path, {"a.cu": TEMPLATE, "b.cu": LAUNCHER})
    options = Options()
    with api_front.handing_on():
        surveyed(tmp_path / "a.cu", options)
        reports = program.check_program([str(tmp_path / "a.cu"), str(tmp_path / "b.cu")], options, jobs=1)
    (kernel,) = reports[0].kernels
    assert kernel.kernel.display_name == "scale<double>"


def test_a_run_with_one_job_reports_as_each_file_checked_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(write(tmp_path, {"k.h": HEADER, "k.cu": KERNEL, "a.cu": TEMPLATE, "b.cu": LAUNCHER}))
    runs = []
    for jobs in ("1", "2"):
        main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", "--no-cache", "-j", jobs, "."])
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0] == runs[1]
    handed = []
    real = lowered

    def spy(*args, **kwargs):
        handed.append(kwargs.get("hand_on", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(program, "lowered", spy)
    main(["check", "--format", "json", "--isolated", "--exit-zero", "-q", "--no-cache", "-j", "1", "."])
    assert json.loads(capsys.readouterr().out) == runs[0] and handed and all(handed)


TRANSPOSE = (
    "#define TILE 32\n__global__ void transpose(float *out, const float *in)\n{\n"
    "    __shared__ float tile[TILE][TILE];\n    __shared__ float wide[TILE][2 * TILE];\n"
    "    tile[threadIdx.x][threadIdx.y] = in[threadIdx.x];\n    wide[threadIdx.x][threadIdx.y] = in[threadIdx.y];\n"
    "    out[threadIdx.x] = tile[threadIdx.y][threadIdx.x] + wide[threadIdx.x][0];\n}\n"
    "int main() { float *o, *i; dim3 block(32, 32); transpose<<<1, block>>>(o, i); }\n"
)


def test_a_fix_verified_without_its_rechecks_paddings_is_the_same_fix(tmp_path, monkeypatch):
    """A fix's verification reads only where the findings are (`places_only`): the padding the
    recheck would have re-analysed changes no fix text and no verified edit."""
    from analyzer import api

    write(tmp_path, {"t.cu": TRANSPOSE})
    paths = [str(tmp_path / "t.cu"), "samples/000_bank_stride4.cu", "samples/002_transpose_tiled_padded.cu"]

    def fixes() -> list[tuple]:
        return [(f.code, f.fix, f.text_edits) for p in paths for f in api.check_file(p, Options()).findings]

    quick = fixes()
    real = api._checked
    monkeypatch.setattr(api, "_checked", lambda path, options, text, places_only=False: real(path, options, text))
    assert quick == fixes()
    assert any(edits for _, _, edits in quick)  # a padding fix verified


def host_runs(monkeypatch) -> list[object]:
    """The modules whose host code is run from now on (`analysis.launch.host_launches`)."""
    from analyzer.analysis import launch

    runs: list[object] = []
    real = launch.host_launches
    monkeypatch.setattr(launch, "host_launches", lambda module: runs.append(module) or real(module))
    return runs


def test_the_check_takes_the_surveys_host_launches_once(tmp_path, monkeypatch):
    write(tmp_path, {"k.h": HEADER, "k.cu": KERNEL})
    options = Options()
    runs = host_runs(monkeypatch)
    with api_front.handing_on():
        surveyed(tmp_path / "k.cu", options)
        first = check_file(str(tmp_path / "k.cu"), options)
        assert len(runs) == 1  # the survey's run only
        second = check_file(str(tmp_path / "k.cu"), options)
    assert len(runs) == 2  # the second check ran the host code: handed on once, then forgotten
    assert api_front._last_taken is None
    assert as_json(first) == as_json(second) == as_json(check_file(str(tmp_path / "k.cu"), options))


HOSTED = (
    "__global__ void strided(float *x)\n{\n    x[threadIdx.x * 4] = 0;\n}\n"
    "int main() { float *x; int n = 8; n = n * 2; if (n > 4) n = n * 2; strided<<<1, n>>>(x); }\n"
)


def known_and_plain(budget_steps: int) -> tuple[tuple[object, int], tuple[object, int]]:
    """The launches of HOSTED's kernel and the steps left of `budget_steps`, (handed on, run
    again); a run cut short gives the exception's type in place of the launches."""
    from analyzer.analysis.launch import KnownLaunches, LaunchIndex, host_launches
    from analyzer.budget import BudgetExceeded, Meter, metered

    module = lowered("k.cu", Options(), FileReport("k.cu"), [], text=HOSTED)[2]
    survey = Meter("analysis", 10_000)
    with metered(survey):
        known = KnownLaunches(host_launches(module), survey.limit - survey.left)
    out = []
    for index in (LaunchIndex(module, known), LaunchIndex(module)):
        meter = Meter("analysis", budget_steps)
        with metered(meter):
            try:
                found: object = [(x.kernel, str(x.block)) for x in index.of(module.kernels[0])]
            except BudgetExceeded as err:
                found = type(err)
        out.append((found, meter.left))
    return out[0], out[1]


def test_host_launches_handed_on_charge_the_steps_of_running_the_host_code():
    known, plain = known_and_plain(10_000)
    assert known == plain == ([("strided", "32")], 10_000 - 5)  # five host statements run


def test_host_launches_handed_on_to_a_meter_without_their_steps_are_cut_short_as_before():
    from analyzer.budget import BudgetExceeded

    assert known_and_plain(4) == ((BudgetExceeded, -1), (BudgetExceeded, -1))
    assert known_and_plain(5) == (([("strided", "32")], 0), ([("strided", "32")], 0))
