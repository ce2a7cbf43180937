"""The files the preprocessor reads, and where it stands in each.

A `SplicedFile` is one original file with its backslash-newlines removed (what every
later step reads), and maps an offset in that text back to a `Location` in the original.
A `FileContext` is one file on the `#include` stack: the reading position, the `#if`
groups open in it (`OpenConditional`), and what include-guard detection has seen.
"""

from __future__ import annotations

import os
from bisect import bisect_right

from analyzer.diagnostics import Location
from analyzer.source.linemap import SourceFile
from analyzer.source.tokens import SPLICE


def file_key(path: str) -> str:
    """The key a file is known by (`#pragma once`, include guards, files read already):
    its absolute, case-normalised path; `<built-in>`-style names stand for themselves."""
    if path.startswith("<") and path.endswith(">"):
        return path
    return os.path.normcase(os.path.abspath(path))


MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are refused, not read (named ones and included ones)
BINARY_PROBE_BYTES = 8192  # how much of a file is inspected to tell text from binary
BINARY_RATIO = 0.30  # more non-text bytes than this in the probe: binary

_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\b\x1b")
# the bytes that are text whatever the encoding, and with them the bytes >= 0x80 of a UTF-8
# probe: `bytes.translate` deletes them and what is left is counted. Measured 2026-11-26 with
# timeit on an 8 kB probe (helper_cuda.h): 0.40 ms counted byte by byte in Python -> 7 us; the
# 18 small cuda-samples files of issue 16 read 56 files in one process
_TEXT_BYTES = bytes(b for b in range(0x80) if not (b < 0x20 and b not in _TEXT_CONTROLS) and b != 0x7F)
_UTF8_TEXT_BYTES = _TEXT_BYTES + bytes(range(0x80, 0x100))


class FileRefused(OSError):
    """A file that is there but is not read as CUDA text: too large, or binary. `str()` says why."""


def file_sha256(path: str) -> str | None:
    """The SHA-256 of a file's bytes, read now; None when it cannot be read."""
    import hashlib  # (here: a `--no-cache` check never hashes a file; see cache.lookup)

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def read_text_file(path: str) -> str | None:
    """A file's text (UTF-8, a byte-order mark dropped, undecodable bytes replaced), or None
    when there is no such file: how `#include` reads unless the caller gives `read_file`.
    Raises `FileRefused` for a file over MAX_FILE_BYTES or one that `looks_binary`."""
    if not os.path.isfile(path):
        return None
    problem = text_file_problem(path)
    if problem is not None:
        raise FileRefused(problem)
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        return f.read()


def text_file_problem(path: str) -> str | None:
    """Why a regular file is not read as CUDA text (too large, binary), or None. Raises OSError."""
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        return f"file too large ({size / 2**20:.1f} MB; warplint reads files up to {MAX_FILE_BYTES // 2**20} MB)"
    with open(path, "rb") as handle:
        if looks_binary(handle.read(BINARY_PROBE_BYTES)):
            return "binary file, not CUDA source text"
    return None


def looks_binary(probe: bytes) -> bool:
    """True for bytes that are not source text: any NUL, or more than 30% non-text bytes.

    Control characters other than whitespace are non-text; so are bytes >= 0x80 unless the
    probe decodes as UTF-8 (a multi-byte character cut at the probe's end is allowed).
    """
    if not probe:
        return False
    if b"\0" in probe:
        return True
    try:
        probe.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError as err:
        utf8 = err.start >= len(probe) - 3 and err.reason == "unexpected end of data"
    odd = len(probe.translate(None, _UTF8_TEXT_BYTES if utf8 else _TEXT_BYTES))
    return odd > BINARY_RATIO * len(probe)


class SplicedFile:
    """One original file: its text with line splices removed, and how to map back."""

    __slots__ = ("index", "key", "original", "path", "removed", "source", "splices", "text")

    def __init__(self, path: str, key: str, text: str) -> None:
        if text.startswith("\ufeff"):
            text = " " + text[1:]
        self.path = path
        self.key = key
        self.index = -1  # position in the LineMap's file table, once output comes from it
        self.original = text
        self.source = SourceFile.from_text(path, text)
        self.splices: list[int] = []  # offsets in `text` where a backslash-newline was removed
        self.removed: list[int] = []  # characters removed up to and including each splice
        if "\\" in text and SPLICE.search(text):
            pieces = []
            last = 0
            total = 0
            for m in SPLICE.finditer(text):
                pieces.append(text[last : m.start()])
                total += m.end() - m.start()
                self.splices.append(m.end() - total)
                self.removed.append(total)
                last = m.end()
            pieces.append(text[last:])
            text = "".join(pieces)
        self.text = text

    def orig(self, offset: int) -> int:
        """Offset in the original text of an offset in the spliced text."""
        if not self.splices:
            return offset
        i = bisect_right(self.splices, offset)
        return offset + (self.removed[i - 1] if i else 0)

    def location(self, start: int, end: int) -> Location:
        """Location of the spliced-text range [start, end)."""
        a = self.orig(start)
        b = self.orig(end - 1) + 1 if end > start else a
        line, column = self.source.position(a)
        end_line, end_column = self.source.position(b)
        return Location(self.path, line, column, end_line, end_column)


class OpenConditional:
    """One open `#if` group."""

    __slots__ = ("else_seen", "end", "name", "start", "taken")

    def __init__(self, taken: bool, start: int, end: int, name: str) -> None:
        self.taken = taken  # some branch of the group has been (or is being) taken
        self.else_seen = False
        self.start, self.end, self.name = start, end, name


class FileContext:
    """A file being read: position, open conditionals, include-guard detection."""

    __slots__ = ("conds", "file", "guard", "guard_end", "guard_name", "pos")

    def __init__(self, file: SplicedFile) -> None:
        self.file = file
        self.pos = 0
        self.conds: list[OpenConditional] = []
        self.guard: OpenConditional | None = None
        self.guard_name = ""
        self.guard_end = -1
