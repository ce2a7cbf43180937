"""Many files: worker processes (`-j N`) give the same report, in the same order, as one
process (`-j 1`); the progress line appears only on a terminal; `--statistics` counts.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from analyzer import api, cli

REPO = Path(__file__).resolve().parents[1]
SAMPLES = [
    "000_bank_stride4.cu",
    "000_vec3d_plain.cu",
    "002_transpose_naive.cu",
    "000_vec3d_misspelled_align.cu",
    "000_bank_stride1.cu",
]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Five samples in two folders (b: stride4, transpose, stride1; a: plain, misspelled),
    a binary file in a, a syntax error in b; the current folder is tmp_path."""
    monkeypatch.chdir(tmp_path)
    for i, name in enumerate(SAMPLES):
        folder = tmp_path / ("a" if i % 2 else "b")
        folder.mkdir(exist_ok=True)
        shutil.copy(REPO / "samples" / name, folder / name)
    (tmp_path / "a" / "blob.cu").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "b" / "broken.cu").write_text("__global__ void k( {\n", encoding="utf-8")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(["check", "--isolated", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_workers_give_the_same_text_report_as_one_process(tree, capsys):
    one = run(capsys, "a", "b", "missing.cu", "-j", "1")
    many = run(capsys, "a", "b", "missing.cu", "-j", "3")
    assert one == many
    status, out, _err = one
    assert status == 2  # the binary file and the missing path are tool errors
    assert out.splitlines()[-1] == "missing.cu:1:1: error: no such file or folder [WL910]"
    assert "a/blob.cu:1:1: error: binary file, not CUDA source text [WL910]" in out.splitlines()


def test_workers_give_the_same_json_report_as_one_process(tree, capsys):
    one = run(capsys, "b", "a", "--format", "json", "-j", "1", "-q")
    many = run(capsys, "b", "a", "--format", "json", "-j", "2", "-q")
    assert one == many
    document = json.loads(one[1])
    assert [f["path"] for f in document["files"]] == [
        "b/000_bank_stride1.cu",
        "b/000_bank_stride4.cu",
        "b/002_transpose_naive.cu",
        "b/broken.cu",
        "a/000_vec3d_misspelled_align.cu",
        "a/000_vec3d_plain.cu",
        "a/blob.cu",
    ]
    assert sum(len(f["findings"]) for f in document["files"]) > 0


def test_reports_come_back_in_input_order_with_their_findings_intact(tree):
    # the slow file first: it finishes last in a pool, and must still come first
    paths = ["b/002_transpose_naive.cu", "b/000_bank_stride4.cu", "a/000_vec3d_plain.cu"]
    done: list[tuple[int, int]] = []
    pooled = api.check_paths(paths, jobs=3, progress=lambda d, t: done.append((d, t)))
    alone = api.check_paths(paths, jobs=1)
    assert [r.path for r in pooled] == paths
    assert done == [(1, 3), (2, 3), (3, 3)]
    for a, b in zip(pooled, alone):
        assert [(f.code, f.span, f.message, dict(f.args)) for f in a.findings] == [
            (f.code, f.span, f.message, dict(f.args)) for f in b.findings
        ]
        assert a.diagnostics == b.diagnostics
        assert [a.locate(f.span) for f in a.findings] == [b.locate(f.span) for f in b.findings]
    assert all(isinstance(f.args, types.MappingProxyType) for r in pooled for f in r.findings)
    assert len(pooled[1].kernels) == len(alone[1].kernels) == 1


def test_options_for_is_asked_for_each_file_before_any_work(tree):
    asked: list[str] = []

    def options_for(path: str) -> api.Options:
        asked.append(path)
        if path.endswith("plain.cu"):
            raise RuntimeError("stop")
        return api.Options(select=["WL201"])

    with pytest.raises(RuntimeError):
        api.check_paths(["b/000_bank_stride4.cu", "a/000_vec3d_plain.cu"], jobs=2, options_for=options_for)
    assert asked == ["b/000_bank_stride4.cu", "a/000_vec3d_plain.cu"]
    reports = api.check_paths(["b/000_bank_stride4.cu"], options_for=lambda p: api.Options(select=["WL201"]))
    assert reports[0].findings == []


def test_no_progress_line_in_a_pipe(tree):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "analyzer", "check", "--isolated", "b", "-j", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 1
    assert "checked" not in result.stderr and "\r" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("Found ")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_only_after_half_a_second():
    now = [0.0]
    stream = _Terminal()
    bar = cli._Progress(stream, clock=lambda: now[0])
    bar.update(1, 40)
    now[0] = 0.4
    bar.update(2, 40)
    assert stream.getvalue() == ""
    now[0] = 0.6
    bar.update(12, 40)
    bar.update(13, 40)
    bar.close()
    assert stream.getvalue() == "\rchecked 12/40 files\rchecked 13/40 files\r\x1b[K"


def test_progress_line_never_in_a_file():
    now = [0.0]
    stream = io.StringIO()  # not a terminal
    bar = cli._Progress(stream, clock=lambda: now[0])
    now[0] = 5.0
    bar.update(1, 2)
    bar.close()
    assert stream.getvalue() == ""


def test_jobs_must_be_a_positive_number(tree, capsys):
    for bad in ("0", "two", "-1"):
        status, out, err = run(capsys, "b", "-j", bad)
        assert (status, out) == (2, "")
        assert "argument -j/--jobs" in err


# ----------------------------------------------------------------------------- --statistics

KERNEL = """\
__global__ void k(const float* in, float* out)
{
    __shared__ float tile[32 * 32];
    int t = threadIdx.x;
    tile[t * 4] = in[t * 2];
    out[t] = tile[t * 8];
}
int main() { float *a, *b; k<<<1, 32>>>(a, b); }
"""


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two copies of a kernel with two bank conflicts and one uncoalesced load, a file with
    a syntax error, and a clean one."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k1.cu").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "k2.cu").write_text(KERNEL, encoding="utf-8")
    (tmp_path / "s.cu").write_text("__global__ void k( {\n", encoding="utf-8")
    (tmp_path / "z.cu").write_text(
        KERNEL.replace("t * 4", "t").replace("t * 2", "t").replace("t * 8", "t"), encoding="utf-8"
    )
    return tmp_path


def test_statistics_count_each_code_after_the_report(kernels, capsys):
    status, out, _err = run(capsys, ".", "--statistics", "--format", "concise", "-j", "2")
    assert status == 1
    assert out.splitlines()[-3:] == [
        "   4  WL101  bank-conflict",
        "   2  WL201  uncoalesced-access",
        "   1  WL901  syntax-error",
    ]
    assert len(out.splitlines()) == 7 + 3


def test_statistics_go_to_stderr_after_a_json_report(kernels, capsys):
    _status, out, err = run(capsys, "k1.cu", "--statistics", "--format", "json", "-q")
    assert [f["code"] for f in json.loads(out)["files"][0]["findings"]] == ["WL101", "WL201", "WL101"]
    assert err == "   2  WL101  bank-conflict\n   1  WL201  uncoalesced-access\n"


def test_statistics_of_a_clean_run_print_nothing(kernels, capsys):
    assert run(capsys, "z.cu", "--statistics", "-q") == (0, "", "")
