"""`check --fix`, `--diff` and `--show-fixes`, with ruff's meaning of each.

The fixes themselves are made and verified by the pipeline (`analyzer.fixes`, offered as
`Finding.text_edits`); this module only decides what to do with them:

- `--fix` writes them into the files, then checks again and reports what is left (and
  applies what the next pass offers, as ruff does, until nothing changes or
  `MAX_PASSES`); only files named by the run are edited, never anything else.
- `--diff` prints the unified diff the fixes would make and touches no file; the exit
  status is 1 when there is a diff, else 0.
- `--show-fixes` lists, after the report, the fixes applied (with `--fix`) or those that
  `--fix` would apply.

Nothing heavy is imported at the top: `analyzer.cli` imports this module at start-up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["MAX_PASSES", "add_fix_options", "fixed", "show_fixes", "wants_fixes"]

MAX_PASSES = 10  # --fix: check, apply, check again ... at most this many times
EXIT_DIFF = 1


def add_fix_options(check: argparse.ArgumentParser) -> None:
    fixes = check.add_argument_group("fixes")
    fixes.add_argument(
        "--fix",
        action="store_true",
        help="apply the fixes (padding, __align__) to the files checked, then report what is left; "
        "each fix was verified by analysing the edited text",
    )
    fixes.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of the report and change no file (exit 1 when there is a diff)",
    )
    fixes.add_argument(
        "--show-fixes",
        action="store_true",
        help="after the report, list the fixes applied (with --fix) or that --fix would apply",
    )


def wants_fixes(ns: argparse.Namespace) -> bool:
    """Whether the run must make and verify fixes: they cost a re-analysis each, so only when
    an option or the format shows them (JSON `edits`, SARIF `fixes`)."""
    return bool(ns.fix or ns.diff or ns.show_fixes or ns.format in ("json", "sarif"))


# ----------------------------------------------------------------------------- files


class _File:
    """A checked file as `--fix` edits it: its text as the analysis read it (no byte-order
    mark, `\\n` line ends) and how to write it back as it was."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            raw = handle.read().decode("utf-8", "surrogateescape")
        self.path = path
        self.bom = raw.startswith("\ufeff")
        raw = raw.removeprefix("\ufeff")
        self.newline = "\r\n" if "\r\n" in raw else "\n"
        self.text = raw.replace("\r\n", "\n")

    def write(self, text: str) -> None:
        data = ("\ufeff" if self.bom else "") + text.replace("\n", self.newline)
        with open(self.path, "wb") as handle:  # in place: the file keeps its mode and owner
            handle.write(data.encode("utf-8", "surrogateescape"))


def _fixes_by_file(reports: Sequence[Any]) -> dict[str, list[tuple[Any, tuple[Any, ...]]]]:
    """path -> (finding, its edits) for every finding with a verified fix."""
    out: dict[str, list[tuple[Any, tuple[Any, ...]]]] = {}
    for report in reports:
        for finding in report.findings:
            if finding.text_edits:
                out.setdefault(report.path, []).append((finding, finding.text_edits))
    return out


def _fixed_text(path: str, fixes: list[tuple[Any, tuple[Any, ...]]]) -> tuple[_File, str, list[Any]] | None:
    """The file, its text with the fixes that can go together applied, and the findings they
    fix; None when the file cannot be read or nothing applies."""
    from analyzer.fixes import apply_edits, non_overlapping

    try:
        file = _File(path)
    except OSError:
        return None
    edits = non_overlapping(edits for _, edits in fixes)
    new = apply_edits(file.text, edits)
    if new is None or new == file.text:
        return None
    done = [finding for finding, mine in fixes if all(edit in edits for edit in mine)]
    return file, new, done


# ----------------------------------------------------------------------------- the options


def fixed(ns: argparse.Namespace, checked: Any, rerun: Callable[[], Any]) -> Any:
    """`checked` (the reports and the architecture of a run) after `--fix` (the files fixed and
    checked again by `rerun()`, which returns the same pair or None); with `--diff` the diff is
    printed and the command ends here (SystemExit with the exit status, which `cli.main`
    returns). Without either, `checked` itself."""
    ns.applied_fixes = []
    if ns.diff:
        raise SystemExit(_print_diff(ns, checked[0]))
    if not ns.fix:
        return checked
    for _ in range(MAX_PASSES):
        applied = _apply(checked[0])
        if not applied:
            break
        ns.applied_fixes.extend(applied)
        again = rerun()
        if again is None:
            break
        checked = again
    return checked


def _apply(reports: Sequence[Any]) -> list[tuple[str, Any]]:
    """Write the fixes of `reports` into their files; (path, finding) of each fix applied."""
    applied = []
    for path, fixes in _fixes_by_file(reports).items():
        result = _fixed_text(path, fixes)
        if result is None:
            continue
        file, new, done = result
        try:
            file.write(new)
        except OSError as err:
            print(f"warplint: error: cannot fix {path}: {err.strerror or err}", file=sys.stderr)
            continue
        applied += [(path, finding) for finding in done]
    return applied


def _print_diff(ns: argparse.Namespace, reports: Sequence[Any]) -> int:
    from analyzer.fixes import unified_diff
    from analyzer.report import display_path

    count = 0
    for path, fixes in _fixes_by_file(reports).items():
        result = _fixed_text(path, fixes)
        if result is None:
            continue
        file, new, done = result
        sys.stdout.write(unified_diff(display_path(path), file.text, new))
        count += len(done)
    sys.stdout.flush()
    if not ns.quiet:
        print(f"Would fix {count} finding{'' if count == 1 else 's'}." if count else "No fixes.", file=sys.stderr)
    return EXIT_DIFF if count else 0


def show_fixes(ns: argparse.Namespace, reports: Sequence[Any]) -> None:
    """`--show-fixes`: after the report, the fixes applied (`--fix`) or those `--fix` would apply,
    one line an edit (`t.cu:5:37: WL101 -> `TILE_DIM + 1``)."""
    if not getattr(ns, "show_fixes", False):
        return
    from analyzer.report import display_path

    applied = getattr(ns, "applied_fixes", [])
    if ns.fix:
        entries = [(path, finding) for path, finding in applied]
        title = f"Fixed {len(entries)} finding{'' if len(entries) == 1 else 's'}"
    else:
        entries = [(path, finding) for path, fixes in _fixes_by_file(reports).items() for finding, _ in fixes]
        title = f"{len(entries)} finding{'' if len(entries) == 1 else 's'} fixable with --fix"
    human = ns.output is not None or ns.format in ("text", "concise")
    stream = sys.stdout if human else sys.stderr
    stream.write(f"{title}{':' if entries else '.'}\n")
    for path, finding in entries:
        for edit in finding.text_edits:
            stream.write(f"  {display_path(path)}:{edit.line}:{edit.column}: {finding.code} -> `{edit.text}`\n")
    stream.flush()
