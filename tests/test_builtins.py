"""The builtins table (`analyzer.ir.builtins`): what lowering makes of each kind of builtin,
what the analysis and the simulator read of it, and the table's own consistency."""

from __future__ import annotations

import pytest

from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BUILTINS, BuiltinKind, MemoryEffect, ResultType
from analyzer.ir.lower import lower
from analyzer.sim.warp import ATOMIC_UPDATES, MATH_OPERATIONS
from analyzer.source.preprocess import preprocess
from analyzer.syntax.parse import parse


def statements(body: str) -> list[N.Stmt]:
    """The lowered statements of a kernel `body` (parameters: `float *f`, `int *n`, `float x`)."""
    text = f"__global__ void k(float *f, int *n, float x) {{\n{body}\n}}\n"
    pp = preprocess(text, "test.cu")
    module = lower(parse(pp.text).unit, pp.text, "test.cu")
    return module.kernels[0].body


def value_of(expression: str) -> N.Expr:
    (stmt,) = statements(f"int v = {expression};")
    assert isinstance(stmt, N.Assign)
    return stmt.value.operand if isinstance(stmt.value, N.Cast) else stmt.value


# ----------------------------------------------------------------------------- lowering reads the table
def test_warp_size_is_a_builtin_whose_value_the_analysis_gives():
    e = value_of("warpSize")
    assert isinstance(e, N.Builtin) and e.name == "warpSize" and e.type == T.INT


def test_thread_indices_are_builtins_of_their_axis():
    e = value_of("threadIdx.y")
    assert isinstance(e, N.Builtin) and BUILTINS[e.name].axis == 1 and e.type == T.UINT


def test_an_atomic_is_a_call_with_the_access_it_makes():
    e = value_of("atomicAdd(&n[threadIdx.x], 1)")
    assert isinstance(e, N.Call) and e.name == "atomicAdd" and e.atomic is not None
    assert e.atomic.op == N.AccessOp.ATOMIC and e.atomic.element == T.INT


def test_a_load_intrinsic_is_a_load():
    e = value_of("__ldg(&n[threadIdx.x])")
    assert isinstance(e, N.Load) and e.access.op == N.AccessOp.LOAD


@pytest.mark.parametrize("name, op", [("min", "min"), ("umax", "max"), ("std::min", "min"), ("::max", "max")])
def test_min_and_max_under_any_of_their_names_are_one_call(name, op):
    e = value_of(f"{name}(threadIdx.x, 3)")
    assert isinstance(e, N.Call) and e.name == op


def test_a_24_bit_multiply_is_a_product():
    e = value_of("__mul24(threadIdx.x, 3)")
    assert isinstance(e, N.Binary) and e.op == "*"


def test_a_barrier_statement_and_a_barrier_value():
    assert isinstance(statements("__syncthreads();")[0], N.Sync)
    e = value_of("__syncthreads_count(threadIdx.x < 3)")
    assert isinstance(e, N.Opaque) and e.kind is N.OpaqueKind.BARRIER


@pytest.mark.parametrize("name", ["__syncthreads", "__syncthreads_or", "grid.sync", "block.sync", "cg::sync", "sync"])
def test_barrier_statements(name):
    assert builtins.is_barrier_statement(name)


def test_a_builtin_the_analysis_does_not_model_is_an_opaque_call_naming_its_callee():
    e = value_of("__shfl_xor_sync(0xffffffff, threadIdx.x, 1)")
    assert isinstance(e, N.Opaque) and e.kind is N.OpaqueKind.CALL and e.callee == "__shfl_xor_sync"
    assert e.reason == "call to __shfl_xor_sync"


def test_a_float_math_function_is_typed_float():
    (stmt,) = statements("float v = sqrtf(x);")
    assert isinstance(stmt.value, N.Opaque) and stmt.value.type == T.FLOAT


# ----------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "name, operation",
    [
        ("sqrtf", "sqrt"),
        ("sqrt", "sqrt"),
        ("std::sqrt", "sqrt"),
        ("__expf", "exp"),
        ("exp2f", "exp2"),
        ("__saturatef", "saturate"),
        ("__fdividef", "fdividef"),
        ("erff", "erf"),
        ("abs", "abs"),
    ],
)
def test_a_math_function_under_each_of_its_spellings(name, operation):
    spec = builtins.math_function(name)
    assert spec is not None and spec.operation == operation


@pytest.mark.parametrize("name", ["min", "__popc", "__syncthreads", "helper", "sqrtff"])
def test_other_names_are_no_math_function(name):
    assert builtins.math_function(name) is None


def test_a_symbol_named_after_a_variable_is_that_variable():
    assert builtins.variable("blockIdx.z").kind is BuiltinKind.BLOCK_INDEX
    assert builtins.variable("n") is None and builtins.variable("min") is None


@pytest.mark.parametrize(
    "name, varies",
    [
        ("atomicAdd", True),
        ("__shfl_sync", True),
        ("atomicAggInc", True),
        ("min", False),
        ("helper", False),
    ],
)
def test_a_call_result_varies_between_lanes_for_the_builtins_that_say_so_and_functions_named_after_them(name, varies):
    assert builtins.call_result_varies(name) is varies


# ----------------------------------------------------------------------------- the table itself
def test_every_function_whose_result_varies_whatever_its_arguments_is_named_as_call_result_varies_says():
    varying = [s.name for s in BUILTINS.values() if s.lane_varying and s.kind not in builtins.VARIABLE_KINDS]
    assert varying and all(builtins.call_result_varies(name) for name in varying)


def test_memory_effects_match_kinds():
    for spec in BUILTINS.values():
        expected = {
            BuiltinKind.ATOMIC: MemoryEffect.UPDATES,
            BuiltinKind.LOAD: MemoryEffect.READS,
            BuiltinKind.BARRIER: MemoryEffect.ORDERS,
        }.get(spec.kind, MemoryEffect.NONE)
        assert spec.memory is expected, spec.name


def test_the_simulator_runs_every_operation_the_table_names():
    for spec in BUILTINS.values():
        if spec.kind is BuiltinKind.ATOMIC:
            assert spec.operation in ATOMIC_UPDATES, spec.name
        if spec.kind is BuiltinKind.MATH:
            assert spec.operation in MATH_OPERATIONS, spec.name  # (None there: not simulated)
            assert BUILTINS[spec.operation].operation == spec.operation  # a canonical entry exists


def test_variables_have_an_axis_exactly_when_they_are_dim3():
    for spec in BUILTINS.values():
        if spec.kind in builtins.VARIABLE_KINDS:
            assert (spec.axis is None) == (spec.kind is BuiltinKind.WARP_SIZE), spec.name
            assert spec.result in (ResultType.INT, ResultType.UINT)
