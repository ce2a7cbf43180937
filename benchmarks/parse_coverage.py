"""How much real CUDA the front end (preprocess -> parse -> lower) understands, and how fast.

    python benchmarks/parse_coverage.py FOLDER [-I DIR]... [-D NAME[=VALUE]]... [--errors N] [--list]

Walks FOLDER for `*.cu`. Each file is preprocessed (include dirs: every `-I DIR`, then the
file's own folder), parsed and lowered; everything is caught per file, so a crash is
counted, and its traceback summary printed, without stopping the walk. It prints:

* files, and files with errors (any WL900/WL901 diagnostic from any stage);
* kernels found: `__global__` function definitions, counted in the AST (a template kernel
  counts once) plus those inside top-level declarations the parser had to skip whole (they
  are found, and not lowered);
* kernels lowered: those for which lowering produced a `Function`. A template kernel that
  the file never launches is lowered once more here with its template parameters bound to
  defaults (`float` for a type, the declared default or 128 for a value, 1 for a `bool`), so
  it counts when its body can be understood;
* crashes, seconds (preprocess + parse + lower, parser start-up excluded) and lines/second
  (lines of the `.cu` files themselves; the lines of the preprocessed text are shown too);
* the most common causes of diagnostics and the kernels that were not lowered.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.call_graph import build_call_graph
from analyzer.ir.lower import Lowerer
from analyzer.ir.nodes import walk_statements
from analyzer.source.preprocess import preprocess_file
from analyzer.syntax import ast as A
from analyzer.syntax.parse import cuda_tables, parse

ERROR_CODES = ("WL900", "WL901")
_KERNEL_DEFINITION = re.compile(r"\b__global__\b[^;{}]*\)\s*(?:const\s*)?\{")


@dataclass
class FileResult:
    path: Path
    kernels: list[str] = field(default_factory=list)  # every __global__ definition found
    lowered: list[str] = field(default_factory=list)
    defaulted: list[str] = field(default_factory=list)  # template kernels lowered with default arguments
    partial: list[str] = field(default_factory=list)  # lowered with a statement skipped or a type unknown
    instances: int = 0  # kernel Functions lowered (one per template instantiation)
    not_lowered: list[tuple[str, str]] = field(default_factory=list)  # (kernel, why)
    diagnostics: list[Any] = field(default_factory=list)
    crash: str | None = None
    lines: int = 0
    pp_lines: int = 0
    seconds: float = 0.0

    @property
    def has_errors(self) -> bool:
        return any(d.code in ERROR_CODES for d in self.diagnostics)


def default_template_args(fd: A.FunctionDef, lowerer: Lowerer) -> tuple[Any, ...]:
    """Stand-in arguments for a template kernel the file never launches: `float` for a type
    parameter, the declared default (or 128; 1 for `bool`) for a value parameter."""
    out: list[Any] = []
    for p in fd.template_params:
        if p.kind == "type":
            if isinstance(p.default, A.TypeName):
                try:
                    out.append(lowerer.type_of_typename(p.default))
                    continue
                except Exception:  # noqa: BLE001 - fall back to float
                    pass
            out.append(T.FLOAT)
            continue
        value = lowerer.const_int(p.default) if isinstance(p.default, A.Expr) else None
        if value is None:
            is_bool = p.specs is not None and "bool" in p.specs.type.names
            value = 1 if is_bool else 128
        out.append(value)
    return tuple(out)


def kernel_definitions(unit: A.TranslationUnit) -> list[A.FunctionDef]:
    return [d for d in unit.decls if isinstance(d, A.FunctionDef) and "__global__" in d.specs.storage]


def analyse_file(path: Path, include_dirs: list[str], defines: dict[str, str | None]) -> FileResult:
    result = FileResult(path)
    source = path.read_text(encoding="utf-8", errors="replace")
    result.lines = source.count("\n") + (not source.endswith("\n"))
    t = time.perf_counter()
    try:
        pp = preprocess_file(str(path), include_paths=[*include_dirs, str(path.parent)], defines=defines)
        result.diagnostics.extend(pp.diagnostics)
        result.pp_lines = pp.text.count("\n") + 1
        parsed = parse(pp.text)
        result.diagnostics.extend(parsed.diagnostics)
        lowerer = Lowerer(pp.text, str(path))
        module = lowerer.lower_unit(parsed.unit)
        if any(fn.calls for fn in module.functions.values()):
            module.call_graph = build_call_graph(module)
        lowered_spans = {fn.span for fn in module.kernels}
        result.instances = len(module.kernels)
        for fn in module.kernels:
            unknown_arg = any(isinstance(a, T.UnknownType) for a in fn.template_args)
            skipped_stmt = any(isinstance(st, N.Skipped) for st in walk_statements(fn.body)) or any(
                fn.span.start <= u.span.start < fn.span.end for u in parsed.skipped
            )
            if unknown_arg or skipped_stmt:
                result.partial.append(fn.name)
        for fd in kernel_definitions(parsed.unit):
            label = fd.name
            result.kernels.append(label)
            if fd.span in lowered_spans:
                result.lowered.append(label)
                continue
            if fd.template_params:  # never launched here: lower one default instantiation
                before = len(lowerer.diagnostics)
                fn = lowerer.lower_function(fd, "global", default_template_args(fd, lowerer))
                if fn is not None:
                    result.lowered.append(label)
                    result.defaulted.append(label)
                    continue
                why = "; ".join(d.message for d in lowerer.diagnostics[before:]) or "lowering failed"
            else:
                why = next(
                    (
                        d.message
                        for d in module.diagnostics
                        if d.message.startswith(f"cannot lower function '{fd.name}'")
                    ),
                    "lowering failed",
                )
            result.not_lowered.append((label, why))
        result.diagnostics.extend(module.diagnostics)
        # kernels inside declarations the parser had to drop whole were found, not lowered
        for skipped in parsed.skipped:
            for m in _KERNEL_DEFINITION.finditer(skipped.text):
                if (
                    skipped.text.lstrip().startswith(
                        ("template", "__global__", "static", "extern", "inline", "__launch_bounds__")
                    )
                    or m.start() == 0
                ):
                    name = _kernel_name(m.group(0))
                    result.kernels.append(name)
                    result.not_lowered.append((name, f"not parsed ({skipped.what})"))
    except Exception:  # noqa: BLE001 - one bad file must not stop the walk
        result.crash = traceback.format_exc(limit=-4)
    result.seconds = time.perf_counter() - t
    return result


def _kernel_name(head: str) -> str:
    m = re.search(r"([A-Za-z_]\w*)\s*\(", head.replace("__launch_bounds__", "").replace("__global__", ""))
    return m.group(1) if m else "?"


def _cause(message: str) -> str:
    """A diagnostic message with names and numbers taken out, to group similar causes."""
    s = re.sub(r"'[^']*'", "'…'", message)
    s = re.sub(r"\b\d+\b", "N", s)
    return s[:110]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("-I", dest="include", action="append", default=[], help="include directory (repeatable)")
    ap.add_argument("-D", dest="define", action="append", default=[], help="NAME or NAME=VALUE (repeatable)")
    ap.add_argument("--errors", type=int, default=25, help="show up to N most common causes")
    ap.add_argument("--list", action="store_true", help="list every kernel that was not lowered")
    args = ap.parse_args(argv)

    paths = sorted(p for p in args.folder.rglob("*.cu") if p.is_file())
    if not paths:
        print(f"no *.cu under {args.folder}", file=sys.stderr)
        return 2
    defines: dict[str, str | None] = {}
    for d in args.define:
        name, _, value = d.partition("=")
        defines[name] = value or None

    t0 = time.perf_counter()
    cuda_tables()  # load (or build) the parse tables outside the timed loop
    startup = time.perf_counter() - t0

    results = [analyse_file(p, args.include, defines) for p in paths]

    files = len(results)
    kernels = sum(len(r.kernels) for r in results)
    lowered = sum(len(r.lowered) for r in results)
    crashes = [r for r in results if r.crash]
    with_errors = [r for r in results if r.has_errors]
    seconds = sum(r.seconds for r in results)
    lines = sum(r.lines for r in results)
    pp_lines = sum(r.pp_lines for r in results)
    pct = 100.0 * lowered / kernels if kernels else 100.0

    print(f"files          {files}")
    print(f"kernels found  {kernels}")
    defaulted = sum(len(r.defaulted) for r in results)
    print(
        f"kernels lowered {lowered} ({pct:.1f}%), {defaulted} of them template kernels not launched in their "
        f"file, lowered with default arguments"
    )
    partial = sum(len(r.partial) for r in results)
    instances = sum(r.instances for r in results)
    print(
        f"                {instances} kernel functions (one per instantiation), {partial} of them with a statement "
        f"skipped or an unknown template argument"
    )
    print(f"files w/ errors {len(with_errors)} (WL900/WL901)")
    print(f"crashes        {len(crashes)}")
    print(f"lines          {lines} in .cu files, {pp_lines} after preprocessing")
    print(f"seconds        {seconds:.2f} (+{startup:.2f} parser start-up)")
    print(
        f"lines/second   {lines / seconds:,.0f} (.cu lines), {pp_lines / seconds:,.0f} (preprocessed)"
        if seconds
        else "lines/second   -"
    )

    causes: Counter[str] = Counter()
    for r in results:
        for d in r.diagnostics:
            if d.code in ("WL900", "WL901", "WL902", "WL903"):
                causes[f"{d.code} {_cause(d.message)}"] += 1
    if causes:
        print("\nmost common diagnostics:")
        for cause, n in causes.most_common(args.errors):
            print(f"  {n:5d}  {cause}")
    missing = [(r.path, k, why) for r in results for k, why in r.not_lowered]
    if missing:
        print(f"\nkernels not lowered: {len(missing)}")
        for path, k, why in missing if args.list else missing[: args.errors]:
            print(f"  {path.relative_to(args.folder)}: {k}: {why[:160]}")
    for r in crashes:
        print(f"\nCRASH {r.path}:\n{r.crash}")
    return 1 if crashes or pct < 90.0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
