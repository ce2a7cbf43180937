"""docs/ARCHITECTURE.md's "Adding a rule", followed as written.

The section's worked example (WL102 shared-atomic-contention) is a whole rule module in the
document. This test takes that module out of the document, registers it as step 3 says, and
checks what step 4 says it gives: so the steps a newcomer follows stay true when the rules'
interface moves. The rule itself is not one of warplint's (its cost is not measured).
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from analyzer import api
from analyzer.rules.base import SECTIONS, Rule
from analyzer.rules.registry import RULES

DOC = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def python_module() -> str:
    """The first ```python block of the section, dedented (it is indented in a list item)."""
    found = re.search(r"^( *)```python\n(.*?)^\1```$", section(DOC.read_text(), "Adding a rule"), re.S | re.M)
    assert found, "no python block in 'Adding a rule'"
    return textwrap.dedent(found.group(2))


def cuda_block(doc: str, heading: str) -> str:
    found = re.search(rf"## {heading}\n```cuda\n(.*?)```", doc, re.S)
    assert found, heading
    return found.group(1)


@pytest.fixture
def wl102(monkeypatch: pytest.MonkeyPatch) -> type[Rule]:
    module = ModuleType("wl102_shared_atomic_contention")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(python_module(), str(DOC), "exec"), module.__dict__)  # noqa: S102 - the document's module, as a file would be
    rules = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Rule) and v is not Rule]
    assert len(rules) == 1
    monkeypatch.setitem(RULES, "WL102", rules[0])  # step 3: one line in RULES
    return rules[0]


def findings(text: str) -> list[tuple[str, int, int, str]]:
    report = api.check_source("k.cu", text)
    assert not [d for d in report.diagnostics if d.code == "WL900"], report.diagnostics
    return [
        (f.code, report.locate(f.span).line, report.locate(f.span).column, f.message)
        for f in report.findings
        if f.code == "WL102"
    ]


def test_the_documented_rule_has_the_seven_sections_in_order(wl102):
    headers = [line for line in wl102.documentation().splitlines() if line.startswith("## ")]
    assert headers == list(SECTIONS)
    assert (wl102.code, wl102.name) == ("WL102", "shared-atomic-contention")


def test_its_example_gives_the_finding_step_4_states(wl102):
    example = cuda_block(wl102.documentation(), "Example")
    assert findings(example) == [
        ("WL102", 6, 5, "8 lanes of a warp update one word of `bins` atomically: the updates are serialised")
    ]


def test_its_use_instead_gives_none(wl102):
    assert findings(cuda_block(wl102.documentation(), "Use instead")) == []


def test_an_index_not_known_exactly_gives_none(wl102):
    kernel = (
        "__global__ void h(const int *data)\n{\n    __shared__ int bins[64];\n"
        "    atomicAdd(&bins[data[threadIdx.x] % 4], 1);\n}\n"
        "void launch(const int *d) { h<<<8, 128>>>(d); }\n"
    )
    assert findings(kernel) == []


def test_explain_prints_the_documented_rule(wl102, capsys):
    from analyzer.cli import main

    assert main(["explain", "WL102"]) == 0
    out = capsys.readouterr().out
    assert "shared-atomic-contention" in out and "## Why is this bad?" in out
