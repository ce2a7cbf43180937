"""Regular expressions compiled when first used, for the patterns of rare paths.

`re.compile` runs the pattern parser and compiler, which are Python: the 83 patterns that
``warplint check`` of a one-line kernel compiled took about 20 ms of its 100 ms of CPU (each
timed alone, re's cache purged), and most serve paths that a run seldom takes: recovery from
a parse error, suppression comments, the skipped groups of an ``#if``, inline assembly. With
49 of them lazy, that check compiles 26 patterns (samples/000_bank_stride4.cu 29) and its
instructions went from 470.4 M to 430.0 M (callgrind). `lazy_compile` gives an object that compiles its pattern on the
first attribute asked for, then keeps the compiled pattern's methods as its own attributes,
so that a call (``_WORD.match(text, pos)``) costs what it costs on the compiled pattern.

Use it only for a pattern whose every use is a method call or an attribute (``.match``,
``.pattern``, ...): it is no `re.Pattern` for `isinstance`, nor an argument of `re.sub`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["lazy_compile"]

# What a compiled pattern offers; all of it is copied onto the lazy object on first use.
_ATTRIBUTES = (
    "match",
    "fullmatch",
    "search",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class LazyPattern:
    """A pattern compiled on first use (see the module docstring)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # called only until the attributes are set below
        if name.startswith("_"):
            raise AttributeError(name)  # (copy and pickle ask for dunders; `_source` before it is set)
        compiled = re.compile(*self._source)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._source[0]!r}, {self._source[1]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, done when the pattern is first used."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]  # (it answers as a Pattern)
