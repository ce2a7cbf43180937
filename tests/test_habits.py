"""The habits of ruff and clang-tidy users, run as users run them: `python -m analyzer` in a
subprocess, with exact stdout lines and exit codes.

`exclude`/`extend-exclude` (options and configuration keys), `.gitignore` (with git and with
the small reader), `--format full` and `grouped`, `show FILE:LINE:COL`, `-` with
`--stdin-filename`, `.` as the default path, `--color`/`FORCE_COLOR`/`NO_COLOR`, `explain` of
every WL9xx code, and a missing path counted as an error in the summary.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from analyzer.rules.diagnostic_docs import SECTIONS
from analyzer.rules.registry import DIAGNOSTIC_CODES, rule_documentation
from analyzer.walk import Walk, anchored
from runner import warplint  # tests/runner.py

REPO = Path(__file__).resolve().parents[1]
STRIDE4 = (REPO / "samples" / "000_bank_stride4.cu").read_text()

STRIDED = """\
__global__ void strided(float* x)
{
    x[32 * threadIdx.x] = 1.0f;
}
"""
STRIDED_LINE = "{}:3:5: WL201 uncoalesced global store of `x[32 * threadIdx.x]`: 32 sectors per request, ideal 4 (12.5% efficiency)"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """src/a.cu, build/b.cu, third_party/c.cu, gen/d.cu: one finding each."""
    for name in ("src/a.cu", "build/b.cu", "third_party/c.cu", "gen/d.cu"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(STRIDED)
    return tmp_path


def files_in(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line.split(":")[0] for line in result.stdout.splitlines()]


# ----------------------------------------------------------------------------- exclude


def test_a_folder_search_leaves_out_ruffs_default_excludes(tree):
    result = warplint("check", "--format", "concise", ".", cwd=tree)
    assert result.returncode == 1
    assert files_in(result) == ["gen/d.cu", "src/a.cu", "third_party/c.cu"]  # build/ left out


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tree):
    replaced = warplint("check", "--format", "concise", "--exclude", "third_party,gen", ".", cwd=tree)
    assert files_in(replaced) == ["build/b.cu", "src/a.cu"]
    extended = warplint("check", "--format", "concise", "--extend-exclude", "third_party/*", ".", cwd=tree)
    assert files_in(extended) == ["gen/d.cu", "src/a.cu"]


def test_a_file_named_explicitly_is_checked_even_when_excluded(tree):
    result = warplint("check", "--format", "concise", "--exclude", "src", "src/a.cu", cwd=tree)
    assert result.stdout.splitlines() == [STRIDED_LINE.format("src/a.cu")]


def test_exclude_and_extend_exclude_are_configuration_keys(tree):
    (tree / "warplint.toml").write_text('exclude = ["gen"]\nextend-exclude = ["third_party/c.cu"]\n')
    result = warplint("check", "--format", "concise", cwd=tree)
    assert files_in(result) == ["build/b.cu", "src/a.cu"]
    isolated = warplint("check", "--format", "concise", "--isolated", cwd=tree)
    assert files_in(isolated) == ["gen/d.cu", "src/a.cu", "third_party/c.cu"]


def test_globs_with_a_slash_are_anchored_to_their_folder(tmp_path):
    walk = Walk(exclude=anchored(["third_party/*", "*.gen.cu"], str(tmp_path)))
    assert walk.excluded(str(tmp_path / "third_party" / "c.cu"))
    assert walk.excluded(str(tmp_path / "src" / "k.gen.cu"))
    assert not walk.excluded(str(tmp_path / "src" / "third_party" / "c.cu"))


# ----------------------------------------------------------------------------- .gitignore


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_is_respected_in_a_git_work_tree(tree):
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    (tree / ".gitignore").write_text("gen/\n")
    result = warplint("check", "--format", "concise", cwd=tree)
    assert files_in(result) == ["src/a.cu", "third_party/c.cu"]
    everything = warplint("check", "--format", "concise", "--no-respect-gitignore", cwd=tree)
    assert files_in(everything) == ["gen/d.cu", "src/a.cu", "third_party/c.cu"]


def test_gitignore_is_read_outside_a_git_work_tree(tree):
    (tree / ".gitignore").write_text("# generated\ngen/\n*.cu\n!a.cu\n")
    result = warplint("check", "--format", "concise", cwd=tree)
    assert files_in(result) == ["src/a.cu"]


def test_respect_gitignore_is_a_configuration_key(tree):
    (tree / ".gitignore").write_text("gen/\n")
    (tree / "warplint.toml").write_text("respect-gitignore = false\n")
    assert files_in(warplint("check", "--format", "concise", cwd=tree)) == ["gen/d.cu", "src/a.cu", "third_party/c.cu"]


# ----------------------------------------------------------------------------- formats


def test_full_shows_the_source_line_with_carets_under_the_access(tmp_path):
    (tmp_path / "k.cu").write_text(STRIDE4)
    result = warplint("check", "--format", "full", "k.cu", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:4] == [
        "k.cu:23:18: warning: 4-way bank conflict on `data`: 4 wavefronts per request, ideal 1 [WL101]",
        "   23 |     int number = data[base + 4 * tid];",
        "      |                  ^~~~~~~~~~~~~~~~~~~~",
        "    = note: in kernel `bank_stride4`",
    ]


def test_text_stays_gccs_one_line_and_concise_one_line_a_finding(tmp_path):
    (tmp_path / "k.cu").write_text(STRIDE4)
    text = warplint("check", "k.cu", cwd=tmp_path).stdout.splitlines()
    assert text[1] == "    = note: in kernel `bank_stride4`"
    concise = warplint("check", "--format", "concise", "k.cu", cwd=tmp_path).stdout.splitlines()
    assert concise == ["k.cu:23:18: WL101 4-way bank conflict on `data`: 4 wavefronts per request, ideal 1"]


def test_grouped_lists_findings_under_their_file(tree):
    result = warplint("check", "--format", "grouped", "src", "gen", cwd=tree)
    assert result.returncode == 1
    message = (
        "WL201 uncoalesced global store of `x[32 * threadIdx.x]`: 32 sectors per request, ideal 4 (12.5% efficiency)"
    )
    assert result.stdout.splitlines() == ["src/a.cu:", f"  3:5 {message}", "", "gen/d.cu:", f"  3:5 {message}", ""]


# ----------------------------------------------------------------------------- paths


def test_check_without_paths_checks_the_current_folder(tree):
    result = warplint("check", "--format", "concise", cwd=tree / "src")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [STRIDED_LINE.format("a.cu")]


def test_stdin_is_reported_under_stdin_filename_with_includes_beside_it(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "h.cuh").write_text(STRIDED)
    source = '#include "h.cuh"\n'
    result = warplint("check", "--format", "concise", "-", "--stdin-filename", "src/k.cu", cwd=tmp_path, stdin=source)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [STRIDED_LINE.format("src/h.cuh")]
    clean = warplint("check", "-", "--stdin-filename", "src/k.cu", cwd=tmp_path, stdin="int x;\n")
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "No findings in 1 file.\n")


def test_stdin_must_be_the_only_path(tmp_path):
    result = warplint("check", "-", "k.cu", cwd=tmp_path, stdin="")
    assert result.returncode == 2
    assert result.stderr == "warplint: error: `-` (standard input) must be the only path\n"


def test_a_missing_path_is_an_error_in_the_summary(tmp_path):
    result = warplint("check", "nonexist.cu", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == "nonexist.cu:1:1: error: no such file or folder [WL910]\n"
    assert result.stderr == "Found 1 error in 1 file.\n"


# ----------------------------------------------------------------------------- show


def test_show_takes_the_position_check_prints(tmp_path):
    (tmp_path / "k.cu").write_text(STRIDE4)
    by_option = warplint("show", "k.cu:23", "--column", "18", cwd=tmp_path)
    for where in ("k.cu:23:18", "k.cu:23:18:"):
        result = warplint("show", where, cwd=tmp_path)
        assert result.returncode == 0
        assert result.stdout == by_option.stdout
        assert result.stdout.startswith("k.cu:23:18: shared load `data[base + 4 * tid]` in kernel `bank_stride4`")
    bad = warplint("show", "k.cu:x", cwd=tmp_path)
    assert bad.returncode == 2
    assert "expected a file and a 1-based line (and column)" in bad.stderr


# ----------------------------------------------------------------------------- colour


@pytest.mark.parametrize(
    "env, flags, coloured",
    [
        ({}, (), False),  # not a terminal
        ({"FORCE_COLOR": "1"}, (), True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, (), False),
        ({"NO_COLOR": "1"}, ("--color", "always"), True),
        ({"FORCE_COLOR": "1"}, ("--color", "never"), False),
        ({"FORCE_COLOR": "1"}, ("--no-color",), False),
        ({}, ("--color", "always", "--format", "json"), False),  # never in a format for programs
    ],
)
def test_colour_follows_color_then_no_color_then_force_color(tmp_path, env, flags, coloured):
    (tmp_path / "k.cu").write_text(STRIDE4)
    result = warplint("check", *flags, "k.cu", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert ("\x1b[" in result.stdout) is coloured


# ----------------------------------------------------------------------------- explain


@pytest.mark.parametrize("code", sorted(DIAGNOSTIC_CODES))
def test_every_diagnostic_code_says_what_it_means_whether_it_matters_and_what_to_do(code):
    doc = rule_documentation(code)
    positions = [doc.find(section) for section in SECTIONS]
    assert all(p > 0 for p in positions) and positions == sorted(positions)
    bodies = [doc[start:end] for start, end in zip(positions, [*positions[1:], len(doc)])]
    assert all(len(body.split("\n", 1)[1].strip()) > 20 for body in bodies)


def test_explain_prints_a_diagnostic_codes_three_parts(tmp_path):
    result = warplint("explain", "WL903", cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "WL903 lowering-problem: a statement or expression could not be lowered to the IR"
    assert [line for line in lines if line.startswith("## ")] == list(SECTIONS)
