"""The reference simulator run on files: `warplint simulate` and `check --verify`.

`simulate_file` runs every kernel of a file (or one) for each launch configuration `check`
would use, each run on its share of the file's simulation budget; `verify_findings` holds
`check`'s costs to the simulator's (WL930). The stages are chained as `analyzer.api` chains
them (`lowered`), and errors become diagnostics the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from analyzer.api import (
    INPUT_ERROR,
    FileReport,
    Options,
    at_top,
    input_problem,
    internal_error,
    kernel_launch_configs,
    lowered,
    resolved,
)
from analyzer.arch import get_arch
from analyzer.budget import BudgetExceeded, Meter, exceeded, metered
from analyzer.diagnostics import Diagnostic, Severity

__all__ = ["VERIFY_MISMATCH", "simulate_file", "simulations", "verify_findings"]


def simulate_file(
    path: str, options: Options | None = None, sim_options: Any = None, kernel: str | None = None
) -> FileReport:
    """Run every kernel of one file (or the one named `kernel`) in the reference simulator
    (analyzer.sim) for each launch configuration `check` would use. `report.kernels` holds
    `analyzer.sim.run.Simulation`s. Never raises (KeyboardInterrupt aside)."""
    options = options or Options()
    path = os.fspath(path)
    report = FileReport(path)
    problem = input_problem(path)
    if problem is not None:
        report.diagnostics.append(at_top(path, problem, INPUT_ERROR))
        return report
    collected: list[Diagnostic] = []
    try:
        from analyzer.analysis.guards import gpuverify_header
        from analyzer.analysis.launch import LaunchIndex
        from analyzer.analysis.limits import kernel_limit_problems

        pre, _, module = lowered(path, options, report, collected)
        header = gpuverify_header(pre.comments)
        index = LaunchIndex(module)  # the host code is run once for every kernel of the file
        kernels = [k for k in module.kernels if kernel is None or kernel in (k.name, k.display_name)]
        if kernel is not None and not kernels:
            names = ", ".join(k.display_name for k in module.kernels) or "none"
            collected.append(at_top(path, f"no kernel named `{kernel}` (kernels: {names})", INPUT_ERROR))
        runs: list[tuple[Any, Any]] = []
        for k in kernels:
            try:
                too_large = kernel_limit_problems(module, k, get_arch(options.arch))
                if too_large:
                    collected.extend(too_large)
                    continue
                with metered(Meter("analysis", options.budget.analysis)):  # finding the launches
                    runs.extend(
                        (k, launch)
                        for launch in kernel_launch_configs(module, k, options, report, collected, header, index)
                    )
            except BudgetExceeded as err:
                collected.append(
                    exceeded(err, f"the launches of kernel `{k.display_name}` were not all found", k.name_span)
                )
            except (Exception, RecursionError) as err:  # noqa: BLE001 - the other kernels go on
                collected.append(
                    internal_error(path, err, f"while simulating kernel `{k.display_name}`", report.locate(k.name_span))
                )

        def failed(kernel: Any, err: BaseException) -> None:  # the other kernels go on
            collected.append(
                internal_error(
                    path, err, f"while simulating kernel `{kernel.display_name}`", report.locate(kernel.name_span)
                )
            )

        report.kernels.extend(sim for _, sim in simulations(module, runs, options, sim_options, collected, failed))
    except (Exception, RecursionError, MemoryError) as err:  # noqa: BLE001 - never a traceback
        collected.append(internal_error(path, err, "while simulating this file"))
    report.diagnostics = resolved(collected, report)
    return report


def simulations(
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
                sim = simulated(module, kernel, launch, options, sim_options, allowance, diagnostics)
        except (Exception, RecursionError) as err:  # handed to `failed` (re-raised when there is none)
            if failed is None:
                raise
            failed(kernel, err)
            continue
        finally:
            meter.left -= SIMULATION_RUN_STEPS
        meter.left -= min(sim.work, allowance)
        yield i, sim


def simulated(
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

    from analyzer.analysis.launch import kernel_params
    from analyzer.sim.run import SimOptions, simulate_kernel

    given = sim_options or SimOptions()
    sim = simulate_kernel(
        module,
        kernel,
        launch,
        get_arch(options.arch),
        kernel_params(options.params, options.kernels, kernel) or None,
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


VERIFY_MISMATCH = "WL930"


def verify_findings(module: Any, analyses: list[Any], options: Options, diagnostics: list[Diagnostic]) -> list[Any]:
    """`check --verify`: run each analysed kernel and launch in the simulator (on its share of
    the file's simulation budget) and report every access whose simulated cost disagrees with
    the static one (analyzer.sim.verify); a run the budget stopped proves nothing, and says so."""
    from analyzer.findings import Finding
    from analyzer.gc_pause import collect_again
    from analyzer.rules.registry import DIAGNOSTIC_CODES, is_selected
    from analyzer.sim.verify import compare

    collect_again()  # (the simulator leaves reference cycles)
    if not is_selected(VERIFY_MISMATCH, options.select, options.ignore):
        return []
    out = []
    runs = [(analysis.kernel, analysis.launch) for analysis in analyses]
    for i, sim in simulations(module, runs, options, None, diagnostics):
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
