"""The verdict policy for unknown values and the honest totals (issue 13, items 1, 2 and 4):
findings rest on the values programs use, `per_request` is the worst case, `total` is exact
or null with bounds, and the usual guards keep totals exact. Small programs written for the
tests; the exact totals are held to the simulator run over every block."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from analyzer.analysis import symbolic as S
from analyzer.analysis.verdict import Assume, sample_values, typical_residues
from analyzer.api import Options, check_source

TRANSPOSE = """
#define TILE_DIM 16
__global__ void transposeCoalesced(float *odata, float *idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + yIndex * width;
    xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
    int index_out = xIndex + yIndex * height;
    tile[threadIdx.y][threadIdx.x] = idata[index_in];
    __syncthreads();
    odata[index_out] = tile[threadIdx.x][threadIdx.y];
}
int main(int argc, char **argv)
{
    int w = atoi(argv[1]);
    dim3 grid(4, 4), threads(TILE_DIM, TILE_DIM);
    transposeCoalesced<<<grid, threads>>>(0, 0, w, w);
}
"""

STRIDED = """
__global__ void strided(float *x, int stride)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    x[stride * tid] = 0.0f;
}
int main(int argc, char **argv) { strided<<<4, 256>>>(0, atoi(argv[1])); }
"""

ADD_SUB2 = """
__global__ void addSubArray2(int *A, int *B, int w, int h)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < h; j += 2) {
        B[j * w + i] += A[i];
    }
}
int main(int argc, char **argv)
{
    int w = WIDTH;
    addSubArray2<<<(w + 31) / 32, 32>>>(0, 0, w, w);
}
"""

VECTOR_ADD = """
__global__ void vectorAdd(const float *A, const float *B, float *C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < numElements) {
        C[i] = A[i] + B[i];
    }
}
int main()
{
    int numElements = 122992;
    int threadsPerBlock = 256;
    int blocksPerGrid = (numElements + threadsPerBlock - 1) / threadsPerBlock;
    vectorAdd<<<blocksPerGrid, threadsPerBlock>>>(0, 0, 0, numElements);
}
"""

TRIANGLE = """
__global__ void lower(float *a, int n)
{
    __shared__ float s[256];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < i; j++)
            s[threadIdx.x] += a[j * 256 + threadIdx.x];
}
int main() { lower<<<1, 256>>>(0, 8); }
"""


def analyse(text: str, **options: object):
    report = check_source("k.cu", text, Options(**options))  # type: ignore[arg-type]
    assert not [d for d in report.diagnostics if d.code.startswith("WL90")], report.diagnostics
    return report


def costs_of(report, text: str, op: str | None = None) -> list:
    return [c for k in report.kernels for c in k.costs if c.text == text and (op is None or c.op == op)]


def codes(report) -> list[str]:
    return [str(f.code) for f in report.findings]


def simulated_total(tmp_path, text: str, access: str, op: str = "load", **options: object) -> int:
    """The sectors or wavefronts of `access` over every block, from the simulator
    (`warplint simulate --all-blocks`)."""
    from analyzer.api import simulate_file
    from analyzer.sim.run import SimOptions

    path = tmp_path / "k.cu"
    path.write_text(text)
    report = simulate_file(str(path), Options(**options), SimOptions(max_blocks=0))  # type: ignore[arg-type]
    return sum(c.total for k in report.kernels for c in k.costs if c.text == access and c.op == op)


def test_transpose_with_unknown_width_gives_no_wl201_and_states_the_condition():
    report = analyse(TRANSPOSE)
    assert "WL201" not in codes(report)
    (load,) = costs_of(report, "idata[index_in]")
    assert load.per_request == 6 and load.ideal_per_request == 4  # the worst case stays
    assert load.typical is not None and load.typical.per_request == 4
    assert load.cases.startswith("6 sectors per request unless width is a multiple of 8")


def test_transpose_warns_on_the_worst_case_only_when_asked():
    assert "WL201" in codes(analyse(TRANSPOSE, assume="worst"))


def test_a_stride_that_is_not_known_still_warns():
    report = analyse(STRIDED)
    assert codes(report) == ["WL201"]
    (cost,) = costs_of(report, "x[stride * tid]")
    assert cost.typical is None and cost.per_request == 32
    # the requests do not depend on the stride; the total is bounded for every value
    assert (cost.requests, cost.total, cost.total_min, cost.total_max) == (32, None, 32 * 4, 32 * 32)


@pytest.mark.slow
def test_add_sub2_at_width_258_gives_the_exact_total_when_the_width_is_known(tmp_path):
    text = ADD_SUB2.replace("WIDTH", "258")
    (cost,) = costs_of(analyse(text), "B[j * w + i]", "store")
    assert cost.total is not None and cost.total_min is None
    assert cost.total == simulated_total(tmp_path, text, "B[j * w + i]", "store")


@pytest.mark.slow
def test_add_sub2_gives_bounds_when_the_width_is_not_known(tmp_path):
    # the height (the loop's trip count) is known, the width only at run time: every start
    # of a warp's range is enumerated, so the fewest and most bound the total at any width
    text = ADD_SUB2.replace("WIDTH", "atoi(argv[1])").replace("(0, 0, w, w)", "(0, 0, w, 258)")
    (cost,) = costs_of(analyse(text, grid=(9, 1, 1)), "B[j * w + i]", "store")
    assert cost.total is None and cost.requests == 9 * 129
    simulated = simulated_total(tmp_path, text, "B[j * w + i]", "store", grid=(9, 1, 1), params={"w": 258})
    assert cost.total_min <= simulated <= cost.total_max
    assert cost.total_min < cost.total_max


@pytest.mark.slow
def test_add_sub2_bounds_hold_the_simulated_total_when_only_the_start_is_unknown(tmp_path):
    # the width is known, the grid is too large to walk block by block: the starts of the
    # warps' ranges are enumerated, and their fewest and most bound the total
    text = ADD_SUB2.replace("WIDTH", "258").replace("(w + 31) / 32, 32", "(w + 31) / 32, 32")
    (cost,) = costs_of(analyse(text), "B[j * w + i]", "store")
    simulated = simulated_total(tmp_path, text, "B[j * w + i]", "store")
    if cost.total is None:
        assert cost.total_min <= simulated <= cost.total_max
    else:
        assert cost.total == simulated


@pytest.mark.slow
def test_vector_add_with_a_partly_active_last_block_gives_exact_totals(tmp_path):
    report = analyse(VECTOR_ADD)
    for access in ("A[i]", "B[i]", "C[i]"):
        (cost,) = costs_of(report, access)
        assert cost.exact and cost.requests == 3844  # 122,992 threads: 3843.5 warps
        assert cost.total == simulated_total(tmp_path, VECTOR_ADD, access, "store" if access == "C[i]" else "load")


def test_a_triangular_nest_gives_request_counts():
    (cost,) = costs_of(analyse(TRIANGLE), "a[j * 256 + threadIdx.x]")
    assert cost.requests == 8 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7)
    assert cost.total == cost.requests * 4


def test_a_null_request_count_comes_with_its_reason():
    text = TRIANGLE.replace("i < 8", "i < n").replace("lower<<<1, 256>>>(0, 8)", "lower<<<1, 256>>>(0, atoi(0))")
    (cost,) = costs_of(analyse(text), "a[j * 256 + threadIdx.x]")
    assert cost.requests is None
    assert any("not counted" in str(a) for a in cost.assumptions)


# ----------------------------------------------------------------------------- the sampler
def test_the_sampler_judges_sizes_at_multiples_of_32_and_block_indices_at_every_value():
    assert sample_values("n", Assume.WORST) == tuple(range(1, 65))
    assert sample_values("n", Assume.TYPICAL) == (32, 64)
    assert sample_values("blockIdx.x", Assume.TYPICAL) == tuple(range(1, 65))


def test_facts_restrict_the_values_tried_under_both_policies():
    facts = SimpleNamespace(values={"k": 2}, ranges={"r": (3, 5)}, divisors={"d": 8})
    assert sample_values("k", Assume.TYPICAL, facts) == (2,)
    assert sample_values("r", Assume.WORST, facts) == (3, 4, 5)
    assert sample_values("d", Assume.TYPICAL, facts)[:3] == (8, 16, 24)
    assert sample_values("n", Assume.TYPICAL, facts) == (32, 64)  # not constrained


def test_typical_residues_move_sizes_by_multiples_of_32_elements():
    width, bx = S.sym("width"), S.sym("blockIdx.x")
    assert typical_residues(4 * width + 4, 128) == frozenset({4})  # width*4 bytes: 128 at 32
    assert typical_residues(4 * bx, 128) == frozenset(range(0, 128, 4))  # every block runs
    facts = SimpleNamespace(values={}, ranges={}, divisors={"width": 2})
    assert typical_residues(4 * width, 128, facts) == frozenset(range(0, 128, 8))


def test_the_block_indices_that_decide_masks_and_their_memo():
    """`verdict.mask_blocks`: the block indices of the masks that read no other symbol but
    loop counters, remembered by the masks' tuple (the same answer, the same object)."""
    from analyzer.analysis.verdict import _MASK_BLOCKS, _mask_blocks, mask_blocks

    bx, by, n, k = S.sym("blockIdx.x"), S.sym("blockIdx.y"), S.sym("n"), S.sym("k@1")
    masks = (
        None,
        S.const(1),
        S.compare("<", bx * 32 + 5, S.const(100)),
        S.compare("<", by + k, S.const(7)),
        S.compare("<", bx + n, S.const(3)),
    )
    assert _mask_blocks(masks) == frozenset({"blockIdx.x", "blockIdx.y"})
    assert _mask_blocks(masks[:2] + masks[4:]) == frozenset()
    _MASK_BLOCKS.clear()
    first = mask_blocks(masks)
    assert first == frozenset({"blockIdx.x", "blockIdx.y"})
    assert mask_blocks(masks) is first and len(_MASK_BLOCKS) == 1
    assert mask_blocks(tuple(masks)) is first  # the same tuple
    assert mask_blocks(masks[:3]) == frozenset({"blockIdx.x"})


def test_a_mask_of_block_indices_is_decided_at_the_grids_corners():
    """`walked.decide_mask_at_corners`: a mask of block indices alone is evaluated at each
    corner of a known grid (1 where it holds at all, 0 where at none, else itself); with a
    loop counter it is substituted, and kept where a corner makes no number of it; a mask of
    another symbol, or without a grid, is kept."""
    from analyzer.analysis.results import LaunchConfig
    from analyzer.analysis.walked import decide_mask_at_corners

    bx, by, n, k = S.sym("blockIdx.x"), S.sym("blockIdx.y"), S.sym("n"), S.sym("k@1")
    grid = LaunchConfig((32, 1, 1), (4, 3, 1), "--grid")
    assert decide_mask_at_corners(S.compare("<", bx * 32 + 5, S.const(128)), grid) == S.const(1)  # 101 < 128
    assert decide_mask_at_corners(S.compare("<", bx * 32 + 5, S.const(5)), grid) == S.const(0)
    split = S.compare("<", bx * 32 + by, S.const(60))  # 0 at the corner (0, 0), 98 at (3, 2)
    assert decide_mask_at_corners(split, grid) is split
    # a division by zero at a corner is left to the substitution, which makes no number of it
    divided = S.compare("<", S.const(7) // by, S.const(100))
    assert decide_mask_at_corners(divided, grid) is divided
    with_counter = S.compare("<", by + k, S.const(7))
    assert decide_mask_at_corners(with_counter, grid) is with_counter  # a number at no corner
    other = S.compare("<", bx + n, S.const(3))
    assert decide_mask_at_corners(other, grid) is other
    assert decide_mask_at_corners(split, LaunchConfig((32, 1, 1), None, "--block")) is split
