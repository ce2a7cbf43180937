"""The options of `warplint check` that ruff and clang-tidy users expect, kept out of `cli`:
which files a folder's search leaves out (`--exclude`, `--extend-exclude`,
`--no-respect-gitignore`), `.` when no path is given, `-` with `--stdin-filename` (the source
read from standard input, reported under NAME), and colour (`--color`, `FORCE_COLOR`, `NO_COLOR`).

`cli` adds these options with `add_file_options` and `add_color_options`, turns them into a
`walk.Walk` with `walk_for`, into a `check_program`-shaped run with `stdin_run`, and into a
yes or no with `use_color`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from analyzer.walk import DEFAULT_EXCLUDE, Walk, anchored

__all__ = [
    "HUMAN_FORMATS",
    "add_color_options",
    "add_file_options",
    "prepare_paths",
    "source_position",
    "stdin_run",
    "use_color",
    "walk_for",
]

#: The formats people read in a terminal, the only ones ever coloured.
HUMAN_FORMATS = ("text", "full", "grouped")
STDIN = "-"


def _globs(text: str) -> list[str]:
    globs = [g.strip() for g in text.split(",") if g.strip()]
    if not globs:
        raise argparse.ArgumentTypeError(f"{text!r}: expected glob patterns, e.g. build,third_party/*")
    return globs


class _Append(argparse.Action):
    """A repeatable option whose values (lists already) are joined."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), *values])


def add_file_options(check: argparse.ArgumentParser) -> None:
    files = check.add_argument_group("files")
    files.add_argument(
        "--exclude",
        type=_globs,
        action=_Append,
        metavar="GLOBS",
        help="globs of files and folders a folder's search leaves out, replacing the defaults "
        "(ruff's: .git, .venv, build, dist, node_modules, ...) and the configuration's `exclude`; "
        "a glob with / is relative to the current folder",
    )
    files.add_argument(
        "--extend-exclude",
        type=_globs,
        action=_Append,
        metavar="GLOBS",
        help="globs to leave out as well as `exclude`'s",
    )
    files.add_argument(
        "--no-respect-gitignore",
        dest="respect_gitignore",
        action="store_false",
        default=None,
        help="search folders without leaving out what .gitignore ignores",
    )
    files.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="with the path `-` (or no path): read the source from standard input and report it "
        'as NAME (#include "..." is searched for in NAME\'s folder)',
    )


def add_color_options(out: Any) -> None:
    out.add_argument(
        "--color",
        choices=("always", "never", "auto"),
        default="auto",
        help="colour the text formats: auto (the default) colours on a terminal, unless NO_COLOR "
        "is set; FORCE_COLOR colours elsewhere too",
    )
    out.add_argument("--no-color", dest="color", action="store_const", const="never", help="the same as --color never")


def use_color(ns: argparse.Namespace, stream: IO[str], environ: Any = None) -> bool:
    """Whether the report is coloured: `--color always|never`, else (auto) not with `NO_COLOR`,
    yes with `FORCE_COLOR`, else only when the report goes to a terminal."""
    environ = os.environ if environ is None else environ
    if ns.format not in HUMAN_FORMATS or ns.color == "never":
        return False
    if ns.color == "always":
        return True
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    try:
        return ns.output is None and bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def prepare_paths(ns: argparse.Namespace) -> str | None:
    """`.` when no path is given, standard input read for `-`; the usage error, or None."""
    reads_stdin = ns.paths == [STDIN] or (not ns.paths and ns.stdin_filename is not None)
    if STDIN in ns.paths and not reads_stdin:
        return "`-` (standard input) must be the only path"
    if not reads_stdin:
        if ns.stdin_filename is not None:
            return "--stdin-filename needs the path `-` (standard input) or no path"
        ns.paths = ns.paths or ["."]
        ns.stdin_text = None
        return None
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    ns.stdin_text = data.decode("utf-8", "surrogateescape")
    ns.paths = [ns.stdin_filename or STDIN]
    return None


def stdin_run(text: str) -> Callable[..., list[Any]]:
    """A run shaped like `program.check_program` that checks `text` as its one path."""
    from analyzer.api import Options, check_source

    def run(paths: Sequence[str], options: Any, *, options_for: Any = None, **_: Any) -> list[Any]:
        name = paths[0]
        chosen = options_for(name) if options_for is not None else options or Options()
        return [check_source(name, text, chosen)]

    return run


def walk_for(ns: argparse.Namespace) -> Walk:
    """What folder searches leave out: the command line's globs (relative to the current
    folder) over the configuration's (that of `--config`, else the one nearest the current
    folder; none with `--isolated`), over ruff's defaults."""
    from analyzer.config import ConfigError, Settings, find_config, load_config

    settings = Settings()
    path = None if ns.isolated else (ns.config or find_config(os.getcwd()))
    if path is not None:
        with contextlib.suppress(ConfigError):  # the run reports it, as for every other key
            settings = load_config(path)
    here = os.getcwd()
    if ns.exclude is not None:
        exclude = anchored(ns.exclude, here)
    else:
        exclude = settings.exclude if settings.exclude is not None else DEFAULT_EXCLUDE
    respect = ns.respect_gitignore if ns.respect_gitignore is not None else settings.respect_gitignore
    return Walk(
        exclude=exclude,
        extend_exclude=(*settings.extend_exclude, *anchored(ns.extend_exclude or (), here)),
        respect_gitignore=True if respect is None else respect,
    )


def source_position(where: str) -> tuple[str, int, int | None] | None:
    """`FILE:LINE` or `FILE:LINE:COL` (the position `check` prints, its trailing `:` allowed)
    as (file, line, column or None); None when it is neither."""
    parts = where.removesuffix(":").split(":")
    numbers: list[int] = []
    while len(parts) > 1 and len(numbers) < 2 and parts[-1].strip().isdigit():
        numbers.insert(0, int(parts.pop()))
    path = ":".join(parts)
    if not path or not numbers or numbers[0] < 1:
        return None
    return path, numbers[0], (numbers[1] if len(numbers) == 2 else None)
