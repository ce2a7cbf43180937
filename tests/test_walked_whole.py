"""An access whose walk key, block, warp size and grid are an earlier access's, each of whose
warps' walks is still remembered as made in the file, is given that access's counts and steps
whole (`walked_whole`): the same report byte for byte and the same steps per kernel as walking
each warp, and a budget cut where it was cut. A program written for the test: a device
function inlined three times with the same addresses, as myocyte's solver inlines its model."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, walk_keys, walked_whole
from walk_checks import budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
__device__ void step(float *y, const float *x, int m) {
    y[threadIdx.x * 9 + m] = x[threadIdx.x * 9 + 1] * 2.0f + x[threadIdx.x + m];
}

__global__ void solve(float *y, const float *x, int m) {
    step(y, x, m);
    step(y, x, m);
    step(y, x, m);
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x * 2];
    s[threadIdx.x] = x[threadIdx.x * 2];
}
"""
LAUNCHES = [("--block", "128"), ("--block", "96", "--grid", "4")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the whole walks not given again)."""
    forget_walk_tables()
    walked_whole._WHOLE.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "walked_whole", lambda key, file, walks: None)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_walk_given_whole_gives_the_report_and_steps_of_its_warps_walked(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def test_the_repeated_accesses_are_given_whole(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    before = walked_whole.RESTORED[0]
    report, _ = checked(tmp_path, monkeypatch, "r.json", "--block", "128", "k.cu")
    # the second and third calls' three accesses, and the second pair's two
    assert walked_whole.RESTORED[0] - before == 2 * 3 + 2
    assert '"accesses"' in report


def test_a_table_of_walks_emptied_since_gives_nothing_whole():
    walks = costing._WALKS
    walked_whole._WHOLE.clear()
    walked_whole._WHOLE["k"] = walked_whole.WalkedWhole(7, walks.clears, 10, ())
    assert walked_whole.walked_whole("k", 7, walks) is not None
    assert walked_whole.walked_whole("k", 8, walks) is None  # another file
    walks.clear()
    assert walked_whole.walked_whole("k", 7, walks) is None


@pytest.mark.parametrize("analysis", [1_000, 2_000])
def test_a_small_budget_runs_out_where_the_warps_walked_ran_out(tmp_path, monkeypatch, analysis):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, ("--block", "128"), forget)
    assert fast == plain
    assert "WL940" in fast


def test_a_site_met_again_has_its_walk_key_made_once(tmp_path, monkeypatch):
    """`walk_keys.walk_key` remembers each site's key by what it reads (`_BY_SITE`): the same
    key, made once for the accesses that repeat (three calls' three accesses, a pair's two)."""
    asks: list[object] = []
    made: list[object] = []
    ask, make = walk_keys.walk_key, walk_keys.made_walk_key
    monkeypatch.setattr(walk_keys, "walk_key", lambda *a: asks.append(ask(*a)) or asks[-1])
    monkeypatch.setattr(walk_keys, "made_walk_key", lambda *a: made.append(make(*a)) or made[-1])
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    walk_keys._BY_SITE.clear()
    checked(tmp_path, monkeypatch, "r.json", "--block", "128", "k.cu")
    assert len(asks) == 3 * 3 + 2 * 2 and len(made) == 3 + 2
    assert {id(key) for key in asks} == {id(key) for key in made}
