"""Warp-matrix fragments (`nvcuda::wmma`): their type, and what lowering does with their calls.

A `wmma::fragment<use, m, n, k, T[, layout]>` is a warp's tile of a matrix spread over the
registers of its 32 lanes: `frag.x[i]` reads a register, never memory. `load_matrix_sync` and
`store_matrix_sync` move a whole tile between memory and the fragment as one warp-wide
operation, but which lane moves which elements -- and so the addresses of each request -- is
left unspecified by CUDA (the Programming Guide calls the mapping "unspecified" and it differs
between architectures), and warplint's hardware model gives no cost for these instructions.
They are therefore never costed: lowering puts a note (WL908) at each such call saying why,
instead of a guessed cost. `mma_sync` and `fill_fragment` touch registers only.
"""

from __future__ import annotations

from analyzer.ir import types as T

__all__ = [
    "FRAGMENT_TYPE",
    "MEMORY_CALLS",
    "REGISTER_CALLS",
    "fragment_type",
    "is_warp_matrix_name",
    "not_costed_message",
]

FRAGMENT_TYPE = "fragment"
MEMORY_CALLS = frozenset(("load_matrix_sync", "store_matrix_sync"))
REGISTER_CALLS = frozenset(("mma_sync", "bmma_sync", "fill_fragment"))
_NAMESPACES = ("wmma", "nvcuda::wmma", "::nvcuda::wmma")
WARP_SIZE = 32


def is_warp_matrix_name(name: str, short: str) -> bool:
    """`name` (as written) is `short` of the `wmma` namespace (`wmma::mma_sync`, `nvcuda::wmma::fragment`)."""
    return any(name == f"{ns}::{short}" for ns in _NAMESPACES)


def fragment_type(use: str, m: int | None, n: int | None, k: int | None, element: T.CType) -> T.StructType:
    """The registers of one lane's share of a fragment: an array `x` of `element`. Its length
    is the tile's elements over the warp's lanes (a matrix_a tile is m x k, matrix_b k x n, an
    accumulator m x n), only so that the fragment has a size: nothing is costed by it, since
    registers are no memory."""
    rows, cols = {"matrix_a": (m, k), "matrix_b": (k, n)}.get(use.rsplit("::", 1)[-1], (m, n))
    per_lane = max(1, (rows or WARP_SIZE) * (cols or 1) // WARP_SIZE)
    if not element.is_known:
        element = T.FLOAT  # a precision tag (`precision::tf32`) or an unknown type: held as 4-byte registers
    members = [("x", T.ArrayType(element, per_lane)), ("num_elements", T.INT)]
    return T.layout_struct(f"wmma::fragment<{use}>", members)


def not_costed_message(call: str, pointer: str) -> str:
    """Why a warp-matrix load or store is not costed (WL908 at the call)."""
    direction = "load" if call.startswith("load") else "store"
    return (
        f"warp-matrix {direction} `{call}` of `{pointer}` is not costed: CUDA leaves unspecified which "
        "lanes move which elements of a fragment, so the addresses of its requests are not known, and "
        "warplint's hardware model gives no cost for warp-matrix loads and stores"
    )
