"""`check` and the simulator on architectures that are not in the table: 16 banks, 64 lanes.

The hardware is data (`analyzer.arch.Architecture`); nothing in the analysis or the simulator
may know that a warp has 32 lanes or that there are 32 banks. An `Architecture` record is
given wherever a name is taken (`Options(arch=...)`), so each kernel below is checked
(`analyzer.api.check_file`) and run (`analyzer.api.simulate_file`, the reference simulator)
under two variants of sm_90, and both must give the per-request costs worked out by hand in
the comments (docs/hardware-model.md's rules with the variant's numbers).

- `BANKS_16`: 16 banks of 4 bytes (so a word's bank is `word % 16`); a 4-byte access is
  still one phase of 32 lanes, so 32 consecutive words put 2 words in every bank.
- `LANES_64`: a warp of 64 lanes; a 4-byte access is still served 32 lanes a phase (two
  phases a warp: the ideal is 2 wavefronts) and an 8-byte one 16 lanes a phase (4 phases).
  Global requests are 64 lanes' bytes: `x[t]` of floats is 256 bytes, 8 sectors.

The launches have 4 blocks, so the simulator runs several blocks together, each with its own
copy of the shared arrays `arch.address_period` bytes apart.
"""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.api import Options, check_file, simulate_file
from analyzer.arch import get_arch

SM_90 = get_arch("sm_90")
BANKS_16 = dataclasses.replace(SM_90, name="sm_90 with 16 banks", shared_banks=16)
LANES_64 = dataclasses.replace(SM_90, name="sm_90 with 64-lane warps", warp_size=64)

SHARED_STRIDES = """\
__global__ void shared_strides() {
    __shared__ float s[64 * 17];
    __shared__ float2 pairs[64];
    int t = threadIdx.x;
    s[t] = 1.0f;
    s[4 * t] = 2.0f;
    s[16 * t] = 3.0f;
    s[17 * t] = 4.0f;
    pairs[t] = make_float2(1.0f, 2.0f);
}
"""

GLOBAL_STRIDES = """\
__global__ void global_strides(float *x) {
    int t = threadIdx.x;
    x[t] = 1.0f;
    x[t + 1] = 2.0f;
    x[2 * t] = 3.0f;
    x[32 * t] = 4.0f;
}
"""

# blockDim (16, 8): a 32-lane warp holds rows y = 0, 1 of threadIdx.x 0..15, a 64-lane one y = 0..3
COLUMNS = """\
__global__ void columns() {
    __shared__ float tile[16 * 32];
    tile[threadIdx.x * 32 + threadIdx.y] = 1.0f;
}
"""

# every lane stores to the address lane 0 of its warp holds: one sector, whatever the warp's width
SHUFFLED = """\
__global__ void shuffled(float *y) {
    int first = __shfl_sync(0xffffffff, threadIdx.x, 0);
    y[first] = 1.0f;
}
"""

# `warpSize` is the architecture's: with 64 lanes a warp's lanes are 0..63 and each warp one row
WARP_SIZED = """\
__global__ void warp_sized(float *y) {
    y[2 * (threadIdx.x % warpSize)] = 1.0f;
    y[threadIdx.x / warpSize * 32] = 2.0f;
}
"""

KERNELS = {
    "shared_strides": (SHARED_STRIDES, (64, 1, 1)),
    "global_strides": (GLOBAL_STRIDES, (64, 1, 1)),
    "columns": (COLUMNS, (16, 8, 1)),
    "shuffled": (SHUFFLED, (64, 1, 1)),
    "warp_sized": (WARP_SIZED, (64, 1, 1)),
}

#: access -> (cost per request, ideal per request): wavefronts for shared, sectors for global.
EXPECTED = {
    "sm_90": {  # the hardware model's own figures, for comparison
        "s[t]": (1, 1),
        "s[4 * t]": (4, 1),
        "s[16 * t]": (16, 1),
        "s[17 * t]": (1, 1),
        "pairs[t]": (2, 2),
        "x[t]": (4, 4),
        "x[t + 1]": (5, 4),
        "x[2 * t]": (8, 4),
        "x[32 * t]": (32, 4),
        "tile[threadIdx.x * 32 + threadIdx.y]": (16, 1),
        "y[first]": (1, 4),
        "y[2 * (threadIdx.x % warpSize)]": (8, 4),  # lanes 0..31 every other float: bytes 0..248
        "y[threadIdx.x / warpSize * 32]": (1, 4),  # one float a warp
    },
    "16 banks": {
        "s[t]": (2, 1),  # words 0..31: banks 0..15 hold two each
        "s[4 * t]": (8, 1),  # words 0, 4, ..., 124: banks 0, 4, 8, 12 hold eight each
        "s[16 * t]": (32, 1),  # every word in bank 0
        "s[17 * t]": (2, 1),  # 17t % 16 = t % 16: two words a bank, as s[t]
        "pairs[t]": (4, 2),  # two phases of 16 lanes, each words 0..31 of its half: 2 + 2
        "x[t]": (4, 4),
        "x[t + 1]": (5, 4),
        "x[2 * t]": (8, 4),
        "x[32 * t]": (32, 4),  # banks do not matter
        # word 32x + y is in bank y: the two rows of a warp are two banks of 16 words each
        "tile[threadIdx.x * 32 + threadIdx.y]": (16, 1),
        "y[first]": (1, 4),
        "y[2 * (threadIdx.x % warpSize)]": (8, 4),
        "y[threadIdx.x / warpSize * 32]": (1, 4),
    },
    "64 lanes": {
        "s[t]": (2, 2),  # two phases, each 32 consecutive words: 1 + 1
        "s[4 * t]": (8, 2),  # 4 + 4
        "s[16 * t]": (32, 2),  # 16 + 16
        "s[17 * t]": (2, 2),  # 1 + 1
        "pairs[t]": (4, 4),  # four phases of 16 lanes, each 32 words in 32 banks
        "x[t]": (8, 8),  # 256 bytes from a 256-byte aligned pointer: sectors 0..7
        "x[t + 1]": (9, 8),  # bytes 4..259: sectors 0..8
        "x[2 * t]": (16, 8),  # bytes 0..507 in steps of 8: sectors 0..15
        "x[32 * t]": (64, 8),  # a sector a lane
        # each phase is two rows (y = 0, 1 and y = 2, 3): two banks of 16 words, 16 + 16
        "tile[threadIdx.x * 32 + threadIdx.y]": (32, 2),
        "y[first]": (1, 8),  # lane 0 of 64: one word (a 32-lane shuffle would give lanes 32..63 lane 32's)
        # warpSize is 64: lanes 0..63 every other float, bytes 0..504 (with 32, lanes 32..63
        # would repeat lanes 0..31's 8 sectors) ...
        "y[2 * (threadIdx.x % warpSize)]": (16, 8),
        "y[threadIdx.x / warpSize * 32]": (1, 8),  # ... and one float a warp (with 32: floats 0 and 32)
    },
}
ARCHS = {"sm_90": SM_90, "16 banks": BANKS_16, "64 lanes": LANES_64}


def costs_of(report) -> dict[str, tuple[int | None, int | None]]:
    assert not report.diagnostics, [d.message for d in report.diagnostics]
    (kernel,) = report.kernels
    return {c.text: (c.per_request, c.ideal_per_request) for c in kernel.costs}


def expected_for(variant: str, kernel: str) -> dict[str, tuple[int, int]]:
    text = KERNELS[kernel][0]
    return {access: cost for access, cost in EXPECTED[variant].items() if access in text}


@pytest.fixture(scope="module")
def kernel_files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("arch_variants")
    paths = {}
    for name, (text, _) in KERNELS.items():
        path = folder / f"{name}.cu"
        path.write_text(text)
        paths[name] = str(path)
    return paths


def options(variant: str, kernel: str) -> Options:
    return Options(arch=ARCHS[variant], block=KERNELS[kernel][1], grid=(4, 1, 1))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("variant", ARCHS)
def test_check_gives_the_hand_worked_costs(kernel_files, variant, kernel):
    report = check_file(kernel_files[kernel], options(variant, kernel))
    assert costs_of(report) == expected_for(variant, kernel)
    assert all(c.exact for c in report.kernels[0].costs)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("variant", ARCHS)
def test_the_simulator_gives_the_hand_worked_costs(kernel_files, variant, kernel):
    report = simulate_file(kernel_files[kernel], options(variant, kernel))
    assert costs_of(report) == expected_for(variant, kernel)
    (simulation,) = report.kernels
    assert len(simulation.simulated_blocks) == 4 and not simulation.scaled


@pytest.mark.parametrize("variant", ARCHS)
def test_every_expected_access_is_in_a_kernel(variant):
    accesses = {access for kernel in KERNELS for access in expected_for(variant, kernel)}
    assert accesses == set(EXPECTED[variant])


def test_the_variants_differ_from_sm_90_only_where_they_say():
    assert BANKS_16.warp_size == LANES_64.shared_banks == SM_90.shared_banks == 32
    assert BANKS_16.address_period == 64 and LANES_64.address_period == SM_90.address_period == 128
    assert dataclasses.replace(BANKS_16, name=SM_90.name, shared_banks=32) == SM_90
    assert dataclasses.replace(LANES_64, name=SM_90.name, warp_size=32) == SM_90
