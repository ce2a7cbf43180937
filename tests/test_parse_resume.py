"""A declaration parsed again after a statement was blanked goes on from a checkpoint
(`analyzer.syntax.resume`): the same result, diagnostics and steps as parsing it from its start."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.syntax import parse as P
from analyzer.syntax import resume as R
from analyzer.syntax.postlex import _declarator_reach

# a host function with four statements the grammar does not take (`throw`, a lambda), one inside
# a struct-typed local's scope, one in a nested block, one whose `;` come before its error (a
# checkpoint there is not before the statement), a declarator in parentheses before them
HOST = """
struct Box { int n; };
__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }
void run(int n, float *x) {
    Box b;
    b.n = n;
    float (*rows)[4] = 0;
    if (n < 0) {
        throw bad(n);
    }
    typedef int Count;
    Count c = n * 2;
    for (int i = 0; i < c; ++i) { x[i] = 0; }
    if (c > 64) { throw bad(c); }
    for (int i = 0; i < c; i += [=] { return 1; }()) { x[i] = 0; }
    k<<<1, 32>>>(x);
    { Count d = c; throw bad(d); }
    b.n = c;
}
"""


@pytest.fixture(autouse=True)
def empty_memo():
    P._MEMO.clear()
    yield
    P._MEMO.clear()


def parsed(text: str, resuming: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[P.ParseResult, int, int]:
    """The parse of `text` (nothing remembered), the steps it charged, and the parses that went on
    from a checkpoint (none where `resuming` is False: each is parsed from its start)."""
    P._MEMO.clear()
    taken = [0]
    before = R.Checkpoints.before

    def counted(self: R.Checkpoints, blanked: int) -> object:
        found = before(self, blanked) if resuming else None
        taken[0] += found is not None
        return found

    monkeypatch.setattr(R.Checkpoints, "before", counted)
    meter = budget.Meter("parse", 10**9)
    with budget.metered(meter):
        result = P.parse(text)
    return result, 10**9 - meter.left, taken[0]


def test_a_resumed_parse_gives_the_result_and_steps_of_a_parse_from_the_start(monkeypatch):
    resumed, steps, taken = parsed(HOST, True, monkeypatch)
    whole, whole_steps, none = parsed(HOST, False, monkeypatch)
    assert taken == 3  # all but the first blanked, which makes the checkpoints
    assert none == 0
    assert resumed == whole
    assert steps == whole_steps
    assert [d.code for d in resumed.diagnostics] == ["WL902"] * 4
    assert [u.what for u in resumed.skipped] == ["exception handling"] * 2 + ["lambda expression", "exception handling"]
    run = next(d for d in resumed.unit.decls if getattr(d, "body", None) is not None and d.declarator.name == "run")
    assert len(run.body.items) == 12  # every statement kept, the blanked ones left as `;`


def test_a_name_learned_since_is_not_resumed_over(monkeypatch):
    """A type learned between two parses (`Unknown` in the last statement) changes the
    post-lexer's lasting state: the checkpoints made before it are not used."""
    text = HOST.replace("    b.n = c;\n}", "    Unknown *u = 0;\n    b.n = c;\n}")
    resumed, steps, _ = parsed(text, True, monkeypatch)
    whole, whole_steps, _ = parsed(text, False, monkeypatch)
    assert resumed == whole
    assert steps == whole_steps


def test_a_declarator_look_ahead_past_the_blanked_statement_stops_the_resume():
    """`(` of a parenthesised declarator reads on through `[...]`: its reach is kept."""
    text = "float (*p[ ; x ])[4]"
    assert _declarator_reach(text, text.index("(") + 1) == len(text)
    plain = "float (*p)[4]; y = 1;"
    assert _declarator_reach(plain, plain.index("(") + 1) == plain.index("[") + 1
