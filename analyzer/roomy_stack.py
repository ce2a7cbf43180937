"""Deep Python recursion run on one large block of CPython's frame stack, not on many small ones.

CPython (3.11 and later) keeps the frames of Python functions on a stack made of 16 KiB
blocks: a call that finds no room left in the current block maps a new one (``mmap``), and
the return that empties it unmaps it again (``munmap``). The kernel interpreter recurses
deeply (a call inlined, its block, a statement, an expression, the next call inlined...) and
its depth goes up and down across such a boundary all the time, so every few calls a block
was mapped and unmapped: on cuda-samples ``interval.cu`` (one process, ``--no-cache -j 1``),
103,646 pairs of ``mmap``/``munmap`` of 16 KiB and 0.8-1.5 s of system time, more than the
analysis itself (``strace -c``, 2026-11-26).

`roomy_stack` runs a function from a frame that asks for a very large value stack (its code
object's ``co_stacksize``, which nothing uses): CPython then gives that frame a block of its
own large enough for it, and the frames called from it fill the rest of that block (about
half a MiB) instead of mapping 16 KiB ones. Memory the frames never reach is never touched,
so it costs no more than address space. Python's own code and results are unchanged; only
where its frames are kept.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable)

#: The value-stack slots (8 bytes each) asked for: a frame of 512 KiB gets a block of 1 MiB
#: (CPython doubles the block size until the frame fits), which leaves about 504 KiB, some
#: thousands of frames, for the calls made from it.
ROOMY_SLOTS = 1 << 16


def _call(function: Callable, args: tuple, kwargs: dict[str, Any]) -> Any:
    return function(*args, **kwargs)


_roomy_call = types.FunctionType(_call.__code__.replace(co_stacksize=ROOMY_SLOTS), globals(), "_roomy_call")


#: Python frames allowed beyond the recursion limit while a roomy function runs. Why: lowering
#: takes any nesting that stays under the limit (deeper is WL903, `ir.lower`), and the kernel
#: interpreter then needs two frames a level of it, from a deeper start: an index of 481
#: additions (`i + 1 + ... + 1`), the deepest lowered, overflowed by a few frames (WL900).
EXTRA_FRAMES = 2000

_frames_lock = threading.Lock()
_inside = 0  # roomy calls running, in every thread
_limit_before = 0  # the recursion limit before the first of them


def _more_frames(extra: int) -> None:
    global _inside, _limit_before
    with _frames_lock:
        if _inside == 0:
            _limit_before = sys.getrecursionlimit()
            sys.setrecursionlimit(_limit_before + extra)
        _inside += 1


def _frames_as_before() -> None:
    global _inside
    with _frames_lock:
        _inside -= 1
        if _inside == 0:
            sys.setrecursionlimit(_limit_before)


def roomy_stack(function: F) -> F:
    """`function`, called from a frame that gives its callees a large block of frame stack,
    with room for `EXTRA_FRAMES` more Python frames while it runs (the limit is put back after:
    lowering must meet the same limit in every run)."""

    @functools.wraps(function)
    def roomy(*args, **kwargs):
        _more_frames(EXTRA_FRAMES)
        try:
            return _roomy_call(function, args, kwargs)
        finally:
            _frames_as_before()

    return roomy  # type: ignore[return-value]
