"""`python -m analyzer` and the `warplint` command end without tearing the interpreter down
(`cli.entry`): what they print and their exit status are those of `cli.main`."""

from __future__ import annotations

import subprocess
import sys

KERNEL = "__global__ void k(float *a) { a[threadIdx.x * 32] = 0.0f; }\n"


#: `python -m analyzer`, and the `warplint` command's entry point as the installed script calls it
WAYS = (
    [sys.executable, "-m", "analyzer"],
    [sys.executable, "-c", "import sys; from analyzer.cli import entry; entry()"],
)


def run(tmp_path, *args: str, way: int = 0) -> subprocess.CompletedProcess:
    (tmp_path / "k.cu").write_text(KERNEL)
    command = [*WAYS[way], "check", "--no-cache", "--isolated", "--block", "32", *args, "k.cu"]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)


def test_the_command_entry_point_is_the_fast_exit():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["warplint"] == "analyzer.cli:entry"


def test_the_entry_point_prints_and_exits_as_python_m(tmp_path):
    by_module, by_entry = run(tmp_path, "--format", "concise"), run(tmp_path, "--format", "concise", way=1)
    assert (by_entry.returncode, by_entry.stdout, by_entry.stderr) == (1, by_module.stdout, by_module.stderr)


def test_a_finding_is_printed_in_full_and_the_status_is_one(tmp_path):
    done = run(tmp_path, "--format", "concise")
    assert done.returncode == 1
    assert done.stdout.count("WL201") == 1 and done.stdout.endswith("\n")


def test_exit_zero_gives_status_zero_with_the_same_output(tmp_path):
    assert run(tmp_path, "--format", "concise", "--exit-zero").stdout == run(tmp_path, "--format", "concise").stdout
    assert run(tmp_path, "--exit-zero").returncode == 0


def test_a_usage_error_exits_as_before(tmp_path):
    done = run(tmp_path, "--no-such-option")
    assert done.returncode == 2 and "--no-such-option" in done.stderr


def test_a_profiler_still_writes_its_profile(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL)
    command = [sys.executable, "-m", "cProfile", "-o", "run.prof", "-m", "analyzer", "check", "-q", "--exit-zero"]
    done = subprocess.run(
        [*command, "--no-cache", "--isolated", "k.cu"], cwd=tmp_path, capture_output=True, check=False
    )
    assert done.returncode == 0
    assert (tmp_path / "run.prof").stat().st_size > 0
