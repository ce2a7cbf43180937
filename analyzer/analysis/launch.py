"""Launch configurations: from host launches in the program, the configuration's per-kernel
tables, the command line, `__launch_bounds__`, GPUVerify's header.

Host code is run by the host interpreter (`analysis.host`); what it cannot evaluate stays
unknown, and a kernel with no known block is analysed with a stated default, never silently.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Any

from analyzer import budget
from analyzer.analysis.guards import Fact, launch_facts, required_facts
from analyzer.analysis.host import HostInterpreter, Value, function_pointers, host_calls, launching_functions
from analyzer.analysis.results import LaunchConfig
from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.call_graph import device_functions
from analyzer.launch_limits import MAX_BLOCK, MAX_BLOCK_THREADS, MAX_GRID, dims_problem
from analyzer.records import record, replace

DEFAULT_BLOCKS = {1: (256, 1, 1), 2: (32, 8, 1), 3: (32, 4, 4)}


def _dims(v: Value) -> tuple[int, int, int] | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        n = int(v)
        return (n, 1, 1) if n > 0 else None
    if isinstance(v, dict):
        xyz = tuple(v.get(k, 1) for k in ("x", "y", "z"))
        if all(isinstance(x, (int, float)) and x > 0 for x in xyz):
            return tuple(int(x) for x in xyz)  # type: ignore[return-value]
    return None


def _dims_problem(v: Value, block: bool) -> str | None:
    """Why the known dimensions of a launch's grid or block are ones CUDA refuses (0, a
    fraction, over a limit), or None; what is not known is not held against it."""
    if isinstance(v, bool) or v is None:
        return None
    xyz = (
        (v, 1, 1)
        if isinstance(v, (int, float))
        else tuple(v.get(k, 1) for k in ("x", "y", "z"))
        if isinstance(v, dict)
        else ()
    )
    known = [x if isinstance(x, (int, float)) and not isinstance(x, bool) else 1 for x in xyz]
    if len(known) != 3:
        return None
    limits, total = (MAX_BLOCK, MAX_BLOCK_THREADS) if block else (MAX_GRID, None)
    if any(not isinstance(x, (int, float)) or isinstance(x, bool) for x in xyz):
        total = None  # an unknown dimension: the product is not known either
    return dims_problem(known, limits, total)


def _launch_problem(stmt: N.LaunchStmt, kernel: str, grid: Value, block: Value, check_grid: bool) -> Diagnostic | None:
    """WL907 at a host launch whose grid or block CUDA refuses (the launch is not analysed)."""
    for i, (what, value) in enumerate((("grid", grid), ("block", block))):
        if (i == 0 and not check_grid) or i >= len(stmt.config):
            continue
        problem = _dims_problem(value, block=i == 1)
        if problem is not None:
            text = stmt.config_text[i] if i < len(stmt.config_text) else what
            return Diagnostic(
                Severity.ERROR,
                f"launch of `{kernel}` with {what} `{text}`: {problem}; CUDA refuses "
                "this launch, so it is not analysed",
                "WL907",
                stmt.config[i].span,
            )
    return None


def base_name(name: str) -> str:
    """A kernel's name without namespace and template arguments: `ns::k<float>` -> `k`."""
    return name.split("<", 1)[0].rsplit("::", 1)[-1]


def uses_dimensions(kernel: N.Function, module: N.Module) -> int:
    """How many thread dimensions the kernel (and what it calls) reads: 1, 2 or 3."""
    dims = 1
    for fn in device_functions(kernel, module):
        for spec in _builtins_in(fn.body):
            if spec.kind in (BuiltinKind.THREAD_INDEX, BuiltinKind.BLOCK_SIZE) and spec.axis:
                dims = max(dims, spec.axis + 1)
    return dims


def _builtins_in(stmts: list[N.Stmt]) -> set[builtins.BuiltinSpec]:
    return {builtins.BUILTINS[x.name] for x in N.walk_nodes(stmts) if isinstance(x, N.Builtin)}


@record
class KernelTable:
    """A per-kernel table of the configuration (`[tool.warplint.kernels."reduce4<*>"]`): the
    block, grid, parameters and facts of the kernels whose name matches `pattern` (a glob over
    the name with its template arguments, `reduce4<float, 256>`, or without them). The command
    line's `--block`, `--grid` and `--param` are already in it (they win over the table)."""

    pattern: str
    where: str  # the configuration file, for the origin of a launch it gives
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    params: tuple[tuple[str, int], ...] = ()
    facts: tuple[tuple[str, Fact], ...] = ()  # (parameter, ("divisor", 32) / ("min", 1) / ("max", 64))

    def matches(self, kernel: N.Function) -> bool:
        names = {kernel.display_name, kernel.name, base_name(kernel.name)}
        return any(fnmatch.fnmatchcase(name.replace(" ", ""), self.pattern.replace(" ", "")) for name in names)

    @property
    def origin(self) -> str:
        return f'[kernels."{self.pattern}"] of {os.path.basename(self.where)}'


def kernel_table(tables: tuple[KernelTable, ...], kernel: N.Function) -> KernelTable | None:
    """The first per-kernel table whose pattern matches `kernel`, or None."""
    return next((t for t in tables if t.matches(kernel)), None)


@record
class HostLaunch:
    """One launch that host code makes, with what the host interpreter knew of it.

    `stmt` is the launch statement of the module being analysed; a launch made in another file
    of the run (`analyzer.program`) has none, and `place` ("b.cu:12") says where it is."""

    kernel: str  # the name as launched (`k`, `ns::k<float>`)
    template_args: tuple[str, ...]
    grid: Value
    block: Value
    args: tuple[Value, ...]
    uncertain: bool  # computed from a local whose address was passed on: not held to CUDA's limits
    block_text: str  # the block as written (`threads`), for the note when it is unknown
    stmt: N.LaunchStmt | None = None
    place: str | None = None
    facts: tuple[tuple[int, Fact], ...] = ()  # what guards stated of the arguments, by position
    unknowns: tuple[tuple[int, str, Span], ...] = ()  # where arguments not known come from, by position


def host_launches(module: N.Module) -> list[HostLaunch]:
    """Every launch the host code of `module` makes, each host function run from the top (a
    function the others call is run from its callers, with their arguments)."""
    functions = {fn.name: fn for fn in module.host}
    called = {name for fn in module.host for name in host_calls(fn.body) if name in functions and name != fn.name}
    pointed = function_pointers(module.host)
    reaching = launching_functions(functions)
    out: list[HostLaunch] = []
    for host in module.host:
        if host.name in called or host.name not in reaching:
            continue  # run from its callers, with their arguments; or it launches nothing
        interp = HostInterpreter(functions, pointed=pointed, reaching=reaching)
        interp.run(host.body)
        for stmt, kernel, g, b, args, facts in interp.launches:
            block_text = stmt.config_text[1] if len(stmt.config_text) > 1 else "?"
            out.append(
                HostLaunch(
                    kernel,
                    tuple(str(a) for a in stmt.template_args),
                    g,
                    b,
                    args,
                    id(stmt) in interp.uncertain,
                    block_text,
                    stmt,
                    facts=facts,
                    unknowns=interp.unknown_args.get(id(stmt), ()),
                )
            )
    return out


def launches_kernel(launch: HostLaunch, kernel: N.Function) -> bool:
    """Whether `launch` launches `kernel` (its name, and its template arguments when it has some)."""
    if base_name(launch.kernel) != base_name(kernel.name):
        return False
    return not kernel.template_args or launch.template_args == tuple(str(a) for a in kernel.template_args)


LaunchKey = tuple[str, tuple[str, ...] | None]  # (base name, template arguments; None: any)


class LaunchIndex:
    """The host launches of one module by kernel: under (base name, template arguments) and
    under (base name, None) for a kernel that is no template instance, each in the host code's
    order. The host code is run on the first question, once per module, not once per kernel
    (1,900 template instantiations each launched once ran it 1,900 times and matched 1,900 x
    1,900 launches): whoever asks for the launches of several kernels of one module passes one
    index along (`launch_configs(..., launches=index)`)."""

    def __init__(self, module: N.Module, known: KnownLaunches | None = None) -> None:
        self.module = module
        self._index: dict[LaunchKey, list[HostLaunch]] | None = None
        self._known = known
        self.found: KnownLaunches | None = None  # the launches and the steps they took, once run here

    def of(self, kernel: N.Function) -> list[HostLaunch]:
        """The host launches of the module that launch `kernel` (`launches_kernel`), in order."""
        if self._index is None:
            self._index = _indexed(self._launches())
        args = tuple(str(a) for a in kernel.template_args) if kernel.template_args else None
        return self._index.get((base_name(kernel.name), args), [])

    def _launches(self) -> list[HostLaunch]:
        """`host_launches(module)`, or the launches `known` gives where the running meter has
        the steps they took left (those steps are charged: a run cut short stays cut short)."""
        known, self._known = self._known, None
        if known is not None:
            meter = budget.current()
            if meter is None or meter.left >= known.steps:
                budget.spend(known.steps)
                return known.launches
        meter = budget.current()
        before = meter.left if meter is not None else 0
        launches = host_launches(self.module)
        if meter is not None:
            self.found = KnownLaunches(launches, before - meter.left)
        return launches


@record(slots=False)
class KnownLaunches:
    """The host launches of one module, as a survey found them (`analyzer.program`), and the
    steps that took: handed on to its check (`api_front.taken_launches`), which then does not
    run the host code again. Measured 2026-11-26 on the 18 small cuda-samples files of issue 16
    checked in one process: the second run of the host code was 0.036 s of CPU."""

    launches: list[HostLaunch]
    steps: int


def _indexed(launches: list[HostLaunch]) -> dict[LaunchKey, list[HostLaunch]]:
    index: dict[LaunchKey, list[HostLaunch]] = {}
    for launch in launches:
        name = base_name(launch.kernel)
        index.setdefault((name, None), []).append(launch)
        index.setdefault((name, launch.template_args), []).append(launch)
    return index


def launch_configs(
    module: N.Module,
    kernel: N.Function,
    block: tuple[int, int, int] | None = None,
    grid: tuple[int, int, int] | None = None,
    params: dict[str, int] | None = None,
    line_of: Any = None,
    problems: list[Diagnostic] | None = None,
    foreign: tuple[HostLaunch, ...] = (),
    header: tuple[tuple[int, int, int], tuple[int, int, int], int] | None = None,
    tables: tuple[KernelTable, ...] = (),
    launches: LaunchIndex | None = None,
) -> list[LaunchConfig]:
    """Every configuration the kernel is analysed for (`_launch_configs`); the first per-kernel
    table of the configuration (`tables`) that matches the kernel gives the block and grid in
    place of the host's launches where it names them, and its parameters and facts hold for
    every configuration. Every command (check, show, the language server, simulate, --verify,
    --via-ptx) takes its launch configurations from here. `launches` is the module's index of
    host launches when the caller asks for several kernels of one module (else one is made)."""
    table = kernel_table(tables, kernel)
    index = launches if launches is not None else LaunchIndex(module)
    if table is None:
        return _launch_configs(module, kernel, block, grid, params, line_of, problems, foreign, header, index)
    params = {**(params or {}), **dict(table.params)}
    grid = table.grid or grid
    if table.block is not None:
        configs = [LaunchConfig(table.block, grid, table.origin, False, tuple(sorted(params.items())))]
    else:
        configs = _launch_configs(module, kernel, block, grid, params, line_of, problems, foreign, header, index)
    return [_with_table_facts(c, table) for c in configs]


def kernel_params(params: dict[str, int] | None, tables: tuple[KernelTable, ...], kernel: N.Function) -> dict[str, int]:
    """The parameter values that hold for every launch of `kernel`: the command line's
    `--param`, and those of the first per-kernel table that matches it (which hold the command
    line's already: it wins over the table)."""
    table = kernel_table(tables, kernel)
    return {**(params or {}), **dict(table.params)} if table is not None else dict(params or {})


def _with_table_facts(config: LaunchConfig, table: KernelTable) -> LaunchConfig:
    """`config` with the facts a per-kernel table states of parameters it leaves unknown added."""
    if not table.facts:
        return config
    known = dict(config.params)
    had = config.facts
    stated = [(n, f) for n, f in table.facts if n not in known]
    if had is not None:
        stated += [(n, ("value", v)) for n, v in had.value_of]
        stated += [(n, ("divisor", d)) for n, d in had.divisor_of]
        stated += [(n, ("min", lo)) for n, lo, _ in had.range_of if lo is not None]
        stated += [(n, ("max", hi)) for n, _, hi in had.range_of if hi is not None]
    return replace(config, facts=launch_facts(stated))


def _launch_configs(
    module: N.Module,
    kernel: N.Function,
    block: tuple[int, int, int] | None,
    grid: tuple[int, int, int] | None,
    params: dict[str, int] | None,
    line_of: Any,
    problems: list[Diagnostic] | None,
    foreign: tuple[HostLaunch, ...],
    header: tuple[tuple[int, int, int], tuple[int, int, int], int] | None,
    index: LaunchIndex,
) -> list[LaunchConfig]:
    """Every configuration the kernel is analysed for. `line_of(span) -> int` names launch lines.
    `foreign` are launches made by other files of the run (`analyzer.program`), after the
    module's own. A host launch, or `__launch_bounds__`, with dimensions CUDA refuses is a
    WL907 added to `problems` (for the module's own launches) and is not analysed (nor is a
    kernel launched only so). `header` is the file's GPUVerify launch header (`analysis.guards`),
    taken where no host code launches the kernel; the kernel's `__requires` facts hold for
    every configuration."""
    given = tuple(sorted((params or {}).items()))
    if block is not None:
        return [LaunchConfig(block, grid, "--block" + (" and --grid" if grid else ""), False, given)]
    found: list[LaunchConfig] = []
    refused = 0
    launches = [*index.of(kernel), *(x for x in foreign if launches_kernel(x, kernel))]
    for launch in launches:
        cfg = _configured(module, kernel, launch, grid, params, line_of, problems)
        if cfg is None:
            refused += 1
        elif all((c.block, c.grid, c.params, c.facts) != (cfg.block, cfg.grid, cfg.params, cfg.facts) for c in found):
            found.append(cfg)
    if found or refused:
        return found
    required = required_facts(kernel, HostInterpreter().expr)
    if header is not None and _dims_problem(header[0], block=True) is None:
        known = {name: v for name, (kind, v) in required if kind == "value"}
        known.update(params or {})
        origin = f"GPUVerify header at line {header[2]} (--blockDim, --gridDim)"
        facts = launch_facts((n, f) for n, f in required if f[0] != "value")
        return [LaunchConfig(header[0], grid or header[1], origin, False, tuple(sorted(known.items())), facts=facts)]
    if kernel.launch_bounds:
        bounded = _bounded(kernel, grid, given, problems)
        if bounded is not None:
            return [_with_required(bounded, required)]
    return [
        _with_required(_default(kernel, module, grid, given, "no launch of this kernel in the file", None), required)
    ]


def _with_required(config: LaunchConfig, required: list[tuple[str, Fact]]) -> LaunchConfig:
    """`config` with the facts a kernel's `__requires` states: its values as known parameters
    (what the command line gives wins), the rest as facts."""
    if not required:
        return config
    known = {name: v for name, (kind, v) in required if kind == "value"}
    known.update(dict(config.params))
    facts = launch_facts((n, f) for n, f in required if f[0] != "value" and n not in known)
    return replace(config, params=tuple(sorted(known.items())), facts=facts)


def _configured(
    module: N.Module,
    kernel: N.Function,
    launch: HostLaunch,
    grid: tuple[int, int, int] | None,
    params: dict[str, int] | None,
    line_of: Any,
    problems: list[Diagnostic] | None,
) -> LaunchConfig | None:
    """The configuration one host launch gives `kernel`, or None when CUDA refuses it (a WL907
    in `problems` when the launch is the module's own)."""
    stmt = launch.stmt
    if not launch.uncertain:
        if stmt is not None:
            problem = _launch_problem(stmt, kernel.display_name, launch.grid, launch.block, check_grid=grid is None)
            if problem is not None:
                if problems is not None:
                    problems.append(problem)
                return None
        elif _foreign_problem(launch, check_grid=grid is None) is not None:
            return None  # another file's launch CUDA refuses: that file reports it
    bdims = _dims(launch.block)
    gdims = grid or _dims(launch.grid)
    known = _known_params(kernel, launch.args)
    known.update(params or {})
    stated = [(kernel.params[i].name, f) for i, f in launch.facts if i < len(kernel.params)]
    stated += required_facts(kernel, HostInterpreter().expr)
    known.update({n: v for n, (kind, v) in stated if kind == "value" and n not in known})
    facts = launch_facts((n, f) for n, f in stated if f[0] != "value" and n not in known)
    if stmt is None:
        where = f"launch at {launch.place}"
    else:
        where = f"launch at line {line_of(stmt.span)}" if line_of else "launch in host code"
    span = stmt.span if stmt is not None else None
    unknowns = _unknown_origins(kernel, launch, module.path, line_of) if stmt is not None else ()
    if bdims is None:
        where += f" (block `{launch.block_text}` unknown)"
        config = _default(kernel, module, gdims, tuple(sorted(known.items())), where, span)
        return replace(config, facts=facts, unknowns=unknowns)
    return LaunchConfig(bdims, gdims, where, False, tuple(sorted(known.items())), span, facts, unknowns)


def _unknown_origins(kernel: N.Function, launch: HostLaunch, path: str, line_of: Any) -> tuple[tuple[str, str], ...]:
    """(parameter, where its value comes from: "returned by `atoi` at k.cu:7") for each argument
    of the launch that host code leaves unknown and says where it got."""
    out = []
    for i, words, span in launch.unknowns:
        if i < len(kernel.params) and isinstance(kernel.params[i].type, T.ScalarType):
            place = f" at {os.path.basename(path)}:{line_of(span)}" if line_of else ""
            out.append((kernel.params[i].name, words + place))
    return tuple(out)


def _foreign_problem(launch: HostLaunch, check_grid: bool) -> str | None:
    """Why CUDA refuses another file's launch (that file reports nothing: it only declares the kernel)."""
    grid = _dims_problem(launch.grid, block=False) if check_grid else None
    return grid or _dims_problem(launch.block, block=True)


def _known_params(kernel: N.Function, args: tuple[Value, ...]) -> dict[str, int]:
    """The kernel's parameters whose values the launch knows: integer scalars, and the known
    integer fields of a struct passed by value (`A.width`)."""
    known: dict[str, int] = {}
    for p, v in zip(kernel.params, args):
        if isinstance(v, int) and not isinstance(v, bool) and isinstance(p.type, T.ScalarType):
            known[p.name] = v
        elif isinstance(v, dict) and isinstance(p.type, T.StructType):
            known.update(
                {f"{p.name}.{name}": x for name, x in v.items() if isinstance(x, int) and not isinstance(x, bool)}
            )
    return known


def _bounded(kernel: N.Function, grid: Any, given: tuple, problems: list[Diagnostic] | None) -> LaunchConfig | None:
    """The configuration `__launch_bounds__(n)` gives a kernel no host code launches (a 1-D block
    of n threads), or None (and a WL907) when CUDA refuses n."""
    n = kernel.launch_bounds[0]
    problem = dims_problem([n], MAX_BLOCK, MAX_BLOCK_THREADS)
    if problem is None:
        return LaunchConfig((n, 1, 1), grid, f"__launch_bounds__({n}) (assumed a 1-D block of that size)", True, given)
    if problems is not None:
        problems.append(
            Diagnostic(
                Severity.ERROR,
                f"__launch_bounds__({n}) of `{kernel.display_name}`: {problem}; the bound is not used",
                "WL907",
                kernel.name_span,
            )
        )
    return None


def _default(kernel: N.Function, module: N.Module, grid: Any, params: tuple, why: str, span: Any) -> LaunchConfig:
    dims = uses_dimensions(kernel, module)
    block = DEFAULT_BLOCKS[dims]
    origin = f"{why}; assumed block {block} (pass --block to set it)"
    return LaunchConfig(block, grid, origin, True, params, span)
