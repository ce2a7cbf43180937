"""Hold warplint's figures to the hardware: static, simulated and measured, side by side.

Never run in CI. Two modes:

``measure`` (on a GPU machine with nvcc, cuobjdump, nvdisasm and Nsight Compute)::

    python3 tools/validate_hw.py measure --out DIR FILE.cu...

builds each program with ``nvcc -lineinfo -arch=sm_90``, profiles it once with
``ncu --section SourceCounters`` and writes, per program, the raw per-SASS-instruction
counters (``STEM.src_sass.csv``), ncu's own correlation of them with CUDA lines
(``STEM.src_cuda_sass.csv``), the per-CUDA-line view (``STEM.src_cuda.csv``), kernel
totals (``STEM.details.csv``) and the SASS with its source lines from ``nvdisasm -gi``
(``STEM.lines.txt``; ``-gi`` keeps the call site of inlined code), plus ``env.txt`` (GPU,
driver, nvcc, ncu, date) and ``commands.txt``.
Stdlib only: the GPU machine has no warplint installed.

``compare`` (here)::

    python tools/validate_hw.py compare RAW_DIR FILE.cu... [--markdown OUT.md]

joins those counters with ``warplint check --format json`` and, when the command exists,
``warplint simulate FILE --format json``, by file, source line, memory space and
operation, and prints one row per group: static, simulated and measured per request and
in total, and whether they agree.

Joining: Nsight Compute reports each SASS instruction at an absolute address; its offset
from the kernel's first instruction indexes nvdisasm's listing, whose ``//## File ...,
line N`` comments give the CUDA line; ncu's ``cuda,sass`` view and the kernel-wide
metrics are checked against that join, and every mismatch is printed as a note. The
per-request figure measured is wavefronts (shared) or sectors (global) divided by the
warp-level requests that had an active lane. Several accesses on one line with the same
space and operation (``a[i] + a[i + 1]``) form one group, because the hardware counters
cannot tell them apart either.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

NCU_METRICS = ",".join(
    (
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "smsp__inst_executed_op_shared_ld.sum",
        "smsp__inst_executed_op_shared_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    )
)

# Nsight Compute's names for what warplint calls op; RED is an atomic without a return.
_OPS = {"load": "load", "store": "store", "atomic": "atomic", "reduction": "atomic"}

# ---------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class SassRow:
    """One SASS instruction of one profiled kernel launch, with its source counters."""

    kernel: str
    offset: int  # bytes from the kernel's first instruction
    source: str  # the instruction text
    executed: int  # warp-level instructions executed
    space: str  # "shared", "global", "local", "generic" or "" (not memory)
    op: str  # "load", "store", "atomic" or ""
    size_bits: int | None
    wavefronts: int
    wavefronts_ideal: int
    sectors: int
    sectors_ideal: int

    @property
    def opcode(self) -> str:
        """The mnemonic without predicate and modifiers: `@!P0 LDS.64 R2, [R3]` -> `LDS`."""
        words = [w for w in self.source.split() if not w.startswith("@")]
        return words[0].split(".")[0] if words else ""


def _int(value: str | None) -> int:
    # Nsight Compute writes "-" or "" where a counter does not apply, and may group digits.
    if value is None:
        return 0
    value = value.strip().replace(",", "")
    return int(float(value)) if value and value != "-" and value != "n/a" else 0


def parse_source_csv(text: str) -> list[SassRow]:
    """Rows of `ncu --page source --csv --print-source sass`, one block per kernel launch.

    Each block starts with a `"Kernel Name",...` line and an `"Address","Source",...`
    header; offsets are taken from the block's first address.
    """
    rows: list[SassRow] = []
    kernel, header, base = "", None, None
    for record in csv.reader(io.StringIO(text)):
        if not record:
            continue
        if record[0] == "Kernel Name":
            kernel, header, base = (record[1] if len(record) > 1 else ""), None, None
            continue
        if record[0] == "Address" and len(record) > 2:
            header = record
            continue
        if header is None or len(record) < 3 or not record[0].startswith("0x"):
            continue
        d = dict(zip(header, record))
        base = int(d["Address"], 16) if base is None else base
        rows.append(_row(kernel, base, d))
    return rows


@dataclass(frozen=True)
class SassLine:
    """One instruction of nvdisasm's listing and the source locations it came from."""

    offset: int
    opcode: str
    # Innermost first: with `nvdisasm -gi` an inlined call gives
    # (header.hpp:107, kernel.cu:6), the line in the inlined function, then the call site.
    locations: tuple[tuple[str, int], ...]


_SECTION = re.compile(r"^\s*\.section\s+([^,\s]+)")
_LOCATION = re.compile(r'"([^"]*)",\s*line\s+(\d+)')
_INSTRUCTION = re.compile(r"/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")


def parse_line_table(text: str) -> dict[str, list[SassLine]]:
    """`nvdisasm -g` or `-gi` output -> function (mangled) -> instructions with locations.

    A run of `//## File "f", line N [inlined at "g", line M]` comments before an
    instruction gives its locations, in order; an instruction with no comment before it
    keeps the locations of the one before.
    """
    table: dict[str, list[SassLine]] = {}
    function: str | None = None
    current: tuple[tuple[str, int], ...] = ()
    pending: list[tuple[str, int]] = []
    for raw in text.splitlines():
        m = _SECTION.match(raw)
        if m:
            # Only .text.<function> sections hold code; data sections list bytes.
            name = m.group(1)
            function = name[len(".text.") :] if name.startswith(".text.") else None
            current, pending = (), []
            if function is not None:
                table.setdefault(function, [])
            continue
        if "//##" in raw:
            pending += [(f, int(n)) for f, n in _LOCATION.findall(raw)]
            continue
        m = _INSTRUCTION.search(raw)
        if m and function is not None:
            if pending:
                current, pending = tuple(pending), []
            words = [w for w in m.group(2).split() if not w.startswith("@")]
            opcode = words[0].split(".")[0] if words else ""
            table[function].append(SassLine(int(m.group(1), 16), opcode, current))
    return table


def source_line(listing: list[SassLine], index: int, program: str) -> tuple[int, bool]:
    """The line of `program` an instruction belongs to, and whether that was inferred.

    The innermost location in the program's file wins (a `__device__` function of the same
    file keeps its own line, as warplint reports it). Code inlined from a header with no
    call site in the listing (`nvdisasm -g`) is given the last program line before it,
    which is where the header function was called; that is reported as inferred.
    """
    for f, n in listing[index].locations:
        if Path(f).name == program:
            return n, False
    for earlier in reversed(listing[:index]):
        for f, n in earlier.locations:
            if Path(f).name == program:
                return n, True
    return 0, True


def _op_from_opcode(source: str) -> str:
    """The operation of a memory instruction whose "Access Operation" ncu leaves as "-"
    (it does so for REDG, the atomic add whose result is unused)."""
    words = [w for w in source.split() if not w.startswith("@")]
    opcode = words[0].split(".")[0] if words else ""
    if opcode.startswith(("RED", "ATOM")):
        return "atomic"
    if opcode.startswith("LD"):
        return "load"
    if opcode.startswith("ST"):
        return "store"
    return ""


def _row(kernel: str, base: int, d: dict[str, str]) -> SassRow:
    """A SassRow from one CSV record (columns by name), at its offset from `base`."""
    space = d.get("Address Space", "-").strip().lower()
    size = d.get("Access Size", "-").strip()
    return SassRow(
        kernel=kernel,
        offset=int(d["Address"], 16) - base,
        source=d.get("Source", "").strip(),
        executed=_int(d.get("Instructions Executed")),
        space="" if space in ("-", "") else space,
        op=_OPS.get(d.get("Access Operation", "-").strip().lower(), "") or _op_from_opcode(d.get("Source", "")),
        size_bits=int(size) if size.isdigit() else None,
        wavefronts=_int(d.get("L1 Wavefronts Shared")),
        wavefronts_ideal=_int(d.get("L1 Wavefronts Shared Ideal")),
        sectors=_int(d.get("L2 Theoretical Sectors Global")),
        sectors_ideal=_int(d.get("L2 Theoretical Sectors Global Ideal")),
    )


def parse_cuda_sass_csv(text: str) -> list[MeasuredAccess]:
    """Memory instructions from `ncu --page source --csv --print-source cuda,sass`.

    That view lists each CUDA line ("Line No" set) followed by its SASS instructions
    ("Line No" empty); ncu made the correlation itself, so this is a second, independent
    route from counters to source lines. Its header names "Source" twice (CUDA, SASS).
    """
    out: list[MeasuredAccess] = []
    file, kernel, header, line, base = "", "", None, 0, None
    for record in csv.reader(io.StringIO(text)):
        if not record:
            continue
        if record[0] in ("File Path", "File Name"):
            file, header, base = Path(record[1]).name if len(record) > 1 else "", None, None
        elif record[0] == "Function Name":
            kernel, base = (record[1] if len(record) > 1 else ""), None
        elif record[0] == "Line No":
            header = ["Line No", "CUDA Source", *record[2:]]
        elif header is not None and len(record) > 3:
            if record[0]:
                line = int(record[0]) if record[0].isdigit() else 0
                continue
            if not record[2].startswith("0x"):
                continue
            d = dict(zip(header, record))
            base = int(d["Address"], 16) if base is None else min(base, int(d["Address"], 16))
            row = _row(kernel, base, d)
            if row.space and row.executed:
                out.append(MeasuredAccess(row, file, line))
    return out


def _kernel_blocks(rows: list[SassRow]) -> list[list[SassRow]]:
    """Split rows into one list per profiled launch (a new block starts at offset 0)."""
    blocks: list[list[SassRow]] = []
    for row in rows:
        if row.offset == 0 or not blocks:
            blocks.append([])
        blocks[-1].append(row)
    return blocks


def _match_function(block: list[SassRow], table: dict[str, list[SassLine]]) -> list[SassLine] | None:
    """The listing of the function a launch ran: by mangled name, else by identical opcodes."""
    name = block[0].kernel.split("(")[0].strip()
    if name in table:
        return table[name]
    opcodes = [r.opcode for r in block]
    for listing in table.values():
        by_offset = {s.offset: s.opcode for s in listing}
        if len(listing) >= len(block) and all(by_offset.get(r.offset) == op for r, op in zip(block, opcodes)):
            return listing
    return None


@dataclass(frozen=True)
class MeasuredAccess:
    row: SassRow
    file: str
    line: int


def attach_lines(
    rows: list[SassRow], table: dict[str, list[SassLine]], program: str
) -> tuple[list[MeasuredAccess], list[str]]:
    """Memory instructions that executed, each with its line in `program` (a file name);
    and the problems met (no listing, an offset that does not match, a line inferred)."""
    out: list[MeasuredAccess] = []
    problems: list[str] = []
    for block in _kernel_blocks(rows):
        listing = _match_function(block, table)
        if listing is None:
            problems.append(f"no nvdisasm listing matches kernel {block[0].kernel!r}")
            continue
        index = {s.offset: i for i, s in enumerate(listing)}
        for row in block:
            if not row.space or row.executed == 0:
                continue
            i = index.get(row.offset)
            if i is None or listing[i].opcode != row.opcode:
                problems.append(f"{row.kernel}: no source line for {row.source!r} at offset {row.offset:#x}")
                continue
            line, inferred = source_line(listing, i, program)
            if inferred:
                where = listing[i].locations[0] if listing[i].locations else ("?", 0)
                problems.append(
                    f"{program}:{line}: {row.source!r} comes from {Path(where[0]).name}:{where[1]}; "
                    f"given the program line before it"
                )
            out.append(MeasuredAccess(row, program, line))
    return out, problems


# ---------------------------------------------------------------------------- joining

Key = tuple[int, str, str]  # (line, space, op)


@dataclass
class Measured:
    requests: int = 0  # warp-level requests with at least one active lane (see measured_groups)
    cost: int = 0  # wavefronts or sectors
    ideal: int = 0
    executed: int = 0  # warp-level instructions executed, fully predicated-off warps included
    instructions: list[str] = field(default_factory=list)

    @property
    def mean(self) -> float | None:
        return self.cost / self.requests if self.requests else None


def _requests(row: SassRow) -> int:
    """Warp-level requests of one instruction that had at least one active lane.

    "Instructions Executed" also counts warps whose lanes were all predicated off
    (`@!P1 LDS` in a reduction loop), which make no request. For a shared access of
    4 bytes or less every request costs at least one ideal wavefront and never more, so
    the ideal wavefronts count the requests exactly; for wider accesses, and for global
    memory, the executed count is used.
    """
    if row.space == "shared" and (row.size_bits or 32) <= 32:
        return row.wavefronts_ideal
    return row.executed


def measured_groups(accesses: list[MeasuredAccess], file: str) -> dict[Key, Measured]:
    """Sum the counters of one file's memory instructions by (line, space, op)."""
    groups: dict[Key, Measured] = defaultdict(Measured)
    for a in accesses:
        if a.file != file:
            continue
        g = groups[(a.line, a.row.space, a.row.op)]
        g.requests += _requests(a.row)
        g.executed += a.row.executed
        shared = a.row.space == "shared"
        g.cost += a.row.wavefronts if shared else a.row.sectors
        g.ideal += a.row.wavefronts_ideal if shared else a.row.sectors_ideal
        name = a.row.opcode + (f".{a.row.size_bits}" if a.row.size_bits and a.row.size_bits != 32 else "")
        if name not in g.instructions:
            g.instructions.append(name)
    return dict(groups)


@dataclass
class Predicted:
    """warplint's figures for the accesses of one group, summed over launches."""

    texts: list[str] = field(default_factory=list)
    per_requests: list[int | None] = field(default_factory=list)  # one per access that makes requests
    requests: int | None = 0
    total: int | None = 0
    exact: bool = True
    simulated_mean: float | None = None  # simulate's mean_per_request, request-weighted

    @property
    def per_request(self) -> int | None:
        """The worst access of the group; None when any is unknown."""
        if not self.per_requests or None in self.per_requests:
            return None
        return max(self.per_requests)

    @property
    def mean(self) -> float | None:
        """Mean cost per request over the group, what the hardware counters give.

        With the launch known, total / requests; otherwise the plain mean of the accesses'
        per-request costs, which assumes they execute equally often (they share a line).
        """
        if self.simulated_mean is not None:
            return self.simulated_mean
        if self.requests and self.total is not None:
            return self.total / self.requests
        known = [p for p in self.per_requests if p is not None]
        return sum(known) / len(known) if known and len(known) == len(self.per_requests) else None


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def predicted_groups(report: dict, file: str) -> dict[Key, Predicted]:
    """Group the accesses of `file` in a check/simulate JSON report by (line, space, op)."""
    groups: dict[Key, Predicted] = defaultdict(Predicted)
    weighted: dict[Key, list[tuple[float, int]]] = defaultdict(list)
    for entry in report.get("files", []):
        if Path(entry.get("path", "")).name != file:
            continue
        for kernel in entry.get("kernels", []):
            for acc in kernel.get("accesses", []):
                if acc.get("space") not in ("shared", "global") or acc.get("path"):
                    continue
                key = (acc["line"], acc["space"], acc["op"])
                g = groups[key]
                if acc["text"] not in g.texts:
                    g.texts.append(acc["text"])
                # An access that makes no request (a field merged into a wider load of
                # its struct) does not count towards the group's cost per request.
                if acc.get("requests") != 0:
                    g.per_requests.append(acc.get("per_request"))
                g.requests = _add(g.requests, acc.get("requests"))
                g.total = _add(g.total, acc.get("total"))
                g.exact = g.exact and bool(acc.get("exact"))
                if acc.get("mean_per_request") is not None and acc.get("requests") != 0:
                    weighted[key].append((acc["mean_per_request"], acc.get("requests") or 1))
    for key, pairs in weighted.items():
        n = sum(w for _, w in pairs)
        groups[key].simulated_mean = sum(m * w for m, w in pairs) / n if n else None
    return dict(groups)


def agreement(static: Predicted | None, measured: Measured | None) -> str:
    """How the measured figures stand to the static ones.

    "yes": the totals over the launch are equal (nothing emitted counts as 0).
    "per request": no total to compare, or the totals differ, but the mean cost per
    request is the same (the compiler issued a different number of requests: a value
    kept in a register, loads merged or vectorised).
    "bound": the static figure is a worst case (not exact) and the hardware stayed within it.
    "no": none of these. "unknown": warplint gives no figure. "—": nothing static to compare with.
    """
    if static is None:
        return "—"
    if static.total is None and static.per_request is None and static.mean is None:
        return "unknown"  # warplint says it cannot tell (a data-dependent index)
    m = measured or Measured()
    if static.total is not None and static.total == m.cost:
        return "yes"
    if m.mean is not None and static.mean is not None and abs(m.mean - static.mean) < 0.005:
        return "per request"
    if not static.exact and m.mean is not None and static.per_request is not None and m.mean <= static.per_request:
        return "bound"
    return "no"


@dataclass
class Row:
    file: str
    line: int
    space: str
    op: str
    static: Predicted | None
    simulated: Predicted | None
    measured: Measured | None

    @property
    def agree(self) -> str:
        """The static verdict, and the simulated one where simulate ran and differs."""
        static = agreement(self.static, self.measured)
        if self.simulated is None:
            return static
        sim = agreement(self.simulated, self.measured)
        return static if sim == static else f"static {static}, sim {sim}"


def join(
    file: str, static: dict[Key, Predicted], simulated: dict[Key, Predicted] | None, measured: dict[Key, Measured]
) -> list[Row]:
    keys = sorted(set(static) | set(measured) | set(simulated or {}))
    return [Row(file, *k, static.get(k), (simulated or {}).get(k), measured.get(k)) for k in keys]


def cross_check(primary: dict[Key, Measured], other: dict[Key, Measured], file: str) -> list[str]:
    """Groups on which nvdisasm's line table and ncu's own correlation disagree."""
    problems = []
    for key in sorted(set(primary) | set(other)):
        a, b = primary.get(key), other.get(key)
        if a is None or b is None or (a.requests, a.cost) != (b.requests, b.cost):
            problems.append(
                f"{file}:{key[0]} {key[1]} {key[2]}: nvdisasm gives "
                f"{(a.requests, a.cost) if a else None}, ncu's cuda,sass view {(b.requests, b.cost) if b else None}"
            )
    return problems


# Kernel-level metric -> (space, op, counter) whose per-instruction sum must equal it.
_TOTALS = {
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("shared", "load", "wavefronts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": ("shared", "store", "wavefronts"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": ("global", "load", "sectors"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": ("global", "store", "sectors"),
}


def parse_details_csv(text: str) -> dict[str, int]:
    """`ncu --page details --csv`: each metric's value summed over the profiled launches."""
    totals: dict[str, int] = defaultdict(int)
    for d in csv.DictReader(io.StringIO(text)):
        name = d.get("Metric Name") or ""
        if name in _TOTALS:
            totals[name] += _int(d.get("Metric Value"))
    return dict(totals)


def check_kernel_totals(rows: list[SassRow], metrics: dict[str, int], file: str) -> list[str]:
    """Kernel totals that the per-instruction counters do not add up to (an instruction
    lost on the way to a source line would show here)."""
    problems = []
    for metric, (space, op, counter) in _TOTALS.items():
        if metric not in metrics:
            continue
        summed = sum(getattr(r, counter) for r in rows if r.space == space and r.op == op)
        if summed != metrics[metric]:
            problems.append(f"{file}: {metric} = {metrics[metric]}, its instructions add up to {summed}")
    return problems


# ---------------------------------------------------------------------------- rendering


def _num(x: float | int | None) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:.2f}"
    return str(int(x))


def _unit(space: str) -> str:
    return "wf" if space == "shared" else "sect"


def render_markdown(rows: list[Row]) -> str:
    """One table row per group: file, line, access, static, simulated, measured, agree.

    Static per request is the worst access of the group (`per_request`), then its mean
    where that differs; simulated and measured give the mean. Totals are over the launch.
    """
    out = [
        "| file | line | access | space op (unit) | static per req / total | simulated mean / total "
        "| measured mean / total (requests; SASS) | agree |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        texts = r.static.texts if r.static else (r.simulated.texts if r.simulated else [])
        access = ", ".join(f"`{t}`" for t in texts) or "(not in warplint's report)"
        static = "—"
        if r.static:
            worst, mean = r.static.per_request, r.static.mean
            per = _num(worst) if mean is None or worst == mean else f"{_num(worst)} (mean {_num(mean)})"
            static = f"{per} / {_num(r.static.total)}" + ("" if r.static.exact else " ≤")
        sim = f"{_num(r.simulated.mean)} / {_num(r.simulated.total)}" if r.simulated else "—"
        meas = (
            f"{_num(r.measured.mean)} / {r.measured.cost} ({r.measured.requests}; {' '.join(r.measured.instructions)})"
            if r.measured
            else "not emitted"
        )
        out.append(
            f"| {r.file} | {r.line} | {access} | {r.space} {r.op} ({_unit(r.space)}) "
            f"| {static} | {sim} | {meas} | {r.agree} |"
        )
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- measure


def _run(cmd: list[str], log, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        log.write(f"  timed out after {timeout}s\n")
        return subprocess.CompletedProcess(cmd, 124, "", "timeout")
    except OSError as exc:  # the tool is missing: log it and go on with the others
        log.write(f"  cannot run: {exc}\n")
        return subprocess.CompletedProcess(cmd, 127, "", str(exc))
    if done.returncode:
        log.write(f"  exit {done.returncode}: {done.stderr[-2000:]}\n")
    return done


def _environment(log) -> str:
    parts = []
    for cmd in (
        ["date", "-u", "+%Y-%m-%d %H:%M UTC"],
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        ["nvcc", "--version"],
        ["ncu", "--version"],
        ["uname", "-r"],
    ):
        done = _run(cmd, log, timeout=60)
        parts.append("$ " + " ".join(cmd) + "\n" + done.stdout.strip())
    return "\n\n".join(parts) + "\n"


def _build(src: Path, work: Path, log) -> Path | None:
    exe = work / src.stem
    # An absolute path in the line table lets ncu --import-source find the file.
    done = _run(["nvcc", "-lineinfo", "-arch=sm_90", "-o", str(exe), str(src.resolve())], log, timeout=300)
    return exe if done.returncode == 0 else None


def _line_table(exe: Path, work: Path, log) -> None:
    elf_dir = work / (exe.name + ".elf")
    elf_dir.mkdir(exist_ok=True)
    _run(["cuobjdump", "-xelf", "all", str(exe)], log, cwd=elf_dir)
    listings = []
    for cubin in sorted(elf_dir.glob("*.cubin")):
        listings.append(_run(["nvdisasm", "-gi", str(cubin)], log).stdout)
    (work / f"{exe.name}.lines.txt").write_text("\n".join(listings))
    (work / f"{exe.name}.sass.txt").write_text(_run(["cuobjdump", "-sass", str(exe)], log).stdout)
    shutil.rmtree(elf_dir, ignore_errors=True)


def _profile(exe: Path, work: Path, log) -> None:
    rep = work / f"{exe.name}.ncu-rep"
    _run(
        [
            "ncu",
            "--section",
            "SourceCounters",
            "--metrics",
            NCU_METRICS,
            "--import-source",
            "yes",
            "-f",
            "-o",
            str(rep.with_suffix("")),
            str(exe),
        ],
        log,
        cwd=work,
        timeout=150,
    )
    if not rep.exists():
        return
    views = {
        "src_sass.csv": ["--page", "source", "--print-source", "sass", "--print-kernel-base", "mangled"],
        "src_cuda.csv": ["--page", "source", "--print-source", "cuda"],
        # Source-correlated SASS, where this ncu knows the value; a cross-check only.
        "src_cuda_sass.csv": ["--page", "source", "--print-source", "cuda,sass"],
        "details.csv": ["--page", "details"],
    }
    for suffix, args in views.items():
        done = _run(["ncu", "-i", str(rep), "--csv", *args], log)
        if done.returncode and "--print-kernel-base" in args:  # older ncu: no such option
            done = _run(["ncu", "-i", str(rep), "--csv", *args[:4]], log)
        (work / f"{exe.name}.{suffix}").write_text(done.stdout)
    rep.unlink()


def measure(files: list[Path], out: Path, budget_s: float) -> int:
    """Build all files in parallel, then profile them one by one until the budget is spent."""
    start = time.monotonic()
    work = out / "raw"
    work.mkdir(parents=True, exist_ok=True)
    with open(out / "log.txt", "w") as log:
        (work / "env.txt").write_text(_environment(log))
        (work / "commands.txt").write_text(
            "nvcc -lineinfo -arch=sm_90 -o STEM STEM.cu\n"
            "cuobjdump -xelf all STEM && nvdisasm -gi STEM.sm_90.cubin > STEM.lines.txt\n"
            f"ncu --section SourceCounters --metrics {NCU_METRICS} --import-source yes -f -o STEM STEM\n"
            "ncu -i STEM.ncu-rep --csv --page source --print-source sass --print-kernel-base mangled > STEM.src_sass.csv\n"
            "ncu -i STEM.ncu-rep --csv --page source --print-source cuda,sass > STEM.src_cuda_sass.csv\n"
            "ncu -i STEM.ncu-rep --csv --page source --print-source cuda > STEM.src_cuda.csv\n"
            "ncu -i STEM.ncu-rep --csv --page details > STEM.details.csv\n"
        )
        with ThreadPoolExecutor(max_workers=8) as pool:
            exes = list(pool.map(lambda f: _build(f, work, log), files))
        for exe in exes:
            if exe is None:
                continue
            if time.monotonic() - start > budget_s:
                log.write(f"budget spent: {exe.name} and later files not profiled\n")
                continue
            _line_table(exe, work, log)
            _profile(exe, work, log)
            exe.unlink()
            log.write(f"done {exe.name} at {time.monotonic() - start:.0f}s\n")
            log.flush()
    return 0


# ---------------------------------------------------------------------------- compare


def _warplint_json(args: list[str], timeout: int = 600) -> dict | None:
    """Run warplint (this checkout's) and read its JSON; None when it gives none."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "analyzer", *args, "--format", "json"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode == 2 and not done.stdout.strip():
        return None
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return None


def compare_file(src: Path, raw: Path, static_report: dict, simulate: bool) -> tuple[list[Row], list[str]]:
    stem = src.stem
    sass, lines = raw / f"{stem}.src_sass.csv", raw / f"{stem}.lines.txt"
    if not sass.exists() or not lines.exists():
        return [], [f"{src.name}: not measured"]
    rows = parse_source_csv(sass.read_text())
    accesses, problems = attach_lines(rows, parse_line_table(lines.read_text()), src.name)
    details = raw / f"{stem}.details.csv"
    if details.exists():
        problems += check_kernel_totals(rows, parse_details_csv(details.read_text()), src.name)
    measured = measured_groups(accesses, src.name)
    correlated = raw / f"{stem}.src_cuda_sass.csv"
    if correlated.exists():
        problems += cross_check(
            measured, measured_groups(parse_cuda_sass_csv(correlated.read_text()), src.name), src.name
        )
    # The measured programs fill their buffers with cudaMemset(0): simulate with zeros.
    sim = _warplint_json(["simulate", "--fill", "zeros", str(src)], timeout=300) if simulate else None
    simulated = predicted_groups(sim, src.name) if sim else None
    return join(src.name, predicted_groups(static_report, src.name), simulated, measured), problems


def compare(raw: Path, files: list[Path], markdown: Path | None) -> int:
    static_report = _warplint_json(["check", "-q", *map(str, files)])
    if static_report is None:
        print("warplint check gave no JSON", file=sys.stderr)
        return 2
    simulate = _has_simulate()
    rows: list[Row] = []
    problems: list[str] = []
    for src in files:
        r, p = compare_file(src, raw, static_report, simulate)
        rows += r
        problems += p
    table = render_markdown(rows)
    print(table)
    for p in problems:
        print("note:", p, file=sys.stderr)
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r.agree] += 1
    print(f"{len(rows)} groups: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())), file=sys.stderr)
    if markdown:
        markdown.write_text(table)
    # Exit 1 when any group disagrees (static or simulated), as a linter reports findings.
    return 1 if any("no" in re.split(r"[ ,]+", r.agree) for r in rows) else 0


def _has_simulate() -> bool:
    # `warplint X --help` falls back to check's help for an unknown X (check may be left
    # out), so look for simulate's own usage line.
    done = subprocess.run([sys.executable, "-m", "analyzer", "simulate", "--help"], capture_output=True, text=True)
    return done.returncode == 0 and "usage: warplint simulate" in done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="validate_hw", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    m = sub.add_parser("measure", help="build and profile on a GPU machine")
    m.add_argument("files", nargs="+", type=Path)
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--budget-s", type=float, default=480.0, help="stop profiling new files after this")
    c = sub.add_parser("compare", help="join raw counters with warplint's figures")
    c.add_argument("raw", type=Path)
    c.add_argument("files", nargs="+", type=Path)
    c.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    if args.mode == "measure":
        return measure(args.files, args.out, args.budget_s)
    return compare(args.raw, args.files, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
