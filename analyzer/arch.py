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

The generations the seed articles were written for (compute capability 1.x, Fermi, Kepler)
are entries of their own (`_SEED_GENERATIONS`): the rules that differ from today's are
fields with named modes (`Coalescing`, `SharedBroadcast`), each cited from NVIDIA's CUDA C
Programming Guide of the time, and `analysis/cost.py` reads only those fields.

Adding a GPU generation is a new entry in `ARCHITECTURES`, never new code.
"""

from __future__ import annotations

import math
from enum import StrEnum

from analyzer.records import record

__all__ = [
    "ARCHITECTURES",
    "DEFAULT_ARCH",
    "Architecture",
    "AssumedRules",
    "Coalescing",
    "SharedBroadcast",
    "UnknownArchitecture",
    "assumption",
    "get_arch",
]


class Coalescing(StrEnum):
    """How a generation turns the lanes of one global request into memory traffic.

    Every rule charges each request phase (`Architecture.global_phase_lanes`: the whole warp
    today, a half-warp on compute capability 1.x) on its own and sums the phases.
    """

    # Volta onward: the distinct aligned `sector_bytes` sectors the active lanes touch
    SECTORS = "sectors"
    # Fermi and Kepler: the distinct aligned blocks the active lanes touch, as transactions:
    # `cached_load_bytes` (an L1 line) for a load where it is set, `sector_bytes` (a segment)
    # for a store and an uncached load
    SEGMENTS = "segments"
    # compute capability 1.0/1.1: a phase is one transaction of `16 x size` bytes (two of 128
    # for 16-byte words) only if the k-th active lane reads the k-th word of a segment aligned
    # to 16 x the word size and the word is 4, 8 or 16 bytes; else one transaction per lane
    STRICT_SEQUENCE = "strict-sequence"
    # compute capability 1.2/1.3: the segment (32, 64, 128 bytes for 1-, 2-, 4+-byte words) of
    # the lowest pending lane, halved while only one half is used, until every lane is served
    SHRUNK_SEGMENTS = "shrunk-segments"


class SharedBroadcast(StrEnum):
    """Which lanes of a shared-memory phase that read one word are served together."""

    ANY_WORD = "any-word"  # every word read by several lanes is multicast (Fermi onward)
    # compute capability 1.x: one word per step is broadcast; the other banks serve one
    # address each per step, so two lanes reading one other word take two steps
    ONE_WORD = "one-word"


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
    sector_bytes: int = 32  # also the segment of `Coalescing.SEGMENTS`, the smallest transaction of 1.x
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
    # The rules the seed generations charge differently (see `_SEED_GENERATIONS`); the defaults
    # are Volta's to Hopper's, so that every entry that names none of them is unchanged.
    coalescing: Coalescing = Coalescing.SECTORS
    # lanes charged together in one global request phase, by access size (as `shared_phase_lanes`);
    # a size not listed (every size, today) is charged for the whole warp at once
    global_phase_lanes: tuple[tuple[int, int], ...] = ()
    cached_load_bytes: int | None = None  # `Coalescing.SEGMENTS`: the L1 line of a cached load
    shared_broadcast: SharedBroadcast = SharedBroadcast.ANY_WORD
    # the width of one row of a bank: two words of one bank in the same row do not conflict
    # (Kepler's 32-bit mode serves words i and i + 32 of a 64-word segment together); None: a word
    bank_row_bytes: int | None = None
    # what the cost model does not express for this generation, said with every cost charged
    # under it (analysis/assumptions.py's `ArchitectureNote`)
    notes: tuple[str, ...] = ()

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

    def lanes_per_global_phase(self, access_bytes: int) -> int:
        """Lanes charged together in one global request phase for accesses of `access_bytes`."""
        for size, lanes in self.global_phase_lanes:
            if size == access_bytes:
                return lanes
        return self.warp_size

    @property
    def charges_sectors(self) -> bool:
        """Whether global requests are charged in sectors (Volta onward) rather than transactions."""
        return self.coalescing == Coalescing.SECTORS

    @property
    def bank_row(self) -> int:
        """Bytes of one row of a bank (`bank_row_bytes`, else one word)."""
        return self.bank_row_bytes or self.bank_bytes

    @property
    def global_period(self) -> int:
        """The shift in bytes under which the global cost of any request is unchanged: a sector
        today; the largest segment or alignment a seed generation's rule looks at."""
        if self.coalescing == Coalescing.SECTORS:
            return self.sector_bytes
        if self.coalescing == Coalescing.SEGMENTS:
            return math.lcm(self.sector_bytes, self.cached_load_bytes or self.sector_bytes)
        # 1.x: a half-warp of 16-byte words is aligned to 256 bytes; segments are at most 128
        return math.lcm(self.sector_bytes, max(self.access_sizes) * self.lanes_per_global_phase(max(self.access_sizes)))

    def phases_per_warp(self, access_bytes: int) -> int:
        """Shared-memory phases of a full warp: 1, 2 and 4 for 4-, 8- and 16-byte accesses."""
        return -(-self.warp_size // self.lanes_per_phase(access_bytes))

    @property
    def address_period(self) -> int:
        """The period in bytes under which both costs are invariant: lcm(shared_banks * bank_bytes, sector_bytes)
        today (a whole row of banks, `bank_row`, and `global_period` where a seed generation widens them)."""
        return math.lcm(self.shared_banks * self.bank_row, self.global_period)


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


# ----------------------------------------------------------------- the seeds' own hardware
# The generations the seed articles were written for (samples/README.md), from NVIDIA's CUDA C
# Programming Guide of the time: version 5.0 (October 2012), Appendix F "Compute Capabilities",
# F.3 (1.x), F.4 (2.x), F.5 (3.x); the 2.x/3.x guides number the same text G.3, G.4. Each rule
# below names its section. cudaMalloc aligns to at least 256 bytes on all of them (CUDA C Best
# Practices Guide, "Coalesced Access to Global Memory").

_HALF_WARP = ((1, 16), (2, 16), (4, 16), (8, 16), (16, 16))
# F.4.2: "if the size of the words accessed by each thread is more than 4 bytes, a memory request
# by a warp is first split into separate 128-byte memory requests": one per half-warp for 8-byte
# words, one per quarter-warp for 16-byte words (F.5.2: likewise on 3.x)
_SPLIT_ABOVE_4_BYTES = ((1, 32), (2, 32), (4, 32), (8, 16), (16, 8))
_TESLA_NOTES = (
    "costs are per warp-level request, the sum over its two half-warps, each charged on its own",
    "where several words are each read by several lanes, the word broadcast first is taken to be "
    "the lowest pending lane's (the guide leaves the choice to the hardware)",
)


def _tesla(name: str, description: str, coalescing: Coalescing) -> Architecture:
    """Compute capability 1.x (G80, GT200).

    F.3.3: 16 banks of 32-bit words; a warp's shared request is split into one per half-warp,
    and threads of different half-warps never conflict; one 32-bit word per step is broadcast
    ("32-Bit Broadcast Access"), the other banks serve one address each; a 64-bit access is two
    32-bit requests ("Larger Than 32-Bit Access": `double` at stride 1 is a 2-way conflict).
    F.3.2: global memory requests are issued per half-warp, by `coalescing`; the smallest
    transaction is 32 bytes. F.3.1: 16 KB of shared memory per multiprocessor.
    """
    return Architecture(
        name=name,
        description=description,
        shared_banks=16,
        shared_phase_lanes=_HALF_WARP,
        shared_broadcast=SharedBroadcast.ONE_WORD,
        shared_memory_per_block=16 * 1024,
        shared_memory_per_block_opt_in=16 * 1024,  # no opt-in before 7.0
        coalescing=coalescing,
        global_phase_lanes=_HALF_WARP,
        notes=_TESLA_NOTES,
    )


def _fermi(name: str, description: str) -> Architecture:
    """Compute capability 2.x (Fermi).

    F.4.3: 32 banks of 32-bit words, any number of words multicast; 64-bit accesses in two
    half-warp phases, 128-bit in four quarter-warp phases (as today). F.4.2: loads are cached
    in L1 by default (-Xptxas -dlcm=ca), one 128-byte transaction per distinct 128-byte line a
    request touches; stores, and loads compiled with -dlcm=cg, go to L2 in 32-byte segments.
    """
    return Architecture(
        name=name,
        description=description,
        shared_memory_per_block_opt_in=48 * 1024,  # F.4.1: 48 KB a block, no opt-in before 7.0
        coalescing=Coalescing.SEGMENTS,
        global_phase_lanes=_SPLIT_ABOVE_4_BYTES,
        cached_load_bytes=128,
        notes=(
            "loads are charged as cached in L1 (nvcc's default, -dlcm=ca): one transaction per "
            "128-byte line; compiled with -Xptxas -dlcm=cg they move in 32-byte segments instead",
        ),
    )


def _kepler(name: str, description: str, bank_mode: int) -> Architecture:
    """Compute capability 3.x (Kepler).

    F.5.3: 32 banks, 64 bits of bandwidth each, in one of two modes
    (`cudaDeviceSetSharedMemConfig`): 64-bit mode, successive 64-bit words in successive banks;
    32-bit mode (the default), successive 32-bit words in successive banks, where words i and
    i + 32 of one 64-word aligned segment do not conflict (a bank row of 8 bytes). A warp of
    64-bit accesses is one phase. F.5.2: global loads are cached in L2 only (L1 is for local
    memory), in 32-byte segments, and split per half- and quarter-warp as on 2.x.
    """
    eight_bytes = bank_mode == 8
    return Architecture(
        name=name,
        description=description,
        bank_bytes=8 if eight_bytes else 4,
        bank_row_bytes=None if eight_bytes else 8,
        shared_phase_lanes=((1, 32), (2, 32), (4, 32), (8, 32), (16, 16)),
        shared_memory_per_block_opt_in=48 * 1024,  # F.5.1: 48 KB a block, no opt-in before 7.0
        coalescing=Coalescing.SEGMENTS,
        global_phase_lanes=_SPLIT_ABOVE_4_BYTES,
        notes=(
            f"shared memory in the {bank_mode}-byte bank mode"
            + ("" if eight_bytes else " (the default; the name with -bank8 selects the other)"),
            "global loads are charged as L2 loads in 32-byte segments, those through the read-only "
            "cache (`__ldg`, `const __restrict__` on 3.5) too",
        ),
    )


_SEED_GENERATIONS = (
    _tesla("sm_10", "Tesla G80 (compute capability 1.0)", Coalescing.STRICT_SEQUENCE),
    _tesla("sm_11", "Tesla G8x/G9x (compute capability 1.1)", Coalescing.STRICT_SEQUENCE),
    _tesla("sm_12", "Tesla GT21x (compute capability 1.2)", Coalescing.SHRUNK_SEGMENTS),
    _tesla("sm_13", "Tesla GT200 (compute capability 1.3)", Coalescing.SHRUNK_SEGMENTS),
    _fermi("sm_20", "Fermi GF100/GF110 (compute capability 2.0)"),
    _fermi("sm_21", "Fermi GF10x (compute capability 2.1)"),
    _kepler("sm_30", "Kepler GK10x (compute capability 3.0)", 4),
    _kepler("sm_30-bank8", "Kepler GK10x, 8-byte shared banks", 8),
    _kepler("sm_35", "Kepler GK110 (K20, K40; compute capability 3.5)", 4),
    _kepler("sm_35-bank8", "Kepler GK110, 8-byte shared banks", 8),
    _kepler("sm_37", "Kepler GK210 (K80; compute capability 3.7)", 4),
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
        *_SEED_GENERATIONS,
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
