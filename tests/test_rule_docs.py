"""Each rule's documented Example produces that rule, and its "Use instead" produces nothing.

The docstring of every rule (`analyzer/rules/wl*.py`, printed by `warplint explain`) has an
`## Example` and a `## Use instead` section, each one fenced ```cuda block (house style,
section 7: "every docstring's Example must produce its code, and its Use instead must
produce nothing"). This module extracts both blocks, checks each as a file through the
whole pipeline (`analyzer.api.check_file`), and asserts what the documentation promises.

Convention for the blocks (so that they can be checked as they are, without wrapping):
- each block is a complete translation unit: at least one `__global__` kernel and a host
  function that launches it with a literal configuration, so that no cost rests on an
  assumed block size and `requests`/`total` are known;
- in the Example, every line where the rule fires carries a `//` comment saying why;
- an Example shows one problem. The only other rule it may trip is one whose cost is the
  same problem seen from another side, listed in `COMPANIONS` below with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from analyzer.rules.registry import RULES, rule_documentation

SECTIONS = ("Example", "Use instead")

# A 12-byte struct is moved as strided 4-byte pieces, so its fields are also uncoalesced
# global accesses: WL301 (reported once per array) always comes with WL201 on each access,
# and WL301's finding sits at the position of one of them.
COMPANIONS: dict[str, frozenset[str]] = {"WL301": frozenset({"WL201"})}


def section(doc: str, name: str) -> str:
    """The text of `## name` up to the next `## ` heading."""
    return doc.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]


def cuda_block(doc: str, name: str) -> str:
    """The one fenced ```cuda block of a section."""
    blocks = re.findall(r"```cuda\n(.*?)```", section(doc, name), re.S)
    assert len(blocks) == 1, f"{name}: expected one ```cuda block, found {len(blocks)}"
    return blocks[0]


def check_block(tmp_path: Path, code: str, name: str, text: str) -> dict[str, Any]:
    """The JSON report of the block, checked as a file of its own."""
    from analyzer.api import check_file
    from analyzer.report.json import document

    path = tmp_path / f"{code}_{name.replace(' ', '_').lower()}.cu"
    path.write_text(text, encoding="utf-8")
    return document([check_file(str(path))])["files"][0]


def describe(text: str, report: dict[str, Any]) -> str:
    """The block with line numbers, then every finding, error and access: what a failure prints."""
    lines = [f"{n:3} | {line}" for n, line in enumerate(text.splitlines(), 1)]
    lines += [f"finding {f['line']}:{f['column']} {f['code']} {f['message']}" for f in report["findings"]]
    lines += [f"error {e['line']}:{e['column']} {e['code']} {e['message']}" for e in report["errors"]]
    for k in report["kernels"]:
        lines += [
            f"access {a['line']}:{a['column']} `{a['text']}` {a['per_request']}/{a['ideal_per_request']}"
            for a in k["accesses"]
        ]
    return "\n".join(lines)


CASES = [pytest.param(code, name, id=f"{code}:{name.replace(' ', '-').lower()}") for code in RULES for name in SECTIONS]


@pytest.mark.parametrize(("code", "name"), CASES)
def test_the_block_is_a_complete_program_with_a_literal_launch(code: str, name: str, tmp_path: Path) -> None:
    text = cuda_block(RULES[code].documentation(), name)
    assert re.search(r"__global__\s+void\s+\w+\s*\(", text), text
    assert re.search(r"\w+\s*<<<[^>]+>>>\s*\(", text), text
    report = check_block(tmp_path, code, name, text)
    context = describe(text, report)
    assert report["errors"] == [], context  # it parses, lowers and is analysed without a word
    assert report["kernels"], context
    for kernel in report["kernels"]:
        assert kernel["launch"]["assumed"] is False and kernel["launch"]["block"] is not None, context
        assert kernel["launch"]["grid"] is not None, context
        assert kernel["accesses"], context
        for access in kernel["accesses"]:
            assert access["exact"], context
            assert access["requests"] is not None, context
            assert access["total"] == access["per_request"] * access["requests"], context


@pytest.mark.parametrize("code", list(RULES))
def test_the_example_triggers_exactly_its_rule_on_the_commented_lines(code: str, tmp_path: Path) -> None:
    text = cuda_block(RULES[code].documentation(), "Example")
    report = check_block(tmp_path, code, "Example", text)
    context = describe(text, report)
    own = [f for f in report["findings"] if f["code"] == code]
    assert own, context
    others = {f["code"] for f in report["findings"]} - {code}
    assert others == set(COMPANIONS.get(code, ())), context
    source = text.splitlines()
    for f in own:
        assert "//" in source[f["line"] - 1], f"{code} fires on a line without a comment\n{context}"
        assert f["rule"] == RULES[code].name and f["severity"] == "warning", context
    # the companions fire on the very accesses the rule names, not elsewhere
    positions = {(f["line"], f["column"]) for f in own}
    for companion in COMPANIONS.get(code, ()):
        at = {(f["line"], f["column"]) for f in report["findings"] if f["code"] == companion}
        assert positions <= at, context


@pytest.mark.parametrize("code", list(RULES))
def test_use_instead_produces_nothing(code: str, tmp_path: Path) -> None:
    text = cuda_block(RULES[code].documentation(), "Use instead")
    report = check_block(tmp_path, code, "Use instead", text)
    context = describe(text, report)
    assert report["findings"] == [] and report["errors"] == [], context
    # and the fix removed the excess: every access now costs its ideal
    for kernel in report["kernels"]:
        for access in kernel["accesses"]:
            assert access["per_request"] == access["ideal_per_request"], context


@pytest.mark.parametrize("code", list(RULES))
def test_use_instead_fixes_the_accesses_the_example_reports(code: str, tmp_path: Path) -> None:
    # the two blocks show the same program: each access the Example reports is still there
    # in the fix, as written, at its ideal cost; and the array it reads or writes costs less
    # over the whole launch (a 16-byte load per element costs more per request than one
    # 4-byte field, but one request moves all three fields)
    doc = RULES[code].documentation()
    example = check_block(tmp_path, code, "Example", cuda_block(doc, "Example"))
    fixed = check_block(tmp_path, code, "Use instead", cuda_block(doc, "Use instead"))
    fixed_texts = {a["text"]: a for k in fixed["kernels"] for a in k["accesses"]}
    reported = {(f["line"], f["column"]) for f in example["findings"] if f["code"] == code}

    def total(report: dict[str, Any], array: str) -> int:
        return sum(a["total"] for k in report["kernels"] for a in k["accesses"] if a["array"] == array)

    arrays = set()
    for kernel in example["kernels"]:
        for access in kernel["accesses"]:
            if (access["line"], access["column"]) in reported:
                assert access["per_request"] > access["ideal_per_request"], access
                after = fixed_texts.get(access["text"])
                assert after is not None, (access["text"], sorted(fixed_texts))
                assert after["per_request"] == after["ideal_per_request"], (access, after)
                arrays.add(access["array"])
    assert arrays
    for array in arrays:
        assert total(fixed, array) < total(example, array), array


@pytest.mark.parametrize("code", list(RULES))
def test_explain_prints_the_blocks_that_were_checked(code: str) -> None:
    printed = rule_documentation(code)
    for name in SECTIONS:
        assert cuda_block(RULES[code].documentation(), name) in printed
