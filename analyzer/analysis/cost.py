"""What one warp-level memory request costs, from the byte address of each lane.

Pure functions over concrete addresses, implementing docs/hardware-model.md:

* `shared_cost` -- shared-memory *wavefronts*: per phase, the largest number of
  distinct 4-byte words that fall into one bank, summed over phases.
* `global_cost` -- global-memory *sectors*: distinct aligned 32-byte sectors.
* `split_access` -- the naturally aligned 1/2/4/8/16-byte accesses that move
  one element of a given size and alignment.

`addresses[i]` is the byte address touched by lane i of the warp (at most
`arch.warp_size` entries; a shorter sequence is a warp whose last lanes do not
exist); `None` marks an inactive lane, which takes no part in the cost. Lane i
touches the bytes `[addresses[i], addresses[i] + access_bytes)`. A misaligned
address is charged for every word and sector it overlaps, although the
hardware would fault on it.

These run for every warp of every access the analyzer evaluates, so the
common case (naturally aligned, conflict-free) takes a fast path and the
collision detail is only worked out for phases that conflict.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.arch import Architecture
from analyzer.records import record

__all__ = [
    "BankCollision",
    "GlobalCost",
    "SharedCost",
    "global_cost",
    "shared_cost",
    "split_access",
]


@record
class BankCollision:
    """Lanes of one phase that hit distinct words of the same bank.

    `lanes`: every active lane of the phase that touches the bank (ascending;
    lanes that share a word are listed too, they just don't add a wavefront).
    `words`: the distinct word indices (byte address // bank width) touched in
    the bank, ascending; `len(words)` is the phase's cost in wavefronts.
    """

    bank: int
    lanes: tuple[int, ...]
    words: tuple[int, ...]

    @property
    def ways(self) -> int:
        return len(self.words)


@record
class SharedCost:
    """The cost of one shared-memory request.

    `wavefronts`: the actual cost, summed over phases.
    `ideal`: the conflict-free cost, 1 wavefront per phase in which at least
      one lane is active (1, 2, 4 for a full warp of 4-, 8-, 16-byte accesses;
      a half-warp of 8-byte accesses with lanes 16-31 inactive is ideally 1;
      0 when no lane is active). Nsight's bank-conflict count = wavefronts - ideal.
    `phases`: how many phases the request is split into, active or not
      (ceil(lanes / lanes per phase): 1, 2, 4 for a full warp).
    `worst`: for each phase with a conflict (a bank with more than one
      distinct word), the collision in its most conflicted bank (the lowest
      bank on a tie); most conflicted first, then in phase order.
    """

    wavefronts: int
    ideal: int
    phases: int
    worst: tuple[BankCollision, ...] = ()

    @property
    def ways(self) -> int:
        """The n of an "n-way bank conflict": wavefronts / ideal rounded up, at least 1."""
        if self.ideal <= 0:
            return 1
        return max(1, -(-self.wavefronts // self.ideal))

    @property
    def conflicts(self) -> int:
        """Extra wavefronts, as Nsight Compute's bank-conflict counter reports them."""
        return self.wavefronts - self.ideal


@record
class GlobalCost:
    """The cost of one global-memory request.

    `sectors`: distinct aligned sectors touched by the active lanes.
    `ideal`: the sectors the requested bytes would need packed and aligned,
      ceil(active lanes * access bytes / sector bytes), as hardware-model.md defines
      it; 0 when no lane is active. A broadcast costs less than this ideal.
    `bytes_requested`: active lanes * access bytes.
    `sector_addresses`: byte address of each sector touched, ascending.
    """

    sectors: int
    ideal: int
    bytes_requested: int
    sector_addresses: tuple[int, ...] = ()

    @property
    def efficiency(self) -> float:
        """ideal / sectors, capped at 1.0 (a broadcast beats "ideal"); 1.0 with no sector."""
        if self.sectors == 0 or self.ideal >= self.sectors:
            return 1.0
        return self.ideal / self.sectors


def _check(addresses: Sequence[int | None], access_bytes: int, arch: Architecture) -> None:
    if access_bytes not in arch.access_sizes:
        raise ValueError(
            f"{arch.name}: a lane moves {', '.join(map(str, arch.access_sizes))} bytes, not {access_bytes}"
        )
    if len(addresses) > arch.warp_size:
        raise ValueError(f"{len(addresses)} lane addresses for a warp of {arch.warp_size}")


def _phase_words(chunk: Sequence[int | None], access_bytes: int, bank_bytes: int) -> set[int]:
    """Distinct words touched by the active lanes of one phase."""
    span = access_bytes // bank_bytes  # words an aligned access covers
    if span <= 1:
        span = 1
        words = {a // bank_bytes for a in chunk if a is not None}
    elif access_bytes % bank_bytes == 0:
        offsets = range(span)
        words = {a // bank_bytes + j for a in chunk if a is not None for j in offsets}
    else:  # no such access on any modelled GPU; count word by word
        last = access_bytes - 1
        return {w for a in chunk if a is not None for w in range(a // bank_bytes, (a + last) // bank_bytes + 1)}
    # A misaligned lane (a fault on the GPU) also touches the word after those.
    slack = span * bank_bytes - access_bytes
    if slack < bank_bytes - 1:
        words.update([a // bank_bytes + span for a in chunk if a is not None and a % bank_bytes > slack])
    return words


def _lanes_on_bank(
    chunk: Sequence[int | None], first_lane: int, access_bytes: int, bank: int, arch: Architecture
) -> tuple[int, ...]:
    """The active lanes of a phase (numbered from `first_lane`) that touch a word of `bank`.

    A lane touching words first .. first+count-1 hits `bank` iff
    (bank - first) mod banks < count.
    """
    bank_bytes, banks = arch.bank_bytes, arch.shared_banks
    last = access_bytes - 1
    return tuple(
        first_lane + i
        for i, a in enumerate(chunk)
        if a is not None and (bank - a // bank_bytes) % banks < (a % bank_bytes + last) // bank_bytes + 1
    )


def shared_cost(addresses: Sequence[int | None], access_bytes: int, arch: Architecture) -> SharedCost:
    """Wavefronts of one shared-memory request (see `SharedCost`).

    >>> from analyzer.arch import get_arch
    >>> shared_cost([4 * 4 * lane for lane in range(32)], 4, get_arch()).ways
    4
    """
    _check(addresses, access_bytes, arch)
    lanes_per_phase = arch.lanes_per_phase(access_bytes)
    bank_bytes, banks = arch.bank_bytes, arch.shared_banks
    n = len(addresses)
    # Fast path for naturally aligned accesses: a lane touches exactly one
    # `unit`-byte block, and block u covers the banks of group u % unit_banks
    # (all of them once), so a phase is conflict-free iff its distinct blocks
    # fall into distinct groups.
    unit = max(access_bytes, bank_bytes)
    unit_banks, uneven = divmod(banks * bank_bytes, unit)
    aligned = not uneven and unit % bank_bytes == 0
    if aligned and access_bytes > 1:
        aligned = not [a for a in addresses if a is not None and a % access_bytes]
    wavefronts = ideal = phases = 0
    worst: list[BankCollision] = []
    for start in range(0, n, lanes_per_phase):
        phases += 1
        chunk = addresses[start : start + lanes_per_phase] if lanes_per_phase < n else addresses
        if aligned:
            units = {a // unit for a in chunk if a is not None}
            if not units:
                continue  # no active lane: the phase is skipped
            ideal += 1
            if len({u % unit_banks for u in units}) == len(units):
                wavefronts += 1  # every block in its own group of banks (or broadcast)
                continue
            words = units if unit == bank_bytes else _phase_words(chunk, access_bytes, bank_bytes)
        else:
            words = _phase_words(chunk, access_bytes, bank_bytes)
            if not words:
                continue
            ideal += 1
            if len({w % banks for w in words}) == len(words):
                wavefronts += 1
                continue
        by_bank: dict[int, list[int]] = {}
        for w in words:
            by_bank.setdefault(w % banks, []).append(w)
        ways = max(map(len, by_bank.values()))
        bank = min(b for b, ws in by_bank.items() if len(ws) == ways)  # lowest on a tie
        wavefronts += ways
        worst.append(
            BankCollision(
                bank=bank,
                lanes=_lanes_on_bank(chunk, start, access_bytes, bank, arch),
                words=tuple(sorted(by_bank[bank])),
            )
        )
    if len(worst) > 1:
        worst.sort(key=lambda c: -len(c.words))  # stable: phase order among equals
    return SharedCost(wavefronts=wavefronts, ideal=ideal, phases=phases, worst=tuple(worst))


def global_cost(addresses: Sequence[int | None], access_bytes: int, arch: Architecture) -> GlobalCost:
    """Sectors of one global-memory request (see `GlobalCost`); loads and stores alike.

    >>> from analyzer.arch import get_arch
    >>> global_cost([4 * lane for lane in range(32)], 4, get_arch()).sectors
    4
    """
    _check(addresses, access_bytes, arch)
    sector_bytes = arch.sector_bytes
    active = [a for a in addresses if a is not None]
    if not active:
        return GlobalCost(sectors=0, ideal=0, bytes_requested=0)
    if access_bytes <= sector_bytes:
        sectors = {a // sector_bytes for a in active}
        # An access spills into the next sector only if misaligned (a fault on the GPU).
        slack = sector_bytes - access_bytes
        spill = [a for a in active if a % sector_bytes > slack]
        if spill:
            sectors.update([a // sector_bytes + 1 for a in spill])
    else:
        sectors = set()
        last = access_bytes - 1
        for a in active:
            sectors.update(range(a // sector_bytes, (a + last) // sector_bytes + 1))
    requested = len(active) * access_bytes
    # Ideal: the sectors the requested bytes (active lanes x access size) would need packed
    # and aligned, as hardware-model.md defines it (4 for 32 lanes x 4 bytes). Lanes that
    # share a word still count: two half-warps reading one row each cost 2 sectors, within
    # the ideal 4, not a coalescing problem. (Nsight Compute's "Ideal" column counts such
    # shared words once; docs/hardware-validation.md compares costs, not that column.)
    return GlobalCost(
        sectors=len(sectors),
        ideal=-(-requested // sector_bytes),
        bytes_requested=requested,
        sector_addresses=tuple(sorted(s * sector_bytes for s in sectors)),
    )


def split_access(size: int, align: int, arch: Architecture) -> tuple[tuple[int, int], ...]:
    """The accesses that move one element of `size` bytes aligned to `align`.

    Returns `(byte offset, access size)` pieces, each a naturally aligned word
    of one of `arch.access_sizes` and no wider than `align`: an element whose
    size is a natural size and whose alignment is at least its size moves in one
    piece; otherwise in pieces of the widest natural size that `align` and the
    offset allow (all equal when `size` is a multiple of `align`, as C layouts are):

    >>> from analyzer.arch import get_arch
    >>> split_access(12, 4, get_arch())        # float3, struct {float x, y, z;}
    ((0, 4), (4, 4), (8, 4))
    >>> split_access(16, 16, get_arch())       # struct __align__(16) {float x, y, z;}
    ((0, 16),)
    >>> split_access(32, 16, get_arch())       # wider than any access
    ((0, 16), (16, 16))
    """
    if size <= 0:
        raise ValueError(f"element size must be positive, not {size}")
    if align <= 0 or align & (align - 1):
        raise ValueError(f"alignment must be a power of two, not {align}")
    natural = sorted(arch.access_sizes, reverse=True)
    cap = min(align, arch.max_access_bytes)
    pieces: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        remaining = size - offset
        # The element's base is `align`-aligned, so base + offset is aligned to
        # the lowest set bit of offset (to `align` at offset 0).
        offset_align = offset & -offset if offset else cap
        piece = next((p for p in natural if p <= cap and p <= offset_align and p <= remaining), None)
        if piece is None:
            widest = min(cap, offset_align, remaining)
            raise ValueError(f"{arch.name}: no access of {widest} bytes or less")
        pieces.append((offset, piece))
        offset += piece
    return tuple(pieces)
