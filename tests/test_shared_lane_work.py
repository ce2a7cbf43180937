"""The work the lanes and masks of a kernel share is shared without changing a result: the
opaque terms of a mask substituted once for every lane and mask that has them
(`S.RememberedSubs`), and the lane expressions compiled once for every warp that asks for
them (`compile_values`). Small programs written for the test (sorting networks whose masks
change with loop counters and loaded values) give the same report, byte for byte, with the
tables and with them remembering nothing; a remembered substitution gives the plain one's
expression and spends its steps again, so that a budget runs out where it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import budget, cli
from analyzer.analysis import costing, scenarios
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import compiled
from walk_checks import Forgetful

#: A bitonic network (nested loops whose counters decide the masks, with loaded values in the
#: conditions), an odd-even merge whose masks mix counters and a parameter, and a plain guard.
PROGRAM = """\
__global__ void bitonic(unsigned *data, unsigned len) {
    __shared__ unsigned buf[1024];
    buf[threadIdx.x] = threadIdx.x < len ? data[threadIdx.x] : 0xffffffffu;
    __syncthreads();
    for (unsigned k = 2; k <= blockDim.x; k *= 2) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned partner = threadIdx.x ^ j;
            unsigned mine = buf[threadIdx.x];
            unsigned theirs = buf[partner];
            __syncthreads();
            unsigned ascend = k * (partner < threadIdx.x);
            bool swap = false;
            if ((threadIdx.x & k) == ascend && mine > theirs)
                swap = true;
            if (swap)
                buf[partner] = mine;
            __syncthreads();
        }
    }
    if (threadIdx.x < len)
        data[threadIdx.x] = buf[threadIdx.x];
}

__global__ void odd_even(float *a, int n) {
    __shared__ float s[512];
    s[threadIdx.x] = a[blockIdx.x * 512 + threadIdx.x];
    for (int size = 2; size <= 512; size <<= 1) {
        int stride = size / 2;
        int offset = threadIdx.x & (stride - 1);
        for (; stride > 0; stride >>= 1) {
            __syncthreads();
            int pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            if (offset >= stride && pos + stride < n)
                s[pos - stride] = s[pos + stride];
        }
    }
    if (blockIdx.x * 512 + threadIdx.x < n)
        a[blockIdx.x * 512 + threadIdx.x] = s[threadIdx.x];
}
"""


def report(tmp_path: Path, name: str, *args: str) -> str:
    out = tmp_path / name
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--format", "json", "-o", str(out), *args])
    return out.read_text()


def forget_everything(monkeypatch) -> None:
    """Every table of the per-lane work bypassed or emptied, so that a check works it all out."""
    monkeypatch.setattr(scenarios, "_LANE_TERMS", Forgetful())
    monkeypatch.setattr(compiled, "_BY_EXPRS", Forgetful())
    for table in (scenarios._LANE_MEMO, scenarios._WARP_MEMO, scenarios._DECIDED, costing._WALKS):
        table.clear()


@pytest.mark.parametrize("block", ["256", "64,2", "32,4"])
def test_shared_lane_terms_and_compiled_lanes_change_no_report(tmp_path, monkeypatch, block):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    with_tables = report(tmp_path, "with.json", "--block", block, "--grid", "2", "k.cu")
    assert '"accesses"' in with_tables
    forget_everything(monkeypatch)
    without = report(tmp_path, "without.json", "--block", block, "--grid", "2", "k.cu")
    assert with_tables == without


def test_a_small_analysis_budget_runs_out_where_it_did_without_the_tables(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    (tmp_path / "warplint.toml").write_text("[budget]\nanalysis = 60000\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "with.json"
    cli.main(["check", "--no-cache", "-q", "-j", "1", "--format", "json", "-o", str(out), "k.cu"])
    with_tables = out.read_text()
    assert "WL940" in with_tables
    forget_everything(monkeypatch)
    out = tmp_path / "without.json"
    cli.main(["check", "--no-cache", "-q", "-j", "1", "--format", "json", "-o", str(out), "k.cu"])
    assert with_tables == out.read_text()


def mask_on_counters() -> S.Expr:
    """`(tx & k) == k * ((tx ^ j) < tx) && loaded > other`, as the bitonic network's swap mask."""
    tx, k, j = S.sym("threadIdx.x"), S.sym("k@2"), S.sym("j@3")
    loaded = S.unknown("buf[threadIdx.x]", S.Origin.LOADED, lane_varying=True)
    other = S.unknown("buf[partner]", S.Origin.LOADED, lane_varying=True)
    ascend = k * S.compare("<", tx ^ j, tx)
    return S.logical_and(S.compare("==", tx & k, ascend), S.compare("<", other, loaded))


def substituted(e: S.Expr, mapping: dict) -> tuple[S.Expr, int]:
    """`e.subs(mapping)`, and the budget steps it spent."""
    meter = budget.Meter("analysis", 10**9)
    with budget.metered(meter):
        done = e.subs(mapping)
    return done, 10**9 - meter.left


def test_a_remembered_substitution_is_the_plain_one_and_spends_its_steps_again():
    mask = mask_on_counters()
    memo: dict = {}
    for x in (0, 1, 5, 31, 32, 255):
        lane = {"threadIdx.x": x, "threadIdx.y": 0, "threadIdx.z": 0}
        plain, plain_steps = substituted(mask, lane)
        first, first_steps = substituted(mask, S.RememberedSubs(lane, memo))
        again, again_steps = substituted(mask, S.RememberedSubs(lane, memo))
        assert plain == first == again
        assert plain_steps == first_steps == again_steps
    # a term that does not mention threadIdx.y is shared by lanes that differ only there
    lane = {"threadIdx.x": 5, "threadIdx.y": 3, "threadIdx.z": 0}
    assert mask.subs(S.RememberedSubs(lane, memo)) == mask.subs(lane)


def test_compiled_lane_expressions_are_remembered_by_expressions_and_names():
    tx, k = S.sym("threadIdx.x"), S.sym("k@2")
    exprs = [(tx & k) * 4, None, S.compare("<", tx, k)]
    first = S.compile_values(exprs, ["threadIdx.x", "k@2"])
    assert S.compile_values(list(exprs), ["threadIdx.x", "k@2"]) is first
    assert first(6, 4) == (16, None, 0) and first.compiled == (True, False, True)  # type: ignore[attr-defined]
    other = S.compile_values(exprs, ["k@2", "threadIdx.x"])
    assert other(4, 6) == (16, None, 0)
