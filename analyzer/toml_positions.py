"""Where a key or a value sits in a TOML text (line and column), for the configuration's
error messages: `tomllib` gives values, not their positions."""

from __future__ import annotations

import re
from typing import cast

__all__ = ["Locator"]


class Locator:
    """Finds the line and column of a key (or of a value after it) in a TOML text.

    A heuristic, good for the files people write: the key is looked for in the lines
    of its table (`[tool.warplint]`, or the sub-table `[tool.warplint.params]`), as
    `key = ...`, `"key" = ...` or a dotted `key.sub = ...`; a value (a rule code, a
    name) is looked for from that line to the next key. Not found: the table's header,
    then 1:1.
    """

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def _tables(self) -> list[tuple[int, str]]:
        """(0-based line, dotted name) of every `[table]` header, `""` for the top."""
        out = [(0, "")]
        for i, line in enumerate(self.lines):
            match = re.match(r"\s*\[\[?\s*([^\]]+?)\s*\]", line)
            if match:
                out.append((i, re.sub(r"\s*\.\s*", ".", match.group(1)).replace('"', "").replace("'", "")))
        return out

    def find(self, prefix: str, key: str, value: str | None = None) -> tuple[int, int]:
        tables = self._tables()
        bounds = [
            (start, tables[k + 1][0] if k + 1 < len(tables) else len(self.lines), name)
            for k, (start, name) in enumerate(tables)
        ]
        key_pattern = rf"""\s*(?:"{re.escape(key)}"|'{re.escape(key)}'|{re.escape(key)})\s*[=.]"""
        for start, stop, name in bounds:
            body_start = start if name == "" else start + 1
            if name == prefix and key:
                for i in range(body_start, stop):
                    match = re.match(key_pattern, self.lines[i])
                    if match:
                        text = self.lines[i]
                        at = self._value(i, len(text) - len(text.lstrip()), value, stop)
                        return cast(tuple[int, int], at)  # not across keys: the key's position at least
            sub = f"{prefix}.{key}" if prefix else key
            if key and name == sub:
                found = self._value(start + 1, 0, value, stop, across_keys=True) if value else None
                return found or (start + 1, self.lines[start].index("[") + 1)
        for start, _, name in bounds:
            if name == prefix and name:
                return start + 1, self.lines[start].index("[") + 1
        return 1, 1

    def _value(
        self, line: int, column: int, value: str | None, stop: int, across_keys: bool = False
    ) -> tuple[int, int] | None:
        """The position of `value` (quoted, or a bare key) at or after the key at
        `line`:`column` (0-based), before the next key (or anywhere in a sub-table,
        `across_keys`); else the key's own position (None in a sub-table)."""
        if value:
            pattern = re.compile(rf"""(["']){re.escape(value)}\1|(?<![\w.-]){re.escape(value)}\s*=""")
            found = self._search(pattern, line, column, stop, across_keys)
            inside = re.compile(rf"(?<![\w-]){re.escape(value.strip())}(?![\w-])")  # in "A, B"
            found = found or self._search(inside, line, column, stop, across_keys)
            if found or across_keys:
                return found
        indent = len(self.lines[line]) - len(self.lines[line].lstrip()) if line < len(self.lines) else 0
        return line + 1, max(column, indent) + 1

    def _search(
        self, pattern: re.Pattern[str], line: int, column: int, stop: int, across_keys: bool
    ) -> tuple[int, int] | None:
        for i in range(line, stop):
            text = self.lines[i]
            if not across_keys and i > line and re.match(r"\s*[\w\"'-]+\s*=", text) and not pattern.search(text):
                break  # the next key
            match = pattern.search(text, column if i == line else 0)
            if match:
                return i + 1, match.start() + 1
        return None
