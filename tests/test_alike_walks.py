"""Walks alike but for their loops' numbers (`analysis.alike`): the accesses of a loop that is
replayed (`analysis.replay`) take the walks made for the loop's recorded run. A small program
written for the test (an unrolled loop around two counted ones, whose access is reached once
per trip, renamed) gives the same report, byte for byte, and the same steps at every access
costed with the walks taken alike and without them; a small budget runs out where it did;
and the walks taken alike are the ones counted."""

from __future__ import annotations

import pytest

from analyzer import cli
from analyzer.analysis import alike, costing, kernel
from walk_checks import budget_cut_alike, forget_interpreter_tables, same_with_and_without

PROGRAM = """\
__global__ void tiles(float *out, const float *in, int n) {
    __shared__ float tile[64][65];
    for (int k = 0; k < 4; k++) {
        int pos = (threadIdx.x + k * 5) & 31;
        tile[pos][threadIdx.y] = in[k * 64 + pos + threadIdx.y * n];
        __syncthreads();
        for (int j = 0; j < 3; j++) {
            for (int t = 0; t < 2; t++) {
                out[(j * 2 + t) * 64 + threadIdx.x] = tile[threadIdx.x % 16][j * 4 + t + threadIdx.y];
            }
        }
        __syncthreads();
    }
}
"""

#: Each launch, with the walks taken alike and kept (`alike.COUNTS`) and the walks made
#: (`scenarios.plan_warp`) in a check with them and without them: one warp; eight warps of
#: two rows (each access takes its eight alike, `alike_walks`); two warps of one row.
LAUNCHES = [
    (("--block", "32"), 6, 2, 10, 16),
    (("--block", "64,4", "--grid", "4"), 27, 9, 73, 100),
    (("--block", "32,2"), 9, 3, 19, 28),
]


def forget(monkeypatch=None) -> None:
    """Every remembered table emptied (and, with `monkeypatch`, the walks alike switched off)."""
    forget_interpreter_tables()
    alike.forget_alike()
    if monkeypatch is not None:
        monkeypatch.setattr(alike, "ENABLED", False)


@pytest.mark.parametrize("launch", [launch for launch, *_ in LAUNCHES])
def test_walks_alike_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def _per_access(tmp_path, monkeypatch, launch: tuple[str, ...]) -> list[int]:
    """The steps each `cost_occurrence` of a check spends."""
    spent: list[int] = []
    cost = costing.cost_occurrence

    def counted(*args, **kwargs):
        from analyzer import budget

        meter = budget.current()
        before = meter.left
        try:
            return cost(*args, **kwargs)
        finally:
            spent.append(before - meter.left)

    monkeypatch.setattr(costing, "cost_occurrence", counted)
    monkeypatch.setattr(kernel, "cost_occurrence", counted)
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--exit-zero", *launch, str(tmp_path / "k.cu")])
    monkeypatch.setattr(costing, "cost_occurrence", cost)
    monkeypatch.setattr(kernel, "cost_occurrence", cost)
    return spent


def _walks_made(monkeypatch) -> list[int]:
    made = [0]
    plan = costing.plan_warp

    def counted(*args):
        made[0] += 1
        return plan(*args)

    monkeypatch.setattr(costing, "plan_warp", counted)
    return made


@pytest.mark.parametrize(("launch", "taken", "kept", "made", "plain"), LAUNCHES)
def test_each_access_spends_its_steps_and_the_walks_alike_are_counted(
    tmp_path, monkeypatch, capsys, launch, taken, kept, made, plain
):
    (tmp_path / "k.cu").write_text(PROGRAM)
    forget()
    _per_access(tmp_path, monkeypatch, launch)  # the numbers met once (`S.const`)
    forget()
    monkeypatch.setitem(alike.COUNTS, "taken", 0)
    monkeypatch.setitem(alike.COUNTS, "kept", 0)
    walks = _walks_made(monkeypatch)
    fast = _per_access(tmp_path, monkeypatch, launch)
    assert (alike.COUNTS["taken"], alike.COUNTS["kept"], walks[0]) == (taken, kept, made)
    forget(monkeypatch)
    walks[0] = 0
    slow = _per_access(tmp_path, monkeypatch, launch)
    assert walks[0] == plain
    assert fast == slow and sum(fast) > 0
    capsys.readouterr()


@pytest.mark.parametrize("analysis", [400, 1_500, 3_000, 6_000, 12_000])
def test_a_small_budget_runs_out_where_it_did_without_the_walks_alike(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "64,4", "--grid", "4"), forget)
    assert fast == plain


class _Key:
    """A walk key as `alike.alike_walks` reads it: how the thread indices are read."""

    index_reads = (True, False, False)


class _Site:
    loops = ()


def _warp(first: int) -> tuple:
    return tuple({"threadIdx.x": first + i, "threadIdx.y": 0, "threadIdx.z": 0} for i in range(4))


def test_an_access_takes_its_warps_alike_all_or_none():
    """Each warp's walk is kept after the warps made before it in its access; an access whose
    second warp has no walk kept takes none alike, and one whose warp is met takes the rest."""
    alike.forget_alike()
    key, warps = _Key(), (_warp(0), _warp(4), _warp(8))
    rows = [alike.read_indices(w, key.index_reads) for w in warps]
    alike.keep_alike("k", (), rows[0], (None, ()), 5, _Site(), [])
    assert alike.alike_walks("k", key, warps, {}) is None  # the second warp's walk not kept
    alike.keep_alike("k", (rows[0],), rows[1], (None, ()), 7, _Site(), [])
    assert alike.alike_walks("k", key, warps[:2], {}) is not None
    assert alike.alike_walks("k", key, warps, {}) is None  # nor the third's
    taken = alike.alike_walks("k", key, warps, {(key, rows[2]): object()})  # the third met
    assert taken is not None and [w is None for w in taken] == [False, False, True]
    assert [w.steps for w in taken[:2]] == [5, 7]
    # kept after another warp: not the first warp's walk
    assert alike.alike_walks("k", key, warps[1:2], {}) is None
    alike.forget_alike()
