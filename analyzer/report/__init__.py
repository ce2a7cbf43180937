"""Reporters: turn `FileReport`s into text for people or JSON for tools.

Reporters format; they never analyse. `render(reports, format, ...)` picks one; the
helpers here are shared by every format so that text and JSON say the same thing.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

__all__ = ["FORMATS", "display_path", "finding_detail", "kernel_name", "render", "severity_name"]

FORMATS = ("text", "json")


def render(reports: Sequence[Any], format: str = "text", *, arch: str = "sm_90", color: bool = False) -> str:
    """The whole report in one format ("text" or "json"), ending in a newline when not empty."""
    if format == "json":
        from analyzer.report import json as json_report

        return json_report.render(reports, arch=arch)
    if format == "text":
        from analyzer.report import text as text_report

        return text_report.render(reports, color=color)
    raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


def display_path(path: str, cwd: str | None = None) -> str:
    """`path` relative to the current folder when it lies below it, else absolute."""
    if not path or path.startswith("<"):
        return path
    cwd = os.path.abspath(cwd or os.getcwd())
    full = os.path.abspath(path)
    try:
        inside = os.path.commonpath([cwd, full]) == cwd
    except ValueError:  # another drive (Windows)
        inside = False
    if inside:
        rel = os.path.relpath(full, cwd)
        return rel.replace(os.sep, "/") if os.sep != "/" else rel
    return full


def severity_name(severity: Any) -> str:
    """"error", "warning" or "note" for a `Severity` or a plain string."""
    return str(getattr(severity, "value", severity) or "warning").lower()


def kernel_name(kernel: Any) -> str | None:
    """The name shown for a kernel: a `Function` (with template arguments) or a string."""
    if kernel is None:
        return None
    return str(getattr(kernel, "display_name", None) or getattr(kernel, "name", None) or kernel)


def finding_detail(detail: Any) -> list[str]:
    """A finding's `detail` as a list of notes (a string is one note, possibly multi-line)."""
    if detail is None or detail == "":
        return []
    if isinstance(detail, str):
        return [detail.rstrip()]
    if isinstance(detail, Iterable):
        return [str(item).rstrip() for item in detail if item is not None and str(item).strip()]
    return [str(detail)]
