"""What the cost walk asks once instead of per warp or per scenario (`costing.py`): the part of
a warp walk's key that the warps of an access share (`walk_key`), worked out once per access;
whether a scenario is typical, read from the sampled values already in the key of the charges
counted alike (`counted_alike`); and a walk of one scenario charged without the one-by-one
loop. A small program written for the test (launched twice from its host code, with a
sampled unknown that has typical values, and accesses of one scenario) gives the same report,
byte for byte, and the same steps per kernel, with these and with the walks not remembered or
the key asking again; the one-scenario charges equal `charged_one_by_one`'s."""

from __future__ import annotations

import json

import pytest

from analyzer.analysis import costing
from analyzer.analysis import symbolic as S
from analyzer.analysis.results import Facts
from walk_checks import checked, forget_walk_tables, same_with_and_without, with_and_without

PROGRAM = """\
__global__ void k(float *a, float *b, int n, int w) {
    a[threadIdx.x] = b[threadIdx.x * 2];
    for (int i = 0; i < 12; i++)
        a[n + i * 4 + threadIdx.x] += b[w * threadIdx.y + threadIdx.x];
    if (threadIdx.x < w)
        b[blockIdx.x * 64 + threadIdx.x * 3] = a[threadIdx.y * 33];
}

int main() {
    float *a, *b;
    k<<<4, dim3(32, 4)>>>(a, b, 3, 7);
    k<<<8, dim3(64, 2)>>>(a, b, 3, 7);
    return 0;
}
"""

LAUNCHES = [(), ("--block", "32,4", "--grid", "6"), ("--block", "16,8")]


def forget(monkeypatch=None) -> None:
    """Every table of the walk emptied (and, with `monkeypatch`, whether a scenario is typical asked in the key)."""
    forget_walk_tables()
    if monkeypatch is not None:
        alike = costing.counted_alike
        monkeypatch.setattr(
            costing, "counted_alike", lambda scenario, plan: (*alike(scenario, plan), plan.is_typical(scenario.combo))
        )


@pytest.mark.parametrize("launch", LAUNCHES)
def test_asked_once_gives_the_report_and_steps_of_asking_each_time(tmp_path, monkeypatch, launch):
    same_with_and_without(tmp_path, monkeypatch, PROGRAM, launch, forget, kernels=1)


def test_the_warps_of_an_access_share_its_part_of_the_key(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "k.json", "--block", "32,4", "k.cu")
    keys = list(costing._WALKS)
    # 7 accesses remembered (the loop's load and store of `a` apart, the store that reads
    # blockIdx.x with its grid); the 4 warps have the same threadIdx.x values and differ in
    # threadIdx.y: one walk for each access that reads no threadIdx.y, 4 for the two that do
    # (`b[w * threadIdx.y + threadIdx.x]`, `a[threadIdx.y * 33]`)
    assert len(keys) == 5 * 1 + 2 * 4 and all(len(key) == 2 for key in keys)
    assert len({id(key[0]) for key in keys}) == 7  # one object per access, read by each of its warps
    # how each index is read (`index_reads`): not at all (threadIdx.z; threadIdx.x by
    # `a[threadIdx.y * 33]`, whose mask `threadIdx.x < w` no lane decides), or only as a move:
    # (m,) with the index's coefficient times m a multiple of 128 bytes (`threadIdx.x * 2`
    # floats (16,); `threadIdx.x`, `w * threadIdx.y` and `threadIdx.y * 33` (32,))
    assert {key[0].index_reads for key in keys} == {
        ((16,), False, False),
        ((32,), False, False),
        ((32,), (32,), False),
        (False, (32,), False),
    }
    # an index read as a move is keyed less its first lane's value, and that modulo m after
    # the lanes: the 4 warps of `a[threadIdx.y * 33]` differ there only
    rows = [key[1].rows for key in keys if key[0].index_reads == (False, (32,), False)]
    assert {row[:32] for row in rows} == {((None, 0, None),) * 32}
    assert sorted(row[32] for row in rows) == [(0,), (1,), (2,), (3,)]


def test_a_walk_of_one_scenario_charges_what_one_by_one_charges(tmp_path, monkeypatch):
    found: list[tuple] = []
    plans: list = []
    charge = costing.charge_scenarios

    def compared(site, plan, summary, arch):
        done = charge(site, plan, summary, arch)
        if not plan.names:
            plain = costing.charged_one_by_one(site, plan, costing.Summary(shared={}), arch)
            found.append((done, plain))
            plans.append(plan)
        return done

    monkeypatch.setattr(costing, "charge_scenarios", compared)
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget()
    checked(tmp_path, monkeypatch, "k.json", "--block", "32,4", "--grid", "6", "k.cu")
    # 5 accesses of one scenario (all but the loop's), 4 warps each, walked once for the warps
    # that agree on the thread indices read: those of x alone once (`a[threadIdx.x]`,
    # `b[threadIdx.x * 2]`, the store that reads blockIdx.x), the two that read threadIdx.y 4 times
    assert [str(plan.ref) for plan in plans] == [
        "0",
        "0",
        "0",
        "w*4",
        "w*8",
        "w*12",
        "0",
        "132",
        "264",
        "396",
        "blockIdx.x*256",
    ]
    assert len(found) == 11
    for done, plain in found:
        assert len(done) == 1 and done == plain
        assert (done[0].combo, done[0].times, done[0].active) == ((), 1, 32)


@pytest.mark.parametrize("launch", LAUNCHES)
def test_warps_that_agree_on_the_indices_read_give_the_report_of_walking_each(tmp_path, monkeypatch, launch):
    """A warp whose thread indices read by the access are those of a warp walked before takes
    that walk (`walk_warp`): the same report, byte for byte, as walking every warp (nothing
    remembered), and fewer steps, where the block has warps that differ only in threadIdx.y
    (the default launches' 32 x 4 and 64 x 2 blocks, and 32 x 4 and 16 x 8)."""

    def walk_each(monkeypatch=None):
        forget()
        if monkeypatch is not None:
            monkeypatch.setattr(costing, "walk_key", lambda site, arch: None)

    (fast, fast_steps), (plain, plain_steps) = with_and_without(tmp_path, monkeypatch, PROGRAM, launch, walk_each)
    assert '"accesses"' in fast and len(fast_steps) == len(plain_steps) == 1
    assert fast == plain
    assert fast_steps[0] < plain_steps[0]


MOVED = """\
__global__ void fields(float *a, int n, int m) {
    __assume(m >= 0 && m <= 3);
    if (threadIdx.x < n) {
        float s = a[threadIdx.x] + a[threadIdx.x + 32] + a[threadIdx.x + 1];
        a[threadIdx.x + 64 + m] = s;
    }
}
"""


def test_accesses_moved_by_a_multiple_of_the_period_share_their_walks(tmp_path, monkeypatch):
    """Accesses whose addresses differ by a multiple of the address period (128 bytes on
    sm_90: a row of banks, four sectors) and that agree on the rest, facts stated in the
    kernel among it, share their warps' walks (`moved_offset`): `a[threadIdx.x]` and
    `a[threadIdx.x + 32]`, 128 bytes apart, take one walk a warp (4 sectors a request); `+ 1`
    (4 bytes on, 5 sectors) and the store (which reads `m`) their own. The report is the one
    of walking each warp of each access, byte for byte."""

    def walk_each(monkeypatch=None):
        forget()
        if monkeypatch is not None:
            monkeypatch.setattr(costing, "walk_key", lambda site, arch: None)

    launch = ("--block", "64", "--grid", "2")
    (fast, fast_steps), (plain, plain_steps) = with_and_without(tmp_path, monkeypatch, MOVED, launch, walk_each)
    assert '"accesses"' in fast and fast == plain
    assert fast_steps[0] < plain_steps[0]
    monkeypatch.undo()  # the walks remembered again
    monkeypatch.chdir(tmp_path)
    walk_each()
    checked(tmp_path, monkeypatch, "k.json", *launch, "k.cu")
    keys = list(costing._WALKS)
    # three walks, the two warps alike: their lanes' addresses are 128 bytes apart, and no
    # lane decides `threadIdx.x < n` (`n` is read nowhere else: `index_reads`)
    assert len(keys) == 3
    assert {key[0].index_reads for key in keys} == {((32,), False, False)}
    # the address's terms but the constant, the constant modulo 128
    x, m = ((S.Symbol("threadIdx.x"),), 4), ((S.Symbol("m"),), 4)
    assert {key[0].offset[:2] for key in keys} == {(frozenset([x]), 0), (frozenset([x]), 4), (frozenset([x, m]), 0)}
    assert [a["per_request"] for a in json.loads(fast)["files"][0]["kernels"][0]["accesses"]] == [4, 4, 5, 5]
    assert all(key[0].facts == Facts(range_of=(("m", 0, None), ("m", None, 3))) for key in keys)  # `__assume`'s


TRANSLATED = """\
__global__ void rows(float *a, char *c) {
    __shared__ float s[128 * 33];
    s[threadIdx.x * 33] = a[threadIdx.x * 3];
    __syncthreads();
    c[threadIdx.x] = 1;
    if (threadIdx.x < 40)
        a[threadIdx.x + 1] = s[threadIdx.x];
}
"""


@pytest.mark.parametrize(("block", "walks"), [("128", 2 * 1 + 3 * 4), ("48", 5 * 2)])
def test_warps_moved_by_whole_rows_of_banks_share_their_walks(tmp_path, monkeypatch, block, walks):
    """A warp whose lanes read `threadIdx.x` only as `c * threadIdx.x` in the address, with
    the lanes' values another warp's moved by a multiple of m (`index_reads`: c * m a multiple
    of the 128-byte period), takes that warp's walk: in a block of 128 threads the 4 warps
    of `s[threadIdx.x * 33]` (c = 132, m = 32) and of `a[threadIdx.x * 3]` (c = 12, m = 32)
    walk once; those of `c[threadIdx.x]` (c = 1, m = 128: its warps start 32 bytes apart) and
    of the two accesses under `threadIdx.x < 40` (a mask reads it) each, as do both warps of a
    block of 48 (the second has 16 lanes). The same report, byte for byte, as walking every
    warp."""

    def walk_each(monkeypatch=None):
        forget()
        if monkeypatch is not None:
            monkeypatch.setattr(costing, "walk_key", lambda site, arch: None)

    launch = ("--block", block, "--grid", "2")
    (fast, fast_steps), (plain, plain_steps) = with_and_without(tmp_path, monkeypatch, TRANSLATED, launch, walk_each)
    assert '"accesses"' in fast and fast == plain
    assert (fast_steps[0] < plain_steps[0]) == (block == "128")  # a walk met again costs a step a scenario
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    walk_each()
    checked(tmp_path, monkeypatch, "k.json", *launch, "k.cu")
    assert len(costing._WALKS) == walks
