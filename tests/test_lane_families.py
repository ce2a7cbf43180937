"""A warp's masks and loop conditions compiled from the one expression each lane's was put in
from (`symbolic/families.py`): the same values and raises as compiling the lanes' own
expressions, and the same reports and budget steps as before. Small expressions and a small
program written for the test (a blocked pyramid whose guards compare the thread index with
a bound that moves with a loop counter)."""

from __future__ import annotations

import itertools

import pytest

from analyzer.analysis import scenarios
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import compiled, families
from walk_checks import forget_walk_tables, same_with_and_without

LANE_NAMES = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
tx, k, b = S.sym("threadIdx.x"), S.sym("k@2"), S.sym("blockIdx.x")
NAMES = ("k@2", "blockIdx.x")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(compiled, "_COMPILED", {})
    monkeypatch.setattr(compiled, "_BY_EXPRS", {})
    monkeypatch.setattr(families, "_MAKERS", {})
    monkeypatch.setattr(families, "_BY_SOURCE", {})


def bound_mask() -> S.Expr:
    """`tx <= min(255, 260 - 4 k) - 32 && b < 40`, as a blocked pyramid's guard."""
    bound = S.select(S.compare("<", 255, 260 - 4 * k), 255, 260 - 4 * k)
    return S.logical_and(S.compare("<=", tx, bound - 32), S.compare("<", b, 40))


def lanes_of(e: S.Expr, xs: list[int | None]) -> tuple[list, list]:
    """Each lane's indices and `e` put in at them (None where there is no lane)."""
    at = [None if x is None else (x, 0, 0) for x in xs]
    exprs = [None if x is None else e.subs({"threadIdx.x": x, "threadIdx.y": 0, "threadIdx.z": 0}) for x in xs]
    return at, exprs


def test_the_lanes_values_are_those_of_their_own_expressions_compiled():
    mask = bound_mask()
    at, exprs = lanes_of(mask, [*range(200, 230), None, 231])
    exprs[3] = S.const(1)  # a lane's mask decided (at the grid's corners): its number
    function = families.family_values(mask, at, exprs, NAMES, LANE_NAMES)
    assert function is not None
    own = S.compile_values(exprs, list(NAMES))
    assert function.compiled == own.compiled == (*[True] * 30, False, True)
    seen = set()
    for combo in itertools.product(range(10), (0, 39, 40)):
        values = function(*combo)
        assert values == own(*combo)
        seen.add(values)
    assert len(seen) > 5  # the counter moves the bound past some lanes, not all or none
    (source,) = families._BY_SOURCE
    assert source.count("w0 =") == 1  # the bound (no lane's index) worked out once a call


def test_masks_of_another_shape_share_the_maker_and_its_source():
    first = families.family_maker(bound_mask(), NAMES, LANE_NAMES)
    other = S.logical_and(
        S.compare("<=", tx, S.select(S.compare("<", 255, 250 - 4 * k), 255, 250 - 4 * k) - 32),
        S.compare("<", b, 40),
    )
    second = families.family_maker(other, NAMES, LANE_NAMES)
    assert first is not None and second is not None
    assert first[0] is second[0] and first[1] != second[1]  # one source, other numbers
    assert len(families._BY_SOURCE) == 1


def test_what_is_not_evaluated_from_the_expression():
    # a division reading a lane's index is rebuilt assuming non-negative operands: not so
    assert families.family_maker(S.compare("<", S.floordiv(tx + k, 32), 3), NAMES, LANE_NAMES) is None
    # one that reads no lane's index is worked out once, not at each lane
    assert families.family_maker(S.compare("<", k, 7), NAMES, LANE_NAMES) is None
    # a name the scenario does not assign
    assert families.family_maker(S.compare("<", tx, S.sym("n")), NAMES, LANE_NAMES) is None
    # a lane's expression holding an unknown (not one `compile_values` writes)
    mask = bound_mask()
    at, exprs = lanes_of(mask, [0, 1])
    exprs[1] = S.logical_and(exprs[1], S.compare("<", S.unknown("v", S.Origin.LOADED), 3))
    assert families.family_values(mask, at, exprs, NAMES, LANE_NAMES) is None


def test_where_the_expression_raises_the_lanes_own_function_answers(monkeypatch):
    # (tx - 1) * ((100 + b) / k) + k: at lane 1 it is k; evaluated from the expression at
    # k = 0 it divides by zero, so the lanes' own function is compiled and gives 0
    e = (tx - 1) * S.floordiv(S.const(100) + b, k) + k
    at, exprs = lanes_of(e, [1, None])
    assert exprs[0] == k
    made: list = []
    real = compiled.compile_values
    monkeypatch.setattr(compiled, "compile_values", lambda *a: made.append(a) or real(*a))
    function = families.family_values(e, at, exprs, NAMES, LANE_NAMES)
    assert function is not None
    assert function(5, 0) == (5, None) and made == []
    assert function(0, 0) == (0, None) and len(made) == 1
    assert function(0, 3) == (0, None) and len(made) == 1  # compiled once
    at, exprs = lanes_of(e, [2, 1])
    function = families.family_values(e, at, exprs, NAMES, LANE_NAMES)
    assert function is not None
    with pytest.raises(ZeroDivisionError):  # lane 2 divides by zero in its own expression too
        function(0, 0)


# ----------------------------------------------------------------------------- the whole check
PROGRAM = """\
__global__ void pyramid(const float *in, float *out, int steps) {
    __shared__ float a[257];
    __shared__ float c[257];
    int tid = threadIdx.x;
    for (int i = 512; i > 0; i -= 32)
        for (int base = 0; base < i; base += 224) {
            int start = min(255, i - base);
            int end = start - 32;
            __syncthreads();
            if (tid <= start)
                a[tid] = in[blockIdx.x * 1024 + base + tid];
            __syncthreads();
            c[tid] = a[tid + 1] + a[tid];
            __syncthreads();
            if (tid <= end)
                out[blockIdx.x * 1024 + base + tid] = c[tid];
        }
}
"""


LAUNCHES = [("--block", "256", "--grid", "4"), ("--block", "128,2", "--grid", "2")]


def forget(monkeypatch=None) -> None:
    forget_walk_tables()
    if monkeypatch is not None:  # the lanes' own expressions compiled throughout
        monkeypatch.setattr(scenarios, "family_maker", lambda *a: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_check_reports_and_spends_as_with_the_lanes_own_expressions(tmp_path, monkeypatch, launch):
    made: list = []
    real = scenarios.family_values
    monkeypatch.setattr(scenarios, "family_values", lambda *a: made.append(a) or real(*a))
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)
    # the guards' masks and the loop's conditions of the warps, in the two checks made with them
    assert len(made) >= 2 * 16
