"""warplint's layout calculator checked against the real compiler.

For every type of the expectations table in tests/test_types.py, warplint parses the
definitions and computes `sizeof`, `alignof` and each field's `offsetof`; those numbers
(warplint's, not the table's) become `static_assert`s in a generated .cu file, which
`nvcc -c -arch=sm_90` must compile. Skipped when nvcc is not on PATH.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.ir import types as T

NVCC = shutil.which("nvcc")
pytestmark = [pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH"), pytest.mark.slow]


def _table_module():
    path = Path(__file__).with_name("test_types.py")
    spec = importlib.util.spec_from_file_location("warplint_layout_table", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


TABLE = _table_module()

HEADER = "#include <cstddef>\n#include <cstdint>\n#include <cuda_fp16.h>\n"


def static_asserts(layouts, computed: list[T.CType]) -> list[str]:
    """One `static_assert` per number warplint computed: size, alignment, each known offset."""
    out = []
    for i, (entry, t) in enumerate(zip(layouts, computed)):
        probe = f"__probe_{i}"
        assert t.size is not None and t.align is not None, entry.type
        out.append(f'static_assert(sizeof({probe}) == {t.size}, "sizeof({entry.type}) == {t.size}");')
        out.append(f'static_assert(alignof({probe}) == {t.align}, "alignof({entry.type}) == {t.align}");')
        if isinstance(t, T.StructType):
            for f in t.fields:
                if f.offset is not None and f.name:
                    out.append(
                        f"static_assert(offsetof({probe}, {f.name}) == {f.offset}, "
                        f'"offsetof({entry.type}, {f.name}) == {f.offset}");'
                    )
    return out


def generated_source(layouts=None) -> tuple[str, int]:
    layouts = TABLE.LAYOUTS if layouts is None else layouts
    asserts = static_asserts(layouts, TABLE.warplint_layouts(layouts))
    return HEADER + TABLE.probe_source(layouts) + "\n".join(asserts) + "\n", len(asserts)


def nvcc_compile(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    cu = tmp_path / "layouts.cu"
    cu.write_text(source)
    return subprocess.run(
        [NVCC, "-c", "-arch=sm_90", str(cu), "-o", str(tmp_path / "layouts.o")],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_nvcc_accepts_every_size_alignment_and_offset_warplint_computes(tmp_path):
    source, count = generated_source()
    assert count >= 3 * 30  # sizes, alignments and offsets of the whole table
    done = nvcc_compile(source, tmp_path)
    failed = [line for line in done.stderr.splitlines() if "static assertion failed" in line or "static_assert" in line]
    assert done.returncode == 0, "nvcc rejected warplint's layout:\n" + "\n".join(failed or [done.stderr[-4000:]])


def test_a_wrong_number_is_rejected_by_nvcc(tmp_path):
    # the harness itself: one deliberately wrong layout must make the compile fail
    source = HEADER + 'static_assert(sizeof(float3) == 16, "sizeof(float3) == 16");\n'
    done = nvcc_compile(source, tmp_path)
    assert done.returncode != 0
    assert "sizeof(float3) == 16" in done.stderr


#: CUDA's named types whose sizes and alignments warplint knows without reading a header.
CUDA_TYPE_NAMES = (
    "clock_t", "size_t", "long long", "unsigned long long", "__half", "__half2", "__nv_bfloat16",
    "__nv_bfloat162", "cudaTextureObject_t", "cudaSurfaceObject_t", "dim3", "cuFloatComplex",
    "cuDoubleComplex", "wchar_t", "char16_t", "char32_t", "int64_t", "uintptr_t",
    *(f"{base}{n}" for base in ("char", "uchar", "short", "ushort", "int", "uint", "float") for n in (1, 2, 3, 4)),
    *(f"{base}{n}" for base in ("long", "ulong", "longlong", "ulonglong", "double") for n in (1, 2, 3)),
)  # fmt: skip


def test_nvcc_agrees_with_the_size_and_alignment_of_cudas_named_types(tmp_path):
    lines = ["#include <ctime>", "#include <cstdint>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>"]
    lines.append("#include <cuComplex.h>")
    for name in CUDA_TYPE_NAMES:
        t = T.builtin_type(name)
        assert t is not None and t.size is not None, name
        lines.append(f'static_assert(sizeof({name}) == {t.size} && alignof({name}) == {t.align}, "{name}");')
    done = nvcc_compile("\n".join(lines) + "\n", tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
