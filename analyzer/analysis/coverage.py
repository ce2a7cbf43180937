"""Why a kernel that indexes memory ends with no costed access: a note at the kernel.

A kernel whose text subscripts or dereferences memory but whose analyses cost nothing has lost
its accesses somewhere: a statement skipped, a value warplint does not model, an address it
cannot work out. Saying so at the kernel (WL908) keeps an empty report from reading as a clean one.
"""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.diagnostics import Diagnostic, Severity
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.call_graph import device_functions
from analyzer.ir.nodes import OpaqueKind
from analyzer.lazy_pattern import lazy_compile

NO_COSTED_ACCESS = "WL908"
_SAYS_WHY = frozenset(("WL901", "WL902", "WL903"))  # a diagnostic in the kernel's code that already says why
# a subscript, `->`, or a unary `*` on a name: what indexing memory looks like in a kernel's text
_WARP_MATRIX_MEMORY = frozenset(("warp-matrix load_matrix_sync", "warp-matrix store_matrix_sync"))  # see ir.wmma
_TEXTURE_CALL = lazy_compile(r"(tex|surf)(1D|2D|3D|Cubemap)\w*$")  # tex1Dfetch, tex2DLod, surf2Dwrite ...
_INDEXES_MEMORY = lazy_compile(r"[\w)\]]\s*\[|->|[=(,;{]\s*\*\s*\(?\s*[A-Za-z_]")


def costless_note(
    kernel: N.Function, module: N.Module, analyses: Iterable[object], text: str, reported: Iterable[Diagnostic]
) -> Diagnostic | None:
    """WL908 at the kernel's name when its text indexes memory but no access was costed, and no
    syntax error, unsupported construct or lowering problem (`reported`) in its device code says why."""
    if any(getattr(c, "per_request", None) is not None for a in analyses for c in getattr(a, "costs", ())):
        return None
    body = text[kernel.span.start : kernel.span.end]
    functions = list(device_functions(kernel, module))
    if (
        not _INDEXES_MEMORY.search(body[body.find("{") + 1 :])
        and not _texture_calls(functions)
        and not _pointers_handed_off(functions)
    ):
        return None
    spans = [f.span for f in functions]
    for d in reported:
        if d.code in _SAYS_WHY and d.span is not None and any(s.start <= d.span.start < s.end for s in spans):
            return None
    why = _reason(functions)
    message = f"no memory access of kernel `{kernel.display_name}` was costed: {why}"
    return Diagnostic(Severity.NOTE, message, NO_COSTED_ACCESS, kernel.name_span)


def _reason(functions: list[N.Function]) -> str:
    """The construct or the missing piece that left the kernel with nothing costed."""
    skipped = [s for f in functions for s in N.walk_statements(f.body) if isinstance(s, N.Skipped)]
    if skipped:
        return f"a statement was skipped ({skipped[0].what})"
    opaque = [x for f in functions for x in N.walk_nodes(f.body) if isinstance(x, N.Opaque)]
    if any(x.reason in _WARP_MATRIX_MEMORY for x in opaque):
        return "its memory accesses are warp-matrix loads and stores, which are not costed (the note at each says why)"
    texture = _texture_calls(functions)
    if texture:
        return (
            f"it reaches memory only through textures and surfaces (`{texture[0]}`), which warplint does not "
            "cost: they go through the texture cache, for which the hardware model gives no cost"
        )
    accesses = [a for f in functions for a in f.accesses]
    if accesses:
        return f"the addresses of its {len(accesses)} accesses could not be worked out"
    if opaque:
        return f"memory is reached only through what warplint does not model ({opaque[0].reason})"
    return "it reads and writes memory only through calls and types warplint does not model"


def _pointers_handed_off(functions: list[N.Function]) -> list[N.Opaque]:
    """The calls and constructions warplint does not follow that get a pointer (Rodinia dwt2d's
    kernels hand their images to `FDWT53<64, 8>::run(input, output, ...)`), in the order of the
    text: memory is reached there, though the kernel's own text indexes nothing."""
    calls = [
        x
        for f in functions
        for x in N.walk_nodes(f.body)
        if isinstance(x, N.Opaque)
        and x.kind not in (OpaqueKind.LOCAL_ADDRESS, OpaqueKind.FUNCTION)
        and any(isinstance(o.type, T.PointerType) and not _is_string_literal(o) for o in x.operands)
    ]
    return sorted(calls, key=lambda x: x.span.start)


def _is_string_literal(x: N.Expr) -> bool:
    """`"thread %d\\n"`: a pointer, but to no memory of the kernel's (`printf`'s format)."""
    return isinstance(x, N.Opaque) and x.reason == "string literal"


def _texture_calls(functions: list[N.Function]) -> list[str]:
    """The texture fetches and surface reads and writes (`tex2D`, `surf2Dwrite`) the functions make."""
    calls = sorted(
        (x.span.start, x.callee or "") for f in functions for x in N.walk_nodes(f.body) if isinstance(x, N.Opaque)
    )
    return [c for _, c in calls if _TEXTURE_CALL.match(c.rsplit("::", 1)[-1])]  # in the order of the text
