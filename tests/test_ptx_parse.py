"""The PTX front end: grammars/ptx.lark + analyzer/ptx/parse.py.

The fixtures in tests/fixtures/ptx/ are nvcc 13.0 output for the tiny kernels
next to them (see generate.sh there); line numbers below are lines of those files.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from pathlib import Path

import pytest

from analyzer.diagnostics import Severity
from analyzer.grammar_files import grammar_digest
from analyzer.ptx import (
    Addr,
    AddrList,
    Imm,
    Not,
    ParamList,
    PtxInstruction,
    PtxLabel,
    PtxModule,
    PtxSyntaxError,
    Reg,
    RegPair,
    Sink,
    SpecialReg,
    Sym,
    Vec,
    grammar_path,
    parse_ptx,
    ptx_parser,
)
from analyzer.ptx import parse as parse_module

FIXTURES = Path(__file__).parent / "fixtures" / "ptx"


def load(name: str, **kw) -> PtxModule:
    path = FIXTURES / name
    return parse_ptx(path.read_text(), str(path), **kw)


def at_line(fn, line: int) -> PtxInstruction:
    (insn,) = [s for s in fn.instructions if s.line == line]
    return insn


def ops(text: str) -> tuple:
    """The operands of the single instruction in `text`, parsed inside a tiny kernel."""
    module = parse_ptx(f".version 9.0\n.target sm_80\n.address_size 64\n.entry k()\n{{\n{text}\n}}\n", "<test>")
    (insn,) = module.functions[0].body
    return insn.operands


# ---------------------------------------------------------------- the grammar


def test_grammar_builds_with_no_conflicts_in_strict_mode():
    assert ptx_parser(strict=True, tree=True) is not None


def test_grammar_is_found_in_the_source_tree():
    assert grammar_path("ptx.lark") == Path(parse_module.__file__).resolve().parents[2] / "grammars" / "ptx.lark"


def test_grammar_is_found_in_an_installed_package(monkeypatch, tmp_path):
    (tmp_path / "ptx.lark").write_text("start: \n")
    monkeypatch.setattr(Path, "is_file", lambda self: False)
    monkeypatch.setattr(
        importlib.resources, "files", lambda package: tmp_path if package == "analyzer.grammars" else None
    )
    assert grammar_path("ptx.lark") == tmp_path / "ptx.lark"


def test_parser_is_cached_in_the_user_cache_dir_by_grammar_hash(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    parser = ptx_parser.__wrapped__()
    digest = grammar_digest(grammar_path("ptx.lark").read_text(encoding="utf-8"))
    (cache,) = (tmp_path / "warplint").glob("ptx-*.lark-cache")
    assert cache.name == f"ptx-{digest}.lark-cache"
    again = ptx_parser.__wrapped__()  # loads from the cache file
    assert cache.stat().st_size > 0
    text = (FIXTURES / "reduce.sm_80.ptx").read_text()
    assert len(parser.parse(text)) == len(again.parse(text))


# ---------------------------------------------------------------- the reduction fixture


def test_reduction_header_and_kernel_signature():
    m = load("reduce.sm_80.ptx")
    assert (m.version, m.target, m.address_size, m.target_options) == ("9.0", "sm_80", 64, ())
    assert m.files == {}
    (k,) = m.functions
    assert k.name == "_Z10reduce_sumPKfPfi" and k.is_entry and k.linkage == ("visible",)
    assert [(p.name, p.type, p.space) for p in k.params] == [
        ("_Z10reduce_sumPKfPfi_param_0", "u64", "param"),
        ("_Z10reduce_sumPKfPfi_param_1", "u64", "param"),
        ("_Z10reduce_sumPKfPfi_param_2", "u32", "param"),
    ]
    assert (k.line, k.end_line) == (16, 85)
    assert k.maxntid is None and k.reqntid is None


def test_reduction_demoted_shared_array_and_register_ranges():
    (k,) = load("reduce.sm_80.ptx").functions
    shared = [d for d in k.decls if d.space == "shared"]
    assert [(d.name, d.type, d.align, d.array_size, d.line) for d in shared] == [
        ("_ZZ10reduce_sumPKfPfiE1s", "b8", 4, 1024, 27)
    ]
    regs = {d.name: (d.type, d.count) for d in k.decls if d.space == "reg"}
    assert regs == {"%p": ("pred", 6), "%f": ("f32", 9), "%r": ("b32", 15), "%rd": ("b64", 9)}


def test_reduction_instructions_opcodes_modifiers_and_operands():
    (k,) = load("reduce.sm_80.ptx").functions
    ld = at_line(k, 29)
    assert (ld.opcode, ld.modifiers, ld.full_opcode) == ("ld", ("param", "u64"), "ld.param.u64")
    assert ld.operands == (Reg("%rd1"), Addr("_Z10reduce_sumPKfPfi_param_0", 0))
    assert at_line(k, 32).operands == (Reg("%r1"), SpecialReg("%ntid.x"))
    assert at_line(k, 33).operands[1] == SpecialReg("%ctaid.x")
    mad = at_line(k, 35)
    assert (mad.opcode, mad.modifiers) == ("mad", ("lo", "s32"))
    assert mad.operands == (Reg("%r4"), Reg("%r2"), Reg("%r1"), Reg("%r3"))
    assert at_line(k, 37).operands == (Reg("%f8"), Imm(0.0))
    nc = at_line(k, 43)
    assert (nc.opcode, nc.modifiers, nc.operands) == ("ld", ("global", "nc", "f32"), (Reg("%f8"), Addr("%rd5", 0)))
    assert at_line(k, 47).operands == (Reg("%r11"), Sym("_ZZ10reduce_sumPKfPfiE1s"))
    st = at_line(k, 49)
    assert (st.full_opcode, st.operands) == ("st.shared.f32", (Addr("%r5", 0), Reg("%f8")))
    bar = at_line(k, 50)
    assert (bar.opcode, bar.modifiers, bar.operands) == ("bar", ("sync",), (Imm(0),))
    assert at_line(k, 76).operands == (Reg("%f7"), Addr("_ZZ10reduce_sumPKfPfiE1s", 0))
    ret = at_line(k, 83)
    assert (ret.opcode, ret.modifiers, ret.operands, ret.predicate) == ("ret", (), (), None)


def test_reduction_labels_and_predicated_branches_in_order():
    (k,) = load("reduce.sm_80.ptx").functions
    labels = [(s.name, s.line) for s in k.body if isinstance(s, PtxLabel)]
    assert labels == [("$L__BB0_2", 45), ("$L__BB0_3", 55), ("$L__BB0_5", 66), ("$L__BB0_6", 72), ("$L__BB0_8", 82)]
    bra = at_line(k, 38)
    assert (bra.opcode, bra.predicate, bra.operands) == ("bra", (Reg("%p1"), False), (Sym("$L__BB0_2"),))
    assert k.labels["$L__BB0_3"] == next(i for i, s in enumerate(k.body) if getattr(s, "name", None) == "$L__BB0_3")
    lines = [s.line for s in k.body]
    assert lines == sorted(lines) and len(set(lines)) == len(lines)
    assert all(s.loc is None for s in k.instructions)  # compiled without -lineinfo


# ---------------------------------------------------------------- float4 and .loc


def test_float4_loads_and_stores_are_vectors():
    (k,) = load("vec4.sm_80.lineinfo.ptx").functions
    ld = at_line(k, 47)
    assert (ld.opcode, ld.modifiers) == ("ld", ("global", "nc", "v4", "f32"))
    assert ld.operands == (Vec((Reg("%f2"), Reg("%f3"), Reg("%f4"), Reg("%f5"))), Addr("%rd5", 0))
    st = at_line(k, 58)
    assert st.operands == (Addr("%rd7", 0), Vec((Reg("%f13"), Reg("%f12"), Reg("%f11"), Reg("%f10"))))
    assert k.params[2].type == "f32"


def test_loc_maps_each_instruction_to_the_latest_loc_in_its_function():
    m = load("vec4.sm_80.lineinfo.ptx")
    assert list(m.files) == [1] and m.files[1].endswith("tests/fixtures/ptx/vec4.cu")
    (k,) = m.functions
    assert at_line(k, 29).loc == (1, 2, 0)
    assert at_line(k, 34).loc == (1, 3, 5)  # mov.u32 %r3, %ctaid.x
    assert at_line(k, 39).loc == (1, 4, 5)  # setp
    assert at_line(k, 47).loc == (1, 5, 9)  # the float4 load: `float4 v = in[i];`
    assert at_line(k, 53).loc == (1, 6, 9)
    assert at_line(k, 58).loc == (1, 7, 9)  # the float4 store: `out[i] = v;`
    assert at_line(k, 62).loc == (1, 9, 1)  # ret, after a label: .loc carries across labels
    assert all(i.inlined_at is None for i in k.instructions)


def test_inlined_loc_keeps_the_call_site_and_the_inlined_function():
    m = load("inline.sm_90.lineinfo.ptx")
    (k,) = m.functions
    mul = at_line(k, 51)  # x * x of sq(), inlined into sum3(), inlined into the kernel
    assert (mul.full_opcode, mul.loc, mul.inlined_at, mul.inlined_from) == ("mul.f32", (1, 2, 73), (1, 3, 73), "_Z2sqf")
    fma = at_line(k, 53)
    assert (fma.loc, fma.inlined_at, fma.inlined_from) == ((1, 3, 73), (1, 7, 5), "_Z4sum3PKfi")
    add = at_line(k, 57)
    assert (add.loc, add.inlined_at, add.inlined_from) == ((1, 7, 5), None, None)


# ---------------------------------------------------------------- calls, loops, directives


def test_device_function_with_return_param_and_call_sequence():
    m = load("call.sm_90.lineinfo.ptx")
    hyp, kernel = m.functions
    assert (hyp.name, hyp.is_entry, hyp.linkage) == ("_Z3hypff", False, ())
    assert [(p.name, p.type) for p in hyp.returns] == [("func_retval0", "b32")]
    assert [p.name for p in hyp.params] == ["_Z3hypff_param_0", "_Z3hypff_param_1"]
    assert at_line(hyp, 29).operands == (Addr("func_retval0", 0), Reg("%f5"))
    call = at_line(kernel, 81)  # spread over lines 81..86
    assert (call.opcode, call.modifiers) == ("call", ("uni",))
    assert call.operands == (ParamList((Sym("retval0"),)), Sym("_Z3hypff"), ParamList((Sym("param0"), Sym("param1"))))
    assert call.loc == (1, 6, 9)
    # the `{ // callseq }` block is flattened; its declarations go to decls
    assert [d.name for d in kernel.decls if d.space == "param"] == ["param0", "param1", "retval0"]
    assert [i.line for i in kernel.instructions if 70 <= i.line <= 92] == [70, 71, 72, 73, 77, 79, 81, 87, 89, 90, 92]


def test_kernel_performance_directives_and_loop_back_edge():
    _, k = load("call.sm_90.lineinfo.ptx").functions
    assert (k.maxntid, k.minnctapersm, k.reqntid, k.maxnreg) == ((128, 1, 1), 4, None, None)
    assert k.directives == (("maxntid", (128, 1, 1)), ("minnctapersm", (4,)))
    back = at_line(k, 95)
    assert (back.predicate, back.operands) == ((Reg("%p2"), False), (Sym("$L__BB1_2"),))
    assert k.labels["$L__BB1_2"] < k.body.index(back)
    assert at_line(k, 72).operands == (Reg("%f1"), Addr("%rd6", -4))  # [%rd6+-4]
    assert at_line(k, 62).operands == (Reg("%r10"), SpecialReg("%nctaid.x"))


def test_same_kernel_for_sm_75_without_lineinfo():
    m = load("call.sm_75.ptx")
    assert m.target == "sm_75" and m.files == {}
    assert [f.name for f in m.functions] == ["_Z3hypff", "_Z7stencilPKfPfi"]
    assert [i.full_opcode for i in m.functions[0].instructions] == [
        "ld.param.f32",
        "ld.param.f32",
        "mul.f32",
        "fma.rn.f32",
        "sqrt.rn.f32",
        "st.param.f32",
        "ret",
    ]


def test_globals_extern_shared_shuffles_and_printf():
    m = load("features.sm_80.ptx")
    (vprintf,) = m.declarations
    assert (vprintf.name, vprintf.linkage, vprintf.defined, len(vprintf.params)) == ("vprintf", ("extern",), False, 2)
    g = {v.name: v for v in m.globals}
    assert (g["coeffs"].space, g["coeffs"].align, g["coeffs"].array_size, g["coeffs"].line) == ("const", 4, 16, 20)
    assert g["coeffs"].init == (0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64)
    assert (g["counter"].space, g["counter"].type, g["counter"].init, g["counter"].array_size) == (
        "global",
        "u32",
        7,
        None,
    )
    assert (g["dyn"].linkage, g["dyn"].space, g["dyn"].align, g["dyn"].array_size, g["dyn"].dims) == (
        ("extern",),
        "shared",
        16,
        0,
        (None,),
    )
    assert g["$str"].array_size == 8
    (k,) = m.functions
    assert [(d.name, d.space, d.array_size) for d in k.decls[:3]] == [
        ("__local_depot0", "local", 8),
        ("%SP", "reg", None),
        ("%SPL", "reg", None),
    ]
    shfl = at_line(k, 56)
    assert (shfl.opcode, shfl.modifiers) == ("shfl", ("sync", "bfly", "b32"))
    assert shfl.operands == (RegPair(Reg("%r6"), Reg("%p1")), Reg("%r2"), Reg("%r4"), Reg("%r3"), Reg("%r5"))
    assert at_line(k, 55).operands == (Reg("%r5"), Imm(-1))
    assert at_line(k, 83).full_opcode == "bar.warp.sync" and at_line(k, 83).operands == (Imm(-1),)
    assert at_line(k, 89).operands == (Reg("%r23"), Addr("%rd8", 0), Imm(1))
    assert at_line(k, 108).operands[1] == Sym("vprintf")
    assert at_line(k, 104).operands == (Addr("param0", 0), Reg("%rd12"))


def test_debug_build_skips_dwarf_sections():
    m = load("vec4.sm_80.debug.ptx")
    assert (m.target, m.target_options) == ("sm_80", ("debug",))
    (k,) = m.functions
    assert k.body[0] == PtxLabel("$L__func_begin0", 30)
    ld = at_line(k, 60)
    assert (ld.opcode, ld.modifiers) == ("ld", ("v4", "u32"))
    assert ld.operands == (Vec((Reg("%r7"), Reg("%r8"), Reg("%r9"), Reg("%r10"))), Addr("%rd5", 0))
    assert at_line(k, 61).operands[0] == Addr("%SP", 0)
    assert k.end_line == 90  # the `.section .debug_*` blocks after it are skipped
    assert m.globals == () and len(m.functions) == 1


# ---------------------------------------------------------------- syntax nvcc can emit, written by hand


def test_operand_forms():
    assert ops("@!%p1 ld.global.v4.f32 {%f1, _, %f3, _}, [%rd4+16];") == (
        Vec((Reg("%f1"), Sink(), Reg("%f3"), Sink())),
        Addr("%rd4", 16),
    )
    assert ops("setp.lt.s32 %p1|%p2, %r1, 0x1F;") == (RegPair(Reg("%p1"), Reg("%p2")), Reg("%r1"), Imm(31))
    assert ops("and.pred %p3, %p1, !%p2;") == (Reg("%p3"), Reg("%p1"), Not(Reg("%p2")))
    assert ops("mov.f32 %f1, 0f3F800000;") == (Reg("%f1"), Imm(1.0))
    assert ops("mov.f64 %fd1, 0dBFF0000000000000;") == (Reg("%fd1"), Imm(-1.0))
    assert ops("ld.shared.u32 %r1, [tile+8];") == (Reg("%r1"), Addr("tile", 8))
    assert ops("mov.u64 %rd1, tile+16;") == (Reg("%rd1"), Sym("tile", 16))
    assert ops("ld.shared.u32 %r1, [%r2-4];") == (Reg("%r1"), Addr("%r2", -4))
    assert ops("ld.shared.u32 %r1, [%r2 - 4];") == (Reg("%r1"), Addr("%r2", -4))
    assert ops("mov.u32 %r1, %laneid;") == (Reg("%r1"), SpecialReg("%laneid"))
    assert ops("mov.u64 %rd1, %clock64;")[1] == SpecialReg("%clock64")
    assert ops("mov.u32 %r1, %warpid;")[1].base == "%warpid"
    assert ops("mov.u32 %r1, %ctaid.y;")[1].component == "y"
    assert ops("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];")[1] == AddrList(
        (Reg("%rd1"), Vec((Reg("%f5"), Reg("%f6"))))
    )
    assert ops("call.uni _Z3foov, ();") == (Sym("_Z3foov"), ParamList(()))
    assert ops("mov.u32 %r1, 017;") == (Reg("%r1"), Imm(15))
    assert ops("mul.hi.s64 %rd1, %rd2, -5270498306774157605;")[2] == Imm(-5270498306774157605)


def test_predicate_and_opcode_forms():
    module = parse_ptx(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.entry k()\n{\n"
        "@%p1 bra.uni $L__BB0_2;\n"
        "@!%p2 exit;\n"
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];\n"
        "wgmma.fence.sync.aligned;\n"
        "$L__BB0_2:\n"
        "ret;\n}\n",
        "<test>",
    )
    a, b, c, d, label, ret = module.functions[0].body
    assert (a.predicate, a.full_opcode) == ((Reg("%p1"), False), "bra.uni")
    assert (b.predicate, b.opcode, b.line) == ((Reg("%p2"), True), "exit", 7)
    assert (c.opcode, c.modifiers[0]) == ("cp", "async")
    assert c.modifiers[1:] == ("bulk", "tensor", "2d", "shared::cluster", "global", "mbarrier::complete_tx::bytes")
    assert c.operands[1] == AddrList((Reg("%rd1"), Vec((Reg("%r2"), Reg("%r3")))))
    assert (d.opcode, d.modifiers, d.operands) == ("wgmma", ("fence", "sync", "aligned"), ())
    assert (label, ret.line) == (PtxLabel("$L__BB0_2", 10), 11)


HANDWRITTEN = """\
//
// Generated by hand, in the forms nvcc 12 uses
//
.version 8.5
.target sm_90a
.address_size 64

.file 1 "/src/k.cu", 1712345678, 4096
.file 2 "/usr/local/cuda/include/cuda_fp16.hpp"
.global .attribute(.managed) .align 4 .b8 managed_buf[16];
.global .align 8 .u64 _ZTV4Base[3] = {0, 0, _ZNK4Base1fEf};
.global .align 8 .u64 ptr = generic($str);
.visible .shared .align 4 .b8 grid2d[2][3];
.weak .func _Z4weakv
(
)
;

/* a block
   comment */
.visible .entry _Z6kernelPfS_(
	.param .u64 .ptr .global .align 16 _Z6kernelPfS__param_0,
	.param .align 8 .b8 _Z6kernelPfS__param_1[24]
)
.reqntid 256, 1, 1
.maxnreg 32
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<9>;
	.loc	1 12 3
	.pragma "nounroll";
	brx.idx 	%r1, $L_brx_0;
$L_brx_0: .branchtargets
	$L__BB0_1,
	$L__BB0_2;
$L__BB0_1:
	// begin inline asm
	{
	.reg .pred p, q;
	setp.ne.b32 p, %r1, 0;
	@p add.u32 %r2, %r2, 1;
	}
	// end inline asm
$L__BB0_2:
	{ // callseq 1, 0
	.param .b64 param0;
	prototype_1 : .callprototype ()_ (.param .b64 _);
	call
	%rd8,
	(
	param0
	)
	, prototype_1;
	}
	.loc	2 100 7
	ret;
}
	.section	.debug_abbrev
	{
.b8 1
.b8 17
	}
"""


def test_handwritten_module_with_every_directive():
    m = parse_ptx(HANDWRITTEN, "k.ptx")
    assert (m.version, m.target, m.files) == (
        "8.5",
        "sm_90a",
        {1: "/src/k.cu", 2: "/usr/local/cuda/include/cuda_fp16.hpp"},
    )
    g = {v.name: v for v in m.globals}
    assert g["managed_buf"].attributes == ("managed",)
    assert g["_ZTV4Base"].init == (0, 0, "_ZNK4Base1fEf")
    assert g["ptr"].init == "generic($str)"
    assert (g["grid2d"].dims, g["grid2d"].array_size, g["grid2d"].linkage) == ((2, 3), 6, ("visible",))
    (weak,) = m.declarations
    assert (weak.name, weak.linkage, weak.params) == ("_Z4weakv", ("weak",), ())
    (k,) = m.functions
    p0, p1 = k.params
    assert (p0.type, p0.ptr_space, p0.align) == ("u64", "global", 16)
    assert (p1.type, p1.align, p1.array_size) == ("b8", 8, 24)
    assert (k.reqntid, k.maxnreg, k.maxntid) == ((256, 1, 1), 32, None)
    assert k.pragmas == ("nounroll",)
    assert k.branch_targets == (("$L_brx_0", ("$L__BB0_1", "$L__BB0_2")),)
    (proto,) = k.prototypes
    assert (proto.name, proto.returns, [p.type for p in proto.params]) == ("prototype_1", (), ["b64"])
    setp = next(i for i in k.instructions if i.opcode == "setp")
    assert setp.operands == (Reg("p"), Reg("%r1"), Imm(0))  # `.reg .pred p` of inline asm
    add = next(i for i in k.instructions if i.opcode == "add")
    assert add.predicate == (Reg("p"), False) and add.loc == (1, 12, 3)
    call = next(i for i in k.instructions if i.opcode == "call")
    assert call.operands == (Reg("%rd8"), ParamList((Sym("param0"),)), Sym("prototype_1"))
    assert call.line == 48
    ret = k.body[-1]
    assert (ret.opcode, ret.line, ret.loc) == ("ret", 56, (2, 100, 7))
    assert k.end_line == 57


def test_equal_nan_literals_give_equal_nodes():
    assert ops("mov.f32 %f1, 0f7FFFFFFF;") == ops("mov.f32 %f1, 0f7FFFFFFF;")


def test_alias_hidden_param_and_loc_with_other_attributes():
    m = parse_ptx(
        ".version 9.1\n.target sm_90\n.address_size 64\n"
        ".func f()\n{\n ret;\n}\n.alias g, f;\n"
        ".visible .entry k(\n .hidden .param .align 64 .b8 k_param_0[128]\n)\n"
        "{\n .loc 1 2 3, discriminator 4\n ret;\n}\n",
        "<test>",
    )
    assert m.aliases == (("g", "f"),)
    _, k = m.functions
    assert [(p.name, p.align, p.array_size) for p in k.params] == [("k_param_0", 64, 128)]
    assert k.body[0].loc == (1, 2, 3)


def test_nodes_are_frozen():
    (k,) = load("reduce.sm_80.ptx").functions
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.body[0].line = 3  # type: ignore[misc]


# ---------------------------------------------------------------- errors


BROKEN = """\
.version 9.0
.target sm_80
.address_size 64

.visible .entry good1()
{
	ret;
}

.visible .entry bad()
{
	add.s32 	%r1, %r2 %r3;
	ret;
}

.visible .entry good2()
{
	ret;
}
"""


def test_syntax_error_has_the_exact_line_and_column():
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(BROKEN, "broken.ptx")
    e = info.value
    assert (e.line, e.column) == (12, 20)
    assert e.function == "bad" and e.path == "broken.ptx"
    assert "unexpected REG '%r3'" in e.message and "','" in e.message
    assert str(e).startswith("broken.ptx:12:20: unexpected REG '%r3'")


def test_unexpected_character_position():
    text = ".version 9.0\n.target sm_80\n.entry k()\n{\n    mov.u32 %r1, #3;\n}\n"
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(text, "x.ptx")
    assert (info.value.line, info.value.column) == (5, 18)
    assert "'#'" in info.value.message


def test_missing_closing_brace_is_reported_at_the_end():
    with pytest.raises(PtxSyntaxError) as info:
        parse_ptx(".version 9.0\n.entry k()\n{\n  ret;\n", "x.ptx")
    assert info.value.line == 5


def test_recovery_loses_only_the_broken_function():
    m = parse_ptx(BROKEN, "broken.ptx", recover=True)
    assert [f.name for f in m.functions] == ["good1", "good2"]
    assert m.failed_functions == ("bad",)
    (d,) = m.diagnostics
    assert d.severity is Severity.ERROR and d.code == "WL901"
    assert (d.location.path, d.location.line, d.location.column) == ("broken.ptx", 12, 20)
    assert d.notes == ("function `bad` was skipped",)
    assert m.functions[1].body[0].line == 18  # lines stay exact after the skipped function


def test_recovery_on_a_clean_file_reports_nothing():
    m = load("features.sm_80.ptx", recover=True)
    assert m.diagnostics == () and m.failed_functions == ()


def test_the_grammar_digest_is_crc32_then_adler32_and_changes_with_the_text():
    assert grammar_digest("start: A\n") == "ce28103f111f02d4"  # CRC-32 then Adler-32 of its bytes
    assert grammar_digest("") == "0000000000000001"  # (Adler-32 starts at 1)
    assert len({grammar_digest(t) for t in ("start: A\n", "start: B\n", "start: A \n", "start:A\n")}) == 4
