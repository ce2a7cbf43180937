"""The PTX path of `warplint check`: a `.ptx` file, or what nvcc makes of a `.cu` with `--via-ptx`.

Chained as `analyzer.api` chains the CUDA-C path, with the same rules and diagnostics; kept
apart so that `api` holds the run and the CUDA-C pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from analyzer.api import FileReport, Options, in_source_order, internal_error, preprocess_options, rule_findings
from analyzer.arch import get_arch
from analyzer.diagnostics import Diagnostic

__all__ = ["host_module", "run_ptx_pipeline"]


def run_ptx_pipeline(
    path: str, options: Options, report: FileReport, diagnostics: list[Diagnostic], text: str | None
) -> None:
    """The PTX path (analyzer.ptx.pipeline): the PTX of a .ptx file, or what nvcc makes of a
    .cu with `--via-ptx` (then the CUDA-C module gives the launches and parameter names);
    parse, analyse every entry, check the rules (padding fixes are checked on the CUDA-C
    path only), one finding for nvcc's copies of an access."""
    from analyzer.ptx.pipeline import (
        EntryFailure,
        NvccProblem,
        analyze_entries,
        collapse_copies,
        parse_source,
        ptx_source,
    )

    arch = get_arch(options.arch)
    try:
        source = ptx_source(path, arch.name, options, text)
    except NvccProblem as problem:
        diagnostics.extend(problem.diagnostics)
        return
    host, host_pre = (None, None) if path.endswith(".ptx") else host_module(path, options)
    parsed = parse_source(source, path)
    diagnostics.extend(parsed.module.diagnostics)
    report.linemap = parsed.linemap
    host_linemap = host_pre.linemap if host_pre is not None else None
    for outcome in analyze_entries(parsed, options, arch, host, host_linemap):
        if isinstance(outcome, EntryFailure):
            diagnostics.append(
                internal_error(path, outcome.error, f"while analysing kernel `{outcome.kernel}`", outcome.location)
            )
        else:
            report.kernels.append(outcome)
    if not report.kernels:
        return
    findings = rule_findings(report.kernels, arch, no_reanalysis, options, path, diagnostics)
    report.findings = collapse_copies(in_source_order(findings), parsed.linemap)


def no_reanalysis(analysis: Any) -> Callable[[Mapping[str, int]], Any]:
    return lambda padding: None


def host_module(path: str, options: Options) -> tuple[Any, Any]:
    """preprocess -> parse -> lower the CUDA file a `--via-ptx` run compiled, for its host
    launches and parameter names: `(module, preprocessed)`, or `(None, None)` when that
    fails (the PTX is then analysed without them; the file's own diagnostics come from nvcc)."""
    try:
        from analyzer.ir.lower import lower
        from analyzer.source.preprocess import preprocess_file
        from analyzer.syntax.parse import parse

        pre = preprocess_file(path, **preprocess_options(options))
        return lower(parse(pre.text).unit, pre.text, path), pre
    except (Exception, RecursionError):  # noqa: BLE001 - the PTX is analysed without launches
        return None, None
