"""Helpers of the tests that compare the cost walk's short ways with its plain ways
(`test_moved_lanes`, `test_cheaper_step`): the walk's remembered tables emptied, and a check
run in this process with the analysis steps each kernel spent, so that a short way can be held
to the same report, byte for byte, and the same steps."""

from __future__ import annotations

from pathlib import Path

from analyzer import budget, cli
from analyzer.analysis import costing, groups, lane_groups, neutral, runs, scenarios, starts, twins, warp_differences


class Forgetful(dict):
    """A memo table that remembers nothing: put in place of a short way's table, every answer
    is worked out again (the plain way the short way is held to)."""

    def __setitem__(self, key, value) -> None:
        pass


#: Two kernels whose walks' groups move the warp by a counter (`k`) under an unknown that
#: multiplies the block index, or not (`n`): `test_kept_starts` and `test_counted_again`.
MOVED_WARPS = """\
__global__ void mixed(float *x, int n) {
    for (int k = 0; k < 91; k++)
        x[blockIdx.x * 91 * (1 + n) + threadIdx.x * 91 * (1 + n) + k] = 0.0f;
}

__global__ void plain(float *x, int n) {
    for (int k = 0; k < 40; k++)
        x[blockIdx.x * 91 + threadIdx.x * 3 * n + k] = 1.0f;
}
"""
#: No grid: `blockIdx.x` stays unknown, the first lane's address no number.
UNKNOWN_GRID = ("--block", "256")


def forget_walk_tables() -> None:
    """Every remembered table of the cost walk emptied."""
    for table in (
        scenarios._LANE_MEMO,
        scenarios._WARP_MEMO,
        scenarios._DECIDED,
        scenarios._LANE_TERMS,
        scenarios._SHIFTS,
        scenarios._READ_LANES,
        scenarios._MOVES,
        scenarios._DIFFERENCES,
        warp_differences._DIFFERENCES_OF,
        costing._WALKS,
        costing._TWIN_WALKS,
        twins._TWINS,
        costing._OUTCOMES,
        groups._GROUPS,
        neutral._NEUTRAL,
        starts._SPLITS,
        runs._RUNS,
        runs._ONE_CLASS,
        lane_groups._SLOTS,
        lane_groups._BY_VALUES,
        lane_groups._TALLY,
        lane_groups._GROUP_TALLY,
    ):
        table.clear()


def forget_interpreter_tables() -> None:
    """Every remembered table of the cost walk and of the interpreter's loops and pure values emptied."""
    from analyzer.analysis import loops, pure

    forget_walk_tables()
    loops._SHAPES.clear()
    pure.READS.clear()
    pure.TRIP_READS.clear()


def checked(tmp_path: Path, monkeypatch, name: str, *args: str) -> tuple[str, list[int]]:
    """The JSON report of a check, and the analysis steps each kernel spent."""
    spent: list[int] = []
    settle = budget.Meter.settle

    def counted(meter, part, allowed):
        if meter.stage == "analysis":
            spent.append(allowed - max(part.left, 0))
        return settle(meter, part, allowed)

    monkeypatch.setattr(budget.Meter, "settle", counted)
    out = tmp_path / name
    cli.main(["check", "--no-cache", "--isolated", "-q", "-j", "1", "--format", "json", "-o", str(out), *args])
    monkeypatch.setattr(budget.Meter, "settle", settle)
    return out.read_text(), spent


def with_and_without(tmp_path: Path, monkeypatch, program: str, launch: tuple[str, ...], forget) -> tuple:
    """`program` checked for `launch` with the short ways and then without them (`forget(monkeypatch)`
    switches them off; `forget()` only empties the tables): (report, steps) of each. A first check,
    not compared, makes the numbers both meet once (`S.const`)."""
    (tmp_path / "k.cu").write_text(program)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "warm.json", *launch, "k.cu")
    forget()
    fast = checked(tmp_path, monkeypatch, "fast.json", *launch, "k.cu")
    forget(monkeypatch)
    plain = checked(tmp_path, monkeypatch, "plain.json", *launch, "k.cu")
    return fast, plain


def budget_cut_alike(
    tmp_path: Path, monkeypatch, program: str, analysis: int, launch: tuple[str, ...], forget
) -> tuple:
    """`program` checked for `launch` under an analysis budget of `analysis` steps, with the
    short ways and then without them (as `with_and_without`): the two JSON reports, which must
    be the same where a short way spends the steps the plain way spends."""
    (tmp_path / "k.cu").write_text(program)
    (tmp_path / "warplint.toml").write_text(f"[budget]\nanalysis = {analysis}\n")
    monkeypatch.chdir(tmp_path)
    args = ["check", "--no-cache", "-q", "-j", "1", "--format", "json", *launch]
    forget()
    cli.main([*args, "-o", "warm.json", "k.cu"])
    forget()
    cli.main([*args, "-o", "fast.json", "k.cu"])
    forget(monkeypatch)
    cli.main([*args, "-o", "plain.json", "k.cu"])
    return Path("fast.json").read_text(), Path("plain.json").read_text()


def same_with_and_without(
    tmp_path: Path, monkeypatch, program: str, launch: tuple[str, ...], forget, kernels: int
) -> None:
    """Assert that `with_and_without` gives, for `program` of `kernels` kernels with accesses,
    the same report and the same steps per kernel with the short ways as without them."""
    (fast, fast_steps), (plain, plain_steps) = with_and_without(tmp_path, monkeypatch, program, launch, forget)
    assert '"accesses"' in fast and len(fast_steps) == kernels
    assert fast == plain
    assert fast_steps == plain_steps
