"""Every sample against the verdict table of samples/README.md, parsed from the README itself.

The README's verdict table is the specification the analyzer is held to (costs per
warp-level request, worked out by hand and measured with Nsight Compute). Each row names
a file and line (or lines), the kernel, the access as written (in backticks), the cost
today against the ideal ("4 wf / 1", "32 sectors / 4", "1 sector / 4 [ncu ideal 1]")
and a verdict ("OK", "conflict", "uncoalesced"). This module reads the rows from the
README, runs the whole pipeline (`analyzer.api.check_file`) on the sample, and checks:

- the row's accesses are found in the kernel it names, at the lines it names;
- each has exactly the row's `per_request` and `ideal_per_request` (wavefronts for
  shared memory, sectors for global memory);
- where the launch is literal, `requests` and `total` are filled, with
  `total == per_request * requests` and whole warps of the launch;
- the finding codes at the access's exact line:column are the row's verdict: WL101 on a
  shared access that costs more than its ideal, WL201 on such a global access, neither
  on an access the row calls OK;
- the same again under the article's own hardware, where the row names one (its `--arch`
  column, the "cost there" in wavefronts and global *transactions*, the "verdict there").

How a row selects its accesses: the backticked snippets of its "access as written"
column that occur verbatim on the row's lines pick the accesses they overlap; when none
occurs verbatim (`data[tid + 32k]`, k = 0…3), every access on those lines is taken. A
phrase "shared load", "global stores", ... narrows them to that space and operation.

Rows the analyzer does not meet yet are strict xfails naming the reason: when it is
fixed the test passes, strict xfail turns that into a failure, and the mark must go.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
README = SAMPLES / "README.md"

UNIT_SPACE = {
    "wf": "shared",
    "wavefront": "shared",
    "wavefronts": "shared",
    "sector": "global",
    "sectors": "global",
    "transaction": "global",  # the seed generations charge global memory in transactions
    "transactions": "global",
}
RULE_FOR_SPACE = {"shared": "WL101", "global": "WL201"}  # the rule a costly access of that space gets
COST_CODES = frozenset(RULE_FOR_SPACE.values())


@dataclass(frozen=True)
class Cost:
    per_request: int
    ideal: int


@dataclass(frozen=True)
class Row:
    """One row of the README's verdict table."""

    number: int
    file: str
    lines: tuple[int, ...]
    kernel: str
    access: str  # the "access as written" cell, verbatim
    costs: dict[str, Cost]  # by space: "shared" / "global"
    verdict: str
    snippets: tuple[str, ...] = field(default=())
    kinds: frozenset[tuple[str, str]] = frozenset()  # (space, op) pairs the cell names
    claim: str = ""  # the article's claim, verbatim ("—": none)
    arch: str | None = None  # the article's hardware, as `--arch` names it; None: no claim
    costs_there: dict[str, Cost] = field(default_factory=dict)  # by space, under `arch`
    verdict_there: str = ""

    @property
    def id(self) -> str:
        return f"row{self.number}-{self.file}:{self.lines[0]}"


@dataclass(frozen=True)
class FileRow:
    """One row of the README's Files table (file, kernel, launch, what it shows)."""

    file: str
    kernel: str
    launch: str
    shows: str


# ---------------------------------------------------------------------- README parsing


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def _table_after(text: str, heading: str) -> list[list[str]]:
    """The body rows of the first table after `heading` (header and rule skipped)."""
    section = text.split(heading, 1)[1]
    rows: list[list[str]] = []
    started = False
    for line in section.splitlines():
        if line.startswith("|"):
            started = True
            rows.append(_cells(line))
        elif started:
            break
    return list(rows[2:])


def _lines(cell: str) -> tuple[str, tuple[int, ...]]:
    """`file.cu:16-19` -> ("file.cu", (16, ..., 19)); `f.cu:27` via `:127-128`: the lines
    of the access itself (27: inside the inlined device function)."""
    m = re.match(r"`(?P<file>[\w.]+\.cu):(?P<a>\d+)(?:-(?P<b>\d+))?`", cell)
    assert m, f"cannot read the file:line cell {cell!r}"
    a = int(m["a"])
    b = int(m["b"]) if m["b"] else a
    return m["file"], tuple(range(a, b + 1))


def _costs(cell: str, access_cell: str = "") -> dict[str, Cost]:
    """`**4 wf / 1** (4-way)`, `1 wf / 1; the loads 4 sectors / 4`, `**1 sector** / 4
    [ncu ideal 1]`: the cost per space, against the hardware model's ideal, which is what
    warplint reports. Where lanes share addresses the README also gives Nsight's own ideal
    in brackets (it counts a shared word once); that one is not warplint's. A bare `4 / 4`
    is in the one space the access column names ("global store `output[tid]`")."""
    text = cell.replace("**", "")
    named = {space for space in ("shared", "global") if space in access_cell}
    costs: dict[str, Cost] = {}
    for m in re.finditer(
        r"(\d+)\s*(wf|wavefronts?|sectors?|transactions?)?\s*/\s*(\d+)(\s*\[ncu ideal (\d+)\])?", text
    ):
        if m[2]:
            space = UNIT_SPACE[m[2]]
        else:
            assert len(named) == 1, f"a cost without a unit in {cell!r} and no single space in {access_cell!r}"
            space = next(iter(named))
        ideal = int(m[3])
        assert space not in costs, f"two costs for {space} in {cell!r}"
        costs[space] = Cost(int(m[1]), ideal)
    assert costs, f"no cost in {cell!r}"
    return costs


def _kinds(cell: str) -> frozenset[tuple[str, str]]:
    return frozenset((m[1], m[2]) for m in re.finditer(r"\b(shared|global) (load|store)s?\b", cell))


@cache
def verdict_rows() -> tuple[Row, ...]:
    rows = []
    for cells in _table_after(README.read_text(encoding="utf-8"), "## Verdict table"):
        number, where, kernel, access, _reasoning, cost, verdict, claim, arch, cost_there, verdict_there = cells
        file, lines = _lines(where)
        named = re.findall(r"`(sm_[\w-]+)`", arch)
        rows.append(
            Row(
                number=int(number),
                file=file,
                lines=lines,
                kernel=re.findall(r"`([^`]+)`", kernel)[0],
                access=access,
                costs=_costs(cost, access),
                verdict=verdict.lower(),
                snippets=tuple(re.findall(r"`([^`]+)`", access)),
                kinds=_kinds(access),
                claim=claim,
                arch=named[0] if named else None,
                costs_there=_costs(cost_there, access) if named else {},
                verdict_there=verdict_there.lower(),
            )
        )
    return tuple(rows)


@cache
def file_rows() -> tuple[FileRow, ...]:
    out = []
    for cells in _table_after(README.read_text(encoding="utf-8"), "## Files"):
        file, kernel, launch, shows = cells[:4]
        out.append(FileRow(file.strip("`"), kernel.strip("`"), launch, shows))
    return tuple(out)


def literal_launch(launch_cell: str) -> tuple[int, int] | None:
    """(blocks, threads per block) when the Files table gives both as numbers:
    `<<<4, 256>>>`, `<<<8, 64, 768>>>`, or `<<<1, THREAD_NUM>>>`, 256."""
    m = re.search(r"<<<\s*(\w+)\s*,\s*(\w+)[^>]*>>>`(?:,\s*(\d+))?", launch_cell)
    if not m:
        return None
    blocks, threads = m[1], m[2]
    if not threads.isdigit():
        threads = m[3] or ""
    if not (blocks.isdigit() and threads.isdigit()):
        return None
    return int(blocks), int(threads)


# ---------------------------------------------------------------------- running warplint


@cache
def report(file: str, arch: str | None = None) -> dict[str, Any]:
    """The JSON document of one sample, as `warplint check --format json [--arch ARCH]` prints it."""
    from analyzer.api import Options, check_file
    from analyzer.report.json import document

    options = Options() if arch is None else Options(arch=arch)
    doc = document([check_file(str(SAMPLES / file), options)])
    return doc["files"][0]


def _overlaps(access: dict[str, Any], line: int, start: int, end: int) -> bool:
    """Whether the access (1-based columns, end exclusive) overlaps [start, end) on `line`."""
    if not access["line"] <= line <= access["end_line"]:
        return False
    a0 = access["column"] if access["line"] == line else 1
    a1 = access["end_column"] if access["end_line"] == line else math.inf
    return a0 < end and start < a1


def selected_accesses(row: Row, kernel: dict[str, Any]) -> list[dict[str, Any]]:
    source = (SAMPLES / row.file).read_text(encoding="utf-8").splitlines()
    on_lines = [a for a in kernel["accesses"] if a["line"] in row.lines and "path" not in a]
    spans = []
    for snippet in row.snippets:
        for line in row.lines:
            text = source[line - 1]
            for m in re.finditer(re.escape(snippet), text):
                spans.append((line, m.start() + 1, m.end() + 1))
    if spans:
        on_lines = [a for a in on_lines if any(_overlaps(a, *span) for span in spans)]
    if row.kinds:
        on_lines = [a for a in on_lines if (a["space"], a["op"]) in row.kinds]
    return [a for a in on_lines if a["space"] in row.costs]  # (the spaces are the same on every arch)


def kernels_named(file_report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [k for k in file_report["kernels"] if k["name"] == name]


def describe(row: Row, file_report: dict[str, Any]) -> str:
    """What a failing test prints: the row, the source lines, every access and finding."""
    source = (SAMPLES / row.file).read_text(encoding="utf-8").splitlines()
    out = [
        f"README row {row.number}: {row.file}:{row.lines} `{row.kernel}`: {row.access}",
        f"  expected {row.costs}, verdict {row.verdict!r}",
    ]
    out += [f"  {n:4} | {source[n - 1]}" for n in row.lines]
    for k in file_report["kernels"]:
        out.append(f"  kernel {k['name']} launch {k['launch']}")
        for a in k["accesses"]:
            out.append(
                f"    {a['line']}:{a['column']} {a['space']} {a['op']} `{a['text']}` "
                f"{a['per_request']}/{a['ideal_per_request']} requests={a['requests']} total={a['total']}"
            )
    for f in file_report["findings"]:
        out.append(f"  finding {f['line']}:{f['column']} {f['code']} {f['message']}")
    for e in file_report["errors"]:
        out.append(f"  error {e['line']}:{e['column']} {e['code']} {e['message']}")
    return "\n".join(out)


# ---------------------------------------------------------------------- known shortfalls

# Rows whose figures warplint does not reach yet (with --param for them, the figures match the README). The key is the row's
# file:line and first snippet, so that renumbering the README moves no mark to another row.
KNOWN_SHORTFALLS: dict[str, str] = {}


def _marks(row: Row) -> list[Any]:
    reason = KNOWN_SHORTFALLS.get(f"{row.file}:{row.lines[0]} {row.snippets[0] if row.snippets else ''}")
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


ROWS = [pytest.param(row, id=row.id, marks=_marks(row)) for row in verdict_rows()]


# ---------------------------------------------------------------------- the table itself


def test_the_verdict_table_is_read_completely_and_in_order() -> None:
    rows = verdict_rows()
    section = README.read_text(encoding="utf-8").split("## Verdict table", 1)[1].split("\n#", 1)[0]
    numbered = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [r.number for r in rows] == list(range(1, len(rows) + 1))
    assert len(rows) == len(numbered) >= 40


def test_every_sample_file_is_covered_by_a_verdict_row_or_is_the_one_meant_not_to_compile() -> None:
    files = sorted(p.name for p in SAMPLES.glob("*.cu"))
    covered = {row.file for row in verdict_rows()}
    not_compiling = {r.file for r in file_rows() if "does not compile" in r.shows}
    assert not_compiling == {"000_vec3d_misspelled_align.cu"}
    assert sorted(covered | not_compiling) == files
    assert covered.isdisjoint(not_compiling)


def test_every_file_row_names_a_sample_that_exists_with_that_kernel() -> None:
    for row in file_rows():
        text = (SAMPLES / row.file).read_text(encoding="utf-8")
        assert re.search(rf"__global__\s+void\s+{re.escape(row.kernel)}\s*\(", text), row


def test_verdicts_agree_with_the_costs_the_row_states() -> None:
    # the README's own consistency: "conflict" exactly when a shared cost exceeds its ideal,
    # "uncoalesced" exactly when a global one does
    for row in verdict_rows():
        over = {space for space, c in row.costs.items() if c.per_request > c.ideal}
        assert ("shared" in over) == row.verdict.startswith("conflict"), row
        assert ("global" in over) == row.verdict.startswith("uncoalesced"), row
        assert (not over) == row.verdict.startswith("ok"), row


def test_the_cost_parser_reads_the_forms_the_table_uses() -> None:
    assert _costs("**4 wf / 1** (4-way)") == {"shared": Cost(4, 1)}
    assert _costs("1 wf / 1; the loads 4 sectors / 4") == {"shared": Cost(1, 1), "global": Cost(4, 4)}
    assert _costs("**1 sector** / 4 [ncu ideal 1]") == {"global": Cost(1, 4)}
    assert _costs("**12 sectors / 4 per load**, 3 loads → 36 sectors for 12 ideal") == {"global": Cost(12, 4)}
    assert _costs("**4 / 4** each", "global loads `x[tid]`") == {"global": Cost(4, 4)}
    assert literal_launch("`<<<1, THREAD_NUM>>>`, 256") == (1, 256)
    assert literal_launch("`<<<8, 64, 768>>>`") == (8, 64)
    assert literal_launch("`dim3 block(32, 32, 1)`") is None


# ---------------------------------------------------------------------- each row


@pytest.mark.parametrize("row", ROWS)
def test_sample_access_costs_and_findings_match_the_readme_row(row: Row) -> None:
    check_row(row, report(row.file), row.costs)


SEED_ROWS = [pytest.param(row, id=f"{row.id}-{row.arch}") for row in verdict_rows() if row.arch is not None]


@pytest.mark.parametrize("row", SEED_ROWS)
def test_sample_costs_on_the_articles_hardware_match_the_readme_row(row: Row) -> None:
    assert row.arch is not None
    check_row(row, report(row.file, row.arch), row.costs_there)


def test_every_claim_of_the_articles_names_the_hardware_it_was_written_for() -> None:
    # a row with a claim has an architecture and a cost there; a row without has neither
    for row in verdict_rows():
        assert (not row.claim.startswith("—")) == (row.arch is not None), row
    assert {row.arch for row in verdict_rows()} == {None, "sm_10", "sm_11", "sm_13", "sm_20", "sm_35"}


def test_verdicts_there_agree_with_the_costs_the_row_states() -> None:
    for row in verdict_rows():
        if row.arch is None:
            continue
        over = {space for space, c in row.costs_there.items() if c.per_request > c.ideal}
        assert ("shared" in over) == row.verdict_there.startswith("conflict"), row
        assert ("global" in over) == row.verdict_there.startswith("uncoalesced"), row
        assert (not over) == row.verdict_there.startswith("ok"), row


def check_row(row: Row, file_report: dict[str, Any], costs: dict[str, Cost]) -> None:
    """The row's accesses in `file_report` cost `costs` per request, with the findings that follow."""
    context = describe(row, file_report)
    assert not [e for e in file_report["errors"] if e["severity"] == "error"], context
    kernels = kernels_named(file_report, row.kernel)
    assert len(kernels) == 1, context  # every sample launches its kernel once
    kernel = kernels[0]
    accesses = selected_accesses(row, kernel)
    assert accesses, "no access of the row found\n" + context
    assert {a["space"] for a in accesses} <= set(costs), context

    findings: dict[tuple[int, int], set[str]] = {}
    for f in file_report["findings"]:
        if f["kernel"] == kernel["name"]:
            findings.setdefault((f["line"], f["column"]), set()).add(f["code"])

    launch = literal_launch(next(r.launch for r in file_rows() if r.file == row.file))
    for a in accesses:
        where = f"{a['line']}:{a['column']} `{a['text']}`\n{context}"
        expected = costs[a["space"]]
        assert (a["per_request"], a["ideal_per_request"]) == (expected.per_request, expected.ideal), where
        # a load whose value the thread already holds makes no request, so it gets no finding
        # (the README's "the repeated `data[tid].x` is loaded once", "reuses the values just
        # stored"): the access it reuses carries the finding
        reused = "reuses" in a
        costly = expected.per_request > expected.ideal and not reused
        codes = findings.get((a["line"], a["column"]), set()) & COST_CODES
        assert codes == ({RULE_FOR_SPACE[a["space"]]} if costly else set()), where
        if reused:
            assert (a["requests"], a["total"]) == (0, 0), where
            continue
        if launch is not None:
            blocks, threads = launch
            warps = blocks * math.ceil(threads / 32)
            assert (
                kernel["launch"]["block"][0] * kernel["launch"]["block"][1] * kernel["launch"]["block"][2] == threads
            ), where
            assert a["requests"] is not None and a["requests"] % warps == 0, where
            assert a["total"] == a["per_request"] * a["requests"], where
        elif a["requests"] is not None and a["exact"]:
            assert a["total"] == a["per_request"] * a["requests"], where
    # a row whose launch is literal charges every warp at least once
    if launch is not None:
        assert max(a["requests"] for a in accesses) > 0, context


def test_the_misspelled_align_sample_gets_wl906_at_each_misspelling_and_no_cost_findings() -> None:
    (row,) = [r for r in file_rows() if "does not compile" in r.shows]
    source = (SAMPLES / row.file).read_text(encoding="utf-8").splitlines()
    expected = {
        (n, m.start() + 1)
        for n, text in enumerate(source, 1)
        for m in re.finditer(r"__align\(\d+\)__", text)
        if not text.lstrip().startswith("//")
    }
    file_report = report(row.file)
    got = {(e["line"], e["column"]) for e in file_report["errors"] if e["code"] == "WL906"}
    assert expected and got == expected, describe_errors(file_report)
    for e in file_report["errors"]:
        if e["code"] == "WL906":
            assert "__align__(" in e["message"], e


def describe_errors(file_report: dict[str, Any]) -> str:
    return "\n".join(f"{e['line']}:{e['column']} {e['code']} {e['message']}" for e in file_report["errors"])
