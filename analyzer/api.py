"""Run the whole pipeline on files: preprocess -> parse -> lower -> analyze -> check.

This module and `analyzer.cli` are the only ones that chain stages (like pyflakes'
`api.check()`). Each stage is imported inside the function that runs it, so importing
this module stays cheap and a stage that fails to import becomes a diagnostic for the
file, never a traceback.

`check_file` never raises: a file that cannot be read (missing, a folder, binary, too
large, unreadable) becomes one error diagnostic at `path:1:1`, and an unexpected
exception while analysing becomes an "internal error" diagnostic (WL900), after which
the other files are still analysed.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from analyzer.diagnostics import Diagnostic, Location, Severity, Span

__all__ = [
    "CUDA_SUFFIXES",
    "FileReport",
    "INPUT_ERROR",
    "INTERNAL_ERROR",
    "MAX_FILE_BYTES",
    "Options",
    "TOOL_ERRORS",
    "check_file",
    "check_paths",
    "collect_files",
]

CUDA_SUFFIXES = (".cu", ".cuh")
MAX_FILE_BYTES = 20 * 1024 * 1024  # larger inputs are refused, not read
BINARY_PROBE_BYTES = 8192  # how much of a file is inspected to tell text from binary
BINARY_RATIO = 0.30  # more non-text bytes than this in the probe: binary

INTERNAL_ERROR = "WL900"  # an exception inside warplint
INPUT_ERROR = "WL910"  # a path that is not a readable CUDA text file
TOOL_ERRORS = frozenset({INTERNAL_ERROR, INPUT_ERROR})  # error diagnostics that make the exit status 2


@dataclass
class Options:
    """What one run analyses for. Everything has the command line's default."""

    arch: str = "sm_90"
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    params: dict[str, int] = field(default_factory=dict)  # --param NAME=VALUE
    defines: dict[str, str | None] = field(default_factory=dict)  # -D NAME[=VALUE]; None means 1
    include_paths: list[str] = field(default_factory=list)  # -I DIR
    select: list[str] | None = None  # rule codes or names to report (None: every rule)
    ignore: list[str] | None = None  # rule codes or names never to report
    format: str = "text"


@dataclass
class FileReport:
    """Everything warplint found in one file.

    `diagnostics` are problems with the input or the tool, each with `location` set;
    `kernels` holds one `KernelAnalysis` per kernel and launch configuration; `findings`
    come from the rules, their spans resolvable with `linemap` (None when the file could
    not be read).
    """

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    kernels: list[Any] = field(default_factory=list)  # list[KernelAnalysis]
    findings: list[Any] = field(default_factory=list)  # list[Finding]
    linemap: Any = None  # analyzer.source.linemap.LineMap

    def locate(self, span: Span | None) -> Location:
        """The original-file `Location` of a span of the preprocessed text."""
        if span is None or self.linemap is None:
            return Location(self.path, 1, 1, 1, 1)
        return self.linemap.resolve_span(span)

    @property
    def has_tool_error(self) -> bool:
        """An internal error (in a stage or a rule) or a path that could not be read."""
        return any(d.severity == Severity.ERROR and d.code in TOOL_ERRORS for d in self.diagnostics) or any(
            str(getattr(f, "code", "")) in TOOL_ERRORS for f in self.findings
        )


# ----------------------------------------------------------------------------- inputs


def collect_files(paths: Iterable[str]) -> list[tuple[str, str | None]]:
    """The files to check, in order, each once: `(path, problem)`.

    A folder is searched (recursively, sorted, hidden folders skipped) for .cu and .cuh
    files; a file named explicitly is checked whatever its suffix. `problem` is None, or
    a message for a path that yields nothing (missing, or a folder without CUDA files).
    """
    seen: set[str] = set()
    found: list[tuple[str, str | None]] = []

    def add(path: str, problem: str | None = None) -> None:
        key = os.path.normcase(os.path.realpath(path)) if problem is None else path
        if key not in seen:
            seen.add(key)
            found.append((path, problem))

    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            inside: list[str] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                inside.extend(
                    os.path.join(root, name) for name in sorted(files) if name.endswith(CUDA_SUFFIXES)
                )
            if not inside:
                add(path, "no .cu or .cuh files in this folder")
            inside.sort(key=lambda file: os.path.relpath(file, path).split(os.sep))
            for file in inside:
                add(file)
        elif not os.path.lexists(path):
            add(path, "no such file or folder")
        else:
            add(path)
    return found


def _input_problem(path: str) -> str | None:
    """Why `path` cannot be analysed as CUDA source text, or None when it can."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as err:
        return f"cannot read: {err.strerror or err}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder, not a file (give the folder to `warplint check` to search it for .cu/.cuh files)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        return (
            f"file too large ({info.st_size / 2**20:.1f} MB; warplint reads files up to "
            f"{MAX_FILE_BYTES // 2**20} MB)"
        )
    try:
        with open(path, "rb") as handle:
            probe = handle.read(BINARY_PROBE_BYTES)
    except OSError as err:
        return f"cannot read: {err.strerror or err}"
    if looks_binary(probe):
        return "binary file, not CUDA source text"
    return None


_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\b\x1b")


def looks_binary(probe: bytes) -> bool:
    """True for bytes that are not source text: any NUL, or more than 30% non-text bytes.

    Control characters other than whitespace are non-text; so are bytes >= 0x80 unless the
    probe decodes as UTF-8 (a multi-byte character cut at the probe's end is allowed).
    """
    if not probe:
        return False
    if b"\0" in probe:
        return True
    try:
        probe.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError as err:
        utf8 = err.start >= len(probe) - 3 and err.reason == "unexpected end of data"
    odd = sum(1 for b in probe if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F or (b >= 0x80 and not utf8))
    return odd > BINARY_RATIO * len(probe)


def _at_top(path: str, message: str, code: str, severity: Severity = Severity.ERROR,
            notes: tuple[str, ...] = ()) -> Diagnostic:
    return Diagnostic(severity, message, code, location=Location(path, 1, 1, 1, 1), notes=notes)


# ----------------------------------------------------------------------------- the pipeline


def check_paths(paths: Sequence[str], options: Options | None = None) -> list[FileReport]:
    """Check every file under `paths`; one `FileReport` per file (or per bad path)."""
    options = options or Options()
    reports = []
    for path, problem in collect_files(paths):
        if problem is None:
            reports.append(check_file(path, options))
        else:
            severity = Severity.WARNING if os.path.isdir(path) else Severity.ERROR
            reports.append(FileReport(path, [_at_top(path, problem, INPUT_ERROR, severity)]))
    return reports


def check_file(path: str, options: Options | None = None) -> FileReport:
    """Analyse one CUDA file. Never raises (KeyboardInterrupt aside)."""
    options = options or Options()
    path = os.fspath(path)
    report = FileReport(path)
    problem = _input_problem(path)
    if problem is not None:
        report.diagnostics.append(_at_top(path, problem, INPUT_ERROR))
        return report
    collected: list[Diagnostic] = []
    try:
        _run_pipeline(path, options, report, collected)
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - never a traceback
        collected.append(_internal_error(path, err, "while analysing this file"))
    try:
        collected = _selected(collected, options)
    except (Exception, RecursionError) as err:  # noqa: BLE001 - report everything rather than crash
        collected.append(_internal_error(path, err, "while selecting diagnostics"))
    try:
        report.diagnostics = _resolved(collected, report)
    except Exception as err:  # noqa: BLE001 - a broken line map: keep the messages at 1:1
        report.linemap = None
        report.diagnostics = _resolved(collected, report)
        report.diagnostics.append(_internal_error(path, err, "while resolving positions"))
    return report


def _selected(diagnostics: list[Diagnostic], options: Options) -> list[Diagnostic]:
    """The diagnostics `--select`/`--ignore` let through (WL9xx codes are selectable too);
    tool errors are always reported."""
    if options.select is None and options.ignore is None:
        return diagnostics
    from analyzer.rules.registry import is_selected

    return [d for d in diagnostics
            if d.code in TOOL_ERRORS or is_selected(d.code, options.select, options.ignore)]


def _internal_error(path: str, err: BaseException, where: str, location: Location | None = None) -> Diagnostic:
    detail = str(err).strip().splitlines()
    text = f"{type(err).__name__}: {detail[0]}" if detail and detail[0] else type(err).__name__
    return Diagnostic(
        Severity.ERROR,
        f"internal error {where} ({text})",
        INTERNAL_ERROR,
        location=location or Location(path, 1, 1, 1, 1),
        notes=("this is a bug in warplint; the other files are still analysed",),
    )


def _run_pipeline(path: str, options: Options, report: FileReport, diagnostics: list[Diagnostic]) -> None:
    """Run every stage on one file, filling `report` and `diagnostics` as it goes, so that
    what was found before an internal error is still reported."""
    from analyzer.arch import get_arch
    from analyzer.source.preprocess import preprocess_file
    from analyzer.syntax.parse import parse
    from analyzer.ir.lower import lower

    arch = get_arch(options.arch)
    pre = preprocess_file(path, defines=options.defines, include_paths=options.include_paths)
    report.linemap = pre.linemap
    diagnostics.extend(pre.diagnostics)

    parsed = parse(pre.text)
    diagnostics.extend(parsed.diagnostics)
    module = lower(parsed.unit, pre.text, path)
    diagnostics.extend(module.diagnostics)

    if module.kernels:
        from analyzer.analysis.launch import launch_configs
        from analyzer.analysis.lanes import analyze_kernel

        def line_of(span: Span) -> int:
            return report.locate(span).line

        for kernel in module.kernels:
            try:
                launches = launch_configs(
                    module, kernel, block=options.block, grid=options.grid,
                    params=options.params or None, line_of=line_of,
                )
                for launch in launches:
                    analysis = analyze_kernel(module, kernel, launch, arch, params=options.params or None)
                    report.kernels.append(analysis)
                    diagnostics.extend(analysis.diagnostics)
            except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
                location = report.locate(getattr(kernel, "name_span", None))
                diagnostics.append(_internal_error(
                    path, err, f"while analysing kernel `{kernel.display_name}`", location))

        if report.kernels:
            from analyzer.rules.registry import check

            def reanalyze_factory(analysis: Any) -> Callable[[Mapping[str, int]], Any]:
                def reanalyze(padding: Mapping[str, int]) -> Any:
                    try:
                        return analyze_kernel(
                            module, analysis.kernel, analysis.launch, arch,
                            params=options.params or None, padding=dict(padding),
                        )
                    except (Exception, RecursionError):  # noqa: BLE001 - a fix we cannot verify
                        return None

                return reanalyze

            try:
                findings = check(report.kernels, arch, reanalyze_factory,
                                 select=options.select, ignore=options.ignore)
            except (Exception, RecursionError) as err:  # noqa: BLE001 - keep the analyses
                diagnostics.append(_internal_error(path, err, "while checking the rules"))
                findings = []
            report.findings = sorted(findings, key=lambda f: (_span_key(f.span), str(f.code)))


def _span_key(span: Span | None) -> tuple[int, int]:
    return (span.start, span.end) if span is not None else (-1, -1)


def _resolved(diagnostics: Iterable[Diagnostic], report: FileReport) -> list[Diagnostic]:
    """Diagnostics with `location` set, each once (a kernel analysed for several launch
    configurations repeats its diagnostics), in source order."""
    out: dict[tuple, Diagnostic] = {}
    for d in diagnostics:
        if d.location is None:
            d = dataclasses.replace(d, span=None, location=report.locate(d.span))
        key = (d.location, d.code, d.message, d.severity)
        out.setdefault(key, d)
    return sorted(out.values(), key=lambda d: (d.location.path != report.path, d.location.line, d.location.column))
