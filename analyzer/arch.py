"""The GPU architectures warplint models, as data.

Everything the cost model (analyzer.analysis.cost) needs to know about a GPU
generation lives in one frozen `Architecture` record: warp size, shared-memory
banks and phases, global-memory sectors, pointer alignment, the natural
access sizes and the shared memory a block may declare. The rules are those of docs/hardware-model.md, measured on an
H100 and unchanged from Volta (sm_70) to Hopper (sm_90).

Blackwell (sm_100, sm_101, sm_103, sm_120, sm_121) shares that table: the CUDA Programming
Guide describes its shared memory as 32 banks of 4 bytes and its global memory as 32-byte
sectors, as for Hopper. That is an assumption, not a measurement (no Blackwell GPU was
profiled): each such entry names the generation whose measured rules it follows
(`Architecture.assumed_like`), and `assumption(arch)` gives the typed note the reports print.

Adding a GPU generation is a new entry in `ARCHITECTURES`, never new code.
"""

from __future__ import annotations

import math

from analyzer.records import record

__all__ = [
    "ARCHITECTURES",
    "DEFAULT_ARCH",
    "Architecture",
    "AssumedRules",
    "UnknownArchitecture",
    "assumption",
    "get_arch",
]


@record
class Architecture:
    """How one GPU generation charges a warp's memory access.

    `shared_phase_lanes` maps a per-lane access size in bytes to the number of
    lanes served together in one shared-memory phase (as `(size, lanes)` pairs,
    so that the record stays hashable): a 32-lane warp of 8-byte accesses is
    split into two phases of 16 lanes, of 16-byte accesses into four of 8.
    """

    name: str  # "sm_90"
    description: str
    warp_size: int = 32
    shared_banks: int = 32
    bank_bytes: int = 4  # width of one bank: a shared "word"
    shared_phase_lanes: tuple[tuple[int, int], ...] = (
        (1, 32),
        (2, 32),
        (4, 32),
        (8, 16),
        (16, 8),
    )
    sector_bytes: int = 32
    cache_line_bytes: int = 128
    global_pointer_alignment: int = 256  # what cudaMalloc guarantees
    access_sizes: tuple[int, ...] = (1, 2, 4, 8, 16)  # naturally aligned words a load/store moves
    max_access_bytes: int = 16
    # the static `__shared__` memory one block may declare: ptxas refuses more ("uses too much
    # shared data (0xc004 bytes, 0xc000 max)", nvcc 13.0, sm_70 ... sm_90; a larger dynamic
    # allocation needs cudaFuncSetAttribute, which warplint does not see)
    shared_memory_per_block: int = 48 * 1024
    # the most one block may use with the opt-in (cudaFuncSetAttribute, dynamic shared memory):
    # "Maximum amount of shared memory per thread block" in the CUDA Programming Guide's
    # "Compute Capabilities" table (docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/
    # compute-capabilities.html); data only, since warplint sees no cudaFuncSetAttribute
    shared_memory_per_block_opt_in: int = 227 * 1024
    # the generation whose measured rules this one is costed by without having been measured
    # itself ("sm_90" for Blackwell); None for the generations the hardware model covers
    assumed_like: str | None = None

    def lanes_per_phase(self, access_bytes: int) -> int:
        """Lanes served in one shared-memory phase for accesses of `access_bytes` each.

        Raises `ValueError` for a size that is not one of `access_sizes`.
        """
        for size, lanes in self.shared_phase_lanes:
            if size == access_bytes:
                return lanes
        raise ValueError(
            f"{self.name}: no {access_bytes}-byte access; a lane moves {', '.join(map(str, self.access_sizes))} bytes"
        )

    def phases_per_warp(self, access_bytes: int) -> int:
        """Shared-memory phases of a full warp: 1, 2 and 4 for 4-, 8- and 16-byte accesses."""
        return -(-self.warp_size // self.lanes_per_phase(access_bytes))

    @property
    def address_period(self) -> int:
        """The period in bytes under which both costs are invariant: lcm(shared_banks * bank_bytes, sector_bytes)."""
        return math.lcm(self.shared_banks * self.bank_bytes, self.sector_bytes)


@record
class AssumedRules:
    """A report's note that `arch` is costed by the measured rules of `like` without having
    been measured itself. Typed, so that reports give its fields and nothing searches its words."""

    arch: str  # "sm_100"
    like: str  # "sm_90"
    kind: str = "architecture-assumed"

    @property
    def message(self) -> str:
        like = get_arch(self.like)
        return (
            f"{self.arch} is costed with the rules measured on {self.like} ({like.shared_banks} banks of "
            f"{like.bank_bytes} bytes, {like.sector_bytes}-byte sectors): assumed, not measured on {self.arch}"
        )


def _volta_to_hopper(name: str, description: str, opt_in_kib: int) -> Architecture:
    return Architecture(name=name, description=description, shared_memory_per_block_opt_in=opt_in_kib * 1024)


def _blackwell(name: str, description: str, opt_in_kib: int) -> Architecture:
    """Hopper's table (the Programming Guide gives Blackwell's shared memory 32 banks of 4 bytes
    and its global memory 32-byte sectors), assumed rather than measured."""
    return Architecture(
        name=name, description=description, shared_memory_per_block_opt_in=opt_in_kib * 1024, assumed_like="sm_90"
    )


# the last number: the opt-in shared memory per block in KiB, from the Programming Guide's table
ARCHITECTURES: dict[str, Architecture] = {
    arch.name: arch
    for arch in (
        _volta_to_hopper("sm_70", "Volta (V100)", 96),
        _volta_to_hopper("sm_72", "Volta (Jetson AGX Xavier)", 96),
        _volta_to_hopper("sm_75", "Turing (T4, RTX 20xx)", 64),
        _volta_to_hopper("sm_80", "Ampere (A100)", 163),
        _volta_to_hopper("sm_86", "Ampere (RTX 30xx, A40)", 99),
        _volta_to_hopper("sm_87", "Ampere (Jetson AGX Orin)", 163),
        _volta_to_hopper("sm_89", "Ada Lovelace (L4, RTX 40xx)", 99),
        _volta_to_hopper("sm_90", "Hopper (H100, H200)", 227),
        _blackwell("sm_100", "Blackwell (B200, GB200)", 227),
        _blackwell("sm_101", "Blackwell (Jetson Thor; sm_110 from CUDA 13)", 227),
        _blackwell("sm_103", "Blackwell Ultra (B300, GB300)", 227),
        _blackwell("sm_120", "Blackwell (RTX 50xx, RTX PRO 6000)", 99),
        _blackwell("sm_121", "Blackwell (DGX Spark, GB10)", 99),
    )
}

DEFAULT_ARCH = "sm_90"


class UnknownArchitecture(KeyError):
    """An architecture name that is not in `ARCHITECTURES`."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:  # KeyError would print repr(args[0])
        return f"unknown architecture {self.name!r}; valid names: {', '.join(sorted(ARCHITECTURES))}"


def get_arch(name: str | Architecture = DEFAULT_ARCH) -> Architecture:
    """The `Architecture` called `name` ("sm_90"); raises `UnknownArchitecture`.

    An `Architecture` is returned as it is: that is how a model that is not in the
    table (a study, a test: `dataclasses.replace(get_arch(), shared_banks=16)`) is
    given wherever a name is taken (`analyzer.api.Options.arch`).
    """
    if isinstance(name, Architecture):
        return name
    try:
        return ARCHITECTURES[name]
    except (KeyError, TypeError):
        raise UnknownArchitecture(name) from None


def assumption(name: str | Architecture) -> AssumedRules | None:
    """The note a report carries for `name` when its rules are assumed rather than measured;
    None for a generation the hardware model covers (and for an unknown name)."""
    try:
        arch = get_arch(name)
    except UnknownArchitecture:
        return None
    if arch.assumed_like is None:
        return None
    return AssumedRules(arch=arch.name, like=arch.assumed_like)
