"""The parse memo (`analyzer.syntax.parse._ParseMemo`): a text parsed again gives the result a
fresh parse gives, under any budget, and a changed text is parsed anew."""

from __future__ import annotations

import pytest

from analyzer import budget
from analyzer.syntax import parse as P

KERNEL = """
struct Pair { float a; float b; };
__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }
"""


@pytest.fixture(autouse=True)
def empty_memo():
    P._MEMO.clear()
    yield
    P._MEMO.clear()


def fresh(text: str) -> P.ParseResult:
    """`parse` with nothing remembered."""
    P._MEMO.clear()
    return P.parse(text)


def test_a_text_parsed_again_is_recalled_with_the_same_result():
    first = P.parse(KERNEL)
    assert KERNEL in P._MEMO.entries
    again = P.parse(KERNEL)
    assert again == first
    assert again.unit is first.unit  # recalled, not parsed again


def test_a_changed_text_gives_the_fresh_result():
    P.parse(KERNEL)
    changed = KERNEL.replace("threadIdx.x", "threadIdx.x * 2")
    assert P.parse(changed) == fresh(changed)
    assert P.parse(changed) != fresh(KERNEL)


def test_a_recall_charges_the_steps_of_a_parse():
    with budget.metered(budget.Meter("parse", 1000)) as meter:
        P.parse(KERNEL)
    parsed_left = meter.left
    with budget.metered(budget.Meter("parse", 1000)) as meter:
        P.parse(KERNEL)
    assert meter.left == parsed_left < 1000


def test_a_budget_too_small_for_the_text_cuts_a_remembered_text_short_as_before():
    long_text = KERNEL + "".join(f"__device__ float f{i}(float v) {{ return v * {i}.0f; }}\n" for i in range(40))
    P.parse(long_text)  # whole: remembered
    with budget.metered(budget.Meter("parse", 5)):
        short = P.parse(long_text)
    P._MEMO.clear()
    with budget.metered(budget.Meter("parse", 5)):
        expected = P.parse(long_text)
    assert short == expected
    assert any(d.code == budget.BUDGET_EXCEEDED for d in short.diagnostics)
    assert long_text not in P._MEMO.entries  # a parse cut short is not remembered


def test_changing_the_lists_of_a_result_leaves_the_memo_as_it_was():
    text = KERNEL + "__global__ void bad(float *x) { x[0] = ; }\n"
    first = P.parse(text)
    count = len(first.diagnostics)
    assert count
    first.diagnostics.clear()
    first.skipped.clear()
    assert len(P.parse(text).diagnostics) == count


def test_the_memo_forgets_the_oldest_texts_past_its_limit():
    memo = P._ParseMemo(limit=2 * len(KERNEL) + 3)  # the last two texts
    for i in range(3):
        text = KERNEL + " " * i
        memo.remember(text, fresh(text), 1)
    assert list(memo.entries) == [KERNEL + " ", KERNEL + "  "]
    assert memo.chars == sum(map(len, memo.entries))
