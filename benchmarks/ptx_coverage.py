"""How much real PTX the PTX front end parses, and how fast.

    python benchmarks/ptx_coverage.py FOLDER [--errors N] [--strict] [--no-dataflow]

Walks FOLDER for `*.ptx`, parses each file with `parse_ptx(..., recover=True)`
(catching everything per file) and prints the files, the functions parsed and
lost, the files with errors, the lines, the seconds and lines per second. A file
counts as ok only when it parsed with no error at all. The first error of up to
N failing files is listed (default 20).

Then (unless --no-dataflow) it runs the register dataflow (`ptx.dataflow.evaluate`:
CFG, loops, symbolic registers, accesses) on every `.entry` and counts the entries
analysed without an exception, the accesses found, and PTX lines per second for
parse + dataflow together.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.ptx.dataflow import evaluate
from analyzer.ptx.parse import parse_ptx, ptx_parser


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--errors", type=int, default=20, help="show the first error of up to N files")
    ap.add_argument("--strict", action="store_true", help="raise at the first error (no recovery)")
    ap.add_argument("--no-dataflow", action="store_true", help="only parse")
    args = ap.parse_args(argv)

    paths = sorted(p for p in args.folder.rglob("*.ptx") if p.is_file())
    if not paths:
        print(f"no *.ptx under {args.folder}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    ptx_parser()  # build (or load) the parser outside the timed loop
    startup = time.perf_counter() - t0

    ok = functions = lost = lines = bytes_ = instructions = 0
    failures: list[tuple[Path, str]] = []
    kinds: Counter[str] = Counter()
    seconds = cpu = 0.0
    entries = entries_ok = accesses = 0
    flow_seconds = flow_cpu = 0.0
    flow_failures: list[tuple[Path, str]] = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n") + (not text.endswith("\n"))
        bytes_ += len(text)
        t = time.perf_counter()
        c = time.process_time()
        try:
            module = parse_ptx(text, str(path), recover=not args.strict)
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the walk
            seconds += time.perf_counter() - t
            cpu += time.process_time() - c
            kinds[type(e).__name__] += 1
            failures.append((path, f"{type(e).__name__}: {e}" if args.strict else traceback.format_exc(limit=3)))
            continue
        seconds += time.perf_counter() - t
        cpu += time.process_time() - c
        functions += len(module.functions)
        instructions += sum(len(f.body) for f in module.functions)
        lost += len(module.failed_functions)
        if not args.no_dataflow:
            t = time.perf_counter()
            c = time.process_time()
            for fn in module.entries:
                entries += 1
                try:
                    accesses += len(evaluate(fn, module).accesses)
                    entries_ok += 1
                except Exception:  # noqa: BLE001 - count it, show it, go on
                    flow_failures.append((path, f"{fn.name}: " + traceback.format_exc(limit=3)))
            flow_seconds += time.perf_counter() - t
            flow_cpu += time.process_time() - c
        if module.diagnostics:
            kinds["syntax"] += 1
            d = module.diagnostics[0]
            loc = d.location
            failures.append((path, f"{loc.line}:{loc.column}: {d.message} (+{len(module.diagnostics) - 1} more)"))
        else:
            ok += 1

    total = len(paths)
    print(f"files          {ok}/{total} ok ({100.0 * ok / total:.1f}%), {total - ok} with errors {dict(kinds)}")
    print(f"functions      {functions} parsed, {lost} lost to errors")
    print(f"statements     {instructions}")
    print(f"lines          {lines} ({bytes_ / 1e6:.1f} MB)")
    print(f"seconds        {seconds:.2f} wall, {cpu:.2f} CPU (+{startup:.2f} parser start-up)")
    if seconds and cpu:
        print(f"lines/second   {lines / seconds:,.0f} wall, {lines / cpu:,.0f} CPU")
    if not args.no_dataflow and entries:
        print(
            f"entries        {entries_ok}/{entries} analysed without error ({100.0 * entries_ok / entries:.1f}%), "
            f"{accesses} shared/global/generic accesses"
        )
        both, both_cpu = seconds + flow_seconds, cpu + flow_cpu
        print(
            f"dataflow       {flow_seconds:.2f} wall, {flow_cpu:.2f} CPU; parse + dataflow "
            f"{lines / both:,.0f} lines/s wall, {lines / max(both_cpu, 1e-9):,.0f} CPU"
        )
    for path, message in (failures + flow_failures)[: args.errors]:
        print(f"\n{path}:\n  {message.strip()}")
    return 0 if ok == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
