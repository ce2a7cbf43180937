"""Groups charged again (`costing.charged_again`) that a summary counts alike with a charge met
before (`costing.counted_again`): that charge's `times` grow, no charge is made, and the steps
are those `charged_again` and the group's other scenarios spend. Small programs written for the
test (an unknown block index, a counter moving the warp by 4 bytes, a sampled unknown) give the
same report, byte for byte, and the same steps per kernel, with and without the short way, and a
small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing
from walk_checks import MOVED_WARPS, UNKNOWN_GRID, budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = MOVED_WARPS

LAUNCH = UNKNOWN_GRID


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, no group counted again so)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "counted_again", lambda *args: False)


def test_groups_counted_again_give_the_plain_report_and_steps(tmp_path, monkeypatch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, LAUNCH, forget, kernels=2)


def test_groups_are_counted_again(tmp_path, monkeypatch):
    """Of the groups charged again, those counted alike with a charge before make no charge."""
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    checked(tmp_path, monkeypatch, "warm.json", *LAUNCH, "k.cu")  # the numbers met once (`S.const`)
    forget()
    taken = [0, 0]
    counted = costing.counted_again
    again = costing.charged_again

    def counting(*args):
        done = counted(*args)
        taken[0] += done
        return done

    monkeypatch.setattr(costing, "counted_again", counting)
    monkeypatch.setattr(costing, "charged_again", lambda *args: taken.__setitem__(1, taken[1] + 1) or again(*args))
    checked(tmp_path, monkeypatch, "r.json", *LAUNCH, "k.cu")
    assert taken == [2976, 0]  # (the first group of each class is charged by `charge_scenario`)


@pytest.mark.parametrize(("analysis", "cut"), [(20000, 2), (170000, 2), (185000, 1), (200000, 0)])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis, cut):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, LAUNCH, forget)
    assert fast == plain
    assert fast.count("WL940") == cut
