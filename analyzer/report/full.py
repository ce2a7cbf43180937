"""`--format full`: the text report with, under each first line, the source line and carets
under the access (clang's style, ruff's `full`); see `report/text.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.arch import DEFAULT_ARCH
from analyzer.report import text

__all__ = ["render"]


def render(reports: Sequence[Any], *, color: bool = False, arch: str = DEFAULT_ARCH) -> str:
    return text.render(reports, color=color, arch=arch, source=True)
