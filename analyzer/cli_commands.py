"""The commands of the command line other than `check` and the documentation: `show`,
`server` and `simulate`, with the analysis options they share (`analysis_of`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from analyzer.arch import DEFAULT_ARCH
from analyzer.cli import EXIT_CLEAN, EXIT_ERROR

__all__ = ["analysis_of", "configured", "error", "server", "show", "simulate"]


def error(message: str) -> None:
    print(f"warplint: error: {message}", file=sys.stderr)


def analysis_of(ns: argparse.Namespace, path: str | None = None) -> Any:
    """The analysis options of `show`, `server` and `simulate`: the command line's, and for a
    file (`show`, `simulate`) merged with its configuration file as `check` merges them.
    May raise `analyzer.config.ConfigError`."""
    from analyzer.api import Options

    if path is None:
        return Options(
            arch=ns.arch or DEFAULT_ARCH,
            block=ns.block,
            grid=ns.grid,
            params=dict(ns.param),
            defines=dict(ns.defines),
            include_paths=list(ns.include_paths),
        )
    from analyzer.config import Resolver, Settings

    cli = Settings(
        arch=ns.arch,
        block=ns.block,
        grid=ns.grid,
        params=dict(ns.param),
        defines=dict(ns.defines),
        include_paths=tuple(os.path.abspath(p) for p in ns.include_paths),
    )
    return Resolver(cli, Options())(path)


def configured(ns: argparse.Namespace, path: str) -> Any:
    """`analysis_of(ns, path)`, or None after printing a broken configuration's error."""
    from analyzer.config import ConfigError

    try:
        return analysis_of(ns, path)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return None


def show(ns: argparse.Namespace) -> int:
    from analyzer.api import check_file
    from analyzer.cli_habits import source_position
    from analyzer.report.show import accesses_at, render_show

    position = source_position(ns.where)
    if position is None:
        error(
            f"argument FILE:LINE[:COL]: {ns.where!r}: expected a file and a 1-based line (and column), "
            "e.g. kernel.cu:23 or kernel.cu:23:18"
        )
        return EXIT_ERROR
    path, line, column = position
    ns.column = ns.column if ns.column is not None else column
    if ns.column is not None and ns.column < 1:
        error(f"argument --column: {ns.column}: columns start at 1")
        return EXIT_ERROR
    options = configured(ns, path)
    if options is None:
        return EXIT_ERROR
    report = check_file(path, options)
    if report.linemap is None:  # the file could not be read
        for d in report.diagnostics:
            error(f"{path}: {d.message}")
        return EXIT_ERROR
    costs = accesses_at(report, line, ns.column)
    if not costs:
        where = f"{path}:{line}" + (f":{ns.column}" if ns.column else "")
        error(
            f"no shared or global memory access analysed at {where}; "
            "`warplint show` draws the access on a line of a kernel (`warplint check` lists them)"
        )
        return EXIT_ERROR
    from analyzer.report.output import encoded, write_stdout

    color = not ns.no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    write_stdout(encoded(render_show(report, costs, color=color), "text"))
    return EXIT_CLEAN


def server(ns: argparse.Namespace) -> int:
    try:
        import pygls  # noqa: F401 - only to say what is missing
    except ImportError:
        error("`warplint server` needs pygls: pip install 'warplint[lsp]'")
        return EXIT_ERROR
    from analyzer.server import serve

    return serve(lambda path: analysis_of(ns, path))  # each document with its configuration, as `check`


def simulate(ns: argparse.Namespace) -> int:
    """`warplint simulate FILE`: 0 when it ran, 2 for a file or kernel that cannot be run."""
    from analyzer.api import simulate_file
    from analyzer.sim.run import DEFAULT_BLOCKS, SimOptions

    blocks = 0 if ns.all_blocks else (ns.blocks or DEFAULT_BLOCKS)
    options = configured(ns, ns.file)
    if options is None:
        return EXIT_ERROR
    report = simulate_file(
        ns.file, options, SimOptions(max_blocks=blocks, seed=ns.seed, fill=ns.fill), kernel=ns.kernel
    )
    if ns.format == "json":
        from analyzer.report.json import render as render_json

        text = render_json([report], arch=options.arch)
    else:
        from analyzer.report.simulation import render as render_text

        text = render_text([report])
    from analyzer.report.output import encoded, write_stdout

    write_stdout(encoded(text, ns.format))
    if not report.kernels and not report.has_tool_error:
        print(f"warplint: no kernel to simulate in {ns.file}", file=sys.stderr)
    return EXIT_ERROR if report.has_tool_error else EXIT_CLEAN
