"""The rules stage: what each rule reports, in which words, and with which fix.

The analyses are built by hand here (IR accesses, `AccessCost`s, `KernelAnalysis`),
so each test states exactly the cost the rule sees. Running the docstring examples
through the real analyzer is a separate test.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from analyzer.analysis.assumptions import BlockAssumed, CostDependsOn
from analyzer.analysis.results import AccessCost, Collision, KernelAnalysis, LaunchConfig
from analyzer.arch import get_arch
from analyzer.diagnostics import Span
from analyzer.findings import Finding
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.rules import (
    DIAGNOSTIC_CODES,
    RULES,
    SECTIONS,
    CheckContext,
    Rule,
    UnknownRule,
    check,
    get_rule,
    get_rules,
    is_selected,
    rule_documentation,
    rules_table,
)
from analyzer.rules.wl101_bank_conflict import BankConflict, smallest_padding
from analyzer.rules.wl201_uncoalesced_access import UncoalescedAccess
from analyzer.rules.wl301_misaligned_struct import MisalignedStruct

SM90 = get_arch("sm_90")
NOWHERE = Span(0, 0)
LAUNCH = LaunchConfig(block=(32, 1, 1), grid=(1, 1, 1), origin="launch at line 30")
LAUNCH_2D = LaunchConfig(block=(32, 8, 1), grid=(1, 1, 1), origin="launch at line 30")
VEC3D = T.layout_struct("vec3d", [("x", T.FLOAT), ("y", T.FLOAT), ("z", T.FLOAT)])
VEC3D_16 = T.layout_struct("vec3d", [("x", T.FLOAT), ("y", T.FLOAT), ("z", T.FLOAT)], explicit_align=16)
FLOAT3 = T.builtin_type("float3")


# ----------------------------------------------------------------------------- IR builders
def variable(name: str, type_: T.CType, kind: str = "local", space: str = "local") -> N.Variable:
    return N.Variable(name, type_, kind, NOWHERE, space=space)


def ref(v: N.Variable) -> N.VarRef:
    return N.VarRef(v, v.type, NOWHERE)


def const(value: int) -> N.Const:
    return N.Const(value, T.LONG, NOWHERE)


def binary(op: str, left: N.Expr, right: N.Expr) -> N.Binary:
    return N.Binary(op, left, right, T.INT, NOWHERE)


def builtin(name: str) -> N.Builtin:
    return N.Builtin(name, T.UINT, NOWHERE)


def assign(v: N.Variable, value: N.Expr) -> N.Assign:
    return N.Assign(v, value, NOWHERE)


def base_pointer(array: N.Variable) -> N.Expr:
    element = T.element_type(array.type)
    return N.VarRef(array, T.PointerType(element or T.FLOAT), NOWHERE)


def indexed(base: N.Expr, index: N.Expr, element: T.CType) -> N.PtrAdd:
    """`base[index]` as lowering writes it: PtrAdd(base, index * sizeof(element))."""
    offset = binary("*", index, const(element.size))
    return N.PtrAdd(base, offset, T.PointerType(element), NOWHERE)


def access(
    uid: int,
    text: str,
    address: N.Expr,
    element: T.CType,
    *,
    space: str,
    array: str,
    at: int,
    op: str = "load",
) -> N.Access:
    return N.Access(uid, space, op, element, address, Span(at, at + len(text)), text, array)


def field_of(element_address: N.Expr, struct: T.StructType, name: str) -> N.PtrAdd:
    f = struct.field(name)
    assert f is not None and f.offset is not None
    return N.PtrAdd(element_address, const(f.offset), T.PointerType(f.type), NOWHERE)


def kernel(body: list[N.Stmt] = (), name: str = "k") -> N.Function:  # type: ignore[assignment]
    return N.Function(name, "global", [], list(body), T.VOID, Span(0, 200), Span(16, 17))


def cost_of(
    acc: N.Access,
    per_request: int | None,
    ideal: int | None,
    *,
    kernel_name: str = "k",
    **extra: object,
) -> AccessCost:
    shared = acc.space == "shared"
    size = acc.element.size or 4
    values: dict[str, object] = {
        "access": acc,
        "kernel": kernel_name,
        "space": acc.space,
        "op": acc.op,
        "bytes": min(size, 16) if T.is_natural_access(acc.element) else 4,
        "element_bytes": size,
        "pieces": 1,
        "unit": "wavefronts" if shared else "sectors",
        "per_request": per_request,
        "ideal_per_request": ideal,
    }
    values.update(extra)
    return AccessCost(**values)  # type: ignore[arg-type]


def analysis_of(
    costs: list[AccessCost],
    fn: N.Function | None = None,
    launch: LaunchConfig = LAUNCH,
    shared: dict[str, N.Variable] | None = None,
) -> KernelAnalysis:
    return KernelAnalysis(fn or kernel(), launch, costs, shared_arrays=dict(shared or {}))


def run(rule: Rule, analysis: KernelAnalysis, reanalyze=None) -> list[Finding]:
    return list(rule.check(analysis, CheckContext(arch=SM90, reanalyze=reanalyze)))


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


# ----------------------------------------------------------------------------- shared fixtures
TID = variable("tid", T.INT)
TID_BODY = [assign(TID, builtin("threadIdx.x"))]
DATA = variable("data", T.ArrayType(T.INT, 128), kind="shared", space="shared")
TILE = variable("tile", T.ArrayType(T.ArrayType(T.FLOAT, 32), 32), kind="shared", space="shared")


def data_stride4() -> N.Access:
    """`data[4 * tid]` on `__shared__ int data[128]`."""
    index = binary("*", const(4), ref(TID))
    return access(
        1, "data[4 * tid]", indexed(base_pointer(DATA), index, T.INT), T.INT, space="shared", array="data", at=100
    )


def tile_access(uid: int, row: str, column: str, at: int, op: str = "load") -> N.Access:
    """`tile[threadIdx.<row>][threadIdx.<column>]` on `__shared__ float tile[32][32]`."""
    row_type = T.ArrayType(T.FLOAT, 32)
    base = N.VarRef(TILE, T.PointerType(row_type), NOWHERE)
    row_address = indexed(base, builtin(f"threadIdx.{row}"), row_type)
    address = indexed(N.Cast(row_address, T.PointerType(T.FLOAT), NOWHERE), builtin(f"threadIdx.{column}"), T.FLOAT)
    text = f"tile[threadIdx.{row}][threadIdx.{column}]"
    return access(uid, text, address, T.FLOAT, space="shared", array="tile", at=at, op=op)


# ============================================================================= WL101
def test_stride_4_on_a_1d_int_array_is_a_4_way_conflict_with_lanes_and_banks_named() -> None:
    acc = data_stride4()
    cost = cost_of(
        acc, 4, 1, stride_bytes=16, collisions=(Collision(bank=0, lanes=(0, 8, 16, 24), words=(0, 32, 64, 96)),)
    )
    f = only(run(BankConflict(), analysis_of([cost], kernel(TID_BODY), shared={"data": DATA})))
    assert f.code == "WL101" and f.rule == "bank-conflict" and f.severity == "warning"
    assert f.message == "4-way bank conflict on `data`: 4 wavefronts per request, ideal 1"
    assert dict(f.args) == {
        "ways": 4,
        "wavefronts": 4,
        "ideal": 1,
        "array": "data",
        "access": "data[4 * tid]",
        "stride_bytes": 16,
    }
    assert f.detail == ("lanes 0, 8, 16 and 24 hit bank 0 at 4 different words (0, 32, 64 and 96)",)
    assert f.span == acc.span and f.kernel == "k"
    assert f.related[0].message == "`data` declared here"
    # no rows to pad in `data[4 * tid]`: an odd stride, which arithmetic proves conflict-free
    assert f.fix == (
        "use an odd stride: with 5 words between neighbouring lanes instead of 4, "
        "the 32 lanes of a warp fall into 32 different banks"
    )


def test_ways_round_up_for_8_byte_accesses_with_an_ideal_of_2() -> None:
    acc = data_stride4()
    cost = cost_of(acc, 5, 2, bytes=8)
    f = only(run(BankConflict(), analysis_of([cost])))
    assert f.args["ways"] == 3
    assert f.message == "3-way bank conflict on `data`: 5 wavefronts per request, ideal 2"


def test_a_32_lane_collision_lists_the_first_and_last_lanes_only() -> None:
    acc = tile_access(1, "x", "y", at=50)
    words = tuple(range(0, 32 * 32, 32))
    cost = cost_of(acc, 32, 1, stride_bytes=128, collisions=(Collision(bank=0, lanes=tuple(range(32)), words=words),))
    f = only(run(BankConflict(), analysis_of([cost])))
    assert f.detail[0] == ("lanes 0, 1, 2, …, 31 (32 lanes) hit bank 0 at 32 different words (0, 32, 64, …, 992)")


def test_conflict_free_and_unknown_shared_costs_are_not_reported() -> None:
    free = cost_of(tile_access(1, "y", "x", at=10), 1, 1)
    unknown = cost_of(tile_access(2, "x", "y", at=20), None, 1, data_dependent=True)
    assert run(BankConflict(), analysis_of([free, unknown])) == []


def test_global_costs_are_not_bank_conflicts() -> None:
    x = variable("x", T.PointerType(T.FLOAT), kind="param")
    acc = access(1, "x[tid]", indexed(ref(x), ref(TID), T.FLOAT), T.FLOAT, space="global", array="x", at=5)
    assert run(BankConflict(), analysis_of([cost_of(acc, 32, 4)])) == []


def test_inexact_costs_list_cases_range_and_assumptions() -> None:
    cost = cost_of(
        data_stride4(),
        4,
        1,
        exact=False,
        best_per_request=1,
        cases="conflict-free exactly when `stride` is odd",
        assumptions=[CostDependsOn(("stride",))],
        via="inlined from get",
    )
    launch = LaunchConfig((32, 8, 1), None, "assumed default", assumed=True)
    f = only(run(BankConflict(), analysis_of([cost], launch=launch)))
    assert f.detail == (
        "inlined from get",
        "conflict-free exactly when `stride` is odd",
        "worst case shown: the cost varies from 1 to 4 wavefronts per request",
        "assumed: the cost depends on stride (not known): worst case over values 1..64 (pass --param stride=VALUE)",
        "assumed: block (32, 8, 1) (assumed default)",
    )


def test_the_assumed_block_is_said_once_when_an_assumption_already_says_it() -> None:
    launch = LaunchConfig((32, 8, 1), None, "assumed default", assumed=True)
    cost = cost_of(
        data_stride4(), 4, 1, exact=False, assumptions=[BlockAssumed(launch.origin)], via="inlined from blockReduce"
    )
    f = only(run(BankConflict(), analysis_of([cost], launch=launch)))
    assert f.detail == ("inlined from blockReduce", "assumed: block size unknown: assumed default")
    # a call through `blockReduce` says nothing of the block: the assumed block is still said
    cost = cost_of(data_stride4(), 4, 1, exact=False, via="inlined from blockReduce")
    f = only(run(BankConflict(), analysis_of([cost], launch=launch)))
    assert f.detail == ("inlined from blockReduce", "assumed: block (32, 8, 1) (assumed default)")


class FakeReanalysis:
    """`reanalyze` for the tile: per padding, the per-request cost of each access uid."""

    def __init__(self, base: KernelAnalysis, table: dict[int, dict[int, int]]) -> None:
        self.base = base
        self.table = table
        self.calls: list[dict[str, int]] = []

    def __call__(self, padding: dict[str, int]) -> KernelAnalysis | None:
        self.calls.append(dict(padding))
        p = padding["tile"]
        costs = [
            dataclasses.replace(
                c,
                per_request=self.table.get(p, {}).get(c.access.uid, c.per_request),
                lane_addresses=(p,),
            )
            for c in self.base.costs
        ]
        return dataclasses.replace(self.base, costs=costs)


def tile_analysis() -> tuple[KernelAnalysis, AccessCost]:
    store = cost_of(tile_access(1, "y", "x", at=10, op="store"), 1, 1)
    column = cost_of(tile_access(2, "x", "y", at=40), 32, 1, stride_bytes=128)
    return analysis_of([store, column], launch=LAUNCH_2D, shared={"tile": TILE}), column


def test_padding_search_skips_a_padding_that_makes_another_access_worse() -> None:
    analysis, _column = tile_analysis()
    # p = 1 fixes the column read but makes the row store 2-way; p = 2 fixes it cleanly
    fake = FakeReanalysis(analysis, {1: {2: 1, 1: 2}, 2: {2: 1, 1: 1}})
    f = only(run(BankConflict(), analysis, fake))
    assert f.fix == (
        "pad the last dimension: `__shared__ float tile[32][32 + 2]` (34 floats per row) "
        "makes this access conflict-free without making another access to `tile` worse"
    )
    assert fake.calls == [{"tile": 1}, {"tile": 2}]


def test_the_smallest_padding_wins_and_is_found_by_trying_1_first() -> None:
    analysis, column = tile_analysis()
    fake = FakeReanalysis(analysis, {p: {2: 1} for p in range(1, 33)})
    ctx = CheckContext(arch=SM90, reanalyze=fake)
    assert smallest_padding(column, analysis, ctx) == 1
    assert smallest_padding(column, analysis, ctx) == 1
    assert fake.calls == [{"tile": 1}]  # re-analyses are memoised per (array, padding)


def test_no_working_padding_suggests_an_unchecked_xor_swizzle() -> None:
    analysis, _ = tile_analysis()
    fake = FakeReanalysis(analysis, {})  # every padding leaves the read 32-way
    f = only(run(BankConflict(), analysis, fake))
    assert len(fake.calls) == 32
    assert f.fix == (
        "no padding of 1 to 32 elements makes this access conflict-free without making "
        "another access to `tile` worse; an XOR swizzle (index the column as `col ^ row`) "
        "may help (not checked by warplint)"
    )


def test_without_reanalysis_the_fix_says_nothing_was_checked() -> None:
    analysis, _ = tile_analysis()
    for reanalyze in (None, lambda padding: None):
        f = only(run(BankConflict(), analysis, reanalyze))
        assert f.fix == (
            "padding the last dimension (`tile[...][32 + 1]`) or an XOR swizzle (index the "
            "column as `col ^ row`) may help; warplint could not re-analyse the kernel to "
            "check either"
        )


def test_padding_is_not_offered_when_every_lane_reads_the_same_row() -> None:
    k = variable("k", T.INT)
    row_type = T.ArrayType(T.FLOAT, 32)
    row_address = indexed(N.VarRef(TILE, T.PointerType(row_type), NOWHERE), ref(k), row_type)
    column = binary("*", const(2), builtin("threadIdx.x"))
    acc = access(
        1,
        "tile[k][2 * threadIdx.x]",
        indexed(N.Cast(row_address, T.PointerType(T.FLOAT), NOWHERE), column, T.FLOAT),
        T.FLOAT,
        space="shared",
        array="tile",
        at=10,
    )
    calls: list[object] = []
    analysis = analysis_of([cost_of(acc, 2, 1, stride_bytes=8)], shared={"tile": TILE})
    f = only(run(BankConflict(), analysis, lambda padding: calls.append(padding)))
    assert calls == []
    assert f.fix == (
        "padding the last dimension of `tile` does not change this access (every lane of a "
        "warp reads the same row); use an odd stride: with 3 words between neighbouring lanes "
        "instead of 2, the 32 lanes of a warp fall into 32 different banks"
    )


def test_a_padding_the_reanalysis_did_not_apply_counts_as_unchecked() -> None:
    analysis, column = tile_analysis()
    column.lane_addresses = (1,)  # what the fake reports for p = 1: nothing moved
    fake = FakeReanalysis(analysis, {1: {2: 1}})
    assert smallest_padding(column, analysis, CheckContext(SM90, fake)) is None
    assert only(run(BankConflict(), analysis, fake)).fix == (
        "padding the last dimension (`tile[...][32 + 1]`) or an XOR swizzle (index the "
        "column as `col ^ row`) may help; warplint could not re-analyse the kernel to "
        "check either"
    )


def test_a_1d_row_stride_the_reanalysis_does_not_rewrite_counts_as_unchecked() -> None:
    analysis, s_access = row_major_1d()
    s_access.lane_addresses = (1,)
    fake = FakeReanalysis(analysis, {})
    f = only(run(BankConflict(), analysis, lambda padding: fake({"tile": padding["s"]})))
    assert f.fix == (
        "another row stride than 32 in `s[row * 32 + col]` (padding each row) or an XOR "
        "swizzle (index the column as `col ^ row`) may help; warplint could not re-analyse "
        "the kernel to check either"
    )


def test_the_array_type_comes_from_the_address_when_shared_arrays_is_empty() -> None:
    analysis, _ = tile_analysis()
    analysis.shared_arrays.clear()
    fake = FakeReanalysis(analysis, {1: {2: 1}})
    f = only(run(BankConflict(), analysis, fake))
    assert f.fix is not None and f.fix.startswith(
        "pad the last dimension: `__shared__ float tile[32][32 + 1]` (33 floats per row)"
    )
    assert f.related == ()


def row_major_1d() -> tuple[KernelAnalysis, AccessCost]:
    """`s[tx * 32 + ty]` on `__shared__ float s[32 * 32]`: the row is tx, the row stride 32."""
    s = variable("s", T.ArrayType(T.FLOAT, 32 * 32), kind="shared", space="shared")
    ty, tx = variable("ty", T.INT), variable("tx", T.INT)
    body = [assign(ty, builtin("threadIdx.y")), assign(tx, builtin("threadIdx.x"))]
    index = binary("+", binary("*", ref(tx), const(32)), ref(ty))
    acc = access(
        1, "s[tx * 32 + ty]", indexed(base_pointer(s), index, T.FLOAT), T.FLOAT, space="shared", array="s", at=70
    )
    cost = cost_of(acc, 32, 1)
    return analysis_of([cost], kernel(body), LAUNCH_2D, {"s": s}), cost


def test_a_1d_array_indexed_by_rows_is_padded_per_row() -> None:
    analysis, _ = row_major_1d()
    fake = FakeReanalysis(analysis, {1: {1: 1}})
    fake_for_s = lambda padding: fake({"tile": padding["s"]})  # noqa: E731
    f = only(run(BankConflict(), analysis, fake_for_s))
    assert f.fix == (
        "pad each row: a row stride of 32 + 1 elements (`s[row * (32 + 1) + col]`, with `s` "
        "enlarged to match) makes this access conflict-free without making another access "
        "to `s` worse"
    )


def test_a_1d_stride_without_rows_is_not_searched() -> None:
    acc = data_stride4()
    calls: list[object] = []
    analysis = analysis_of([cost_of(acc, 4, 1, stride_bytes=16)], kernel(TID_BODY))
    run(BankConflict(), analysis, lambda padding: calls.append(padding))
    assert calls == []


# ============================================================================= WL201
X = variable("x", T.PointerType(T.FLOAT), kind="param")


def test_stride_1000_store_message_args_and_fix() -> None:
    i = variable("i", T.INT)
    body = [assign(i, binary("+", builtin("threadIdx.x"), binary("*", builtin("blockDim.x"), builtin("blockIdx.x"))))]
    index = binary("*", const(1000), ref(i))
    acc = access(
        1, "x[1000*tid]", indexed(ref(X), index, T.FLOAT), T.FLOAT, space="global", array="x", at=90, op="store"
    )
    cost = cost_of(acc, 32, 4, stride_bytes=4000, lane_addresses=tuple(4000 * n for n in range(32)))
    f = only(run(UncoalescedAccess(), analysis_of([cost], kernel(body))))
    assert f.code == "WL201" and f.rule == "uncoalesced-access"
    assert f.message == (
        "uncoalesced global store of `x[1000*tid]`: 32 sectors per request, ideal 4 (12.5% efficiency)"
    )
    assert f.args["sectors"] == 32 and f.args["ideal"] == 4
    assert f.args["efficiency"] == pytest.approx(12.5)
    assert f.args["stride_bytes"] == 4000
    assert f.detail == ("neighbouring lanes are 4000 bytes apart (4-byte accesses)",)
    assert f.fix == (
        "lay the data out so that neighbouring threads access neighbouring elements, or stage "
        "the tile through shared memory: move it between global and shared memory with "
        "threadIdx.x indexing consecutive elements, and make the strided access in shared memory"
    )


def matmul_v1() -> tuple[N.Function, N.Access, N.Access]:
    """`x = blockIdx.x * blockDim.x + threadIdx.x; y = ... threadIdx.y;`
    `a[x * N + k]` and `b[k * P + y]` (matmul V1 of seed 001)."""
    x, y = variable("x", T.UINT), variable("y", T.UINT)
    k, n, p = variable("k", T.UINT), variable("N", T.UINT, "param"), variable("P", T.UINT, "param")
    a = variable("a", T.PointerType(T.FLOAT), kind="param")
    b = variable("b", T.PointerType(T.FLOAT), kind="param")
    body = [
        assign(x, binary("+", binary("*", builtin("blockIdx.x"), builtin("blockDim.x")), builtin("threadIdx.x"))),
        assign(y, binary("+", binary("*", builtin("blockIdx.y"), builtin("blockDim.y")), builtin("threadIdx.y"))),
    ]
    a_index = binary("+", binary("*", ref(x), ref(n)), ref(k))
    b_index = binary("+", binary("*", ref(k), ref(p)), ref(y))
    a_acc = access(1, "a[x * N + k]", indexed(ref(a), a_index, T.FLOAT), T.FLOAT, space="global", array="a", at=300)
    b_acc = access(2, "b[k * P + y]", indexed(ref(b), b_index, T.FLOAT), T.FLOAT, space="global", array="b", at=320)
    return kernel(body), a_acc, b_acc


def test_threadIdx_x_indexing_rows_suggests_swapping_the_x_and_y_roles() -> None:
    fn, a_acc, b_acc = matmul_v1()
    costs = [
        cost_of(a_acc, 32, 4, stride_bytes=16384),
        cost_of(b_acc, 1, 4, stride_bytes=0),  # a broadcast: not reported
    ]
    f = only(run(UncoalescedAccess(), analysis_of(costs, fn, LaunchConfig((32, 32, 1), None, "l"))))
    assert f.fix == (
        "`x` comes from threadIdx.x but selects the row: swap the x/y roles so threadIdx.x "
        "indexes the fastest-varying dimension"
    )


def test_the_row_variable_is_found_through_a_single_definition() -> None:
    fn, a_acc, _ = matmul_v1()
    index_var = variable("index_in", T.UINT)
    fn.body.append(assign(index_var, a_acc.address.offset.left))  # type: ignore[attr-defined]
    a_base = a_acc.address.base  # type: ignore[attr-defined]
    acc = access(3, "a[index_in]", indexed(a_base, ref(index_var), T.FLOAT), T.FLOAT, space="global", array="a", at=400)
    f = only(run(UncoalescedAccess(), analysis_of([cost_of(acc, 32, 4, stride_bytes=16384)], fn)))
    assert f.fix is not None and f.fix.startswith("`x` comes from threadIdx.x")


def test_a_transpose_whose_other_side_is_coalesced_is_staged_through_shared_memory() -> None:
    fn, a_acc, b_acc = matmul_v1()
    costs = [
        cost_of(a_acc, 32, 4, stride_bytes=16384),
        cost_of(b_acc, 4, 4, lane_addresses=(0, 4, 8)),  # neighbouring lanes 4 bytes apart
    ]
    f = only(run(UncoalescedAccess(), analysis_of(costs, fn)))
    assert f.fix == (
        "stage the tile through shared memory: move it between global and shared memory with "
        "threadIdx.x indexing consecutive elements, and make the strided access in shared memory"
    )


def test_a_contiguous_warp_starting_inside_a_sector_names_the_offset() -> None:
    index = binary("+", ref(TID), const(1))
    acc = access(1, "x[tid + 1]", indexed(ref(X), index, T.FLOAT), T.FLOAT, space="global", array="x", at=10)
    cost = cost_of(acc, 5, 4, stride_bytes=4, lane_addresses=tuple(4 + 4 * n for n in range(32)))
    f = only(run(UncoalescedAccess(), analysis_of([cost], kernel(TID_BODY))))
    assert f.message.endswith("5 sectors per request, ideal 4 (80% efficiency)")
    assert f.detail == (
        "neighbouring lanes are 4 bytes apart (4-byte accesses)",
        "the warp's first address is not 32-byte aligned (it starts 4 bytes into a sector)",
    )
    assert f.fix == (
        "start each warp's range on a 32-byte boundary: make offsets and row lengths multiples of 8 elements (32 bytes)"
    )


def vec3d_field_accesses(
    struct: T.StructType, array: str = "data", first_uid: int = 1, at: int = 100
) -> list[N.Access]:
    """`data[tid].x`, `data[tid].y`, `data[tid].z` on `struct vec3d *data`."""
    param = variable(array, T.PointerType(struct), kind="param")
    element = indexed(ref(param), ref(TID), struct)
    return [
        access(
            first_uid + i,
            f"{array}[tid].{name}",
            field_of(element, struct, name),
            T.FLOAT,
            space="global",
            array=array,
            at=at + 20 * i,
        )
        for i, name in enumerate("xyz")
    ]


def test_a_field_of_a_12_byte_struct_suggests_align_16_or_a_structure_of_arrays() -> None:
    acc = vec3d_field_accesses(VEC3D)[0]
    f = only(run(UncoalescedAccess(), analysis_of([cost_of(acc, 12, 4, stride_bytes=12)])))
    assert f.message == ("uncoalesced global load of `data[tid].x`: 12 sectors per request, ideal 4 (33.3% efficiency)")
    assert f.fix == (
        "declare it `struct __align__(16) vec3d` (16 bytes: one 16-byte load per element) "
        "or use a structure of arrays (x[], y[], z[])"
    )


def test_a_whole_float3_moved_in_three_pieces_suggests_float4() -> None:
    param = variable("in", T.PointerType(FLOAT3), kind="param")
    acc = access(1, "in[idx]", indexed(ref(param), ref(TID), FLOAT3), FLOAT3, space="global", array="in", at=10)
    cost = cost_of(acc, 12, 4, bytes=4, element_bytes=12, pieces=3, stride_bytes=12)
    f = only(run(UncoalescedAccess(), analysis_of([cost])))
    assert "each 12-byte element is moved as 3 accesses of 4 bytes" in f.detail
    assert f.fix == (
        "use `float4` (16 bytes, align 16: one 16-byte load per element) or a structure of arrays (x[], y[], z[])"
    )


def test_coalesced_merged_and_unknown_global_costs_are_not_reported() -> None:
    accs = vec3d_field_accesses(VEC3D)
    costs = [
        cost_of(accs[0], 4, 4),
        cost_of(accs[1], 12, 4, merged_into=accs[0].uid),
        cost_of(accs[2], None, 4, data_dependent=True),
    ]
    assert run(UncoalescedAccess(), analysis_of(costs)) == []


# ============================================================================= WL301
def test_an_array_of_12_byte_structs_is_reported_once_at_its_first_access() -> None:
    accs = vec3d_field_accesses(VEC3D)
    costs = [cost_of(a, 12, 4, stride_bytes=12) for a in reversed(accs)]
    f = only(run(MisalignedStruct(), analysis_of(costs)))
    assert f.code == "WL301" and f.rule == "misaligned-struct"
    assert f.span == accs[0].span
    assert f.message == (
        "array of `struct vec3d` (12 bytes, align 4) in global memory: "
        "each field is a separate access strided by 12 bytes"
    )
    assert f.fix == (
        "declare it `struct __align__(16) vec3d` (16 bytes: one 16-byte load per element) "
        "or use a structure of arrays (x[], y[], z[])"
    )
    assert f.args["type"] == "struct vec3d" and f.args["size"] == 12 and f.args["align"] == 4
    assert f.args["pieces"] == 3 and f.args["suggested_size"] == 16
    assert f.detail == (
        "`data[tid].x`: 12 sectors per request, ideal 4",
        "`data[tid].y`: 12 sectors per request, ideal 4",
        "`data[tid].z`: 12 sectors per request, ideal 4",
        "one element moves as 3 accesses of 4 bytes",
    )
    assert [r.span for r in f.related] == [accs[1].span, accs[2].span]


def test_each_array_and_each_kernel_gets_its_own_finding() -> None:
    a = vec3d_field_accesses(VEC3D, "a", 1, at=100)
    b = vec3d_field_accesses(VEC3D, "b", 10, at=500)
    in_k = [cost_of(x, 12, 4) for x in a + b]
    in_k2 = [cost_of(x, 12, 4, kernel_name="k2") for x in a + b]
    findings = check([analysis_of(in_k), analysis_of(in_k2, kernel(name="k2"))], SM90, select=["WL301"])
    assert [(f.kernel, f.args["array"], f.span) for f in findings] == [
        ("k", "a", a[0].span),
        ("k2", "a", a[0].span),
        ("k", "b", b[0].span),
        ("k2", "b", b[0].span),
    ]


def test_an_aligned_struct_and_a_uniform_access_are_not_reported() -> None:
    aligned = vec3d_field_accesses(VEC3D_16)
    plain = vec3d_field_accesses(VEC3D, "p", 10, at=500)
    costs = [cost_of(x, 16, 4) for x in aligned] + [cost_of(plain[0], 1, 4)]  # p[0].x: broadcast
    assert run(MisalignedStruct(), analysis_of(costs)) == []


def test_the_struct_type_attribute_of_a_cost_is_used_when_present() -> None:
    acc = access(1, "pts[i].x", ref(X), T.FLOAT, space="global", array="pts", at=10)
    cost = cost_of(acc, 12, 4)
    assert run(MisalignedStruct(), analysis_of([cost])) == []  # nothing says it is a struct
    cost.struct_type = FLOAT3
    f = only(run(MisalignedStruct(), analysis_of([cost])))
    assert f.message.startswith("array of `float3` (12 bytes, align 4) in global memory")
    assert f.fix == (
        "use `float4` (16 bytes, align 16: one 16-byte load per element) or a structure of arrays (x[], y[], z[])"
    )


def test_odd_struct_sizes_round_up_to_the_next_natural_access() -> None:
    rgb = T.layout_struct("rgb", [("r", T.SHORT), ("g", T.SHORT), ("b", T.SHORT)])  # 6 bytes
    five = T.layout_struct("five", [(c, T.FLOAT) for c in "abcde"])  # 20 bytes
    expected = {
        "rgb": "declare it `struct __align__(8) rgb` (8 bytes: one 8-byte load per element) "
        "or use a structure of arrays (r[], g[], b[])",
        "five": "declare it `struct __align__(16) five` (32 bytes: two 16-byte loads per element) "
        "or use a structure of arrays (a[], b[], c[], …)",
    }
    for struct in (rgb, five):
        param = variable("v", T.PointerType(struct), kind="param")
        acc = access(1, "v[i]", indexed(ref(param), ref(TID), struct), struct, space="global", array="v", at=3)
        f = only(run(MisalignedStruct(), analysis_of([cost_of(acc, 8, 4)])))
        assert f.fix == expected[struct.name]


# ============================================================================= registry
def test_rules_are_found_by_code_name_and_prefix() -> None:
    assert get_rule("WL101") is BankConflict
    assert get_rule("wl201") is UncoalescedAccess
    assert get_rule("misaligned-struct") is MisalignedStruct
    assert get_rule("WL1") is BankConflict
    assert get_rules("WL") == [BankConflict, UncoalescedAccess, MisalignedStruct]
    assert get_rules("ALL") == list(RULES.values())
    assert get_rules("WL9") == []  # diagnostics, not rules
    with pytest.raises(UnknownRule, match="unknown rule 'WL") as err:
        get_rule("WL")  # more than one rule
    assert err.value.selector == "WL"
    for bad in ("WL999", "bank", "E501"):
        with pytest.raises(UnknownRule):
            get_rules(bad)


def test_selection_and_ignore_follow_codes_names_and_prefixes() -> None:
    assert is_selected("WL101")
    assert is_selected("WL101", select=["WL1"]) and not is_selected("WL201", select=["WL1"])
    assert not is_selected("WL301", ignore=["misaligned-struct"])
    assert not is_selected("WL902", select=["WL1"]) and is_selected("WL902", select=["WL9"])
    assert is_selected("WL900", select=["WL1"], ignore=["ALL"])  # internal errors always show


def three_rule_analysis() -> KernelAnalysis:
    shared = cost_of(data_stride4(), 4, 1, stride_bytes=16)  # at 100
    fields = vec3d_field_accesses(VEC3D, at=40)  # at 40, 60, 80
    costs = [shared] + [cost_of(a, 12, 4) for a in fields]
    return analysis_of(costs, kernel(TID_BODY))


def test_check_sorts_by_position_then_code() -> None:
    findings = check([three_rule_analysis()], SM90)
    assert [(f.span.start, f.code) for f in findings] == [
        (40, "WL201"),
        (40, "WL301"),
        (60, "WL201"),
        (80, "WL201"),
        (100, "WL101"),
    ]


def test_check_honours_select_and_ignore_and_rejects_unknown_selectors() -> None:
    analysis = three_rule_analysis()
    assert {f.code for f in check([analysis], SM90, select=["WL2", "bank-conflict"])} == {"WL101", "WL201"}
    assert {f.code for f in check([analysis], SM90, ignore=["WL2"])} == {"WL101", "WL301"}
    with pytest.raises(UnknownRule):
        check([analysis], SM90, select=["WL777"])


def test_check_passes_each_kernel_its_own_reanalysis() -> None:
    analysis, _ = tile_analysis()
    seen: list[KernelAnalysis] = []

    def factory(a: KernelAnalysis):
        seen.append(a)
        return FakeReanalysis(a, {1: {2: 1}})

    findings = check([analysis], SM90, factory)
    assert seen == [analysis]
    assert "tile[32][32 + 1]" in (only(findings).fix or "")


def test_a_failing_rule_becomes_an_internal_error_finding(monkeypatch) -> None:
    def boom(self, analysis, ctx):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(UncoalescedAccess, "check", boom)
    findings = check([three_rule_analysis()], SM90)
    internal = [f for f in findings if f.code == "WL900"]
    assert len(internal) == 1
    assert internal[0].severity == "error" and internal[0].span == Span(16, 17)
    assert internal[0].message == (
        "internal error in WL201 (uncoalesced-access) on kernel `k`: ZeroDivisionError: oops"
    )
    assert {f.code for f in findings} == {"WL900", "WL101", "WL301"}
    with pytest.raises(ZeroDivisionError):
        check([three_rule_analysis()], SM90, raise_errors=True)


def test_one_access_reached_twice_is_reported_once() -> None:
    cost = cost_of(data_stride4(), 4, 1, stride_bytes=16)
    twice = analysis_of([cost, dataclasses.replace(cost)], kernel(TID_BODY))
    assert len(check([twice], SM90)) == 1


def test_findings_are_frozen_data() -> None:
    f = only(check([analysis_of([cost_of(data_stride4(), 4, 1)])], SM90))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.code = "WL999"  # type: ignore[misc]
    with pytest.raises(TypeError):
        f.args["ways"] = 1  # type: ignore[index]


# ============================================================================= documentation
@pytest.mark.parametrize("code", list(RULES))
def test_docstring_has_the_seven_sections_in_order(code: str) -> None:
    doc = RULES[code].documentation()
    headers = [line for line in doc.splitlines() if line.startswith("## ")]
    assert headers == list(SECTIONS)
    body = doc.split("## What it does\n", 1)[1].split("\n## ", 1)[0]
    assert body.startswith("Checks for ")
    assert body.strip().endswith(".") and body.count(". ") == 0  # one sentence


@pytest.mark.parametrize("code", list(RULES))
def test_example_and_use_instead_are_fenced_cuda_blocks(code: str) -> None:
    doc = RULES[code].documentation()
    for section in ("Example", "Use instead"):
        text = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0].strip()
        assert re.fullmatch(r"```cuda\n.*__global__.*\n```", text, re.S), (code, section)


@pytest.mark.parametrize("code", list(RULES))
def test_rule_attributes_follow_the_house_style(code: str) -> None:
    rule = RULES[code]
    assert rule.code == code
    assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)
    family = {"1": "shared", "2": "global", "3": "struct"}[code[2]]
    assert family
    module = inspect.getmodule(rule)
    assert module is not None
    assert module.__name__.endswith(f"{code.lower()}_{rule.name.replace('-', '_')}")
    assert rule.summary and "\n" not in rule.summary
    assert "References" in rule.documentation() and "docs.nvidia.com" in rule.documentation()


def test_explain_prints_a_header_line_then_the_docstring() -> None:
    text = rule_documentation("bank-conflict")
    assert text.startswith(
        "WL101 bank-conflict: lanes of a warp hit different words of one shared-memory bank\n\n"
        "## What it does\nChecks for `__shared__`"
    )
    assert rule_documentation("WL1") == text
    assert rule_documentation("WL905").startswith("WL905 recursion: ")
    with pytest.raises(UnknownRule):
        rule_documentation("WL999")


def test_rules_table_lists_rules_and_optionally_the_diagnostic_codes() -> None:
    assert rules_table() == [(c, r.name, r.summary) for c, r in RULES.items()]
    full = rules_table(include_diagnostics=True)
    assert [row[0] for row in full] == ["WL101", "WL201", "WL301", *sorted(DIAGNOSTIC_CODES)]
    assert {"WL900", "WL901", "WL902", "WL903", "WL904", "WL905", "WL906"} <= set(DIAGNOSTIC_CODES)
    assert not set(DIAGNOSTIC_CODES) & set(RULES)
