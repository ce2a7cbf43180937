"""The cost walk's memos give what the plain walk gives: small programs written for the test
are checked with the memos (`costing.remembered_starts`, `loops.trip_count`'s table) and with
them bypassed, and every report is the same, byte for byte. (The corpora's reports are held
to the same in `benchmarks/compare_reports.py`.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import cli
from analyzer.analysis import costing, loops, starts
from walk_checks import Forgetful

#: Warps whose first lanes differ by a multiple of an unknown (`w * threadIdx.y`), a loop
#: counter inside a division with unknowns (the substitution the memo saves), masks on the
#: counter, and trip counts asked by every warp.
PROGRAM = """\
__global__ void grid_stride(float *a, int w, int gw) {
    for (int i = 0; i < 8; i++) {
        a[w * ((blockIdx.x + gridDim.x * i) / gw) * 16 + threadIdx.y * w + threadIdx.x] = 0.0f;
        if ((threadIdx.x & i) == 0)
            a[((blockIdx.x + i) % gw) * 64 + threadIdx.y * w * 8 + threadIdx.x + 1] += 1.0f;
    }
}

__global__ void shared_walk(int n) {
    __shared__ float s[64 * 33];
    for (int k = 1; k < 64; k *= 2)
        for (int j = 0; j < n; j++)
            s[(threadIdx.y * n + j) * 33 + threadIdx.x * k] = 0.0f;
}
"""


def plain_starts(site, plan, combo, lanes, arch, memo):
    """`remembered_starts` without its memo (and so no move known to keep the starts)."""
    return (*starts.start_residues(site, plan, combo, lanes, arch), 0)


def report(tmp_path: Path, name: str, *args: str) -> str:
    out = tmp_path / name
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--format", "json", "-o", str(out), *args])
    return out.read_text()


@pytest.mark.parametrize("block", ["32,4", "16,8", "64,2"])
def test_the_memos_change_no_report(tmp_path, monkeypatch, block):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    with_memos = report(tmp_path, "with.json", "--block", block, "--grid", "4", "k.cu")
    assert '"accesses"' in with_memos
    monkeypatch.setattr(costing, "remembered_starts", plain_starts)
    monkeypatch.setattr(loops, "_TRIP_COUNTS", Forgetful())
    costing._WALKS.clear()
    without = report(tmp_path, "without.json", "--block", block, "--grid", "4", "k.cu")
    assert with_memos == without


#: One kernel launched with two grids: its walks are remembered under the first and met again
#: under the second (the walk's key does not hold the grid where no block index is read).
TWO_GRIDS = """\
__global__ void rows(float *a, int n) {
    for (int i = 0; i < 4; i++)
        a[(threadIdx.y * 4 + i) * 32 + threadIdx.x] += 1.0f;
}

int main() {
    float *a;
    rows<<<8, dim3(32, 4)>>>(a, 64);
    rows<<<3, dim3(32, 4)>>>(a, 64);
    return 0;
}
"""


def test_a_walk_met_under_another_grid_is_counted_for_that_grid(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(TWO_GRIDS)
    monkeypatch.chdir(tmp_path)
    made: list[tuple] = []
    reweighed = costing.reweighed

    def counting(plan, weight):
        done = reweighed(plan, weight)
        made.append((id(plan), weight, id(done)))
        return done

    monkeypatch.setattr(costing, "reweighed", counting)
    kernels = json.loads(report(tmp_path, "with.json", "k.cu"))["files"][0]["kernels"]
    totals = {k["launch"]["grid"][0]: [(a["requests"], a["total"]) for a in k["accesses"]] for k in kernels}
    # 8 blocks of 4 warps, 4 iterations, a load and a store of 4 sectors each: 128 requests
    assert totals == {8: [(128, 512), (128, 512)], 3: [(48, 192), (48, 192)]}
    assert {weight for _, weight, _ in made} == {8, 3}  # (a key without the grid: reweighed under both)
    # one plan made per plan and weight, however often the walk is met
    assert len({(plan, weight, done) for plan, weight, done in made}) == len({(p, w) for p, w, _ in made})


def test_a_plan_reweighed_is_made_once_per_plan_and_weight():
    from analyzer.analysis import symbolic as S
    from analyzer.analysis.scenarios import WarpPlan
    from analyzer.records import replace

    zero = S.const(0)
    plan = WarpPlan(zero, (zero,), (), 1, (), (), (), 1, True, (zero, zero), (-1,), ((),), [0], -1, block_weight=4)
    eight, again, unknown = costing.reweighed(plan, 8), costing.reweighed(plan, 8), costing.reweighed(plan, None)
    assert eight is again and eight is not plan
    assert (eight.block_weight, unknown.block_weight, plan.block_weight) == (8, None, 4)
    assert replace(eight, block_weight=4) == plan


@pytest.mark.parametrize("block", ["32,4", "16,8"])
def test_compiling_plans_part_by_part_or_whole_changes_no_report(tmp_path, monkeypatch, block):
    """`scenarios._compiled` compiles a plan of few evaluations part by part and others as one
    function (`WHOLE_AFTER`): all in parts, all whole and the default give the same report."""
    from analyzer.analysis import scenarios
    from analyzer.analysis.symbolic import compiled

    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    joined: list[int] = []
    compile_parts = compiled.compile_parts

    def counting(parts, names, made=()):
        joined.append(len([p for p in parts if len(p)]))
        return compile_parts(parts, names, made)

    monkeypatch.setattr(scenarios.S, "compile_parts", counting)
    reports = []
    for whole_after in (10**9, scenarios.WHOLE_AFTER, 0):
        monkeypatch.setattr(scenarios, "WHOLE_AFTER", whole_after)
        monkeypatch.setattr(compiled, "_BY_EXPRS", {})
        costing._WALKS.clear()
        joined.clear()
        reports.append(report(tmp_path, f"{whole_after}.json", "--block", block, "--grid", "4", "k.cu"))
        if whole_after == 0:
            assert joined == []
        else:
            assert joined and max(joined) >= 3  # addresses, masks or a loop's conditions, the first address
    assert reports[0] == reports[1] == reports[2]
