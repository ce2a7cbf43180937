"""`action.yml`, the composite GitHub Action: its inputs, and its steps' commands run for real.

The test plays the runner's part: each `run:` step's `${{ inputs.* }}` and
`${{ github.action_path }}` expressions are evaluated from the inputs given (any other
expression fails the test), and its script runs in bash as GitHub runs it (`bash -e`). The
action's checkout is a snapshot of this working tree, installed with pip into a fresh virtual
environment (about half a minute, hence `slow`); `warplint check` then runs on a user's folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # PyYAML, with pre-commit in the test extra

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STRIDE4 = REPO / "samples" / "000_bank_stride4.cu"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def test_the_action_is_composite_with_the_documented_inputs():
    assert ACTION["runs"]["using"] == "composite"
    assert {name: spec.get("default") for name, spec in ACTION["inputs"].items()} == {
        "paths": ".",
        "args": "",
        "format": "github",
        "sarif-file": "warplint.sarif",
        "upload": "true",
        "version": "",
    }
    steps = ACTION["runs"]["steps"]
    assert [s["name"] for s in steps] == ["Install warplint", "Run warplint check", "Upload the SARIF log"]
    assert steps[2]["uses"] == "github/codeql-action/upload-sarif@v3"
    # inputs reach the scripts through env only: nothing is spliced into the shell text
    assert all("${{" not in step.get("run", "") for step in steps)


def _env_of(step: dict, inputs: dict[str, str], action_path: Path) -> dict[str, str]:
    values = {**{name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}, **inputs}

    def evaluate(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(action_path)
        assert expression.startswith("inputs."), expression
        return values[expression.removeprefix("inputs.")]

    return {name: EXPRESSION.sub(evaluate, str(value)) for name, value in step.get("env", {}).items()}


def _run_step(step: dict, inputs: dict[str, str], action_path: Path, venv: Path, cwd: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env.update(_env_of(step, inputs, action_path))
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the action's checkout, a virtual environment the install step put warplint in)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the files of the action's checkout are unknown")
    root = tmp_path_factory.mktemp("action")
    checkout = root / "warplint"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, checkout / name)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = ACTION["runs"]["steps"][0]
    done = _run_step(install, {}, checkout, venv, root)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (venv / "bin" / "warplint").exists()
    return checkout, venv


@pytest.mark.slow
def test_the_steps_annotate_a_bank_conflict(installed, tmp_path):
    checkout, venv = installed
    (tmp_path / "kernels").mkdir()
    shutil.copy(STRIDE4, tmp_path / "kernels" / "stride4.cu")
    check = ACTION["runs"]["steps"][1]
    done = _run_step(check, {"paths": "kernels", "args": "--quiet --block 32"}, checkout, venv, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        "::warning file=kernels/stride4.cu,line=23,col=18,endLine=23,endColumn=38,title=WL101 bank-conflict::"
        "4-way bank conflict on `data`"
    )


@pytest.mark.slow
def test_the_steps_write_a_sarif_log_for_upload(installed, tmp_path):
    checkout, venv = installed
    shutil.copy(STRIDE4, tmp_path / "stride4.cu")
    (tmp_path / "github_output").write_text("")
    check = ACTION["runs"]["steps"][1]
    inputs = {"format": "sarif", "sarif-file": "out/w.sarif", "args": "--quiet"}
    (tmp_path / "out").mkdir()
    os.environ["GITHUB_OUTPUT"] = str(tmp_path / "github_output")
    try:
        done = _run_step(check, inputs, checkout, venv, tmp_path)
    finally:
        del os.environ["GITHUB_OUTPUT"]
    assert done.returncode == 0, done.stderr  # --exit-zero: the findings are the upload's to show
    log = json.loads((tmp_path / "out" / "w.sarif").read_text())
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["WL101"]
    assert (tmp_path / "github_output").read_text() == "sarif-file=out/w.sarif\n"
    bad = _run_step(check, {"format": "xml"}, checkout, venv, tmp_path)
    assert bad.returncode == 2 and bad.stdout == "::error::format must be github or sarif, not xml\n"


@pytest.mark.slow
def test_the_installed_package_ships_the_schema_and_the_license(installed, tmp_path):
    _, venv = installed
    python = venv / "bin" / "python"
    code = "from analyzer.report.json import schema; import analyzer; print(schema()['$id'], analyzer.__file__)"
    done = subprocess.run([str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    schema_id, location = done.stdout.split()
    assert schema_id == "urn:warplint:report:v1"
    assert str(venv) in location  # the installed copy, not this checkout
    (site,) = {p.parent for p in venv.glob("lib/python*/site-packages/analyzer")}
    assert (site / "analyzer" / "schemas" / "schema-v1.json").read_text() == (REPO / "docs/schema-v1.json").read_text()
    (dist_info,) = site.glob("warplint-*.dist-info")
    assert "MIT License" in next(dist_info.rglob("LICENSE")).read_text()
