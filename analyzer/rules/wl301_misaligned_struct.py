"""WL301 misaligned-struct: arrays in global memory of elements no single load can move."""

from __future__ import annotations

import re
from collections.abc import Iterator

from analyzer import records
from analyzer.analysis.cost import split_access
from analyzer.analysis.results import AccessCost, KernelAnalysis
from analyzer.diagnostics import Span
from analyzer.findings import Edit, Finding, Related
from analyzer.ir import types as T
from analyzer.ir.nodes import Space
from analyzer.rules.base import (
    CheckContext,
    Rule,
    aligned_size,
    context_lines,
    kernel_name,
    known_excess,
    layout_fix,
    struct_of,
    type_name,
    wider_vector,
)

#: At most this many accesses are listed in a finding's detail.
MAX_LISTED = 6


class MisalignedStruct(Rule):
    """## What it does
    Checks for arrays in global memory whose element type (a struct or a vector type
    like `float3`) has a size other than 1, 2, 4, 8 or 16 bytes, or an alignment
    smaller than its size.

    ## Why is this bad?
    A load or store moves one naturally aligned word of 1, 2, 4, 8 or 16 bytes. A
    `struct vec3d {float x, y, z;}` is 12 bytes with 4-byte alignment, so each field is
    a separate 4-byte access strided by 12 bytes: reading `.x` for 32 lanes touches 12
    sectors where 4 would hold the bytes, and `.x`, `.y`, `.z` together cost 36
    sectors. With `struct __align__(16) vec3d` the compiler moves the element in one
    16-byte load: 16 sectors for all three fields.

    ## Example
    ```cuda
    struct vec3d { float x, y, z; };

    __global__ void norm2(const vec3d *v, float *out)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        out[i] = v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z;  // 12 B apart
    }

    void launch(const vec3d *v, float *out)
    {
        norm2<<<4, 256>>>(v, out);
    }
    ```

    ## Use instead
    ```cuda
    struct __align__(16) vec3d { float x, y, z; };  // 16 bytes: one 16-byte load

    __global__ void norm2(const vec3d *v, float *out)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        out[i] = v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z;
    }

    void launch(const vec3d *v, float *out)
    {
        norm2<<<4, 256>>>(v, out);
    }
    ```

    ## Known problems
    Reported once per array and kernel, at its first costly access, and only when an
    access to it costs more sectors than ideal in the analysed launch configuration.
    Whether the compiler merges the fields of an aligned struct into one load is
    modelled, not observed: check the SASS (`cuobjdump -sass`) when in doubt. A
    structure of arrays changes every use of the type, which warplint does not check.

    ## Options
    None of its own.

    How the cost differs by generation (`--arch`): today a `float3` field read costs 3
    times its ideal sectors; on compute capability 1.0/1.1 (`sm_10`, `sm_11`) it is never
    coalesced, 16 transactions per half-warp against 1, and a 16-byte aligned struct read
    whole coalesces into two 128-byte transactions per half-warp.

    ## References
    - CUDA C++ Programming Guide, Performance Guidelines, "Device Memory Accesses"
      (size and alignment requirement, `__align__`):
      <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#device-memory-accesses>
    - CUDA C++ Programming Guide, "Built-in Vector Types" (alignment of `float3`, `float4`):
      <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#built-in-vector-types>
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory":
      <https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#coalesced-access-to-global-memory>
    """

    code = "WL301"
    name = "misaligned-struct"
    summary = "array of a struct no single load can move (size not 1/2/4/8/16 or align < size)"
    message = (
        "array of `{type}` ({size} bytes, align {align}) in global memory: "
        "each field is a separate access strided by {stride_bytes} bytes"
    )

    def check(self, analysis: KernelAnalysis, ctx: CheckContext) -> Iterator[Finding]:
        by_array: dict[str, list[tuple[AccessCost, T.StructType]]] = {}
        for written in analysis.costs:
            cost = ctx.verdict(written)
            if cost.space != Space.GLOBAL or not known_excess(cost):
                continue
            struct = struct_of(cost)
            if struct is None or struct.size is None or struct.align is None:
                continue
            if T.is_natural_access(struct):
                continue
            by_array.setdefault(cost.access.array, []).append((cost, struct))
        for array, hits in by_array.items():
            hits.sort(key=lambda h: (h[0].span.start, h[0].span.end))
            first, struct = hits[0]
            yield self._report(array, first, struct, hits, analysis, ctx)

    def _report(
        self,
        array: str,
        first: AccessCost,
        struct: T.StructType,
        hits: list[tuple[AccessCost, T.StructType]],
        analysis: KernelAnalysis,
        ctx: CheckContext,
    ) -> Finding:
        size, align = struct.size or 0, struct.align or 1
        pieces = split_access(size, align, ctx.arch)
        wider = wider_vector(struct)
        if wider is not None:
            new_align, new_size = wider.align or 16, wider.size or 16
        else:
            new_align, new_size = aligned_size(size, ctx.arch)
        args = {
            "type": type_name(struct),
            "size": size,
            "align": align,
            "array": array,
            "stride_bytes": size,
            "pieces": len(pieces),
            "fields": tuple(f.name for f in struct.fields),
            "suggested_type": wider.name if wider is not None else None,
            "suggested_align": new_align,
            "suggested_size": new_size,
        }
        detail = [
            f"`{c.text}`: {c.per_request} sectors per request, ideal {c.ideal_per_request}"
            for c, _ in hits[:MAX_LISTED]
        ]
        if len(hits) > MAX_LISTED:
            more = len(hits) - MAX_LISTED
            detail.append(f"and {more} more access{'es' if more > 1 else ''} to `{array}`")
        detail.append(
            f"one element moves as {len(pieces)} access{'es' if len(pieces) > 1 else ''} of "
            + "/".join(sorted({str(b) for _, b in pieces}, key=int))
            + " bytes"
        )
        detail += context_lines(first, analysis)
        spans = {first.span}
        related = []
        for c, _ in hits[1:MAX_LISTED]:
            if c.span not in spans:
                spans.add(c.span)
                related.append(Related(c.span, f"also strided: `{c.text}`"))
        finding = self.finding(
            span=first.span,
            kernel=kernel_name(first, analysis),
            args=args,
            fix=layout_fix(struct, ctx.arch),
            detail=detail,
            related=tuple(related),
        )
        edit = None
        if wider is None and analysis.source is not None:
            edit = align_edit(analysis.source, struct, new_align)
        return records.replace(finding, edits=(edit,)) if edit is not None else finding


def align_edit(source: str, struct: T.StructType, align: int) -> Edit | None:
    """Insert `__align__(align)` after `struct` in the struct's definition
    (`struct vec3d {` -> `struct __align__(16) vec3d {`, replacing the keyword so that the edit
    can be checked against the original text), as `layout_fix` suggests.

    Only for a named struct, class or union without an alignment of its own, whose
    definition appears exactly once in the text (a name defined twice, in different
    scopes, or reached through a typedef gives no edit rather than a wrong one).
    """
    if struct.is_vector or struct.explicit_align is not None:
        return None
    keyword = "union" if struct.is_union else "struct"
    name = struct.name.removeprefix(keyword + " ")
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None
    keywords = "union" if struct.is_union else "struct|class"
    pattern = re.compile(rf"\b(?:{keywords})\b(?=\s+{name}\s*(?:final\s*)?[:{{])")
    found = list(pattern.finditer(source))
    if len(found) != 1:
        return None
    keyword_found = found[0]
    return Edit(
        Span(keyword_found.start(), keyword_found.end()),
        f"{keyword_found.group()} __align__({align})",
        keyword_found.group(),
    )
