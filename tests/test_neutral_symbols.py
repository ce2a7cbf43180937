"""Scenario symbols that change nothing a scenario charges (`neutral.neutral`) are grouped as
symbols that move the warp by 0 bytes, and the requests the accesses of a kernel charge alike
are worked out once (`costing.shared_outcomes`), as are the lanes of the warps of an access
that agree on what decides them (`costing.lanes_token`): small programs written for the test (a
grid-stride loop whose counter sits in divisions by an unknown, as Mandelbrot_cuda.cu's, a
counter that picks one unknown or another, a counter in a term that becomes a number) give
the same report, byte for byte, and the same steps per kernel, with the short cuts and
without them; and the check says which symbols are neutral. The first lane's address
worked out in numbers (`starts.numeric_shape`) gives the shape, constant and steps its
substitution gives."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import costing, groups, neutral, starts
from analyzer.analysis import symbolic as S
from walk_checks import forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void grid_stride(int *dst, int w, int h, int gw, int nb) {
    for (unsigned b = blockIdx.x; b < nb; b += gridDim.x) {
        int x = (b % gw) * 16 + threadIdx.x;
        int y = (b / gw) * 16 + threadIdx.y;
        if (x < w && y < h)
            dst[w * y + x] = 0;
    }
}

__global__ void picks_an_unknown(float *a, int n, int m, int nk) {
    for (int k = 0; k < nk; k++)
        if (threadIdx.x + k < m)
            a[n + (k < 3 ? n : m) + threadIdx.x] = 1.0f;
    for (int k = 0; k < nk; k++)
        if (threadIdx.x + k < m)
            a[(k < 3 ? n : m) * 2 + threadIdx.y * 32 + threadIdx.x] = 1.0f;
}

__global__ void becomes_a_number(float *a, int n, int m, int w, int nk) {
    for (int k = 0; k < nk; k++)
        if (threadIdx.x < m + k)
            a[((k < 2) && (n > 4)) * 8 + ((blockIdx.x + k) / n) * 4 + threadIdx.y * w + threadIdx.x] = 1.0f;
}
"""

LAUNCHES = [("--block", "16,16", "--grid", "12"), ("--block", "32,4"), ("--block", "8,8", "--grid", "3")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short cuts switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(groups, "neutral", lambda plan, i, values, facts: False)
        monkeypatch.setattr(costing, "shared_outcomes", lambda site, arch: {})
        monkeypatch.setattr(starts, "numeric_shape", lambda *args: None)
        monkeypatch.setattr(costing, "lanes_token", lambda plan, summary: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_neutral_symbols_grouped_give_the_plain_walks_report_and_steps(tmp_path, monkeypatch, launch):
    found: list[bool] = []
    check = groups.neutral
    monkeypatch.setattr(groups, "neutral", lambda *args: found.append(check(*args)) or found[-1])
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=3)
    assert True in found and False in found  # the short cut is taken, and refused


B, G, GW, K, N, M, W = (S.sym(n) for n in ("blockIdx.x", "gridDim.x", "gw", "k@1", "n", "m", "w"))
NAMES = ("k@1", "w")


def is_neutral(ref: S.Expr, values: range = range(1, 9)) -> bool:
    """Whether `k@1` is neutral in `ref`, the numbers met once (`S.const`: the first meeting takes a step)."""
    for _ in range(2):
        forget_walk_tables()
        starts._ATOMS.clear()
        found = neutral._neutral_in(ref, NAMES, 0, values, None)
    return found


def test_a_counter_inside_divisions_by_an_unknown_is_neutral():
    block = B + G * K
    assert is_neutral(W * S.floordiv(block, GW) * 64 + S.mod(block, GW) * 64 + W * 8 + 4)


def test_an_address_without_the_counter_leaves_it_neutral():
    assert is_neutral(W * S.floordiv(B, GW) * 64 + 4)


def test_a_counter_as_a_plain_term_moves_the_warp_and_is_not_neutral():
    assert not is_neutral(S.floordiv(B, GW) * 64 + K * 4)


def test_a_counter_that_picks_between_two_unknowns_is_neutral_unless_two_monomials_meet():
    assert is_neutral(S.select(S.compare("<", K, 3), N, M) + B * 2)
    assert not is_neutral(S.select(S.compare("<", K, 3), N, M) + N)  # at k < 3, n + n: one monomial, 2*n


def test_a_term_whose_substitution_takes_fewer_steps_at_some_value_is_not_neutral(monkeypatch):
    ref = S.select(S.compare("<", K, 3), N, M) + B * 2
    assert is_neutral(ref, range(8))  # (k < 3 is a number at every k: as many steps at each)
    substituted = neutral.substituted_alone

    def one_step_fewer_at_zero(atom, env):
        done, steps = substituted(atom, env)
        return done, steps - (env.get("k@1") == 0)

    monkeypatch.setattr(neutral, "substituted_alone", one_step_fewer_at_zero)
    assert not is_neutral(ref, range(8))
    assert is_neutral(ref, range(1, 8))


def test_a_term_that_becomes_a_number_or_a_sum_is_not_neutral():
    assert not is_neutral(S.logical_and(S.compare("<", K, 2), S.compare(">", N, 4)) * 8 + B)
    assert not is_neutral(S.select(S.compare("<", K, 3), N + M, M) * 4)


def test_a_term_that_also_reads_another_assigned_symbol_is_not_neutral():
    assert not is_neutral(S.floordiv(B + G * K, W) * 4)


def substituted_and_numeric(ref: S.Expr, combo: tuple[int, ...], names: tuple[str, ...] = NAMES) -> tuple:
    """What the substitution and the numbers give for `ref` at `combo`: (shape, rest, steps) each."""
    split = starts.split_ref(ref, names)
    assert split.indexed is not None
    shift = split.constant + starts.indexed_value(split.indexed, combo)
    found = []
    for way in ("warm", "substituted", "numeric"):  # the numbers met once first (`S.const`)
        forget_walk_tables()
        starts._ATOMS.clear()
        meter = budget.Meter("analysis", 1_000_000)
        with budget.metered(meter):
            if way == "numeric":
                done = starts.numeric_shape(split, names, combo, 128, None, {})
            else:
                done = starts.substituted_shape(ref, dict(zip(names, combo)), shift, 128, None)
        assert done is not None and done[2] == 1_000_000 - meter.left
        found.append(done)
    return tuple(found[1:])


@pytest.mark.parametrize("combo", [(0, 1), (3, 7), (5, 0), (2, 64)])
def test_the_address_in_numbers_gives_the_substitutions_shape_constant_and_steps(combo):
    block = B + G * K
    refs = [
        W * S.floordiv(block, GW) * 64 + S.mod(block, GW) * 64 + W * 8 + 4,
        S.select(S.compare("<", K, 3), N, M) * W + N * 2 + K * 4,  # n's monomials meet where k < 3
        S.select(S.compare("<", K, 2), S.const(6), M) * 4 + S.floordiv(B, W + 1) * 16,  # a term becomes a number
    ]
    for ref in refs:
        substituted, numeric = substituted_and_numeric(ref, combo)
        assert numeric == substituted


def test_the_shape_in_numbers_is_worked_out_for_each_scenario():
    substituted, numeric = substituted_and_numeric(W * S.floordiv(B + G * K, GW) * 64 + S.mod(B, GW) * 16 + 8, (1, 3))
    assert numeric == substituted == (starts.Shape(False, 16, 16, None), 0, numeric[2])
    assert numeric[2] == 5  # the substitution, the term (its argument substituted and built, itself built), the result


def test_no_numbers_where_a_term_becomes_a_sum_or_the_address_may_be_a_number():
    split = starts.split_ref(S.select(S.compare("<", K, 3), N + M, M) * 4 + B, NAMES)
    assert starts.numeric_shape(split, NAMES, (1, 2), 128, None, {}) is None
    split = starts.split_ref(S.logical_and(S.compare("<", K, 3), S.compare("<", N, 4)) * 4 + W * 2, NAMES)
    assert starts.numeric_shape(split, NAMES, (5, 2), 128, None, {}) is None  # k >= 3: 0, whatever n is
