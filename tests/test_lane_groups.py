"""A lane's substitution of a mask of one opaque term taken from a lane before it whose
arguments' terms gave the same results (`lane_groups.grouped_subs`) gives what substituting
gives: the same result, the same steps, the same entries left in the opaque terms' memo. Small
programs written for the test (template instances whose masks read a loaded flag of their
own and the thread's index, as threadFenceReduction's last block does) give the same report,
byte for byte, and the same steps per kernel with the groups and with them switched off; a
small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import lane_groups, scenarios
from analyzer.analysis import symbolic as S
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
template <int N>
__global__ void last(float *out, const float *in, unsigned *count, int n) {
    __shared__ bool amLast;
    __shared__ float s[256];
    unsigned tid = threadIdx.x + threadIdx.y * 32;
    s[tid] = in[tid + N];
    if (tid == 0) amLast = (atomicInc(count, 64) == 63);
    __syncthreads();
    if (amLast && tid == 0) out[blockIdx.x + tid] = s[tid] * N;
    if (amLast && n > 1 && tid < 40) out[tid * N] = s[tid];
    if (amLast && (tid % 32) < N) s[tid] += s[tid + N];
    if (amLast && threadIdx.y == 1) out[tid] = s[tid];
}

void run(float *out, const float *in, unsigned *count, int n) {
    last<1><<<4, dim3(32, 4)>>>(out, in, count, n);
    last<2><<<4, dim3(32, 4)>>>(out, in, count, n);
    last<4><<<4, dim3(32, 4)>>>(out, in, count, n);
    last<8><<<4, dim3(32, 8)>>>(out, in, count, n);
}
"""

LAUNCHES = [(), ("--block", "64,2"), ("--block", "32,2,2", "--grid", "3")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the groups switched off)."""
    forget_walk_tables()
    lane_groups._GROUPS.clear()
    lane_groups._SHAPES.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(lane_groups, "grouped_subs", lambda e, subs: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_lanes_taken_from_a_group_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=4)


@pytest.mark.parametrize("analysis", [3_000, 15_000, 20_000, 24_000])
def test_a_small_budget_runs_out_where_the_lanes_substituted_one_by_one_ran_out(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, (), forget)
    assert fast == plain
    assert "WL940" in fast


def substituted(masks: list[S.Expr], grouped: bool) -> tuple[list[S.Expr], list[int], dict]:
    """Each mask at each lane of a 32 x 4 block, as the walk substitutes them (a memo of the
    opaque terms shared by all), with the groups or without: the results, the steps of each,
    and the memo left."""
    forget()
    memo: dict = {}
    lanes = [lane for warp in scenarios.warp_lanes((32, 4, 1), 32) for lane in warp]
    results, steps = [], []
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        for e in masks:
            for env in lanes:
                assert env is not None
                before = meter.left
                subs = S.RememberedSubs(env, memo)
                results.append(lane_groups.lane_subs(e, subs) if grouped else e.subs(subs))
                steps.append(before - meter.left)
    return results, steps, memo


def test_a_grouped_lane_gives_the_result_steps_and_memo_of_its_substitution():
    tx, ty = S.sym("threadIdx.x"), S.sym("threadIdx.y")
    tid = tx + ty * 32
    flags = [
        S.logical_and(S.compare("!=", S.unknown(f"flag {i}", S.Origin.LOADED), 0), S.compare("<", 1, S.sym("n")))
        for i in range(3)
    ]
    masks = [S.logical_and(f, S.compare("==", tid, 0)) for f in flags]
    masks += [S.logical_and(f, S.compare("<", S.mod(tid, 32), 5)) for f in flags]
    S.const(0), S.const(1)  # met once, as in the walk
    substituted(masks, False)  # the numbers both meet made
    plain = substituted(masks, False)
    fast = substituted(masks, True)
    assert fast[0] == plain[0]
    assert fast[1] == plain[1]
    assert {k: (v[0], v[1]) for k, v in fast[2].items()} == {k: (v[0], v[1]) for k, v in plain[2].items()}
    # the first flag's lanes worked out (its terms were not remembered yet); each of the other
    # two flags' masks (4) taken from two groups: the lanes where tid == 0 (or < 5) and the rest
    assert len(lane_groups._GROUPS) == 8
    assert fast[0][0] == flags[0] and fast[0][1] == S.const(0) and fast[0][128] == flags[1]
    assert fast[1][128] == fast[1][0] and fast[1][129] == fast[1][1]
