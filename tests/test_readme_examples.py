"""The README's example sessions are what warplint prints today.

Every `$ warplint ...` line of a fenced block in README.md whose files are in this repository is
run (`python -m analyzer` through tests/runner.py, from the repository root, without the results cache), and the lines
shown under it, up to the next `$` line or the end of the block, are compared with what it
printed, colour off: its standard output, and its standard error too where the README shows
the summary line (`Found ... findings`, which goes to standard error). The README shortens long
output, and the comparison reads its marks so:

* a line that is only `...` or `…` stands for any number of lines, none included;
* a line holding `...` or `…` elsewhere stands for one line that begins with the text before
  the first mark, ends with the text after the last, and holds the texts between in order;
* a `# comment` after the command is not part of it.

An example whose files are not in the repository (`transpose.cu` of a user's project) is
listed by `test_examples_found` and left out.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from runner import warplint  # tests/runner.py

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ELISION = re.compile(r"\.\.\.|…")


def example_sessions(text: str) -> list[tuple[int, list[str], list[str]]]:
    """Each `$ warplint` command of a fenced block: its README line, its words, the lines shown."""
    sessions: list[tuple[int, list[str], list[str]]] = []
    in_block = False
    current: tuple[int, list[str], list[str]] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            in_block = not in_block
            current = None
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            command = line[2:].split("  #")[0].strip()
            current = (number, shlex.split(command), [])
            sessions.append(current)
        elif current is not None:
            current[2].append(line)
    return [s for s in sessions if s[1] and s[1][0] == "warplint"]


def runnable(words: list[str]) -> bool:
    """Whether every path the command names is in this repository."""
    paths = [w.split(":")[0] for w in words[2:] if not w.startswith("-") and ("/" in w or w.endswith(".cu"))]
    return bool(paths) and all((ROOT / p).exists() for p in paths)


def line_matches(expected: str, actual: str) -> bool:
    """Whether `actual` is `expected`, read with its elision marks (the module's docstring)."""
    pieces = ELISION.split(expected)
    if len(pieces) == 1:
        return expected.rstrip() == actual.rstrip()
    first, *middle, last = pieces
    if not actual.startswith(first) or not actual.rstrip().endswith(last.rstrip()):
        return False
    at = len(first)
    for piece in middle:
        found = actual.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `expected`, a line `...` standing for any run of lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head.strip() in ("...", "…"):
        return any(output_matches(rest, actual[skip:]) for skip in range(len(actual) + 1))
    return bool(actual) and line_matches(head, actual[0]) and output_matches(rest, actual[1:])


SESSIONS = example_sessions(README.read_text(encoding="utf-8"))
RUNNABLE = [s for s in SESSIONS if runnable(s[1])]


def test_examples_found() -> None:
    """The README has example sessions, and only those naming a user's files are left out."""
    assert len(RUNNABLE) >= 8
    left_out = [" ".join(words) for _, words, _ in SESSIONS if not runnable(words)]
    assert left_out == ["warplint check --diff transpose.cu"]


@pytest.mark.parametrize("number, words, shown", RUNNABLE, ids=[f"README.md:{s[0]}" for s in RUNNABLE])
def test_example_output_is_current(number: int, words: list[str], shown: list[str]) -> None:
    command = list(words[1:])
    if words[1] == "check":
        command.insert(1, "--no-cache")
    done = warplint(*command, env={"NO_COLOR": "1"})
    summary_shown = any(line.startswith(("Found ", "No findings")) for line in shown)
    printed = (done.stdout + (done.stderr if summary_shown else "")).rstrip("\n").splitlines()
    assert output_matches(shown, printed), (
        f"README.md:{number} shows:\n" + "\n".join(shown) + "\n\nwarplint printed:\n" + "\n".join(printed)
    )


def test_elision_marks() -> None:
    assert line_matches("a … z", "a b c z")
    assert not line_matches("a … z", "a b c y")
    assert line_matches("x ... y ... z", "x 1 y 2 z")
    assert not line_matches("x ... y ... z", "x 1 2 z")
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "b"], ["a", "b"])
    assert not output_matches(["a", "b"], ["a", "b", "c"])
