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
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from analyzer import __version__
from analyzer import cli_types as types
from analyzer.arch import DEFAULT_ARCH
from analyzer.cli_fixes import add_fix_options, fixed, show_fixes, wants_fixes
from analyzer.cli_habits import add_color_options, add_file_options, prepare_paths, stdin_run, use_color, walk_for
from analyzer.launch_limits import (
    MAX_BLOCK,
    MAX_BLOCK_THREADS,
    MAX_GRID,
)
from analyzer.source.cuda_macros import DEFAULT_TOOLKIT

__all__ = ["build_parser", "main"]

COMMANDS = ("check", "explain", "rules", "version", "server", "show", "simulate")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    _add_check(commands)
    _add_documentation_commands(commands)
    _add_show(commands)
    _add_server(commands)
    _add_simulate(commands)
    parser.commands = dict(commands.choices)  # type: ignore[attr-defined]
    return parser


def _add_check(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="analyse .cu/.cuh files (folders are searched)",
        description="Analyse CUDA files; folders are searched for .cu and .cuh files.",
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a .cu/.cuh file or a folder (default: .; - reads standard input); after `--`, nvcc's -I -isystem -D -U -include -arch -gencode -std -x "
        "flags are flags and anything else a path",
    )
    _add_output_options(check)
    add_fix_options(check)
    pre = _analysis_options(check, arch_default=None)
    pre.add_argument(
        "-p",
        dest="build_path",
        metavar="PATH",
        help="a build folder holding compile_commands.json, or the file: each file it compiles is checked "
        "with its own -I, -D, -U, -include, -arch and -std",
    )
    pre.add_argument(
        "--cuda-version",
        type=types.cuda_version,
        metavar="MAJOR.MINOR",
        help=f"the CUDA toolkit whose macros are predefined (CUDART_VERSION ...; default {DEFAULT_TOOLKIT})",
    )
    pre.add_argument(
        "--via-ptx",
        action="store_true",
        help="compile each .cu file with `nvcc -ptx -lineinfo` and analyse the PTX "
        "(findings at the CUDA lines; .ptx files are always analysed as PTX)",
    )
    _add_rule_options(check)
    add_file_options(check)
    conf = check.add_argument_group("configuration and running")
    where = conf.add_mutually_exclusive_group()
    where.add_argument(
        "--config",
        metavar="FILE",
        help="use this warplint.toml or pyproject.toml for every file instead of the nearest one",
    )
    where.add_argument("--isolated", action="store_true", help="read no configuration file")
    cache = conf.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache")
    cache.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="the results cache's folder (default: $WARPLINT_CACHE_DIR, the configuration's `cache-dir`, "
        "else .warplint_cache in the project root)",
    )
    conf.add_argument(
        "-j",
        "--jobs",
        type=types.jobs,
        default=None,
        metavar="N",
        help="check files in N worker processes (default: one per CPU; 1: no workers)",
    )


def _add_output_options(check: argparse.ArgumentParser) -> None:
    out = check.add_argument_group("output")
    from analyzer.report import FORMATS  # a light module: the reporters themselves load on use

    out.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=FORMATS,
        default="text",
        help="text (gcc-style lines, the default), concise (path:line:col: CODE message), "
        "json (schema: docs/schema-v1.json), json-lines (one object a finding), "
        "sarif (SARIF 2.1.0, for GitHub code scanning), github (workflow-command annotations) "
        "or html (one self-contained page: the source annotated with costs and findings)",
    )
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout (- for stdout)")
    out.add_argument("--quiet", "-q", action="store_true", help="no summary line on stderr")
    add_color_options(out)
    out.add_argument(
        "--per-instance",
        action="store_true",
        help="one finding per kernel instance, launch configuration and operation, where the default "
        "merges those of one place and rule into one (for scripts that key findings by kernel)",
    )
    out.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 even when there are findings (2 is still returned for tool errors)",
    )


def _add_rule_options(check: argparse.ArgumentParser) -> None:
    rules = check.add_argument_group("rules")
    rules.add_argument(
        "--assume",
        choices=("typical", "worst"),
        default=None,
        help="the values of unknown sizes and offsets a finding may rest on: those programs use "
        "(multiples of 32 elements; the default, or the configuration's `assume`) or the worst "
        "over every value tried",
    )
    rules.add_argument(
        "--select",
        type=types.codes,
        action=types.Extend,
        metavar="CODES",
        help="report only these rules (codes or names, comma-separated)",
    )
    rules.add_argument(
        "--ignore",
        type=types.codes,
        action=types.Extend,
        metavar="CODES",
        help="never report these rules (codes or names, comma-separated)",
    )
    rules.add_argument(
        "--extend-select",
        type=types.codes,
        action=types.Extend,
        metavar="CODES",
        help="add to the rules selected (by --select or the configuration)",
    )
    rules.add_argument(
        "--extend-ignore",
        type=types.codes,
        action=types.Extend,
        metavar="CODES",
        help="add to the rules ignored (by --ignore or the configuration)",
    )
    rules.add_argument(
        "--report-unused-suppressions",
        action="store_true",
        help="report suppression comments that silence nothing (WL920)",
    )
    rules.add_argument(
        "--show-host",
        action="store_true",
        default=None,
        help="also report host code that warplint could not follow (WL901-WL903 outside kernels and the "
        "device functions they call), as warnings: they never change the exit status",
    )
    rules.add_argument(
        "--verify",
        action="store_true",
        help="also run every kernel in the reference simulator and report each access "
        "whose simulated cost disagrees with the static one (WL930)",
    )
    rules.add_argument(
        "--statistics", action="store_true", help="after the report, print how many findings each rule produced"
    )


def _add_documentation_commands(commands: Any) -> None:
    """`explain`, `rules` and `version`."""
    explain = commands.add_parser(
        "explain", help="show a rule's documentation", description="Show a rule's documentation."
    )
    explain.add_argument("rule", metavar="RULE", help="a rule code (WL101) or name")
    commands.add_parser("rules", help="list the rules", description="List the rules.")
    commands.add_parser("version", help="show the version", description="Show the version.")


def _add_show(commands: Any) -> None:
    show = commands.add_parser(
        "show",
        help="draw a warp's lanes against the banks or sectors of the access on a line",
        description="Draw, for the access(es) on FILE:LINE, the lanes of a warp against the "
        "shared-memory banks (each wavefront a row) or the sectors of global memory "
        "(which lanes fall in which sector), colliding lanes marked.",
    )
    show.add_argument("where", metavar="FILE:LINE[:COL]", help="a file, 1-based line and column: kernel.cu:23:18")
    show.add_argument("--column", type=int, metavar="C", help="only the access that covers this 1-based column")
    show.add_argument(
        "--no-color",
        action="store_true",
        help="never colour (colour is used only on a terminal, and not when NO_COLOR is set)",
    )
    _analysis_options(show, arch_default=None)


def _add_server(commands: Any) -> None:
    server = commands.add_parser(
        "server",
        help="run the language server (LSP over stdio; needs `pip install warplint[lsp]`)",
        description="A language server for editors (LSP, stdio): diagnostics, hover, fix and suppress actions.",
    )
    server.add_argument("--stdio", action="store_true", help="accepted for LSP clients that pass it (stdio only)")
    _analysis_options(server, arch_default=None)  # else each document's configuration, as `check` reads it


def _add_simulate(commands: Any) -> None:
    simulate = commands.add_parser(
        "simulate",
        help="run kernels in the reference simulator and cost every access it makes",
        description="Run each kernel of FILE concretely, warp by warp (numpy over a block's threads), "
        "and charge every warp-level request with the cost model of `check`: per access, the "
        "requests, total, worst and mean per request.",
    )
    simulate.add_argument("file", metavar="FILE", help="a .cu/.cuh file")
    simulate.add_argument("--kernel", metavar="K", help="only this kernel")
    simulate.add_argument(
        "--blocks",
        type=types.jobs,
        default=None,
        metavar="N",
        help="simulate at most N blocks, spread over the grid (default 8); totals are "
        "then scaled to the whole grid, and the report says so",
    )
    simulate.add_argument("--all-blocks", action="store_true", help="simulate every block of the grid")
    simulate.add_argument(
        "--seed",
        type=types.seed,
        default=0,
        metavar="N",
        help="seed of the random buffer contents, an integer from 0 (default 0)",
    )
    simulate.add_argument(
        "--fill",
        choices=("zeros", "iota", "random"),
        default="random",
        help="contents of global buffers: zeros, iota (element i holds i) or random "
        "(integers in [0, 256), floats in [0, 1); the default)",
    )
    simulate.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (a table per kernel) or json (check's access schema plus mean_per_request and simulated_blocks)",
    )
    _analysis_options(simulate, arch_default=None)


# ----------------------------------------------------------------------------- commands


def entry() -> NoReturn:
    """The `warplint` command and `python -m analyzer`: `main`, then the process ends without
    tearing the interpreter down.

    A run keeps what it analysed until the end (reports, the parse memo, the analyses' memo
    tables), and the interpreter's teardown frees each of those objects one by one: measured on
    Mandelbrot_cuda.cu (`check --no-cache -j 1`), 0.37 s of its 1.3 s of CPU. Once the output
    is flushed nothing is left to do (the worker pools are shut down, files written and
    closed), so the process ends at once, as mypy's fast exit does; where flushing fails (a
    closed pipe), the ordinary exit reports it, and under a profiler or a tracer (`python -m
    cProfile -o ...`, coverage) the ordinary exit lets them write what they found. A `check`
    run here has no collector (`gc_pause.in_own_process`)."""
    from analyzer.gc_pause import in_own_process

    in_own_process()
    status = main()
    if sys.getprofile() is not None or sys.gettrace() is not None:  # a profiler or coverage writes at exit
        raise SystemExit(status)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(status) from None
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run warplint; returns the exit status. Never lets a traceback through."""
    args = list(sys.argv[1:] if argv is None else argv)
    _skip_optional_lark_imports()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
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


def _skip_optional_lark_imports() -> None:
    """Keep lark from importing `interegular` and `regex` when they happen to be installed:
    warplint uses neither (lark only checks terminal collisions with the first, which the
    grammar tests do), and together they cost a fifth of the start-up."""
    for name in ("interegular", "regex"):
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


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
        ns = _parse_check(parser.commands["check"], argv[1:])  # type: ignore[attr-defined]
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
    if ns.command == "show":
        from analyzer.cli_commands import show

        return show(ns)
    if ns.command == "simulate":
        from analyzer.cli_commands import simulate

        return simulate(ns)
    if ns.command == "server":
        from analyzer.cli_commands import server

        return server(ns)
    parser.print_usage(sys.stderr)
    return EXIT_ERROR


def _parse_check(check: argparse.ArgumentParser, args: list[str]) -> argparse.Namespace:
    """`check`'s arguments, options and paths intermixed. After `--`, nvcc's flags that warplint
    reads (`analyzer.build.parse_flags`: -I, -isystem, -D, -U, -include, -arch, -gencode, -std,
    -x) are flags, in `ns.build_flags`, and every other argument is a path, even `-x.cu`
    (argparse's intermixed parsing loses what follows `--`, so those paths stand in for
    themselves as placeholders no option can take, put back after parsing)."""
    from analyzer.build import CompileFlags, parse_flags

    if "--" not in args:
        ns = check.parse_intermixed_args(args)
        ns.build_flags = CompileFlags()
        return ns
    cut = args.index("--")
    flags, after = parse_flags(args[cut + 1 :], os.getcwd(), strict=True)
    stand_ins = {f"\0{i}": path for i, path in enumerate(after)}  # no argument holds a NUL
    ns = check.parse_intermixed_args(args[:cut] + list(stand_ins))
    ns.paths = [stand_ins.get(path, path) for path in ns.paths]
    ns.build_flags = flags
    return ns


def _check(ns: argparse.Namespace) -> int:
    """`warplint check`: options, the files checked, the report written, the exit status."""
    from analyzer.api import Options
    from analyzer.cache import DEFAULT_CACHE_DIR
    from analyzer.gc_pause import collect_less_often

    collect_less_often()  # a batch run: its heap only grows

    if ns.output == "-":
        ns.output = None
    problem = prepare_paths(ns)  # `.` when none is given; `-`: standard input
    if problem is not None:
        _error(problem)
        return EXIT_ERROR
    if not _known_rules(ns):  # an unknown rule is a usage error, before any file is read
        return EXIT_ERROR
    if ns.config is not None and not os.path.isfile(ns.config):
        _error(f"argument --config: {ns.config}: no such file")
        return EXIT_ERROR
    if _output_is_an_input(ns):
        return EXIT_ERROR
    options = Options(  # what is not configurable per file; the rest comes from the configuration
        via_ptx=getattr(ns, "via_ptx", False),
        format=ns.format,
        report_unused_suppressions=ns.report_unused_suppressions,
        verify=bool(getattr(ns, "verify", False)),
        walk=walk_for(ns),
        fixes=wants_fixes(ns),
        cache_dir=None if ns.no_cache else DEFAULT_CACHE_DIR,
    )
    checked = _checked_files(ns, options)
    if checked is None:
        return EXIT_ERROR
    reports, arch = fixed(ns, checked, lambda: _checked_files(ns, options))  # --fix, --diff: analyzer.cli_fixes
    if not _write_report(ns, reports, arch):
        return EXIT_ERROR
    _print_after_report(ns, reports)
    return _exit_status(reports, ns.exit_zero)


def _named_cache_dir(ns: argparse.Namespace) -> str | None:
    """The cache's folder where the command line (`--cache-dir`) or the environment
    (`WARPLINT_CACHE_DIR`) names it, absolute; None: the configuration's or the default."""
    from analyzer.cache import CACHE_DIR_ENV

    named = ns.cache_dir or os.environ.get(CACHE_DIR_ENV)
    return os.path.abspath(named) if named else None


def _known_rules(ns: argparse.Namespace) -> bool:
    """Whether every rule `--select`, `--ignore` and their `--extend-` forms name exists
    (else the error is printed)."""
    selectors = (
        ("--select", ns.select),
        ("--ignore", ns.ignore),
        ("--extend-select", ns.extend_select),
        ("--extend-ignore", ns.extend_ignore),
    )
    if not any(given for _, given in selectors):
        return True
    registry = _registry()
    if registry is None:
        return False
    for flag, given in selectors:
        for selector in given or ():
            try:
                registry.get_rules(selector)
            except KeyError:
                _error(f"argument {flag}: unknown rule {selector!r}; `warplint rules` lists them")
                return False
    return True


def _checked_files(ns: argparse.Namespace, options: Any) -> tuple[list[Any], str] | None:
    """The reports of every file, each checked with its configuration merged with the command
    line, and the architecture the report names; None after printing a broken configuration."""
    from analyzer.build import BuildError, CompilationDatabase
    from analyzer.config import ConfigError, Resolver, Settings
    from analyzer.places import merge_reports
    from analyzer.program import check_program

    tail = ns.build_flags  # the nvcc flags after `--`
    try:
        for arch in tail.archs:
            types.arch_name(arch)
    except argparse.ArgumentTypeError as err:
        _error(f"argument -arch: {err}")
        return None
    cli = Settings(  # what the command line says; None or empty: leave it to the configuration
        select=ns.select,
        ignore=ns.ignore,
        extend_select=tuple(ns.extend_select or ()),
        extend_ignore=tuple(ns.extend_ignore or ()),
        arch=ns.arch or next(iter(tail.archs), None),
        assume=ns.assume,
        block=ns.block,
        grid=ns.grid,
        params=dict(ns.param),
        defines={**dict(ns.defines), **dict(tail.defines)},
        include_paths=(*(os.path.abspath(p) for p in ns.include_paths), *tail.include_paths),
        undefines=tail.undefines,
        forced_includes=tail.forced_includes,
        std=tail.std,
        cuda_version=ns.cuda_version,
        show_host=ns.show_host,
        cache_dir=_named_cache_dir(ns),
    )
    try:
        build = CompilationDatabase.load(ns.build_path) if ns.build_path is not None else None
    except BuildError as err:
        _error(f"argument -p: {err}")
        return None
    resolver = Resolver(cli, options, config=ns.config, isolated=ns.isolated, build=build)
    resolved: list[Any] = []

    def options_for(path: str) -> Any:
        resolved.append(resolver(path))
        return resolved[-1]

    jobs = ns.jobs if ns.jobs is not None else (os.cpu_count() or 1)
    bar = _Progress(sys.stderr, verify=options.verify)
    try:
        run = check_program if ns.stdin_text is None else stdin_run(ns.stdin_text)
        reports = run(ns.paths, options, jobs=jobs, options_for=options_for, progress=bar.update)
        if not ns.per_instance:
            reports = merge_reports(reports)  # one finding per place and rule (analyzer/places.py)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return None
    finally:
        bar.close()
    return reports, ns.arch or (resolved[0].arch if resolved else options.arch)


def _write_report(ns: argparse.Namespace, reports: list[Any], arch: str) -> bool:
    """The report in `--format`, to `--output` or stdout; False after printing why it could not be written."""
    from analyzer.report import render

    color = use_color(ns, sys.stdout)
    from analyzer.report.output import encoded, write_file, write_stdout

    text = render(reports, ns.format, arch=arch, color=color)
    data = encoded(text, ns.format)
    if ns.output is not None:
        try:
            write_file(ns.output, data)
        except OSError as err:
            _error(f"cannot write {ns.output}: {err.strerror or err}")
            return False
    elif data:
        write_stdout(data)
    return True


def _output_is_an_input(ns: argparse.Namespace) -> bool:
    """Whether `--output` names one of the files checked (else the report would overwrite it);
    the error is printed."""
    from analyzer.api import collect_files

    if ns.output is None:
        return False
    target = os.path.realpath(ns.output)
    if os.path.isdir(target):
        _error(f"argument --output: {ns.output} is a folder")
        return True
    inputs = {os.path.realpath(path) for path, problem in collect_files(ns.paths) if problem is None}
    if target in inputs:
        _error(f"argument --output: {ns.output} is one of the files checked; the report would overwrite it")
        return True
    return False


def _print_after_report(ns: argparse.Namespace, reports: list[Any]) -> None:
    """`--statistics` (on stdout after a report for people, on stderr after one for programs),
    then the summary line on stderr unless `--quiet`."""
    from analyzer.report.text import summary

    if ns.statistics:
        human = ns.output is not None or ns.format in ("text", "concise", "full", "grouped")
        stream = sys.stdout if human else sys.stderr
        stream.write(statistics(reports))
        stream.flush()
    show_fixes(ns, reports)
    if not ns.quiet:
        print(summary(reports), file=sys.stderr)


def _exit_status(reports: list[Any], exit_zero: bool) -> int:
    """2 for a tool error; else 0 with `--exit-zero`; else 1 for findings, input errors or
    (asked for, so counted as findings) unused suppressions; else 0."""
    from analyzer.diagnostics import Severity

    if any(report.has_tool_error for report in reports):
        return EXIT_ERROR
    if exit_zero:
        return EXIT_CLEAN
    input_errors = any(d.severity == Severity.ERROR for r in reports for d in r.diagnostics)
    unused = any(d.code == "WL920" for r in reports for d in r.diagnostics)
    if input_errors or unused or any(r.findings for r in reports):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def statistics(reports: Sequence[Any]) -> str:
    """`--statistics`: one line per code, most frequent first, like ruff's
    `   3  WL101  bank-conflict`. Findings and diagnostics are counted alike."""
    from collections import Counter

    counts = Counter(str(f.code) for r in reports for f in r.findings)
    counts.update(str(d.code) for r in reports for d in r.diagnostics)
    if not counts:
        return ""
    registry = _registry()
    names = {code: name for code, name, _ in registry.rules_table(include_diagnostics=True)} if registry else {}
    width = max(4, *(len(str(n)) for n in counts.values()))
    code_width = max(len(code) for code in counts)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(f"{n:>{width}}  {code:<{code_width}}  {names.get(code, '')}".rstrip() + "\n" for code, n in rows)


class _Progress:
    """`checked 12/40 files` on stderr, rewritten in place: only on a terminal and only
    once the run has taken more than `delay` seconds, so pipes and CI logs never see it.
    With `verify` (the simulator makes a file take seconds) it also says what it is doing:
    a file still running after `slow` seconds is announced, and each file that took longer
    leaves a line of its own."""

    def __init__(self, stream: Any, delay: float = 0.5, clock: Any = None, verify: bool = False) -> None:
        import threading
        import time

        self.stream, self.delay = stream, delay
        self.clock = clock or time.monotonic
        self.start = self.last = self.clock()
        self.shown = False
        self.verify, self.slow = verify, 1.0
        self.done, self.total = 0, 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        try:
            self.enabled = bool(stream.isatty())
        except (AttributeError, ValueError):
            self.enabled = False
        if self.enabled and verify:
            threading.Thread(target=self._watch, daemon=True).start()

    def update(self, done: int, total: int) -> None:
        with self.lock:
            now = self.clock()
            took, self.last, self.done, self.total = now - self.last, now, done, total
            if not self.enabled or (not self.shown and now - self.start < self.delay):
                return
            if self.verify and took > self.slow:
                self.stream.write(f"\r\x1b[Kverified file {done}/{total} with the simulator in {took:.1f} s\n")
            self.shown = True
            self.stream.write(f"\rchecked {done}/{total} files")
            self.stream.flush()

    def _watch(self) -> None:
        """Every second, while a file has been running for more than `slow` seconds, say so."""
        while not self.stopped.wait(1.0):
            with self.lock:
                running = self.clock() - self.last
                if running > self.slow:
                    self.shown = True
                    position = f"{self.done + 1}/{self.total}" if self.total else f"{self.done + 1}"
                    self.stream.write(f"\r\x1b[Kverifying file {position} with the simulator: {running:.0f} s")
                    self.stream.flush()

    def close(self) -> None:
        self.stopped.set()
        with self.lock:
            if self.shown:  # erase the line, so that the summary starts clean
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self.shown = False


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
    rows += [
        (str(code), str(name), " ".join(str(summary).split()))
        for code, name, summary in registry.rules_table(include_diagnostics=True)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    for code, name, summary in rows:
        print(f"{code.ljust(widths[0])}  {name.ljust(widths[1])}  {summary}".rstrip())
    return EXIT_CLEAN


# ----------------------------------------------------------------------------- show and server


def _analysis_options(parser: argparse.ArgumentParser, arch_default: str | None = DEFAULT_ARCH) -> Any:
    """The launch and preprocessor options of `check`, `show` and `server`; returns the
    preprocessor group (`check` adds `--via-ptx` to it)."""
    launch = parser.add_argument_group("launch configuration (overrides what the file's host code says)")
    launch.add_argument(
        "--block",
        type=types.dims("--block", MAX_BLOCK, MAX_BLOCK_THREADS),
        metavar="X[,Y[,Z]]",
        help="blockDim of every kernel, e.g. 32,8",
    )
    launch.add_argument(
        "--grid", type=types.dims("--grid", MAX_GRID, None), metavar="X[,Y[,Z]]", help="gridDim of every kernel"
    )
    launch.add_argument(
        "--param",
        type=types.param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value of a kernel's integer parameter (repeatable)",
    )
    # None: the configuration file's architecture, else the default
    arch_help = (
        f"GPU architecture (default {arch_default})"
        if arch_default
        else f"GPU architecture (default: the configuration's, else {DEFAULT_ARCH})"
    )
    launch.add_argument("--arch", type=types.arch_name, default=arch_default, help=arch_help)
    pre = parser.add_argument_group("preprocessor")
    pre.add_argument(
        "-D",
        dest="defines",
        type=types.define,
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="define a macro (repeatable)",
    )
    pre.add_argument(
        "-I",
        dest="include_paths",
        action="append",
        default=[],
        metavar="DIR",
        help='search DIR for #include "..." files (repeatable)',
    )
    return pre
