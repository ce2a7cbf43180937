"""WL101 bank-conflict: shared-memory accesses whose lanes hit distinct words of one bank."""

from __future__ import annotations

import re
from collections.abc import Iterator

from analyzer import records
from analyzer.analysis.indexing import (
    ThreadIndexUse,
    array_variable,
    row_index_varies,
    row_stride,
)
from analyzer.analysis.results import AccessCost, KernelAnalysis, Unit
from analyzer.arch import Architecture
from analyzer.diagnostics import Span
from analyzer.findings import Edit, Finding, Related
from analyzer.ir import types as T
from analyzer.ir.nodes import Space
from analyzer.rules.base import (
    CheckContext,
    Rule,
    collision_line,
    context_lines,
    kernel_name,
    known_excess,
)

SWIZZLE = "an XOR swizzle (index the column as `col ^ row`)"


class BankConflict(Rule):
    """## What it does
    Checks for `__shared__` memory accesses where lanes of one warp touch different
    4-byte words of the same bank.

    ## Why is this bad?
    Shared memory has 32 banks of 4-byte words, and a bank delivers one word per
    cycle. A warp's request costs as many *wavefronts* as the largest number of
    distinct words that its lanes touch in one bank (per phase: 8-byte accesses are
    served in two half-warp phases, 16-byte accesses in four quarter-warp phases).
    An n-way conflict turns the ideal 1 wavefront per phase into n, serializing the
    request: reading a column of a `float tile[32][32]` costs 32 wavefronts instead
    of 1. Lanes that read the same word share it (a broadcast) and cost nothing extra.

    ## Example
    ```cuda
    __global__ void transpose(float *out, const float *in, int n)
    {
        __shared__ float tile[32][32];
        int x = blockIdx.x * 32 + threadIdx.x;
        int y = blockIdx.y * 32 + threadIdx.y;
        tile[threadIdx.y][threadIdx.x] = in[y * n + x];
        __syncthreads();
        x = blockIdx.y * 32 + threadIdx.x;
        y = blockIdx.x * 32 + threadIdx.y;
        out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // a column: 32-way conflict
    }

    void launch(float *out, const float *in)
    {
        dim3 grid(32, 32), block(32, 32);
        transpose<<<grid, block>>>(out, in, 1024);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void transpose(float *out, const float *in, int n)
    {
        __shared__ float tile[32][32 + 1];  // 33 floats per row: a column spans all banks
        int x = blockIdx.x * 32 + threadIdx.x;
        int y = blockIdx.y * 32 + threadIdx.y;
        tile[threadIdx.y][threadIdx.x] = in[y * n + x];
        __syncthreads();
        x = blockIdx.y * 32 + threadIdx.x;
        y = blockIdx.x * 32 + threadIdx.y;
        out[y * n + x] = tile[threadIdx.x][threadIdx.y];
    }

    void launch(float *out, const float *in)
    {
        dim3 grid(32, 32), block(32, 32);
        transpose<<<grid, block>>>(out, in, 1024);
    }
    ```

    ## Known problems
    The cost is computed for one launch configuration: the launch in the file, or an
    assumed block when there is none, so a conflict that depends on `blockDim` may be
    missed or reported for a block size you never use. An index read from memory
    (`s[perm[tid]]`) is data-dependent and not reported; so is an index that a loop
    updates other than by a constant step when it differs between lanes
    (`pos = (pos + 4) & 63`). Neighbouring accesses that nvcc merges into one wider load
    (`As[row][e]` ... `As[row][e + 3]` into one 16-byte load) are charged as written.
    Verdict policy: a finding must not rest on an unknown taking an unusual value.
    Unknown sizes and offsets (`s[stride * tid]` with `stride` not known) are judged
    at multiples of 32 elements, block indices at every value; the worst case over
    every value tried stays in the JSON's `per_request`, with the condition in `cases`
    ("ideal exactly when stride is odd"). `--assume worst` warns on
    the worst case instead. The suggested padding is checked by lowering and analysing the kernel again with
    the wider array; the suggested XOR swizzle is not checked.

    ## Options
    None of its own. The launch configuration (`--block`) and the architecture
    (`--arch`) decide the warp's lanes and the bank layout; `--assume worst`
    (configuration `assume`) judges unknowns at their worst.

    How the cost differs by generation (`--arch`): Volta to Hopper (`sm_70` ...
    `sm_90`, the default) and Fermi (`sm_20`) have 32 banks and serve a warp of 4-byte
    accesses in one wavefront. Compute capability 1.x (`sm_10`, `sm_11`, `sm_12`,
    `sm_13`) has 16 banks and serves each half-warp on its own, so a conflict-free warp
    costs 2, and a `[16][17]` tile written or read by a 16 x 16 block is conflict-free
    there but 2-way today; it broadcasts one word per step, so lanes reading
    consecutive `char`s conflict. Kepler (`sm_30`, `sm_35`) serves words i and i + 32
    of one 64-word segment together; `sm_35-bank8` models its 8-byte bank mode.

    ## References
    - CUDA C++ Programming Guide, Compute Capabilities: "Shared Memory" (7.x and later):
      <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory-7-x>
    - CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks":
      <https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#shared-memory-and-memory-banks>
    """

    code = "WL101"
    name = "bank-conflict"
    summary = "lanes of a warp hit different words of one shared-memory bank"
    message = "{ways}-way bank conflict on `{array}`: {wavefronts} wavefronts per request, ideal {ideal}"

    def check(self, analysis: KernelAnalysis, ctx: CheckContext) -> Iterator[Finding]:
        uses: ThreadIndexUse | None = None
        for written in analysis.costs:
            cost = ctx.verdict(written)
            if cost.space != Space.SHARED or cost.unit != Unit.WAVEFRONTS or not known_excess(cost):
                continue
            assert cost.per_request is not None and cost.ideal_per_request is not None
            if uses is None:
                uses = ThreadIndexUse(analysis.kernel)
            ideal = cost.ideal_per_request
            array = cost.access.array
            args = {
                "ways": max(1, -(-cost.per_request // ideal)) if ideal > 0 else cost.per_request,
                "wavefronts": cost.per_request,
                "ideal": ideal,
                "array": array,
                "access": cost.text,
                "stride_bytes": cost.stride_bytes,
            }
            detail = [collision_line(c) for c in cost.collisions[:2]]
            if len(cost.collisions) > 2:
                detail.append(f"and {len(cost.collisions) - 2} more conflicting phases")
            detail += context_lines(cost, analysis)
            var = analysis.shared_arrays.get(array)
            related: tuple[Related, ...] = ()
            if var is not None and getattr(var, "span", None) is not None:
                related = (Related(var.span, f"`{array}` declared here"),)
            finding = self.finding(
                span=cost.span,
                kernel=kernel_name(cost, analysis),
                args=args,
                fix=self.fix(cost, analysis, ctx, uses),
                detail=detail,
                related=related,
            )
            edits = padding_edits(cost, analysis, ctx, uses)
            yield records.replace(finding, edits=edits) if edits else finding

    # ------------------------------------------------------------------ the fix
    def fix(self, cost: AccessCost, analysis: KernelAnalysis, ctx: CheckContext, uses: ThreadIndexUse) -> str:
        array = cost.access.array
        var = analysis.shared_arrays.get(array)
        if var is None:
            var = array_variable(cost.access)
        dims, element = _dimensions(getattr(var, "type", None))
        rows = None
        if len(dims) == 1:
            rows = row_stride(cost.access, uses, ctx.arch.warp_size)
        elif len(dims) >= 2 and dims[-1] is None:
            dims = []  # no known row length to pad
        if len(dims) < 2 and rows is None:
            return _without_padding(cost, ctx)

        def change(p: int) -> str:
            if len(dims) >= 2:
                last = dims[-1]
                per_row = ""
                if last is not None:
                    per_row = f" ({last + p} {_plural(element)} per row)"
                return f"pad the last dimension: `__shared__ {element} {padded_declarator(array, dims, p)}`" + per_row
            return (
                f"pad each row: a row stride of {rows} + {p} elements "
                f"(`{array}[row * ({rows} + {p}) + col]`, with `{array}` enlarged to match)"
            )

        if len(dims) >= 2 and not row_index_varies(cost.access, uses):
            return (
                f"padding the last dimension of `{array}` does not change this access (every "
                f"lane of a warp reads the same row); {_without_padding(cost, ctx)}"
            )
        padding = smallest_padding(cost, analysis, ctx)
        if padding is None:
            if len(dims) >= 2:
                tried = f"padding the last dimension (`{array}[...][{dims[-1]} + 1]`)"
            else:
                tried = f"another row stride than {rows} in `{array}[row * {rows} + col]` (padding each row)"
            return f"{tried} or {SWIZZLE} may help; warplint could not re-analyse the kernel to check either"
        if padding == 0:
            return (
                f"no padding of 1 to {max_padding(ctx.arch)} elements makes this access conflict-free "
                f"without making another access to `{array}` worse; {SWIZZLE} may help "
                "(not checked by warplint)"
            )
        return f"{change(padding)} makes this access conflict-free without making another access to `{array}` worse"


def padding_edits(
    cost: AccessCost, analysis: KernelAnalysis, ctx: CheckContext, uses: ThreadIndexUse
) -> tuple[Edit, ...]:
    """The padding that `BankConflict.fix` suggests for a 2-D (or deeper) array, as an edit of
    the declaration's last dimension: `tile[32][32]` -> `tile[32][33]`.

    Only where the fix text pads the last dimension: the padding found by re-analysis, or
    the unchecked `+ 1` that the fix offers when the kernel cannot be re-analysed. Nothing
    when the declaration's text is not known or no padding helps.
    """
    array = cost.access.array
    var = analysis.shared_arrays.get(array) or array_variable(cost.access)
    dims, _ = _dimensions(getattr(var, "type", None))
    span = getattr(var, "span", None)
    if len(dims) < 2 or dims[-1] is None or span is None or analysis.source is None:
        return ()
    if not row_index_varies(cost.access, uses):
        return ()
    padding = smallest_padding(cost, analysis, ctx)
    if padding == 0:
        return ()
    grown = 1 if padding is None else padding
    edit = _last_dimension_edit(analysis.source, span, dims[-1], grown)
    return (records.replace(edit, shown=padded_declarator(array, dims, grown)),) if edit is not None else ()


def padded_declarator(array: str, dims: list[int | None], padding: int) -> str:
    """`tile[32][32 + 1]`: the declarator with its last dimension padded, as the fix text writes it."""
    outer = "".join(f"[{'' if d is None else d}]" for d in dims[:-1])
    return f"{array}{outer}[{dims[-1]} + {padding}]"


def _last_dimension_edit(source: str, declarator: Span, length: int, padding: int) -> Edit | None:
    """Widen the last `[...]` of a declarator (`tile[32][32]`, spanned by `declarator`):
    a literal length becomes the padded number, any other expression gets `+ padding`.
    The edit says by how much the length grows (`added`), so that `analyzer.fixes` can
    spell it in the original text's words where a macro stands for the length."""
    text = source[declarator.start : declarator.end]
    close = text.rstrip().rfind("]")
    if close < 0 or text[close + 1 :].strip():
        return None
    depth = 0
    for i in range(close, -1, -1):  # the `[` that matches the last `]`
        depth += {"]": 1, "[": -1}.get(text[i], 0)
        if depth == 0:
            break
    else:
        return None
    inner = text[i + 1 : close]
    body = inner.strip()
    if not body:
        return None
    start = declarator.start + i + 1 + (len(inner) - len(inner.lstrip()))
    end = start + len(body)
    if re.fullmatch(r"[0-9]+[uU]?", body) and int(body.rstrip("uU")) == length:
        return Edit(Span(start, end), str(length + padding), body, added=padding)
    return Edit(Span(start, end), f"{body} + {padding}", body, added=padding)


def smallest_padding(cost: AccessCost, analysis: KernelAnalysis, ctx: CheckContext) -> int | None:
    """The smallest padding p in 1..`max_padding` of `cost.access.array`'s last dimension that
    makes this access conflict-free and no other access to the array costlier.

    0 when none does; None when the kernel cannot be re-analysed, or when a padding of 1
    leaves the lanes of this access's worst request where they were: the re-analysis
    did not reach it (a 1-D array's row stride is a constant in the index, which the
    re-analysis does not rewrite), so nothing was checked. Accesses are matched between
    the analyses by `(Access.uid, via)`.
    """
    array = cost.access.array
    target = _key(cost)
    before = {_key(c): c.per_request for c in analysis.costs if c.space == Space.SHARED and c.access.array == array}
    for p in range(1, max_padding(ctx.arch) + 1):
        padded = ctx.padded(array, p)
        if padded is None:
            return None
        after = {_key(c): c for c in padded.costs if c.space == Space.SHARED and c.access.array == array}
        mine = after.get(target)
        if p == 1 and mine is not None and cost.lane_addresses and mine.lane_addresses == cost.lane_addresses:
            return None
        if mine is None or mine.per_request is None or mine.ideal_per_request is None:
            continue
        if mine.per_request > mine.ideal_per_request:
            continue
        if all(_not_worse(old, after.get(key)) for key, old in before.items() if key != target):
            return p
    return 0


def max_padding(arch: Architecture) -> int:
    """The largest padding tried, in elements appended to the last dimension: one per bank
    (rows of 4-byte words padded by p and by p + banks words fall into the same banks)."""
    return arch.shared_banks


def _key(cost: AccessCost) -> tuple[int, str | None]:
    return (cost.access.uid, cost.via)


def _not_worse(old: int | None, new: AccessCost | None) -> bool:
    if old is None:
        return True  # unknown before: nothing to compare with
    return new is not None and new.per_request is not None and new.per_request <= old


def _dimensions(t: object) -> tuple[list[int | None], str]:
    """`([32, 32], "float")` for `float tile[32][32]`; `([], "")` for a non-array."""
    dims: list[int | None] = []
    while isinstance(t, T.ArrayType):
        dims.append(t.length)
        t = t.element
    return dims, (str(t) if dims else "")


def _plural(element: str) -> str:
    if element and " " not in element and element.isidentifier() and not element.startswith("_"):
        return element + "s"
    return "elements"


def _without_padding(cost: AccessCost, ctx: CheckContext) -> str:
    odd = _odd_stride(cost, ctx)
    if odd is not None:
        return odd
    return f"{SWIZZLE} or another mapping of lanes to words may help (not checked by warplint)"


def _odd_stride(cost: AccessCost, ctx: CheckContext) -> str | None:
    """For 4-byte lanes with a uniform even word stride: an odd stride is conflict-free
    (it is coprime with the 32 banks, so the 32 lanes fall into 32 different banks)."""
    if cost.bytes != ctx.arch.bank_bytes or cost.stride_bytes is None:
        return None
    words, rest = divmod(abs(cost.stride_bytes), ctx.arch.bank_bytes)
    if rest or words == 0 or words % 2:
        return None
    return (
        f"use an odd stride: with {words + 1} words between neighbouring lanes instead of "
        f"{words}, the {ctx.arch.shared_banks} lanes of a warp fall into "
        f"{ctx.arch.shared_banks} different banks"
    )
