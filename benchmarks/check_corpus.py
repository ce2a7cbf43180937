"""How fast `warplint check` is on a corpus: files per second, and the slowest files.

    python benchmarks/check_corpus.py FOLDER [-I DIR ...] [--jobs N]

Runs the whole pipeline (preprocess, parse, lower, analyse every kernel for every launch
configuration, rules) on every .cu/.cuh file under FOLDER in this process (`--jobs 1`, the
default, measures the analyser, not the machine's cores) and prints files, kernels, findings,
internal errors (WL900, which must be 0), seconds, files per second and the five slowest files.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.api import Options, check_file, check_paths, collect_files  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("-I", dest="include", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--verbose", "-v", action="store_true", help="print each file's seconds as it is done")
    args = ap.parse_args(argv)
    files = [path for path, problem in collect_files([args.folder]) if problem is None]
    options = Options(include_paths=args.include)
    start = time.perf_counter()
    timings: list[tuple[float, str]] = []
    if args.jobs == 1:
        reports = []
        for path in files:
            t = time.perf_counter()
            reports.append(check_file(path, options))
            timings.append((time.perf_counter() - t, path))
            if args.verbose:
                print(f"{timings[-1][0]:7.2f} s  {path}", flush=True)
    else:
        reports = check_paths(files, options, jobs=args.jobs)
    elapsed = time.perf_counter() - start
    kernels = sum(len(r.kernels) for r in reports)
    findings = sum(len(r.findings) for r in reports)
    crashes = sum(1 for r in reports for d in r.diagnostics if d.code == "WL900")
    print(f"files {len(files)}, kernel analyses {kernels}, findings {findings}, internal errors {crashes}")
    print(f"{elapsed:.1f} s, {len(files) / elapsed:.2f} files/s (jobs {args.jobs})")
    for seconds, path in sorted(timings, reverse=True)[:5]:
        print(f"  {seconds:6.2f} s  {Path(path).relative_to(args.folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
