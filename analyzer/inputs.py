"""The inputs of a run: the files a list of paths names, and why a path cannot be read as CUDA.

Folders are searched for `.cu` and `.cuh` files, leaving out what a `walk.Walk` excludes
(globs, `.gitignore`); a path that yields nothing is a problem the report states at line 1 of
that path (`at_top`), never a traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.source.files import text_file_problem
from analyzer.walk import Walk, gitignored

__all__ = ["CUDA_SUFFIXES", "INPUT_ERROR", "NO_CUDA_FILES", "at_top", "collect_files", "input_problem"]

CUDA_SUFFIXES = (".cu", ".cuh")
NO_CUDA_FILES = "no .cu or .cuh files in this folder"  # a warning; every other path problem is an error
INPUT_ERROR = "WL910"  # a path that is not a readable CUDA text file


def collect_files(paths: Iterable[str], walk: Walk | None = None) -> list[tuple[str, str | None]]:
    """The files to check, in order, each once: `(path, problem)`.

    A folder is searched (recursively, sorted, hidden folders skipped, and what `walk`
    excludes left out) for .cu and .cuh files; a file named explicitly is checked whatever
    its suffix. `problem` is None, or a message for a path that yields nothing (missing, or a
    folder without CUDA files).
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
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _left_out(walk, root, d))
                names = (n for n in sorted(files) if n.endswith(CUDA_SUFFIXES) and not _left_out(walk, root, n))
                inside.extend(os.path.join(root, name) for name in names)
            if walk is not None and walk.respect_gitignore:
                ignored = gitignored(path, inside)
                inside = [file for file in inside if file not in ignored]
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


def _left_out(walk: Walk | None, folder: str, name: str) -> bool:
    return walk is not None and walk.excluded(os.path.join(folder, name))


def input_problem(path: str) -> str | None:
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


def at_top(
    path: str, message: str, code: str, severity: Severity = Severity.ERROR, notes: tuple[str, ...] = ()
) -> Diagnostic:
    return Diagnostic(severity, message, code, location=Location(path, 1, 1, 1, 1), notes=notes)
