"""CUDA's limits, and the checks of every value that must keep to them, wherever it enters.

The one place that knows them: the command line (`analyzer.cli`: `--block 32,8`, `--param
n=1024`, `-D TILE=32`) and the configuration files (`analyzer.config`: `block = [32, 8]`,
`[params]`, `defines`) accept the same values and refuse them for the same reasons; the host
code's launches and `__launch_bounds__` (`analyzer.analysis.launch`), `__align__`
(`analyzer.ir`) and the size of `__shared__` arrays (`analyzer.analysis.limits`) are held to
the same limits, a value outside being a WL907 diagnostic at its place. Each caller words the
refusal in its own terms (a flag, a TOML key, a diagnostic), so the checks here return or
raise only the reason.

The launch limits are those of every architecture warplint models (compute capability 2.0
and later, sm_70 ... sm_90 among them): at most 1024 threads a block, 1024 × 1024 × 64 in x,
y and z, and a grid of (2**31 - 1) × 65535 × 65535 blocks. An alignment is a power of two up
to 2**29, the largest nvcc 13.0 accepts (`__align__(1 << 30)`: "huge alignment values are
unsupported"); the shared memory of a block is the architecture's
(`analyzer.arch.Architecture.shared_memory_per_block`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from analyzer.lazy_pattern import lazy_compile

__all__ = [
    "MAX_ALIGNMENT",
    "MAX_BLOCK",
    "MAX_BLOCK_THREADS",
    "MAX_GRID",
    "MAX_PARAM",
    "LaunchLimitError",
    "alignment_problem",
    "dims_problem",
    "is_macro_name",
    "is_param_name",
    "launch_dims",
    "param_problem",
]

MAX_BLOCK = (1024, 1024, 64)  # blockDim.x, .y, .z
MAX_BLOCK_THREADS = 1024  # blockDim.x * .y * .z
MAX_GRID = (2**31 - 1, 65535, 65535)  # gridDim.x, .y, .z
MAX_ALIGNMENT = 2**29  # the largest __align__(n) / alignas(n) nvcc accepts
MAX_PARAM = 2**63 - 1  # a kernel parameter's value: what a 64-bit integer holds (either sign)

_PARAM_NAME = lazy_compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")  # `n`, or a struct parameter's field `A.width`
_MACRO_NAME = lazy_compile(r"[A-Za-z_]\w*(\([\w\s,.]*\))?\Z")  # `TILE`, or a function-like `MAX(a,b)`


class LaunchLimitError(ValueError):
    """Dimensions CUDA would refuse to launch; `str()` is the reason, without the value."""


def launch_dims(dims: Sequence[int], limits: tuple[int, int, int], total: int | None = None) -> tuple[int, int, int]:
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


def dims_problem(dims: Sequence[object], limits: tuple[int, int, int], total: int | None) -> str | None:
    """Why dimensions computed from the host code (ints or floats, as `dim3(1, 0.5)` holds
    them before the conversion) cannot launch, or None when they can."""
    for axis, d in zip("xyz", dims):
        if isinstance(d, float) and not math.isfinite(d):
            return f"{axis} is {d}, not a number of blocks or threads"
        if isinstance(d, float) and not d.is_integer():
            return f"{axis} is {d:g}, not a whole number (dim3 truncates it to {int(d)})"
        if isinstance(d, (int, float)) and d < 1:
            return f"{axis} is {d if isinstance(d, int) else f'{d:g}'}; every dimension must be at least 1"
    try:
        launch_dims([int(d) for d in dims], limits, total)  # type: ignore[call-overload]
    except LaunchLimitError as err:
        return str(err)
    except (TypeError, ValueError, OverflowError):
        return "a dimension is not a number"
    return None


def alignment_problem(n: int) -> str | None:
    """Why `__align__(n)` / `alignas(n)` is refused, or None: n must be a power of two, 1 to 2**29."""
    if n < 1 or n & (n - 1):
        return f"the alignment {n} is not a power of two"
    if n > MAX_ALIGNMENT:
        return f"the alignment {n} is larger than {MAX_ALIGNMENT} (2^29), the largest nvcc accepts"
    return None


def param_problem(value: int) -> str | None:
    """Why a kernel parameter's value (`--param`, `[params]`) is refused, or None."""
    if not -MAX_PARAM - 1 <= value <= MAX_PARAM:
        return "the value does not fit in 64 bits"
    return None


def is_param_name(name: str) -> bool:
    """A kernel parameter's name (`n`) or a field of a struct parameter (`A.width`)."""
    return bool(_PARAM_NAME.match(name))


def is_macro_name(name: str) -> bool:
    """A macro's name as `-D` takes it: `TILE`, or a function-like `MAX(a,b)`."""
    return bool(_MACRO_NAME.match(name))
