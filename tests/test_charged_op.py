"""The load and the store of one statement share their requests' costs where the operation
does not change them (`charged_op.op_that_charges`: shared memory, and global memory charged
by sectors): a small program written for the test charges fewer requests, and gives the same
report and the same steps per kernel as with the operation in the key throughout; on Fermi,
whose loads are cached in lines, and under another cost model, the operation stays."""

from __future__ import annotations

import pytest

from analyzer.analysis import charged_op, cost, costing
from analyzer.arch import get_arch
from analyzer.ir.nodes import AccessOp, Space
from walk_checks import forget_walk_tables, same_with_and_without

PROGRAM = """\
__global__ void bump(float *a, int w) {
    __shared__ float s[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x * 2] += 1.0f;
    a[i * w + 1] += s[threadIdx.x];
}
"""

MODELS = (cost.shared_cost, cost.global_cost)


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, the operation kept in the key)."""
    forget_walk_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(costing, "op_that_charges", lambda space, op, arch, models: op)


@pytest.mark.parametrize("launch", [("--block", "64"), ("--block", "64", "--arch", "sm_20")])
def test_shared_outcomes_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def _requests_charged(tmp_path, monkeypatch, *args: str) -> int:
    calls: list[int] = []
    worked_out = costing.charge_request

    def counted(*a):
        calls.append(1)
        return worked_out(*a)

    monkeypatch.setattr(costing, "charge_request", counted)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    from analyzer import cli

    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--block", "64", *args, "-o", "r.txt", "k.cu"])
    return len(calls)


def test_the_load_and_the_store_charge_each_request_once(tmp_path, monkeypatch):
    forget()
    shared = _requests_charged(tmp_path, monkeypatch)
    forget(monkeypatch)
    plain = _requests_charged(tmp_path, monkeypatch)
    assert 0 < shared < plain


def test_the_operation_is_kept_where_it_may_change_the_cost():
    sectors, fermi = get_arch("sm_80"), get_arch("sm_20")
    assert charged_op.op_that_charges(Space.SHARED, AccessOp.STORE, sectors, MODELS) is None
    assert charged_op.op_that_charges(Space.SHARED, AccessOp.LOAD, fermi, MODELS) is None
    assert charged_op.op_that_charges(Space.GLOBAL, AccessOp.STORE, sectors, MODELS) is None
    assert charged_op.op_that_charges(Space.GLOBAL, AccessOp.STORE, fermi, MODELS) is AccessOp.STORE
    other = (cost.shared_cost, lambda *a: None)
    assert charged_op.op_that_charges(Space.SHARED, AccessOp.LOAD, sectors, other) is AccessOp.LOAD
