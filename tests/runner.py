"""`warplint` run as a user runs it, in a child process, for the tests of the command line.

One helper for every test module that runs the command: the repository first on PYTHONPATH,
colour left to the test (`NO_COLOR` and `FORCE_COLOR` of the developer's shell removed; `env`
adds what a test sets), standard input closed unless `stdin` gives it, and no Python traceback
in what it printed, whatever the test goes on to check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def warplint(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join([str(REPO), environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    environ.pop("NO_COLOR", None)
    environ.pop("FORCE_COLOR", None)
    environ.update(env or {})
    result = subprocess.run(
        [sys.executable, "-m", "analyzer", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result
