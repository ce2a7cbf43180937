"""An unrolled loop's trip count remembered by the loop and the values its bounds read
(`Interpreter.remembered_trips`, `pure.trip_reads`) gives what walking it gives: a small
program written for the test (unrolled loops nested in an unrolled loop, whose bounds are the
same at each trip of the outer one, or follow its counter, or are read from memory) gives the
same report, byte for byte, and the same steps per kernel, with the memo and without it; a
small budget runs out where it did; and the counts walked and remembered are the ones said."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import interpret, loops, pure
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.ir import nodes as N
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse
from walk_checks import budget_cut_alike, forget_interpreter_tables, same_with_and_without

PROGRAM = """\
__global__ void nested(float *out, const int *lens, int n) {
    __shared__ float tile[64][65];
    for (int k = 0; k < 3; k++) {
        int pos = (threadIdx.x + k * 5) & 63;
        for (int j = 0; j < 4; j += 2) {
            pos = (pos + 3) & 63;
            tile[pos][j] = out[pos + n];
        }
        for (int i = k; i < 5; i++) {
            pos = (pos * 3) & 63;
            out[pos + i] = tile[threadIdx.x][i];
        }
        for (int t = 0; t < lens[k]; t++) {
            pos = (pos + 1) & 63;
            out[pos] = 1.0f;
        }
    }
}
"""

LAUNCHES = [("--block", "64"), ("--block", "32,2", "--grid", "4")]


def plain_trips(self, s, inductions, env, ctx):
    """`remembered_trips` without the memo: the trip count walked each time."""
    return self.trip_count(s, inductions, env, ctx)


def forget(monkeypatch=None) -> None:
    """Every remembered table emptied (and, with `monkeypatch`, the trip memo switched off)."""
    forget_interpreter_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(interpret.Interpreter, "remembered_trips", plain_trips)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_remembered_trips_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


@pytest.mark.parametrize("analysis", [500, 2_000, 6_000])
def test_a_small_budget_runs_out_where_it_did_without_the_trip_memo(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "64"), forget)
    assert fast == plain


def _module() -> N.Module:
    return lower(parse(PROGRAM).unit, PROGRAM, "test.cu")


def _loops(kernel: N.Function) -> dict[str, N.Loop]:
    """The kernel's loops by the name of the variable their initialisation assigns."""
    found = [s for s in N.walk_statements(kernel.body) if isinstance(s, N.Loop)]
    return {s.init[0].var.name: s for s in found if isinstance(s.init[0], N.Assign)}


def test_trip_reads_name_what_a_trip_count_depends_on():
    kernel = _module().kernels[0]
    by_name = _loops(kernel)
    k_uid = by_name["k"].init[0].var.uid
    assert pure.trip_reads(by_name["j"], loops.shape(by_name["j"]).unroll or {}) == ()
    assert pure.trip_reads(by_name["i"], loops.shape(by_name["i"]).unroll or {}) == (k_uid,)
    assert pure.trip_reads(by_name["t"], {}) is None  # its bound is loaded


def test_each_trip_count_is_walked_once_per_values_read(monkeypatch):
    module = _module()
    walked: list[str] = []
    trip_count = interpret.Interpreter.trip_count

    def counted(self, s, inductions, env, ctx):
        walked.append(s.init[0].var.name)
        return trip_count(self, s, inductions, env, ctx)

    monkeypatch.setattr(interpret.Interpreter, "trip_count", counted)
    interp = interpret.Interpreter(module, LaunchConfig((64, 1, 1), (1, 1, 1), "--block"), {}, get_arch())
    meter = budget.Meter("analysis", 1_000_000)
    with budget.metered(meter):
        interp.run_kernel(module.kernels[0])
    # k once; j once for its three reaches (its bounds read nothing); i once per value of k
    assert walked == ["k", "j", "i", "i", "i"]
    assert sorted(trips for trips, _ in interp.memo.trips.values()) == [2, 3, 3, 4, 5]  # j 2; k 3; i 5, 4, 3
    # the loop over `lens[k]` is not unrolled: never walked, never remembered
    assert all(isinstance(steps, int) and steps > 0 for _, steps in interp.memo.trips.values())
