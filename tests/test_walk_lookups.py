"""What the cost walk works out once instead of at each look-up: a walk's scenarios summed
with it (`costing._WALKS`), a warp's rows hashed with them (`walk_keys.Rows`), and a worst
request's stride remembered by its addresses (`costing.addresses_stride`)."""

from __future__ import annotations

from analyzer.analysis import costing, scenarios, walk_keys
from analyzer.analysis.results import stride
from walk_checks import checked, forget_walk_tables

PROGRAM = """\
__global__ void k(float *a, float *b, int n) {
    for (int i = 0; i < 8; i++)
        a[blockIdx.x * 256 + threadIdx.x * n + i] = b[threadIdx.x * 2 + i];
    a[threadIdx.x + 1] = b[threadIdx.x * 3];
}
"""


def test_a_walk_keeps_the_scenarios_its_charges_stand_for(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    forget_walk_tables()
    checked(tmp_path, monkeypatch, "k.json", "--block", "128", "k.cu")
    walks = list(costing._WALKS.values())
    assert len(walks) >= 4
    for (_, charged), _, _, times in walks:
        assert times == sum(c.times for c in charged)
    assert any(times > 1 for *_, times in walks)  # (the loop's counter walked)


def test_rows_equal_and_hash_as_their_indices():
    lanes = scenarios.warp_lanes((64, 2, 1), 32)
    reads = ((32,), True, False)
    rows = [walk_keys.Rows(walk_keys.thread_indices(w, reads)) for w in lanes]
    assert rows[0] == rows[1] and hash(rows[0]) == hash(rows[0].rows)  # moved by 32: alike
    assert rows[0] != rows[2]  # another threadIdx.y
    assert rows[0] != rows[0].rows  # a plain tuple is no key of a walk
    assert len({rows[0], rows[1], rows[2], rows[3]}) == 2


def test_a_stride_is_remembered_by_the_addresses(monkeypatch):
    cases = [
        (0, 4, 8, 12),
        (None, 4, None, 12, 16),
        (0, 4, 9),
        (None, None, 7),
        (),
        (32, 0, -32),
        (5, None, 5),
    ]
    costing._STRIDES.clear()
    asked: list[tuple] = []
    monkeypatch.setattr(costing, "stride", lambda a: asked.append(a) or stride(a))
    for _ in range(3):
        assert [costing.addresses_stride(c) for c in cases] == [4, 4, None, None, None, -32, 0]
    assert asked == cases  # each worked out once
