"""The simulator's memory (`analyzer.sim.memory`): a load of whole, aligned values inside one
buffer's contents takes the short way (`Memory._whole_values`), and gives what the general
way gives, lane by lane, with the same bytes touched and nothing counted out of bounds; any
other load (misaligned, out of bounds, across buffers, past what a buffer has grown to) takes
the general way."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.ir import types as T
from analyzer.sim.memory import CHUNK_BYTES, Memory

INT = T.ScalarType("int", 4, True)


def two_memories() -> list[tuple[Memory, int, int]]:
    """Two memories alike, each with a fixed buffer of 4,096 ints (iota: int i holds i) and a
    growable one, and the bases of those buffers."""
    out = []
    for _ in range(2):
        memory = Memory(fill="iota")
        fixed = memory.add("a", "global", 4096 * 4, INT)
        grown = memory.add("b", "global", None, INT)
        out.append((memory, fixed.base, grown.base))
    return out


def fast_and_slow(where: str, lanes: list[int]) -> tuple[Memory, Memory, np.ndarray]:
    """Two memories alike, their contents made as after a first load of each buffer, the second
    held to the general way; and the lanes' addresses in the `where` buffer ("fixed", "grown",
    or "both": the first lane in the fixed one, the second in the growable one)."""
    (fast, fixed, grown), (slow, *_) = two_memories()
    bases = {"fixed": [fixed] * len(lanes), "grown": [grown] * len(lanes), "both": [fixed, grown]}[where]
    addrs = np.array([b + lane for b, lane in zip(bases, lanes)], np.int64)
    for memory in (fast, slow):
        memory.read(np.array([fixed, grown], np.int64), np.dtype(np.int32))
    slow._whole_values = lambda *args: None  # the general way only
    return fast, slow, addrs


@pytest.mark.parametrize(
    ("where", "lanes", "short"),
    [
        ("fixed", [4 * i for i in range(32)], True),
        ("fixed", [4 * (31 - i) * 7 for i in range(32)], True),  # any order, strided
        ("fixed", [4 * i + 2 for i in range(32)], False),  # misaligned: bytes of two ints
        ("fixed", [4 * 4095, 4 * 4096], False),  # the second one past the end
        ("fixed", [-4, 0], False),  # before the start
        ("both", [0, 0], False),  # two buffers
        ("grown", [0, 4 * 10**6], False),  # past what the growable buffer holds
    ],
)
def test_a_load_of_whole_values_in_one_buffer_takes_the_short_way_and_reads_the_same(where, lanes, short):
    fast, slow, addrs = fast_and_slow(where, lanes)
    assert (fast._whole_values(addrs, 4) is not None) is short
    got, want = fast.read(addrs, np.dtype(np.int32)), slow.read(addrs, np.dtype(np.int32))
    assert got.tolist() == want.tolist()
    assert fast.out_of_bounds == slow.out_of_bounds
    assert [r.touched for r in fast.regions.values()] == [r.touched for r in slow.regions.values()]


def test_iota_contents_read_the_short_way_are_each_ints_index():
    ((memory, fixed, _), _) = two_memories()
    memory.read(np.array([fixed], np.int64), np.dtype(np.int32))
    addrs = np.array([fixed + 4 * i for i in (5, 0, 4095, 17)], np.int64)
    assert memory.read(addrs, np.dtype(np.int32)).tolist() == [5, 0, 4095, 17]
    assert memory.regions[1].touched == 4096 * 4


@pytest.mark.parametrize(
    ("where", "lanes", "short"),
    [
        ("fixed", [4 * i for i in range(32)], True),
        ("fixed", [4 * (31 - i) * 7 for i in range(32)], True),  # any order, strided
        ("fixed", [4 * 3] * 32, True),  # every lane on one int: the last one's value stays
        ("fixed", [4 * i + 2 for i in range(32)], False),  # misaligned: bytes of two ints
        ("fixed", [4 * 4095, 4 * 4096], False),  # the second one past the end
        ("both", [0, 0], False),  # two buffers
        ("grown", [0, 4 * 10**6], False),  # past what the growable buffer holds
    ],
)
def test_a_store_of_whole_values_in_one_buffer_takes_the_short_way_and_writes_the_same(where, lanes, short):
    fast, slow, addrs = fast_and_slow(where, lanes)
    values = np.arange(1000, 1000 + len(lanes)).astype(np.float64)  # converted to int on the way
    assert (fast._whole_values(addrs, 4) is not None) is short
    fast.write(addrs, values, np.dtype(np.int32))
    slow.write(addrs, values, np.dtype(np.int32))
    for got, want in zip(fast.regions.values(), slow.regions.values()):
        assert got.touched == want.touched
        got.make(0, got.touched)
        want.make(0, want.touched)
        assert got.data[: got.touched].tobytes() == want.data[: want.touched].tobytes()
    assert fast.out_of_bounds == slow.out_of_bounds


def test_contents_are_made_only_for_the_chunks_read_and_are_what_reading_every_chunk_gives():
    far = 40 * CHUNK_BYTES + 12  # an int in the 41st chunk
    lazy, eager = Memory(fill="random", seed=5), Memory(fill="random", seed=5)
    for memory in (lazy, eager):
        memory.add("a", "global", None, INT)
    base = lazy.regions[1].base
    every = np.arange(0, far + 4, 4, dtype=np.int64) + base
    want = eager.read(every, np.dtype(np.int32))  # every chunk up to `far`, in order
    got = lazy.read(np.array([base + far, base + 8], np.int64), np.dtype(np.int32))
    assert got.tolist() == [want[-1], want[2]]
    assert np.flatnonzero(lazy.regions[1].made).tolist() == [0, 40]
    assert lazy.buffer("a", INT).tolist() == want.tolist()  # the rest made when read back


def test_a_store_into_a_chunk_not_made_keeps_the_rest_of_its_contents():
    stored, read_first = Memory(fill="iota"), Memory(fill="iota")
    for memory in (stored, read_first):
        memory.add("a", "global", None, INT)
    base = stored.regions[1].base
    read_first.read(np.array([base + 3 * CHUNK_BYTES], np.int64), np.dtype(np.int32))
    for memory in (stored, read_first):
        memory.write(np.array([base + 3 * CHUNK_BYTES + 8], np.int64), np.array([-1]), np.dtype(np.int32))
    around = base + 3 * CHUNK_BYTES + 4 * np.arange(4, dtype=np.int64)
    got = stored.read(around, np.dtype(np.int32)).tolist()
    assert got == read_first.read(around, np.dtype(np.int32)).tolist()
    first = 3 * CHUNK_BYTES // 4
    assert got == [first, first + 1, -1, first + 3]


def test_a_constant_at_every_thread_is_made_once_per_value_and_type_and_read_only():
    import numpy as np
    import pytest

    from analyzer.arch import get_arch
    from analyzer.ir import types as T
    from analyzer.ir.nodes import Module
    from analyzer.sim.memory import Memory
    from analyzer.sim.warp import BlockInterpreter

    interp = BlockInterpreter(
        Module("k.cu", {}, [], [], [], [], []),
        Memory(),
        (64, 1, 1),
        (1, 1, 1),
        print,
        10**6,
        set(),
        {},
        get_arch("sm_90"),
    )
    interp.resize(2)
    one = interp.full(1, T.INT)
    assert one is interp.full(1, T.INT) and one.tolist() == [1] * 128 and one.dtype == np.int32
    assert not one.flags.writeable
    with pytest.raises(ValueError):
        one += 1
    # equal values of other kinds or signs are other arrays
    assert interp.full(1.0, T.FLOAT).dtype == np.float32 and interp.full(True, T.INT) is not one
    zero, negative = interp.full(0.0, T.FLOAT), interp.full(-0.0, T.FLOAT)
    assert np.signbit(negative).all() and not np.signbit(zero).any()
    assert interp.full(2**32 + 5, T.INT).tolist() == [5] * 128  # wrapped as C does
    interp.resize(1)
    assert len(interp.full(1, T.INT)) == 64  # made again for the new number of threads


def test_the_runs_of_chunks_made_are_copied_whole_when_a_buffer_grows():
    import numpy as np

    from analyzer.ir import types as T
    from analyzer.sim.memory import CHUNK_BYTES, Memory, _runs

    assert _runs(np.array([1, 1, 0, 1, 0, 0, 1, 1, 1], bool)) == [(0, 2), (3, 4), (6, 9)]
    assert _runs(np.zeros(3, bool)) == [] and _runs(np.ones(2, bool)) == [(0, 2)]
    memory = Memory(fill="random", seed=3)
    region = memory.add("p", "global", None, T.FLOAT)  # growable
    reads = [0, 1, 3]  # chunks 0 and 1 (one run), then 3 after a gap
    before = [
        memory.read(np.array([region.base + c * CHUNK_BYTES + 8], np.int64), np.dtype(np.float32))[0] for c in reads
    ]
    memory.read(np.array([region.base + 40 * CHUNK_BYTES], np.int64), np.dtype(np.float32))  # grows past them
    assert len(region.data) > 40 * CHUNK_BYTES and region.made[[0, 1, 3]].all() and not region.made[2]
    after = [
        memory.read(np.array([region.base + c * CHUNK_BYTES + 8], np.int64), np.dtype(np.float32))[0] for c in reads
    ]
    assert after == before and not region.data[2 * CHUNK_BYTES : 3 * CHUNK_BYTES].any()
