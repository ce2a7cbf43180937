"""`read_asm` reads an instruction that writes a register from a register (`mov.u32 %0,
%%laneid;`) without lark, exactly as the PTX grammar reads it; all else is the grammar's."""

from __future__ import annotations

from analyzer.ir import inline_asm


def _by_lark(template: str) -> list[inline_asm.AsmInstruction]:
    """`read_asm` with every instruction parsed by the PTX grammar (no shortcut)."""
    text = template.replace("\\n", "\n").replace("\\t", " ")
    text = inline_asm._OPERAND.sub(lambda m: "%" if m.group(1) == "%" else f"%_asm{m.group(1)}", text)
    pieces = [p for p in text.split(";") if p.strip()]
    return [inline_asm._instruction(inline_asm._parser().parse(p + ";")) for p in pieces]


PLAIN_TEMPLATES = [
    "mov.u32 %0, %%laneid;",
    "mov.u32 %0, %%lanemask_lt;",
    "bfind.u32 %0, %1;",
    "  mov.u32\t%3 ,  %%smid ;\\n",
    "mov.u32 %0, %%laneid; bfind.u32 %1, %0;",
    "cvt.rn.f16x2.f32 %10, %2;",
]
NOT_PLAIN_TEMPLATES = [
    "ld.acquire.sys.global.u8 %0, [%1];",
    "st.release.sys.global.u8 [%1], %0;",
    "mov.u32 %0, %%tid.x;",
    "add.u32 %0, %1, %2;",
    "red.global.add.u32 [%0], %1;",
    "mov.u32 %0, 5;",
    "@%p1 mov.u32 %0, %1;",
]


def test_a_register_read_from_a_register_is_read_as_the_ptx_grammar_reads_it():
    for template in PLAIN_TEMPLATES + NOT_PLAIN_TEMPLATES:
        assert inline_asm.read_asm(template) == _by_lark(template), template
    assert inline_asm.read_asm("mov.u32 %0, %%laneid;") == [inline_asm.AsmInstruction("mov.u32", (0,))]
    assert inline_asm.read_asm("  mov.u32\t%3 ,  %%smid ;\\n") == [inline_asm.AsmInstruction("mov.u32", (3,))]
    assert inline_asm.read_asm("cvt.rn.f16x2.f32 %10, %2;") == [inline_asm.AsmInstruction("cvt.rn.f16x2.f32", (10,))]


def test_the_shortcut_takes_only_a_register_read_from_a_register():
    shortcut = inline_asm._REGISTER_FROM_REGISTER
    assert [bool(shortcut.match(p)) for p in ("mov.u32 %_asm0, %laneid", " bfind.u32 %_asm0, %_asm1 ")] == [True, True]
    refused = (
        "mov.u32 %_asm0, %tid.x",
        "add.u32 %_asm0, %_asm1, %_asm2",
        "mov.u32 %_asm0, 5",
        "@%p1 mov.u32 %_asm0, %r1",
    )
    assert [bool(shortcut.match(p)) for p in refused] == [False, False, False, False]
    assert (
        inline_asm.read_asm("st.u32 %0, %1;") == _by_lark("st.u32 %0, %1;") == [inline_asm.AsmInstruction("st.u32", ())]
    )
