"""The PTX front end's steps, for `warplint check k.ptx` and `warplint check --via-ptx k.cu`.

`analyzer.api` chains them as it chains the CUDA-C stages, and runs the rules on what they
return (this module never imports a later stage):

    ptx_source(path, arch, options, text) -> PtxSource   the PTX text (nvcc compiles a .cu)
    parse_source(source, path) -> ParsedPtx              the module and its line map
    analyze_entries(parsed, options, arch, host, linemap)
        -> KernelAnalysis | EntryFailure, one by one      every entry for every launch
    collapse_copies(findings, linemap)                   nvcc's copies of an access as one finding

The CUDA-C module of a `--via-ptx` file (its host launches and parameter names) comes from
the CUDA-C stages, which `api` runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from analyzer.arch import Architecture
from analyzer.diagnostics import Diagnostic, Location, Severity

__all__ = [
    "NVCC_TIMEOUT",
    "EntryFailure",
    "NvccProblem",
    "ParsedPtx",
    "PtxSource",
    "analyze_entries",
    "collapse_copies",
    "compile_to_ptx",
    "parse_source",
    "ptx_source",
]

NVCC_TIMEOUT = 300  # seconds; nvcc on one file
_NVCC_ERROR = re.compile(r"^(?P<path>.*?)\((?P<line>\d+)\): (?P<kind>error|catastrophic error): (?P<msg>.*)$")


class NvccProblem(Exception):
    """nvcc is missing or failed: `diagnostics` say why (tool errors, or the file's errors)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "nvcc failed")
        self.diagnostics = diagnostics


def compile_to_ptx(path: str, arch: str, defines: dict[str, str | None], include_paths: list[str], workdir: str) -> str:
    """Run `nvcc -ptx -lineinfo -arch=<arch>` on `path`; the PTX text. Raises NvccProblem."""
    nvcc = shutil.which("nvcc")
    at_top = Location(path, 1, 1, 1, 1)
    if nvcc is None:
        raise NvccProblem(
            [
                Diagnostic(
                    Severity.ERROR,
                    "--via-ptx needs nvcc, and nvcc is not on the PATH",
                    "WL910",
                    location=at_top,
                    notes=("install the CUDA toolkit (or add its bin folder to PATH), or give warplint a .ptx file",),
                )
            ]
        )
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
        raise NvccProblem(
            [Diagnostic(Severity.ERROR, f"nvcc could not run: {err}", "WL910", location=at_top)]
        ) from None
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
            found.append(
                Diagnostic(Severity.ERROR, f"nvcc: {m.group('msg')}", "WL901", location=Location(where, n, 1, n, 1))
            )
    if found:
        return found
    first = next((ln for ln in output.splitlines() if ln.strip()), f"exit status {code}")
    return [Diagnostic(Severity.ERROR, f"nvcc failed: {first.strip()}", "WL910", location=Location(path, 1, 1, 1, 1))]


@dataclass(frozen=True)
class PtxSource:
    """The PTX text to analyse and the path its own positions are reported under."""

    text: str
    ptx_path: str  # the .ptx file itself, or the .ptx beside the .cu that nvcc compiled


def ptx_source(path: str, arch: str, options: Any, text: str | None = None) -> PtxSource:
    """The PTX of `path`: the file itself (or `text` standing for it) when it is a .ptx file,
    else what `nvcc -ptx` makes of the CUDA file for `arch` with `options`' -D and -I.
    Raises `NvccProblem`."""
    if path.endswith(".ptx"):
        if text is None:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        return PtxSource(text, path)
    with tempfile.TemporaryDirectory(prefix="warplint-ptx-") as work:
        compiled = compile_to_ptx(path, arch, options.defines, options.include_paths, work)
    return PtxSource(compiled, os.path.splitext(path)[0] + ".ptx")


@dataclass(frozen=True)
class ParsedPtx:
    """A parsed PTX module (its `diagnostics` are the syntax errors) and its line map, which
    resolves PTX spans to the CUDA lines of the `.loc` directives."""

    path: str  # the file warplint was given (.ptx, or the .cu nvcc compiled)
    module: Any  # analyzer.ptx.nodes.PtxModule
    linemap: Any  # analyzer.ptx.analyze.PtxLineMap


def parse_source(source: PtxSource, path: str) -> ParsedPtx:
    """Parse `source` with recovery; CUDA file names in its `.loc`s are made relative to `path`."""
    from analyzer.ptx.analyze import PtxLineMap, relative_to, source_locations
    from analyzer.ptx.parse import parse_ptx

    module = parse_ptx(source.text, source.ptx_path, recover=True)
    locations = source_locations(module, lambda p: relative_to(p, path))
    return ParsedPtx(path, module, PtxLineMap(source.text, source.ptx_path, locations))


@dataclass(frozen=True)
class EntryFailure:
    """An exception while analysing one PTX entry; the other entries go on, and `api`
    reports it as an internal error at the entry's name."""

    kernel: str  # the entry's display name
    location: Location
    error: BaseException


def analyze_entries(
    parsed: ParsedPtx, options: Any, arch: Architecture, host: Any = None, host_linemap: Any = None
) -> Iterator[Any]:
    """A `KernelAnalysis` for every entry of `parsed` and every launch configuration it gets,
    one at a time, or an `EntryFailure` for an entry whose analysis raised (what it yielded
    before stands). `host` is the CUDA-C module of the file nvcc compiled (None for a .ptx
    file): its launches and parameter names; `host_linemap` resolves its spans."""
    from analyzer.analysis.launch import LaunchIndex, kernel_params, launch_configs
    from analyzer.ir import nodes as N
    from analyzer.ptx.analyze import analyze_entry, kernel_for, ptx_kernel

    linemap = parsed.linemap
    no_host = N.Module(parsed.path, {}, [], [], [], [])
    cuda_kernels = list(host.kernels) if host is not None else []
    index = LaunchIndex(host) if host is not None else None  # the host code run once for every entry

    def line_of(span: Any) -> int:
        return host_linemap.resolve_span(span).line if host_linemap is not None else 0

    for fn in parsed.module.entries:
        kernel = ptx_kernel(fn, linemap, kernel_for(fn, cuda_kernels))
        try:
            module, k = (host, kernel.cuda) if kernel.cuda is not None else (no_host, kernel.function)
            tables = options.kernels
            given = options.params or None
            for launch in launch_configs(
                module,
                k,
                block=options.block,
                grid=options.grid,
                params=given,
                line_of=line_of,
                tables=tables,
                launches=index if module is host else None,
            ):
                yield analyze_entry(
                    kernel, parsed.module, linemap, launch, arch, kernel_params(given, tables, k) or None
                )
        except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
            yield EntryFailure(kernel.function.display_name, linemap.resolve_span(kernel.function.name_span), err)


def collapse_copies(findings: list[Any], linemap: Any) -> list[Any]:
    """One finding for the copies nvcc makes of one access (an unrolled loop, a device
    function inlined twice): findings of one rule, kernel and array at the same CUDA place
    with the same cost are one, which says how many instructions it stands for."""
    groups: dict[tuple, list[Any]] = {}
    for f in findings:
        loc = linemap.resolve_span(f.span)
        args = f.args or {}
        key = (
            f.code,
            f.kernel,
            loc.path,
            loc.line,
            loc.column,
            args.get("array"),
            args.get("per_request", args.get("wavefronts", args.get("sectors"))),
            args.get("ways"),
        )
        groups.setdefault(key, []).append(f)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) > 1:
            note = f"nvcc emits {len(group)} instructions for this access (an unrolled loop or an inlined call); one finding stands for them"
            first = replace(first, detail=(*first.detail, note))
        out.append(first)
    return out
