"""The layers of `analyzer/`, and a test that every import keeps to them.

The pipeline is `preprocess -> parse -> lower -> analyze -> check -> render`; only
`analyzer.api` and `analyzer.cli` chain stages. A module may import from its own layer and
from the layers before it, never from a later one, and never a private name (`_x`) of another
module: what another module needs is public there. `LAYERS` below is the order, first to
last, as it stands in the code:

- foundation: the package itself (`__version__`), `records` (the record classes),
  `gc_pause`, `roomy_stack`, `grammar_files` and `lazy_pattern`. They import nothing of
  warplint's.
- data: what every stage reads or makes and none computes: `diagnostics` (Span,
  Location, Diagnostic), `arch` (the hardware as a table), `findings` (what rules report),
  `launch_limits` (CUDA's launch limits, checked by the command line and the configuration),
  `budget` (the steps each stage may take on one file, which every stage counts).
- source (preprocess), syntax (parse), ir (lower), analysis (analyze): the stages in the
  order they run; each takes the product of the one before.
- rules (check), with `suppressions`, which reads the rule registry to know what a
  `warplint: ignore[...]` comment names.
- ptx: the PTX front end. It takes lowering's IR (host launches), the analysis' values and
  cost model, and gives the rules the same `KernelAnalysis` as the CUDA-C path; it runs no
  rule itself: `api` does.
- sim: the reference simulator. It runs the IR and charges with `analysis.cost`, and makes
  `AccessCost`s like `analysis` so that `check --verify` can compare them.
- places: one finding per source place and rule (`merge_reports`), the stage after check
  and before render; it reads the findings and the kernels' IR, and analyses nothing.
- fixes: the rules' edits spelt in the original files' words, verified by a re-analysis that
  its caller (`api`) passes in, and applied by `check --fix`/`--diff`.
- report: the reporters (and the tables of `show` and `simulate`); they read every product
  above and compute none.
- api: chains the stages for one file (`check_file`, `simulate_file`); `program` runs the
  files of one run as one program (a survey of every file first, then each file with what the
  others launch and include), calling `api`; `workers` feeds a run's worker processes.
- config, server, cli: the configuration files (which build `api.Options`; `toml_positions` finds
  a key's line and column for their errors) and `build`, the
  compiler flags and compilation databases they take too, the language server (which calls
  `api`), and the command line (which calls all of them).

The walk reads every `import` of every module under `analyzer/` with `ast`, including the
imports inside functions (most stages are imported where they are used, for start-up).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "analyzer"

#: (layer, the modules and packages in it), first to last.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "analyzer",
            "analyzer.records",
            "analyzer.gc_pause",
            "analyzer.roomy_stack",
            "analyzer.grammar_files",
            "analyzer.pickling",
            "analyzer.lazy_pattern",
        ),
    ),
    (
        "data",
        ("analyzer.diagnostics", "analyzer.arch", "analyzer.findings", "analyzer.launch_limits", "analyzer.budget"),
    ),
    ("source", ("analyzer.source",)),
    ("syntax", ("analyzer.syntax",)),
    ("ir", ("analyzer.ir",)),
    ("analysis", ("analyzer.analysis",)),
    ("rules", ("analyzer.rules", "analyzer.suppressions")),
    ("ptx", ("analyzer.ptx",)),
    ("sim", ("analyzer.sim",)),
    ("places", ("analyzer.places",)),
    ("fixes", ("analyzer.fixes",)),
    ("report", ("analyzer.report",)),
    (
        "api",
        (
            "analyzer.walk",
            "analyzer.inputs",
            "analyzer.workers",
            "analyzer.cache",
            "analyzer.api",
            "analyzer.api_front",
            "analyzer.api_ptx",
            "analyzer.api_padding",
            "analyzer.api_sim",
            "analyzer.program",
        ),
    ),
    ("config", ("analyzer.toml_positions", "analyzer.config", "analyzer.build")),
    ("server", ("analyzer.server", "analyzer.server_memo")),
    (
        "cli",
        (
            "analyzer.cli_types",
            "analyzer.cli_habits",
            "analyzer.cli_fixes",
            "analyzer.cli",
            "analyzer.cli_commands",
            "analyzer.__main__",
        ),
    ),
)


class Import(NamedTuple):
    importer: str  # the importing module, dotted
    line: int
    module: str  # the module imported from, dotted (a submodule when a name is one)
    name: str | None  # the name taken from it (None for `import a.b`)


# ----------------------------------------------------------------------------- the walk


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def is_module(dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def absolute(importer: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from ... import` names, with relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def imports_of(importer: str, path: Path) -> Iterator[Import]:
    """Every import of warplint's own modules in one file, at any depth (functions too)."""
    tree = syntax_tree(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "analyzer" or alias.name.startswith("analyzer."):
                    yield Import(importer, node.lineno, alias.name, None)
        elif isinstance(node, ast.ImportFrom):
            source = absolute(importer, path, node)
            if source != "analyzer" and not source.startswith("analyzer."):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if is_module(submodule):
                    yield Import(importer, node.lineno, submodule, None)
                else:
                    yield Import(importer, node.lineno, source, alias.name)


def private_attributes_of(importer: str, path: Path) -> Iterator[Import]:
    """`S._x` where `S` names a warplint module bound by an import (`from ... import
    symbolic as S`): a private name taken without an import line."""
    tree = syntax_tree(path)
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute(importer, path, node)
            for alias in node.names:
                if is_module(f"{source}.{alias.name}") and source.startswith("analyzer"):
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.startswith("analyzer"):
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and is_private(node.attr)
        ):
            yield Import(importer, node.lineno, bound[node.value.id], node.attr)


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def layer_of(module: str) -> int | None:
    """The index in `LAYERS` of a module, by its most specific entry."""
    best: tuple[int, int] | None = None  # (length of the entry, layer)
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            inside = module == member or (member != "analyzer" and module.startswith(member + "."))
            if inside and (best is None or len(member) > best[0]):
                best = (len(member), index)
    return None if best is None else best[1]


@functools.cache
def every_import() -> tuple[Import, ...]:
    return tuple(found for name, path in modules().items() for found in imports_of(name, path))


@functools.cache
def private_uses() -> frozenset[tuple[str, str, str]]:
    """(importer, module, name) of every private name one module takes from another."""
    found = {(i.importer, i.module, i.name) for i in every_import() if i.name and is_private(i.name)}
    found |= {
        (i.importer, i.module, i.name or "")
        for name, path in modules().items()
        for i in private_attributes_of(name, path)
    }
    found |= {
        (i.importer, i.module, "") for i in every_import() if any(is_private(part) for part in i.module.split("."))
    }
    return frozenset((importer, module, name) for importer, module, name in found if importer != module)


# ----------------------------------------------------------------------------- the tests


def test_every_module_has_a_layer():
    unplaced = sorted(name for name in modules() if layer_of(name) is None)
    assert not unplaced, f"place these modules in LAYERS (tests/test_layers.py): {unplaced}"


def test_every_layer_entry_names_a_module_that_exists():
    missing = [member for _, members in LAYERS for member in members if not is_module(member)]
    assert not missing, f"LAYERS names modules that do not exist: {missing}"


def test_no_module_imports_from_a_later_layer():
    later = set()
    for found in every_import():
        mine, theirs = layer_of(found.importer), layer_of(found.module)
        if mine is not None and theirs is not None and theirs > mine:
            later.add(
                f"{found.importer}:{found.line} imports {found.module} ({LAYERS[mine][0]} -> {LAYERS[theirs][0]})"
            )
    assert not later, "imports from a later layer:\n" + "\n".join(sorted(later))


def test_no_private_name_is_imported_from_another_module():
    taken = sorted(private_uses())
    assert not taken, "private names taken from another module (make them public there):\n" + "\n".join(
        f"{importer} takes {module}.{name}" if name else f"{importer} imports the private module {module}"
        for importer, module, name in taken
    )


# ----------------------------------------------------------------------------- the walk itself


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import analyzer.api\n", [("analyzer.api", None)]),
        ("from analyzer.ir import nodes as N\n", [("analyzer.ir.nodes", None)]),
        ("from analyzer.api import Options\n", [("analyzer.api", "Options")]),
        ("def f():\n    from analyzer.api import _checked\n", [("analyzer.api", "_checked")]),
        ("from . import parse\n", [("analyzer.ptx.parse", None)]),
        ("from .parse import parse_ptx\n", [("analyzer.ptx.parse", "parse_ptx")]),
        ("from .. import arch\n", [("analyzer.arch", None)]),
        ("import os\nfrom typing import Any\n", []),
    ],
)
def test_the_walk_finds_imports_at_any_depth_and_resolves_relative_ones(tmp_path, source, expected):
    path = tmp_path / "pipeline.py"
    path.write_text(source)
    assert [(i.module, i.name) for i in imports_of("analyzer.ptx.pipeline", path)] == expected


def test_a_private_attribute_of_an_imported_module_counts_as_taken(tmp_path):
    path = tmp_path / "dataflow.py"
    path.write_text("from analyzer.analysis import symbolic as S\nx = S._single_atom(1)\ny = S.public\n")
    assert [(i.module, i.name) for i in private_attributes_of("analyzer.ptx.dataflow", path)] == [
        ("analyzer.analysis.symbolic", "_single_atom")
    ]


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("analyzer", "foundation"),
        ("analyzer.records", "foundation"),
        ("analyzer.ir.nodes", "ir"),
        ("analyzer.report.json", "report"),
        ("analyzer.cli", "cli"),
        ("analyzer.suppressions", "rules"),
    ],
)
def test_a_module_belongs_to_the_layer_of_its_most_specific_entry(module, layer):
    index = layer_of(module)
    assert index is not None and LAYERS[index][0] == layer


def test_an_import_from_a_later_layer_is_seen(tmp_path):
    path = tmp_path / "run.py"
    path.write_text("def f():\n    from analyzer.report import display_path\n")
    (found,) = imports_of("analyzer.sim.run", path)
    assert layer_of(found.module) > layer_of(found.importer)
