"""PTX register dataflow: exact per-lane expressions, masks and loops for small snippets,
source mapping, and the `check` entry points for .ptx files."""

from __future__ import annotations

import textwrap

import pytest

from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.api import Options, check_file
from analyzer.arch import get_arch
from analyzer.ptx import parse_ptx
from analyzer.ptx.analyze import PtxLineMap, analyze_entry, demangle, ptx_kernel, source_locations
from analyzer.ptx.cfg import build_cfg
from analyzer.ptx.dataflow import evaluate
from analyzer.ptx.instructions import demangle_variable

TX, TY = S.sym("threadIdx.x"), S.sym("threadIdx.y")
BX, NTX = S.sym("blockIdx.x"), S.sym("blockDim.x")
N = S.sym("param_1")


def entry(
    body: str, params: str = ".param .u64 k_param_0, .param .u32 k_param_1", decls: str = "", tail: str = ""
) -> str:
    """A PTX module with one kernel `k` whose body is `body`."""
    return (
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        f"{decls}\n"
        f".visible .entry k({params})\n{{\n"
        ".reg .pred %p<9>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n.reg .f32 %f<20>;\n"
        + textwrap.dedent(body)
        + "\n}\n"
        + tail
    )


def flow_of(text: str, **kw):
    module = parse_ptx(text, "k.ptx")
    return evaluate(module.entries[0], module, **kw)


def only_access(text: str, **kw):
    (acc,) = flow_of(text, **kw).accesses
    return acc


def test_global_index_from_tid_through_mul_wide_and_cvta_is_tid_times_4():
    acc = only_access(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        cvta.to.global.u64 %rd2, %rd1;
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, %ctaid.x;
        mov.u32 %r3, %ntid.x;
        mad.lo.s32 %r4, %r2, %r3, %r1;
        mul.wide.s32 %rd3, %r4, 4;
        add.s64 %rd4, %rd2, %rd3;
        ld.global.f32 %f1, [%rd4+8];
    """)
    )
    assert (acc.space, acc.op, acc.bytes) == ("global", "load", 4)
    assert acc.ptr.region == "param:param_0" and acc.ptr.align == 256
    assert acc.ptr.offset == TX * 4 + BX * NTX * 4 + 8
    assert acc.mask == S.const(1) and acc.loops == ()
    assert acc.text == "ld.global.f32 [%rd4+8]"


def test_launch_block_replaces_ntid_with_its_value():
    acc = only_access(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        mov.u32 %r1, %tid.y;
        mov.u32 %r3, %ntid.x;
        mul.lo.s32 %r4, %r1, %r3;
        mul.wide.u32 %rd3, %r4, 4;
        add.s64 %rd4, %rd1, %rd3;
        st.global.u32 [%rd4], %r4;
    """),
        launch=LaunchConfig((16, 8, 1), None, "test"),
    )
    assert acc.ptr.offset == TY * 64
    assert acc.op == "store"


def test_shared_array_by_name_with_shl_and_or_and_xor():
    acc = only_access(
        entry("""
        .shared .align 4 .b8 _ZZ1kvE4tile[4096];
        mov.u32 %r1, %tid.x;
        shl.b32 %r2, %r1, 2;
        xor.b32 %r5, %r2, 16;
        mov.u32 %r3, _ZZ1kvE4tile;
        add.s32 %r4, %r3, %r5;
        ld.shared.v2.f32 {%f1, %f2}, [%r4];
    """)
    )
    assert acc.ptr.region == "shared:tile" and acc.ptr.space == "shared" and acc.ptr.align == 128
    assert acc.ptr.offset == S.bitxor(TX * 4, S.const(16))
    assert acc.bytes == 8


def test_sign_fixup_of_signed_division_is_zero_for_non_negative_indices():
    acc = only_access(
        entry("""
        .shared .align 4 .b8 s[4096];
        ld.param.u32 %r9, [k_param_1];
        shr.s32 %r1, %r9, 31;
        shr.u32 %r2, %r1, 28;
        add.s32 %r3, %r9, %r2;
        shr.s32 %r4, %r3, 4;
        mov.u32 %r5, s;
        add.s32 %r6, %r5, %r4;
        st.shared.u8 [%r6], %r4;
    """)
    )
    assert acc.ptr.offset == S.shr(N, S.const(4))


def test_generic_address_from_cvta_shared_is_costed_as_shared():
    acc = only_access(
        entry("""
        .shared .align 16 .b8 buf[512];
        mov.u64 %rd1, buf;
        cvta.shared.u64 %rd2, %rd1;
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd3, %r1, 16;
        add.s64 %rd4, %rd2, %rd3;
        ld.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
    """)
    )
    assert (acc.space, acc.bytes) == ("shared", 16)
    assert acc.ptr.offset == TX * 16


def test_atom_and_red_are_atomic_accesses_with_the_element_size():
    flow = flow_of(
        entry("""
        .shared .align 8 .b8 hist[256];
        ld.param.u64 %rd1, [k_param_0];
        cvta.to.global.u64 %rd2, %rd1;
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd3, %r1, 8;
        add.s64 %rd4, %rd2, %rd3;
        atom.global.add.u64 %rd5, [%rd4], 1;
        mov.u32 %r2, hist;
        red.shared.add.u32 [%r2+4], 1;
    """)
    )
    assert [(a.space, a.op, a.bytes) for a in flow.accesses] == [("global", "atomic", 8), ("shared", "atomic", 4)]
    assert flow.accesses[1].ptr.offset == S.const(4)


def test_value_loaded_from_memory_is_an_unknown_per_lane_index():
    flow = flow_of(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        cvta.to.global.u64 %rd2, %rd1;
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd3, %r1, 4;
        add.s64 %rd4, %rd2, %rd3;
        ld.global.u32 %r2, [%rd4];
        mul.wide.u32 %rd5, %r2, 4;
        add.s64 %rd6, %rd2, %rd5;
        st.global.u32 [%rd6], %r1;
    """)
    )
    store = flow.accesses[1]
    assert S.is_unknown(store.ptr.offset)
    assert "per-lane value of ld.global.u32 [%rd4]" in str(store.ptr.offset)
    # the cost model calls it data-dependent, never guesses it
    text = entry("""
        ld.param.u64 %rd1, [k_param_0];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd3, %r1, 4;
        add.s64 %rd4, %rd1, %rd3;
        ld.global.u32 %r2, [%rd4];
        mul.wide.u32 %rd5, %r2, 4;
        add.s64 %rd6, %rd1, %rd5;
        st.global.u32 [%rd6], %r1;
    """)
    costs = _costs(text, block=(32, 1, 1))
    assert [(c.op, c.per_request, c.data_dependent) for c in costs] == [("load", 4, False), ("store", 32, True)]


def _costs(text: str, block=(32, 1, 1)):
    module = parse_ptx(text, "k.ptx")
    linemap = PtxLineMap(text, "k.ptx", source_locations(module))
    kernel = ptx_kernel(module.entries[0], linemap)
    analysis = analyze_entry(kernel, module, linemap, LaunchConfig(block, (1, 1, 1), "test"), get_arch("sm_90"))
    return analysis.costs


def test_predicated_branch_masks_the_skipped_block_and_selp_selects():
    flow = flow_of(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r1, %tid.x;
        setp.ge.u32 %p1, %r1, %r9;
        @%p1 bra $L__BB0_2;
        setp.lt.u32 %p2, %r1, 16;
        selp.b32 %r2, 1, 3, %p2;
        mul.wide.u32 %rd3, %r2, 4;
        add.s64 %rd4, %rd1, %rd3;
        st.global.u32 [%rd4], %r1;
    $L__BB0_2:
        mul.wide.u32 %rd5, %r1, 4;
        add.s64 %rd6, %rd1, %rd5;
        st.global.u32 [%rd6], %r1;
        ret;
    """)
    )
    inside, after = flow.accesses
    assert inside.mask == S.logical_not(S.compare(">=", TX, N))
    assert inside.ptr.offset == S.select(S.compare("<", TX, S.const(16)), S.const(1), S.const(3)) * 4
    assert after.mask == S.const(1)  # the join post-dominates the branch


def test_register_joined_after_if_is_a_select_on_the_branch_condition():
    flow = flow_of(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, 0;
        setp.eq.s32 %p1, %r9, 0;
        @%p1 bra $L__BB0_2;
        mov.u32 %r2, 64;
    $L__BB0_2:
        add.s32 %r3, %r2, %r1;
        mul.wide.u32 %rd5, %r3, 4;
        add.s64 %rd6, %rd1, %rd5;
        st.global.u32 [%rd6], %r1;
        ret;
    """)
    )
    (acc,) = flow.accesses
    cond = S.compare("==", N, S.const(0))
    assert acc.ptr.offset == (S.select(cond, S.const(0), S.const(64)) + TX) * 4


THREAD_STRIDED = """
    ld.param.u64 %rd1, [k_param_0];
    ld.param.u32 %r9, [k_param_1];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
$L__BB0_1:
    setp.ge.u32 %p1, %r1, %r9;
    @%p1 bra $L__BB0_3;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    add.s32 %r1, %r1, %r2;
    bra.uni $L__BB0_1;
$L__BB0_3:
    ret;
"""


def test_thread_strided_loop_with_test_at_the_top_is_tid_plus_k_times_ntid():
    flow = flow_of(entry(THREAD_STRIDED))
    (acc,) = flow.accesses
    k = S.sym("k@1")
    assert acc.ptr.offset == (TX + k * NTX) * 4
    (loop,) = acc.loops
    assert (loop.counter, loop.kind) == ("k@1", "additive")
    assert loop.cond == S.logical_not(S.compare(">=", TX + k * NTX, N))
    assert acc.mask == S.const(1)  # the loop's own test is the loop condition, not a mask


def test_thread_strided_store_costs_four_sectors_per_request():
    costs = _costs(entry(THREAD_STRIDED), block=(64, 1, 1))
    assert [(c.per_request, c.ideal_per_request) for c in costs] == [(4, 4)]


def test_bottom_tested_loop_runs_iteration_k_when_k_is_0_or_the_test_held_after_k_minus_1():
    flow = flow_of(
        entry("""
        .shared .align 4 .b8 s[4096];
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, s;
        shl.b32 %r3, %r1, 2;
        add.s32 %r4, %r2, %r3;
        mov.u32 %r5, 0;
    $L__BB0_1:
        ld.shared.u32 %r6, [%r4];
        add.s32 %r4, %r4, 128;
        add.s32 %r5, %r5, 1;
        setp.lt.s32 %p1, %r5, %r9;
        @%p1 bra $L__BB0_1;
        ret;
    """)
    )
    (acc,) = flow.accesses
    k = S.sym("k@1")
    assert acc.ptr.offset == TX * 4 + k * 128
    (loop,) = acc.loops
    assert loop.cond == S.logical_or(S.compare("==", k, S.const(0)), S.compare("<", k, N))


def test_exact_trip_count_written_as_ne_becomes_a_bound():
    flow = flow_of(
        entry("""
        .shared .align 4 .b8 s[4096];
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r2, s;
        mov.u32 %r5, 0;
    $L__BB0_1:
        ld.shared.u32 %r6, [%r2];
        add.s32 %r5, %r5, 4;
        setp.ne.s32 %p1, %r5, %r9;
        @%p1 bra $L__BB0_1;
        ret;
    """)
    )
    (loop,) = flow.accesses[0].loops
    k = S.sym("k@1")
    assert loop.cond == S.logical_or(S.compare("==", k, S.const(0)), S.compare("<", k * 4 - N, S.const(0)))


def test_halving_loop_is_a_multiplicative_counter():
    flow = flow_of(
        entry("""
        .shared .align 4 .b8 s[4096];
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, %ntid.x;
        shr.u32 %r3, %r2, 1;
    $L__BB0_1:
        setp.eq.s32 %p1, %r3, 0;
        @%p1 bra $L__BB0_3;
        add.s32 %r4, %r3, %r1;
        shl.b32 %r5, %r4, 2;
        mov.u32 %r6, s;
        add.s32 %r7, %r6, %r5;
        ld.shared.f32 %f1, [%r7];
        shr.u32 %r3, %r3, 1;
        bra.uni $L__BB0_1;
    $L__BB0_3:
        ret;
    """),
        launch=LaunchConfig((256, 1, 1), None, "test"),
    )
    (acc,) = flow.accesses
    (loop,) = acc.loops
    assert (loop.kind, loop.counter, loop.op, loop.step, loop.init) == (
        "multiplicative",
        "%r3@1",
        ">>",
        1,
        S.const(128),
    )
    assert acc.ptr.offset == (S.sym("%r3@1") + TX) * 4


def test_register_written_in_loop_but_not_an_induction_is_unknown_after_it():
    flow = flow_of(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        mov.u32 %r1, %tid.x;
        mov.u32 %r5, 0;
    $L__BB0_1:
        mul.lo.s32 %r5, %r5, %r1;
        add.s32 %r5, %r5, 1;
        setp.lt.s32 %p1, %r5, 100;
        @%p1 bra $L__BB0_1;
        mul.wide.u32 %rd5, %r5, 4;
        add.s64 %rd6, %rd1, %rd5;
        st.global.u32 [%rd6], %r1;
        ret;
    """)
    )
    (acc,) = flow.accesses
    assert acc.loops == () and "value after a loop" in str(acc.ptr.offset)


def test_cfg_finds_the_back_edge_and_the_loop_body():
    module = parse_ptx(entry(THREAD_STRIDED), "k.ptx")
    cfg = build_cfg(module.entries[0])
    assert [b.label for b in cfg.blocks] == [None, "$L__BB0_1", None, "$L__BB0_3"]
    assert cfg.back_edges == {(2, 1)}
    (loop,) = cfg.loops
    assert (loop.header, sorted(loop.body), loop.latches) == (1, [1, 2], (2,))


def test_struct_params_are_named_by_offset_without_the_cuda_kernel():
    acc = only_access(
        entry(
            """
        ld.param.u32 %r1, [k_param_0+8];
        ld.param.u64 %rd1, [k_param_0+16];
        mul.wide.u32 %rd3, %r1, 4;
        add.s64 %rd4, %rd1, %rd3;
        ld.global.f32 %f1, [%rd4];
    """,
            params=".param .align 8 .b8 k_param_0[24]",
        )
    )
    assert acc.ptr.region == "param:param_0.field16"
    assert acc.ptr.offset == S.sym("param_0.field8") * 4


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "mangled, shown",
    [
        ("_Z12bank_stride4PKiPii", "bank_stride4"),
        ("_Z9transposeILi32EEvPfS0_", "transpose<32>"),
        ("_ZN2ns6kernelEPf", "ns::kernel"),
        ("plain_c_kernel", "plain_c_kernel"),
    ],
)
def test_demangle_gives_the_cuda_name(mangled, shown):
    assert demangle(mangled).display == shown


def test_function_local_shared_array_is_named_as_in_cuda():
    assert demangle_variable("_ZZ12bank_stride4PKiPiiE4data") == "data"
    assert demangle_variable("_ZZ9transposePfS_iiE5block") == "block"
    assert demangle_variable("global_tile") == "global_tile"


# ----------------------------------------------------------------------------- positions and check


STRIDE4 = entry(
    """
    .shared .align 4 .b8 _ZZ1kvE4data[512];
    .loc 1 23 5
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 4;
    mov.u32 %r3, _ZZ1kvE4data;
    add.s32 %r4, %r3, %r2;
    ld.shared.u32 %r5, [%r4];
    .loc 1 24 5
    st.shared.u32 [%r4], %r5;
""",
    tail='.file 1 "/src/stride.cu"\n',
)


def test_findings_are_reported_at_the_cuda_line_of_the_loc(tmp_path):
    path = tmp_path / "stride.ptx"
    path.write_text(STRIDE4)
    report = check_file(str(path), Options(block=(32, 1, 1)))
    assert report.diagnostics == []
    got = [(f.code, report.locate(f.span)) for f in report.findings]
    assert [(code, loc.path, loc.line, loc.column) for code, loc in got] == [
        ("WL101", "/src/stride.cu", 23, 5),
        ("WL101", "/src/stride.cu", 24, 5),
    ]
    assert [c.per_request for k in report.kernels for c in k.costs] == [4, 4]


def test_without_lineinfo_findings_are_reported_at_the_ptx_line(tmp_path):
    text = "\n".join(line for line in STRIDE4.splitlines() if not line.strip().startswith((".loc", ".file")))
    path = tmp_path / "stride.ptx"
    path.write_text(text)
    report = check_file(str(path), Options(block=(32, 1, 1)))
    lines = text.splitlines()
    load_line = next(i for i, line in enumerate(lines, 1) if line.strip().startswith("ld.shared"))
    loc = report.locate(report.findings[0].span)
    indent = len(lines[load_line - 1]) - len(lines[load_line - 1].lstrip())
    assert (loc.path, loc.line, loc.column) == (str(path), load_line, indent + 1)


def test_ptx_syntax_error_is_wl901_at_its_line(tmp_path):
    path = tmp_path / "bad.ptx"
    path.write_text(entry("mov.u32 %r1, %tid.x\n    add.s32 %r2, %r1 %r1;\n"))
    report = check_file(str(path), Options())
    (d,) = report.diagnostics
    assert (d.code, d.location.line) == ("WL901", 12)  # the line missing its comma
    assert not report.has_tool_error


def test_via_ptx_without_nvcc_is_a_tool_error(tmp_path, monkeypatch):
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(float *a) { a[threadIdx.x] = 0; }\n")
    monkeypatch.setenv("PATH", str(tmp_path))
    report = check_file(str(cu), Options(via_ptx=True))
    (d,) = report.diagnostics
    assert d.code == "WL910" and "nvcc is not on the PATH" in d.message
    assert report.has_tool_error


def test_bfi_of_block_row_and_lane_is_their_sum():
    acc = only_access(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        mov.u32 %r1, %ctaid.y;
        mov.u32 %r2, %tid.x;
        and.b32 %r3, %r2, 31;
        bfi.b32 %r4, %r1, %r3, 5, 27;
        mul.wide.u32 %rd3, %r4, 4;
        add.s64 %rd4, %rd1, %rd3;
        st.global.u32 [%rd4], %r4;
    """)
    )
    assert acc.ptr.offset == (S.bitand(TX, S.const(31)) + S.sym("blockIdx.y") * 32) * 4


def test_pointer_moved_by_a_chain_of_adds_is_an_induction_with_the_summed_step():
    acc = flow_of(
        entry("""
        ld.param.u64 %rd1, [k_param_0];
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd30, %rd1, %rd2;
        mul.wide.u32 %rd5, %r9, 4;
        mov.u32 %r5, 0;
    $L__BB0_1:
        ld.global.f32 %f1, [%rd30];
        add.s64 %rd22, %rd30, %rd5;
        add.s64 %rd30, %rd22, %rd5;
        add.s32 %r5, %r5, 1;
        setp.lt.s32 %p1, %r5, 8;
        @%p1 bra $L__BB0_1;
        ret;
    """)
    ).accesses[0]
    assert acc.ptr.offset == TX * 4 + S.sym("k@1") * N * 8


def _cli(*args: str, env: dict | None = None):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    full_env = {**os.environ, "PYTHONPATH": str(root), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "analyzer", "check", "-q", "--no-color", *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=full_env,
        timeout=600,
    )


def test_cli_checks_a_ptx_file_and_exits_1_on_findings(tmp_path):
    path = tmp_path / "stride.ptx"
    path.write_text(STRIDE4)
    done = _cli("--block", "32", str(path))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        "/src/stride.cu:23:5: warning: 4-way bank conflict on `data`: 4 wavefronts per request, ideal 1 [WL101]"
    )


def test_cli_via_ptx_without_nvcc_exits_2(tmp_path):
    import sys

    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(float *a) { a[threadIdx.x] = 0; }\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    done = _cli("--via-ptx", str(cu), env={"PATH": str(bindir)})
    assert done.returncode == 2
    assert "--via-ptx needs nvcc, and nvcc is not on the PATH [WL910]" in done.stdout


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
def test_cli_via_ptx_reports_the_bank_conflict_at_the_cuda_line():
    done = _cli("--via-ptx", "samples/000_bank_stride4.cu")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        "samples/000_bank_stride4.cu:23:5: warning: 4-way bank conflict on `data`: "
        "4 wavefronts per request, ideal 1 [WL101]"
    )


def test_div_rem_min_max_neg_sub_and_laneid_follow_the_cuda_expressions():
    flow = flow_of(
        entry("""
        ld.param.u32 %r9, [k_param_1];
        mov.u32 %r1, %tid.x;
        div.u32 %r2, %r1, 32;
        rem.u32 %r3, %r1, 32;
        min.u32 %r4, %r1, %r9;
        max.s32 %r5, %r1, 7;
        neg.s32 %r6, %r1;
        sub.s32 %r7, %r9, %r1;
        mov.u32 %r8, %laneid;
        cvt.u64.u32 %rd1, %r3;
        ret;
    """),
        launch=LaunchConfig((64, 2, 1), None, "test"),
    )
    env = flow.exit_env[0]
    assert env["%r2"] == S.floordiv(TX, S.const(32))
    assert env["%r3"] == S.mod(TX, S.const(32))
    assert env["%r4"] == S.minimum(TX, N)
    assert env["%r5"] == S.maximum(TX, S.const(7))
    assert env["%r6"] == -TX
    assert env["%r7"] == N - TX
    assert env["%r8"] == S.mod(TX + TY * 64, S.const(32))
    assert env["%rd1"] == env["%r3"]


def test_predicated_load_is_masked_by_its_guard_and_float_math_is_unknown():
    flow = flow_of(
        entry("""
        .shared .align 4 .b8 s[512];
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 8;
        mov.u32 %r2, s;
        @%p1 ld.shared.f32 %f1, [%r2];
        add.f32 %f2, %f1, %f1;
        cvt.rzi.s32.f32 %r3, %f2;
        ret;
    """)
    )
    (acc,) = flow.accesses
    assert acc.mask == S.compare("<", TX, S.const(8))
    assert S.is_unknown(flow.exit_env[0]["%f2"]) and S.is_unknown(flow.exit_env[0]["%r3"])


def test_cvta_to_shared_of_a_generic_shared_pointer_stays_shared():
    acc = only_access(
        entry("""
        .shared .align 4 .b8 s[512];
        mov.u64 %rd1, s;
        cvta.shared.u64 %rd2, %rd1;
        cvta.to.shared.u64 %rd3, %rd2;
        cvt.u32.u64 %r1, %rd3;
        mov.u32 %r2, %tid.x;
        mad.lo.s32 %r3, %r2, 8, %r1;
        st.shared.v2.u32 [%r3], {%r2, %r2};
    """)
    )
    assert (acc.space, acc.op, acc.bytes, acc.ptr.region) == ("shared", "store", 8, "shared:s")
    assert acc.ptr.offset == TX * 8


def test_cp_async_is_a_global_read_and_a_shared_write_of_the_copy_size():
    text = entry("""
        .shared .align 16 .b8 tile[4096];
        ld.param.u64 %rd1, [k_param_0];
        cvta.to.global.u64 %rd2, %rd1;
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd3, %r1, 64;
        add.s64 %rd4, %rd2, %rd3;
        shl.b32 %r2, %r1, 4;
        mov.u32 %r3, tile;
        add.s32 %r4, %r3, %r2;
        cp.async.cg.shared.global [%r4], [%rd4], 16, 16;
        cp.async.commit_group;
    """)
    flow = flow_of(text)
    assert [(a.space, a.op, a.bytes, a.ptr.offset) for a in flow.accesses] == [
        ("global", "load", 16, TX * 64),
        ("shared", "store", 16, TX * 16),
    ]
    assert flow.accesses[0].text == "cp.async.cg.shared.global [%r4], [%rd4]"
    costs = _costs(text)
    # 64-byte stride: each lane's 16 bytes lie in a sector of their own (32, ideal 512/32 = 16);
    # packed 16-byte shared stores take 4 wavefronts, the ideal
    assert [(c.op, c.per_request, c.ideal_per_request) for c in costs] == [("load", 32, 16), ("store", 4, 4)]
