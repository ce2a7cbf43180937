"""Float arithmetic is not looked for in the interpreter's memo of pure values
(`pure._makes_an_unknown`): evaluating a float constant, or arithmetic or a cast whose result
is a float, makes a fresh unknown, so neither its value nor that of any expression above it
was ever remembered. A small program written for the test (an unrolled loop of float and
integer arithmetic) gives the same report, byte for byte, the same steps per kernel and the
same values remembered, whether the memo looks for them or not; and `S.varies_between_lanes`
answers what the walk over every unknown answers."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.analysis import interpret, pure
from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.arch import get_arch
from analyzer.ir import nodes as N
from analyzer.ir.lower import lower
from analyzer.syntax.parse import parse
from walk_checks import forget_interpreter_tables, same_with_and_without

PROGRAM = """\
__global__ void mixed(float *out, const float *in, int n) {
    __shared__ float tile[64];
    float acc = 0.5f;
    int base = threadIdx.x;
    for (int k = 0; k < 4; k++) {
        int pos = (base * 3 + k) & 63;
        float w = in[pos] * 2.0f + acc;
        acc = acc * w - 1.0f / (float)(k + 1);
        int q = (int)(acc * 4.0f) + pos;
        tile[pos] = w + (float)q;
        out[pos + k * n] = tile[(pos + 1) & 63] * acc;
        base = (base * 5 + 1) & 63;
    }
}
"""


def plain_makes_an_unknown(e: N.Expr) -> bool:
    """The memo looking for every pure expression, float arithmetic too."""
    return False


def forget(monkeypatch=None) -> None:
    """Every remembered table emptied (and, with `monkeypatch`, float arithmetic looked for)."""
    forget_interpreter_tables()
    if monkeypatch is not None:
        monkeypatch.setattr(pure, "_makes_an_unknown", plain_makes_an_unknown)


@pytest.mark.parametrize("launch", [("--block", "64"), ("--block", "32,2", "--grid", "2")])
def test_float_arithmetic_not_looked_for_gives_the_plain_report_and_steps(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def _expressions(module: N.Module) -> dict[str, N.Expr]:
    """The values the kernel assigns, by the variable's name (the last assignment)."""
    return {s.var.name: s.value for s in N.walk_statements(module.kernels[0].body) if isinstance(s, N.Assign)}


def test_pure_reads_leave_out_what_makes_an_unknown():
    forget()
    module = lower(parse(PROGRAM).unit, PROGRAM, "test.cu")
    values = _expressions(module)
    assert pure.pure_reads(values["pos"]) is not None  # integer arithmetic
    assert pure.pure_reads(values["acc"]) is None  # float arithmetic
    assert pure.pure_reads(values["q"]) is None  # a cast to int of float arithmetic
    assert pure.pure_reads(values["w"]) is None  # a load, besides


def _run(monkeypatch, plain: bool) -> tuple[int, int, int]:
    """Steps spent, occurrences and values remembered running the kernel once."""
    forget(monkeypatch if plain else None)
    module = lower(parse(PROGRAM).unit, PROGRAM, "test.cu")
    interp = interpret.Interpreter(module, LaunchConfig((64, 1, 1), (1, 1, 1), "--block"), {}, get_arch())
    meter = budget.Meter("analysis", 1_000_000)
    with budget.metered(meter):
        interp.run_kernel(module.kernels[0])
    return 1_000_000 - meter.left, len(interp.occurrences), len(interp.memo.values)


def test_the_same_values_are_remembered_either_way(monkeypatch):
    _run(monkeypatch, False)  # the constants met once (`S.const` remembers them)
    fast = _run(monkeypatch, False)
    plain = _run(monkeypatch, True)
    assert fast == plain
    assert fast[1] == 16  # four trips of two loads and two stores


X = S.sym("x")
STILL = S.unknown("loaded", S.Origin.LOADED)
VARYING = S.unknown("loaded", S.Origin.LOADED, lane_varying=True)
CASES = [
    (X * 4 + 1, False),
    (STILL + X, False),
    (VARYING * 2 + X, True),
    (S.minimum(STILL, X) + 3, False),
    (S.minimum(VARYING, X) + STILL, True),
    (S.select(S.compare("<", X, STILL), X, S.floordiv(VARYING, S.const(3))), True),
]


@pytest.mark.parametrize(("e", "varies"), CASES)
def test_varies_between_lanes_answers_the_walk(e, varies):
    assert S.varies_between_lanes(e) is varies
    assert any(u.lane_varying for u in S.unknowns(e)) is varies


KEYS = """\
__global__ void keys(int *out, int a, int b, int c) {
    out[threadIdx.x] = a + 1;
    out[threadIdx.x + 32] = a * b;
    out[threadIdx.x + 64] = a * b + c;
    out[threadIdx.x + 96] = 7 * 3;
}
"""


def test_eval_remembers_a_value_by_the_key_value_memo_makes():
    # `eval` writes the key of an expression reading one or two variables out (the tuple
    # `ValueMemo.key` builds for any number): the same key, whatever the number of reads
    forget()
    module = lower(parse(KEYS).unit, KEYS, "test.cu")
    kernel = module.kernels[0]
    interp = interpret.Interpreter(module, LaunchConfig((32, 1, 1), (1, 1, 1), "--block"), {}, get_arch())
    with budget.metered(budget.Meter("analysis", 1_000_000)):
        interp.run_kernel(kernel)
    env = {p.uid: interp.param_value(p, True) for p in kernel.params}
    stores = [s for s in N.walk_statements(kernel.body) if isinstance(s, N.Store)]
    keys = []
    for store in stores:
        reads = pure.pure_reads(store.value)
        assert reads is not None
        keys.append(pure.ValueMemo.key(store.value, reads, env))
    assert [len(k) for k in keys] == [2, 3, 4, 1]  # the expression, then what it reads
    assert all(k in interp.memo.values for k in keys)
