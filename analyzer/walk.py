"""What a search of a folder leaves out: `exclude` globs and `.gitignore`, as ruff does.

`Walk` holds the globs (`exclude`, ruff's defaults unless replaced, plus `extend-exclude`)
and whether `.gitignore` is respected. A glob without `/` matches a file or folder name at
any depth (`build`, `*.gen.cu`); a glob with `/` matches the path relative to the folder of
the configuration file that names it, or the current folder for the command line
(`third_party/*`, `src/legacy/old.cu`; `anchored` makes it absolute). Globs are `fnmatch`'s (`*` also crosses `/`).
They apply to what a folder's search finds; a file named on the command line is checked
whatever they say (as ruff, without `--force-exclude`).

`.gitignore`: inside a git work tree, with git installed, git itself decides (`git
check-ignore --stdin`, so nested `.gitignore`s, `.git/info/exclude` and the global excludes
file count, and tracked files are never ignored). Elsewhere a small reader applies the
`.gitignore` files of the folder searched and of its subfolders: comments, `!` negation, a
trailing `/` for folders, a leading or inner `/` anchoring the pattern to the file's folder;
no `**` beyond what `fnmatch`'s `*` gives. `pathspec` would be exact, but git is the
authority where it matters (a work tree), so no dependency is added.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence

from analyzer.records import record

__all__ = ["DEFAULT_EXCLUDE", "Walk", "anchored", "gitignored"]

#: ruff's default `exclude` (folders of tools, environments and builds).
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)


@record
class Walk:
    """What folder searches leave out (see the module)."""

    exclude: tuple[str, ...] = DEFAULT_EXCLUDE  # globs with `/` already `anchored`
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True

    def excluded(self, path: str) -> bool:
        """Whether a glob matches `path` (a file or folder found by a search)."""
        name = os.path.basename(os.path.normpath(path))
        full = os.path.abspath(path).replace(os.sep, "/")
        for glob in (*self.exclude, *self.extend_exclude):
            if fnmatch.fnmatchcase(full if "/" in glob else name, glob):
                return True
        return False


def anchored(globs: Sequence[str], root: str) -> tuple[str, ...]:
    """`globs` with those that hold a `/` made absolute below `root` (a trailing `/` dropped)."""
    out = []
    for glob in globs:
        glob = glob.rstrip("/") or glob
        if "/" in glob:
            glob = os.path.normpath(os.path.join(os.path.abspath(root), glob)).replace(os.sep, "/")
        out.append(glob)
    return tuple(out)


def gitignored(folder: str, files: Sequence[str]) -> set[str]:
    """Which of `files` (found by searching `folder`) `.gitignore` leaves out."""
    if not files:
        return set()
    answer = _git_check_ignore(folder, files)
    return answer if answer is not None else _read_gitignores(folder, files)


def _git_check_ignore(folder: str, files: Sequence[str]) -> set[str] | None:
    """git's answer, or None when git is missing or `folder` is not in a work tree."""
    import shutil
    import subprocess  # here, not at the top: `check FILE` never asks git, and it cost 5 to 10 ms of
    # each start-up (-X importtime, 2026-11-26)

    git = shutil.which("git")
    if git is None:
        return None
    by_relative = {os.path.relpath(f, folder): f for f in files}
    try:
        done = subprocess.run(
            [git, "-C", folder, "check-ignore", "--stdin", "-z"],
            input="\0".join(by_relative).encode("utf-8", "surrogateescape") + b"\0",
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):  # 128: not a work tree (or another fatal error)
        return None
    named = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {by_relative[n] for n in named if n in by_relative}


def _read_gitignores(folder: str, files: Sequence[str]) -> set[str]:
    """The small reader: each file against the `.gitignore`s of `folder` and the folders
    between it and the file, the deepest last (a later match wins, as in git)."""
    cache: dict[str, list[str]] = {}
    ignored = set()
    top = os.path.abspath(folder)
    for file in files:
        chain = _folders_between(top, os.path.dirname(os.path.abspath(file)))
        verdict = False
        for here in chain:
            patterns = cache.setdefault(here, _patterns(os.path.join(here, ".gitignore")))
            relative = os.path.relpath(os.path.abspath(file), here).replace(os.sep, "/")
            for pattern in patterns:
                negated = pattern.startswith("!")
                if _matches(pattern.removeprefix("!"), relative):
                    verdict = not negated
        if verdict:
            ignored.add(file)
    return ignored


def _folders_between(top: str, inner: str) -> list[str]:
    chain = [inner]
    while chain[-1] != top and os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    return list(reversed(chain)) if chain[-1] == top else [top]


def _patterns(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [line.rstrip() for line in lines if line.strip() and not line.startswith("#")]


def _matches(pattern: str, relative: str) -> bool:
    """Whether a `.gitignore` pattern matches a file at `relative` (to the `.gitignore`'s
    folder) or one of the folders above it."""
    folder_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    parts = relative.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for i, candidate in enumerate(candidates):
        is_folder = i < len(parts) - 1
        if folder_only and not is_folder:
            continue
        subject = candidate if anchored else parts[i]
        if fnmatch.fnmatchcase(subject, pattern):
            return True
    return False
