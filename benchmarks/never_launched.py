"""Which template kernels of real CUDA programs warplint reports as never launched (WL904).

    python benchmarks/never_launched.py CORPORA_DIR [--corpus NAME]... [--jobs N]
    python benchmarks/never_launched.py CORPORA_DIR --snapshot SNAP_DIR

Runs warplint as a user runs it, the runs of `compare_reports.py`'s comparison set: one run per
program (`compare_reports.programs`: `Samples/CATEGORY/NAME` of cuda-samples, `cuda/NAME` of
Rodinia, `CUDA/NAME` of PolyBench, each folder of CUDA files of the GPUVerify benchmarks and
RaCUDA), with the include folders its build names (`-I cuda-samples/Common`,
`-I gpu-rodinia/cuda/util`), no `--block` and no `--param`. `--snapshot` reads the reports of a
`compare_reports.py snapshot --corpora` instead of running warplint again.

It prints every WL904 (program, path:line:col, message), then per corpus the programs and the
WL904s found, then one line: the total. Issue 14's "Done when" asks that none of them be a kernel
its source instantiates or launches; each one listed is to be read against its source.
The corpora are for measuring only: never copy their code into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_reports import CORPORA, CORPUS_INCLUDES, programs, run_check


def never_launched(entries: list[dict]) -> list[str]:
    """The WL904s of the reports of one run: `path:line:col: message` each."""
    return [
        f"{entry['path']}:{item['line']}:{item['column']}: {item['message']}"
        for entry in entries
        for item in entry.get("errors", [])
        if item.get("code") == "WL904"
    ]


def _ran(root: Path, corpus: str, files: list[str]) -> list[dict]:
    includes = [str(root / folder) for folder in CORPUS_INCLUDES.get(corpus, [])]
    return run_check(files, includes, 1, root).get("files", [])


def _snapshotted(snapshot: Path, corpus: str, files: list[str]) -> list[dict]:
    """The reports a snapshot holds of a program's files (named as `compare_reports` names them)."""
    out = []
    for file in files:
        report = snapshot / f"{corpus}__{file.removeprefix('./').replace('/', '__')}.json"
        if report.is_file():
            out.append(json.loads(report.read_text()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path)
    ap.add_argument("--corpus", action="append", choices=CORPORA)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--snapshot", type=Path, help="read the reports of a compare_reports.py snapshot")
    args = ap.parse_args(argv)
    total = 0
    for corpus in args.corpus or CORPORA:
        root = args.corpora / corpus
        runs = programs(root, corpus) if root.is_dir() else []
        if args.snapshot is not None:
            found = [_snapshotted(args.snapshot, corpus, files) for files in runs]
        else:
            with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
                found = list(pool.map(lambda files: _ran(root, corpus, files), runs))  # noqa: B023 - used at once
        count = 0
        for files, entries in zip(runs, found, strict=True):
            program = os.path.commonpath([str(Path(f).parent) for f in files])  # the program's folder
            for line in never_launched(entries):
                print(f"{corpus}/{program}: {line}")
                count += 1
        print(f"{corpus}: {len(runs)} programs, {count} WL904", flush=True)
        total += count
    print(f"never launched (WL904) over the corpora: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
