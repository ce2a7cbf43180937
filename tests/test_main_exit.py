"""`python -m analyzer` ends without tearing the interpreter down (`analyzer/__main__.py`):
what it prints and its exit status are those of `cli.main`."""

from __future__ import annotations

import subprocess
import sys

KERNEL = "__global__ void k(float *a) { a[threadIdx.x * 32] = 0.0f; }\n"


def run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "k.cu").write_text(KERNEL)
    command = [sys.executable, "-m", "analyzer", "check", "--no-cache", "--isolated", "--block", "32", *args, "k.cu"]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)


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
