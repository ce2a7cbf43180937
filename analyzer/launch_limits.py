"""CUDA's launch limits, and the checks of a launch, a parameter and a macro given from outside.

The command line (`analyzer.cli`: `--block 32,8`, `--param n=1024`, `-D TILE=32`) and the
configuration files (`analyzer.config`: `block = [32, 8]`, `[params]`, `defines`) accept the
same values and refuse them for the same reasons; each words the refusal in its own terms
(a flag, a TOML key), so the checks here return or raise only the reason.

The limits are those of every architecture warplint models (compute capability 2.0 and
later, sm_70 ... sm_90 among them): at most 1024 threads a block, 1024 × 1024 × 64 in x, y
and z, and a grid of (2**31 - 1) × 65535 × 65535 blocks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "MAX_BLOCK",
    "MAX_BLOCK_THREADS",
    "MAX_GRID",
    "LaunchLimitError",
    "is_macro_name",
    "is_param_name",
    "launch_dims",
]

MAX_BLOCK = (1024, 1024, 64)  # blockDim.x, .y, .z
MAX_BLOCK_THREADS = 1024  # blockDim.x * .y * .z
MAX_GRID = (2**31 - 1, 65535, 65535)  # gridDim.x, .y, .z

_PARAM_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")  # `n`, or a struct parameter's field `A.width`
_MACRO_NAME = re.compile(r"[A-Za-z_]\w*(\([\w\s,.]*\))?\Z")  # `TILE`, or a function-like `MAX(a,b)`


class LaunchLimitError(ValueError):
    """Dimensions CUDA would refuse to launch; `str()` is the reason, without the value."""


def launch_dims(dims: Sequence[int], limits: tuple[int, int, int],
                total: int | None = None) -> tuple[int, int, int]:
    """One to three dimensions as `(x, y, z)`, the missing ones 1.

    Raises `LaunchLimitError` when one is below 1, above its entry in `limits`, or when
    their product is above `total` (threads a block; None: no such limit, as for a grid).
    """
    padded = [*dims, *[1] * (3 - len(dims))]
    if any(d < 1 for d in padded):
        raise LaunchLimitError("every dimension must be at least 1")
    for axis, d, limit in zip("xyz", padded, limits):
        if d > limit:
            raise LaunchLimitError(f"{axis} is {d}, the limit is {limit}")
    threads = padded[0] * padded[1] * padded[2]
    if total is not None and threads > total:
        raise LaunchLimitError(f"{threads} threads per block, the limit is {total}")
    return padded[0], padded[1], padded[2]


def is_param_name(name: str) -> bool:
    """A kernel parameter's name (`n`) or a field of a struct parameter (`A.width`)."""
    return bool(_PARAM_NAME.match(name))


def is_macro_name(name: str) -> bool:
    """A macro's name as `-D` takes it: `TILE`, or a function-like `MAX(a,b)`."""
    return bool(_MACRO_NAME.match(name))
