"""What every part of the preprocessor shares: its state, its output, its diagnostics.

The preprocessor is one state machine: the macro table, the stack of files being read, the
text it emits with the LineMap segments that map it back, the diagnostics and comments.
Its directive handling (`analyzer.source.directives`) and its macro expansion
(`analyzer.source.macros`) both read and change all of that and call each other (`#if`
expands macros; reading a macro's arguments runs the directives among them;
`__has_include` searches the include path), so they are mixins of one object,
`analyzer.source.preprocess.Preprocessor`, over this base class: helper objects would pass
the whole state around or reach back into the driver, and the hot loops keep reading
`self.macros` and `self.parts` with one attribute lookup.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from analyzer.diagnostics import Diagnostic, Location, Severity
from analyzer.source.files import FileContext, SplicedFile, read_text_file
from analyzer.source.linemap import EXPANSION, NEWLINES, VERBATIM, SourceFile

if TYPE_CHECKING:
    from analyzer.source.macros import Macro

CODE = "WL901"  # every preprocessor diagnostic

_ERROR = Severity.ERROR


class PreprocessorState:
    """The preprocessor's state, and the output and diagnostics every part writes to."""

    def __init__(self, include_paths: Sequence[str], read_file: Callable[[str], str | None] | None) -> None:
        self.include_paths = [str(p) for p in include_paths or ()]
        self.read = read_file or read_text_file
        self.macros: dict[str, Macro] = {}
        self.version = 0  # bumped on every (re)definition: invalidates the expansion cache
        self.cache: dict[str, tuple[int, str]] = {}
        self.pushed: dict[str, list[Macro | None]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.comments: list[tuple[str, Location]] = []  # (text, where): made `Comment`s at the end
        self.comment_keys: set[tuple[str, int]] = set()
        self.files: list[SourceFile] = []
        self.loaded: dict[str, SplicedFile | None] = {}
        self.once: set[str] = set()
        self.guards: dict[str, str] = {}
        self.refused: dict[str, str] = {}  # file key -> why the file was not read (too large, binary)
        self.self_included: set[str] = set()  # files reported as included into themselves
        self.system_includes: dict[str, None] = {}
        self.absent: dict[str, None] = {}  # paths an include looked for and read nothing from, in order
        self.stack: list[FileContext] = []
        self.includes = 0
        self.too_deep = False
        self.counter = 0
        self.quiet = False  # no redefinition warnings (predefined and command-line macros)
        # expansion state
        self.budget = 0
        self.volatile = False  # the current expansion must not be cached
        self.site: tuple[FileContext, int, int] | None = None  # where the current expansion is used
        self.hash_pos = 0  # offset of the '#' of the directive being run
        # output
        self.parts: list[str] = []
        self.length = 0
        self.seg_start: list[int] = []
        self.seg_file: list[int] = []
        self.seg_orig: list[int] = []
        self.seg_kind: list[int] = []
        self.seg_end: list[int] = []

    # ------------------------------------------------------------------ diagnostics

    def _register(self, file: SplicedFile) -> None:
        """Give a file a place in the LineMap's file table (once)."""
        if file.index < 0:
            file.index = len(self.files)
            self.files.append(file.source)

    def _diag(self, severity: Severity, message: str, location: Location, notes: tuple[str, ...] = ()) -> None:
        self.diagnostics.append(Diagnostic(severity, message, code=CODE, location=location, notes=notes))

    def _site_location(self) -> Location:
        """Where the macro use (or directive line) being expanded is."""
        if self.site is None:
            return Location("<built-in>", 1, 1, 1, 1)
        context, start, end = self.site
        return context.file.location(start, end)

    # ------------------------------------------------------------------ output

    def _segment(self, text: str, file: int, orig: int, kind: int, end: int = -1) -> None:
        """Append `text` to the output, mapped back as the LineMap segment kind `kind` says."""
        if not text:
            return
        if (
            kind != EXPANSION
            and self.seg_kind
            and self.seg_kind[-1] == kind
            and self.seg_file[-1] == file
            and self.seg_orig[-1] + (self.length - self.seg_start[-1]) == orig
        ):  # continues the previous segment
            self.parts.append(text)
            self.length += len(text)
            return
        self.seg_start.append(self.length)
        self.seg_file.append(file)
        self.seg_orig.append(orig)
        self.seg_kind.append(kind)
        self.seg_end.append(end)
        self.parts.append(text)
        self.length += len(text)

    def _verbatim(self, file: SplicedFile, start: int, end: int) -> None:
        """Copy file.text[start:end] to the output, one segment per run between splices."""
        if end <= start:
            return
        text = file.text
        if not file.splices:
            self._segment(text[start:end], file.index, start, VERBATIM)
            return
        splices = file.splices
        i = bisect_right(splices, start)
        while i < len(splices) and splices[i] < end:
            p = splices[i]
            self._segment(text[start:p], file.index, file.orig(start), VERBATIM)
            start = p
            while i < len(splices) and splices[i] == p:
                i += 1
        self._segment(text[start:end], file.index, file.orig(start), VERBATIM)

    def _newlines(self, file: SplicedFile, start: int, end: int) -> None:
        """Emit one newline per original line break inside the spliced range [start, end)."""
        if end <= start or (not file.splices and file.text.find("\n", start, end) < 0):
            return
        a = file.orig(start)
        b = file.orig(end - 1) + 1
        original = file.original
        count = original.count("\n", a, b)
        if count:
            first = original.find("\n", a, b)
            row = bisect_right(file.source.line_starts, first) - 1
            self._segment("\n" * count, file.index, row, NEWLINES)

    def record_comment(self, file: SplicedFile, start: int, end: int) -> None:
        """Record a comment (once, however often its file is read)."""
        key = (file.key, start)
        if key in self.comment_keys:
            return
        self.comment_keys.add(key)
        text = file.text[start:end]
        self.comments.append((text, file.location(start, end)))
        if text.startswith("/*") and (len(text) < 4 or not text.endswith("*/")):
            self._diag(_ERROR, "unterminated comment", file.location(start, start + 2))

    def _emit_comment(self, file: SplicedFile, start: int, end: int) -> None:
        """Record a comment and put one space in its place (and its newlines)."""
        self.record_comment(file, start, end)
        self._segment(" ", file.index, file.orig(start), EXPANSION, file.orig(end - 1) + 1)
        self._newlines(file, start, end)
