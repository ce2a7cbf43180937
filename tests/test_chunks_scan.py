"""The splitter reads bodies in one loop (`_Splitter._read_body`) over `chunks._BODY_SCAN`, not
token by token (`_Splitter._token`) over BODY_TOKENS: the same chunks and diagnostics, on texts
made to tell them apart (`#` inside and outside directive lines, comments, strings,
unterminated comments, nesting past the limits), random texts and the samples read raw."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from analyzer.syntax import chunks
from analyzer.syntax.chunks import split_top_level

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.cu"))

TEXTS = [
    "void f() {\n  #pragma unroll\n  for (;;) { g(); }\n}\nint x;\n",
    "void f() { a(); # not a directive ( \n b(); }\nint y;",
    "void f() {\n\t \t# x {\n}\nint z;",
    "void f() { s = \"#{\"; c = '#'; /* # { */ // # {\n }\nint w;",
    "void f() {\n#define X {\n x; }\n int g() { return 1; }",
    "void f() { ;#\n#\n }  int x;",
    "void f() { /* never closed",
    "void f() { a / b; c /= d; e = f/ *g; h = i /**/ / j; }\nint v;",
    "void f() {\r\n  # p (\r\n}\nint u;",
    "void f() { g(); }# {\nint t;",
    "void f() {\n  x; # {\n  #{\n}\nint s;",
    "struct S { int a; # ( \n };\nvoid f() { { ( } ) }\nint r;",
    "#include <x>\nvoid f() {\n#if 1\n  a();\n#endif\n}\n",
    "struct S { int a; } s = { 1 }; int g(int x = (1)) { if (x) { return (x); } }",
    "int f() { (((a); }\nint b; int c() { )) }\nint d;",
    "int f() {" + "{" * 300 + "}" * 300 + "}\nint e;",
    "int f() {" + "(" * 2100 + ")" * 2100 + "}\nint g;",
    "int f() {" + "{" * 300 + "\nint h;",
    "namespace n { int f() { return 0; } struct T { }; } int i;",
    'extern "C" { void f() { g(); } } }} int j;',
]


def _token_by_token(self: chunks._Splitter, pos: int) -> int | None:
    """`_Splitter._read_body` as the splitter read a body before it: BODY_TOKENS searched, and
    each token given to `_token`."""
    text = self.text
    while self.depth != self.base:
        m = chunks.BODY_TOKENS.search(text, pos)
        if m is None:
            return None
        pos = m.end()
        if m.lastgroup == "skip":
            continue
        if m.lastgroup == "open_comment":
            self._comment_never_closed(m)
            return chunks._STOP
        if not self._token(m.group(0), m):
            return chunks._STOP
    return pos


def _split_with_body_tokens(text: str, monkeypatch: pytest.MonkeyPatch):
    """`split_top_level` reading bodies token by token over BODY_TOKENS, as it did before."""
    with monkeypatch.context() as patch:
        patch.setattr(chunks._Splitter, "_read_body", _token_by_token)
        return split_top_level(text)


@pytest.mark.parametrize("text", TEXTS)
def test_the_body_scan_splits_as_body_tokens(text, monkeypatch):
    assert split_top_level(text) == _split_with_body_tokens(text, monkeypatch)


def test_a_hash_after_code_on_its_line_is_no_directive():
    chunks_found, _ = split_top_level("void f() { a(); # {\n}\nint x;")
    assert [(c.start, c.end, c.is_function) for c in chunks_found] == [(0, 28, False)]  # `{` opens a block
    chunks_found, _ = split_top_level("void f() {\n  # {\n}\nint x;")
    assert [(c.start, c.end, c.is_function) for c in chunks_found] == [(0, 18, True), (19, 25, False)]


def test_the_body_scan_splits_as_body_tokens_on_random_texts(monkeypatch):
    rng = random.Random(20261128)
    pieces = [*"{}();#/*\"'\n \t\\a", "f()", "int x", "//", "/*", "*/"]
    for _ in range(3000):
        text = "void f() {" + "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40))) + "}\nint y;"
        assert split_top_level(text) == _split_with_body_tokens(text, monkeypatch), text


def test_the_body_scan_splits_the_raw_samples_as_body_tokens(monkeypatch):
    assert SAMPLES
    for path in SAMPLES:
        text = path.read_text()
        assert split_top_level(text) == _split_with_body_tokens(text, monkeypatch), path.name
