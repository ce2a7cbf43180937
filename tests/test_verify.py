"""`warplint check --verify`: every disagreement with the simulator is a WL930 finding."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from analyzer.analysis import costing, kernel
from analyzer.analysis.cost import shared_cost
from analyzer.api import Options, check_file
from analyzer.cli import main
from analyzer.rules.registry import DIAGNOSTIC_CODES

REPO = Path(__file__).resolve().parents[1]
STRIDE16 = str(REPO / "samples" / "000_bank_stride16.cu")
COALESCED = str(REPO / "samples" / "003_kernel_1_coalesced.cu")


def _wl930(report):
    return [f for f in report.findings if f.code == "WL930"]


def test_wl930_is_registered():
    assert DIAGNOSTIC_CODES["WL930"][0] == "verify-mismatch"


def test_verify_finds_nothing_when_check_is_right():
    report = check_file(STRIDE16, Options(verify=True))
    assert report.kernels and not _wl930(report)
    assert [f.code for f in report.findings] == ["WL101"]


def test_a_wrong_static_cost_becomes_a_finding_at_the_access(monkeypatch):
    def off_by_one(addresses, access_bytes, arch):  # check's cost model, broken on purpose
        c = shared_cost(addresses, access_bytes, arch)
        return dataclasses.replace(c, wavefronts=c.wavefronts + 1)

    monkeypatch.setattr(costing, "shared_cost", off_by_one)  # the simulator keeps the real one
    report = check_file(STRIDE16, Options(verify=True))
    found = [
        (
            report.locate(f.span).line,
            report.locate(f.span).column,
            f.args["access"],
            f.args["what"],
            f.args["check"],
            f.args["simulated"],
        )
        for f in _wl930(report)
    ]
    assert found == [
        (17, 5, "data[tid]", "per_request", 2, 1),
        (20, 18, "data[16 * tid]", "per_request", 17, 16),
    ]
    first = _wl930(report)[0]
    assert first.message == "`data[tid]`: check says 2, the simulator 1 (worst wavefronts per request)"
    assert first.severity == "warning" and first.kernel == "bank_stride16"


def test_a_wrong_total_is_reported(monkeypatch):
    real = kernel.cost_occurrence

    def doubled(*args, **kwargs):
        c = real(*args, **kwargs)
        if c.total:
            c.total *= 2
        return c

    monkeypatch.setattr(kernel, "cost_occurrence", doubled)
    report = check_file(COALESCED, Options(verify=True))
    assert [(f.args["what"], f.args["check"], f.args["simulated"]) for f in _wl930(report)] == [("total", 256, 128)]


def test_verify_can_be_ignored(monkeypatch):
    monkeypatch.setattr(
        costing, "shared_cost", lambda a, b, arch: dataclasses.replace(shared_cost(a, b, arch), wavefronts=99)
    )
    report = check_file(STRIDE16, Options(verify=True, ignore=["WL930"]))
    assert not _wl930(report)


def test_cli_verify_exit_codes(capsys):
    assert main(["check", "--verify", "--arch", "sm_90", "-q", COALESCED]) == 0
    assert main(["check", "--verify", "--arch", "sm_90", "-q", "--format", "json", STRIDE16]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in doc["files"][0]["findings"]] == ["WL101"]


def test_verify_and_simulate_are_documented_in_help(capsys):
    assert main(["check", "--help"]) == 0
    assert "--verify" in capsys.readouterr().out
    assert main(["simulate", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(flag in out for flag in ("--kernel", "--blocks", "--seed", "--fill", "--param", "--format"))
