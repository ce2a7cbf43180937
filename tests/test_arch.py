"""The architecture table: the hardware model's numbers, as data."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.api import Options, check_source
from analyzer.arch import (
    ARCHITECTURES,
    DEFAULT_ARCH,
    UnknownArchitecture,
    get_arch,
)

VOLTA_TO_HOPPER = ("sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90")
# the seed articles' hardware (tests/test_seed_architectures.py holds them to the guide's rules)
SEED_GENERATIONS = (
    "sm_10",
    "sm_11",
    "sm_12",
    "sm_13",
    "sm_20",
    "sm_21",
    "sm_30",
    "sm_30-bank8",
    "sm_35",
    "sm_35-bank8",
    "sm_37",
)


def test_table_holds_volta_to_hopper():
    assert set(VOLTA_TO_HOPPER) <= set(ARCHITECTURES)


def test_table_holds_the_seed_generations_and_they_charge_global_memory_in_transactions():
    assert set(SEED_GENERATIONS) <= set(ARCHITECTURES)
    assert not any(ARCHITECTURES[name].charges_sectors for name in SEED_GENERATIONS)
    assert all(ARCHITECTURES[name].charges_sectors for name in VOLTA_TO_HOPPER)


@pytest.mark.parametrize("name", VOLTA_TO_HOPPER + SEED_GENERATIONS)
def test_each_entry_is_named_by_its_key_and_described(name):
    arch = ARCHITECTURES[name]
    assert arch.name == name
    assert arch.description


def test_default_architecture_is_hopper():
    assert DEFAULT_ARCH == "sm_90"
    assert get_arch() is ARCHITECTURES["sm_90"]


def test_sm_90_has_the_numbers_of_the_hardware_model():
    arch = get_arch("sm_90")
    assert arch.warp_size == 32
    assert arch.shared_banks == 32
    assert arch.bank_bytes == 4
    assert dict(arch.shared_phase_lanes) == {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}
    assert arch.sector_bytes == 32
    assert arch.cache_line_bytes == 128
    assert arch.global_pointer_alignment == 256
    assert arch.access_sizes == (1, 2, 4, 8, 16)
    assert arch.max_access_bytes == 16


@pytest.mark.parametrize(
    ("changes", "period"),
    [({}, 128), ({"shared_banks": 16}, 64), ({"shared_banks": 64}, 256), ({"sector_bytes": 48}, 384)],
)
def test_the_address_period_is_a_whole_row_of_banks_and_a_whole_number_of_sectors(changes, period):
    assert dataclasses.replace(get_arch("sm_90"), **changes).address_period == period


@pytest.mark.parametrize("name", VOLTA_TO_HOPPER)
def test_every_generation_charges_by_the_same_rules(name):
    other = dataclasses.replace(ARCHITECTURES[name], name="sm_90", description="")
    assert other == dataclasses.replace(get_arch("sm_90"), description="")


@pytest.mark.parametrize(
    ("access_bytes", "lanes", "phases"),
    [(1, 32, 1), (2, 32, 1), (4, 32, 1), (8, 16, 2), (16, 8, 4)],
)
def test_wide_accesses_are_served_in_more_phases(access_bytes, lanes, phases):
    arch = get_arch()
    assert arch.lanes_per_phase(access_bytes) == lanes
    assert arch.phases_per_warp(access_bytes) == phases


@pytest.mark.parametrize("access_bytes", [0, 3, 12, 32])
def test_an_access_size_the_hardware_lacks_is_refused(access_bytes):
    with pytest.raises(ValueError, match="bytes"):
        get_arch().lanes_per_phase(access_bytes)


def test_an_unknown_name_raises_a_key_error_listing_the_valid_names():
    with pytest.raises(UnknownArchitecture) as excinfo:
        get_arch("sm_50")
    assert isinstance(excinfo.value, KeyError)
    message = str(excinfo.value)
    assert "'sm_50'" in message
    for name in VOLTA_TO_HOPPER:
        assert name in message


def test_an_unhashable_name_is_an_unknown_architecture_too():
    with pytest.raises(UnknownArchitecture):
        get_arch(["sm_90"])  # type: ignore[arg-type]


def test_architectures_are_frozen_and_hashable():
    arch = get_arch()
    with pytest.raises(dataclasses.FrozenInstanceError):
        arch.shared_banks = 16  # type: ignore[misc]
    assert {arch: 1}[get_arch("sm_90")] == 1


STRIDE_4 = """\
__global__ void stride_4() {
    __shared__ float s[32 * 4];
    s[4 * threadIdx.x] = 1.0f;
}
"""


def test_a_new_generation_is_one_more_record(monkeypatch):
    """A GPU with other numbers is one more entry in the table, no new code: its name is
    accepted, and check charges with its numbers (64 banks: words 0, 4, ..., 124 fall two
    to a bank, 2 wavefronts instead of sm_90's 4)."""
    future = dataclasses.replace(get_arch("sm_90"), name="sm_100", description="a future GPU", shared_banks=64)
    monkeypatch.setitem(ARCHITECTURES, "sm_100", future)
    assert get_arch("sm_100") is future

    def wavefronts(arch: str) -> int | None:
        report = check_source("stride_4.cu", STRIDE_4, Options(arch=arch, block=(32, 1, 1)))
        (cost,) = report.kernels[0].costs
        return cost.per_request

    assert wavefronts("sm_90") == 4
    assert wavefronts("sm_100") == 2


def test_an_architecture_record_is_taken_where_a_name_is():
    banks_16 = dataclasses.replace(get_arch("sm_90"), shared_banks=16)
    assert get_arch(banks_16) is banks_16
