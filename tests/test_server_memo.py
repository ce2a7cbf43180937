"""The language server's memo of kernel analyses (`analyzer.server.KernelMemo`): after an edit,
the diagnostics equal a fresh analysis of the same text, and only the kernels the edit can
change are analysed again (no timed tests: the memo's hits and misses say what was re-used)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.api import Options
from analyzer.server import Analysed, analyse_document
from analyzer.server_memo import KernelMemo, shape

PROGRAM = """\
#define TILE 32
#define STRIDE 4

__device__ int scaled(int i) { return i * STRIDE; }

__global__ void first(float *out, const float *in) {
    __shared__ float tile[TILE * TILE];
    int t = threadIdx.x;
    tile[scaled(t)] = in[t];
    __syncthreads();
    out[t] = tile[t];
}

__global__ void second(float *out, const float *in, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < n) out[t] = in[t * 2];
}

void host(float *out, const float *in) {
    first<<<1, 32>>>(out, in);
    second<<<4, 256>>>(out, in, 1024);
}
"""


def analysed(path: Path, text: str, memo: KernelMemo | None, options: Options | None = None) -> Analysed:
    result = analyse_document(path.as_uri(), str(path), text, lambda _: options or Options(), memo)
    assert isinstance(result, Analysed)
    return result


def diagnostics(result: Analysed) -> list[dict]:
    return [f.diagnostic for f in result.fixed]


def places(result: Analysed) -> list[tuple]:
    """Where each kernel analysis and its costs are, and what they cost (hover and fixes read them)."""
    return [
        (k.kernel.display_name, k.kernel.name_span, k.launch, [(c.span, c.text, c.per_request) for c in k.costs])
        for k in result.report.kernels
    ]


def edited(path: Path, memo: KernelMemo, text: str, options: Options | None = None) -> tuple[int, int]:
    """Analyse `text` with the memo; its diagnostics must equal a fresh analysis'. Returns the
    memo's (hits, misses) for that analysis."""
    with_memo = analysed(path, text, memo, options)
    fresh = analysed(path, text, None, options)
    assert diagnostics(with_memo) == diagnostics(fresh), text
    assert places(with_memo) == places(fresh), text
    assert with_memo.report.findings, "the program should have findings to compare"
    return memo.hits, memo.misses


@pytest.fixture
def primed(tmp_path: Path) -> tuple[Path, KernelMemo]:
    path = tmp_path / "k.cu"
    memo = KernelMemo()
    first = analysed(path, PROGRAM, memo)
    assert (memo.hits, memo.misses) == (0, 2)
    assert {str(f.code) for f in first.report.findings} >= {"WL101", "WL201"}
    return path, memo


def test_an_edit_after_every_kernel_and_launch_reuses_every_analysis(primed) -> None:
    path, memo = primed
    assert edited(path, memo, PROGRAM + "// a comment typed at the end\n") == (2, 0)
    assert edited(path, memo, PROGRAM + "// a comment typed at the end, and more\n") == (2, 0)


def test_an_edit_inside_a_kernel_analyses_that_kernel_again(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("in[t * 2]", "in[t * 3]")
    assert edited(path, memo, text) == (1, 1)  # `second` is below `first`: `first` keeps its positions


def test_an_edit_in_a_device_function_analyses_its_callers_again(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("return i * STRIDE;", "return STRIDE * i;")  # the same length: nothing moves
    assert edited(path, memo, text) == (1, 1)  # `first` calls `scaled`, `second` does not


def test_a_changed_macro_analyses_the_kernels_that_use_it_again(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("#define STRIDE 4", "#define STRIDE 5")  # used by `scaled`, called by `first`
    assert edited(path, memo, text) == (1, 1)
    assert "WL101" not in {d["code"] for d in diagnostics(analysed(path, text, None))}


def test_a_changed_launch_analyses_that_kernel_again(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("second<<<4, 256>>>", "second<<<4, 128>>>")
    assert edited(path, memo, text) == (1, 1)  # `first`'s launch and IR are unchanged


def test_a_changed_configuration_analyses_every_kernel_again(primed) -> None:
    path, memo = primed
    assert edited(path, memo, PROGRAM, Options(block=(64, 1, 1))) == (0, 2)
    assert edited(path, memo, PROGRAM, Options(block=(64, 1, 1))) == (2, 0)
    assert edited(path, memo, PROGRAM, Options(arch="sm_80", block=(64, 1, 1))) == (0, 2)


def test_an_edit_above_the_kernels_moves_them_and_their_analyses_are_re_located(primed) -> None:
    """A line typed above moves every kernel: their analyses are re-used, each span and IR node
    replaced by the new text's, so that findings are at their new lines, never the old ones."""
    path, memo = primed
    text = "// a line typed at the top\n" + PROGRAM
    assert edited(path, memo, text) == (2, 0)
    assert memo.moved == 2
    lines = {d["range"]["start"]["line"] for d in diagnostics(analysed(path, text, memo))}
    assert lines == {d["range"]["start"]["line"] + 1 for d in diagnostics(analysed(path, PROGRAM, None))}
    assert edited(path, memo, text + "// and one at the end\n") == (2, 0)
    assert memo.moved == 0


def test_an_edit_between_two_kernels_moves_the_one_below(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("__global__ void second", "// between\n__global__ void second")
    assert edited(path, memo, text) == (2, 0)  # `first`'s launch moved down a line: the launch is re-located
    assert memo.moved == 1
    launches = [(k.launch.span, k.launch.origin) for k in analysed(path, text, memo).report.kernels]
    assert launches == [(k.launch.span, k.launch.origin) for k in analysed(path, text, None).report.kernels]
    assert "line 21" in launches[0][1]


def test_a_longer_device_function_moves_the_kernels_below_and_changes_its_callers(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("return i * STRIDE;", "return i * STRIDE + 0 * i;")
    assert edited(path, memo, text) == (1, 1)  # `first` calls it: made again; `second` only moved
    assert memo.moved == 1


def test_a_declaration_added_above_moves_the_uids_of_the_kernels_below_which_are_re_located(primed) -> None:
    path, memo = primed
    text = PROGRAM.replace("    int t = threadIdx.x;\n", "    int t = threadIdx.x;\n    int unused = t;\n", 1)
    assert edited(path, memo, text) == (1, 1)  # `first` changed; `second`'s uids and lines moved
    assert memo.moved == 1


def test_a_device_function_cut_and_pasted_below_its_caller_is_analysed_again(primed) -> None:
    path, memo = primed
    scaled = "__device__ int scaled(int i) { return i * STRIDE; }\n"
    text = PROGRAM.replace(scaled, "__device__ int scaled(int i);\n") + scaled
    edited(path, memo, text)  # whatever is re-used, the diagnostics are a fresh analysis'


def test_the_memo_keeps_only_what_the_last_analysis_used(primed) -> None:
    path, memo = primed
    edited(path, memo, PROGRAM.replace("in[t * 2]", "in[t * 3]"))
    assert len(memo.kept) == 2
    assert edited(path, memo, PROGRAM) == (1, 1)  # the old `second` was dropped


def test_what_an_analysis_holds_of_its_launch_s_place() -> None:
    from analyzer.analysis.results import LaunchConfig
    from analyzer.diagnostics import Span
    from analyzer.server_memo import _mentions

    launch = LaunchConfig((32, 1, 1), None, "launch at line 3", span=Span(4, 9))
    assert _mentions([{"note": ("launch at line 3",)}], launch) == "origin"
    assert _mentions([{"note": ("kernel k: launch at line 3",)}], launch) == "place"
    assert _mentions([[Span(4, 9)]], launch) == "place"
    assert _mentions([{"note": ("launch at line 4",)}, Span(4, 10)], launch) == ""


def test_shapes_differ_in_any_field_and_agree_on_equal_graphs() -> None:
    from analyzer.diagnostics import Span

    assert shape([Span(1, 2), {"a": 1}]) == shape([Span(1, 2), {"a": 1}])
    assert shape([Span(1, 2)]) != shape([Span(1, 3)])
    assert shape((1,)) != shape((True,))
    shared = Span(0, 1)
    assert shape([shared, shared]) == shape([Span(0, 1), Span(0, 1)])  # a Span is a value


TEMPLATE = """\
template <int S> __global__ void strided(float *a) { a[threadIdx.x * S] = 0.0f; }

void host(float *a) {
    strided<1><<<1, 32>>>(a);
    strided<4><<<1, 32>>>(a);
}
"""


def test_each_template_instance_is_kept_on_its_own(tmp_path: Path) -> None:
    path, memo = tmp_path / "t.cu", KernelMemo()
    analysed(path, TEMPLATE, memo)
    assert (memo.hits, memo.misses) == (0, 2)
    assert edited(path, memo, TEMPLATE.replace("strided<4><<<1, 32>>>", "strided<4><<<1, 64>>>")) == (1, 1)
    assert edited(path, memo, TEMPLATE.replace("strided<4>", "strided<8>")) == (1, 1)
