"""warplint as a pre-commit hook, run by the real pre-commit.

A user's repository (a temporary git repository) stages CUDA files, and
`pre-commit try-repo HOOKS warplint` runs the hook from `.pre-commit-hooks.yaml`:
pre-commit builds its own virtual environment, `pip install`s warplint into it and runs
`warplint check` on the files whose identify tags match `types_or: [cuda]`.

try-repo takes a git repository and picks up uncommitted changes to tracked files only,
so HOOKS is a snapshot of this checkout's working tree (tracked files and untracked ones
that git does not ignore) committed into a temporary repository: the test checks the
hook as it is in the working tree, committed or not. Each try-repo installs warplint
afresh (about half a minute); the test is skipped only when pre-commit is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_texts import CLEAN_KERNEL  # tests/kernel_texts.py

pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install '.[test]')")
pytestmark = pytest.mark.slow  # each test installs the hook with the real `pre-commit try-repo`

REPO = Path(__file__).resolve().parents[1]
STRIDE4 = REPO / "samples" / "000_bank_stride4.cu"


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "warplint tests",
    "GIT_AUTHOR_EMAIL": "tests@warplint.invalid",
    "GIT_COMMITTER_NAME": "warplint tests",
    "GIT_COMMITTER_EMAIL": "tests@warplint.invalid",
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PYTHONPATH"}
    env.update(GIT_IDENTITY)
    env["PRE_COMMIT_COLOR"] = "never"
    return env


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's working tree, committed into a fresh git repository."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the files to snapshot are unknown")
    snapshot = tmp_path_factory.mktemp("hooks")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    assert (snapshot / ".pre-commit-hooks.yaml").is_file()
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot of the warplint working tree", cwd=snapshot)
    return snapshot


def user_repo(root: Path, files: dict[str, str]) -> Path:
    """A user's repository with `files` staged (pre-commit hooks run on what is staged)."""
    root.mkdir()
    git("init", "-q", cwd=root)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", "-A", cwd=root)
    return root


def try_repo(hooks: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "warplint", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_the_hook_fails_on_a_bank_conflict_and_prints_the_finding(hooks_repo, tmp_path):
    conflict = STRIDE4.read_text()
    repo = user_repo(
        tmp_path / "user",
        {
            "kernels/stride4.cu": conflict,
            "kernels/stride4.cuh": conflict,  # .cuh is tagged `cuda` too
            "kernels/copy.cu": CLEAN_KERNEL,
            "notes/stride4.txt": conflict,  # not CUDA by its name: the hook must not get it
        },
    )
    result = try_repo(hooks_repo, repo, "--all-files")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "warplint" in output and "Failed" in output, output
    assert "- exit code: 1" in output, output
    finding = "23:18: warning: 4-way bank conflict on `data`: 4 wavefronts per request, ideal 1 [WL101]"
    assert f"kernels/stride4.cu:{finding}" in output, output
    assert f"kernels/stride4.cuh:{finding}" in output, output
    assert "notes/stride4.txt" not in output, output
    assert output.count("[WL101]") == 2, output
    assert "Traceback" not in output, output


def test_the_hook_passes_on_a_clean_file(hooks_repo, tmp_path):
    repo = user_repo(tmp_path / "user", {"copy.cu": CLEAN_KERNEL, "README.md": "# kernels\n"})
    result = try_repo(hooks_repo, repo, "--files", "copy.cu")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warplint" in output and "Passed" in output, output
    assert "[WL" not in output, output


def test_the_manifest_is_valid_and_names_the_hook():
    from identify.identify import tags_from_filename
    from pre_commit.clientlib import load_manifest

    [hook] = load_manifest(str(REPO / ".pre-commit-hooks.yaml"))
    assert (hook["id"], hook["entry"], hook["language"], hook["types_or"]) == (
        "warplint",
        "warplint check",
        "python",
        ["cuda"],
    )
    # `types_or: [cuda]` reaches both suffixes only because identify tags them so
    assert "cuda" in tags_from_filename("kernel.cu")
    assert "cuda" in tags_from_filename("kernel.cuh")
    assert "cuda" not in tags_from_filename("kernel.cpp")


def readme_snippet() -> str:
    """The `.pre-commit-config.yaml` of README.md's pre-commit section, as written there."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## pre-commit") :]
    return section[section.index("```yaml\n") + len("```yaml\n") : section.index("```\n", section.index("```yaml"))]


def test_the_readmes_snippet_runs_the_hook_from_its_requirement(hooks_repo, tmp_path):
    snippet = readme_snippet()
    requirement = '["warplint==0.1.0"]'
    assert "repo: local" in snippet and requirement in snippet
    # PyPI is out of reach here: the requirement becomes a path to this checkout's snapshot
    config = snippet.replace(requirement, f'["{hooks_repo.as_posix()}"]')
    repo = user_repo(
        tmp_path / "user",
        {".pre-commit-config.yaml": config, "kernels/stride4.cu": STRIDE4.read_text(), "ok.cu": CLEAN_KERNEL},
    )
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "warplint", "--all-files"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "kernels/stride4.cu:23:18: warning: 4-way bank conflict on `data`" in output, output
    assert output.count("[WL101]") == 1 and "ok.cu:" not in output, output
