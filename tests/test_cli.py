"""The `warplint` command line, run as users run it: `python -m analyzer ...` in a subprocess.

Exit codes are exact (0 clean, 1 findings, 2 usage or tool error), every report line is
in gcc's shape (what VS Code's `$gcc` problem matcher reads), and nothing ever prints a
Python traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from analyzer import api
from kernel_texts import CLEAN_KERNEL  # tests/kernel_texts.py
from runner import warplint  # tests/runner.py

REPO = Path(__file__).resolve().parents[1]
GCC_LINE = re.compile(r"^(.*):(\d+):(\d+):\s+(warning|error|note):\s+(.*)$")


CONFLICT_KERNEL = """\
__global__ void stride32(const float* in, float* out)
{
    __shared__ float tile[32 * 32];
    int t = threadIdx.x;
    tile[t] = in[t];
    __syncthreads();
    out[t] = tile[t * 32];
}

int main()
{
    float *in, *out;
    stride32<<<1, 32>>>(in, out);
    return 0;
}
"""


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


def report_lines(stdout: str) -> list[str]:
    """The lines a problem matcher reads: everything not indented."""
    return [line for line in stdout.splitlines() if line and not line.startswith(" ")]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# ----------------------------------------------------------------------------- usage errors: exit 2


def test_no_arguments_is_a_usage_error(tmp_path):
    result = warplint(cwd=tmp_path)
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert_no_traceback(result)


@pytest.mark.parametrize(
    "option",
    [
        ["--block", "x"],
        ["--block", "32,x"],
        ["--block", "32,8,2,1"],
        ["--block", "0"],
        ["--block", "-32"],
        ["--block", "64,32"],  # 2048 threads per block
        ["--block", "1,1,65"],  # z is at most 64
        ["--grid", "x"],
        ["--param", "n"],
        ["--param", "n=many"],
        ["--param", "1n=3"],
        ["--arch", "sm_50"],
        ["-D", "1BAD"],
        ["--format", "xml"],
        ["--select", ","],
    ],
    ids=lambda option: " ".join(option),
)
def test_a_bad_option_is_a_usage_error_with_exit_2(tmp_path, option):
    source = write(tmp_path / "k.cu", "struct S { int a; };\n")
    result = warplint("check", *option, str(source), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "error:" in result.stderr
    assert option[0] in result.stderr or "argument" in result.stderr
    assert result.stdout == ""
    assert_no_traceback(result)


def test_a_struct_parameters_field_can_be_given_with_param(tmp_path):
    # 003_matmul_global.cu: `A.elements[row * A.width + e]`; with the widths given, the
    # 16-wide blocks' row starts are known and the loads of B and the store of C are ideal
    sample = Path(__file__).resolve().parents[1] / "samples" / "003_matmul_global.cu"
    result = warplint(
        "check",
        "--format",
        "json",
        "--param",
        "A.width=4096",
        "--param",
        "B.width=4096",
        "--param",
        "C.width=4096",
        str(sample),
        cwd=tmp_path,
    )
    accesses = {a["text"]: a for k in json.loads(result.stdout)["files"][0]["kernels"] for a in k["accesses"]}
    assert (
        accesses["B.elements[e * B.width + col]"]["per_request"],
        accesses["B.elements[e * B.width + col]"]["exact"],
    ) == (2, True)
    assert accesses["C.elements[row * C.width + col]"]["per_request"] == 4


def test_block_x_names_the_expected_form(tmp_path):
    result = warplint("check", "--block", "x", "k.cu", cwd=tmp_path)
    assert result.returncode == 2
    assert "X[,Y[,Z]]" in result.stderr


def test_warplint_without_a_command_or_paths_is_a_usage_error(tmp_path):
    # `warplint check` alone checks `.` (tests/test_habits.py); `warplint` alone is not a run
    result = warplint(cwd=tmp_path)
    assert result.returncode == 2
    assert_no_traceback(result)


def test_version_and_help_exit_0(tmp_path):
    version = warplint("version", cwd=tmp_path)
    assert version.returncode == 0
    assert re.fullmatch(r"warplint \d+\.\d+\.\d+\S*\n", version.stdout)
    assert warplint("--version", cwd=tmp_path).stdout == version.stdout
    help_ = warplint("--help", cwd=tmp_path)
    assert help_.returncode == 0
    for command in ("check", "explain", "rules", "version"):
        assert command in help_.stdout
    check_help = warplint("check", "--help", cwd=tmp_path)
    assert check_help.returncode == 0
    for option in (
        "--format",
        "--output-format",
        "--output",
        "--block",
        "--grid",
        "--param",
        "--arch",
        "-D",
        "-I",
        "--select",
        "--ignore",
        "--exit-zero",
        "--quiet",
        "--no-color",
    ):
        assert option in check_help.stdout


# ----------------------------------------------------------------------------- bad inputs: exit 2


def test_a_missing_path_is_one_gcc_error_line_and_exit_2(tmp_path):
    result = warplint("check", "nowhere.cu", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    match = GCC_LINE.match(lines[0])
    assert match and match.group(1) == "nowhere.cu" and match.group(4) == "error"
    assert (match.group(2), match.group(3)) == ("1", "1")
    assert_no_traceback(result)


def test_a_binary_file_is_one_error_line_and_no_traceback(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 8)
    result = warplint("check", "blob.cu", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    match = GCC_LINE.match(lines[0])
    assert match and match.group(1) == "blob.cu" and match.group(4) == "error"
    assert "binary" in match.group(5)
    assert_no_traceback(result)


def test_a_folder_given_to_check_file_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "kernels.cu").mkdir()
    report = api.check_file(str(tmp_path / "kernels.cu"))
    (diagnostic,) = report.diagnostics
    assert diagnostic.code == api.INPUT_ERROR and "folder" in diagnostic.message
    assert (diagnostic.location.line, diagnostic.location.column) == (1, 1)


def test_a_file_over_20_mb_is_refused_without_being_read(tmp_path):
    big = tmp_path / "huge.cu"
    with open(big, "wb") as handle:
        handle.truncate(api.MAX_FILE_BYTES + 1)
    result = warplint("check", "huge.cu", cwd=tmp_path)
    assert result.returncode == 2
    assert "too large" in result.stdout
    assert_no_traceback(result)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_an_error(tmp_path):
    locked = write(tmp_path / "locked.cu", "struct S { int a; };\n")
    locked.chmod(0)
    try:
        result = warplint("check", "locked.cu", cwd=tmp_path)
    finally:
        locked.chmod(0o644)
    assert result.returncode == 2
    assert "cannot read" in result.stdout
    assert_no_traceback(result)


def test_a_file_that_cannot_be_opened_is_a_tool_error_whoever_runs_the_tests(tmp_path, monkeypatch):
    """The test above cannot run as root (root reads any file); this one refuses the open itself."""
    locked = write(tmp_path / "locked.cu", "struct S { int a; };\n")
    real_open = open

    def refusing(file, *args, **kwargs):
        if os.fspath(file) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing)
    report = api.check_file(str(locked))
    assert [(d.code, d.message) for d in report.diagnostics] == [("WL910", "cannot read: Permission denied")]
    assert report.has_tool_error


def test_a_folder_without_cuda_files_is_a_warning_and_exit_0(tmp_path):
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "notes.txt", "nothing here\n")
    result = warplint("check", "empty", cwd=tmp_path)
    assert result.returncode == 0
    assert "warning: no .cu or .cuh files" in result.stdout


def test_paths_below_the_current_folder_are_shown_relative_and_others_absolute(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "blob.cu").write_bytes(b"\0\0\0")
    inside = warplint("check", str(tmp_path / "sub" / "blob.cu"), cwd=tmp_path)
    assert inside.stdout.startswith("sub/blob.cu:1:1: error:")
    outside = warplint("check", str(tmp_path / "sub" / "blob.cu"), cwd=tmp_path / "sub" / "..")
    assert outside.stdout.startswith("sub/blob.cu:1:1:")
    (tmp_path / "elsewhere").mkdir()
    far = warplint("check", str(tmp_path / "sub" / "blob.cu"), cwd=tmp_path / "elsewhere")
    assert far.stdout.startswith(str(tmp_path / "sub" / "blob.cu") + ":1:1:")


def test_a_bad_file_does_not_stop_the_others(tmp_path):
    (tmp_path / "a_blob.cu").write_bytes(b"\0")
    write(tmp_path / "b_plain.cu", "struct S { int a; };\n")
    result = warplint("check", "--format", "json", ".", cwd=tmp_path)
    assert result.returncode == 2
    files = json.loads(result.stdout)["files"]
    assert [f["path"] for f in files] == ["a_blob.cu", "b_plain.cu"]
    assert files[0]["errors"][0]["code"] == api.INPUT_ERROR
    assert files[1]["errors"] == []


def test_an_internal_error_is_a_diagnostic_at_line_1_and_the_next_file_is_analysed(tmp_path):
    write(tmp_path / "a.cu", "struct BOOM { int a; };\n")
    write(tmp_path / "b.cu", '#include "missing.h"\nstruct S { int a; };\n')
    script = textwrap.dedent("""\
        import sys
        import analyzer.syntax.parse as stage
        real = stage.parse
        def parse(text):
            if "BOOM" in text:
                raise RuntimeError("synthetic failure")
            return real(text)
        stage.parse = parse
        from analyzer.cli import main
        raise SystemExit(main(sys.argv[1:]))
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-c", script, "check", "a.cu", "b.cu"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert_no_traceback(result)
    lines = report_lines(result.stdout)
    assert lines[0].startswith("a.cu:1:1: error: internal error")
    assert "synthetic failure" in lines[0] and lines[0].endswith("[WL900]")
    assert any(line.startswith("b.cu:1:") and "missing.h" in line for line in lines[1:])


# ----------------------------------------------------------------------------- options reach the pipeline


def test_include_paths_are_searched(tmp_path):
    write(tmp_path / "src" / "k.cu", '#include "defs.h"\nstruct S { int a[N]; };\n')
    write(tmp_path / "include" / "defs.h", "#define N 4\n")
    without = warplint("check", "src/k.cu", cwd=tmp_path)
    assert without.returncode == 1
    assert "defs.h" in without.stdout
    with_ = warplint("check", "-I", "include", "src/k.cu", cwd=tmp_path)
    assert with_.returncode == 0, with_.stdout
    assert with_.stdout == ""


def test_output_writes_the_report_to_a_file(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\0")
    result = warplint("check", "--output-format", "json", "--output", "out.json", "blob.cu", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["files"][0]["errors"][0]["severity"] == "error"


def test_the_summary_goes_to_stderr_unless_quiet(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\0")
    loud = warplint("check", "blob.cu", cwd=tmp_path)
    assert "Found 1 error in 1 file." in loud.stderr  # an error alone: never "No findings"
    quiet = warplint("check", "--quiet", "blob.cu", cwd=tmp_path)
    assert quiet.stderr == ""
    assert quiet.stdout == loud.stdout


def test_no_colour_when_not_a_terminal(tmp_path):
    (tmp_path / "blob.cu").write_bytes(b"\0")
    result = warplint("check", "blob.cu", cwd=tmp_path)
    assert "\x1b[" not in result.stdout


def test_importing_the_cli_imports_nothing_heavy(tmp_path):
    probe = textwrap.dedent("""\
        import sys
        from analyzer import cli
        assert cli.main(["version"]) == 0
        try:
            cli.main(["--help"])
        except SystemExit:
            pass
        heavy = sorted(m for m in ("networkx", "numpy", "jsonschema", "lark") if m in sys.modules)
        print("HEAVY", heavy)
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout


def test_checking_a_file_without_the_cache_imports_neither_subprocess_nor_tempfile(tmp_path):
    write(tmp_path / "copy.cu", CLEAN_KERNEL)
    probe = textwrap.dedent("""\
        import sys
        from analyzer import cli
        assert cli.main(["check", "-q", "--no-cache", "copy.cu"]) == 0
        print("LOADED", sorted(m for m in ("subprocess", "tempfile") if m in sys.modules))
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout


# ----------------------------------------------------------------------------- the whole pipeline


def test_a_clean_file_exits_0_and_prints_nothing(tmp_path):
    write(tmp_path / "copy.cu", CLEAN_KERNEL)
    result = warplint("check", "copy.cu", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "No findings in 1 file." in result.stderr
    assert_no_traceback(result)


def test_a_32_way_bank_conflict_exits_1_in_gcc_shape(tmp_path):
    write(tmp_path / "conflict.cu", CONFLICT_KERNEL)
    result = warplint("check", "conflict.cu", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert_no_traceback(result)
    lines = report_lines(result.stdout)
    assert lines, result.stdout
    for line in lines:
        assert GCC_LINE.match(line), line
    first = GCC_LINE.match(lines[0])
    assert first.group(1) == "conflict.cu"
    assert first.group(2) == "7"  # out[t] = tile[t * 32];
    assert first.group(4) == "warning"
    assert re.search(r"\[WL1\d\d\]$", first.group(5))
    for line in result.stdout.splitlines():
        if line.startswith(" "):
            assert re.match(r"^    = (note|help): |^ {12}", line), line
            assert not GCC_LINE.match(line)
    assert re.search(r"Found \d+ findings? in 1 file\.", result.stderr)


def test_exit_zero_and_ignore_turn_findings_into_exit_0(tmp_path):
    write(tmp_path / "conflict.cu", CONFLICT_KERNEL)
    assert warplint("check", "--exit-zero", "conflict.cu", cwd=tmp_path).returncode == 0
    codes = set(re.findall(r"\[(WL\d+)\]$", warplint("check", "conflict.cu", cwd=tmp_path).stdout, re.M))
    ignored = warplint("check", "--ignore", ",".join(sorted(codes)), "conflict.cu", cwd=tmp_path)
    assert ignored.returncode == 0, ignored.stdout
    assert ignored.stdout == ""


def test_block_option_overrides_the_launch(tmp_path):
    write(tmp_path / "conflict.cu", CONFLICT_KERNEL)
    result = warplint("check", "--format", "json", "--block", "64", "conflict.cu", cwd=tmp_path)
    (kernel,) = json.loads(result.stdout)["files"][0]["kernels"]
    assert kernel["launch"]["block"] == [64, 1, 1]


def test_defines_reach_the_preprocessor(tmp_path):
    write(tmp_path / "k.cu", "#ifdef WITH_KERNEL\n" + CLEAN_KERNEL + "#endif\n")
    without = json.loads(warplint("check", "--format", "json", "k.cu", cwd=tmp_path).stdout)
    assert without["files"][0]["kernels"] == []
    with_ = json.loads(warplint("check", "--format", "json", "-D", "WITH_KERNEL", "k.cu", cwd=tmp_path).stdout)
    assert [k["name"] for k in with_["files"][0]["kernels"]] == ["copy"]


def test_a_folder_is_searched_for_cu_and_cuh_files(tmp_path):
    write(tmp_path / "src" / "a.cu", CLEAN_KERNEL)
    write(tmp_path / "src" / "deep" / "b.cuh", "struct S { int a; };\n")
    write(tmp_path / "src" / "c.cpp", "this is not checked")
    write(tmp_path / "src" / ".hidden" / "d.cu", "this is not checked")
    result = warplint("check", "--format", "json", "src", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert [f["path"] for f in json.loads(result.stdout)["files"]] == ["src/a.cu", "src/deep/b.cuh"]


@pytest.mark.slow
def test_the_samples_folder_never_crashes(tmp_path):
    result = warplint("check", str(REPO / "samples"), cwd=REPO)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "internal error" not in result.stdout
    assert_no_traceback(result)
    for line in report_lines(result.stdout):
        assert GCC_LINE.match(line), line


def test_explain_prints_a_rules_documentation(tmp_path):
    result = warplint("explain", "WL101", cwd=tmp_path)
    assert result.returncode == 0
    assert "What it does" in result.stdout


def test_explain_of_an_unknown_rule_is_exit_2(tmp_path):
    result = warplint("explain", "WL999", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown rule" in result.stderr
    assert_no_traceback(result)


def test_rules_lists_every_rule(tmp_path):
    result = warplint("rules", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("CODE")
    assert re.search(r"^WL1\d\d\s", result.stdout, re.M)


# ----------------------------------------------------------------------------- inputs, in process


@pytest.mark.parametrize(
    ("probe", "binary"),
    [
        (b"", False),
        (b"__global__ void k() {}\n", False),
        ("// 共享内存的 bank 冲突\n__global__ void k() {}\n".encode(), False),
        ("// café\n".encode("latin-1") + b"int x;\n" * 20, False),  # a few non-UTF-8 bytes
        ("// 共享内存".encode()[:-1], False),  # a character cut at the probe's end
        (b"int x;\0", True),
        (bytes(range(128, 256)) * 4, True),
        (b"\x01\x02\x03\x04" * 100 + b"int x;", True),
    ],
    ids=["empty", "ascii", "utf8-comments", "latin1-comment", "cut-character", "nul", "high-bytes", "controls"],
)
def test_binary_detection(probe, binary):
    assert api.looks_binary(probe) is binary


def test_binary_detection_counts_the_non_text_bytes_as_a_count_byte_by_byte_does():
    def plain(probe: bytes, utf8: bool) -> bool:  # the count as the rule says it
        controls = b"\t\n\r\f\v\b\x1b"
        odd = sum(1 for b in probe if (b < 0x20 and b not in controls) or b == 0x7F or (b >= 0x80 and not utf8))
        return odd > 0.30 * len(probe)

    for byte in range(1, 256):
        for text in (b"int x;", b"int x = 1; // a longer line of text\n"):
            probe = bytes([byte]) * 3 + text
            utf8 = byte < 0x80
            assert api.looks_binary(probe) is plain(probe, utf8), (byte, text)
    assert api.looks_binary("é€".encode() * 40) is plain("é€".encode() * 40, True) is False


def test_folders_are_searched_in_order_and_each_file_counts_once(tmp_path):
    write(tmp_path / "b.cu", "")
    write(tmp_path / "a" / "z.cuh", "")
    write(tmp_path / "a" / "y.txt", "")
    write(tmp_path / ".git" / "x.cu", "")
    found = api.collect_files([str(tmp_path), str(tmp_path / "b.cu"), str(tmp_path / "missing.cu")])
    assert found == [
        (str(tmp_path / "a" / "z.cuh"), None),
        (str(tmp_path / "b.cu"), None),
        (str(tmp_path / "missing.cu"), "no such file or folder"),
    ]


def test_the_readmes_example_output_is_what_warplint_prints():
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Example output", 1)[1].split("```", 2)[1]
    command, *expected = block.strip("\n").splitlines()
    assert command.startswith("$ warplint check ")
    result = warplint(*command.removeprefix("$ warplint ").split(), cwd=REPO)
    # stdout, then the summary line that goes to stderr
    assert (result.stdout + result.stderr).splitlines() == expected
