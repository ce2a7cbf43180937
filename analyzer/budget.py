"""Budgets: how much work each stage may do on one file, counted in steps.

A pre-commit hook that hangs is worse than one that crashes, so every stage whose work can
grow faster than its input (macros that expand exponentially, nested loops walked iteration
by iteration, a kernel launched with a thousand configurations, an endless loop in the
simulator) counts that work against a budget per file and stage. Work is counted in *steps*,
never in seconds, so that a result does not depend on the machine's speed or load:

| stage | one step is | setting |
|---|---|---|
| preprocess | a token moved by macro expansion, or 100 bytes of a file read (the main file or an `#include`d one) | `budget.preprocess` |
| parse | 100 characters of a declaration given to the parser (again at each retry) | `budget.parse` |
| lower | 100 characters of a function lowered (each template instantiation again) | `budget.lower` |
| analysis | a symbolic expression built or substituted into, a kernel statement or expression interpreted, a host statement run to find launches, a lane's address planned, a request costed | `budget.analysis` |
| launches | one launch configuration of one kernel analysed | `budget.launches` |
| simulation | what the simulator runs: `SIMULATION_FLOOR` a statement and one per 8 of its lanes, `SIMULATION_ACCESS_STEPS` an access costed and one per lane, `SIMULATION_RUN_STEPS` a launch (a step is about 0.06 microseconds) | `budget.simulation` |

The analysis counts what its time follows (expressions built, above all), so that a step costs
about the same whatever the kernel: 1 to 12 microseconds on the development machine.

Memory is bounded with the work: every step keeps at most a bounded amount, and what a stage
reads is bounded by the size limits (20 MB a file, included files too).

How a stage learns its budget: `analyzer.api` runs each stage inside `metered(meter)`, and the
stage calls `spend(steps)` where it works, like `decimal`'s context: the stages keep their
signatures, and a stage called on its own (a test, a benchmark) runs unmetered. `spend` raises
`BudgetExceeded` when the meter runs out; the stage that catches it stops where the rest still
makes sense (a declaration, a function, a kernel) and `api` reports what was cut short as a
WL940 warning naming the setting that raises the budget. A kernel takes at most half of what
is left of its file's analysis budget (`Meter.share`), so one heavy kernel leaves the others
of the file something to be analysed with.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from analyzer.diagnostics import Diagnostic, Location, Severity, Span
from analyzer.records import record

__all__ = [
    "BUDGET_EXCEEDED",
    "STAGES",
    "UNITS",
    "Budget",
    "BudgetExceeded",
    "Meter",
    "current",
    "current_meter",
    "exceeded",
    "metered",
    "setting_name",
    "spend",
    "steps_of",
]

BUDGET_EXCEEDED = "WL940"  # the diagnostic code of a stage cut short by its budget
STAGES = ("preprocess", "parse", "lower", "analysis", "simulation", "launches")
#: What a budget counts, where it is not steps: `launches` counts one kernel's launch configurations.
UNITS = {"launches": "launch configurations"}
SIMULATION_FLOOR = 256  # charged for each statement the simulator runs (and one step per 8 lanes)
SIMULATION_ACCESS_STEPS = 384  # charged for each access the simulator costs (and one step per lane)
SIMULATION_RUN_STEPS = 100_000  # charged for each launch simulated: what setting a run up costs
BYTES_PER_STEP = 100  # text read or parsed: one step per this many characters


@record
class Budget:
    """The steps each stage may take on one file (`[tool.warplint.budget]` in a configuration).

    The defaults (measured 2026-11-25 on the 2-core development machine, README "Robustness")
    are above what every file of the public corpora the project measures on takes (about 600
    real files; the most: preprocess 47,000 steps, parse 3,000, lower 3,600, analysis 7.9
    million for Mandelbrot_cuda.cu's six kernels, 9 s), and end a file built to blow a stage up
    in about the time of that file (a step takes 1 to 12 microseconds of analysis).
    """

    preprocess: int = 2_000_000  # about 1.5 s of macro expansion
    parse: int = 12_000  # 1.2 MB given to the parser: about 3.5 s
    lower: int = 30_000  # 3 MB of functions lowered: about 2.5 s
    analysis: int = 12_000_000
    simulation: int = 50_000_000  # about 3 s of simulation
    # launch configurations analysed per kernel: a kernel launched with 1,000 different blocks and
    # arguments took 13 s of CPU (issue 19's reproducer; 3,000 took 16 s and 0.9 GB, fuzz
    # `stress` kind 10) in analysis steps that each stay cheap; no kernel of the public corpora
    # has more than 64 (host loops run 64 iterations at most)
    launches: int = 256

    def of(self, stage: str) -> int:
        """The budget of `stage` (one of `STAGES`)."""
        return int(getattr(self, stage))


def steps_of(characters: int) -> int:
    """The steps of reading (or parsing) so many characters: one per `BYTES_PER_STEP`, at least one."""
    return 1 + characters // BYTES_PER_STEP


def setting_name(stage: str) -> str:
    """The configuration key that sets `stage`'s budget, as messages name it."""
    return f"budget.{stage}"


class BudgetExceeded(Exception):
    """A stage ran out of steps; `str()` says which budget, and the setting that raises it."""

    def __init__(self, stage: str, limit: int) -> None:
        super().__init__(
            f"the {stage} budget of {limit:,} {UNITS.get(stage, 'steps')} is spent "
            f"(raise `{setting_name(stage)}` in the configuration to allow more)"
        )
        self.stage, self.limit = stage, limit
        self.location: Location | None = None  # where the stage stopped, when the raiser knows
        self.span: Span | None = None  # or where in the preprocessed text


def exceeded(err: BudgetExceeded, what: str, span: Span | None = None, location: Location | None = None) -> Diagnostic:
    """The WL940 warning for `err`: what the budget cut short, and the setting that raises it."""
    note = f"raise `{setting_name(err.stage)}` in [tool.warplint] to allow more (README: Configuration and Robustness)"
    return Diagnostic(
        Severity.WARNING,
        f"{what}: the {err.stage} budget of {err.limit:,} {UNITS.get(err.stage, 'steps')} is spent",
        BUDGET_EXCEEDED,
        span=None if location is not None else span,
        location=location,
        notes=(note,),
    )


class Meter:
    """The steps one stage has left on one file (or one piece of it: `share`)."""

    __slots__ = ("left", "limit", "stage")

    def __init__(self, stage: str, limit: int, left: int | None = None) -> None:
        self.stage = stage
        self.limit = limit  # the whole budget, for messages
        self.left = limit if left is None else left

    def spend(self, steps: int = 1) -> None:
        """Count `steps`; raises `BudgetExceeded` once more were spent than there were."""
        self.left -= steps
        if self.left < 0:
            raise BudgetExceeded(self.stage, self.limit)

    @property
    def spent(self) -> bool:
        """Nothing worth sharing is left: under a thousandth of the budget (halving what is
        left, `share` would otherwise cut one piece after another short)."""
        return self.left <= self.limit // 1000

    def share(self, last: bool) -> Meter:
        """The part of what is left that one piece of work (a kernel) may take: all of it for
        the last piece, else half, so that a piece that exhausts its share leaves the rest
        something. Charge it back with `settle` when the piece is done."""
        return Meter(self.stage, self.limit, max(0, self.left if last else self.left // 2))

    def settle(self, part: Meter, allowed: int) -> None:
        """Charge what `part` (made by `share` with `allowed` steps) spent."""
        self.left -= allowed - max(part.left, 0)


_CURRENT: ContextVar[Meter | None] = ContextVar("warplint_meter", default=None)


def current() -> Meter | None:
    """The meter of the stage running now, or None (unmetered)."""
    return _CURRENT.get()


#: `current` as the context variable's own method, for a caller that writes `spend` out
#: itself (`symbolic.expressions.new_expr`): no Python frame between it and the meter.
current_meter = _CURRENT.get


def spend(steps: int = 1) -> None:
    """Count `steps` against the running stage's meter (nothing when unmetered)."""
    meter = _CURRENT.get()
    if meter is not None:  # `Meter.spend`, written out: the cost walk calls this millions of times
        meter.left -= steps
        if meter.left < 0:
            raise BudgetExceeded(meter.stage, meter.limit)


@contextmanager
def metered(meter: Meter | None) -> Iterator[Meter | None]:
    """Run the block with `meter` as the running stage's (None: unmetered)."""
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)
