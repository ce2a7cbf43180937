"""`costing.charged_picked`: the one-by-one charging of a plan whose lanes are compiled and
picked in one call, `charge_scenario` and `count_alike` written out. A small program written
for the test walks loops whose counters move the warp by other than a whole period (so the
scenarios are charged one by one), with a sampled unknown (`w`, counted alike by its values),
a mask that turns every lane off in some scenarios, and a division by zero at one counter's
value (charged by `charge_scenario`, the slow way). Each plan charged the new way gives the
charges, times and steps of the old loop, and the report and the steps per kernel are the
same byte for byte with the old loop in its place."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import costing
from walk_checks import checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void k(float *a, float *b, int w) {
    for (int i = 0; i < 12; i++)
        if (threadIdx.x + i * 4 < 40)
            a[i * 3 + threadIdx.x * w] = b[threadIdx.x * 2 + i];
    for (int j = 0; j < 9; j++)
        a[threadIdx.x * 5 / (j - 4) + j] = 1.0f;
}

int main() {
    float *a, *b;
    k<<<2, 64>>>(a, b, 0);
    return 0;
}
"""

LAUNCHES = [(), ("--block", "32,2", "--grid", "3")]


def old_loop(site, plan, summary, arch):
    """`charged_one_by_one`'s loop as it was before `charged_picked`: `charge_scenario` and
    `count_alike` for each scenario."""
    at: dict = {}
    charged: list = []
    for combo in plan.scenarios():
        costing.count_alike(costing.charge_scenario(site, plan, combo, summary, arch), 1, plan, at, charged)
    return tuple(charged)


def forget(monkeypatch=None) -> None:
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "charged_picked", old_loop)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_the_report_and_steps_are_those_of_the_old_loop(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def test_each_plan_charges_what_the_old_loop_charges(tmp_path, monkeypatch):
    compared: list[tuple] = []
    picked = costing.charged_picked

    def both(site, plan, summary, arch):
        meter = budget.current()
        assert meter is not None
        known = costing.Summary(shared=dict(summary.shared), outcomes=dict(summary.outcomes))  # as it was
        before = meter.left
        done = picked(site, plan, summary, arch)
        steps = before - meter.left
        again = budget.Meter("analysis", 10**9)
        with budget.metered(again):  # the old loop from the summary as it was
            plain = old_loop(site, plan, known, arch)
        compared.append((plan, done, plain, steps, 10**9 - again.left))
        return done

    monkeypatch.setattr(costing, "charged_picked", both)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "k.json", "k.cu")
    assert len(compared) == 3 * 2  # the three accesses in the loops, in each of the 2 warps
    for plan, done, plain, _, _ in compared:
        # the same charges (combo, mask undecided, outcome, active lanes, times, steps), in order
        assert done == plain
        assert sum(c.times for c in done) == min(plan.count, 4096)
    # a charge that stands for several scenarios counted alike, and one with no lane active
    assert any(c.times > 1 for _, done, _, _, _ in compared for c in done)
    assert any(c.active == -1 and c.outcome is None for _, done, _, _, _ in compared for c in done)
    # with the outcomes known to the summary, the old loop spends what the new one spent
    assert all(steps == old_steps for _, _, _, steps, old_steps in compared)


def test_a_division_by_zero_is_charged_the_slow_way(tmp_path, monkeypatch):
    slow: list[tuple] = []
    charge = costing.charge_scenario

    def counted(site, plan, combo, summary, arch, lanes=None, shared=None):
        done = charge(site, plan, combo, summary, arch, lanes, shared)
        slow.append((plan.names, combo, done.outcome is None, done.active))
        return done

    monkeypatch.setattr(costing, "charge_scenario", counted)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    report, _ = checked(tmp_path, monkeypatch, "k.json", "k.cu")
    # `j - 4` is 0 at j = 4 only (the second loop's counter, `k@2`): in each of the two warps
    # the one scenario of the store's walk that the compiled call cannot give, charged by
    # `charge_scenario` (whose substitution leaves the address undecided, no outcome); every
    # other scenario of the picked plans is charged without it
    assert slow == [(("k@2",), (4,), True, 0)] * 2
    assert '"accesses"' in report
