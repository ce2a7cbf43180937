"""How many of the kernels of real CUDA code warplint analyses cleanly, per corpus and overall.

    python benchmarks/kernel_coverage.py CORPORA_DIR [--corpus NAME]... [--jobs N] [--list] [--per-file]

CORPORA_DIR holds the public corpora checked out side by side (`cuda-samples`, `gpu-rodinia`,
`polybenchGpu`, `GPUVerifyBenchmarks`, `racuda`); each is checked with the include folders its
code needs (`cuda-samples/Common`, `gpu-rodinia/cuda/util`).

Each program is checked as a user runs warplint on it: one run of `analyzer.program.check_program`
(`warplint check FOLDER -I ...`), so that a kernel file another `.cu` `#include`s (Rodinia's
`kernel_gpu_cuda.cu`) is analysed with its includer's macros and types, and launches in one file
reach kernels of another. A *program* is what `compare_reports.py` runs as one: the `.cu`/`.cuh`
files below the folder `PROGRAM_DEPTH[corpus]` levels under the corpus's root (the sample's
folder: `Samples/0_Introduction/vectorAdd`, Rodinia's `cuda/lavaMD`), and in the corpora without
a depth the files directly in one folder (each GPUVerify kernel's folder). `--per-file` checks
each file on its own instead (the measure before issue 15's part 5), to show what the
includer's context is worth.

Per corpus and overall it prints:

* kernel definitions: `__global__` function definitions in the source text (comments left out),
  each counted once by the file and line of its name, however many files include it;
* kernels analysed: definitions with at least one `KernelAnalysis`;
* kernels clean: analysed, with no WL901/WL902/WL903 anywhere in their device code (the
  kernel's body and the bodies of the device functions it calls, transitively);
* kernels with no costed access, and why: the WL9xx note warplint gives at the kernel, or
  "no reason given"; "indexes memory" when the kernel's text subscripts or dereferences;
* WL901 in device code: syntax errors inside a kernel or a device function it calls, or in a
  declaration the parser gave up that holds `__global__`.

Every diagnostic is looked at, host code's included (`Options.show_host`), and classified here.
The corpora are for measuring only: never copy their code into the repository.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyzer.api import Options, check_file, collect_files
from compare_reports import PROGRAM_DEPTH

CORPORA = {
    "cuda-samples": ["Common"],
    "gpu-rodinia": ["cuda/util"],
    "polybenchGpu": [],
    "GPUVerifyBenchmarks": [],
    "racuda": [],
}
FRONT_END_CODES = ("WL901", "WL902", "WL903")
_KERNEL_DEFINITION = re.compile(r"\b__global__\b[^;{}]*?\)\s*(?:const\s*)?\{")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
_NAME_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*\($")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_INDEXES_MEMORY = re.compile(r"[\w\)\]]\s*\[|->|\*\s*\(?\s*[A-Za-z_]\w*\s*[+)]")


@dataclass
class FileFigures:
    """What one file contributes: kernels keyed by (file, line of the name)."""

    definitions: set[tuple[str, int]] = field(default_factory=set)
    analysed: set[tuple[str, int]] = field(default_factory=set)
    unclean: dict[tuple[str, int], str] = field(default_factory=dict)  # kernel -> first front-end diagnostic
    costless: dict[tuple[str, int], str] = field(default_factory=dict)  # kernel -> why no access was costed
    indexes: set[tuple[str, int]] = field(default_factory=set)  # costless kernels whose text indexes memory
    costed: set[tuple[str, int]] = field(default_factory=set)
    device_wl901: set[tuple[str, int, int]] = field(default_factory=set)
    names: dict[tuple[str, int], str] = field(default_factory=dict)


def _blank_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def kernel_definitions(path: str) -> dict[tuple[str, int], str]:
    """`__global__` definitions in the file's text: (path, line of the name) -> name."""
    try:
        text = _blank_comments(Path(path).read_text(errors="replace"))
    except OSError:
        return {}
    found = {}
    for match in _KERNEL_DEFINITION.finditer(text):
        head = _LAUNCH_BOUNDS.sub(lambda m: " " * len(m.group()), match.group())
        paren = head.find("(", head.find("__global__"))
        name = _NAME_BEFORE_PAREN.search(head[: paren + 1])
        if name is None or text.rfind("#define", 0, match.start()) > text.rfind("\n", 0, match.start()):
            continue
        offset = match.start() + name.start(1)
        found[(str(Path(path).resolve()), text.count("\n", 0, offset) + 1)] = name.group(1)
    return found


def _device_spans(kernel, functions) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """The spans of the kernel and of every function it calls, transitively."""
    seen, todo, spans = set(), [kernel], []
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        spans.append((fn.span.start, fn.span.end))
        todo.extend(functions[c] for c in fn.calls if c in functions)
    return spans


def _lowered_functions(path: str, options: Options):  # type: ignore[no-untyped-def]
    """The module's functions and the parser's skipped declarations (the front end run again,
    on the file whose preprocessed text the report's spans index: an included file's owner)."""
    from analyzer.api import preprocess_options
    from analyzer.ir.lower import lower
    from analyzer.source.preprocess import preprocess_file
    from analyzer.syntax.parse import parse

    pre = preprocess_file(path, **preprocess_options(options))
    parsed = parse(pre.text)
    module = lower(parsed.unit, pre.text, path)
    return module.functions, parsed.skipped


def _options(include: list[str]) -> Options:
    options = Options(include_paths=include)
    options.show_host = True  # every diagnostic, host code's included
    return options


def programs(root: Path, corpus: str, files: list[str]) -> list[list[str]]:
    """The files grouped by program (see the module), in the run's order."""
    depth = PROGRAM_DEPTH.get(corpus)
    by_program: dict[tuple[str, ...], list[str]] = {}
    for f in files:
        parts = Path(f).relative_to(root).parts
        by_program.setdefault(parts[:depth] if depth else parts[:-1], []).append(f)
    return list(by_program.values())


def measure_files(paths: list[str], include: list[str]) -> FileFigures:
    """Check each file on its own with every diagnostic shown and classify what it gives."""
    options = _options(include)
    figures = FileFigures()
    for path in paths:
        _classify(check_file(path, options), path, path, options, figures)
    return figures


def measure_program(paths: list[str], include: list[str]) -> FileFigures:
    """Check the files of one program as one run (`check_program`) and classify each report.
    An included file's report shares its owner's line map, so its spans index the owner's
    text: the line map's first file (no `-include` in these runs) is the file to lower again."""
    from analyzer.program import check_program

    options = _options(include)
    figures = FileFigures()
    for report in check_program(paths, options):
        owner = report.linemap.files[0].path if report.linemap is not None and report.linemap.files else report.path
        _classify(report, report.path, owner, options, figures)
    return figures


def _classify(report, path: str, owner: str, options: Options, figures: FileFigures) -> None:  # type: ignore[no-untyped-def]
    """Add one file's report to `figures`; `owner` is the file whose text the report's spans index."""
    definitions = kernel_definitions(path)
    figures.definitions.update(definitions)
    figures.names.update(definitions)
    if not report.kernels:
        return
    functions, skipped = _lowered_functions(owner, options)
    front_end = [d for d in report.diagnostics if d.code in FRONT_END_CODES]
    for d in front_end:
        if d.code == "WL901" and _in_kernel_declaration(report, d.location, skipped):
            figures.device_wl901.add((d.location.path, d.location.line, d.location.column))
    by_kernel: dict[tuple[str, int], list] = {}
    for analysis in report.kernels:
        where = report.locate(analysis.kernel.name_span)
        key = (str(Path(where.path).resolve()), where.line)
        by_kernel.setdefault(key, []).append(analysis)
        figures.names[key] = analysis.kernel.name
    for key, analyses in by_kernel.items():
        figures.analysed.add(key)
        kernel = analyses[0].kernel
        spans = [_region(report, s) for s in _device_spans(kernel, functions)]
        for d in front_end:
            if any(_inside(d.location, region) for region in spans):
                figures.unclean.setdefault(key, f"{d.code} {d.message}")
                if d.code == "WL901":
                    figures.device_wl901.add((d.location.path, d.location.line, d.location.column))
        if not any(c.per_request is not None for a in analyses for c in a.costs):
            # a WL901-903 in its device code is the reason given; else the WL908 note at the kernel
            figures.costless[key] = figures.unclean.get(key) or _why_costless(report, kernel)
            if _indexes_memory(report, kernel):
                figures.indexes.add(key)
        else:
            figures.costed.add(key)


def _region(report, span):  # type: ignore[no-untyped-def]
    """A span as (path, first (line, column), last (line, column)) of the original file."""
    from analyzer.diagnostics import Span

    where = report.locate(Span(*span))
    return where.path, (where.line, where.column), (where.end_line, where.end_column)


def _inside(location, region) -> bool:  # type: ignore[no-untyped-def]
    path, first, last = region
    return location.path == path and first <= (location.line, location.column) < last


def _in_kernel_declaration(report, location, skipped) -> bool:  # type: ignore[no-untyped-def]
    return any(
        "__global__" in u.text and _inside(location, _region(report, (u.span.start, u.span.end))) for u in skipped
    )


def _why_costless(report, kernel) -> str:  # type: ignore[no-untyped-def]
    """The note warplint gives at the kernel's name about its accesses, if any."""
    where = report.locate(kernel.name_span)
    for d in report.diagnostics:
        if d.location and (d.location.path, d.location.line) == (where.path, where.line) and d.code.startswith("WL9"):
            return f"{d.code} {d.message}"
    return "no reason given"


def _indexes_memory(report, kernel) -> bool:  # type: ignore[no-untyped-def]
    start, end = report.locate(kernel.span), report.locate(kernel.name_span)
    try:
        lines = Path(start.path).read_text(errors="replace").split("\n")[end.line - 1 : start.end_line]
    except OSError:
        return False
    body = _blank_comments("\n".join(lines))
    return bool(_INDEXES_MEMORY.search(body[body.find("{") :]))


@dataclass
class CorpusFigures:
    definitions: dict[tuple[str, int], str] = field(default_factory=dict)
    analysed: set[tuple[str, int]] = field(default_factory=set)
    unclean: dict[tuple[str, int], str] = field(default_factory=dict)
    costless: dict[tuple[str, int], str] = field(default_factory=dict)
    indexes: set[tuple[str, int]] = field(default_factory=set)
    device_wl901: set[tuple[str, int, int]] = field(default_factory=set)
    costed: set[tuple[str, int]] = field(default_factory=set)

    def add(self, f: FileFigures) -> None:
        self.definitions.update({k: f.names.get(k, "?") for k in f.definitions})
        self.analysed |= f.analysed
        for k, v in f.unclean.items():
            self.unclean.setdefault(k, v)
        self.costless.update(f.costless)
        self.indexes |= f.indexes
        self.device_wl901 |= f.device_wl901
        self.costed |= f.costed

    def clean(self) -> set[tuple[str, int]]:
        return {k for k in self.analysed & set(self.definitions) if k not in self.unclean}

    def costless_analysed(self) -> dict[tuple[str, int], str]:
        # a kernel costed in one file that includes it is costed
        return {k: v for k, v in self.costless.items() if k in self.definitions and k not in self.costed}


def _pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f}%)" if whole else "0"


def summary_line(name: str, c: CorpusFigures) -> str:
    defs = len(c.definitions)
    analysed = len(c.analysed & set(c.definitions))
    costless = c.costless_analysed()
    indexing = sum(1 for k in costless if k in c.indexes)
    return (
        f"{name:20} definitions {defs:4}  analysed {_pct(analysed, defs):>13}  clean {_pct(len(c.clean()), defs):>13}"
        f"  no costed access {len(costless):3} (indexing memory {indexing:2})  WL901 in device code {len(c.device_wl901)}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora")
    ap.add_argument("--corpus", action="append", help="only these corpora (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--list", action="store_true", help="list the kernels not clean, not analysed or costless")
    ap.add_argument("--per-file", action="store_true", help="check each file on its own, not each program")
    args = ap.parse_args(argv)
    total = CorpusFigures()
    lines = []
    for name, includes in CORPORA.items():
        if args.corpus and name not in args.corpus:
            continue
        root = Path(args.corpora) / name
        files = [p for p, problem in collect_files([str(root)]) if problem is None]
        include = [str(root / i) for i in includes]
        corpus = CorpusFigures()
        units = [[f] for f in files] if args.per_file else programs(root, name, files)
        measure = measure_files if args.per_file else measure_program
        with ProcessPoolExecutor(args.jobs) as pool:
            for figures in pool.map(measure, units, [include] * len(units), chunksize=2):
                corpus.add(figures)
        lines.append(summary_line(name, corpus))
        print(lines[-1], flush=True)
        if args.list:
            _list(corpus, root)
        _merge(total, corpus)
    print(summary_line("overall", total))
    reasons = Counter(v.split(" (")[0] for k, v in total.costless_analysed().items() if k in total.indexes)
    for why, n in reasons.most_common():
        print(f"  {n:3}  costless, indexing memory: {why}")
    return 0


def _merge(total: CorpusFigures, corpus: CorpusFigures) -> None:
    total.definitions.update(corpus.definitions)
    total.analysed |= corpus.analysed
    for k, v in corpus.unclean.items():
        total.unclean.setdefault(k, v)
    total.costless.update(corpus.costless)
    total.indexes |= corpus.indexes
    total.device_wl901 |= corpus.device_wl901
    total.costed |= corpus.costed


def _list(corpus: CorpusFigures, root: Path) -> None:
    def where(k: tuple[str, int]) -> str:
        return f"{Path(k[0]).relative_to(root.resolve()) if k[0].startswith(str(root.resolve())) else k[0]}:{k[1]}"

    for k, name in sorted(corpus.definitions.items()):
        if k not in corpus.analysed:
            print(f"    not analysed  {where(k)} {name}")
        elif k in corpus.unclean:
            print(f"    not clean     {where(k)} {name}: {corpus.unclean[k][:150]}")
    for k, why in sorted(corpus.costless_analysed().items()):
        mark = "indexes" if k in corpus.indexes else "       "
        print(f"    costless {mark} {where(k)} {corpus.definitions[k]}: {why[:150]}")


if __name__ == "__main__":
    sys.exit(main())
