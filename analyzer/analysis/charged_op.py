"""Whether the operation of an access (a load or a store) changes what its requests cost.

`costing.shared_outcomes` keeps one table of request costs for the accesses that charge
alike, keyed by what decides a cost. The operation decides it only for global memory on the
generations that cache loads in lines of their own (`Coalescing.SEGMENTS`: `cost.global_cost`
reads it there alone); a shared-memory request, and a global one charged by sectors, cost the
same for a load and a store. Keyed by the operation throughout, the load and the store of one
statement (`a[i] += x`, or `x = s[i]; ...; s[i] = y`) charged each of their requests twice.
Mandelbrot_cuda.cu (`check --no-cache -j 1 -I Common`, 2026-11-29): 3,268 -> 1,892 requests
charged; under callgrind, with `warp_differences`, 2.797 G -> 2.592 G instructions.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer.analysis import cost
from analyzer.arch import Architecture, Coalescing
from analyzer.ir.nodes import AccessOp, Space

__all__ = ["op_that_charges"]


def op_that_charges(space: Space, op: AccessOp, arch: Architecture, models: tuple[Callable, ...]) -> AccessOp | None:
    """`op` where it may change what a request costs under the cost functions `models`
    (shared, global), else None: the load's and the store's requests are one. Another cost
    model than `cost.py`'s (a test's) is taken to read the operation."""
    if models != (cost.shared_cost, cost.global_cost):
        return op
    if space == Space.SHARED or arch.coalescing == Coalescing.SECTORS:
        return None
    return op
