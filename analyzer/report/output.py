"""Where a rendered report goes: its bytes, stdout, or a file replaced whole.

A report is text, but what it quotes need not be: a file name or a `-D` value that is not
UTF-8 reaches Python as a string with surrogate escapes (`os.fsdecode`), which a strict
UTF-8 encoder refuses (the SARIF report and `-o` used to end in an internal error and an
empty file). `encoded` gives such text back as the bytes it came from in the formats people
read (gcc-style lines: the name as the file system spells it), and as a `\\udcff` escape in
the JSON-based ones (still UTF-8, still JSON). `write_file` writes through a temporary file in
the target's folder renamed over it, so that the old report stays whole until the new one is.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys

__all__ = ["encoded", "write_file", "write_stdout"]

#: Formats whose text is JSON (or HTML), where a stray byte would make the document invalid.
_ESCAPED_FORMATS = frozenset({"json", "json-lines", "sarif", "html"})


def encoded(text: str, format: str) -> bytes:
    """`text` as UTF-8, surrogate escapes as the bytes they stand for (or as `\\uXXXX` in JSON)."""
    errors = "backslashreplace" if format in _ESCAPED_FORMATS else "surrogateescape"
    try:
        return text.encode("utf-8", errors)
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace")


def write_stdout(data: bytes) -> None:
    """Write bytes to stdout (to its text layer when it has no byte buffer, as under a test)."""
    buffer = getattr(sys.stdout, "buffer", None)
    sys.stdout.flush()
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:
        sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        sys.stdout.flush()


def write_file(path: str, data: bytes) -> None:
    """Write `data` to `path`: to a temporary file beside it, renamed over it once whole (a
    regular file keeps its permissions); a device or a pipe (`/dev/stdout`) is written directly.
    Raises OSError."""
    target = os.path.realpath(path)  # a symbolic link: replace what it points to, not the link
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(target, "wb") as handle:
            handle.write(data)
        return
    folder = os.path.dirname(target) or "."
    import tempfile  # here: a report written to standard output needs none (start-up, `cache._temporary_file`)

    handle_fd, temporary = tempfile.mkstemp(dir=folder, prefix=".warplint-", suffix=".tmp")
    try:
        with os.fdopen(handle_fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
