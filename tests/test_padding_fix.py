"""The padding fix of `bank-conflict` is checked: the file is lowered again with the wider
array and the kernel analysed again (api -> lower(padding=...) -> analyze_kernel)."""

from __future__ import annotations

from pathlib import Path

from analyzer.api import Options, check_file
from analyzer.ir.lower import lower
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

TRANSPOSE = """\
#define TILE 32
__global__ void transpose(float *out, const float *in, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
int main() { float *a, *b; transpose<<<dim3(32, 32), dim3(32, 8)>>>(a, b, 1024); }
"""


def _findings(path: Path) -> list:
    report = check_file(str(path), Options())
    return [(report.locate(f.span).line, report.locate(f.span).column, f.code, f.fix) for f in report.findings]


def test_lowering_with_padding_widens_only_the_named_shared_arrays_last_dimension() -> None:
    pre = preprocess(TRANSPOSE, "t.cu")
    unit = parse(pre.text).unit
    plain = lower(unit, pre.text, "t.cu")
    padded = lower(unit, pre.text, "t.cu", padding={"tile": 1})

    def tile_type(module):
        access = next(a for a in module.kernels[0].accesses if a.array == "tile")
        return next(v for v in _variables(access.address) if v.name == "tile").type

    assert str(tile_type(plain)) == "float[32][32]" and tile_type(plain).size == 32 * 32 * 4
    assert str(tile_type(padded)) == "float[32][33]" and tile_type(padded).size == 32 * 33 * 4
    # the same accesses, in the same order, with the same ids: analyses can be compared
    assert [a.uid for a in plain.kernels[0].accesses] == [a.uid for a in padded.kernels[0].accesses]


def _variables(expr):
    stack = [expr]
    while stack:
        x = stack.pop()
        var = getattr(x, "var", None)
        if var is not None:
            yield var
        for slot in getattr(type(x), "__slots__", ()):
            if slot in ("type", "span", "var", "access"):
                continue
            val = getattr(x, slot, None)
            if hasattr(val, "__slots__"):
                stack.append(val)


def test_the_32_way_column_read_of_a_32x32_tile_gets_the_checked_fix_32_plus_1(tmp_path: Path) -> None:
    source = tmp_path / "transpose.cu"
    source.write_text(TRANSPOSE)
    assert _findings(source) == [
        (
            13,
            32,
            "WL101",
            # in the file's words: `TILE` is a macro there
            "pad the last dimension: `__shared__ float tile[TILE][TILE + 1]` (33 floats per row) makes this "
            "access conflict-free without making another access to `tile` worse",
        )
    ]


def test_the_articles_17_wide_tile_read_by_a_16x16_block_is_fixed_with_18() -> None:
    # block 16x16: a warp holds two rows. Read `block[tx][ty]` with rows of 17 words puts
    # lanes 0 and 31 on bank 0; rows of 18 spread the 32 lanes over 32 banks, and the store
    # `block[ty][tx]` stays at 2 wavefronts (not worse), so 18 is the answer.
    findings = _findings(SAMPLES / "002_transpose_tiled_padded.cu")
    assert findings[1] == (
        44,
        26,
        "WL101",
        "pad the last dimension: `__shared__ float block[BLOCK_DIM][BLOCK_DIM+2]` (18 floats per row) makes this "
        "access conflict-free without making another access to `block` worse",
    )
    # the store's 2-way conflict has no padding that does not make the read worse
    assert findings[0][:3] == (25, 7, "WL101")
    assert findings[0][3].startswith("no padding of 1 to 32 elements makes this access conflict-free")
