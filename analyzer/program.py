"""One run is one program: the files of a `warplint check` run are analysed together.

A CUDA program is more than one file: a kernel defined in `a.cu` or a `.cuh` is declared and
launched in `b.cu`; a kernel file is `#include`d by another `.cu` that defines its types and
macros first. So a run of several files goes in four steps:

1. Survey each file (in the worker pool): preprocess, parse and lower it; note the files it
   includes and the launches its host code makes (`analysis.launch.host_launches`), each with
   the definition it launches (None when the file only declares the kernel).
2. Plan. A checked file that another checked file includes belongs to the first file of the run
   that includes it and is itself included by none (its owner): it is analysed in that file's
   context (its macros and types), not on its own. Every other file gets, in its options'
   `api.ProgramContext`, the launches the other files make of the kernels it defines, and the
   headers whose kernels another file analyses.
3. Check every file that no other file owns, with that context.
4. An owned file's report gathers what its owner found in it (findings, kernel analyses,
   diagnostics), so that it is reported once, at its own path.

The result does not depend on `-j`: surveys and reports are taken in the run's order. Cost:
each file is read twice (survey, check), though in one process the check takes what the survey
preprocessed, parsed and lowered where nothing it was made from has changed (`api_front`), and launches are indexed by kernel name, so finding a
file's context takes time in proportion to the launches of its kernels, not to the number of
files. A run of one file is checked as `api.check_paths` checks it, with no survey.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from analyzer import records
from analyzer.api import (
    FileReport,
    Options,
    ProgramContext,
    file_identity,
    kernel_definition,
    location,
    lowered,
    plan_files,
    problem_report,
    run_files,
    run_plan,
)
from analyzer.ir import nodes as N
from analyzer.records import record

if TYPE_CHECKING:
    from analyzer.workers import Workers

__all__ = ["Survey", "check_program", "survey"]


@record
class Survey:
    """What one file of a run tells the others."""

    identity: str  # api.file_identity of the file
    includes: frozenset[str] = frozenset()  # identities of the files it reads besides itself
    kernels: frozenset[str] = frozenset()  # base names of the kernels its translation unit defines
    launches: tuple[tuple[tuple[str, int] | None, Any], ...] = ()  # (definition launched or None, HostLaunch)


def survey(path: str, options: Options, hand_on: bool = False) -> Survey:
    """The survey of one file; a file that cannot be read or lowered tells nothing (its check
    reports why). `hand_on`: keep its front end for the check in this process (`api_front`)."""
    identity = file_identity(path)
    if path.endswith(".ptx"):
        return Survey(identity)
    from analyzer.cache import cached  # (imported when a run surveys: not at start-up)

    missing: list[list[str] | None] = [None]  # where the includes not found were looked for (None: not cached)

    def compute() -> Survey:
        try:
            found, missing[0] = _surveyed(path, options, identity, hand_on)
        except Exception:  # noqa: BLE001 - the check of the file reports what went wrong
            return Survey(identity)
        return found

    return cached(
        "survey", path, options, compute, lambda found: None if missing[0] is None else (found.includes, missing[0])
    )


def _known_survey(path: str, options: Options) -> Survey | None:
    """The survey of one file where it costs no analysis (PTX, or in the results cache), else None."""
    if path.endswith(".ptx"):
        return Survey(file_identity(path))
    from analyzer.cache import probe

    return cast(Survey | None, probe("survey", path, options))


def _surveyed(path: str, options: Options, identity: str, hand_on: bool) -> tuple[Survey, list[str] | None]:
    """The survey of one file, and where the includes it did not find were looked for
    (`LineMap.absent`: an entry holds while they are still missing; None: not cached).
    Raises what the stages raise."""
    from analyzer.analysis.launch import KnownLaunches, base_name, host_launches, launches_kernel
    from analyzer.api_front import hand_on_launches
    from analyzer.budget import BudgetExceeded, Meter, metered
    from analyzer.report import display_path

    report = FileReport(path)
    diagnostics: list[Any] = []
    module = lowered(path, options, report, diagnostics, hand_on=hand_on)[2]
    includes = frozenset(file_identity(f.path) for f in report.linemap.files) - {identity}
    meter = Meter("analysis", options.budget.analysis)
    try:
        with metered(meter):
            launches = host_launches(module)
        if hand_on:
            hand_on_launches(module, KnownLaunches(launches, meter.limit - meter.left))
    except BudgetExceeded:
        launches = []
    found = []
    for launch in launches:
        target = next((kernel_definition(report, k) for k in module.kernels if launches_kernel(launch, k)), None)
        place = f"{display_path(path)}:{report.locate(cast(N.LaunchStmt, launch.stmt).span).line}"  # the module's own
        found.append((target, records.replace(launch, stmt=None, place=place)))
    # a template kernel no launch of its own file instantiates is still defined here: another
    # file's launch (`k<float><<<...>>>`) instantiates it
    kernels = frozenset(base_name(k.name) for k in module.kernels) | frozenset(module.templates)
    return Survey(identity, includes, kernels, tuple(found)), list(report.linemap.absent)


def check_program(
    paths: Sequence[str],
    options: Options | None = None,
    *,
    jobs: int = 1,
    options_for: Callable[[str], Options] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileReport]:
    """Check every file under `paths` as one program: `api.check_paths`'s reports, with launches
    across files and each included file reported once, at its own path (see the module). Each
    file is hashed once for the results cache (`cache.one_run`)."""
    from analyzer.api_front import handing_on
    from analyzer.cache import one_run

    with one_run(), handing_on():
        return _checked_program(plan_files(paths, options, options_for), jobs, progress)


def _checked_program(
    plan: list[tuple[str, str | None, Options]], jobs: int, progress: Callable[[int, int], None] | None
) -> list[FileReport]:
    """`check_program` on the files of a plan (`api.plan_files`)."""
    todo = [i for i, (_, problem, _) in enumerate(plan) if problem is None]
    if len(todo) <= 1:
        return run_plan(plan, jobs, progress)
    with _pool(jobs, len(todo)) as pool:
        return _planned_program(plan, todo, jobs, progress, pool)


@contextlib.contextmanager
def _pool(jobs: int, files: int) -> Iterator[Workers | None]:
    """The worker processes of a run with several jobs, for the surveys and then the checks
    (None with one job), each started when first fed (a run the results cache answers starts
    none): a file's check is queued to the worker that surveyed it, which takes the survey's
    front end (`api_front`; its workers keep them, `api_front.keep_in_worker`)."""
    if jobs <= 1:
        yield None
        return
    from analyzer.api_front import keep_in_worker
    from analyzer.workers import Workers

    with Workers(min(jobs, files), initializer=keep_in_worker) as workers:
        yield workers


def _planned_program(
    plan: list[tuple[str, str | None, Options]],
    todo: list[int],
    jobs: int,
    progress: Callable[[int, int], None] | None,
    pool: Workers | None,
) -> list[FileReport]:
    """`_checked_program` of the files `todo` of a plan, several of them, in `pool` (None: here)."""
    homes: dict[int, int] = {}  # the worker that surveyed each file (by its place in `todo`)
    surveys = dict(zip(todo, _surveys([(plan[i][0], plan[i][2]) for i in todo], jobs, pool, homes)))
    home_of = {todo[k]: worker for k, worker in homes.items()}
    owners = _owners(surveys)
    contexts = _contexts(surveys, owners)
    reports: dict[int, FileReport] = {
        i: problem_report(path, problem) for i, (path, problem, _) in enumerate(plan) if problem is not None
    }
    work = [i for i in todo if i not in owners]
    runs = [(plan[i][0], records.replace(plan[i][2], program=contexts.get(i))) for i in work]
    for done, (i, report) in enumerate(run_files(runs, jobs, work, pool, [home_of.get(i) for i in work]), 1):
        reports[i] = report
        if progress is not None:
            progress(done, len(work))
    for header, owner in owners.items():
        reports[header] = _gathered(reports[owner], plan[header][0], surveys[header].identity)
        for i in work:  # what another includer read in the header (a syntax error) is said once
            if i != owner and surveys[header].identity in surveys[i].includes:
                _drop_repeated(reports[i], reports[header])
    return [reports[i] for i in range(len(plan))]


def _surveys(
    work: list[tuple[str, Options]], jobs: int, pool: Workers | None, homes: dict[int, int] | None = None
) -> list[Survey]:
    """The survey of each file, in order: those the results cache holds read here, the others
    here with one job, else in `pool`, the run's workers (not when the cache holds every survey;
    a survey that fails to come back is redone here), where `homes` gets the worker of each
    (by its index in `work`). Each keeps its front end for the check (`api_front`)."""
    if jobs <= 1:  # the checks run here too: they take what the surveys preprocessed and lowered
        return [survey(path, opts, hand_on=True) for path, opts in work]
    known = [_known_survey(path, opts) for path, opts in work]
    missing = [i for i, found in enumerate(known) if found is None]
    if len(missing) <= 1 or pool is None:
        return [found if found is not None else survey(*work[i]) for i, found in enumerate(known)]
    tasks = [(survey, (*work[i], True)) for i in missing]
    for t, worker, future in pool.run(tasks):
        i = missing[t]
        try:
            known[i] = future.result()
        except Exception:  # noqa: BLE001 - BrokenProcessPool, a pickling error: redo it here
            known[i] = survey(*work[i])
            continue
        if homes is not None:
            homes[i] = worker
    return cast(list[Survey], known)


def _owners(surveys: dict[int, Survey]) -> dict[int, int]:
    """For each checked file another checked file includes: the first (in the run's order) of
    its includers that no checked file includes. A file whose includers are all included
    themselves (a cycle) has no owner and is checked on its own."""
    slot_of = {s.identity: i for i, s in surveys.items()}
    includers: dict[int, list[int]] = {}
    for i, s in surveys.items():
        for inc in sorted(s.includes):
            if inc in slot_of and slot_of[inc] != i:
                includers.setdefault(slot_of[inc], []).append(i)
    owners = {}
    for header, by in includers.items():
        roots = sorted(i for i in by if i not in includers)
        if roots:
            owners[header] = roots[0]
    return owners


def _contexts(surveys: dict[int, Survey], owners: dict[int, int]) -> dict[int, ProgramContext]:
    """The `ProgramContext` of each file that is checked, when the other files tell it anything:
    their launches of the kernels it defines (the launches of an owned file are its owner's own)
    and the included files whose kernels another file analyses."""
    from analyzer.analysis.launch import base_name

    by_name: dict[str, list[tuple[int, Any, Any]]] = {}
    for i, s in surveys.items():
        if i not in owners:
            for target, launch in s.launches:
                by_name.setdefault(base_name(launch.kernel), []).append((i, target, launch))
    owned = {surveys[h].identity: surveys[o].identity for h, o in owners.items()}
    out = {}
    for i, s in surveys.items():
        if i in owners:
            continue
        reads = s.includes | {s.identity}
        launches = tuple(
            (target, launch)
            for name in sorted(s.kernels)
            for j, target, launch in by_name.get(name, ())
            if j != i and (target is None or target[0] in reads)
        )
        elsewhere = frozenset(h for h in s.includes if h in owned and owned[h] != s.identity)
        if launches or elsewhere:
            out[i] = ProgramContext(launches, elsewhere)
    return out


def _drop_repeated(report: FileReport, header: FileReport) -> None:
    """Drop from `report` the diagnostics that the owned file's report holds already."""
    said = {(d.location, d.code, d.message) for d in header.diagnostics}
    if said:
        report.diagnostics = [d for d in report.diagnostics if (d.location, d.code, d.message) not in said]


def _gathered(owner: FileReport, path: str, identity: str) -> FileReport:
    """The report of an owned file: what its owner found there, moved out of the owner's report
    (it resolves positions with the owner's line map)."""
    seen: dict[str, bool] = {}

    def here(location: Any) -> bool:
        where = location.path
        if where not in seen:
            seen[where] = file_identity(where) == identity
        return seen[where]

    report = FileReport(path, linemap=owner.linemap)
    report.findings = [f for f in owner.findings if here(owner.locate(f.span))]
    owner.findings = [f for f in owner.findings if not here(owner.locate(f.span))]
    mine = [k for k in owner.kernels if here(owner.locate(getattr(k.kernel, "name_span", None)))]
    owner.kernels = [k for k in owner.kernels if all(k is not m for m in mine)]
    report.kernels = mine
    report.diagnostics = sorted(
        (d for d in owner.diagnostics if here(d.location)), key=lambda d: (location(d).line, location(d).column)
    )
    owner.diagnostics = [d for d in owner.diagnostics if not here(d.location)]
    return report
