"""`--format html`: one self-contained page (inline CSS and script, no external resource).

At the top: the totals of findings per rule and per kernel, and a filter by rule and by
severity (a small inline script that hides the other findings; `?rule=WL101&severity=warning`
in the page's address presets it). For each checked file: its source, every line with an
analysed access annotated by the access's cost ("4 wavefronts/req (ideal 1)"), and every
finding highlighted where it is, with its message, detail, fix and the lanes picture that
`warplint show` draws for its access (`report/show.py`'s drawing, not a copy of it). Only a
finding is painted as a problem: a cost above its ideal with no finding on it (suppressed,
deselected, a load the thread already holds) is shown like any other cost. Diagnostics
(syntax errors, unreadable paths) are listed above the source. Everything taken from the
input is escaped.

The source is read again from disk to be shown (a reporter does not analyse, but it
may show the file); a file that cannot be read any more is shown without its source.
"""

from __future__ import annotations

import html
import os
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from analyzer.arch import DEFAULT_ARCH, get_arch
from analyzer.report import arch_notes, display_path, finding_detail, kernel_name, rule_name, severity_name
from analyzer.report.show import Shown, access_index, accesses_at, render_show

__all__ = ["access_notes", "render"]

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .3em; } h2 { font-size: 1.1em; margin: 1.5em 0 .4em; }
.summary { color: #444; } nav ul { padding-left: 1.2em; }
.diagnostics { list-style: none; padding: 0; }
.diagnostic, .finding { border-left: 4px solid #c62828; background: #ffd7d7; padding: .3em .6em; margin: .2em 0; }
.diagnostic.warning, .finding.warning { border-color: #b26a00; background: #fff0c2; }
.diagnostic.note, .finding.note { border-color: #1565c0; background: #dcebff; }
.finding .code, .diagnostic .code { font-weight: bold; font-family: ui-monospace, monospace; }
.finding ul { margin: .2em 0 .2em 1.2em; padding: 0; } .fix { margin: .2em 0; }
.fix::before { content: "fix: "; font-weight: bold; }
table.source { border-collapse: collapse; width: 100%; font: 13px/1.35 ui-monospace, monospace; }
td.ln { color: #888; text-align: right; padding: 0 .8em 0 .3em; vertical-align: top; user-select: none; width: 1%; }
td.ln a { color: inherit; text-decoration: none; }
td.text { white-space: pre-wrap; tab-size: 4; padding: 0; }
tr.access td.text > .line { background: #f2f6ff; }
tr.flagged td.text > .line { background: #fff6e0; }
mark { background: #ffb3b3; color: inherit; border-bottom: 2px solid #c62828; }
.cost { font: 12px system-ui, sans-serif; color: #0b3d91; background: #e8f0ff; display: inline-block;
        margin: .1em 0 .1em 2em; padding: 0 .5em; border-radius: 3px; }
.cost.excess { color: #8a1c00; background: #ffe3d6; }
.annotations { white-space: normal; }
.annotations .finding { margin-left: 2em; font-family: system-ui, sans-serif; }
pre.lanes { font: 12px/1.25 ui-monospace, monospace; background: #fff; border: 1px solid #ddd; padding: .4em .6em;
            margin: .3em 0; overflow-x: auto; white-space: pre; }
table.totals { border-collapse: collapse; margin: .3em 0 1em; } table.totals td, table.totals th {
  border: 1px solid #ddd; padding: .1em .6em; text-align: left; } table.totals td.n { text-align: right; }
.filter label { margin-right: 1em; } .note { color: #444; font-style: italic; }
[hidden] { display: none !important; }
"""

# hides the findings that the two selects leave out; `?rule=WL101&severity=warning` presets them
_SCRIPT = """
(function () {
  var rule = document.getElementById("filter-rule"), severity = document.getElementById("filter-severity");
  var asked = new URLSearchParams(window.location.search);
  if (asked.has("rule")) { rule.value = asked.get("rule"); }
  if (asked.has("severity")) { severity.value = asked.get("severity"); }
  function apply() {
    document.querySelectorAll("div.finding").forEach(function (finding) {
      finding.hidden = !((!rule.value || finding.dataset.code === rule.value) &&
                         (!severity.value || finding.dataset.severity === severity.value));
    });
  }
  rule.addEventListener("change", apply);
  severity.addEventListener("change", apply);
  apply();
})();
"""


#: Findings drawn with their lanes picture, per page. A picture takes about 1.4 ms and 5 KB:
#: a file of 4,700 findings (fuzz case `stress` kind 5, 2026-11-25) took 6.7 s more and 24 MB as
#: HTML than as text with a picture for each; past this many, `warplint show` draws the rest.
MAX_PICTURES = 1000


def render(reports: Sequence[Any], *, arch: str = DEFAULT_ARCH) -> str:
    """The whole page for `reports`, ending in a newline."""
    findings = sum(len(_unique_findings(r)) for r in reports)
    problems = sum(len(r.diagnostics) for r in reports)
    files = len(reports)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>warplint report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>warplint report</h1>",
        f'<p class="summary">{_count(findings, "finding")} and {_count(problems, "diagnostic")} '
        f"in {_count(files, 'file')}.</p>",
    ]
    parts.extend(f'<p class="note">{_e(note.message)}</p>' for note in arch_notes(arch))
    if findings > MAX_PICTURES:
        parts.append(
            f'<p class="note">Lanes pictures are drawn for the first {MAX_PICTURES:,} findings; '
            "<code>warplint show FILE:LINE</code> draws those of any line.</p>"
        )
    parts.extend(_totals(reports))
    if files > 1:
        parts.append("<nav><ul>")
        for i, report in enumerate(reports):
            n = len(_unique_findings(report))
            parts.append(
                f'<li><a href="#file-{i + 1}">{_e(display_path(report.path))}</a> ({_count(n, "finding")})</li>'
            )
        parts.append("</ul></nav>")
    drawn = 0
    for i, report in enumerate(reports):
        parts.append(_file_section(report, i + 1, arch, MAX_PICTURES - drawn))
        drawn += len(_unique_findings(report))
    parts.append(f"<script>{_SCRIPT}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _same(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _unique_findings(report: Any) -> list[Any]:
    """A kernel analysed for several launch configurations reports a finding once each;
    the page shows it once."""
    seen: set[tuple] = set()
    out = []
    for f in report.findings:
        key = (f.span, f.code, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def access_notes(report: Any, flagged: frozenset[tuple[int, int]] = frozenset()) -> dict[int, list[tuple[str, bool]]]:
    """line -> `(note, a problem)` for every analysed access that starts on that line of the
    report's own file: "`tile[ty][tx]` shared load: 4 wavefronts/req (ideal 1)", with the
    block when the kernel is analysed for several launches. A problem is a cost above its
    ideal at a `(line, column)` of `flagged`, where a finding is: a worst case no rule
    reported is not painted as one."""
    found: dict[int, list[tuple[int, str, bool]]] = defaultdict(list)
    blocks: dict[str, set] = defaultdict(set)
    for analysis in report.kernels:
        blocks[str(analysis.kernel.display_name)].add(analysis.launch.block)
    for analysis in report.kernels:
        several = len(blocks[str(analysis.kernel.display_name)]) > 1
        for cost in analysis.costs:
            if cost.space not in ("shared", "global"):
                continue
            loc = report.locate(cost.span)
            if not _same(loc.path, report.path):
                continue
            if cost.per_request is None:
                text = f"`{cost.text}` {cost.space} {cost.op}: cost unknown"
            else:
                unit = {"wavefronts": "wavefronts", "sectors": "sectors"}.get(cost.unit, cost.unit)
                text = (
                    f"`{cost.text}` {cost.space} {cost.op}: {cost.per_request} {unit}/req "
                    f"(ideal {cost.ideal_per_request})"
                )
            if several and analysis.launch.block:
                text += f", block {'x'.join(map(str, analysis.launch.block))}"
            entry = (loc.column, text, bool(cost.excess) and (loc.line, loc.column) in flagged)
            if entry not in found[loc.line]:
                found[loc.line].append(entry)
    # in the order the accesses are written on the line
    return {
        line: [(text, excess) for _, text, excess in sorted(entries, key=lambda e: e[0])]
        for line, entries in found.items()
    }


def _read_source(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            return handle.read().split("\n")
    except OSError:
        return None


def _file_section(report: Any, number: int, arch: str = DEFAULT_ARCH, pictures: int = MAX_PICTURES) -> str:
    """The file's section: its source, each finding at its line (the first `pictures` of them
    with their lanes picture), and the diagnostics."""
    path = display_path(report.path)
    findings = _unique_findings(report)
    out = [
        f'<section class="file" id="file-{number}">',
        f"<h2>{_e(path)} <small>({_count(len(findings), 'finding')})</small></h2>",
    ]
    elsewhere: list[str] = []  # diagnostics and findings not in this file's own lines
    by_line: dict[int, list[str]] = defaultdict(list)
    marks: dict[int, list[tuple[int, int]]] = defaultdict(list)
    index = access_index(report)  # located once for every finding's picture
    for d in report.diagnostics:
        loc = d.location if d.location is not None else report.locate(d.span)
        item = _diagnostic_html(d, loc)
        if d.code in ("WL910", "WL900") or not _same(loc.path, report.path):
            elsewhere.append(item)
        else:
            by_line[loc.line].append(item)
    for drawn, f in enumerate(findings):
        loc = report.locate(f.span)
        item = _finding_html(report, f, number, arch, index if drawn < pictures else None)
        if not _same(loc.path, report.path):
            elsewhere.append(item)
            continue
        by_line[loc.line].append(item)
        end = loc.end_column if loc.end_line == loc.line else 10**9
        marks[loc.line].append((loc.column, max(end, loc.column + 1)))
    if elsewhere:
        out.append('<ul class="diagnostics">' + "".join(f"<li>{x}</li>" for x in elsewhere) + "</ul>")
    lines = _read_source(report.path) if report.linemap is not None else None
    if lines is None:
        out.append("</section>")
        return "\n".join(out)
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    flagged = frozenset((loc.line, loc.column) for loc in map(report.locate, (f.span for f in findings)))
    costs = access_notes(report, flagged)
    out.append('<table class="source">')
    for n, text in enumerate(lines, start=1):
        notes = costs.get(n, [])
        items = by_line.get(n, [])
        classes = ["flagged"] if items else ["access"] if notes else []
        anchor = f"f{number}-L{n}"
        row = [
            f'<tr id="{anchor}"' + (f' class="{" ".join(classes)}"' if classes else "") + ">",
            f'<td class="ln"><a href="#{anchor}">{n}</a></td>',
            f'<td class="text"><div class="line">{_marked(text, marks.get(n, []))}</div>',
        ]
        if notes or items:
            row.append('<div class="annotations">')
            row.extend(f'<div class="cost{" excess" if excess else ""}">{_e(note)}</div>' for note, excess in notes)
            row.extend(items)
            row.append("</div>")
        row.append("</td></tr>")
        out.append("".join(row))
    out.append("</table></section>")
    return "\n".join(out)


def _marked(text: str, ranges: list[tuple[int, int]]) -> str:
    """The line escaped, with the (merged) 1-based column ranges in <mark>."""
    if not text:
        return "\u200b"  # keeps an empty line one line high
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        start, end = max(start, 1), min(end, len(text) + 1)
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 1
    for start, end in merged:
        out.append(_e(text[at - 1 : start - 1]))
        out.append(f"<mark>{_e(text[start - 1 : end - 1])}</mark>")
        at = end
    out.append(_e(text[at - 1 :]))
    return "".join(out)


def _diagnostic_html(d: Any, loc: Any) -> str:
    severity = severity_name(d.severity)
    where = f"{display_path(loc.path)}:{loc.line}:{loc.column}"
    notes = "".join(f"<li>{_e(n)}</li>" for n in d.notes)
    return (
        f'<div class="diagnostic {severity}"><span class="code">{_e(d.code)}</span> '
        f"{_e(severity)}: {_e(d.message)} <small>({_e(where)})</small>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "</div>"
    )


def _finding_html(
    report: Any, f: Any, number: int, arch: str = DEFAULT_ARCH, index: dict[int, list[Shown]] | None = None
) -> str:
    """One finding's block; with its lanes picture when `index` (`access_index(report)`) is given."""
    severity = severity_name(getattr(f, "severity", "warning"))
    loc = report.locate(f.span)
    detail = []
    kernel = kernel_name(getattr(f, "kernel", None))
    if kernel:
        detail.append(_e(f"in kernel `{kernel}`"))
    detail.extend(_e(line) for line in finding_detail(getattr(f, "detail", None)))
    for r in getattr(f, "related", ()) or ():
        rloc = report.locate(r.span)
        if _same(rloc.path, report.path):
            detail.append(f'<a href="#f{number}-L{rloc.line}">line {rloc.line}</a>: {_e(r.message)}')
        else:
            detail.append(_e(f"{display_path(rloc.path)}:{rloc.line}: {r.message}"))
    items = "".join(f"<li>{x}</li>" for x in detail)
    fix = getattr(f, "fix", None)
    picture = _lanes_picture(report, loc, kernel, arch, index) if index is not None else ""
    return (
        f'<div class="finding {severity}" data-code="{_e(f.code)}" data-severity="{_e(severity)}" '
        f'data-line="{loc.line}" data-column="{loc.column}"><span class="code">{_e(f.code)}</span> {_e(f.message)}'
        + (f"<ul>{items}</ul>" if items else "")
        + (f'<p class="fix">{_e(fix)}</p>' if fix else "")
        + (f'<pre class="lanes">{_e(picture)}</pre>' if picture else "")
        + "</div>"
    )


def _lanes_picture(report: Any, loc: Any, kernel: str | None, arch: str, index: dict[int, list[Shown]]) -> str:
    """What `warplint show FILE:LINE --column C` draws for the access a finding is on (its
    kernel's launches; every kernel's when none is named); "" when no access starts there."""
    if not _same(loc.path, report.path):
        return ""  # show draws the accesses of the file's own lines
    shown = accesses_at(report, loc.line, loc.column, index=index)
    own = [item for item in shown if kernel_name(item.analysis.kernel) == kernel]
    return render_show(report, own or shown, arch=get_arch(arch)).rstrip("\n")


def _totals(reports: Sequence[Any]) -> list[str]:
    """The totals of findings per rule and per kernel (each finding once, as on the page),
    and the filter's two selects, which offer the rules and severities found."""
    by_rule: dict[str, int] = defaultdict(int)
    by_kernel: dict[tuple[str, str], int] = defaultdict(int)
    severities: set[str] = set()
    for report in reports:
        for f in _unique_findings(report):
            by_rule[str(f.code)] += 1
            by_kernel[(display_path(report.path), kernel_name(getattr(f, "kernel", None)) or "")] += 1
            severities.add(severity_name(getattr(f, "severity", "warning")))
    rules = sorted(by_rule)
    out = ['<h2>Totals</h2><table class="totals per-rule"><tr><th>rule</th><th>name</th><th>findings</th></tr>']
    out.extend(
        f'<tr data-code="{_e(c)}"><td>{_e(c)}</td><td>{_e(rule_name(c))}</td><td class="n">{by_rule[c]}</td></tr>'
        for c in rules
    )
    out.append('</table><table class="totals per-kernel"><tr><th>file</th><th>kernel</th><th>findings</th></tr>')
    out.extend(
        f'<tr><td>{_e(path)}</td><td>{_e(kernel)}</td><td class="n">{n}</td></tr>'
        for (path, kernel), n in sorted(by_kernel.items())
    )
    out.append('</table><p class="filter"><label>rule <select id="filter-rule"><option value="">all</option>')
    out.extend(f'<option value="{_e(c)}">{_e(c)} {_e(rule_name(c))}</option>' for c in rules)
    out.append('</select></label><label>severity <select id="filter-severity"><option value="">all</option>')
    order = ("error", "warning", "note")
    out.extend(
        f'<option value="{s}">{s}</option>'
        for s in sorted(severities, key=lambda s: (s not in order, order.index(s) if s in order else 0, s))
    )
    out.append("</select></label></p>")
    return out
