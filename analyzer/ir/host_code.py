"""Which front-end diagnostics are about host code that warplint merely could not follow.

warplint reads host code only for the launches and the values that reach them. A syntax
error (WL901), an unsupported construct (WL902) or a lowering problem (WL903) in a function
that is neither a kernel nor a device function a kernel calls says nothing about the kernels'
costs, so `check` does not report it unless asked (`--show-host`, the configuration's
`show-host`), and then as a warning: it never changes the exit status. What hides a kernel or
a launch (a declaration given up that holds `__global__` or `<<<`) is device code here, and
stays reported.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from analyzer.diagnostics import Diagnostic, Span
from analyzer.ir import nodes as N
from analyzer.syntax import ast as A

HOST_CODES = frozenset(("WL901", "WL902", "WL903"))
# what makes a top-level declaration matter to the kernels: it is one, launches one, or is data
# or a type that device code reads
_DEVICE_WORDS = ("__global__", "<<<")
_DEVICE_DATA_WORDS = ("__device__", "__constant__", "__shared__", "__host__")


def split_host(
    diagnostics: Sequence[Diagnostic],
    unit: A.TranslationUnit,
    skipped: Iterable[A.Unsupported],
    module: N.Module,
    text: str,
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """`(kept, host)`: the diagnostics about device code (and every other diagnostic), and the
    front-end ones about host code only."""
    if not any(d.code in HOST_CODES and d.span is not None for d in diagnostics):
        return list(diagnostics), []
    device = _Regions(_device_spans(unit, module))
    host = _Regions(f.span for f in module.host)
    top = _top_level(unit, skipped, text)
    kept, hidden = [], []
    for d in diagnostics:
        if d.code not in HOST_CODES or d.span is None or device.holds(d.span.start):
            kept.append(d)
        elif host.holds(d.span.start) or not _holds_device_part(top, d.span.start):
            hidden.append(d)
        else:
            kept.append(d)
    return kept, hidden


def _device_spans(unit: A.TranslationUnit, module: N.Module) -> list[Span]:
    """The kernels as written (launched or not) and the device functions lowered, which are
    those a kernel calls: device functions are lowered on their first call."""
    spans = [f.span for f in module.functions.values()]
    spans += [d.span for d in _function_defs(unit.decls) if "__global__" in d.specs.storage]
    return spans


def _function_defs(decls: Iterable[A.Node]) -> Iterable[A.FunctionDef]:
    for d in decls:
        if isinstance(d, A.FunctionDef):
            yield d
        elif isinstance(d, A.TemplateDecl):
            yield from _function_defs((d.decl,))


def _top_level(unit: A.TranslationUnit, skipped: Iterable[A.Unsupported], text: str) -> dict[Span, bool]:
    """Each top-level declaration (parsed or given up) -> whether it matters to device code:
    it holds a kernel or a launch, or it is not a function and holds device data or types."""
    out: dict[Span, bool] = {}
    for d in unit.decls:
        out[d.span] = _matters(text[d.span.start : d.span.end], _is_function(d))
    for u in skipped:
        if u.span not in out:
            source = text[u.span.start : u.span.end]
            out[u.span] = _matters(source, source.rstrip().endswith("}") and "struct" not in source.split("{")[0])
    return out


def _is_function(d: A.Node) -> bool:
    return isinstance(d, A.FunctionDef) or (isinstance(d, A.TemplateDecl) and _is_function(d.decl))


def _matters(source: str, is_function: bool) -> bool:
    if any(w in source for w in _DEVICE_WORDS):
        return True
    return not is_function and any(w in source for w in _DEVICE_DATA_WORDS)


def _holds_device_part(top: dict[Span, bool], offset: int) -> bool:
    """Whether the top-level declaration around `offset` holds a kernel, a launch or device data."""
    span = _enclosing(top, offset)
    return span is not None and top[span]


def _enclosing(top: dict[Span, bool], offset: int) -> Span | None:
    for span in top:
        if span.start <= offset < span.end:
            return span
    return None


class _Regions:
    """Spans that may nest, asked whether one holds an offset."""

    def __init__(self, spans: Iterable[Span]) -> None:
        self.spans = sorted((s.start, s.end) for s in spans)
        self.starts = [s for s, _ in self.spans]

    def holds(self, offset: int) -> bool:
        i = bisect_right(self.starts, offset)
        return any(start <= offset < end for start, end in self.spans[:i])
