"""`--format html`: one self-contained page, checked as a tree (html.parser) and as a picture
that headless Chromium renders."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analyzer.api import check_paths
from analyzer.cli import main
from analyzer.report import render

ROOT = Path(__file__).resolve().parents[1]
STRIDE4 = ROOT / "samples/000_bank_stride4.cu"
STRIDE1000 = ROOT / "samples/003_kernel_2_stride1000.cu"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FINDING_BACKGROUND = (0xFF, 0xF0, 0xC2)  # .finding.warning in the page's CSS
MARK_BACKGROUND = (0xFF, 0xB3, 0xB3)  # <mark>, the finding's span in the source


# ----------------------------------------------------------------------------- a tiny DOM


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        found = []
        for c in self.children:
            if isinstance(c, Node):
                if (tag is None or c.tag == tag) and (cls is None or cls in c.classes):
                    found.append(c)
                found.extend(c.all(tag, cls))
        return found


_VOID = {"meta", "br", "img", "link", "input", "hr"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.doctype = ""

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> tuple[Node, str]:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    return builder.root, builder.doctype


def row(dom: Node, file: int, line: int) -> Node:
    rows = [r for r in dom.all("tr") if r.attrs.get("id") == f"f{file}-L{line}"]
    assert len(rows) == 1
    return rows[0]


def source_line(r: Node) -> str:
    text = r.all("div", "line")[0].text()
    return "" if text == "\u200b" else text


# ----------------------------------------------------------------------------- structure


def test_the_page_is_self_contained_and_well_formed() -> None:
    page = render(check_paths([str(STRIDE4), str(STRIDE1000)]), "html")
    dom, doctype = parse(page)
    assert doctype == "DOCTYPE html"
    assert [n.tag for n in dom.all("style")] == ["style"]
    (script,) = dom.all("script")  # the filter's, inline
    assert script.attrs == {} and "filter-rule" in script.text() and "http" not in script.text()
    assert dom.all("link") == [] and dom.all("img") == []
    for node in dom.all():
        assert "src" not in node.attrs and "style" not in node.attrs
        assert node.attrs.get("href", "#").startswith("#"), node.attrs  # only links inside the page
    assert "url(" not in dom.all("style")[0].text() and "@import" not in dom.all("style")[0].text()
    assert dom.all("p", "summary")[0].text() == "2 findings and 0 diagnostics in 2 files."


def test_every_source_line_is_shown_and_access_lines_carry_their_cost() -> None:
    dom, _ = parse(render(check_paths([str(STRIDE4), str(STRIDE1000)]), "html"))
    files = dom.all("section", "file")
    assert [f.all("h2")[0].text() for f in files] == [
        "samples/000_bank_stride4.cu (1 finding)",
        "samples/003_kernel_2_stride1000.cu (1 finding)",
    ]
    lines = STRIDE4.read_text(encoding="utf-8").split("\n")[:-1]
    assert [source_line(r) for r in files[0].all("tr")] == lines
    costs = {
        int(r.attrs["id"].split("-L")[1]): [c.text() for c in r.all("div", "cost")]
        for r in files[0].all("tr")
        if r.all("div", "cost")
    }
    assert costs == {
        17: [
            "`data[tid]` shared store: 1 wavefronts/req (ideal 1)",
            "`global_data[tid]` global load: 4 sectors/req (ideal 4)",
        ],
        18: [
            "`data[tid + 32]` shared store: 1 wavefronts/req (ideal 1)",
            "`global_data[tid + 32]` global load: 4 sectors/req (ideal 4)",
        ],
        19: [
            "`data[tid + 64]` shared store: 1 wavefronts/req (ideal 1)",
            "`global_data[tid + 64]` global load: 4 sectors/req (ideal 4)",
        ],
        20: [
            "`data[tid + 96]` shared store: 1 wavefronts/req (ideal 1)",
            "`global_data[tid + 96]` global load: 4 sectors/req (ideal 4)",
        ],
        23: ["`data[base + 4 * tid]` shared load: 4 wavefronts/req (ideal 1)"],
        24: ["`output[tid]` global store: 4 sectors/req (ideal 4)"],
    }
    assert [c.classes for c in row(dom, 1, 23).all("div", "cost")] == [{"cost", "excess"}]  # WL101 is there
    assert [c.classes for c in row(dom, 1, 24).all("div", "cost")] == [{"cost"}]
    assert [c.text() for c in row(dom, 2, 10).all("div", "cost")] == [
        "`x[1000*tid]` global store: 32 sectors/req (ideal 4)"
    ]


def test_a_finding_is_highlighted_with_its_message_detail_and_fix() -> None:
    dom, _ = parse(render(check_paths([str(STRIDE4)]), "html"))
    r = row(dom, 1, 23)
    assert r.classes == {"flagged"}
    assert [m.text() for m in r.all("mark")] == ["data[base + 4 * tid]"]
    assert source_line(r) == "    int number = data[base + 4 * tid];"
    (finding,) = r.all("div", "finding")
    assert finding.attrs == {
        "class": "finding warning",
        "data-code": "WL101",
        "data-severity": "warning",
        "data-line": "23",
        "data-column": "18",
    }
    assert finding.all("span", "code")[0].text() == "WL101"
    assert "4-way bank conflict on `data`: 4 wavefronts per request, ideal 1" in finding.text()
    items = finding.all("li")
    assert [li.text() for li in items[:2]] == [
        "in kernel `bank_stride4`",
        "lanes 0, 8, 16 and 24 hit bank 0 at 4 different words (0, 32, 64 and 96)",
    ]
    # the declaration, linked to its line, when the analysis records the shared arrays
    assert [(li.text(), [a.attrs["href"] for a in li.all("a")]) for li in items[2:]] in (
        [],
        [("line 13: `data` declared here", ["#f1-L13"])],
    )
    assert finding.all("p", "fix")[0].text() == (
        "use an odd stride: with 5 words between neighbouring lanes instead of 4, "
        "the 32 lanes of a warp fall into 32 different banks"
    )
    assert len(dom.all("div", "finding")) == 1


def test_each_finding_carries_the_lanes_picture_that_show_draws() -> None:
    from analyzer.report.show import accesses_at, render_show

    reports = check_paths([str(STRIDE4), str(ROOT / "samples/004_noncoalesced_float3.cu")])
    dom, _ = parse(render(reports, "html"))
    findings = dom.all("div", "finding")
    assert len(findings) == 10  # 1 + 9: the page shows each finding once
    for finding in findings:
        (picture,) = finding.all("pre", "lanes")
        assert picture.text().splitlines()[0].endswith("(launch at line 34)") or "block 64x1x1" in picture.text()
    (stride4,) = row(dom, 1, 23).all("pre", "lanes")
    (report, _) = reports
    assert stride4.text() == render_show(report, accesses_at(report, 23, 18)).rstrip("\n")
    assert stride4.text().splitlines()[:2] == [
        "samples/000_bank_stride4.cu:23:18: shared load `data[base + 4 * tid]` in kernel `bank_stride4`, "
        "block 32x1x1 (launch at line 34)",
        "  4-byte accesses; the costliest request: 4 wavefronts, ideal 1",
    ]
    assert "  bank 0: lanes 0, 8, 16 and 24 at words 0, 32, 64, 96 (4 wavefronts)" in stride4.text().splitlines()


def test_past_the_page_s_picture_limit_findings_come_without_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.report.html as html

    monkeypatch.setattr(html, "MAX_PICTURES", 3)  # the first file's finding and 2 of the second's 9
    dom, _ = parse(render(check_paths([str(STRIDE4), str(ROOT / "samples/004_noncoalesced_float3.cu")]), "html"))
    pictures = [len(finding.all("pre", "lanes")) for finding in dom.all("div", "finding")]
    assert pictures == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    assert [p.text() for p in dom.all("p", "note")] == [
        "Lanes pictures are drawn for the first 3 findings; warplint show FILE:LINE draws those of any line."
    ]


def test_totals_per_rule_and_per_kernel_and_the_filters_choices() -> None:
    dom, _ = parse(render(check_paths([str(STRIDE4), str(ROOT / "samples/004_noncoalesced_float3.cu")]), "html"))

    def cells(table: Node) -> list[list[str]]:
        return [[td.text() for td in tr.all("td")] for tr in table.all("tr")[1:]]

    assert cells(dom.all("table", "per-rule")[0]) == [
        ["WL101", "bank-conflict", "1"],
        ["WL201", "uncoalesced-access", "7"],
        ["WL301", "misaligned-struct", "2"],
    ]
    assert cells(dom.all("table", "per-kernel")[0]) == [
        ["samples/000_bank_stride4.cu", "bank_stride4", "1"],
        ["samples/004_noncoalesced_float3.cu", "noncoalesced_float3_kernel", "9"],
    ]
    rule, severity = dom.all("select")
    assert rule.attrs["id"] == "filter-rule" and severity.attrs["id"] == "filter-severity"
    assert [(o.attrs["value"], o.text()) for o in rule.all("option")] == [
        ("", "all"),
        ("WL101", "WL101 bank-conflict"),
        ("WL201", "WL201 uncoalesced-access"),
        ("WL301", "WL301 misaligned-struct"),
    ]
    assert [o.attrs["value"] for o in severity.all("option")] == ["", "warning"]


def test_only_findings_are_painted_as_problems(tmp_path: Path) -> None:
    """A cost above its ideal with no finding on it (here the conflict suppressed with a
    comment, and the reload of a value the thread holds) is shown like any cost."""
    source = STRIDE4.read_text(encoding="utf-8").replace(
        "int number = data[base + 4 * tid];", "int number = data[base + 4 * tid];  // warplint: ignore[WL101]"
    )
    (tmp_path / "k.cu").write_text(source, encoding="utf-8")
    dom, _ = parse(render(check_paths([str(tmp_path / "k.cu")]), "html"))
    assert dom.all("div", "finding") == []
    assert [c.text() for c in row(dom, 1, 23).all("div", "cost")] == [
        "`data[base + 4 * tid]` shared load: 4 wavefronts/req (ideal 1)"
    ]
    assert [c.classes for c in dom.all("div", "cost") if "excess" in c.classes] == []
    float3 = parse(render(check_paths([str(ROOT / "samples/004_noncoalesced_float3.cu")]), "html"))[0]
    assert [(c.text(), c.classes) for c in row(float3, 1, 19).all("div", "cost")] == [
        ("`out[idx]` global store: 12 sectors/req (ideal 4)", {"cost", "excess"}),
        ("`in[idx]` global load: 12 sectors/req (ideal 4)", {"cost"}),  # reuses line 15-17's values: no request
    ]


def test_an_assumed_architecture_is_noted_on_the_page() -> None:
    dom, _ = parse(render(check_paths([str(STRIDE4)]), "html", arch="sm_121"))
    assert [p.text() for p in dom.all("p", "note")] == [
        "sm_121 is costed with the rules measured on sm_90 (32 banks of 4 bytes, 32-byte sectors): "
        "assumed, not measured on sm_121"
    ]
    assert parse(render(check_paths([str(STRIDE4)]), "html"))[0].all("p", "note") == []


def test_everything_from_the_input_is_escaped(tmp_path: Path) -> None:
    source = (
        "// <script>alert('x')</script> & <b>bold</b> \"quoted\"\n"
        "__global__ void k(float *a, int n) { if (threadIdx.x < n && n > 0) a[threadIdx.x * 2] = 1; }\n"
        "void h(float *a) { k<<<1, 32>>>(a, 64); }\n"
    )
    path = tmp_path / "x<y>&z.cu"
    path.write_text(source, encoding="utf-8")
    page = render(check_paths([str(path)]), "html")
    dom, _ = parse(page)
    assert len(dom.all("script")) == 1 and dom.all("b") == []  # the page's own filter script only
    assert [source_line(r) for r in dom.all("table", "source")[0].all("tr")] == source.split("\n")[:-1]
    assert dom.all("section", "file")[0].all("h2")[0].text().startswith(str(path) + " (")
    assert page.count("<script>") == 1 and "<script>alert" not in page and "&lt;script&gt;alert" in page


def test_a_path_that_cannot_be_read_is_listed_without_source(tmp_path: Path) -> None:
    dom, _ = parse(render(check_paths([str(tmp_path / "missing.cu")]), "html"))
    (item,) = dom.all("div", "diagnostic")
    assert item.classes == {"diagnostic", "error"}
    assert item.text().startswith("WL910 error: no such file or folder")
    assert dom.all("table", "source") == []


def test_format_html_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    assert main(["check", str(STRIDE4), "--format", "html", "-o", str(out), "--quiet"]) == 1
    dom, _ = parse(out.read_text(encoding="utf-8"))
    assert [f.attrs["data-code"] for f in dom.all("div", "finding")] == ["WL101"]
    assert capsys.readouterr().out == ""


# ----------------------------------------------------------------------------- Chromium


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks, header = 8, [], b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(r[i : i + 3]) for r in rows for i in range(0, stride, bpp)]


def _chromium(page: Path, tmp_path: Path, *mode: str, query: str = "") -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,900",
            # the page's colours as written (no display profile), and the shot taken once the page
            # has laid out and run its script: a CI run once got a shot without the findings' colour
            "--force-color-profile=srgb",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
            "--run-all-compositor-stages-before-draw",  # every tile painted before the shot
            *mode,
            page.as_uri() + query,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


#: Shots taken before one is kept: on a loaded machine Chromium now and then takes the shot
#: before it has read or painted the whole page (at a load average of 11, about 1 run in 5: the
#: source painted down to line 21 and nothing below it, or the tiles right of x = 256 below
#: line 23 not yet painted), so a shot that does not show the finding as painted is taken
#: again; a page that never shows it fails every shot.
SHOTS = 4


def _painted(pixels: list[bytes]) -> bool:
    """The finding's box (a wide block of several lines) and its marked span are in the shot."""
    counted = Counter(pixels)
    return counted[bytes(FINDING_BACKGROUND)] > 20_000 and counted[bytes(MARK_BACKGROUND)] > 500


def _screenshot(page: Path, tmp_path: Path) -> tuple[int, int, list[bytes]]:
    """The page's screenshot as `_png_pixels` reads it: the first of `SHOTS` that `_painted`
    accepts, else the last."""
    for n in range(SHOTS):
        shot = tmp_path / f"shot{n}.png"
        done = _chromium(page, tmp_path, f"--screenshot={shot}")
        assert shot.exists(), done.stderr[-2000:]
        width, height, pixels = _png_pixels(shot.read_bytes())
        if _painted(pixels):
            break
    return width, height, pixels


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_findings(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    # the conflict of line 23 is inside the first 900 pixels of the page
    page.write_text(render(check_paths([str(STRIDE4)]), "html"), encoding="utf-8")
    width, height, pixels = _screenshot(page, tmp_path)
    assert (width, height) == (1200, 900)
    # where the finding is not painted, the message names the shot's commonest colours
    assert _painted(pixels), [(p.hex(), n) for p, n in Counter(pixels).most_common(6)]

    findings = _dumped(page, tmp_path).all("div", "finding")
    assert [f.attrs["data-code"] for f in findings] == ["WL101"]
    assert "4-way bank conflict on `data`" in findings[0].text()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_paints_no_finding_colour_for_a_clean_file(tmp_path: Path) -> None:
    page = tmp_path / "clean.html"
    page.write_text(render(check_paths([str(ROOT / "samples/000_bank_stride1.cu")]), "html"), encoding="utf-8")
    shot = tmp_path / "clean.png"
    _chromium(page, tmp_path, f"--screenshot={shot}")
    _, _, pixels = _png_pixels(shot.read_bytes())
    assert bytes(FINDING_BACKGROUND) not in set(pixels)


def _dumped(page: Path, tmp_path: Path, query: str = "") -> Node:
    """The page's DOM as Chromium dumps it once its script has run: the script is the page's
    last element, so a dump without it was taken before Chromium read the whole page (as a
    screenshot may be, `SHOTS`), and is taken again, up to `SHOTS` times."""
    for _ in range(SHOTS):
        text = _chromium(page, tmp_path, "--dump-dom", query=query).stdout
        if 'getElementById("filter-severity")' in text:  # (the script's text; the select's id is earlier)
            break
    return parse(text.replace("<!DOCTYPE html>", "", 1) if "<html" in text else text)[0]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_runs_the_filter_and_shows_a_picture_for_each_finding(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    reports = check_paths([str(STRIDE4), str(ROOT / "samples/004_noncoalesced_float3.cu")])
    page.write_text(render(reports, "html"), encoding="utf-8")
    every = _dumped(page, tmp_path).all("div", "finding")
    assert len(every) == 10 and all(len(f.all("pre", "lanes")) == 1 for f in every)
    assert [f.attrs.get("hidden") for f in every] == [None] * 10
    # the script hides what the filter leaves out (preset from the address)
    shown = [
        f.attrs["data-code"]
        for f in _dumped(page, tmp_path, "?rule=WL301").all("div", "finding")
        if "hidden" not in f.attrs
    ]
    assert shown == ["WL301", "WL301"]
    both = _dumped(page, tmp_path, "?rule=WL101&severity=warning").all("div", "finding")
    assert [f.attrs["data-code"] for f in both if "hidden" not in f.attrs] == ["WL101"]
    assert len([f for f in both if "hidden" in f.attrs]) == 9
