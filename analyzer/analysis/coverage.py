"""Why a kernel that indexes memory ends with no costed access: a note at the kernel.

A kernel whose text subscripts or dereferences memory but whose analyses cost nothing has lost
its accesses somewhere: a statement skipped, a value warplint does not model, an address it
cannot work out. Saying so at the kernel (WL908) keeps an empty report from reading as a clean one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from analyzer.diagnostics import Diagnostic, Severity
from analyzer.ir import nodes as N

NO_COSTED_ACCESS = "WL908"
_SAYS_WHY = frozenset(("WL901", "WL902", "WL903"))  # a diagnostic in the kernel's code that already says why
# a subscript, `->`, or a unary `*` on a name: what indexing memory looks like in a kernel's text
_INDEXES_MEMORY = re.compile(r"[\w)\]]\s*\[|->|[=(,;{]\s*\*\s*\(?\s*[A-Za-z_]")


def costless_note(
    kernel: N.Function, module: N.Module, analyses: Iterable[object], text: str, reported: Iterable[Diagnostic]
) -> Diagnostic | None:
    """WL908 at the kernel's name when its text indexes memory but no access was costed, and no
    syntax error, unsupported construct or lowering problem (`reported`) in its device code says why."""
    if any(getattr(c, "per_request", None) is not None for a in analyses for c in getattr(a, "costs", ())):
        return None
    body = text[kernel.span.start : kernel.span.end]
    if not _INDEXES_MEMORY.search(body[body.find("{") + 1 :]):
        return None
    functions = list(_device_functions(kernel, module))
    spans = [f.span for f in functions]
    for d in reported:
        if d.code in _SAYS_WHY and d.span is not None and any(s.start <= d.span.start < s.end for s in spans):
            return None
    why = _reason(functions)
    message = f"no memory access of kernel `{kernel.display_name}` was costed: {why}"
    return Diagnostic(Severity.NOTE, message, NO_COSTED_ACCESS, kernel.name_span)


def _device_functions(kernel: N.Function, module: N.Module) -> Iterator[N.Function]:
    """The kernel and the device functions it calls, transitively."""
    seen: set[str] = set()
    todo = [kernel]
    while todo:
        fn = todo.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        yield fn
        todo.extend(module.functions[c] for c in fn.calls if c in module.functions)


def _reason(functions: list[N.Function]) -> str:
    """The construct or the missing piece that left the kernel with nothing costed."""
    skipped = [s for f in functions for s in N.walk_statements(f.body) if isinstance(s, N.Skipped)]
    if skipped:
        return f"a statement was skipped ({skipped[0].what})"
    accesses = [a for f in functions for a in f.accesses]
    if accesses:
        return f"the addresses of its {len(accesses)} accesses could not be worked out"
    opaque = [x for f in functions for x in N.walk_nodes(f.body) if isinstance(x, N.Opaque)]
    if opaque:
        return f"memory is reached only through what warplint does not model ({opaque[0].reason})"
    return "it reads and writes memory only through calls and types warplint does not model"
