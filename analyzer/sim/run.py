"""Simulate a kernel launch and charge every warp-level request with `check`'s cost model.

`simulate_kernel` runs the kernel block by block (all blocks, or a sample spread over the
grid when there are more than `max_blocks`), hands every access the interpreter makes to a
`SiteRecorder`, and returns a `Simulation`: per access site (`Access.uid`) the requests,
total, worst, best and mean cost per request, in the same `AccessCost` records `check`
produces, so that the reporters and the comparison in `analyzer.sim.verify` read both alike.

A request is one warp executing one access (one piece of it, for an element moved in
several accesses, as `cost.split_access` says) with at least one active lane. Its cost
comes from `analysis.cost.shared_cost` / `global_cost` on the lanes' byte addresses.
Both costs are unchanged when every address moves by `arch.address_period` bytes (128 on
sm_70 ... sm_90: 32 banks of 4 bytes, 4 sectors of 32), so requests are cached by their
addresses relative to an anchor at a multiple of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analyzer.analysis.assumptions import SpaceNotCosted
from analyzer.analysis.cost import global_cost, shared_cost, split_access
from analyzer.analysis.launch import DEFAULT_BLOCKS as ASSUMED_BLOCKS  # by number of dimensions
from analyzer.analysis.results import AccessCost, KernelAnalysis, LaunchConfig, unit_of
from analyzer.analysis.values import WideAccess
from analyzer.arch import Architecture
from analyzer.budget import SIMULATION_FLOOR, Budget
from analyzer.diagnostics import Span
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.nodes import AccessOp, Space
from analyzer.sim.memory import Memory, every, lowest
from analyzer.sim.warp import BarrierProblem, BlockInterpreter, StepBudgetExceeded

DEFAULT_BLOCKS = 8  # blocks simulated when the grid is larger
DEFAULT_BUDGET = Budget().simulation  # steps per launch before the run is stopped (analyzer.budget)
BATCH_THREADS = 8192  # threads simulated together (several blocks at once when they are small)
COSTED = ("shared", "global")

__all__ = ["SimOptions", "SimulatedCost", "Simulation", "sample_blocks", "simulate_kernel"]


@dataclass
class SimOptions:
    max_blocks: int = DEFAULT_BLOCKS  # 0: every block
    seed: int = 0
    fill: str = "random"
    budget: int = DEFAULT_BUDGET
    default_param: int | None = None  # value of an integer parameter nobody gave (None: the thread count)


@dataclass
class _Site:
    access: N.Access
    pieces: tuple[tuple[int, int], ...]
    space: str = "unknown"
    requests: int = 0
    total: int = 0
    worst: int | None = None
    worst_ideal: int | None = None
    best: int | None = None
    worst_addresses: tuple[int | None, ...] = ()
    collisions: tuple = ()
    lane_accesses: int = 0
    # the last request's rows and warps and their `_patterns`, where the warps differ: a loop
    # makes the same request again and again (001_matmul's `b[k * P + y]`: 32 patterns in 256
    # warps, the same every iteration), and comparing two arrays costs less than grouping again
    last_patterns: tuple[np.ndarray, np.ndarray, dict[bytes, list[int]]] | None = None
    # the last request of whole warps: its addresses, rows, warps and patterns (`_moved_alike`)
    last_whole: tuple[np.ndarray, np.ndarray, np.ndarray, dict[bytes, list[int]]] | None = None


@dataclass
class SimulatedCost(AccessCost):
    """An `AccessCost` measured by running the kernel: also the mean of its requests' costs
    (None where no request was made, or a field another access's wide load moves)."""

    mean_per_request: float | None = None


@dataclass
class Simulation(KernelAnalysis):
    """A `KernelAnalysis` whose costs were measured by running the kernel."""

    simulated_blocks: list[tuple[int, int, int]] = field(default_factory=list)
    total_blocks: int = 0
    scaled: bool = False  # requests and totals were scaled from the sample to the whole grid
    stopped: str | None = None  # why the run stopped early (the step budget)
    stopped_span: Span | None = None
    barriers: list[BarrierProblem] = field(default_factory=list)
    lane_accesses: int = 0
    out_of_bounds: int = 0
    work: int = 0  # the steps the budget was charged (analyzer.budget: at least SIMULATION_FLOOR a statement)
    cut_blocks: bool = False  # every block was asked for, and the budget allowed only some
    steps: int = 0
    memory: Memory | None = None  # the buffers after the run (tests read results back)


def blocks_within(budget: int, threads_per_block: int) -> int:
    """The most blocks a run of `budget` steps can reach: every block runs at least one
    statement, charged at least SIMULATION_FLOOR steps (one more, to see the budget run out)."""
    return budget // max(threads_per_block, SIMULATION_FLOOR) + 1


def sample_blocks(grid: tuple[int, int, int], limit: int) -> list[tuple[int, int, int]]:
    """Every block of the grid, or `limit` of them spread evenly over it (first and last
    included), as (x, y, z) in launch order (x fastest)."""
    count = grid[0] * grid[1] * grid[2]
    if limit <= 0 or count <= limit:
        linear = list(range(count))
    elif limit == 1:
        linear = [0]
    elif count < 2**53:  # (where a float holds every block's number exactly)
        linear = sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})
    else:
        linear = sorted({i * (count - 1) // (limit - 1) for i in range(limit)})
    gx, gy = grid[0], grid[1]
    return [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in linear]


class SiteRecorder:
    """Charges each warp's request at each site; the `on_access` callback of the interpreter."""

    def __init__(self, memory: Memory, arch: Architecture, wide: dict[int, WideAccess] | None = None) -> None:
        self.memory = memory
        self.arch = arch
        # the accesses nvcc merges into wide shared accesses (analysis.kernel.wide_accesses): the
        # carrier is charged as the wide access, the other members make no request
        self.wide = wide or {}
        self.anchor = arch.address_period  # both cost functions are invariant under a shift by it
        self.sites: dict[int, _Site] = {}
        self.cache: dict[tuple, tuple[int, int, Any]] = {}
        self.lane_accesses = 0

    def site(self, access: N.Access) -> _Site:
        s = self.sites.get(access.uid)
        if s is None:
            elem = access.element
            pieces: tuple[tuple[int, int], ...] = ()
            wide = self.wide.get(access.uid)
            if wide is not None:  # moved by a wide access: from the start of its bytes, or not at all
                pieces = ((-wide.offset_of(access), wide.bytes),) if wide.carrier is access else ()
            elif elem.size and elem.align:
                try:
                    pieces = split_access(elem.size, elem.align, self.arch)
                except ValueError:
                    pieces = ()
            s = _Site(access, pieces)
            self.sites[access.uid] = s
        return s

    def __call__(self, access: N.Access, addrs: np.ndarray, mask: np.ndarray) -> None:
        site = self.site(access)
        active = int(np.count_nonzero(mask))
        if not active:
            return
        self.lane_accesses += active
        site.lane_accesses += active
        first = int(addrs[0] if active == len(addrs) else addrs[np.argmax(mask)])
        region = self.memory.region_at(first)
        # an address outside every buffer (out of bounds) is still charged, in the space the
        # site has shown before or that lowering gave it
        space = region.space if region is not None else site.space if site.space != "unknown" else access.space
        if site.space == "unknown":
            site.space = space
        if access.uid in self.wide and not site.pieces:
            return  # moved by another access's wide access: no request of its own
        warp = self.arch.warp_size
        whole = active == len(addrs) and not len(addrs) % warp
        if space not in COSTED or not site.pieces:
            count = (
                len(addrs) // warp if whole else int(np.count_nonzero(_pad(mask, warp).reshape(-1, warp).any(axis=1)))
            )
            site.requests += count * max(1, len(site.pieces))
            return
        moved = self._moved_alike(site, addrs) if whole else None
        if moved is not None:
            rel, patterns = moved
        else:
            rel, warps = self._whole_warps(addrs, warp) if whole else self._some_lanes(addrs, mask, warp)
            patterns = _site_patterns(site, rel, warps)
            if whole:
                site.last_whole = (addrs, rel, warps, patterns)
        cache = self.cache
        for key_lanes, (w, times) in patterns.items():
            for off, size in site.pieces:
                key = (space, size, off, key_lanes, access.op)
                charge = cache.get(key)
                if charge is None:
                    charge = self.charge(space, rel[w], off, size, access.op)
                    cache[key] = charge
                cost, ideal, detail = charge
                site.requests += times
                site.total += cost * times
                if site.worst is None or cost > site.worst:
                    site.worst, site.worst_ideal = cost, ideal
                    site.worst_addresses = detail[0]
                    site.collisions = detail[1]
                if site.best is None or cost < site.best:
                    site.best = cost

    def _some_lanes(self, addrs: np.ndarray, mask: np.ndarray, warp: int) -> tuple[np.ndarray, np.ndarray]:
        """Per warp (a row), each lane's address relative to the warp's anchor (-1 for an
        inactive lane), and the warps with an active lane."""
        a = _pad(addrs, warp).astype(np.int64).reshape(-1, warp)
        m = _pad(mask, warp).reshape(-1, warp)
        warps = np.nonzero(m.any(axis=1))[0]
        big = np.iinfo(np.int64).max
        lows = np.where(m, a, big).min(axis=1)
        anchors = lows - lows % self.anchor
        return np.where(m, a - anchors[:, None], -1), warps

    def _moved_alike(self, site: _Site, addrs: np.ndarray) -> tuple[np.ndarray, dict[bytes, list[int]]] | None:
        """The rows and patterns of the site's last request of whole warps, where every lane's
        address moved from it by the same multiple of the address period: each warp's lowest
        address moves by it too, and its anchor with it, so every lane's address relative to
        its warp's anchor is what it was (`_whole_warps`). Why: a loop walks a row or a column
        of a matrix request after request (001_matmul's `b[k * P + y]`, P * 4 bytes further
        each iteration), and telling that costs three numpy calls, not the rows' grouping again.
        None where it did not move so (or there is no such request)."""
        last = site.last_whole
        if last is None or len(last[0]) != len(addrs):
            return None
        shift = addrs - last[0]
        first = int(shift[0])
        if first % self.anchor or not every(shift == first):
            return None
        site.last_whole = (addrs, last[1], last[2], last[3])
        return last[1], last[3]

    def _whole_warps(self, addrs: np.ndarray, warp: int) -> tuple[np.ndarray, np.ndarray]:
        """`_some_lanes` where every lane of whole warps is active (most requests): no masks."""
        a = addrs.astype(np.int64, copy=False).reshape(-1, warp)
        lows = lowest(a, axis=1)
        return a - (lows - lows % self.anchor)[:, None], np.arange(len(a))

    def charge(
        self, space: str, rel: np.ndarray, off: int, size: int, op: AccessOp = AccessOp.LOAD
    ) -> tuple[int, int, Any]:
        lanes = [None if x < 0 else int(x) + off for x in rel.tolist()]
        if space == "shared":
            c = shared_cost(lanes, size, self.arch)
            return c.wavefronts, c.ideal, (tuple(lanes), c.worst)
        g = global_cost(lanes, size, self.arch, op)
        return g.sectors, g.ideal, (tuple(lanes), ())


def _pad(lanes: np.ndarray, warp: int) -> np.ndarray:
    """`lanes` (addresses or a mask) with zeros after them up to whole warps: a block that is
    not whole warps has a short last warp, its missing lanes inactive."""
    pad = -len(lanes) % warp
    return np.concatenate([lanes, np.zeros(pad, lanes.dtype)]) if pad else lanes


def _site_patterns(site: _Site, rel: np.ndarray, warps: np.ndarray) -> dict[bytes, list[int]]:
    """`_patterns(rel, warps)`, the site's last ones where its last request had the same rows."""
    last = site.last_patterns
    if last is not None and np.array_equal(last[0], rel) and np.array_equal(last[1], warps):
        return last[2]
    groups = _patterns(rel, warps)
    site.last_patterns = (rel, warps, groups) if len(groups) > 1 else None  # (one pattern costs little)
    return groups


def _patterns(rel: np.ndarray, warps: np.ndarray) -> dict[bytes, list[int]]:
    """The warps' lane patterns (rows of `rel`, as bytes), each with its first warp and how many
    warps have it, in the order of their first warps: a warp like one before it is charged as
    that one (and a request that only ties the worst never replaces it), so each pattern is
    charged once and counted as often (001_matmul: 256 warps a request, two patterns)."""
    rows = rel[warps] if len(warps) < len(rel) else rel
    if len(rows) and every((rows == rows[0]).ravel()):  # the common case, without a loop over the warps
        return {rows[0].tobytes(): [int(warps[0]), len(rows)]}
    buf = np.ascontiguousarray(rel).tobytes()
    width = rel.shape[1] * rel.itemsize
    groups: dict[bytes, list[int]] = {}
    for w in warps.tolist():
        key = buf[w * width : (w + 1) * width]
        seen = groups.get(key)
        if seen is None:
            groups[key] = [w, 1]
        else:
            seen[1] += 1
    return groups


def _param_values(
    kernel: N.Function, interp: BlockInterpreter, memory: Memory, params: dict[str, int], default: int, notes: set[str]
) -> dict[int, Any]:
    """Values of the kernel's parameters: a fresh global buffer per pointer (per pointer
    field of a struct), the known integers, and `default` for the unknown ones."""

    def value(name: str, t: T.CType) -> Any:
        if isinstance(t, T.PointerType):
            region = memory.add(name, "global", None, t.pointee)
            return np.full(interp.n, region.base, np.int64)
        if isinstance(t, T.StructType):
            return {f.name: value(f"{name}.{f.name}", f.type) for f in t.fields}
        if isinstance(t, T.ScalarType) and t.is_float:
            notes.add(f"float parameter `{name}` was given the value 1.0")
            return interp.full(1.0, t)
        if name in params:
            return interp.full(params[name], t)
        if isinstance(t, T.ScalarType):
            notes.add(f"integer parameter `{name}` is not known: simulated with {default} (pass --param {name}=VALUE)")
            return interp.full(default, t)
        return interp.zero(t)

    return {p.uid: value(p.name, p.type) for p in kernel.params}


def simulate_kernel(
    module: N.Module,
    kernel: N.Function,
    launch: LaunchConfig,
    arch: Architecture,
    params: dict[str, int] | None = None,
    options: SimOptions | None = None,
) -> Simulation:
    """Run `kernel` for `launch` and cost every access it makes (see the module docstring)."""
    options = options or SimOptions()
    block = launch.block or ASSUMED_BLOCKS[1]
    notes: set[str] = set()
    grid = launch.grid
    if grid is None:
        grid = (1, 1, 1)
        notes.add("grid unknown: one block simulated, requests and totals are per block")
    known = dict(launch.params)
    known.update(params or {})
    n_threads = block[0] * block[1] * block[2]
    default = options.default_param if options.default_param is not None else n_threads * math.prod(grid)
    memory = Memory(options.fill, options.seed)
    recorder = SiteRecorder(memory, arch, _wide_accesses(module, kernel, launch, known, arch))
    barriers: dict[int, BarrierProblem] = {}
    within = blocks_within(options.budget, n_threads)
    cut_blocks = options.max_blocks <= 0 and math.prod(grid) > within
    blocks = sample_blocks(grid, within if cut_blocks else options.max_blocks)
    # blocks run in batches of about BATCH_THREADS threads (whole warps only: see BlockInterpreter)
    batch = max(1, BATCH_THREADS // n_threads) if n_threads % arch.warp_size == 0 else 1
    batch = min(batch, len(blocks))
    interp = BlockInterpreter(module, memory, block, grid, recorder, options.budget, notes, barriers, arch, batch)
    with np.errstate(all="ignore"):
        args = _param_values(kernel, interp, memory, known, default, notes)
    total_blocks = math.prod(grid)
    sim = Simulation(kernel, launch, [], simulated_blocks=blocks, total_blocks=total_blocks)
    try:
        with np.errstate(all="ignore"):
            for start in range(0, len(blocks), batch):
                interp.run(kernel, args, blocks[start : start + batch])
    except StepBudgetExceeded as err:
        where = "a loop" if err.loop is not None else "the kernel"
        sim.stopped = (
            f"step budget of {err.steps:,} steps exceeded in {where}"
            + (f" after {err.iterations:,} iterations" if err.loop is not None else "")
            + ": an endless loop, or pass a smaller grid/--blocks"
        )
        sim.stopped_span = err.loop or kernel.name_span
    sim.scaled = len(blocks) < total_blocks and sim.stopped is None
    sim.barriers = sorted(barriers.values(), key=lambda b: b.span.start)
    sim.lane_accesses = recorder.lane_accesses
    sim.out_of_bounds = memory.out_of_bounds
    sim.steps = interp.steps
    sim.work = interp.work
    sim.cut_blocks = cut_blocks
    sim.memory = memory
    if launch.assumed:
        notes.add(f"block size unknown: {launch.origin}")
    if cut_blocks:
        notes.add(
            f"every block asked for, but the grid's {total_blocks:,} blocks are more than the simulation "
            f"budget allows: {len(blocks):,} of them simulated, spread over the grid"
        )
    if sim.scaled:
        notes.add(
            f"{len(blocks)} of {total_blocks} blocks simulated; requests and totals scaled by {total_blocks}/{len(blocks)}"
        )
    if memory.out_of_bounds:
        notes.add(f"{memory.out_of_bounds} lane accesses fell outside every buffer (read as 0, stores dropped)")
    sim.notes = sorted(notes)
    sim.costs = _costs(kernel, module, recorder, sim)
    _charge_reused_loads(sim.costs, module, kernel, launch, known)
    return sim


def _wide_accesses(
    module: N.Module, kernel: N.Function, launch: LaunchConfig, known: dict[str, int], arch: Architecture
) -> dict[int, WideAccess]:
    """The accesses nvcc merges into wide shared accesses: the same rule as `check`'s."""
    from analyzer.analysis.kernel import wide_accesses

    try:
        return wide_accesses(module, kernel, launch, known, arch)
    except (Exception, RecursionError):  # noqa: BLE001 - then every access is charged as written
        return {}


def _charge_reused_loads(
    costs: list[AccessCost], module: N.Module, kernel: N.Function, launch: LaunchConfig, known: dict[str, int]
) -> None:
    """Loads whose value the thread holds (nvcc loads `x[tid]` once in `x[tid] * x[tid]`)
    make no request: the same rule as `check`'s (analysis.kernel.reused_loads), as for struct fields."""
    from analyzer.analysis.kernel import reused_loads
    from analyzer.analysis.merge import mark_reused

    try:
        reused = reused_loads(module, kernel, launch, known)
    except (Exception, RecursionError):  # noqa: BLE001 - then every load is charged as written
        return
    for c in costs:
        holder = reused.get(c.access.uid)
        if holder is not None and c.op == "load":
            mark_reused(c, holder)
            if isinstance(c, SimulatedCost):
                c.mean_per_request = None


def _mark_wide(costs: Sequence[AccessCost], wide: dict[int, WideAccess]) -> None:
    """Say which costs are wide accesses nvcc makes of several, as `check` does."""
    from analyzer.analysis.assumptions import AccessesMerged
    from analyzer.analysis.merge import mark_moved

    by_uid = {c.access.uid: c for c in costs}
    for c in costs:
        w = wide.get(c.access.uid)
        carrier = by_uid.get(w.carrier.uid) if w is not None else None
        if w is None or carrier is None:
            continue
        if carrier is c:
            c.assumptions.append(AccessesMerged(tuple(a.text for a, _ in w.members), w.bytes))
        else:
            mark_moved(c, carrier)


def _costs(kernel: N.Function, module: N.Module, recorder: SiteRecorder, sim: Simulation) -> list[AccessCost]:
    """One `AccessCost` per access site of the kernel and the functions it calls."""
    from analyzer.analysis.indexing import struct_of_address
    from analyzer.analysis.merge import merge_struct_fields

    sites: list[N.Access] = []
    seen: set[int] = set()
    stack = [kernel]
    names: set[str] = set()
    while stack:  # the kernel's accesses, then those of every function it reaches
        fn = stack.pop()
        if fn.name in names:
            continue
        names.add(fn.name)
        for acc in fn.accesses:
            if acc.uid not in seen:
                seen.add(acc.uid)
                sites.append(acc)
        stack.extend(module.functions[c] for c in fn.calls if c in module.functions)
    for uid, site in recorder.sites.items():
        if uid not in seen:
            seen.add(uid)
            sites.append(site.access)
    scale = sim.total_blocks / len(sim.simulated_blocks) if sim.scaled and sim.simulated_blocks else 1
    costs: list[SimulatedCost] = []
    for acc in sorted(sites, key=lambda a: (a.span.start, a.uid)):
        s = recorder.sites.get(acc.uid) or recorder.site(acc)
        space = Space(s.space) if s.space != Space.UNKNOWN else acc.space
        size = acc.element.size or 0
        c = SimulatedCost(
            acc,
            kernel.display_name,
            space,
            acc.op,
            s.pieces[0][1] if s.pieces else size,
            size,
            max(1, len(s.pieces)),
            unit_of(space, recorder.arch),
            s.worst if space in COSTED else None,
            s.worst_ideal if space in COSTED else None,
        )
        c.struct_type = struct_of_address(acc.address)
        costed = space in COSTED and bool(s.pieces)
        if costed and s.worst is None:  # never executed by an active lane
            c.per_request = c.ideal_per_request = 0
        c.best_per_request = s.best
        c.requests = round(s.requests * scale) if sim.stopped is None else None
        c.total = round(s.total * scale) if sim.stopped is None and costed else None
        c.exact = sim.stopped is None and not sim.scaled and costed
        c.lane_addresses = s.worst_addresses
        if not costed:
            c.assumptions.append(SpaceNotCosted(space))
        costs.append(c)
    merge_struct_fields(costs, recorder.arch)
    _mark_wide(costs, recorder.wide)
    for c in costs:  # after merging: a field moved by another access's wide load has no request
        c.mean_per_request = round(c.total / c.requests, 3) if c.requests and c.total is not None else None
    return [*costs]
