"""The build: compiler flags (nvcc's and clang's spellings) and compilation databases.

Real projects pass `-I`, `-D` and `-arch` through their build system; clang tools read them
from a `compile_commands.json` (`-p build/`). This module reads the flags warplint needs out
of a compiler command line: `-I`/`-isystem` folders, `-D`/`-U` macros, `-include` files, the
architecture (`-arch`, `--gpu-architecture`, `-gencode arch=...,code=sm_XX`) and `-std`,
each in the spellings nvcc and clang accept (`-DX=1`, `-D X=1`, `--define-macro=X=1`, ...).
Relative folders and files are taken from the command's `directory`.

Two uses: `warplint check ... -- FLAGS` (after `--`, a token that is one of these flags is a
flag and anything else a path: `strict`), and `-p` (every entry of the database; there any
other flag of the compiler is skipped, with the value it takes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from analyzer.lazy_pattern import lazy_compile
from analyzer.records import record

__all__ = ["BuildError", "CompilationDatabase", "CompileFlags", "find_database", "parse_flags"]

DATABASE_NAME = "compile_commands.json"

#: Flags that take a value, by kind, in every spelling: `-I DIR`, `-IDIR`, `--include-path=DIR`.
_VALUE_FLAGS: dict[str, str] = {
    "-I": "include",
    "--include-path": "include",
    "-isystem": "include",
    "--system-include": "include",
    "-D": "define",
    "--define-macro": "define",
    "-U": "undefine",
    "--undefine-macro": "undefine",
    "-include": "force",
    "--pre-include": "force",
    "-arch": "arch",
    "--gpu-architecture": "arch",
    "-gencode": "gencode",
    "--generate-code": "gencode",
    "-std": "std",
    "--std": "std",
    "-x": "language",
    "--x": "language",
}
#: Prefixes a value may be glued to (`-Iinc`, `-DX`, `-isystem/usr/x`): the longest first.
_GLUED = ("-isystem", "-I", "-D", "-U")
#: Flags of other tools in a database's commands that take the next token as their value.
_SKIPPED_WITH_VALUE = frozenset(
    {"-o", "-MF", "-MT", "-MQ", "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options", "-ccbin",
     "--compiler-bindir", "-Xptxas", "--ptxas-options", "-rdc", "--relocatable-device-code", "-maxrregcount",
     "--output-file", "-Xcudafe", "-t", "--threads", "-L", "-l", "--library", "--library-path", "-idirafter",
     "-iquote", "-imacros", "-target", "--cuda-path", "-Xclang"}
)  # fmt: skip
_CODE = lazy_compile(r"(?:sm|compute)_(\d+[a-z]?)")


def _key(path: str) -> str:
    """A file's key in the database: its real, case-normalised path."""
    return os.path.normcase(os.path.realpath(path))


class BuildError(Exception):
    """A compilation database that cannot be used (missing, not JSON, not a list of entries)."""


@record
class CompileFlags:
    """What warplint takes from one compiler command line."""

    include_paths: tuple[str, ...] = ()  # -I and -isystem folders, absolute, in order
    defines: tuple[tuple[str, str | None], ...] = ()  # -D NAME[=VALUE], in order (None: no `=`)
    undefines: tuple[str, ...] = ()  # -U NAME
    forced_includes: tuple[str, ...] = ()  # -include FILE, absolute
    archs: tuple[str, ...] = ()  # sm_XX named by -arch / --gpu-architecture / -gencode code=, in order
    std: str | None = None  # -std=c++17 -> "c++17"


def _split(token: str) -> tuple[str, str | None]:
    """`--flag=value` -> ("--flag", "value"); a glued `-Iinc` -> ("-I", "inc"); else (token, None)."""
    head, eq, value = token.partition("=")
    if eq and head in _VALUE_FLAGS:
        return head, value
    if token in _VALUE_FLAGS:
        return token, None
    for prefix in _GLUED:
        if token.startswith(prefix) and len(token) > len(prefix):
            return prefix, token[len(prefix) :]
    return token, None


def _archs(kind: str, value: str) -> list[str]:
    """The sm_XX an -arch or -gencode value names (compute_XX read as sm_XX): for -gencode the
    `code=` part, `arch=` when there is none."""
    if kind == "gencode":
        parts = dict(p.partition("=")[::2] for p in re.split(r",(?![^\[]*\])", value))
        value = parts.get("code") or parts.get("arch") or ""
    return [f"sm_{m.group(1)}" for m in _CODE.finditer(value)]


def parse_flags(args: Sequence[str], directory: str, *, strict: bool) -> tuple[CompileFlags, list[str]]:
    """The flags of `args` warplint uses, and the tokens that are not flags (`strict`: every
    token that is not one of `_VALUE_FLAGS` is returned, `-o` included; otherwise the other
    flags of a compiler are skipped with their values). Relative paths are joined to `directory`."""
    found: dict[str, list[str]] = {kind: [] for kind in set(_VALUE_FLAGS.values())}
    rest: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        flag, value = _split(token)
        i += 1
        if flag in _VALUE_FLAGS:
            if value is None:
                if i >= len(args):
                    rest.append(token)
                    break
                value, i = args[i], i + 1
            found[_VALUE_FLAGS[flag]].append(value)
        elif not strict and token.startswith("-"):
            i += token in _SKIPPED_WITH_VALUE
        else:
            rest.append(token)
    return _flags(found, directory), rest


def _flags(found: dict[str, list[str]], directory: str) -> CompileFlags:
    def absolute(path: str) -> str:
        return os.path.normpath(os.path.join(directory, path))

    defines = []
    for item in found["define"]:
        name, eq, value = item.partition("=")
        defines.append((name, value if eq else None))
    archs = [a for kind in ("arch", "gencode") for value in found[kind] for a in _archs(kind, value)]
    return CompileFlags(
        include_paths=tuple(absolute(p) for p in found["include"]),
        defines=tuple(defines),
        undefines=tuple(found["undefine"]),
        forced_includes=tuple(absolute(p) for p in found["force"]),
        archs=tuple(archs),
        std=found["std"][-1] if found["std"] else None,
    )


def find_database(path: str) -> str:
    """The `compile_commands.json` that `-p PATH` names: PATH itself, or the file in folder
    PATH; raises BuildError when there is none."""
    candidate = os.path.join(path, DATABASE_NAME) if os.path.isdir(path) else path
    if not os.path.isfile(candidate):
        raise BuildError(f"{path}: no {DATABASE_NAME} " + ("in this folder" if os.path.isdir(path) else "there"))
    return candidate


class CompilationDatabase:
    """The entries of a `compile_commands.json`, looked up by the file they compile."""

    def __init__(self, entries: dict[str, CompileFlags], path: str) -> None:
        self.entries, self.path = entries, path

    @classmethod
    def load(cls, path: str) -> CompilationDatabase:
        """Read `-p PATH`'s database; raises BuildError. An entry's first command for a file wins."""
        import json  # here, not at the top: only `-p` reads a database (importing json and shlex:
        import shlex  # 6.7 M instructions, callgrind; checking a one-line kernel is 470 M)

        source = find_database(path)
        try:
            with open(source, encoding="utf-8", errors="replace") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as err:
            raise BuildError(f"{source}: cannot read the compilation database ({err})") from None
        if not isinstance(data, list):
            raise BuildError(f"{source}: a compilation database is a JSON array of entries")
        entries: dict[str, CompileFlags] = {}
        for number, entry in enumerate(data, 1):
            if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
                raise BuildError(f'{source}: entry {number} has no "file"')
            directory = str(entry.get("directory") or os.path.dirname(os.path.abspath(source)))
            args = entry.get("arguments")
            if not isinstance(args, list):
                args = shlex.split(str(entry.get("command", "")))
            flags, _ = parse_flags([str(a) for a in args[1:]], directory, strict=False)
            entries.setdefault(_key(os.path.join(directory, entry["file"])), flags)
        return cls(entries, source)

    def flags_for(self, path: str) -> CompileFlags | None:
        """The flags the database compiles `path` with, or None when it does not compile it."""
        return self.entries.get(_key(path))
