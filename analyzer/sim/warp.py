"""A concrete SIMT interpreter of warplint's IR: the threads of one block run together.

Every value is a numpy array over the block's threads (index = linear thread id, x
fastest, so with the architecture's warp of W lanes threads Ww .. Ww+W-1 are warp w). Control flow is masks: an `if` runs both
branches under complementary masks, a loop runs while any thread is still in it (each
thread leaving on its own condition, `break` or `return`), `continue` and `return` take
threads out of the rest of a body. `&&`, `||` and `?:` evaluate their right side only for
the threads C would, so a guarded load (`i < n && a[i] > 0`) is not made by the others.

Every memory access reached is handed to `on_access(access, addresses, mask)`; the caller
(analyzer.sim.run) charges it per warp with the cost model of `check`. Integers follow C:
numpy's fixed-width arithmetic wraps like the GPU's, division and remainder truncate
toward zero, and a division by zero gives 0 instead of a trap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyzer.arch import Architecture
from analyzer.budget import SIMULATION_ACCESS_STEPS, SIMULATION_FLOOR
from analyzer.diagnostics import Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.nodes import OpaqueKind
from analyzer.ir.types import arithmetic_result_type
from analyzer.ir.visit import Visitor
from analyzer.sim.memory import Memory, Region, dtype_of

MAX_INLINE_DEPTH = 16

Value = Any  # np.ndarray over threads, or dict (a struct value: field -> Value)


class StepBudgetExceeded(Exception):
    """The kernel ran longer than the budget: most likely an endless loop."""

    def __init__(self, steps: int, loop: Span | None, iterations: int) -> None:
        super().__init__(f"step budget of {steps} thread-statements exceeded")
        self.steps = steps
        self.loop = loop
        self.iterations = iterations


@dataclass
class BarrierProblem:
    span: Span
    waiting: int  # threads at the barrier
    missing: int  # live threads of the block that are not


@dataclass
class _Frame:
    returned: np.ndarray  # threads that executed `return` in this function
    value: Value = None  # the return value (device functions)


@dataclass
class _LoopState:
    broke: np.ndarray
    continued: np.ndarray
    span: Span
    iterations: int = 0


def _truth(v: Value) -> np.ndarray:
    if isinstance(v, dict):
        return np.ones(len(next(iter(v.values()))), bool) if v else np.array([], bool)
    return v if v.dtype == np.bool_ else v != 0


def _convert(v: Value, t: T.CType) -> Value:
    """C's implicit conversion of a value to type `t` (structs and unknown types unchanged)."""
    dt = dtype_of(t)
    if dt is None or isinstance(v, dict):
        return v
    if v.dtype == dt:
        return v
    if dt == np.bool_:
        return v != 0
    if dt.kind in "iu" and v.dtype.kind == "f":
        v = np.trunc(np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0))
        if dt.kind == "u":  # a negative float to unsigned: through a signed 64-bit integer
            return v.astype(np.int64).astype(dt)
    return v.astype(dt)


def _where(mask: np.ndarray, new: Value, old: Value) -> Value:
    if isinstance(new, dict) or isinstance(old, dict):
        new = new if isinstance(new, dict) else {}
        old = old if isinstance(old, dict) else {}
        return {k: _where(mask, new.get(k, old.get(k)), old.get(k, new.get(k))) for k in set(new) | set(old)}
    if new is None:
        return old
    if old is None:
        return new
    if mask.all():
        return new
    if old.dtype != new.dtype:
        old = old.astype(new.dtype)
    return np.where(mask, new, old)


_COMPARISONS = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


def _shuffle_source(operation: str, lane: np.ndarray, arg: np.ndarray, width: np.ndarray) -> np.ndarray:
    """The lane each thread reads in a `__shfl*_sync` of `operation` (idx, up, down, xor): its
    own lane when the source is outside its segment of `width` lanes."""
    seg = (lane // width) * width
    if operation == "up":
        src = lane - arg
        return np.where(src >= seg, src, lane)
    if operation == "down":
        src = lane + arg
        return np.where(src < seg + width, src, lane)
    if operation == "xor":
        src = lane ^ arg
        return np.where((src // width) * width == seg, src, lane)
    return seg + arg % width


#: How the simulator computes each math function, by the operation of its builtin (`sqrtf`
#: and `std::sqrt` are both "sqrt", `__expf` is "exp": `builtins.math_function`).
MATH_OPERATIONS: dict[str, Callable[..., Any] | None] = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "fabs": np.abs,
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "trunc": np.trunc,
    "pow": np.power,
    "fmin": np.fmin,
    "fmax": np.fmax,
    "fma": lambda a, b, c: a * b + c,
    "fdividef": np.divide,
    "erf": None,
    "saturate": lambda x: np.clip(x, 0, 1),
}

#: An atomic's new value, by the operation of its builtin: (current, operand, atomicCAS's value).
ATOMIC_UPDATES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda cur, v, _: cur + v,
    "sub": lambda cur, v, _: cur - v,
    "exch": lambda cur, v, _: v,
    "min": lambda cur, v, _: min(cur, v),
    "max": lambda cur, v, _: max(cur, v),
    "inc": lambda cur, v, _: 0 if cur >= v else cur + 1,
    "dec": lambda cur, v, _: v if cur == 0 or cur > v else cur - 1,
    "cas": lambda cur, v, swap: swap if cur == v else cur,
    "and": lambda cur, v, _: cur & v,
    "or": lambda cur, v, _: cur | v,
    "xor": lambda cur, v, _: cur ^ v,
}


EXTERN_SHARED_BYTES = 64 * 1024  # room for `extern __shared__` arrays (their size is set at launch)


def _wrap(args: Any, n: int) -> Any:
    """Parameter values cut to the first `n` threads (a smaller last batch of blocks)."""
    if isinstance(args, dict):
        return {k: _wrap(v, n) for k, v in args.items()}
    return args[:n]


class BlockInterpreter(Visitor):
    """Runs one kernel for a batch of blocks at once; memory persists in `memory` between batches.

    The threads of the batch are laid out block after block, so warps never straddle two
    blocks as long as a block's size is a multiple of the warp size (the caller batches
    only then). Each block of the batch has its own slot of every `__shared__` array (slots
    are a multiple of `arch.address_period` bytes apart, so banks and costs are those of a
    lone block). Lanes, shuffles and votes follow `arch.warp_size`.
    """

    def __init__(
        self,
        module: N.Module,
        memory: Memory,
        block: tuple[int, int, int],
        grid: tuple[int, int, int],
        on_access: Callable[[N.Access, np.ndarray, np.ndarray], None],
        budget: int,
        notes: set[str],
        barriers: dict[int, BarrierProblem],
        arch: Architecture,
        batch: int = 1,
    ) -> None:
        self.module = module
        self.warp = arch.warp_size
        self.slot_alignment = arch.address_period
        self.local_alignment = arch.max_access_bytes  # a thread's local array holds the widest access
        self.memory = memory
        self.block_dim = block
        self.grid_dim = grid
        self.per_block = block[0] * block[1] * block[2]
        self.batch = batch
        self.on_access = self._counting(on_access)
        self.budget = budget
        self.steps = 0  # thread-statements run
        self.work = 0  # what the budget is charged (analyzer.budget: statements, accesses, lanes)
        self.notes = notes
        self.barriers = barriers
        self.locals: dict[int, Region] = {}  # thread-local arrays, by variable uid
        self.statics: dict[int, Region] = {}  # shared/global/constant variables, by uid
        self.frames: list[_Frame] = []
        self.loops: list[_LoopState] = []
        self.depth = 0
        self.resize(batch)

    def resize(self, blocks: int) -> None:
        """Lay out the threads of `blocks` blocks."""
        block = self.block_dim
        self.n = blocks * self.per_block
        self._filled: dict[tuple[Any, np.dtype], np.ndarray] = {}  # `full`'s arrays, for this many threads
        linear = np.arange(self.n, dtype=np.int64)
        self.slot = linear // self.per_block  # which block of the batch
        t = linear % self.per_block
        self.lane = linear % self.warp
        self.thread = (  # threadIdx.x, .y, .z
            (t % block[0]).astype(np.uint32),
            ((t // block[0]) % block[1]).astype(np.uint32),
            (t // (block[0] * block[1])).astype(np.uint32),
        )

    # ------------------------------------------------------------------ helpers
    def full(self, value: Any, t: T.CType) -> np.ndarray:
        """`value` at every thread, as `t`: made once per value and type (a loop's constants are
        evaluated at every iteration: 2.5% of `check --verify samples/001_matmul_v2_coalesced.cu`,
        py-spy) and read-only, as every value is (none is changed in place: numpy would raise)."""
        dt = dtype_of(t) or (np.dtype(np.float64) if isinstance(value, float) else np.dtype(np.int64))
        key = (repr(value), dt)  # (not the value: 0.0 == -0.0, and 1 == 1.0 == True)
        made = self._filled.get(key)
        if made is None:
            if isinstance(value, int) and dt.kind in "iu":  # a literal wider than its type wraps, as in C
                bits = dt.itemsize * 8
                value %= 1 << bits
                if dt.kind == "i" and value >= 1 << (bits - 1):
                    value -= 1 << bits
            made = np.full(self.n, value, dt)
            made.flags.writeable = False
            self._filled[key] = made
        return made

    def note(self, text: str) -> None:
        self.notes.add(text)

    def static_region(self, var: N.Variable) -> Region:
        """The region of a `__shared__`, `__device__` or `__constant__` variable (or a local array)."""
        table = self.locals if var.kind == "local" or var.space == "local" else self.statics
        region = table.get(var.uid)
        if region is None:
            t = var.type
            elem = t.element if isinstance(t, T.ArrayType) else t
            size = t.size
            capacity = self.batch * self.per_block
            if var.kind == "local" or var.space == "local":
                align = self.local_alignment
                per_thread = -(-(size or align) // align) * align
                region = self.memory.add(
                    var.name,
                    "local",
                    per_thread * capacity,
                    elem,
                    fill="zeros",
                    stride=per_thread,
                    extent=size or align,
                )
            elif var.space == "shared":
                extent = EXTERN_SHARED_BYTES if var.extern or not size else size
                period = self.slot_alignment  # one period of guard: an overrun is out of bounds
                stride = -(-extent // period) * period + period
                region = self.memory.add(
                    var.name, "shared", stride * self.batch, elem, fill="zeros", stride=stride, extent=extent
                )
            else:
                region = self.memory.add(
                    var.name, var.space if var.space in ("global", "constant") else "global", size, elem
                )
            table[var.uid] = region
        return region

    def address_of(self, var: N.Variable) -> np.ndarray:
        region = self.static_region(var)
        if region.space == "local":
            return region.base + np.arange(self.n, dtype=np.int64) * region.stride
        if region.space == "shared":
            return region.base + self.slot * region.stride
        return np.full(self.n, region.base, np.int64)

    # ------------------------------------------------------------------ running
    def run(self, kernel: N.Function, args: dict[int, Value], blocks: list[tuple[int, int, int]]) -> None:
        """Run the kernel for `blocks` (at most `batch` of them) together."""
        if len(blocks) * self.per_block != self.n:
            self.resize(len(blocks))
        idx = np.array(blocks, dtype=np.uint32).reshape(-1, 3)
        self.block_idx = [np.repeat(idx[:, i], self.per_block) for i in range(3)]
        for region in list(self.statics.values()):
            if region.space == "shared":
                region.reset()
        for region in self.locals.values():
            region.reset()
        self.frames = [_Frame(np.zeros(self.n, bool))]
        self.loops = []
        env = {uid: _wrap(v, self.n) for uid, v in args.items()}
        self.block(kernel.body, np.ones(self.n, bool), env)

    def _counting(
        self, on_access: Callable[[N.Access, np.ndarray, np.ndarray], None]
    ) -> Callable[[N.Access, np.ndarray, np.ndarray], None]:
        """`on_access`, its lanes charged to the budget too (costing a request is most of a run's work)."""

        def counted(access: N.Access, addrs: np.ndarray, mask: np.ndarray) -> None:
            self.work += SIMULATION_ACCESS_STEPS + int(np.count_nonzero(mask))
            on_access(access, addrs, mask)

        return counted

    def count(self, mask: np.ndarray) -> None:
        active = int(np.count_nonzero(mask))
        self.steps += active
        self.work += SIMULATION_FLOOR + active // 8  # its numpy calls cost the same whatever the lanes, nearly
        if self.work > self.budget:
            loop = self.loops[-1] if self.loops else None
            raise StepBudgetExceeded(self.budget, loop.span if loop else None, loop.iterations if loop else 0)

    def live(self, mask: np.ndarray) -> np.ndarray:
        eff = mask & ~self.frames[-1].returned
        if self.loops:
            ls = self.loops[-1]
            eff &= ~(ls.broke | ls.continued)
        return eff

    def block(self, stmts: list[N.Stmt], mask: np.ndarray, env: dict[int, Value]) -> None:
        for s in stmts:
            eff = self.live(mask)
            if not eff.any():
                if isinstance(s, N.Sync):
                    continue
                return  # the masks only grow: no later statement runs either
            self.count(eff)
            self.stmt(s, eff, env)

    def stmt(self, s: N.Stmt, mask: np.ndarray, env: dict[int, Value]) -> None:
        """Run one statement for the threads in `mask` (its `visit_<class>`)."""
        self.visits[s.__class__](self, s, mask, env)

    def visit_Assign(self, s: N.Assign, mask: np.ndarray, env: dict[int, Value]) -> None:
        value = _convert(self.eval(s.value, mask, env), s.var.type)
        if s.field:
            env[s.var.uid] = self.assign_field(env.get(s.var.uid), s.field, value, mask)
        else:
            env[s.var.uid] = _where(mask, value, env.get(s.var.uid))

    def visit_Store(self, s: N.Store, mask: np.ndarray, env: dict[int, Value]) -> None:
        value = self.eval(s.value, mask, env)
        addrs = self.eval(s.access.address, mask, env)
        self.on_access(s.access, addrs, mask)
        self.store(addrs, mask, value, s.access.element)

    def visit_Eval(self, s: N.Eval, mask: np.ndarray, env: dict[int, Value]) -> None:
        self.eval(s.expr, mask, env)

    def visit_If(self, s: N.If, mask: np.ndarray, env: dict[int, Value]) -> None:
        c = _truth(self.eval(s.cond, mask, env))
        then = mask & c
        if then.any():
            self.block(s.then, then, env)
        other = mask & ~c
        if other.any():
            self.block(s.otherwise, other, env)

    def visit_Return(self, s: N.Return, mask: np.ndarray, env: dict[int, Value]) -> None:
        frame = self.frames[-1]
        if s.value is not None:
            value = self.eval(s.value, mask, env)
            frame.value = _where(mask, value, frame.value)
        frame.returned = frame.returned | mask

    def visit_Break(self, s: N.Break, mask: np.ndarray, env: dict[int, Value]) -> None:
        if self.loops:
            self.loops[-1].broke |= mask

    def visit_Continue(self, s: N.Continue, mask: np.ndarray, env: dict[int, Value]) -> None:
        if self.loops:
            self.loops[-1].continued |= mask

    def visit_Sync(self, s: N.Sync, mask: np.ndarray, env: dict[int, Value]) -> None:
        self.sync(s, mask)

    def visit_Skipped(self, s: N.Skipped, mask: np.ndarray, env: dict[int, Value]) -> None:
        for v in s.writes:
            env.pop(v.uid, None)
        self.note(f"a statement warplint could not lower ({s.what}) was skipped")

    def visit_LaunchStmt(self, s: N.LaunchStmt, mask: np.ndarray, env: dict[int, Value]) -> None:
        pass  # a launch from device code starts another grid, which is not simulated here

    def sync(self, s: N.Sync, mask: np.ndarray) -> None:
        """All threads of a block that have not exited must reach the same barrier: a block
        in which some but not all of them are here has a divergent barrier."""
        alive = ~self.frames[0].returned
        blocks = self.n // self.per_block
        reached = np.bincount(self.slot[mask & alive], minlength=blocks)
        living = np.bincount(self.slot[alive], minlength=blocks)
        bad = (reached > 0) & (reached < living)
        if bad.any() and s.span.start not in self.barriers:
            b = int(np.argmax(bad))
            self.barriers[s.span.start] = BarrierProblem(s.span, int(reached[b]), int(living[b] - reached[b]))

    def visit_Loop(self, s: N.Loop, mask: np.ndarray, env: dict[int, Value]) -> None:
        self.block(s.init, mask, env)
        running = self.live(mask)
        state = _LoopState(np.zeros(self.n, bool), np.zeros(self.n, bool), s.span)
        self.loops.append(state)
        try:
            first = True
            while True:
                running = running & ~self.frames[-1].returned & ~state.broke
                if s.cond is not None and (s.test_first or not first):
                    if not running.any():
                        break
                    running = running & _truth(self.eval(s.cond, running, env))
                if not running.any():
                    break
                self.count(running)  # the test is a statement run: an endless loop with an empty body ends too
                state.continued = np.zeros(self.n, bool)
                self.block(s.body, running, env)
                state.continued = np.zeros(self.n, bool)
                self.block(s.step, running, env)
                state.iterations += 1
                first = False
        finally:
            self.loops.pop()

    # ------------------------------------------------------------------ memory
    def load(self, addrs: np.ndarray, mask: np.ndarray, t: T.CType) -> Value:
        if isinstance(t, T.StructType):
            return {f.name: self.load(addrs + (f.offset or 0), mask, f.type) for f in t.fields if f.offset is not None}
        dt = dtype_of(t)
        if dt is None:
            self.note(f"a value of type {t} was read as 0 (its layout is unknown)")
            return np.zeros(self.n, np.int32)
        if np.count_nonzero(mask) == self.n:  # every thread (most loads): no gather and scatter of the lanes
            return self.memory.read(addrs, dt)
        idx = np.nonzero(mask)[0]
        out = np.zeros(self.n, dt)
        if len(idx):
            out[idx] = self.memory.read(addrs[idx], dt)
        return out

    def store(self, addrs: np.ndarray, mask: np.ndarray, value: Value, t: T.CType) -> None:
        if isinstance(t, T.StructType):
            if not isinstance(value, dict):
                return
            for f in t.fields:
                if f.offset is not None and f.name in value:
                    self.store(addrs + f.offset, mask, value[f.name], f.type)
            return
        dt = dtype_of(t)
        if dt is None or isinstance(value, dict):
            return
        idx = np.nonzero(mask)[0]
        if len(idx) == self.n:  # every thread: no gather of the lanes
            self.memory.write(addrs, _convert(value, t), dt)
        elif len(idx):
            self.memory.write(addrs[idx], _convert(value, t)[idx], dt)

    def atomic(self, call: N.Call, mask: np.ndarray, env: dict[int, Value]) -> Value:
        access = call.atomic
        assert access is not None
        args = [self.eval(a, mask, env) for a in call.args]
        addrs = self.eval(access.address, mask, env)
        self.on_access(access, addrs, mask)
        t = access.element
        dt = dtype_of(t)
        if dt is None:
            return np.zeros(self.n, np.int32)
        args = [_convert(a, t) for a in args]
        old = np.zeros(self.n, dt)
        idx = np.nonzero(mask)[0]
        if not len(idx):
            return old
        operation = builtins.BUILTINS[call.name].operation
        if operation in ("add", "sub") and args:
            return self.atomic_add(addrs[idx], idx, args[0][idx], operation == "sub", old, dt)
        update = ATOMIC_UPDATES[operation]
        current = dict(zip(addrs[idx].tolist(), self.memory.read(addrs[idx], dt)))
        for i in idx.tolist():  # one lane after another: each sees the ones before it
            a = int(addrs[i])
            cur = current[a]
            old[i] = cur
            v = args[0][i] if args else cur
            new = update(cur, v, args[1][i] if len(args) > 1 else None)
            current[a] = dt.type(new)
        keys = np.array(list(current), np.int64)
        self.memory.write(keys, np.array(list(current.values()), dt), dt)
        return old

    def atomic_add(
        self, addrs: np.ndarray, idx: np.ndarray, values: np.ndarray, subtract: bool, old: np.ndarray, dt: np.dtype
    ) -> np.ndarray:
        """atomicAdd/atomicSub, vectorised: lanes on one address are applied in lane order,
        each getting the sum of the ones before it (an exclusive prefix sum per address)."""
        v = (-values if subtract else values).astype(dt)
        order = np.argsort(addrs, kind="stable")
        a, v = addrs[order], v[order]
        unique, start, counts = np.unique(a, return_index=True, return_counts=True)
        group = np.repeat(np.arange(len(unique)), counts)
        inclusive = np.cumsum(v, dtype=dt)
        exclusive = inclusive - v
        before = exclusive[start]  # the running sum where each address's lanes begin
        base = self.memory.read(unique, dt)
        old[idx[order]] = base[group] + (exclusive - before[group])
        self.memory.write(unique, base + (inclusive[start + counts - 1] - before), dt)
        return old

    # ------------------------------------------------------------------ expressions
    def eval(self, e: N.Expr, mask: np.ndarray, env: dict[int, Value]) -> Value:
        """The value of `e` for every thread (its `visit_<class>`); only those in `mask` access memory."""
        return self.visits[e.__class__](self, e, mask, env)

    def visit_Const(self, e: N.Const, mask: np.ndarray, env: dict[int, Value]) -> Value:
        v = e.value
        return self.full(float(v) if isinstance(v, float) else int(v), e.type)

    def visit_VarRef(self, e: N.VarRef, mask: np.ndarray, env: dict[int, Value]) -> Value:
        var = e.var
        if var.uid in env:
            return env[var.uid]
        if isinstance(var.type, T.ArrayType) or var.kind in ("shared", "global", "constant"):
            return self.address_of(var)
        if var.const_value is not None:
            return self.full(var.const_value, var.type)
        return self.zero(var.type)

    def visit_Builtin(self, e: N.Builtin, mask: np.ndarray, env: dict[int, Value]) -> Value:
        spec = builtins.BUILTINS[e.name]
        kind, axis = spec.kind, spec.axis
        if kind is BuiltinKind.WARP_SIZE:
            return self.full(self.warp, e.type)
        assert axis is not None  # the dim3 variables
        if kind is BuiltinKind.THREAD_INDEX:
            return self.thread[axis]
        if kind is BuiltinKind.BLOCK_INDEX:
            return self.block_idx[axis]
        value = (self.block_dim if kind is BuiltinKind.BLOCK_SIZE else self.grid_dim)[axis]
        return np.full(self.n, value, np.uint32)

    def visit_Unary(self, e: N.Unary, mask: np.ndarray, env: dict[int, Value]) -> Value:
        a = self.eval(e.operand, mask, env)
        if e.op == "!":
            return ~_truth(a)
        a = _convert(a, e.type)
        if e.op == "-":
            return -a if a.dtype != np.bool_ else -(a.astype(np.int32))
        if e.op == "~":
            return ~a if a.dtype.kind in "iub" else ~a.astype(np.int64)
        return a

    def visit_Select(self, e: N.Select, mask: np.ndarray, env: dict[int, Value]) -> Value:
        c = _truth(self.eval(e.cond, mask, env))
        a = _convert(self.eval(e.then, mask & c, env), e.type)
        b = _convert(self.eval(e.otherwise, mask & ~c, env), e.type)
        return _where(c, a, b)

    def visit_PtrAdd(self, e: N.PtrAdd, mask: np.ndarray, env: dict[int, Value]) -> Value:
        base = self.eval(e.base, mask, env)
        off = self.eval(e.offset, mask, env)
        return base.astype(np.int64, copy=False) + off.astype(
            np.int64, copy=False
        )  # (values are never changed in place)

    def visit_Cast(self, e: N.Cast, mask: np.ndarray, env: dict[int, Value]) -> Value:
        v = self.eval(e.operand, mask, env)
        if isinstance(e.type, T.StructType) and not isinstance(v, dict):
            return {f.name: _convert(v, f.type) for f in e.type.fields}
        return _convert(v, e.type)

    def visit_Load(self, e: N.Load, mask: np.ndarray, env: dict[int, Value]) -> Value:
        addrs = self.eval(e.access.address, mask, env)
        self.on_access(e.access, addrs, mask)
        return self.load(addrs, mask, e.access.element)

    def visit_FieldRef(self, e: N.FieldRef, mask: np.ndarray, env: dict[int, Value]) -> Value:
        base = self.eval(e.base, mask, env)
        if isinstance(base, dict) and e.name in base:
            return base[e.name]
        self.note(f"field `{e.name}` of a value warplint does not know was read as 0")
        return self.zero(e.type)

    def visit_StructValue(self, e: N.StructValue, mask: np.ndarray, env: dict[int, Value]) -> Value:
        struct = e.type if isinstance(e.type, T.StructType) else None
        values = {}
        for k, v in e.fields.items():
            declared = struct.field(k) if struct is not None else None
            values[k] = _convert(self.eval(v, mask, env), declared.type if declared else v.type)
        return values

    def zero(self, t: T.CType) -> Value:
        if isinstance(t, T.StructType):
            return {f.name: self.zero(f.type) for f in t.fields}
        return np.zeros(self.n, dtype_of(t) or np.int32)

    def visit_Binary(self, e: N.Binary, mask: np.ndarray, env: dict[int, Value]) -> Value:
        op = e.op
        a = self.eval(e.left, mask, env)
        if op in ("&&", "||"):
            ta = _truth(a)
            rest = mask & (ta if op == "&&" else ~ta)  # C evaluates the right side only here
            tb = _truth(self.eval(e.right, rest, env)) if rest.any() else np.zeros(self.n, bool)
            return (ta & tb) if op == "&&" else (ta | tb)
        b = self.eval(e.right, mask, env)
        if isinstance(a, dict) or isinstance(b, dict):
            return np.zeros(self.n, np.int32)
        if op in ("<", "<=", ">", ">=", "==", "!="):
            lt, rt = e.left.type, e.right.type
            if isinstance(lt, T.PointerType) or isinstance(rt, T.PointerType):
                common: T.CType = T.LONG
            else:
                common = arithmetic_result_type(lt, rt, "+")
            a, b = _convert(a, common), _convert(b, common)
            return _COMPARISONS[op](a, b)
        t = e.type
        dt = dtype_of(t)
        if dt is None:
            dt = np.result_type(a, b)
            if dt == np.bool_:
                dt = np.dtype(np.int32)
        if op in ("<<", ">>"):
            a = a.astype(dt, copy=False)
            if dt.kind == "f":
                a = a.astype(np.int64)
            bits = a.dtype.itemsize * 8
            sh = b.astype(np.int64) & (bits - 1)
            return np.left_shift(a, sh.astype(a.dtype)) if op == "<<" else np.right_shift(a, sh.astype(a.dtype))
        a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)  # (values are never changed in place)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("/", "%"):
            if dt.kind == "f":
                return a / b if op == "/" else np.fmod(a, b)
            zero = b == 0
            if zero.any():
                if (zero & mask).any():
                    self.note("an integer division by zero gave 0")
                b = np.where(zero, np.ones_like(b), b)
            q = np.floor_divide(a, b)
            r = a - q * b
            fix = (r != 0) & ((a < 0) != (b < 0))  # C truncates toward zero, numpy floors
            q = np.where(fix, q + 1, q)
            if op == "/":
                return np.where(zero, np.zeros_like(q), q)
            return np.where(zero, np.zeros_like(q), a - q * b)
        if op in ("&", "|", "^"):
            if dt.kind == "f":
                a, b = a.astype(np.int64), b.astype(np.int64)
            return {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op](a, b)
        self.note(f"operator {op} is not simulated (gave 0)")
        return np.zeros(self.n, dt)

    def visit_Call(self, e: N.Call, mask: np.ndarray, env: dict[int, Value]) -> Value:
        if e.atomic is not None:
            return self.atomic(e, mask, env)
        spec = builtins.lookup(e.name)
        if spec is not None and spec.kind is BuiltinKind.MIN_MAX and len(e.args) == 2:
            a = _convert(self.eval(e.args[0], mask, env), e.type)
            b = _convert(self.eval(e.args[1], mask, env), e.type)
            return np.minimum(a, b) if spec.operation == "min" else np.maximum(a, b)
        fn = self.module.functions.get(e.name)
        if fn is None or self.depth >= MAX_INLINE_DEPTH:
            self.note(f"call to `{e.name}` is not simulated (its result is 0)")
            for a in e.args:
                self.eval(a, mask, env)
            return self.zero(e.type)
        args = [self.eval(a, mask, env) for a in e.args]
        inner: dict[int, Value] = {}
        for p, a in zip(fn.params, args):
            inner[p.uid] = _convert(a, p.type)
        self.frames.append(_Frame(np.zeros(self.n, bool)))
        saved_loops, self.loops = self.loops, []  # a `break` in the callee is its own
        self.depth += 1
        try:
            self.block(fn.body, mask, inner)
        finally:
            self.depth -= 1
            self.loops = saved_loops
            frame = self.frames.pop()
        if frame.value is None:
            return self.zero(fn.returns)
        return _convert(frame.value, fn.returns)

    def visit_Opaque(self, e: N.Opaque, mask: np.ndarray, env: dict[int, Value]) -> Value:
        ops = [self.eval(o, mask, env) for o in e.operands]
        callee = e.callee if e.kind is OpaqueKind.CALL else None
        spec = builtins.lookup(callee) if callee is not None else None
        kind = spec.kind if spec is not None else None
        if kind is BuiltinKind.SHUFFLE:
            return self.shuffle(spec, ops, e.type)  # type: ignore[arg-type]
        if kind is BuiltinKind.POPCOUNT and ops:
            v = ops[0].astype(np.uint64)
            return np.array([bin(int(x)).count("1") for x in v], np.int32)
        if kind is BuiltinKind.VOTE and ops:
            return self.vote(spec.operation, _truth(ops[-1]), mask)  # type: ignore[union-attr]
        if kind is BuiltinKind.ASSUME:
            return self.zero(e.type)  # a fact stated for the compiler: no value, no effect
        value = self.math(callee, ops, e.type) if callee is not None else None
        if value is not None:
            return value
        self.note(f"`{e.reason}` is not simulated (its value is 0)")
        return self.zero(e.type)

    def math(self, callee: str, ops: list[Value], t: T.CType) -> Value:
        """A math function's value (`sqrtf(x)`, `__expf(x)`), in the precision of its spelling
        where its type does not say; None for a function the simulator does not compute."""
        spec = builtins.math_function(callee)
        fn = MATH_OPERATIONS.get(spec.operation) if spec is not None else None
        if fn is None or not ops or any(isinstance(o, dict) for o in ops):
            return None
        dt = dtype_of(t)
        if dt is None or dt.kind != "f":
            dt = np.dtype(np.float32) if builtins.single_precision(callee) else np.dtype(np.float64)
        args = [o.astype(dt) for o in ops]
        return np.asarray(fn(*args)).astype(dt)

    def shuffle(self, spec: builtins.BuiltinSpec, ops: list[Value], t: T.CType) -> Value:
        if spec.takes_mask:
            ops = ops[1:]  # the member mask
        if len(ops) < 2 or isinstance(ops[0], dict):
            return self.zero(t)
        value, arg = ops[0], ops[1].astype(np.int64)
        warp = self.warp
        width = ops[2].astype(np.int64) if len(ops) > 2 else np.full(self.n, warp, np.int64)
        width = np.where((width > 0) & (width <= warp), width, warp)
        src = _shuffle_source(spec.operation, self.lane, arg, width)
        index = np.minimum(np.arange(self.n) - self.lane + src, self.n - 1)
        return value[index]

    def vote(self, operation: str, pred: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """`__ballot_sync`, `__any_sync`, `__all_sync` (`operation` ballot, any, all) over the
        active lanes of each warp."""
        warp = self.warp
        pad = -self.n % warp
        p = np.concatenate([pred & mask, np.zeros(pad, bool)]).reshape(-1, warp)
        if operation == "ballot":  # one bit a lane: a warp wider than 32 lanes needs 64 bits
            bits = (p.astype(np.uint64) << np.arange(warp, dtype=np.uint64)).sum(axis=1)
            return np.repeat(bits.astype(np.uint32 if warp <= 32 else np.uint64), warp)[: self.n]
        if operation == "any":
            per = p.any(axis=1)
        else:  # every active lane's predicate holds
            m = np.concatenate([mask, np.zeros(pad, bool)]).reshape(-1, warp)
            per = ~(m & ~p).any(axis=1)
        return np.repeat(per.astype(np.int32), warp)[: self.n]

    def assign_field(self, current: Value, path: tuple[str, ...], value: Value, mask: np.ndarray) -> Value:
        current = dict(current) if isinstance(current, dict) else {}
        if len(path) == 1:
            current[path[0]] = _where(mask, value, current.get(path[0]))
        else:
            current[path[0]] = self.assign_field(current.get(path[0]), path[1:], value, mask)
        return current
