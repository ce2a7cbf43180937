"""The one-line formats, run as users run them: `warplint check --format concise|json-lines|github`.

Every line is compared whole, on a real sample (a 4-way bank conflict at 23:18-23:38)
and on a file with a syntax error (WL901 at 3:28), so a change of position, wording or
escaping shows here. Input diagnostics must appear in every format; nothing may print a
traceback; the exit status is the same whatever the format.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analyzer.diagnostics import Location
from analyzer.report import FORMATS, Record, render
from analyzer.report.github import command, escape_data, escape_property
from kernel_texts import CLEAN_KERNEL  # tests/kernel_texts.py
from runner import warplint  # tests/runner.py

REPO = Path(__file__).resolve().parents[1]
#: the formats this file covers (html, a page, is tested on its own)
LINE_FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github")
STRIDE4 = "samples/000_bank_stride4.cu"

STRIDE4_MESSAGE = "4-way bank conflict on `data`: 4 wavefronts per request, ideal 1"
STRIDE4_FIX = (
    "use an odd stride: with 5 words between neighbouring lanes instead of 4, "
    "the 32 lanes of a warp fall into 32 different banks"
)

SYNTAX_ERROR = """\
__global__ void k(float* a)
{
    a[threadIdx.x] = 1.0f +;
}
"""


NEVER_LAUNCHED_TEMPLATE = """\
template <int N>
__global__ void scale(float* a)
{
    a[threadIdx.x * N] = 0.0f;
}
"""


def check(fmt: str, *paths: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return warplint("check", "--quiet", "--format", fmt, *paths, cwd=cwd)


# ----------------------------------------------------------------------------- concise


def test_concise_is_one_line_per_finding_with_code_and_message():
    result = check("concise", STRIDE4)
    assert result.returncode == 1
    assert result.stdout == f"{STRIDE4}:23:18: WL101 {STRIDE4_MESSAGE}\n"
    assert result.stderr == ""


def test_concise_reports_a_syntax_error(tmp_path):
    (tmp_path / "bad.cu").write_text(SYNTAX_ERROR)
    result = check("concise", "bad.cu", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == "bad.cu:3:28: WL901 syntax error: unexpected ';'\n"


def test_concise_lists_files_in_the_order_given_and_findings_in_source_order():
    result = check("concise", STRIDE4, "samples/000_vec3d_misspelled_align.cu")
    lines = result.stdout.splitlines()
    assert [line.split(": ", 1)[0] + ": " + line.split(": ", 2)[1].split()[0] for line in lines] == [
        f"{STRIDE4}:23:18: WL101",
        "samples/000_vec3d_misspelled_align.cu:15:8: WL906",
        "samples/000_vec3d_misspelled_align.cu:20:8: WL906",
    ]


# ----------------------------------------------------------------------------- json-lines


def test_json_lines_is_one_object_per_finding_with_every_field():
    result = check("json-lines", STRIDE4)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {
        "path": STRIDE4,
        "line": 23,
        "column": 18,
        "end_line": 23,
        "end_column": 38,
        "code": "WL101",
        "rule": "bank-conflict",
        "severity": "warning",
        "message": STRIDE4_MESSAGE,
        "fix": STRIDE4_FIX,
        "kernel": "bank_stride4",
        "args": {
            "ways": 4,
            "wavefronts": 4,
            "ideal": 1,
            "array": "data",
            "access": "data[base + 4 * tid]",
            "stride_bytes": 16,
        },
        "detail": ["lanes 0, 8, 16 and 24 hit bank 0 at 4 different words (0, 32, 64 and 96)"],
        "related": [
            {
                "path": STRIDE4,
                "line": 13,
                "column": 20,
                "end_line": 13,
                "end_column": 29,
                "message": "`data` declared here",
            }
        ],
        "fingerprint": "5f24a151a81c5579f38b205b17132797",
    }
    # the fingerprint is the SARIF report's, and so are args and detail
    (sarif_result,) = json.loads(check("sarif", STRIDE4).stdout)["runs"][0]["results"]
    assert sarif_result["partialFingerprints"] == {"warplintAccess/v1": "5f24a151a81c5579f38b205b17132797"}
    assert sarif_result["properties"]["args"] == json.loads(lines[0])["args"]
    assert sarif_result["properties"]["notes"] == json.loads(lines[0])["detail"]
    # the region is the access as written
    source = (REPO / STRIDE4).read_text().splitlines()[22]
    assert source[18 - 1 : 38 - 1] == "data[base + 4 * tid]"


def test_json_lines_reports_a_syntax_error_as_an_error_without_kernel(tmp_path):
    (tmp_path / "bad.cu").write_text(SYNTAX_ERROR)
    result = check("json-lines", "bad.cu", cwd=tmp_path)
    assert result.returncode == 1
    (sarif_result,) = json.loads(check("sarif", "bad.cu", cwd=tmp_path).stdout)["runs"][0]["results"]
    sarif_fingerprint = sarif_result["partialFingerprints"]["warplintAccess/v1"]
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {
            "path": "bad.cu",
            "line": 3,
            "column": 28,
            "end_line": 3,
            "end_column": 29,
            "code": "WL901",
            "rule": "syntax-error",
            "severity": "error",
            "message": "syntax error: unexpected ';'",
            "fix": None,
            "kernel": None,
            "args": {},
            "detail": [],
            "related": [],
            "fingerprint": sarif_fingerprint,
        }
    ]


def test_json_lines_has_one_line_for_each_of_many_findings():
    result = check("json-lines", "samples/004_noncoalesced_float3.cu")
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    text = check("concise", "samples/004_noncoalesced_float3.cu").stdout.splitlines()
    # `out[idx] = in[idx]` reads back the fields just stored: no request, so no finding at 19:19;
    # the load and the store of each `+=` are one finding (analyzer/places.py)
    assert len(objects) == len(text) == 6
    assert [(o["line"], o["column"], o["code"]) for o in objects] == [
        (15, 8, "WL201"),
        (15, 8, "WL301"),
        (16, 8, "WL201"),
        (17, 8, "WL201"),
        (19, 8, "WL201"),
        (19, 8, "WL301"),
    ]


# ----------------------------------------------------------------------------- github


def test_github_prints_a_warning_workflow_command_with_the_fix_on_a_second_line():
    result = check("github", STRIDE4)
    assert result.returncode == 1
    assert result.stdout == (
        f"::warning file={STRIDE4},line=23,col=18,endLine=23,endColumn=38,title=WL101 bank-conflict"
        f"::{STRIDE4_MESSAGE}%0Ahelp: {STRIDE4_FIX}\n"
    )


def test_github_reports_a_syntax_error_as_an_error_command(tmp_path):
    (tmp_path / "bad.cu").write_text(SYNTAX_ERROR)
    result = check("github", "bad.cu", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        "::error file=bad.cu,line=3,col=28,endLine=3,endColumn=29,title=WL901 syntax-error"
        "::syntax error: unexpected ';'\n"
    )


def test_github_reports_a_note_as_a_notice(tmp_path):
    (tmp_path / "t.cu").write_text(NEVER_LAUNCHED_TEMPLATE)
    result = check("github", "t.cu", cwd=tmp_path)
    assert result.returncode == 0  # a note is not a finding
    assert result.stdout.startswith(
        "::notice file=t.cu,line=2,col=17,endLine=2,endColumn=32,title=WL904 template-never-launched::"
    )


def test_github_escapes_percent_in_a_real_message():
    result = check("github", "samples/004_noncoalesced_float3.cu")
    first = result.stdout.splitlines()[0]
    assert first == (
        "::warning file=samples/004_noncoalesced_float3.cu,line=15,col=8,endLine=15,endColumn=17,"
        "title=WL201 uncoalesced-access::uncoalesced global load of `in[idx].x`: "
        "12 sectors per request, ideal 4 (33.3%25 efficiency)%0Ahelp: " + first.split("%0Ahelp: ", 1)[1]
    )
    assert "%" not in first.split("%0Ahelp: ", 1)[1].replace("%25", "")


def test_github_escapes_comma_and_colon_in_the_file_property(tmp_path):
    shutil.copy(REPO / STRIDE4, tmp_path / "odd,name:1.cu")
    result = check("github", "odd,name:1.cu", cwd=tmp_path)
    assert result.stdout.startswith(
        "::warning file=odd%2Cname%3A1.cu,line=23,col=18,endLine=23,endColumn=38,title=WL101 bank-conflict::"
    )
    concise = check("concise", "odd,name:1.cu", cwd=tmp_path)
    assert concise.stdout.startswith("odd,name:1.cu:23:18: WL101 ")


def test_github_escaping_follows_the_actions_toolkit():
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext%3A a%2C b"
    # `%` first, so an escape is never escaped twice
    assert escape_data("%0A") == "%250A"


def test_github_command_escapes_message_and_properties():
    record = Record(
        location=Location("dir/a,b.cu", 4, 2, 5, 7),
        code="WL101",
        rule="bank-conflict",
        severity="warning",
        message="50% of lanes:\nconflict",
        fix="pad, then re-run",
    )
    assert command(record, os.path.abspath("dir")) == (
        "::warning file=a%2Cb.cu,line=4,col=2,endLine=5,endColumn=7,title=WL101 bank-conflict"
        "::50%25 of lanes:%0Aconflict%0Ahelp: pad, then re-run"
    )


def test_github_paths_are_relative_to_the_git_root_not_the_current_folder():
    # run from inside samples/: GitHub resolves `file=` against the repository root
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    result = check("github", "000_bank_stride4.cu", cwd=REPO / "samples")
    assert result.stdout.startswith(f"::warning file={STRIDE4},line=23,col=18,")
    concise = check("concise", "000_bank_stride4.cu", cwd=REPO / "samples")
    assert concise.stdout.startswith("000_bank_stride4.cu:23:18: ")


# ----------------------------------------------------------------------------- every format


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_every_format_prints_the_syntax_error_and_exits_1(tmp_path, fmt):
    (tmp_path / "bad.cu").write_text(SYNTAX_ERROR)
    result = check(fmt, "bad.cu", cwd=tmp_path)
    assert result.returncode == 1
    assert "WL901" in result.stdout
    assert "unexpected ';'" in result.stdout


@pytest.mark.parametrize("fmt", ["concise", "json-lines", "github"])
def test_a_clean_file_prints_nothing_and_exits_0(tmp_path, fmt):
    (tmp_path / "ok.cu").write_text(CLEAN_KERNEL)
    result = check(fmt, "ok.cu", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ""


def test_output_format_is_an_alias_of_format():
    by_format = check("concise", STRIDE4)
    by_alias = warplint("check", "-q", "--output-format", "concise", STRIDE4, cwd=REPO)
    assert by_alias.returncode == by_format.returncode == 1
    assert by_alias.stdout == by_format.stdout


def test_help_lists_every_format():
    result = warplint("check", "--help", cwd=REPO)
    assert result.returncode == 0
    for fmt in FORMATS:
        assert fmt in result.stdout


def test_a_missing_file_is_exit_2_and_reported_in_concise(tmp_path):
    result = check("concise", "missing.cu", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == "missing.cu:1:1: WL910 no such file or folder\n"


def test_render_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render([], "xml")
    assert FORMATS[: len(LINE_FORMATS)] == LINE_FORMATS
