"""Launch configurations: from host launches in the file, the command line, `__launch_bounds__`.

Host functions are run by a tiny constant interpreter (integers, floats, `dim3`), in order,
so `dim3 block(BLOCK, BLOCK); int n = 64; k<<<N / n, block>>>(...)` gives block (16, 16, 1)
and grid (N/64, 1, 1) when N is known. What cannot be evaluated stays unknown (None); a kernel
with no known block is analysed with a stated default, never silently.
"""

from __future__ import annotations

import fnmatch
import math
import os
from typing import Any

from analyzer import budget
from analyzer.analysis.guards import (
    Fact,
    counter_facts,
    facts_of_condition,
    is_exit,
    launch_facts,
    required_facts,
    scaled_facts,
    stated,
    telling,
)
from analyzer.analysis.results import LaunchConfig
from analyzer.diagnostics import Diagnostic, Severity, Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.lower_scopes import fold_binary
from analyzer.ir.nodes import OpaqueKind
from analyzer.ir.visit import Visitor
from analyzer.launch_limits import MAX_BLOCK, MAX_BLOCK_THREADS, MAX_GRID, dims_problem
from analyzer.records import record, replace

DEFAULT_BLOCKS = {1: (256, 1, 1), 2: (32, 8, 1), 3: (32, 4, 4)}
#: A host loop whose condition is known at each test is run this many iterations at most (each
#: distinct launch in it is analysed); a longer one, or one with an unknown condition, is not
#: iterated: what it assigns becomes unknown and its launches are taken with what is known.
MAX_HOST_LOOP = 64
#: Iterations of host loops one host function runs at most, nested loops together.
MAX_HOST_ITERATIONS = 256

Value = Any  # int | float | dict of dim3/struct fields | FunctionAddress | None


@record
class FunctionAddress:
    """A function pointer's value in host code (`kernel = &copy;`): the function it holds."""

    name: str


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


MAX_HOST_CALL_DEPTH = 8  # host functions calling host functions are followed this deep


class HostInterpreter(Visitor):
    """Evaluates host code just enough to know launch configurations and scalar arguments.

    A call to another host function of the file (`MatmulCoreV2(a, b, out, M, N, P)` from
    `main`) runs that function with its parameters bound to the arguments' values, so the
    sizes set in `main` reach the launches inside it."""

    def __init__(
        self,
        functions: dict[str, N.Function] | None = None,
        depth: int = 0,
        pointed: dict[int, tuple[str, ...]] | None = None,
    ) -> None:
        self.env: dict[int, Value] = {}
        # each launch made: its statement, the kernel launched (a pointer's value, else the name
        # written), grid, block, arguments and the facts guards stated of them
        self.launches: list[
            tuple[N.LaunchStmt, str, Value, Value, tuple[Value, ...], tuple[tuple[int, Fact], ...]]
        ] = []
        # the functions host code ever assigns to each function pointer (uid), for a launch
        # through one whose value at the launch is not known (`function_pointers`)
        self.pointed = pointed or {}
        # what guards and asserts state of variables the code does not fix (`analysis.guards`),
        # by uid: dropped when the variable is assigned
        self.facts: dict[int, list[Fact]] = {}
        self.iterations = 0  # host loop iterations run, nested ones included (MAX_HOST_ITERATIONS)
        # where a variable whose value is not known got it (uid -> words, the place), and the
        # arguments of each launch left unknown with theirs (id of the launch -> (position, words, place))
        self.origins: dict[int, tuple[str, Span]] = {}
        self.unknown_args: dict[int, tuple[tuple[int, str, Span], ...]] = {}
        self.functions = functions or {}
        self.depth = depth
        # a local whose address was passed on (`cudaMemcpy(&n, ...)`) may have changed unseen:
        # a launch computed from it is not held to CUDA's limits (its value is only a guess)
        self.escaped: set[str] = set()  # names of such locals
        self.escaped_at: dict[str, Span] = {}  # where each first had its address passed on
        self.guessed: set[int] = set()  # uids of variables computed from them
        self.uncertain: set[int] = set()  # id() of the launches whose configuration is a guess

    def run(self, stmts: list[N.Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: N.Stmt) -> None:
        budget.spend()  # a host statement run (analyzer.budget)
        guessed = [self._guessed(e) for e in _own_expressions(s)]  # (notes the addresses passed on first)
        if isinstance(s, N.Assign):
            if guessed[0]:
                self.guessed.add(s.var.uid)
            elif not s.field:
                self.guessed.discard(s.var.uid)
        elif isinstance(s, N.LaunchStmt) and any(guessed[: len(s.config)]):
            self.uncertain.add(id(s))
        self.visits[s.__class__](self, s)

    def visit_Assign(self, s: N.Assign) -> None:
        value = self.expr(s.value)
        self.facts.pop(s.var.uid, None)
        carried = self.facts_of(s.value) if value is None and not s.field else []
        if carried:  # `stride = size / 2` of a size known by its facts: what holds of it holds here
            self.facts[s.var.uid] = carried
        origin = self.origin_of(s.value) if value is None and not s.field else None
        if origin is not None:
            self.origins[s.var.uid] = origin
        elif not s.field:
            self.origins.pop(s.var.uid, None)
        if s.field:
            current = self.env.get(s.var.uid)
            if not isinstance(current, dict):
                current = {}
            current = dict(current)
            current[s.field[0]] = value
            self.env[s.var.uid] = current
        else:
            self.env[s.var.uid] = value

    def visit_LaunchStmt(self, s: N.LaunchStmt) -> None:
        grid = self.expr(s.config[0]) if len(s.config) > 0 else None
        block = self.expr(s.config[1]) if len(s.config) > 1 else None
        args = tuple(self.expr(a) for a in s.args)
        facts = tuple((i, f) for i, a in enumerate(s.args) for f in stated(self.facts_of(a)))
        origins = [(i, self.origin_of(a) if self.expr(a) is None else None) for i, a in enumerate(s.args)]
        self.unknown_args[id(s)] = tuple((i, o[0], o[1]) for i, o in origins if o is not None)
        for kernel in self.launched(s):
            self.launches.append((s, kernel, grid, block, args, facts))

    def launched(self, s: N.LaunchStmt) -> tuple[str, ...]:
        """The kernels a launch starts: the one it names, or through a function pointer the one
        the pointer holds there, else every function host code assigns to it (it may hold any)."""
        if s.pointer is None:
            return (s.kernel,)
        value = self.expr(s.pointer)
        if isinstance(value, FunctionAddress):
            return (value.name,)
        if isinstance(s.pointer, N.VarRef) and s.pointer.var.uid in self.pointed:
            return self.pointed[s.pointer.var.uid]
        return (s.kernel,)

    def origin_of(self, e: N.Expr) -> tuple[str, Span] | None:
        """Where the value of `e`, not known, comes from: a variable's own origin, a call's result,
        a local written through its address; None when nothing says."""
        for x in _preorder(e):
            if isinstance(x, N.VarRef) and x.var.uid in self.origins:
                return self.origins[x.var.uid]
            if isinstance(x, N.VarRef) and x.var.name in self.escaped:
                return f"written through its address (`&{x.var.name}`)", self.escaped_at.get(x.var.name, x.span)
            if isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee not in (None, *self.functions):
                return f"returned by `{x.callee}`", x.span
            if isinstance(x, N.Load):
                return "read from memory", x.span
        return None

    def facts_of(self, e: N.Expr) -> list[Fact]:
        """What guards and loops stated of the value of `e` when it is not known: of the variable
        it reads, or of a variable scaled by a constant (`size / 2`, `n * 4`)."""
        if self.expr(e) is not None:
            return []
        if isinstance(e, N.VarRef):
            return self.facts.get(e.var.uid, [])
        if isinstance(e, N.Cast) and isinstance(e.type, T.ScalarType) and not e.type.is_float:
            return self.facts_of(e.operand)
        if isinstance(e, N.Binary):
            c = self.expr(e.right)
            if isinstance(c, int) and not isinstance(c, bool):
                return telling(scaled_facts(self.facts_of(e.left), e.op, c))
        return []

    def state(self, cond: N.Expr, holds: bool) -> None:
        """Keeps the facts `cond` states of variables when it is `holds` (an assert, a guard)."""
        for var, fact in facts_of_condition(cond, holds, self.expr):
            known = self.facts.setdefault(var.uid, [])
            if fact not in known:
                known.append(fact)

    def visit_If(self, s: N.If) -> None:
        cond = self.expr(s.cond)
        if cond is not None and not isinstance(cond, dict):
            self.run(s.then if cond else s.otherwise)
        else:
            before = dict(self.env)
            facts = self.facts
            for branch, holds in ((s.then, True), (s.otherwise, False)):
                # inside a branch its condition holds (fails): `if (stride >= 1024) k<<<...>>>(stride)`
                self.facts = {uid: list(f) for uid, f in facts.items()}
                self.state(s.cond, holds)
                self.run(branch)
            assigned = {x.var.uid for x in N.walk_statements(s.then + s.otherwise) if isinstance(x, N.Assign)}
            self.facts = {uid: f for uid, f in facts.items() if uid not in assigned}
            for uid in set(self.env) | set(before):
                if self.env.get(uid) != before.get(uid):
                    self.env[uid] = None
            # past a branch that ends the program (`if (w % 32) exit(1);`), its condition failed
            if is_exit(s.then) and not is_exit(s.otherwise):
                self.state(s.cond, False)
            elif is_exit(s.otherwise) and not is_exit(s.then):
                self.state(s.cond, True)

    def visit_Loop(self, s: N.Loop) -> None:
        self.run(s.init)
        if self._iterated(s):
            return
        counters = self._counter_facts(s)
        for st in s.body + s.step:
            self._forget_writes(st)
        # launches inside host loops are still collected, with what is known: the facts that
        # hold at every iteration (its counters', its condition) hold for them, not after
        saved, facts = dict(self.env), self.facts
        self.facts = {uid: list(f) for uid, f in facts.items()}
        self.facts.update(counters)
        if s.cond is not None and s.test_first:
            self.state(s.cond, True)
        self.run(s.body)
        self.env, self.facts = saved, facts
        for st in s.body + s.step:
            self._forget_writes(st)

    def _counter_facts(self, s: N.Loop) -> dict[int, list[Fact]]:
        """What holds at every iteration of a loop not run of each counter it steps by a constant
        (`x = x * 2`, `x <<= 1`, `x >>= 1`, `x += 32`) and assigns nowhere else: from its first
        value or the facts of it (`guards.counter_facts`), by uid."""
        body_writes = {x.var.uid for x in N.walk_statements(s.body) if isinstance(x, N.Assign)}
        out: dict[int, list[Fact]] = {}
        for st in s.step:
            if not isinstance(st, N.Assign) or st.field or st.var.uid in body_writes:
                continue
            step = st.value
            if not (isinstance(step, N.Binary) and isinstance(step.left, N.VarRef) and step.left.var.uid == st.var.uid):
                continue
            c = self.expr(step.right)
            if not isinstance(c, int) or isinstance(c, bool):
                continue
            first = self.env.get(st.var.uid)
            start = [("value", first)] if isinstance(first, int) and not isinstance(first, bool) else []
            facts = telling(counter_facts(start or self.facts.get(st.var.uid, []), step.op, c))
            if facts:
                out[st.var.uid] = facts
        return out

    def _iterated(self, s: N.Loop) -> bool:
        """Runs a host loop iteration by iteration when its condition is known at each test
        and it ends within `MAX_HOST_LOOP` iterations (`for (stride = 2; stride <= n; stride
        <<= 1) k<<<g, b>>>(d, stride)`: each distinct launch is analysed); False, and the
        environment as it was, when it cannot be (a condition not known, a jump out of the
        body, too many iterations)."""
        if s.cond is None or not self._launches_in(s.body) or self.iterations >= MAX_HOST_ITERATIONS:
            return False  # a loop that launches nothing (a reference computation) need not be run
        if any(isinstance(x, (N.Break, N.Return, N.Continue)) for x in N.walk_statements(s.body)):
            return False
        saved_env, saved_launches, saved_iterations = dict(self.env), len(self.launches), self.iterations
        for count in range(MAX_HOST_LOOP + 1):
            cond = self.expr(s.cond) if s.test_first or count else 1
            if cond is None or isinstance(cond, dict) or count == MAX_HOST_LOOP:
                if cond is not None and not isinstance(cond, dict) and not cond:
                    return True  # the loop ended on its last allowed test
                self.env, self.iterations = saved_env, saved_iterations  # what a loop not run spent is given back
                del self.launches[saved_launches:]
                return False
            if not cond:
                return True
            self.iterations += 1
            self.run(s.body)
            self.run(s.step)
        return False  # not reached: the range ends at the bound's test

    def _launches_in(self, stmts: list[N.Stmt]) -> bool:
        """Whether `stmts` launch a kernel, themselves or through a host function they call."""
        return any(
            isinstance(x, N.LaunchStmt)
            or (isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee in self.functions)
            for x in N.walk_nodes(stmts)
        )

    def visit_Skipped(self, s: N.Skipped) -> None:
        for v in s.writes:
            self.env[v.uid] = None

    def visit_Eval(self, s: N.Eval) -> None:
        self.expr(s.expr)
        e = s.expr
        if isinstance(e, N.Opaque) and e.callee == "assert" and len(e.operands) == 1:
            self.state(e.operands[0], True)

    def visit_Store(self, s: N.Stmt) -> None:
        pass  # host code's stores, returns, jumps and barriers launch nothing

    visit_Return = visit_Break = visit_Continue = visit_Sync = visit_Store

    def _guessed(self, e: N.Expr) -> bool:
        """Whether `e` reads a local whose address was passed on, or a variable computed from
        one; the addresses `e` itself passes on are noted."""
        stack: list[N.Expr] = [e]
        found = False
        while stack:
            x = stack.pop()
            if isinstance(x, N.Opaque) and x.kind == OpaqueKind.LOCAL_ADDRESS and x.variable is not None:
                self.escaped.add(x.variable.name)
                self.escaped_at.setdefault(x.variable.name, x.span)
            elif isinstance(x, N.VarRef) and (x.var.name in self.escaped or x.var.uid in self.guessed):
                found = True
            stack.extend(N.sub_expressions(x))
        return found

    def call(
        self,
        fn: N.Function,
        args: list[Value],
        facts: list[list[Fact]] | None = None,
        origins: dict[int, tuple[str, Span]] | None = None,
    ) -> None:
        if self.depth >= MAX_HOST_CALL_DEPTH:
            return
        inner = HostInterpreter(self.functions, self.depth + 1, self.pointed)
        inner.env = {p.uid: a for p, a in zip(fn.params, args)}
        inner.facts = {p.uid: list(f) for p, f in zip(fn.params, facts or []) if f}
        inner.origins = dict(origins or {})
        inner.iterations = self.iterations  # one budget of host loop iterations, calls included
        inner.run(fn.body)
        self.launches.extend(inner.launches)
        self.uncertain.update(inner.uncertain)
        self.unknown_args.update(inner.unknown_args)
        self.iterations = inner.iterations

    def _forget_writes(self, s: N.Stmt) -> None:
        if isinstance(s, N.Assign):
            self.env[s.var.uid] = None
            self.facts.pop(s.var.uid, None)
        elif isinstance(s, N.If):
            for x in s.then + s.otherwise:
                self._forget_writes(x)
        elif isinstance(s, N.Loop):
            for x in s.init + s.body + s.step:
                self._forget_writes(x)

    def expr(self, e: N.Expr) -> Value:
        try:
            return self._expr(e)
        except (ZeroDivisionError, TypeError, ValueError, OverflowError):
            return None

    def _expr(self, e: N.Expr) -> Value:
        return self.visits[e.__class__](self, e)

    def visit_Const(self, e: N.Const) -> Value:
        return e.value

    def visit_VarRef(self, e: N.VarRef) -> Value:
        if e.var.const_value is not None and e.var.uid not in self.env:
            return e.var.const_value
        return self.env.get(e.var.uid)

    def visit_StructValue(self, e: N.StructValue) -> Value:
        return {k: self.expr(v) for k, v in e.fields.items()}

    def visit_FieldRef(self, e: N.FieldRef) -> Value:
        base = self.expr(e.base)
        return base.get(e.name) if isinstance(base, dict) else None

    def visit_Cast(self, e: N.Cast) -> Value:
        v = self.expr(e.operand)
        if isinstance(e.type, T.ScalarType) and v is not None and not isinstance(v, dict):
            return float(v) if e.type.is_float else int(v)
        if isinstance(e.type, T.StructType) and e.type.name == "dim3" and isinstance(v, (int, float)):
            return {"x": int(v), "y": 1, "z": 1}
        return v

    def visit_Binary(self, e: N.Binary) -> Value:
        a, b = self.expr(e.left), self.expr(e.right)
        if a is None or b is None or isinstance(a, dict) or isinstance(b, dict):
            return None
        return fold_binary(e.op, a, b)

    def visit_Unary(self, e: N.Unary) -> Value:
        a = self.expr(e.operand)
        if a is None or isinstance(a, dict):
            return None
        return {"-": lambda: -a, "!": lambda: int(not a), "~": lambda: ~int(a)}[e.op]()

    def visit_Select(self, e: N.Select) -> Value:
        c = self.expr(e.cond)
        if c is None or isinstance(c, dict):
            return None
        return self.expr(e.then if c else e.otherwise)

    def visit_Call(self, e: N.Call) -> Value:
        spec = builtins.lookup(e.name)
        if spec is not None and spec.kind is BuiltinKind.MIN_MAX and len(e.args) == 2:
            a, b = self.expr(e.args[0]), self.expr(e.args[1])
            if a is None or b is None:
                return None
            return min(a, b) if spec.operation == "min" else max(a, b)
        return None

    def visit_Opaque(self, e: N.Opaque) -> Value:
        if e.kind is OpaqueKind.FUNCTION and e.callee is not None:
            return FunctionAddress(e.callee)
        if e.kind is not OpaqueKind.CALL or e.callee is None:
            return None
        callee = self.functions.get(e.callee)
        if callee is not None:
            values = [self.expr(op) for op in e.operands]
            origins = {
                p.uid: o
                for p, op, v in zip(callee.params, e.operands, values)
                if v is None and (o := self.origin_of(op)) is not None
            }
            self.call(callee, values, [self.facts_of(op) for op in e.operands], origins)
            return None
        spec = builtins.math_function(e.callee)
        rounding = _ROUNDING.get(spec.operation) if spec is not None else None
        if rounding is not None and len(e.operands) == 1:
            v = self.expr(e.operands[0])
            if isinstance(v, (int, float)):
                return int(rounding(v))
        return None

    def visit_Builtin(self, e: N.Expr) -> Value:
        return None  # host code has no thread, no memory it reads, no pointer it follows

    visit_Load = visit_PtrAdd = visit_Builtin


#: The math functions host code rounds a grid size with (`ceil(n / 256.0)`), by operation.
_ROUNDING = {"ceil": math.ceil, "floor": math.floor}


def _preorder(e: N.Expr) -> list[N.Expr]:
    """`e` and the expressions inside it, outermost and leftmost first."""
    out: list[N.Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(reversed(list(N.sub_expressions(x))))
    return out


def _own_expressions(s: N.Stmt) -> list[N.Expr]:
    """The expressions a statement evaluates itself (not those of the statements inside it);
    a launch's configuration first."""
    if isinstance(s, N.Assign):
        return [s.value]
    if isinstance(s, N.LaunchStmt):
        return [*s.config, *s.args]
    if isinstance(s, N.Eval):
        return [s.expr]
    if isinstance(s, (N.If, N.Loop)) and s.cond is not None:
        return [s.cond]
    return []


def base_name(name: str) -> str:
    """A kernel's name without namespace and template arguments: `ns::k<float>` -> `k`."""
    return name.split("<", 1)[0].rsplit("::", 1)[-1]


def _host_calls(stmts: list[N.Stmt]) -> set[str]:
    """The names of the functions that host code calls (the opaque calls it makes)."""
    return {
        x.callee
        for x in N.walk_nodes(stmts)
        if isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee is not None
    }


def uses_dimensions(kernel: N.Function, module: N.Module) -> int:
    """How many thread dimensions the kernel (and what it calls) reads: 1, 2 or 3."""
    dims = 1
    seen: set[str] = set()
    stack = [kernel]
    while stack:
        fn = stack.pop()
        if fn.name in seen:
            continue
        seen.add(fn.name)
        for spec in _builtins_in(fn.body):
            if spec.kind in (BuiltinKind.THREAD_INDEX, BuiltinKind.BLOCK_SIZE) and spec.axis:
                dims = max(dims, spec.axis + 1)
        stack.extend(module.functions[c] for c in fn.calls if c in module.functions)
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
    called = {name for fn in module.host for name in _host_calls(fn.body) if name in functions and name != fn.name}
    pointed = function_pointers(module.host)
    out: list[HostLaunch] = []
    for host in module.host:
        if host.name in called:
            continue  # run from its callers, with their arguments
        interp = HostInterpreter(functions, pointed=pointed)
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


def function_pointers(host: list[N.Function]) -> dict[int, tuple[str, ...]]:
    """The functions host code assigns to each variable (by uid), in the order written:
    `kernel = &copy;` ... `kernel = &transposeNaive;` makes `kernel` a pointer that may hold
    either, whatever the branches and loops around the assignments."""
    out: dict[int, list[str]] = {}
    for fn in host:
        for s in N.walk_statements(fn.body):
            if isinstance(s, N.Assign) and not s.field:
                names = [
                    x.callee for x in _preorder(s.value) if isinstance(x, N.Opaque) and x.kind is OpaqueKind.FUNCTION
                ]
                held = out.setdefault(s.var.uid, []) if names else []
                held.extend(n for n in names if n is not None and n not in held)
    return {uid: tuple(names) for uid, names in out.items()}


def launches_kernel(launch: HostLaunch, kernel: N.Function) -> bool:
    """Whether `launch` launches `kernel` (its name, and its template arguments when it has some)."""
    if base_name(launch.kernel) != base_name(kernel.name):
        return False
    return not kernel.template_args or launch.template_args == tuple(str(a) for a in kernel.template_args)


LaunchKey = tuple[str, tuple[str, ...] | None]  # (base name, template arguments; None: any)
_last_index: list[tuple[N.Module, dict[LaunchKey, list[HostLaunch]]]] = []  # the last module's


def launch_index(module: N.Module) -> dict[LaunchKey, list[HostLaunch]]:
    """The host launches of `module` by kernel: under (base name, template arguments) and under
    (base name, None) for a kernel that is no template instance, each in the host code's order.
    The host code is run once per module, not once per kernel: 1,900 template instantiations
    each launched once ran it 1,900 times and matched 1,900 x 1,900 launches. The last
    module's index is kept (api asks for each kernel of one module in turn)."""
    if _last_index and _last_index[0][0] is module:
        return _last_index[0][1]
    index: dict[LaunchKey, list[HostLaunch]] = {}
    for launch in host_launches(module):
        name = base_name(launch.kernel)
        index.setdefault((name, None), []).append(launch)
        index.setdefault((name, launch.template_args), []).append(launch)
    _last_index[:] = [(module, index)]
    return index


def kernel_launches(module: N.Module, kernel: N.Function) -> list[HostLaunch]:
    """The host launches of `module` that launch `kernel` (`launches_kernel`), in order."""
    args = tuple(str(a) for a in kernel.template_args) if kernel.template_args else None
    return launch_index(module).get((base_name(kernel.name), args), [])


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
    table: KernelTable | None = None,
) -> list[LaunchConfig]:
    """Every configuration the kernel is analysed for (`_launch_configs`); a per-kernel table
    of the configuration (`table`) gives the block and grid in place of the host's launches
    where it names them, and its parameters and facts hold for every configuration."""
    if table is None:
        return _launch_configs(module, kernel, block, grid, params, line_of, problems, foreign, header)
    params = {**(params or {}), **dict(table.params)}
    grid = table.grid or grid
    if table.block is not None:
        configs = [LaunchConfig(table.block, grid, table.origin, False, tuple(sorted(params.items())))]
    else:
        configs = _launch_configs(module, kernel, block, grid, params, line_of, problems, foreign, header)
    return [_with_table_facts(c, table) for c in configs]


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
    launches = [*kernel_launches(module, kernel), *(x for x in foreign if launches_kernel(x, kernel))]
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
