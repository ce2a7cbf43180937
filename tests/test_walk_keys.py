"""What decides a warp's walk (`analysis/walk_keys.py`): the parts of a mask that no lane
decides (`never_folded`), and a thread index read only as a move of the warp's addresses
(`moved_modulus`). Expressions built for the test; `test_charge_asks.py` holds the same
rules to the reports of small programs, byte for byte against walking every warp."""

from __future__ import annotations

import pytest

from analyzer.analysis import symbolic as S
from analyzer.analysis.results import LaunchConfig
from analyzer.analysis.scenarios import Site
from analyzer.analysis.walk_keys import WalkKey, index_reads, moved_modulus, never_folded, walk_key
from analyzer.arch import get_arch
from analyzer.ir.nodes import Space
from analyzer.records import fields

X, Y, BX = S.sym("threadIdx.x"), S.sym("threadIdx.y"), S.sym("blockIdx.x")
N, M, W, K = S.sym("n"), S.sym("m"), S.sym("w"), S.sym("k@1")
NEVER = frozenset({"n", "m"})


@pytest.mark.parametrize(
    ("mask", "undecided"),
    [
        (S.const(1), True),  # reads no thread index
        (S.compare("<", X, N), True),  # `threadIdx.x < n`: `c < n` at every lane
        (S.compare("<", X + BX * 32, N), True),
        (S.compare(">=", N, X + 7), True),
        (S.logical_and(S.compare("<", X + BX * 32, N), S.compare("<", BX, S.const(5))), True),
        (S.logical_and(S.compare("<", X, N), S.compare("<", Y, M)), True),
        (S.compare("<", X, S.const(40)), False),  # a number at every lane
        (S.compare("<", X, W), False),  # `w` is read by the address: a scenario may assign it
        (S.compare("<", X, K), False),  # a loop counter is walked
        (S.compare("<", X, N * M), False),  # no symbol of its own
        (S.compare("<", X, N - N + 3), False),
        (S.compare("<", X * W, N), False),  # a lane's value scales `w`, which may vanish
        (S.compare("==", X % 2, N), False),  # inside another atom
        (S.logical_or(S.compare("<", X, N), S.compare("<", X, S.const(3))), False),
        (S.compare("<", X, N) * S.compare("<", K, S.const(3)), False),  # a product may vanish
        (S.compare("<", X, N) - S.compare("<", S.const(3), N), False),  # 0 at the lane 3
        (S.compare("<", X, N) + 1, False),
    ],
)
def test_the_parts_of_a_mask_that_no_lane_decides(mask, undecided):
    assert never_folded(mask, "threadIdx.x", NEVER) is undecided


def site(offset: S.Expr, mask: S.Expr | None = None) -> Site:
    launch = LaunchConfig((32, 4, 1), None, "--block")
    return Site(
        offset, None, S.const(1) if mask is None else mask, (), launch, (32, 4, 1), {}, Space.GLOBAL, ((0, 4),), 128
    )


@pytest.mark.parametrize(
    ("offset", "moved"),
    [
        (X * 4 + BX * 512, (32,)),  # a warp 32 lanes on: 128 bytes
        (X * 12 + 8, (32,)),  # gcd(12, 128) = 4
        (X + N, (128,)),  # a char a lane: 128 lanes for 128 bytes
        (X * 128, (1,)),
        (X * 364 + X * W * 364 + BX * 11648, (32,)),  # myocyte's rows, `w` any integer
        (X * 4 + X * W * 6, (64,)),  # gcd(4, 6) = 2
        (BX * 4 + N, False),  # not read
        (X * X * 4, None),  # of degree two
        (X * Y * 4, None),  # another thread index: the lanes would move apart
        (S.minimum(X, N) * 4, None),  # inside another atom
    ],
)
def test_a_thread_index_read_only_as_a_move_of_the_warp(offset, moved):
    assert moved_modulus(site(offset), "threadIdx.x") == moved


def test_how_each_thread_index_is_read():
    """As it is where a mask decides it; not at all where only masks that no lane decides
    read it; as a move where the address reads it so (its masks deciding no lane)."""
    undecided = S.compare("<", X + BX * 32, N)
    s = site(X * 4 + Y * 132, undecided)
    assert index_reads(s, {"threadIdx.x", "threadIdx.y", "blockIdx.x", "n"}) == ((32,), (32,), False)
    s = site(Y * 132, undecided)
    assert index_reads(s, {"threadIdx.x", "threadIdx.y", "blockIdx.x", "n"}) == (False, (32,), False)
    decided = S.compare("<", X, S.const(40))
    s = site(X * 4 + Y * 132, decided)
    assert index_reads(s, {"threadIdx.x", "threadIdx.y"}) == (True, (32,), False)
    s = site(X * X * 4, undecided)
    assert index_reads(s, {"threadIdx.x", "blockIdx.x", "n"}) == (True, False, False)


def test_a_walk_key_is_hashed_once_as_its_fields_are():
    """`walk_key` works the hash out once (`WalkKey.digest`): it is the hash of the compared
    fields, so a key made of the same fields without it is equal, hashes the same and finds
    the same entry; a key of another site differs."""
    arch = get_arch("sm_90")
    key = walk_key(site(X * 4 + BX * 512, S.compare("<", X, N)), arch, ())
    assert key is not None and key.digest != 0
    same = WalkKey(*(getattr(key, f.name) for f in fields(key) if f.name != "digest"))
    assert same.digest == 0 and same == key and hash(same) == hash(key) == key.digest
    assert {key: 1}[same] == 1
    other = walk_key(site(X * 4 + BX * 512 + 4, S.compare("<", X, N)), arch, ())
    assert other is not None and other != key


def test_equal_keys_are_one_key_and_the_index_reads_are_remembered(monkeypatch):
    """An access whose key equals one made before gets that key itself (`walk_keys._KEYS`), so
    that its warps' look-ups find it by identity; `index_reads` is asked once per address, mask,
    loops and period (`walk_keys._READS`), and gives what it gives."""
    from analyzer.analysis import walk_keys

    monkeypatch.setattr(walk_keys, "_KEYS", {})
    monkeypatch.setattr(walk_keys, "_READS", {})
    monkeypatch.setattr(walk_keys, "_BY_SITE", {})  # (a site met before would not make its key again)
    asked: list[int] = []
    plain = walk_keys.index_reads

    def counting(s, symbols):
        asked.append(1)
        return plain(s, symbols)

    monkeypatch.setattr(walk_keys, "index_reads", counting)
    arch = get_arch("sm_90")
    first = walk_key(site(X * 4 + BX * 512, S.compare("<", X, N)), arch, ())
    again = walk_key(site(X * 4 + BX * 512, S.compare("<", X, N)), arch, ())
    other = walk_key(site(X * 4 + BX * 512 + 4, S.compare("<", X, N)), arch, ())
    assert first is again and other is not first and other != first
    assert len(asked) == 2  # the first address and the moved one
    s = site(X * 4 + BX * 512, S.compare("<", X, N))
    assert first.index_reads == plain(s, {"threadIdx.x", "blockIdx.x", "n"})
