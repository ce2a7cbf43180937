"""The PTX text's top-level items found without parsing it: where each item (a directive, a
declaration, a function) starts and ends, which function holds a line, and the strings of
`.section .debug_str`. The parser uses them to parse item by item after a syntax error (the
rest of the module is still analysed) and to name demangled functions."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import cast

__all__ = ["FUNCTION_NAME", "debug_strings", "function_at", "split_items"]

# What the scanner must see to find the end of a top-level item.
_SCAN = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|[{};]')
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*[\s\S]*?\*/)*")
_SKIP_AT = cast("Callable[..., re.Match[str]]", _SKIP.match)  # every part optional: never None
# Directives that end at the end of their line (no `;`).
_LINE_DIRECTIVE = re.compile(r"\.(?:version|target|address_size|file)\b[^\n]*")
_SECTION = re.compile(r"\.section\b[^{;]*\{[^}]*\}?")
FUNCTION_NAME = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_DEBUG_STR = re.compile(r"\.section\s+\.debug_str\b[^{]*\{([^}]*)\}")
_INFO_STRING = re.compile(r"([A-Za-z_$][\w$]*)\s*:\s*((?:\.b8[^\n]*\n?)+)")


def split_items(text: str) -> list[tuple[int, int]]:
    """Top-level items as (start, end) offsets; `.section` blocks are left out."""
    items: list[tuple[int, int]] = []
    n = len(text)
    pos = _SKIP_AT(text, 0).end()
    while pos < n:
        start = pos
        if text.startswith(".section", pos) and (m := _SECTION.match(text, pos)):
            pos = m.end()
        elif m := _LINE_DIRECTIVE.match(text, pos):
            pos = m.end()
            items.append((start, pos))
        else:
            depth = 0
            end = n
            for m in _SCAN.finditer(text, pos):
                c = m.group(0)
                if c == ";":
                    if depth == 0:
                        end = m.end()
                        break
                elif c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth <= 0:
                        after = _SKIP_AT(text, m.end()).end()
                        if after >= n or text[after] != ";":  # `= {1, 2};` goes on to its `;`
                            end = m.end()
                            break
            pos = end
            items.append((start, end))
        pos = _SKIP_AT(text, pos).end()
    return items


def debug_strings(text: str) -> dict[str, str]:
    """`$L__info_string0: .b8 95,90,...,0` in `.section .debug_str` -> {"$L__info_string0": "_Z..."}."""
    out: dict[str, str] = {}
    at = text.find(".debug_str")
    if at < 0:
        return out
    for section in _DEBUG_STR.finditer(text, max(0, text.rfind(".section", 0, at))):
        for m in _INFO_STRING.finditer(section.group(1)):
            data = bytes(int(b) & 0xFF for b in re.findall(r"\d+", m.group(2).replace(".b8", " ")))
            out[m.group(1)] = data.split(b"\0", 1)[0].decode("utf-8", "replace")
    return out


def function_at(text: str, spans: list[tuple[int, int]], line: int) -> str | None:
    """The name of the function whose top-level item holds `line`, if any."""
    starts = [s for s, _ in spans]
    offset = _line_offset(text, line)
    i = bisect.bisect_right(starts, offset) - 1
    if i < 0:
        return None
    start, end = spans[i]
    m = FUNCTION_NAME.search(text, start, min(end, start + 300))
    return m.group(1) if m else None


def _line_offset(text: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        pos = text.find("\n", pos) + 1
        if pos == 0:
            return len(text)
    return pos
