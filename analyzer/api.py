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
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from analyzer import records
from analyzer.arch import DEFAULT_ARCH, Architecture, get_arch
from analyzer.budget import Budget, BudgetExceeded, Meter, exceeded, metered
from analyzer.diagnostics import Diagnostic, Location, Severity, Span
from analyzer.inputs import CUDA_SUFFIXES, INPUT_ERROR, NO_CUDA_FILES, at_top, collect_files, input_problem
from analyzer.pickling import pickle_mappingproxy
from analyzer.records import field, record
from analyzer.source.cuda_macros import DEFAULT_TOOLKIT
from analyzer.source.files import MAX_FILE_BYTES, looks_binary

if TYPE_CHECKING:
    from analyzer.workers import Workers

__all__ = [
    "CUDA_SUFFIXES",
    "INPUT_ERROR",
    "INTERNAL_ERROR",
    "KERNEL_ANALYSER",
    "MAX_FILE_BYTES",
    "NO_CUDA_FILES",
    "TOOL_ERRORS",
    "FileReport",
    "Options",
    "ProgramContext",
    "at_top",
    "check_file",
    "check_paths",
    "check_source",
    "collect_files",
    "file_identity",
    "input_problem",
    "internal_error",
    "kernel_definition",
    "kernel_launch_configs",
    "launched_elsewhere",
    "looks_binary",
    "lower_file",
    "lowered",
    "plan_files",
    "preprocess_options",
    "problem_report",
    "resolved",
    "run_files",
    "run_plan",
    "verify_fixes",
]


T = TypeVar("T")
INTERNAL_ERROR = "WL900"  # an exception inside warplint
TOOL_ERRORS = frozenset({INTERNAL_ERROR, INPUT_ERROR})  # error diagnostics that make the exit status 2
# What analyses one kernel for one launch configuration in place of `analysis.kernel.analyze_kernel`
# (same arguments, same result) while it is set: the language server's memo of the analyses of
# the document's previous text (`analyzer.server.KernelMemo`). Unset, `analyze_kernel` itself.
KERNEL_ANALYSER: ContextVar[Callable[..., Any] | None] = ContextVar("warplint_kernel_analyser", default=None)


@record(frozen=False, slots=False)
class Options:
    """What one run analyses for. Everything has the command line's default."""

    arch: str | Architecture = DEFAULT_ARCH  # a name from analyzer.arch.ARCHITECTURES, or a model of one's own
    assume: str = "typical"  # --assume: the values of unknowns a finding may rest on (analysis/verdict.py)
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    params: dict[str, int] = field(default_factory=dict)  # --param NAME=VALUE
    defines: dict[str, str | None] = field(default_factory=dict)  # -D NAME[=VALUE]; None means 1
    include_paths: list[str] = field(default_factory=list)  # -I DIR (and -isystem DIR)
    undefines: list[str] = field(default_factory=list)  # -U NAME
    forced_includes: list[str] = field(default_factory=list)  # -include FILE
    cuda_version: str = DEFAULT_TOOLKIT  # the toolkit whose macros are predefined (CUDART_VERSION ...)
    std: str | None = None  # -std=c++14 ...: `__cplusplus` (None: nvcc's default, C++17)
    select: list[str] | None = None  # rule codes or names to report (None: every rule)
    ignore: list[str] | None = None  # rule codes or names never to report
    format: str = "text"
    severity: dict[str, str] = field(default_factory=dict)  # code -> "error"|"warning"|"note" (config)
    report_unused_suppressions: bool = False  # WL920 for suppression comments that silence nothing
    via_ptx: bool = False  # --via-ptx: compile .cu files with nvcc and analyse the PTX
    verify: bool = False  # --verify: hold every cost to the simulator's (WL930 on a disagreement)
    show_host: bool = False  # --show-host: also report what host code warplint could not follow, as warnings
    fixes: bool = True  # offer the rules' fixes as verified edits of the file (`Finding.text_edits`, analyzer.fixes)
    budget: Budget = field(default_factory=Budget)  # the steps each stage may take on one file
    program: ProgramContext | None = None  # what the other files of the run say (analyzer.program)
    walk: Any = None  # analyzer.walk.Walk: what folder searches leave out (None: nothing)
    cache_dir: str | None = None  # the results cache's folder (analyzer.cache); None: no cache
    kernels: tuple[Any, ...] = ()  # the configuration's per-kernel tables (analysis.launch.KernelTable)


@record
class ProgramContext:
    """What the other files of a run tell the analysis of one file (made by `analyzer.program`).

    `launches` are other files' launches (`analysis.launch.HostLaunch`) of kernels this file
    defines, each with the definition it launches, `(file identity, line)` of the kernel's name,
    or None when the launching file only declares the kernel (any definition of the name then).
    Kernels defined in a file of `elsewhere` (identities) are analysed by another file of the run
    that includes that file too, and not here."""

    launches: tuple[tuple[tuple[str, int] | None, Any], ...] = ()
    elsewhere: frozenset[str] = frozenset()


def file_identity(path: str) -> str:
    """The key a file is known by across the files of a run: its real, case-normalised path."""
    return os.path.normcase(os.path.realpath(path))


def kernel_definition(report: FileReport, kernel: Any) -> tuple[str, int]:
    """`(file identity, line)` of a kernel's name: the same definition read through two files
    that include it has the same one."""
    where = report.locate(getattr(kernel, "name_span", None))
    return file_identity(where.path), where.line


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


# ----------------------------------------------------------------------------- the pipeline


def check_paths(
    paths: Sequence[str],
    options: Options | None = None,
    *,
    jobs: int = 1,
    options_for: Callable[[str], Options] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileReport]:
    """Check every file under `paths`, each on its own; one `FileReport` per file (or per bad
    path), in the order of `collect_files` whatever the order in which the work finished.

    `options_for(path)` gives each file its own options (configuration files); it is
    called for every file before any is analysed, so that a broken configuration
    (`analyzer.config.ConfigError`, raised through) stops the run before it starts.
    With `jobs` > 1 and several files, files are analysed in that many worker
    processes. `progress(done, total)` is called as files finish. (`analyzer.program.
    check_program` checks them as one program.)
    """
    return run_plan(plan_files(paths, options, options_for), jobs, progress)


def plan_files(
    paths: Sequence[str], options: Options | None, options_for: Callable[[str], Options] | None
) -> list[tuple[str, str | None, Options]]:
    """`(path, problem, options)` for each file `collect_files` finds, `options_for(path)` called
    for every file that has no problem (see `check_paths`)."""
    options = options or Options()
    return [
        (path, problem, options if problem is not None or options_for is None else options_for(path))
        for path, problem in collect_files(paths, options.walk)
    ]


def run_plan(
    plan: Sequence[tuple[str, str | None, Options]], jobs: int, progress: Callable[[int, int], None] | None
) -> list[FileReport]:
    """The reports of a `plan_files` plan, in its order: a path with a problem is an input error,
    every other file is checked (in `jobs` processes)."""
    reports: list[FileReport | None] = [None] * len(plan)
    todo: list[int] = []
    for i, (path, problem, _) in enumerate(plan):
        if problem is None:
            todo.append(i)
        else:
            reports[i] = problem_report(path, problem)
    for done, (i, report) in enumerate(run_files([(plan[i][0], plan[i][2]) for i in todo], jobs, todo), 1):
        reports[i] = report
        if progress is not None:
            progress(done, len(todo))
    return [r for r in reports if r is not None]


def problem_report(path: str, problem: str) -> FileReport:
    """The report of a path `collect_files` found a problem with (a folder without CUDA files is a warning)."""
    severity = Severity.WARNING if problem == NO_CUDA_FILES else Severity.ERROR
    return FileReport(path, [at_top(path, problem, INPUT_ERROR, severity)])


def run_files(
    work: list[tuple[str, Options]],
    jobs: int,
    slots: list[int],
    shared: Workers | None = None,
    homes: Sequence[int | None] | None = None,
) -> Iterable[tuple[int, FileReport]]:
    """(slot, report) for each file as it finishes: in this process with one job or
    one file, else in worker processes (`shared`, where the caller has them: they stay open;
    `homes[k]`, the worker file k is queued to, `analyzer.workers`). A worker that dies or a
    report that cannot travel back is redone here, so a broken worker never loses a file."""
    if jobs > 1 and len(work) > 1:  # what the results cache holds is read here, before a pool starts
        known = [(slot, _cached_report(path, opts)) for slot, (path, opts) in zip(slots, work)]
        yield from ((slot, report) for slot, report in known if report is not None)
        kept = [k for k, (_, report) in enumerate(known) if report is None]
        work, slots = [work[k] for k in kept], [slots[k] for k in kept]
        homes = None if homes is None else [homes[k] for k in kept]
    if jobs <= 1 or len(work) <= 1:
        for slot, (path, opts) in zip(slots, work):
            yield slot, check_file(path, opts)
        return
    from contextlib import nullcontext

    from analyzer.workers import Workers

    pickle_mappingproxy()
    with nullcontext(shared) if shared is not None else Workers(min(jobs, len(work))) as workers:
        for k, _, future in workers.run([(_check_in_worker, run) for run in work], homes):
            try:
                report = future.result()
            except Exception:  # noqa: BLE001 - BrokenProcessPool, a pickling error: redo it here
                report = check_file(*work[k])
            yield slots[k], report


def _cached_report(path: str, options: Options) -> FileReport | None:
    """`check_file`'s report where the results cache holds it and it needs no fixes verified
    (a re-analysis, left to the pool), else None."""
    from analyzer.cache import probe

    if input_problem(path) is not None:
        return None
    report = cast(FileReport | None, probe("check", path, options))
    if report is None or (options.fixes and any(f.edits for f in report.findings)):
        return None
    return report


def _check_in_worker(path: str, options: Options) -> FileReport:
    """`check_file` in a worker process; its report is pickled back to the parent."""
    pickle_mappingproxy()
    return check_file(path, options)


def check_file(path: str, options: Options | None = None) -> FileReport:
    """Analyse one CUDA file. Never raises (KeyboardInterrupt aside)."""
    path = os.fspath(path)
    problem = input_problem(path)
    if problem is not None:
        return FileReport(path, [at_top(path, problem, INPUT_ERROR)])
    opts = options or Options()
    from analyzer.cache import cached, report_depends  # (imported when a file is checked: not at start-up)

    report = cached("check", path, opts, lambda: _checked(path, opts, None), report_depends)
    if opts.fixes:  # after the cache: what the edits are does not depend on the format asked for
        verify_fixes(report, opts)
    return report


def check_source(path: str, text: str, options: Options | None = None) -> FileReport:
    """Analyse CUDA source text that may not be on disk (an editor's unsaved buffer), as
    if it were the file `path`: `#include "..."` is searched from `path`'s folder. Never
    raises (KeyboardInterrupt aside)."""
    opts = options or Options()
    report = _checked(os.fspath(path), opts, text)
    if opts.fixes:
        verify_fixes(report, opts, text)
    return report


def _checked(path: str, options: Options, text: str | None, places_only: bool = False) -> FileReport:
    """The pipeline on `path` (or on `text` standing for it), then selection, positions,
    suppressions and fixes; an exception at any step becomes an internal-error diagnostic.
    `places_only`: only where the findings are is read (a fix's verification, `offer_fixes`),
    so their padding fixes are not re-analysed (they never decide whether there is a finding)."""
    report = FileReport(path)
    collected: list[Diagnostic] = []
    comments: list[Any] = []
    try:
        _run_pipeline(path, options, report, collected, text=text, comments=comments, places_only=places_only)
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - never a traceback
        what = "this file" if text is None else "this text"
        collected.append(internal_error(path, err, f"while analysing {what}"))
    try:
        collected = _selected(collected, options)
    except (Exception, RecursionError) as err:  # noqa: BLE001 - report everything rather than crash
        collected.append(internal_error(path, err, "while selecting diagnostics"))
    try:
        report.diagnostics = resolved(collected, report)
    except Exception as err:  # noqa: BLE001 - a broken line map: keep the messages at 1:1
        report.linemap = None
        report.diagnostics = resolved(collected, report)
        report.diagnostics.append(internal_error(path, err, "while resolving positions"))
    _suppress(report, comments, options, text)
    _respell_fix_texts(report, text)  # `verify_fixes`, when asked for, comes after (and after the cache)
    return report


def _respell_fix_texts(report: FileReport, text: str | None) -> None:
    """The fix texts in the file's own words (`fixes.respell_fix_texts`) when no verified edits
    are asked for; a failure leaves them as the rules wrote them."""
    if not any(edit.shown for f in report.findings for edit in f.edits):
        return
    from analyzer.fixes import respell_fix_texts
    from analyzer.source.files import read_text_file

    try:
        original = text if text is not None else read_text_file(report.path)
        if original is not None:
            respell_fix_texts(report, original)
    except (Exception, RecursionError):  # noqa: BLE001 - the rule's own words rather than no report
        return


def verify_fixes(report: FileReport, options: Options, text: str | None = None) -> None:
    """Give the findings of `report` (made with `options`, from `text` or the file) their fixes
    spelt in the file's text and verified by analysing the edited text again, without fixes of
    its own (`Finding.text_edits`; `analyzer.fixes`). A failure offers none rather than losing
    the report. The language server calls it after publishing the diagnostics."""
    if not any(f.edits for f in report.findings):
        return
    from analyzer.fixes import offer_fixes
    from analyzer.source.files import read_text_file

    recheck_options = records.replace(options, fixes=False)
    try:
        original = text if text is not None else read_text_file(report.path)
        if original is not None:
            offer_fixes(
                report, original, lambda edited: _checked(report.path, recheck_options, edited, places_only=True)
            )
    except (Exception, RecursionError):  # noqa: BLE001 - no fix rather than no report
        return


def _suppress(report: FileReport, comments: Sequence[Any], options: Options, text: str | None = None) -> None:
    """Drop what suppression comments silence, report the comments that silence nothing
    (with `report_unused_suppressions`) or name unknown rules, then apply the configured
    severities. Runs on resolved positions, so a comment in a header covers the findings
    that resolve into that header. A failure here keeps the unsuppressed report."""
    try:
        from analyzer.rules.registry import DIAGNOSTIC_CODES, RULES, is_selected
        from analyzer.suppressions import line_reader, parse_suppressions, unused

        found = parse_suppressions(comments, line_reader(report.path, text))
        used: set[tuple[int, str]] = set()

        def silenced(code: str, location: Location) -> bool:
            hits = found.silencing(code, location)
            used.update(hits)
            return bool(hits)

        exempt = TOOL_ERRORS | {"WL920", "WL921"}  # never silenced
        findings = [
            f for f in report.findings if str(f.code) in exempt or not silenced(str(f.code), report.locate(f.span))
        ]
        diagnostics = [d for d in report.diagnostics if d.code in exempt or not silenced(d.code, location(d))]
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
        report.diagnostics = sorted(diagnostics + extra, key=_source_order(report.path))
    except (Exception, RecursionError) as err:  # noqa: BLE001 - suppressions must not lose the report
        report.diagnostics.append(internal_error(report.path, err, "while applying suppression comments"))
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


def internal_error(path: str, err: BaseException, where: str, location: Location | None = None) -> Diagnostic:
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
    places_only: bool = False,
) -> None:
    """Run every stage on one file (or on `text` standing for it), filling `report` and
    `diagnostics` as it goes, so that what was found before an internal error is still reported.
    `places_only`: see `_checked`."""
    if path.endswith(".ptx") or (options.via_ptx and path.endswith(".cu")):
        from analyzer.api_ptx import run_ptx_pipeline

        run_ptx_pipeline(path, options, report, diagnostics, text)
        return
    arch = get_arch(options.arch)
    pre, parsed, module = lowered(path, options, report, diagnostics, text=text, comments=comments)
    if not module.kernels:
        return
    from analyzer.analysis.guards import gpuverify_header

    header = gpuverify_header(pre.comments)
    meter = _analyze_kernels(path, module, pre.text, arch, options, report, diagnostics, header)
    if not report.kernels:
        return
    from analyzer.api_padding import padding_reanalysis

    reanalysis = None if places_only else padding_reanalysis(path, pre, parsed, arch, options)
    with metered(meter):  # the padding fixes' reanalyses spend what the kernels left
        findings = rule_findings(report.kernels, arch, reanalysis, options, path, diagnostics)
    if options.verify:
        from analyzer.api_sim import verify_findings

        try:
            findings = findings + verify_findings(module, report.kernels, options, diagnostics)
        except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - keep the rest
            diagnostics.append(internal_error(path, err, "while verifying with the simulator"))
    report.findings = in_source_order(findings)


def _analyze_kernels(
    path: str,
    module: Any,
    source: str,
    arch: Architecture,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
    header: Any = None,
) -> Meter:
    """analyze: every kernel of `module` for each of its launch configurations, into
    `report.kernels`; a kernel whose analysis raises is an internal error, the others go on.
    The file's analysis budget is shared out (`Meter.share`): a kernel that spends its share
    keeps the launches analysed before (WL940 says what was cut short), and once the budget is
    spent the kernels left are named in one WL940. Returns the meter, for the rules' reanalyses."""
    from analyzer.analysis.costing import new_file
    from analyzer.analysis.launch import LaunchIndex
    from analyzer.api_front import keep_launches, taken_launches

    new_file()  # walks remembered from other files cost this one what making them took
    meter = Meter("analysis", options.budget.analysis)
    # the host code is run once for every kernel of the module, or not at all where the survey ran it
    launches = LaunchIndex(module, taken_launches(module))
    elsewhere = options.program.elsewhere if options.program is not None else frozenset()
    kernels = [k for k in module.kernels if not elsewhere or kernel_definition(report, k)[0] not in elsewhere]
    for i, kernel in enumerate(kernels):
        if meter.spent:
            diagnostics.append(_kernels_left(kernels[i:], meter, report))
            break
        part = meter.share(last=i == len(kernels) - 1)
        allowed = part.left
        with metered(part):
            _analyze_kernel(path, module, kernel, source, arch, options, report, diagnostics, header, launches)
        meter.settle(part, allowed)
    keep_launches(module, launches.found)  # for the language server's next text (api_front.LastFront)
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
    header: Any = None,
    host_launches: Any = None,
) -> None:
    """One kernel for each of its launch configurations (under the running meter); not at all
    when it declares or moves something larger than CUDA allows (WL907)."""
    from analyzer.analysis.coverage import costless_note
    from analyzer.analysis.kernel import analyze_kernel
    from analyzer.analysis.launch import kernel_params
    from analyzer.analysis.limits import kernel_limit_problems
    from analyzer.analysis.missing import undefined_name_notes

    launches: list[Any] = []
    done = 0
    try:
        too_large = kernel_limit_problems(module, kernel, arch)
        if too_large:
            diagnostics.extend(too_large)
            return
        diagnostics.extend(undefined_name_notes(kernel, module))
        params = kernel_params(options.params, options.kernels, kernel)
        launches = kernel_launch_configs(module, kernel, options, report, diagnostics, header, host_launches)
        configurations = Meter("launches", options.budget.launches)
        analyse = KERNEL_ANALYSER.get() or analyze_kernel
        for launch in launches:
            configurations.spend()
            analysis = analyse(module, kernel, launch, arch, params=params or None)
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
        diagnostics.append(internal_error(path, err, f"while analysing kernel `{kernel.display_name}`", location))


def kernel_launch_configs(
    module: Any,
    kernel: Any,
    options: Options,
    report: FileReport,
    problems: list[Diagnostic],
    header: Any = None,
    launches: Any = None,
) -> list[Any]:
    """The launch configurations `kernel` is analysed for, the one place `check`, `show`, the
    language server, `simulate` and `--verify` take them from: the command line's block, grid
    and parameters, the configuration's per-kernel tables, the host launches of the file and of
    the other files of the run (`options.program`), and the file's GPUVerify `header`. A launch
    CUDA refuses is a WL907 in `problems`. `launches`: the module's `analysis.launch.LaunchIndex`,
    passed along by whoever asks for several kernels of the module."""
    from analyzer.analysis.launch import launch_configs

    return launch_configs(
        module,
        kernel,
        block=options.block,
        grid=options.grid,
        params=options.params or None,
        line_of=lambda span: report.locate(span).line,
        problems=problems,
        foreign=_foreign_launches(report, kernel, options.program),
        header=header,
        tables=options.kernels,
        launches=launches,
    )


def _foreign_launches(report: FileReport, kernel: Any, program: ProgramContext | None) -> tuple[Any, ...]:
    """The launches other files of the run make of this definition of `kernel`."""
    if program is None or not program.launches:
        return ()
    here = kernel_definition(report, kernel)
    return tuple(launch for target, launch in program.launches if target is None or target == here)


def _kernels_left(kernels: list[Any], meter: Meter, report: FileReport) -> Diagnostic:
    """One WL940 for the kernels a spent analysis budget leaves unanalysed."""
    names = ", ".join(f"`{k.display_name}`" for k in kernels[:5]) + (
        f" and {len(kernels) - 5} more" if len(kernels) > 5 else ""
    )
    what = f"{len(kernels)} kernel{'s' if len(kernels) > 1 else ''} not analysed: {names}"
    return exceeded(BudgetExceeded(meter.stage, meter.limit), what, kernels[0].name_span)


def rule_findings(
    kernels: list[Any],
    arch: Architecture,
    reanalyze_factory: Callable[[Any], Any] | None,
    options: Options,
    path: str,
    diagnostics: list[Diagnostic],
) -> list[Any]:
    """check: the selected rules' findings on the analyses (none, and an internal error,
    when a rule raises: the analyses stay in the report)."""
    from analyzer.rules.registry import check

    try:
        return check(
            kernels, arch, reanalyze_factory, select=options.select, ignore=options.ignore, assume=options.assume
        )
    except (Exception, RecursionError) as err:  # noqa: BLE001 - keep the analyses
        diagnostics.append(internal_error(path, err, "while checking the rules"))
        return []


def in_source_order(findings: list[Any]) -> list[Any]:
    """Findings by their span in the file (findings without one first), then by code."""
    return sorted(findings, key=lambda f: ((f.span.start, f.span.end) if f.span is not None else (-1, -1), str(f.code)))


def resolved(diagnostics: Iterable[Diagnostic], report: FileReport) -> list[Diagnostic]:
    """Diagnostics with `location` set, each once (a kernel analysed for several launch
    configurations repeats its diagnostics), in source order."""
    out: dict[tuple, Diagnostic] = {}
    for d in diagnostics:
        if d.location is None:
            d = records.replace(d, span=None, location=report.locate(d.span))
        key = (d.location, d.code, d.message, d.severity)
        out.setdefault(key, d)
    return sorted(out.values(), key=_source_order(report.path))


def preprocess_options(options: Options) -> dict[str, Any]:
    """The keyword arguments of `preprocess` that `options` give: -D, -U, -I, -include, and
    CUDA's predefined macros for the architecture, toolkit and C++ standard."""
    from analyzer.source.cuda_macros import cuda_macros

    arch = options.arch if isinstance(options.arch, str) else options.arch.name
    return {
        "defines": options.defines,
        "include_paths": options.include_paths,
        "undefines": options.undefines,
        "forced_includes": options.forced_includes,
        "predefined": cuda_macros(arch, options.cuda_version, options.std),
    }


def lowered(
    path: str,
    options: Options,
    report: FileReport,
    diagnostics: list[Diagnostic],
    text: str | None = None,
    comments: list[Any] | None = None,
    hand_on: bool = False,
) -> tuple[Any, Any, Any]:
    """preprocess -> parse -> lower one file (or `text` standing for it), for `check` and the
    simulator: `(preprocessed, parsed, module)`, with `report.linemap` set and every stage's
    diagnostics added to `diagnostics` (and the comments to `comments`, for suppressions).
    `hand_on`: keep what was made for the next call on the same file (a survey's, for the
    check: `analyzer.api_front`), which takes it where nothing it was made from has changed."""
    from analyzer import api_front
    from analyzer.cache import canonical
    from analyzer.source.preprocess import preprocess, preprocess_file

    limits = options.budget
    key = (path, os.getcwd(), text, canonical(preprocess_options(options)), limits)
    front = api_front.taken(key)
    if front is not None:
        pre = front.pre
    else:
        with metered(Meter("preprocess", limits.preprocess)):
            if text is None:
                pre = preprocess_file(path, **preprocess_options(options))
            else:
                pre = preprocess(text, path, **preprocess_options(options))
    report.linemap = pre.linemap
    diagnostics.extend(pre.diagnostics)
    if comments is not None:  # for the suppression comments, applied once everything is resolved
        comments.extend(pre.comments)
    elsewhere = launched_elsewhere(options.program)
    if front is None or front.elsewhere != elsewhere:  # (other files launch other template instances)
        front = api_front.parsed_and_lowered(pre, None if front is None else front.parsed, path, elsewhere, limits)
    if hand_on:
        api_front.hand_on(key, front)
    diagnostics.extend(front.kept)
    if options.show_host:  # shown, never an error: the exit status depends on device code only
        diagnostics.extend(records.replace(d, severity=Severity.WARNING) for d in front.host)
    return pre, front.parsed, front.module


def launched_elsewhere(program: ProgramContext | None) -> dict[str, list[tuple[str, ...]]]:
    """The template arguments other files of the program launch kernels with, by kernel name:
    `k<float><<<...>>>` in b.cu instantiates a.cu's `template <class T> __global__ void k`."""
    from analyzer.analysis.launch import base_name

    out: dict[str, list[tuple[str, ...]]] = {}
    for _, launch in program.launches if program is not None else ():
        if launch.template_args and launch.template_args not in out.setdefault(base_name(launch.kernel), []):
            out[base_name(launch.kernel)].append(launch.template_args)
    return out


def lower_file(path: str, options: Options) -> tuple[FileReport, Any]:
    """preprocess -> parse -> lower one file, for what the other files of a run need of it
    (`analyzer.program`): a `FileReport` holding only its line map, and the IR module. Raises
    what the stages raise."""
    report = FileReport(path)
    module = lowered(path, options, report, [])[2]
    return report, module


# ----------------------------------------------------------------------------- the simulator


def simulate_file(
    path: str, options: Options | None = None, sim_options: Any = None, kernel: str | None = None
) -> FileReport:
    """Run every kernel of one file (or the one named `kernel`) in the reference simulator
    (`analyzer.api_sim.simulate_file`). Never raises (KeyboardInterrupt aside)."""
    from analyzer.api_sim import simulate_file as simulate

    return simulate(path, options, sim_options, kernel)


def location(d: Diagnostic) -> Location:
    """A diagnostic's location: every diagnostic of a report has one (`FileReport` locates them)."""
    return cast(Location, d.location)


def _source_order(path: str) -> Callable[[Diagnostic], tuple[bool, int, int]]:
    """Sort key of a report's diagnostics: its own file's first, then by line and column."""

    def key(d: Diagnostic) -> tuple[bool, int, int]:
        at = location(d)
        return (at.path != path, at.line, at.column)

    return key
