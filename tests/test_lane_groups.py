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
from analyzer.analysis.values import THREAD_SYMBOLS
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
                results.append(lane_groups.terms_grouped(e, subs) if grouped else e.subs(subs))
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


def lanes_of_a_block(e: S.Expr, by_values: bool) -> tuple[list[S.Expr], list[int], int]:
    """`e` at each lane of a 32 x 4 block with a memo of its terms, by `lane_subs` (the lanes
    taken by the values of their slots) or by a plain substitution: the results, the steps of
    each, and how many lanes `by_values` worked out."""
    lane_groups._BY_VALUES.clear()
    lane_groups._SLOTS.clear()
    lane_groups._TALLY.clear()
    worked_out = 0
    plain = lane_groups.terms_grouped

    def counted(e: S.Expr, subs: S.RememberedSubs) -> S.Expr:
        nonlocal worked_out
        worked_out += 1
        return plain(e, subs)

    lane_groups.terms_grouped = counted
    memo: dict = {}
    results, steps = [], []
    meter = budget.Meter("analysis", 10**9)
    try:
        with budget.metered(meter):
            for env in [lane for warp in scenarios.warp_lanes((32, 4, 1), 32) for lane in warp]:
                assert env is not None
                before = meter.left
                subs = S.RememberedSubs(env, memo)
                results.append(lane_groups.lane_subs(e, subs) if by_values else e.subs(subs))
                steps.append(before - meter.left)
    finally:
        lane_groups.terms_grouped = plain
    return results, steps, worked_out


TID = S.sym("threadIdx.x") + S.sym("threadIdx.y") * 32
#: A sorting network's mask (cdpBitonicSort.cu's shape): whether this lane's pair sorts up,
#: from thread indices alone, picks which of two loaded values must be the smaller.
UP = S.compare("==", S.mod(S.floordiv(TID, 64), 2) * 64, S.compare("<", TID, TID ^ 4) * 64)
LOADED = S.unknown("a[tid]", S.Origin.LOADED, lane_varying=True), S.unknown("a[tid ^ 4]", S.Origin.LOADED, True)
SORTS = S.compare("!=", S.select(UP, S.compare("<", *LOADED), S.compare("<", *reversed(LOADED))), 0)


def test_lanes_whose_slots_agree_take_one_substitution_with_its_result_and_steps():
    lanes_of_a_block(SORTS, False)  # the numbers both meet made
    plain, plain_steps, _ = lanes_of_a_block(SORTS, False)
    fast, fast_steps, worked_out = lanes_of_a_block(SORTS, True)
    assert fast == plain and fast_steps == plain_steps and sum(fast_steps) == 896
    # one slot, the term of thread indices alone that says whether the pair sorts up: 2 values
    assert lane_groups._slots(SORTS, S.RememberedSubs(dict.fromkeys(THREAD_SYMBOLS, 0), {})) == (
        (),
        (S.single_atom(UP),),
    )
    assert worked_out == 2
    assert {str(e) for e in fast} == {
        "0 != (per-lane a[tid] < per-lane a[tid ^ 4])",
        "0 != (per-lane a[tid ^ 4] < per-lane a[tid])",
    }


def test_a_lane_whose_slot_divides_by_zero_is_substituted_on_its_own():
    tx = S.sym("threadIdx.x")
    mask = S.logical_and(S.compare("<", S.floordiv(tx * 4, tx - 3), 5), S.compare("<", tx, S.sym("n")))
    lanes_of_a_block(mask, False)
    plain, plain_steps, _ = lanes_of_a_block(mask, False)
    fast, fast_steps, worked_out = lanes_of_a_block(mask, True)
    assert fast == plain and fast_steps == plain_steps
    assert str(fast[3]) == "(3 < n) && ((12 / 0) < 5)" and str(fast[35]) == str(fast[3])
    # threadIdx.x is read bare too: 32 values, each worked out once, and the 4 lanes of
    # threadIdx.x == 3 each on its own (the first of them counted among the 32)
    assert worked_out == 32 + 3


def test_an_expression_whose_lanes_never_agree_is_given_up_after_its_trial():
    # the slot `(threadIdx.x + threadIdx.y*32) % 128` differs at each of the block's 128 lanes
    spread = S.mod(TID, 128) * 3 + S.sym("n")
    lanes_of_a_block(spread, False)
    plain, plain_steps, _ = lanes_of_a_block(spread, False)
    fast, fast_steps, worked_out = lanes_of_a_block(spread, True)
    assert fast == plain and fast_steps == plain_steps and worked_out == 128
    slots = lane_groups._slots(spread, S.RememberedSubs(dict.fromkeys(THREAD_SYMBOLS, 0), {}))
    assert lane_groups._TALLY[slots] == [lane_groups.TRIAL_LANES, 0]  # asked no more after 64


def test_a_mask_whose_lanes_never_share_a_group_is_given_up_after_its_trial():
    """A mask of the grouped shape whose argument's term gives another result at each lane
    (`(tid * 7) % 1000 < n`, never remembered at a lane before) takes no lane from a group:
    after `TRIAL_LANES` of the block's 128 lanes it is substituted without looking
    (`_GROUP_TALLY`), with the same results, steps and memo as substituting each lane."""
    tid = S.sym("threadIdx.x") + S.sym("threadIdx.y") * 32
    flag = S.compare("!=", S.unknown("flag", S.Origin.LOADED), 0)
    mask = S.logical_and(flag, S.compare("<", S.mod(tid * 7, 1000), S.sym("n")))
    S.const(0), S.const(1)
    substituted([mask], False)  # the numbers both meet made
    plain = substituted([mask], False)
    looked: list[S.Term] = []
    key = lane_groups._key

    def counted(t, subs):
        looked.append(t)
        return key(t, subs)

    lane_groups._key = counted
    try:
        fast = substituted([mask], True)
    finally:
        lane_groups._key = key
    assert fast[0] == plain[0] and fast[1] == plain[1]
    assert {k: (v[0], v[1]) for k, v in fast[2].items()} == {k: (v[0], v[1]) for k, v in plain[2].items()}
    assert lane_groups._GROUP_TALLY[mask] == [lane_groups.TRIAL_LANES, 0]
    # each lane of the trial looked its term and its argument's term up, the others none
    assert len(looked) == 2 * lane_groups.TRIAL_LANES
