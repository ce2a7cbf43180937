"""The architecture table: the hardware model's numbers, as data."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.api import Options, check_source
from analyzer.arch import (
    ARCHITECTURES,
    DEFAULT_ARCH,
    AssumedRules,
    UnknownArchitecture,
    assumption,
    get_arch,
)

VOLTA_TO_HOPPER = ("sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90")
BLACKWELL = ("sm_100", "sm_101", "sm_103", "sm_120", "sm_121")
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


def test_table_holds_volta_to_blackwell_and_the_seed_generations():
    assert set(ARCHITECTURES) == set(VOLTA_TO_HOPPER) | set(BLACKWELL) | set(SEED_GENERATIONS)


def test_table_holds_the_seed_generations_and_they_charge_global_memory_in_transactions():
    assert set(SEED_GENERATIONS) <= set(ARCHITECTURES)
    assert not any(ARCHITECTURES[name].charges_sectors for name in SEED_GENERATIONS)
    assert all(ARCHITECTURES[name].charges_sectors for name in VOLTA_TO_HOPPER)


@pytest.mark.parametrize("name", VOLTA_TO_HOPPER + BLACKWELL + SEED_GENERATIONS)
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


@pytest.mark.parametrize("name", VOLTA_TO_HOPPER + BLACKWELL)
def test_every_generation_charges_by_the_same_rules(name):
    """Everything but the name, the description, the opt-in shared memory (which the cost
    model does not read) and whether the rules were measured is Hopper's."""
    unread = {"description": "", "shared_memory_per_block_opt_in": 0, "assumed_like": None}
    other = dataclasses.replace(ARCHITECTURES[name], name="sm_90", **unread)
    assert other == dataclasses.replace(get_arch("sm_90"), **unread)


# the CUDA Programming Guide's "Compute Capabilities" table, "Maximum amount of shared memory
# per thread block" (the opt-in limit), in KiB
OPT_IN_KIB = {
    "sm_70": 96,
    "sm_72": 96,
    "sm_75": 64,
    "sm_80": 163,
    "sm_86": 99,
    "sm_87": 163,
    "sm_89": 99,
    "sm_90": 227,
    "sm_100": 227,
    "sm_101": 227,
    "sm_103": 227,
    "sm_120": 99,
    "sm_121": 99,
    # before compute capability 7.0 there is no opt-in: the most a block may use at all
    **dict.fromkeys(("sm_10", "sm_11", "sm_12", "sm_13"), 16),
    **dict.fromkeys(("sm_20", "sm_21", "sm_30", "sm_30-bank8", "sm_35", "sm_35-bank8", "sm_37"), 48),
}


def test_the_opt_in_shared_memory_per_block_is_the_programming_guides():
    assert {name: arch.shared_memory_per_block_opt_in // 1024 for name, arch in ARCHITECTURES.items()} == OPT_IN_KIB
    # what a block may declare statically is 48 KiB on every generation since Fermi, Blackwell included
    assert {a.shared_memory_per_block for n, a in ARCHITECTURES.items() if n not in SEED_GENERATIONS[:4]} == {48 * 1024}
    assert {ARCHITECTURES[n].shared_memory_per_block for n in SEED_GENERATIONS[:4]} == {16 * 1024}


@pytest.mark.parametrize("name", BLACKWELL)
def test_blackwell_follows_hoppers_measured_rules_as_an_assumption(name):
    assert ARCHITECTURES[name].assumed_like == "sm_90"
    assert assumption(name) == AssumedRules(arch=name, like="sm_90")
    assert assumption(name).message == (  # type: ignore[union-attr]
        f"{name} is costed with the rules measured on sm_90 (32 banks of 4 bytes, 32-byte sectors): "
        f"assumed, not measured on {name}"
    )


@pytest.mark.parametrize("name", (*VOLTA_TO_HOPPER, "sm_35"))
def test_a_generation_of_the_hardware_model_or_an_unknown_one_has_no_assumption_note(name):
    assert assumption(name) is None


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
    future = dataclasses.replace(get_arch("sm_90"), name="sm_200", description="a future GPU", shared_banks=64)
    monkeypatch.setitem(ARCHITECTURES, "sm_200", future)
    assert get_arch("sm_200") is future

    def wavefronts(arch: str) -> int | None:
        report = check_source("stride_4.cu", STRIDE_4, Options(arch=arch, block=(32, 1, 1)))
        (cost,) = report.kernels[0].costs
        return cost.per_request

    assert wavefronts("sm_90") == 4
    assert wavefronts("sm_200") == 2


def test_an_architecture_record_is_taken_where_a_name_is():
    banks_16 = dataclasses.replace(get_arch("sm_90"), shared_banks=16)
    assert get_arch(banks_16) is banks_16


def test_check_with_a_blackwell_arch_says_in_text_and_json_that_its_rules_are_assumed(tmp_path, capsys, monkeypatch):
    import json

    from analyzer import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(STRIDE_4)
    assert cli.main(["check", "-q", "--isolated", "--block", "32", "--arch", "sm_120", "k.cu"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("k.cu:3:5: warning: 4-way bank conflict on `s`")  # the costs are Hopper's
    assert lines[-1] == (
        "warplint: note: sm_120 is costed with the rules measured on sm_90 (32 banks of 4 bytes, "
        "32-byte sectors): assumed, not measured on sm_120"
    )
    cli.main(["check", "-q", "--isolated", "--block", "32", "--arch", "sm_100", "--format", "json", "k.cu"])
    document = json.loads(capsys.readouterr().out)
    assert document["arch"] == "sm_100"
    assert document["notes"] == [
        {
            "kind": "architecture-assumed",
            "arch": "sm_100",
            "like": "sm_90",
            "message": "sm_100 is costed with the rules measured on sm_90 (32 banks of 4 bytes, 32-byte sectors): "
            "assumed, not measured on sm_100",
        }
    ]
    cli.main(["check", "-q", "--isolated", "--block", "32", "--arch", "sm_90", "--format", "json", "k.cu"])
    assert "notes" not in json.loads(capsys.readouterr().out)
