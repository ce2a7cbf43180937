"""CUDA's limits on what a kernel declares and moves, checked before the kernel is analysed.

A `__shared__` array larger than the static shared memory a block may declare
(`Architecture.shared_memory_per_block`: ptxas refuses the kernel), or an access whose element
(or the struct it reaches into) is larger than that, is a WL907 diagnostic at its place, and
the kernel is not analysed: nothing is computed from a size the hardware cannot have (a row
of `__shared__ float a[4][1048576]` moved by one access took minutes and gigabytes, and
`struct __align__(1 << 29)` was split into 2^25 pieces). The launch limits are checked where
the launches are found (`analyzer.analysis.launch`), alignments where types are laid out
(`analyzer.ir`); all of them come from `analyzer.launch_limits` and `analyzer.arch`.
"""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.analysis.indexing import struct_of_address
from analyzer.arch import Architecture
from analyzer.diagnostics import Diagnostic, Severity
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import Space

__all__ = ["kernel_limit_problems"]

CODE = "WL907"


def kernel_limit_problems(module: N.Module, kernel: N.Function, arch: Architecture) -> list[Diagnostic]:
    """WL907 for each `__shared__` array and accessed element of `kernel` (and the functions it
    calls) too large for a block's shared memory; an empty list when the kernel keeps to it."""
    limit = arch.shared_memory_per_block
    problems: list[Diagnostic] = []
    seen: set[int] = set()
    for access in _accesses(module, kernel):
        for var in _shared_arrays_in(access.address):
            if var.uid not in seen and not var.extern and (var.type.size or 0) > limit:
                seen.add(var.uid)
                problems.append(
                    Diagnostic(
                        Severity.ERROR,
                        f"`__shared__` array `{var.name}` is {var.type.size:,} bytes, more than the "
                        f"{limit:,} bytes of shared memory a block may declare on {arch.name}: the kernel cannot be "
                        f"compiled, so `{kernel.display_name}` is not analysed",
                        CODE,
                        var.span,
                    )
                )
        too_large = _too_large_element(access, limit)
        if too_large is not None:
            problems.append(
                Diagnostic(
                    Severity.ERROR,
                    f"`{too_large[0]}` is {too_large[1]:,} bytes, more than the {limit:,} bytes of a "
                    f"block's shared memory on {arch.name}: warplint does not analyse accesses to elements this "
                    f"large, so `{kernel.display_name}` is not analysed",
                    CODE,
                    access.span,
                )
            )
    return problems


def _too_large_element(access: N.Access, limit: int) -> tuple[str, int] | None:
    """(type name, size) of the element an access moves, or of the struct it reaches into,
    when it is larger than `limit` bytes; else None."""
    for t in (access.element, struct_of_address(access.address)):
        size = getattr(t, "size", None) if t is not None else None
        if size is not None and size > limit:
            return str(t), size
    return None


def _accesses(module: N.Module, kernel: N.Function) -> Iterator[N.Access]:
    """The accesses of `kernel` and of every function it reaches, each function once."""
    reached, todo = {kernel.name}, [kernel]
    while todo:
        fn = todo.pop()
        yield from fn.accesses
        for name in fn.calls:
            callee = module.functions.get(name)
            if callee is not None and name not in reached:
                reached.add(name)
                todo.append(callee)


def _shared_arrays_in(address: N.Expr) -> Iterator[N.Variable]:
    """The `__shared__` array variables an address expression names."""
    stack: list[object] = [address]
    while stack:
        x = stack.pop()
        if isinstance(x, N.VarRef) and x.var.space == Space.SHARED and isinstance(x.var.type, T.ArrayType):
            yield x.var
        stack.extend(N.sub_expressions(x))  # type: ignore[arg-type]
