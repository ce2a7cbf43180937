"""What the cost walk asks once instead of per warp or per scenario (`costing.py`): the part of
a warp walk's key that the warps of an access share (`walk_key`), worked out once per access;
whether a scenario is typical, read from the sampled values already in the key of the charges
counted alike (`counted_alike`); and a walk of one scenario charged without the one-by-one
loop. A small program written for the test (launched twice from its host code, with a
sampled unknown that has typical values, and accesses of one scenario) gives the same report,
byte for byte, and the same steps per kernel, with these and with the walks not remembered or
the key asking again; the one-scenario charges equal `charged_one_by_one`'s."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing
from walk_checks import checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void k(float *a, float *b, int n, int w) {
    a[threadIdx.x] = b[threadIdx.x * 2];
    for (int i = 0; i < 12; i++)
        a[n + i * 4 + threadIdx.x] += b[w * threadIdx.y + threadIdx.x];
    if (threadIdx.x < w)
        b[blockIdx.x * 64 + threadIdx.x * 3] = a[threadIdx.y * 33];
}

int main() {
    float *a, *b;
    k<<<4, dim3(32, 4)>>>(a, b, 3, 7);
    k<<<8, dim3(64, 2)>>>(a, b, 3, 7);
    return 0;
}
"""

LAUNCHES = [(), ("--block", "32,4", "--grid", "6"), ("--block", "16,8")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, whether a scenario is typical asked in the key)."""
    forget_walk_tables()
    if monkeypatch is not None:
        alike = costing.counted_alike
        monkeypatch.setattr(
            costing, "counted_alike", lambda scenario, plan: (*alike(scenario, plan), plan.is_typical(scenario.combo))
        )


@pytest.mark.parametrize("launch", LAUNCHES)
def test_asked_once_gives_the_report_and_steps_of_asking_each_time(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def test_the_warps_of_an_access_share_its_part_of_the_key(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "k.json", "--block", "32,4", "k.cu")
    keys = list(costing._WALKS)
    # 5 accesses remembered (not the store that reads blockIdx.x), 4 warps each
    assert len(keys) == 20 and all(len(key) == 2 for key in keys)
    shared = {id(key[0]) for key in keys}
    assert len(shared) == 5  # one object per access, read by each of its warps
    assert len({key[1] for key in keys}) == 4  # the warps' thread indices


def test_a_walk_of_one_scenario_charges_what_one_by_one_charges(tmp_path, monkeypatch):
    found: list[tuple] = []
    charge = costing.charge_scenarios

    def compared(site, plan, summary, arch):
        done = charge(site, plan, summary, arch)
        if not plan.names:
            plain = costing.charged_one_by_one(site, plan, costing.Summary(shared={}), arch)
            found.append((done, plain))
        return done

    monkeypatch.setattr(costing, "charge_scenarios", compared)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "k.json", "--block", "32,4", "--grid", "6", "k.cu")
    assert len(found) == 20  # 5 accesses of one scenario (all but the loop's), 4 warps each
    for done, plain in found:
        assert len(done) == 1 and done == plain
        assert (done[0].combo, done[0].times, done[0].active) == ((), 1, 32)
