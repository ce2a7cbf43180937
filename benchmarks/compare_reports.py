"""Snapshot the JSON report of a fixed set of files, and compare two snapshots.

    python benchmarks/compare_reports.py snapshot OUT_DIR [--corpora DIR] [--jobs N]
    python benchmarks/compare_reports.py compare OLD_DIR NEW_DIR

A refactoring must leave every report as it was; a change of behaviour must change only what
it means to. `snapshot` runs `python -m analyzer check --format json` (the command line, the
interface that stays stable while the insides move) on the comparison set and writes one
pretty, key-sorted JSON file per checked file into OUT_DIR, so that `compare` (or `diff -r`)
shows exactly which access of which file changed:

- `samples/` and the front-end, preprocessor and PTX test fixtures (`tests/fixtures/`);
- the generated files of `benchmarks/parse_speed.py` (300 and 2,000 lines);
- with `--corpora DIR` (the public corpora checked out as `../shared/truth/README.md` says:
  `cuda-samples`, `gpu-rodinia`, `polybenchGpu`, `GPUVerifyBenchmarks`, `racuda`), every
  program folder of each that exists under DIR, one run per program folder with the corpus's
  include folders, as a user runs it: one run is one program (its files see each other's
  launches and includes), so a run over a whole corpus would join unrelated programs. The
  reports keep the paths relative to the corpus's root that a run over the corpus gives.

The tool's version is taken out of each report (a version bump is not a change of result).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

#: Include folders each corpus's build names (as `../shared/truth/score_real.py` gives them).
CORPUS_INCLUDES = {"cuda-samples": ["Common"], "gpu-rodinia": ["cuda/util"]}
CORPORA = ("cuda-samples", "gpu-rodinia", "polybenchGpu", "GPUVerifyBenchmarks", "racuda")
FIXTURES = ("tests/fixtures/frontend", "tests/fixtures/preprocess", "tests/fixtures/ptx")
GENERATED_LINES = (300, 2000)
#: How many folders below a corpus's root name one program (`Samples/0_Introduction/vectorAdd`);
#: in the other corpora every folder holding CUDA files is a program (GPUVerify's kernels).
PROGRAM_DEPTH = {"cuda-samples": 3, "gpu-rodinia": 2, "polybenchGpu": 3}


def programs(root: Path, corpus: str) -> list[list[str]]:
    """The files of each program of a corpus (relative to its root, in the order a run over the
    folder lists them), the programs sorted by folder."""
    depth = PROGRAM_DEPTH.get(corpus)
    found: dict[tuple[str, ...], list[str]] = {}
    for file in sorted(root.rglob("*"), key=lambda f: f.relative_to(root).parts):
        if file.suffix in (".cu", ".cuh") and file.is_file() and not any(p.startswith(".") for p in file.parts):
            parts = file.relative_to(root).parts
            # "./" as a run over "." names them: an include's "searched:" note names the folder so
            found.setdefault(parts[:depth] if depth else parts[:-1], []).append("./" + "/".join(parts))
    return [found[key] for key in sorted(found)]


def run_programs(root: Path, corpus: str, includes: list[str], jobs: int) -> dict:
    """One run per program (`jobs` at a time, each in one process); their files in one report."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        runs = list(pool.map(lambda files: run_check(files, includes, 1, root), programs(root, corpus)))
    merged = {k: v for k, v in runs[0].items() if k != "files"} if runs else {}
    merged["files"] = [entry for run in runs for entry in run.get("files", [])]
    return merged


def run_check(paths: list[str], includes: list[str], jobs: int, cwd: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "analyzer",
        "check",
        "--format",
        "json",
        "--exit-zero",
        "--quiet",
        "--isolated",
        "--no-cache",  # every report analysed, none read back
        "-j",
        str(jobs),
    ]
    for inc in includes:
        cmd += ["-I", inc]
    done = subprocess.run(
        [*cmd, "--", *paths],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    if not done.stdout.strip():
        raise SystemExit(f"no report from {' '.join(cmd)}:\n{done.stderr}")
    return json.loads(done.stdout)


def write_report(report: dict, out: Path, prefix: str) -> int:
    count = 0
    for entry in report.get("files", []):
        name = prefix + entry["path"].replace("/", "__")
        (out / f"{name}.json").write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n")
        count += 1
    meta = {k: v for k, v in report.items() if k not in ("files", "tool")}
    (out / f"{prefix}_meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return count


def snapshot(out: Path, corpora: Path | None, jobs: int) -> None:
    from parse_speed import generate

    out.mkdir(parents=True, exist_ok=True)
    count = write_report(run_check(["samples", *FIXTURES], [], jobs, ROOT), out, "repo__")
    with tempfile.TemporaryDirectory() as tmp:
        for lines in GENERATED_LINES:
            (Path(tmp) / f"generated_{lines}.cu").write_text(generate(lines))
        count += write_report(
            run_check(sorted(p.name for p in Path(tmp).iterdir()), [], jobs, Path(tmp)), out, "generated__"
        )
    for corpus in CORPORA if corpora is not None else ():
        root = corpora / corpus
        if not root.is_dir():
            print(f"note: {root} is missing; skipped", file=sys.stderr)
            continue
        includes = [str(root / inc) for inc in CORPUS_INCLUDES.get(corpus, [])]
        report = run_programs(root, corpus, includes, jobs)
        count += write_report(report, out, f"{corpus}__")
        print(f"{corpus}: {len(report.get('files', []))} files", file=sys.stderr)
    print(f"{count} reports in {out}")


def compare(old: Path, new: Path) -> int:
    names = sorted({p.name for p in old.glob("*.json")} | {p.name for p in new.glob("*.json")})
    differ = 0
    for name in names:
        a, b = old / name, new / name
        if not a.exists() or not b.exists():
            print(f"only in {'new' if not a.exists() else 'old'}: {name}")
            differ += 1
            continue
        if a.read_text() != b.read_text():
            differ += 1
            print(f"differs: {name}")
            subprocess.run(["diff", "-u", str(a), str(b)], check=False, stdout=sys.stdout)
    print(f"{len(names)} reports, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("out", type=Path)
    snap.add_argument("--corpora", type=Path)
    snap.add_argument("--jobs", type=int, default=2)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("old", type=Path)
    cmp_.add_argument("new", type=Path)
    args = ap.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.out, args.corpora, args.jobs)
        return 0
    return compare(args.old, args.new)


if __name__ == "__main__":
    raise SystemExit(main())
