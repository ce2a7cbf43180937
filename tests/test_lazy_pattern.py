"""`analyzer.lazy_pattern`: a pattern compiled on first use answers as the compiled one."""

from __future__ import annotations

import importlib
import pkgutil
import re

import analyzer
from analyzer.lazy_pattern import LazyPattern, lazy_compile

SOURCE = r"(?P<word>[A-Za-z_]\w*)|(?P<num>\d+)"


def test_nothing_is_compiled_before_the_first_use_then_the_methods_are_the_compiled_ones():
    lazy = lazy_compile(SOURCE, re.IGNORECASE)
    assert isinstance(lazy, LazyPattern) and "match" not in vars(lazy)
    assert repr(lazy) == f"lazy_compile({SOURCE!r}, {re.IGNORECASE!r})"
    real = re.compile(SOURCE, re.IGNORECASE)
    text = "ab 12 _c3 !"
    assert lazy.match(text).group("word") == "ab"  # type: ignore[union-attr]
    assert "match" in vars(lazy) and vars(lazy)["match"].__self__ is real  # (re's own cache)
    assert lazy.match(text, 3).span() == real.match(text, 3).span() == (3, 5)  # type: ignore[union-attr]
    assert [m.lastgroup for m in lazy.finditer(text)] == ["word", "num", "word"]
    assert lazy.findall(text) == real.findall(text) == [("ab", ""), ("", "12"), ("_c3", "")]
    assert lazy.sub("x", text) == "x x x !" and lazy.subn("x", text) == ("x x x !", 3)
    assert lazy.split(text) == real.split(text) and lazy.fullmatch("12") is not None
    assert lazy.search(" !x").start() == 2  # type: ignore[union-attr]
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        SOURCE,
        real.flags,
        2,
        {"word": 1, "num": 2},
    )


def test_an_attribute_a_pattern_lacks_is_an_attribute_error():
    lazy = lazy_compile("a")
    for name in ("nothing", "_source_of_nothing", "__deepcopy__"):
        try:
            getattr(lazy, name)
        except AttributeError:
            continue
        raise AssertionError(name)
    assert lazy.match("a") is not None


def test_every_lazy_pattern_of_the_analyzer_compiles():
    """The lazy patterns serve rare paths, which a mistake in one would reach late: compile
    each here (the modules that use `lazy_compile`, their module-level patterns and lists)."""
    found = 0
    for info in pkgutil.walk_packages(analyzer.__path__, "analyzer."):
        if info.name.startswith(("analyzer.server", "analyzer.__main__")):
            continue
        module = importlib.import_module(info.name)
        if "lazy_compile" not in vars(module):
            continue
        for value in vars(module).values():
            items = value if isinstance(value, (tuple, list)) else (value,)
            for item in items:
                for one in item if isinstance(item, tuple) else (item,):
                    if isinstance(one, LazyPattern):
                        assert isinstance(one.pattern, str) and callable(one.match)
                        found += 1
    assert found == 50, found  # every `lazy_compile(` of analyzer/ at the time of writing
