"""The analysis reads the architecture as data: the same kernel costed with 16 banks, or with
64 lanes per warp, gives the costs worked out by hand from hardware-model.md's rules."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.analysis.kernel import analyze_kernel
from analyzer.analysis.launch import launch_configs
from analyzer.arch import Architecture, get_arch
from analyzer.ir.lower import lower
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse

SM90 = get_arch("sm_90")
SIXTEEN_BANKS = dataclasses.replace(SM90, shared_banks=16)
WIDE_WARP = dataclasses.replace(SM90, warp_size=64)

# One block of 64 threads: two warps of 32 lanes, or one warp of 64.
KERNEL = """
__global__ void k(float *out) {
    __shared__ float s[1024];
    s[2 * threadIdx.x] = 0;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
    out[threadIdx.x + 1] = 0;
}
"""


def costs(arch: Architecture) -> dict[str, tuple[int | None, int | None, int | None, int | None]]:
    """(per request, ideal, requests, total) of each access of `KERNEL`, by text and op."""
    pp = preprocess(KERNEL, "test.cu")
    module = lower(parse(pp.text).unit, pp.text, "test.cu")
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=(64, 1, 1), grid=(1, 1, 1))[0]
    analysis = analyze_kernel(module, kernel, launch, arch)
    return {f"{c.op} {c.text}": (c.per_request, c.ideal_per_request, c.requests, c.total) for c in analysis.costs}


def test_the_address_period_is_where_both_costs_repeat():
    assert SM90.address_period == 128  # 32 banks x 4 bytes, 4 sectors of 32
    assert SIXTEEN_BANKS.address_period == 64  # 16 banks x 4 bytes, 2 sectors of 32
    assert WIDE_WARP.address_period == 128


@pytest.mark.parametrize(
    "arch, expected",
    [
        # 32 lanes of stride 2 words: banks 0, 2, ..., 30 twice each -> 2 wavefronts; lanes on
        # consecutive words: 1; 4-byte lanes x 32 = 4 sectors, one float in: 5. Two warps each.
        (
            SM90,
            {
                "store s[2 * threadIdx.x]": (2, 1, 2, 4),
                "load s[threadIdx.x]": (1, 1, 2, 2),
                "store out[threadIdx.x]": (4, 4, 2, 8),
                "store out[threadIdx.x + 1]": (5, 4, 2, 10),
            },
        ),
        # 16 banks: stride 2 words puts the 32 lanes on 8 banks, 4 words each -> 4 wavefronts;
        # consecutive words fill the 16 banks twice -> 2. Sectors do not depend on the banks.
        (
            SIXTEEN_BANKS,
            {
                "store s[2 * threadIdx.x]": (4, 1, 2, 8),
                "load s[threadIdx.x]": (2, 1, 2, 4),
                "store out[threadIdx.x]": (4, 4, 2, 8),
                "store out[threadIdx.x + 1]": (5, 4, 2, 10),
            },
        ),
        # 64 lanes: one warp, served in two phases of 32 lanes (4-byte accesses), each phase as a
        # 32-lane warp above: 2 + 2 and 1 + 1 wavefronts, ideal 2; 256 bytes = 8 sectors, 9
        # when the warp starts one float into a sector.
        (
            WIDE_WARP,
            {
                "store s[2 * threadIdx.x]": (4, 2, 1, 4),
                "load s[threadIdx.x]": (2, 2, 1, 2),
                "store out[threadIdx.x]": (8, 8, 1, 8),
                "store out[threadIdx.x + 1]": (9, 8, 1, 9),
            },
        ),
    ],
    ids=["sm_90", "16 banks", "64 lanes"],
)
def test_costs_follow_the_architecture(arch, expected):
    assert costs(arch) == expected


SHIFTED = """
__global__ void k(float *out, const int *first, int n) {
    __shared__ float s[1024];
    int base = first[0];
    out[threadIdx.x + base] = s[2 * threadIdx.x + 16 * n];
}
"""


def shifted_costs(arch: Architecture) -> dict[str, tuple[int | None, int | None, int | None]]:
    """(worst, best, ideal) per request of each access of `SHIFTED`, by op."""
    pp = preprocess(SHIFTED, "test.cu")
    module = lower(parse(pp.text).unit, pp.text, "test.cu")
    kernel = module.kernels[0]
    launch = launch_configs(module, kernel, block=(arch.warp_size, 1, 1), grid=(1, 1, 1))[0]
    analysis = analyze_kernel(module, kernel, launch, arch)
    return {
        c.op: (c.per_request, c.best_per_request, c.ideal_per_request)
        for c in analysis.costs
        if c.space == "shared" or c.text.startswith("out")
    }


@pytest.mark.parametrize(
    "arch, expected",
    [
        # 16 * n words move the lanes by 16 * n banks: with 32 banks a rotation by 0 or 16 banks
        # (2 wavefronts either way), with 16 banks none at all (4). A warp starting at an unknown
        # float (`base`, read once for all lanes) touches 4 or 5 sectors, 8 or 9 for 64 lanes.
        (SM90, {"load": (2, 2, 1), "store": (5, 4, 4)}),
        (SIXTEEN_BANKS, {"load": (4, 4, 1), "store": (5, 4, 4)}),
        (WIDE_WARP, {"load": (4, 4, 2), "store": (9, 8, 8)}),
    ],
    ids=["sm_90", "16 banks", "64 lanes"],
)
def test_unknown_shifts_cost_the_worst_start_of_each_architecture(arch, expected):
    assert shifted_costs(arch) == expected
