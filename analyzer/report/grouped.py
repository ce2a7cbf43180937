"""`--format grouped`: findings under their file's name, as ruff's grouped format.

    samples/000_bank_stride4.cu:
      23:18 WL101 4-way bank conflict on `data`: 4 wavefronts per request, ideal 1

A blank line ends each file's group; a finding in an included file is grouped under that
file. Diagnostics (WL9xx) are listed the same way, so nothing is silent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.arch import DEFAULT_ARCH
from analyzer.report import arch_notes, display_path, records

__all__ = ["render"]

_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def render(reports: Sequence[Any], *, color: bool = False, arch: str = DEFAULT_ARCH) -> str:
    groups: dict[str, list[Any]] = {}
    for record in records(reports):
        groups.setdefault(display_path(record.path), []).append(record)
    lines: list[str] = []
    for path, members in groups.items():
        lines.append(f"{_BOLD}{path}:{_RESET}" if color else f"{path}:")
        width = max(len(f"{r.location.line}:{r.location.column}") for r in members)
        for record in members:
            where = f"{record.location.line}:{record.location.column}".ljust(width)
            code = f"{_DIM}{record.code}{_RESET}" if color else record.code
            lines.append(f"  {where} {code} {' '.join(record.message.split())}")
        lines.append("")
    lines.extend(f"warplint: note: {note.message}" for note in arch_notes(arch))
    return "".join(line + "\n" for line in lines)
