"""Groups of a walk whose first lane's address is no number, charged from the first group with
the same values of the other symbols (`costing.charged_again`): a move of the warp by a plain
term (`k * 4` bytes) that is a multiple of what the starts read of the address
(`starts.kept_by_moves`) leaves the starts, so the lanes and the outcome, as they were, and
costs the steps the first group's charge took. Small programs written for the test (an
unknown block index under a sampled unknown that multiplies it, or not; a shared store beside a
global load) give the same report, byte for byte, and the same steps per kernel, with and
without the short way, and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, starts
from analyzer.analysis.starts import Shape, kept_by_moves
from analyzer.arch import get_arch
from walk_checks import MOVED_WARPS, UNKNOWN_GRID, budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = (
    MOVED_WARPS
    + """
__global__ void rows(float *x) {
    __shared__ float s[32 * 64];
    for (int k = 0; k < 64; k++)
        s[threadIdx.x * 64 + k] = x[blockIdx.x * 65 + k * 2];
}
"""
)

LAUNCH = UNKNOWN_GRID


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, no group charged again)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(starts, "kept_by_moves", lambda site, shape, arch: 0)


def test_groups_charged_again_give_the_plain_walks_report_and_steps(tmp_path, monkeypatch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, LAUNCH, forget, kernels=3)


def test_groups_are_charged_again(tmp_path, monkeypatch):
    """Of `mixed`'s 2,048 groups a warp (91 trips moving by 4 bytes, 32 residues, times 64
    values of `n`), those whose moves keep the starts are charged again; `plain`'s 2,048 (40
    trips, 64 values of `n`, which does not move the warp) likewise; the global load of `rows`
    (16 residues of 8-byte moves, starts every 4 bytes): 15 a warp."""
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    checked(tmp_path, monkeypatch, "warm.json", *LAUNCH, "k.cu")  # the numbers met once (`S.const`)
    forget()
    calls = [0]
    again = costing.charged_again
    counted = costing.counted_again  # (a group charged again and counted alike with one before)
    monkeypatch.setattr(costing, "charged_again", lambda *args: calls.__setitem__(0, calls[0] + 1) or again(*args))
    monkeypatch.setattr(
        costing, "counted_again", lambda *args: counted(*args) and not calls.__setitem__(0, calls[0] + 1)
    )
    _, steps = checked(tmp_path, monkeypatch, "r.json", *LAUNCH, "k.cu")
    assert calls == [2991]
    forget(monkeypatch)
    _, plain_steps = checked(tmp_path, monkeypatch, "p.json", *LAUNCH, "k.cu")
    assert steps == plain_steps


@pytest.mark.parametrize(("analysis", "cut"), [(20000, 2), (200000, 1), (400000, 0)])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis, cut):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, LAUNCH, forget)
    assert fast == plain
    assert fast.count("WL940") == cut


@pytest.mark.parametrize(
    ("shape", "space", "kept"),
    [
        (Shape(True, 128, 128, None), "global", 128),  # a number: its residue modulo the period
        (Shape(False, 4, 4, None), "global", 4),
        (Shape(False, 4, 8, None), "global", 8),  # the typical starts read it modulo 8
        (Shape(False, 4, 16, 16), "global", 16),  # and the stated ones, modulo 16
        (Shape(False, 8, 32, 16), "global", 32),
        (Shape(False, 4, 4, None), "shared", 1),  # whole words in shared memory: any start alike
    ],
)
def test_the_moves_that_keep_the_starts(shape, space, kept):
    from types import SimpleNamespace

    from analyzer.ir.nodes import Space

    arch = get_arch("sm_90")
    site = SimpleNamespace(space=Space(space), pieces=((0, 4),))
    assert kept_by_moves(site, shape, arch) == kept  # type: ignore[arg-type]
    for c0 in range(0, arch.address_period, 4):  # what `starts_from` gives is the same, moved so
        for move in range(0, 2 * arch.address_period, 4):
            if move % kept == 0:
                assert starts.starts_from(site, shape, c0 + move, arch) == starts.starts_from(site, shape, c0, arch)  # type: ignore[arg-type]
