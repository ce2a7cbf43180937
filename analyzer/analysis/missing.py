"""The names a kernel uses that nothing defines: a macro of a header that was not read, a `-D`
that was not given, a constant of another file.

Lowering keeps such a name as an opaque value of kind `OpaqueKind.UNKNOWN_NAME`, so the accesses that use
it are not costed; without a word, a kernel whose tile size is in a `<tile.cuh>` would report
"No findings" for the wrong reason. `undefined_names` finds them, `undefined_name_notes` says so
at the kernel, naming each one.
"""

from __future__ import annotations

from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.call_graph import device_functions
from analyzer.ir.nodes import OpaqueKind

__all__ = ["undefined_name_notes", "undefined_names"]


def undefined_names(kernel: N.Function, module: N.Module) -> dict[str, Span]:
    """The names `kernel` and the device functions it calls use that nothing defines, each with
    its first use, in the order of use."""
    found: dict[str, Span] = {}
    for fn in device_functions(kernel, module):
        uses = [x for x in N.walk_nodes(fn.body) if _is_undefined_name(x)]
        for x in sorted(uses, key=lambda x: x.span.start):
            found.setdefault(x.type.name, x.span)
    return found


def _is_undefined_name(x: object) -> bool:
    return isinstance(x, N.Opaque) and x.kind is OpaqueKind.UNKNOWN_NAME and isinstance(x.type, T.UnknownType)


def undefined_name_notes(kernel: N.Function, module: N.Module) -> list[Diagnostic]:
    """One note at the first use of each name `kernel` uses that nothing defines (WL903)."""
    return [
        Diagnostic(
            Severity.NOTE,
            f"in kernel `{kernel.display_name}`: `{name}` is not defined (no macro, variable, constant "
            "or type of that name in this file or the headers read: a header not found, or a -D not "
            "given?); what depends on it is not known, and an access whose index does may not be costed",
            "WL903",
            span,
        )
        for name, span in undefined_names(kernel, module).items()
    ]
