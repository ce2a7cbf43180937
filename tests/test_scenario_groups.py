"""The cost walk's short cuts give what the plain walk gives: scenarios grouped and charged
once (`groups.scenario_groups`), and the first lane's address substituted monomial by monomial
(`starts.substituted_terms`), checked against the walk without them on small programs
written for the test, report by report, byte for byte. (The corpora's reports are held to
the same in `benchmarks/compare_reports.py`.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import cli
from analyzer.analysis import costing, groups, starts
from analyzer.analysis.scenarios import WarpPlan

#: Block indices walked block by block that only move the warp (`blockIdx.x * 16`: two
#: residues of eight blocks), loop counters that only move it (`k * 8`), unknowns in the
#: warp's start (`n`) and in the lanes' distances and masks (`m`), the one sampled unknown
#: whose cost per value is kept (`w`), a grid-stride loop whose counter sits inside divisions
#: by an unknown (the substitution), masks on counters, and loops whose totals are counted.
PROGRAM = """\
__global__ void moved_by_blocks(float *a, int n, int m) {
    a[blockIdx.x * 20 + threadIdx.x] = 0.0f;
    a[blockIdx.x * 16 + threadIdx.x * 3] = 0.0f;
    for (int k = 0; k < 40; k++)
        a[blockIdx.x * 6 + k * 8 + threadIdx.x * 2] += 1.0f;
    if (threadIdx.x < m)
        a[n + m * threadIdx.y + threadIdx.x] = 1.0f;
    for (int k = 0; k < 12; k++)
        if ((threadIdx.x & k) == 0)
            a[n * 4 + k + threadIdx.y * 33 + threadIdx.x] = 2.0f;
}

__global__ void one_unknown(float *a, int w) {
    for (int k = 0; k < 5; k++)
        a[w + k * 7 + threadIdx.x * 3] = 0.0f;
}

__global__ void grid_stride(float *dst, int w, int gw, int nb) {
    for (unsigned b = blockIdx.x; b < nb; b += gridDim.x)
        dst[w * (b / gw) * 16 + (b % gw) * 16 + threadIdx.y * w + threadIdx.x] = 0.0f;
}

__global__ void shared_moves(int n) {
    __shared__ float s[64 * 33];
    for (int j = 0; j < 9; j++)
        s[j * 2 + threadIdx.y * 33 + threadIdx.x] = 0.0f;
}
"""


def report(tmp_path: Path, name: str, *args: str) -> str:
    out = tmp_path / name
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--format", "json", "-o", str(out), *args])
    return out.read_text()


@pytest.mark.parametrize(
    "launch",
    [("--block", "32,4", "--grid", "8"), ("--block", "16,8", "--grid", "5"), ("--block", "64,2"), ("--block", "8,8")],
)
def test_grouped_scenarios_and_substituted_monomials_change_no_report(tmp_path, monkeypatch, launch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    costing._WALKS.clear()
    fast = report(tmp_path, "fast.json", *launch, "k.cu")
    assert '"accesses"' in fast
    monkeypatch.setattr(costing, "scenario_groups", lambda plan, period, facts=None: None)
    monkeypatch.setattr(starts, "substituted_terms", lambda ref, env: None)
    monkeypatch.setattr(starts, "numeric_shape", lambda *args: None)
    costing._WALKS.clear()
    plain = report(tmp_path, "plain.json", *launch, "k.cu")
    assert fast == plain


def test_the_program_has_scenarios_to_group(tmp_path, monkeypatch):
    """The short cut is taken: some plans of the program are grouped, fewer groups than scenarios."""
    seen: list[tuple[int, int]] = []
    scenario_groups = groups.scenario_groups

    def counting(plan: WarpPlan, period: int, facts=None):
        found = scenario_groups(plan, period, facts)
        if found is not None:
            seen.append((len(found), sum(g.times for g in found)))
        return found

    monkeypatch.setattr(costing, "scenario_groups", counting)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    costing._WALKS.clear()
    report(tmp_path, "fast.json", "--block", "32,4", "--grid", "8", "k.cu")
    assert any(n < total for n, total in seen)
