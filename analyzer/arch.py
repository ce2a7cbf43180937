"""The GPU architectures warplint models, as data.

Everything the cost model (analyzer.analysis.cost) needs to know about a GPU
generation lives in one frozen `Architecture` record: warp size, shared-memory
banks and phases, global-memory sectors, pointer alignment, the natural
access sizes and the shared memory a block may declare. The rules are those of docs/hardware-model.md, measured on an
H100 and unchanged from Volta (sm_70) to Hopper (sm_90).

Adding a GPU generation is a new entry in `ARCHITECTURES`, never new code.
"""

from __future__ import annotations

import math

from analyzer.records import record

__all__ = [
    "ARCHITECTURES",
    "DEFAULT_ARCH",
    "Architecture",
    "UnknownArchitecture",
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


def _volta_to_hopper(name: str, description: str) -> Architecture:
    return Architecture(name=name, description=description)


ARCHITECTURES: dict[str, Architecture] = {
    arch.name: arch
    for arch in (
        _volta_to_hopper("sm_70", "Volta (V100)"),
        _volta_to_hopper("sm_72", "Volta (Jetson AGX Xavier)"),
        _volta_to_hopper("sm_75", "Turing (T4, RTX 20xx)"),
        _volta_to_hopper("sm_80", "Ampere (A100)"),
        _volta_to_hopper("sm_86", "Ampere (RTX 30xx, A40)"),
        _volta_to_hopper("sm_87", "Ampere (Jetson AGX Orin)"),
        _volta_to_hopper("sm_89", "Ada Lovelace (L4, RTX 40xx)"),
        _volta_to_hopper("sm_90", "Hopper (H100, H200)"),
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
