"""The host interpreter: host code run just enough to know what each launch gets.

Host functions are run by a tiny constant interpreter (integers, floats, `dim3` and struct
fields, function pointers), in order, so `dim3 block(BLOCK, BLOCK); int n = 64; k<<<N / n,
block>>>(...)` gives block (16, 16, 1) and grid (N/64, 1, 1) when N is known. What cannot be
evaluated stays unknown (None), with the facts that guards, branches and loops state of it
(`analysis.guards`) and where it came from. `analysis.launch` turns its launches into
launch configurations.

Only what can reach a launch is run: a host function that launches nothing, itself or through
the functions it calls (`launching_functions`), is not run when called, and a loop whose body
reaches no launch (a CPU reference nest, `for i, j, k < 256`) is not iterated: what it assigns
becomes unknown, as with any loop not iterated.
"""

from __future__ import annotations

import math
from typing import Any

from analyzer import budget
from analyzer.analysis.guards import (
    Fact,
    counter_facts,
    facts_of_condition,
    is_exit,
    scaled_facts,
    stated,
    telling,
)
from analyzer.analysis.memo import per_node, remember
from analyzer.diagnostics import Span
from analyzer.ir import builtins
from analyzer.ir import nodes as N
from analyzer.ir import types as T
from analyzer.ir.builtins import BuiltinKind
from analyzer.ir.lower_scopes import fold_binary
from analyzer.ir.nodes import OpaqueKind
from analyzer.ir.visit import Visitor
from analyzer.records import record

#: A host loop whose condition is known at each test is run this many iterations at most (each
#: distinct launch in it is analysed); a longer one, or one with an unknown condition, is not
#: iterated: what it assigns becomes unknown and its launches are taken with what is known.
MAX_HOST_LOOP = 64
#: `_runs_past_limit` by the loop (its id, kept with the answer), its counter's first value and
#: the values of the other variables its condition and step read: what the answer depends on
#: (evaluating host expressions spends no budget step). threadFenceReduction.cu asks it of one
#: loop 53 times, 64 tests each (py-spy, 2026-11-28: 9% of the file).
_PAST_LIMIT: dict[tuple, tuple[N.Loop, bool]] = {}
#: Iterations of host loops one host function runs at most, nested loops together.
MAX_HOST_ITERATIONS = 256

Value = Any  # int | float | dict of dim3/struct fields | FunctionAddress | None


@record
class FunctionAddress:
    """A function pointer's value in host code (`kernel = &copy;`): the function it holds."""

    name: str


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
        reaching: frozenset[str] | None = None,
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
        self.launching: dict[tuple[int, int], bool] = {}  # launches_in, by the first statement's id and the count
        # what guards and asserts state of variables the code does not fix (`analysis.guards`),
        # by uid: dropped when the variable is assigned
        self.facts: dict[int, list[Fact]] = {}
        self.iterations = 0  # host loop iterations run, nested ones included (MAX_HOST_ITERATIONS)
        # where a variable whose value is not known got it (uid -> words, the place), and the
        # arguments of each launch left unknown with theirs (id of the launch -> (position, words, place))
        self.origins: dict[int, tuple[str, Span]] = {}
        self.unknown_args: dict[int, tuple[tuple[int, str, Span], ...]] = {}
        self.functions = functions or {}
        # the host functions that can reach a launch (`launching_functions`): a call of any other
        # has nothing to show, and a loop that calls only those is not run iteration by iteration
        self.reaching = launching_functions(self.functions) if reaching is None else reaching
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
        guessed = [self._guessed(e) for e in own_expressions(s)]  # (notes the addresses passed on first)
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
        carried = self.facts_of(s.value) if value is None and not s.field and self.scales_stated(s.value) else []
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
        for x in preorder(e):
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
        if not self.facts or self.runs_host_code(e) or self.expr(e) is not None:
            return []  # (evaluating it again would run the host functions it calls again)
        if isinstance(e, N.VarRef):
            return self.facts.get(e.var.uid, [])
        if isinstance(e, N.Cast) and isinstance(e.type, T.ScalarType) and not e.type.is_float:
            return self.facts_of(e.operand)
        if isinstance(e, N.Binary):
            c = self.expr(e.right)
            if isinstance(c, int) and not isinstance(c, bool):
                return telling(scaled_facts(self.facts_of(e.left), e.op, c))
        return []

    def scales_stated(self, e: N.Expr) -> bool:
        """Whether `e` is a variable with facts, or one scaled by constants (`size / 2`): cheap,
        it evaluates nothing (host loops assign unknown values by the thousand)."""
        while isinstance(e, (N.Binary, N.Cast)):
            e = e.left if isinstance(e, N.Binary) else e.operand
        return isinstance(e, N.VarRef) and e.var.uid in self.facts

    def runs_host_code(self, e: N.Expr) -> bool:
        """Whether evaluating `e` calls a host function of the program (which the interpreter runs)."""
        return any(
            isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee in self.functions for x in preorder(e)
        )

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
            self._run_branches(s)
            for uid in set(self.env) | set(before):
                if self.env.get(uid) != before.get(uid):
                    self.env[uid] = None
            # past a branch that ends the program (`if (w % 32) exit(1);`), its condition failed
            if is_exit(s.then) and not is_exit(s.otherwise):
                self.state(s.cond, False)
            elif is_exit(s.otherwise) and not is_exit(s.then):
                self.state(s.cond, True)

    def _run_branches(self, s: N.If) -> None:
        """Both branches of an if whose condition is not known, one after the other, as before.
        Inside a branch that launches, its condition holds (fails) too: `if (stride >= 1024)
        k<<<...>>>(stride)` gives `stride` a lower bound there, and only there."""
        stating = not self.runs_host_code(s.cond)  # evaluated again: only when that runs no host function
        for branch, holds in ((s.then, True), (s.otherwise, False)):
            added: list[tuple[int, Fact]] = []
            if stating and self.launches_in(branch):
                for var, fact in facts_of_condition(s.cond, holds, self.expr):
                    known = self.facts.setdefault(var.uid, [])
                    if fact not in known:
                        known.append(fact)
                        added.append((var.uid, fact))
            self.run(branch)
            for uid, fact in added:  # what the branch did not drop by assigning
                if fact in self.facts.get(uid, []):
                    self.facts[uid].remove(fact)

    def visit_Loop(self, s: N.Loop) -> None:
        self.run(s.init)
        if self._iterated(s):
            return
        counters = self._counter_facts(s) if self.launches_in(s.body) else {}
        for st in s.body + s.step:
            self._forget_writes(st)
        # launches inside host loops are still collected, with what is known: what holds of its
        # counters at every iteration holds for them, not after. (Not its condition: a bound
        # such as `i < n - 1` only narrows the values tried, and facts cost the analysis its
        # remembered warp walks, `costing.walk_key`: polybench 3DCONV's 254 launches of one
        # loop took minutes.)
        saved, facts = dict(self.env), self.facts
        self.facts = {uid: list(f) for uid, f in facts.items()}
        self.facts.update(counters)
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
        if self._runs_past_limit(s):
            return False  # given up before its first iteration, not after MAX_HOST_LOOP of them
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

    def _runs_past_limit(self, s: N.Loop) -> bool:
        """Whether a counting loop surely runs more than `MAX_HOST_LOOP` iterations, told from its
        counter alone: its step assigns only the counter, from the counter and values the loop
        does not assign, and its condition reads nothing else the loop assigns (`for (int i = 0;
        i < testIterations; ++i)` with 100 iterations: threadFenceReduction runs 64 of them, each
        calling the launching `reduce`, for each of 52 calls, before giving the loop up)."""
        step = s.step[0] if len(s.step) == 1 else None
        if not s.test_first or s.cond is None or not isinstance(step, N.Assign) or step.field:
            return False
        counter, first = step.var.uid, self.env.get(step.var.uid)
        if not isinstance(first, int) or isinstance(first, bool) or counter in assigned_in(s.body):
            return False
        read = {x.var.uid for e in (s.cond, step.value) for x in preorder(e) if isinstance(x, N.VarRef)}
        if read & assigned_in(s.body) or self.runs_host_code(s.cond) or self.runs_host_code(step.value):
            return False
        values = tuple(self.env.get(uid) for uid in sorted(read - {counter}))
        if any(isinstance(v, dict) for v in values):  # (a struct's value: not a key)
            return self._counted_past_limit(s, step, counter, first)
        key = (id(s), first, values, tuple(v.__class__ for v in values))  # (1 and 1.0 divide apart)
        seen = _PAST_LIMIT.get(key)
        if seen is None or seen[0] is not s:
            seen = (s, self._counted_past_limit(s, step, counter, first))
            remember(_PAST_LIMIT, key, seen)
        return seen[1]

    def _counted_past_limit(self, s: N.Loop, step: N.Assign, counter: int, first: int) -> bool:
        """`_runs_past_limit` for a loop that qualifies, by running its counter's tests."""
        assert s.cond is not None
        value: Value = first
        try:
            for count in range(MAX_HOST_LOOP + 1):  # the tests an iterated loop makes before giving up
                self.env[counter] = value
                cond = self.expr(s.cond)
                if cond is None or isinstance(cond, dict) or not cond:
                    return False
                value = self.expr(step.value) if count < MAX_HOST_LOOP else value
                if not isinstance(value, int) or isinstance(value, bool):
                    return False
            return True
        finally:
            self.env[counter] = first

    def launches_in(self, stmts: list[N.Stmt]) -> bool:
        """`_launches_in`, remembered by the statements' identity (host loops run them again)."""
        key = (id(stmts[0]), len(stmts)) if stmts else (0, 0)
        found = self.launching.get(key)
        if found is None:
            found = self.launching[key] = bool(stmts) and self._launches_in(stmts)
        return found

    def _launches_in(self, stmts: list[N.Stmt]) -> bool:
        """Whether `stmts` launch a kernel, themselves or through a host function they call
        that can reach one (`self.reaching`)."""
        return launches_within(stmts, self.reaching)

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
        one; the addresses `e` itself passes on are noted (in the order a walk of `e` meets
        them and the reads: `f(n, &n)` reads `n` before it passes it on)."""
        found = False
        for passed, name, at in per_node(_MET, e, _met_in):
            if passed:
                self.escaped.add(name)
                self.escaped_at.setdefault(name, at)
            elif name in self.escaped or at in self.guessed:
                found = True
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
        inner = HostInterpreter(self.functions, self.depth + 1, self.pointed, self.reaching)
        inner.launching = self.launching  # by statement identity: the same for every call
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
        if callee is not None and e.callee not in self.reaching:
            for op in e.operands:  # (a host function called in them may launch)
                self.expr(op)
            return None  # it launches nothing, returns nothing known: running it shows nothing
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


def preorder(e: N.Expr) -> list[N.Expr]:
    """`e` and the expressions inside it, outermost and leftmost first."""
    out: list[N.Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(reversed(list(N.sub_expressions(x))))
    return out


def own_expressions(s: N.Stmt) -> list[N.Expr]:
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


def assigned_in(stmts: list[N.Stmt]) -> set[int]:
    """The uids of the variables `stmts` assign, at any depth (nested loops' counters included)."""
    out: set[int] = set()
    for x in N.walk_statements(stmts):
        if isinstance(x, N.Assign):
            out.add(x.var.uid)
        elif isinstance(x, N.Skipped):
            out.update(v.uid for v in x.writes)
    return out


def launches_within(stmts: list[N.Stmt], reaching: frozenset[str]) -> bool:
    """Whether `stmts` launch a kernel, themselves or through a call of a function in `reaching`."""
    return any(
        isinstance(x, N.LaunchStmt) or (isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee in reaching)
        for x in N.walk_nodes(stmts)
    )


#: What `HostInterpreter._guessed` meets in an expression (`_met_in`), by the expression's
#: identity: every host statement run asked it of each of its expressions, walking them
#: (threadFenceReduction.cu, py-spy 2026-11-28: 5% of the file).
_MET: dict[int, tuple] = {}


def _met_in(e: N.Expr) -> tuple[tuple[bool, str, Any], ...]:
    """In the order a walk of `e` meets them: (True, name, span) for each local whose address
    `e` passes on, (False, name, uid) for each variable it reads."""
    met: list[tuple[bool, str, Any]] = []
    stack: list[N.Expr] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, N.Opaque) and x.kind == OpaqueKind.LOCAL_ADDRESS and x.variable is not None:
            met.append((True, x.variable.name, x.span))
        elif isinstance(x, N.VarRef):
            met.append((False, x.var.name, x.var.uid))
        stack.extend(N.sub_expressions(x))
    return tuple(met)


def launching_functions(functions: dict[str, N.Function]) -> frozenset[str]:
    """The names of the host functions that launch a kernel, themselves or through the host
    functions they call, at any depth. A call of any other cannot change what a launch gets
    (the interpreter gives no host function's result a value), so it need not be run, and a
    loop that makes only such calls (a CPU reference nest: `for i, j, k < 256 ...
    percentDiff(...)`) need not be run iteration by iteration."""
    calls: dict[str, set[str]] = {}
    reaching: set[str] = set()
    for name, fn in functions.items():
        called = calls[name] = set()
        for x in N.walk_nodes(fn.body):
            if isinstance(x, N.LaunchStmt):
                reaching.add(name)
            elif isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee in functions:
                called.add(x.callee)
    grown = True
    while grown:
        more = {name for name, called in calls.items() if name not in reaching and called & reaching}
        reaching |= more
        grown = bool(more)
    return frozenset(reaching)


def host_calls(stmts: list[N.Stmt]) -> set[str]:
    """The names of the functions that host code calls (the opaque calls it makes)."""
    return {
        x.callee
        for x in N.walk_nodes(stmts)
        if isinstance(x, N.Opaque) and x.kind is OpaqueKind.CALL and x.callee is not None
    }


def function_pointers(host: list[N.Function]) -> dict[int, tuple[str, ...]]:
    """The functions host code assigns to each variable (by uid), in the order written:
    `kernel = &copy;` ... `kernel = &transposeNaive;` makes `kernel` a pointer that may hold
    either, whatever the branches and loops around the assignments."""
    out: dict[int, list[str]] = {}
    for fn in host:
        for s in N.walk_statements(fn.body):
            if isinstance(s, N.Assign) and not s.field:
                names = [
                    x.callee for x in preorder(s.value) if isinstance(x, N.Opaque) and x.kind is OpaqueKind.FUNCTION
                ]
                held = out.setdefault(s.var.uid, []) if names else []
                held.extend(n for n in names if n is not None and n not in held)
    return {uid: tuple(names) for uid, names in out.items()}
