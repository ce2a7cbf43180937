"""analyzer.roomy_stack: a function run from a frame with a large block of frame stack gives
the same results and raises the same errors as run plainly."""

from __future__ import annotations

import pytest

from analyzer.roomy_stack import ROOMY_SLOTS, roomy_stack


def _depth_sum(n: int, step: int = 1) -> int:
    return 0 if n == 0 else n * step + _depth_sum(n - 1, step)


def test_a_roomy_call_returns_what_the_plain_call_returns():
    roomy = roomy_stack(_depth_sum)
    assert roomy(300, step=2) == _depth_sum(300, step=2) == 90300
    assert roomy.__name__ == "_depth_sum"


def test_a_roomy_call_raises_what_the_plain_call_raises():
    def fails(x: int) -> int:
        raise ValueError(f"bad {x}")

    with pytest.raises(ValueError, match="bad 7"):
        roomy_stack(fails)(7)


def test_the_roomy_frame_asks_for_half_a_mebibyte_of_value_stack():
    from analyzer import roomy_stack as module

    assert ROOMY_SLOTS == 65536
    assert module._roomy_call.__code__.co_stacksize == ROOMY_SLOTS


def test_a_roomy_call_has_more_frames_while_it_runs_and_the_limit_is_put_back():
    import sys

    from analyzer import roomy_stack as module

    before = sys.getrecursionlimit()
    inside = roomy_stack(lambda: sys.getrecursionlimit())()
    nested = roomy_stack(lambda: roomy_stack(lambda: sys.getrecursionlimit())())()
    assert inside == nested == before + module.EXTRA_FRAMES
    assert sys.getrecursionlimit() == before
