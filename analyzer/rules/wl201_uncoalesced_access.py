"""WL201 uncoalesced-access: global accesses that touch more sectors than their bytes need."""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.analysis.indexing import ThreadIndexUse
from analyzer.analysis.results import AccessCost, KernelAnalysis, Unit
from analyzer.findings import Finding
from analyzer.ir import types as T
from analyzer.ir.nodes import Space
from analyzer.rules.base import (
    CheckContext,
    Rule,
    context_lines,
    first_address,
    kernel_name,
    known_excess,
    layout_fix,
    neighbour_stride,
    struct_of,
    type_name,
)

CHARGED_IN = (Unit.SECTORS, Unit.TRANSACTIONS)  # sectors today, transactions on the seed generations

STAGE = (
    "stage the tile through shared memory: move it between global and shared memory with "
    "threadIdx.x indexing consecutive elements, and make the strided access in shared memory"
)


class UncoalescedAccess(Rule):
    """## What it does
    Checks for global-memory loads and stores whose warp touches more 32-byte sectors
    than the bytes it moves would need.

    ## Why is this bad?
    Global memory moves whole 32-byte sectors. A warp of 32 lanes reading consecutive
    4-byte words touches 4 sectors, the ideal; when neighbouring lanes read words
    `n` floats apart, every lane needs a sector of its own: 32 sectors for the same
    128 useful bytes, 12.5% efficiency, and eight times the memory traffic. A warp
    whose first address is not 32-byte aligned (`x[tid + 1]`) touches one extra sector.

    ## Example
    ```cuda
    __global__ void copy(float *out, const float *in, int n)
    {
        int row = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring lanes: next row
        int col = blockIdx.y * blockDim.y + threadIdx.y;
        out[row * n + col] = in[row * n + col];            // lanes are n floats apart
    }

    void launch(float *out, const float *in)
    {
        dim3 grid(32, 128), block(32, 8);
        copy<<<grid, block>>>(out, in, 1024);
    }
    ```

    ## Use instead
    ```cuda
    __global__ void copy(float *out, const float *in, int n)
    {
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        int col = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring lanes: next column
        out[row * n + col] = in[row * n + col];
    }

    void launch(float *out, const float *in)
    {
        dim3 grid(32, 128), block(32, 8);
        copy<<<grid, block>>>(out, in, 1024);
    }
    ```

    ## Known problems
    The cost is computed for one launch configuration and assumes that pointer
    parameters are 256-byte aligned, as `cudaMalloc` returns them; a pointer offset in
    host code is not seen. An index read from memory (`x[idx[tid]]`) is data-dependent
    and not reported. Loads the compiler merges or drops are charged as written: a value
    read twice is counted twice in `total` (nvcc loads it once; measured on an H200, see
    docs/hardware-validation.md), and a value just stored is charged again when read back.
    Verdict policy: a finding must not rest on an unknown taking an unusual value.
    Unknown sizes and offsets (`A[row * width + x]` with `width` not known) are judged
    at multiples of 32 elements, block indices at every value; the worst case over
    every value tried stays in the JSON's `per_request`, with the condition in `cases`
    ("6 sectors per request unless width is a multiple of 8"). `--assume worst` warns on
    the worst case instead. The suggested fix is chosen
    from the shape of the index and is not re-checked.

    ## Options
    None of its own. The launch configuration (`--block`) decides which lanes form a
    warp; `--assume worst` (configuration `assume`) judges unknowns at their worst.

    How the cost differs by generation (`--arch`): Volta to Hopper (the default) count
    32-byte sectors per warp. The older generations count transactions: Kepler
    (`sm_30`, `sm_35`) 32-byte segments; Fermi (`sm_20`) one 128-byte line per cached
    load and 32-byte segments per store; compute capability 1.2/1.3 (`sm_12`, `sm_13`)
    one segment of 32 to 128 bytes per half-warp, shrunk to the half it uses, and 1.0/1.1
    (`sm_10`, `sm_11`) one transaction per half-warp only when its k-th lane reads the
    k-th word of an aligned segment, else one per lane: `x[tid + 1]` costs 5 sectors
    today, 3 transactions on `sm_13` and 32 on `sm_11`.

    ## References
    - CUDA C++ Programming Guide, Performance Guidelines, "Device Memory Accesses":
      <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#device-memory-accesses>
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory" (misaligned and
      strided access patterns):
      <https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#coalesced-access-to-global-memory>
    """

    code = "WL201"
    name = "uncoalesced-access"
    summary = "a warp's global access touches more 32-byte sectors than its bytes need"
    message = (
        "uncoalesced global {op} of `{access}`: {sectors} sectors per request, "
        "ideal {ideal} ({efficiency:.3g}% efficiency)"
    )

    def check(self, analysis: KernelAnalysis, ctx: CheckContext) -> Iterator[Finding]:
        uses: ThreadIndexUse | None = None
        for written in analysis.costs:
            cost = ctx.verdict(written)
            if cost.space != Space.GLOBAL or cost.unit not in CHARGED_IN or not known_excess(cost):
                continue
            assert cost.per_request is not None and cost.ideal_per_request is not None
            if uses is None:
                uses = ThreadIndexUse(analysis.kernel)
            count = "sectors" if cost.unit == Unit.SECTORS else "transactions"
            args = {
                "op": cost.op,
                "access": cost.text,
                "array": cost.access.array,
                count: cost.per_request,
                "ideal": cost.ideal_per_request,
                "efficiency": 100.0 * cost.ideal_per_request / cost.per_request,
                "stride_bytes": cost.stride_bytes,
                "bytes": cost.bytes,
                "element_bytes": cost.element_bytes,
                "pieces": cost.pieces,
            }
            fix, why = self.fix(cost, analysis, ctx, uses)
            yield self.finding(
                span=cost.span,
                kernel=kernel_name(cost, analysis),
                args=args,
                fix=fix,
                detail=why + context_lines(cost, analysis),
                message=None if cost.unit == Unit.SECTORS else self.message.replace("sectors", "transactions"),
            )

    # ------------------------------------------------------------------ the fix
    def fix(
        self, cost: AccessCost, analysis: KernelAnalysis, ctx: CheckContext, uses: ThreadIndexUse
    ) -> tuple[str, list[str]]:
        """The suggested change, and the detail lines that explain the cost."""
        arch = ctx.arch
        stride = neighbour_stride(cost)
        why: list[str] = []
        if stride is not None:
            why.append(f"neighbouring lanes are {abs(stride)} bytes apart ({cost.bytes}-byte accesses)")
        if cost.pieces > 1:
            why.append(
                f"each {cost.element_bytes}-byte element is moved as {cost.pieces} accesses of {cost.bytes} bytes"
            )

        # 1. an element that no single load moves: the layout is the problem (see WL301)
        struct = struct_of(cost)
        natural_size = cost.element_bytes in arch.access_sizes and cost.pieces <= 1
        if struct is not None and not T.is_natural_access(struct):
            return layout_fix(struct, arch), why
        if struct is None and not natural_size:
            return (
                "use a structure of arrays, or `__align__(16)` on the element type so that "
                "one 16-byte load moves each element",
                why,
            )
        # 2. one field of a struct that a single wide load could move whole
        if struct is not None and struct.size is not None and cost.bytes < struct.size:
            return (
                f"load the whole `{type_name(struct)}` element at once: one {struct.size}-byte "
                "load per lane moves every field",
                why,
            )
        # 3. contiguous but starting inside a sector
        first = first_address(cost)
        if stride == cost.bytes and first is not None and first % arch.sector_bytes:
            offset = first % arch.sector_bytes
            why.append(
                f"the warp's first address is not {arch.sector_bytes}-byte aligned "
                f"(it starts {offset} bytes into a sector)"
            )
            elements = max(1, arch.sector_bytes // max(1, cost.bytes))
            return (
                f"start each warp's range on a {arch.sector_bytes}-byte boundary: make offsets "
                f"and row lengths multiples of {elements} elements ({arch.sector_bytes} bytes)",
                why,
            )
        # 4. threadIdx.x walks the slow dimension of a 2-D index
        carrier = uses.carrier(cost.access.address, "threadIdx.x")
        strided = stride is not None and abs(stride) >= arch.sector_bytes
        two_d = "threadIdx.y" in uses.kernel_builtins() or (
            analysis.launch.block is not None and analysis.launch.block[1] > 1
        )
        if carrier is not None and strided and two_d and not _coalesced_elsewhere(cost, analysis):
            who = (
                "threadIdx.x selects the row"
                if carrier == "threadIdx.x"
                else f"`{carrier}` comes from threadIdx.x but selects the row"
            )
            return (
                f"{who}: swap the x/y roles so threadIdx.x indexes the fastest-varying dimension",
                why,
            )
        if carrier is not None and strided and not two_d:
            return (
                "lay the data out so that neighbouring threads access neighbouring elements, or " + STAGE,
                why,
            )
        return STAGE, why


def _coalesced_elsewhere(cost: AccessCost, analysis: KernelAnalysis) -> bool:
    """Another global access of the kernel already has lanes on consecutive elements:
    swapping the thread roles would break it (a transpose), so staging is the fix."""
    return any(
        c is not cost and c.space == Space.GLOBAL and c.bytes > 0 and neighbour_stride(c) == c.bytes
        for c in analysis.costs
    )
