"""The speed figures of issue 16's "Done when", each measured in child processes.

    python benchmarks/speed.py nvcc     --corpora DIR   # warplint check vs nvcc -ptx, the same 20 cuda-samples files
    python benchmarks/speed.py files    --corpora DIR   # every file of the five corpora, one process each
    python benchmarks/speed.py corpora  --corpora DIR   # the five corpora in one run with -j 2
    python benchmarks/speed.py cache    --corpora DIR   # the same run again, with the results cache warm
    python benchmarks/speed.py cache    --corpora DIR --cache-dir C  # C kept: filled once, then warm runs only
    python benchmarks/speed.py verify                   # check --verify samples/ vs check samples/
    python benchmarks/speed.py all      --corpora DIR

Every figure is given twice: wall-clock seconds, and CPU seconds (user + system of the
children, `resource.getrusage(RUSAGE_CHILDREN)`). On a shared machine the wall time grows with
the others' load; judge progress by the CPU time, and take the README's wall-clock figures on a
quiet machine. No run reads or writes a cache unless it says so (`--no-cache`; `cache` uses a
fresh temporary folder). warplint's modules are byte-compiled first, as `pip install` leaves
them: where `PYTHONDONTWRITEBYTECODE` is set and no `.pyc` is there, every process would compile
them again (about 0.2 s each).

`cache --cache-dir C` keeps the cache in C between calls: the cold run that fills it (many
minutes on a loaded machine) is made only when C holds no entry, so that later calls time warm
runs only (`--repeat N` of them). An entry holds for the warplint code that made it (the key
has each module's size and modification time): after an edit of `analyzer/`, the next call
runs cold again, as it should (use a fresh C to time a cold run on purpose).

The 20 cuda-samples files (a fixed rule, so that both tools see the same files on every
machine): the `.cu` files under `cuda-samples/Samples`, sorted by path, every n-th from the
first, n = their number // 20, the first 20 of those. nvcc compiles each with
`nvcc -ptx -I cuda-samples/Common -o /dev/null FILE` (one process a file, as a build does; a
file nvcc rejects still counts its time); warplint checks the 20 in one process
(`check --no-cache -j 1 -I cuda-samples/Common`).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("cuda-samples", "gpu-rodinia", "polybenchGpu", "GPUVerifyBenchmarks", "racuda")
SLOW_SECONDS = 1.0  # a file over this (CPU time, one process) is listed
WARPLINT = [sys.executable, "-m", "analyzer", "check", "-q", "--exit-zero"]


def timed(argv: Sequence[str], cwd: Path = ROOT) -> tuple[float, float, int]:
    """Run `argv` to the end (output discarded): (wall seconds, CPU seconds of the child, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def cuda_files(folder: Path) -> list[Path]:
    """The `.cu` and `.cuh` files under `folder` (hidden folders skipped), sorted."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.suffix in (".cu", ".cuh") and p.is_file() and not any(part.startswith(".") for part in p.parts)
    )


def twenty_samples(corpora: Path) -> list[Path]:
    """The 20 cuda-samples files of the comparison with nvcc (the rule in the module's docstring)."""
    files = [p for p in cuda_files(corpora / "cuda-samples" / "Samples") if p.suffix == ".cu"]
    step = max(1, len(files) // 20)
    return files[::step][:20]


def line(what: str, wall: float, cpu: float) -> str:
    return f"{what:<44} wall {wall:8.2f} s   CPU {cpu:8.2f} s"


def bench_nvcc(corpora: Path) -> None:
    files = twenty_samples(corpora)
    common = corpora / "cuda-samples" / "Common"
    nvcc = shutil.which("nvcc")
    wl_wall, wl_cpu, _ = timed([*WARPLINT, "--no-cache", "-j", "1", "-I", str(common), *map(str, files)])
    print(line(f"warplint check, {len(files)} cuda-samples files", wl_wall, wl_cpu))
    if nvcc is None:
        print("nvcc not found: no ratio")
        return
    nv_wall = nv_cpu = 0.0
    for f in files:
        wall, cpu, _ = timed([nvcc, "-ptx", "-I", str(common), "-o", os.devnull, str(f)])
        nv_wall, nv_cpu = nv_wall + wall, nv_cpu + cpu
    print(line(f"nvcc -ptx, the same {len(files)} files", nv_wall, nv_cpu))
    print(f"ratio warplint / nvcc: wall {wl_wall / nv_wall:.2f}x, CPU {wl_cpu / nv_cpu:.2f}x (goal <= 0.10x)")


def bench_files(corpora: Path) -> None:
    total_wall = total_cpu = 0.0
    slow: list[tuple[float, float, str]] = []
    count = 0
    for corpus in CORPORA:
        for f in cuda_files(corpora / corpus):
            wall, cpu, _ = timed([*WARPLINT, "--no-cache", "-j", "1", str(f)])
            total_wall, total_cpu, count = total_wall + wall, total_cpu + cpu, count + 1
            if cpu > SLOW_SECONDS or wall > SLOW_SECONDS:
                slow.append((cpu, wall, str(f.relative_to(corpora))))
    print(line(f"{count} files, one process each", total_wall, total_cpu))
    over = sorted((s for s in slow if s[0] > SLOW_SECONDS), reverse=True)
    print(f"files over {SLOW_SECONDS} s of CPU: {len(over)} (over {SLOW_SECONDS} s of wall time: {len(slow)})")
    for cpu, wall, name in over:
        print(f"  CPU {cpu:6.2f} s  wall {wall:6.2f} s  {name}")


def corpus_run(corpora: Path, *extra: str) -> tuple[float, float, int]:
    return timed([*WARPLINT, "-j", "2", *extra, *(str(corpora / c) for c in CORPORA)])


def bench_corpora(corpora: Path) -> None:
    wall, cpu, _ = corpus_run(corpora, "--no-cache")
    print(line("the five corpora, one run, -j 2", wall, cpu))


def bench_cache(corpora: Path, folder: Path | None = None, repeat: int = 1) -> None:
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="warplint-cache-") as fresh:
            bench_cache(corpora, Path(fresh), repeat)
        return
    folder = folder.resolve()  # the runs run in the checkout
    if not any(p.is_file() and p.name != ".gitignore" for p in folder.rglob("*")):
        wall, cpu, _ = corpus_run(corpora, "--cache-dir", str(folder))
        print(line("the five corpora, -j 2, cache cold", wall, cpu))
    for _ in range(repeat):
        wall, cpu, _ = corpus_run(corpora, "--cache-dir", str(folder))
        print(line("the same again, cache warm (goal <= 5 s)", wall, cpu))


def bench_verify() -> None:
    check_wall, check_cpu, _ = timed([*WARPLINT, "--no-cache", "-j", "1", "samples/"])
    verify_wall, verify_cpu, _ = timed([*WARPLINT, "--no-cache", "-j", "1", "--verify", "samples/"])
    print(line("check samples/", check_wall, check_cpu))
    print(line("check --verify samples/", verify_wall, verify_cpu))
    print(f"ratio verify / check: wall {verify_wall / check_wall:.2f}x, CPU {verify_cpu / check_cpu:.2f}x (goal <= 5x)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("figure", choices=("nvcc", "files", "corpora", "cache", "verify", "all"))
    ap.add_argument("--corpora", type=Path, help="the folder holding the five corpora")
    ap.add_argument("--cache-dir", type=Path, help="cache: the results cache's folder, kept between calls")
    ap.add_argument("--repeat", type=int, default=1, help="cache: how many warm runs to time")
    args = ap.parse_args(argv)
    if args.figure not in ("verify",) and args.corpora is None:
        ap.error("--corpora DIR is needed for this figure")
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    compileall.compile_dir(ROOT / "analyzer", quiet=1)
    benches = {
        "nvcc": lambda: bench_nvcc(args.corpora),
        "files": lambda: bench_files(args.corpora),
        "corpora": lambda: bench_corpora(args.corpora),
        "cache": lambda: bench_cache(args.corpora, args.cache_dir, args.repeat),
        "verify": bench_verify,
    }
    for name, bench in benches.items():
        if args.figure in (name, "all"):
            bench()
    return 0


if __name__ == "__main__":
    sys.exit(main())
