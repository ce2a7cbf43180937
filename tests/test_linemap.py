"""LineMap: offsets in preprocessed text -> (path, line, column) in the original files."""

from __future__ import annotations

import pytest

from analyzer.diagnostics import Location, Span
from analyzer.source.linemap import EXPANSION, NEWLINES, VERBATIM, LineMap, SourceFile
from analyzer.source.preprocess import preprocess


def test_source_file_positions_are_one_based_and_tabs_count_as_one_column():
    source = SourceFile.from_text("a.cu", "ab\n\tc\n")
    assert source.line_starts == (0, 3, 6)
    assert source.position(0) == (1, 1)
    assert source.position(2) == (1, 3)  # the newline ending line 1
    assert source.position(3) == (2, 1)  # the tab
    assert source.position(4) == (2, 2)  # 'c' right after one tab
    assert source.position(6) == (3, 1)  # end of file
    assert source.position(99) == (3, 1)  # clamped
    assert source.position(-5) == (1, 1)


def test_newline_offset_of_the_last_line_without_newline_is_the_file_end():
    source = SourceFile.from_text("a.cu", "x\nyz")
    assert source.newline_offset(0) == 1
    assert source.newline_offset(1) == 4


def test_identity_map_resolves_offsets_to_their_own_position():
    text = "int a;\n\tint b;\n"
    linemap = LineMap.identity(text, "k.cu")
    assert linemap.resolve(0) == ("k.cu", 1, 1)
    assert linemap.resolve(text.index("b")) == ("k.cu", 2, 6)
    assert linemap.resolve_span(Span(8, 11)) == Location("k.cu", 2, 2, 2, 5)
    assert linemap.segments == 1
    assert len(linemap) == len(text)


def test_offset_at_end_of_text_resolves_just_after_the_last_character():
    linemap = LineMap.identity("ab\ncd", "k.cu")
    assert linemap.resolve(5) == ("k.cu", 2, 3)
    assert linemap.resolve(500) == ("k.cu", 2, 3)


def test_empty_text_resolves_to_line_one_column_one():
    linemap = LineMap.identity("", "e.cu")
    assert linemap.resolve(0) == ("e.cu", 1, 1)
    assert linemap.resolve_span(Span(0, 0)) == Location("e.cu", 1, 1, 1, 1)
    assert linemap.segments == 0


def test_empty_span_is_an_empty_location_at_its_start():
    linemap = LineMap.identity("abc\ndef", "k.cu")
    assert linemap.resolve_span(Span(5, 5)) == Location("k.cu", 2, 2, 2, 2)


def test_span_ending_on_a_newline_ends_at_the_start_of_the_next_line():
    linemap = LineMap.identity("ab\ncd", "k.cu")
    assert linemap.resolve_span(Span(0, 3)) == Location("k.cu", 1, 1, 2, 1)


def _hand_built_map() -> tuple[str, LineMap]:
    """out = 'x = ' (verbatim) + '16' (expansion of BLOCK_DIM) + ';' (verbatim) + '\n\n' (newlines)."""
    original = "x = BLOCK_DIM;\n#define A\n#define B\n"
    source = SourceFile.from_text("m.cu", original)
    out = "x = 16;\n\n"
    linemap = LineMap(
        [source],
        starts=[0, 4, 6, 7],
        file=[0, 0, 0, 0],
        orig=[0, 4, 13, 0],
        kind=[VERBATIM, EXPANSION, VERBATIM, NEWLINES],
        end=[-1, 13, -1, -1],
        length=len(out),
    )
    return out, linemap


def test_every_character_of_an_expansion_maps_to_the_start_of_the_use():
    out, linemap = _hand_built_map()
    assert out[4:6] == "16"
    assert linemap.resolve(4) == ("m.cu", 1, 5)
    assert linemap.resolve(5) == ("m.cu", 1, 5)
    assert linemap.resolve(6) == ("m.cu", 1, 14)  # ';' copied verbatim keeps its column


def test_span_ending_inside_an_expansion_ends_after_the_use():
    _, linemap = _hand_built_map()
    assert linemap.resolve_span(Span(0, 6)) == Location("m.cu", 1, 1, 1, 14)
    assert linemap.resolve_span(Span(5, 6)) == Location("m.cu", 1, 5, 1, 14)


def test_newline_segments_map_each_newline_to_its_own_line():
    _, linemap = _hand_built_map()
    assert linemap.resolve(7) == ("m.cu", 1, 15)  # the newline ending line 1
    assert linemap.resolve(8) == ("m.cu", 2, 10)  # the newline ending line 2 ('#define A')
    assert linemap.resolve(9) == ("m.cu", 3, 1)  # the end of the text: after that newline


def test_span_from_main_file_into_an_included_file_collapses_to_its_start():
    main = SourceFile.from_text("m.cu", "a\n")
    header = SourceFile.from_text("h.h", "b\n")
    linemap = LineMap([main, header], [0, 2], [0, 1], [0, 0], [VERBATIM, VERBATIM], [-1, -1], 4)
    assert linemap.resolve(2) == ("h.h", 1, 1)
    assert linemap.resolve_span(Span(0, 3)) == Location("m.cu", 1, 1, 1, 1)


def test_resolve_span_never_ends_before_it_starts():
    main = SourceFile.from_text("m.cu", "abcdef\n")
    # the second segment maps back to an earlier place than the first
    linemap = LineMap([main], [0, 2], [0, 0], [4, 0], [VERBATIM, VERBATIM], [-1, -1], 4)
    assert linemap.resolve_span(Span(0, 3)) == Location("m.cu", 1, 5, 1, 5)


def test_negative_offset_resolves_like_offset_zero():
    linemap = LineMap.identity("abc", "k.cu")
    assert linemap.resolve(-3) == ("k.cu", 1, 1)


@pytest.mark.parametrize("size", [1_000, 200_000])
def test_plain_text_is_one_segment_however_long(size):
    text = "a = b + c;\n" * size
    result = preprocess(text, "big.cu")
    assert result.text == text
    assert result.linemap.segments == 1
    assert result.linemap.resolve(len(text) - 3) == ("big.cu", size, 9)


def test_map_size_grows_with_directives_and_expansions_not_with_characters():
    text = "#define N 4\n" + "x[i] = y[i] + N;\n" * 1000
    result = preprocess(text, "k.cu")
    # one directive line, then per line one copied run and one expansion
    assert result.linemap.segments <= 2 * 1000 + 2
    assert result.linemap.resolve(result.text.index("4;")) == ("k.cu", 2, 15)
