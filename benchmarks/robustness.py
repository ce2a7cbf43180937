"""Issue 19's reproducers, each run as its README says, timed and judged.

    python benchmarks/robustness.py [--dir ../shared/robustness] [--timeout 60]

Copies the reproducers' folder (`../shared/robustness`, CI-only data beside the repository)
to a temporary folder, runs each command there with `python -m analyzer` from this checkout,
and prints per command: the exit status, wall and CPU seconds (user + system of the child:
what the run costs whatever the machine's load), peak memory, whether the output holds a traceback
or an internal error (WL900), and whether any input file changed. It exits 1 when a run
takes over 10 s of wall time, exits with a status other than 0/1/2, prints a traceback or WL900, or
changes an input. The corrupted parse-table cache is exercised by `tests/test_robustness.py`
(it needs a cache folder of its own), not here.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzz import INTERNAL_ERROR  # noqa: E402  (benchmarks/ is not a package: found through sys.path above)

LIMIT_S = 10.0  # issue 19: every reproducer ends within 10 s

#: (what it is, the folder to run in relative to the reproducers' folder, warplint's arguments)
COMMANDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("4,301-digit literal", ".", ("check", "bignum_4301_digits.cu")),
    ("big literal in #if", ".", ("check", "bignum_in_if.cu")),
    ("loop step d /= -1", ".", ("check", "loop_step_div_negative.cu")),
    ("loop step <<= 100", ".", ("check", "loop_step_shift_100.cu")),
    ("__align__(0xffff...)", ".", ("check", "align_ffff/k.cu")),
    ("config nested 500 deep", "cfg_deep_nesting", ("check", "k.cu")),
    ("unclosed ignore-file", "suppr_ignore_file_unclosed", ("check", "k.cu", "--report-unused-suppressions")),
    ("grid with a 0.5", ".", ("check", "grid_zero_schema/k.cu", "--format", "json")),
    ("vertical tab", ".", ("check", "vertical_tab.cu")),
    ("block of 8M threads", ".", ("check", "slow_launch_block_8M_threads.cu")),
    ("row of a 4x1M array assigned", ".", ("check", "slow_array_row_assign.cu")),
    ("__align__(2^29)", ".", ("check", "slow_align_2pow29.cu")),
    ("4 nested loops of 12", ".", ("check", "slow_nested_loops_4x12.cu")),
    ("16 nested loops of 2", ".", ("check", "slow_nested_loops_16x2.cu")),
    ("13 nested subscripts", ".", ("check", "hang_nested_subscripts_13.cu")),
    ("1,900 instantiations", ".", ("check", "slow_template_1900_instantiations.cu")),
    ("1,000 launch configurations", ".", ("check", "slow_1000_launch_configs.cu")),
    ("file including itself", ".", ("check", "slow_self_include.cu")),
    ("--verify of for (;;)", ".", ("check", "--verify", "verify_infinite_loop.cu")),
    ("simulate for (;;)", ".", ("simulate", "verify_infinite_loop.cu")),
    ("--all-blocks, huge grid", ".", ("simulate", "simulate_all_blocks_huge_grid.cu", "--all-blocks")),
    ("non-UTF-8 name, SARIF", "nonutf8_name", ("check", "\udcff.cu", "--format", "sarif")),
    ("non-UTF-8 name, -o", "nonutf8_name", ("check", "\udcff.cu", "-o", "out.txt")),
)
TRACEBACK = b"Traceback (most recent call last)"


def digests(folder: Path) -> dict[str, str]:
    """Each file under `folder` (but the outputs the commands write) and its content's hash."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and p.name != "out.txt"
    }


@dataclass
class Run:
    status: int | None  # None: killed at the time limit
    wall: float
    cpu: float  # user + system seconds of the child
    peak_mb: float
    output: bytes


def run(args: tuple[str, ...], cwd: Path, timeout: float) -> Run:
    """`python -m analyzer ARGS` in `cwd`, killed past `timeout` seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    argv = [os.fsencode(sys.executable), b"-m", b"analyzer", *(os.fsencode(a) for a in args)]
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        killed = not timer.is_alive()
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # (so that Popen does not wait again)
        out.seek(0)
        output = out.read()
    return Run(
        None if killed else proc.returncode,
        time.monotonic() - start,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        output,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=str(ROOT.parent / "shared" / "robustness"), help="the reproducers' folder")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a run is killed (default 60)")
    options = ap.parse_args(argv)
    source = Path(options.dir)
    if not source.is_dir():
        print(f"no reproducers at {source}", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "robustness"
        shutil.copytree(source, work)
        (work / "nonutf8_name" / os.fsdecode(b"\xff.cu")).write_text(
            "__global__ void k(float *p) { p[threadIdx.x * 2] = 1.0f; }\n"
        )
        before = digests(work)
        print(f"{'reproducer':<32} {'exit':>4} {'wall s':>7} {'CPU s':>6} {'MB':>6}  verdict")
        for what, folder, args in COMMANDS:
            result = run(args, work / folder, options.timeout)
            problems = []
            if result.status is None or result.wall > LIMIT_S:
                problems.append("over 10 s")
            if result.status not in (0, 1, 2):
                problems.append(f"exit {result.status}")
            if TRACEBACK in result.output or INTERNAL_ERROR.search(result.output):
                problems.append("traceback or WL900")
            failed += bool(problems)
            shown = "killed" if result.status is None else str(result.status)
            verdict = ", ".join(problems) or "ok"
            print(f"{what:<32} {shown:>4} {result.wall:>7.1f} {result.cpu:>6.1f} {result.peak_mb:>6.0f}  {verdict}")
        after = digests(work)  # (new files, the results cache's, are no input)
        changed = sorted(k for k, v in before.items() if after.get(k) != v)
        if changed:
            failed += 1
            print("inputs changed: " + ", ".join(changed))
        else:
            print("no input changed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
