"""What one warp-level memory request costs, from the byte address of each lane.

Pure functions over concrete addresses, implementing docs/hardware-model.md:

* `shared_cost` -- shared-memory *wavefronts*: per phase, the largest number of
  distinct 4-byte words that fall into one bank, summed over phases (on compute
  capability 1.x, which broadcasts one word per step, the steps of the guide's procedure).
* `global_cost` -- global-memory *sectors*: distinct aligned 32-byte sectors; under the
  seed generations' rules (`Architecture.coalescing`), *transactions*, per request phase.
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

from analyzer.arch import Architecture, Coalescing, SharedBroadcast
from analyzer.ir.nodes import AccessOp
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
    Under a transaction rule (`Architecture.charges_sectors` false) `sectors` counts
    transactions, `ideal` the transactions of the requested bytes packed into the largest
    segment (128 bytes on 1.x and for Fermi's cached loads, else a 32-byte segment) per
    request phase, `sector_addresses` the address of each transaction in the order they
    are issued and `transaction_sizes` the size of each in bytes (empty for sectors).
    """

    sectors: int
    ideal: int
    bytes_requested: int
    sector_addresses: tuple[int, ...] = ()
    transaction_sizes: tuple[int, ...] = ()

    @property
    def bytes_moved(self) -> int:
        """Bytes the transactions move (0 when charged in sectors: `sectors` x the sector size)."""
        return sum(self.transaction_sizes)

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
    if arch.shared_broadcast == SharedBroadcast.ONE_WORD:
        return _one_word_broadcast_cost(addresses, access_bytes, lanes_per_phase, arch)
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
        by_bank = _words_by_bank(words, arch)
        ways = max(map(len, by_bank.values()))
        if ways == 1:  # words of one bank all in one row of it (Kepler's 32-bit mode)
            wavefronts += 1
            continue
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


def _words_by_bank(words: set[int], arch: Architecture) -> dict[int, list[int]]:
    """The distinct words of each bank, one per row of the bank (the first, ascending): words in
    one row are served together, so the number listed is the bank's wavefronts. A row is one
    word unless `Architecture.bank_row_bytes` widens it."""
    banks = arch.shared_banks
    row_words = arch.bank_row // arch.bank_bytes * banks  # words between two rows of one bank
    by_bank: dict[int, list[int]] = {}
    rows: set[int] = set()
    for w in sorted(words):
        row = w // row_words * banks + w % banks
        if row not in rows:
            rows.add(row)
            by_bank.setdefault(w % banks, []).append(w)
    return by_bank


def _one_word_broadcast_cost(
    addresses: Sequence[int | None], access_bytes: int, lanes_per_phase: int, arch: Architecture
) -> SharedCost:
    """Compute capability 1.x (Programming Guide 5.0, F.3.3.2): a phase is served in steps; each
    step broadcasts one word (the lowest pending lane's) to every lane that reads it and serves
    one pending address in each other bank. The cost of a phase is its number of steps."""
    banks, bank_bytes = arch.shared_banks, arch.bank_bytes
    wavefronts = ideal = phases = 0
    worst: list[BankCollision] = []
    for start in range(0, len(addresses), lanes_per_phase):
        phases += 1
        chunk = addresses[start : start + lanes_per_phase]
        last = access_bytes - 1
        pending = [
            (start + i, w)
            for i, a in enumerate(chunk)
            if a is not None
            for w in range(a // bank_bytes, (a + last) // bank_bytes + 1)
        ]
        if not pending:
            continue
        ideal += 1
        by_bank: dict[int, list[tuple[int, int]]] = {}
        for lane, w in pending:
            by_bank.setdefault(w % banks, []).append((lane, w))
        steps = 0
        while pending:
            steps += 1
            broadcast = pending[0][1]
            served_banks = {broadcast % banks}
            rest = []
            for lane, w in pending:
                if w == broadcast:
                    continue
                if w % banks in served_banks:
                    rest.append((lane, w))
                else:
                    served_banks.add(w % banks)
            pending = rest
        wavefronts += steps
        if steps > 1:
            bank = min(by_bank, key=lambda b: (-len(by_bank[b]), b))  # the most addresses, lowest on a tie
            lanes = tuple(sorted({lane for lane, _ in by_bank[bank]}))
            worst.append(BankCollision(bank=bank, lanes=lanes, words=tuple(sorted({w for _, w in by_bank[bank]}))))
    if len(worst) > 1:
        worst.sort(key=lambda c: -len(c.lanes))
    return SharedCost(wavefronts=wavefronts, ideal=ideal, phases=phases, worst=tuple(worst))


def global_cost(
    addresses: Sequence[int | None], access_bytes: int, arch: Architecture, op: AccessOp = AccessOp.LOAD
) -> GlobalCost:
    """Sectors of one global-memory request (see `GlobalCost`); loads and stores alike, except
    where `arch` caches loads in lines of their own (Fermi: `Architecture.cached_load_bytes`).

    >>> from analyzer.arch import get_arch
    >>> global_cost([4 * lane for lane in range(32)], 4, get_arch()).sectors
    4
    >>> global_cost([4 * lane for lane in range(32)], 4, get_arch("sm_11")).sectors  # 2 half-warps
    2
    """
    _check(addresses, access_bytes, arch)
    if arch.coalescing == Coalescing.SECTORS and arch.lanes_per_global_phase(access_bytes) >= len(addresses):
        return _sector_cost(addresses, access_bytes, arch.sector_bytes)
    lanes = arch.lanes_per_global_phase(access_bytes)
    count = ideal = requested = 0
    starts: list[int] = []
    sizes: list[int] = []
    for first in range(0, len(addresses), lanes):
        chunk = addresses[first : first + lanes]
        phase = _phase_transactions(chunk, access_bytes, arch, op)
        active = sum(a is not None for a in chunk)
        if not active:
            continue
        count += len(phase)
        requested += active * access_bytes
        ideal += -(-active * access_bytes // _ideal_block(access_bytes, arch, op))
        starts += [t for t, _ in phase]
        sizes += [n for _, n in phase]
    if arch.coalescing == Coalescing.SECTORS:  # a model with phases narrower than the warp
        return GlobalCost(count, ideal, requested, tuple(starts))
    return GlobalCost(count, ideal, requested, tuple(starts), tuple(sizes))


def _sector_cost(addresses: Sequence[int | None], access_bytes: int, sector_bytes: int) -> GlobalCost:
    """Volta onward: the distinct aligned sectors the active lanes of the whole warp touch."""
    active = [a for a in addresses if a is not None]
    if not active:
        return GlobalCost(sectors=0, ideal=0, bytes_requested=0)
    sectors = _blocks(active, access_bytes, sector_bytes)
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


def _blocks(active: Sequence[int], access_bytes: int, block_bytes: int) -> set[int]:
    """The distinct aligned `block_bytes` blocks (by index) that the active lanes touch."""
    if access_bytes <= block_bytes:
        blocks = {a // block_bytes for a in active}
        # An access spills into the next block only if misaligned (a fault on the GPU).
        slack = block_bytes - access_bytes
        spill = [a for a in active if a % block_bytes > slack]
        if spill:
            blocks.update([a // block_bytes + 1 for a in spill])
        return blocks
    blocks = set()
    last = access_bytes - 1
    for a in active:
        blocks.update(range(a // block_bytes, (a + last) // block_bytes + 1))
    return blocks


def _ideal_block(access_bytes: int, arch: Architecture, op: AccessOp) -> int:
    """The bytes one transaction moves at best: what the ideal packs the requested bytes into."""
    if arch.coalescing == Coalescing.SECTORS:
        return arch.sector_bytes
    if arch.coalescing == Coalescing.SEGMENTS:
        return _segment_bytes(arch, op)
    return arch.cache_line_bytes  # 1.x: the largest segment, 128 bytes


def _segment_bytes(arch: Architecture, op: AccessOp) -> int:
    if op == AccessOp.LOAD and arch.cached_load_bytes:
        return arch.cached_load_bytes
    return arch.sector_bytes


def _phase_transactions(
    chunk: Sequence[int | None], access_bytes: int, arch: Architecture, op: AccessOp
) -> list[tuple[int, int]]:
    """The (address, bytes) transactions of one request phase, in the order they are issued."""
    active = [a for a in chunk if a is not None]
    if not active:
        return []
    if arch.coalescing in (Coalescing.SECTORS, Coalescing.SEGMENTS):
        block = arch.sector_bytes if arch.coalescing == Coalescing.SECTORS else _segment_bytes(arch, op)
        return [(b * block, block) for b in sorted(_blocks(active, access_bytes, block))]
    if arch.coalescing == Coalescing.STRICT_SEQUENCE:
        return _strict_sequence(chunk, access_bytes, arch)
    return _shrunk_segments(active, access_bytes, arch)


def _strict_sequence(chunk: Sequence[int | None], access_bytes: int, arch: Architecture) -> list[tuple[int, int]]:
    """Compute capability 1.0/1.1 (Programming Guide 5.0, F.3.2.1): the half-warp's words of 4, 8
    or 16 bytes coalesce only if the k-th active lane reads the k-th word of a segment aligned to
    16 x the word size: one transaction of 64 or 128 bytes (two of 128 for 16-byte words).
    Otherwise every active lane is a transaction of its own, of at least `sector_bytes`."""
    active = [(k, a) for k, a in enumerate(chunk) if a is not None]
    k0, a0 = active[0]
    base = a0 - k0 * access_bytes
    segment = len(chunk) * access_bytes
    if access_bytes in (4, 8, 16) and base % segment == 0 and all(a == base + k * access_bytes for k, a in active):
        size = min(segment, arch.cache_line_bytes)
        return [(base + offset, size) for offset in range(0, segment, size)]
    size = max(arch.sector_bytes, access_bytes)
    return [(a // size * size, size) for _, a in active]


def _shrunk_segments(active: Sequence[int], access_bytes: int, arch: Architecture) -> list[tuple[int, int]]:
    """Compute capability 1.2/1.3 (Programming Guide 5.0, F.3.2.2): take the segment (32, 64 or
    128 bytes for 1-, 2- or wider words) of the lowest pending lane and every pending lane whose
    address lies in it; while only its lower or upper half is used, halve it (down to 32 bytes);
    issue it, and repeat until every lane is served."""
    segment = {1: arch.sector_bytes, 2: 2 * arch.sector_bytes}.get(access_bytes, arch.cache_line_bytes)
    pending = list(active)
    issued: list[tuple[int, int]] = []
    while pending:
        first = pending[0] // segment * segment
        served = [a for a in pending if first <= a < first + segment]
        low, high = min(served), max(a + access_bytes for a in served)
        start, size = first, segment
        while size > arch.sector_bytes:
            half = size // 2
            if high <= start + half:
                size = half
            elif low >= start + half:
                start, size = start + half, half
            else:
                break
        issued.append((start, size))
        pending = [a for a in pending if not first <= a < first + segment]
    return issued


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
