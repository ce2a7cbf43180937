"""A warp's walk remembered in one file and met in another (`costing.walk_warp`) costs the second
file what making it would: each file spends the steps it spends checked alone, whatever the
files checked before it in the process, so that where a budget cuts a kernel short does not
depend on the order of the files or on how `-j` shares them out. Within a file, a walk met
again costs a step a scenario, as before."""

from __future__ import annotations

from analyzer.analysis import costing
from walk_checks import checked, forget_walk_tables

KERNEL = """\
__global__ void scale(float *a, const float *b, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) a[i] = b[i * 2] * 2.0f;
}
"""

OTHER = KERNEL.replace("scale", "twice")  # the same accesses in another file: the same walks


def test_a_walk_met_in_another_file_costs_what_making_it_would(tmp_path, monkeypatch):
    (tmp_path / "a.cu").write_text(KERNEL)
    (tmp_path / "b.cu").write_text(OTHER)
    monkeypatch.chdir(tmp_path)
    launch = ("--block", "128", "--grid", "8")
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "warm.json", *launch, "b.cu")  # the numbers met once (`S.const`)
    forget_walk_tables()
    alone, alone_steps = checked(tmp_path, monkeypatch, "alone.json", *launch, "b.cu")
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "first.json", *launch, "a.cu")
    after, after_steps = checked(tmp_path, monkeypatch, "after.json", *launch, "b.cu")
    assert after == alone
    assert after_steps == alone_steps and len(alone_steps) == 1 and alone_steps[0] > 0
    # and within the file, checked again: its own walks are met again, a step a scenario
    again, again_steps = checked(tmp_path, monkeypatch, "again.json", *launch, "b.cu")
    assert again == alone and again_steps == alone_steps


def test_lanes_put_in_for_another_file_cost_what_putting_them_in_would(tmp_path, monkeypatch):
    """The same, where the walks are made again (forgotten between the files) but the lanes'
    expressions were put in for the first file: their memos, whose hits cost no step, are
    emptied as a file begins (`scenarios.forget_lanes`)."""
    (tmp_path / "a.cu").write_text(KERNEL)
    (tmp_path / "b.cu").write_text(OTHER)
    monkeypatch.chdir(tmp_path)
    launch = ("--block", "128", "--grid", "8")
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "warm.json", *launch, "b.cu")
    forget_walk_tables()
    alone, alone_steps = checked(tmp_path, monkeypatch, "alone.json", *launch, "b.cu")
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "first.json", *launch, "a.cu")
    costing._WALKS.clear()
    after, after_steps = checked(tmp_path, monkeypatch, "after.json", *launch, "b.cu")
    assert after == alone and after_steps == alone_steps
