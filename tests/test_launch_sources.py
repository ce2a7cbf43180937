"""Every command takes its launch configurations from one place (`api.kernel_launch_configs`):
`check`, `show`, `simulate` and the language server give a kernel the block, grid and
parameters of the configuration's per-kernel table (`[kernels."scale"]`), over the file's own
launch, and `simulate` takes a GPUVerify header as `check` does.

The kernel stores `x[threadIdx.x * s]`: the host launches it with 64 threads and `s = 1`
(4 sectors per request), the table with 32 threads and `s = 4` (lanes 16 bytes apart: 16).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from analyzer import cli
from analyzer.api import Options
from analyzer.config import Resolver, Settings

SCALE = """\
__global__ void scale(float *x, int s) {
    x[threadIdx.x * s] = 0;
}
int main() {
    float *d;
    scale<<<1, 64>>>(d, 1);
}
"""
TABLE = """\
[kernels."scale"]
block = 32
params = { s = 4 }
"""
ORIGIN = '[kernels."scale"] of warplint.toml'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(SCALE)
    (tmp_path / "warplint.toml").write_text(TABLE)
    return tmp_path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    cli.main([*args, "--format", "json"])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    return entry


def test_check_takes_the_per_kernel_table(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (kernel,) = _json(capsys, "check", "-q", "--exit-zero", "--no-cache", "k.cu")["kernels"]
    assert (kernel["launch"]["block"], kernel["launch"]["origin"], kernel["launch"]["params"]) == (
        [32, 1, 1],
        ORIGIN,
        {"s": 4},
    )
    assert [(a["line"], a["column"], a["per_request"]) for a in kernel["accesses"]] == [(2, 5, 16)]


def test_simulate_takes_the_per_kernel_table(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (kernel,) = _json(capsys, "simulate", "k.cu")["kernels"]
    assert (kernel["launch"]["block"], kernel["launch"]["origin"], kernel["launch"]["params"]) == (
        [32, 1, 1],
        ORIGIN,
        {"s": 4},
    )
    # one warp of 32 lanes, 16 bytes apart: one request of 16 sectors, as check says
    assert [(a["line"], a["column"], a["requests"], a["per_request"]) for a in kernel["accesses"]] == [(2, 5, 1, 16)]


def test_show_takes_the_per_kernel_table(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["show", "k.cu:2:5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"k.cu:2:5: global store `x[threadIdx.x * s]` in kernel `scale`, block 32x1x1 ({ORIGIN})"
    assert lines[1] == "  4-byte accesses; the costliest request: 16 sectors, ideal 4"


def test_the_language_server_takes_the_per_kernel_table(project: Path) -> None:
    from analyzer.server import Analysed, analyse_document

    path = str(project / "k.cu")
    done = analyse_document("file:///k.cu", path, SCALE, Resolver(Settings(), Options()))
    assert isinstance(done, Analysed)
    (analysis,) = done.report.kernels
    assert (analysis.launch.block, analysis.launch.origin) == ((32, 1, 1), ORIGIN)
    assert [f.message for f in done.report.findings] == [
        "uncoalesced global store of `x[threadIdx.x * s]`: 16 sectors per request, ideal 4 (25% efficiency)"
    ]


def test_simulate_takes_a_gpuverify_header_as_check_does(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.cu").write_text(
        textwrap.dedent(
            """\
            //pass
            //--blockDim=[32,2] --gridDim=[4,1]
            __global__ void rows(float *a, int w) {
                a[threadIdx.y * w + threadIdx.x] = 0;
            }
            """
        )
    )
    for command in (["check", "-q", "--exit-zero", "--no-cache", "--param", "w=32"], ["simulate", "--param", "w=32"]):
        (kernel,) = _json(capsys, *command, "g.cu")["kernels"]
        launch = kernel["launch"]
        assert (launch["block"], launch["grid"], launch["origin"]) == (
            [32, 2, 1],
            [4, 1, 1],
            "GPUVerify header at line 2 (--blockDim, --gridDim)",
        ), command
        assert [(a["line"], a["column"], a["per_request"]) for a in kernel["accesses"]] == [(4, 5, 4)], command
