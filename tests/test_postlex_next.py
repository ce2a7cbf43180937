"""The post-lexer reads what follows a name once (`NEXT_CHAR`) and asks its tests of that
match: the same answers as each test matching the text on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.syntax import postlex
from analyzer.syntax.postlex import _WORD, NEXT_CHAR

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.cu"))


@pytest.mark.parametrize(
    ("after", "template_args", "member_access", "declarator"),
    [
        (" < T>", True, False, False),
        ("<<<g, b>>>", False, False, False),
        (" <= n", False, False, False),
        ("->x", False, True, False),
        (" . y", False, True, False),
        ("...", False, False, False),
        (" *p", False, False, True),
        ("&r", False, False, True),
        ("&& q", False, False, False),
        (" name", False, False, True),
        ("_x", False, False, True),
        ("   ", False, False, False),
        ("", False, False, False),
    ],
)
def test_what_follows_a_name(after, template_args, member_access, declarator):
    nxt = NEXT_CHAR.match(after, 0)
    assert postlex._template_args_follow(nxt) is template_args
    assert postlex._member_access_follows(nxt) is member_access
    assert postlex._declarator_follows(nxt) is declarator


def test_a_name_can_follow_only_where_next_char_reads_its_first_character():
    """`_followed_by_identifier` asks `_WORD` only where `NEXT_CHAR`'s first character is in
    `_WORD_STARTS`: nowhere else does `_WORD` match."""
    texts = ["a ::b", "x ::", "y :: 1", "f(a) b", "\u00e9t\u00e9 x", *(p.read_text() for p in SAMPLES[:12])]
    checked = 0
    for text in texts:
        for pos in range(len(text) + 1):
            if _WORD.match(text, pos):
                nxt = NEXT_CHAR.match(text, pos)
                assert nxt is not None and nxt.group(1) in postlex._WORD_STARTS, text[pos : pos + 20]
                checked += 1
    assert checked > 5_000
