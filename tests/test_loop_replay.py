"""A loop reached again with what it reads the same is replayed, renamed (`analysis.replay`),
and gives what interpreting it gives: a small program written for the test (an unrolled loop
around loops that read nothing its trips change: counted ones, unrolled in turn, and one whose
bound is loaded, interpreted once with a counter of its own and unknowns) gives the same
report, byte for byte, and the same steps per kernel with the replays and without them; a
small budget runs out where it did; the interpreter's record of the run (every access with
its address, mask, loops and run of mergeable accesses, the loops numbered, the unknowns made,
the steps) is the same; and the runs replayed are the ones counted."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import interpret, replay
from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.ir import nodes as N
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse
from walk_checks import budget_cut_alike, forget_interpreter_tables, same_with_and_without

PROGRAM = """\
__global__ void tiles(float *out, const int *lens, int n) {
    __shared__ float tile[32][33];
    float acc = 0.0f;
    for (int k = 0; k < 4; k++) {
        int pos = (threadIdx.x + k * 5) & 31;
        tile[pos][k] = out[pos + n];
        __syncthreads();
        for (int j = 0; j < 3; j++) {
            int row = threadIdx.x / 4 + j;
            acc += tile[row][threadIdx.x % 4];
            for (int t = 0; t < lens[j]; t++) {
                out[t * 32 + threadIdx.x] = tile[threadIdx.x][t & 31];
            }
        }
    }
    out[threadIdx.x] = acc;
}
"""

LAUNCHES = [("--block", "32"), ("--block", "32,2", "--grid", "4")]


def forget(monkeypatch=None) -> None:
    """Every remembered table emptied (and, with `monkeypatch`, the replays switched off)."""
    forget_interpreter_tables()
    replay._READS.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(interpret.Interpreter, "replays", False)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_replayed_loops_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


@pytest.mark.parametrize("analysis", [400, 1_500, 3_000, 5_000])
def test_a_small_budget_runs_out_where_it_did_without_the_replays(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "32"), forget)
    assert fast == plain


def _run(replays: bool, monkeypatch) -> tuple[interpret.Interpreter, int, int, int]:
    """The kernel interpreted with or without replays: the interpreter, the steps it spent,
    the unknowns it made and the uid the next one gets."""
    forget()
    monkeypatch.setattr(interpret.Interpreter, "replays", replays)
    module = lower(parse(PROGRAM).unit, PROGRAM, "test.cu")
    interp = interpret.Interpreter(module, LaunchConfig((32, 1, 1), (1, 1, 1), "--block"), {}, get_arch())
    meter = budget.Meter("analysis", 1_000_000)
    made = S.unknowns_made()
    first = S.unknown("mark", S.Origin.UNMODELLED)._p
    with budget.metered(meter):
        interp.run_kernel(module.kernels[0])
    last = S.unknown("mark", S.Origin.UNMODELLED)._p
    uids = next(iter(last))[0].uid - next(iter(first))[0].uid  # type: ignore[attr-defined]
    return interp, 1_000_000 - meter.left, S.unknowns_made() - made, uids


def _record(interp: interpret.Interpreter) -> list[tuple]:
    """What the interpreter recorded, as text (unknowns by their tag: their uids are checked apart)."""
    return [
        (
            o.access.uid,
            None if o.ptr is None else (o.ptr.region, str(o.ptr.offset)),
            str(o.mask),
            [(lp.uid, lp.counter, str(lp.cond)) for lp in o.loops],
            o.window,
            None if o.reuses is None else o.reuses.uid,
            o.region_bytes,
        )
        for o in interp.occurrences
    ]


def test_a_replay_records_what_interpreting_records(monkeypatch):
    fast, fast_steps, fast_made, fast_uids = _run(True, monkeypatch)
    plain, plain_steps, plain_made, plain_uids = _run(False, monkeypatch)
    assert _record(fast) == _record(plain)
    assert (fast.loop_uid, fast.windows, fast_steps) == (plain.loop_uid, plain.windows, plain_steps)
    assert (fast_made, fast_uids) == (plain_made, plain_uids)
    # the `t` loop is reached alike at each of the 4 trips of `k` for each of the 3 values of
    # `j`: met, recorded, replayed twice (the `j` loop reads `acc`, a float that each trip adds
    # to, a fresh unknown: never alike)
    assert fast.loop_memo is not None and fast.loop_memo.replayed == 6
    assert plain.loop_memo is None
    # each replayed `t` loop has a counter and a loaded bound of its own, as interpreted
    counters = {lp.counter for o in fast.occurrences for lp in o.loops}
    assert len(counters) == plain.loop_uid


def test_loop_reads_name_what_a_run_reads_from_before_it():
    module = lower(parse(PROGRAM).unit, PROGRAM, "test.cu")
    kernel = module.kernels[0]
    found = [s for s in N.walk_statements(kernel.body) if isinstance(s, N.Loop)]
    by_name = {s.init[0].var.name: s for s in found if isinstance(s.init[0], N.Assign)}
    uid = {v.name: v.uid for s in found for v in [st.var for st in N.walk_statements([s]) if isinstance(st, N.Assign)]}
    j = replay.loop_reads(by_name["j"])
    assert j is not None
    # `acc` is read before the loop assigns it; `row`, `t` and `j` are assigned first; the
    # parameters `out` and `lens` are read
    assert uid["acc"] in j.values and uid["row"] not in j.values and uid["j"] not in j.values
    assert {p.uid for p in kernel.params if p.name in ("out", "lens")} <= set(j.values)
    # interpreted once, a loop reads whether what it writes differed between lanes before it
    # (`loops.lane_dependent_in_loop`): `row` and `t`; `j` its initialisation assigns first,
    # `acc` is read whole
    assert set(j.lanes) == {uid["row"], uid["t"]}
    t = replay.loop_reads(by_name["t"])
    assert t is not None and t.lanes == () and uid["t"] not in t.values
    assert set(j.writes) == {uid["j"], uid["row"], uid["acc"], uid["t"]}
    assert not j.joins
