"""The front end of a file (preprocess, parse, lower) made for its survey, handed on to its check.

Why: a run of several files reads each file twice in one process (with `-j 1`), to survey it
(`analyzer.program`: its includes and launches) and to check it, and both preprocess, parse
and lower the same text the same way. Measured 2026-11-25 on the 20 cuda-samples files of
issue 16's `nvcc` row: preprocessing and lowering the second time were about 0.06 s + 0.05 s
a small file.

Never stale: an entry is keyed by everything `api.lowered` reads besides the files (the path,
the working folder, the text standing for the file, the preprocessor's options, the stages'
budgets), and holds the hash of every file the preprocessor read (the file itself included)
and the paths where an include was looked for in vain (`LineMap.absent`): it is handed on only
while each file still hashes the same and each of those paths is still missing. The program's
facts the lowering reads (`api.launched_elsewhere`) are held with the module: where the check's
differ, the check lowers again from the same preprocessed and parsed text. The host launches
the survey found in the module travel with it (`hand_on_launches`, `taken_launches`): the check
takes them where it analyses that same module, charging the steps they took
(`analysis.launch.KnownLaunches`).

Never shared: an entry is handed on once and then forgotten (the survey reads the module, the
host launches, and drops it; nothing after lowering writes to a module: the analyses, rules,
launch search and simulator build records of their own), and entries are kept only inside
`handing_on` (`program.check_program`), so an editor or a test never meets one. A stage cut
short by its budget raises, and nothing is kept: the check then meets the same limit.
Memory: at most `MEMO_CHARS` characters of preprocessed text are kept (about 60 MB); past
that, a survey keeps nothing, so that the first files of a long run are still handed on (in a
run, every survey comes before the first check).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from analyzer.budget import Budget, Meter, metered
from analyzer.records import record
from analyzer.source.files import file_sha256

__all__ = [
    "LAST_FRONT",
    "MEMO_CHARS",
    "FrontEnd",
    "LastFront",
    "hand_on",
    "hand_on_launches",
    "handing_on",
    "keep_in_worker",
    "keep_launches",
    "parsed_and_lowered",
    "taken",
    "taken_launches",
]

MEMO_CHARS = 4_000_000


@record(frozen=False, slots=False)
class FrontEnd:
    """What `api.lowered` made of one file: the preprocessed text, the parse, the module, and
    the stages' diagnostics after `ir.host_code.split_host` (`kept`, and `host`: shown with
    `--show-host`), with the facts of the program the module was lowered with."""

    pre: Any  # source.preprocess.Preprocessed
    parsed: Any  # syntax.parse.ParseResult
    module: Any  # ir.nodes.Module
    kept: tuple[Any, ...]
    host: tuple[Any, ...]
    elsewhere: dict[str, list[tuple[str, ...]]]  # api.launched_elsewhere: what the module was lowered with
    launches: Any = None  # analysis.launch.KnownLaunches: the module's host launches, once the survey ran them


@record(frozen=False, slots=False)
class _Entry:
    front: FrontEnd
    digests: tuple[tuple[str, str | None], ...]  # (path, hash of its bytes; None: must still be missing)


#: The front ends kept for the checks to come (None: not in a `handing_on` run: nothing kept).
_kept: dict[tuple[Any, ...], _Entry] | None = None
_chars = 0
#: The front end taken last, until its check asks for its host launches (`taken_launches`).
_last_taken: FrontEnd | None = None


@contextlib.contextmanager
def handing_on() -> Iterator[None]:
    """Within it, surveys keep their front ends for the checks; on leaving, what is left is
    dropped. Runs nest: an inner one shares the outer one's entries."""
    global _kept, _chars, _last_taken
    outer = _kept
    if outer is None:
        _kept, _chars = {}, 0
    try:
        yield
    finally:
        if outer is None:
            _kept, _chars, _last_taken = None, 0, None


def keep_in_worker() -> None:
    """A worker process's start (`program`'s pool): it keeps what its surveys make for the checks
    it runs, until it ends (forked or spawned, it does not inherit a run of its parent's)."""
    global _kept, _chars, _last_taken
    _kept, _chars, _last_taken = {}, 0, None


def hand_on(key: tuple[Any, ...], front: FrontEnd) -> None:
    """Keep `front`, made under `key`, for the check of the same file (inside `handing_on`)."""
    global _chars
    if _kept is None or _chars + len(front.pre.text) > MEMO_CHARS:
        return
    digests = _digests(front.pre.linemap)
    if digests is None:
        return
    _kept[key] = _Entry(front, digests)
    _chars += len(front.pre.text)


def taken(key: tuple[Any, ...]) -> FrontEnd | None:
    """The front end kept under `key`, once, where every file it was made from is as it was;
    else None."""
    global _chars, _last_taken
    if not _kept:
        return None
    entry = _kept.pop(key, None)
    if entry is None:
        return None
    _chars -= len(entry.front.pre.text)
    if not all(_as_it_was(path, digest) for path, digest in entry.digests):
        return None
    _last_taken = entry.front
    return entry.front


def hand_on_launches(module: Any, launches: Any) -> None:
    """Keep the host launches a survey found in `module` (`analysis.launch.KnownLaunches`) with
    its front end, where that was kept (`hand_on`: the front end handed on last)."""
    if _kept:
        front = next(reversed(_kept.values())).front
        if front.module is module:
            front.launches = launches


def taken_launches(module: Any) -> Any:
    """The host launches kept with the front end taken last, once, where `module` is its module
    (the check did not lower the file again); else None."""
    global _last_taken
    front, _last_taken = _last_taken, None
    if front is None:
        last = LAST_FRONT.get()
        front = last.front if last is not None else None
    return front.launches if front is not None and front.module is module else None


def _as_it_was(path: str, digest: str | None) -> bool:
    """Whether a file read still hashes to `digest`, or a path looked for in vain (None) is still missing."""
    return not os.path.exists(path) if digest is None else file_sha256(path) == digest


def parsed_and_lowered(
    pre: Any, parsed: Any, path: str, elsewhere: dict[str, list[tuple[str, ...]]], limits: Budget
) -> FrontEnd:
    """parse (where `parsed` is None) and lower a preprocessed text, each under its budget, with
    the template instances other files launch (`elsewhere`). Raises what the stages raise.
    Inside `LastFront.kept` (the language server), a lowering equal to the document's previous
    one is taken from it (`LastFront.again`)."""
    from analyzer.ir.host_code import split_host
    from analyzer.ir.lower import lower
    from analyzer.syntax.parse import parse

    if parsed is None:
        with metered(Meter("parse", limits.parse)):
            parsed = parse(pre.text)
    last = LAST_FRONT.get()
    if last is not None:
        again = last.again(pre, parsed, path, elsewhere, limits)
        if again is not None:
            return again
    with metered(Meter("lower", limits.lower)):
        module = lower(parsed.unit, pre.text, path, elsewhere=elsewhere)
    kept, host = split_host(parsed.diagnostics + module.diagnostics, parsed.unit, parsed.skipped, module, pre.text)
    front = FrontEnd(pre, parsed, module, tuple(kept), tuple(host), elsewhere)
    if last is not None:
        last.keep(front, path, limits)
    return front


class LastFront:
    """A document's front end made for its previous text, which the language server's next
    analysis of it takes where the lowering would be the same (`again`).

    The lowering (`ir.lower.lower`, then `ir.host_code.split_host`) reads the parse (its
    declarations, the constructs it skipped, its diagnostics), the text only where those lie
    (each node lowered reads the text of its span), the path, the instances other files launch
    and its budget. Where the new text's parse equals the previous one's (records compare by
    value, spans included) and the two texts are equal up to the end of the last of those
    spans, the lowering is the same, and so are the host launches found in it (`launches`,
    charged the steps they took, as a check charges a survey's). The parse itself is made
    again: it is what tells, and it charges its own steps. Nothing writes to a module once
    lowered, so the previous analysis leaves it as it was.

    Measured 2026-11-28, reduction_kernel.cu (cuda-samples), a comment line appended (the edit
    of benchmarks/lsp_latency.py), one process: parse and lowering 0.20-0.28 s CPU of an edit's
    0.5-0.8 s -> the parse alone, 0.10-0.12 s; the host launches 0.02-0.03 s -> 0; with the
    functions' shapes taken too (`server_memo.KernelMemo`), the edit 0.26-0.29 s."""

    def __init__(self) -> None:
        self.front: FrontEnd | None = None
        self.path = ""
        self.limits: Budget | None = None
        self.hits = 0  # lowerings taken (tests read it)

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        """Take and keep the document's front end in the block (in this thread)."""
        token = LAST_FRONT.set(self)
        try:
            yield
        finally:
            LAST_FRONT.reset(token)

    def keep(self, front: FrontEnd, path: str, limits: Budget) -> None:
        self.front, self.path, self.limits = front, path, limits

    def again(
        self, pre: Any, parsed: Any, path: str, elsewhere: dict[str, list[tuple[str, ...]]], limits: Budget
    ) -> FrontEnd | None:
        """The previous front end for `pre` and its parse, where its lowering is the one they
        would make (see the class); else None."""
        old = self.front
        if old is None or (path, elsewhere, limits) != (self.path, old.elsewhere, self.limits):
            return None
        if old.parsed.unit.decls != parsed.unit.decls or old.parsed.skipped != parsed.skipped:
            return None
        if old.parsed.diagnostics != parsed.diagnostics:
            return None
        reach = _reach(parsed)
        if old.pre.text[:reach] != pre.text[:reach]:
            return None
        front = FrontEnd(pre, parsed, old.module, old.kept, old.host, old.elsewhere, old.launches)
        self.front = front
        self.hits += 1
        return front


def _reach(parsed: Any) -> int:
    """Where the last of a parse's declarations, skipped constructs and diagnostics ends."""
    spans = [d.span for d in parsed.unit.decls] + [u.span for u in parsed.skipped]
    spans += [d.span for d in parsed.diagnostics if d.span is not None]
    return max((span.end for span in spans), default=0)


#: The language server's front end of the document analysed (`LastFront.kept`), else None.
LAST_FRONT: ContextVar[LastFront | None] = ContextVar("warplint_last_front", default=None)


def keep_launches(module: Any, launches: Any) -> None:
    """Keep the host launches found in `module` (`analysis.launch.KnownLaunches`) with the
    document's front end (`LastFront`), where that is `module`'s."""
    last = LAST_FRONT.get()
    if last is not None and last.front is not None and last.front.module is module and launches is not None:
        last.front.launches = launches


def _digests(linemap: Any) -> tuple[tuple[str, str | None], ...] | None:
    """The hash of each file a preprocessed text was read from, and None for each path an
    include was looked for in vain; None when one of those paths exists now, or a file read
    cannot be read again (nothing to check an entry against)."""
    out: list[tuple[str, str | None]] = []
    for path in dict.fromkeys(f.path for f in linemap.files):
        digest = file_sha256(path)  # read now, not the run's (`cache.file_digest`): a file edited
        # between the survey and the check must not be handed on
        if digest is None:
            return None
        out.append((path, digest))
    for path in dict.fromkeys(linemap.absent):
        if os.path.exists(path):
            return None
        out.append((path, None))
    return tuple(out)
