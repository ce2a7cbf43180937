"""Walks shared by warps moved by whole address periods although a grid-stride loop's condition
reads their thread index (`moved_walks.py`): the warps of an access after the first take its
walk, spending the steps their own making would. The report, byte for byte, and the steps per
kernel are those of the plain walk, and a small budget runs out where it did."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from analyzer.analysis import costing, moved_walks, scenarios
from analyzer.analysis import symbolic as S
from runner import REPO
from walk_checks import budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
template <int B>
__global__ void sum(const float *in, float *out, unsigned int n) {
    __shared__ float s[256];
    unsigned int i = blockIdx.x * B * 2 + threadIdx.x;
    float acc = 0.0f;
    while (i < n) {
        acc += in[i];
        if (i + B < n) acc += in[i + B];
        i += B * 2 * gridDim.x;
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

void run(const float *in, float *out, unsigned int n) {
    sum<256><<<64, 256>>>(in, out, n);
    sum<128><<<64, 128>>>(in, out, n);
}
"""


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, no warp takes a moved walk)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "moved_walk_key", lambda key, site, lanes: None)


def plans_made(tmp_path, monkeypatch, name: str) -> tuple[int, str, list[int]]:
    """The walks `plan_warp` made in a check of PROGRAM, its report and steps per kernel."""
    made = [0]
    plan = scenarios.plan_warp

    def counted(*args):
        made[0] += 1
        return plan(*args)

    monkeypatch.setattr(costing, "plan_warp", counted)
    report, steps = checked(tmp_path, monkeypatch, name, "k.cu")
    monkeypatch.setattr(costing, "plan_warp", plan)
    return made[0], report, steps


def test_moved_walks_report_and_spend_as_the_plain_walk(tmp_path, monkeypatch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, (), forget, kernels=2)


def test_the_warps_after_the_first_take_its_walk(tmp_path, monkeypatch):
    """The two loads of the loop read `threadIdx.x` in the loop's condition `i < n` (and the
    second in its mask `i + B < n`), which no lane decides: their warps 1 to 7 (sum<256>) and
    1 to 3 (sum<128>) walk once per access instead of once each."""
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    checked(tmp_path, monkeypatch, "warm.json", "k.cu")  # the numbers met once (`S.const`)
    forget()
    fast, fast_report, fast_steps = plans_made(tmp_path, monkeypatch, "fast.json")
    forget(monkeypatch)
    plain, plain_report, plain_steps = plans_made(tmp_path, monkeypatch, "plain.json")
    assert (fast, plain) == (FAST_PLANS, PLAIN_PLANS)
    assert fast_report == plain_report
    assert fast_steps == plain_steps


FAST_PLANS, PLAIN_PLANS = 25, 41  # sum<256>: 2 accesses x 6 warps fewer; sum<128>: 2 x 2


@pytest.mark.parametrize(("analysis", "cut"), [(8000, 2), (14000, 1), (60000, 0)])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis, cut):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, (), forget)
    assert fast == plain
    assert fast.count("WL940") == cut


def _compare(left: S.Expr, op: str, right: S.Expr) -> S.Expr:
    return S.compare(op, left, right)


@pytest.mark.parametrize(
    ("cond", "alike"),
    [
        (lambda t, n: _compare(t + 512, "<", n), True),  # constant and coefficient of one sign
        (lambda t, n: _compare(t, "<", n), True),  # no constant: 0 only at the lane of value 0
        (lambda t, n: _compare(t - 32, "<", n), False),  # 0 at the lane of value 32
        (lambda t, n: _compare(t, "<", n - 32), True),  # the difference's constant 32 + t: 0 nowhere
        (lambda t, n: _compare(n + 32, "<=", t), False),  # the difference's constant 32 - t: 0 at 32
        (lambda t, n: _compare(t * 2, "<", n + t), False),  # read on both sides
    ],
)
def test_comparisons_whose_constant_vanishes_at_a_moved_lane_are_not_shared(cond, alike):
    e = cond(S.sym("threadIdx.x"), S.sym("n"))
    assert moved_walks._signed_alike(e, "threadIdx.x") is alike


#: A check in a process of its own (fresh tables, no number met before), printing the analysis
#: steps each kernel spent; with `plain`, no warp takes a moved walk.
FRESH_CHECK = """
import json, sys
from analyzer import budget, cli
from analyzer.analysis import costing
if sys.argv[1] == "plain":
    costing.moved_walk_key = lambda key, site, lanes: None
spent = []
settle = budget.Meter.settle
def counted(meter, part, allowed):
    if meter.stage == "analysis":
        spent.append(allowed - max(part.left, 0))
    return settle(meter, part, allowed)
budget.Meter.settle = counted
cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--exit-zero", "-o", "out.txt", *sys.argv[2:]])
print(json.dumps(spent))
"""


def test_a_moved_walk_met_from_another_file_spends_what_the_plain_walk_spends(tmp_path):
    """In a fresh process the second file (the same text, with a wider block) meets the walks of
    the first as made elsewhere and spends what making them took: a moved warp's walk is kept
    with its own making's steps, the number of its first lane included where it was new
    (`moved_walks.moved_met`). The same steps per kernel as the plain walk's."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    (tmp_path / "k.cu").write_text(PROGRAM.replace("<<<64, 256>>>", "<<<64, 384>>>"))
    (tmp_path / "k2.cu").write_text(PROGRAM.replace("<<<64, 256>>>", "<<<64, 384>>>"))

    def steps(mode: str) -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", FRESH_CHECK, mode, "k.cu", "k2.cu"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout.splitlines()[-1])

    fast, plain = steps("fast"), steps("plain")
    assert len(fast) == 4
    assert fast == plain
