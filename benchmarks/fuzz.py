"""Seeded fuzzing of warplint: hangs, crashes, lost or silenced results, invalid reports.

    python benchmarks/fuzz.py --seed 1 --count 10000 --jobs 2 [--seeds DIR ...] [--out DIR]

Makes `--count` inputs of six families (`benchmarks/fuzz_inputs.py`: grammar-aware mutants
of seed kernels, structured stress, random bytes, odd paths, bad options and configurations,
random loop headers), each in a folder of its own, and runs `python -m analyzer` on it in a
subprocess with a time limit (`--timeout`, 10 s) and a memory limit (`--memory-mb`, 1 GB of
address space, `resource.setrlimit`). The seed kernels are the repository's own: `samples/`,
the kernels of `tests/fixtures/`, and the generated benchmark file of `parse_speed.py`;
`--seeds DIR` adds the .cu/.cuh files under DIR (a public corpus, say), read at run time and
never copied into the repository.

Counted, per family: Python tracebacks, internal errors (WL900), runs over the time limit,
runs over the memory limit, exit statuses other than 0/1/2, inputs modified, JSON reports
invalid against `docs/schema-v1.json`, SARIF logs invalid against
`tests/data/sarif-schema-2.1.0.json`. Each failing input is saved under `--out`
(`fuzz-failures/` by default) with its command, output and the reasons; the script prints
them and the counts, and exits 1 when any count is not 0. Case N of a seed is the same
whatever `--jobs` is, so a failure is found again with `--seed S --first N --count 1`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzz_inputs import Case, make_case  # noqa: E402  (benchmarks/ is not a package: found through sys.path above)

#: An internal error as each format reports one (not the rule lists of SARIF and `rules`, nor the
#: `warplint: ignore[WL900]` that WL900's documentation mentions).
INTERNAL_ERROR = re.compile(
    rb'(?<!ignore)\[WL900\]|: WL900 |"code": ?"WL900"|"ruleId": ?"WL900"|title=WL900|'
    # the messages of an internal error ("internal error while ...", "in WL101 ...", "(KeyError: ...)"),
    # not the words in a rule's documentation (SARIF's rule help: "internal errors are always reported")
    rb"internal error (?:while |in |\()|MemoryError|RecursionError"
)
#: The child: limit its own address space, then run `python -m analyzer ARGS`.
BOOT = (
    b"import resource, runpy, sys\n"
    b"limit = int(sys.argv[1])\n"
    b"resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
    b"sys.argv = ['warplint', *sys.argv[2:]]\n"
    b"runpy.run_module('analyzer', run_name='__main__', alter_sys=True)\n"
)
KINDS = (
    "traceback",
    "internal-error",
    "over-time",
    "over-memory",
    "bad-exit",
    "input-modified",
    "json-invalid",
    "sarif-invalid",
)


@dataclass
class Outcome:
    """What one run did."""

    status: int | None  # the exit status; None when it was killed
    seconds: float
    cpu_seconds: float  # user + system time of the child: what the run cost, whatever the load
    max_rss_mb: float
    stdout: bytes
    stderr: bytes
    killed: bool = False


@dataclass
class Result:
    number: int
    family: str
    failures: list[str] = field(default_factory=list)
    saved: Path | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0


# ----------------------------------------------------------------------------- seeds


#: The reproducers of the analysis algorithms that blow up (issue 19: nested loops walked
#: iteration by iteration, nested data-dependent subscripts, launch lookup per kernel, one
#: kernel analysed per launch configuration): known to take more than 10 s until those
#: algorithms change, they are not seeds unless `--known-slow` asks for them.
KNOWN_SLOW = frozenset(
    {
        "slow_nested_loops_4x12.cu",
        "slow_nested_loops_16x2.cu",
        "hang_nested_subscripts_13.cu",
        "slow_template_1900_instantiations.cu",
        "slow_1000_launch_configs.cu",
    }
)


def seed_kernels(extra: list[Path], known_slow: bool = False) -> list[str]:
    """The texts mutants start from: samples, test fixtures, the generated benchmark file, and
    the .cu/.cuh files under each folder of `extra`."""
    from parse_speed import generate

    folders = [ROOT / "samples", ROOT / "tests" / "fixtures", *extra]
    texts = [generate(300)]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if (
                path.suffix in (".cu", ".cuh")
                and path.is_file()
                and path.stat().st_size < 200_000
                and (known_slow or path.name not in KNOWN_SLOW)
            ):
                texts.append(path.read_bytes().decode("utf-8", "surrogateescape"))
    return texts


# ----------------------------------------------------------------------------- running one case


def write_case(case: Case, folder: Path) -> None:
    """Make the case's files, folders, links and unreadable entries under `folder`."""
    base = os.fsencode(folder)
    for name in case.folders:
        os.makedirs(os.path.join(base, name), exist_ok=True)
    for name, data in case.files.items():
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
    for name, target in case.links.items():
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
    for name in case.unreadable:
        os.chmod(os.path.join(base, name), 0)


def snapshot(folder: Path) -> dict[bytes, str]:
    """A digest of every file under `folder` (unreadable ones by their size and time)."""
    out: dict[bytes, str] = {}
    for root, _, files in os.walk(os.fsencode(folder)):
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as handle:
                    out[path] = hashlib.sha256(handle.read()).hexdigest()
            except OSError:
                info = os.lstat(path)
                out[path] = f"{info.st_size}:{info.st_mtime_ns}"
    return out


def run(args: list[bytes], folder: Path, timeout: float, memory_mb: int) -> Outcome:
    """`python -m analyzer ARGS` in `folder`, killed past `timeout` seconds, its address space
    limited to `memory_mb`; stdout and stderr go to files (no pipe to fill), and the child's
    peak memory comes from `wait4`."""
    limit = str(memory_mb * 1024 * 1024).encode()
    # the repository first, then whatever PYTHONPATH already holds (a folder of dependencies, say)
    python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": python_path, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    out_path, err_path = folder.parent / "stdout", folder.parent / "stderr"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        # the limit is set by the child itself (a preexec_fn is not safe beside threads)
        proc = subprocess.Popen(
            [os.fsencode(sys.executable), b"-c", BOOT, limit, *args],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # (so that Popen does not wait again)
    seconds = time.monotonic() - start
    return Outcome(
        None if killed.is_set() else proc.returncode,
        seconds,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        out_path.read_bytes(),
        err_path.read_bytes(),
        killed.is_set(),
    )


def judge(
    case: Case, outcome: Outcome, changed: bool, timeout: float, memory_mb: int, validators: dict[str, object]
) -> list[str]:
    """The failure kinds of one run (an empty list: it passed)."""
    text = outcome.stdout + outcome.stderr
    found: list[str] = []
    if b"Traceback (most recent call last)" in text:
        found.append("traceback")
    if INTERNAL_ERROR.search(text):
        found.append("internal-error")
    if outcome.killed or outcome.seconds > timeout:
        found.append("over-time")
    if outcome.max_rss_mb > memory_mb or b"MemoryError" in text:
        found.append("over-memory")
    if not outcome.killed and outcome.status not in (0, 1, 2):
        found.append("bad-exit")
    if changed:
        found.append("input-modified")
    if (
        case.validate
        and not outcome.killed
        and outcome.status in (0, 1, 2)
        and outcome.stdout.strip()
        and not valid(outcome.stdout, validators[case.validate])
    ):
        found.append(f"{case.validate}-invalid")
    return found


def valid(document: bytes, validator: object) -> bool:
    try:
        data = json.loads(document)
    except ValueError:
        return False
    return not list(validator.iter_errors(data))  # type: ignore[attr-defined]


def run_case(
    number: int, seed: int, seeds: list[str], options: argparse.Namespace, validators: dict[str, object]
) -> Result:
    """Make case `number` of `seed`, run it, judge it, and save it under `--out` if it failed."""
    rng = random.Random(f"warplint-fuzz:{seed}:{number}")
    case = make_case(rng, seeds)
    result = Result(number, case.family)
    work = Path(tempfile.mkdtemp(prefix="warplint-fuzz-"))
    folder = work / "input"
    try:
        folder.mkdir()
        write_case(case, folder)
        before = snapshot(folder)
        outcome = run(case.args, folder, options.timeout, options.memory_mb)
        after = snapshot(folder)  # (a report `-o` writes is a new file, not a change)
        changed = any(after.get(path) != digest for path, digest in before.items())
        result.seconds = outcome.seconds
        result.cpu_seconds = outcome.cpu_seconds
        result.failures = judge(case, outcome, changed, options.timeout, options.memory_mb, validators)
        if result.failures:
            result.saved = save(case, number, folder, outcome, result.failures, Path(options.out))
    finally:
        for root, dirs, _ in os.walk(work):  # an unreadable folder cannot be removed until opened up
            for name in dirs:
                os.chmod(os.path.join(root, name), stat.S_IRWXU)
        shutil.rmtree(work, ignore_errors=True)
    return result


def save(case: Case, number: int, folder: Path, outcome: Outcome, failures: list[str], out: Path) -> Path:
    """Keep a failing input: its files, the command, its output and why it failed."""
    target = out / f"case-{number:06d}-{case.family}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in case.unreadable:
        os.chmod(os.path.join(os.fsencode(folder), name), stat.S_IRUSR | stat.S_IWUSR)
    shutil.copytree(folder, target / "input", symlinks=True)
    command = " ".join(repr(os.fsdecode(a)) for a in case.args)
    (target / "command.txt").write_text(f"cd input && python -m analyzer {command}\n", errors="surrogateescape")
    (target / "stdout").write_bytes(outcome.stdout)
    (target / "stderr").write_bytes(outcome.stderr)
    (target / "why.txt").write_text(
        f"{', '.join(failures)}\nexit status {outcome.status}, {outcome.seconds:.1f} s ({outcome.cpu_seconds:.1f} s CPU), {outcome.max_rss_mb:.0f} MB\n"
    )
    return target


# ----------------------------------------------------------------------------- the campaign


def validators() -> dict[str, object]:
    import jsonschema

    json_schema = json.loads((ROOT / "docs" / "schema-v1.json").read_text())
    sarif_schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    return {"json": jsonschema.Draft202012Validator(json_schema), "sarif": jsonschema.Draft4Validator(sarif_schema)}


def campaign(options: argparse.Namespace) -> list[Result]:
    seeds = seed_kernels([Path(d) for d in options.seeds], options.known_slow)
    checkers = validators()
    numbers = range(options.first, options.first + options.count)
    results: list[Result] = []
    lock = threading.Lock()
    started = time.monotonic()

    def one(number: int) -> Result:
        result = run_case(number, options.seed, seeds, options, checkers)
        with lock:
            results.append(result)
            if options.progress and len(results) % 100 == 0:
                print(
                    f"  {len(results)}/{options.count} inputs, {time.monotonic() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
        return result

    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        list(pool.map(one, numbers))
    return sorted(results, key=lambda r: r.number)


def report(results: list[Result], options: argparse.Namespace, seconds: float) -> int:
    """Print the failing inputs and the counts; 1 when any count is not 0."""
    families = Counter(r.family for r in results)
    counts = {kind: Counter() for kind in KINDS}
    for r in results:
        for kind in r.failures:
            counts[kind][r.family] += 1
    failing = [r for r in results if r.failures]
    for r in failing:
        print(f"case {r.number} ({r.family}): {', '.join(r.failures)}: {r.saved}")
    print(
        f"\n{len(results)} inputs (seed {options.seed}, cases {options.first}..{options.first + len(results) - 1}) "
        f"in {seconds:.0f} s: " + ", ".join(f"{families[f]} {f}" for f in sorted(families))
    )
    for r in sorted(results, key=lambda r: r.seconds, reverse=True)[:5]:
        print(f"slow run: case {r.number} ({r.family}), {r.seconds:.1f} s wall, {r.cpu_seconds:.1f} s CPU")
    for kind in KINDS:
        total = sum(counts[kind].values())
        detail = ", ".join(f"{n} {f}" for f, n in sorted(counts[kind].items()))
        print(f"{kind:>15}: {total}" + (f" ({detail})" if detail else ""))
    return 1 if failing else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1, help="the campaign's seed (default 1)")
    ap.add_argument("--count", type=int, default=1000, help="inputs to run (default 1000)")
    ap.add_argument("--first", type=int, default=0, help="number of the first case (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds a run may take (default 10)")
    ap.add_argument("--memory-mb", type=int, default=1024, help="address space of a run (default 1024 MB)")
    ap.add_argument(
        "--seeds",
        action="append",
        default=[],
        metavar="DIR",
        help="more seed kernels: the .cu/.cuh files under DIR (repeatable)",
    )
    ap.add_argument(
        "--known-slow",
        action="store_true",
        help="seed also with the reproducers of the analysis algorithms known to be slow (KNOWN_SLOW)",
    )
    ap.add_argument("--out", default="fuzz-failures", help="where failing inputs are saved (default fuzz-failures/)")
    ap.add_argument("--progress", action="store_true", help="a line on stderr every 100 inputs")
    options = ap.parse_args(argv)
    start = time.monotonic()
    results = campaign(options)
    return report(results, options, time.monotonic() - start)


if __name__ == "__main__":
    raise SystemExit(main())
