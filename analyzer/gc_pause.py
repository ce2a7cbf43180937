"""Python's cyclic garbage collector, paused while a stage builds a large acyclic structure.

Parsing and lowering allocate hundreds of thousands of small objects (tokens, AST and IR
nodes) that hold no reference cycles, so the collector finds nothing to free; yet each
collection scans every object that survived the last one, and on a large file those scans
took a third of the parse and two thirds of the lowering time. Reference counting still frees
everything as usual while the collector is paused.

`collect_less_often` is for a whole `check` run: its older collections, far less often.
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
        gc.enable()


def gc_paused(function: F) -> F:
    """Run `function` with the cyclic collector off, restoring its previous state after."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        with gc_paused_here():
            return function(*args, **kwargs)

    return paused  # type: ignore[return-value]


MIDDLE_COLLECTION_EVERY = 1000  # young collections between two of the middle generation (Python's default: 10)
FULL_COLLECTION_EVERY = 100  # middle collections between two full ones (Python's default: 10)


def collect_less_often() -> None:
    """Make the collector's middle (generation 1) collections a hundredth and its full
    (generation 2) ones a tenth as frequent, for the rest of the process (a `check` run, and
    the workers it forks).

    Why: a run keeps what it has analysed (reports, the parse memo, the analyses' own memos),
    so the heap only grows, and each older collection scans again what the young ones let
    through, to free almost nothing. Measured 2026-11-25 on the 18 small cuda-samples files of
    issue 16 checked in one process: 6 full collections freed 414 objects of 150,000 to 550,000
    and cost about 0.7 s of 3.3 s CPU; with one every 100 middle collections, 2.5 s. Measured
    2026-11-26 on the same files: the 69 middle collections then left freed 55 objects and cost
    0.13-0.20 s of the collector's 0.21-0.32 s (gc.callbacks); with one every 1000 young
    collections, none ran and the collector cost 0.10 s. The young generation is collected as
    before, so short-lived cycles are still freed soon; a longer-lived one waits longer."""
    young, _, _ = gc.get_threshold()
    gc.set_threshold(young, MIDDLE_COLLECTION_EVERY, FULL_COLLECTION_EVERY)
