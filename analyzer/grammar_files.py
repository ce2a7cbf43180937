"""Where the Lark grammars are, and where their parse tables are cached (both parsers use this)."""

from __future__ import annotations

import os
from pathlib import Path


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
    import hashlib  # (imported here: `warplint --help` and `version` do without it)

    digest = hashlib.sha256(grammar.encode("utf-8")).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "warplint"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    path = folder / f"{prefix}-{digest}{suffix}"
    return str(path) if path.exists() or os.access(folder, os.W_OK) else None
