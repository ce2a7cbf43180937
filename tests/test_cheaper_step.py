"""The cost walk's cheaper step gives what the plain step gives: the first lane's starts
summed from a scenario's values by place (`starts.indexed_monomials`, `indexed_value`) as by
name (`monomials_value`), the masks' symbols read once per warp (`scenarios._masks_symbols`)
as lane by lane, a loop's lanes told alike by identity (`scenarios._differ`) as by a set, and
a one-scenario warp's constants read directly (`scenarios._constant_values`). Small programs
written for the test (loop counters and unknowns in the first lane's address, an opaque term
of a counter, masks on counters and unknowns, loops whose lanes agree and differ) give the
same report, byte for byte, and the same steps per kernel, with the short ways and without
them; and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer.analysis import scenarios, starts
from analyzer.analysis import symbolic as S
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void counters(float *a, int n, int w) {
    for (int k = 0; k < 12; k++)
        a[k * 3 + n * threadIdx.y + threadIdx.x + w * k] = 0.0f;
    for (int j = 0; j < 9; j++)
        if (threadIdx.x + j < n)
            a[(j / 2) * 4 + threadIdx.x * 2 + n] += 1.0f;
}

__global__ void masks(float *a, int n) {
    __shared__ float s[1024];
    for (int k = 0; k < 5; k++) {
        if (threadIdx.x > k && k < n)
            s[threadIdx.x * 4 + k] = a[threadIdx.x + k * 32];
        for (int m = 0; m < threadIdx.x % 3; m++)
            s[threadIdx.y * 33 + m] = 1.0f;
    }
    a[threadIdx.x * 5] = s[threadIdx.x];
}
"""

LAUNCHES = [
    ("--block", "32,4", "--grid", "3,2"),
    ("--block", "16,8"),
    ("--block", "64,2", "--grid", "5"),
]


def plain_masks_symbols(mask, lane_masks, where, launch):
    """`_masks_symbols` worked out lane by lane, as `plan_warp` read the masks before."""
    read: set[str] = set()
    counters: set[str] = set()
    for m in lane_masks:
        if m is not None and not m.is_const:
            read |= m.free_symbols
            counters |= {x for x in m.free_symbols if scenarios.is_loop_counter(x)}
    return frozenset(read), frozenset(counters)


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the short ways switched off)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(starts, "indexed_monomials", lambda monomials, names: None)
        monkeypatch.setattr(scenarios, "_masks_symbols", plain_masks_symbols)
        monkeypatch.setattr(scenarios, "_differ", lambda conds: len(set(conds)) > 1)
        monkeypatch.setattr(
            scenarios,
            "_constant_values",
            lambda exprs: tuple(None if e is None or not e.is_const else e.value for e in exprs),
        )


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_cheaper_step_gives_the_plain_steps_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)


@pytest.mark.parametrize("analysis", [5_000, 30_000, 90_000])
def test_a_small_budget_runs_out_where_the_plain_step_ran_out(tmp_path, monkeypatch, analysis):
    launch = ("--block", "32,4", "--grid", "3,2")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain


def test_monomials_summed_by_place_equal_those_summed_by_name():
    names = ("k", "j", "n")
    k, j, n = (S.sym(x) for x in names)
    e = k * 12 + j * n * 3 + n * 5 - 7 + j * j
    monomials = [(m, c) for m, c in e.terms() if m]
    indexed = starts.indexed_monomials(monomials, names)
    assert indexed is not None
    for values in [(0, 0, 0), (3, 1, 4), (-2, 7, 33), (5, -1, 64)]:
        assert starts.indexed_value(indexed, values) == starts.monomials_value(
            tuple(monomials), dict(zip(names, values))
        )
    opaque = [(m, c) for m, c in (S.floordiv(k, S.const(2)) * 4 + j).terms() if m]
    assert starts.indexed_monomials(opaque, names) is None  # an opaque term is evaluated by name
