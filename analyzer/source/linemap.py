"""Map offsets in preprocessed text back to (path, line, column) in the original files.

The preprocessed text is a concatenation of *segments*. Each segment records where its
first character starts in the output and how its characters map back:

* ``VERBATIM``: text copied from a file; character ``k`` of the segment is character
  ``orig + k`` of that file, so columns stay exact.
* ``EXPANSION``: text that a macro expansion (or a comment replacement) produced; every
  character maps to ``orig`` (the start of the macro name at its use), and a span that ends
  inside it ends at ``end`` (one past the end of the use, e.g. the closing parenthesis).
* ``NEWLINES``: newline characters that stand in for consumed lines (directives, skipped
  groups, multi-line macro uses); character ``k`` is the newline ending 0-based line
  ``orig + k`` of that file.

Segment starts are kept in a sorted list searched with `bisect`, and each file's line
starts likewise, so resolving is O(log n) and memory is proportional to the number of
segments, never to the number of characters (pycodestyle maps logical lines the same way).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from analyzer.diagnostics import Location, Span
from analyzer.records import record

VERBATIM = 0
EXPANSION = 1
NEWLINES = 2


@record
class SourceFile:
    """One original file: its path and the offset at which each line starts."""

    path: str
    line_starts: tuple[int, ...]  # line_starts[0] == 0; one entry per line
    length: int  # number of characters in the file

    @classmethod
    def from_text(cls, path: str, text: str) -> SourceFile:
        lengths = [len(line) + 1 for line in text.split("\n")]
        lengths.pop()
        return cls(path, tuple(accumulate(lengths, initial=0)), len(text))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset into this file (clamped to the file)."""
        offset = min(max(offset, 0), self.length)
        row = bisect_right(self.line_starts, offset) - 1
        return row + 1, offset - self.line_starts[row] + 1

    def newline_offset(self, row: int) -> int:
        """Offset of the newline that ends 0-based line `row` (the file's end if it has none)."""
        if row + 1 < len(self.line_starts):
            return self.line_starts[row + 1] - 1
        return self.length


class LineMap:
    """Resolves offsets into one preprocessed text to positions in the original files."""

    __slots__ = ("_end", "_file", "_files", "_kind", "_length", "_orig", "_starts", "absent")

    def __init__(
        self,
        files: Sequence[SourceFile],
        starts: Sequence[int],
        file: Sequence[int],
        orig: Sequence[int],
        kind: Sequence[int],
        end: Sequence[int],
        length: int,
        absent: Sequence[str] = (),
    ) -> None:
        """Build from parallel segment tables (made by the preprocessor, see module docstring).

        `starts` must be sorted and strictly increasing, `starts[0] == 0` unless there is
        no segment; `length` is the length of the preprocessed text. `absent` are the paths
        where an include was looked for and nothing was read: the text holds while they stay
        absent (a header put there later would be read), which is what the results cache needs;
        one that holds a file not read (too large, binary) keeps the result out of the cache.
        """
        self.absent = tuple(absent)
        self._files = tuple(files)
        self._starts = list(starts)
        self._file = list(file)
        self._orig = list(orig)
        self._kind = list(kind)
        self._end = list(end)
        self._length = length

    @classmethod
    def identity(cls, text: str, path: str = "<input>") -> LineMap:
        """The map of a text that was not preprocessed: every offset maps to itself."""
        files = [SourceFile.from_text(path, text)]
        if not text:
            return cls(files, [], [], [], [], [], 0)
        return cls(files, [0], [0], [0], [VERBATIM], [-1], len(text))

    @property
    def path(self) -> str:
        """The path of the main file."""
        return self._files[0].path if self._files else "<input>"

    @property
    def files(self) -> tuple[SourceFile, ...]:
        return self._files

    @property
    def segments(self) -> int:
        """How many segments the table holds (a measure of its size, not of the text's)."""
        return len(self._starts)

    def segment(self, index: int) -> tuple[int, int, int, int]:
        """Segment `index` of the table as (start in the output, file index, orig, kind), with
        `orig` and `kind` as the module docstring says: for checking the map, not resolving."""
        return self._starts[index], self._file[index], self._orig[index], self._kind[index]

    def __len__(self) -> int:
        """The length of the preprocessed text this map describes."""
        return self._length

    def __repr__(self) -> str:
        return f"LineMap({self.path!r}, {len(self._starts)} segments, {len(self._files)} files)"

    # ------------------------------------------------------------------ resolving

    def _origin(self, offset: int) -> tuple[int, int, int]:
        """(segment index, file index, offset in that file) of one output offset."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0:
            i = 0
        kind = self._kind[i]
        f = self._file[i]
        if kind == VERBATIM:
            orig = self._orig[i] + (offset - self._starts[i])
        elif kind == EXPANSION:
            orig = self._orig[i]
        else:  # NEWLINES
            orig = self._files[f].newline_offset(self._orig[i] + (offset - self._starts[i]))
        return i, f, orig

    def resolve(self, offset: int) -> tuple[str, int, int]:
        """(path, 1-based line, 1-based column) in the original file of one offset.

        An offset at or past the end of the text resolves to just after the last character.
        """
        if not self._starts:
            return self.path, 1, 1
        if offset >= self._length:
            location = self.resolve_span(Span(self._length - 1, self._length))
            return location.path, location.end_line, location.end_column
        _, f, orig = self._origin(max(offset, 0))
        source = self._files[f]
        line, column = source.position(orig)
        return source.path, line, column

    def resolve_span(self, span: Span) -> Location:
        """The `Location` of a span; the end is one past its last character.

        A span that ends inside a macro expansion ends at the end of the macro use (for
        `IMUL(a, b)` after the closing parenthesis). If the end lies in another file than
        the start (a span across an `#include`), or before it, the location is empty.
        """
        if not self._starts:
            return Location(self.path, 1, 1, 1, 1)
        start = max(span.start, 0)
        _, f, orig = self._origin(start)
        source = self._files[f]
        line, column = source.position(orig)
        if span.end <= start:
            return Location(source.path, line, column, line, column)
        i, g, last = self._origin(span.end - 1)
        if g != f:
            return Location(source.path, line, column, line, column)
        if self._kind[i] == EXPANSION:
            stop = self._end[i]
        else:
            stop = last + 1
        end_line, end_column = source.position(stop)
        if (end_line, end_column) < (line, column):
            end_line, end_column = line, column
        return Location(source.path, line, column, end_line, end_column)
