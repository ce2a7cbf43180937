"""The results cache (`analyzer.cache`): an unchanged file is read back, anything that decides
the result (an included header, an option, a configuration key) makes it analysed again, a
corrupt entry is ignored and rewritten, and `--no-cache`, `--cache-dir`, `WARPLINT_CACHE_DIR`
and the configuration's `cache-dir` choose where it lives (`.warplint_cache` in the project
root by default, with a `.gitignore` of `*` inside)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analyzer import api, cli

KERNEL = """\
#include "stride.h"
__global__ void strided() {
    __shared__ float s[32 * 32];
    s[STRIDE * threadIdx.x] = 1.0f;
}
"""


def entries(folder: Path) -> list[Path]:
    """The cache entries in `folder` (its `.gitignore` aside)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != ".gitignore")


def check_json(*args: str) -> tuple[int, list[dict]]:
    """`warplint check --format json -q ARGS` in this process: the exit status and the findings."""
    out = Path("report.json")
    status = cli.main(["check", "--format", "json", "-q", "-j", "1", "-o", str(out), *args])
    files = json.loads(out.read_text())["files"] if out.exists() else []
    return status, [f for file in files for f in file["findings"]]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder (the current one) with `k.cu` including `stride.h` (a stride of 4: a
    4-way bank conflict), and the cache in `cache/` (WARPLINT_CACHE_DIR)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "stride.h").write_text("#define STRIDE 4\n")
    return tmp_path


def ways(findings: list[dict]) -> list[int]:
    return [f["args"]["ways"] for f in findings if f["code"] == "WL101"]


def test_an_unchanged_file_is_read_back_from_the_cache_without_being_analysed(project, monkeypatch):
    first = check_json("--isolated", "--block", "32", "k.cu")
    assert ways(first[1]) == [4]
    assert len(entries(project / "cache")) == 1

    def not_again(*args, **kwargs):
        raise AssertionError("analysed again")

    monkeypatch.setattr(api, "_checked", not_again)
    assert check_json("--isolated", "--block", "32", "k.cu") == first
    text = cli.main(["check", "--isolated", "--block", "32", "-q", "-o", "report.txt", "k.cu"])  # another format
    assert text == 1 and "4-way bank conflict" in Path("report.txt").read_text()


def test_a_changed_included_header_is_never_served_from_the_cache(project):
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == [4]
    (project / "stride.h").write_text("#define STRIDE 2\n")
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == [2]
    (project / "stride.h").write_text("#define STRIDE 1\n")
    assert check_json("--isolated", "--block", "32", "k.cu") == (0, [])


def test_a_changed_file_option_or_configuration_key_is_analysed_again(project):
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == [4]
    (project / "k.cu").write_text(KERNEL.replace("STRIDE *", "2 *"))
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == [2]
    assert ways(check_json("--isolated", "--block", "32", "-DSTRIDE=8", "k.cu")[1]) == [2]  # the file's own 2
    (project / "k.cu").write_text(KERNEL)
    assert ways(check_json("--isolated", "--block", "32", "k.cu", "--", "-DSTRIDE=8")[1]) == [4]  # the header's
    assert check_json("--isolated", "--block", "32", "--ignore", "WL101", "k.cu") == (0, [])
    (project / "warplint.toml").write_text('block = [32]\nignore = ["WL101"]\n')
    assert check_json("k.cu") == (0, [])
    (project / "warplint.toml").write_text("block = [32]\n")
    assert ways(check_json("k.cu")[1]) == [4]


def test_a_corrupt_entry_is_ignored_and_written_anew(project):
    first = check_json("--isolated", "--block", "32", "k.cu")
    (entry,) = entries(project / "cache")
    entry.write_bytes(b"not a pickle")
    assert check_json("--isolated", "--block", "32", "k.cu") == first
    assert entry.read_bytes() != b"not a pickle"
    entry.write_bytes(entry.read_bytes()[:20])  # cut short, as by a crash (writes are atomic, but)
    assert check_json("--isolated", "--block", "32", "k.cu") == first


def test_no_cache_writes_nothing_and_cache_dir_chooses_the_folder(project, monkeypatch):
    check_json("--isolated", "--block", "32", "--no-cache", "k.cu")
    assert not (project / "cache").exists()
    check_json("--isolated", "--block", "32", "--cache-dir", "elsewhere", "k.cu")
    assert len(entries(project / "elsewhere")) == 1
    assert not (project / "cache").exists()


def test_the_default_folder_is_warplint_cache_in_the_project_root_with_a_gitignore(project, monkeypatch):
    monkeypatch.delenv("WARPLINT_CACHE_DIR")
    (project / "src").mkdir()
    (project / "src" / "k.cu").write_text(KERNEL)
    (project / "src" / "stride.h").write_text("#define STRIDE 4\n")
    (project / "pyproject.toml").write_text("[tool.warplint]\nblock = [32]\n")
    monkeypatch.chdir(project / "src")
    check_json("k.cu")
    folder = project / ".warplint_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert len(entries(folder)) == 1
    (project / "pyproject.toml").write_text('[tool.warplint]\nblock = [32]\ncache-dir = "build/wl"\n')
    check_json("k.cu")
    assert len(entries(project / "build" / "wl")) == 1


def test_a_run_with_jobs_reads_and_writes_the_cache_safely(project):
    for i in range(4):
        (project / f"k{i}.cu").write_text(KERNEL.replace("strided", f"strided_{i}"))
    names = [f"k{i}.cu" for i in range(4)]
    first = cli.main(
        ["check", "--format", "json", "-q", "--isolated", "--block", "32", "-j", "2", "-o", "a.json", *names]
    )
    again = cli.main(
        ["check", "--format", "json", "-q", "--isolated", "--block", "32", "-j", "2", "-o", "b.json", *names]
    )
    assert first == again == 1
    assert Path("a.json").read_text() == Path("b.json").read_text()
    assert not list((project / "cache").rglob(".tmp-*"))


def test_the_key_does_not_depend_on_the_order_of_sets_or_the_cache_folder(tmp_path):
    from analyzer.cache import cache_key

    a = api.Options(cache_dir="x", program=api.ProgramContext(elsewhere=frozenset({"a", "b", "c"})))
    b = api.Options(cache_dir="y", program=api.ProgramContext(elsewhere=frozenset({"c", "b", "a"})))
    assert cache_key("check", "k.cu", a, "d") == cache_key("check", "k.cu", b, "d")
    assert cache_key("check", "k.cu", a, "d") != cache_key("check", "k.cu", api.Options(block=(32, 1, 1)), "d")
    assert os.sep not in cache_key("check", "k.cu", a, "d")


# ----------------------------------------------------------------------------- a warm run's shortcuts

LAUNCHED = """\
__global__ void rows() {
    __shared__ float s[32 * 32];
    s[threadIdx.y * 32 + threadIdx.x] = 1.0f;
}
"""


def launcher(rows: str, include: str = "") -> str:
    """A host file launching `rows` with blocks of 1 x `rows` threads (32: a 32-way bank conflict)."""
    return f"{include}__global__ void rows();\nint main() {{ dim3 block(1, {rows}); rows<<<1, block>>>(); }}\n"


def check_run(*args: str, jobs: int = 1) -> tuple[int, list[dict]]:
    """`warplint check --format json --isolated` on ARGS with `jobs` processes: the exit status and
    each file's path and findings' ways."""
    out = Path("run.json")
    status = cli.main(["check", "--format", "json", "-q", "--isolated", "-j", str(jobs), "-o", str(out), *args])
    files = json.loads(out.read_text())["files"]
    return status, [(file["path"], ways(file["findings"])) for file in files]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_launch_changed_in_another_file_changes_the_result(project, jobs):
    (project / "a.cu").write_text(LAUNCHED)
    (project / "b.cu").write_text(launcher("32"))
    assert check_run("a.cu", "b.cu", jobs=jobs) == (1, [("a.cu", [32]), ("b.cu", [])])
    (project / "b.cu").write_text(launcher("8").replace("(1, 8)", "(32, 8)"))
    assert check_run("a.cu", "b.cu", jobs=jobs) == (0, [("a.cu", []), ("b.cu", [])])
    (project / "b.cu").write_text(launcher("32"))
    assert check_run("a.cu", "b.cu", jobs=jobs) == (1, [("a.cu", [32]), ("b.cu", [])])


def test_a_result_made_while_an_include_was_missing_is_served_until_it_appears(project, monkeypatch):
    from analyzer import program

    (project / "a.cu").write_text(LAUNCHED)
    (project / "b.cu").write_text(launcher("ROWS", '#include "rows.h"\n'))
    first = check_run("a.cu", "b.cu")
    assert ("a.cu", []) in first[1]  # ROWS unknown: the kernel's own assumed block, no conflict
    with monkeypatch.context() as still_missing:
        still_missing.setattr(api, "_checked", lambda *args: pytest.fail("analysed again"))
        still_missing.setattr(program, "_surveyed", lambda *args: pytest.fail("surveyed again"))
        assert check_run("a.cu", "b.cu") == first
    (project / "rows.h").write_text("#define ROWS 32\n")
    assert ("a.cu", [32]) in check_run("a.cu", "b.cu")[1]
    (project / "rows.h").write_text("#define ROWS 2\n")  # a header read by the survey: hashed anew each run
    assert ("a.cu", [2]) in check_run("a.cu", "b.cu")[1]


@pytest.mark.parametrize("include", ['#include "cuda_runtime.h"\n', ""])
def test_a_header_that_appears_where_an_include_looked_for_it_is_read_the_next_run(project, include):
    """A quoted system header falls back to the system headers, which are never read; a
    `-include` file that is missing is an error: either way, a file put where it was looked for
    is read by the next run, never served from the cache."""
    (project / "k.cu").write_text(include + KERNEL.replace('#include "stride.h"\n', ""))
    forced: tuple[str, ...] = ()
    if not include:
        command = f"nvcc -include {project / 'cuda_runtime.h'} -c k.cu"
        entry = {"directory": str(project), "command": command, "file": "k.cu"}
        (project / "compile_commands.json").write_text(json.dumps([entry]))
        forced = ("-p", ".")
    assert ways(check_json("--isolated", "--block", "32", *forced, "k.cu")[1]) == []  # STRIDE unknown
    (project / "cuda_runtime.h").write_text("#define STRIDE 8\n")
    assert ways(check_json("--isolated", "--block", "32", *forced, "k.cu")[1]) == [8]


def test_a_header_not_read_binary_or_too_large_is_read_once_it_is_text(project):
    (project / "stride.h").write_bytes(b"#define STRIDE 4\n\0\0\0")
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == []  # not read: STRIDE unknown
    (project / "stride.h").write_text("#define STRIDE 8\n")
    assert ways(check_json("--isolated", "--block", "32", "k.cu")[1]) == [8]


def test_a_changed_header_of_several_files_is_hashed_once_per_run_and_never_served(project, monkeypatch):
    from analyzer import cache

    (project / "k2.cu").write_text(KERNEL.replace("strided", "strided_2"))
    hashed: list[str] = []
    real = cache._hashed
    monkeypatch.setattr(cache, "_hashed", lambda path: hashed.append(os.path.basename(path)) or real(path))
    for stride, expected in (("4", [4]), ("4", [4]), ("2", [2])):
        (project / "stride.h").write_text(f"#define STRIDE {stride}\n")
        hashed.clear()
        found = check_run("--block", "32", "k.cu", "k2.cu")[1]
        assert found == [("k.cu", expected), ("k2.cu", expected)]
        assert sorted(hashed) == ["k.cu", "k2.cu", "stride.h"]


def test_a_second_run_with_every_result_cached_analyses_nothing_and_starts_no_pool(project, monkeypatch):
    import concurrent.futures

    from analyzer import program

    (project / "a.cu").write_text(LAUNCHED)
    (project / "b.cu").write_text(launcher("32"))
    (project / "util.cu").write_text("int twice(int x) { return 2 * x; }\n")  # its survey tells nothing
    first = check_run("a.cu", "b.cu", "util.cu", "k.cu", "--block", "32", jobs=2)

    def not_again(*args, **kwargs):
        raise AssertionError("analysed again")

    monkeypatch.setattr(api, "_checked", not_again)
    monkeypatch.setattr(program, "_surveyed", not_again)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", not_again)
    assert check_run("a.cu", "b.cu", "util.cu", "k.cu", "--block", "32", jobs=2) == first


# ----------------------------------------------------------------------------- --verify's progress


class _Terminal(__import__("io").StringIO):
    def isatty(self) -> bool:
        return True


def test_verify_leaves_a_line_for_each_file_that_took_over_a_second_on_a_terminal_only():
    now = [0.0]
    stream = _Terminal()
    bar = cli._Progress(stream, clock=lambda: now[0], verify=True)
    now[0] = 0.6
    bar.update(1, 3)  # quick: the running line only
    now[0] = 3.1
    bar.update(2, 3)  # 2.5 s: a line of its own
    bar.close()
    assert stream.getvalue() == (
        "\rchecked 1/3 files\r\x1b[Kverified file 2/3 with the simulator in 2.5 s\n\rchecked 2/3 files\r\x1b[K"
    )
    quiet = __import__("io").StringIO()  # not a terminal
    bar = cli._Progress(quiet, clock=lambda: now[0], verify=True)
    now[0] = 10.0
    bar.update(1, 1)
    bar.close()
    assert quiet.getvalue() == ""


def test_verify_says_which_file_is_running_while_it_runs():
    import time

    clock = [0.0]
    stream = _Terminal()
    bar = cli._Progress(stream, clock=lambda: clock[0], verify=True)
    bar.slow = 1.0
    clock[0] = 2.0  # the first file has run for 2 s
    deadline = time.monotonic() + 5
    while "verifying file 1" not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    bar.close()
    assert "\r\x1b[Kverifying file 1 with the simulator: 2 s" in stream.getvalue()
