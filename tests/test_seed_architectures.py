"""The seed articles' hardware (compute capability 1.x, Fermi, Kepler) charged by its own rules.

Exact costs per warp-level request on small examples, most of them the articles' own, worked
by hand from the CUDA C Programming Guide 5.0, appendix F (the sections `analyzer/arch.py`
cites): first the cost functions on lane addresses, then whole kernels through `check`.
"""

from __future__ import annotations

import pytest

from analyzer.analysis.cost import global_cost, shared_cost
from analyzer.analysis.results import Unit
from analyzer.api import Options, check_source
from analyzer.arch import get_arch
from analyzer.ir.nodes import AccessOp

WARP = range(32)


def words(stride: int, first: int = 0) -> list[int | None]:
    """Byte addresses of a warp of 4-byte shared accesses `stride` words apart."""
    return [4 * (first + stride * lane) for lane in WARP]


# --- shared memory: 16 banks and half-warps (compute capability 1.x) ---------------------------


@pytest.mark.parametrize("arch", ["sm_10", "sm_11", "sm_12", "sm_13"])
def test_stride_4_is_a_quarter_of_the_speed_on_16_banks(arch):
    # seed 000: "a half warp of 16 threads hit each bank four times": 4 per half-warp
    cost = shared_cost(words(4), 4, get_arch(arch))
    assert (cost.wavefronts, cost.ideal, cost.ways) == (8, 2, 4)


def test_stride_17_and_the_broadcast_are_conflict_free_on_16_banks():
    sm11 = get_arch("sm_11")
    assert shared_cost(words(17), 4, sm11).wavefronts == 2
    assert shared_cost([12] * 32, 4, sm11).wavefronts == 2  # data[3]: one broadcast word per half
    assert shared_cost(words(16), 4, sm11).wavefronts == 32  # 16-way in each half-warp


def test_a_16_by_17_tile_is_conflict_free_on_16_banks_and_2_way_today():
    # block[ty][tx] of `float block[16][17]` with a 16 x 16 block: lanes 16-31 are the next row
    rows = [4 * (17 * (lane // 16) + lane % 16) for lane in WARP]
    assert shared_cost(rows, 4, get_arch("sm_13")).wavefronts == 2  # 1 per half-warp
    assert shared_cost(rows, 4, get_arch("sm_90")).wavefronts == 2  # one 32-lane phase, 2-way
    columns = [4 * (17 * (lane % 16) + lane // 16) for lane in WARP]  # block[tx][ty]
    assert shared_cost(columns, 4, get_arch("sm_13")).wavefronts == 2
    assert shared_cost(columns, 4, get_arch("sm_90")).wavefronts == 2


def test_compute_capability_1x_broadcasts_one_word_per_step():
    # F.3.3: `char data = shared[BaseIndex + tid]` conflicts: 4 lanes read each word, and only
    # one word per step is broadcast; banks 1-3 serve one lane each per step: 4 steps
    sm11 = get_arch("sm_11")
    assert shared_cost(list(WARP), 1, sm11).wavefronts == 8
    assert shared_cost(list(WARP), 1, get_arch("sm_90")).wavefronts == 1  # multicast today
    # two words, each read by 8 lanes of a half-warp, in different banks: 2 steps per half
    two_words = [4 * (lane % 2) for lane in WARP]
    assert shared_cost(two_words, 4, sm11).wavefronts == 4
    # 64-bit words at stride 1: two 32-bit requests, a 2-way conflict on 16 banks
    assert shared_cost([8 * lane for lane in WARP], 8, sm11).wavefronts == 4


def test_kepler_serves_words_i_and_i_plus_32_together_in_32_bit_mode():
    assert shared_cost(words(32), 4, get_arch("sm_35")).wavefronts == 16  # rows 0, 0, 1, 1, ...: 2 per row pair
    assert shared_cost(words(32), 4, get_arch("sm_90")).wavefronts == 32
    assert shared_cost(words(4), 4, get_arch("sm_35")).wavefronts == 2  # words b, b+32 | b+64, b+96
    assert shared_cost(words(2), 4, get_arch("sm_35")).wavefronts == 1
    assert shared_cost(words(2), 4, get_arch("sm_90")).wavefronts == 2
    # 8-byte mode: a warp of doubles is one phase; two floats of one 8-byte word never conflict
    bank8 = get_arch("sm_35-bank8")
    assert shared_cost([8 * lane for lane in WARP], 8, bank8).wavefronts == 1
    assert shared_cost(words(2), 4, bank8).wavefronts == 1  # bytes 8k: 8-byte words 0..31, a bank each
    assert shared_cost(words(1), 4, bank8).wavefronts == 1  # two lanes per 8-byte word


# --- global memory: transactions ---------------------------------------------------------------


def floats(first: int = 0, order=lambda lane: lane) -> list[int | None]:
    return [4 * (first + order(lane)) for lane in WARP]


def test_compute_capability_1_0_coalesces_only_the_kth_word_of_an_aligned_segment():
    sm10 = get_arch("sm_10")
    aligned = global_cost(floats(), 4, sm10)
    assert (aligned.sectors, aligned.ideal, aligned.transaction_sizes) == (2, 2, (64, 64))
    # one float off: neither half-warp starts on a 64-byte boundary: 16 transactions each
    assert global_cost(floats(1), 4, sm10).sectors == 32
    # neighbours swapped: all in one segment, but lane k does not read word k
    assert global_cost(floats(order=lambda lane: lane ^ 1), 4, sm10).sectors == 32
    # an inactive lane does not break it (seed 000's `if (tid != 3)`)
    masked = floats()
    masked[3] = None
    assert global_cost(masked, 4, sm10).sectors == 2
    # 16-byte words in sequence: two 128-byte transactions per half-warp
    assert global_cost([16 * lane for lane in WARP], 16, sm10).transaction_sizes == (128,) * 4
    # a 12-byte float3 read field by field: 16 transactions per half-warp (seed 004)
    assert global_cost([12 * lane for lane in WARP], 4, sm10).sectors == 32


def test_compute_capability_1_2_shrinks_segments_to_what_the_half_warp_uses():
    sm12 = get_arch("sm_12")
    assert global_cost(floats(order=lambda lane: lane ^ 1), 4, sm12).transaction_sizes == (64, 64)
    # one float off: bytes 4..67 need the whole 128-byte segment; 68..131 a 64- and a 32-byte one
    off = global_cost(floats(1), 4, sm12)
    assert (off.sectors, off.ideal, off.sector_addresses, off.transaction_sizes) == (
        3,
        2,
        (0, 64, 128),
        (128, 64, 32),
    )
    # 16 rows apart (the naive transpose's store): 16 transactions of 32 bytes per half-warp
    assert global_cost([2048 * lane for lane in WARP], 4, sm12).transaction_sizes == (32,) * 32


def test_fermi_charges_cached_loads_in_128_byte_lines_and_stores_in_32_byte_segments():
    sm20 = get_arch("sm_20")
    load = global_cost(floats(), 4, sm20, AccessOp.LOAD)
    assert (load.sectors, load.ideal, load.transaction_sizes) == (1, 1, (128,))  # seed 001
    store = global_cost(floats(), 4, sm20, AccessOp.STORE)
    assert (store.sectors, store.ideal) == (4, 4)
    assert global_cost([16384 * lane for lane in WARP], 4, sm20).sectors == 32  # a column of A
    assert global_cost([0] * 32, 4, sm20).sectors == 1  # one address for the warp: one line
    # 8-byte words: one request per half-warp, each its own line
    assert global_cost([8 * lane for lane in WARP], 8, sm20).transaction_sizes == (128, 128)


def test_kepler_charges_32_byte_segments():
    sm35 = get_arch("sm_35")
    assert global_cost(floats(), 4, sm35).sectors == 4  # one 128-byte line, 4 segments
    assert global_cost([4000 * lane for lane in WARP], 4, sm35).sectors == 32


# --- whole kernels: units, findings, notes ------------------------------------------------------

STRIDED = """
__global__ void k(float *x)
{
    __shared__ float data[512];
    int tid = threadIdx.x;
    data[tid] = x[tid];
    __syncthreads();
    x[1000 * tid] = data[4 * tid];
}

void launch(float *x) { k<<<1, 32>>>(x); }
"""


def costs(arch: str) -> dict[tuple[str, str], tuple[int | None, int | None, Unit]]:
    report = check_source("k.cu", STRIDED, Options(arch=arch))
    (analysis,) = report.kernels
    return {(c.text, c.op): (c.per_request, c.ideal_per_request, c.unit) for c in analysis.costs}


def test_check_charges_global_memory_in_transactions_on_the_seed_generations():
    assert costs("sm_11") == {
        ("x[tid]", "load"): (2, 2, Unit.TRANSACTIONS),
        ("data[tid]", "store"): (2, 2, Unit.WAVEFRONTS),
        ("data[4 * tid]", "load"): (8, 2, Unit.WAVEFRONTS),
        ("x[1000 * tid]", "store"): (32, 2, Unit.TRANSACTIONS),
    }
    assert costs("sm_20")[("x[tid]", "load")] == (1, 1, Unit.TRANSACTIONS)
    assert costs("sm_90") == {
        ("x[tid]", "load"): (4, 4, Unit.SECTORS),
        ("data[tid]", "store"): (1, 1, Unit.WAVEFRONTS),
        ("data[4 * tid]", "load"): (4, 1, Unit.WAVEFRONTS),
        ("x[1000 * tid]", "store"): (32, 4, Unit.SECTORS),
    }


def test_wl201_says_transactions_and_the_report_says_what_the_table_does_not_express():
    report = check_source("k.cu", STRIDED, Options(arch="sm_13"))
    messages = {f.code: f.message for f in report.findings}
    assert messages["WL201"] == (
        "uncoalesced global store of `x[1000 * tid]`: 32 transactions per request, ideal 2 (6.25% efficiency)"
    )
    assert messages["WL101"].startswith("4-way bank conflict on `data`: 8 wavefronts per request, ideal 2")
    (analysis,) = report.kernels
    notes = [str(a) for c in analysis.costs for a in c.assumptions]
    assert "sm_13: costs are per warp-level request, the sum over its two half-warps, each charged on its own" in notes
    today = check_source("k.cu", STRIDED, Options(arch="sm_90"))
    assert not [a for c in today.kernels[0].costs for a in c.assumptions]


@pytest.mark.parametrize("code", ["WL101", "WL201", "WL301"])
def test_explain_says_how_the_cost_differs_by_generation(code):
    from analyzer.rules.registry import RULES

    options = RULES[code].documentation().split("## Options", 1)[1].split("## References", 1)[0]
    assert "How the cost differs by generation (`--arch`)" in options
    assert "sm_11" in options


def test_the_json_report_of_a_seed_generation_validates_against_the_schema():
    import json
    from pathlib import Path

    jsonschema = pytest.importorskip("jsonschema")
    from analyzer.report.json import document

    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schema-v1.json").read_text())
    doc = document([check_source("k.cu", STRIDED, Options(arch="sm_11"))])
    jsonschema.Draft202012Validator(schema).validate(doc)
    units = {a["unit"] for k in doc["files"][0]["kernels"] for a in k["accesses"]}
    assert units == {"wavefronts", "transactions"}
