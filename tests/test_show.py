"""`warplint show FILE:LINE`: the exact pictures of a warp's lanes against banks and sectors."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from analyzer.api import check_file
from analyzer.arch import get_arch
from analyzer.cli import main
from analyzer.report.show import accesses_at, global_picture, render_show, shared_picture

ROOT = Path(__file__).resolve().parents[1]
SM90 = get_arch("sm_90")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# data[base + 4 * tid]: a word stride of 4, so lanes 0, 8, 16, 24 share bank 0 (4-way)
STRIDE4_LINE_23 = (
    "samples/000_bank_stride4.cu:23:18: shared load `data[base + 4 * tid]` in kernel `bank_stride4`, block 32x1x1 (launch at line 34)\n"
    "  4-byte accesses; the costliest request: 4 wavefronts, ideal 1\n"
    "  bank         0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  wavefront 1  0* .  .  .  1* .  .  .  2* .  .  .  3* .  .  .  4* .  .  .  5* .  .  .  6* .  .  .  7* .  .  .\n"
    "  wavefront 2  8* .  .  .  9* .  .  . 10* .  .  . 11* .  .  . 12* .  .  . 13* .  .  . 14* .  .  . 15* .  .  .\n"
    "  wavefront 3 16* .  .  . 17* .  .  . 18* .  .  . 19* .  .  . 20* .  .  . 21* .  .  . 22* .  .  . 23* .  .  .\n"
    "  wavefront 4 24* .  .  . 25* .  .  . 26* .  .  . 27* .  .  . 28* .  .  . 29* .  .  . 30* .  .  . 31* .  .  .\n"
    "  lane         0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  -> bank      0  4  8 12 16 20 24 28  0  4  8 12 16 20 24 28  0  4  8 12 16 20 24 28  0  4  8 12 16 20 24 28\n"
    "  * lanes whose bank holds several words (served one wavefront each):\n"
    "  bank 0: lanes 0, 8, 16 and 24 at words 0, 32, 64, 96 (4 wavefronts)\n"
    "  bank 4: lanes 1, 9, 17 and 25 at words 4, 36, 68, 100 (4 wavefronts)\n"
    "  bank 8: lanes 2, 10, 18 and 26 at words 8, 40, 72, 104 (4 wavefronts)\n"
    "  bank 12: lanes 3, 11, 19 and 27 at words 12, 44, 76, 108 (4 wavefronts)\n"
    "  bank 16: lanes 4, 12, 20 and 28 at words 16, 48, 80, 112 (4 wavefronts)\n"
    "  bank 20: lanes 5, 13, 21 and 29 at words 20, 52, 84, 116 (4 wavefronts)\n"
    "  bank 24: lanes 6, 14, 22 and 30 at words 24, 56, 88, 120 (4 wavefronts)\n"
    "  bank 28: lanes 7, 15, 23 and 31 at words 28, 60, 92, 124 (4 wavefronts)\n"
)

# data[tid] = global_data[tid]: a conflict-free shared store and a coalesced global load
STRIDE4_LINE_17 = (
    "samples/000_bank_stride4.cu:17:5: shared store `data[tid]` in kernel `bank_stride4`, block 32x1x1 (launch at line 34)\n"
    "  4-byte accesses; the costliest request: 1 wavefront, ideal 1\n"
    "  bank         0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  wavefront 1  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  lane         0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  -> bank      0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  no bank holds more than one word: conflict-free\n"
    "\n"
    "samples/000_bank_stride4.cu:17:17: global load `global_data[tid]` in kernel `bank_stride4`, block 32x1x1 (launch at line 34)\n"
    "  4-byte accesses; the costliest request: 4 sectors, ideal 4\n"
    "  lane          0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  sector +0     #  #  #  #  #  #  #  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   32/32 bytes used\n"
    "  sector +32    .  .  .  .  .  .  .  .  #  #  #  #  #  #  #  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   32/32 bytes used\n"
    "  sector +64    .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  #  #  #  #  #  #  #  .  .  .  .  .  .  .  .   32/32 bytes used\n"
    "  sector +96    .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  #  #  #  #  #  #  #   32/32 bytes used\n"
    "  4 sectors moved (128 bytes) for 128 bytes used: 100.0% efficiency\n"
)

# x[1000*tid]: every lane in a sector of its own (32 sectors for 4 sectors of data)
STRIDE1000_LINE_10 = (
    "samples/003_kernel_2_stride1000.cu:10:2: global store `x[1000*tid]` in kernel `kernel_2`, block 256x1x1 (launch at line 18)\n"
    "  4-byte accesses; the costliest request: 32 sectors, ideal 4\n"
    "  lane           0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
    "  sector +0      #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +4000   .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +8000   .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +12000  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +16000  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +20000  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +24000  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +28000  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +32000  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +36000  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +40000  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +44000  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +48000  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +52000  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +56000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +60000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +64000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +68000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +72000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +76000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +80000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +84000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +88000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +92000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +96000  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +100000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .  .   4/32 bytes used\n"
    "  sector +104000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .  .   4/32 bytes used\n"
    "  sector +108000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .  .   4/32 bytes used\n"
    "  sector +112000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .  .   4/32 bytes used\n"
    "  sector +116000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .  .   4/32 bytes used\n"
    "  sector +120000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #  .   4/32 bytes used\n"
    "  sector +124000 .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  #   4/32 bytes used\n"
    "  32 sectors moved (1024 bytes) for 128 bytes used: 12.5% efficiency\n"
)


def show(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    status = main(["show", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_4_way_bank_conflict_is_drawn_one_wavefront_a_row(monkeypatch, capsys) -> None:
    assert show(monkeypatch, capsys, "samples/000_bank_stride4.cu:23") == (0, STRIDE4_LINE_23, "")


def test_two_accesses_on_a_line_are_both_drawn_shared_and_global(monkeypatch, capsys) -> None:
    assert show(monkeypatch, capsys, "samples/000_bank_stride4.cu:17") == (0, STRIDE4_LINE_17, "")


def test_an_uncoalesced_store_puts_every_lane_in_its_own_sector(monkeypatch, capsys) -> None:
    assert show(monkeypatch, capsys, "samples/003_kernel_2_stride1000.cu:10") == (0, STRIDE1000_LINE_10, "")


def test_column_picks_the_access_that_covers_it(monkeypatch, capsys) -> None:
    shared, global_ = STRIDE4_LINE_17.split("\n\n")
    # `data[tid]` is columns 5-13, `global_data[tid]` 17-32
    assert show(monkeypatch, capsys, "samples/000_bank_stride4.cu:17", "--column", "13") == (0, shared + "\n", "")
    assert show(monkeypatch, capsys, "samples/000_bank_stride4.cu:17", "--column", "17") == (0, global_, "")


@pytest.mark.parametrize(
    "where, extra, message",
    [
        (
            "samples/000_bank_stride4.cu:1",
            (),
            "no shared or global memory access analysed at samples/000_bank_stride4.cu:1;",
        ),
        (
            "samples/000_bank_stride4.cu:17",
            ("--column", "15"),
            "no shared or global memory access analysed at samples/000_bank_stride4.cu:17:15;",
        ),
        (
            "samples/000_bank_stride4.cu:999",
            (),
            "no shared or global memory access analysed at samples/000_bank_stride4.cu:999;",
        ),
        (
            "samples/000_bank_stride4.cu",
            (),
            "argument FILE:LINE[:COL]: 'samples/000_bank_stride4.cu': expected a file and a 1-based line",
        ),
        ("samples/000_bank_stride4.cu:0", (), "argument FILE:LINE[:COL]: 'samples/000_bank_stride4.cu:0': expected"),
        ("missing.cu:3", (), "missing.cu: no such file or folder"),
        ("samples/000_bank_stride4.cu:23", ("--column", "0"), "argument --column: 0: columns start at 1"),
    ],
)
def test_a_line_without_an_access_or_a_bad_argument_exits_2(monkeypatch, capsys, where, extra, message) -> None:
    status, out, err = show(monkeypatch, capsys, where, *extra)
    assert (status, out) == (2, "")
    assert err.startswith("warplint: error: " + message), err
    assert "Traceback" not in err


def test_launch_options_change_the_picture(monkeypatch, capsys) -> None:
    # a block of 16 threads: lanes 16-31 do not exist, so the conflict is 2-way
    status, out, _ = show(monkeypatch, capsys, "samples/000_bank_stride4.cu:23", "--block", "16")
    assert status == 0
    assert "block 16x1x1 (--block)" in out.splitlines()[0]
    assert out.splitlines()[1] == "  4-byte accesses; the costliest request: 2 wavefronts, ideal 1"
    assert "  bank 0: lanes 0 and 8 at words 0, 32 (2 wavefronts)" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    "env, flags, coloured", [({}, (), True), ({"NO_COLOR": "1"}, (), False), ({}, ("--no-color",), False)]
)
def test_colour_only_on_a_terminal_without_no_color(monkeypatch, env, flags, coloured) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["show", "samples/000_bank_stride4.cu:23", *flags]) == 0
    text = terminal.getvalue()
    assert ("\x1b[1;31m 0*\x1b[0m" in text) is coloured  # lane 0's cell, red: it collides
    assert ANSI.sub("", text) == STRIDE4_LINE_23


def test_pictures_without_a_file() -> None:
    # 8-byte lanes are served in two phases of 16; a stride of 16 bytes puts lanes 0 and 8
    # of each phase on banks 0-1 at different words
    lines = shared_picture([16 * lane for lane in range(32)], 8, SM90)
    assert lines[0] == "  phase 1 (lanes 0-15): 2 wavefronts"
    assert lines[3].startswith("  wavefront 2  8* 8* .  .  9* 9* .  . 10*10*")
    assert "  phase 2 (lanes 16-31): 2 wavefronts" in lines
    # a broadcast: every lane reads word 0, one wavefront, marked +
    lines = shared_picture([0] * 32, 4, SM90)
    assert lines[1] == "  wavefront 1  0+" + " . " * 30 + " ."
    assert lines[-1] == "  + a word that several lanes read or write (a broadcast: free)"
    # an inactive lane takes no part; a misaligned 8-byte lane straddles two sectors
    assert global_picture([None, 28], 8, SM90) == [
        "  lane          0  1",
        "  sector +0     .  #   4/32 bytes used",
        "  sector +32    .  #   4/32 bytes used",
        "  2 sectors moved (64 bytes) for 8 bytes used: 12.5% efficiency",
    ]


def test_accesses_at_finds_each_access_of_a_line_once() -> None:
    report = check_file(str(ROOT / "samples/000_bank_stride4.cu"))
    found = accesses_at(report, 17)
    assert [(s.cost.text, s.cost.space, s.location.column) for s in found] == [
        ("data[tid]", "shared", 5),
        ("global_data[tid]", "global", 17),
    ]
    assert render_show(report, []) == ""


def test_show_reads_the_files_configuration_and_reports_a_broken_one(monkeypatch, capsys, tmp_path) -> None:
    source = tmp_path / "k.cu"
    source.write_text((ROOT / "samples" / "000_bank_stride4.cu").read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nblock = [64]\n")
    status, out, _ = show(monkeypatch, capsys, f"{source}:23")
    assert status == 0 and "block 64x1x1" in out.splitlines()[0]
    (tmp_path / "pyproject.toml").write_text('[tool.warplint]\nblock = "x"\n')
    status, out, err = show(monkeypatch, capsys, f"{source}:23")
    assert (status, out) == (2, "")
    assert err.startswith(f"{tmp_path / 'pyproject.toml'}:2:1: error: `tool.warplint.block` must be")


def test_an_access_whose_addresses_are_not_known_says_what_was_assumed(monkeypatch, capsys, tmp_path) -> None:
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float *out, const int *perm) {\n    out[perm[threadIdx.x]] = 0;\n}\n")
    status, out, _ = show(monkeypatch, capsys, f"{source}:2", "--block", "32", "--column", "5")
    assert status == 0
    assert out.splitlines()[1] == (
        "  no picture: the lanes' addresses are not known (the index depends on data loaded from memory: cost unknown; "
        "per_request is a bound, not a figure: each of at most 32 lanes touches one 32-byte sector)"
    )
