"""The PTX path: parse -> dataflow -> cost -> rules, for `warplint check k.ptx` and
`warplint check --via-ptx k.cu` (which runs nvcc first). Called by `analyzer.api` only,
which owns the file report; this module chains the PTX stages as `api._run_pipeline`
chains the CUDA-C ones.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any

from analyzer.diagnostics import Diagnostic, Location, Severity

__all__ = ["NVCC_TIMEOUT", "compile_to_ptx", "run_ptx_pipeline"]

NVCC_TIMEOUT = 300  # seconds; nvcc on one file
_NVCC_ERROR = re.compile(r"^(?P<path>.*?)\((?P<line>\d+)\): (?P<kind>error|catastrophic error): (?P<msg>.*)$")


class NvccProblem(Exception):
    """nvcc is missing or failed: `diagnostics` say why (tool errors, or the file's errors)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "nvcc failed")
        self.diagnostics = diagnostics


def compile_to_ptx(path: str, arch: str, defines: dict[str, str | None], include_paths: list[str],
                   workdir: str) -> str:
    """Run `nvcc -ptx -lineinfo -arch=<arch>` on `path`; the PTX text. Raises NvccProblem."""
    nvcc = shutil.which("nvcc")
    at_top = Location(path, 1, 1, 1, 1)
    if nvcc is None:
        raise NvccProblem([Diagnostic(
            Severity.ERROR, "--via-ptx needs nvcc, and nvcc is not on the PATH", "WL910", location=at_top,
            notes=("install the CUDA toolkit (or add its bin folder to PATH), or give warplint a .ptx file",))])
    out = os.path.join(workdir, os.path.splitext(os.path.basename(path))[0] + ".ptx")
    cmd = [nvcc, "-ptx", "-lineinfo", f"-arch={arch}", "-o", out]
    for name, value in defines.items():
        cmd.append(f"-D{name}" if value is None else f"-D{name}={value}")
    for d in include_paths:
        cmd.append(f"-I{d}")
    cmd.append(path)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise NvccProblem([Diagnostic(Severity.ERROR, f"nvcc could not run: {err}", "WL910", location=at_top)]) from None
    if done.returncode != 0 or not os.path.exists(out):
        raise NvccProblem(_nvcc_errors(path, done.stderr or done.stdout or "", done.returncode))
    with open(out, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _nvcc_errors(path: str, output: str, code: int) -> list[Diagnostic]:
    """nvcc's `file(line): error: ...` lines as WL901 syntax errors; anything else a tool error."""
    found = []
    for line in output.splitlines():
        m = _NVCC_ERROR.match(line.strip())
        if m:
            n = int(m.group("line"))
            where = path if os.path.basename(m.group("path")) == os.path.basename(path) else m.group("path")
            found.append(Diagnostic(Severity.ERROR, f"nvcc: {m.group('msg')}", "WL901",
                                    location=Location(where, n, 1, n, 1)))
    if found:
        return found
    first = next((ln for ln in output.splitlines() if ln.strip()), f"exit status {code}")
    return [Diagnostic(Severity.ERROR, f"nvcc failed: {first.strip()}", "WL910",
                       location=Location(path, 1, 1, 1, 1))]


def _cuda_module(path: str, options: Any) -> Any:
    """The CUDA-C IR of `path` (for its host launches and parameter names), or None."""
    try:
        from analyzer.ir.lower import lower
        from analyzer.source.preprocess import preprocess_file
        from analyzer.syntax.parse import parse

        pre = preprocess_file(path, defines=options.defines, include_paths=options.include_paths)
        return lower(parse(pre.text).unit, pre.text, path), pre
    except (Exception, RecursionError):  # noqa: BLE001 - the PTX is analysed without launches
        return None, None


def run_ptx_pipeline(path: str, options: Any, report: Any, diagnostics: list[Diagnostic],
                     text: str | None = None) -> None:
    """Analyse the PTX file `path` (or, with `options.via_ptx`, the PTX nvcc makes of the
    CUDA file `path`), filling `report` like `api._run_pipeline` does."""
    from analyzer.analysis.launch import launch_configs
    from analyzer.arch import get_arch
    from analyzer.ir import nodes as N
    from analyzer.ptx.analyze import PtxLineMap, analyze_entry, kernel_for, ptx_kernel, relative_to, source_locations
    from analyzer.ptx.parse import parse_ptx

    arch = get_arch(options.arch)
    cuda, pre = None, None
    ptx_path = path
    if path.endswith(".ptx"):
        if text is None:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
    else:
        with tempfile.TemporaryDirectory(prefix="warplint-ptx-") as work:
            try:
                text = compile_to_ptx(path, options.arch, options.defines, options.include_paths, work)
            except NvccProblem as problem:
                diagnostics.extend(problem.diagnostics)
                return
        ptx_path = os.path.splitext(path)[0] + ".ptx"
        cuda, pre = _cuda_module(path, options)
    module = parse_ptx(text, ptx_path, recover=True)
    diagnostics.extend(module.diagnostics)
    linemap = PtxLineMap(text, ptx_path, source_locations(module, lambda p: relative_to(p, path)))
    report.linemap = linemap
    host = N.Module(path, {}, [], [], [], [])
    cuda_kernels = list(cuda.kernels) if cuda is not None else []

    def line_of(span: Any) -> int:
        return pre.linemap.resolve_span(span).line if pre is not None else 0

    kernels = []
    for fn in module.entries:
        kernel = ptx_kernel(fn, linemap, kernel_for(fn, cuda_kernels))
        try:
            mod, k = (cuda, kernel.cuda) if kernel.cuda is not None else (host, kernel.function)
            launches = launch_configs(mod, k, block=options.block, grid=options.grid,
                                      params=options.params or None, line_of=line_of)
            for launch in launches:
                analysis = analyze_entry(kernel, module, linemap, launch, arch, options.params or None)
                report.kernels.append(analysis)
            kernels.append(kernel)
        except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
            from analyzer.api import _internal_error

            diagnostics.append(_internal_error(path, err, f"while analysing kernel `{kernel.function.display_name}`",
                                               linemap.resolve_span(kernel.function.name_span)))
    if not report.kernels:
        return
    from analyzer.rules.registry import check

    def no_reanalysis(analysis: Any) -> Any:
        return lambda padding: None  # padding fixes are checked on the CUDA-C path only

    from analyzer.api import _internal_error, _span_key

    try:
        findings = check(report.kernels, arch, no_reanalysis, select=options.select, ignore=options.ignore)
    except (Exception, RecursionError) as err:  # noqa: BLE001 - keep the analyses
        diagnostics.append(_internal_error(path, err, "while checking the rules"))
        findings = []
    findings = sorted(findings, key=lambda f: (_span_key(f.span), str(f.code)))
    report.findings = collapse_copies(findings, linemap)


def collapse_copies(findings: list[Any], linemap: Any) -> list[Any]:
    """One finding for the copies nvcc makes of one access (an unrolled loop, a device
    function inlined twice): findings of one rule, kernel and array at the same CUDA place
    with the same cost are one, which says how many instructions it stands for."""
    import dataclasses

    groups: dict[tuple, list[Any]] = {}
    for f in findings:
        loc = linemap.resolve_span(f.span)
        args = f.args or {}
        key = (f.code, f.kernel, loc.path, loc.line, loc.column, args.get("array"),
               args.get("per_request", args.get("wavefronts", args.get("sectors"))), args.get("ways"))
        groups.setdefault(key, []).append(f)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) > 1:
            note = f"nvcc emits {len(group)} instructions for this access (an unrolled loop or an inlined call); one finding stands for them"
            first = dataclasses.replace(first, detail=tuple(first.detail) + (note,))
        out.append(first)
    return out
