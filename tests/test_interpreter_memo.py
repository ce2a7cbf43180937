"""The interpreter's remembered values give what working them out gives: a pure expression's
value remembered by the values of the variables it reads (`analysis.pure.ValueMemo`), and a
loop's shape worked out once (`loops.shape`). Small programs written for the test (unrolled
loops around pure arithmetic, pointer offsets and casts; floats, uninitialised variables and
divisions by zero, which make fresh unknowns; struct values, which are not remembered) give
the same report, byte for byte, and the same steps per kernel, with the memo and without it;
and a small budget runs out where it did."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import interpret, loops, pure
from analyzer.analysis import symbolic as S
from analyzer.analysis.symbolic import expressions
from analyzer.ir import nodes as N
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse
from walk_checks import budget_cut_alike, forget_walk_tables, same_with_and_without

PROGRAM = """\
struct Pair { int a; int b; };

__global__ void unrolled(float *out, const float *in, int n) {
    __shared__ float tile[64][65];
    int base = threadIdx.y * 64 + threadIdx.x;
    for (int k = 0; k < 4; k++) {
        int pos = (base + k * 5) & 63;
        for (int j = 0; j < 3; j++) {
            int q;
            int z = n / (j - 1);
            float f = 1.5f * k;
            tile[pos][j * 2 + k] = in[base + j * n + pos];
            out[(int)f + z + q + pos] = tile[threadIdx.x][(pos + j) % 64];
            base = base + 1;
        }
    }
}

__global__ void structs(float *out, int n) {
    const float *p = out + threadIdx.x * 2;
    for (int k = 0; k < 6; k++) {
        Pair s;
        s.a = k * 3 + n;
        s.b = s.a + threadIdx.x;
        out[s.b + s.a] = p[k + (s.a - n)];
        p = p + 3;
    }
}
"""

LAUNCHES = [
    ("--block", "32,2", "--grid", "4"),
    ("--block", "64"),
]


def forget(monkeypatch=None) -> None:
    """Every remembered table emptied (and, with `monkeypatch`, the memo switched off)."""
    forget_walk_tables()
    loops._SHAPES.clear()
    pure.READS.clear()
    if monkeypatch is not None:
        monkeypatch.setattr(interpret.Interpreter, "remembered", frozenset())
        monkeypatch.setattr(loops, "shape", plain_shape)


def plain_shape(loop: N.Loop) -> loops.LoopShape:
    """`loops.shape` worked out each time."""
    stmts = loop.body + loop.step
    writes = loops.written(stmts)
    found = loops.inductions(loop.step + loop.body, writes)
    return loops.LoopShape(writes, found, loops.unroll_inductions(loop), loops.assignments(stmts))


@pytest.mark.parametrize("launch", LAUNCHES)
def test_remembered_values_give_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=2)


@pytest.mark.parametrize("analysis", [3_000, 20_000, 60_000])
def test_a_small_budget_runs_out_where_it_did_without_the_memo(tmp_path, monkeypatch, analysis):
    launch = ("--block", "32,2")
    fast, plain = budget_cut_alike(tmp_path, monkeypatch, PROGRAM, analysis, launch, forget)
    assert fast == plain


def test_a_value_given_again_spends_the_steps_of_working_it_out():
    memo = pure.ValueMemo()
    e = object()  # the memo keys by the expression's identity
    x = S.sym("x")
    assert x * 3 + 1 == S.const(1) + S.sym("x") * 3  # the constants met once (`S.const` remembers them)
    env: dict[int, object] = {1: x}
    made: list[int] = []

    def work():
        budget.spend(5)
        made.append(1)
        return x * 3 + 1

    meter = budget.Meter("analysis", 1_000)
    with budget.metered(meter):
        first = memo.value(e, (1,), env, work)
        spent_first = 1_000 - meter.left
        again = memo.value(e, (1,), {1: S.sym("x") + 0}, work)  # an equal value, not the same one
    assert again is first and made == [1]
    assert spent_first == 5 + 2 and 1_000 - meter.left == 2 * spent_first  # 2 expressions built


def test_a_constant_built_the_first_time_is_not_spent_for_again():
    memo, e = pure.ValueMemo(), object()
    fresh = next(n for n in range(4096, 0, -1) if n not in expressions._CONSTS)
    meter = budget.Meter("analysis", 1_000)
    with budget.metered(meter):
        memo.value(e, (), {}, lambda: S.const(fresh))
        first = 1_000 - meter.left
        memo.value(e, (), {}, lambda: S.const(fresh))
        again = 1_000 - meter.left - first
        S.const(fresh)  # what working it out again spends
        plain = 1_000 - meter.left - first - again
    assert (first, again, plain) == (1, 0, 0)


def test_an_evaluation_that_makes_an_unknown_is_not_remembered():
    memo, e = pure.ValueMemo(), object()
    calls: list[S.Expr] = []

    def work():
        calls.append(S.unknown("float", S.Origin.FLOAT))
        return calls[-1]

    first = memo.value(e, (), {}, work)
    second = memo.value(e, (), {}, work)
    assert len(calls) == 2 and first != second


def test_a_struct_value_is_worked_out_each_time():
    memo, e = pure.ValueMemo(), object()
    calls: list[int] = []

    def work():
        calls.append(1)
        return S.const(4)

    memo.value(e, (3,), {3: {"a": S.const(1)}}, work)
    memo.value(e, (3,), {3: {"a": S.const(1)}}, work)
    assert calls == [1, 1]


LOOP = """\
__global__ void k(int *a, int n) {
    int pos = threadIdx.x;
    int q = 0;
    int r = 0;
    int u = 0;
    int w = 0;
    for (int i = 0; i < n; i++) {
        pos = (pos + 1) % 32;
        q = q + n;
        r = a[u + pos];
        u = atomicAdd(&a[0], 1);
        w = q * 2;
    }
}
"""


def test_a_loops_assignments_say_what_makes_them_lane_dependent():
    module = lower(parse(LOOP).unit, LOOP, "test.cu")
    loop = next(s for s in N.walk_statements(module.kernels[0].body) if isinstance(s, N.Loop))
    shape = loops.shape(loop)
    names = {v.name: uid for uid, v in shape.writes.items()} | {p.name: p.uid for p in module.kernels[0].params}
    read = {a.uid: (a.varying, sorted(a.reads)) for a in shape.assigned}
    assert read[names["pos"]] == (False, [names["pos"]])
    assert read[names["r"]] == (False, sorted([names["a"], names["u"], names["pos"]]))
    assert read[names["u"]] == (True, [])  # an atomic's old value
    assert read[names["q"]] == (False, sorted([names["q"], names["n"]]))
    assert read[names["w"]] == (False, [names["q"]])
    env = {names["pos"]: S.sym("threadIdx.x")}
    dependent = loops.lane_dependent_in_loop(shape.assigned, shape.writes, env)
    assert dependent == {names["pos"], names["r"], names["u"]}


def test_an_index_nested_as_deep_as_lowering_takes_is_analysed_without_overflowing_the_stack(tmp_path):
    # `threadIdx.x + 1 + ... + 1`, 481 additions deep (one more is WL903, nested too deeply):
    # the memo's look-up of what an expression reads and its evaluation add no frames a level
    # (a fuzzed input of this shape was a RecursionError, WL900)
    import json
    import subprocess
    import sys

    (tmp_path / "k.cu").write_text("__global__ void k(float *p) { p[threadIdx.x" + " + 1" * 481 + "] = 1; }\n")
    command = [sys.executable, "-m", "analyzer", "check", "--no-cache", "--isolated", "--format", "json"]
    done = subprocess.run([*command, "--block", "32", "k.cu"], cwd=tmp_path, capture_output=True, text=True)
    report = json.loads(done.stdout)["files"][0]
    access = report["kernels"][0]["accesses"][0]
    assert (done.returncode, report["errors"]) == (1, [])
    assert (access["line"], access["column"], access["per_request"], access["ideal_per_request"]) == (1, 31, 5, 4)
    assert [f["code"] for f in report["findings"]] == ["WL201"]


SUMS = """\
struct V { float x; float y; float z; };

__global__ void k(float *out, V *vs, int n) {
    int a = n * 3 + threadIdx.x;
    out[a + n * 3] = vs[a].y;
    vs[n].z = out[a];
}
"""


def _sums() -> tuple[N.Module, N.Function, list[N.Access]]:
    module = lower(parse(SUMS).unit, SUMS, "test.cu")
    kernel = module.kernels[0]
    return module, kernel, list(loops.accesses_in(kernel.body))


def _interpreter(module: N.Module) -> interpret.Interpreter:
    from analyzer.analysis.results import LaunchConfig
    from analyzer.arch import get_arch

    return interpret.Interpreter(module, LaunchConfig((32, 1, 1), (1, 1, 1), "--block"), {}, get_arch())


def _evaluated_twice(interp: interpret.Interpreter, e: N.Expr, env: dict) -> tuple[list, list[int]]:
    """The values of `e` evaluated twice in `env` (copied), and the steps each spent."""
    ctx = interpret.Ctx(S.const(1), (), None, True)
    meter = budget.Meter("analysis", 10_000)
    values, steps = [], []
    with budget.metered(meter):
        for _ in range(2):
            before = meter.left
            values.append(interp.eval(e, dict(env), ctx))
            steps.append(before - meter.left)
    return values, steps


def test_eval_gives_a_remembered_value_again_with_the_steps_of_working_it_out():
    module, kernel, accesses = _sums()
    address = next(x for x in accesses if x.text == "out[a + n * 3]").address  # reads out, a, n
    out, _, n = kernel.params
    a = next(s.var for s in N.walk_statements(kernel.body) if isinstance(s, N.Assign) and s.var.name == "a")
    interp, plain = _interpreter(module), _interpreter(module)
    plain.remembered = frozenset()
    env = {out.uid: interp.param_value(out, True), a.uid: S.sym("a") * 7, n.uid: S.sym("n") + 1}
    _evaluated_twice(_interpreter(module), address, env)  # the constants it makes, made (`S.const`)
    (first, again), steps = _evaluated_twice(interp, address, env)
    (worked, worked_again), plain_steps = _evaluated_twice(plain, address, env)
    assert again is first and first == worked == worked_again and str(first.offset) == "a*28 + n*12 + 12"
    assert steps == plain_steps == [12, 12]
    # the look-up's key: the expression's id and the values it reads, in the order it reads them
    reads = pure.pure_reads(address)
    assert list(reads) == [out.uid, a.uid, n.uid]
    assert interp.memo.values[(id(address), *[env[uid] for uid in reads])] == (first, steps[1])
    assert plain.memo.values == {}


def test_eval_does_not_remember_a_value_read_from_a_struct():
    module, kernel, accesses = _sums()
    address = next(x for x in accesses if x.text == "out[a + n * 3]").address
    out, _, n = kernel.params
    a = next(s.var for s in N.walk_statements(kernel.body) if isinstance(s, N.Assign) and s.var.name == "a")
    interp, plain = _interpreter(module), _interpreter(module)
    plain.remembered = frozenset()
    env = {out.uid: interp.param_value(out, True), a.uid: {"x": S.const(1)}, n.uid: S.sym("n") * 3}
    _evaluated_twice(_interpreter(module), address, env)  # the constants it makes, made (`S.const`)
    _, plain_steps = _evaluated_twice(plain, address, env)
    values, steps = _evaluated_twice(interp, address, env)
    # a struct in an addition: an unknown offset, a fresh one each time, as without the memo
    assert [str(v.offset) for v in values] == ["pointer comparison*4"] * 2 and values[0] != values[1]
    assert steps == plain_steps == [12, 12]
    assert [key[0] == id(address) for key in interp.memo.values] == [False]  # `n * 3` alone


def test_a_statement_that_carries_on_shares_one_flow_that_nothing_changes(tmp_path, monkeypatch):
    from walk_checks import checked

    (tmp_path / "p.cu").write_text(PROGRAM)
    checked(tmp_path, monkeypatch, "p.cu", "--block", "32,2")
    assert interpret.Flow() == interpret._CARRIED_ON  # no return, no value, no break


def test_the_struct_of_each_access_is_worked_out_once_and_as_indexing_says():
    from analyzer.analysis import node_facts
    from analyzer.analysis.indexing import struct_of_address

    _, _, accesses = _sums()
    found = [node_facts.struct_of(x) for x in accesses]
    assert found == [struct_of_address(x.address) for x in accesses]
    assert [x.text for x in accesses] == ["out[a]", "vs[n].z", "vs[a].y", "out[a + n * 3]"]
    assert [None if s is None else s.name for s in found] == [None, "V", "V", None]
    assert all(node_facts.struct_of(x) is s for x, s in zip(accesses, found))
    assert all(node_facts._STRUCTS[id(x)] == (x, s) for x, s in zip(accesses, found))
