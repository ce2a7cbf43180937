"""CUDA's built-in variables and functions, one record each: the one table of what warplint knows.

Lowering recognises a name here (`lookup`, `variable`, `is_barrier_statement`) and makes IR
from the record: a barrier as a `Sync` statement, an atomic or a load intrinsic as an
`Access`, `min`/`max` as a `Call`, `__mul24` as a product, `warpSize` and `threadIdx.x` as a `Builtin`, anything else as
an opaque call whose type follows the record's `result`. The analysis reads what a value is
(`BuiltinKind`, `axis`, `lane_varying`: `threadIdx.x` differs between lanes, `blockIdx.x` does
not, an atomic's old value does) and gives `warpSize` the `Architecture`'s warp size; the
simulator runs the record's `operation` (`atomicCAS` is "cas", `__shfl_xor_sync` is "xor").
`docs/ARCHITECTURE.md` ("Adding a builtin") gives the steps to add one.

Names are looked up without their namespace (`std::min` is `min`, `cg::sync` is `sync`), and
the math functions under each of CUDA's spellings (`sqrtf`, the intrinsic `__expf`,
`std::sqrt`: `math_function`).
"""

from __future__ import annotations

from enum import StrEnum

from analyzer.ir import types as T
from analyzer.records import record

__all__ = [
    "BUILTINS",
    "VARIABLE_KINDS",
    "BuiltinKind",
    "BuiltinSpec",
    "MemoryEffect",
    "ResultType",
    "call_result_varies",
    "fixed_type",
    "is_barrier_statement",
    "lookup",
    "math_function",
    "single_precision",
    "variable",
]


class BuiltinKind(StrEnum):
    """What a builtin is."""

    # variables: read, never called
    THREAD_INDEX = "threadIdx"
    BLOCK_INDEX = "blockIdx"
    BLOCK_SIZE = "blockDim"
    GRID_SIZE = "gridDim"
    WARP_SIZE = "warpSize"
    # functions
    BARRIER = "barrier"  # __syncthreads and its variants, a group's sync
    ATOMIC = "atomic"  # read-modify-write of the memory its first argument points to
    LOAD = "load"  # a load through the pointer it is given (__ldg and the cache-hint loads)
    MIN_MAX = "min/max"  # integer min/max: a symbolic `min(a, b)`
    MUL24 = "mul24"  # a 24-bit multiply: a product
    SHUFFLE = "shuffle"  # a value read from another lane's register
    VOTE = "vote"  # a warp-wide vote over a predicate
    POPCOUNT = "popcount"
    MATH = "math"  # a floating-point (or abs) function
    ASSUME = "assume"  # `__assume(c)`, `__builtin_assume(c)`, `assert(c)`: c holds where it is reached


VARIABLE_KINDS = frozenset(
    {
        BuiltinKind.THREAD_INDEX,
        BuiltinKind.BLOCK_INDEX,
        BuiltinKind.BLOCK_SIZE,
        BuiltinKind.GRID_SIZE,
        BuiltinKind.WARP_SIZE,
    }
)


class MemoryEffect(StrEnum):
    """What a builtin does to memory."""

    NONE = "none"
    READS = "reads"  # loads what its first argument points to (an access lowering makes)
    UPDATES = "updates"  # reads and writes what its first argument points to (an atomic access)
    ORDERS = "orders"  # a barrier: other threads' writes become visible


class ResultType(StrEnum):
    """The type of what a builtin gives."""

    INT = "int"
    UINT = "unsigned int"
    FLOAT = "float"
    ELEMENT = "element"  # the type its pointer argument points to (atomics, loads)
    FIRST_ARGUMENT = "first argument"  # min/max
    UNMODELLED = "unmodelled"  # not modelled: the unknown type `name()`


_FIXED_TYPES: dict[ResultType, T.CType] = {ResultType.INT: T.INT, ResultType.UINT: T.UINT, ResultType.FLOAT: T.FLOAT}


@record
class BuiltinSpec:
    """One built-in variable or function, by its name in CUDA."""

    name: str  # "threadIdx.x", "warpSize", "atomicAdd", "__shfl_xor_sync", "sqrtf"
    kind: BuiltinKind
    result: ResultType
    memory: MemoryEffect = MemoryEffect.NONE
    # its value may differ between the lanes of a warp whatever its arguments (threadIdx.x, a
    # shuffle, an atomic's old value); otherwise it differs only where its arguments do
    lane_varying: bool = False
    # what the simulator runs: an atomic's update ("add", "cas"), a shuffle's source lane
    # ("idx", "up", "down", "xor"), a vote ("ballot", "any", "all"), "min"/"max", a math
    # function's canonical name ("sqrt" for sqrtf and std::sqrt, "exp" for __expf)
    operation: str = ""
    axis: int | None = None  # the dim3 variables: 0, 1, 2 for .x, .y, .z
    takes_mask: bool = False  # the `_sync` functions: a member mask comes first


def _dim3(vector: str, kind: BuiltinKind, lane_varying: bool = False) -> tuple[BuiltinSpec, ...]:
    return tuple(
        BuiltinSpec(f"{vector}.{axis}", kind, ResultType.UINT, lane_varying=lane_varying, axis=i)
        for i, axis in enumerate("xyz")
    )


def _atomic(name: str, operation: str) -> BuiltinSpec:
    return BuiltinSpec(
        name, BuiltinKind.ATOMIC, ResultType.ELEMENT, MemoryEffect.UPDATES, lane_varying=True, operation=operation
    )


def _shuffles() -> tuple[BuiltinSpec, ...]:
    return tuple(
        BuiltinSpec(
            f"__shfl{suffix}{sync}",
            BuiltinKind.SHUFFLE,
            ResultType.UNMODELLED,
            lane_varying=True,
            operation=operation,
            takes_mask=bool(sync),
        )
        for suffix, operation in (("", "idx"), ("_up", "up"), ("_down", "down"), ("_xor", "xor"))
        for sync in ("", "_sync")
    )


def _math(name: str, operation: str | None = None, result: ResultType = ResultType.UNMODELLED) -> BuiltinSpec:
    return BuiltinSpec(name, BuiltinKind.MATH, result, operation=operation or name)


def _float_math(name: str, operation: str | None = None) -> BuiltinSpec:
    return _math(name, operation, ResultType.FLOAT)


_TABLE: tuple[BuiltinSpec, ...] = (
    *_dim3("threadIdx", BuiltinKind.THREAD_INDEX, lane_varying=True),
    *_dim3("blockIdx", BuiltinKind.BLOCK_INDEX),
    *_dim3("blockDim", BuiltinKind.BLOCK_SIZE),
    *_dim3("gridDim", BuiltinKind.GRID_SIZE),
    BuiltinSpec("warpSize", BuiltinKind.WARP_SIZE, ResultType.INT),
    # barriers: `grid.sync()`, `x.sync()` and `cg::sync(g)` in a statement are barriers too
    # (`is_barrier_statement`); in an expression only these are
    *(
        BuiltinSpec(name, BuiltinKind.BARRIER, ResultType.INT, MemoryEffect.ORDERS)
        for name in (
            "__syncthreads",
            "__syncthreads_count",
            "__syncthreads_and",
            "__syncthreads_or",
            "sync",
            "grid.sync",
        )
    ),
    _atomic("atomicAdd", "add"),
    _atomic("atomicAdd_block", "add"),
    _atomic("atomicAdd_system", "add"),
    _atomic("atomicSub", "sub"),
    _atomic("atomicExch", "exch"),
    _atomic("atomicMin", "min"),
    _atomic("atomicMax", "max"),
    _atomic("atomicInc", "inc"),
    _atomic("atomicDec", "dec"),
    _atomic("atomicCAS", "cas"),
    _atomic("atomicAnd", "and"),
    _atomic("atomicOr", "or"),
    _atomic("atomicXor", "xor"),
    *(
        BuiltinSpec(name, BuiltinKind.LOAD, ResultType.ELEMENT, MemoryEffect.READS)
        for name in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv")
    ),
    *(
        BuiltinSpec(name, BuiltinKind.MIN_MAX, ResultType.FIRST_ARGUMENT, operation=name[-3:])
        for name in ("min", "max", "umin", "umax", "llmin", "llmax")
    ),
    *(
        BuiltinSpec(name, BuiltinKind.MUL24, ResultType.INT, operation="mul")
        for name in ("__mul24", "__umul24", "IMUL")
    ),
    *_shuffles(),
    *(
        BuiltinSpec(
            f"__{operation}_sync", BuiltinKind.VOTE, ResultType.UNMODELLED, operation=operation, takes_mask=True
        )
        for operation in ("ballot", "any", "all")
    ),
    *(
        BuiltinSpec(name, BuiltinKind.POPCOUNT, ResultType.UNMODELLED, operation="popc")
        for name in ("__popc", "__popcll")
    ),
    # facts the code states: the analysis takes their condition as true (`analysis.facts`)
    *(BuiltinSpec(name, BuiltinKind.ASSUME, ResultType.INT) for name in ("__assume", "__builtin_assume", "assert")),
    # math: the spellings typed `float` by lowering (the others' type is not modelled) ...
    _float_math("sqrtf", "sqrt"),
    _float_math("sqrt"),
    _float_math("rsqrtf", "rsqrt"),
    _float_math("expf", "exp"),
    _float_math("exp"),
    _float_math("__expf", "exp"),
    _float_math("logf", "log"),
    _float_math("log"),
    _float_math("__logf", "log"),
    _float_math("sinf", "sin"),
    _float_math("__sinf", "sin"),
    _float_math("cosf", "cos"),
    _float_math("__cosf", "cos"),
    _float_math("tanhf", "tanh"),
    _float_math("powf", "pow"),
    _float_math("pow"),
    _float_math("fabsf", "fabs"),
    _float_math("fabs"),
    _float_math("floorf", "floor"),
    _float_math("floor"),
    _float_math("ceilf", "ceil"),
    _float_math("ceil"),
    _float_math("fminf", "fmin"),
    _float_math("fmaxf", "fmax"),
    _float_math("fmaf", "fma"),
    _float_math("__fdividef", "fdividef"),
    _float_math("erff", "erf"),
    # ... and the other canonical names the simulator runs
    *(
        _math(name)
        for name in (
            "rsqrt",
            "exp2",
            "log2",
            "log10",
            "sin",
            "cos",
            "tan",
            "tanh",
            "abs",
            "round",
            "trunc",
            "fmin",
            "fmax",
            "fma",
            "fdividef",
            "erf",
            "saturate",
        )
    ),
)

#: Every builtin, by name.
BUILTINS: dict[str, BuiltinSpec] = {spec.name: spec for spec in _TABLE}

#: The prefixes of the builtins whose result differs between lanes whatever their arguments:
#: a function named after them is taken to return such a value too (a user's `atomicAggInc`,
#: a warp-aggregated atomic, gives each lane its own slot as `atomicAdd` does).
NAMED_AFTER = ("atomic", "__shfl")

#: How a statement that calls a cooperative group's barrier ends: `block.sync()`, `cg::sync(g)`.
GROUP_SYNC = (".sync", "::sync")


#: Enumerators of libcu++ (`<cuda/pipeline>`, `<cuda/atomic>`), whose headers warplint does not
#: read, with their values there: a kernel picks a pipeline role or a thread scope by them.
LIBRARY_ENUMERATORS: dict[str, int] = {
    "cuda::pipeline_role::producer": 0,
    "cuda::pipeline_role::consumer": 1,
    "cuda::thread_scope_system": 0,
    "cuda::thread_scope_device": 1,
    "cuda::thread_scope_block": 2,
    "cuda::thread_scope_thread": 3,
}


def lookup(name: str) -> BuiltinSpec | None:
    """The builtin a call of `name` is, by its name without a namespace (`std::min` is `min`)."""
    return BUILTINS.get(name.rsplit("::", 1)[-1])


def variable(name: str) -> BuiltinSpec | None:
    """The built-in variable named `name` (`threadIdx.x`, `warpSize`), also when `name` is a
    symbol of the analysis; None for any other name (a parameter, a loop counter)."""
    spec = BUILTINS.get(name)
    return spec if spec is not None and spec.kind in VARIABLE_KINDS else None


def is_barrier_statement(name: str) -> bool:
    """Whether a statement that calls `name` is a barrier: `__syncthreads()` and its variants,
    `grid.sync()`, a cooperative group's `g.sync()` and `cg::sync(g)`."""
    spec = BUILTINS.get(name)
    return (spec is not None and spec.kind is BuiltinKind.BARRIER) or name.endswith(GROUP_SYNC)


def math_function(name: str) -> BuiltinSpec | None:
    """The math function a call of `name` computes, under any of CUDA's spellings: the name
    itself, without a namespace (`std::sqrt`), without leading underscores (the intrinsics
    `__expf`, `__saturatef`) and then without the `f` of the float version (`exp2f`)."""
    short = name.rsplit("::", 1)[-1]
    spec = BUILTINS.get(short)
    if spec is None:
        base = short.lstrip("_")
        spec = BUILTINS.get(base)
        if spec is None and base.endswith("f"):
            spec = BUILTINS.get(base[:-1])
            if spec is not None and spec.name != spec.operation:  # only a canonical name loses its f
                spec = None
    return spec if spec is not None and spec.kind is BuiltinKind.MATH else None


def single_precision(name: str) -> bool:
    """Whether `name` is the `float` spelling of a math function (`sqrtf`, `__expf`, ending in
    f as CUDA names them; `sqrt` computes in double)."""
    return name.rsplit("::", 1)[-1].endswith("f")


def call_result_varies(name: str) -> bool:
    """Whether what a call of `name` returns may differ between the lanes of a warp whatever
    its arguments: a builtin that says so, or a function named after one (`NAMED_AFTER`)."""
    return name.startswith(NAMED_AFTER)


def fixed_type(spec: BuiltinSpec) -> T.CType | None:
    """The type of what `spec` gives when it does not depend on the arguments (int, unsigned
    int, float), else None."""
    return _FIXED_TYPES.get(spec.result)
