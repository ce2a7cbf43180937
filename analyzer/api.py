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

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from analyzer import records
from analyzer.arch import DEFAULT_ARCH, Architecture, get_arch
from analyzer.budget import Budget, BudgetExceeded, Meter, exceeded, metered
from analyzer.diagnostics import Diagnostic, Location, Severity, Span
from analyzer.records import field, record
from analyzer.source.files import MAX_FILE_BYTES, looks_binary, text_file_problem

__all__ = [
    "CUDA_SUFFIXES",
    "INPUT_ERROR",
    "INTERNAL_ERROR",
    "MAX_FILE_BYTES",
    "NO_CUDA_FILES",
    "TOOL_ERRORS",
    "FileReport",
    "Options",
    "check_file",
    "check_paths",
    "check_source",
    "collect_files",
    "looks_binary",
]

CUDA_SUFFIXES = (".cu", ".cuh")

NO_CUDA_FILES = "no .cu or .cuh files in this folder"  # a warning; every other path problem is an error
INTERNAL_ERROR = "WL900"  # an exception inside warplint
INPUT_ERROR = "WL910"  # a path that is not a readable CUDA text file
TOOL_ERRORS = frozenset({INTERNAL_ERROR, INPUT_ERROR})  # error diagnostics that make the exit status 2


@record(frozen=False, slots=False)
class Options:
    """What one run analyses for. Everything has the command line's default."""

    arch: str | Architecture = DEFAULT_ARCH  # a name from analyzer.arch.ARCHITECTURES, or a model of one's own
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    params: dict[str, int] = field(default_factory=dict)  # --param NAME=VALUE
    defines: dict[str, str | None] = field(default_factory=dict)  # -D NAME[=VALUE]; None means 1
    include_paths: list[str] = field(default_factory=list)  # -I DIR
    select: list[str] | None = None  # rule codes or names to report (None: every rule)
    ignore: list[str] | None = None  # rule codes or names never to report
    format: str = "text"
    severity: dict[str, str] = field(default_factory=dict)  # code -> "error"|"warning"|"note" (config)
    report_unused_suppressions: bool = False  # WL920 for suppression comments that silence nothing
    via_ptx: bool = False  # --via-ptx: compile .cu files with nvcc and analyse the PTX
    verify: bool = False  # --verify: hold every cost to the simulator's (WL930 on a disagreement)
    show_host: bool = False  # --show-host: also report what host code warplint could not follow, as warnings
    budget: Budget = field(default_factory=Budget)  # the steps each stage may take on one file


@record(frozen=False, slots=False)
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
            unreadable: list[OSError] = []
            for root, dirs, files in os.walk(path, onerror=unreadable.append):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                inside.extend(os.path.join(root, name) for name in sorted(files) if name.endswith(CUDA_SUFFIXES))
            for err in unreadable:  # a folder that cannot be listed is an error, not an empty folder
                add(os.fspath(err.filename or path), f"cannot read this folder: {err.strerror or err}")
            if not inside and not unreadable:
                add(path, NO_CUDA_FILES)
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
    try:
        return text_file_problem(path)
    except OSError as err:
        return f"cannot read: {err.strerror or err}"


def _at_top(
    path: str, message: str, code: str, severity: Severity = Severity.ERROR, notes: tuple[str, ...] = ()
) -> Diagnostic:
    return Diagnostic(severity, message, code, location=Location(path, 1, 1, 1, 1), notes=notes)


# ----------------------------------------------------------------------------- the pipeline


def check_paths(
    paths: Sequence[str],
    options: Options | None = None,
    *,
    jobs: int = 1,
    options_for: Callable[[str], Options] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileReport]:
    """Check every file under `paths`; one `FileReport` per file (or per bad path), in
    the order of `collect_files` whatever the order in which the work finished.

    `options_for(path)` gives each file its own options (configuration files); it is
    called for every file before any is analysed, so that a broken configuration
    (`analyzer.config.ConfigError`, raised through) stops the run before it starts.
    With `jobs` > 1 and several files, files are analysed in that many worker
    processes. `progress(done, total)` is called as files finish.
    """
    options = options or Options()
    plan: list[tuple[str, str | None, Options]] = [
        (path, problem, options if problem is not None or options_for is None else options_for(path))
        for path, problem in collect_files(paths)
    ]
    reports: list[FileReport | None] = [None] * len(plan)
    todo: list[int] = []
    for i, (path, problem, _) in enumerate(plan):
        if problem is None:
            todo.append(i)
        else:
            severity = Severity.WARNING if problem == NO_CUDA_FILES else Severity.ERROR
            reports[i] = FileReport(path, [_at_top(path, problem, INPUT_ERROR, severity)])
    for done, (i, report) in enumerate(_run_files([(plan[i][0], plan[i][2]) for i in todo], jobs, todo), 1):
        reports[i] = report
        if progress is not None:
            progress(done, len(todo))
    return [r for r in reports if r is not None]


def _run_files(work: list[tuple[str, Options]], jobs: int, slots: list[int]) -> Iterable[tuple[int, FileReport]]:
    """(slot, report) for each file as it finishes: in this process with one job or
    one file, else in a pool of worker processes. A worker that dies or a report that
    cannot travel back is redone here, so a broken pool never loses a file."""
    if jobs <= 1 or len(work) <= 1:
        for slot, (path, opts) in zip(slots, work):
            yield slot, check_file(path, opts)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    _pickle_mappingproxy()
    with ProcessPoolExecutor(max_workers=min(jobs, len(work))) as pool:
        futures = {
            pool.submit(_check_in_worker, path, opts): (slot, path, opts) for slot, (path, opts) in zip(slots, work)
        }
        try:
            for future in as_completed(futures):
                slot, path, opts = futures[future]
                try:
                    report = future.result()
                except Exception:  # noqa: BLE001 - BrokenProcessPool, a pickling error: redo it here
                    report = check_file(path, opts)
                yield slot, report
        except BaseException:  # Ctrl-C: do not wait for the queued files
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _check_in_worker(path: str, options: Options) -> FileReport:
    """`check_file` in a worker process; its report is pickled back to the parent."""
    _pickle_mappingproxy()
    return check_file(path, options)


def _pickle_mappingproxy() -> None:
    """Findings keep their `args` in a read-only mappingproxy, which pickle refuses;
    teach pickle to send it as a dict and rebuild the proxy on arrival."""
    import copyreg
    import types

    copyreg.pickle(types.MappingProxyType, _mappingproxy_reduce)


def _mappingproxy_reduce(proxy: Any) -> tuple[Any, tuple[dict[Any, Any]]]:
    return _mappingproxy, (dict(proxy),)


def _mappingproxy(data: dict[Any, Any]) -> Any:
    import types

    return types.MappingProxyType(data)


def check_file(path: str, options: Options | None = None) -> FileReport:
    """Analyse one CUDA file. Never raises (KeyboardInterrupt aside)."""
    path = os.fspath(path)
    problem = _input_problem(path)
    if problem is not None:
        return FileReport(path, [_at_top(path, problem, INPUT_ERROR)])
    return _checked(path, options or Options(), None)


def check_source(path: str, text: str, options: Options | None = None) -> FileReport:
    """Analyse CUDA source text that may not be on disk (an editor's unsaved buffer), as
    if it were the file `path`: `#include "..."` is searched from `path`'s folder. Never
    raises (KeyboardInterrupt aside)."""
    return _checked(os.fspath(path), options or Options(), text)


def _checked(path: str, options: Options, text: str | None) -> FileReport:
    """The pipeline on `path` (or on `text` standing for it), then selection, positions and
    suppressions; an exception at any step becomes an internal-error diagnostic."""
    report = FileReport(path)
    collected: list[Diagnostic] = []
    comments: list[Any] = []
    try:
        _run_pipeline(path, options, report, collected, text=text, comments=comments)
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - never a traceback
        what = "this file" if text is None else "this text"
        collected.append(_internal_error(path, err, f"while analysing {what}"))
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
    _suppress(report, comments, options, text)
    return report


def _line_reader(path: str, text: str | None = None) -> Callable[[str, int], str]:
    """`line_text(path, line)` for the suppression comments: lines of the checked file
    (`text` when it is not on disk) and of its headers, each file read once, only when
    a suppression comment asks."""
    lines: dict[str, list[str]] = {}

    def line_text(file: str, line: int) -> str:
        if file not in lines:
            try:
                if file == path and text is not None:
                    content = text
                else:
                    with open(file, encoding="utf-8", errors="replace") as handle:
                        content = handle.read()
            except OSError:
                content = ""
            lines[file] = content.split("\n")
        rows = lines[file]
        return rows[line - 1] if 0 < line <= len(rows) else ""

    return line_text


def _suppress(report: FileReport, comments: Sequence[Any], options: Options, text: str | None = None) -> None:
    """Drop what suppression comments silence, report the comments that silence nothing
    (with `report_unused_suppressions`) or name unknown rules, then apply the configured
    severities. Runs on resolved positions, so a comment in a header covers the findings
    that resolve into that header. A failure here keeps the unsuppressed report."""
    try:
        from analyzer.rules.registry import DIAGNOSTIC_CODES, RULES, is_selected
        from analyzer.suppressions import parse_suppressions, unused

        found = parse_suppressions(comments, _line_reader(report.path, text))
        used: set[tuple[int, str]] = set()

        def silenced(code: str, location: Location) -> bool:
            hits = found.silencing(code, location)
            used.update(hits)
            return bool(hits)

        exempt = TOOL_ERRORS | {"WL920", "WL921"}  # never silenced
        findings = [
            f for f in report.findings if str(f.code) in exempt or not silenced(str(f.code), report.locate(f.span))
        ]
        diagnostics = [d for d in report.diagnostics if d.code in exempt or not silenced(d.code, d.location)]
        extra = list(found.problems)
        if options.report_unused_suppressions:
            reportable = [c for c in (*RULES, *DIAGNOSTIC_CODES) if is_selected(c, options.select, options.ignore)]
            extra += unused(found, used, reportable)
        # WL920 was asked for by its flag, so `--select` need not name it (`--ignore` still can)
        extra = [
            d
            for d in extra
            if is_selected(d.code, options.select, options.ignore)
            or (d.code == "WL920" and is_selected(d.code, None, options.ignore))
        ]
        report.findings = findings
        report.diagnostics = sorted(
            diagnostics + extra, key=lambda d: (d.location.path != report.path, d.location.line, d.location.column)
        )
    except (Exception, RecursionError) as err:  # noqa: BLE001 - suppressions must not lose the report
        report.diagnostics.append(_internal_error(report.path, err, "while applying suppression comments"))
    if options.severity:
        levels = options.severity
        report.findings = [
            records.replace(f, severity=levels[f.code]) if f.code in levels else f for f in report.findings
        ]
        report.diagnostics = [
            records.replace(d, severity=Severity(levels[d.code]))
            if d.code in levels and d.code not in TOOL_ERRORS
            else d
            for d in report.diagnostics
        ]


def _selected(diagnostics: list[Diagnostic], options: Options) -> list[Diagnostic]:
    """The diagnostics `--select`/`--ignore` let through (WL9xx codes are selectable too);
    tool errors are always reported."""
    if options.select is None and options.ignore is None:
        return diagnostics
    from analyzer.rules.registry import is_selected

    return [d for d in diagnostics if d.code in TOOL_ERRORS or is_selected(d.code, options.select, options.ignore)]


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


def _run_pipeline(
    path: str,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
    text: str | None = None,
    comments: list[Any] | None = None,
) -> None:
    """Run every stage on one file (or on `text` standing for it), filling `report` and
    `diagnostics` as it goes, so that what was found before an internal error is still reported."""
    if path.endswith(".ptx") or (options.via_ptx and path.endswith(".cu")):
        _run_ptx_pipeline(path, options, report, diagnostics, text)
        return
    arch = get_arch(options.arch)
    pre, parsed, module = _lowered(path, options, report, diagnostics, text=text, comments=comments)
    if not module.kernels:
        return
    meter = _analyze_kernels(path, module, pre.text, arch, options, report, diagnostics)
    if not report.kernels:
        return
    with metered(meter):  # the padding fixes' reanalyses spend what the kernels left
        findings = _rule_findings(
            report.kernels, arch, _padding_reanalysis(path, pre, parsed, arch, options), options, path, diagnostics
        )
    if options.verify:
        try:
            findings = findings + _verify_findings(module, report.kernels, options, diagnostics)
        except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - keep the rest
            diagnostics.append(_internal_error(path, err, "while verifying with the simulator"))
    report.findings = _in_source_order(findings)


def _analyze_kernels(
    path: str,
    module: Any,
    source: str,
    arch: Architecture,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
) -> Meter:
    """analyze: every kernel of `module` for each of its launch configurations, into
    `report.kernels`; a kernel whose analysis raises is an internal error, the others go on.
    The file's analysis budget is shared out (`Meter.share`): a kernel that spends its share
    keeps the launches analysed before (WL940 says what was cut short), and once the budget is
    spent the kernels left are named in one WL940. Returns the meter, for the rules' reanalyses."""
    meter = Meter("analysis", options.budget.analysis)
    kernels = list(module.kernels)
    for i, kernel in enumerate(kernels):
        if meter.spent:
            diagnostics.append(_kernels_left(kernels[i:], meter, report))
            break
        part = meter.share(last=i == len(kernels) - 1)
        allowed = part.left
        with metered(part):
            _analyze_kernel(path, module, kernel, source, arch, options, report, diagnostics)
        meter.settle(part, allowed)
    return meter


def _analyze_kernel(
    path: str,
    module: Any,
    kernel: Any,
    source: str,
    arch: Architecture,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
) -> None:
    """One kernel for each of its launch configurations (under the running meter); not at all
    when it declares or moves something larger than CUDA allows (WL907)."""
    from analyzer.analysis.coverage import costless_note
    from analyzer.analysis.kernel import analyze_kernel
    from analyzer.analysis.launch import launch_configs
    from analyzer.analysis.limits import kernel_limit_problems

    launches: list[Any] = []
    done = 0
    try:
        too_large = kernel_limit_problems(module, kernel, arch)
        if too_large:
            diagnostics.extend(too_large)
            return
        launches = launch_configs(
            module,
            kernel,
            block=options.block,
            grid=options.grid,
            params=options.params or None,
            line_of=lambda span: report.locate(span).line,
            problems=diagnostics,
        )
        for launch in launches:
            analysis = analyze_kernel(module, kernel, launch, arch, params=options.params or None)
            analysis.source = source  # lets rules turn fixes into exact edits
            report.kernels.append(analysis)
            diagnostics.extend(analysis.diagnostics)
            done += 1
        if launches:
            note = costless_note(kernel, module, report.kernels[-done:], source, diagnostics)
            if note is not None:
                diagnostics.append(note)
    except BudgetExceeded as err:
        what = (
            f"{done} of {len(launches)} launch configurations analysed"
            if launches
            else "its launch configurations were not all found"
        )
        diagnostics.append(
            exceeded(err, f"analysis of kernel `{kernel.display_name}` cut short: {what}", kernel.name_span)
        )
    except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
        location = report.locate(getattr(kernel, "name_span", None))
        diagnostics.append(_internal_error(path, err, f"while analysing kernel `{kernel.display_name}`", location))


def _kernels_left(kernels: list[Any], meter: Meter, report: FileReport) -> Diagnostic:
    """One WL940 for the kernels a spent analysis budget leaves unanalysed."""
    names = ", ".join(f"`{k.display_name}`" for k in kernels[:5]) + (
        f" and {len(kernels) - 5} more" if len(kernels) > 5 else ""
    )
    what = f"{len(kernels)} kernel{'s' if len(kernels) > 1 else ''} not analysed: {names}"
    return exceeded(BudgetExceeded(meter.stage, meter.limit), what, kernels[0].name_span)


def _padding_reanalysis(
    path: str, pre: Any, parsed: Any, arch: Architecture, options: Options
) -> Callable[[Any], Callable[[Mapping[str, int]], Any]]:
    """The rules' `reanalyze(analysis)(padding)`: the kernel lowered again with the padded
    arrays wider and analysed for the same launch (only the padded arrays' accesses: the
    rules compare no others), or None when that cannot be done. Each padding is lowered once."""
    from analyzer.analysis.kernel import analyze_kernel
    from analyzer.ir.lower import lower

    padded_modules: dict[tuple, Any] = {}

    def reanalyze_factory(analysis: Any) -> Callable[[Mapping[str, int]], Any]:
        def reanalyze(padding: Mapping[str, int]) -> Any:
            try:
                key = tuple(sorted(padding.items()))
                padded = padded_modules.get(key)
                if padded is None:
                    padded = padded_modules[key] = lower(parsed.unit, pre.text, path, padding=dict(padding))
                name = analysis.kernel.display_name
                twin = next((k for k in padded.kernels if k.display_name == name), None)
                if twin is None:
                    return None
                return analyze_kernel(
                    padded, twin, analysis.launch, arch, params=options.params or None, arrays=padding
                )
            except (Exception, RecursionError):  # noqa: BLE001 - a fix we cannot verify
                return None

        return reanalyze

    return reanalyze_factory


def _rule_findings(
    kernels: list[Any],
    arch: Architecture,
    reanalyze_factory: Callable[[Any], Any],
    options: Options,
    path: str,
    diagnostics: list[Diagnostic],
) -> list[Any]:
    """check: the selected rules' findings on the analyses (none, and an internal error,
    when a rule raises: the analyses stay in the report)."""
    from analyzer.rules.registry import check

    try:
        return check(kernels, arch, reanalyze_factory, select=options.select, ignore=options.ignore)
    except (Exception, RecursionError) as err:  # noqa: BLE001 - keep the analyses
        diagnostics.append(_internal_error(path, err, "while checking the rules"))
        return []


def _in_source_order(findings: list[Any]) -> list[Any]:
    return sorted(findings, key=lambda f: ((f.span.start, f.span.end) if f.span is not None else (-1, -1), str(f.code)))


def _run_ptx_pipeline(
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
    host, host_pre = (None, None) if path.endswith(".ptx") else _host_module(path, options)
    parsed = parse_source(source, path)
    diagnostics.extend(parsed.module.diagnostics)
    report.linemap = parsed.linemap
    host_linemap = host_pre.linemap if host_pre is not None else None
    for outcome in analyze_entries(parsed, options, arch, host, host_linemap):
        if isinstance(outcome, EntryFailure):
            diagnostics.append(
                _internal_error(path, outcome.error, f"while analysing kernel `{outcome.kernel}`", outcome.location)
            )
        else:
            report.kernels.append(outcome)
    if not report.kernels:
        return
    findings = _rule_findings(report.kernels, arch, _no_reanalysis, options, path, diagnostics)
    report.findings = collapse_copies(_in_source_order(findings), parsed.linemap)


def _no_reanalysis(analysis: Any) -> Callable[[Mapping[str, int]], Any]:
    return lambda padding: None


def _host_module(path: str, options: Options) -> tuple[Any, Any]:
    """preprocess -> parse -> lower the CUDA file a `--via-ptx` run compiled, for its host
    launches and parameter names: `(module, preprocessed)`, or `(None, None)` when that
    fails (the PTX is then analysed without them; the file's own diagnostics come from nvcc)."""
    try:
        from analyzer.ir.lower import lower
        from analyzer.source.preprocess import preprocess_file
        from analyzer.syntax.parse import parse

        pre = preprocess_file(path, defines=options.defines, include_paths=options.include_paths)
        return lower(parse(pre.text).unit, pre.text, path), pre
    except (Exception, RecursionError):  # noqa: BLE001 - the PTX is analysed without launches
        return None, None


def _resolved(diagnostics: Iterable[Diagnostic], report: FileReport) -> list[Diagnostic]:
    """Diagnostics with `location` set, each once (a kernel analysed for several launch
    configurations repeats its diagnostics), in source order."""
    out: dict[tuple, Diagnostic] = {}
    for d in diagnostics:
        if d.location is None:
            d = records.replace(d, span=None, location=report.locate(d.span))
        key = (d.location, d.code, d.message, d.severity)
        out.setdefault(key, d)
    return sorted(out.values(), key=lambda d: (d.location.path != report.path, d.location.line, d.location.column))


# ----------------------------------------------------------------------------- the simulator


def simulate_file(
    path: str, options: Options | None = None, sim_options: Any = None, kernel: str | None = None
) -> FileReport:
    """Run every kernel of one file (or the one named `kernel`) in the reference simulator
    (analyzer.sim) for each launch configuration `check` would use. `report.kernels` holds
    `analyzer.sim.run.Simulation`s. Never raises (KeyboardInterrupt aside)."""
    options = options or Options()
    path = os.fspath(path)
    report = FileReport(path)
    problem = _input_problem(path)
    if problem is not None:
        report.diagnostics.append(_at_top(path, problem, INPUT_ERROR))
        return report
    collected: list[Diagnostic] = []
    try:
        from analyzer.analysis.limits import kernel_limit_problems

        _, _, module = _lowered(path, options, report, collected)
        kernels = [k for k in module.kernels if kernel is None or kernel in (k.name, k.display_name)]
        if kernel is not None and not kernels:
            names = ", ".join(k.display_name for k in module.kernels) or "none"
            collected.append(_at_top(path, f"no kernel named `{kernel}` (kernels: {names})", INPUT_ERROR))
        runs: list[tuple[Any, Any]] = []
        for k in kernels:
            try:
                too_large = kernel_limit_problems(module, k, get_arch(options.arch))
                if too_large:
                    collected.extend(too_large)
                    continue
                with metered(Meter("analysis", options.budget.analysis)):  # finding the launches
                    runs.extend((k, launch) for launch in _launches(module, k, options, report, collected))
            except BudgetExceeded as err:
                collected.append(
                    exceeded(err, f"the launches of kernel `{k.display_name}` were not all found", k.name_span)
                )
            except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
                collected.append(
                    _internal_error(
                        path, err, f"while simulating kernel `{k.display_name}`", report.locate(k.name_span)
                    )
                )

        def failed(kernel: Any, err: BaseException) -> None:  # the other kernels go on
            collected.append(
                _internal_error(
                    path, err, f"while simulating kernel `{kernel.display_name}`", report.locate(kernel.name_span)
                )
            )

        report.kernels.extend(sim for _, sim in _simulations(module, runs, options, sim_options, collected, failed))
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - never a traceback
        collected.append(_internal_error(path, err, "while simulating this file"))
    report.diagnostics = _resolved(collected, report)
    return report


def _launches(module: Any, kernel: Any, options: Options, report: FileReport, problems: list[Diagnostic]) -> list[Any]:
    """The launch configurations `kernel` is analysed (and simulated) for."""
    from analyzer.analysis.launch import launch_configs

    return launch_configs(
        module,
        kernel,
        block=options.block,
        grid=options.grid,
        params=options.params or None,
        line_of=lambda span: report.locate(span).line,
        problems=problems,
    )


def _simulations(
    module: Any,
    runs: list[tuple[Any, Any]],
    options: Options,
    sim_options: Any,
    diagnostics: list[Diagnostic],
    failed: Callable[[Any, BaseException], None] | None = None,
) -> Iterable[tuple[int, Any]]:
    """(index, Simulation) for each (kernel, launch) of `runs`, each on its share of the file's
    simulation budget (at least SIMULATION_RUN_STEPS, what setting a run up costs), the loads
    the simulator looks for as `check` does counted in the analysis budget; once the budget is
    spent, the runs left are named in one WL940. `failed(kernel, error)` takes a run's error
    (none: it is raised)."""
    from analyzer.budget import SIMULATION_RUN_STEPS

    meter = Meter("simulation", options.budget.simulation)
    analysis = Meter("analysis", options.budget.analysis)
    for i, (kernel, launch) in enumerate(runs):
        if meter.spent:
            left = ", ".join(f"`{k.display_name}` ({w.origin})" for k, w in runs[i : i + 3])
            more = f" and {len(runs) - i - 3} more" if len(runs) - i > 3 else ""
            diagnostics.append(
                exceeded(
                    BudgetExceeded(meter.stage, meter.limit),
                    f"{len(runs) - i} launches not simulated: {left}{more}",
                    kernel.name_span,
                )
            )
            return
        allowance = max(meter.share(last=i == len(runs) - 1).left, 1)
        try:
            with metered(analysis):
                sim = _simulated(module, kernel, launch, options, sim_options, allowance, diagnostics)
        except (Exception, RecursionError) as err:  # handed to `failed` (re-raised when there is none)
            if failed is None:
                raise
            failed(kernel, err)
            continue
        finally:
            meter.left -= SIMULATION_RUN_STEPS
        meter.left -= min(sim.work, allowance)
        yield i, sim


def _simulated(
    module: Any,
    kernel: Any,
    launch: Any,
    options: Options,
    sim_options: Any,
    allowance: int,
    diagnostics: list[Diagnostic],
) -> Any:
    """One launch of `kernel` run in the simulator with `allowance` steps of the file's
    simulation budget; a run the budget stopped, or cut to fewer blocks than `--all-blocks`
    asks for, is a WL940."""
    import dataclasses

    from analyzer.sim.run import SimOptions, simulate_kernel

    given = sim_options or SimOptions()
    sim = simulate_kernel(
        module,
        kernel,
        launch,
        get_arch(options.arch),
        options.params or None,
        dataclasses.replace(given, budget=min(given.budget, allowance)),
    )
    sim.memory = None  # (the reports read none of it: a file of many launches keeps one run's buffers at a time)
    where = f"simulation of kernel `{kernel.display_name}` ({launch.origin})"
    spent = BudgetExceeded("simulation", options.budget.simulation)
    if sim.stopped is not None:
        diagnostics.append(
            exceeded(
                spent,
                f"{where} stopped before the kernel ended (an endless loop, or "
                "more work than the budget allows: try --blocks or a smaller grid)",
                sim.stopped_span,
            )
        )
    elif sim.cut_blocks:
        diagnostics.append(
            exceeded(
                spent,
                f"{where}: {len(sim.simulated_blocks):,} of {sim.total_blocks:,} blocks simulated, not every block",
                kernel.name_span,
            )
        )
    return sim


def _lowered(
    path: str,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
    text: str | None = None,
    comments: list[Any] | None = None,
) -> tuple[Any, Any, Any]:
    """preprocess -> parse -> lower one file (or `text` standing for it), for `check` and the
    simulator: `(preprocessed, parsed, module)`, with `report.linemap` set and every stage's
    diagnostics added to `diagnostics` (and the comments to `comments`, for suppressions)."""
    from analyzer.ir.host_code import split_host
    from analyzer.ir.lower import lower
    from analyzer.source.preprocess import preprocess, preprocess_file
    from analyzer.syntax.parse import parse

    limits = options.budget
    with metered(Meter("preprocess", limits.preprocess)):
        if text is None:
            pre = preprocess_file(path, defines=options.defines, include_paths=options.include_paths)
        else:
            pre = preprocess(text, path, defines=options.defines, include_paths=options.include_paths)
    report.linemap = pre.linemap
    diagnostics.extend(pre.diagnostics)
    if comments is not None:  # for the suppression comments, applied once everything is resolved
        comments.extend(pre.comments)
    with metered(Meter("parse", limits.parse)):
        parsed = parse(pre.text)
    with metered(Meter("lower", limits.lower)):
        module = lower(parsed.unit, pre.text, path)
    kept, host = split_host(parsed.diagnostics + module.diagnostics, parsed.unit, parsed.skipped, module, pre.text)
    diagnostics.extend(kept)
    if options.show_host:  # shown, never an error: the exit status depends on device code only
        diagnostics.extend(records.replace(d, severity=Severity.WARNING) for d in host)
    return pre, parsed, module


VERIFY_MISMATCH = "WL930"


def _verify_findings(module: Any, analyses: list[Any], options: Options, diagnostics: list[Diagnostic]) -> list[Any]:
    """`check --verify`: run each analysed kernel and launch in the simulator (on its share of
    the file's simulation budget) and report every access whose simulated cost disagrees with
    the static one (analyzer.sim.verify); a run the budget stopped proves nothing, and says so."""
    from analyzer.findings import Finding
    from analyzer.rules.registry import DIAGNOSTIC_CODES, is_selected
    from analyzer.sim.verify import compare

    if not is_selected(VERIFY_MISMATCH, options.select, options.ignore):
        return []
    out = []
    runs = [(analysis.kernel, analysis.launch) for analysis in analyses]
    for i, sim in _simulations(module, runs, options, None, diagnostics):
        analysis = analyses[i]
        for m in compare(analysis, sim):
            kernel = analysis.kernel.display_name
            out.append(
                Finding(
                    code=VERIFY_MISMATCH,
                    rule=DIAGNOSTIC_CODES[VERIFY_MISMATCH][0],
                    severity=Severity.WARNING.value,
                    span=m.cost.span,
                    kernel=kernel,
                    message=(f"`{m.cost.text}`: check says {m.static}, the simulator {m.simulated} ({m.description})"),
                    fix=None,
                    args={
                        "access": m.cost.text,
                        "what": m.what,
                        "check": m.static,
                        "simulated": m.simulated,
                        "unit": m.cost.unit,
                    },
                    detail=(
                        f"simulated blocks: {len(sim.simulated_blocks)} of {sim.total_blocks}",
                        *(f"check assumed: {a}" for a in m.cost.assumptions),
                    ),
                )
            )
    return out
