"""Suppression comments, each form with the exact findings it leaves, and
`--report-unused-suppressions` with the exact line:col of each unused comment.

The kernel below has three findings when nothing is suppressed:
    5:5   WL101 4-way bank conflict       tile[t * 4] = ...
    5:19  WL201 stride-2 global load      ... = in[t * 2];
    6:14  WL101 8-way bank conflict       out[t] = tile[t * 8];
Each test writes it with comments added (lines shift where a comment takes a line).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from analyzer import cli
from analyzer.diagnostics import Location
from analyzer.suppressions import parse_suppressions

HEAD = """\
__global__ void k(const float* in, float* out)
{
    __shared__ float tile[32 * 32];
    int t = threadIdx.x;
"""
TAIL = """\
}
int main() { float *a, *b; k<<<1, 32>>>(a, b); }
"""
LOAD = "    tile[t * 4] = in[t * 2];"
STORE = "    out[t] = tile[t * 8];"

B4 = "WL101 4-way bank conflict on `tile`: 4 wavefronts per request, ideal 1"
G2 = "WL201 uncoalesced global load of `in[t * 2]`: 8 sectors per request, ideal 4 (50% efficiency)"
B8 = "WL101 8-way bank conflict on `tile`: 8 wavefronts per request, ideal 1"


def source(*body: str) -> str:
    return HEAD + "".join(line + "\n" for line in body) + TAIL


@pytest.fixture
def check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """check(text, *flags) -> (exit status, concise lines without the path)."""
    monkeypatch.chdir(tmp_path)

    def run(text: str, *flags: str, name: str = "k.cu") -> tuple[int, list[str]]:
        (tmp_path / name).write_text(text, encoding="utf-8")
        status = cli.main(["check", "--isolated", "--format", "concise", "-q", "-j", "1", name, *flags])
        out = capsys.readouterr().out
        return status, [line.removeprefix(f"{name}:") for line in out.splitlines()]

    return run


def test_nothing_suppressed_gives_three_findings(check):
    assert check(source(LOAD, STORE)) == (1, [f"5:5: {B4}", f"5:19: {G2}", f"6:14: {B8}"])


def test_ignore_with_a_code_on_the_line_keeps_the_other_rule(check):
    assert check(source(LOAD + "  // warplint: ignore[WL101]", STORE)) == (1, [f"5:19: {G2}", f"6:14: {B8}"])


def test_ignore_with_a_name_on_the_line_above(check):
    status, lines = check(source(STORE, "    // warplint: ignore[bank-conflict]", LOAD))
    assert (status, lines) == (1, [f"5:14: {B8}", f"7:19: {G2}"])


def test_ignore_with_two_codes_silences_both(check):
    assert check(source(LOAD + " // warplint: ignore[WL101, WL201]", STORE)) == (1, [f"6:14: {B8}"])


def test_bare_ignore_silences_every_rule_on_its_line_and_the_next(check):
    assert check(source("    // warplint: ignore", LOAD, STORE)) == (1, [f"7:14: {B8}"])


def test_ignore_two_lines_above_does_not_reach(check):
    _status, lines = check(source("    // warplint: ignore", "", LOAD, STORE))
    assert lines == [f"7:5: {B4}", f"7:19: {G2}", f"8:14: {B8}"]


def test_block_comment_ignore(check):
    assert check(source(LOAD + " /* warplint: ignore[WL201] */", STORE)) == (1, [f"5:5: {B4}", f"6:14: {B8}"])


def test_everything_suppressed_exits_zero(check):
    assert check(source(LOAD + " // warplint: ignore", STORE + " // warplint: ignore")) == (0, [])


def test_nolint_bare_covers_only_its_own_line(check):
    assert check(source(LOAD + " // NOLINT", STORE)) == (1, [f"6:14: {B8}"])
    assert check(source("    // NOLINT", LOAD, STORE))[1] == [f"6:5: {B4}", f"6:19: {G2}", f"7:14: {B8}"]


def test_nolint_with_a_code(check):
    assert check(source(LOAD + " // NOLINT(WL201)", STORE)) == (1, [f"5:5: {B4}", f"6:14: {B8}"])


def test_nolintnextline_with_a_name(check):
    _status, lines = check(source(LOAD, "    // NOLINTNEXTLINE(bank-conflict)", STORE))
    assert lines == [f"5:5: {B4}", f"5:19: {G2}"]


def test_nolintbegin_end_covers_the_lines_between(check):
    status, lines = check(source("    // NOLINTBEGIN(WL101)", LOAD, STORE, "    // NOLINTEND(WL101)"))
    assert (status, lines) == (1, [f"6:19: {G2}"])


def test_nolint_glob_and_other_tools_checks(check):
    assert check(source(LOAD + " // NOLINT(WL1*)", STORE))[1] == [f"5:19: {G2}", f"6:14: {B8}"]
    # clang-tidy's own checks are not warplint's business: no effect, no complaint
    _status, lines = check(source(LOAD + " // NOLINT(bugprone-narrowing)", STORE), "--report-unused-suppressions")
    assert lines == [f"5:5: {B4}", f"5:19: {G2}", f"6:14: {B8}"]


def test_ignore_file_everywhere_and_by_code(check):
    assert check(source(LOAD, STORE) + "// warplint: ignore-file\n") == (0, [])
    text = "/* warplint: ignore-file[WL101] */\n" + source(LOAD, STORE)
    assert check(text) == (1, [f"6:19: {G2}"])


def test_a_finding_in_a_header_is_suppressed_by_a_comment_in_the_header(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.cuh").write_text(
        textwrap.dedent("""\
        // warplint: ignore-file[WL201]
        __device__ void helper(const float* in, float* tile, int t)
        {
            tile[t * 4] = in[t * 2];
        }
        """),
        encoding="utf-8",
    )
    (tmp_path / "k.cu").write_text(
        '#include "h.cuh"\n' + source("    helper(in, tile, t); // warplint: ignore[WL201]", STORE), encoding="utf-8"
    )
    status = cli.main(
        ["check", "--isolated", "--format", "concise", "-q", "-j", "1", "k.cu", "--report-unused-suppressions"]
    )
    assert status == 1
    assert capsys.readouterr().out.splitlines() == [
        "k.cu:6:29: WL920 unused suppression `warplint: ignore[WL201]`: it silenced nothing",
        f"k.cu:7:14: {B8}",
        f"h.cuh:4:5: {B4}",
    ]


# ----------------------------------------------------------------------------- suppressing diagnostics


def test_a_diagnostic_can_be_suppressed_too(check):
    text = (
        "struct __align(8)__ pair { float a, b; }; // NOLINT(misspelled-align)\n"
        "struct __align(8)__ pair2 { float a, b; };\n"
    )
    status, lines = check(text)
    assert status == 1  # the second one is an error left
    assert [line.split(" ")[:2] for line in lines] == [["2:8:", "WL906"]]


# ----------------------------------------------------------------------------- unused and invalid


def test_unused_suppressions_are_reported_at_their_comment(check):
    text = source(
        LOAD + "  // warplint: ignore[WL101]",  # used
        STORE + "  // NOLINT(WL201)",  # unused: no WL201 on line 6
        "    // NOLINTNEXTLINE",  # unused: line 8 is `}`
    )
    status, lines = check(text, "--report-unused-suppressions")
    assert status == 1
    assert lines == [
        f"5:19: {G2}",
        f"6:14: {B8}",
        "6:31: WL920 unused suppression `NOLINT(WL201)`: it silenced nothing",
        "7:8: WL920 unused suppression `NOLINTNEXTLINE`: it silenced nothing",
    ]


def test_partly_used_suppression_names_its_unused_codes(check):
    status, lines = check(
        source(LOAD + " // warplint: ignore[WL101,WL201,WL301]", STORE), "--report-unused-suppressions"
    )
    assert (status, lines) == (
        1,
        [
            "5:33: WL920 unused code WL301 in suppression `warplint: ignore[WL101,WL201,WL301]`",
            f"6:14: {B8}",
        ],
    )


def test_unused_suppression_alone_fails_the_run_and_is_quiet_without_the_flag(check):
    text = source(LOAD + " // warplint: ignore", STORE + " // warplint: ignore", "    // warplint: ignore[WL301]")
    assert check(text) == (0, [])
    assert check(text, "--report-unused-suppressions") == (
        1,
        ["7:8: WL920 unused suppression `warplint: ignore[WL301]`: it silenced nothing"],
    )


def test_a_rule_not_selected_makes_no_unused_report(check):
    text = source(LOAD + " // warplint: ignore[WL101]", STORE)
    assert check(text, "--select", "WL201", "--report-unused-suppressions") == (1, [f"5:19: {G2}"])
    # the flag itself asks for WL920: --select need not name it, --ignore can silence it
    text = source(LOAD + " // warplint: ignore[WL101]", STORE, "    // NOLINTNEXTLINE(WL101)")
    assert check(text, "--select", "WL101", "--report-unused-suppressions") == (
        1,
        [f"6:14: {B8}", "7:8: WL920 unused suppression `NOLINTNEXTLINE(WL101)`: it silenced nothing"],
    )
    assert check(text, "--select", "WL1", "--ignore", "WL920", "--report-unused-suppressions") == (1, [f"6:14: {B8}"])


def test_unknown_codes_are_reported_without_the_flag_and_do_not_fail_the_run(check):
    text = source(LOAD + " // warplint: ignore[WL101, WL999]", STORE + " // NOLINT(WL77)", "    // warplint: ignore[]")
    status, lines = check(text, "--select", "WL201,WL921")
    assert (status, lines) == (
        1,
        [
            f"5:19: {G2}",
            "5:33: WL921 unknown rule `WL999` in a suppression comment; `warplint rules` lists the codes",
            "6:30: WL921 unknown rule `WL77` in a suppression comment; `warplint rules` lists the codes",
            "7:8: WL921 `ignore[]` names no rule; write `ignore` to silence every rule",
        ],
    )
    assert check(source(STORE + " // warplint: ignore[nope]"), "--select", "WL921") == (
        0,
        ["5:30: WL921 unknown rule `nope` in a suppression comment; `warplint rules` lists the codes"],
    )


def test_unmatched_nolintbegin_and_nolintend(check):
    text = source("    // NOLINTBEGIN(WL101)", LOAD, "    // NOLINTEND(WL201)", STORE)
    status, lines = check(text)
    assert (status, lines) == (
        1,
        [
            "5:8: WL921 NOLINTBEGIN without a matching NOLINTEND; it silences nothing",
            f"6:5: {B4}",
            f"6:19: {G2}",
            "7:8: WL921 NOLINTEND without a matching NOLINTBEGIN",
            f"8:14: {B8}",
        ],
    )


# ----------------------------------------------------------------------------- the parser, as data


class _Comment:
    def __init__(self, text: str, line: int, column: int, end_line: int | None = None) -> None:
        self.text = text
        self.location = Location("f.cu", line, column, end_line or line, column + len(text))


def test_parse_gives_the_covered_lines_of_each_form():
    found = parse_suppressions(
        [
            _Comment("// warplint: ignore[WL101]", 3, 10),
            _Comment("/* NOLINTNEXTLINE(WL2)\n */", 5, 1, end_line=6),
            _Comment("// NOLINTBEGIN", 8, 1),
            _Comment("// NOLINTEND", 12, 1),
            _Comment("// warplint: ignore-file", 20, 1),
        ]
    )
    assert [(s.kind, s.codes, s.first, s.last, s.location.line, s.location.column) for s in found.items] == [
        ("ignore", ("WL101",), 3, 4, 3, 13),
        ("NOLINTNEXTLINE", ("WL2",), 7, 7, 5, 4),
        ("NOLINTBEGIN", None, 8, 12, 8, 4),
        ("ignore-file", None, 1, None, 20, 4),
    ]
    assert found.problems == []
