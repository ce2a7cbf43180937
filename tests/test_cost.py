"""What one warp's request costs: wavefronts for shared memory, sectors for global memory.

Every row of the "Measured on an H100" table of docs/hardware-model.md is here,
with the exact figure Nsight Compute reported.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
import random
from collections.abc import Callable

import pytest

import analyzer.analysis.cost as cost_module
from analyzer.analysis.cost import (
    BankCollision,
    GlobalCost,
    SharedCost,
    global_cost,
    shared_cost,
    split_access,
)
from analyzer.arch import get_arch

SM90 = get_arch("sm_90")
BASE = 256 * 4096  # a cudaMalloc'd pointer: 256-byte aligned
LANES = range(32)


def shared(index: Callable[[int], int], element_bytes: int = 4) -> list[int]:
    """Byte addresses of `s[index(tid)]` for the 32 lanes of warp 0 (shared arrays start at 0)."""
    return [element_bytes * index(tid) for tid in LANES]


def global_(index: Callable[[int], int], element_bytes: int = 4) -> list[int]:
    """Byte addresses of `x[index(tid)]` for the 32 lanes of warp 0."""
    return [BASE + element_bytes * index(tid) for tid in LANES]


def wavefronts(index: Callable[[int], int], element_bytes: int = 4) -> int:
    return shared_cost(shared(index, element_bytes), element_bytes, SM90).wavefronts


# --- The H100 measurements --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "index", "measured"),
    [
        ("s[tid]", lambda t: t, 1),
        ("s[4*tid]", lambda t: 4 * t, 4),
        ("s[16*tid]", lambda t: 16 * t, 16),
        ("s[17*tid]", lambda t: 17 * t, 1),
        ("s[3]", lambda t: 3, 1),
    ],
)
def test_shared_float_costs_what_the_h100_measured(source, index, measured):
    cost = shared_cost(shared(index), 4, SM90)
    assert (cost.wavefronts, cost.ideal) == (measured, 1), source


def test_stride_17_is_conflict_free():
    assert shared_cost(shared(lambda t: 17 * t), 4, SM90).ways == 1


def test_all_lanes_reading_s_3_is_one_broadcast_wavefront():
    cost = shared_cost(shared(lambda t: 3), 4, SM90)
    assert cost == SharedCost(wavefronts=1, ideal=1, phases=1, worst=())


def test_global_x_tid_is_4_sectors_ideal_4():
    cost = global_cost(global_(lambda t: t), 4, SM90)
    assert (cost.sectors, cost.ideal) == (4, 4)
    assert cost.efficiency == 1.0


def test_global_x_1000_tid_is_32_sectors_ideal_4():
    cost = global_cost(global_(lambda t: 1000 * t), 4, SM90)
    assert (cost.sectors, cost.ideal) == (32, 4)
    assert cost.efficiency == 4 / 32


def test_each_field_of_an_unaligned_vec3d_is_a_strided_load_of_12_sectors():
    # struct vec3d {float x, y, z;}: 12 bytes, align 4 -> three 4-byte loads, stride 12
    pieces = split_access(12, 4, SM90)
    assert pieces == ((0, 4), (4, 4), (8, 4))
    for offset, size in pieces:  # data[tid].x, .y, .z
        addresses = [BASE + 12 * tid + offset for tid in LANES]
        cost = global_cost(addresses, size, SM90)
        assert (cost.sectors, cost.ideal) == (12, 4)


def test_an_align_16_vec3d_is_one_16_byte_load_of_16_sectors_ideal_16():
    pieces = split_access(16, 16, SM90)
    assert pieces == ((0, 16),)
    cost = global_cost([BASE + 16 * tid for tid in LANES], 16, SM90)
    assert (cost.sectors, cost.ideal) == (16, 16)


def test_an_offset_of_one_float_costs_5_sectors_not_4():
    cost = global_cost(global_(lambda t: t + 1), 4, SM90)
    assert (cost.sectors, cost.ideal) == (5, 4)
    assert cost.sector_addresses == tuple(BASE + 32 * k for k in range(5))


# --- Shared memory: strides, widths, swizzles ------------------------------------------------


@pytest.mark.parametrize("stride", range(1, 34))
def test_float_stride_conflicts_gcd_of_stride_and_32_ways(stride):
    cost = shared_cost(shared(lambda t: stride * t), 4, SM90)
    assert cost.ways == math.gcd(stride, 32)
    assert cost.wavefronts == math.gcd(stride, 32)
    assert cost.ideal == 1


def test_stride_32_is_32_way_on_bank_0():
    cost = shared_cost(shared(lambda t: 32 * t), 4, SM90)
    assert cost.wavefronts == 32
    assert cost.conflicts == 31
    assert cost.worst == (BankCollision(bank=0, lanes=tuple(LANES), words=tuple(32 * t for t in LANES)),)
    assert cost.worst[0].ways == 32


def test_double_stride_1_is_two_conflict_free_half_warps():
    cost = shared_cost(shared(lambda t: t, 8), 8, SM90)
    assert cost == SharedCost(wavefronts=2, ideal=2, phases=2, worst=())
    assert cost.ways == 1


def test_double_stride_2_is_2_way_in_each_half_warp():
    cost = shared_cost(shared(lambda t: 2 * t, 8), 8, SM90)
    assert (cost.wavefronts, cost.ideal, cost.phases, cost.ways) == (4, 2, 2, 2)
    assert cost.worst == (
        BankCollision(bank=0, lanes=(0, 8), words=(0, 32)),
        BankCollision(bank=0, lanes=(16, 24), words=(64, 96)),
    )


def test_float4_stride_1_is_four_conflict_free_quarter_warps():
    cost = shared_cost(shared(lambda t: t, 16), 16, SM90)
    assert cost == SharedCost(wavefronts=4, ideal=4, phases=4, worst=())


def test_float4_stride_2_is_2_way_in_each_quarter_warp():
    cost = shared_cost(shared(lambda t: 2 * t, 16), 16, SM90)
    assert (cost.wavefronts, cost.ideal, cost.ways) == (8, 4, 2)
    assert len(cost.worst) == 4
    assert cost.worst[0] == BankCollision(bank=0, lanes=(0, 4), words=(0, 32))


@pytest.mark.parametrize(
    ("stride", "expected"),
    [(1, 1), (2, 1), (3, 1), (4, 1), (5, 2), (64, 16), (128, 32), (256, 32)],
)
def test_char_accesses_conflict_only_on_distinct_words(stride, expected):
    assert wavefronts(lambda t: stride * t, 1) == expected


@pytest.mark.parametrize(("stride", "expected"), [(1, 1), (2, 1), (3, 2), (4, 2), (32, 16), (64, 32)])
def test_short_accesses_conflict_only_on_distinct_words(stride, expected):
    assert wavefronts(lambda t: stride * t, 2) == expected


def test_neighbouring_chars_share_a_word_and_never_conflict():
    cost = shared_cost([tid // 4 * 128 + tid % 4 for tid in LANES], 1, SM90)
    assert cost.wavefronts == 8  # 8 distinct words, all on bank 0
    assert cost.worst[0].lanes == tuple(LANES)
    assert cost.worst[0].words == tuple(32 * k for k in range(8))


@pytest.mark.parametrize("col", [0, 1, 7, 31])
def test_column_read_of_an_unswizzled_tile_is_32_way(col):
    assert wavefronts(lambda row: row * 32 + col) == 32


@pytest.mark.parametrize("col", range(32))
def test_column_read_of_an_xor_swizzled_tile_is_conflict_free(col):
    assert wavefronts(lambda row: row * 32 + (col ^ row)) == 1


@pytest.mark.parametrize("row", [0, 5, 31])
def test_row_read_of_an_xor_swizzled_tile_is_conflict_free(row):
    assert wavefronts(lambda col: row * 32 + (col ^ row)) == 1


def test_padded_tile_column_read_is_conflict_free():
    assert wavefronts(lambda row: row * 33 + 5) == 1


# --- Masked lanes and partial warps ----------------------------------------------------------


def test_inactive_lanes_take_no_part():
    addresses = [128 * tid if tid % 2 == 0 else None for tid in LANES]
    cost = shared_cost(addresses, 4, SM90)
    assert (cost.wavefronts, cost.ideal) == (16, 1)
    assert cost.worst[0].lanes == tuple(range(0, 32, 2))


def test_a_masked_lane_can_remove_the_conflict():
    addresses: list[int | None] = [4 * tid for tid in LANES]
    addresses[1] = 128  # conflicts with lane 0 on bank 0 ...
    assert shared_cost(addresses, 4, SM90).wavefronts == 2
    addresses[0] = None  # ... unless lane 0 sits the branch out
    assert shared_cost(addresses, 4, SM90).wavefronts == 1


def test_a_warp_with_no_active_lane_costs_nothing():
    cost = shared_cost([None] * 32, 4, SM90)
    assert cost == SharedCost(wavefronts=0, ideal=0, phases=1, worst=())
    assert cost.ways == 1
    assert shared_cost([], 4, SM90) == SharedCost(wavefronts=0, ideal=0, phases=0, worst=())


def test_an_idle_half_warp_of_doubles_is_not_part_of_the_ideal():
    addresses = [8 * tid if tid < 16 else None for tid in LANES]
    cost = shared_cost(addresses, 8, SM90)
    assert (cost.wavefronts, cost.ideal, cost.phases, cost.ways) == (1, 1, 2, 1)


def test_a_partial_warp_of_8_lanes_is_one_phase():
    cost = shared_cost([4 * 32 * tid for tid in range(8)], 4, SM90)
    assert (cost.wavefronts, cost.ideal, cost.phases) == (8, 1, 1)


def test_more_lanes_than_a_warp_is_an_error():
    with pytest.raises(ValueError, match="warp of 32"):
        shared_cost([0] * 33, 4, SM90)


@pytest.mark.parametrize("access_bytes", [0, 3, 12, 32])
def test_an_access_size_no_load_moves_is_an_error(access_bytes):
    with pytest.raises(ValueError):
        shared_cost([0] * 32, access_bytes, SM90)
    with pytest.raises(ValueError):
        global_cost([0] * 32, access_bytes, SM90)


# --- Broadcast and the collision detail ------------------------------------------------------


def test_all_lanes_on_one_word_is_a_broadcast():
    for access_bytes in (1, 2, 4):
        assert shared_cost([64] * 32, access_bytes, SM90).wavefronts == 1
    assert shared_cost([64] * 32, 8, SM90).wavefronts == 2  # one per half-warp
    assert shared_cost([64] * 32, 16, SM90).wavefronts == 4  # one per quarter-warp


def test_lanes_sharing_a_word_are_listed_but_add_no_wavefront():
    addresses = [0, 0, 128] + [4 * tid for tid in range(3, 32)]
    cost = shared_cost(addresses, 4, SM90)
    assert cost.wavefronts == 2
    assert cost.worst == (BankCollision(bank=0, lanes=(0, 1, 2), words=(0, 32)),)


def test_the_lowest_bank_is_reported_on_a_tie():
    cost = shared_cost(shared(lambda t: 2 * t), 4, SM90)
    assert cost.wavefronts == 2
    assert cost.worst == (BankCollision(bank=0, lanes=(0, 16), words=(0, 32)),)


def test_the_most_conflicted_phase_comes_first():
    # half-warp 0: stride 2 (2-way); half-warp 1: stride 8 (8-way)
    addresses = [16 * tid for tid in range(16)] + [1024 + 64 * tid for tid in range(16)]
    cost = shared_cost(addresses, 8, SM90)
    assert cost.wavefronts == 2 + 8
    assert [c.ways for c in cost.worst] == [8, 2]
    assert cost.worst[0] == BankCollision(bank=0, lanes=tuple(range(16, 32, 2)), words=tuple(range(256, 512, 32)))
    assert cost.worst[1] == BankCollision(bank=0, lanes=(0, 8), words=(0, 32))


# --- Global memory ---------------------------------------------------------------------------


@pytest.mark.parametrize(("access_bytes", "sectors"), [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16)])
def test_a_coalesced_warp_touches_exactly_the_ideal_sectors(access_bytes, sectors):
    cost = global_cost(global_(lambda t: t, access_bytes), access_bytes, SM90)
    assert cost == GlobalCost(
        sectors=sectors,
        ideal=sectors,
        bytes_requested=32 * access_bytes,
        sector_addresses=tuple(BASE + 32 * k for k in range(sectors)),
    )


@pytest.mark.parametrize(("access_bytes", "sectors"), [(1, 2), (2, 4), (4, 8), (8, 16), (16, 32)])
def test_a_strided_warp_wastes_sectors(access_bytes, sectors):
    cost = global_cost(global_(lambda t: 2 * t, access_bytes), access_bytes, SM90)
    assert cost.sectors == sectors


def test_an_access_straddling_a_sector_boundary_touches_both():
    cost = global_cost([BASE + 30], 4, SM90)
    assert (cost.sectors, cost.ideal, cost.bytes_requested) == (2, 1, 4)
    assert cost.sector_addresses == (BASE, BASE + 32)
    assert cost.efficiency == 0.5


def test_a_misaligned_shared_access_touches_both_words():
    cost = shared_cost([2, 128], 4, SM90)  # words 0 and 1; word 32 also on bank 0
    assert cost.wavefronts == 2
    assert cost.worst == (BankCollision(bank=0, lanes=(0, 1), words=(0, 32)),)


def test_inactive_lanes_are_not_requested_from_global_memory():
    addresses = [BASE + 4 * tid if tid < 8 else None for tid in LANES]
    cost = global_cost(addresses, 4, SM90)
    assert (cost.sectors, cost.ideal, cost.bytes_requested) == (1, 1, 32)


def test_a_global_broadcast_is_one_sector_and_fully_efficient():
    cost = global_cost([BASE] * 32, 4, SM90)
    # the ideal is the model's: 32 lanes x 4 bytes packed = 4 sectors; one sector beats it
    assert (cost.sectors, cost.ideal) == (1, 4)
    assert cost.efficiency == 1.0


def test_lanes_sharing_words_count_every_lane_toward_the_ideal():
    # two half-warps each read one word of its own row (1 KiB apart): 2 sectors, ideal 4
    cost = global_cost([BASE] * 16 + [BASE + 1024] * 16, 4, SM90)
    assert (cost.sectors, cost.ideal) == (2, 4)
    # 16 active lanes of 8 bytes ask for 128 bytes: ideal 4 sectors
    assert global_cost([BASE + 8 * i for i in range(16)] + [None] * 16, 8, SM90).ideal == 4


def test_a_warp_with_no_active_lane_touches_no_sector():
    cost = global_cost([None] * 32, 4, SM90)
    assert cost == GlobalCost(sectors=0, ideal=0, bytes_requested=0, sector_addresses=())
    assert cost.efficiency == 1.0


# --- split_access ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "align", "pieces"),
    [
        (1, 1, ((0, 1),)),
        (2, 2, ((0, 2),)),
        (4, 4, ((0, 4),)),
        (8, 8, ((0, 8),)),
        (16, 16, ((0, 16),)),
        (12, 4, ((0, 4), (4, 4), (8, 4))),  # float3, struct {float x, y, z;}
        (8, 4, ((0, 4), (4, 4))),  # struct {float a, b;}
        (24, 8, ((0, 8), (8, 8), (16, 8))),  # double3
        (6, 2, ((0, 2), (2, 2), (4, 2))),  # short3
        (32, 16, ((0, 16), (16, 16))),  # two float4
        (3, 1, ((0, 1), (1, 1), (2, 1))),  # char3
        (16, 4, ((0, 4), (4, 4), (8, 4), (12, 4))),  # struct of four floats, no __align__
        (32, 32, ((0, 16), (16, 16))),  # __align__(32): still at most 16 bytes per access
    ],
)
def test_split_access_moves_an_element_in_naturally_aligned_pieces(size, align, pieces):
    assert split_access(size, align, SM90) == pieces


@pytest.mark.parametrize(("size", "align"), [(0, 4), (-4, 4), (12, 3), (12, 0)])
def test_split_access_refuses_impossible_elements(size, align):
    with pytest.raises(ValueError):
        split_access(size, align, SM90)


# --- The architecture is data ----------------------------------------------------------------


def test_a_16_bank_architecture_charges_by_its_own_table():
    sm_1x = dataclasses.replace(
        SM90,
        name="sm_13",
        shared_banks=16,
        shared_phase_lanes=((1, 16), (2, 16), (4, 16), (8, 8), (16, 4)),
    )
    cost = shared_cost(shared(lambda t: t), 4, sm_1x)
    assert (cost.wavefronts, cost.ideal, cost.phases) == (2, 2, 2)  # two half-warps
    assert shared_cost(shared(lambda t: 16 * t), 4, sm_1x).ways == 16
    assert shared_cost(shared(lambda t: 16 * t), 4, SM90).ways == 16
    assert shared_cost(shared(lambda t: 8 * t), 4, sm_1x).ways == 8
    assert shared_cost(shared(lambda t: 8 * t), 4, SM90).ways == 8
    assert shared_cost(shared(lambda t: 17 * t), 4, sm_1x).ways == 1


# --- Against a word-by-word reference --------------------------------------------------------


def _reference_shared(addresses, access_bytes, arch):
    per_phase = arch.lanes_per_phase(access_bytes)
    total = ideal = phases = 0
    for start in range(0, len(addresses), per_phase):
        phases += 1
        banks: dict[int, set[int]] = {}
        for a in addresses[start : start + per_phase]:
            if a is None:
                continue
            for byte in range(a, a + access_bytes):
                word = byte // arch.bank_bytes
                banks.setdefault(word % arch.shared_banks, set()).add(word)
        if banks:
            ideal += 1
            total += max(len(words) for words in banks.values())
    return total, ideal, phases


def _reference_sectors(addresses, access_bytes, arch):
    return sorted(
        {
            (byte // arch.sector_bytes) * arch.sector_bytes
            for a in addresses
            if a is not None
            for byte in range(a, a + access_bytes)
        }
    )


@pytest.mark.parametrize("access_bytes", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("aligned", [True, False])
def test_costs_agree_with_a_byte_by_byte_reference(access_bytes, aligned):
    rng = random.Random(access_bytes * 2 + aligned)
    for _ in range(300):
        n = rng.choice([32, 32, 32, rng.randint(0, 32)])
        stride = rng.choice([0, 1, 2, 3, 4, 8, 16, 17, 32, 33, rng.randint(0, 100)])
        span = rng.choice([64, 512, 4096])
        addresses: list[int | None] = []
        for lane in range(n):
            if rng.random() < 0.15:
                addresses.append(None)
                continue
            index = lane * stride if rng.random() < 0.7 else rng.randrange(span)
            a = index * access_bytes
            if not aligned and rng.random() < 0.3:
                a += rng.randrange(1, 4)
            addresses.append(a)
        got = shared_cost(addresses, access_bytes, SM90)
        assert (got.wavefronts, got.ideal, got.phases) == _reference_shared(addresses, access_bytes, SM90), addresses
        assert len(got.worst) == sum(1 for c in got.worst if c.ways > 1)
        ways = [c.ways for c in got.worst]
        assert ways == sorted(ways, reverse=True)
        for collision in got.worst:
            assert all(w % 32 == collision.bank for w in collision.words)
            assert list(collision.lanes) == sorted(set(collision.lanes))
        sectors = global_cost(addresses, access_bytes, SM90)
        assert list(sectors.sector_addresses) == _reference_sectors(addresses, access_bytes, SM90), addresses
        assert sectors.sectors == len(sectors.sector_addresses)


def test_docstring_examples_hold():
    result = doctest.testmod(cost_module)
    assert result.attempted > 0
    assert result.failed == 0
