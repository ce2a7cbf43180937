"""The language server's front end kept from one text of a document to the next
(`analyzer.api_front.LastFront`, used by `KernelMemo`): the lowering, the host launches and the
kernels' shapes are taken where the new text's parse and text say the lowering is the same, and
the diagnostics then equal a fresh analysis of the same text, budget cuts included."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from analyzer import server_memo
from analyzer.analysis import launch
from analyzer.api import Options
from analyzer.budget import Budget
from analyzer.ir import nodes as N
from analyzer.server_memo import KernelMemo
from tests.test_server_memo import PROGRAM, analysed, diagnostics, places


def same_as_fresh(path: Path, memo: KernelMemo, text: str, options: Options | None = None) -> object:
    """Analyse `text` with the memo; its diagnostics and places equal a fresh analysis'.
    Returns the module the memo's analysis used."""
    with_memo = analysed(path, text, memo, options)
    fresh = analysed(path, text, None, options)
    assert diagnostics(with_memo) == diagnostics(fresh), text
    assert places(with_memo) == places(fresh), text
    assert memo.front.front is not None
    return memo.front.front.module


@pytest.fixture
def primed(tmp_path: Path) -> tuple[Path, KernelMemo]:
    path = tmp_path / "k.cu"
    memo = KernelMemo()
    analysed(path, PROGRAM, memo)
    assert memo.front.hits == 0
    return path, memo


def test_a_comment_typed_below_the_code_keeps_the_lowering(primed) -> None:
    path, memo = primed
    module = memo.front.front.module
    assert same_as_fresh(path, memo, PROGRAM + "// a comment typed at the end\n") is module
    assert same_as_fresh(path, memo, PROGRAM + "// a comment typed at the end\n\n\n") is module
    assert same_as_fresh(path, memo, PROGRAM) is module
    assert memo.front.hits == 3
    assert (memo.hits, memo.misses) == (2, 0)


def test_a_comment_changed_inside_a_kernel_keeps_the_lowering(primed) -> None:
    """The preprocessor makes a comment one space: the text after it does not move."""
    path, memo = primed
    text = PROGRAM.replace("int t = threadIdx.x;", "int t = threadIdx.x; /* lane */")
    module = same_as_fresh(path, memo, text)
    assert memo.front.hits == 0  # the text moved
    again = text.replace("/* lane */", "/* the lane */")
    assert same_as_fresh(path, memo, again) is module
    assert memo.front.hits == 1


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: "// a line typed at the top\n" + p,  # everything moves
        lambda p: p.replace("in[t * 2]", "in[t * 3]"),  # inside a kernel, nothing moves
        lambda p: p.replace("#define STRIDE 4", "#define STRIDE 5"),  # a macro: the same length
        lambda p: p + "__global__ void third(float *o) { o[threadIdx.x] = 0; }\n",  # code below
        lambda p: p.replace("second<<<4, 256>>>", "second<<<4, 128>>>"),  # a launch
    ],
)
def test_an_edit_of_the_code_lowers_again(primed, edit) -> None:
    path, memo = primed
    module = memo.front.front.module
    assert same_as_fresh(path, memo, edit(PROGRAM)) is not module
    assert memo.front.hits == 0


def test_a_changed_budget_lowers_again(primed) -> None:
    path, memo = primed
    module = memo.front.front.module
    assert same_as_fresh(path, memo, PROGRAM, Options(budget=Budget(lower=29_999))) is not module


def test_the_host_launches_and_the_shapes_are_taken_with_the_lowering(primed, monkeypatch) -> None:
    path, memo = primed
    ran: list[object] = []
    shaped: list[object] = []
    host_launches, shape = launch.host_launches, server_memo.shape
    monkeypatch.setattr(launch, "host_launches", lambda m: ran.append(m) or host_launches(m))
    monkeypatch.setattr(server_memo, "shape", lambda root, *a: shaped.append(root) or shape(root, *a))
    analysed(path, PROGRAM + "// typed\n", memo)
    assert (ran, memo.front.hits, (memo.hits, memo.misses)) == ([], 1, (2, 0))
    functions = [s for s in shaped if isinstance(s, N.Function)]
    assert functions == []  # each function's shape is the previous analysis'
    analysed(path, "// top\n" + PROGRAM, memo)
    assert len(ran) == 1
    assert sorted(s.name for s in shaped if isinstance(s, N.Function)) == ["first", "scaled", "second"]


@pytest.mark.parametrize("steps", [1, 40, 120, 400, 2_000, 10_000, 40_000])
def test_a_budget_cut_lands_where_a_fresh_analysis_cuts(tmp_path: Path, steps: int) -> None:
    """The host launches taken charge the steps they took: a small analysis budget runs out
    where it runs out without them (WL940 at the same kernel and launch)."""
    path = tmp_path / "k.cu"
    options = Options(budget=Budget(analysis=steps))
    memo = KernelMemo()
    analysed(path, PROGRAM, memo, options)
    same_as_fresh(path, memo, PROGRAM + "// typed\n", options)
    assert memo.front.hits == 1


def test_the_server_analyses_a_text_with_the_collector_paused(tmp_path: Path, monkeypatch) -> None:
    """`gc_pause.gc_paused_here` around the memo's analysis: the collector is off inside, on after."""
    from analyzer import api

    seen: list[bool] = []
    check_source = api.check_source
    monkeypatch.setattr(api, "check_source", lambda *a: seen.append(gc.isenabled()) or check_source(*a))
    analysed(tmp_path / "k.cu", PROGRAM, KernelMemo())
    analysed(tmp_path / "k.cu", PROGRAM, None)
    assert (seen, gc.isenabled()) == ([False, True], True)
