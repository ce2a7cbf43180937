"""The most a request can cost when its lanes' addresses are not known (a data-dependent index).

`hist[data[i]]`, `y[f(threadIdx.x)]`: each lane's address is a value warplint cannot work out,
but the hardware's rules still bound what one request costs. In shared memory a phase costs
the largest number of distinct words one bank holds among its lanes: no more than its lanes,
and no more than the words of the array that fall into one bank (a 256-word array starting at
bank 0 holds 8 words per bank, so no request on it costs more than 8 wavefronts). In global
memory each lane's naturally aligned piece lies in one 32-byte sector, so a request touches no
more sectors than it has lanes. The bound is reported as `per_request` with `exact: false` and
a `CostBounded` assumption; no rule reports a finding on it.
"""

from __future__ import annotations

import math

from analyzer.analysis.cost import global_cost, shared_cost
from analyzer.arch import Architecture
from analyzer.ir.nodes import Space
from analyzer.records import record

__all__ = ["RequestBound", "request_bound"]


@record
class RequestBound:
    """The most one request can cost, its ideal, and what limits it."""

    bound: int
    ideal: int
    words_per_bank: int | None  # shared: the array's words in one bank, where the array's size is known
    lanes: int  # the most lanes a request has


def request_bound(
    space: Space, piece_bytes: int, region_bytes: int | None, block: tuple[int, int, int], arch: Architecture
) -> RequestBound:
    """The bound on one request of `piece_bytes` per lane to `space`, for a warp of `block`
    (a block smaller than a warp has fewer lanes), into an array of `region_bytes` (None: not known)."""
    lanes = min(arch.warp_size, math.prod(block))
    contiguous = tuple(i * piece_bytes for i in range(lanes))
    if space != Space.SHARED:
        return RequestBound(lanes, global_cost(contiguous, piece_bytes, arch).ideal, None, lanes)
    phases = shared_cost(contiguous, piece_bytes, arch).ideal  # a full request's phases, at one wavefront each
    per_phase = -(-lanes // phases)
    words_per_bank = None
    if region_bytes:
        words = -(-region_bytes // arch.bank_bytes)
        words_per_bank = -(-words // arch.shared_banks)
        per_phase = min(per_phase, words_per_bank)
    return RequestBound(phases * per_phase, phases, words_per_bank, lanes)
