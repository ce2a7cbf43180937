"""Findings: what the rules report about a kernel (plain data, no formatting logic).

A `Finding` carries its wording already formatted (`message`, from the rule's
template) and the typed values behind it (`args`), so the text reporter prints
`message` and `detail`, and the JSON and SARIF reporters emit `args` as they are.
Positions are `Span`s into the preprocessed text; only reporters resolve them to
lines and columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from analyzer.diagnostics import Span

__all__ = ["Finding", "Related"]


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that explains a finding: the declaration of the array, a launch."""

    span: Span
    message: str  # "`tile` declared here"


@dataclass(frozen=True, slots=True)
class Finding:
    code: str  # "WL101"
    rule: str  # "bank-conflict"
    severity: str  # "warning" (an analyzer.diagnostics.Severity value)
    span: Span
    kernel: str  # the kernel's display name, `transpose<32>` for an instantiation
    message: str  # the rule's template, formatted with `args`
    fix: str | None  # a suggested change, in words
    args: Mapping[str, object] = field(default_factory=dict)  # {"ways": 4, "array": "tile", ...}
    detail: tuple[str, ...] = ()  # extra lines for the text report (lanes, banks, assumptions)
    related: tuple[Related, ...] = ()
