"""The moved groups of a walk charged as a run and remembered (`runs.py`): a run met again
(the warps of an access, and the accesses of a kernel, that agree on the first group's
lanes and start) is counted from what the first run did, spending the steps the plain run
spends. Small programs written for the test (uniform loads and rows moved by block
indices, under masks, beside a loop counter that keeps its values, a sampled unknown, and
shared memory) give the same report, byte for byte, and the same steps per kernel, with the
runs remembered and charged group by group; and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, runs
from walk_checks import budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void uniform(const float *a, const float *b, float *c, int n) {
    float x = a[blockIdx.x] * b[blockIdx.x];
    if (threadIdx.x < 40)
        x += a[blockIdx.x + 3];
    for (int k = 0; k < 4; k++)
        x += b[blockIdx.x * 3 + k * 2];
    c[blockIdx.x * 65 + threadIdx.x] = x;
    if (threadIdx.x + n < 70)
        c[blockIdx.x * 2 + threadIdx.x * 2] = x;
}

__global__ void shared_rows(float *out) {
    __shared__ float s[64 * 33];
    s[blockIdx.x * 33 + threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 5 + threadIdx.x] = s[blockIdx.x + threadIdx.x * 2];
}
"""

LAUNCHES = [("--block", "128", "--grid", "40"), ("--block", "64,2", "--grid", "12,3"), ("--block", "96", "--grid", "7")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, each run charged group by group)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(runs, "one_class", lambda groups: False)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_runs_remembered_give_the_plain_walks_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)


# (the steps of the first kernel 2 fewer since a branch's mask is built when read: the else
# of `threadIdx.x + n < 70` makes no access, and its mask, `!(...)` and `&&`, is not built)
@pytest.mark.parametrize(("walks", "met", "spent"), [("remembered", 0, [8225, 3994]), ("each warp", 25, [9735, 4003])])
def test_runs_are_met_again(tmp_path, monkeypatch, walks, met, spent):
    """The runs of the uniform loads and rows moved by blocks (40 blocks, 4 warps) are
    remembered and counted again: 9 worked out, and with every warp walked (`walk_key` None)
    25 met again (the loop's load among them: its counter's condition holds at each of its
    values, `groups._lanes_read`). With the walks remembered none is met again: the warps
    after the first of an access that reads no thread index, or reads `threadIdx.x` only in
    its address as a term that moves each warp by whole rows of banks (`c[blockIdx.x * 65 +
    threadIdx.x]`) and in masks that no lane decides (`threadIdx.x + n < 70`), take the
    first's whole walk (`costing.walk_warp`, `walk_keys.index_reads`), in fewer steps."""
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    if walks == "each warp":
        monkeypatch.setattr(costing, "walk_key", lambda site, arch: None)
    # checked once before: the numbers and symbols the symbolic layer keeps (`S.const`,
    # `S.sym`) spend a step only when first made, so the steps below would otherwise depend on
    # what the process checked before this test (before the warm-up run was added: 62 steps
    # more with every warp walked when the test ran alone than after another test of it)
    checked(tmp_path, monkeypatch, "warm.json", "--block", "128", "--grid", "40", "k.cu")
    forget()
    calls = {"replayed": 0, "worked out": 0}

    def counting(name, function):
        return lambda *args: calls.__setitem__(name, calls[name] + 1) or function(*args)

    monkeypatch.setattr(runs, "_replayed", counting("replayed", runs._replayed))
    monkeypatch.setattr(runs, "_one_by_one", counting("worked out", runs._one_by_one))
    _, steps = checked(tmp_path, monkeypatch, "r.json", "--block", "128", "--grid", "40", "k.cu")
    assert calls == {"replayed": met, "worked out": 9}
    assert steps == spent


@pytest.mark.parametrize(("analysis", "cut"), [(7000, 2), (12000, 1), (24000, 0)])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis, cut):
    launch = ("--block", "128", "--grid", "40")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain
    assert fast.count("WL940") == cut
