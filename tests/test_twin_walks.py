"""Walks shared by twins (`twins.py`): the same access in instances of one template, whose mask
reads an unknown the interpreter made anew for each instance (a flag loaded from shared
memory), walks each warp once for all instances; the others take its walk and spend the steps
making it took. The report, byte for byte, and the steps per kernel are those of the plain
walk, and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer.analysis import costing, scenarios, walk_keys
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import Origin
from analyzer.analysis.twins import twin_key
from walk_checks import budget_cut_alike, checked, forget_walk_tables, same_with_and_without

PROGRAM = """\
template <int N>
__global__ void last(float *out, const float *in) {
    __shared__ bool amLast;
    __shared__ float s[256];
    if (threadIdx.x == 0) amLast = in[blockIdx.x] > 0.0f;
    __syncthreads();
    if (amLast && threadIdx.x < N) s[threadIdx.x * 2] = in[threadIdx.x];
    if (amLast && threadIdx.x == 0) out[blockIdx.x] = s[0];
}

void run(float *o, const float *i) {
    last<32><<<64, 256>>>(o, i);
    last<64><<<64, 256>>>(o, i);
    last<128><<<64, 256>>>(o, i);
}
"""


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, no key has a twin)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(walk_keys, "twin", lambda key, site: None)


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


def test_twins_walk_as_the_plain_walk_reports_and_spends(tmp_path, monkeypatch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, (), forget, kernels=3)


def test_the_instances_after_the_first_take_their_twins_walks(tmp_path, monkeypatch):
    """Each access walks 8 warps of 256 threads an instance. The two whose mask reads `amLast`
    (the store to `out`, the load of `s[0]`) and nothing that differs between instances walk
    8 warps once instead of three times: 32 walks fewer. The others read `N` in their mask
    (no twins), or read no unknown (the same key: walked once already)."""
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    checked(tmp_path, monkeypatch, "warm.json", "k.cu")  # the numbers met once (`S.const`)
    forget()
    fast, fast_report, fast_steps = plans_made(tmp_path, monkeypatch, "fast.json")
    forget(monkeypatch)
    plain, plain_report, plain_steps = plans_made(tmp_path, monkeypatch, "plain.json")
    assert (fast, plain) == (81, 113)
    assert fast_report == plain_report
    assert fast_steps == plain_steps


@pytest.mark.parametrize(("analysis", "cut"), [(3000, 3), (20000, 2), (60000, 0)])
def test_a_small_budget_runs_out_where_the_plain_walk_ran_out(tmp_path, monkeypatch, analysis, cut):
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, (), forget)
    assert fast == plain
    assert fast.count("WL940") == cut


def _flag(tag: str = "value of amLast", lane_varying: bool = False) -> S.Expr:
    return S.unknown(tag, Origin.LOADED, lane_varying)


def test_twin_keys_of_expressions_alike_but_for_their_unknowns_are_equal():
    tid = S.sym("threadIdx.x")
    a, b = _flag(), _flag()
    assert a != b
    assert twin_key(object(), (a + tid * 4,), (a,)) == twin_key(object(), (b + tid * 4,), (b,))
    # two unknowns: the same ranks where they were made in the same order
    a2, b2 = _flag("x"), _flag("x")
    assert twin_key(object(), (a * a2,), (a, a2)) == twin_key(object(), (b * b2,), (b, b2))


@pytest.mark.parametrize(
    "other",
    [
        lambda: _flag("value of other") + S.sym("threadIdx.x") * 4,  # another text
        lambda: _flag(lane_varying=True) + S.sym("threadIdx.x") * 4,  # differs between lanes
        lambda: _flag() + S.sym("threadIdx.x") * 8,  # another address
    ],
)
def test_twin_keys_differ_where_more_than_an_unknowns_identity_differs(other):
    a = _flag()
    b = other()
    assert twin_key(object(), (a + S.sym("threadIdx.x") * 4,), (a,)) != twin_key(object(), (b,), (b,))


def test_a_key_that_reads_no_unknown_has_no_twin():
    e = S.sym("threadIdx.x") * 4
    assert twin_key(object(), (e,), (e,)) is None
