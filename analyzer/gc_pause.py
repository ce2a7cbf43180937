"""Python's cyclic garbage collector, paused while a stage builds a large acyclic structure.

Parsing and lowering allocate hundreds of thousands of small objects (tokens, AST and IR
nodes) that hold no reference cycles, so the collector finds nothing to free; yet each
collection scans every object that survived the last one, and on a large file those scans
took a third of the parse and two thirds of the lowering time. Reference counting still frees
everything as usual while the collector is paused.

`collect_less_often` is for a whole `check` run: its older collections never, its young ones
less often (`YOUNG`), and what a paused stage built never scanned.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator
from typing import TypeVar

F = TypeVar("F", bound=Callable)


@contextlib.contextmanager
def gc_paused_here() -> Iterator[None]:
    """The block run with the cyclic collector off, then on again where it was on (`gc_paused`
    runs a function so).

    The language server analyses each text of a document so (`server.analyse_document`): an
    edit's analysis leaves no reference cycles (measured 2026-11-28, reduction_kernel.cu in the
    server, four edits: `gc.collect()` after each found 0 objects to free), yet the collections
    its allocations set off scanned the heap that the previous analyses and the memo keep:
    0.05-0.08 s of an edit's 0.5-0.8 s CPU, and a full collection one edit in four, 0.25-0.3 s
    (in the server, where the fixes' verification had grown the heap: the edit's analysis
    0.58 s CPU, 0.29 s in a process that only analysed)."""
    if not gc.isenabled():  # already paused (a stage called from another)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if _BATCH:  # what the stage built is never scanned (see `collect_less_often`)
            gc.freeze()
        gc.enable()


def gc_paused(function: F) -> F:
    """Run `function` with the cyclic collector off, restoring its previous state after."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        with gc_paused_here():
            return function(*args, **kwargs)

    return paused  # type: ignore[return-value]


#: A threshold no count of collections reaches: the generation is never collected.
NEVER = 2**31 - 1
#: The allocations between two young collections of a batch run (Python's default: 700). A young
#: collection scans what the last one let through, and the cost walk makes many short-lived
#: containers that reference counting frees anyway: fewer, larger collections scan less of what
#: was about to be freed. Measured 2026-11-29 under callgrind (`check --no-cache -j 1`):
#: reduction_kernel.cu 5.386 G -> 5.307 G instructions, binomialOptions.cu (GPUVerify) 6.439 G ->
#: 6.368 G (887 collections -> 71); a cycle waits at most this many allocations to be freed.
YOUNG = 10_000
_BATCH = False  # `collect_less_often` was called: this process is a batch run


def collect_less_often() -> None:
    """For the rest of the process (a `check` run, and the workers it forks): the collector's
    middle and full collections never run, and what a paused stage built (`gc_paused_here`)
    is moved out of the collector's sight (`gc.freeze`) as the stage ends, so that no
    collection scans it. Young collections run once in `YOUNG` allocations, so short-lived
    cycles are still freed soon; a cycle that outlives one young collection stays till the process ends.

    Why: a run keeps what it has analysed (reports, the parse memo, the analyses' own memos),
    so the heap only grows, and each older collection scans again what the young ones let
    through, to free almost nothing; and the first young collection after a paused stage
    scans all the stage built. Measured 2026-11-28 with `gc.callbacks`, the five corpora in one
    process (`check --no-cache -j 1`, middle collections one in 1,000 young ones, full ones
    one in 100 middle ones, as this function made them before): the collector took 8.8 s of
    91 s, 27 middle collections 6.5 s (up to 1.9 s each, freeing 32 objects in all) and 26,031
    young ones 2.3 s; on the 20 cuda-samples files of issue 16, 0.34 s of 3.7 s, and all its
    collections freed 713 objects."""
    global _BATCH, _OFF
    young, _, _ = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG), NEVER, NEVER)
    _BATCH = True
    if _OWN_PROCESS and gc.isenabled():
        gc.disable()  # (see `in_own_process`)
        _OFF = True


_OWN_PROCESS = False  # `in_own_process` was called
_OFF = False  # `collect_less_often` turned the collector off (until `collect_again`)


def collect_again() -> None:
    """The simulator is about to run (`check --verify`): where a batch run turned the collector
    off (`in_own_process`), its young collections run again for the rest of the process. The
    simulator leaves reference cycles that hold memory: measured 2026-11-29, the twenty
    cuda-samples files of issue 16 checked with `--verify` in one process, peak memory 202 MB
    with young collections (they freed 4,876 objects), 274 MB without."""
    global _OFF
    if _OFF:
        gc.enable()
        _OFF = False


def in_own_process() -> None:
    """The run is all this process does (`cli.entry`: the `warplint` command, which ends the
    process once its output is written): there, a batch run (`collect_less_often`) turns the
    collector off altogether, young collections too (in its workers as well, which it forks),
    until the simulator runs (`collect_again`).
    A process that goes on after the run (a test calling `cli.main`) keeps its young ones.

    Why: the young collections of a batch run scan once every object of the analyses that
    outlives a few hundred allocations, to free almost nothing. Measured 2026-11-29: the five
    public corpora of `benchmarks/speed.py` checked in one process (`check --no-cache -j 1`
    on their folder) made 14,892 young collections that freed 691 objects in all, and the
    process's peak resident memory was 1,236 MB with them, 1,237 MB without; the twenty
    cuda-samples files of issue 16 under callgrind spent 307 M instructions of 13.3 G in the
    collector (`gc_collect_main`): the run 13.298 G -> 12.996 G."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
