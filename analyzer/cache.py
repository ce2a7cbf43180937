"""The results cache: a file's analysis remembered on disk, as ruff remembers its lint results.

A checked file whose text, included files, options and configuration have not changed since
the last run costs only the lookup: its `FileReport` (what the renderers need, not the rendered
text) is read back. An entry is found by a key that hashes everything that decides the
result before the file is read: warplint's version and code (the size and time of each module
of the package, so an edited checkout never meets stale entries), the grammar files' text,
the architecture table, the options (the configuration's effect on them included, and what
the other files of the run tell the file), the kind of result (a check, a survey of
`analyzer.program`), the path, and the file's own text. An entry then names each file the
preprocessor read besides it (every `#include`, transitively) with the hash of its text, and
each path where an include (`#include "..."`, a build's `-include`) was looked for and nothing
was read (`LineMap.absent`): where one of the first has changed, or one of the second exists,
the entry is not used. (A result made while an include named a file too large or binary to
read is therefore never stored: that file exists.)

Writes are atomic (a temporary file in the folder, then renamed over the entry), so runs with
`-j` and runs side by side never read half an entry; an entry that cannot be read (corrupt,
truncated, from another Python) is ignored and written anew. The folder (`.warplint_cache` in
the project root by default) holds a `.gitignore` of `*`, as ruff's does.

Within one run (`one_run`, which `analyzer.program.check_program` opens) each file is hashed
once: the headers that every file of a project includes are not hashed again for each includer,
nor the checked file once for its survey and again for its check. Outside a run nothing is
remembered, so two runs in one process (tests, an editor) never share a hash. `probe` reads an
entry without computing anything, so that a run finds its hits before it starts worker processes.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

from analyzer.pickling import pickle_mappingproxy
from analyzer.records import record
from analyzer.source.files import file_sha256

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_CACHE_DIR",
    "Depends",
    "Entry",
    "cache_key",
    "cached",
    "file_digest",
    "lookup",
    "one_run",
    "probe",
    "report_depends",
    "store",
]

T = TypeVar("T")

DEFAULT_CACHE_DIR = ".warplint_cache"
CACHE_DIR_ENV = "WARPLINT_CACHE_DIR"
_FORMAT = 1  # bumped when the layout of an entry changes


@record
class Entry:
    """One cached result, and the files it was made from besides the checked one."""

    depends: tuple[tuple[str, str | None], ...]  # (path, file_digest) of every other file read; None: one
    # an `#include` looked for and did not find, which must still be missing
    value: Any


#: What a result was made from besides the checked file: the files read, and the paths an
#: `#include` looked for in vain (None: the result must not be cached).
Depends = tuple[Iterable[str], Iterable[str]] | None


#: The hash of each file taken in the current run, by path (None: no run open, nothing remembered).
_run_digests: dict[str, str | None] | None = None


@contextlib.contextmanager
def one_run() -> Iterator[None]:
    """Within it, `file_digest` hashes each file once; worker processes forked inside it start
    with what the run has hashed so far. Runs nest: an inner one shares the outer one's hashes."""
    global _run_digests
    outer = _run_digests
    if outer is None:
        _run_digests = {}
    try:
        yield
    finally:
        _run_digests = outer


def file_digest(path: str) -> str | None:
    """The hash of a file's bytes (taken once per `one_run`); None when it cannot be read."""
    remembered = _run_digests
    if remembered is None:
        return _hashed(path)
    where = os.path.abspath(path)  # a header is named relative to the run's folder and by its real path
    if where not in remembered:
        remembered[where] = _hashed(path)
    return remembered[where]


def _hashed(path: str) -> str | None:
    return file_sha256(path)


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """What identifies this warplint: its version, each module's size and modification time,
    the grammar files' text and the architecture table."""
    import hashlib  # (here and below, not at the top: a `--no-cache` run needs neither hashlib

    import analyzer  # nor pickle; see `lookup`)
    from analyzer.arch import ARCHITECTURES
    from analyzer.grammar_files import grammar_path

    h = hashlib.sha256(f"{_FORMAT}:{analyzer.__version__}".encode())
    package = os.path.dirname(os.path.abspath(analyzer.__file__))
    for folder, subfolders, files in os.walk(package):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                h.update(
                    f"{os.path.relpath(os.path.join(folder, name), package)}:{st.st_size}:{st.st_mtime_ns};".encode()
                )
    for grammar in ("cuda.lark", "ptx.lark"):
        try:
            h.update(grammar_path(grammar).read_bytes())
        except OSError:
            h.update(b"-")
    h.update(canonical(ARCHITECTURES).encode())
    return h.hexdigest()


def canonical(value: Any) -> str:
    """A text that is equal for equal values whatever the process (sets sorted: their order
    follows string hashing, which differs between processes)."""
    if isinstance(value, Mapping):
        return "{" + ",".join(sorted(f"{canonical(k)}:{canonical(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(canonical(v) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(canonical(v) for v in value) + ")"
    names = [f.name for f in type(value).__dict__.get("__record_fields__", ())]  # a record (not via
    # `__dataclass_fields__`, which imports dataclasses: `check` never does, records.py)
    if names:
        return type(value).__name__ + canonical({name: getattr(value, name) for name in names})
    return repr(value)


#: Options that change no result: where the cache is, and the output format (the cache holds
#: the result every format is rendered from), what folder searches leave out (which files, not
#: what one file gives), and whether fixes are verified (`api.check_file` does it after the cache).
_NOT_IN_KEY = frozenset({"cache_dir", "format", "walk", "fixes"})


def cache_key(kind: str, path: str, options: Any, digest: str) -> str:
    """The key of a result of `kind` for the file `path` whose bytes hash to `digest`, under
    `options` (but `_NOT_IN_KEY`)."""
    import hashlib

    settings = {k: v for k, v in vars(options).items() if k not in _NOT_IN_KEY}
    h = hashlib.sha256(code_fingerprint().encode())
    for part in (kind, path, os.path.realpath(path), os.getcwd(), canonical(settings), digest):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()


def _entry_path(folder: str, key: str) -> str:
    return os.path.join(folder, key[:2], key[2:])


def lookup(folder: str, key: str) -> Any | None:
    """The value cached under `key`, None when there is none, it cannot be read, or a file it
    was made from has changed."""
    import pickle  # here, not at the top: a `--no-cache` run never reads nor writes an entry;
    # importing pickle is 7.5 M instructions, hashlib 11.6 M (callgrind; checking a one-line
    # kernel with --no-cache is 470 M)

    try:
        with open(_entry_path(folder, key), "rb") as f:
            entry = pickle.load(f)
    except Exception:  # noqa: BLE001 - missing, corrupt or from another version: not cached
        return None
    if not isinstance(entry, Entry):
        return None
    if any(file_digest(path) != digest for path, digest in entry.depends):
        return None
    return entry.value


def store(folder: str, key: str, value: Any, depends: Iterable[str], absent: Iterable[str] = ()) -> None:
    """Cache `value` under `key`, made from the files `depends` (besides the checked one) while
    the files `absent` were missing; written to a temporary file and renamed, so a reader never
    sees half of it. A cache that cannot be written is no error: the run goes on without it."""
    digests: list[tuple[str, str | None]] = []
    for path in sorted(set(depends)):
        digest = file_digest(path)
        if digest is None:
            return  # a file read then is gone now: nothing to check an entry against
        digests.append((path, digest))
    for path in sorted(set(absent) - set(depends)):
        if file_digest(path) is not None:
            return  # a missing file has appeared since: the result may not hold
        digests.append((path, None))
    import pickle

    target = _entry_path(folder, key)
    pickle_mappingproxy()  # records hold read-only mappings (as for the worker processes)
    try:
        _prepare(folder)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        data = pickle.dumps(Entry(tuple(digests), value), protocol=pickle.HIGHEST_PROTOCOL)
        fd, temporary = _temporary_file(dir=os.path.dirname(target), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return


def _temporary_file(dir: str, prefix: str) -> tuple[int, str]:
    """`tempfile.mkstemp`, imported when first needed: with `--no-cache` nothing is written, and
    `tempfile` (with `random`) cost about 2 ms of each start-up (-X importtime, 2026-11-26)."""
    import tempfile

    return tempfile.mkstemp(dir=dir, prefix=prefix)


def _prepare(folder: str) -> None:
    """Make the cache folder, with a `.gitignore` of `*` inside (as ruff does)."""
    ignore = os.path.join(folder, ".gitignore")
    if os.path.exists(ignore):
        return
    os.makedirs(folder, exist_ok=True)
    fd, temporary = _temporary_file(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write("# Automatically created by warplint.\n*\n")
    os.replace(temporary, ignore)


def _key_for(kind: str, path: str, options: Any) -> str | None:
    """The key of the result of `kind` for the file `path` under `options` (an `api.Options`);
    None where nothing is cached: no `options.cache_dir`, PTX (what nvcc makes of a file is not
    in the key), a file that cannot be read."""
    if options.cache_dir is None or options.via_ptx or path.endswith(".ptx"):
        return None
    digest = file_digest(path)
    return None if digest is None else cache_key(kind, path, options, digest)


def probe(kind: str, path: str, options: Any) -> Any | None:
    """The cached result of `kind` for the file `path` under `options`, None when there is none:
    the lookup of `cached`, computing nothing."""
    key = _key_for(kind, path, options)
    return None if key is None else lookup(options.cache_dir, key)


def cached(kind: str, path: str, options: Any, compute: Callable[[], T], depends: Callable[[T], Depends]) -> T:
    """`compute()`, the result of `kind` for the file `path`, from the results cache where
    `options.cache_dir` (an `api.Options`) names one and it holds the result (`analyzer.cache`), else computed
    and stored there with the files it was made from (`depends(result)`; None: not stored)."""
    key = _key_for(kind, path, options)
    if key is None:
        return compute()
    hit = lookup(options.cache_dir, key)
    if hit is not None:
        return cast(T, hit)
    result = compute()
    made_from = depends(result)
    if made_from is not None:
        store(options.cache_dir, key, result, *made_from)
    return result


def report_depends(report: Any) -> Depends:
    """What a report was made from besides the checked file (every file the preprocessor read,
    and the paths where an include was looked for and nothing was there: `LineMap.absent`);
    None where it must not be cached: an internal error, a file that could not be read."""
    if report.linemap is None or report.has_tool_error:
        return None
    return [f.path for f in report.linemap.files if f.path != report.path], list(report.linemap.absent)
