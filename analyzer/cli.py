"""The `warplint` command line.

    warplint check PATHS... [options]    (`check` may be left out: `warplint kernels/`)
    warplint explain RULE
    warplint rules
    warplint version

Exit status: 0 nothing found, 1 findings (or errors in the input, such as a syntax
error), 2 a usage error or a tool error (a path that cannot be read, an internal error).
Nothing heavy is imported here: the pipeline (lark, networkx, numpy) is imported when a
file is checked, so `--help` and `version` start at once.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Sequence

from analyzer import __version__

__all__ = ["main", "build_parser"]

COMMANDS = ("check", "explain", "rules", "version")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

MAX_BLOCK = (1024, 1024, 64)
MAX_BLOCK_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_MACRO = re.compile(r"[A-Za-z_]\w*(\([\w\s,.]*\))?\Z")


# ----------------------------------------------------------------------------- option types


def _dims(flag: str, limits: tuple[int, int, int], total: int | None) -> Any:
    def parse(text: str) -> tuple[int, int, int]:
        parts = text.split(",")
        form = f"expected {flag} X[,Y[,Z]] with positive integers, e.g. {flag} 32,8"
        if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"\s*\d+\s*", p) for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r}: {form}")
        dims = [int(p) for p in parts] + [1] * (3 - len(parts))
        if any(d < 1 for d in dims):
            raise argparse.ArgumentTypeError(f"{text!r}: every dimension must be at least 1")
        for axis, d, limit in zip("xyz", dims, limits):
            if d > limit:
                raise argparse.ArgumentTypeError(f"{text!r}: {axis} is {d}, the limit is {limit}")
        if total is not None and dims[0] * dims[1] * dims[2] > total:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {dims[0] * dims[1] * dims[2]} threads per block, the limit is {total}")
        return dims[0], dims[1], dims[2]

    return parse


def _param(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not _NAME.match(name):
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE, e.g. --param n=1024")
    try:
        number = int(value.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: the value must be an integer, e.g. --param n=1024") from None
    return name, number


def _define(text: str) -> tuple[str, str | None]:
    name, sep, value = text.partition("=")
    if not _MACRO.match(name):
        raise argparse.ArgumentTypeError(f"{text!r}: expected -D NAME or -D NAME=VALUE")
    return name, (value if sep else None)


def _arch(text: str) -> str:
    from analyzer.arch import ARCHITECTURES

    if text not in ARCHITECTURES:
        raise argparse.ArgumentTypeError(
            f"unknown architecture {text!r}; choose one of {', '.join(sorted(ARCHITECTURES))}")
    return text


def _codes(text: str) -> list[str]:
    codes = [c.strip() for c in text.split(",") if c.strip()]
    if not codes:
        raise argparse.ArgumentTypeError(f"{text!r}: expected rule codes or names, e.g. WL101,WL201")
    return codes


class _Extend(argparse.Action):
    """Repeatable option whose values (already lists) are joined."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        current = list(getattr(namespace, self.dest, None) or [])
        current.extend(values)
        setattr(namespace, self.dest, current)


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The `warplint` parser, its subcommands in `parser.commands` (name -> parser)."""
    parser = argparse.ArgumentParser(
        prog="warplint",
        description="Static analysis of CUDA kernels: shared-memory bank conflicts, "
        "uncoalesced global accesses, misaligned structs.",
        epilog="`warplint PATHS...` is short for `warplint check PATHS...`. "
        "Exit status: 0 clean, 1 findings, 2 usage or tool error.",
    )
    parser.add_argument("--version", action="version", version=f"warplint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser(
        "check", help="analyse .cu/.cuh files (folders are searched)",
        description="Analyse CUDA files; folders are searched for .cu and .cuh files.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="a .cu/.cuh file or a folder")
    out = check.add_argument_group("output")
    out.add_argument("--format", "--output-format", dest="format", choices=("text", "json"), default="text",
                     help="text (gcc-style lines, the default) or json (schema: docs/schema-v1.json)")
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout (- for stdout)")
    out.add_argument("--quiet", "-q", action="store_true", help="no summary line on stderr")
    out.add_argument("--no-color", action="store_true",
                     help="never colour the text report (it is coloured only on a terminal; NO_COLOR is honoured)")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even when there are findings (2 is still returned for tool errors)")
    launch = check.add_argument_group("launch configuration (overrides what the file's host code says)")
    launch.add_argument("--block", type=_dims("--block", MAX_BLOCK, MAX_BLOCK_THREADS), metavar="X[,Y[,Z]]",
                        help="blockDim of every kernel, e.g. 32,8")
    launch.add_argument("--grid", type=_dims("--grid", MAX_GRID, None), metavar="X[,Y[,Z]]",
                        help="gridDim of every kernel")
    launch.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                        help="value of a kernel's integer parameter (repeatable)")
    launch.add_argument("--arch", type=_arch, default="sm_90", help="GPU architecture (default sm_90)")
    pre = check.add_argument_group("preprocessor")
    pre.add_argument("-D", dest="defines", type=_define, action="append", default=[], metavar="NAME[=VALUE]",
                     help="define a macro (repeatable)")
    pre.add_argument("-I", dest="include_paths", action="append", default=[], metavar="DIR",
                     help="search DIR for #include \"...\" files (repeatable)")
    rules = check.add_argument_group("rules")
    rules.add_argument("--select", type=_codes, action=_Extend, metavar="CODES",
                       help="report only these rules (codes or names, comma-separated)")
    rules.add_argument("--ignore", type=_codes, action=_Extend, metavar="CODES",
                       help="never report these rules (codes or names, comma-separated)")

    explain = commands.add_parser("explain", help="show a rule's documentation",
                                  description="Show a rule's documentation.")
    explain.add_argument("rule", metavar="RULE", help="a rule code (WL101) or name")
    commands.add_parser("rules", help="list the rules", description="List the rules.")
    commands.add_parser("version", help="show the version", description="Show the version.")
    parser.commands = dict(commands.choices)  # type: ignore[attr-defined]
    return parser


# ----------------------------------------------------------------------------- commands


def main(argv: Sequence[str] | None = None) -> int:
    """Run warplint; returns the exit status. Never lets a traceback through."""
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    try:
        return _main(args)
    except SystemExit as exit_:  # argparse: --help (0) and usage errors (2)
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:  # `warplint check . | head`
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_ERROR
    except Exception as err:  # noqa: BLE001 - never a traceback
        _error(f"internal error ({type(err).__name__}: {err}); this is a bug in warplint")
        return EXIT_ERROR


def _error(message: str) -> None:
    print(f"warplint: error: {message}", file=sys.stderr)


def _main(argv: list[str]) -> int:
    parser = build_parser()
    if not argv:
        parser.print_usage(sys.stderr)
        _error("no paths given; try `warplint check PATH...` or `warplint --help`")
        return EXIT_ERROR
    if argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv = ["check", *argv]
    if argv[0] == "check":  # paths and options in any order: `check a.cu --block 32 b.cu`
        ns = parser.commands["check"].parse_intermixed_args(argv[1:])  # type: ignore[attr-defined]
        ns.command = "check"
    else:
        ns = parser.parse_args(argv)
    if ns.command == "check":
        return _check(ns)
    if ns.command == "explain":
        return _explain(ns.rule)
    if ns.command == "rules":
        return _rules()
    if ns.command == "version":
        print(f"warplint {__version__}")
        return EXIT_CLEAN
    parser.print_usage(sys.stderr)
    return EXIT_ERROR


def _check(ns: argparse.Namespace) -> int:
    from analyzer.api import Options, check_paths
    from analyzer.diagnostics import Severity
    from analyzer.report import render
    from analyzer.report.text import summary

    options = Options(
        arch=ns.arch,
        block=ns.block,
        grid=ns.grid,
        params=dict(ns.param),
        defines=dict(ns.defines),
        include_paths=list(ns.include_paths),
        select=ns.select,
        ignore=ns.ignore,
        format=ns.format,
    )
    if ns.output == "-":
        ns.output = None
    if ns.select or ns.ignore:  # an unknown rule is a usage error, before any file is read
        registry = _registry()
        if registry is None:
            return EXIT_ERROR
        for flag, selectors in (("--select", ns.select), ("--ignore", ns.ignore)):
            for selector in selectors or ():
                try:
                    registry.get_rules(selector)
                except KeyError:
                    _error(f"argument {flag}: unknown rule {selector!r}; `warplint rules` lists them")
                    return EXIT_ERROR
    reports = check_paths(ns.paths, options)

    color = (
        ns.format == "text" and not ns.no_color and ns.output is None
        and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    )
    text = render(reports, ns.format, arch=ns.arch, color=color)
    if ns.output is not None:
        try:
            with open(ns.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as err:
            _error(f"cannot write {ns.output}: {err.strerror or err}")
            return EXIT_ERROR
    elif text:
        sys.stdout.write(text)
        sys.stdout.flush()
    if not ns.quiet:
        print(summary(reports), file=sys.stderr)

    if any(report.has_tool_error for report in reports):
        return EXIT_ERROR
    if ns.exit_zero:
        return EXIT_CLEAN
    input_errors = any(d.severity == Severity.ERROR for r in reports for d in r.diagnostics)
    if input_errors or any(r.findings for r in reports):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _registry() -> Any:
    try:
        from analyzer.rules import registry
    except ImportError as err:
        _error(f"the rule registry is not available ({err})")
        return None
    return registry


def _explain(rule: str) -> int:
    registry = _registry()
    if registry is None:
        return EXIT_ERROR
    try:
        doc = registry.rule_documentation(rule)
    except (KeyError, LookupError, ValueError):
        doc = None
    if not doc:
        _error(f"unknown rule {rule!r}; `warplint rules` lists them")
        return EXIT_ERROR
    print(str(doc).rstrip("\n"))
    return EXIT_CLEAN


def _rules() -> int:
    registry = _registry()
    if registry is None:
        return EXIT_ERROR
    rows = [("CODE", "NAME", "SUMMARY")]
    rows += [(str(code), str(name), " ".join(str(summary).split()))
             for code, name, summary in registry.rules_table(include_diagnostics=True)]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for code, name, summary in rows:
        print(f"{code.ljust(widths[0])}  {name.ljust(widths[1])}  {summary}".rstrip())
    return EXIT_CLEAN
