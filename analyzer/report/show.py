"""`warplint show FILE:LINE`: pictures of one warp-level request of the access(es) on a line.

Shared memory: the banks across, one row per wavefront (the k-th distinct word that
the phase's lanes touch in a bank is served in wavefront k), each cell the lowest lane
on that word; `*` marks lanes whose bank holds more than one word (a conflict), `+` a
word that several lanes share (a broadcast, free). Below it a lane -> bank table.

Global memory: the lanes across, one row per sector touched, `#` where a lane's
bytes fall in the sector, and how many of the sector's bytes the warp uses.

The pictures draw `AccessCost.lane_addresses`, the byte addresses of the request that
cost most, with the same arithmetic as the cost model (`analysis.cost`), so what they
show adds up to the reported cost. Colour (ANSI) only when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.report import display_path

__all__ = ["Shown", "access_index", "accesses_at", "global_picture", "render_show", "shared_picture"]

_RESET = "\x1b[0m"
_STYLE = {
    "conflict": "\x1b[1;31m",
    "shared": "\x1b[32m",
    "empty": "\x1b[2m",
    "head": "\x1b[1m",
    "partial": "\x1b[33m",
    "full": "\x1b[32m",
}
MAX_BANK_LINES = 8  # colliding banks listed under a picture


@dataclass(frozen=True)
class Shown:
    """One access to draw: its cost for one launch configuration, and where it is."""

    cost: Any  # analyzer.analysis.results.AccessCost
    analysis: Any  # the KernelAnalysis it belongs to (for the launch)
    location: Any  # analyzer.diagnostics.Location


def access_index(report: Any) -> dict[int, list[Shown]]:
    """The analysed shared and global accesses of the report's own file, by the line they start
    on, each located once: `accesses_at` asks it for every finding of an HTML page, and locating
    every access again for each finding made a page of 4,700 findings take minutes (fuzz case
    `stress` kind 5, 2026-11-25)."""
    import os

    own = os.path.normcase(os.path.abspath(report.path))
    by_line: dict[int, list[Shown]] = {}
    for analysis in report.kernels:
        for cost in analysis.costs:
            if cost.space not in ("shared", "global"):
                continue
            loc = report.locate(cost.span)
            if os.path.normcase(os.path.abspath(loc.path)) == own:
                by_line.setdefault(loc.line, []).append(Shown(cost, analysis, loc))
    return by_line


def accesses_at(
    report: Any, line: int, column: int | None = None, *, index: dict[int, list[Shown]] | None = None
) -> list[Shown]:
    """The analysed shared and global accesses that start on `line` of the report's own file
    (and cover `column` when given), in column order, each launch once. `index` is
    `access_index(report)`, when the caller asks for many lines of one report."""
    found: list[Shown] = []
    seen: set[tuple] = set()
    for item in (access_index(report) if index is None else index).get(line, ()):
        cost, loc = item.cost, item.location
        if column is not None and not (
            loc.column <= column < max(loc.end_column, loc.column + 1)
            or (loc.end_line > loc.line and column >= loc.column)
        ):
            continue
        key = (cost.span, cost.via, cost.op, cost.lane_addresses, cost.per_request, item.analysis.launch.block)
        if key not in seen:
            seen.add(key)
            found.append(item)
    found.sort(key=lambda s: (s.location.column, s.location.end_column))
    return found


def render_show(report: Any, shown: Sequence[Shown], *, color: bool = False, arch: Any = None) -> str:
    """The pictures of every access in `shown`, each under a headline."""
    from analyzer.arch import get_arch

    arch = arch or get_arch()
    out: list[str] = []
    for item in shown:
        if out:
            out.append("")
        out.extend(_picture(report, item, arch, color))
    return "".join(line + "\n" for line in out)


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_STYLE[style]}{text}{_RESET}" if color and style in _STYLE else text


def _picture(report: Any, item: Shown, arch: Any, color: bool) -> list[str]:
    cost, loc = item.cost, item.location
    launch = item.analysis.launch
    block = "x".join(map(str, launch.block)) if launch.block else "unknown"
    head = (
        f"{display_path(loc.path)}:{loc.line}:{loc.column}: {cost.space} {cost.op} `{cost.text}` "
        f"in kernel `{cost.kernel}`, block {block} ({launch.origin})"
    )
    lines = [_paint(head, "head", color)]
    if cost.per_request is None or not cost.lane_addresses or all(a is None for a in cost.lane_addresses):
        reasons = "; ".join(str(a) for a in cost.assumptions) or "the addresses are not known"
        lines.append(f"  no picture: the lanes' addresses are not known ({reasons})")
        return lines
    pieces = f", {cost.pieces} accesses per element" if cost.pieces > 1 else ""
    unit = cost.unit[:-1] if cost.per_request == 1 and cost.unit.endswith("s") else cost.unit
    lines.append(
        f"  {cost.bytes}-byte accesses{pieces}; the costliest request: "
        f"{cost.per_request} {unit}, ideal {cost.ideal_per_request}"
    )
    if cost.space == "shared":
        lines.extend(shared_picture(cost.lane_addresses, cost.bytes, arch, color))
    else:
        lines.extend(global_picture(cost.lane_addresses, cost.bytes, arch, color))
    inactive = [i for i, a in enumerate(cost.lane_addresses) if a is None]
    if inactive:
        lines.append(f"  inactive lanes: {_lane_list(inactive)}")
    return lines


def _words_of(address: int, access_bytes: int, bank_bytes: int) -> range:
    return range(address // bank_bytes, (address + access_bytes - 1) // bank_bytes + 1)


def shared_picture(addresses: Sequence[int | None], access_bytes: int, arch: Any, color: bool = False) -> list[str]:
    """Banks across, one row per wavefront, for each phase of the request."""
    banks, bank_bytes = arch.shared_banks, arch.bank_bytes
    per_phase = arch.lanes_per_phase(access_bytes)
    lines: list[str] = []
    colliding: list[str] = []
    conflict_lanes: set[int] = set()
    phases = range(0, len(addresses), per_phase)
    for start in phases:
        chunk = addresses[start : start + per_phase]
        # word -> lanes touching it; bank -> its distinct words in serving order
        lanes_on: dict[int, list[int]] = {}
        for i, a in enumerate(chunk):
            if a is not None:
                for w in _words_of(a, access_bytes, bank_bytes):
                    lanes_on.setdefault(w, []).append(start + i)
        if not lanes_on:
            continue
        words_in: dict[int, list[int]] = {}
        for w in sorted(lanes_on):
            words_in.setdefault(w % banks, []).append(w)
        rows = max(len(ws) for ws in words_in.values())
        if len(phases) > 1:
            end = min(start + per_phase, len(addresses)) - 1
            lines.append(f"  phase {start // per_phase + 1} (lanes {start}-{end}): {rows} wavefront{'s' * (rows > 1)}")
        lines.append("  bank        " + "".join(f"{b:>2} " for b in range(banks)).rstrip())
        for k in range(rows):
            cells = []
            for b in range(banks):
                ws = words_in.get(b, [])
                if k >= len(ws):
                    cells.append(" " + _paint(".", "empty", color) + " ")
                    continue
                lanes = lanes_on[ws[k]]
                mark = "*" if len(ws) > 1 else "+" if len(lanes) > 1 else " "
                style = "conflict" if mark == "*" else "shared" if mark == "+" else ""
                cells.append(_paint(f"{lanes[0]:>2}{mark}", style, color))
            lines.append(f"  wavefront {k + 1:<2}" + "".join(cells).rstrip())
        for b, ws in sorted(words_in.items()):
            if len(ws) > 1:
                lanes = sorted({lane for w in ws for lane in lanes_on[w]})
                conflict_lanes.update(lanes)
                colliding.append(
                    f"  bank {b}: lanes {_lane_list(lanes)} at words {', '.join(map(str, ws))} ({len(ws)} wavefronts)"
                )
    lines.append("  lane        " + "".join(f"{i:>2} " for i in range(len(addresses))).rstrip())
    cells = []
    for i, a in enumerate(addresses):
        if a is None:
            cells.append(" - ")
        else:
            text = f"{(a // bank_bytes) % banks:>2}"
            cells.append((_paint(text, "conflict", color) if i in conflict_lanes else text) + " ")
    lines.append("  -> bank     " + "".join(cells).rstrip())
    if colliding:
        shown = colliding[:MAX_BANK_LINES]
        if len(colliding) > MAX_BANK_LINES:
            shown.append(f"  and {len(colliding) - MAX_BANK_LINES} more banks with a conflict")
        lines.append("  * lanes whose bank holds several words (served one wavefront each):")
        lines.extend(shown)
    else:
        lines.append("  no bank holds more than one word: conflict-free")
    if any(len(lanes) > 1 for lanes in _all_words(addresses, access_bytes, bank_bytes).values()):
        lines.append("  + a word that several lanes read or write (a broadcast: free)")
    return lines


def _all_words(addresses: Sequence[int | None], access_bytes: int, bank_bytes: int) -> dict[int, list[int]]:
    words: dict[int, list[int]] = {}
    for i, a in enumerate(addresses):
        if a is not None:
            for w in _words_of(a, access_bytes, bank_bytes):
                words.setdefault(w, []).append(i)
    return words


def global_picture(addresses: Sequence[int | None], access_bytes: int, arch: Any, color: bool = False) -> list[str]:
    """Lanes across, one row per sector, `#` where a lane's bytes fall."""
    size = arch.sector_bytes
    lanes_in: dict[int, set[int]] = {}
    used: dict[int, set[int]] = {}  # sector -> bytes of it that some lane moves
    for i, a in enumerate(addresses):
        if a is None:
            continue
        for byte in range(a, a + access_bytes):
            lanes_in.setdefault(byte // size, set()).add(i)
            used.setdefault(byte // size, set()).add(byte % size)
    labels = {s: f"+{s * size}" for s in lanes_in}
    width = max(len("sector"), *(len(t) for t in labels.values())) if labels else len("sector")
    lines = ["  " + "lane".ljust(width + 7) + "".join(f"{i:>2} " for i in range(len(addresses))).rstrip()]
    empty = f" {_paint('.', 'empty', color)} "
    for s in sorted(lanes_in):
        full = len(used[s]) == size
        mark, lanes = f" {_paint('#', 'full' if full else 'partial', color)} ", lanes_in[s]
        cells = "".join(mark if i in lanes else empty for i in range(len(addresses)))
        lines.append(f"  sector {labels[s]:<{width}}" + cells + f"  {len(used[s])}/{size} bytes used")
    moved = len(lanes_in) * size
    useful = sum(len(b) for b in used.values())
    lines.append(
        f"  {len(lanes_in)} sector{'s' * (len(lanes_in) != 1)} moved ({moved} bytes) for "
        f"{useful} bytes used: {100 * useful / moved:.1f}% efficiency"
        if moved
        else "  no sector"
    )
    return lines


def _lane_list(lanes: Sequence[int]) -> str:
    """`0, 8, 16 and 24`; runs of 3 or more as `0-15`."""
    parts: list[str] = []
    run: list[int] = []
    for lane in [*lanes, None]:
        if run and (lane is None or lane != run[-1] + 1):
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)))
            run = []
        if lane is not None:
            run.append(lane)
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return parts[0] if parts else ""
