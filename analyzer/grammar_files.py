"""Where the Lark grammars are, and where their parse tables are cached (both parsers use this)."""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any


def grammar_path(name: str) -> Path:
    """`<repo>/grammars/<name>` in a source tree, else the installed `analyzer.grammars` resource
    (pyproject maps the package `analyzer.grammars` to the folder `grammars/`)."""
    here = Path(__file__).resolve().parent
    source_tree = here.parent / "grammars" / name
    if source_tree.is_file():
        return source_tree
    installed = here / "grammars" / name  # the package's folder in site-packages
    if installed.is_file():
        return installed
    import importlib.resources  # (only for a copy inside a zip file: 10 ms of start-up)

    return Path(str(importlib.resources.files("analyzer.grammars") / name))


def cache_file(prefix: str, grammar: str, suffix: str = ".lark-cache") -> str | None:
    """`$XDG_CACHE_HOME/warplint/<prefix>-<hash><suffix>` (or under `~/.cache`), keyed by the
    grammar's text so an edited grammar never meets stale tables; None if it cannot be written."""
    digest = grammar_digest(grammar)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "warplint"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    path = folder / f"{prefix}-{digest}{suffix}"
    return str(path) if path.exists() or os.access(folder, os.W_OK) else None


def grammar_digest(grammar: str) -> str:
    """16 hex digits that change with the grammar's text: its CRC-32 and Adler-32 (zlib), not a
    SHA-256, because importing hashlib (OpenSSL) was 11.6 M of the 430 M instructions of
    checking a one-line kernel with --no-cache (callgrind), which needs no other hash. The key
    only tells an edited grammar's tables from the old ones; it guards against no adversary."""
    data = grammar.encode("utf-8")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def lark_parser(grammar: str, options: dict[str, Any], cache_prefix: str | None) -> Any:
    """`Lark(grammar, **options)`, its tables cached on disk under `cache_prefix` (see
    `cache_file`; None: not cached, as in strict mode); built again without the cache when the
    cache cannot be written or is damaged."""
    from lark import Lark

    cache = cache_file(cache_prefix, grammar) if cache_prefix is not None else None
    if cache is not None:
        options = {**options, "cache": cache}
    try:
        return Lark(grammar, **options)
    except (OSError, EOFError, ValueError):  # an unwritable or damaged cache: build without it
        return Lark(grammar, **{k: v for k, v in options.items() if k != "cache"})
