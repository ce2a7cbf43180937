"""Fixes as edits (`analyzer.fixes`): spelt in the file's own words, verified by re-analysis,
and applied by `check --fix` / `--diff` / `--show-fixes`; the same edits in JSON (`edits`)
and SARIF (`fixes`), validated against their schemas."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import api
from analyzer.findings import TextEdit
from analyzer.fixes import apply_edits, grown_expression, non_overlapping, offer_fixes, unified_diff
from analyzer.report import render

ROOT = Path(__file__).resolve().parents[1]

# Every finding here has a fix that is an edit: a transpose tile written with macros (32-way)
# and a 12-byte struct read by field.
MACROS = """\
#define TILE_DIM 32
struct vec3d { float x, y, z; };

__global__ void transpose(float *out, const float *in, int n)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void norm(const vec3d *v, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = v[i].x + v[i].y + v[i].z;
}

void launch(float *out, const float *in, const vec3d *v)
{
    dim3 grid(32, 32), block(32, 32);
    transpose<<<grid, block>>>(out, in, 1024);
    norm<<<4, 256>>>(v, out);
}
"""

FIXED = MACROS.replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][TILE_DIM + 1];").replace(
    "struct vec3d {", "struct __align__(16) vec3d {"
)

# A 16 x 16 transpose already padded by one: the column read is still 2-way, and conflict-free
# two elements wider (the row write stays 2-way whatever the padding: no edit for it).
HALF = """\
#define BLOCK_DIM 16
__global__ void transpose16(float *out, const float *in, int n)
{
    __shared__ float block[BLOCK_DIM][BLOCK_DIM+1];
    int x = blockIdx.x * BLOCK_DIM + threadIdx.x;
    int y = blockIdx.y * BLOCK_DIM + threadIdx.y;
    block[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[y * n + x] = block[threadIdx.x][threadIdx.y];
}

void launch(float *out, const float *in)
{
    dim3 grid(32, 32), b16(16, 16);
    transpose16<<<grid, b16>>>(out, in, 1024);
}
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "analyzer", "check", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def edits_of(report: api.FileReport) -> list[tuple[str, int, int, int, int, str]]:
    return sorted(
        {(f.code, e.line, e.column, e.end_line, e.end_column, e.text) for f in report.findings for e in f.text_edits}
    )


# ----------------------------------------------------------------------------- spelling


@pytest.mark.parametrize(
    ("written", "added", "expected"),
    [
        ("32", 1, "33"),
        ("32u", 2, "34u"),
        ("TILE_DIM", 1, "TILE_DIM + 1"),
        ("BLOCK_DIM+1", 1, "BLOCK_DIM+2"),
        ("2 * N + 1", 3, "2 * N + 4"),
        ("N << 1", 1, "(N << 1) + 1"),
        ("A << 1 + 1", 1, "(A << 1 + 1) + 1"),  # `+ 1` is not the last thing evaluated there
        ("(N+1)", 1, "(N+1) + 1"),
        ("f(N + 1)", 1, "f(N + 1) + 1"),
    ],
)
def test_a_grown_length_keeps_the_file_s_spelling(written, added, expected):
    assert grown_expression(written, added) == expected


def test_macro_sizes_are_padded_by_name_and_a_plus_one_grows_to_plus_two(tmp_path):
    (tmp_path / "t.cu").write_text(MACROS)
    report = api.check_file(str(tmp_path / "t.cu"))
    assert edits_of(report) == [
        ("WL101", 6, 37, 6, 45, "TILE_DIM + 1"),  # never `33`: the file says TILE_DIM
        ("WL301", 2, 1, 2, 7, "struct __align__(16)"),
    ]
    # the struct's fields are also uncoalesced loads (WL201): its `__align__` fixes them too, but
    # their own fix is advice, not an edit
    assert [f.code for f in report.findings if not f.text_edits] == ["WL201"] * 3
    (tmp_path / "half.cu").write_text(HALF)
    half = api.check_file(str(tmp_path / "half.cu"))
    assert edits_of(half) == [("WL101", 4, 39, 4, 50, "BLOCK_DIM+2")]  # never `17 + 1`
    assert [(f.code, half.locate(f.span).line) for f in half.findings if not f.text_edits] == [("WL101", 7)]


def test_the_fix_text_writes_the_padded_declarator_in_the_file_s_words(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.cu").write_text(MACROS)
    (tmp_path / "half.cu").write_text(HALF)
    for fixes in (False, True):  # a plain check and one that verifies the edits say the same
        options = api.Options(fixes=fixes)
        (tile,) = [f.fix for f in api.check_file("t.cu", options).findings if f.code == "WL101"][:1]
        assert tile.startswith("pad the last dimension: `__shared__ float tile[TILE_DIM][TILE_DIM + 1]` (33 floats")
        half = [f.fix for f in api.check_file("half.cu", options).findings if f.code == "WL101"]
        assert half[1].startswith("pad the last dimension: `__shared__ float block[BLOCK_DIM][BLOCK_DIM+2]` (18 floats")
        assert half[0].startswith("no padding of 1 to 32 elements")  # the row write: no edit, nothing respelt
    text = subprocess.run(
        [sys.executable, "-m", "analyzer", "check", "half.cu"], capture_output=True, text=True, cwd=tmp_path
    ).stdout
    assert "`__shared__ float block[BLOCK_DIM][BLOCK_DIM+2]`" in text and "17 + 1" not in text


def test_a_written_plus_k_grows_to_plus_k_plus_p_without_a_macro_too(tmp_path):
    (tmp_path / "t.cu").write_text(MACROS.replace("tile[TILE_DIM][TILE_DIM];", "tile[TILE_DIM][31+1];"))
    report = api.check_file(str(tmp_path / "t.cu"))
    assert [e for e in edits_of(report) if e[0] == "WL101"] == [("WL101", 6, 37, 6, 41, "31+2")]


def test_an_edit_is_offered_only_when_re_analysis_verifies_it(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text(MACROS)
    unverified = api.Options(fixes=False)
    report = api.check_file(str(path), unverified)
    assert [f.text_edits for f in report.findings] == [()] * len(report.findings)
    offer_fixes(report, MACROS, lambda edited: report)  # the "edited" text still has every finding
    assert [f.text_edits for f in report.findings] == [()] * len(report.findings)
    offer_fixes(report, MACROS, lambda edited: api.check_source(str(path), edited, unverified))
    assert len([f for f in report.findings if f.text_edits]) == 2


def test_an_edit_in_an_included_header_is_not_offered(tmp_path):
    (tmp_path / "tile.cuh").write_text("#define DECLARE_TILE __shared__ float tile[32][32];\n")
    source = '#include "tile.cuh"\n' + MACROS.replace("__shared__ float tile[TILE_DIM][TILE_DIM];", "DECLARE_TILE")
    (tmp_path / "t.cu").write_text(source)
    report = api.check_file(str(tmp_path / "t.cu"))
    assert [e for e in edits_of(report) if e[0] == "WL101"] == []  # `DECLARE_TILE` stands there


def test_overlapping_fixes_go_one_per_pass_and_apply_at_their_places():
    one = TextEdit("f.cu", 1, 5, 1, 7, "33")
    other = TextEdit("f.cu", 1, 5, 1, 7, "34")
    later = TextEdit("f.cu", 2, 1, 2, 1, "x")
    assert non_overlapping([(one,), (other,), (later,)]) == [one, later]
    assert apply_edits("int[32];\nb\n", [one, later]) == "int[33];\nxb\n"
    assert apply_edits("ab", [TextEdit("f.cu", 9, 1, 9, 1, "x")]) is None


def test_the_diff_is_unified_with_a_and_b_prefixes():
    diff = unified_diff("k.cu", "a\nb\n", "a\nc\n")
    assert diff.splitlines()[:2] == ["--- a/k.cu", "+++ b/k.cu"]
    assert "-b" in diff.splitlines() and "+c" in diff.splitlines()


# ----------------------------------------------------------------------------- the command line


def test_fix_changes_the_file_and_a_recheck_finds_nothing(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text(MACROS)
    done = run_cli("--fix", "t.cu", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text() == FIXED
    again = run_cli("t.cu", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "")


def test_fix_keeps_crlf_line_ends(tmp_path):
    path = tmp_path / "t.cu"
    path.write_bytes(MACROS.replace("\n", "\r\n").encode())
    assert run_cli("--fix", "--quiet", "t.cu", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_diff_prints_the_diff_and_leaves_the_file_unchanged(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text(MACROS)
    done = run_cli("--diff", "t.cu", cwd=tmp_path)
    assert done.returncode == 1
    assert path.read_text() == MACROS
    lines = done.stdout.splitlines()
    assert lines[:2] == ["--- a/t.cu", "+++ b/t.cu"]
    assert "-    __shared__ float tile[TILE_DIM][TILE_DIM];" in lines
    assert "+    __shared__ float tile[TILE_DIM][TILE_DIM + 1];" in lines
    assert "+struct __align__(16) vec3d { float x, y, z; };" in lines
    assert "Would fix 2 findings." in done.stderr
    # nothing to fix: no diff, exit 0
    (tmp_path / "ok.cu").write_text(FIXED)
    clean = run_cli("--diff", "ok.cu", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")


def test_show_fixes_lists_what_fix_would_apply_and_what_it_applied(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text(MACROS)
    listed = run_cli("--show-fixes", "--format", "concise", "t.cu", cwd=tmp_path)
    assert listed.returncode == 1
    assert path.read_text() == MACROS
    assert listed.stdout.splitlines()[-3:] == [
        "2 findings fixable with --fix:",
        "  t.cu:6:37: WL101 -> `TILE_DIM + 1`",
        "  t.cu:2:1: WL301 -> `struct __align__(16)`",
    ]
    applied = run_cli("--fix", "--show-fixes", "t.cu", cwd=tmp_path)
    assert applied.returncode == 0
    assert applied.stdout.splitlines()[0] == "Fixed 2 findings:"


# ----------------------------------------------------------------------------- JSON and SARIF


def test_json_findings_carry_their_edits_and_match_the_schema(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.cu").write_text(MACROS)
    document = json.loads(render(api.check_paths(["t.cu"]), "json"))
    jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "schema-v1.json").read_text())).validate(document)
    edits = [e for f in document["files"][0]["findings"] for e in f.get("edits", [])]
    assert {"path": "t.cu", "line": 6, "column": 37, "end_line": 6, "end_column": 45, "text": "TILE_DIM + 1"} in edits
    # the packaged schema is the same file
    from analyzer.report.json import schema

    assert schema()["$defs"]["finding"]["properties"]["edits"]["type"] == "array"


def test_json_lines_findings_carry_the_same_edits_as_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.cu").write_text(MACROS)
    reports = api.check_paths(["t.cu"])
    document = json.loads(render(reports, "json"))
    lines = [json.loads(line) for line in render(reports, "json-lines").splitlines()]
    assert [f.get("edits") for f in lines] == [f.get("edits") for f in document["files"][0]["findings"]]
    assert any(f.get("edits") for f in lines)


def test_sarif_results_carry_fixes_valid_against_the_sarif_schema(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.cu").write_text(MACROS)
    log = json.loads(render(api.check_paths(["t.cu"]), "sarif"))
    sarif_schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(sarif_schema).validate(log)
    fixes = [fix for result in log["runs"][0]["results"] for fix in result.get("fixes", [])]
    assert len(fixes) == 2
    change = next(f for f in fixes if "TILE_DIM + 1" in json.dumps(f))["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "t.cu"
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 6, "startColumn": 37, "endLine": 6, "endColumn": 45},
            "insertedContent": {"text": "TILE_DIM + 1"},
        }
    ]
